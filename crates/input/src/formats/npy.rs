//! A dense NumPy `.npy` array (2-D or N-D, C or Fortran order): its nonzeros, in
//! row-major order, through `sptk_npy` and the core's one dense scan.

use sptk_npy::{Npy, Order};

use crate::error::InputError;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads dense `.npy` arrays.
pub struct NpyReader;

/// Dimensions as `3 x 4 x 5`.
pub(crate) fn by(shape: &[u64]) -> String {
    shape
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

impl Reader for NpyReader {
    fn name(&self) -> &'static str {
        "NumPy .npy (dense)"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["npy", "numpy"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        if probe.starts_with(b"\x93NUMPY") && !probe.gzip {
            Match::Content
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            stream: true,
            ..Accepts::default()
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let npy = super::open_or_buffer(source, opts, "NumPy .npy", Npy::open, Npy::from_bytes)?;
        let mut input = dense_input(&npy, source.spec().to_string(), opts)?;
        input.format = self.name();
        Ok(input)
    }
}

/// A dense array's nonzeros as an input named `name` (its format for the caller to say).
pub(crate) fn dense_input(
    npy: &Npy,
    name: String,
    opts: &ReadOptions,
) -> Result<Input, InputError> {
    let entries = npy.to_entries(opts.memory_limit)?;
    let order = match npy.order() {
        Order::C => "C order",
        Order::Fortran => "Fortran order",
    };
    Ok(Input {
        name,
        format: "NumPy .npy (dense)",
        header: format!("dense {} {} ({order})", npy.dtype(), by(npy.shape())),
        field: None,
        one_based: false,
        content: Content::Entries {
            entries,
            labels: Vec::new(),
        },
        notes: Vec::new(),
        memory_hint: None,
    })
}

//! The sparse operands: `.spt` files mapped (or read) and validated, as stored; any other
//! input `sparse-convert` reads (`.mtx`, `.tns`, `.npz`, `.npy`, MEX folders, `.mat`, ...)
//! converted in memory, with a note naming the encoding it was converted to.

use std::path::Path;

use anyhow::{Context, Result};
use sptk_encoding::{resolve_target, Target};
use sptk_input::{ReadOptions, SourceSpec};
use sptk_tensor::Tensor;

/// How operands are loaded (the flags `--no-verify`, `--no-mmap`, `--quiet`).
#[derive(Clone, Copy, Debug)]
pub struct Loading {
    /// Check the `.spt` chunk checksums (the arrays are validated either way).
    pub checksums: bool,
    /// Map a `.spt` file rather than read it into private memory.
    pub mmap: bool,
    /// No note when an input is converted in memory.
    pub quiet: bool,
    /// The kernel reads the values (false: a semiring over the pattern, a mask), so a
    /// mapped file's value pages are given back after the checksums read them.
    pub values: bool,
}

/// The tensor `path` holds: a `.spt` file as stored (without `to`), anything else read
/// and converted into `to` (the text of `--to`), the input's own encoding (level arrays
/// such as CSR in a `.npz`), or CSR for a coordinate list, after a note.
pub fn load(path: &Path, to: Option<&str>, how: Loading) -> Result<Tensor> {
    let stored = path.extension().is_some_and(|e| e == "spt");
    if stored && to.is_none() {
        return load_spt(path, how);
    }
    let name = path.display();
    let opts = ReadOptions {
        // libhdf5 reads a damaged file in a helper process, as sparse-convert has it.
        #[cfg(feature = "hdf5")]
        isolation: sptk_input::isolate::Isolation::Child(
            sptk_input::isolate::Helper::this_program(None),
        ),
        ..ReadOptions::default()
    };
    let input = sptk_input::read(SourceSpec::file(path), None, &opts)
        .with_context(|| format!("cannot read {name}"))?;
    let rank = input.dim_sizes().len();
    let default = if rank == 2 { "CSR" } else { "COO" };
    // The preset named (by --to, or the default for a coordinate list), if any.
    let (named, target, why) = match (to, input.encoding()) {
        (Some(text), _) => (Some(text), resolve(text, rank)?, "--to"),
        (None, Some(encoding)) => (
            None,
            Target::Fixed(encoding.clone()),
            "the input's encoding",
        ),
        (None, None) => (
            Some(default),
            resolve(default, rank)?,
            "a coordinate list: --to chooses another",
        ),
    };
    // A preset takes the narrowest widths that hold the data, as sparse-convert has it.
    let opts = sptk_tensor::ConvertOptions {
        auto_widths: named
            .map(sptk_tensor::AutoWidths::for_target)
            .unwrap_or_default(),
        ..Default::default()
    };
    let converted = input
        .convert(&target, &opts)
        .with_context(|| format!("cannot convert {name}"))?;
    if !how.quiet {
        eprintln!(
            "sparse-run: note: {name} ({}) converted in memory to {} ({why}; \
             sparse-convert -o A.spt stores it once)",
            input.format,
            converted.tensor.encoding()
        );
    }
    Ok(converted.tensor)
}

/// A `.spt` file, mapped (or read with `--no-mmap`) and validated.
fn load_spt(path: &Path, how: Loading) -> Result<Tensor> {
    let file = if how.mmap {
        sptk_store::SptFile::open(path)
    } else {
        sptk_store::SptFile::read(path)
    }
    .with_context(|| format!("cannot open {}", path.display()))?;
    let tensor = if how.checksums {
        file.validate()
    } else {
        file.validate_without_checksums()
    }
    .with_context(|| format!("{} is not a valid tensor", path.display()))?;
    if !how.values {
        file.release("values");
    }
    Ok(tensor)
}

/// The target `--to TEXT` names for a tensor of `rank` dimensions.
fn resolve(text: &str, rank: usize) -> Result<Target> {
    resolve_target(text, rank).map_err(|e| {
        let text = e.render();
        anyhow::anyhow!("--to: {}", text.strip_prefix("error: ").unwrap_or(&text))
    })
}

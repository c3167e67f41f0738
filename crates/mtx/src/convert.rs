//! A Matrix Market file read straight into any target the planner routes through CSR: the
//! library's form of what `sparse-convert in.mtx --to X` does, so that every caller gets
//! the direct route.

use std::path::Path;
use std::time::{Duration, Instant};

use sptk_encoding::Target;
use sptk_tensor::{scatter_into, ConvertOptions, Converted, Route, Step, ValueType};

use crate::direct::read_direct;
use crate::error::MtxError;
use crate::header::{Field, MtxHeader, Symmetry};
use crate::read::ReadOptions;

/// A Matrix Market file converted without a coordinate list in between.
#[derive(Debug)]
pub struct ReadConverted {
    /// What the header says.
    pub header: MtxHeader,
    /// Entries read, symmetric storage expanded (duplicates counted).
    pub entries: u64,
    /// The result; its route starts with the reader's scatter.
    pub converted: Converted,
    /// Time of the step after reading (BSR, ELL, n:m, DCSR ... from the CSR read), if any.
    pub convert_time: Option<Duration>,
}

/// Reads `path` into `target` with no coordinate list when the planner's route starts with
/// a scatter into CSR / CSC ([`sptk_tensor::plan`]): a CSR- or CSC-like target is parsed
/// straight into its arrays; BSR, ELL, n:m, DCSR, DCSC and COO targets (also automatic
/// `BSR` / `ELL`) are parsed into CSR / CSC, then converted by the core's direct paths.
///
/// `Ok(None)` means "read the entries and convert them": the route does not apply (the
/// general path's targets and options, compressed files, standard input), or the file has
/// a problem the ordinary reader reports precisely.
pub fn read_converted(
    path: &Path,
    target: &Target,
    convert: &ConvertOptions,
    read: &ReadOptions,
) -> Result<Option<ReadConverted>, MtxError> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let Some(header) = crate::direct::peek_header(path)? else {
        return Ok(None);
    };
    let dims = [header.rows, header.cols];
    let entries = match header.symmetry {
        Symmetry::General => header.nnz_stored,
        _ => header.nnz_stored.saturating_mul(2),
    };
    let value_type = match header.field {
        Field::Integer => ValueType::I64,
        Field::Complex => ValueType::C128,
        Field::Real | Field::Pattern => ValueType::F64,
    };
    let Ok(Some((encoding, then))) = scatter_into(target, &dims, entries, value_type, convert)
    else {
        // The general path (or a target the ordinary route refuses, with its message).
        return Ok(None);
    };
    // The intermediate CSR keeps its own widths; the conversion after it fits the target's.
    let first = ConvertOptions {
        auto_widths: if then {
            sptk_tensor::AutoWidths::default()
        } else {
            convert.auto_widths
        },
        ..convert.clone()
    };
    let Some(d) = read_direct(path, &encoding, &first, read)? else {
        return Ok(None);
    };
    if !then {
        return Ok(Some(ReadConverted {
            header: d.header,
            entries: d.entries,
            converted: Converted {
                tensor: d.tensor,
                choice: None,
                pruned: 0,
                route: Route::of(&[Step::Scatter]),
            },
            convert_time: None,
        }));
    }
    let start = Instant::now();
    // Zeros were dropped while reading.
    let rest = ConvertOptions {
        drop_zeros: false,
        ..convert.clone()
    };
    let mut converted = sptk_tensor::convert_tensor_owned(d.tensor, target, &rest)?;
    converted.route = std::mem::take(&mut converted.route).after(Step::Scatter);
    Ok(Some(ReadConverted {
        header: d.header,
        entries: d.entries,
        converted,
        convert_time: Some(start.elapsed()),
    }))
}

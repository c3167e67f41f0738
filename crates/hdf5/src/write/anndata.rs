//! AnnData `.h5ad` written from a matrix: `X` as CSR or CSC (another encoding is
//! converted to CSR first), the obs and var names from the tensor's labels (else the row
//! and column numbers, as AnnData names them), and the empty groups and attributes that
//! `anndata.read_h5ad` expects.

use std::path::Path;

use hdf5::Group;
use sptk_encoding::{LevelExpr, LevelFormat, LevelProps};
use sptk_tensor::{IndexVec, Tensor};

use super::{atomic, index_array, string_attr, strings, value_array, WriteOptions};
use crate::error::{At, H5Error};

/// Whether the tensor is plain CSR (`Some(true)`) or CSC (`Some(false)`).
pub(crate) fn csr_or_csc(t: &Tensor) -> Option<bool> {
    let e = t.encoding();
    if e.dims.len() != 2 || e.levels.len() != 2 || e.dims.iter().any(|d| d.slice.is_some()) {
        return None;
    }
    let [a, b] = [&e.levels[0], &e.levels[1]];
    if a.format != LevelFormat::Dense
        || b.format != LevelFormat::Compressed
        || b.props != LevelProps::default()
    {
        return None;
    }
    match (&a.expr, &b.expr) {
        (LevelExpr::Dim(0), LevelExpr::Dim(1)) => Some(true),
        (LevelExpr::Dim(1), LevelExpr::Dim(0)) => Some(false),
        _ => None,
    }
}

/// The tensor as CSR or CSC: itself, or converted into `preset` with a note.
pub(crate) fn compressed_form<'t>(
    at: &At,
    t: &'t Tensor,
    preset: &str,
    why: &str,
    notes: &mut Vec<String>,
) -> Result<std::borrow::Cow<'t, Tensor>, H5Error> {
    if t.dim_sizes().len() != 2 {
        return Err(at.err(
            "",
            format!(
                "{why} holds matrices; this tensor has {} dimensions",
                t.dim_sizes().len()
            ),
        ));
    }
    if csr_or_csc(t).is_some() && (preset == "CSR" || csr_or_csc(t) == Some(false)) {
        return Ok(std::borrow::Cow::Borrowed(t));
    }
    let target = sptk_encoding::resolve_target(preset, 2).map_err(|e| at.err("", e.to_string()))?;
    let c = sptk_tensor::convert_tensor(t, &target, &Default::default())
        .map_err(|e| at.err("", e.to_string()))?;
    // AnnData takes either orientation; MATLAB's sparse matrices are CSC only.
    let holds = if preset == "CSC" { "CSC" } else { "CSR or CSC" };
    notes.push(format!(
        "{why} holds {holds}; {} was converted to {preset}",
        t.encoding()
    ));
    Ok(std::borrow::Cow::Owned(c.tensor))
}

/// Writes `tensor` as the `X` of a new `.h5ad` file. Returns notes for the user.
///
/// # Errors
/// A tensor that is not a matrix; f16 / bf16 values; HDF5 errors.
pub fn write_h5ad(
    path: &Path,
    tensor: &Tensor,
    opts: &WriteOptions,
) -> Result<Vec<String>, H5Error> {
    let mut notes = Vec::new();
    let at = At { file: path };
    let t = compressed_form(&at, tensor, "CSR", "an .h5ad file", &mut notes)?;
    let by_rows = csr_or_csc(&t) == Some(true);
    atomic(
        path,
        0,
        |at, file| {
            let root = file.group("/").map_err(|e| at.lib("/", "opening", e))?;
            string_attr(at, &root, "encoding-type", "anndata")?;
            string_attr(at, &root, "encoding-version", "0.1.0")?;
            write_x(at, file, &t, by_rows, opts.deflate)?;
            for (d, frame) in ["obs", "var"].iter().enumerate() {
                let names: Vec<String> = match t.labels(d) {
                    Some(l) => (0..l.len())
                        .map(|i| l.get(i).unwrap_or("").to_string())
                        .collect(),
                    None => (0..t.dim_sizes()[d]).map(|i| i.to_string()).collect(),
                };
                dataframe(at, file, frame, &names)?;
            }
            for dict in ["layers", "obsm", "obsp", "uns", "varm", "varp"] {
                let g = file
                    .create_group(dict)
                    .map_err(|e| at.lib(dict, "creating", e))?;
                string_attr(at, &g, "encoding-type", "dict")?;
                string_attr(at, &g, "encoding-version", "0.1.0")?;
            }
            Ok(())
        },
        |_| Ok(()),
    )?;
    Ok(notes)
}

fn write_x(at: &At, file: &hdf5::File, t: &Tensor, by_rows: bool, z: u8) -> Result<(), H5Error> {
    let x = file
        .create_group("X")
        .map_err(|e| at.lib("/X", "creating", e))?;
    string_attr(
        at,
        &x,
        "encoding-type",
        if by_rows { "csr_matrix" } else { "csc_matrix" },
    )?;
    string_attr(at, &x, "encoding-version", "0.1.0")?;
    let shape: Vec<i64> = t.dim_sizes().iter().map(|&s| s as i64).collect();
    x.new_attr::<i64>()
        .shape(2)
        .create("shape")
        .and_then(|a| a.write(&shape))
        .map_err(|e| at.lib("attribute `shape` of /X", "writing", e))?;
    let pos = t.pos(1).ok_or_else(|| at.err("/X", "pos[1] missing"))?;
    let crd = t.crd(1).ok_or_else(|| at.err("/X", "crd[1] missing"))?;
    // SciPy's rule: 32-bit signed indices and pointers while every value fits, else 64.
    let small = |v: &IndexVec| v.iter().all(|x| x <= i32::MAX as u64);
    let narrow = small(pos) && small(crd);
    for (name, v) in [("indptr", pos), ("indices", crd)] {
        if narrow {
            index_array(at, &x, name, &to_width(v, 32), true, z)?;
        } else {
            index_array(at, &x, name, &to_width(v, 64), true, z)?;
        }
    }
    value_array(at, &x, "data", t.values(), z)
}

/// `v` at 32 or 64 bits: itself where it has them (a 40M-entry array is not copied), else
/// one copy at the new width.
fn to_width(v: &IndexVec, bits: u32) -> std::borrow::Cow<'_, IndexVec> {
    use std::borrow::Cow;
    if v.width().bits() == bits && !matches!(v, IndexVec::Packed2 { .. }) {
        return Cow::Borrowed(v);
    }
    Cow::Owned(if bits == 64 {
        IndexVec::U64(v.iter().collect::<Vec<u64>>().into())
    } else {
        IndexVec::U32(v.iter().map(|x| x as u32).collect::<Vec<_>>().into())
    })
}

/// A dataframe with only an index: `NAME/_index` holding `names`.
fn dataframe(at: &At, file: &hdf5::File, name: &str, names: &[String]) -> Result<(), H5Error> {
    let g: Group = file
        .create_group(name)
        .map_err(|e| at.lib(name, "creating", e))?;
    string_attr(at, &g, "_index", "_index")?;
    string_attr(at, &g, "encoding-type", "dataframe")?;
    string_attr(at, &g, "encoding-version", "0.2.0")?;
    g.new_attr::<hdf5::types::VarLenUnicode>()
        .shape(0)
        .create("column-order")
        .map_err(|e| at.lib(format!("attribute `column-order` of /{name}"), "writing", e))?;
    strings(at, &g, "_index", names)?;
    let ds = g
        .dataset("_index")
        .map_err(|e| at.lib(name, "reopening _index", e))?;
    string_attr(at, &ds, "encoding-type", "string-array")?;
    string_attr(at, &ds, "encoding-version", "0.2.0")
}

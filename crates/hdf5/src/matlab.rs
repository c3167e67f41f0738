//! MATLAB v7.3 `.mat` read: an HDF5 file behind a 512-byte text header. A sparse
//! variable is a group with `MATLAB_sparse` (the row count) and datasets `jc` (column
//! pointers), `ir` (row indices) and `data` (double, logical as uint8, or complex as a
//! compound `{real, imag}`); a dense variable is a dataset stored transposed; a struct is
//! a group whose members are its fields (`S.W`).

use sptk_tensor::{ValueType, ValueVec};

use crate::arrays::{compressed, dense, Compressed, Content, Matrix};
use crate::error::H5Error;
use crate::h5::{join, H5};
use crate::Kind;

/// The text a MATLAB v7.3 file starts with.
pub const HEADER: &[u8] = b"MATLAB 7.3 MAT-file";

/// The HDF5 path of a variable named `S.W` or `S/W`.
pub(crate) fn path_of(var: &str) -> String {
    format!("/{}", var.trim_start_matches('/').replace('.', "/"))
}

/// Whether the object at `path` is a variable this reader can read (sparse, or dense
/// numeric), with its class.
pub(crate) fn variables(h: &H5) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(h, "/", &mut out);
    out
}

fn walk(h: &H5, group: &str, out: &mut Vec<(String, String)>) {
    let Ok(g) = h.file.group(group) else { return };
    for name in g.member_names().unwrap_or_default() {
        if name.starts_with('#') {
            continue; // `#refs#` and `#subsystem#`: MATLAB's own bookkeeping
        }
        let path = join(group, &name);
        let class = class_of(h, &path).unwrap_or_default();
        if let Ok(sub) = g.group(&name) {
            if sub
                .attr_names()
                .is_ok_and(|a| a.iter().any(|x| x == "MATLAB_sparse"))
            {
                out.push((path, format!("sparse {class}")));
            } else if class == "struct" {
                walk(h, &path, out);
            }
        } else if !class.is_empty() {
            out.push((path, format!("dense {class}")));
        }
    }
}

fn class_of(h: &H5, path: &str) -> Option<String> {
    if let Ok(g) = h.file.group(path) {
        return h.attr_string(&g, "MATLAB_class").ok().flatten();
    }
    let d = h.file.dataset(path).ok()?;
    h.attr_string(&d, "MATLAB_class").ok().flatten()
}

/// Reads variable `var` (`A`, `S.W`); with None, the only sparse variable of the file.
pub(crate) fn read(h: &H5, var: Option<&str>) -> Result<Matrix, H5Error> {
    let path = match var {
        Some(v) => path_of(v),
        None => {
            let vars = variables(h);
            let sparse: Vec<(String, String)> = vars
                .iter()
                .filter(|(_, c)| c.starts_with("sparse"))
                .cloned()
                .collect();
            match (&sparse[..], &vars[..]) {
                ([one], _) | ([], [one]) => one.0.clone(),
                _ => {
                    return Err(h.at.err(
                        "",
                        format!(
                            "holds {} variables ({}); choose one with --var NAME (or FILE:NAME)",
                            vars.len(),
                            vars.iter()
                                .map(|(p, c)| format!("{} ({c})", p.trim_start_matches('/')))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
            }
        }
    };
    let class = class_of(h, &path).unwrap_or_default();
    let mut notes = Vec::new();
    if let Ok(ds) = h.file.dataset(&path) {
        let content = dense(h, &ds, true)?;
        let content = match (class.as_str(), content) {
            ("logical", Content::Entries(e)) => Content::Entries(to_bool(h, e, &path)?),
            (_, c) => c,
        };
        return Ok(Matrix {
            object: path,
            kind: Kind::Matlab,
            layout: format!("dense {class}"),
            content,
            labels: Vec::new(),
            notes,
        });
    }
    let g = h.group(&path)?;
    let rows = h
        .attr_u64s(&g, "MATLAB_sparse")?
        .and_then(|v| v.first().copied())
        .ok_or_else(|| {
            h.at.err(
                &path,
                format!(
                    "not a sparse variable (no MATLAB_sparse attribute; MATLAB_class is `{class}`)"
                ),
            )
        })?;
    let name = |a: &str| join(&path, a);
    let pos = h.index_1d(&g, "jc")?;
    let cols = (pos.len() as u64).checked_sub(1).ok_or_else(|| {
        h.at.err(
            name("jc"),
            "empty; it holds one pointer per column plus one",
        )
    })?;
    let empty = !H5::has_dataset(&g, "ir");
    let (crd, values) = if empty {
        // MATLAB writes no `ir` or `data` for a matrix without stored entries.
        let t = if class == "logical" {
            ValueType::Bool
        } else {
            ValueType::F64
        };
        (
            sptk_tensor::IndexVec::new(pos.width()),
            ValueVec::with_capacity(t, 0),
        )
    } else {
        let data = h.dataset(&g, "data")?;
        h.expect_1d(&data, &name("data"))?;
        let values = h.values_ds(&data, &name("data"))?;
        let values = match (class.as_str(), values) {
            ("logical", ValueVec::U8(v)) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
            ("double" | "", v @ (ValueVec::F64(_) | ValueVec::C128(_))) => v,
            (c, v) => {
                return Err(h.at.err(
                    name("data"),
                    format!("{} values in a sparse `{c}` variable; MATLAB sparse matrices are double (real or complex) or logical", v.value_type().name()),
                ))
            }
        };
        (h.index_1d(&g, "ir")?, values)
    };
    let content = compressed(
        h.at,
        Compressed {
            dims: [rows, cols],
            by_rows: false,
            pos,
            crd,
            values,
            names: [&name("jc"), &name("ir"), &name("data")],
        },
        &mut notes,
    )?;
    Ok(Matrix {
        object: path,
        kind: Kind::Matlab,
        layout: format!("sparse {class}"),
        content,
        labels: Vec::new(),
        notes,
    })
}

fn to_bool(h: &H5, e: sptk_tensor::Entries, object: &str) -> Result<sptk_tensor::Entries, H5Error> {
    let (dims, coords, values) = e.into_parts();
    let values = match values {
        ValueVec::U8(v) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
        other => other,
    };
    sptk_tensor::Entries::from_checked_arrays(dims, coords, values)
        .map_err(|e| h.at.err(object, e.to_string()))
}

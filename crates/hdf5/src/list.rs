//! What an HDF5 file holds: every matrix-like object (binsparse groups, CSR / CSC groups
//! of AnnData, 10x matrices, MATLAB sparse variables, dense 2-D numeric datasets), with
//! its shape, value type, stored entries and layout, read from metadata alone.

use std::path::Path;

use hdf5::Group;
use sptk_tensor::ValueType;

use crate::error::H5Error;
use crate::h5::{join, value_type_of, H5};
use crate::{anndata, binsparse, tenx};

/// One matrix-like object of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its path (`/X`, `/layers/counts`, `/matrix`, `/A`).
    pub path: String,
    /// How it is stored, in words (`csr_matrix`, `binsparse CSR`, `dense`, ...).
    pub layout: String,
    /// Dimension sizes, where the metadata says them.
    pub dims: Vec<u64>,
    /// Value type, where it is numeric.
    pub value_type: Option<ValueType>,
    /// Stored entries (a dense array: every position).
    pub entries: Option<u64>,
}

/// Objects visited at most, so that a hostile file cannot make a listing endless.
const MAX_OBJECTS: usize = 100_000;

/// Lists the matrix-like objects of `path`, in file order, depth first.
///
/// # Errors
/// The file cannot be opened as HDF5.
pub fn list(path: &Path) -> Result<Vec<Member>, H5Error> {
    let h = crate::h5::open(path, None)?;
    let mut out = Vec::new();
    let mut visited = 0usize;
    walk(&h, "/", &mut out, &mut visited);
    Ok(out)
}

fn walk(h: &H5, group: &str, out: &mut Vec<Member>, visited: &mut usize) {
    let Ok(g) = h.file.group(group) else { return };
    if let Some(m) = sparse_group(h, &g, group) {
        out.push(m);
        return;
    }
    for name in g.member_names().unwrap_or_default() {
        *visited += 1;
        if *visited > MAX_OBJECTS || name.starts_with('#') {
            continue;
        }
        let path = join(group, &name);
        if let Ok(ds) = g.dataset(&name) {
            if let Some(m) = dense(h, &ds, &path) {
                out.push(m);
            }
        } else if g.group(&name).is_ok() {
            walk(h, &path, out, visited);
        }
    }
}

/// The group as a sparse matrix of one of the known layouts, if it is one.
fn sparse_group(h: &H5, g: &Group, path: &str) -> Option<Member> {
    let len = |name: &str| g.dataset(name).ok().map(|d| d.size() as u64);
    let vtype = |name: &str| {
        let d = g.dataset(name).ok()?;
        value_type_of(&d.dtype().ok()?.to_descriptor().ok()?)
    };
    if let Ok(Some(text)) = h.attr_string(g, binsparse::ATTRIBUTE) {
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        let b = json.get("binsparse")?;
        return Some(Member {
            path: path.to_string(),
            layout: format!(
                "binsparse {}",
                b.get("format").and_then(|f| f.as_str()).unwrap_or("?")
            ),
            dims: b
                .get("shape")
                .and_then(|s| s.as_array())
                .map(|s| s.iter().filter_map(serde_json::Value::as_u64).collect())
                .unwrap_or_default(),
            value_type: vtype("values"),
            entries: b
                .get("number_of_stored_values")
                .and_then(serde_json::Value::as_u64),
        });
    }
    if let Ok(Some(format)) = anndata::sparse_format(h, g) {
        let dims = h
            .attr_u64s(g, "shape")
            .ok()
            .flatten()
            .or_else(|| h.attr_u64s(g, "h5sparse_shape").ok().flatten())
            .unwrap_or_default();
        return Some(Member {
            path: path.to_string(),
            layout: format!("{format}_matrix"),
            dims,
            value_type: vtype("data"),
            entries: len("data"),
        });
    }
    if tenx::is_matrix(g) {
        let shape = g.dataset("shape").ok().and_then(|d| h.u64s(&d, path).ok());
        return Some(Member {
            path: path.to_string(),
            layout: "10x CSC (features x barcodes)".into(),
            dims: shape.unwrap_or_default(),
            value_type: vtype("data"),
            entries: len("data"),
        });
    }
    if let Ok(Some(rows)) = h.attr_u64s(g, "MATLAB_sparse") {
        let class = h
            .attr_string(g, "MATLAB_class")
            .ok()
            .flatten()
            .unwrap_or_default();
        let cols = len("jc").map_or(0, |n| n.saturating_sub(1));
        return Some(Member {
            path: path.to_string(),
            layout: format!("MATLAB sparse {class}"),
            dims: vec![rows.first().copied().unwrap_or(0), cols],
            value_type: if class == "logical" {
                Some(ValueType::Bool)
            } else {
                vtype("data").or(Some(ValueType::F64))
            },
            entries: Some(len("data").unwrap_or(0)),
        });
    }
    None
}

/// A dense numeric array of two or more dimensions (MATLAB ones shown in MATLAB's order).
fn dense(h: &H5, ds: &hdf5::Dataset, path: &str) -> Option<Member> {
    let shape: Vec<u64> = ds.shape().iter().map(|&s| s as u64).collect();
    if shape.len() < 2 {
        return None;
    }
    let value_type = value_type_of(&ds.dtype().ok()?.to_descriptor().ok()?)?;
    let matlab = h.attr_string(ds, "MATLAB_class").ok().flatten();
    let (dims, layout) = match matlab {
        Some(class) => (
            shape.iter().rev().copied().collect(),
            format!("MATLAB dense {class}"),
        ),
        None => (shape.clone(), "dense".to_string()),
    };
    Some(Member {
        path: path.to_string(),
        layout,
        entries: Some(shape.iter().product()),
        dims,
        value_type: Some(value_type),
    })
}

//! AnnData `.h5ad` read: `X`, `layers/NAME`, `raw/X`, `obsp/NAME`, `varp/NAME`,
//! `obsm/NAME`, `varm/NAME`, each a CSR or CSC group (`encoding-type` `csr_matrix` /
//! `csc_matrix`, or the older `h5sparse_format`) or a dense 2-D dataset, of any stored
//! type; obs and var names kept as the labels of the dimensions they name.

use std::sync::Arc;

use sptk_tensor::Labels;

use crate::arrays::{compressed_ds, dense, CompressedDs, Matrix};
use crate::error::H5Error;
use crate::h5::{join, H5};
use crate::Kind;

/// Reads the matrix at `path` (`X` when none is named).
pub(crate) fn read(h: &H5, path: &str) -> Result<Matrix, H5Error> {
    let path = path.trim_start_matches('/');
    let mut notes = Vec::new();
    let (content, layout) = read_object(h, &format!("/{path}"), &mut notes)?;
    let mut m = Matrix {
        object: format!("/{path}"),
        kind: Kind::AnnData,
        layout,
        content,
        labels: Vec::new(),
        notes,
    };
    attach_names(h, path, &mut m)?;
    if let Some(note) = also_held(h, path) {
        m.notes.push(note);
    }
    Ok(m)
}

/// What the file holds beside the matrix at `path` and the obs / var names, which a
/// matrix read (and any output written from it) does not carry: the other matrices and
/// groups that are not empty, and the obs / var columns.
fn also_held(h: &H5, path: &str) -> Option<String> {
    const SHOWN: usize = 4;
    let listed = |names: Vec<String>| {
        let more = names.len().saturating_sub(SHOWN);
        let mut text = names.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    };
    let mut held = Vec::new();
    for name in h.file.member_names().unwrap_or_default() {
        let members = h
            .file
            .group(&name)
            .and_then(|g| g.member_names())
            .unwrap_or_default();
        match name.as_str() {
            "obs" | "var" => {
                let columns: Vec<String> = members
                    .into_iter()
                    .filter(|c| c != "_index" && c != "__categories")
                    .collect();
                if !columns.is_empty() {
                    held.push(format!("{name} columns ({})", listed(columns)));
                }
            }
            _ if name == path => {}
            _ => {
                // The matrix read may sit inside this group (layers/counts).
                let members: Vec<String> = members
                    .into_iter()
                    .filter(|m| format!("{name}/{m}") != path)
                    .collect();
                let matrix = match h.file.group(&name) {
                    Ok(g) => sparse_format(h, &g).ok().flatten().is_some(),
                    Err(_) => true,
                };
                if matrix {
                    held.push(format!("/{name}"));
                } else if !members.is_empty() {
                    held.push(format!("/{name} ({})", listed(members)));
                }
            }
        }
    }
    (!held.is_empty()).then(|| {
        format!(
            "the file also holds {}, which a matrix read does not carry (FILE:/layers/NAME, FILE:/raw/X read another matrix)",
            held.join(", ")
        )
    })
}

/// A sparse group or a dense dataset at `object`, and its layout in words.
pub(crate) fn read_object(
    h: &H5,
    object: &str,
    notes: &mut Vec<String>,
) -> Result<(crate::arrays::Content, String), H5Error> {
    if let Ok(ds) = h.file.dataset(object) {
        return Ok((dense(h, &ds, false)?, "dense array".into()));
    }
    let g = h.group(object)?;
    let format = sparse_format(h, &g)?.ok_or_else(|| {
        h.at.err(
            object,
            "neither a sparse matrix group (encoding-type csr_matrix or csc_matrix) nor a dense dataset",
        )
    })?;
    let by_rows = format == "csr";
    let shape_attr = if g.attr_names().is_ok_and(|n| n.iter().any(|x| x == "shape")) {
        "shape"
    } else {
        "h5sparse_shape"
    };
    let shape = h.attr_u64s(&g, shape_attr)?.ok_or_else(|| {
        h.at.err(object, "a sparse matrix group without a `shape` attribute")
    })?;
    let [rows, cols] = shape[..] else {
        return Err(h.at.err(
            format!("attribute `shape` of {object}"),
            format!("{shape:?}: a matrix has two dimensions"),
        ));
    };
    let name = |a: &str| join(object, a);
    let [pos, crd, data] = ["indptr", "indices", "data"].map(|a| h.dataset_1d(&g, a));
    let (pos, crd, data) = (pos?, crd?, data?);
    let content = compressed_ds(
        h,
        CompressedDs {
            dims: [rows, cols],
            by_rows,
            datasets: [&pos, &crd, &data],
            names: [&name("indptr"), &name("indices"), &name("data")],
        },
        notes,
    )?;
    Ok((content, format!("{format}_matrix")))
}

/// `csr` or `csc` for a sparse matrix group, None for any other group.
pub(crate) fn sparse_format(h: &H5, g: &hdf5::Group) -> Result<Option<String>, H5Error> {
    if let Some(t) = h.attr_string(g, "encoding-type")? {
        return Ok(match t.as_str() {
            "csr_matrix" => Some("csr".into()),
            "csc_matrix" => Some("csc".into()),
            _ => None,
        });
    }
    Ok(h.attr_string(g, "h5sparse_format")?
        .filter(|f| f == "csr" || f == "csc"))
}

/// Which dataframes name the rows and columns of the matrix at `path`.
fn label_sources(path: &str) -> (Option<&'static str>, Option<&'static str>) {
    let top = path.split('/').next().unwrap_or("");
    match top {
        "X" | "layers" => (Some("obs"), Some("var")),
        "raw" => (Some("obs"), Some("raw/var")),
        "obsp" => (Some("obs"), Some("obs")),
        "varp" => (Some("var"), Some("var")),
        "obsm" => (Some("obs"), None),
        "varm" => (Some("var"), None),
        _ => (None, None),
    }
}

fn attach_names(h: &H5, path: &str, m: &mut Matrix) -> Result<(), H5Error> {
    let dims = m.dim_sizes().to_vec();
    let (rows, cols) = label_sources(path);
    let mut labels = vec![None, None];
    for (d, frame) in [rows, cols].into_iter().enumerate() {
        let Some(frame) = frame else { continue };
        if let Some((names, from)) = index_of(h, frame)? {
            if names.len() as u64 != dims[d] {
                return Err(h.at.err(
                    from,
                    format!(
                        "{} names for the {} {} of {}",
                        names.len(),
                        dims[d],
                        if d == 0 { "rows" } else { "columns" },
                        m.object
                    ),
                ));
            }
            m.notes.push(format!(
                "{} labelled from {from}",
                if d == 0 { "rows" } else { "columns" }
            ));
            labels[d] = Some(Arc::new(Labels::from_strings(names)));
        }
    }
    if labels.iter().any(Option::is_some) {
        m.labels = labels;
    }
    Ok(())
}

/// The index (names) of a dataframe group, and the dataset it came from; None when the
/// file has no such dataframe or it keeps its index in a form not read here.
fn index_of(h: &H5, frame: &str) -> Result<Option<(Vec<String>, String)>, H5Error> {
    let Ok(g) = h.file.group(frame) else {
        return Ok(None);
    };
    let column = h
        .attr_string(&g, "_index")?
        .unwrap_or_else(|| "_index".into());
    if !H5::has_dataset(&g, &column) {
        return Ok(None);
    }
    let ds = h.dataset(&g, &column)?;
    let object = ds.name();
    Ok(Some((h.strings(&ds, &object)?, object)))
}

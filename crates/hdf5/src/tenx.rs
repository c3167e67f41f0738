//! 10x Genomics feature-barcode matrices (`.h5`): the Cell Ranger v3 layout (group
//! `matrix` with `features/`) and the v2 layout (one group per genome with `genes`), read
//! as the file declares them: CSC of features x barcodes, labelled by gene symbol (or
//! feature id, [`FeatureLabels`]) and barcode.

use std::sync::Arc;

use sptk_tensor::Labels;

use crate::arrays::{compressed_ds, CompressedDs, Matrix};
use crate::error::H5Error;
use crate::h5::{join, H5};
use crate::{FeatureLabels, Kind};

/// Whether `g` holds a 10x matrix (its CSC arrays and `shape`).
pub(crate) fn is_matrix(g: &hdf5::Group) -> bool {
    ["data", "indices", "indptr", "shape", "barcodes"]
        .iter()
        .all(|n| H5::has_dataset(g, n))
}

/// The groups of the file that hold a matrix: `/matrix` (v3) or one per genome (v2).
pub(crate) fn matrices(h: &H5) -> Vec<String> {
    let Ok(root) = h.file.group("/") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in root.member_names().unwrap_or_default() {
        if let Ok(g) = root.group(&name) {
            if is_matrix(&g) {
                out.push(format!("/{name}"));
            }
        }
    }
    out
}

/// Reads the matrix in `group` (the only one when None), its features labelled as `by`
/// says.
pub(crate) fn read(h: &H5, group: Option<&str>, by: FeatureLabels) -> Result<Matrix, H5Error> {
    let group = match group {
        Some(g) => format!("/{}", g.trim_start_matches('/')),
        None => {
            let all = matrices(h);
            match &all[..] {
                [one] => one.clone(),
                [] => return Err(h.at.err("", "no 10x matrix group (with data, indices, indptr, shape and barcodes) in the file")),
                several => {
                    return Err(h.at.err(
                        "",
                        format!(
                            "several matrices ({}); choose one as FILE:GROUP or with --dataset",
                            several.join(", ")
                        ),
                    ))
                }
            }
        }
    };
    let g = h.group(&group)?;
    if !is_matrix(&g) {
        return Err(h.at.err(
            &group,
            "not a 10x matrix group (it needs data, indices, indptr, shape and barcodes)",
        ));
    }
    let name = |a: &str| join(&group, a);
    let shape_ds = h.dataset(&g, "shape")?;
    let shape = h.u64s(&shape_ds, &name("shape"))?;
    let [features, barcodes] = shape[..] else {
        return Err(h.at.err(
            name("shape"),
            format!("{shape:?}: a 10x matrix has two dimensions (features, barcodes)"),
        ));
    };
    let [pos, crd, data] = ["indptr", "indices", "data"].map(|a| h.dataset_1d(&g, a));
    let (pos, crd, data) = (pos?, crd?, data?);
    let mut notes = Vec::new();
    let content = compressed_ds(
        h,
        CompressedDs {
            dims: [features, barcodes],
            by_rows: false,
            datasets: [&pos, &crd, &data],
            names: [&name("indptr"), &name("indices"), &name("data")],
        },
        &mut notes,
    )?;
    // v3: features/id and features/name; v2: genes and gene_names.
    let (dir, id, symbol) = if H5::has_group(&g, "features") {
        (h.group(&name("features"))?, "id", "name")
    } else {
        (g.clone(), "genes", "gene_names")
    };
    let by_symbol = by == FeatureLabels::Names && H5::has_dataset(&dir, symbol);
    let ds = h.dataset(&dir, if by_symbol { symbol } else { id })?;
    let (ids_object, mut ids) = (ds.name(), h.strings(&ds, &ds.name())?);
    let what = if by_symbol {
        "gene symbols"
    } else {
        "feature ids"
    };
    if by_symbol {
        let renamed = sptk_tensor::make_unique(&mut ids);
        notes.extend(sptk_tensor::renamed_symbols_note(&renamed));
    }
    let bc = h.dataset(&g, "barcodes")?;
    let bcs = h.strings(&bc, &name("barcodes"))?;
    for (list, n, object, what) in [
        (&ids, features, &ids_object, what),
        (&bcs, barcodes, &name("barcodes"), "barcodes"),
    ] {
        if list.len() as u64 != n {
            return Err(h.at.err(
                object,
                format!("{} {what} for a shape of {shape:?}", list.len()),
            ));
        }
    }
    notes.push(format!(
        "rows labelled from {ids_object} ({what}), columns from {} (barcodes)",
        name("barcodes")
    ));
    Ok(Matrix {
        object: group,
        kind: Kind::TenX,
        layout: "10x CSC (features x barcodes)".into(),
        content,
        labels: vec![
            Some(Arc::new(Labels::from_strings(ids))),
            Some(Arc::new(Labels::from_strings(bcs))),
        ],
        notes,
    })
}

//! Writing over the input is refused without --force: the output holds the matrix read
//! alone, and a container's other matrices are named in the refusal. `--symmetry` for an
//! output that cannot store one triangle is refused in one wording.

use std::path::Path;

use crate::common;
use common::{fails, succeeds};

#[cfg(feature = "hdf5")]
fn testdata(rel: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn mtx(dir: &Path) -> Vec<u8> {
    let text = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n".to_vec();
    std::fs::write(dir.join("m.mtx"), &text).unwrap();
    text
}

#[test]
fn the_input_is_not_replaced_without_force_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = mtx(d);
    std::fs::hard_link(d.join("m.mtx"), d.join("link.mtx")).unwrap();
    for out in ["m.mtx", "./m.mtx", "link.mtx"] {
        fails(
            &["m.mtx", "--to", "CSC", "-o", out],
            d,
            "-o names the input itself",
        );
        assert_eq!(std::fs::read(d.join("m.mtx")).unwrap(), before, "{out}");
    }
    succeeds(&["m.mtx", "--to", "CSC", "-o", "m.mtx", "--force"], d, None);
    // The same entry, now written from CSC: still one entry at (1, 2).
    let after = std::fs::read_to_string(d.join("m.mtx")).unwrap();
    assert!(after.ends_with("2 2 1\n1 2 3.5\n"), "{after}");
}

#[cfg(feature = "hdf5")]
#[test]
fn an_anndata_file_is_not_written_over_itself_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(testdata("anndata/adata_layers.h5ad"), d.join("same.h5ad")).unwrap();
    let before = std::fs::read(d.join("same.h5ad")).unwrap();
    // adata_layers.h5ad holds X and layers/counts (testdata/README.md).
    fails(
        &["same.h5ad", "--to", "CSR", "-o", "same.h5ad"],
        d,
        "(the input holds /X, /layers/counts); write to another name, or give --force",
    );
    assert_eq!(std::fs::read(d.join("same.h5ad")).unwrap(), before);
    succeeds(
        &["same.h5ad", "--to", "CSR", "-o", "same.h5ad", "--force"],
        d,
        None,
    );
    // What is left is X alone: one matrix.
    let (info, _) = succeeds(&["info", "same.h5ad"], d, None);
    assert!(!info.contains("layers/counts"), "{info}");
}

#[test]
fn symmetry_for_an_output_that_cannot_hold_it_is_refused_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(d);
    let takes = if cfg!(feature = "hdf5") {
        "--symmetry applies to Matrix Market and binsparse output, not"
    } else {
        "--symmetry applies to Matrix Market output, not"
    };
    for out in ["out.spt", "out.tns", "out.npz"] {
        fails(
            &["m.mtx", "--to", "CSR", "--symmetry", "symmetric", "-o", out],
            d,
            takes,
        );
    }
}

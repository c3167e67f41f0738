//! HDF5 and table operands, in builds with both (the default): files written by anndata
//! and pyarrow run as any other input, converted in memory, the HDF5 one read by
//! libhdf5 in a helper process that is sparse-run itself re-executed; y matches the
//! reference kernel on the same file read in this process.
#![cfg(all(feature = "hdf5", feature = "table"))]

use crate::common;

use std::path::Path;

use common::{run, s};
use sptk_input::{ReadOptions, SourceSpec};
use sptk_jit::reference;
use sptk_npy::{Npy, Order};

#[test]
fn anndata_and_parquet_files_run_converted_in_memory() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let dir = tempfile::tempdir().unwrap();
    for (file, kind) in [
        ("anndata/adata_csr_f32.h5ad", "AnnData"),
        ("arrow/coo_i64_f64.parquet", "Parquet"),
    ] {
        let path = testdata.join(file);
        let input =
            sptk_input::read(SourceSpec::file(&path), None, &ReadOptions::default()).unwrap();
        let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
        // f64, the wider of A's and x's types, in which sparse-run computes.
        let opts = sptk_tensor::ConvertOptions {
            dtype: Some(sptk_tensor::ValueType::F64),
            ..Default::default()
        };
        let a = input.convert(&csr, &opts).unwrap().tensor;
        let cols = a.dim_sizes()[1] as usize;
        let x: Vec<f64> = (0..cols).map(|j| 0.5 + j as f64 * 0.25).collect();
        let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
        sptk_npy::write(&xp, &[cols as u64], Order::C, &x).unwrap();
        let (ok, _, err) = run(&["spmv", s(&path), "--x", s(&xp), "-o", s(&yp), "--to", "CSR"]);
        assert!(ok, "{file}: {err}");
        assert!(
            err.contains(&format!("({kind}")) && err.contains("converted in memory"),
            "{file}: {err}"
        );
        let mut want = vec![0.0; a.dim_sizes()[0] as usize];
        reference::spmv(&a, &x, &mut want, false, (1.0, 0.0)).unwrap();
        common::close(&Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), &want);
    }
}

#[test]
fn a_damaged_hdf5_operand_is_a_named_error() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(testdata.join("anndata/adata_csr_f32.h5ad")).unwrap();
    bytes.truncate(bytes.len() / 2);
    let bad = dir.path().join("cut.h5ad");
    std::fs::write(&bad, bytes).unwrap();
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[4], Order::C, &[1.0f64; 4]).unwrap();
    let (ok, _, err) = run(&["spmv", s(&bad), "--x", s(&xp)]);
    assert!(!ok);
    assert!(err.contains("cut.h5ad"), "{err}");
}

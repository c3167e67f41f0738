//! Every HDF5 file of the shared test data (binsparse, AnnData, 10x Genomics, MATLAB),
//! written by other tools, read exactly against its canonical COO in `expected/`.

#[allow(dead_code)]
#[path = "../../../mtx/tests/suite/common/npz.rs"]
mod common;

use std::path::PathBuf;

use common::{canonical, expected, read_npz, testdata, V};
use sptk_hdf5::{read, Content, Kind, ReadOptions};
use sptk_tensor::Entries;

fn entries(m: &sptk_hdf5::Matrix) -> Entries {
    match &m.content {
        Content::Entries(e) => e.clone(),
        Content::Tensor(t) => t.to_entries(),
        Content::Planned(_) => panic!("read leaves no array planned"),
    }
}

fn file(rel: &str) -> PathBuf {
    testdata().join(rel)
}

/// Reads `member` of `rel` and compares it with `expected/<name>.npz`.
fn check(rel: &str, member: Option<&str>, name: &str, kind: Kind) -> sptk_hdf5::Matrix {
    let path = file(rel);
    assert_eq!(sptk_hdf5::detect(&path).unwrap(), kind, "{rel}");
    let m =
        read(&path, None, member, &ReadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(m.kind, kind);
    assert_eq!(canonical(&entries(&m)), expected(name), "{rel} {member:?}");
    m
}

#[test]
fn binsparse_2d_files_read_exactly() {
    for (f, name, levels) in [
        ("csr_f64_i32", "bsp_csr_f64_i32", true),
        ("csc_i32_i64", "bsp_csc_i32_i64", true),
        ("coor_f32_u32", "bsp_coor_f32_u32", false),
        ("dcsr_i64_u16", "bsp_dcsr_i64_u16", false),
        ("csr_iso_f64", "bsp_csr_iso_f64", true),
        ("csr_complex128", "bsp_csr_complex128", true),
    ] {
        let m = check(
            &format!("binsparse/{f}.bsp.h5"),
            None,
            name,
            Kind::Binsparse,
        );
        assert_eq!(matches!(m.content, Content::Tensor(_)), levels, "{f}");
    }
}

#[test]
fn csr_keeps_the_stored_index_widths() {
    let m = check(
        "binsparse/csr_f64_i32.bsp.h5",
        None,
        "bsp_csr_f64_i32",
        Kind::Binsparse,
    );
    let Content::Tensor(t) = &m.content else {
        panic!("CSR arrays are handed over as levels")
    };
    assert_eq!(t.encoding().pos_width, 32);
    assert_eq!(t.encoding().crd_width, 32);
}

/// The 3-D files, compared on (i, j, k) keys.
#[test]
fn binsparse_3d_custom_formats_read_exactly() {
    for (f, name) in [
        ("tensor3d_coo_f64", "bsp_tensor3d_coo_f64"),
        ("tensor3d_csf_f32", "bsp_tensor3d_csf_f32"),
    ] {
        let m = read(
            &file(&format!("binsparse/{f}.bsp.h5")),
            None,
            None,
            &ReadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{f}: {e}"));
        let e = entries(&m);
        let npz = read_npz(&testdata().join("expected").join(format!("{name}.npz")));
        let (r, c, k) = (npz["row"].i64s(), npz["col"].i64s(), npz["k"].i64s());
        let shape: Vec<u64> = npz["shape"].i64s().iter().map(|&x| x as u64).collect();
        assert_eq!(e.dim_sizes(), &shape[..]);
        let mut got: Vec<(u64, u64, u64, u64)> = (0..e.len())
            .map(|n| {
                let v = match e.scalar(n).unwrap() {
                    sptk_tensor::Scalar::Float(x) => x.to_bits(),
                    other => panic!("{other:?}"),
                };
                (e.coord(n, 0), e.coord(n, 1), e.coord(n, 2), v)
            })
            .collect();
        got.sort();
        let val = &npz["val"];
        let vals: Vec<u64> = match val.descr.as_str() {
            "<f8" => val.u64_words(),
            "<f4" => val
                .data
                .chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes(b.try_into().unwrap())).to_bits())
                .collect(),
            d => panic!("{d}"),
        };
        let want: Vec<(u64, u64, u64, u64)> = (0..r.len())
            .map(|n| (r[n] as u64, c[n] as u64, k[n] as u64, vals[n]))
            .collect();
        assert_eq!(got, want, "{f}");
    }
}

#[test]
fn anndata_files_read_exactly_with_names() {
    let m = check(
        "anndata/adata_csr_f32.h5ad",
        None,
        "adata_csr_f32__X",
        Kind::AnnData,
    );
    assert!(matches!(m.content, Content::Tensor(_)));
    assert_eq!(m.labels.len(), 2);
    assert!(m.labels.iter().all(Option::is_some));
    check(
        "anndata/adata_csc_f64.h5ad",
        None,
        "adata_csc_f64__X",
        Kind::AnnData,
    );
    check(
        "anndata/adata_dense_f32.h5ad",
        None,
        "adata_dense_f32__X",
        Kind::AnnData,
    );
    let x = check(
        "anndata/adata_layers.h5ad",
        Some("X"),
        "adata_layers__X",
        Kind::AnnData,
    );
    let counts = check(
        "anndata/adata_layers.h5ad",
        Some("layers/counts"),
        "adata_layers__layers_counts",
        Kind::AnnData,
    );
    assert_eq!(counts.object, "/layers/counts");
    // What a matrix read leaves behind is said (h5py shows the file's
    // groups: a layer `counts`, obs `batch`, `n_counts`, var `gene_symbol`,
    // `highly_variable`, uns `description`; obsm, obsp, varm, varp empty).
    let held = |m: &sptk_hdf5::Matrix| {
        m.notes
            .iter()
            .find(|n| n.starts_with("the file also holds"))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        held(&x).starts_with("the file also holds /layers (counts), obs columns (batch, n_counts), /uns (description), var columns (gene_symbol, highly_variable),"),
        "{}",
        held(&x)
    );
    assert!(
        held(&counts).starts_with("the file also holds /X, obs columns"),
        "{}",
        held(&counts)
    );
    let plain = check(
        "anndata/adata_csr_f32.h5ad",
        None,
        "adata_csr_f32__X",
        Kind::AnnData,
    );
    assert_eq!(held(&plain), "");
}

#[test]
fn tenx_file_reads_exactly_with_gene_symbols_or_feature_ids_and_barcodes() {
    let m = check(
        "10x/filtered_feature_bc_matrix.h5",
        None,
        "tenx_v3_filtered",
        Kind::TenX,
    );
    assert_eq!(m.dim_sizes(), &[1200, 300]);
    let rows = m.labels[0].as_ref().expect("feature ids");
    let cols = m.labels[1].as_ref().expect("barcodes");
    assert_eq!(rows.len(), 1200);
    assert_eq!(cols.len(), 300);
    assert!(cols.get(0).unwrap().ends_with("-1"), "{:?}", cols.get(0));
    // Gene symbols by default (features/name), feature ids when asked (features/id).
    assert_eq!(rows.get(3), Some("MIR1302-2HG"));
    let opts = ReadOptions {
        feature_labels: sptk_hdf5::FeatureLabels::Ids,
        ..ReadOptions::default()
    };
    let by_id = read(
        &file("10x/filtered_feature_bc_matrix.h5"),
        None,
        None,
        &opts,
    )
    .unwrap();
    let ids = by_id.labels[0].as_ref().expect("feature ids");
    assert_eq!(ids.get(0), Some("ENSG00000100000"));
    assert_eq!(ids.len(), 1200);
}

#[test]
fn matlab_files_read_exactly() {
    check(
        "matlab/sparse_double.mat",
        None,
        "mat_sparse_double__A",
        Kind::Matlab,
    );
    check(
        "matlab/sparse_double.mat",
        Some("A"),
        "mat_sparse_double__A",
        Kind::Matlab,
    );
    for var in ["L", "Z", "D"] {
        check(
            "matlab/sparse_mixed.mat",
            Some(var),
            &format!("mat_sparse_mixed__{var}"),
            Kind::Matlab,
        );
    }
    check(
        "matlab/hdf5storage_dense.mat",
        None,
        "mat_hdf5storage_dense__M",
        Kind::Matlab,
    );
    let e = read(
        &file("matlab/sparse_mixed.mat"),
        None,
        None,
        &ReadOptions::default(),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(e.to_string().contains("--var"), "{e}");
}

/// Values are read bit for bit: each value of a complex and a double file equals its
/// expected bits, and those files hold values a lossy read would change (nonzero imaginary
/// parts; doubles that an f32 cannot hold), so a read through f32 or one dropping the
/// imaginary part fails here.
#[test]
fn every_value_is_exact() {
    for (rel, name) in [
        ("binsparse/csr_complex128.bsp.h5", "bsp_csr_complex128"),
        ("binsparse/csr_f64_i32.bsp.h5", "bsp_csr_f64_i32"),
    ] {
        let m = read(&file(rel), None, None, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (_, _, got) = canonical(&entries(&m));
        let (_, _, want) = expected(name);
        assert_eq!(got.len(), want.len(), "{rel}: value count");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{rel}: value {k} differs in its bits");
        }
        let lossy = |v: &V| match *v {
            V::C(_, im) => f64::from_bits(im) != 0.0,
            V::F(bits) => {
                let x = f64::from_bits(bits);
                f64::from(x as f32) != x
            }
            V::I(_) => false,
        };
        assert!(want.iter().all(lossy), "{rel}: a value a lossy read keeps");
    }
}

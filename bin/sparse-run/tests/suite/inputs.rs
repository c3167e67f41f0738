//! Inputs other than `.spt`: any file sparse-convert reads is converted in memory, into
//! `--to` or the input's own encoding (CSR for a coordinate list), with a note saying so;
//! y is the reference kernels' on the same conversion.

use crate::common;

use common::{matrix, run, s};
use sptk_encoding::resolve_target;
use sptk_jit::reference;
use sptk_npy::{Npy, Order};
use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};

#[test]
fn a_matrix_market_file_runs_converted_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("a.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate real general\n4 3 5\n1 1 2.5\n1 3 -1\n2 2 4\n4 1 0.5\n4 3 8\n",
    )
    .unwrap();
    let e = Entries::from_parts(
        vec![4, 3],
        vec![vec![0, 0, 1, 3, 3], vec![0, 2, 1, 0, 2]],
        ValueVec::F64(vec![2.5, -1.0, 4.0, 0.5, 8.0].into()),
    )
    .unwrap();
    let x = [1.5f64, -2.0, 0.25];
    let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    sptk_npy::write(&xp, &[3], Order::C, &x).unwrap();
    for (to, target, why) in [
        (None, "CSR", "(a coordinate list"),
        (Some("BSR:2x2"), "BSR:2x2", "(--to"),
    ] {
        let mut args = vec!["spmv", s(&mtx), "--x", s(&xp), "-o", s(&yp)];
        args.extend(to.iter().flat_map(|t| ["--to", t]));
        let (ok, _, err) = run(&args);
        assert!(ok, "{err}");
        assert!(
            err.contains("a.mtx (Matrix Market) converted in memory to") && err.contains(why),
            "{err}"
        );
        let t = resolve_target(target, 2).unwrap();
        // Presets take the narrowest widths that hold the data, as in sparse-convert.
        let opts = ConvertOptions {
            auto_widths: sptk_tensor::AutoWidths::for_target(target),
            ..ConvertOptions::default()
        };
        let a = convert(&e, &t, &opts).unwrap().tensor;
        assert!(err.contains(&a.encoding().to_string()), "{err}");
        let mut want = vec![0.0; 4];
        reference::spmv(&a, &x, &mut want, false, (1.0, 0.0)).unwrap();
        assert_eq!(Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), want);
    }
}

#[test]
fn a_stored_file_is_converted_with_to_and_bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    let a = matrix(&ap, 20, 12, "CSR");
    let x: Vec<f64> = (0..12).map(|j| j as f64 - 5.5).collect();
    let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    sptk_npy::write(&xp, &[12], Order::C, &x).unwrap();
    let (ok, _, err) = run(&["spmv", s(&ap), "--x", s(&xp), "-o", s(&yp), "--to", "CSC"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("converted in memory") && err.contains("(--to"),
        "{err}"
    );
    let mut want = vec![0.0; 20];
    reference::spmv(&a, &x, &mut want, false, (1.0, 0.0)).unwrap();
    let got = Npy::open(&yp).unwrap().to_floats::<f64>().unwrap();
    common::close(&got, &want);

    let bad = dir.path().join("b.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
    )
    .unwrap();
    let (ok, _, err) = run(&["spmv", s(&bad), "--x", s(&xp)]);
    assert!(!ok);
    assert!(
        err.contains("cannot read") && err.contains("b.mtx"),
        "{err}"
    );
    let (ok, _, err) = run(&["spmv", s(&ap), "--x", s(&xp), "--to", "NOPE"]);
    assert!(!ok);
    assert!(err.contains("--to"), "{err}");
}

//! The type a product computes in: the wider of A's and the dense operands' (an f32 A
//! with an f64 x gives f64, as SciPy does; nothing is narrowed), and f16 / bf16 matrices
//! computed in f32 (each value widened, products and sums in f32). Results are checked
//! bit for bit against the same engine (generated code, `--isa reference`) run on a
//! matrix whose values sptk-tensor's own conversion widened.

use crate::common;

use std::path::Path;

use common::{matrix_as, run, s};
use sptk_encoding::resolve_target;
use sptk_jit::{kernel, reference, Desc, Isa, Op, RealValue};
use sptk_npy::{Npy, Order, ValueType};
use sptk_tensor::{convert, ConvertOptions, Tensor};

/// `a` in `target` again with its values converted to `dtype` by sptk-tensor.
fn retyped(a: &Tensor, target: &str, dtype: ValueType) -> Tensor {
    let opts = ConvertOptions {
        dtype: Some(dtype),
        ..ConvertOptions::default()
    };
    let target = resolve_target(target, 2).unwrap();
    convert(&a.to_entries(), &target, &opts).unwrap().tensor
}

fn typed(dtype: ValueType, prune: bool) -> ConvertOptions {
    ConvertOptions {
        dtype: Some(dtype),
        prune,
        ..ConvertOptions::default()
    }
}

/// Runs spmv of the matrix at `ap` with the x at `xp` on the default engine (generated
/// code where there is some) and on the reference kernels, and checks that each writes a
/// y of `T` equal bit for bit to the same engine run in process on `wide` (the matrix
/// with its values widened to `T` by sptk-tensor), with a note saying what was widened.
fn check<T: RealValue + sptk_npy::Float + std::fmt::Debug>(
    (ap, xp, yp): (&Path, &Path, &Path),
    wide: &Tensor,
    x: &[T],
    note: &str,
) {
    let rows = wide.dim_sizes()[0] as usize;
    let mut want = vec![T::ZERO; rows];
    reference::spmv(wide, x, &mut want, false, (T::ONE, T::ZERO)).unwrap();
    let mut generated = want.clone();
    if let Some(k) = Isa::best().and_then(|isa| {
        let d = Desc::for_tensor(Op::Spmv, wide, isa).ok()?;
        kernel(&d).ok()
    }) {
        k.spmv(wide, x, &mut generated, (T::ONE, T::ZERO), 2)
            .unwrap();
    }
    for (isa, want) in [(None, &generated), (Some("reference"), &want)] {
        let mut args = vec!["spmv", s(ap), "--x", s(xp), "-o", s(yp)];
        args.extend(isa.iter().flat_map(|i| ["--isa", i]));
        let (ok, _, err) = run(&args);
        assert!(ok, "{isa:?}: {err}");
        assert!(err.contains(note), "{isa:?}: {err}");
        let y = Npy::open(yp).unwrap();
        assert_eq!(y.dtype().name(), <T as RealValue>::NAME, "{isa:?}");
        assert_eq!(
            &y.to_floats::<T>().unwrap(),
            want,
            "{isa:?} {}",
            wide.encoding()
        );
    }
}

#[test]
fn an_f32_matrix_with_an_f64_x_computes_in_f64() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    let a = matrix_as(&ap, 60, 50, "CSR", &typed(ValueType::F32, false));
    let wide = retyped(&a, "CSR", ValueType::F64);
    let x: Vec<f64> = (0..50).map(|j| 1.0 / 3.0 + j as f64 * 0.1).collect();
    let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    sptk_npy::write(&xp, &[50], Order::C, &x).unwrap();
    let mut want = vec![0.0f64; 60];
    reference::spmv(&wide, &x, &mut want, false, (1.0, 0.0)).unwrap();
    // In f32 (x narrowed), the result differs: the test can tell the two apart.
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut narrow = vec![0.0f32; 60];
    reference::spmv(&a, &x32, &mut narrow, false, (1.0, 0.0)).unwrap();
    assert!(want.iter().zip(&narrow).any(|(w, n)| *w != f64::from(*n)));
    let note = "holds f32 values, widened to f64";
    check((&ap, &xp, &yp), &wide, &x, note);
}

#[test]
fn bf16_and_f16_matrices_compute_in_f32() {
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..48).map(|j| 0.75 - j as f32 / 7.0).collect();
    let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    sptk_npy::write(&xp, &[48], Order::C, &x).unwrap();
    // The README's pruned weights (2:4, bf16 and f16: generated code that widens each value
    // as it loads it), CSR of f16 and BSR of bf16 (padding) run on a widened copy.
    for (target, dtype, prune) in [
        ("2:4", ValueType::BF16, true),
        ("2:4", ValueType::F16, true),
        ("CSR", ValueType::F16, false),
        ("BSR:2x2", ValueType::BF16, false),
    ] {
        let ap = dir
            .path()
            .join(format!("{target}{}.spt", dtype.name()).replace(':', "_"));
        let a = matrix_as(&ap, 40, 48, target, &typed(dtype, prune));
        assert_eq!(a.value_type(), dtype);
        let wide = retyped(&a, target, ValueType::F32);
        assert_eq!(wide.levels(), a.levels(), "{target}");
        let note = format!("holds {} values, widened to f32", dtype.name());
        check((&ap, &xp, &yp), &wide, &x, &note);
    }
    // With an f64 x, bf16 computes in f64 (nothing narrowed).
    let ap = dir.path().join("2_4bf16.spt");
    let a = matrix_as(&ap, 40, 48, "2:4", &typed(ValueType::BF16, true));
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v) + 1e-9).collect();
    sptk_npy::write(&xp, &[48], Order::C, &x64).unwrap();
    let wide = retyped(&a, "2:4", ValueType::F64);
    check(
        (&ap, &xp, &yp),
        &wide,
        &x64,
        "holds bf16 values, widened to f64",
    );
}

/// SpMM of a bf16 2:4 matrix (no 16-bit SpMM kernel: a widened copy) gives the reference's
/// Y on the widened values, in f32, bit for bit (n:m SpMM keeps the reference's order).
#[test]
fn spmm_of_bf16_weights_computes_in_f32() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("w.spt");
    let a = matrix_as(&ap, 40, 48, "2:4", &typed(ValueType::BF16, true));
    let wide = retyped(&a, "2:4", ValueType::F32);
    let k = 5;
    let xm: Vec<f32> = (0..48 * k).map(|v| (v % 11) as f32 / 3.0 - 1.5).collect();
    let (xp, yp) = (dir.path().join("X.npy"), dir.path().join("Y.npy"));
    sptk_npy::write(&xp, &[48, k as u64], Order::C, &xm).unwrap();
    let (ok, _, err) = run(&["spmm", s(&ap), "--x", s(&xp), "-o", s(&yp)]);
    assert!(ok, "{err}");
    assert!(err.contains("holds bf16 values, widened to f32"), "{err}");
    let mut want = vec![0.0f32; 40 * k];
    let xd = sptk_jit::Dense {
        data: &xm,
        rows: 48,
        cols: k,
        order: sptk_jit::Order::RowMajor,
    };
    let yd = sptk_jit::DenseMut {
        data: &mut want,
        rows: 40,
        cols: k,
        order: sptk_jit::Order::RowMajor,
    };
    reference::spmm(&wide, xd, yd, (1.0, 0.0)).unwrap();
    let y = Npy::open(&yp).unwrap();
    assert_eq!(y.dtype(), ValueType::F32);
    assert_eq!(y.to_floats::<f32>().unwrap(), want);
}

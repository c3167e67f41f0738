//! Generated kernels on f16 / bf16 values (n:m SpMV, the CSR / DCSR / CSC^T dot products):
//! bit for bit the f32 kernel of the same description on the values widened to f32, and
//! for n:m the reference too (random values, so any other rounding or order shows), on
//! every instruction set that generates them, any thread count; the code widens each value
//! from 16-bit loads (bf16: a shift; f16: F16C `vcvtph2ps`). Reading past the arrays is
//! checked in bounds.rs.
// Generated code exists on x86-64 only (elsewhere the reference kernels run).
#![cfg(target_arch = "x86_64")]

use crate::common;

use common::{isas, typed_matrix, Rng};
use sptk_jit::reference;
use sptk_jit::widen::widened;
use sptk_jit::{kernel, Desc, Half, Isa, Op, Real};
use sptk_tensor::{convert, ConvertOptions, Tensor, ValueType};

/// `a` again with its values converted to `dtype` by sptk-tensor (rounded to nearest).
fn retyped(a: &Tensor, dtype: ValueType) -> Tensor {
    let target = sptk_encoding::Target::Fixed(a.encoding().clone());
    let opts = ConvertOptions {
        dtype: Some(dtype),
        ..ConvertOptions::default()
    };
    convert(&a.to_entries(), &target, &opts).unwrap().tensor
}

#[test]
fn half_values_give_the_reference_on_widened_values_bit_for_bit() {
    let mut rng = Rng(0xa54f_f53a_5f1d_36f1);
    let mut runs = 0;
    for isa in isas() {
        for (half, dtype) in [(Half::F16, ValueType::F16), (Half::Bf16, ValueType::BF16)] {
            for (format, op) in [
                ("2:4", Op::Spmv),
                ("2:4 packed", Op::Spmv),
                ("CSR", Op::Spmv),
                ("DCSR", Op::Spmv),
                ("CSC", Op::SpmvT),
            ] {
                let (rows, cols) = (1 + rng.below(300), 1 + rng.below(300));
                let e: Vec<(u64, u64, f64)> = (0..rng.below(rows * cols / 2 + 1))
                    .map(|_| (rng.below(rows), rng.below(cols), rng.value() * 8.0 - 4.0))
                    .collect();
                let a = retyped(
                    &typed_matrix((rows, cols), &e, false, (32, 16), format),
                    dtype,
                );
                let d = Desc::for_tensor(op, &a, isa).unwrap();
                let t = op == Op::SpmvT;
                let (xn, yn) = if t { (rows, cols) } else { (cols, rows) };
                assert_eq!(d.to_string().split(' ').nth(2), Some(half.name()));
                let Ok(k) = kernel(&d) else {
                    let nm = format.starts_with("2:4");
                    assert!(isa == Isa::Scalar && (half == Half::F16 || !nm), "{d}");
                    continue;
                };
                let text = k.disassembly();
                let nm = format.starts_with("2:4");
                let widen: &[&str] = match (half, nm) {
                    (Half::F16, _) => &["vcvtph2ps"],
                    (Half::Bf16, true) => &["shl"],
                    (Half::Bf16, false) => &["vpmovzxwd", "vpslld", "vpinsrw"],
                };
                for w in widen {
                    assert!(text.contains(w), "{d}: no {w}");
                }
                let wide = widened(&a, Real::F32).unwrap().unwrap();
                let x: Vec<f32> = (0..xn).map(|_| rng.value() as f32 - 0.5).collect();
                let y0: Vec<f32> = (0..yn).map(|_| rng.value() as f32).collect();
                let mut want = y0.clone();
                reference::spmv(&wide, &x, &mut want, t, (1.5, -0.5)).unwrap();
                // The f32 kernel of the same format on the widened copy: the same bits (the
                // vectorized dot products sum in another order than the reference).
                let k32 = kernel(&Desc::for_tensor(op, &wide, isa).unwrap()).unwrap();
                let mut y32 = y0.clone();
                k32.spmv(&wide, &x, &mut y32, (1.5, -0.5), 2).unwrap();
                if format.starts_with("2:4") {
                    assert_eq!(y32, want, "{d}");
                }
                for threads in [1, 3] {
                    let mut y = y0.clone();
                    k.spmv(&a, &x, &mut y, (1.5, -0.5), threads).unwrap();
                    let same = y.iter().zip(&y32).all(|(g, w)| g.to_bits() == w.to_bits());
                    assert!(same, "{d}, {threads} threads: {y:?} != {y32:?}");
                    runs += 1;
                }
                if format == "CSR" {
                    // A row view reads the same 16-bit values.
                    let (lo, hi) = (yn as usize / 3, yn as usize * 2 / 3);
                    let mut part = y0[lo..hi].to_vec();
                    k.spmv_outer(&a, lo..hi, &x, &mut part, (1.5, -0.5), 2)
                        .unwrap();
                    assert_eq!(part, y32[lo..hi], "{d}: rows {lo}..{hi}");
                }
                // f64 x and y are refused: the kernel computes in f32.
                let (x64, mut y64) = (vec![0.0f64; xn as usize], vec![0.0f64; yn as usize]);
                assert!(k.spmv(&a, &x64, &mut y64, (1.0, 0.0), 1).is_err());
            }
        }
    }
    assert!(runs > 0);
}

//! Generated n:m SpMV on f16 / bf16 values: bit for bit the reference on the values
//! widened to f32 (random values, so any other rounding or order shows), on every
//! instruction set that generates it, any thread count; the code widens each value with
//! a 16-bit load (bf16: a shift; f16: F16C `vcvtph2ps`). Reading past the arrays is
//! checked in bounds.rs.
// Generated code exists on x86-64 only (elsewhere the reference kernels run).
#![cfg(target_arch = "x86_64")]

mod common;

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
            for format in ["2:4", "2:4 packed"] {
                let (rows, cols) = (1 + rng.below(300), 1 + rng.below(300));
                let e: Vec<(u64, u64, f64)> = (0..rng.below(rows * cols / 2 + 1))
                    .map(|_| (rng.below(rows), rng.below(cols), rng.value() * 8.0 - 4.0))
                    .collect();
                let a = retyped(
                    &typed_matrix((rows, cols), &e, false, (32, 8), format),
                    dtype,
                );
                let d = Desc::for_tensor(Op::Spmv, &a, isa).unwrap();
                assert_eq!(d.to_string().split(' ').nth(2), Some(half.name()));
                let Ok(k) = kernel(&d) else {
                    assert!(half == Half::F16 && isa == Isa::Scalar, "{d}");
                    continue;
                };
                let text = k.disassembly();
                let widen = if half == Half::F16 {
                    "vcvtph2ps"
                } else {
                    "shl"
                };
                assert!(text.contains(widen), "{d}: no {widen}");
                let wide = widened(&a, Real::F32).unwrap().unwrap();
                let x: Vec<f32> = (0..cols).map(|_| rng.value() as f32 - 0.5).collect();
                let y0: Vec<f32> = (0..rows).map(|_| rng.value() as f32).collect();
                let mut want = y0.clone();
                reference::spmv(&wide, &x, &mut want, false, (1.5, -0.5)).unwrap();
                for threads in [1, 3] {
                    let mut y = y0.clone();
                    k.spmv(&a, &x, &mut y, (1.5, -0.5), threads).unwrap();
                    let same = y.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits());
                    assert!(same, "{d}, {threads} threads: {y:?} != {want:?}");
                    runs += 1;
                }
                // The f32 kernel of the same format on the widened copy: the same bits.
                let k32 = kernel(&Desc::for_tensor(Op::Spmv, &wide, isa).unwrap()).unwrap();
                let mut y = y0.clone();
                k32.spmv(&wide, &x, &mut y, (1.5, -0.5), 2).unwrap();
                assert_eq!(y, want, "{d}");
                // f64 x and y are refused: the kernel computes in f32.
                let (x64, mut y64) = (vec![0.0f64; cols as usize], vec![0.0f64; rows as usize]);
                assert!(k.spmv(&a, &x64, &mut y64, (1.0, 0.0), 1).is_err());
            }
        }
    }
    assert!(runs > 0);
}

//! Element-wise results built in the arrays of earlier results (`Options::pool`, what
//! `sparse-run`'s repeats and shards do): the same entries as in fresh memory, in the very
//! memory handed back, on a pair large enough (72 MB of room for C) that the chunks are
//! copied into place by streaming stores; by generated code and the monomorphized loops.

use crate::common::spt_csr;

use spt_csr::csr_f64;
use sptk_jit::ewise::{self, EwiseOp, Kernels, Options};
use sptk_tensor::{BufferPool, IndexVec, Tensor, ValueVec};

const ROWS: u64 = 1 << 20;

/// A CSR matrix `ROWS x (ROWS + 8)` with entries at columns `i + first .. i + first + 3`
/// of row `i`, valued `value(i, j)`; 32-bit positions and coordinates.
fn band(first: u64, value: impl Fn(u64, u64) -> f64) -> Tensor {
    let mut pos = Vec::with_capacity(ROWS as usize + 1);
    let mut crd = Vec::with_capacity(3 * ROWS as usize);
    let mut val = Vec::with_capacity(3 * ROWS as usize);
    pos.push(0u32);
    for i in 0..ROWS {
        for j in i + first..i + first + 3 {
            crd.push(j as u32);
            val.push(value(i, j));
        }
        pos.push(crd.len() as u32);
    }
    csr_f64(vec![ROWS, ROWS + 8], pos, crd, val)
}

fn a_value(i: u64, j: u64) -> f64 {
    (i * 7 + j) as f64 * 0.5
}

fn b_value(i: u64, j: u64) -> f64 {
    1.0 / (1 + i + 3 * j) as f64
}

/// Checks C of `A op B` for A's band at columns `i..i + 3` and B's at `i + 2..i + 5`:
/// the union `i..i + 5` for add (a + b at `i + 2`), the intersection `i + 2` for mul.
fn check(c: &Tensor, op: EwiseOp, what: &str) {
    let (Some(IndexVec::U32(pos)), Some(IndexVec::U32(crd)), ValueVec::F64(val)) =
        (c.pos(1), c.crd(1), c.values())
    else {
        panic!(
            "{what}: C is not CSR with 32-bit arrays and f64 values: {:?}",
            c.encoding()
        );
    };
    let per_row = if op == EwiseOp::Add { 5 } else { 1 };
    assert_eq!(pos.len() as u64, ROWS + 1, "{what}");
    assert_eq!(crd.len() as u64, per_row * ROWS, "{what}");
    for i in 0..ROWS {
        let at = (i * per_row) as usize;
        assert_eq!(pos[i as usize] as usize, at, "{what}: pos[{i}]");
        let cols = if op == EwiseOp::Add {
            i..i + 5
        } else {
            i + 2..i + 3
        };
        for (k, j) in cols.enumerate() {
            let (a, b) = (
                (j < i + 3).then(|| a_value(i, j)),
                (j >= i + 2).then(|| b_value(i, j)),
            );
            let want = match (op, a, b) {
                (EwiseOp::Add, a, b) => a.unwrap_or(0.0) + b.unwrap_or(0.0),
                (_, Some(a), Some(b)) => a * b,
                _ => unreachable!(),
            };
            assert_eq!(crd[at + k] as u64, j, "{what}: row {i} entry {k}");
            assert_eq!(
                val[at + k].to_bits(),
                want.to_bits(),
                "{what}: row {i} col {j}"
            );
        }
    }
}

fn values_at(c: &Tensor) -> usize {
    match c.values() {
        ValueVec::F64(v) => v.as_ptr() as usize,
        _ => 0,
    }
}

#[test]
fn results_built_in_kept_arrays_are_exact_and_reuse_them() {
    let a = band(0, a_value);
    let b = band(2, b_value);
    for kernels in [Kernels::Auto, Kernels::Monomorphized, Kernels::Generated] {
        for op in [EwiseOp::Add, EwiseOp::Mul] {
            let what = format!("{op:?} with {kernels:?}");
            let pool = BufferPool::default();
            let opts = Options {
                pool: Some(pool.clone()),
                threads: Some(2),
                kernels,
                ..Options::default()
            };
            let first = ewise::ewise(&a, &b, op, &opts).unwrap();
            check(&first, op, &format!("{what}, fresh memory"));
            let at = values_at(&first);
            pool.keep_tensor(first);
            assert!(
                pool.bytes() >= 3 * ROWS as usize * 8,
                "{what}: C's values kept"
            );
            let again = ewise::ewise(&a, &b, op, &opts).unwrap();
            check(&again, op, &format!("{what}, kept memory"));
            assert_eq!(
                values_at(&again),
                at,
                "{what}: C's values in the kept array"
            );
            // Without a pool the same bits come out of fresh memory.
            let plain = Options {
                pool: None,
                ..opts.clone()
            };
            let fresh = ewise::ewise(&a, &b, op, &plain).unwrap();
            assert_eq!(fresh.values(), again.values(), "{what}");
        }
    }
}

//! Where generated co-iteration code (`crate::coiter`) merges `C = op(A, B)` instead of
//! the monomorphized loops: both run inside the same one-pass pipeline
//! (`fast::one_pass`), so C has the same bits either way; only the merge of a range
//! differs.
//!
//! [`Kernels::Auto`](super::Kernels::Auto) picks generated code for the operations, operand
//! pairs and instruction sets where it was measured at least as fast as the monomorphized
//! loops ([`by_default`]), and only where a kernel exists (f32 / f64 values, AVX-512 or
//! AVX2 on this CPU).

use super::dispatch::{Kind, Width};
use super::fast::{Filled, Pair};
use super::{EwiseError, EwiseOp, Options};
use crate::coiter::{self, CoDesc, Plan};
use crate::desc::Isa;
use crate::run::Chunk;

/// True where [`Kernels::Auto`](super::Kernels::Auto) runs generated code: both operands
/// with a dense outer level (CSR x CSR, CSC x CSC) and
/// - on AVX-512, every operation: generated code was at least 1.0x the monomorphized
///   loops on every benchmark pair of `benches/peers_ewise.py` for each operation timed;
/// - on AVX2, `mul` only (the union there has no vector form for short rows, and its
///   merge alone was 0.87x on the uniform pair).
///
/// Measured (CSR x CSR, f64, 32-bit indices; fill phase of `sparse-run OP A B --kernels K
/// --threads 2 --repeat 7 --stats`, C's pages touched apart, medians of 3 alternating
/// runs, load 1-2), monomorphized / generated, uniform / banded / long-row pairs, since
/// the generated vector union of short rows:
/// - `add` 1.21x / 1.20x / 1.20x (80 / 63 / 60 ms against 66 / 53 / 50 ms); single thread
///   (`--repeat 7`, 3 runs each): fill 113 / 110 / 82 ms against 91 / 88 / 70 ms;
/// - `sub` 1.29x / 1.17x / 1.21x; `max` 1.23x / 1.33x / 1.34x (`min` is the same code
///   with `vminp*` for `vmaxp*`, not timed);
/// - `div` 1.10x / 1.17x / 1.18x; `first` 2.2x / 1.18x / 1.13x; `min --intersect` 1.07x /
///   1.14x / 1.28x (`second`: `first`'s code with the other operand's value, not timed);
/// - `mul` (074cd99, before the vector union): 1.03x / 1.26x / 1.10x.
fn by_default(op: EwiseOp, dense: (bool, bool), isa: Isa) -> bool {
    dense == (true, true) && (isa == Isa::Avx512 || op == EwiseOp::Mul)
}

/// C's arrays as generated code left them, and the kernel's description.
type Generated<C, V> = (Filled<C, V>, CoDesc);

/// C's arrays by generated code with its kernel's description, or `None` where the
/// monomorphized loops are to run ([`Options::kernels`], no kernel for the value type or
/// this CPU). `dense` says which operands have a dense outer level.
///
/// # Errors
/// Memory for C.
pub(super) fn run<V: Kind, P: Width, C: Width>(
    pair: Pair<'_, P, C, V>,
    (op, union): (EwiseOp, bool),
    (outer, opts): (usize, &Options),
    dense: (bool, bool),
) -> Result<Option<Generated<C, V>>, EwiseError> {
    let Some(plan) = plan(opts, (op, union), |isa| by_default(op, dense, isa))? else {
        return Ok(None);
    };
    let (a, b) = sides(&pair);
    opts.kernels.or_loops(coiter::ewise_pair(a, b, plan, outer))
}

/// True where [`Kernels::Auto`](super::Kernels::Auto) runs generated code for `dot` and
/// `rowdot`: both operands with a dense outer level, on AVX-512 (the short-list compares;
/// AVX2 not measured).
///
/// Measured (CSR x CSR, f64, 32-bit indices; `sparse-run dot|rowdot A B --kernels K
/// --threads 2 --repeat 21 --stats`, the middle of 3 alternating runs, release build of
/// 6672585, a noisy hour), monomorphized / generated on the uniform / banded / long-row /
/// skewed pairs: `dot` 1.36x / 1.19x / 1.12x / 1.10x (47.2 / 21.5 / 27.3 / 8.27 ms against
/// 34.7 / 18.1 / 24.5 / 7.52), `rowdot` 1.15x / 1.18x / 1.30x / 1.01x (docs/PERFORMANCE.md,
/// "Generated dot").
fn dot_by_default(dense: (bool, bool), isa: Isa) -> bool {
    dense == (true, true) && isa == Isa::Avx512
}

/// `dot` (each chunk's sum, in chunk order) or `rowdot` (`rows`: every outer coordinate's
/// sum) by generated code with its kernel's description, or `None` where the monomorphized
/// loops are to run, as [`run`] decides.
///
/// # Errors
/// Memory for the row sums.
pub(super) fn run_dot<V: Kind, P: Width, C: Width>(
    pair: Pair<'_, P, C, V>,
    (rows, outer, chunks): (bool, usize, &[Chunk]),
    opts: &Options,
    dense: (bool, bool),
) -> Result<Option<(Vec<V>, CoDesc)>, EwiseError> {
    let Some(plan) = plan(opts, (EwiseOp::Mul, false), |isa| {
        dot_by_default(dense, isa)
    })?
    else {
        return Ok(None);
    };
    let (a, b) = sides(&pair);
    opts.kernels
        .or_loops(coiter::dot_pair(a, b, plan, (rows, outer, chunks)))
}

/// How generated code would run `(op, union)`, or `None` where the monomorphized loops
/// are to ([`Options::kernels`]; `auto` asks `by_default` of the best ISA here).
///
/// # Errors
/// `--kernels generated` where no instruction set here has the kernels.
fn plan(
    opts: &Options,
    (op, union): (EwiseOp, bool),
    auto: impl Fn(Isa) -> bool,
) -> Result<Option<Plan<'_>>, EwiseError> {
    let Some(isa) = opts.kernels.isa(None, auto).map_err(EwiseError::Option)? else {
        return Ok(None);
    };
    Ok(Some(Plan {
        op,
        union,
        isa,
        threads: opts.threads(),
        first_touch_apart: opts.first_touch_apart,
        pool: opts.pool.as_ref(),
        pos_width: opts.pos_width,
    }))
}

/// The fast path's two operands as `coiter` takes them.
type Sides<'x, P, C, V> = (coiter::PairSide<'x, P, C, V>, coiter::PairSide<'x, P, C, V>);

fn sides<'x, P: Width, C: Width, V: Kind>(pair: &Pair<'x, P, C, V>) -> Sides<'x, P, C, V> {
    let (a, b) = (&pair.a, &pair.b);
    (
        (a.outer, a.pos, a.crd, pair.av),
        (b.outer, b.pos, b.crd, pair.bv),
    )
}

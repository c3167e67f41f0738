//! Where generated co-iteration code (`crate::coiter`) merges `C = op(A, B)` instead of
//! the monomorphized loops: both run inside the same one-pass pipeline
//! (`fast::one_pass`), so C has the same bits either way; only the merge of a range
//! differs.
//!
//! [`Kernels::Auto`] picks generated code for the operations and operand pairs where it
//! was measured at least as fast as the monomorphized loops ([`by_default`]), and only
//! where a kernel exists (f32 / f64 values, AVX-512 or AVX2 on this CPU).

use super::dispatch::{Kind, Width};
use super::fast::{Filled, Pair};
use super::{EwiseError, EwiseOp, Kernels, Options};
use crate::coiter::{self, CoDesc, Plan};
use crate::desc::Isa;

/// The operations and operand pairs (A's outer level dense, B's) where generated code
/// runs by default: those where it was at least 1.0x the monomorphized loops on every
/// benchmark pair of `benches/peers_ewise.py` (CSR x CSR, f64, 32-bit indices, AVX-512).
///
/// After the look-ahead merge and the short-list vector compares (074cd99), at load
/// 0.1-1.6 on the 2 shared cores, monomorphized / generated:
/// - `tests/coiter.rs`'s bench (allocation + merge, medians of 7 alternating runs, 2
///   threads): mul uniform 1.14x, banded 1.16x, longrow 1.33x; add 0.88x, 1.11x, 0.89x.
///   (An earlier run at load 6: mul 0.98x / 1.10x / 1.17x, add 1.21x / 1.06x / 0.94x.)
/// - `sparse-run OP A B --kernels K --threads 2 --repeat 11 --stats`, 3 alternating runs,
///   medians of the per-run medians (user time in brackets): mul uniform 1.03x (1.11x),
///   banded 1.26x (1.28x), longrow 1.10x (1.08x); add 0.87x (0.86x), 1.23x (1.15x),
///   0.96x (1.13x).
///
/// So mul on CSR x CSR; add stays monomorphized (the union merge is below 1.0x on the
/// uniform and long-row pairs). The other intersections (`div`, `first`, `second`, `min`,
/// `max`) run the same generated merge but were not measured, so they stay off too.
const BY_DEFAULT: &[(EwiseOp, (bool, bool))] = &[(EwiseOp::Mul, (true, true))];

/// True where [`Kernels::Auto`] runs generated code ([`BY_DEFAULT`]).
fn by_default(op: EwiseOp, dense: (bool, bool)) -> bool {
    BY_DEFAULT.contains(&(op, dense))
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
    let wanted = match opts.kernels {
        Kernels::Monomorphized => false,
        Kernels::Generated => true,
        Kernels::Auto => by_default(op, dense),
    };
    let isa = [Isa::Avx512, Isa::Avx2].into_iter().find(|i| i.available());
    let Some(isa) = isa.filter(|_| wanted) else {
        return Ok(None);
    };
    let plan = Plan {
        op,
        union,
        isa,
        threads: opts.threads(),
        first_touch_apart: opts.first_touch_apart,
    };
    let (a, b) = (pair.a, pair.b);
    let sides = (
        (a.outer, a.pos, a.crd, pair.av),
        (b.outer, b.pos, b.crd, pair.bv),
    );
    match coiter::ewise_pair(sides.0, sides.1, plan, outer) {
        Ok(done) => Ok(Some(done)),
        // No kernel for these values or levels: the monomorphized loops run.
        Err(EwiseError::Convert(_) | EwiseError::ValueType(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

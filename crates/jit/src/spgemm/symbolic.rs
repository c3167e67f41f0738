//! The symbolic pass: what each row of C costs, and which form computes it.
//!
//! 1. Flops per row: `flops_i = sum over k in A_i of nnz(B_k)`, the products Gustavson's
//!    form makes for row `i` (in parallel over ranges of rows balanced by nnz(A)).
//! 2. For a structural mask, the dot form's cost per row, `sum over j in M_i of
//!    cost(nnz(A_i), nnz(B_j))` (column counts of B from one pass over its coordinates).
//!    Where the rows the dot form wins save more than B's transpose costs, those rows
//!    take the dot form and B is planned by columns too.
//! 3. Every other row takes the hash accumulator when its bound on distinct columns is
//!    small against C's column count (`bound * HASH_SHARE < cols`), the dense one
//!    otherwise.
//! 4. Rows are split into chunks of equal cost (the chosen form's, plus one per row),
//!    as many as make most chunks bound for a buffer's entries of C (at least
//!    [`CHUNKS`]), a number that does not depend on the thread count; each row is
//!    computed whole by one thread, so the result does not depend on the split.

use sptk_tensor::Zeroed;

use super::accumulate::MaskMode;
use super::dot;
use super::numeric::{row_bound, BUFFER_ENTRIES};
use super::operand::{Coord, Rows};
use super::{Accumulator, MaskedForm};
use crate::ewise::{lock, split};
use crate::run::{chunk_by_weight, run_chunks, Chunk};

/// A row whose bound on distinct columns, times this, is below C's column count takes
/// the hash accumulator (measured: docs/PERFORMANCE.md, "SpGEMM").
pub(crate) const HASH_SHARE: u64 = 16;

/// How many chunks rows are split into at least (of equal cost).
const CHUNKS: usize = 256;

/// How a row of C is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum Form {
    /// Gustavson with the dense accumulator.
    #[default]
    Dense,
    /// Gustavson with the hash accumulator.
    Hash,
    /// Dot products over the mask's entries.
    Dot,
}

/// The symbolic pass's result.
pub(crate) struct Symbolic {
    /// `flops[i]`: the products of row `i` in Gustavson's form.
    pub flops: Vec<u64>,
    /// The sum of `flops`: the products of the unmasked product.
    pub total_flops: u64,
    /// Each row's form.
    pub forms: Vec<Form>,
    /// Ranges of rows of about equal cost.
    pub chunks: Vec<Chunk>,
    /// Rows of each form (dense, hash, dot).
    pub rows_by_form: [usize; 3],
}

/// The structure of a product (values not read).
pub(crate) struct Shape<'a, C> {
    pub a: Rows<'a, C, ()>,
    pub b: Rows<'a, C, ()>,
    pub mask: Option<Rows<'a, C, ()>>,
    pub mode: MaskMode,
    pub rows: usize,
    pub cols: usize,
}

/// `f(i)` for every row, in parallel over ranges balanced by `pos` (A's positions).
fn per_row<T: Zeroed + Copy + Send>(
    rows: usize,
    pos: &[u64],
    threads: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut out: Vec<T> = sptk_tensor::big_zeroed(rows).unwrap_or_default();
    if out.len() != rows {
        return (0..rows).map(f).collect();
    }
    let ranges = chunk_by_weight(0..rows, CHUNKS, |i| {
        pos.get(i).copied().unwrap_or(0).saturating_add(i as u64)
    });
    let pieces = split(&mut out, ranges.iter().map(|&(lo, hi)| hi - lo));
    run_chunks(&ranges, threads, |c, (lo, hi)| {
        if let Some(piece) = pieces.get(c) {
            for (slot, i) in lock(piece).iter_mut().zip(lo..hi) {
                *slot = f(i);
            }
        }
    });
    drop(pieces);
    out
}

/// The symbolic pass over `s` (see the module text); `can_dot` says whether B by columns
/// may be planned (a structural mask, not forced to Gustavson).
pub(crate) fn symbolic<C: Coord>(
    s: &Shape<'_, C>,
    accumulator: Accumulator,
    masked_form: MaskedForm,
    threads: usize,
) -> Symbolic {
    let flops = per_row(s.rows, s.a.pos, threads, |i| {
        s.a.row(i)
            .0
            .iter()
            .map(|&k| s.b.len(k.to_u64() as usize))
            .sum::<u64>()
    });
    let total_flops = flops.iter().sum();
    let mask_len = |i: usize| s.mask.as_ref().map_or(0, |m| m.len(i));
    let cols = s.cols as u64;
    // The bound on a row's distinct columns, for the hash table.
    let bound = |i: usize| {
        row_bound(
            s.mode,
            flops.get(i).copied().unwrap_or(0),
            mask_len(i),
            cols,
        )
    };
    let gustavson = |i: usize| match accumulator {
        Accumulator::Dense => Form::Dense,
        Accumulator::Hash => Form::Hash,
        Accumulator::Auto if bound(i) * HASH_SHARE < cols => Form::Hash,
        Accumulator::Auto => Form::Dense,
    };
    let g_cost = |i: usize| flops.get(i).copied().unwrap_or(0) + mask_len(i);
    let dot_costs = match (&s.mask, s.mode, masked_form) {
        (Some(m), MaskMode::Keep, MaskedForm::Auto | MaskedForm::Dot) => {
            let counts = column_counts(&s.b, s.cols);
            let d = per_row(s.rows, s.a.pos, threads, |i| {
                let la = s.a.len(i);
                m.row(i)
                    .0
                    .iter()
                    .map(|&j| dot::cost(la, counts.get(j.to_u64() as usize).copied().unwrap_or(0)))
                    .sum::<u64>()
            });
            let saved: u64 = (0..s.rows)
                .map(|i| g_cost(i).saturating_sub(d.get(i).copied().unwrap_or(u64::MAX)))
                .sum();
            let transpose = 2 * s.b.crd.len() as u64;
            (masked_form == MaskedForm::Dot || saved > transpose).then_some(d)
        }
        _ => None,
    };
    let mut forms = vec![Form::Dense; s.rows];
    let mut cost_before = Vec::with_capacity(s.rows + 1);
    let mut total = 0u64;
    let mut rows_by_form = [0usize; 3];
    let mut entries_bound = 0u64;
    for (i, form) in forms.iter_mut().enumerate() {
        cost_before.push(total);
        entries_bound = entries_bound.saturating_add(bound(i));
        let g = g_cost(i);
        let (f, c) = match &dot_costs {
            Some(d) if masked_form == MaskedForm::Dot || d[i] < g => (Form::Dot, d[i]),
            _ => (gustavson(i), g),
        };
        *form = f;
        rows_by_form[f as usize] += 1;
        total = total.saturating_add(c + 1);
    }
    cost_before.push(total);
    // Enough chunks that most are bound for a buffer's entries (the one pass's).
    let pieces = usize::try_from(entries_bound / BUFFER_ENTRIES)
        .unwrap_or(usize::MAX)
        .max(CHUNKS);
    let chunks = chunk_by_weight(0..s.rows, pieces, |i| {
        cost_before.get(i).copied().unwrap_or(total)
    });
    Symbolic {
        flops,
        total_flops,
        forms,
        chunks,
        rows_by_form,
    }
}

/// Entries per column of `b` (its rows' coordinates counted).
fn column_counts<C: Coord>(b: &Rows<'_, C, ()>, cols: usize) -> Vec<u64> {
    let mut counts = vec![0u64; cols];
    for &j in b.crd {
        if let Some(c) = counts.get_mut(j.to_u64() as usize) {
            *c += 1;
        }
    }
    counts
}

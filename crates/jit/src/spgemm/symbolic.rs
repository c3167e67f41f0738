//! The symbolic pass: what each row of C costs, and which form computes it.
//!
//! 1. Flops per row: `flops_i = sum over k in A_i of nnz(B_k)`, the products Gustavson's
//!    form makes for row `i` (in parallel over ranges of rows balanced by nnz(A)).
//! 2. For a structural mask, a per-row cost model ([`Model`], fitted on this CPU) weighs
//!    the two forms: Gustavson's `9 (flops_i + nnz(M_i))` against the dot form's
//!    `sum over j in M_i of (22 + 6 steps(A_i, B_j))`, where `steps` is [`dot::cost`] of
//!    the two lists cut to their shared coordinate range, each list's share of the range
//!    estimated from its length and first and last coordinate (B's columns' from one pass
//!    over its coordinates). A row takes the cheaper form (ties the dot form); where the
//!    rows the dot form takes save more than B's transpose (12 an entry), B is also
//!    transposed by columns, else every row stays Gustavson's.
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
    /// A structural mask's product by [`Model`]: every row by Gustavson's form, every row
    /// by dot products (zeros where the dot form was not weighed).
    pub costs: [u64; 2],
}

/// The cost model of a masked product's two forms, in units of one merge step of the
/// dot form (measured: docs/PERFORMANCE.md, "SpGEMM").
#[derive(Clone, Copy, Debug)]
pub(crate) struct Model {
    /// A product of Gustavson's form (hash or dense accumulator, its mask probed).
    pub flop: u64,
    /// A mask entry of Gustavson's form (marked in the accumulator first).
    pub g_entry: u64,
    /// A step of the dot form's merge ([`dot::cost`] counts them).
    pub step: u64,
    /// A mask entry of the dot form (B's column found, both lists cut to their shared range).
    pub d_entry: u64,
    /// An entry of B transposed for the dot form.
    pub transpose: u64,
}

/// The costs fitted on this CPU (2 threads, nanoseconds a thread, loaded machine; see
/// docs/PERFORMANCE.md, "SpGEMM"): Gustavson's form every row against the dot form every
/// row on the triangle count (R-MAT 18: 1.106e9 products, 3.80M mask entries, 1.447e9
/// estimated merge steps) and on FEM masked by A (`C<A> = A A`, 100^3: 48.2M products,
/// 6.94M mask entries, 84.8M steps). Gustavson's form costs about 9 ns a product or mask
/// entry on both (10.9 s for 1.11e9; 0.46 s for 55.2M); the dot form's two times solve to
/// 6 ns a merge step and 22 ns a mask entry (the column's lookup, four binary searches).
/// So the triangle count's rows with entries take the dot form (modelled 8.77e9 against
/// 9.99e9 over the whole product; measured 7.8-8.9 s against 10.9-11.2 s) and FEM's
/// take Gustavson's (4.97e8 against 6.61e8; fill 209-250 ms against 296-408 ms).
/// B's transpose, about 12 ns an entry, is paid only where the rows that move save more.
const MODEL: Model = Model {
    flop: 9,
    g_entry: 9,
    step: 6,
    d_entry: 22,
    transpose: 12,
};

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
    let model = MODEL;
    let g_cost =
        |i: usize| model.flop * flops.get(i).copied().unwrap_or(0) + model.g_entry * mask_len(i);
    let dot_costs = match (&s.mask, s.mode, masked_form) {
        (Some(m), MaskMode::Keep, MaskedForm::Auto | MaskedForm::Dot) => {
            let columns = columns(&s.b, s.cols);
            let d = per_row(s.rows, s.a.pos, threads, |i| {
                let (ak, _) = s.a.row(i);
                let (js, _) = m.row(i);
                let steps = match (ak.first(), ak.last()) {
                    (Some(&a0), Some(&a1)) => {
                        let a = Span {
                            len: ak.len() as u64,
                            first: a0.to_u64(),
                            last: a1.to_u64(),
                        };
                        js.iter()
                            .map(|&j| match columns.get(j.to_u64() as usize) {
                                Some(b) => cut_cost(a, *b),
                                None => 0,
                            })
                            .sum::<u64>()
                    }
                    _ => 0,
                };
                model.step * steps + model.d_entry * js.len() as u64
            });
            let saved: u64 = (0..s.rows)
                .map(|i| g_cost(i).saturating_sub(d.get(i).copied().unwrap_or(u64::MAX)))
                .sum();
            let transpose = model.transpose * s.b.crd.len() as u64;
            (masked_form == MaskedForm::Dot || saved > transpose).then_some(d)
        }
        _ => None,
    };
    let mut costs = [0u64; 2];
    if let Some(d) = &dot_costs {
        for (i, &di) in d.iter().enumerate() {
            costs[0] = costs[0].saturating_add(g_cost(i));
            costs[1] = costs[1].saturating_add(di);
        }
    }
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
            // Ties go to the dot form: a row of an empty mask costs it nothing.
            Some(d) if masked_form == MaskedForm::Dot || d[i] <= g => (Form::Dot, d[i]),
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
        costs,
        forms,
        chunks,
        rows_by_form,
    }
}

/// A list's length and its first and last coordinate (`len` 0: empty).
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    len: u64,
    first: u64,
    last: u64,
}

/// The merge steps of intersecting `a` with `b` after the dot form cuts both to their
/// shared coordinate range, each list's share of the range estimated as if its entries were
/// spread evenly between its first and last coordinate.
fn cut_cost(a: Span, b: Span) -> u64 {
    if a.len == 0 || b.len == 0 {
        return 0;
    }
    let (from, to) = (a.first.max(b.first), a.last.min(b.last));
    if from > to {
        return 0;
    }
    let share = |l: Span| {
        let span = l.last - l.first + 1;
        // ceil(len * (to - from + 1) / span), at most len.
        let x = u128::from(l.len) * u128::from(to - from + 1);
        (x.div_ceil(u128::from(span)) as u64).min(l.len)
    };
    dot::cost(share(a), share(b))
}

/// Each column of `b` (given by rows) as a [`Span`] of its row coordinates.
fn columns<C: Coord>(b: &Rows<'_, C, ()>, cols: usize) -> Vec<Span> {
    let mut spans = vec![Span::default(); cols];
    for i in 0..b.pos.len().saturating_sub(1) {
        for &j in b.row(i).0 {
            if let Some(c) = spans.get_mut(j.to_u64() as usize) {
                if c.len == 0 {
                    c.first = i as u64;
                }
                c.last = i as u64;
                c.len += 1;
            }
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(len: u64, first: u64, last: u64) -> Span {
        Span { len, first, last }
    }

    #[test]
    fn the_cut_cost_counts_only_the_shared_range() {
        // Disjoint ranges: nothing to merge.
        assert_eq!(cut_cost(span(10, 0, 9), span(10, 10, 19)), 0);
        assert_eq!(cut_cost(span(0, 0, 0), span(10, 0, 9)), 0);
        // The same range: the whole lists.
        assert_eq!(cut_cost(span(10, 0, 9), span(10, 0, 9)), 20);
        // Half of each: 5 + 5 steps.
        assert_eq!(cut_cost(span(10, 0, 19), span(10, 10, 29)), 10);
        // A short list against a long one is searched (the gallop's cost).
        assert_eq!(
            cut_cost(span(2, 0, 999), span(1000, 0, 999)),
            dot::cost(2, 1000)
        );
    }
}

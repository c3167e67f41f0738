//! The symbolic pass: what each row of C costs, and which form computes it.
//!
//! 1. Flops per row: `flops_i = sum over k in A_i of nnz(B_k)`, the products Gustavson's
//!    form makes for row `i` (in parallel over ranges of rows balanced by nnz(A)).
//! 2. For a structural mask, a per-row cost model ([`Model`], fitted on this CPU) weighs
//!    the two forms: Gustavson's `2 flops_i + 22 nnz(M_i)` against the dot form's
//!    `sum over j in M_i of (40 + 20 searches + 6 steps(A_i, B_j))`, where `searches` are
//!    the binary searches' steps over both lists and `steps` is [`dot::cost`] of the two
//!    lists cut to their shared coordinate range, each list's share of the range
//!    estimated from its length and first and last coordinate (B's columns' from one pass
//!    over its coordinates). A row takes the dot form where it is modelled [`MARGIN`]
//!    times cheaper (a row of an empty mask: always); where those rows save more than
//!    the dot form's setup (B transposed by columns, the spans, the estimate: 40 a B
//!    entry), B is transposed, else every row stays Gustavson's. Where even a lower
//!    bound on the dot form's cost cannot save that much, neither the column spans nor
//!    the per-row estimate are computed.
//! 3. Every other row takes the dense accumulator where its slots stay in cache: C has
//!    at most [`DENSE_COLS`] columns, or the row's products span at most [`DENSE_SPAN`]
//!    columns (first to last, from B's rows' first and last coordinates), or its bound
//!    on distinct columns is large against C's column count (`bound * HASH_SHARE >=
//!    cols`); the hash accumulator otherwise.
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
/// the hash accumulator unless the dense one's slots are known to stay in cache
/// ([`DENSE_COLS`], [`DENSE_SPAN`]) (measured: docs/PERFORMANCE.md, "SpGEMM").
pub(crate) const HASH_SHARE: u64 = 16;

/// The bytes a column of the dense accumulator takes at most (a 4-byte mark, a value of
/// up to 8 bytes).
const DENSE_SLOT: u64 = 12;

/// Up to this many columns of C every row takes the dense accumulator: a thread's marks
/// and values (4 MiB) stay in its share of L3. Measured on R-MAT 16 `A A^T` (65,536
/// columns): fill 786-859 ms dense against 932-959 ms with the hash rows; the triangle
/// count (262,144 columns, the mask's bitmap in front): 1.24 s against 1.78 s.
const DENSE_COLS: u64 = (4 << 20) / DENSE_SLOT;

/// A row whose products' columns all lie within this many columns takes the dense
/// accumulator: the slots it touches lie in one window that fits L2 (1 MiB), and the next
/// rows' windows overlap on banded and FEM matrices. FEM 100^3 `A A` (1M columns, every
/// row spanning about 40,000): fill 149-170 ms dense against 176-238 ms hash.
const DENSE_SPAN: u64 = (1 << 20) / DENSE_SLOT;

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

/// The cost model of a masked product's two forms, in nanoseconds a thread (measured:
/// docs/PERFORMANCE.md, "SpGEMM").
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
    /// An entry of B, for the dot form's setup: B transposed by columns, its columns'
    /// spans and the per-row estimate (measured together: 70-80 ms of the triangle
    /// count's 3.80M entries, on 2 threads).
    pub transpose: u64,
    /// A step of the binary searches that cut both lists to their shared range, two on
    /// each list (cache misses on long lists).
    pub search: u64,
}

/// The dot form takes a row only where its modelled cost is this many times below
/// Gustavson's: on the triangle count, a margin of 1 put 173k rows in the dot form and
/// filled in 1.47 s, a margin of 4 put 113k there and filled in 1.24 s (Gustavson's
/// form alone: 1.28-1.33 s).
const MARGIN: u64 = 4;

/// The steps of a binary search over `len` entries.
fn bits(len: u64) -> u32 {
    64 - len.leading_zeros()
}

/// The costs fitted on this CPU (2 threads, nanoseconds a thread, quiet machine; see
/// docs/PERFORMANCE.md, "SpGEMM"), from each form run on every row of the triangle count
/// (R-MAT 18: 1.106e9 products, 3.80M mask entries, 1.447e9 estimated merge steps) and of
/// FEM masked by A (`C<A> = A A`, 100^3: 48.2M products, 6.94M mask entries, 84.8M steps).
/// Gustavson's form with the mask's bitmap ([`super::accumulate::Filter`]) costs about
/// 2 ns a product and 22 a mask entry (fill 1.20-1.33 s for the triangles, 108-128 ms for
/// FEM). The dot form's fill (3.03 s and 113 ms) does not fit one linear model of both
/// (its steps are overestimated on FEM), and on the triangle count the rows it was
/// modelled cheaper for filled no faster than by Gustavson's form; so its per-entry cost
/// carries the column lookup and the binary searches (cache misses on long lists), and a
/// row takes it only by a margin, and only where the rows it takes save more than its
/// setup (B by columns, the spans, the estimate: 40 an entry of B). With the dense
/// accumulator, the triangle count's 14,118 rows that the margin admitted filled no
/// faster (auto 1.11-1.21 s, 102 MB peak, against Gustavson's form alone 1.08-1.18 s,
/// 85-87 MB), so the setup's cost now keeps every row there in Gustavson's form. FEM's
/// rows all take Gustavson's form too (the dot form's lower bound rules it out before the
/// estimate). The dot form remains for masks far sparser than the products' reach (the
/// test `a_sparse_mask_takes_the_dot_form_and_counts_triangles`).
const MODEL: Model = Model {
    flop: 2,
    g_entry: 22,
    step: 6,
    d_entry: 40,
    transpose: 40,
    search: 20,
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
    // Each row's flops, and where C is too wide for the dense accumulator to stay in
    // cache anyway, the span of its product columns (first to last, over the rows of B
    // it reaches), in the same pass.
    let want_spans = accumulator == Accumulator::Auto && s.cols as u64 > DENSE_COLS;
    let per = per_row(s.rows, s.a.pos, threads, |i| {
        let (mut flops, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
        for &k in s.a.row(i).0 {
            let bk = s.b.row(k.to_u64() as usize).0;
            flops += bk.len() as u64;
            if let (true, Some(f), Some(l)) = (want_spans, bk.first(), bk.last()) {
                lo = lo.min(f.to_u64());
                hi = hi.max(l.to_u64());
            }
        }
        [flops, hi.saturating_sub(lo).saturating_add(1)]
    });
    let flops: Vec<u64> = per.iter().map(|x| x[0]).collect();
    let span = |i: usize| per.get(i).map_or(u64::MAX, |x| x[1]);
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
        Accumulator::Auto if cols <= DENSE_COLS || bound(i) * HASH_SHARE >= cols => Form::Dense,
        Accumulator::Auto if want_spans && span(i) <= DENSE_SPAN => Form::Dense,
        Accumulator::Auto => Form::Hash,
    };
    let model = MODEL;
    let g_cost =
        |i: usize| model.flop * flops.get(i).copied().unwrap_or(0) + model.g_entry * mask_len(i);
    // The most the dot form could save: every mask entry costs it at least `d_entry` and
    // the searches in A's row. Where that cannot pay for B's transpose, the column spans
    // and the per-row estimate (a pass over B and one over the mask) are skipped.
    let may_save = |m: &Rows<'_, C, ()>| -> u64 {
        (0..s.rows)
            .map(|i| {
                let floor = (model.d_entry + model.search * u64::from(bits(s.a.len(i)))) * m.len(i);
                // A row moves only by the margin.
                match floor.saturating_mul(MARGIN) <= g_cost(i) {
                    true => g_cost(i) - floor,
                    false => 0,
                }
            })
            .sum()
    };
    let transpose = model.transpose * s.b.crd.len() as u64;
    let dot_costs = match (&s.mask, s.mode, masked_form) {
        (Some(m), MaskMode::Keep, MaskedForm::Auto) if may_save(m) <= transpose => None,
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
                                Some(b) => {
                                    model.step * cut_cost(a, *b)
                                        + model.search * u64::from(bits(a.len) + bits(b.len))
                                }
                                None => 0,
                            })
                            .sum::<u64>()
                    }
                    _ => 0,
                };
                steps + model.d_entry * js.len() as u64
            });
            let saved: u64 = (0..s.rows)
                .map(|i| {
                    let di = d.get(i).copied().unwrap_or(u64::MAX);
                    if di.saturating_mul(MARGIN) <= g_cost(i) {
                        g_cost(i) - di
                    } else {
                        0
                    }
                })
                .sum();
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
            Some(d) if masked_form == MaskedForm::Dot || d[i].saturating_mul(MARGIN) <= g => {
                (Form::Dot, d[i])
            }
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

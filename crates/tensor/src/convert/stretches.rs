//! CSR and CSC out of core: the two-pass build of `parts.rs`, with the output written in
//! stretches of rows to an [`ArraySink`] (a `.spt` file being written) instead of held.
//!
//! 1. The count pass is `parts.rs`'s: each part's entries per row block.
//! 2. Row blocks are grouped, in order, into stretches whose scratch (the entries in work
//!    form and their rows inside blocks, 14 bytes or so an entry, and 16 bytes a row) fits
//!    the memory left for it.
//! 3. For each stretch, a fill pass parses the parts that hold entries of its rows (all of
//!    them for an input in random order; about one stretch's share for an input in row
//!    order), keeps those entries in their slots, finishes the stretch's blocks as
//!    `parts.rs` does (row order, each row sorted with duplicates summed) and appends the
//!    stretch's positions, coordinates and values to the sink, which writes them behind.
//!
//! Inside a row the entries keep input order and every row is finished by the same code
//! as in memory, so the arrays equal [`crate::convert_parts`]'s, byte for byte. The
//! counted entries bound the output; duplicates summed and zeros dropped only shorten it
//! (the sink learns the final lengths from what it was given).

use std::time::Instant;

use sptk_encoding::Encoding;

use crate::budget::{Budget, Need};
use crate::convert::parts::{
    count_pass, source_error, Block, CsrRoute, EntryParts, RawOf, RowBlocks, Scratch, SharedOut,
    BATCH,
};
use crate::convert::scatter::{big_zeroed, work_width};
use crate::convert::ConvertOptions;
use crate::entries::SourceError;
use crate::error::ConvertError;
use crate::index::{Index, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::{Arith, Raw};
use crate::value::{Value, ValueType};

/// What one array of an out-of-core output holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    /// Positions or coordinates of this width.
    Index(IndexWidth),
    /// Values of this type.
    Values(ValueType),
}

/// One array of an out-of-core output: its storage name (`pos[1]`, `crd[1]`, `values`),
/// what it holds, and at most how many elements it will get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedArray {
    /// The array's name, as [`crate::Tensor::index_arrays`] and `.spt` name it.
    pub name: String,
    /// Its element type.
    pub kind: ArrayKind,
    /// The most elements it can get (the entries counted before duplicates are summed).
    pub bound: u64,
}

/// The output an out-of-core conversion is about to write: what a `.spt` header needs
/// before the data, with bounds where the lengths are not known yet.
#[derive(Clone, Debug)]
pub struct OutputPlan {
    /// The encoding, with the widths chosen.
    pub encoding: Encoding,
    /// Dimension sizes.
    pub dim_sizes: Vec<u64>,
    /// The value type.
    pub value_type: ValueType,
    /// The tensor's arrays in storage order.
    pub arrays: Vec<PlannedArray>,
}

/// Where an out-of-core conversion puts its output: the arrays of [`OutputPlan`], each
/// appended to in order, a stretch at a time.
pub trait ArraySink {
    /// What the sink's own failures are (a disk that filled, say).
    type Error;
    /// Called once, before any array data.
    fn begin(&mut self, plan: &OutputPlan) -> Result<(), Self::Error>;
    /// Appends little-endian elements (whole elements) to array `array` of the plan.
    fn append(&mut self, array: usize, bytes: &[u8]) -> Result<(), Self::Error>;
}

/// Why an out-of-core conversion stopped: the conversion's error or the sink's.
#[derive(Debug)]
pub enum OutOfCoreError<E> {
    /// The input or the conversion failed.
    Convert(ConvertError),
    /// The sink failed.
    Sink(E),
}

/// Why a reader's out-of-core conversion stopped: the reader's own error (a malformed
/// input, or the conversion's error located in it), or the sink's.
#[derive(Debug)]
pub enum OutOfCoreFailure<R, W> {
    /// The input is malformed, cannot be read, or does not convert.
    Read(R),
    /// The sink failed (a full disk).
    Write(W),
}

impl<E> From<ConvertError> for OutOfCoreError<E> {
    fn from(e: ConvertError) -> Self {
        OutOfCoreError::Convert(e)
    }
}

/// What an out-of-core conversion wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfCore {
    /// The encoding written, with the widths chosen.
    pub encoding: Encoding,
    /// The value type written.
    pub value_type: ValueType,
    /// Stored values (the length of `crd[1]` and `values`).
    pub nse: u64,
    /// Entries the count pass found (the bound the output was planned with).
    pub counted: u64,
    /// Fill passes made over the input (one per stretch of rows).
    pub passes: usize,
    /// Entries each fill pass could hold.
    pub stretch_entries: u64,
    /// Parts of the input read by the fill passes in all (each pass reads only the parts
    /// that hold entries of its rows: about one pass's share of them for an input in row
    /// order, every part in every pass for one in random order).
    pub parts_read: u64,
    /// The parts of the input.
    pub parts: u64,
    /// Where the time went.
    pub times: PassTimes,
}

/// Where an out-of-core conversion's time went, summed over its passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassTimes {
    /// The count pass over the whole input.
    pub count: std::time::Duration,
    /// The fill passes reading the input and placing each entry in its stretch.
    pub fill: std::time::Duration,
    /// Sorting each row, summing duplicates, dropping zeros, compacting.
    pub finish: std::time::Duration,
    /// Handing the finished stretches to the sink (narrowing, writing).
    pub write: std::time::Duration,
}

/// Converts `source` into `encoding` if it is CSR-like and `opts` asks for nothing but
/// dropping zeros, a memory limit and chosen widths (as [`crate::convert_parts`]), writing
/// the arrays to `sink` in stretches instead of holding them: the memory it holds is the
/// count pass's counters and one stretch's scratch, which it fits into
/// [`ConvertOptions::memory_limit`] (or into `stretch_bytes` where given: a knob for
/// tests that want many passes over small data). `Ok(None)`: the route does not apply,
/// and nothing was given to the sink.
///
/// # Errors
/// The source's and the conversion's errors, the sink's, and a memory limit too small for
/// the counters or for the largest block of rows.
pub fn convert_parts_out_of_core<P: EntryParts, S: ArraySink>(
    source: &P,
    encoding: &Encoding,
    opts: &ConvertOptions,
    stretch_bytes: Option<u64>,
    sink: &mut S,
) -> Result<Option<OutOfCore>, OutOfCoreError<S::Error>> {
    let dims = source.dim_sizes();
    let Some(route) = CsrRoute::of(encoding, dims, source.len_hint(), P::Value::TYPE, opts)? else {
        return Ok(None);
    };
    let CsrRoute {
        ref encoding,
        ref layout,
        outer,
        inner,
    } = route;
    let job = Job {
        source,
        encoding,
        layout,
        outer,
        drop_zeros: opts.drop_zeros,
        budget: Budget::new(opts.memory_limit),
        stretch_bytes,
    };
    let ar = Arith::of::<P::Value>();
    let done = match work_width(dims[inner], layout.crd_width) {
        IndexWidth::W8 => job.run::<u8, S>(&ar, sink)?,
        IndexWidth::W16 => job.run::<u16, S>(&ar, sink)?,
        IndexWidth::W32 => job.run::<u32, S>(&ar, sink)?,
        _ => job.run::<u64, S>(&ar, sink)?,
    };
    Ok(Some(done))
}

/// Scratch bytes per entry of a stretch beyond its coordinate and value: its row inside
/// the block (2), and the block sort's copies of the coordinate and value (counted with
/// them, below).
pub(crate) const LOCAL_BYTES: u64 = 2;
/// Scratch bytes per row of a stretch: its start, its kept length and its position.
pub(crate) const ROW_BYTES: u64 = 24;

/// The count pass's counters: entries per row block and part.
pub(crate) fn counters_need(parts: usize, blocks: usize) -> Need {
    Need::new(
        "scratch: entries per row block and part",
        (parts as u128) * (blocks as u128),
        32 * 3,
    )
}

/// The scratch of a fill pass: `widest` entries of `bits` (coordinate, value) and their
/// rows inside blocks, `widest_rows` rows, and the block sort's copies (`sort` bytes).
pub(crate) fn stretch_needs(
    (widest, widest_rows): (u64, u64),
    (crd_bits, value_bits): (u32, u32),
    sort: u64,
) -> Vec<Need> {
    vec![
        Need::new("scratch: one stretch's coordinates", widest, crd_bits),
        Need::new("scratch: one stretch's values", widest, value_bits),
        Need::new("scratch: one stretch's rows inside blocks", widest, 16),
        Need::new(
            "scratch: one stretch's row starts, lengths and positions",
            widest_rows,
            192,
        ),
        Need::new("scratch: a block's sorted copy", u128::from(sort), 8),
    ]
}

/// The block sort's copies (`parts.rs`'s `Block::finish` reorders a block through a copy
/// of its coordinates and values, `per_entry` bytes an entry), one per worker, for the
/// largest block, of `largest` entries.
pub(crate) fn sort_copies(largest: u64, per_entry: u64) -> u64 {
    largest
        .saturating_mul(per_entry)
        .saturating_mul(par::threads() as u64)
}

struct Job<'a, P> {
    source: &'a P,
    encoding: &'a Encoding,
    layout: &'a Layout,
    outer: usize,
    drop_zeros: bool,
    budget: Budget,
    stretch_bytes: Option<u64>,
}

impl<P: EntryParts> Job<'_, P> {
    fn run<C: Index, S: ArraySink>(
        &self,
        ar: &Arith<RawOf<P>>,
        sink: &mut S,
    ) -> Result<OutOfCore, OutOfCoreError<S::Error>> {
        let source = self.source;
        let outer = self.outer;
        let dims = source.dim_sizes();
        let RowBlocks {
            rows,
            shift,
            blocks,
        } = RowBlocks::of(dims[outer], source.len_hint())?;
        let inner_size = dims[1 - outer];
        let parts = source.part_count();
        self.budget.charge(&[counters_need(parts, blocks)])?;

        // The count pass.
        let mut times = PassTimes::default();
        let clock = Instant::now();
        let counts = count_pass(source, outer, shift, blocks)?;
        let per_block: Vec<u64> = (0..blocks)
            .map(|b| counts.iter().map(|c| u64::from(c[b])).sum())
            .collect();
        let counted: u64 = per_block.iter().sum();
        times.count = clock.elapsed();

        // Stretches of blocks, each within what is left of the budget.
        let per_entry = (std::mem::size_of::<C>() + std::mem::size_of::<RawOf<P>>()) as u64;
        let entry_bytes = per_entry + LOCAL_BYTES;
        let rows_in = |b: usize| (rows - (b << shift)).min(1 << shift) as u64;
        let cost = |b: usize| per_block[b] * entry_bytes + rows_in(b) * ROW_BYTES;
        let largest = per_block.iter().copied().max().unwrap_or(0);
        let room = match self.stretch_bytes {
            Some(s) => s,
            None => self
                .budget
                .left()
                .saturating_sub(sort_copies(largest, per_entry)),
        };
        let stretches = cut_stretches(blocks, room, cost);
        let widest = stretches
            .iter()
            .map(|r| r.clone().map(per_block_of(&per_block)).sum::<u64>())
            .max()
            .unwrap_or(0);
        let widest_rows = stretches
            .iter()
            .map(|r| r.clone().map(rows_in).sum::<u64>())
            .max()
            .unwrap_or(0);
        self.budget.charge(&stretch_needs(
            (widest, widest_rows),
            (C::WIDTH.bits(), ar.bits()),
            sort_copies(largest, per_entry),
        ))?;

        let vt = ar.ty;
        let plan = OutputPlan {
            encoding: self.encoding.clone(),
            dim_sizes: dims.to_vec(),
            value_type: vt,
            arrays: vec![
                PlannedArray {
                    name: "pos[1]".into(),
                    kind: ArrayKind::Index(self.layout.pos_width),
                    bound: rows as u64 + 1,
                },
                PlannedArray {
                    name: "crd[1]".into(),
                    kind: ArrayKind::Index(self.layout.crd_width),
                    bound: counted,
                },
                PlannedArray {
                    name: "values".into(),
                    kind: ArrayKind::Values(vt),
                    bound: counted,
                },
            ],
        };
        sink.begin(&plan).map_err(OutOfCoreError::Sink)?;

        let widest = usize::try_from(widest)
            .map_err(|_| ConvertError::TooLarge("too many entries".into()))?;
        let mut crd = big_zeroed::<C>(widest)?;
        let mut val = big_zeroed::<RawOf<P>>(widest)?;
        let mut local = big_zeroed::<u16>(widest)?;
        let mut parts_read = 0u64;
        let mut out = Emitter::new(self.layout);
        out.position(0)?;
        for range in &stretches {
            let first_block = range.start;
            let nrows = range.clone().map(rows_in).sum::<u64>() as usize;
            let size = range.clone().map(per_block_of(&per_block)).sum::<u64>() as usize;
            // Slots of every part in every block of the stretch, relative to its start.
            let mut slots: Vec<Vec<[usize; 2]>> = vec![vec![[0; 2]; range.len()]; parts];
            let mut block_start = Vec::with_capacity(range.len() + 1);
            let mut total = 0usize;
            for b in range.clone() {
                block_start.push(total);
                for (p, s) in slots.iter_mut().enumerate() {
                    let first = total;
                    total += counts[p][b] as usize;
                    s[b - first_block] = [first, total];
                }
            }
            block_start.push(total);
            let wanted: Vec<bool> = (0..parts)
                .map(|p| range.clone().any(|b| counts[p][b] > 0))
                .collect();
            parts_read += wanted.iter().filter(|&&w| w).count() as u64;
            let clock = Instant::now();
            let shared = SharedOut::new(&mut crd[..size], &mut val[..size], &mut local[..size]);
            let shared = &shared;
            let tasks: Vec<_> = slots
                .iter_mut()
                .enumerate()
                .filter(|(p, _)| wanted[*p])
                .collect();
            par::try_for_each_item(tasks, |(p, slots)| {
                self.fill(p, slots, first_block, (shift, inner_size), shared)
            })
            .map_err(source_error)?;
            drop(slots);
            times.fill += clock.elapsed();
            let clock = Instant::now();

            let mut starts = vec![0usize; nrows];
            let mut kept = vec![0usize; nrows];
            {
                let mut tasks = Vec::with_capacity(range.len());
                let (mut c_rest, mut v_rest, mut l_rest) =
                    (&mut crd[..size], &mut val[..size], &local[..size]);
                let (mut s_rest, mut n_rest) = (&mut starts[..], &mut kept[..]);
                for (i, b) in range.clone().enumerate() {
                    let len = block_start[i + 1] - block_start[i];
                    let nr = rows_in(b) as usize;
                    let (c, ct) = c_rest.split_at_mut(len);
                    let (v, vt) = v_rest.split_at_mut(len);
                    let (l, lt) = l_rest.split_at(len);
                    let (s, st) = s_rest.split_at_mut(nr);
                    let (n, nt) = n_rest.split_at_mut(nr);
                    tasks.push(Block {
                        first_row: b << shift,
                        base: block_start[i],
                        crd: c,
                        val: v,
                        local: l,
                        starts: s,
                        kept: n,
                    });
                    (c_rest, v_rest, l_rest, s_rest, n_rest) = (ct, vt, lt, st, nt);
                }
                par::try_for_each_item_with(
                    tasks,
                    || -> Scratch<C, RawOf<P>> { (Vec::new(), Vec::new(), Vec::new(), Vec::new()) },
                    |scratch, block| block.finish(outer, (self.drop_zeros, ar), scratch),
                )?;
            }
            // Rows compacted in place, in order, then appended.
            let mut w = 0usize;
            for (&a, &k) in starts.iter().zip(&kept) {
                if a != w {
                    crd.copy_within(a..a + k, w);
                    val.copy_within(a..a + k, w);
                }
                w += k;
                out.position(out.written + w as u64)?;
            }
            times.finish += clock.elapsed();
            let clock = Instant::now();
            out.stretch(&crd[..w], &val[..w], sink)?;
            times.write += clock.elapsed();
        }
        let clock = Instant::now();
        out.flush_positions(sink)?;
        times.write += clock.elapsed();
        Ok(OutOfCore {
            encoding: self.encoding.clone(),
            value_type: vt,
            nse: out.written,
            counted,
            passes: stretches.len(),
            stretch_entries: widest as u64,
            parts_read,
            parts: parts as u64,
            times,
        })
    }

    /// The fill pass of one part: its entries in the stretch that starts at block
    /// `first_block` go to their slots; the others are skipped (their own stretch's pass
    /// checks them).
    fn fill<C: Index>(
        &self,
        part: usize,
        slots: &mut [[usize; 2]],
        first_block: usize,
        (shift, inner_size): (u32, u64),
        out: &SharedOut<C, RawOf<P>>,
    ) -> Result<(), SourceError> {
        let outer = self.outer;
        let mut batch: Vec<(u64, u64, RawOf<P>)> = Vec::with_capacity(BATCH);
        let mut ok = true;
        let (lo, hi) = (first_block as u64, (first_block + slots.len()) as u64);
        self.source.visit(part, |i, j, v| {
            let (o, n) = if outer == 0 { (i, j) } else { (j, i) };
            if (o >> shift) < lo || (o >> shift) >= hi {
                return true;
            }
            batch.push((o, n, v.to_raw()));
            if batch.len() == BATCH {
                ok = append_stretch(&batch, slots, (shift, lo, inner_size), out);
                batch.clear();
            }
            ok
        })?;
        ok = ok && append_stretch(&batch, slots, (shift, lo, inner_size), out);
        if !ok || slots.iter().any(|[next, end]| next != end) {
            return Err(SourceError::from("the input changed between the passes"));
        }
        Ok(())
    }
}

/// The entries counted in a block.
fn per_block_of(per_block: &[u64]) -> impl Fn(usize) -> u64 + '_ {
    move |b| per_block[b]
}

/// Blocks `0..blocks` cut, in order, into runs whose `cost` adds up to at most `room`
/// (a block costlier than `room` alone is a run of its own).
fn cut_stretches(
    blocks: usize,
    room: u64,
    cost: impl Fn(usize) -> u64,
) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let (mut start, mut used) = (0usize, 0u64);
    for b in 0..blocks {
        let c = cost(b);
        if b > start && used.saturating_add(c) > room {
            runs.push(start..b);
            (start, used) = (b, 0);
        }
        used = used.saturating_add(c);
    }
    if blocks > start || runs.is_empty() {
        runs.push(start..blocks);
    }
    runs
}

/// Appends `(outer, inner, value)` entries of the stretch whose first block is `lo` to
/// their part's next slots; `false` if one has no slot left or a coordinate is out of
/// range.
fn append_stretch<C: Index, V: Raw>(
    batch: &[(u64, u64, V)],
    slots: &mut [[usize; 2]],
    (shift, lo, inner_size): (u32, u64, u64),
    out: &SharedOut<C, V>,
) -> bool {
    let mask = (1u64 << shift) - 1;
    for &(o, n, v) in batch {
        let Some([next, end]) = slots.get_mut(((o >> shift) - lo) as usize) else {
            return false;
        };
        if *next >= *end || n >= inner_size {
            return false;
        }
        // SAFETY: `next < end`, and `[first, end)` of this part and block was assigned by
        // the prefix sums over the stretch in `Job::run`: the ranges are disjoint across
        // parts and blocks and lie below the stretch's size, the length of the three
        // arrays shared; `next` only moves up from `first`. So no two tasks write the same
        // element and every write is in bounds.
        unsafe { out.write(*next, C::from_u64_unchecked(n), v, (o & mask) as u16) };
        *next += 1;
    }
    true
}

/// The error of a position or coordinate that does not fit its width.
fn overflow(array: &str, value: u64, field: &'static str, w: IndexWidth) -> ConvertError {
    ConvertError::Width {
        array: array.into(),
        value,
        field,
        bits: w.bits(),
    }
}

/// Positions, coordinates and values on their way to the sink, narrowed to the layout's
/// widths through a small buffer.
struct Emitter {
    pos_width: IndexWidth,
    crd_width: IndexWidth,
    /// Positions not yet appended.
    pos: Vec<u8>,
    bytes: Vec<u8>,
    /// Coordinates and values appended so far.
    written: u64,
}

/// Bytes gathered before an append.
const EMIT: usize = 1 << 20;

impl Emitter {
    fn new(layout: &Layout) -> Emitter {
        Emitter {
            pos_width: layout.pos_width,
            crd_width: layout.crd_width,
            pos: Vec::with_capacity(EMIT),
            bytes: Vec::with_capacity(EMIT),
            written: 0,
        }
    }

    /// Adds one position (appended by [`Emitter::stretch`] or [`Emitter::flush_positions`]).
    fn position(&mut self, p: u64) -> Result<(), ConvertError> {
        if p > self.pos_width.max() {
            return Err(overflow("pos[1]", p, "posWidth", self.pos_width));
        }
        put_le(&mut self.pos, p, self.pos_width);
        Ok(())
    }

    fn flush_positions<S: ArraySink>(
        &mut self,
        sink: &mut S,
    ) -> Result<(), OutOfCoreError<S::Error>> {
        if !self.pos.is_empty() {
            sink.append(0, &self.pos).map_err(OutOfCoreError::Sink)?;
            self.pos.clear();
        }
        Ok(())
    }

    /// Appends a stretch: its positions so far, its coordinates (narrowed) and values.
    fn stretch<C: Index, V: Raw, S: ArraySink>(
        &mut self,
        crd: &[C],
        val: &[V],
        sink: &mut S,
    ) -> Result<(), OutOfCoreError<S::Error>> {
        self.flush_positions(sink)?;
        if C::WIDTH == self.crd_width {
            sink.append(1, crate::buffer::pod_bytes(crd))
                .map_err(OutOfCoreError::Sink)?;
        } else {
            let max = self.crd_width.max();
            for piece in crd.chunks(EMIT / 8) {
                self.bytes.clear();
                for &c in piece {
                    let c = c.to_u64();
                    if c > max {
                        return Err(overflow("crd[1]", c, "crdWidth", self.crd_width).into());
                    }
                    put_le(&mut self.bytes, c, self.crd_width);
                }
                sink.append(1, &self.bytes).map_err(OutOfCoreError::Sink)?;
            }
        }
        sink.append(2, crate::buffer::pod_bytes(val))
            .map_err(OutOfCoreError::Sink)?;
        self.written += crd.len() as u64;
        Ok(())
    }
}

/// `x` little-endian in `w`'s bytes (`x` fits).
fn put_le(out: &mut Vec<u8>, x: u64, w: IndexWidth) {
    let n = match w {
        IndexWidth::W8 => 1,
        IndexWidth::W16 => 2,
        IndexWidth::W32 => 4,
        _ => 8,
    };
    out.extend_from_slice(&x.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::cut_stretches;

    #[test]
    fn stretches_cover_every_block_in_order() {
        let cost = |b: usize| [5u64, 5, 20, 1, 1, 1][b];
        assert_eq!(cut_stretches(6, 10, cost), vec![0..2, 2..3, 3..6]);
        assert_eq!(cut_stretches(6, 1000, cost), vec![0..6]);
        assert_eq!(cut_stretches(0, 10, cost), vec![0..0]);
        assert_eq!(cut_stretches(3, 0, cost), vec![0..1, 1..2, 2..3]);
    }
}

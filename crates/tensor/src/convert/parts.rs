//! CSR and CSC straight from a re-readable source, with no coordinate list in between.
//!
//! A text reader that can read its input twice (a memory-mapped file) cuts it into a few
//! ordered parts. Rows are grouped into blocks of `2^shift` consecutive rows.
//!
//! 1. The first pass counts each part's entries per row block (a few thousand counters:
//!    they stay in cache). Prefix sums over (block, part) give every part its own slots in
//!    every block's stretch of the output.
//! 2. The second pass parses the parts in parallel and appends each entry to its block's
//!    stretch, with its row inside the block in a 16-bit side array. The writes go to a
//!    few thousand moving fronts, not to random places.
//! 3. Each block is then put in row order by a stable counting sort in a cache-sized
//!    scratch buffer, which also gives the row starts, and rows are finished (sorted by
//!    coordinate, duplicates summed, compacted) as in the in-memory path.
//!
//! Inside a row the entries stand in input order whatever the number of parts, so the
//! result equals [`crate::convert`] on the collected entries, byte for byte. The nonzeros
//! exist once, in the output, plus two bytes per entry for the rows inside blocks.

use sptk_encoding::{Encoding, Target};

use crate::budget::{self, Budget, Need};
use crate::convert::scatter::{
    big_zeroed, compact_rows, csr_like, scatter_outputs, sum_row, work_width,
};
use crate::convert::ConvertOptions;
use crate::entries::SourceError;
use crate::error::ConvertError;
use crate::index::{Index, IndexWidth};
use crate::layout::Layout;
use crate::par;
use crate::raw::{Arith, Raw};
use crate::tensor::Tensor;
use crate::value::{Value, ValueType, ValueVecAccess};

/// A matrix's entries in a fixed number of ordered parts, each readable any number of
/// times and from any thread. Part `p`'s entries come before part `p + 1`'s.
///
/// Both passes must see the same entries. A source that does not (a file changed between
/// the passes) makes the build fail with an error; it cannot make it write out of place.
pub trait EntryParts: Sync {
    /// The value type.
    type Value: Value + ValueVecAccess;
    /// `[rows, columns]`.
    fn dim_sizes(&self) -> [u64; 2];
    /// Number of parts.
    fn part_count(&self) -> usize;
    /// Adds one (wrapping) to `counts[c >> shift]` for every entry of `part`, where `c` is
    /// the entry's coordinate in dimension `dim` (checked below the dimension size), and
    /// returns the number of entries counted. (The builder refuses a part whose counts do
    /// not add up to that number, so a wrapped count cannot go unnoticed.)
    fn count(
        &self,
        part: usize,
        dim: usize,
        shift: u32,
        counts: &mut [u32],
    ) -> Result<u64, SourceError>;
    /// About how many entries there are (for sizing only).
    fn len_hint(&self) -> u64;
    /// Calls `put(row, column, value)` for every entry of `part` in order; stops early,
    /// with an error, when `put` returns `false`.
    fn visit<F: FnMut(u64, u64, Self::Value) -> bool>(
        &self,
        part: usize,
        put: F,
    ) -> Result<(), SourceError>;
}

/// Converts `source` into `encoding` if it is CSR-like (`(a : dense, b : compressed)`,
/// unique and ordered) and `opts` asks for nothing but dropping zeros, a memory limit and
/// chosen widths; returns `Ok(None)` otherwise, which needs the general path over
/// collected entries. Duplicates are summed in input order and zeros dropped if asked,
/// exactly as [`crate::convert`] does.
///
/// The output and the scratch are counted against [`ConvertOptions::memory_limit`] before
/// anything large is allocated; [`ConvertOptions::auto_widths`] fits the widths to the
/// source's [`EntryParts::len_hint`], which must then bound the entries.
pub fn convert_parts<P: EntryParts>(
    source: &P,
    encoding: &Encoding,
    opts: &ConvertOptions,
) -> Result<Option<Tensor>, ConvertError> {
    let dims = source.dim_sizes();
    let Some(route) = CsrRoute::of(encoding, dims, source.len_hint(), P::Value::TYPE, opts)? else {
        return Ok(None);
    };
    let CsrRoute {
        ref encoding,
        layout,
        outer,
        inner,
    } = route;
    let drop_zeros = opts.drop_zeros;
    let budget = Budget::new(opts.memory_limit);
    let nnz = source.len_hint();
    budget.charge(&in_memory_needs(
        &layout,
        &dims,
        (outer, inner),
        nnz,
        P::Value::TYPE,
    ))?;
    let ar = Arith::of::<P::Value>();
    let (levels, values) = match work_width(dims[inner], layout.crd_width) {
        IndexWidth::W8 => build::<P, u8>(source, outer, &layout, (drop_zeros, &ar))?,
        IndexWidth::W16 => build::<P, u16>(source, outer, &layout, (drop_zeros, &ar))?,
        IndexWidth::W32 => build::<P, u32>(source, outer, &layout, (drop_zeros, &ar))?,
        _ => build::<P, u64>(source, outer, &layout, (drop_zeros, &ar))?,
    };
    Ok(Some(Tensor {
        encoding: encoding.clone(),
        layout,
        levels,
        values: ar.wrap(values),
        slices: Vec::new(),
        labels: Vec::new(),
    }))
}

/// A CSR-like target as the routes of this file and `stretches.rs` (and the planner of
/// `sizing.rs`) take it: the encoding with its widths fitted to the shape and the entries,
/// its layout, and which dimension is outer and which inner.
pub(crate) struct CsrRoute {
    pub encoding: Encoding,
    pub layout: Layout,
    pub outer: usize,
    pub inner: usize,
}

impl CsrRoute {
    /// The route into `encoding` of shape `dims` for about `entries` entries of
    /// `value_type`, where it is CSR-like and `opts` asks for nothing but dropping zeros, a
    /// memory limit and chosen widths; `None` otherwise (the general path's work).
    pub(crate) fn of(
        encoding: &Encoding,
        dims: [u64; 2],
        entries: u64,
        value_type: ValueType,
        opts: &ConvertOptions,
    ) -> Result<Option<CsrRoute>, ConvertError> {
        let plain = !opts.keep_duplicates
            && opts.slice_values.is_empty()
            && opts.dtype.is_none_or(|t| t == value_type)
            && !encoding.has_slices();
        if !plain {
            return Ok(None);
        }
        let fitted = crate::fit_widths(
            &Target::Fixed(encoding.clone()),
            &dims,
            entries,
            opts.auto_widths,
        )?;
        let encoding = fitted.encoding().unwrap_or(encoding).clone();
        let layout = Layout::new(&encoding, &dims)?;
        let Some((outer, inner)) = csr_like(&encoding, &layout) else {
            return Ok(None);
        };
        Ok(Some(CsrRoute {
            encoding,
            layout,
            outer,
            inner,
        }))
    }
}

/// What [`convert_parts`] holds for `nnz` entries of `value_type` into `layout` (of the
/// CSR-like `dims` with levels `(outer, inner)`): the output, the counting sort's scratch,
/// each entry's row inside its block.
pub(crate) fn in_memory_needs(
    layout: &Layout,
    dims: &[u64; 2],
    (outer, inner): (usize, usize),
    nnz: u64,
    value_type: ValueType,
) -> Vec<Need> {
    let vbits = value_type.size() as u32 * 8;
    let work = work_width(dims[inner], layout.crd_width);
    let mut needs = budget::layout_needs(layout, nnz, vbits);
    needs.extend(budget::counting_sort_needs(
        dims[outer],
        nnz,
        work,
        layout,
        vbits,
    ));
    needs.push(Need::new("scratch: rows inside blocks", nnz, 16));
    needs
}

type Built<V> = (Vec<crate::tensor::LevelArrays>, Vec<V>);

/// The rows of the outer dimension grouped into blocks of `1 << shift` rows (the unit the
/// count pass counts in).
pub(crate) struct RowBlocks {
    pub rows: usize,
    pub shift: u32,
    pub blocks: usize,
}

impl RowBlocks {
    /// The blocks of `rows` rows holding about `entries` entries.
    ///
    /// # Errors
    /// More rows than a `usize` holds with one to spare (the positions' length).
    pub(crate) fn of(rows: u64, entries: u64) -> Result<RowBlocks, ConvertError> {
        let rows = usize::try_from(rows)
            .ok()
            .filter(|r| r.checked_add(1).is_some())
            .ok_or_else(|| ConvertError::TooLarge("too many rows".into()))?;
        let shift = block_shift(rows as u64, entries);
        Ok(RowBlocks {
            rows,
            shift,
            blocks: rows.div_ceil(1 << shift),
        })
    }
}

/// The count pass: for every part of `source`, its entries in each of `blocks` blocks of
/// `1 << shift` rows of dimension `outer`.
pub(crate) fn count_pass<P: EntryParts>(
    source: &P,
    outer: usize,
    shift: u32,
    blocks: usize,
) -> Result<Vec<Vec<u32>>, ConvertError> {
    let mut counts: Vec<Vec<u32>> = (0..source.part_count())
        .map(|_| vec![0u32; blocks])
        .collect();
    par::try_for_each_item(counts.iter_mut().enumerate().collect(), |(p, c)| {
        let n = source.count(p, outer, shift, c)?;
        if c.iter().map(|&x| x as u64).sum::<u64>() != n {
            return Err(SourceError::from("a part's counts do not add up"));
        }
        Ok(())
    })
    .map_err(source_error)?;
    Ok(counts)
}

pub(crate) fn source_error(e: SourceError) -> ConvertError {
    ConvertError::Invalid(format!("reading the input: {e}"))
}

/// The raw form of a source's values.
pub(crate) type RawOf<P> = <<P as EntryParts>::Value as Value>::Raw;

fn build<P: EntryParts, C: Index>(
    source: &P,
    outer: usize,
    layout: &Layout,
    (drop_zeros, ar): (bool, &Arith<RawOf<P>>),
) -> Result<Built<RawOf<P>>, ConvertError> {
    let dims = source.dim_sizes();
    let RowBlocks {
        rows,
        shift,
        blocks,
    } = RowBlocks::of(dims[outer], source.len_hint())?;
    let inner_size = dims[1 - outer];
    let parts = source.part_count();

    // Pass 1: per part, entries per row block.
    let counts = count_pass(source, outer, shift, blocks)?;
    // Block starts, and each part's slots in each block: `slots[p][b] = [next, end]`.
    let mut block_start = vec![0usize; blocks + 1];
    let mut slots: Vec<Vec<[usize; 2]>> = vec![vec![[0usize; 2]; blocks]; parts];
    let mut total = 0usize;
    for b in 0..blocks {
        block_start[b] = total;
        for p in 0..parts {
            let first = total;
            total = total
                .checked_add(counts[p][b] as usize)
                .ok_or_else(|| ConvertError::TooLarge("too many entries".into()))?;
            slots[p][b] = [first, total];
        }
    }
    block_start[blocks] = total;
    drop(counts);

    // Pass 2: every part appends its entries to its slots, in batches: parsing fills a
    // small buffer, then a tight loop writes it out.
    let (mut crd, mut val) = scatter_outputs::<C, RawOf<P>>(total)?;
    let mut local = big_zeroed::<u16>(total)?;
    let out = SharedOut::new(&mut crd, &mut val, &mut local);
    let out = &out;
    par::try_for_each_item(slots.iter_mut().enumerate().collect(), |(p, slots)| {
        let mut batch: Vec<(u64, u64, RawOf<P>)> = Vec::with_capacity(BATCH);
        let mut ok = true;
        source.visit(p, |i, j, v| {
            let v = v.to_raw();
            batch.push(if outer == 0 { (i, j, v) } else { (j, i, v) });
            if batch.len() == BATCH {
                ok = append_batch(&batch, slots, shift, inner_size, out);
                batch.clear();
            }
            ok
        })?;
        ok = ok && append_batch(&batch, slots, shift, inner_size, out);
        // Every slot must be filled: the second pass saw exactly what the first
        // counted.
        if !ok || slots.iter().any(|[next, end]| next != end) {
            return Err(SourceError::from(
                "the input changed between the two passes",
            ));
        }
        Ok(())
    })
    .map_err(source_error)?;
    drop(slots);

    // Row order inside each block, the row starts, and each row sorted by coordinate with
    // duplicates summed while the block is in cache; `len[r]` is what row `r` keeps.
    let mut start: Vec<usize> = big_zeroed(rows + 1)?;
    start[rows] = total;
    let mut len: Vec<usize> = big_zeroed(rows)?;
    {
        let mut tasks = Vec::with_capacity(blocks);
        let (mut c_rest, mut v_rest, mut l_rest) = (&mut crd[..], &mut val[..], &local[..]);
        let (mut s_rest, mut n_rest) = (&mut start[..rows], &mut len[..]);
        for b in 0..blocks {
            let size = block_start[b + 1] - block_start[b];
            let nrows = (rows - (b << shift)).min(1 << shift);
            let (c, ct) = c_rest.split_at_mut(size);
            let (v, vt) = v_rest.split_at_mut(size);
            let (l, lt) = l_rest.split_at(size);
            let (s, st) = s_rest.split_at_mut(nrows);
            let (n, nt) = n_rest.split_at_mut(nrows);
            let block = Block {
                first_row: b << shift,
                base: block_start[b],
                crd: c,
                val: v,
                local: l,
                starts: s,
                kept: n,
            };
            tasks.push(block);
            (c_rest, v_rest, l_rest, s_rest, n_rest) = (ct, vt, lt, st, nt);
        }
        par::try_for_each_item_with(
            tasks,
            || (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            |scratch, block| block.finish(outer, (drop_zeros, ar), scratch),
        )?;
    }
    drop(local);
    compact_rows(&start, &len, crd, val, layout)
}

/// Entries parsed between two writes to the output.
pub(crate) const BATCH: usize = 512;

/// Outer coordinates (rows, or columns in a transpose) per block of the two-pass
/// scatters: a power of two (at most 2^16, so a coordinate inside a block fits 16 bits)
/// that gives about 32768 entries per block (a block's scratch, ~18 bytes an entry, stays
/// in a core's L2; measured best among 8k-64k), and at most 2048 blocks so the moving
/// fronts of the second pass stay in cache. On the 10M-entry CSR -> CSC transpose of the
/// peers script, 16k entries a block gave 0.10 s, 32k 0.09 s, 64k 0.10 s: larger blocks
/// mean fewer write fronts but a sort that leaves L2.
pub(crate) fn block_shift(rows: u64, entries: u64) -> u32 {
    let blocks = (entries / 32768).clamp(1, 2048);
    let per_block = rows.div_ceil(blocks).max(1);
    per_block.next_power_of_two().trailing_zeros().min(16)
}

/// Appends `(outer, inner, value)` entries to their part's next slots in their blocks;
/// `false` if one has no slot left or a coordinate is out of range.
#[inline(never)]
fn append_batch<C: Index, V: Raw>(
    batch: &[(u64, u64, V)],
    slots: &mut [[usize; 2]],
    shift: u32,
    inner_size: u64,
    out: &SharedOut<C, V>,
) -> bool {
    let mask = (1u64 << shift) - 1;
    for &(o, n, v) in batch {
        let Some([next, end]) = slots.get_mut((o >> shift) as usize) else {
            return false;
        };
        if *next >= *end || n >= inner_size {
            return false;
        }
        // SAFETY: `next < end`, and `[first, end)` of this part and block was assigned by
        // the prefix sums in `build`: the ranges are disjoint across parts and blocks and
        // lie below `total`, the length of the three arrays; `next` only moves up from
        // `first`. So no two tasks write the same element and every write is in bounds.
        unsafe { out.write(*next, C::from_u64_unchecked(n), v, (o & mask) as u16) };
        *next += 1;
    }
    true
}

/// One row block after the second pass: its stretch of the output in input order, and
/// the row of each entry inside the block.
pub(crate) struct Block<'a, C, V> {
    pub(crate) first_row: usize,
    /// The block's first slot.
    pub(crate) base: usize,
    pub(crate) crd: &'a mut [C],
    pub(crate) val: &'a mut [V],
    pub(crate) local: &'a [u16],
    /// Out: the block's row starts.
    pub(crate) starts: &'a mut [usize],
    /// Out: entries each row keeps.
    pub(crate) kept: &'a mut [usize],
}

/// Reused buffers: per-row cursors, the reordered block, and `sum_row`'s scratch.
pub(crate) type Scratch<C, V> = (Vec<usize>, Vec<C>, Vec<V>, Vec<(u64, usize)>);

impl<C: Index, V: Raw> Block<'_, C, V> {
    /// Puts the entries in row order (stably, so input order stays inside rows), writes
    /// the row starts, then sorts and sums each row.
    pub(crate) fn finish(
        self,
        outer: usize,
        (drop_zeros, ar): (bool, &Arith<V>),
        (next, c_tmp, v_tmp, pairs): &mut Scratch<C, V>,
    ) -> Result<(), ConvertError> {
        let Block {
            first_row,
            base,
            crd,
            val,
            local,
            starts,
            kept,
        } = self;
        next.clear();
        next.resize(starts.len(), 0);
        for &l in local {
            // Every row inside the block is below `starts.len()` by construction.
            if let Some(n) = next.get_mut(l as usize) {
                *n += 1;
            }
        }
        let mut acc = 0;
        for (s, n) in starts.iter_mut().zip(next.iter_mut()) {
            *s = acc;
            let c = *n;
            *n = acc;
            acc += c;
        }
        if !local.windows(2).all(|w| w[0] <= w[1]) {
            c_tmp.clear();
            c_tmp.resize(crd.len(), C::default());
            v_tmp.clear();
            v_tmp.resize(val.len(), V::default());
            for ((&l, &c), &v) in local.iter().zip(crd.iter()).zip(val.iter()) {
                if let Some(n) = next.get_mut(l as usize) {
                    if let (Some(ct), Some(vt)) = (c_tmp.get_mut(*n), v_tmp.get_mut(*n)) {
                        *ct = c;
                        *vt = v;
                    }
                    *n += 1;
                }
            }
            crd.copy_from_slice(c_tmp);
            val.copy_from_slice(v_tmp);
        }
        for r in 0..starts.len() {
            let a = starts[r];
            let b = starts.get(r + 1).copied().unwrap_or(crd.len());
            kept[r] = sum_row(
                &mut crd[a..b],
                (&mut val[a..b], ar),
                drop_zeros,
                (pairs, v_tmp),
            )
            .map_err(|col| {
                let row = (first_row + r) as u64;
                ConvertError::SumOverflow {
                    coord: if outer == 0 {
                        vec![row, col]
                    } else {
                        vec![col, row]
                    },
                }
            })?;
            starts[r] = base + a;
        }
        Ok(())
    }
}

/// The output arrays, written from several tasks at disjoint indices.
pub(crate) struct SharedOut<C, V> {
    crd: *mut C,
    val: *mut V,
    local: *mut u16,
    len: usize,
    local_len: usize,
}

// SAFETY: the pointers are only used through `write`, whose callers guarantee that tasks
// write disjoint indices; `C` and `V` are plain `Send` data.
unsafe impl<C: Send, V: Send> Sync for SharedOut<C, V> {}

impl<C, V> SharedOut<C, V> {
    /// Shares the coordinate and value arrays (`len`, the shorter's length) and the side
    /// array (`local_len`, which may be 0 if only [`Self::write_pair`] is used).
    pub(crate) fn new(crd: &mut [C], val: &mut [V], local: &mut [u16]) -> Self {
        SharedOut {
            crd: crd.as_mut_ptr(),
            val: val.as_mut_ptr(),
            local: local.as_mut_ptr(),
            len: crd.len().min(val.len()),
            local_len: local.len(),
        }
    }

    /// Writes element `i` of the coordinate and value arrays only.
    ///
    /// # Safety
    /// `i < len`, and no other task reads or writes element `i` concurrently.
    #[inline(always)]
    pub(crate) unsafe fn write_pair(&self, i: usize, c: C, v: V) {
        debug_assert!(i < self.len);
        // SAFETY: in bounds and unshared, by this function's contract.
        unsafe {
            self.crd.add(i).write(c);
            self.val.add(i).write(v);
        }
    }

    /// Writes element `i` of the three arrays.
    ///
    /// # Safety
    /// `i < len` and `i < local_len`, and no other task reads or writes element `i`
    /// concurrently.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, i: usize, c: C, v: V, l: u16) {
        debug_assert!(i < self.len && i < self.local_len);
        // SAFETY: in bounds and unshared, by this function's contract.
        unsafe {
            self.crd.add(i).write(c);
            self.val.add(i).write(v);
            self.local.add(i).write(l);
        }
    }
}

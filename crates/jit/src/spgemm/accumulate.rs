//! Gustavson's row-by-row product: row `i` of C is the `(+)`-sum of the rows `k` of B
//! scaled by `a_ik`, taken in increasing `k` (A's row order), gathered in an accumulator
//! indexed by C's column. Two accumulators, chosen per row by the symbolic pass:
//!
//! - [`Dense`]: one slot per column of C and a mark per slot. A mark is a stamp: row `i`
//!   owns the stamps `s` (set on the mask's columns) and `s + 1` (set where a product
//!   landed), so nothing is cleared between rows; the array is cleared only when the
//!   stamps wrap (every 2^31 rows). Touching columns costs a cache miss each when C is
//!   wide and the row's products few and scattered.
//! - [`Hash`]: an open-addressing table of twice the row's bound on entries (power of two,
//!   linear probing), cleared through the list of slots it used. It stays in cache for
//!   rows whose products are few against C's column count.
//!
//! A row runs once with `out` (the one-pass fill), or, in the two-pass form, once to count
//! its entries and once to fill C's coordinates (ascending: the dense accumulator sorts
//! the columns it touched, or scans its slots when they are many; the hash table sorts its
//! pairs) and values.
//!
//! The dense accumulator's products run through generated code where
//! [`Product::scatter`] holds a kernel (`scatter.rs`: branch-free, the mask's bitmap tested
//! a vector at a time on AVX-512); the Rust loop (`Dense::products`) runs elsewhere and is
//! the shape the generated code follows.
//!
//! With a mask, `Keep` admits only the mask's columns of row `i` (structural mask) and
//! `Skip` admits every other column (complemented mask). A [`Filter`] (one bit per column
//! of C, set on the mask's columns of the row) turns away the products the mask rejects
//! before either accumulator is touched: in a masked product most products miss the mask
//! (the triangle count: 92%), and the bitmap stays in L1 or L2 where the accumulator's
//! table or marks do not.

use sptk_tensor::big_zeroed;

use super::operand::{Coord, Rows};
#[cfg(target_arch = "x86_64")]
use super::scatter::ScatterArgs;
use super::scatter::ScatterKernel;
use super::semiring::Ring;

/// What the mask does to row `i`'s columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MaskMode {
    /// No mask: every column the products reach.
    None,
    /// Only the mask's columns (`C<M>`, structural).
    Keep,
    /// Every column but the mask's (`C<!M>`, structural complement).
    Skip,
}

/// The operands of one product, typed.
pub(crate) struct Product<'a, C, R: Ring> {
    /// A by rows.
    pub a: Rows<'a, C, R::In>,
    /// B by rows.
    pub b: Rows<'a, C, R::In>,
    /// B by columns, for the dot form.
    pub b_cols: Option<Rows<'a, C, R::In>>,
    /// The mask's rows (values not read).
    pub mask: Option<Rows<'a, C, ()>>,
    /// What the mask does.
    pub mode: MaskMode,
    /// C's column count.
    pub cols: usize,
    /// Generated scatter code for the dense accumulator's rows, made for `C`'s width and
    /// `R` (`None`: the Rust loop).
    pub scatter: Option<&'a ScatterKernel>,
    /// Generated scatter code for the hash table's rows, likewise.
    pub hash: Option<&'a ScatterKernel>,
    /// B's longest row (the touched list's room for generated code).
    pub b_longest: u64,
    /// Generated code for the dot form's rows (`None`: the Rust loop).
    pub mask_dot: Option<&'a crate::coiter::MaskDot>,
}

/// Where a row's entries go in the fill pass: exactly as many as the count pass found.
pub(crate) struct Out<'o, C, V> {
    /// C's coordinates for the row.
    pub crd: &'o mut [C],
    /// C's values for the row.
    pub val: &'o mut [V],
}

/// C's widest column count that gets a [`Filter`] (2 MiB of bits a thread).
pub(crate) const FILTER_COLS: usize = 1 << 24;

/// One bit per column of C, set on the mask's columns of the row being computed and
/// cleared after it (through the same list), so a row costs O(its mask entries).
pub(crate) struct Filter {
    bits: Vec<u64>,
}

impl Filter {
    /// A filter for `cols` columns, or `None` where C is too wide for one.
    pub fn new(cols: usize) -> Option<Filter> {
        if cols > FILTER_COLS {
            return None;
        }
        Some(Filter {
            bits: big_zeroed(cols.div_ceil(64)).ok()?,
        })
    }

    /// Sets (`on`) or clears the bits of `cols`.
    fn mark<C: Coord>(&mut self, cols: &[C], on: bool) {
        for &j in cols {
            let j = j.to_u64();
            if let Some(w) = self.bits.get_mut((j >> 6) as usize) {
                let bit = 1u64 << (j & 63);
                *w = if on { *w | bit } else { *w & !bit };
            }
        }
    }

    /// Whether column `j`'s bit is set.
    #[inline(always)]
    fn has(&self, j: u64) -> bool {
        self.bits
            .get((j >> 6) as usize)
            .is_some_and(|&w| (w >> (j & 63)) & 1 != 0)
    }

    /// Whether a product in column `j` can be admitted under `mode` (the filter holds the
    /// row's mask columns).
    #[inline(always)]
    fn admits(&self, mode: MaskMode, j: u64) -> bool {
        match mode {
            MaskMode::None => true,
            MaskMode::Keep => self.has(j),
            MaskMode::Skip => !self.has(j),
        }
    }
}

/// The dense accumulator of one thread: a mark and a value per column of C.
pub(crate) struct Dense<C, V> {
    marks: Vec<u32>,
    values: Vec<V>,
    stamp: u32,
    /// The row's new columns, in the order found (at C's coordinate width: sorted
    /// narrow).
    touched: Vec<C>,
    /// A bit per column of C, set from the touched list and cleared as it is read: the
    /// order of a row with many columns (allocated at its first such row; empty until).
    order: Vec<u64>,
    /// The room for a row's new columns could not be reserved (the row was refused).
    pub out_of_memory: bool,
}

/// Above this share of C's columns (1 / SCAN_SHARE), a row's columns are always put in
/// order through the bitmap (or, where it cannot be allocated, by a scan of the marks in
/// column order), never sorted.
const SCAN_SHARE: usize = 16;

/// True where `n` touched columns of `cols` are put in order faster through the bitmap
/// (setting `n` bits, then reading the words of their span) than by a sort (about `log2
/// n` steps each). R-MAT's `A A^T` (65,536 columns, 1,000 a row): the sort's 15% of the
/// product's samples and most of the marks' scan go (docs/PERFORMANCE.md, "SpGEMM: rows
/// put in order by a bitmap").
fn order_by_bits(n: usize, cols: usize) -> bool {
    let log = usize::BITS - n.leading_zeros();
    n >= 64 && n.saturating_mul(log.saturating_sub(2) as usize) > cols / 64
}

impl<C: Coord, V: sptk_tensor::Value> Dense<C, V> {
    /// An accumulator for `cols` columns, its pages touched only where rows reach.
    pub fn new(cols: usize) -> Option<Dense<C, V>> {
        Some(Dense {
            marks: big_zeroed(cols).ok()?,
            values: big_zeroed(cols).ok()?,
            stamp: 0,
            touched: Vec::new(),
            order: Vec::new(),
            out_of_memory: false,
        })
    }

    /// The next row's first stamp (the marks cleared when they wrap).
    fn begin(&mut self) -> u32 {
        if self.stamp >= u32::MAX - 4 {
            self.marks.fill(0);
            self.stamp = 0;
        }
        self.stamp += 2;
        self.stamp - 1
    }

    /// Row `i` of C, whose products are `flops`: its entry count, and with `out` its
    /// entries written there (`usize::MAX` where generated code refused the row).
    #[inline(never)]
    pub fn row<R: Ring<Out = V>>(
        &mut self,
        p: &Product<'_, C, R>,
        (i, flops): (usize, u64),
        mut filter: Option<&mut Filter>,
        mut out: Option<Out<'_, C, V>>,
    ) -> usize {
        let s = self.begin();
        let hit = s + 1;
        let mask = p.mask.as_ref().map(|m| m.row(i).0).unwrap_or_default();
        for &j in mask {
            if let Some(x) = self.marks.get_mut(j.to_u64() as usize) {
                *x = s;
            }
        }
        if let Some(f) = filter.as_mut() {
            f.mark(mask, true);
        }
        let generated = match p.scatter {
            // Masked rows without a filter are turned away by the marks alone: Rust's.
            Some(k) if p.mode == MaskMode::None || filter.is_some() => Some(k),
            _ => None,
        };
        let n = match generated {
            Some(k) => {
                // Room for every product, or for every column plus B's longest row (the
                // kernel checks `new columns + the row's length <= room` before each row
                // of B).
                let room = flops.min((self.marks.len() as u64).saturating_add(p.b_longest));
                self.scatter(k, p, (i, room), filter.as_deref(), hit)
            }
            None => self.products(p, i, filter.as_deref(), s, out.is_some()),
        };
        match out.as_mut() {
            Some(out) if n != usize::MAX => self.write(hit, out),
            _ => self.touched.clear(),
        }
        if let Some(f) = filter {
            f.mark(mask, false);
        }
        n
    }

    /// Row `i`'s products into the accumulator by the Rust loop: the new columns, listed
    /// in `touched` where `fill`.
    #[inline(always)]
    fn products<R: Ring<Out = V>>(
        &mut self,
        p: &Product<'_, C, R>,
        i: usize,
        filter: Option<&Filter>,
        s: u32,
        fill: bool,
    ) -> usize {
        let hit = s + 1;
        let mut n = 0usize;
        let (ak, av) = p.a.row(i);
        for (&k, &a) in ak.iter().zip(av) {
            let (bj, bv) = p.b.row(k.to_u64() as usize);
            for (&j, &b) in bj.iter().zip(bv) {
                let j = j.to_u64() as usize;
                if filter.is_some_and(|f| !f.admits(p.mode, j as u64)) {
                    continue;
                }
                let (Some(mark), Some(val)) = (self.marks.get_mut(j), self.values.get_mut(j))
                else {
                    continue;
                };
                let m = *mark;
                if m == hit {
                    if fill {
                        *val = R::plus(*val, R::times(a, b));
                    }
                    continue;
                }
                let admit = match p.mode {
                    MaskMode::None => true,
                    MaskMode::Keep => m == s,
                    MaskMode::Skip => m != s,
                };
                if admit {
                    *mark = hit;
                    n += 1;
                    if fill {
                        *val = R::times(a, b);
                        self.touched.push(C::from_u64_unchecked(j as u64));
                    }
                }
            }
        }
        n
    }

    /// Row `i`'s products into the accumulator by generated code (`scatter.rs`), with room
    /// for `room` new columns: the new columns, always listed in `touched`; `usize::MAX`
    /// where the room could not be reserved or the code refused the row.
    #[cfg(target_arch = "x86_64")]
    fn scatter<R: Ring<Out = V>>(
        &mut self,
        k: &ScatterKernel,
        p: &Product<'_, C, R>,
        (i, room): (usize, u64),
        filter: Option<&Filter>,
        hit: u32,
    ) -> usize {
        self.touched.clear();
        if usize::try_from(room)
            .ok()
            .and_then(|r| self.touched.try_reserve(r).ok())
            .is_none()
        {
            self.out_of_memory = true;
            return usize::MAX;
        }
        let cols = self.marks.len().min(self.values.len()) as u64;
        let args = ScatterArgs {
            marks: self.marks.as_mut_ptr(),
            values: self.values.as_mut_ptr().cast(),
            hit: u64::from(hit),
            touched: self.touched.as_mut_ptr().cast(),
            cap: self.touched.capacity() as u64,
            ..operands(p, i, cols, filter)
        };
        // SAFETY: `args` is made of live slices and their lengths just above (A's row,
        // B's arrays, the marks and values of `cols` or more, the filter's bits of `cols`
        // or more where masked, the touched list's capacity), and the kernel was made
        // for `C`'s width and `V` (`Product::scatter`'s contract, `numeric.rs`); nothing
        // else reads or writes these arrays during the call.
        let n = unsafe { k.call(&args) };
        match usize::try_from(n) {
            Ok(n) if n <= self.touched.capacity() => {
                // SAFETY: the kernel wrote the `n` new columns at `touched[..n]`, inside
                // the capacity (checked).
                unsafe { self.touched.set_len(n) };
                n
            }
            _ => usize::MAX,
        }
    }

    /// Off x86-64 no scatter kernel exists (`Product::scatter` is `None`).
    #[cfg(not(target_arch = "x86_64"))]
    fn scatter<R: Ring<Out = V>>(
        &mut self,
        _: &ScatterKernel,
        _: &Product<'_, C, R>,
        _: (usize, u64),
        _: Option<&Filter>,
        _: u32,
    ) -> usize {
        usize::MAX
    }

    /// Writes the row's entries in column order and forgets the touched columns.
    fn write(&mut self, hit: u32, out: &mut Out<'_, C, V>) {
        let mut slots = out.crd.iter_mut().zip(out.val.iter_mut());
        let cols = self.marks.len();
        let many = self.touched.len() > cols / SCAN_SHARE;
        if (many || order_by_bits(self.touched.len(), cols)) && self.order_ready(cols) {
            // The touched columns' bits, then their words in order (each cleared as read).
            let (mut lo, mut hi) = (usize::MAX, 0);
            for &j in &self.touched {
                let j = j.to_u64() as usize;
                if let Some(w) = self.order.get_mut(j / 64) {
                    *w |= 1 << (j % 64);
                    lo = lo.min(j / 64);
                    hi = hi.max(j / 64);
                }
            }
            let words = self.order.get_mut(lo..=hi).unwrap_or_default();
            for (n, w) in words.iter_mut().enumerate() {
                let mut bits = std::mem::take(w);
                while bits != 0 {
                    let j = (lo + n) * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let (Some(&v), Some((c, x))) = (self.values.get(j), slots.next()) else {
                        continue;
                    };
                    *c = C::from_u64_unchecked(j as u64);
                    *x = v;
                }
            }
        } else if many {
            // No room for the bitmap: the marks in column order.
            for (j, (&m, &v)) in self.marks.iter().zip(&self.values).enumerate() {
                if m == hit {
                    let Some((c, x)) = slots.next() else { break };
                    *c = C::from_u64_unchecked(j as u64);
                    *x = v;
                }
            }
        } else {
            super::sort::sort_columns(&mut self.touched);
            for &j in &self.touched {
                let (Some(&v), Some((c, x))) = (self.values.get(j.to_u64() as usize), slots.next())
                else {
                    break;
                };
                *c = j;
                *x = v;
            }
        }
        self.touched.clear();
    }
}

impl<C, V> Dense<C, V> {
    /// The order bitmap for `cols` columns, allocated (zeroed) at the first call; false
    /// where it cannot be (the caller sorts instead).
    fn order_ready(&mut self, cols: usize) -> bool {
        let words = cols.div_ceil(64);
        if self.order.len() != words {
            match big_zeroed(words) {
                Ok(v) => self.order = v,
                Err(_) => return false,
            }
        }
        true
    }
}

/// A scatter kernel's arguments for row `i` of `p`: A's row, B, the filter's bits and C's
/// columns (`cols`, and no more than the filter's bits cover); the accumulator's fields
/// null, for the caller to set.
#[cfg(target_arch = "x86_64")]
fn operands<C: Coord, R: Ring>(
    p: &Product<'_, C, R>,
    i: usize,
    cols: u64,
    filter: Option<&Filter>,
) -> ScatterArgs {
    let (ak, av) = p.a.row(i);
    let bits = filter.map_or(&[][..], |f| &f.bits[..]);
    let cols = match filter {
        Some(_) => cols.min(bits.len() as u64 * 64),
        None => cols,
    };
    ScatterArgs {
        a_crd: ak.as_ptr().cast(),
        a_val: av.as_ptr().cast(),
        a_len: ak.len().min(av.len()) as u64,
        b_pos: p.b.pos.as_ptr(),
        b_crd: p.b.crd.as_ptr().cast(),
        b_val: p.b.val.as_ptr().cast(),
        b_rows: p.b.pos.len().saturating_sub(1) as u64,
        b_n: p.b.crd.len().min(p.b.val.len()) as u64,
        marks: std::ptr::null_mut(),
        values: std::ptr::null_mut(),
        cols,
        hit: 0,
        filter: bits.as_ptr(),
        touched: std::ptr::null_mut(),
        cap: 0,
        keys: std::ptr::null_mut(),
        wrap: 0,
        shift: 0,
    }
}

/// An empty slot of the hash table.
const EMPTY: u64 = u64::MAX;
/// A mask's column that no product has reached yet (the key's high bit).
const MASKED: u64 = 1 << 63;

/// The hash accumulator of one thread: keys (C's columns) and values, grown to the
/// largest row it has held.
#[derive(Default)]
pub(crate) struct Hash<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    used: Vec<usize>,
    pairs: Vec<(u64, V)>,
    /// Columns and slots packed (column << 32 | slot), where both fit 32 bits.
    packed: Vec<u64>,
}

impl<V: sptk_tensor::Value> Hash<V> {
    /// Row `i` of C through a table sized for `bound` distinct columns (the row's
    /// products, plus the mask's columns for a complemented mask, at most C's columns;
    /// `flops` the row's products): its entry count, and with `out` its entries written
    /// there. The products run through generated code where [`Product::hash`] holds a
    /// kernel, the row is filled (not counted) and any mask is decided by the filter.
    #[inline(never)]
    pub fn row<C: Coord, R: Ring<Out = V>>(
        &mut self,
        p: &Product<'_, C, R>,
        (i, flops): (usize, u64),
        bound: usize,
        mut filter: Option<&mut Filter>,
        mut out: Option<Out<'_, C, V>>,
    ) -> usize {
        let cap = (bound.max(8) * 2).next_power_of_two();
        if self.keys.len() < cap {
            self.keys.resize(cap, EMPTY);
            self.values.resize(cap, V::default());
        }
        let wrap = cap - 1;
        let shift = 64 - cap.trailing_zeros();
        let mask = p.mask.as_ref().map(|m| m.row(i).0).unwrap_or_default();
        let generated = match p.hash {
            Some(k) if out.is_some() && (p.mode == MaskMode::None || filter.is_some()) => Some(k),
            _ => None,
        };
        if let Some(k) = generated {
            if let Some(f) = filter.as_mut() {
                f.mark(mask, true);
            }
            let n = self.scatter(k, p, (i, flops), (wrap, shift), filter.as_deref());
            if let Some(f) = filter.as_mut() {
                f.mark(mask, false);
            }
            if let Some(n) = n {
                if let (Some(out), true) = (out.as_mut(), n != usize::MAX) {
                    self.write(wrap, p.cols, out);
                }
                self.forget();
                return n;
            }
            // The room could not be reserved: the Rust loop below.
        }
        let home = |j: u64| (j.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
        // The slot of `j`, or the empty slot where it would go (the table is at most half
        // full, so a probe always ends).
        let find = |keys: &[u64], j: u64| {
            let mut h = home(j);
            loop {
                let key = keys[h & wrap];
                if key == EMPTY || key & !MASKED == j {
                    return h & wrap;
                }
                h += 1;
            }
        };
        for &j in mask {
            let j = j.to_u64();
            let h = find(&self.keys, j);
            if self.keys[h] == EMPTY {
                self.keys[h] = j | MASKED;
                self.used.push(h);
            }
        }
        if let Some(f) = filter.as_mut() {
            f.mark(mask, true);
        }
        let fill = out.is_some();
        let cols = p.cols as u64;
        let mut n = 0usize;
        let (ak, av) = p.a.row(i);
        for (&k, &a) in ak.iter().zip(av) {
            let (bj, bv) = p.b.row(k.to_u64() as usize);
            for (&j, &b) in bj.iter().zip(bv) {
                let j = j.to_u64();
                if j >= cols || filter.as_ref().is_some_and(|f| !f.admits(p.mode, j)) {
                    continue;
                }
                let h = find(&self.keys, j);
                let key = self.keys[h];
                if key == j {
                    if fill {
                        self.values[h] = R::plus(self.values[h], R::times(a, b));
                    }
                    continue;
                }
                let admit = match p.mode {
                    MaskMode::None => true,
                    MaskMode::Keep => key != EMPTY,
                    MaskMode::Skip => key == EMPTY,
                };
                if admit {
                    if key == EMPTY {
                        self.used.push(h);
                    }
                    self.keys[h] = j;
                    n += 1;
                    if fill {
                        self.values[h] = R::times(a, b);
                    }
                }
            }
        }
        if let Some(out) = out.as_mut() {
            self.write(wrap, p.cols, out);
        }
        self.forget();
        if let Some(f) = filter {
            f.mark(mask, false);
        }
        n
    }

    /// Writes the row's entries (the used slots whose keys are columns, not a mask's
    /// column no product reached) in column order.
    fn write<C: Coord>(&mut self, wrap: usize, cols: usize, out: &mut Out<'_, C, V>) {
        let (keys, values) = (&self.keys, &self.values);
        if cols <= 1 << 32 && wrap < 1 << 32 {
            // Column and slot packed in one word: the sort moves 8 bytes an entry and
            // compares them as integers; the values are read by slot after.
            for &h in &self.used {
                match keys.get(h) {
                    Some(&key) if key & MASKED == 0 => self.packed.push(key << 32 | h as u64),
                    _ => {}
                }
            }
            self.packed.sort_unstable();
            let slots = out.crd.iter_mut().zip(out.val.iter_mut());
            for ((c, x), &w) in slots.zip(&self.packed) {
                *c = C::from_u64_unchecked(w >> 32);
                *x = values
                    .get((w & u64::from(u32::MAX)) as usize & wrap)
                    .copied()
                    .unwrap_or_default();
            }
            self.packed.clear();
        } else {
            for &h in &self.used {
                match (keys.get(h), values.get(h)) {
                    (Some(&key), Some(&v)) if key & MASKED == 0 => self.pairs.push((key, v)),
                    _ => {}
                }
            }
            self.pairs.sort_unstable_by_key(|&(j, _)| j);
            let slots = out.crd.iter_mut().zip(out.val.iter_mut());
            for ((c, x), &(j, v)) in slots.zip(&self.pairs) {
                *c = C::from_u64_unchecked(j);
                *x = v;
            }
            self.pairs.clear();
        }
    }

    /// Empties the used slots (the table is empty again).
    fn forget(&mut self) {
        for &h in &self.used {
            if let Some(k) = self.keys.get_mut(h) {
                *k = EMPTY;
            }
        }
        self.used.clear();
    }

    /// Row `i`'s products into the table by generated code (`scatter.rs`, a `hash`
    /// kernel), the used list with room for every product (`flops`): the new columns;
    /// `Some(usize::MAX)` where the code refused the row (the table emptied again, as
    /// `Dense::scatter` reports a refusal); `None` where the room could not be reserved
    /// (nothing was written then: the Rust loop runs instead).
    #[cfg(target_arch = "x86_64")]
    fn scatter<C: Coord, R: Ring<Out = V>>(
        &mut self,
        k: &ScatterKernel,
        p: &Product<'_, C, R>,
        (i, flops): (usize, u64),
        (wrap, shift): (usize, u32),
        filter: Option<&Filter>,
    ) -> Option<usize> {
        self.used.clear();
        let room = usize::try_from(flops).ok()?;
        self.used.try_reserve(room).ok()?;
        // The kernel's slots stay below `wrap + 1`, the table's length.
        if self.keys.len().min(self.values.len()) <= wrap {
            return None;
        }
        let args = ScatterArgs {
            values: self.values.as_mut_ptr().cast(),
            touched: self.used.as_mut_ptr().cast(),
            cap: self.used.capacity() as u64,
            keys: self.keys.as_mut_ptr(),
            wrap: wrap as u64,
            shift: u64::from(shift),
            ..operands(p, i, p.cols as u64, filter)
        };
        // SAFETY: `args` is made of live slices and their lengths just above (A's row,
        // B's arrays, the table's keys and values of more than `wrap` slots, the filter's
        // bits of `cols` or more where masked, the used list's capacity), the kernel was
        // made for `C`'s width and `V` (`Product::hash`'s contract, `numeric.rs`), and the
        // table is empty and sized for the row's distinct columns at most half full (its
        // bound), so every probe ends; nothing else reads or writes these arrays during
        // the call.
        let n = unsafe { k.call(&args) };
        match usize::try_from(n) {
            Ok(n) if n <= self.used.capacity() => {
                // SAFETY: the kernel wrote the `n` new slots at `used[..n]`, inside the
                // capacity (checked).
                unsafe { self.used.set_len(n) };
                Some(n)
            }
            // Refused (the room checked per row of B): the slots it took are unknown, so
            // the whole table is emptied.
            _ => {
                self.keys.fill(EMPTY);
                Some(usize::MAX)
            }
        }
    }

    /// Off x86-64 no hash kernel exists (`Product::hash` is `None`).
    #[cfg(not(target_arch = "x86_64"))]
    fn scatter<C: Coord, R: Ring<Out = V>>(
        &mut self,
        _: &ScatterKernel,
        _: &Product<'_, C, R>,
        _: (usize, u64),
        _: (usize, u32),
        _: Option<&Filter>,
    ) -> Option<usize> {
        None
    }
}

//! Record batches held in memory that are already CSR in all but name: rows in order,
//! columns strictly increasing inside each row (what `X.tocoo()` of a canonical SciPy
//! matrix, a table sorted by (row, column) or a CSR written as COO give). Entry `i` of the
//! table is then entry `i` of the output, so the read is one pass over the Arrow arrays
//! at their own widths, in parallel over the parts: check the order and the bounds, copy
//! the column into `crd` at the output's width and the values as they are, and note where
//! each row starts. No counting pass, no scratch, no row blocks, no sort.
//!
//! Anything else (unordered or repeated entries, nulls, dictionaries, other value types,
//! a coordinate out of range, widths that do not hold the data, options that change
//! entries) gives `None` and the general direct route runs, with its messages, on the
//! same table: the output is the same, byte for byte, as the route that sorts and sums
//! (this only skips work that would find nothing to do).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::DataType;
use sptk_encoding::{Encoding, LevelExpr, LevelFormat, Target};
use sptk_tensor::{ConvertOptions, Index, IndexVec, IndexWidth, Layout, LevelArrays, Tensor};

use crate::columns::ArrowValue;
use crate::open::Data;
use crate::table::{Found, Table};

/// Entries widened at a time (stack buffers that stay in L1).
const CHUNK: usize = 2048;

/// A primitive Arrow value type that is exactly the tensor's value type `V`.
pub(crate) trait NativeOf: ArrowValue + Copy + arrow_buffer::ArrowNativeType {
    /// `V`'s Arrow type.
    type Arrow: ArrowPrimitiveType<Native = Self>;
}

macro_rules! native {
    ($($v:ty => $a:ty),*) => {$(
        impl NativeOf for $v {
            type Arrow = $a;
        }
    )*};
}
native!(f64 => arrow_array::types::Float64Type, f32 => arrow_array::types::Float32Type,
    i64 => Int64Type, i32 => Int32Type);

/// One part's arrays, checked to be plain primitives without nulls.
struct PartArrays<'a, V> {
    rows: &'a dyn Array,
    cols: &'a dyn Array,
    values: &'a [V],
}

/// A part's first and last entry, `(row, column)` after the index base.
type Ends = [(u64, u64); 2];

impl Table {
    /// The tensor of [`Table::read_converted`] into CSR (`encoding`, before fitting the
    /// widths) when the table is record batches in memory whose entries are already in
    /// CSR order; `None` otherwise (then read as usual).
    pub(crate) fn read_in_order<V: NativeOf>(
        &self,
        dims: [u64; 2],
        rows: u64,
        encoding: &Encoding,
        opts: &ConvertOptions,
    ) -> Option<Tensor> {
        // What `convert_parts` would do other than place entries: leave it to it.
        let plain = !opts.keep_duplicates
            && !opts.drop_zeros
            && opts.slice_values.is_empty()
            && opts.dtype.is_none_or(|t| t == V::TYPE)
            && !encoding.has_slices();
        if !plain || self.files.len() != 1 {
            return None;
        }
        let Data::Batches(parts) = &self.files[0].data else {
            return None;
        };
        let fitted = sptk_tensor::fit_widths(
            &Target::Fixed(encoding.clone()),
            &dims,
            rows,
            opts.auto_widths,
        )
        .ok()?;
        let encoding = fitted.encoding().unwrap_or(encoding);
        let layout = Layout::new(encoding, &dims).ok()?;
        if !by_rows(encoding, &layout) {
            return None;
        }
        let found = &self.found[0];
        let (Some(Found::Column(r)), Some(Found::Column(c)), Some(Found::Column(v))) =
            (found.first(), found.get(1), found.get(2))
        else {
            return None;
        };
        if self.coords.len() != 2 || self.value.is_none() || self.parts.len() != parts.len() {
            return None;
        }
        let base = self.opts.index_base;
        let [nrows, ncols] = dims;
        let total = usize::try_from(rows).ok()?;
        let nrows_us = usize::try_from(nrows).ok()?.checked_add(1)?;
        // Within the memory limit as the general route counts it, else let it report.
        let crd_bytes = u64::from(layout.crd_width.bits() / 8);
        let need = rows
            .saturating_mul(crd_bytes + std::mem::size_of::<V>() as u64)
            .saturating_add((nrows_us as u64).saturating_mul(16));
        let limit = opts
            .memory_limit
            .unwrap_or_else(sptk_tensor::default_memory_limit);
        if need > limit || layout.crd_width == IndexWidth::W2 {
            return None;
        }
        if ncols > 0 && ncols - 1 > layout.crd_width.max() {
            return None;
        }
        // Each part's arrays and its first and last entry; parts must follow each other.
        let mut arrays = Vec::with_capacity(parts.len());
        let mut ends: Vec<Ends> = Vec::with_capacity(parts.len());
        let mut next_row0 = 0u64;
        for (i, (batch, part)) in parts.iter().zip(&self.parts).enumerate() {
            let n = batch.num_rows();
            if part.index != i || part.row0 != next_row0 || part.rows != n as u64 {
                return None;
            }
            next_row0 += n as u64;
            let a = PartArrays::<V> {
                rows: plain_int(batch.column(*r).as_ref())?,
                cols: plain_int(batch.column(*c).as_ref())?,
                values: plain_values::<V>(batch.column(*v).as_ref())?,
            };
            if n == 0 {
                arrays.push(a);
                ends.push([(0, 0); 2]);
                continue;
            }
            let at = |i: usize| -> Option<(u64, u64)> {
                let r = int_at(a.rows, i)?.checked_sub(base)?;
                let c = int_at(a.cols, i)?.checked_sub(base)?;
                (r < nrows && c < ncols).then_some((r, c))
            };
            let e = [at(0)?, at(n - 1)?];
            // The last entry of the part before must come first.
            if e[0] > e[1] {
                return None;
            }
            arrays.push(a);
            ends.push(e);
        }
        if next_row0 != rows {
            return None;
        }
        let mut last: Option<(u64, u64)> = None;
        for (e, a) in ends.iter().zip(&arrays) {
            if a.values.is_empty() {
                continue;
            }
            if last.is_some_and(|l| l >= e[0]) {
                return None;
            }
            last = Some(e[1]);
        }
        let mut pos: Vec<u64> = sptk_tensor::big_zeroed(nrows_us).ok()?;
        let values: Vec<V> = sptk_tensor::big_zeroed(total).ok()?;
        let crd = match layout.crd_width {
            IndexWidth::W8 => fill::<u8, V>(&arrays, &ends, &mut pos, values, base, dims),
            IndexWidth::W16 => fill::<u16, V>(&arrays, &ends, &mut pos, values, base, dims),
            IndexWidth::W32 => fill::<u32, V>(&arrays, &ends, &mut pos, values, base, dims),
            _ => fill::<u64, V>(&arrays, &ends, &mut pos, values, base, dims),
        };
        let (crd, values) = crd?;
        let pos = IndexVec::from_vec_u64(pos, layout.pos_width).ok()?;
        let levels = vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(pos),
                crd: Some(crd),
            },
        ];
        // SAFETY: `fill` checked every entry: coordinates below the dimension sizes (and
        // the columns' within the coordinate width), rows never decreasing and columns
        // strictly increasing inside a row, across parts too; `pos` starts at 0, never
        // decreases and ends at the number of entries, which is the length of `crd` and
        // of the values (one per row of the table). That is every invariant
        // `Tensor::try_from_parts` checks for a CSR.
        unsafe {
            Tensor::from_parts_unchecked(encoding.clone(), dims.to_vec(), levels, V::wrap(values))
        }
        .ok()
    }
}

/// Fills `pos` and returns `crd` and the values, or `None` if some entry is out of order
/// or out of range.
fn fill<C: Index, V: NativeOf>(
    arrays: &[PartArrays<V>],
    ends: &[Ends],
    pos: &mut [u64],
    mut values: Vec<V>,
    base: u64,
    dims: [u64; 2],
) -> Option<(IndexVec, Vec<V>)> {
    let total = values.len();
    let mut crd: Vec<C> = sptk_tensor::big_zeroed(total).ok()?;
    // Each part's outputs: its stretch of `crd` and the values, and the row starts it
    // sets, `pos[first + 1 ..= last]` (disjoint, as parts follow each other).
    let mut tasks = Vec::with_capacity(arrays.len());
    {
        let (mut c_rest, mut v_rest) = (&mut crd[..], &mut values[..]);
        let mut p_rest = &mut pos[..];
        let mut p_at = 0u64;
        let mut g = 0usize;
        for (a, e) in arrays.iter().zip(ends) {
            let n = a.values.len();
            let (c, ct) = std::mem::take(&mut c_rest).split_at_mut(n);
            let (v, vt) = std::mem::take(&mut v_rest).split_at_mut(n);
            (c_rest, v_rest) = (ct, vt);
            let span = if n == 0 {
                &mut []
            } else {
                let skip = usize::try_from(e[0].0 + 1 - p_at).ok()?;
                let len = usize::try_from(e[1].0 - e[0].0).ok()?;
                let rest = std::mem::take(&mut p_rest).get_mut(skip..)?;
                let (s, st) = rest.split_at_mut(len.min(rest.len()));
                p_rest = st;
                p_at = e[1].0 + 1;
                s
            };
            tasks.push((a, e, c, v, span, g));
            g += n;
        }
    }
    let ok = sptk_tensor::par::map_items(tasks, |_, (a, e, c, v, span, g)| {
        fill_part(a, e, c, v, span, g as u64, base, dims)
    });
    if !ok.iter().all(|&ok| ok) {
        return None;
    }
    // Row starts between parts and after the last.
    let mut prev: Option<u64> = None;
    let mut g = 0u64;
    for (a, e) in arrays.iter().zip(ends) {
        let n = a.values.len() as u64;
        if n == 0 {
            continue;
        }
        let from = prev.map_or(0, |p| p + 1);
        pos.get_mut(usize::try_from(from).ok()?..=usize::try_from(e[0].0).ok()?)?
            .fill(g);
        prev = Some(e[1].0);
        g += n;
    }
    let from = prev.map_or(0, |p| p + 1);
    pos.get_mut(usize::try_from(from).ok()?..)?.fill(g);
    Some((C::wrap(crd), values))
}

/// One part: checks its entries in order and writes them to `crd` and `val`; `starts` is
/// `pos[first + 1 ..= last]` (`first`, `last` the part's first and last rows), each set
/// to the global index `g0 + i` of the row's first entry.
#[allow(clippy::too_many_arguments)]
fn fill_part<C: Index, V: NativeOf>(
    a: &PartArrays<V>,
    e: &Ends,
    crd: &mut [C],
    val: &mut [V],
    starts: &mut [u64],
    g0: u64,
    base: u64,
    [nrows, ncols]: [u64; 2],
) -> bool {
    let n = a.values.len();
    if crd.len() != n || val.len() != n {
        return false;
    }
    val.copy_from_slice(a.values);
    if n == 0 {
        return true;
    }
    let [(first, _), (last, _)] = *e;
    let (mut pr, mut pc) = (first, 0u64);
    let mut started = false;
    let mut rbuf = [0u64; CHUNK];
    let mut cbuf = [0u64; CHUNK];
    let mut from = 0;
    while from < n {
        let len = CHUNK.min(n - from);
        let (rb, cb) = (&mut rbuf[..len], &mut cbuf[..len]);
        if widen(a.rows, from, rb).is_none() || widen(a.cols, from, cb).is_none() {
            return false;
        }
        let out = &mut crd[from..from + len];
        for k in 0..len {
            // Below the base wraps to a huge value, past every size.
            let r = rb[k].wrapping_sub(base);
            let c = cb[k].wrapping_sub(base);
            if r >= nrows || c >= ncols {
                return false;
            }
            if r == pr {
                if started && c <= pc {
                    return false;
                }
            } else {
                if r < pr || r > last {
                    return false;
                }
                // Rows pr + 1 ..= r start here (indices into `starts`: minus first + 1).
                let Some(s) = starts.get_mut((pr - first) as usize..(r - first) as usize) else {
                    return false;
                };
                s.fill(g0 + (from + k) as u64);
            }
            started = true;
            (pr, pc) = (r, c);
            out[k] = C::from_u64_unchecked(c);
        }
        from += len;
    }
    pr == last
}

/// `arr` if it is a plain integer array without nulls.
fn plain_int(arr: &dyn Array) -> Option<&dyn Array> {
    (arr.null_count() == 0 && arr.data_type().is_integer()).then_some(arr)
}

/// The values of `arr` if it is a plain array of `V` without nulls.
fn plain_values<V: NativeOf>(arr: &dyn Array) -> Option<&[V]> {
    if arr.null_count() > 0 {
        return None;
    }
    Some(arr.as_primitive_opt::<V::Arrow>()?.values())
}

/// Element `i` of an integer array as u64; None if negative (or not an integer array).
fn int_at(arr: &dyn Array, i: usize) -> Option<u64> {
    let mut one = [0u64];
    widen(arr, i, &mut one)?;
    Some(one[0])
}

/// `out.len()` elements of the integer array `arr` from `from`, as u64; None if one is
/// negative, or the array is not of integers or too short.
fn widen(arr: &dyn Array, from: usize, out: &mut [u64]) -> Option<()> {
    macro_rules! signed {
        ($t:ty) => {{
            let src = arr
                .as_primitive::<$t>()
                .values()
                .get(from..from + out.len())?;
            let mut neg = 0;
            for (o, &v) in out.iter_mut().zip(src) {
                neg |= v;
                *o = v as u64;
            }
            (neg >= 0).then_some(())
        }};
    }
    macro_rules! unsigned {
        ($t:ty) => {{
            let src = arr
                .as_primitive::<$t>()
                .values()
                .get(from..from + out.len())?;
            for (o, &v) in out.iter_mut().zip(src) {
                *o = v as u64;
            }
            Some(())
        }};
    }
    match arr.data_type() {
        DataType::Int8 => signed!(Int8Type),
        DataType::Int16 => signed!(Int16Type),
        DataType::Int32 => signed!(Int32Type),
        DataType::Int64 => signed!(Int64Type),
        DataType::UInt8 => unsigned!(UInt8Type),
        DataType::UInt16 => unsigned!(UInt16Type),
        DataType::UInt32 => unsigned!(UInt32Type),
        DataType::UInt64 => unsigned!(UInt64Type),
        _ => None,
    }
}

/// True if `encoding` is CSR: `(d0 : dense, d1 : compressed)`, unique and ordered.
fn by_rows(encoding: &Encoding, layout: &Layout) -> bool {
    if layout.lvl_rank() != 2 || layout.ell || encoding.dim_rank() != 2 {
        return false;
    }
    let (l0, l1) = (&encoding.levels[0], &encoding.levels[1]);
    matches!(
        (&l0.expr, l0.format, &l1.expr, l1.format),
        (
            LevelExpr::Dim(0),
            LevelFormat::Dense,
            LevelExpr::Dim(1),
            LevelFormat::Compressed
        )
    ) && !l1.props.nonunique
        && !l1.props.nonordered
}
#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch, UInt64Array};
    use arrow_schema::{ArrowError, DataType, Field, Schema};
    use sptk_tensor::ConvertOptions;

    use crate::table::{Table, TableOptions};

    fn table(rows: ArrayRef, cols: ArrayRef, vals: Vec<f64>) -> Table {
        let schema = Arc::new(Schema::new(vec![
            Field::new("row", rows.data_type().clone(), true),
            Field::new("col", cols.data_type().clone(), true),
            Field::new("value", DataType::Float64, true),
        ]));
        let vals: ArrayRef = Arc::new(Float64Array::from(vals));
        let b = RecordBatch::try_new(schema.clone(), vec![rows, cols, vals]).unwrap();
        Table::from_batches(
            Path::new("t"),
            schema,
            [Ok::<_, ArrowError>(b)],
            &TableOptions {
                shape: Some(vec![5, 5]),
                ..TableOptions::default()
            },
        )
        .unwrap()
    }

    fn in_order(t: &Table) -> bool {
        let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
        let sptk_encoding::Target::Fixed(enc) = csr else {
            panic!("CSR is one encoding")
        };
        let dims = [t.shape().unwrap()[0], t.shape().unwrap()[1]];
        t.read_in_order::<f64>(dims, t.rows().unwrap(), &enc, &ConvertOptions::default())
            .is_some()
    }

    #[test]
    fn only_tables_in_csr_order_take_the_one_pass() {
        let i32s = |v: Vec<i32>| -> ArrayRef { Arc::new(Int32Array::from(v)) };
        let u64s = |v: Vec<u64>| -> ArrayRef { Arc::new(UInt64Array::from(v)) };
        let v3 = vec![1.0, 2.0, 3.0];
        assert!(in_order(&table(
            i32s(vec![0, 0, 2]),
            u64s(vec![1, 3, 0]),
            v3.clone()
        )));
        // A repeat, a column back inside a row, a row back.
        assert!(!in_order(&table(
            i32s(vec![0, 0, 2]),
            u64s(vec![1, 1, 0]),
            v3.clone()
        )));
        assert!(!in_order(&table(
            i32s(vec![0, 0, 2]),
            u64s(vec![3, 1, 0]),
            v3.clone()
        )));
        assert!(!in_order(&table(
            i32s(vec![0, 2, 1]),
            u64s(vec![1, 3, 0]),
            v3.clone()
        )));
        // A negative coordinate in the middle.
        assert!(!in_order(&table(
            i32s(vec![0, -1, 2]),
            u64s(vec![1, 3, 0]),
            v3
        )));
    }
}

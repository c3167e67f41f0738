//! Operands as the loops read them: each a matrix by rows (CSR) or, for the dot form's B,
//! by columns (CSC), reached through the planner exactly as the element-wise operations
//! reach theirs (`ewise::plan`: COO summed, BSR / ELL / n:m without their padding, the
//! other dimension order transposed, DCSR read as stored); positions as `u64`,
//! coordinates at one width ([`Coord`]) shared by every operand of a product.

use std::borrow::Cow;

use sptk_tensor::{Index, IndexVec, IndexWidth, Tensor};

use super::SpgemmError;

/// A coordinate type the loops are instantiated for: `u32` where every dimension fits,
/// `u64` otherwise (narrower stored coordinates are widened to `u32`, a copy).
pub(crate) trait Coord: Index {
    /// The array as a slice of `Self`, if it has this width.
    fn of(v: &IndexVec) -> Option<&[Self]>;
}

impl Coord for u32 {
    fn of(v: &IndexVec) -> Option<&[u32]> {
        match v {
            IndexVec::U32(x) => Some(x),
            _ => None,
        }
    }
}

impl Coord for u64 {
    fn of(v: &IndexVec) -> Option<&[u64]> {
        match v {
            IndexVec::U64(x) => Some(x),
            _ => None,
        }
    }
}

/// A matrix's positions (one per outer coordinate, plus one) and coordinates at `C`.
pub(crate) type Lists<'p, C> = (Cow<'p, [u64]>, Cow<'p, [C]>);

/// An operand after the planner.
pub(crate) struct Operand<'a> {
    /// The tensor as stored, or its conversion.
    pub tensor: Cow<'a, Tensor>,
    /// `as stored`, or the planner's route.
    pub route: String,
    /// Outer level dense (CSR, CSC) rather than compressed (DCSR, DCSC).
    outer_dense: bool,
    /// Outer and inner sizes.
    pub shape: (usize, usize),
}

/// `t`, a matrix, by rows (`by_columns` false) or by columns, through the planner where
/// it is not stored so.
pub(crate) fn plan<'a>(
    t: &'a Tensor,
    by_columns: bool,
    memory_limit: Option<u64>,
    name: &str,
) -> Result<Operand<'a>, SpgemmError> {
    if t.dim_sizes().len() != 2 {
        return Err(SpgemmError::Shape(format!(
            "{name} has {} dimensions; a sparse product takes matrices",
            t.dim_sizes().len()
        )));
    }
    let p = crate::ewise::plan(t, usize::from(by_columns), memory_limit)
        .map_err(|e| SpgemmError::Convert(format!("{name}: {e}")))?;
    Ok(Operand {
        tensor: p.tensor,
        route: p.route,
        outer_dense: p.outer_dense,
        shape: p.shape,
    })
}

impl Operand<'_> {
    /// `csr.p32.c32` (or dcsr, csc, dcsc): the levels and widths read.
    pub fn name(&self, by_columns: bool) -> String {
        let width = |a: Option<&IndexVec>| a.map_or(64, |a| a.width().bits());
        let kind = match (self.outer_dense, by_columns) {
            (true, false) => "csr",
            (true, true) => "csc",
            (false, false) => "dcsr",
            (false, true) => "dcsc",
        };
        format!(
            "{kind}.p{}.c{}",
            width(self.tensor.pos(1)),
            width(self.tensor.crd(1))
        )
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.tensor.entry_count()
    }

    /// The positions of every outer coordinate (`pos[i]..pos[i + 1]` are row `i`'s
    /// entries; a compressed outer level expanded, empty rows given empty ranges) and the
    /// inner coordinates at `C`.
    pub fn lists<C: Coord>(&self) -> Result<Lists<'_, C>, SpgemmError> {
        let missing = |what: &str| SpgemmError::Convert(format!("{what} missing"));
        let pos = self.tensor.pos(1).ok_or_else(|| missing("pos[1]"))?;
        let crd = self.tensor.crd(1).ok_or_else(|| missing("crd[1]"))?;
        let pos: Cow<'_, [u64]> = if self.outer_dense {
            match pos {
                IndexVec::U64(p) => Cow::Borrowed(&p[..]),
                other => Cow::Owned(other.to_u64_vec()),
            }
        } else {
            let outer = self.tensor.crd(0).ok_or_else(|| missing("crd[0]"))?;
            Cow::Owned(expand(self.shape.0, outer, pos))
        };
        let crd = match C::of(crd) {
            Some(c) => Cow::Borrowed(c),
            None => {
                let wide = crd.to_width(C::WIDTH).map_err(|o| {
                    SpgemmError::Convert(format!("coordinate {} past {:?}", o.value, o.width))
                })?;
                Cow::Owned(
                    C::of(&wide)
                        .ok_or_else(|| missing("coordinates at the loops' width"))?
                        .to_vec(),
                )
            }
        };
        Ok((pos, crd))
    }
}

/// Positions of every one of `rows` outer coordinates from a compressed outer level (its
/// coordinates `outer`, ascending, and their positions `pos`): rows it does not store
/// get empty ranges. Coordinates past `rows` are left out (a validated tensor has none).
fn expand(rows: usize, outer: &IndexVec, pos: &IndexVec) -> Vec<u64> {
    let mut full = vec![0u64; rows + 1];
    let mut at = 0u64;
    let mut next = 0usize;
    for q in 0..outer.len() {
        let (Some(r), Some(hi)) = (outer.get(q), pos.get(q + 1)) else {
            break;
        };
        let r = r as usize;
        if r >= rows || r < next {
            continue;
        }
        for slot in &mut full[next..=r] {
            *slot = at;
        }
        at = hi.max(at);
        next = r + 1;
    }
    for slot in &mut full[next..] {
        *slot = at;
    }
    full
}

/// The coordinate width the loops use for dimensions up to `largest`.
pub(crate) fn coord_width(largest: u64) -> IndexWidth {
    if largest <= u64::from(u32::MAX) {
        IndexWidth::W32
    } else {
        IndexWidth::W64
    }
}

/// A matrix's positions, coordinates and values, owned.
pub(crate) type Owned<C, V> = (Vec<u64>, Vec<C>, Vec<V>);

/// The transpose of `r` (`rows` rows; its coordinates below `cols`): `cols + 1` positions,
/// and each column's rows ascending with their values. The dot form's B by columns, made
/// from the B by rows the product reads anyway, so it holds only what the semiring reads
/// (the coordinates alone for `plus_pair` and `lor_land`, whose values are `()`).
///
/// # Errors
/// Memory for the arrays.
pub(crate) fn transpose<C: Coord, V: Copy>(
    r: &Rows<'_, C, V>,
    rows: usize,
    cols: usize,
) -> Result<Owned<C, V>, SpgemmError> {
    let alloc = |e: sptk_tensor::ConvertError| SpgemmError::Alloc(e.to_string());
    let nnz = r.crd.len().min(r.pos.last().map_or(0, |&p| p as usize));
    let mut pos: Vec<u64> = sptk_tensor::big_zeroed(cols + 1).map_err(alloc)?;
    for &j in r.crd.get(..nnz).unwrap_or_default() {
        if let Some(c) = pos.get_mut(j.to_u64() as usize + 1) {
            *c += 1;
        }
    }
    for q in 1..pos.len() {
        pos[q] += pos[q - 1];
    }
    let mut next: Vec<u64> = pos.get(..cols).unwrap_or_default().to_vec();
    let mut crd: Vec<C> = sptk_tensor::big_zeroed(nnz).map_err(alloc)?;
    let mut val: Vec<V> = match r.val.first() {
        Some(&v) if nnz > 0 => {
            let mut val = Vec::new();
            val.try_reserve_exact(nnz)
                .map_err(|e| SpgemmError::Alloc(format!("{nnz} values: {e}")))?;
            val.resize(nnz, v);
            val
        }
        _ => Vec::new(),
    };
    for i in 0..rows {
        let (ks, vs) = r.row(i);
        let row = C::from_u64_unchecked(i as u64);
        for (q, &k) in ks.iter().enumerate() {
            let Some(at) = next.get_mut(k.to_u64() as usize) else {
                continue;
            };
            let to = *at as usize;
            *at += 1;
            if let Some(slot) = crd.get_mut(to) {
                *slot = row;
            }
            if let (Some(slot), Some(&v)) = (val.get_mut(to), vs.get(q)) {
                *slot = v;
            }
        }
    }
    Ok((pos, crd, val))
}

/// A matrix's rows (or columns) as typed slices.
#[derive(Debug)]
pub(crate) struct Rows<'a, C, V> {
    /// `pos[i]..pos[i + 1]`: row `i`'s entries.
    pub pos: &'a [u64],
    /// Coordinates within each row, ascending.
    pub crd: &'a [C],
    /// Values (`()` on the pattern).
    pub val: &'a [V],
}

impl<C, V> Clone for Rows<'_, C, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C, V> Copy for Rows<'_, C, V> {}

impl<'a, C, V> Rows<'a, C, V> {
    /// Row `i`'s coordinates and values; empty where the positions do not make a range
    /// inside the arrays (never for a validated tensor) or `i` is past the last row.
    #[inline(always)]
    pub fn row(&self, i: usize) -> (&'a [C], &'a [V]) {
        let (Some(&lo), Some(&hi)) = (self.pos.get(i), self.pos.get(i.wrapping_add(1))) else {
            return (&[], &[]);
        };
        let range = lo as usize..hi as usize;
        match (self.crd.get(range.clone()), self.val.get(range)) {
            (Some(c), Some(v)) => (c, v),
            _ => (&[], &[]),
        }
    }

    /// Entries in row `i` (0 past the last row).
    #[inline(always)]
    pub fn len(&self, i: usize) -> u64 {
        match (self.pos.get(i), self.pos.get(i.wrapping_add(1))) {
            (Some(&lo), Some(&hi)) => hi.saturating_sub(lo),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_outer_level_expands_to_every_row() {
        let outer = IndexVec::from_vec_u64(vec![1, 3], IndexWidth::W32).unwrap();
        let pos = IndexVec::from_vec_u64(vec![0, 2, 5], IndexWidth::W32).unwrap();
        assert_eq!(expand(5, &outer, &pos), [0, 0, 2, 2, 5, 5]);
    }

    #[test]
    fn the_transpose_keeps_rows_ascending_in_each_column_with_their_values() {
        // [[0, 1, 2], [3, 0, 0], [0, 4, 5]] by rows, and an empty fourth column.
        let pos = [0u64, 2, 3, 5];
        let crd = [1u32, 2, 0, 1, 2];
        let val = [1.0f64, 2.0, 3.0, 4.0, 5.0];
        let r = Rows {
            pos: &pos,
            crd: &crd,
            val: &val,
        };
        let (tp, tc, tv) = transpose(&r, 3, 4).unwrap();
        assert_eq!(tp, [0, 1, 3, 5, 5]);
        assert_eq!(tc, [1, 0, 2, 0, 2]);
        assert_eq!(tv, [3.0, 1.0, 4.0, 2.0, 5.0]);
        // On the pattern the values take no memory.
        let units = [(); 5];
        let pattern = Rows {
            pos: &pos,
            crd: &crd,
            val: &units,
        };
        let (_, c, v) = transpose(&pattern, 3, 4).unwrap();
        assert_eq!((c, v.len()), (tc, 5));
        // No entries: the positions alone.
        let empty = Rows::<u32, f64> {
            pos: &[0, 0],
            crd: &[],
            val: &[],
        };
        assert_eq!(
            transpose(&empty, 1, 2).unwrap(),
            (vec![0, 0, 0], vec![], vec![])
        );
    }
}

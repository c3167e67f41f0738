//! Compressed matrix arrays as files keep them (SciPy's csr / csc / bsr, CSR and CSC in HDF5
//! containers) made into a tensor: checked once, with the array at fault named, then handed
//! to [`Tensor::try_from_parts`] at their stored widths, so nothing goes through
//! coordinates. Arrays whose segments are not strictly increasing (SciPy keeps unsorted or
//! repeated indices as they are) come out as coordinates instead, to be sorted and summed
//! by the conversion.

use crate::budget::{Budget, Need};
use crate::entries::{coord_width_for, Entries};
use crate::index::{Index, IndexVec, IndexWidth};
use crate::par;
use crate::tensor::{LevelArrays, Tensor};
use crate::value::{Value, ValueVec, ValueVecAccess};
use crate::with_values;

/// A matrix stored by rows (CSR, BSR) or columns (CSC) as pointers, indices and values.
#[derive(Clone, Debug)]
pub struct CompressedParts {
    /// `[rows, columns]`.
    pub dims: [u64; 2],
    /// Segments are rows (CSR, BSR) rather than columns (CSC).
    pub by_rows: bool,
    /// `[r, c]` of BSR blocks; `[1, 1]` for CSR and CSC. Blocks are stored row-major and
    /// must tile the matrix (SciPy's rule).
    pub block: [u64; 2],
    /// Pointers: one per segment, plus one.
    pub pos: IndexVec,
    /// The inner (block) coordinate of every stored entry or block.
    pub crd: IndexVec,
    /// The values: one per index, or `r * c` per block.
    pub values: ValueVec,
}

/// Which array of [`CompressedParts`] is at fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartsArray {
    /// The dimensions or block size.
    Shape,
    /// The pointers.
    Pos,
    /// The indices.
    Crd,
    /// The values.
    Values,
}

/// Compressed arrays that do not make a matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartsError {
    /// The array at fault.
    pub array: PartsArray,
    /// What is wrong, with the element and its value.
    pub message: String,
}

/// What compressed arrays became.
#[derive(Debug)]
pub enum FromCompressed {
    /// Level arrays in CSR, CSC or BSR at the stored widths.
    Tensor(Tensor),
    /// Coordinates, because some segment is unsorted or repeats an index.
    Entries(Entries),
}

fn err(array: PartsArray, message: String) -> PartsError {
    PartsError { array, message }
}

/// A width as an encoding states it (64 is written 0).
fn width_field(w: IndexWidth) -> u8 {
    match w {
        IndexWidth::W64 => 0,
        w => w.bits() as u8,
    }
}

/// Checks `p` and makes it a tensor, or coordinates where a segment is not strictly
/// increasing: [`from_compressed_within`] the machine's default memory limit.
///
/// # Errors
/// As for [`from_compressed_within`].
pub fn from_compressed(p: CompressedParts) -> Result<FromCompressed, PartsError> {
    from_compressed_within(p, None)
}

/// Checks `p` and makes it a tensor, or coordinates where a segment is not strictly
/// increasing. Every array this makes (64-bit copies of the pointers and of packed
/// indices; the coordinates and values of unsorted segments) is counted against
/// `memory_limit` (the machine's default where `None`) before it is allocated.
///
/// # Errors
/// The first broken rule, naming the array: block size not tiling the shape, pointer count,
/// first and last pointer, decreasing pointers, an index past the inner size, a values
/// count other than one per index (or block); or the array whose copy passes the memory
/// limit or cannot be allocated.
pub fn from_compressed_within(
    p: CompressedParts,
    memory_limit: Option<u64>,
) -> Result<FromCompressed, PartsError> {
    let budget = Budget::new(memory_limit);
    let charge = |array: PartsArray, need: Need| {
        budget
            .charge(&[need])
            .map_err(|e| err(array, e.to_string()))
    };
    let [r, c] = p.block;
    let [rows, cols] = p.dims;
    if r == 0 || c == 0 || rows % r != 0 || cols % c != 0 || (!p.by_rows && (r, c) != (1, 1)) {
        return Err(err(
            PartsArray::Shape,
            format!("blocks of {r} x {c} do not tile a {rows} x {cols} matrix"),
        ));
    }
    let (outer, inner) = if p.by_rows {
        (rows / r, cols / c)
    } else {
        (cols, rows)
    };
    let (outer_words, inner_words) = match (p.by_rows, r * c) {
        (true, 1) => ("rows", "columns"),
        (false, _) => ("columns", "rows"),
        (true, _) => ("block rows", "block columns"),
    };
    if p.pos.len() as u128 != u128::from(outer) + 1 {
        return Err(err(
            PartsArray::Pos,
            format!(
                "{} pointers for {outer} {outer_words}; expected {}",
                p.pos.len(),
                u128::from(outer) + 1
            ),
        ));
    }
    let n = p.crd.len() as u64;
    let per = r * c;
    if p.values.len() as u128 != u128::from(n) * u128::from(per) {
        return Err(err(
            PartsArray::Values,
            format!(
                "{} values for {n} indices; expected {}",
                p.values.len(),
                u128::from(n) * u128::from(per)
            ),
        ));
    }
    charge(
        PartsArray::Pos,
        Need::new("pointers as 64-bit", p.pos.len() as u64, 64),
    )?;
    let pos = p.pos.to_u64_vec();
    check_pointers(&pos, n)?;
    let sorted = match &p.crd {
        IndexVec::U8(c) => check_indices(&pos, c, inner, inner_words)?,
        IndexVec::U16(c) => check_indices(&pos, c, inner, inner_words)?,
        IndexVec::U32(c) => check_indices(&pos, c, inner, inner_words)?,
        IndexVec::U64(c) => check_indices(&pos, c, inner, inner_words)?,
        packed => {
            charge(PartsArray::Crd, Need::new("indices as 64-bit", n, 64))?;
            check_indices(&pos, &packed.to_u64_vec(), inner, inner_words)?
        }
    };
    if sorted {
        let mut enc = match (p.by_rows, per) {
            (true, 1) => sptk_encoding::csr(),
            (false, _) => sptk_encoding::csc(),
            (true, _) => sptk_encoding::bsr(r, c),
        };
        enc.pos_width = width_field(p.pos.width());
        enc.crd_width = width_field(p.crd.width());
        let mut levels = vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(p.pos),
                crd: Some(p.crd),
            },
        ];
        if per > 1 {
            levels.extend(levels[..1].to_vec());
            levels.push(levels[0].clone());
        }
        return Tensor::try_from_parts(enc, vec![rows, cols], levels, p.values)
            .map(FromCompressed::Tensor)
            .map_err(|e| err(PartsArray::Pos, e.to_string()));
    }
    // Unsorted segments become coordinates: 64-bit indices, then two coordinates and a
    // value per entry (at most one per stored value).
    let values = p.values;
    let stored = values.len() as u64;
    charge(PartsArray::Crd, Need::new("indices as 64-bit", n, 64))?;
    charge(
        PartsArray::Crd,
        Need::new("coordinates", u128::from(stored) * 2, 64),
    )?;
    let vbits = values.value_type().size() as u32 * 8;
    charge(
        PartsArray::Values,
        Need::new("coordinate values", stored, vbits),
    )?;
    let crd = p.crd.to_u64_vec();
    let e = with_values!(&values, v => expand(&pos, &crd, v, p.dims, p.by_rows, [r, c]));
    e.map(FromCompressed::Entries)
        .map_err(|e| err(PartsArray::Crd, e))
}

/// Pointers start at 0, never decrease and end at `n`.
fn check_pointers(pos: &[u64], n: u64) -> Result<(), PartsError> {
    let bad = |m: String| Err(err(PartsArray::Pos, m));
    match pos.first() {
        Some(0) => {}
        Some(&x) => return bad(format!("starts at {x}, not 0")),
        None => return bad("is empty".into()),
    }
    if let Some(i) = pos.windows(2).position(|w| w[1] < w[0]) {
        return bad(format!(
            "decreases: element {} is {}, element {i} is {}",
            i + 1,
            pos[i + 1],
            pos[i]
        ));
    }
    match pos.last() {
        Some(&end) if end != n => bad(format!(
            "ends at {end}, but there are {n} indices (the last pointer is the count)"
        )),
        _ => Ok(()),
    }
}

/// Checks that every index is below `inner`, in one pass over the segments at the indices'
/// own width; returns whether every segment is strictly increasing.
fn check_indices<I: Index>(
    pos: &[u64],
    crd: &[I],
    inner: u64,
    inner_words: &str,
) -> Result<bool, PartsError> {
    // Per chunk of segments: the first index past `inner`, and whether all are sorted.
    let found = par::fold_chunks(pos.len() - 1, |rg| {
        let mut sorted = true;
        for i in rg {
            // The pointers were checked: non-decreasing and ending at `crd.len()`.
            let seg = crd.get(pos[i] as usize..pos[i + 1] as usize).unwrap_or(&[]);
            if let Some(at) = seg.iter().position(|x| x.to_u64() >= inner) {
                return (Some(pos[i] as usize + at), sorted);
            }
            sorted &= seg.windows(2).all(|w| w[1] > w[0]);
        }
        (None, sorted)
    });
    if let Some(at) = found.iter().find_map(|f| f.0) {
        return Err(err(
            PartsArray::Crd,
            format!(
                "element {at} is {}, past the last of the {inner} {inner_words}",
                crd[at].to_u64()
            ),
        ));
    }
    Ok(found.iter().all(|f| f.1))
}

/// Coordinates of every stored nonzero (every value of a block that is not zero).
fn expand<V: Value + ValueVecAccess>(
    pos: &[u64],
    crd: &[u64],
    vals: &[V],
    dims: [u64; 2],
    by_rows: bool,
    [r, c]: [u64; 2],
) -> Result<Entries, String> {
    let per = (r * c) as usize;
    let room = || {
        crate::alloc::with_capacity::<u64>(vals.len())
            .map_err(|e| format!("coordinates of {} values: {e}", vals.len()))
    };
    let (mut rows, mut cols) = (room()?, room()?);
    let mut out = crate::alloc::with_capacity::<V>(vals.len())
        .map_err(|e| format!("{} values: {e}", vals.len()))?;
    for (o, w) in pos.windows(2).enumerate() {
        for k in w[0] as usize..w[1] as usize {
            let (Some(&i), Some(block)) = (crd.get(k), vals.get(k * per..(k + 1) * per)) else {
                continue;
            };
            for (q, &x) in block.iter().enumerate() {
                if per > 1 && x.is_zero() {
                    continue;
                }
                let (dr, dc) = (q as u64 / c, q as u64 % c);
                let (row, col) = if by_rows {
                    (o as u64 * r + dr, i * c + dc)
                } else {
                    (i, o as u64)
                };
                rows.push(row);
                cols.push(col);
                out.push(x);
            }
        }
    }
    let coords = vec![
        IndexVec::from_vec_u64(rows, coord_width_for(dims[0])),
        IndexVec::from_vec_u64(cols, coord_width_for(dims[1])),
    ];
    let coords = coords
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|o| {
            crate::EntryError::OutOfBounds {
                entry: 0,
                dim: 0,
                coord: o.value,
                size: 0,
            }
            .to_string()
        })?;
    Entries::from_checked_arrays(dims.to_vec(), coords, V::wrap(out)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(pos: &[u64], crd: &[u64], vals: Vec<f64>, block: [u64; 2]) -> CompressedParts {
        CompressedParts {
            dims: [4, 6],
            by_rows: true,
            block,
            pos: IndexVec::from_u64s(pos, IndexWidth::W32).unwrap(),
            crd: IndexVec::from_u64s(crd, IndexWidth::W32).unwrap(),
            values: ValueVec::F64(vals.into()),
        }
    }

    #[test]
    fn sorted_arrays_become_level_arrays_at_their_widths() {
        let p = parts(
            &[0, 2, 2, 3, 4],
            &[1, 5, 0, 2],
            vec![1.0, 2.0, 3.0, 4.0],
            [1, 1],
        );
        let FromCompressed::Tensor(t) = from_compressed(p).unwrap() else {
            panic!("expected level arrays")
        };
        assert_eq!(t.pos(1).unwrap().width(), IndexWidth::W32);
        assert_eq!(t.to_entries().len(), 4);
        // BSR 2x3: two block rows, two block columns.
        let vals: Vec<f64> = (1..=12).map(f64::from).collect();
        let p = parts(&[0, 1, 2], &[1, 0], vals, [2, 3]);
        let FromCompressed::Tensor(t) = from_compressed(p).unwrap() else {
            panic!("expected level arrays")
        };
        let e = t.to_entries();
        assert_eq!((e.len(), e.coord(0, 0), e.coord(0, 1)), (12, 0, 3));
    }

    /// The arrays made from the parts are counted before they are allocated: the 64-bit
    /// pointers (5 x 8 = 40 bytes), then for unsorted segments the 64-bit indices (32),
    /// two coordinates per value (64) and the values (32).
    #[test]
    fn copies_are_counted_against_the_memory_limit() {
        let unsorted = || parts(&[0, 2, 2, 4, 4], &[5, 1, 2, 2], vec![1.0; 4], [1, 1]);
        let e = from_compressed_within(unsorted(), Some(39)).unwrap_err();
        assert_eq!(e.array, PartsArray::Pos, "{}", e.message);
        assert!(
            e.message.contains("memory limit of 39 bytes"),
            "{}",
            e.message
        );
        let e = from_compressed_within(unsorted(), Some(100)).unwrap_err();
        assert_eq!(e.array, PartsArray::Crd, "{}", e.message);
        assert!(e.message.contains("coordinates"), "{}", e.message);
        let e = from_compressed_within(unsorted(), Some(167)).unwrap_err();
        assert_eq!(e.array, PartsArray::Values, "{}", e.message);
        assert!(from_compressed_within(unsorted(), Some(168)).is_ok());
    }

    #[test]
    fn unsorted_or_repeated_indices_become_coordinates() {
        let p = parts(
            &[0, 2, 2, 4, 4],
            &[5, 1, 2, 2],
            vec![1.0, 2.0, 3.0, 4.0],
            [1, 1],
        );
        let FromCompressed::Entries(e) = from_compressed(p).unwrap() else {
            panic!("expected coordinates")
        };
        assert_eq!(e.len(), 4);
        assert_eq!((e.coord(0, 0), e.coord(0, 1), e.coord(3, 0)), (0, 5, 2));
    }

    #[test]
    fn each_broken_rule_names_its_array() {
        let cases = [
            (
                parts(&[0, 2, 4], &[1, 2, 3, 4], vec![1.0; 4], [1, 1]),
                PartsArray::Pos,
                "3 pointers for 4 rows",
            ),
            (
                parts(&[0, 2, 2, 3, 4], &[1, 2, 3, 4], vec![1.0; 3], [1, 1]),
                PartsArray::Values,
                "3 values for 4 indices",
            ),
            (
                parts(&[0, 2, 2, 3, 4], &[1, 6, 3, 4], vec![1.0; 4], [1, 1]),
                PartsArray::Crd,
                "element 1 is 6",
            ),
            (
                parts(&[0, 2, 1, 3, 4], &[1, 2, 3, 4], vec![1.0; 4], [1, 1]),
                PartsArray::Pos,
                "decreases",
            ),
            (
                parts(&[0, 2, 2, 3, 5], &[1, 2, 3, 4], vec![1.0; 4], [1, 1]),
                PartsArray::Pos,
                "ends at 5",
            ),
            (
                parts(&[1, 2, 2, 3, 4], &[1, 2, 3, 4], vec![1.0; 4], [1, 1]),
                PartsArray::Pos,
                "starts at 1",
            ),
            (
                parts(&[0, 1], &[0], vec![1.0; 9], [3, 3]),
                PartsArray::Shape,
                "do not tile",
            ),
        ];
        for (p, array, want) in cases {
            let e = from_compressed(p).unwrap_err();
            assert_eq!(e.array, array, "{e:?}");
            assert!(e.message.contains(want), "{}", e.message);
        }
    }
}

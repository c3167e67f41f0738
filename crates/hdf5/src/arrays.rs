//! Turning arrays read from a container into the core's content: compressed
//! (CSR/CSC-like) arrays checked and handed over as level arrays, with no trip through
//! coordinates, or as coordinates where they are not canonical (unsorted or repeated
//! indices, as `.h5ad` files often hold); coordinate arrays; dense arrays reduced to their
//! nonzeros.

use std::sync::Arc;

use sptk_encoding::Encoding;
use sptk_tensor::{
    coord_width_for, Entries, IndexVec, IndexWidth, Labels, LevelArrays, Tensor, Value, ValueVec,
};

use crate::error::{At, H5Error};
use crate::h5::H5;
use crate::plan::Planned;

/// What a matrix in a container reads as.
pub enum Content {
    /// Coordinates (sorted and summed by the conversion).
    Entries(Entries),
    /// Checked level arrays.
    Tensor(Tensor),
    /// CSR / CSC arrays not read yet: where they lie in the file (see [`crate::execute`]).
    Planned(Planned),
}

/// Runs `$body` with `$s` bound to the elements of an [`IndexVec`] as a typed slice.
macro_rules! with_index {
    ($v:expr, $s:ident => $body:expr) => {
        match $v {
            IndexVec::U8(x) => {
                let $s: &[u8] = &x[..];
                $body
            }
            IndexVec::U16(x) => {
                let $s: &[u16] = &x[..];
                $body
            }
            IndexVec::U32(x) => {
                let $s: &[u32] = &x[..];
                $body
            }
            IndexVec::U64(x) => {
                let $s: &[u64] = &x[..];
                $body
            }
            IndexVec::Packed2 { .. } => {
                let wide = $v.to_u64_vec();
                let $s: &[u64] = &wide;
                $body
            }
        }
    };
}

/// Compressed arrays as a container stores them: `pos` over the outer dimension, `crd`
/// the inner coordinates, `values` one per coordinate.
pub(crate) struct Compressed<'a> {
    /// Rows and columns of the matrix.
    pub dims: [u64; 2],
    /// Whether the outer dimension is the rows (CSR) or the columns (CSC).
    pub by_rows: bool,
    /// Outer pointers.
    pub pos: IndexVec,
    /// Inner coordinates.
    pub crd: IndexVec,
    /// Values.
    pub values: ValueVec,
    /// The objects the three arrays came from, for errors.
    pub names: [&'a str; 3],
}

/// Compressed arrays as datasets (each checked to be 1-D).
pub(crate) struct CompressedDs<'a> {
    /// Rows and columns of the matrix.
    pub dims: [u64; 2],
    /// Whether the outer dimension is the rows (CSR) or the columns (CSC).
    pub by_rows: bool,
    /// Outer pointers, inner coordinates and values.
    pub datasets: [&'a hdf5::Dataset; 3],
    /// Their names, for errors.
    pub names: [&'a str; 3],
}

/// Compressed arrays planned ([`Content::Planned`]) when all three datasets have plans,
/// else read and checked by [`compressed`].
pub(crate) fn compressed_ds(
    h: &H5,
    c: CompressedDs,
    notes: &mut Vec<String>,
) -> Result<Content, H5Error> {
    if let Some(p) = plan_compressed(h, &c)? {
        return Ok(Content::Planned(p));
    }
    let [pos, crd, values] = c.datasets;
    let [pos_name, crd_name, val_name] = c.names;
    compressed(
        h.at,
        Compressed {
            dims: c.dims,
            by_rows: c.by_rows,
            pos: h.index_ds(pos, pos_name)?,
            crd: h.index_ds(crd, crd_name)?,
            values: h.values_ds(values, val_name)?,
            names: c.names,
        },
        notes,
    )
}

/// The plans of compressed arrays, when all three datasets have one.
pub(crate) fn plan_compressed(h: &H5, c: &CompressedDs) -> Result<Option<Planned>, H5Error> {
    let [pos, crd, values] = c.datasets;
    let [pos_name, crd_name, val_name] = c.names;
    let plans = (
        h.index_plan(pos, pos_name)?,
        h.index_plan(crd, crd_name)?,
        h.values_plan(values, val_name)?,
    );
    let (Some(p), Some(i), Some(v)) = plans else {
        return Ok(None);
    };
    Ok(Some(Planned {
        dims: c.dims,
        by_rows: c.by_rows,
        arrays: [p, i, v],
        names: c.names.map(str::to_string),
    }))
}

/// Reads the arrays of planned content from the file (`src`), and checks them as
/// [`compressed`] does; other content is returned as it is.
pub(crate) fn execute(
    src: &crate::direct::Source,
    content: Content,
    notes: &mut Vec<String>,
) -> Result<Content, H5Error> {
    let Content::Planned(p) = content else {
        return Ok(content);
    };
    let [pos, crd, values] = &p.arrays;
    let [pos_name, crd_name, val_name] = &p.names;
    let c = Compressed {
        dims: p.dims,
        by_rows: p.by_rows,
        pos: crate::direct::index(src, pos, pos_name)?,
        crd: crate::direct::index(src, crd, crd_name)?,
        values: crate::direct::values(src, values, val_name)?,
        names: [pos_name, crd_name, val_name],
    };
    compressed(src.at, c, notes)
}

/// Checks compressed arrays and makes them content: level arrays when every segment's
/// coordinates are strictly increasing, else coordinates (with a note in `notes`).
pub(crate) fn compressed(
    at: At,
    c: Compressed,
    notes: &mut Vec<String>,
) -> Result<Content, H5Error> {
    let [rows, cols] = c.dims;
    let (outer, inner) = if c.by_rows {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let [pos_name, crd_name, val_name] = c.names;
    let (outer_words, inner_words) = if c.by_rows {
        ("rows", "columns")
    } else {
        ("columns", "rows")
    };
    if c.pos.len() as u128 != outer as u128 + 1 {
        return Err(at.err(
            pos_name,
            format!(
                "{} pointers for {outer} {outer_words}; expected {}",
                c.pos.len(),
                outer as u128 + 1
            ),
        ));
    }
    if c.crd.len() != c.values.len() {
        return Err(at.err(
            val_name,
            format!(
                "{} values for {} indices in {crd_name}; a matrix stores one value per index",
                c.values.len(),
                c.crd.len()
            ),
        ));
    }
    let pos = c.pos.to_u64_vec();
    check_pointers(at, &pos, outer, c.crd.len() as u64, pos_name, crd_name)?;
    let order = with_index!(&c.crd, s => scan(s, &pos, inner));
    let canonical = match order {
        Scan::OutOfRange { at: i, value } => {
            return Err(at.err(
                crd_name,
                format!("element {i} is {value}, past the last of the {inner} {inner_words}"),
            ))
        }
        Scan::Canonical => true,
        Scan::Unsorted => false,
    };
    let dims = vec![rows, cols];
    if canonical {
        let text = format!(
            "map = (i, j) -> ({}), posWidth = {}, crdWidth = {}",
            if c.by_rows {
                "i : dense, j : compressed"
            } else {
                "j : dense, i : compressed"
            },
            mlir_width(c.pos.width()),
            mlir_width(c.crd.width())
        );
        let encoding: Encoding = text.parse().map_err(|e| at.err(pos_name, format!("{e}")))?;
        let levels = vec![
            LevelArrays {
                pos: None,
                crd: None,
            },
            LevelArrays {
                pos: Some(c.pos),
                crd: Some(c.crd),
            },
        ];
        let t = Tensor::try_from_parts(encoding, dims, levels, c.values)
            .map_err(|e| at.err(pos_name, e.to_string()))?;
        return Ok(Content::Tensor(t));
    }
    notes.push(format!(
        "{crd_name}: indices are not sorted within each of the {outer_words}, or repeat; they were sorted and repeated ones summed"
    ));
    let outer_crd = expand(&pos, coord_width_for(outer));
    // Moved when it has the width already; every coordinate was checked to be below
    // `inner`, which the width holds.
    let width = coord_width_for(inner);
    let inner_crd = if c.crd.width() == width {
        c.crd
    } else {
        c.crd.to_width(width).map_err(|o| {
            at.err(
                crd_name,
                format!("{} does not fit {} bits", o.value, o.width.bits()),
            )
        })?
    };
    let coords = if c.by_rows {
        vec![outer_crd, inner_crd]
    } else {
        vec![inner_crd, outer_crd]
    };
    Entries::from_checked_arrays(dims, coords, c.values)
        .map(Content::Entries)
        .map_err(|e| at.err(crd_name, e.to_string()))
}

/// Checks pointers over `parents` positions into `n` coordinates (of `crd_name`): one
/// more than the parents, from 0, never decreasing, ending at `n`.
pub(crate) fn check_pointers(
    at: At,
    pos: &[u64],
    parents: u64,
    n: u64,
    pos_name: &str,
    crd_name: &str,
) -> Result<(), H5Error> {
    if pos.len() as u128 != parents as u128 + 1 {
        return Err(at.err(
            pos_name,
            format!(
                "{} pointers for {parents} positions above; expected {}",
                pos.len(),
                parents as u128 + 1
            ),
        ));
    }
    if pos[0] != 0 {
        return Err(at.err(pos_name, format!("starts at {}, not 0", pos[0])));
    }
    if let Some(i) = pos.windows(2).position(|w| w[1] < w[0]) {
        return Err(at.err(
            pos_name,
            format!(
                "decreases: element {} is {}, element {i} is {}",
                i + 1,
                pos[i + 1],
                pos[i]
            ),
        ));
    }
    let end = pos[pos.len() - 1];
    if end != n {
        return Err(at.err(
            pos_name,
            format!("ends at {end}, but {crd_name} holds {n} indices (nnz mismatch)"),
        ));
    }
    Ok(())
}

/// A width as an encoding states it: 64 is MLIR's default, written 0.
fn mlir_width(w: IndexWidth) -> u32 {
    match w {
        IndexWidth::W64 => 0,
        w => w.bits(),
    }
}

enum Scan {
    Canonical,
    Unsorted,
    OutOfRange { at: usize, value: u64 },
}

/// Bounds-checks every coordinate and tells whether each segment is strictly increasing.
fn scan<C: Copy + Into<u64> + Sync>(crd: &[C], pos: &[u64], inner: u64) -> Scan {
    // In parallel pieces: the first coordinate out of range, then whether every segment
    // (one per outer coordinate) strictly increases.
    let first_bad = sptk_tensor::par::fold_chunks(crd.len(), |r| {
        let start = r.start;
        crd[r]
            .iter()
            .position(|&x| x.into() >= inner)
            .map(|p| start + p)
    });
    if let Some(at) = first_bad.into_iter().flatten().next() {
        return Scan::OutOfRange {
            at,
            value: crd[at].into(),
        };
    }
    let outer = pos.len().saturating_sub(1);
    let sorted = sptk_tensor::par::fold_chunks(outer, |rows| {
        rows.into_iter().all(|i| {
            // The pointers were checked to be non-decreasing and to end at `crd.len()`.
            let seg = &crd[pos[i] as usize..pos[i + 1] as usize];
            seg.windows(2).all(|p| p[1].into() > p[0].into())
        })
    });
    if sorted.into_iter().all(|ok| ok) {
        Scan::Canonical
    } else {
        Scan::Unsorted
    }
}

/// The outer coordinate of every entry, from checked pointers.
pub(crate) fn expand(pos: &[u64], width: IndexWidth) -> IndexVec {
    let n = pos.last().copied().unwrap_or(0) as usize;
    let mut out = IndexVec::with_capacity(width, n);
    for (i, w) in pos.windows(2).enumerate() {
        for _ in w[0]..w[1] {
            out.push_unchecked(i as u64);
        }
    }
    out
}

/// A matrix read from a container: what it holds and the names of its dimensions.
pub struct Matrix {
    /// The object read (`/X`, `/matrix`, `A`).
    pub object: String,
    /// The kind of file.
    pub kind: crate::Kind,
    /// How the object stores the matrix, in words (`csr_matrix`, `binsparse CSR`, ...).
    pub layout: String,
    /// What was read.
    pub content: Content,
    /// Labels per dimension (empty, or one per dimension).
    pub labels: Vec<Option<Arc<Labels>>>,
    /// What a user should know (sorted indices, labels taken from where, ...).
    pub notes: Vec<String>,
}

impl Matrix {
    /// Dimension sizes.
    pub fn dim_sizes(&self) -> &[u64] {
        match &self.content {
            Content::Entries(e) => e.dim_sizes(),
            Content::Tensor(t) => t.dim_sizes(),
            Content::Planned(p) => &p.dims,
        }
    }
}

/// A dense 2-D array reduced to its nonzero positions. `transposed`: the stored array is
/// the matrix's transpose (MATLAB keeps column-major order, so HDF5 sees cols x rows).
pub(crate) fn dense(h: &H5, ds: &hdf5::Dataset, transposed: bool) -> Result<Content, H5Error> {
    let object = ds.name();
    let shape = ds.shape();
    let [a, b] = shape[..] else {
        return Err(h.at.err(
            object,
            format!(
                "a {}-dimensional dense array; a matrix has two",
                shape.len()
            ),
        ));
    };
    let (rows, cols) = if transposed {
        (b as u64, a as u64)
    } else {
        (a as u64, b as u64)
    };
    let values = h.values_ds(ds, &object)?;
    let mut e = Entries::new(vec![rows, cols], values.value_type());
    sptk_tensor::with_values!(&values, v => {
        for (k, x) in v.iter().enumerate() {
            if x.is_zero() {
                continue;
            }
            let (s, t) = ((k / b) as u64, (k % b) as u64);
            let coords = if transposed { [t, s] } else { [s, t] };
            e.push(&coords, *x).map_err(|err| h.at.err(object.as_str(), err.to_string()))?;
        }
    });
    Ok(Content::Entries(e))
}

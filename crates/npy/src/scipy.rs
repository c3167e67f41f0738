//! SciPy sparse matrices in `.npz` archives, as `scipy.sparse.save_npz` writes them:
//! `format.npy` (a byte string: `csr`, `csc`, `coo`, `bsr` or `dia`), `shape.npy`, and
//! the format's arrays. csr, csc and bsr become level arrays at their stored index
//! widths (int32 read as 32-bit after a check for negatives), checked by
//! [`sptk_tensor::from_compressed_within`]; coo and dia become coordinates.

use sptk_tensor::{
    coord_width_for, from_compressed_within, CompressedParts, Entries, EntryError, FromCompressed,
    IndexVec, PartsArray, Tensor, Value, ValueVec, ValueVecAccess,
};

use crate::npz::Npz;
use crate::NpyError;

/// A matrix read from a SciPy `.npz` archive.
#[derive(Debug)]
pub enum Sparse {
    /// Level arrays (csr, csc, bsr with sorted indices).
    Tensor(Tensor),
    /// Coordinates (coo, dia, and compressed arrays with unsorted or repeated indices).
    Entries(Entries),
}

/// What [`read_scipy`] found.
#[derive(Debug)]
pub struct SciPyMatrix {
    /// SciPy's format (`csr`, ...).
    pub format: String,
    /// The matrix.
    pub content: Sparse,
    /// What a user should know (indices sorted, ...).
    pub notes: Vec<String>,
}

/// The SciPy formats this reader takes.
pub const SCIPY_FORMATS: &[&str] = &["csr", "csc", "coo", "bsr", "dia"];

/// Whether the archive is a SciPy sparse matrix (it has a `format.npy` member).
pub fn is_scipy(npz: &Npz) -> bool {
    npz.names().contains(&"format.npy")
}

/// Reads the SciPy sparse matrix an archive holds.
///
/// # Errors
/// A missing member, an unknown format, arrays that disagree (each named with the
/// element at fault), or arrays larger than `memory_limit` (the machine's default where
/// `None`) together.
pub fn read_scipy(npz: &Npz, memory_limit: Option<u64>) -> Result<SciPyMatrix, NpyError> {
    let format = npz.text("format.npy")?.to_ascii_lowercase();
    if !SCIPY_FORMATS.contains(&format.as_str()) {
        return Err(npz.err(format!(
            "format.npy: '{format}' is not a SciPy format this reader knows ({})",
            SCIPY_FORMATS.join(", ")
        )));
    }
    let shape = npz.array("shape.npy")?.integers(MAX_SHAPE)?;
    let dims = match shape[..] {
        [r, c] if r >= 0 && c >= 0 => [r as u64, c as u64],
        _ => {
            return Err(npz.err(format!(
                "shape.npy: {shape:?} is not the shape of a matrix (two sizes, not negative)"
            )))
        }
    };
    let members: &[&str] = match format.as_str() {
        "coo" => &["row.npy", "col.npy", "data.npy"],
        "dia" => &["offsets.npy", "data.npy"],
        _ => &["indptr.npy", "indices.npy", "data.npy"],
    };
    let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
    let charged = charge(npz, members, limit)?;
    let mut notes = Vec::new();
    let content = match format.as_str() {
        "coo" => Sparse::Entries(coo(npz, dims)?),
        "dia" => Sparse::Entries(dia(npz, dims, (charged, limit))?),
        // What the arrays read leave of the budget bounds the copies made from them.
        f => {
            let room = u64::try_from(u128::from(limit).saturating_sub(charged)).unwrap_or(0);
            compressed(npz, f, dims, room, &mut notes)?
        }
    };
    Ok(SciPyMatrix {
        format,
        content,
        notes,
    })
}

/// Refuses members whose arrays together pass the memory limit, before reading them;
/// returns the bytes they take. DIA offsets are counted twice over: as read, and widened
/// to 64 bits.
fn charge(npz: &Npz, members: &[&str], limit: u64) -> Result<u128, NpyError> {
    let mut total: u128 = 0;
    for name in members {
        let h = npz.header(name)?;
        let Some(header) = h.header else { continue };
        let n = u128::from(header.len().unwrap_or(u64::MAX));
        let widened = if *name == "offsets.npy" { 8 } else { 0 };
        let bytes = n * (header.dtype.size() + widened) as u128;
        total = total.saturating_add(bytes);
        if total > u128::from(limit) {
            return Err(NpyError::over_limit(
                npz.path(),
                format!(
                    "{name}: {bytes} bytes, which would bring the arrays read to {total} bytes, past the memory limit of {limit} bytes (--memory-limit)"
                ),
                name,
                (bytes, total),
                limit,
            ));
        }
    }
    Ok(total)
}

/// One array read in parallel with others.
enum Read {
    Index(IndexVec),
    Values(ValueVec, Vec<u64>),
}

/// Reads `names` in parallel: indices for all but the last, values for the last.
fn read_all(npz: &Npz, names: &[&str]) -> Result<(Vec<IndexVec>, ValueVec, Vec<u64>), NpyError> {
    let last = names.len() - 1;
    let reads = sptk_tensor::par::map_tasks(names.len(), |i| {
        let a = npz.array(names[i])?;
        if i == last {
            let shape = a.header.shape.clone();
            Ok(Read::Values(a.values()?, shape))
        } else {
            a.indices().map(Read::Index)
        }
    });
    let mut idx = Vec::new();
    let mut vals = None;
    for r in reads {
        match r? {
            Read::Index(v) => idx.push(v),
            Read::Values(v, s) => vals = Some((v, s)),
        }
    }
    let (v, s) = vals.ok_or_else(|| npz.err("data.npy: not read"))?;
    Ok((idx, v, s))
}

/// A CSR / CSC / BSR matrix from its arrays; the copies `from_compressed` makes (64-bit
/// pointers, sorted segments) are counted against `room` bytes first.
fn compressed(
    npz: &Npz,
    format: &str,
    dims: [u64; 2],
    room: u64,
    notes: &mut Vec<String>,
) -> Result<Sparse, NpyError> {
    let (mut idx, values, data_shape) = read_all(npz, &["indptr.npy", "indices.npy", "data.npy"])?;
    let (Some(crd), Some(pos)) = (idx.pop(), idx.pop()) else {
        return Err(npz.err("indptr.npy: not read"));
    };
    let block = match (format, &data_shape[..]) {
        ("bsr", [_, r, c]) => [*r, *c],
        ("bsr", s) => {
            return Err(npz.err(format!(
                "data.npy: shape {s:?}; bsr data is 3-D (blocks, rows, columns)"
            )))
        }
        (_, [_]) => [1, 1],
        (_, s) => return Err(npz.err(format!("data.npy: shape {s:?}; {format} data is 1-D"))),
    };
    let parts = CompressedParts {
        dims,
        by_rows: format != "csc",
        block,
        pos,
        crd,
        values,
    };
    match from_compressed_within(parts, Some(room)) {
        Ok(FromCompressed::Tensor(t)) => Ok(Sparse::Tensor(t)),
        Ok(FromCompressed::Entries(e)) => {
            let along = if format == "csc" { "column" } else { "row" };
            notes.push(format!(
                "indices.npy: indices are not sorted within each {along}, or repeat; they were sorted and repeated ones summed"
            ));
            Ok(Sparse::Entries(e))
        }
        Err(e) => {
            let name = match e.array {
                PartsArray::Shape if block != [1, 1] => "data.npy",
                PartsArray::Shape => "shape.npy",
                PartsArray::Pos => "indptr.npy",
                PartsArray::Crd => "indices.npy",
                PartsArray::Values => "data.npy",
            };
            Err(npz.err(format!("{name}: {}", e.message)))
        }
    }
}

fn coo(npz: &Npz, dims: [u64; 2]) -> Result<Entries, NpyError> {
    let (idx, values, data_shape) = read_all(npz, &["row.npy", "col.npy", "data.npy"])?;
    let names = ["row.npy", "col.npy"];
    for (v, name) in idx.iter().zip(names) {
        if v.len() != values.len() || data_shape.len() != 1 {
            return Err(npz.err(format!(
                "{name}: {} indices for {} values in data.npy (shape {data_shape:?})",
                v.len(),
                values.len()
            )));
        }
    }
    let coords = idx
        .into_iter()
        .zip(dims)
        .zip(names)
        .map(|((v, size), name)| {
            let w = coord_width_for(size);
            if v.width() == w {
                return Ok(v);
            }
            v.to_width(w).map_err(|o| {
                npz.err(format!(
                    "{name}: {} is past the last of the {size} coordinates",
                    o.value
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Entries::from_checked_arrays(dims.to_vec(), coords, values).map_err(|e| match e {
        EntryError::OutOfBounds {
            entry,
            dim,
            coord,
            size,
        } => npz.err(format!(
            "{}: element {entry} is {coord}, past the last of the {size} {}",
            names[dim.min(1)],
            ["rows", "columns"][dim.min(1)]
        )),
        other => npz.err(format!("data.npy: {other}")),
    })
}

/// The most elements `shape.npy` may have (it is read before the memory budget is
/// counted; a matrix's has two).
const MAX_SHAPE: usize = 64;

/// The most diagonals `offsets.npy` may have.
const MAX_DIAGONALS: usize = 1 << 24;

/// `(charged, limit)`: bytes already counted against the memory limit, and the limit.
type Room = (u128, u64);

fn dia(npz: &Npz, dims: [u64; 2], room: Room) -> Result<Entries, NpyError> {
    let offsets = npz.array("offsets.npy")?.integers(MAX_DIAGONALS)?;
    let data = npz.array("data.npy")?;
    let shape = data.header.shape.clone();
    let values = data.values()?;
    let [k, len] = shape[..] else {
        return Err(npz.err(format!(
            "data.npy: shape {shape:?}; dia data is 2-D (diagonals, length)"
        )));
    };
    if k != offsets.len() as u64 {
        return Err(npz.err(format!(
            "offsets.npy: {} offsets for the {k} diagonals of data.npy",
            offsets.len()
        )));
    }
    let e = sptk_tensor::with_values!(&values, v => diagonals(v, &offsets, len, dims, room));
    e.map_err(|e| npz.err(format!("data.npy: {e}")))
}

/// The nonzeros of DIA storage: `data[k, j]` is the entry at `(j - offsets[k], j)`, for
/// columns `j` below both the column count and the stored length. They are counted
/// first, and their coordinates and values charged against the memory limit (`room`)
/// before they are allocated.
fn diagonals<V: Value + ValueVecAccess>(
    data: &[V],
    offsets: &[i64],
    len: u64,
    [rows, cols]: [u64; 2],
    (charged, limit): Room,
) -> Result<Entries, String> {
    let walk = |f: &mut dyn FnMut(u64, u64, V)| {
        let Some(len) = usize::try_from(len).ok().filter(|&l| l > 0) else {
            return;
        };
        for (diag, &off) in data.chunks_exact(len).zip(offsets) {
            let columns = diag.iter().zip(0..cols);
            for (&x, j) in columns {
                let i = i128::from(j) - i128::from(off);
                if i >= 0 && i < i128::from(rows) && !x.is_zero() {
                    f(i as u64, j, x);
                }
            }
        }
    };
    let mut count = 0u64;
    walk(&mut |_, _, _| count += 1);
    let bytes = u128::from(count) * (16 + std::mem::size_of::<V>()) as u128;
    let total = charged.saturating_add(bytes);
    if total > u128::from(limit) {
        return Err(format!(
            "{count} entries on the diagonals, {bytes} bytes as coordinates and values, which \
             would bring the arrays read to {total} bytes, past the memory limit of {limit} \
             bytes (--memory-limit)"
        ));
    }
    let n = usize::try_from(count).map_err(|_| format!("{count} entries"))?;
    let (mut r, mut c, mut out) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    walk(&mut |i, j, x| {
        r.push(i);
        c.push(j);
        out.push(x);
    });
    Entries::from_parts(vec![rows, cols], vec![r, c], V::wrap(out)).map_err(|e| e.to_string())
}

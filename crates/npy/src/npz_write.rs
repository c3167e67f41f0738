//! Writing SciPy `.npz` files that `scipy.sparse.load_npz` reads: CSR, CSC, COO and BSR
//! tensors in SciPy's own format (their arrays written as they are, no conversion), any
//! other encoding as CSR with a note. Indices are int32 where the shape and the entry
//! count fit it, else int64, as SciPy chooses; members are deflated as `save_npz` does by
//! default, or stored.

use std::borrow::Cow;
use std::io::{BufWriter, Write};
use std::path::Path;

use sptk_encoding::{Encoding, LevelExpr};
use sptk_tensor::{IndexVec, IndexWidth, Tensor, Value, ValueType, ValueVec};

use crate::bytes::bytes_of;
use crate::header::Header;
use crate::write::descr_header;
use crate::zip::ZipWriter;
use crate::{NpyError, Order};

/// How to write an `.npz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NpzOptions {
    /// Deflate the members (SciPy's default, `compressed=True`); else store them.
    pub compressed: bool,
}

impl Default for NpzOptions {
    fn default() -> Self {
        NpzOptions { compressed: true }
    }
}

/// SciPy's format for an encoding, if it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `csr_array`.
    Csr,
    /// `csc_array`.
    Csc,
    /// `coo_array` (AoS or SoA coordinates).
    Coo,
    /// `bsr_array` with blocks of rows x columns.
    Bsr(u64, u64),
}

/// SciPy's format for encoding `e` (widths do not matter), as the `.npz` writer decides it.
pub fn kind(e: &Encoding) -> Option<Kind> {
    let mut e = e.clone();
    e.pos_width = 0;
    e.crd_width = 0;
    if e == sptk_encoding::csr() {
        return Some(Kind::Csr);
    }
    if e == sptk_encoding::csc() {
        return Some(Kind::Csc);
    }
    if e == sptk_encoding::coo(2, false) || e == sptk_encoding::coo(2, true) {
        return Some(Kind::Coo);
    }
    match (
        e.levels.first().map(|l| &l.expr),
        e.levels.get(1).map(|l| &l.expr),
    ) {
        (Some(LevelExpr::FloorDiv(0, r)), Some(LevelExpr::FloorDiv(1, c)))
            if e == sptk_encoding::bsr(*r, *c) =>
        {
            Some(Kind::Bsr(*r, *c))
        }
        _ => None,
    }
}

/// Writes `tensor` (a matrix) to `path` as SciPy's `save_npz` would, atomically. Returns
/// notes for the user (a conversion to CSR, values widened for NumPy).
///
/// # Errors
/// The tensor is not a matrix, or the file cannot be written.
pub fn write_npz(path: &Path, tensor: &Tensor, opts: &NpzOptions) -> Result<Vec<String>, NpyError> {
    let err = |m: String| NpyError::new(path, m);
    let dims = tensor.dim_sizes();
    let [rows, cols] = dims[..] else {
        return Err(err(format!(
            "a SciPy .npz holds a matrix; this tensor has {} dimensions",
            dims.len()
        )));
    };
    let mut notes = Vec::new();
    let fits = |k: Kind| match k {
        Kind::Bsr(r, c) => rows % r == 0 && cols % c == 0,
        _ => true,
    };
    let converted;
    let (t, kind) = match kind(tensor.encoding()).filter(|&k| fits(k)) {
        Some(k) => (tensor, k),
        None => {
            let target = sptk_encoding::resolve_target("CSR", 2).map_err(|e| err(e.to_string()))?;
            converted = sptk_tensor::convert_tensor(tensor, &target, &Default::default())
                .map_err(|e| err(e.to_string()))?
                .tensor;
            let e = tensor.encoding();
            notes.push(if matches!(kind(e), Some(Kind::Bsr(..))) {
                format!(
                    "SciPy's BSR blocks must tile the matrix and {rows} x {cols} is not a whole number of blocks: written as CSR"
                )
            } else {
                format!("SciPy has no format for {e}: written as CSR")
            });
            (&converted, Kind::Csr)
        }
    };
    let nnz = t.values().len() as u64;
    let wide = rows.max(cols).max(nnz) > i32::MAX as u64;
    let (name, index_names): (&[u8], [&str; 2]) = match kind {
        Kind::Csr => (b"csr", ["indices.npy", "indptr.npy"]),
        Kind::Csc => (b"csc", ["indices.npy", "indptr.npy"]),
        Kind::Bsr(..) => (b"bsr", ["indices.npy", "indptr.npy"]),
        Kind::Coo => (b"coo", ["row.npy", "col.npy"]),
    };
    let missing = || err("the tensor's arrays are incomplete".into());
    let split;
    let (first, second) = match kind {
        Kind::Coo if t.crd(1).is_none() => {
            // Array-of-structs COO: crd[0] holds (row, column) pairs.
            let pairs = t.crd(0).ok_or_else(missing)?.to_u64_vec();
            let half = |k: usize| {
                pairs
                    .iter()
                    .skip(k)
                    .step_by(2)
                    .copied()
                    .collect::<Vec<u64>>()
            };
            split = [IndexVec::U64(half(0).into()), IndexVec::U64(half(1).into())];
            (&split[0], &split[1])
        }
        Kind::Coo => (t.crd(0).ok_or_else(missing)?, t.crd(1).ok_or_else(missing)?),
        _ => (t.crd(1).ok_or_else(missing)?, t.pos(1).ok_or_else(missing)?),
    };
    let (values, vnote) = numpy_values(t.values());
    notes.extend(vnote);
    let data_shape = match kind {
        Kind::Bsr(r, c) => vec![nnz / (r * c), r, c],
        _ => vec![nnz],
    };
    let index_descr = if wide { "<i8" } else { "<i4" };
    let descr = Header::descr(values.value_type()).unwrap_or("<f8");
    let a = index_bytes(first, wide);
    let b = index_bytes(second, wide);
    let members: [(&str, Vec<u8>, &[u8]); 5] = [
        (
            index_names[0],
            descr_header(index_descr, Order::C, &[first.len() as u64]),
            &a,
        ),
        (
            index_names[1],
            descr_header(index_descr, Order::C, &[second.len() as u64]),
            &b,
        ),
        ("format.npy", descr_header("|S3", Order::C, &[]), name),
        (
            "shape.npy",
            descr_header("<i8", Order::C, &[2]),
            &shape_bytes(rows, cols),
        ),
        (
            "data.npy",
            descr_header(descr, Order::C, &data_shape),
            value_bytes(&values),
        ),
    ];
    let level = opts.compressed.then_some(6);
    sptk_output::write_atomic(path, |file| {
        let mut z = ZipWriter::new(BufWriter::with_capacity(1 << 20, file), level);
        for (member, head, body) in &members {
            z.member(member, &[head, body])?;
        }
        z.finish()?.flush()
    })
    .map_err(|e: std::io::Error| err(format!("cannot write: {e}")))?;
    Ok(notes)
}

fn shape_bytes(rows: u64, cols: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&rows.to_le_bytes());
    b[8..].copy_from_slice(&cols.to_le_bytes());
    b
}

/// An index array as int32 (`wide` false) or int64 bytes: its own bytes when it has the
/// width already (every value fits the signed type, checked by the caller's choice).
fn index_bytes(v: &IndexVec, wide: bool) -> Cow<'_, [u8]> {
    match (v, wide) {
        (IndexVec::U32(x), false) => Cow::Borrowed(bytes_of(&x[..])),
        (IndexVec::U64(x), true) => Cow::Borrowed(bytes_of(&x[..])),
        _ => {
            let w = if wide {
                IndexWidth::W64
            } else {
                IndexWidth::W32
            };
            match v.to_width(w) {
                Ok(IndexVec::U32(x)) => Cow::Owned(bytes_of(&x[..]).to_vec()),
                Ok(IndexVec::U64(x)) => Cow::Owned(bytes_of(&x[..]).to_vec()),
                _ => Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            }
        }
    }
}

/// The values in a type NumPy and SciPy hold: bfloat16 (which NumPy lacks) and float16
/// (which SciPy's sparse arithmetic refuses) become float32, with a note.
pub(crate) fn numpy_values(v: &ValueVec) -> (Cow<'_, ValueVec>, Option<String>) {
    let widened: Vec<f32> = match v {
        ValueVec::F16(x) => x.iter().map(|h| h.to_f32()).collect(),
        ValueVec::BF16(x) => x.iter().map(|h| h.to_f32()).collect(),
        _ => return (Cow::Borrowed(v), None),
    };
    let note = format!(
        "{} values written as float32 (exactly): {}",
        v.value_type(),
        if v.value_type() == ValueType::BF16 {
            "NumPy has no bfloat16"
        } else {
            "SciPy's sparse matrices do not compute in float16"
        }
    );
    (Cow::Owned(ValueVec::F32(widened.into())), Some(note))
}

/// The values' little-endian bytes (bools as 0 and 1).
pub(crate) fn value_bytes(v: &ValueVec) -> &[u8] {
    fn raw<V: Value>(x: &[V]) -> &[u8] {
        bytes_of(V::raw_slice(x))
    }
    sptk_tensor::with_values!(v, x => raw(x))
}

//! One variable of a Level 5 file read: a sparse one as CSC level arrays (checked by
//! [`sptk_tensor::from_compressed_within`]), a dense one as its nonzeros through the core's
//! dense scan (column-major). Every array is taken from the memory budget first.

use sptk_tensor::{
    dense_entries, from_compressed_within, CompressedParts, DenseArray, FromCompressed, IndexVec,
    IndexWidth, PartsArray, ValueType, ValueVec, ValueVecAccess, C128,
};

use super::element::{element, inflate, Element, Room, MI_COMPRESSED};
use super::matrix::{c128, c64, complex, head, indices, mi_size, numbers, FromNum, Head};
use super::Mat5File;
use crate::bytes::bytes_of;
use crate::{NpyError, Sparse};

/// A variable read from a Level 5 file.
#[derive(Debug)]
pub struct Mat5Matrix {
    /// Its name.
    pub name: String,
    /// MATLAB's class, in words (`sparse`, `double`, `sparse logical`, ...).
    pub class: String,
    /// The matrix: CSC level arrays, or coordinates.
    pub content: Sparse,
    /// What a user should know (variables skipped, indices sorted).
    pub notes: Vec<String>,
}

impl Mat5File {
    /// Reads variable `name` (see [`Mat5File::variable`]) within `memory_limit` (the
    /// machine's default where None).
    ///
    /// # Errors
    /// A variable that is not read (cell, struct, text), parts missing or of the wrong
    /// length, a damaged compressed stream, the memory limit: each naming the variable
    /// and where its element starts.
    pub fn read(
        &self,
        name: Option<&str>,
        memory_limit: Option<u64>,
    ) -> Result<Mat5Matrix, NpyError> {
        let v = self.variable(name)?;
        let err = |m: String| {
            NpyError::new(
                &self.path,
                format!("variable `{}` (element at byte {}): {m}", v.name, v.at),
            )
        };
        if v.value_type.is_none() {
            return Err(err(format!(
                "a {} {}, which is not read: sparse and numeric arrays are (cells, structs, objects and text are not)",
                by(&v.dims),
                v.class
            )));
        }
        let mut room = Room::new(memory_limit);
        let all = self.bytes.as_slice();
        let e = element(all, v.at, self.big).map_err(err)?;
        let inflated;
        let body = if e.ty == MI_COMPRESSED {
            inflated = inflate(e.data, self.big, &mut room).map_err(err)?;
            element(&inflated, 0, self.big).map_err(err)?.data
        } else {
            e.data
        };
        let h = head(body, self.big).map_err(err)?;
        let mut parts = Vec::new();
        let mut at = h.parts;
        while at < body.len() && parts.len() < 4 {
            let p = element(body, at, self.big).map_err(err)?;
            at = p.next;
            parts.push(p);
        }
        let mut notes = Vec::new();
        let content = if v.sparse {
            sparse(&h, &parts, self.big, &mut room, &mut notes)
        } else {
            dense(&h, &parts, self.big, &mut room, memory_limit)
        }
        .map_err(err)?;
        let skipped: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.value_type.is_none())
            .map(|v| format!("`{}` ({})", v.name, v.class))
            .collect();
        if !skipped.is_empty() {
            notes.push(format!(
                "not read: {} (cells, structs, objects and text are skipped)",
                skipped.join(", ")
            ));
        }
        Ok(Mat5Matrix {
            name: v.name.clone(),
            class: v.class.clone(),
            content,
            notes,
        })
    }
}

/// `2x3`.
pub(crate) fn by(dims: &[u64]) -> String {
    dims.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// Part `i` of `parts`, named `what`.
fn part<'a>(parts: &'a [Element<'a>], i: usize, what: &str) -> Result<&'a Element<'a>, String> {
    parts
        .get(i)
        .ok_or_else(|| format!("{what}: missing (the variable holds {} parts)", parts.len()))
}

/// Real values, or complex ones from a real and an imaginary part.
fn values<T: FromNum + Copy + ValueVecAccess, C: ValueVecAccess>(
    parts: &[Element],
    first: usize,
    is_complex: bool,
    make: impl Fn(T, T) -> C,
    big: bool,
    room: &mut Room,
) -> Result<ValueVec, String> {
    let re = part(parts, first, "real part")?;
    let real: Vec<T> = numbers(re.ty, re.data, big, room, "real part")?;
    if !is_complex {
        return Ok(T::wrap(real));
    }
    let im = part(parts, first + 1, "imaginary part")?;
    let imag: Vec<T> = numbers(im.ty, im.data, big, room, "imaginary part")?;
    Ok(C::wrap(complex(real, imag, make, room, "imaginary part")?))
}

/// The first `nnz` of `v`, which must hold as many.
fn cut<T>(mut v: Vec<T>, nnz: usize, what: &str) -> Result<Vec<T>, String> {
    if v.len() < nnz {
        return Err(format!(
            "{what} holds {} values, fewer than the {nnz} entries jc counts",
            v.len()
        ));
    }
    v.truncate(nnz);
    Ok(v)
}

fn sparse(
    h: &Head,
    parts: &[Element],
    big: bool,
    room: &mut Room,
    notes: &mut Vec<String>,
) -> Result<Sparse, String> {
    let &[rows, cols] = h.dims.as_slice() else {
        return Err(format!(
            "a sparse variable of {} dimensions, not 2",
            h.dims.len()
        ));
    };
    let ir = part(parts, 0, "ir")?;
    let jc = part(parts, 1, "jc")?;
    let (ir_ty, jc_ty) = (ir.ty, jc.ty);
    let mut ir = indices(ir.ty, ir.data, big, room, "ir")?;
    let jc = indices(jc.ty, jc.data, big, room, "jc")?;
    if jc.len() as u64 != cols.saturating_add(1) {
        return Err(format!(
            "jc holds {} column pointers; a {rows}x{cols} sparse matrix needs {}",
            jc.len(),
            cols.saturating_add(1)
        ));
    }
    let nnz = jc.last().copied().unwrap_or(0);
    if (ir.len() as u64) < nnz {
        return Err(format!(
            "ir holds {} row indices, fewer than the {nnz} entries jc counts",
            ir.len()
        ));
    }
    let nnz = usize::try_from(nnz).map_err(|_| format!("jc counts {nnz} entries"))?;
    // MATLAB keeps room for nzmax entries; those past jc's last pointer are unused.
    ir.truncate(nnz);
    let values = if h.logical {
        let re = part(parts, 2, "pr")?;
        bool::wrap(cut(numbers(re.ty, re.data, big, room, "pr")?, nnz, "pr")?)
    } else {
        let re = part(parts, 2, "pr")?;
        let real: Vec<f64> = cut(numbers(re.ty, re.data, big, room, "pr")?, nnz, "pr")?;
        if h.complex {
            let im = part(parts, 3, "pi")?;
            let imag = cut(numbers(im.ty, im.data, big, room, "pi")?, nnz, "pi")?;
            C128::wrap(complex(real, imag, c128, room, "pi")?)
        } else {
            f64::wrap(real)
        }
    };
    // 32-bit where the file stores them so (as SciPy keeps them), else 64-bit.
    let width = |ty: u32| match mi_size(ty) {
        Some(1..=4) => IndexWidth::W32,
        _ => IndexWidth::W64,
    };
    let narrow = |v: Vec<u64>, ty: u32, what: &str, room: &mut Room| {
        let w = width(ty);
        if w == IndexWidth::W32 {
            room.take(v.len() as u128 * 4, what)?;
        }
        IndexVec::from_vec_u64(v, w).map_err(|o| format!("{what}: {} is past 32 bits", o.value))
    };
    let parts = CompressedParts {
        dims: [rows, cols],
        by_rows: false,
        block: [1, 1],
        pos: narrow(jc, jc_ty, "jc", room)?,
        crd: narrow(ir, ir_ty, "ir", room)?,
        values,
    };
    match from_compressed_within(parts, Some(room.left)) {
        Ok(FromCompressed::Tensor(t)) => Ok(Sparse::Tensor(t)),
        Ok(FromCompressed::Entries(e)) => {
            notes.push("ir: row indices are not sorted within each column, or repeat; they were sorted and repeated ones summed".into());
            Ok(Sparse::Entries(e))
        }
        Err(e) => {
            let name = match e.array {
                PartsArray::Shape => "dimensions",
                PartsArray::Pos => "jc",
                PartsArray::Crd => "ir",
                PartsArray::Values => "pr",
            };
            Err(format!("{name}: {}", e.message))
        }
    }
}

fn dense(
    h: &Head,
    parts: &[Element],
    big: bool,
    room: &mut Room,
    memory_limit: Option<u64>,
) -> Result<Sparse, String> {
    let vt = super::matrix::value_type(h).ok_or("not a numeric array")?;
    let c = h.complex;
    let values = match vt {
        ValueType::F64 | ValueType::C128 => values::<f64, _>(parts, 0, c, c128, big, room)?,
        ValueType::F32 | ValueType::C64 => values::<f32, _>(parts, 0, c, c64, big, room)?,
        ValueType::Bool => {
            let re = part(parts, 0, "real part")?;
            let b: Vec<bool> = numbers(re.ty, re.data, big, room, "real part")?;
            room.take(b.len() as u128, "real part")?;
            <u8 as ValueVecAccess>::wrap(b.into_iter().map(u8::from).collect())
        }
        ValueType::I8 => values::<i8, i8>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::U8 => values::<u8, u8>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::I16 => values::<i16, i16>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::U16 => values::<u16, u16>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::I32 => values::<i32, i32>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::U32 => values::<u32, u32>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::I64 => values::<i64, i64>(parts, 0, false, |a, _| a, big, room)?,
        ValueType::U64 => values::<u64, u64>(parts, 0, false, |a, _| a, big, room)?,
        other => return Err(format!("values of type {}", other.name())),
    };
    let count = h
        .dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("dimensions {} overflow", by(&h.dims)))?;
    if values.len() as u64 != count {
        return Err(format!(
            "real part: {} elements; dimensions {} hold {count}",
            values.len(),
            by(&h.dims)
        ));
    }
    let bytes = raw_bytes(&values).ok_or("values of type bool")?;
    let a = DenseArray {
        dtype: vt,
        shape: &h.dims,
        fortran: true,
        big_endian: false,
        bytes,
    };
    let limit = Some(room.left.min(memory_limit.unwrap_or(u64::MAX)));
    dense_entries(&a, limit)
        .map(Sparse::Entries)
        .map_err(|e| e.to_string())
}

/// The bytes of values (logical ones are held as `u8` 0 / 1 here).
fn raw_bytes(v: &ValueVec) -> Option<&[u8]> {
    Some(match v {
        ValueVec::F16(b) => bytes_of(b),
        ValueVec::BF16(b) => bytes_of(b),
        ValueVec::F32(b) => bytes_of(b),
        ValueVec::F64(b) => bytes_of(b),
        ValueVec::I8(b) => bytes_of(b),
        ValueVec::I16(b) => bytes_of(b),
        ValueVec::I32(b) => bytes_of(b),
        ValueVec::I64(b) => bytes_of(b),
        ValueVec::U8(b) => bytes_of(b),
        ValueVec::U16(b) => bytes_of(b),
        ValueVec::U32(b) => bytes_of(b),
        ValueVec::U64(b) => bytes_of(b),
        ValueVec::C64(b) => bytes_of(b),
        ValueVec::C128(b) => bytes_of(b),
        ValueVec::Bool(_) => return None,
    })
}

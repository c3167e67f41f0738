//! A `miMATRIX` element (one variable): its array flags, dimensions and name, then its
//! parts, and the numbers of a part converted to the variable's class, as
//! `scipy.io.loadmat` does (MATLAB may store a double array's integers as `miUINT8`).

use sptk_tensor::{ValueType, C128, C64};

use super::element::{
    element, u32_at, Room, MI_DOUBLE, MI_INT16, MI_INT32, MI_INT64, MI_INT8, MI_SINGLE, MI_UINT16,
    MI_UINT32, MI_UINT64, MI_UINT8,
};

/// `mxSPARSE_CLASS`.
pub(crate) const MX_SPARSE: u8 = 5;

/// The most dimensions a variable may have.
const MAX_DIMS: usize = 32;

/// A variable's header.
#[derive(Clone, Debug)]
pub(crate) struct Head {
    /// `mx` class.
    pub class: u8,
    /// Has an imaginary part.
    pub complex: bool,
    /// MATLAB `logical`.
    pub logical: bool,
    /// Dimension sizes.
    pub dims: Vec<u64>,
    /// The name.
    pub name: String,
    /// Where its parts start in the element's data.
    pub parts: usize,
}

/// The class's name as MATLAB says it.
pub(crate) fn class_name(class: u8) -> &'static str {
    match class {
        1 => "cell",
        2 => "struct",
        3 => "object",
        4 => "char",
        5 => "sparse",
        6 => "double",
        7 => "single",
        8 => "int8",
        9 => "uint8",
        10 => "int16",
        11 => "uint16",
        12 => "int32",
        13 => "uint32",
        14 => "int64",
        15 => "uint64",
        16 => "function handle",
        17 => "opaque",
        _ => "unknown class",
    }
}

/// The value type of a readable variable, or None (cells, structs, text, ...).
pub(crate) fn value_type(h: &Head) -> Option<ValueType> {
    Some(match (h.class, h.complex) {
        (MX_SPARSE, _) if h.logical => ValueType::Bool,
        (MX_SPARSE, false) | (6, false) => ValueType::F64,
        (MX_SPARSE, true) | (6, true) => ValueType::C128,
        (7, false) => ValueType::F32,
        (7, true) => ValueType::C64,
        (9, false) if h.logical => ValueType::Bool,
        (8, false) => ValueType::I8,
        (9, false) => ValueType::U8,
        (10, false) => ValueType::I16,
        (11, false) => ValueType::U16,
        (12, false) => ValueType::I32,
        (13, false) => ValueType::U32,
        (14, false) => ValueType::I64,
        (15, false) => ValueType::U64,
        _ => return None,
    })
}

/// Reads the header of the `miMATRIX` data `b` (which may be cut short after the name).
pub(crate) fn head(b: &[u8], big: bool) -> Result<Head, String> {
    let flags = element(b, 0, big)?;
    let (Some(f), 8) = (u32_at(flags.data, 0, big), flags.data.len()) else {
        return Err("array flags: not 8 bytes".into());
    };
    let dims_el = element(b, flags.next, big)?;
    if !dims_el.data.len().is_multiple_of(4) || dims_el.data.len() / 4 > MAX_DIMS {
        return Err(format!(
            "dimensions: {} bytes, not at most {MAX_DIMS} 32-bit sizes",
            dims_el.data.len()
        ));
    }
    let dims = (0..dims_el.data.len() / 4)
        .map(|i| {
            let d = u32_at(dims_el.data, 4 * i, big).unwrap_or(0) as i32;
            u64::try_from(d).map_err(|_| format!("dimension {i} is {d}, negative"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let name_el = element(b, dims_el.next, big)?;
    Ok(Head {
        class: (f & 0xff) as u8,
        complex: f & 0x800 != 0,
        logical: f & 0x200 != 0,
        dims,
        name: String::from_utf8_lossy(name_el.data).into_owned(),
        parts: name_el.next,
    })
}

/// One number of a part, as stored.
#[derive(Clone, Copy)]
pub(crate) enum Num {
    I(i128),
    F(f64),
}

/// The size of one number of `mi` type `ty`, or None for a type that is not numeric.
pub(crate) fn mi_size(ty: u32) -> Option<usize> {
    Some(match ty {
        MI_INT8 | MI_UINT8 => 1,
        MI_INT16 | MI_UINT16 => 2,
        MI_INT32 | MI_UINT32 | MI_SINGLE => 4,
        MI_DOUBLE | MI_INT64 | MI_UINT64 => 8,
        _ => return None,
    })
}

fn num(ty: u32, w: &[u8], big: bool) -> Num {
    let mut b = [0u8; 8];
    let n = w.len().min(8);
    b[..n].copy_from_slice(&w[..n]);
    if big {
        b[..n].reverse();
    }
    let u = u64::from_le_bytes(b);
    match ty {
        MI_INT8 => Num::I(i128::from(u as u8 as i8)),
        MI_INT16 => Num::I(i128::from(u as u16 as i16)),
        MI_INT32 => Num::I(i128::from(u as u32 as i32)),
        MI_INT64 => Num::I(i128::from(u as i64)),
        MI_SINGLE => Num::F(f64::from(f32::from_bits(u as u32))),
        MI_DOUBLE => Num::F(f64::from_bits(u)),
        _ => Num::I(i128::from(u)),
    }
}

/// The stored entries of an uncompressed sparse variable, from the last of its column
/// pointers (`jc`, its second part), without reading the rest; None where the parts do
/// not say it plainly.
pub(crate) fn stored_entries(body: &[u8], h: &Head, big: bool) -> Option<u64> {
    let ir = element(body, h.parts, big).ok()?;
    let jc = element(body, ir.next, big).ok()?;
    let size = mi_size(jc.ty)?;
    let last = jc.data.len().checked_sub(size)?;
    match num(jc.ty, jc.data.get(last..)?, big) {
        Num::I(v) => u64::try_from(v).ok(),
        Num::F(_) => None,
    }
}

/// A value type made from any stored number, as NumPy's cast does.
pub(crate) trait FromNum: Sized {
    fn from_num(n: Num) -> Self;
}

macro_rules! from_num {
    ($($t:ty),*) => {$(
        impl FromNum for $t {
            fn from_num(n: Num) -> $t {
                match n {
                    Num::I(i) => i as $t,
                    Num::F(f) => f as $t,
                }
            }
        }
    )*};
}
from_num!(f64, f32, i8, u8, i16, u16, i32, u32, i64, u64);

impl FromNum for bool {
    fn from_num(n: Num) -> bool {
        match n {
            Num::I(i) => i != 0,
            Num::F(f) => f != 0.0,
        }
    }
}

/// The numbers of part `what` (data of `mi` type `ty`) as `T`, their memory taken from
/// `room` first.
pub(crate) fn numbers<T: FromNum>(
    ty: u32,
    data: &[u8],
    big: bool,
    room: &mut Room,
    what: &str,
) -> Result<Vec<T>, String> {
    let size = mi_size(ty).ok_or_else(|| format!("{what}: data of type {ty}, not numeric"))?;
    if !data.len().is_multiple_of(size) {
        return Err(format!(
            "{what}: {} bytes, not a whole number of {size}-byte elements",
            data.len()
        ));
    }
    let n = data.len() / size;
    room.take((n * std::mem::size_of::<T>()) as u128, what)?;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| format!("{what}: {n} elements cannot be allocated"))?;
    out.extend(
        data.chunks_exact(size)
            .map(|w| T::from_num(num(ty, w, big))),
    );
    Ok(out)
}

/// Indices (`ir`, `jc`): integers, none negative.
pub(crate) fn indices(
    ty: u32,
    data: &[u8],
    big: bool,
    room: &mut Room,
    what: &str,
) -> Result<Vec<u64>, String> {
    if matches!(ty, MI_SINGLE | MI_DOUBLE) {
        return Err(format!("{what}: floating-point data, not integer indices"));
    }
    let size = mi_size(ty).unwrap_or(1);
    if let Some(i) = data
        .chunks_exact(size)
        .position(|w| matches!(num(ty, w, big), Num::I(v) if v < 0))
    {
        return Err(format!("{what}: element {i} is negative"));
    }
    numbers::<u64>(ty, data, big, room, what)
}

/// Complex numbers from real and imaginary parts of equal length.
pub(crate) fn complex<T: Copy, C>(
    re: Vec<T>,
    im: Vec<T>,
    make: impl Fn(T, T) -> C,
    room: &mut Room,
    what: &str,
) -> Result<Vec<C>, String> {
    if re.len() != im.len() {
        return Err(format!(
            "{what}: {} imaginary parts for {} real parts",
            im.len(),
            re.len()
        ));
    }
    room.take((re.len() * std::mem::size_of::<C>()) as u128, what)?;
    Ok(re.into_iter().zip(im).map(|(r, i)| make(r, i)).collect())
}

/// `C128` from parts.
pub(crate) fn c128(re: f64, im: f64) -> C128 {
    C128 { re, im }
}

/// `C64` from parts.
pub(crate) fn c64(re: f32, im: f32) -> C64 {
    C64 { re, im }
}

//! Arrow columns into coordinates and values: every integer type (signed ones checked for
//! negatives), dictionary-encoded columns, nulls refused naming the row, coordinates
//! counted from the chosen base and checked against the shape.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowDictionaryKeyType, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, DictionaryArray};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;
use half::f16;
use sptk_tensor::{Value, ValueType};

use crate::error::TableError;

/// Where a column's values are, for messages, and how its coordinates count.
pub(crate) struct Ctx<'a> {
    /// The file.
    pub path: &'a Path,
    /// The column.
    pub column: &'a str,
    /// Row of the file the array starts at.
    pub row0: u64,
    /// Subtracted from every coordinate (1 for 1-based columns).
    pub base: u64,
    /// The dimension size, when known: coordinates must be below it.
    pub size: Option<u64>,
}

impl Ctx<'_> {
    /// Where the array is, for a caught panic: column and first row.
    pub fn place(&self) -> String {
        format!("column `{}`, the batch from row {}", self.column, self.row0)
    }

    fn at(&self, i: usize, message: impl Into<String>) -> TableError {
        TableError::column(self.path, self.column, Some(self.row0 + i as u64), message)
    }

    fn null(&self, arr: &dyn Array) -> TableError {
        let i = (0..arr.len()).find(|&i| arr.is_null(i)).unwrap_or(0);
        self.at(i, "null value (every row needs a coordinate and a value)")
    }

    /// The coordinate a stored integer stands for, checked.
    #[inline]
    fn coord(
        &self,
        i: usize,
        v: Option<u64>,
        shown: impl FnOnce() -> String,
    ) -> Result<u64, TableError> {
        let Some(v) = v else {
            return Err(self.at(i, format!("negative coordinate {}", shown())));
        };
        let Some(c) = v.checked_sub(self.base) else {
            return Err(self.at(
                i,
                format!("coordinate {v} in a column counted from {}", self.base),
            ));
        };
        match self.size {
            Some(size) if c >= size => Err(self.at(
                i,
                format!(
                    "coordinate {v} is past the dimension size {size}{}",
                    if self.base == 1 {
                        " (counted from 1)"
                    } else {
                        ""
                    }
                ),
            )),
            _ => Ok(c),
        }
    }
}

/// An integer element type a coordinate can be stored as.
trait Int: Copy + std::fmt::Display {
    fn to_u64(self) -> Option<u64>;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            #[inline]
            fn to_u64(self) -> Option<u64> {
                u64::try_from(self).ok()
            }
        }
    )*};
}
int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Column `name` of a batch read from `path`, or an error naming both (a batch that lacks
/// a column its schema promised).
pub(crate) fn column<'b>(
    batch: &'b arrow_array::RecordBatch,
    path: &Path,
    name: &str,
) -> Result<&'b arrow_array::ArrayRef, TableError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| TableError::column(path, name, None, "missing from a batch"))
}

/// True if `t` can hold coordinates (integers, or a dictionary of integers).
pub(crate) fn is_integer(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, v) => v.is_integer(),
        t => t.is_integer(),
    }
}

/// True if `t` holds text (strings, or a dictionary of strings).
pub(crate) fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, v) => is_text(v),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        _ => false,
    }
}

fn prim_coords<T: ArrowPrimitiveType>(
    arr: &dyn Array,
    ctx: &Ctx,
    out: &mut Vec<u64>,
) -> Result<(), TableError>
where
    T::Native: Int,
{
    let a = arr.as_primitive::<T>();
    out.reserve(a.len());
    for (i, &v) in a.values().iter().enumerate() {
        out.push(ctx.coord(i, v.to_u64(), || v.to_string())?);
    }
    Ok(())
}

fn dict_coords<K: ArrowDictionaryKeyType>(
    arr: &dyn Array,
    ctx: &Ctx,
    out: &mut Vec<u64>,
) -> Result<(), TableError> {
    let d: &DictionaryArray<K> = arr.as_dictionary::<K>();
    // The dictionary's values, unchecked (an unused negative value is no error).
    let mut raw = Vec::new();
    let loose = Ctx {
        path: ctx.path,
        column: ctx.column,
        row0: 0,
        base: 0,
        size: None,
    };
    let values = d.values();
    if values.null_count() > 0 {
        return Err(TableError::column(
            ctx.path,
            ctx.column,
            None,
            "the dictionary holds a null",
        ));
    }
    let negative = int_values(values.as_ref(), &loose, &mut raw);
    out.reserve(d.len());
    for (i, k) in d.keys().values().iter().enumerate() {
        let k = k.to_usize().unwrap_or(usize::MAX);
        let v = raw.get(k).copied().flatten();
        if v.is_none() && !negative {
            return Err(ctx.at(
                i,
                format!(
                    "dictionary key {k} past the dictionary's {} values",
                    raw.len()
                ),
            ));
        }
        out.push(ctx.coord(i, v, || format!("(dictionary key {k})"))?);
    }
    Ok(())
}

/// The values of an integer array as `Some(u64)`, `None` where negative; true if any was.
fn int_values(arr: &dyn Array, _ctx: &Ctx, out: &mut Vec<Option<u64>>) -> bool {
    macro_rules! each {
        ($t:ty) => {
            out.extend(arr.as_primitive::<$t>().values().iter().map(|v| v.to_u64()))
        };
    }
    match arr.data_type() {
        DataType::Int8 => each!(Int8Type),
        DataType::Int16 => each!(Int16Type),
        DataType::Int32 => each!(Int32Type),
        DataType::Int64 => each!(Int64Type),
        DataType::UInt8 => each!(UInt8Type),
        DataType::UInt16 => each!(UInt16Type),
        DataType::UInt32 => each!(UInt32Type),
        DataType::UInt64 => each!(UInt64Type),
        _ => {}
    }
    out.iter().any(Option::is_none)
}

/// Appends the coordinates `arr` holds to `out`, checked (see [`Ctx`]).
pub(crate) fn coords(arr: &dyn Array, ctx: &Ctx, out: &mut Vec<u64>) -> Result<(), TableError> {
    if arr.null_count() > 0 {
        return Err(ctx.null(arr));
    }
    match arr.data_type() {
        DataType::Int8 => prim_coords::<Int8Type>(arr, ctx, out),
        DataType::Int16 => prim_coords::<Int16Type>(arr, ctx, out),
        DataType::Int32 => prim_coords::<Int32Type>(arr, ctx, out),
        DataType::Int64 => prim_coords::<Int64Type>(arr, ctx, out),
        DataType::UInt8 => prim_coords::<UInt8Type>(arr, ctx, out),
        DataType::UInt16 => prim_coords::<UInt16Type>(arr, ctx, out),
        DataType::UInt32 => prim_coords::<UInt32Type>(arr, ctx, out),
        DataType::UInt64 => prim_coords::<UInt64Type>(arr, ctx, out),
        DataType::Dictionary(k, v) if v.is_integer() => match k.as_ref() {
            DataType::Int8 => dict_coords::<Int8Type>(arr, ctx, out),
            DataType::Int16 => dict_coords::<Int16Type>(arr, ctx, out),
            DataType::Int32 => dict_coords::<Int32Type>(arr, ctx, out),
            DataType::Int64 => dict_coords::<Int64Type>(arr, ctx, out),
            DataType::UInt8 => dict_coords::<UInt8Type>(arr, ctx, out),
            DataType::UInt16 => dict_coords::<UInt16Type>(arr, ctx, out),
            DataType::UInt32 => dict_coords::<UInt32Type>(arr, ctx, out),
            _ => dict_coords::<UInt64Type>(arr, ctx, out),
        },
        other => Err(TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!(
                "coordinates must be integers, not {other}{}",
                if is_text(other) {
                    " (text is mapped to indices with --relabel)"
                } else {
                    ""
                }
            ),
        )),
    }
}

/// Appends the integers `arr` holds to `out` as ids, signed ones kept as they are (ids to
/// relabel may be negative: hashes, database keys); nulls refused.
pub(crate) fn ids(arr: &dyn Array, ctx: &Ctx, out: &mut Vec<i128>) -> Result<(), TableError> {
    if arr.null_count() > 0 {
        return Err(ctx.null(arr));
    }
    macro_rules! each {
        ($a:expr, $($tag:ident: $t:ty),*) => {
            match $a.data_type() {
                $(DataType::$tag => {
                    out.extend($a.as_primitive::<$t>().values().iter().map(|&v| i128::from(v)));
                    true
                })*
                _ => false,
            }
        };
    }
    macro_rules! all_ints {
        ($a:expr) => {
            each!($a, Int8: Int8Type, Int16: Int16Type, Int32: Int32Type, Int64: Int64Type,
                UInt8: UInt8Type, UInt16: UInt16Type, UInt32: UInt32Type, UInt64: UInt64Type)
        };
    }
    if all_ints!(arr) {
        return Ok(());
    }
    match arr.data_type() {
        DataType::Dictionary(_, v) if v.is_integer() => {
            let d = arr.as_any_dictionary();
            let mut words = Vec::new();
            ids(d.values().as_ref(), ctx, &mut words)?;
            out.reserve(d.keys().len());
            for (i, k) in d.normalized_keys().into_iter().enumerate() {
                let id = words.get(k).ok_or_else(|| {
                    ctx.at(
                        i,
                        format!(
                            "dictionary key {k} past the dictionary's {} values",
                            words.len()
                        ),
                    )
                })?;
                out.push(*id);
            }
            Ok(())
        }
        other => Err(TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!("ids to relabel must be integers or text, not {other}"),
        )),
    }
}

/// Calls `each(row, text)` for every row of a text column (strings or a dictionary of
/// strings), nulls refused.
pub(crate) fn texts(
    arr: &dyn Array,
    ctx: &Ctx,
    each: &mut dyn FnMut(usize, &str),
) -> Result<(), TableError> {
    if arr.null_count() > 0 {
        return Err(ctx.null(arr));
    }
    match arr.data_type() {
        DataType::Utf8 => arr
            .as_string::<i32>()
            .iter()
            .enumerate()
            .for_each(|(i, s)| each(i, s.unwrap_or(""))),
        DataType::LargeUtf8 => arr
            .as_string::<i64>()
            .iter()
            .enumerate()
            .for_each(|(i, s)| each(i, s.unwrap_or(""))),
        DataType::Utf8View => arr
            .as_string_view()
            .iter()
            .enumerate()
            .for_each(|(i, s)| each(i, s.unwrap_or(""))),
        DataType::Dictionary(_, _) => {
            let d = arr.as_any_dictionary();
            let mut words = Vec::new();
            texts(d.values().as_ref(), ctx, &mut |_, s| {
                words.push(s.to_string())
            })?;
            for (i, k) in d.normalized_keys().into_iter().enumerate() {
                let w = words.get(k).ok_or_else(|| {
                    ctx.at(
                        i,
                        format!(
                            "dictionary key {k} past the dictionary's {} values",
                            words.len()
                        ),
                    )
                })?;
                each(i, w);
            }
        }
        other => {
            return Err(TableError::column(
                ctx.path,
                ctx.column,
                None,
                format!("expected text, found {other}"),
            ))
        }
    }
    Ok(())
}

/// The value type a column of this Arrow type is read as, or why it cannot be.
pub(crate) fn value_type(t: &DataType) -> Result<ValueType, String> {
    Ok(match t {
        DataType::Float16 => ValueType::F16,
        DataType::Float32 => ValueType::F32,
        DataType::Float64 => ValueType::F64,
        DataType::Int8 => ValueType::I8,
        DataType::Int16 => ValueType::I16,
        DataType::Int32 => ValueType::I32,
        DataType::Int64 => ValueType::I64,
        DataType::UInt8 => ValueType::U8,
        DataType::UInt16 => ValueType::U16,
        DataType::UInt32 => ValueType::U32,
        DataType::UInt64 => ValueType::U64,
        DataType::Boolean => ValueType::Bool,
        DataType::Dictionary(_, v) => return value_type(v),
        other => {
            return Err(format!(
                "values must be numbers or booleans, not {other} (name the value column with --value-column, or --value-column none for a pattern)"
            ))
        }
    })
}

/// A value type that Arrow arrays hold natively.
pub(crate) trait ArrowValue: Value + sptk_tensor::ValueVecAccess {
    /// Appends the values of `arr` (of this type, or a dictionary of it) to `out`.
    fn extend(arr: &dyn Array, ctx: &Ctx, out: &mut Vec<Self>) -> Result<(), TableError>;
    /// The value of a pattern entry (one).
    fn one() -> Self;
}

fn dict_values<K: ArrowDictionaryKeyType, V: ArrowValue>(
    arr: &dyn Array,
    ctx: &Ctx,
    out: &mut Vec<V>,
) -> Result<(), TableError> {
    let d: &DictionaryArray<K> = arr.as_dictionary::<K>();
    let mut words = Vec::new();
    let inner = Ctx { row0: 0, ..*ctx };
    V::extend(d.values().as_ref(), &inner, &mut words)?;
    out.reserve(d.len());
    for (i, k) in d.keys().values().iter().enumerate() {
        let k = k.to_usize().unwrap_or(usize::MAX);
        let v = words.get(k).ok_or_else(|| {
            ctx.at(
                i,
                format!(
                    "dictionary key {k} past the dictionary's {} values",
                    words.len()
                ),
            )
        })?;
        out.push(*v);
    }
    Ok(())
}

fn dict_dispatch<V: ArrowValue>(
    arr: &dyn Array,
    ctx: &Ctx,
    out: &mut Vec<V>,
) -> Result<(), TableError> {
    let DataType::Dictionary(k, _) = arr.data_type() else {
        return Err(TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!("expected {} values, found {}", V::TYPE, arr.data_type()),
        ));
    };
    match k.as_ref() {
        DataType::Int8 => dict_values::<Int8Type, V>(arr, ctx, out),
        DataType::Int16 => dict_values::<Int16Type, V>(arr, ctx, out),
        DataType::Int32 => dict_values::<Int32Type, V>(arr, ctx, out),
        DataType::Int64 => dict_values::<Int64Type, V>(arr, ctx, out),
        DataType::UInt8 => dict_values::<UInt8Type, V>(arr, ctx, out),
        DataType::UInt16 => dict_values::<UInt16Type, V>(arr, ctx, out),
        DataType::UInt32 => dict_values::<UInt32Type, V>(arr, ctx, out),
        _ => dict_values::<UInt64Type, V>(arr, ctx, out),
    }
}

macro_rules! arrow_value {
    ($v:ty, $arrow:ty, $one:expr) => {
        impl ArrowValue for $v {
            fn extend(arr: &dyn Array, ctx: &Ctx, out: &mut Vec<Self>) -> Result<(), TableError> {
                if arr.null_count() > 0 {
                    return Err(ctx.null(arr));
                }
                match arr.as_primitive_opt::<$arrow>() {
                    Some(a) => {
                        out.extend_from_slice(a.values());
                        Ok(())
                    }
                    None => dict_dispatch::<$v>(arr, ctx, out),
                }
            }
            fn one() -> Self {
                $one
            }
        }
    };
}
arrow_value!(f16, Float16Type, f16::ONE);
arrow_value!(f32, Float32Type, 1.0);
arrow_value!(f64, Float64Type, 1.0);
arrow_value!(i8, Int8Type, 1);
arrow_value!(i16, Int16Type, 1);
arrow_value!(i32, Int32Type, 1);
arrow_value!(i64, Int64Type, 1);
arrow_value!(u8, UInt8Type, 1);
arrow_value!(u16, UInt16Type, 1);
arrow_value!(u32, UInt32Type, 1);
arrow_value!(u64, UInt64Type, 1);

impl ArrowValue for bool {
    fn extend(arr: &dyn Array, ctx: &Ctx, out: &mut Vec<Self>) -> Result<(), TableError> {
        if arr.null_count() > 0 {
            return Err(ctx.null(arr));
        }
        match arr.as_boolean_opt() {
            Some(a) => {
                out.extend(a.values().iter());
                Ok(())
            }
            None => dict_dispatch::<bool>(arr, ctx, out),
        }
    }
    fn one() -> Self {
        true
    }
}

/// Runs `$body` with the type `$V` bound to the [`ArrowValue`] of value type `$t`.
macro_rules! with_arrow_value {
    ($t:expr, $V:ident => $body:expr) => {{
        use sptk_tensor::ValueType as T;
        match $t {
            T::F16 => {
                type $V = half::f16;
                $body
            }
            T::F32 => {
                type $V = f32;
                $body
            }
            T::F64 => {
                type $V = f64;
                $body
            }
            T::I8 => {
                type $V = i8;
                $body
            }
            T::I16 => {
                type $V = i16;
                $body
            }
            T::I32 => {
                type $V = i32;
                $body
            }
            T::I64 => {
                type $V = i64;
                $body
            }
            T::U8 => {
                type $V = u8;
                $body
            }
            T::U16 => {
                type $V = u16;
                $body
            }
            T::U32 => {
                type $V = u32;
                $body
            }
            T::U64 => {
                type $V = u64;
                $body
            }
            T::Bool => {
                type $V = bool;
                $body
            }
            other => unreachable!("no Arrow column holds {other} values"),
        }
    }};
}
pub(crate) use with_arrow_value;

//! Parsers of one chunk of a Matrix Market body (a run of complete lines): coordinate lines
//! into coordinate/value arrays, array lines into values. Generic over the coordinate
//! width and the field so the hot loops are monomorphic.

use crate::alloc::Zeroed;
use crate::error::RawError;
use crate::header::Symmetry;
use crate::scan::{
    at, describe_token, find_newline, find_newline_near, parse_f64, parse_i64, parse_u64,
    skip_blanks, NumErr, ValErr,
};
use sptk_tensor::{IndexVec, Value, ValueVecAccess, C128};

/// A coordinate element type: `u32` when the dimension fits, else `u64`.
pub(crate) trait Idx: Copy + Send + Sync + Default + Zeroed + 'static {
    /// Narrows a checked coordinate.
    fn from_u64(x: u64) -> Self;
    /// Widens.
    fn to_u64(self) -> u64;
    /// Wraps an array.
    fn wrap(v: Vec<Self>) -> IndexVec;
}

impl Idx for u32 {
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn wrap(v: Vec<Self>) -> IndexVec {
        IndexVec::U32(v.into())
    }
}

impl Idx for u64 {
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    fn wrap(v: Vec<Self>) -> IndexVec {
        IndexVec::U64(v.into())
    }
}

/// How one field's values are parsed and mirrored.
pub(crate) trait FieldKind: Send + Sync + 'static {
    /// The value type.
    type V: Value + ValueVecAccess + Zeroed;
    /// True if lines carry a value.
    const HAS_VALUE: bool;
    /// Parses the value starting at `p` (blanks already skipped, not at end of line).
    fn parse(t: &[u8], p: &mut usize) -> Result<Self::V, RawError>;
    /// The value stored for the mirrored entry.
    fn mirror(v: Self::V, sym: Symmetry) -> Self::V;
    /// False if the value cannot be negated (skew-symmetric `i64::MIN`).
    fn negatable(_v: &Self::V) -> bool {
        true
    }
}

fn value_error(t: &[u8], p: usize, e: ValErr, kind: &str) -> RawError {
    let tok = describe_token(t, p);
    let msg = match e {
        ValErr::Invalid => format!("{tok} is not a valid {kind} number, expected a {kind} value"),
        ValErr::Fraction => {
            format!("integer field value {tok} has a fraction or exponent, expected an integer")
        }
        ValErr::Overflow => {
            format!("integer value {tok} is out of range, expected a 64-bit signed integer")
        }
    };
    RawError::new(p, msg)
}

/// `real` / `double`.
pub(crate) struct RealField;
/// `integer`.
pub(crate) struct IntField;
/// `complex`.
pub(crate) struct ComplexField;
/// `pattern`.
pub(crate) struct PatternField;

impl FieldKind for RealField {
    type V = f64;
    const HAS_VALUE: bool = true;
    #[inline(always)]
    fn parse(t: &[u8], p: &mut usize) -> Result<f64, RawError> {
        let s = *p;
        parse_f64(t, p).map_err(|e| value_error(t, s, e, "real"))
    }
    fn mirror(v: f64, sym: Symmetry) -> f64 {
        if sym == Symmetry::SkewSymmetric {
            -v
        } else {
            v
        }
    }
}

impl FieldKind for IntField {
    type V = i64;
    const HAS_VALUE: bool = true;
    #[inline(always)]
    fn parse(t: &[u8], p: &mut usize) -> Result<i64, RawError> {
        let s = *p;
        parse_i64(t, p).map_err(|e| value_error(t, s, e, "integer"))
    }
    fn mirror(v: i64, sym: Symmetry) -> i64 {
        if sym == Symmetry::SkewSymmetric {
            v.wrapping_neg()
        } else {
            v
        }
    }
    fn negatable(v: &i64) -> bool {
        *v != i64::MIN
    }
}

impl FieldKind for ComplexField {
    type V = C128;
    const HAS_VALUE: bool = true;
    #[inline(always)]
    fn parse(t: &[u8], p: &mut usize) -> Result<C128, RawError> {
        let s = *p;
        let re = parse_f64(t, p).map_err(|e| value_error(t, s, e, "real"))?;
        skip_blanks(t, p);
        if at(t, *p) == b'\n' {
            return Err(RawError::new(
                *p,
                "complex value has no imaginary part, expected `real imaginary`",
            ));
        }
        let s = *p;
        let im = parse_f64(t, p).map_err(|e| value_error(t, s, e, "real"))?;
        Ok(C128 { re, im })
    }
    fn mirror(v: C128, sym: Symmetry) -> C128 {
        match sym {
            Symmetry::SkewSymmetric => C128 {
                re: -v.re,
                im: -v.im,
            },
            Symmetry::Hermitian => C128 {
                re: v.re,
                im: -v.im,
            },
            _ => v,
        }
    }
}

impl FieldKind for PatternField {
    type V = f64;
    const HAS_VALUE: bool = false;
    fn parse(_t: &[u8], _p: &mut usize) -> Result<f64, RawError> {
        Ok(1.0)
    }
    fn mirror(v: f64, _sym: Symmetry) -> f64 {
        v
    }
}

/// Parsed coordinate entries of one chunk (0-based coordinates).
pub(crate) struct CooBuf<R, C, V> {
    pub rows: Vec<R>,
    pub cols: Vec<C>,
    pub vals: Vec<V>,
}

impl<R, C, V> Default for CooBuf<R, C, V> {
    fn default() -> Self {
        CooBuf {
            rows: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        }
    }
}

impl<R, C, V> CooBuf<R, C, V> {
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.cols.clear();
        self.vals.clear();
    }
    pub(crate) fn len(&self) -> usize {
        self.vals.len()
    }
}

#[cold]
fn index_error(t: &[u8], p: usize, e: Option<NumErr>, what: &str, size: u64) -> RawError {
    let tok = describe_token(t, p);
    let msg = match e {
        _ if at(t, p) == b'\n' => format!("the line ends early, expected a {what} index"),
        Some(NumErr::Negative) => {
            format!("{what} index {tok} is negative, expected an integer in 1..={size}")
        }
        Some(NumErr::Overflow) => {
            format!("{what} index {tok} overflows 64 bits, expected an integer in 1..={size}")
        }
        Some(NumErr::Invalid) => {
            format!("{tok} is not a valid {what} index, expected an integer in 1..={size}")
        }
        None => format!(
            "{what} index {} is out of range, expected an integer in 1..={size} (indices are 1-based)",
            &tok[1..tok.len() - 1]
        ),
    };
    RawError::new(p, msg)
}

#[inline(always)]
fn index(t: &[u8], p: &mut usize, size: u64, what: &str) -> Result<u64, RawError> {
    let s = *p;
    match parse_u64(t, p) {
        Ok(v) if v >= 1 && v <= size => Ok(v - 1),
        Ok(_) => Err(index_error(t, s, None, what, size)),
        Err(e) => Err(index_error(t, s, Some(e), what, size)),
    }
}

#[cold]
fn trailing_error(t: &[u8], p: usize, has_value: bool, array: bool) -> RawError {
    let tok = describe_token(t, p);
    let msg = if array {
        format!("unexpected {tok} after the value, expected one value per line")
    } else if has_value {
        format!("unexpected {tok} after the value, expected end of line")
    } else {
        format!("a pattern matrix has no values, but found {tok}; expected end of line after the column index")
    };
    RawError::new(p, msg)
}

#[cold]
fn symmetry_error(t: &[u8], p: usize, i: u64, j: u64, sym: Symmetry) -> RawError {
    let _ = t;
    let msg = if i == j {
        format!(
            "a skew-symmetric matrix has a zero diagonal, but entry ({}, {}) is on it; expected only entries below the diagonal (row > column)",
            i + 1,
            j + 1
        )
    } else {
        let want = if sym == Symmetry::SkewSymmetric {
            "row > column"
        } else {
            "row >= column"
        };
        format!(
            "entry ({}, {}) is above the diagonal of a {} matrix, expected only the lower triangle ({want})",
            i + 1,
            j + 1,
            sym.name()
        )
    };
    RawError::new(p, msg)
}

/// Skips blanks at `p`; on a blank or comment (`%`) line moves past it and returns
/// `false`, else returns `true` with `p` at the line's first token.
#[inline(always)]
fn at_data_line(t: &[u8], p: &mut usize) -> bool {
    skip_blanks(t, p);
    match at(t, *p) {
        b'\n' => {
            *p += 1;
            false
        }
        b'%' => {
            *p = find_newline(t, *p) + 1;
            false
        }
        _ => true,
    }
}

/// Parses the coordinate lines of `t` into `out`. Errors carry offsets into `t`.
#[inline(never)]
pub(crate) fn parse_coo_chunk<R: Idx, C: Idx, F: FieldKind>(
    t: &[u8],
    rows: u64,
    cols: u64,
    sym: Symmetry,
    out: &mut CooBuf<R, C, F::V>,
) -> Result<(), RawError> {
    parse_coo_lines::<F, _>(t, rows, cols, sym, |i, j, v| {
        out.rows.push(R::from_u64(i));
        out.cols.push(C::from_u64(j));
        out.vals.push(v);
        true
    })
    .map(|_| ())
}

/// Parses the coordinate lines of `t` and hands each entry, 0-based, to `put` in order;
/// stops when `put` returns `false` (then returns `Ok(false)`). Errors carry offsets into
/// `t`.
#[inline(always)]
pub(crate) fn parse_coo_lines<F: FieldKind, P: FnMut(u64, u64, F::V) -> bool>(
    t: &[u8],
    rows: u64,
    cols: u64,
    sym: Symmetry,
    mut put: P,
) -> Result<bool, RawError> {
    let n = t.len();
    let mut p = 0;
    while p < n {
        if !at_data_line(t, &mut p) {
            continue;
        }
        let line_start = p;
        let i = index(t, &mut p, rows, "row")?;
        skip_blanks(t, &mut p);
        let j = index(t, &mut p, cols, "column")?;
        skip_blanks(t, &mut p);
        let v = if F::HAS_VALUE {
            if at(t, p) == b'\n' {
                return Err(RawError::new(
                    p,
                    "the line ends after the column index, expected a value",
                ));
            }
            let v = F::parse(t, &mut p)?;
            skip_blanks(t, &mut p);
            v
        } else {
            F::parse(t, &mut p)?
        };
        if at(t, p) != b'\n' {
            return Err(trailing_error(t, p, F::HAS_VALUE, false));
        }
        p += 1;
        match sym {
            Symmetry::General => {}
            Symmetry::Symmetric | Symmetry::Hermitian => {
                if i < j {
                    return Err(symmetry_error(t, line_start, i, j, sym));
                }
            }
            Symmetry::SkewSymmetric => {
                if i <= j {
                    return Err(symmetry_error(t, line_start, i, j, sym));
                }
                if !F::negatable(&v) {
                    return Err(RawError::new(
                        line_start,
                        format!(
                            "entry ({}, {}) of a skew-symmetric matrix cannot be negated in 64 bits, expected a value above {}",
                            i + 1,
                            j + 1,
                            i64::MIN
                        ),
                    ));
                }
            }
        }
        if !put(i, j, v) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first pass of the direct conversion: for every entry line of `t`, adds one to
/// `counts[c >> shift]`, `c` being the entry's coordinate in dimension `dim` (and, for
/// symmetric storage, the mirrored entry's, off the diagonal). Reads only the indices it needs; returns the
/// number of entry lines and of entries (mirrors included), or `None` at the first line
/// whose indices it cannot read (the full parser then reports it). Counts wrap; the caller
/// checks their sum.
#[inline(never)]
pub(crate) fn count_coo_lines(
    t: &[u8],
    rows: u64,
    cols: u64,
    sym: Symmetry,
    dim: usize,
    shift: u32,
    counts: &mut [u32],
) -> Option<(u64, u64)> {
    let n = t.len();
    let mut p = 0;
    let (mut lines, mut entries) = (0u64, 0u64);
    let both = dim == 1 || sym != Symmetry::General;
    while p < n {
        if !at_data_line(t, &mut p) {
            continue;
        }
        let i = parse_u64(t, &mut p).ok().filter(|&i| i >= 1 && i <= rows)? - 1;
        let j = if both {
            skip_blanks(t, &mut p);
            parse_u64(t, &mut p).ok().filter(|&j| j >= 1 && j <= cols)? - 1
        } else {
            0
        };
        let (a, b) = if dim == 0 { (i, j) } else { (j, i) };
        let c = counts.get_mut((a >> shift) as usize)?;
        *c = c.wrapping_add(1);
        entries += 1;
        if sym != Symmetry::General && i != j {
            let c = counts.get_mut((b >> shift) as usize)?;
            *c = c.wrapping_add(1);
            entries += 1;
        }
        lines += 1;
        p = find_newline_near(t, p) + 1;
    }
    Some((lines, entries))
}

/// Parses the value lines of an `array` body chunk into `out` (every value, zeros included).
#[inline(never)]
pub(crate) fn parse_array_chunk<F: FieldKind>(
    t: &[u8],
    out: &mut Vec<F::V>,
) -> Result<(), RawError> {
    let n = t.len();
    let mut p = 0;
    while p < n {
        if !at_data_line(t, &mut p) {
            continue;
        }
        let v = F::parse(t, &mut p)?;
        skip_blanks(t, &mut p);
        if at(t, p) != b'\n' {
            return Err(trailing_error(t, p, true, true));
        }
        p += 1;
        out.push(v);
    }
    Ok(())
}

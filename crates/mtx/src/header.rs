//! The Matrix Market header: the `%%MatrixMarket` banner, comment lines and the size line.

use crate::error::RawError;
use crate::scan::{at, describe_token, parse_u64, skip_blanks, token_end, NumErr};
use std::fmt;

/// The object of a Matrix Market file. Only `matrix` is supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Object {
    /// `matrix`.
    Matrix,
}

/// How the entries are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `coordinate`: one `row column [value]` line per stored entry.
    Coordinate,
    /// `array`: every value of the (triangle of the) matrix, column by column.
    Array,
}

/// The value field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `real` (also spelled `double`): read as `f64`.
    Real,
    /// `integer`: read as `i64`.
    Integer,
    /// `complex`: read as complex128.
    Complex,
    /// `pattern`: no values; read as `f64` ones.
    Pattern,
}

/// The symmetry of the stored matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Every entry is listed.
    General,
    /// `a(i, j) = a(j, i)`; only the lower triangle (row >= column) is listed.
    Symmetric,
    /// `a(i, j) = -a(j, i)`; only the strict lower triangle is listed (the diagonal is 0).
    SkewSymmetric,
    /// `a(i, j) = conj(a(j, i))`; only the lower triangle is listed.
    Hermitian,
}

impl Object {
    /// The banner word.
    pub fn name(self) -> &'static str {
        "matrix"
    }
}

impl Format {
    /// The banner word.
    pub fn name(self) -> &'static str {
        match self {
            Format::Coordinate => "coordinate",
            Format::Array => "array",
        }
    }
}

impl Field {
    /// The banner word.
    pub fn name(self) -> &'static str {
        match self {
            Field::Real => "real",
            Field::Integer => "integer",
            Field::Complex => "complex",
            Field::Pattern => "pattern",
        }
    }
}

impl Symmetry {
    /// The banner word.
    pub fn name(self) -> &'static str {
        match self {
            Symmetry::General => "general",
            Symmetry::Symmetric => "symmetric",
            Symmetry::SkewSymmetric => "skew-symmetric",
            Symmetry::Hermitian => "hermitian",
        }
    }
}

macro_rules! display_by_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}
display_by_name!(Object, Format, Field, Symmetry);

/// Everything the header of a Matrix Market file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MtxHeader {
    /// Always [`Object::Matrix`].
    pub object: Object,
    /// `coordinate` or `array`.
    pub format: Format,
    /// The value field (`double` is read as [`Field::Real`]).
    pub field: Field,
    /// The symmetry.
    pub symmetry: Symmetry,
    /// Number of rows.
    pub rows: u64,
    /// Number of columns.
    pub cols: u64,
    /// Number of entries (coordinate) or values (array) the file stores, before symmetric
    /// expansion.
    pub nnz_stored: u64,
    /// The comment lines between banner and size line, each without its leading `%`, joined
    /// with `\n` (empty if there were none).
    pub comment: String,
}

/// The banner every file must start with.
pub(crate) const BANNER: &str = "%%MatrixMarket";

const BANNER_HELP: &str = "expected `%%MatrixMarket matrix coordinate|array real|double|integer|complex|pattern general|symmetric|skew-symmetric|hermitian`";

/// Line-by-line parser of the header.
#[derive(Default)]
pub(crate) struct HeaderParser {
    banner: Option<(Format, Field, Symmetry)>,
    comment: Vec<String>,
}

/// What the header parser wants after a line.
pub(crate) enum HeaderStep {
    /// Feed the next line.
    More,
    /// The header is complete; the body starts on the next line.
    Done(MtxHeader),
}

impl HeaderParser {
    /// True once the banner line has been read.
    pub(crate) fn has_banner(&self) -> bool {
        self.banner.is_some()
    }

    /// Feeds one line (without its `\n`). Errors carry byte offsets into `line`.
    pub(crate) fn feed(&mut self, line: &[u8]) -> Result<HeaderStep, RawError> {
        let Some((format, field, symmetry)) = self.banner else {
            self.banner = Some(parse_banner(line)?);
            return Ok(HeaderStep::More);
        };
        let mut p = 0;
        skip_blanks(line, &mut p);
        match at(line, p) {
            b'\n' => return Ok(HeaderStep::More),
            b'%' => {
                let text = line.get(p + 1..).unwrap_or(&[]);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                self.comment
                    .push(String::from_utf8_lossy(text).into_owned());
                return Ok(HeaderStep::More);
            }
            _ => {}
        }
        let (rows, cols, nnz) = parse_size_line(line, format, symmetry)?;
        Ok(HeaderStep::Done(MtxHeader {
            object: Object::Matrix,
            format,
            field,
            symmetry,
            rows,
            cols,
            nnz_stored: nnz,
            comment: self.comment.join("\n"),
        }))
    }
}

fn word<'a>(line: &'a [u8], p: &mut usize) -> (usize, &'a [u8]) {
    skip_blanks(line, p);
    let start = *p;
    let end = token_end(line, start);
    *p = end;
    (start, line.get(start..end).unwrap_or(&[]))
}

fn parse_banner(line: &[u8]) -> Result<(Format, Field, Symmetry), RawError> {
    let mut p = 0;
    let (s0, w0) = word(line, &mut p);
    if !w0.eq_ignore_ascii_case(BANNER.as_bytes()) {
        let msg = if w0.is_empty() && at(line, s0) == b'\n' {
            format!("the first line is empty, {BANNER_HELP}")
        } else if w0.starts_with(b"%%") {
            format!("unknown banner {}, {BANNER_HELP}", describe_token(line, s0))
        } else {
            format!(
                "the file does not start with the Matrix Market banner (found {}), {BANNER_HELP}",
                describe_token(line, s0)
            )
        };
        return Err(RawError::new(s0, msg));
    }
    let (s1, w1) = word(line, &mut p);
    if w1.is_empty() {
        return Err(RawError::new(
            s1,
            "the banner ends early, expected the object `matrix`",
        ));
    }
    if !w1.eq_ignore_ascii_case(b"matrix") {
        return Err(RawError::new(
            s1,
            format!(
                "unknown object {}, expected `matrix`",
                describe_token(line, s1)
            ),
        ));
    }
    let (s2, w2) = word(line, &mut p);
    let format = match w2.to_ascii_lowercase().as_slice() {
        b"coordinate" => Format::Coordinate,
        b"array" => Format::Array,
        b"" => {
            return Err(RawError::new(
                s2,
                "the banner ends early, expected the format `coordinate` or `array`",
            ))
        }
        _ => {
            return Err(RawError::new(
                s2,
                format!(
                    "unknown format {}, expected `coordinate` or `array`",
                    describe_token(line, s2)
                ),
            ))
        }
    };
    let (s3, w3) = word(line, &mut p);
    let field = match w3.to_ascii_lowercase().as_slice() {
        b"real" | b"double" => Field::Real,
        b"integer" => Field::Integer,
        b"complex" => Field::Complex,
        b"pattern" => Field::Pattern,
        b"" => {
            return Err(RawError::new(
                s3,
                "the banner ends early, expected the field `real`, `double`, `integer`, `complex` or `pattern`",
            ))
        }
        _ => {
            return Err(RawError::new(
                s3,
                format!(
                    "unknown field {}, expected `real`, `double`, `integer`, `complex` or `pattern`",
                    describe_token(line, s3)
                ),
            ))
        }
    };
    let (s4, w4) = word(line, &mut p);
    let symmetry = match w4.to_ascii_lowercase().as_slice() {
        b"general" => Symmetry::General,
        b"symmetric" => Symmetry::Symmetric,
        b"skew-symmetric" => Symmetry::SkewSymmetric,
        b"hermitian" => Symmetry::Hermitian,
        b"" => {
            return Err(RawError::new(
                s4,
                "the banner ends early, expected the symmetry `general`, `symmetric`, `skew-symmetric` or `hermitian`",
            ))
        }
        _ => {
            return Err(RawError::new(
                s4,
                format!(
                    "unknown symmetry {}, expected `general`, `symmetric`, `skew-symmetric` or `hermitian`",
                    describe_token(line, s4)
                ),
            ))
        }
    };
    let (s5, w5) = word(line, &mut p);
    if !w5.is_empty() {
        return Err(RawError::new(
            s5,
            format!(
                "unexpected {} after the symmetry, expected end of the banner line",
                describe_token(line, s5)
            ),
        ));
    }
    if format == Format::Array && field == Field::Pattern {
        return Err(RawError::new(
            s3,
            "an `array` file cannot have the field `pattern`, expected `real`, `double`, `integer` or `complex`",
        ));
    }
    if symmetry == Symmetry::Hermitian && matches!(field, Field::Integer | Field::Pattern) {
        return Err(RawError::new(
            s4,
            format!(
                "`hermitian` needs a `complex` (or `real`) field, found `{}`; expected `symmetric` or a complex field",
                field.name()
            ),
        ));
    }
    if symmetry == Symmetry::SkewSymmetric && field == Field::Pattern {
        return Err(RawError::new(
            s4,
            "a `pattern` matrix cannot be `skew-symmetric`, expected `general` or `symmetric`",
        ));
    }
    Ok((format, field, symmetry))
}

fn size_number(line: &[u8], p: &mut usize, what: &str) -> Result<u64, RawError> {
    skip_blanks(line, p);
    let start = *p;
    if at(line, start) == b'\n' {
        return Err(RawError::new(
            start,
            format!("the size line ends early, expected the {what}"),
        ));
    }
    parse_u64(line, p).map_err(|e| {
        let tok = describe_token(line, start);
        let msg = match e {
            NumErr::Negative => {
                format!("the {what} {tok} is negative, expected a non-negative integer")
            }
            NumErr::Overflow => {
                format!("the {what} {tok} overflows 64 bits, expected an integer below 2^64")
            }
            NumErr::Invalid => {
                format!("{tok} is not a valid {what}, expected a non-negative integer")
            }
        };
        RawError::new(start, msg)
    })
}

fn parse_size_line(
    line: &[u8],
    format: Format,
    symmetry: Symmetry,
) -> Result<(u64, u64, u64), RawError> {
    let mut p = 0;
    skip_blanks(line, &mut p);
    let first = p;
    let rows = size_number(line, &mut p, "number of rows")?;
    let cols = size_number(line, &mut p, "number of columns")?;
    let nnz = match format {
        Format::Coordinate => size_number(line, &mut p, "number of entries")?,
        Format::Array => 0,
    };
    skip_blanks(line, &mut p);
    if at(line, p) != b'\n' {
        let expected = match format {
            Format::Coordinate => "expected `rows columns entries` only",
            Format::Array => "expected `rows columns` only for an array",
        };
        return Err(RawError::new(
            p,
            format!(
                "unexpected {} at the end of the size line, {expected}",
                describe_token(line, p)
            ),
        ));
    }
    if symmetry != Symmetry::General && rows != cols {
        return Err(RawError::new(
            first,
            format!(
                "a {} matrix must be square, but the size line says {rows} rows and {cols} columns; expected equal numbers",
                symmetry.name()
            ),
        ));
    }
    let nnz = match format {
        Format::Coordinate => nnz,
        Format::Array => {
            let n = match symmetry {
                Symmetry::General => rows.checked_mul(cols),
                Symmetry::Symmetric | Symmetry::Hermitian => {
                    (rows as u128 * (rows as u128 + 1) / 2).try_into().ok()
                }
                Symmetry::SkewSymmetric => (rows as u128 * (rows.saturating_sub(1)) as u128 / 2)
                    .try_into()
                    .ok(),
            };
            n.ok_or_else(|| {
                RawError::new(
                    first,
                    format!(
                        "an array of {rows} x {cols} values overflows 64 bits, expected a smaller size"
                    ),
                )
            })?
        }
    };
    Ok((rows, cols, nnz))
}

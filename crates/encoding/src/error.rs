//! Error types: [`ParseError`] for text that does not parse (with the source line and a caret
//! under the offending span) and [`EncodingError`] for encodings that parse but break a rule.

use std::fmt;
use std::ops::Range;

/// What kind of semantic rule an [`EncodingError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EncodingErrorKind {
    /// The level map cannot be inverted (a dimension is lost or used twice).
    NotInvertible,
    /// A `singleton` level without a suitable parent, or mixed `soa`.
    Singleton,
    /// A property on a format that does not take it (`soa` off a singleton, `nonunique` on dense).
    Properties,
    /// A `structured[n, m]` rule.
    Structured,
    /// `batch` levels that are not leading.
    Batch,
    /// The ELL form is malformed.
    Ell,
    /// `posWidth` is not one of 0, 8, 16, 32, 64.
    PosWidth,
    /// `crdWidth` is not one of 0, 2, 8, 16, 32, 64, or 2 where it is not allowed.
    CrdWidth,
    /// `explicitVal` / `implicitVal` is malformed (or a non-zero `implicitVal`).
    Value,
    /// A dimension slice is malformed (zero size or stride).
    Slice,
    /// Too few or too many run-time slice values.
    SliceValues,
    /// The encoding is valid but converting into it is not supported yet.
    NotSupported,
    /// The map has no levels or no dimensions.
    Empty,
}

/// An encoding that parses but breaks one of the rules of ENCODING.md.
///
/// The message names the level (or dimension) at fault; [`EncodingError::level`] and
/// [`EncodingError::dim`] give it as a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodingError {
    kind: EncodingErrorKind,
    level: Option<usize>,
    dim: Option<usize>,
    message: String,
}

impl EncodingError {
    /// A new error of `kind` with the full `message`.
    pub fn new(kind: EncodingErrorKind, message: impl Into<String>) -> EncodingError {
        EncodingError {
            kind,
            level: None,
            dim: None,
            message: message.into(),
        }
    }
    /// The same error, recording the level it is about.
    pub fn at_level(mut self, level: usize) -> EncodingError {
        self.level = Some(level);
        self
    }
    /// The same error, recording the dimension it is about.
    pub fn at_dim(mut self, dim: usize) -> EncodingError {
        self.dim = Some(dim);
        self
    }
    /// Which rule is broken.
    pub fn kind(&self) -> EncodingErrorKind {
        self.kind
    }
    /// The level the error is about, if any.
    pub fn level(&self) -> Option<usize> {
        self.level
    }
    /// The dimension the error is about, if any.
    pub fn dim(&self) -> Option<usize> {
        self.dim
    }
    /// The message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodingError {}

/// What went wrong while parsing encoding text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A character that starts no token.
    UnexpectedChar(char),
    /// Something other than what the grammar allows here.
    Expected {
        /// What the grammar allows here.
        expected: String,
        /// What was found instead.
        found: String,
    },
    /// A field name other than map, posWidth, crdWidth, explicitVal, implicitVal.
    UnknownKey(String),
    /// A field given twice.
    DuplicateKey(String),
    /// A field of the older MLIR syntax (`lvlTypes`, `dimToLvl`, ...).
    OlderSyntax(String),
    /// A level format that does not exist.
    UnknownLevelFormat(String),
    /// A level property that does not exist.
    UnknownLevelProperty(String),
    /// An identifier that is not declared where it is used.
    UndeclaredIdentifier(String),
    /// An identifier declared twice.
    DuplicateIdentifier(String),
    /// An expression that is not affine (a product of two dimensions, division by a dimension).
    NonAffine(String),
    /// A number that does not fit or is malformed.
    InvalidNumber(String),
    /// The `{l0, ...}` level-variable declarations disagree with the level specifications.
    LevelVariables(String),
    /// An `explicitVal` / `implicitVal` that is not a numeric value.
    InvalidValue(String),
    /// The text parses but breaks a rule (the span covers the level or field at fault).
    Invalid(EncodingError),
}

/// A syntax (or rule) error in encoding text, with the text, a byte span and what was expected.
///
/// `Display` gives one line with the column; [`ParseError::render`] shows the source line with
/// a caret under the span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    kind: ParseErrorKind,
    source: String,
    span: Range<usize>,
}

impl ParseError {
    /// A new error of `kind` at byte range `span` of `source`.
    pub fn new(kind: ParseErrorKind, source: &str, span: Range<usize>) -> ParseError {
        let end = span.end.min(source.len());
        let start = span.start.min(end);
        ParseError {
            kind,
            source: source.to_string(),
            span: start..end,
        }
    }
    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }
    /// The text that was parsed.
    pub fn source_text(&self) -> &str {
        &self.source
    }
    /// The byte range of the offending part of the text.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }
    /// What the grammar expected at the span, for [`ParseErrorKind::Expected`].
    pub fn expected(&self) -> Option<&str> {
        match &self.kind {
            ParseErrorKind::Expected { expected, .. } => Some(expected),
            _ => None,
        }
    }
    /// The rule error, for [`ParseErrorKind::Invalid`].
    pub fn encoding_error(&self) -> Option<&EncodingError> {
        match &self.kind {
            ParseErrorKind::Invalid(e) => Some(e),
            _ => None,
        }
    }
    /// The message without position.
    pub fn message(&self) -> String {
        match &self.kind {
            ParseErrorKind::UnexpectedChar(c) => format!("unexpected character {c:?}"),
            ParseErrorKind::Expected { expected, found } => {
                format!("expected {expected}, found {found}")
            }
            ParseErrorKind::UnknownKey(k) => format!(
                "unknown field `{k}` (fields: map, posWidth, crdWidth, explicitVal, implicitVal)"
            ),
            ParseErrorKind::DuplicateKey(k) => format!("field `{k}` is given twice"),
            ParseErrorKind::OlderSyntax(k) => format!(
                "`{k}` is the older MLIR syntax; write the level map instead, e.g. \
                 map = (d0, d1) -> (d0 : dense, d1 : compressed)"
            ),
            ParseErrorKind::UnknownLevelFormat(s) => format!(
                "unknown level format `{s}` (formats: dense, batch, compressed, \
                 loose_compressed, singleton, structured[n, m], block2_4)"
            ),
            ParseErrorKind::UnknownLevelProperty(s) => {
                format!("unknown level property `{s}` (properties: nonunique, nonordered, soa)")
            }
            ParseErrorKind::UndeclaredIdentifier(s) => {
                format!("use of undeclared identifier `{s}`")
            }
            ParseErrorKind::DuplicateIdentifier(s) => format!("identifier `{s}` is declared twice"),
            ParseErrorKind::NonAffine(s)
            | ParseErrorKind::InvalidNumber(s)
            | ParseErrorKind::LevelVariables(s)
            | ParseErrorKind::InvalidValue(s) => s.clone(),
            ParseErrorKind::Invalid(e) => e.to_string(),
        }
    }

    /// 1-based line and column (in characters) of the span start.
    pub fn line_column(&self) -> (usize, usize) {
        let before = &self.source[..self.span.start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        (
            line,
            self.source[line_start..self.span.start].chars().count() + 1,
        )
    }

    /// A multi-line message: the error, the source line and a caret (`^^^`) under the span.
    ///
    /// ```
    /// let err = sptk_encoding::parse("map = (d0) -> (d0 : sparse)").unwrap_err();
    /// assert_eq!(
    ///     err.render(),
    ///     "error: unknown level format `sparse` (formats: dense, batch, compressed, \
    ///      loose_compressed, singleton, structured[n, m], block2_4)\n  \
    ///      |\n1 | map = (d0) -> (d0 : sparse)\n  |                     ^^^^^^\n"
    /// );
    /// ```
    pub fn render(&self) -> String {
        let (line_no, col) = self.line_column();
        let line_start = self.source[..self.span.start]
            .rfind('\n')
            .map_or(0, |p| p + 1);
        let line_end = self.source[line_start..]
            .find('\n')
            .map_or(self.source.len(), |p| line_start + p);
        let line = &self.source[line_start..line_end];
        let span_end = self.span.end.min(line_end).max(self.span.start);
        let width = self.source[self.span.start..span_end]
            .chars()
            .count()
            .max(1);
        let num = line_no.to_string();
        let pad = " ".repeat(num.len());
        format!(
            "error: {}\n{pad} |\n{num} | {line}\n{pad} | {}{}\n",
            self.message(),
            " ".repeat(col - 1),
            "^".repeat(width)
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, col) = self.line_column();
        if self.source.contains('\n') {
            write!(f, "line {line}, column {col}: {}", self.message())
        } else {
            write!(f, "column {col}: {}", self.message())
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ParseErrorKind::Invalid(e) => Some(e),
            _ => None,
        }
    }
}

//! The parser: encoding text to [`Encoding`], followed by [`Encoding::validate`].
//!
//! Accepted forms: `#NAME = #sparse_tensor.encoding<{ ... }>`, `#sparse_tensor.encoding<{ ... }>`,
//! `{ map = ..., posWidth = 32 }`, `map = ..., crdWidth = 8` and a bare level map
//! `(d0, d1) -> (d0 : dense, d1 : compressed)`.

use std::ops::Range;
use std::str::FromStr;

use crate::affine::classify;
use crate::error::{EncodingError, EncodingErrorKind, ParseError, ParseErrorKind};
use crate::lexer::{Lexer, Tok, Token};
use crate::model::*;
use crate::values::{self, FloatTy, Literal};

/// A parsed encoding with the warnings the text gave rise to (the obsolete `high` property).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The encoding (validated).
    pub encoding: Encoding,
    /// Warnings, one sentence each.
    pub warnings: Vec<String>,
}

/// Parses and validates encoding text in any of the accepted forms.
///
/// ```
/// let parsed = sptk_encoding::parse("map = (i, j) -> (j : dense, i : compressed)").unwrap();
/// assert_eq!(
///     parsed.encoding.to_string(),
///     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>"
/// );
/// ```
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        src: text,
        tokens,
        pos: 0,
        warnings: Vec::new(),
        spans: Spans::default(),
        depth: 0,
    };
    let encoding = p.top()?;
    Ok(Parsed {
        encoding,
        warnings: p.warnings,
    })
}

/// Parses and validates encoding text, dropping warnings; see [`parse`].
impl FromStr for Encoding {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Encoding, ParseError> {
        parse(s).map(|p| p.encoding)
    }
}

/// Parses an `explicitVal` / `implicitVal` value on its own, giving its canonical text.
pub(crate) fn canonical_value(text: &str) -> Result<String, String> {
    let tokens = tokenize(text).map_err(|e| e.message())?;
    let mut p = Parser {
        src: text,
        tokens,
        pos: 0,
        warnings: Vec::new(),
        spans: Spans::default(),
        depth: 0,
    };
    let v = p.value("explicitVal").map_err(|e| e.message())?;
    if p.peek().tok != Tok::Eof {
        return Err(format!(
            "unexpected {} after the value",
            p.peek().tok.describe()
        ));
    }
    Ok(v)
}

fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut lex = Lexer::new(text);
    let mut tokens = Vec::new();
    loop {
        let t = lex.next_token()?;
        let eof = t.tok == Tok::Eof;
        tokens.push(t);
        if eof {
            return Ok(tokens);
        }
    }
}

const OLDER_KEYS: &[&str] = &[
    "lvlTypes",
    "dimToLvl",
    "lvlToDim",
    "dimLevelType",
    "dimOrdering",
    "higherOrdering",
    "dimSlices",
    "pointerBitWidth",
    "indexBitWidth",
    "NEW_SYNTAX",
];

const KEYS: &[&str] = &["map", "posWidth", "crdWidth", "explicitVal", "implicitVal"];

/// Spans of the parts a rule error may point at.
#[derive(Default)]
struct Spans {
    whole: Range<usize>,
    levels: Vec<Range<usize>>,
    dims: Vec<Range<usize>>,
    pos_width: Option<Range<usize>>,
    crd_width: Option<Range<usize>>,
    explicit_val: Option<Range<usize>>,
    implicit_val: Option<Range<usize>>,
}

/// Which variables an affine expression may name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Level expressions: dimension variables and symbols.
    Dims,
    /// Stated inverses (`i = ib * 2 + ii`): level variables and symbols.
    LvlVars,
}

struct Names {
    syms: Vec<String>,
    lvl_vars: Vec<String>,
    dims: Vec<String>,
}

impl Names {
    fn declared(&self, name: &str) -> bool {
        self.syms
            .iter()
            .chain(&self.lvl_vars)
            .chain(&self.dims)
            .any(|n| n == name)
    }
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    warnings: Vec<String>,
    spans: Spans,
    /// Nesting depth of parentheses / unary minus in the expression being parsed.
    depth: usize,
}

/// Deepest expression nesting accepted (guards the recursion).
const MAX_DEPTH: usize = 100;

struct MapParts {
    symbols: usize,
    dims: Vec<DimSpec>,
    inverse: Vec<Option<(AffineExpr, Range<usize>)>>,
    levels: Vec<LevelSpec>,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)].tok
    }
    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }
    fn last_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tokens[self.pos - 1].span.end
        }
    }
    fn err(&self, kind: ParseErrorKind, span: Range<usize>) -> ParseError {
        ParseError::new(kind, self.src, span)
    }
    fn expected(&self, what: &str) -> ParseError {
        let t = self.peek();
        self.err(
            ParseErrorKind::Expected {
                expected: what.to_string(),
                found: t.tok.describe(),
            },
            t.span.clone(),
        )
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str, what: &str) -> Result<Token, ParseError> {
        if self.is_punct(p) {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }
    fn ident(&mut self, what: &str) -> Result<(String, Range<usize>), ParseError> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                let t = self.bump();
                Ok((s, t.span))
            }
            _ => Err(self.expected(what)),
        }
    }
    fn keyword(&mut self, word: &str, what: &str) -> Result<(), ParseError> {
        match &self.peek().tok {
            Tok::Ident(s) if s == word => {
                self.bump();
                Ok(())
            }
            _ => Err(self.expected(what)),
        }
    }

    fn top(&mut self) -> Result<Encoding, ParseError> {
        let start = self.peek().span.start;
        let enc = match self.peek().tok.clone() {
            Tok::Hash(name) => {
                if name != "sparse_tensor.encoding" {
                    self.bump();
                    self.expect("=", "`=` after the alias name")?;
                    if !matches!(&self.peek().tok, Tok::Hash(n) if n == "sparse_tensor.encoding") {
                        return Err(self.expected("`#sparse_tensor.encoding<{ ... }>`"));
                    }
                }
                self.bump();
                self.expect("<", "`<{` after `#sparse_tensor.encoding`")?;
                self.expect("{", "`{` after `#sparse_tensor.encoding<`")?;
                let e = self.body(true)?;
                self.expect("}", "`,` or `}` after a field")?;
                self.expect(">", "`>` closing `#sparse_tensor.encoding<{ ... }`")?;
                e
            }
            Tok::Punct("{")
                if matches!(self.peek_at(1), Tok::Ident(_))
                    && *self.peek_at(2) == Tok::Punct("=") =>
            {
                self.bump();
                let e = self.body(true)?;
                self.expect("}", "`,` or `}` after a field")?;
                e
            }
            Tok::Ident(_) if *self.peek_at(1) == Tok::Punct("=") => self.body(false)?,
            Tok::Punct("(") | Tok::Punct("[") | Tok::Punct("{") => {
                let parts = self.map()?;
                self.build(parts, 0, 0, None, None)?
            }
            _ => {
                return Err(self.expected(
                    "`#sparse_tensor.encoding<{`, `{`, `map =` or a level map `(d0, ...) -> (...)`",
                ))
            }
        };
        if self.peek().tok != Tok::Eof {
            return Err(self.expected("the end of the encoding"));
        }
        self.spans.whole = start..self.last_end();
        self.finish(enc)
    }

    /// Validates, pointing a rule error at the level or field it is about.
    fn finish(&mut self, enc: Encoding) -> Result<Encoding, ParseError> {
        match enc.validate() {
            Ok(()) => Ok(enc),
            Err(e) => {
                let s = &self.spans;
                let span = match e.kind() {
                    EncodingErrorKind::PosWidth => s.pos_width.clone(),
                    EncodingErrorKind::CrdWidth => s.crd_width.clone(),
                    EncodingErrorKind::Value if e.message().starts_with("implicitVal") => {
                        s.implicit_val.clone()
                    }
                    EncodingErrorKind::Value => s.explicit_val.clone(),
                    _ => None,
                }
                .or_else(|| e.level().and_then(|l| s.levels.get(l).cloned()))
                .or_else(|| e.dim().and_then(|d| s.dims.get(d).cloned()))
                .unwrap_or_else(|| s.whole.clone());
                Err(self.err(ParseErrorKind::Invalid(e), span))
            }
        }
    }

    fn body(&mut self, braced: bool) -> Result<Encoding, ParseError> {
        let mut map: Option<MapParts> = None;
        let (mut pos_width, mut crd_width) = (None, None);
        let (mut explicit_val, mut implicit_val) = (None, None);
        let mut seen: Vec<String> = Vec::new();
        loop {
            if (braced && self.is_punct("}")) || self.peek().tok == Tok::Eof {
                break;
            }
            let (key, key_span) =
                self.ident("a field name (map, posWidth, crdWidth, explicitVal, implicitVal)")?;
            if OLDER_KEYS.contains(&key.as_str()) {
                return Err(self.err(ParseErrorKind::OlderSyntax(key), key_span));
            }
            if !KEYS.contains(&key.as_str()) {
                return Err(self.err(ParseErrorKind::UnknownKey(key), key_span));
            }
            if seen.contains(&key) {
                return Err(self.err(ParseErrorKind::DuplicateKey(key), key_span));
            }
            seen.push(key.clone());
            self.expect("=", &format!("`=` after `{key}`"))?;
            let vstart = self.peek().span.start;
            match key.as_str() {
                "map" => map = Some(self.map()?),
                "posWidth" | "crdWidth" => {
                    let w = self.width(&key)?;
                    let span = Some(vstart..self.last_end());
                    if key == "posWidth" {
                        pos_width = Some(w);
                        self.spans.pos_width = span;
                    } else {
                        crd_width = Some(w);
                        self.spans.crd_width = span;
                    }
                }
                _ => {
                    let v = self.value(&key)?;
                    let span = Some(vstart..self.last_end());
                    if key == "explicitVal" {
                        explicit_val = Some(v);
                        self.spans.explicit_val = span;
                    } else {
                        implicit_val = Some(v);
                        self.spans.implicit_val = span;
                    }
                }
            }
            if !self.eat(",") {
                break;
            }
        }
        let Some(parts) = map else {
            return Err(self.expected("a `map = (...) -> (...)` field"));
        };
        self.build(
            parts,
            pos_width.unwrap_or(0),
            crd_width.unwrap_or(0),
            explicit_val,
            implicit_val,
        )
    }

    fn width(&mut self, key: &str) -> Result<u8, ParseError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(s) => {
                self.bump();
                let kind = if key == "posWidth" {
                    EncodingErrorKind::PosWidth
                } else {
                    EncodingErrorKind::CrdWidth
                };
                let allowed = if key == "posWidth" {
                    "0, 8, 16, 32 or 64"
                } else {
                    "0, 2, 8, 16, 32 or 64"
                };
                match s.parse::<u8>() {
                    Ok(v) => Ok(v),
                    Err(_) => Err(self.err(
                        ParseErrorKind::Invalid(EncodingError::new(
                            kind,
                            format!("{key} = {s} is not a supported bit width ({allowed})"),
                        )),
                        t.span,
                    )),
                }
            }
            _ => Err(self.expected(&format!("an integral bit width for {key}"))),
        }
    }

    /// A numeric literal, with an optional leading `-`.
    fn literal(&mut self, what: &str) -> Result<Literal, ParseError> {
        let negative = self.eat("-");
        let t = self.peek().clone();
        let lit = match &t.tok {
            Tok::Int(s) if s.starts_with("0x") && !negative => Literal::Hex(s.clone()),
            Tok::Int(s) => Literal::Int {
                negative,
                text: s.clone(),
            },
            Tok::Float(s) => Literal::Float {
                negative,
                text: s.clone(),
            },
            Tok::Ident(s) if (s == "true" || s == "false") && !negative => {
                Literal::Bool(s == "true")
            }
            _ => return Err(self.expected(what)),
        };
        self.bump();
        Ok(lit)
    }

    fn value(&mut self, key: &str) -> Result<String, ParseError> {
        let start = self.peek().span.start;
        let what = format!("a numeric value for {key}");
        let bad = |p: &Self, msg: String| {
            p.err(
                ParseErrorKind::InvalidValue(format!("{key}: {msg}")),
                start..p.last_end(),
            )
        };
        if matches!(&self.peek().tok, Tok::Hash(n) if n == "complex.number") {
            self.bump();
            self.expect("<", "`<:` after `#complex.number`")?;
            self.expect(":", "`:` and the element type")?;
            let (ty, _) = self.ident("a float element type (f32, f64)")?;
            let fty = FloatTy::from_name(&ty)
                .ok_or_else(|| bad(self, format!("unsupported complex element type `{ty}`")))?;
            let re = self.literal("the real part")?;
            self.expect(",", "`,` between the real and imaginary parts")?;
            let im = self.literal("the imaginary part")?;
            self.expect(">", "`>` closing `#complex.number<...`")?;
            let re = values::float_value(&re, fty).map_err(|m| bad(self, m))?;
            let im = values::float_value(&im, fty).map_err(|m| bad(self, m))?;
            if self.eat(":") {
                self.keyword("complex", "`complex<...>`")?;
                self.expect("<", "`<` after `complex`")?;
                self.keyword(&ty, &format!("`{ty}` (the element type given above)"))?;
                self.expect(">", "`>` closing `complex<...>`")?;
            }
            return Ok(format!("#complex.number<:{ty} {re}, {im}> : complex<{ty}>"));
        }
        if matches!(self.peek().tok, Tok::Str(_) | Tok::Eof)
            || matches!(self.peek().tok, Tok::Punct(p) if p != "-")
        {
            return Err(self.expected(&what));
        }
        let lit = self.literal(&what)?;
        let ty = if self.eat(":") {
            Some(self.ident("a value type (i32, f64, ...)")?.0)
        } else {
            None
        };
        values::canonical_scalar(&lit, ty.as_deref()).map_err(|m| bad(self, m))
    }

    fn name_list(
        &mut self,
        close: &str,
        what: &str,
        names: &mut Names,
        into_syms: bool,
    ) -> Result<Vec<String>, ParseError> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            let (n, span) = self.ident(what)?;
            if names.declared(&n) || out.contains(&n) {
                return Err(self.err(ParseErrorKind::DuplicateIdentifier(n), span));
            }
            out.push(n);
            if !self.eat(",") {
                break;
            }
        }
        self.expect(close, &format!("`,` or `{close}`"))?;
        if into_syms {
            names.syms = out.clone();
        }
        Ok(out)
    }

    fn map(&mut self) -> Result<MapParts, ParseError> {
        let mut names = Names {
            syms: Vec::new(),
            lvl_vars: Vec::new(),
            dims: Vec::new(),
        };
        if self.eat("[") {
            self.name_list("]", "a symbol name", &mut names, true)?;
        }
        if self.eat("{") {
            names.lvl_vars = self.name_list("}", "a level variable name", &mut names, false)?;
        }
        self.expect("(", "`(` opening the dimension list")?;
        let mut dims = Vec::new();
        let mut inverse = Vec::new();
        if !self.eat(")") {
            loop {
                let start = self.peek().span.start;
                let (name, span) = self.ident("a dimension name")?;
                if names.declared(&name) {
                    return Err(self.err(ParseErrorKind::DuplicateIdentifier(name), span));
                }
                let inv = if self.eat("=") {
                    let s = self.peek().span.start;
                    let e = self.expr(Scope::LvlVars, &names)?;
                    Some((e, s..self.last_end()))
                } else {
                    None
                };
                let slice = if self.eat(":") {
                    Some(self.slice()?)
                } else {
                    None
                };
                dims.push(DimSpec {
                    slice,
                    name: Some(name.clone()),
                });
                names.dims.push(name);
                inverse.push(inv);
                self.spans.dims.push(start..self.last_end());
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")", "`,` or `)` in the dimension list")?;
        }
        self.expect("->", "`->` after the dimension list")?;
        self.expect("(", "`(` opening the level list")?;
        let mut levels = Vec::new();
        loop {
            let start = self.peek().span.start;
            let index = levels.len();
            if !names.lvl_vars.is_empty() {
                let (n, span) = match &self.peek().tok {
                    Tok::Ident(_) => self.ident("a level variable")?,
                    _ => return Err(self.expected("a level variable and `=`")),
                };
                match names.lvl_vars.iter().position(|v| *v == n) {
                    None => return Err(self.err(ParseErrorKind::UndeclaredIdentifier(n), span)),
                    Some(k) if k != index => {
                        return Err(self.err(
                            ParseErrorKind::LevelVariables(format!(
                                "level variable `{n}` is declared as level {k} but bound by level {index}"
                            )),
                            span,
                        ))
                    }
                    Some(_) => {}
                }
                self.expect("=", "`=` after the level variable")?;
            }
            let raw = self.expr(Scope::Dims, &names)?;
            self.expect(":", "`:` and a level format after the level expression")?;
            let (format, props) = self.level_type(index)?;
            levels.push(LevelSpec {
                expr: classify(&raw),
                format,
                props,
            });
            self.spans.levels.push(start..self.last_end());
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")", "`,` or `)` in the level list")?;
        if !names.lvl_vars.is_empty() && names.lvl_vars.len() != levels.len() {
            return Err(self.err(
                ParseErrorKind::LevelVariables(format!(
                    "{} level variables are declared but {} levels are given",
                    names.lvl_vars.len(),
                    levels.len()
                )),
                self.spans.levels.last().cloned().unwrap_or(0..0),
            ));
        }
        Ok(MapParts {
            symbols: names.syms.len(),
            dims,
            inverse,
            levels,
        })
    }

    fn slice(&mut self) -> Result<DimSlice, ParseError> {
        let what = "`#sparse_tensor<slice(offset, size, stride)>`";
        if !matches!(&self.peek().tok, Tok::Hash(n) if n == "sparse_tensor") {
            return Err(self.expected(what));
        }
        self.bump();
        self.expect("<", what)?;
        self.keyword("slice", "`slice(offset, size, stride)`")?;
        self.expect("(", "`(` after `slice`")?;
        let mut vals = [SliceValue::Dynamic; 3];
        for (i, v) in vals.iter_mut().enumerate() {
            if i > 0 {
                self.expect(",", "`,` between slice values")?;
            }
            let t = self.peek().clone();
            *v = match &t.tok {
                Tok::Punct("?") => SliceValue::Dynamic,
                Tok::Int(s) if !s.starts_with("0x") => {
                    SliceValue::Static(s.parse().map_err(|_| {
                        self.err(
                            ParseErrorKind::InvalidNumber(format!("slice value {s} is too large")),
                            t.span.clone(),
                        )
                    })?)
                }
                _ => {
                    return Err(self
                        .expected("a non-negative integer or `?` (slice offset, size and stride)"))
                }
            };
            self.bump();
        }
        self.expect(")", "`)` after the three slice values")?;
        self.expect(">", "`>` closing `#sparse_tensor<slice(...)`")?;
        Ok(DimSlice {
            offset: vals[0],
            size: vals[1],
            stride: vals[2],
        })
    }

    fn level_type(&mut self, level: usize) -> Result<(LevelFormat, LevelProps), ParseError> {
        let what = "a level format (dense, compressed, singleton, ...)";
        let (name, span) = match &self.peek().tok {
            Tok::Ident(_) => self.ident(what)?,
            _ => return Err(self.expected(what)),
        };
        let mut format = match name.as_str() {
            "dense" => LevelFormat::Dense,
            "batch" => LevelFormat::Batch,
            "compressed" => LevelFormat::Compressed,
            "loose_compressed" => LevelFormat::LooseCompressed,
            "singleton" => LevelFormat::Singleton,
            "block2_4" => LevelFormat::Structured { n: 2, m: 4 },
            "structured" => {
                self.expect("[", "`[n, m]` after `structured`")?;
                let n = self.small_int("n, the entries kept per group (a non-negative integer)")?;
                self.expect(",", "`,` between n and m")?;
                let m = self.small_int("m, the group size (a non-negative integer)")?;
                self.expect("]", "`]` after `structured[n, m`")?;
                LevelFormat::Structured { n, m }
            }
            _ => return Err(self.err(ParseErrorKind::UnknownLevelFormat(name), span)),
        };
        let mut props = LevelProps::default();
        if self.eat("(") {
            loop {
                let pwhat = "a level property (nonunique, nonordered, soa)";
                let (p, pspan) = match &self.peek().tok {
                    Tok::Ident(_) => self.ident(pwhat)?,
                    _ => return Err(self.expected(pwhat)),
                };
                match p.as_str() {
                    "nonunique" => props.nonunique = true,
                    "nonordered" => props.nonordered = true,
                    "soa" => props.soa = true,
                    "high" => match format {
                        LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                            format = LevelFormat::LooseCompressed;
                            self.warnings.push(format!(
                                "level {level}: `high` is the obsolete spelling of loose_compressed; \
                                 read as loose_compressed"
                            ));
                        }
                        _ => {
                            return Err(self.err(
                                ParseErrorKind::Invalid(
                                    EncodingError::new(
                                        EncodingErrorKind::Properties,
                                        format!(
                                            "level {level}: the obsolete `high` property applies only to \
                                             compressed levels (it means loose_compressed)"
                                        ),
                                    )
                                    .at_level(level),
                                ),
                                pspan,
                            ))
                        }
                    },
                    _ => return Err(self.err(ParseErrorKind::UnknownLevelProperty(p), pspan)),
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")", "`,` or `)` after a level property")?;
        }
        Ok((format, props))
    }

    fn small_int(&mut self, what: &str) -> Result<u32, ParseError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(s) if !s.starts_with("0x") => {
                self.bump();
                s.parse().map_err(|_| {
                    self.err(
                        ParseErrorKind::InvalidNumber(format!("{s} is too large")),
                        t.span,
                    )
                })
            }
            _ => Err(self.expected(what)),
        }
    }

    // Affine expressions, MLIR precedence: `+ -` below `* floordiv ceildiv mod`, unary `-`.
    fn expr(&mut self, scope: Scope, names: &Names) -> Result<AffineExpr, ParseError> {
        let mut lhs = self.term(scope, names)?;
        loop {
            let neg = if self.is_punct("+") {
                false
            } else if self.is_punct("-") {
                true
            } else {
                return Ok(lhs);
            };
            self.bump();
            let rhs = self.term(scope, names)?;
            let rhs = if neg {
                AffineExpr::times(rhs, AffineExpr::Const(-1))
            } else {
                rhs
            };
            lhs = AffineExpr::plus(lhs, rhs);
        }
    }

    fn term(&mut self, scope: Scope, names: &Names) -> Result<AffineExpr, ParseError> {
        let start = self.peek().span.start;
        let mut lhs = self.unary(scope, names)?;
        loop {
            let op = match &self.peek().tok {
                Tok::Punct("*") => "*",
                Tok::Ident(s) if s == "floordiv" => "floordiv",
                Tok::Ident(s) if s == "ceildiv" => "ceildiv",
                Tok::Ident(s) if s == "mod" => "mod",
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs_start = self.peek().span.start;
            let rhs = self.unary(scope, names)?;
            let span = start..self.last_end();
            if op != "*" && rhs == AffineExpr::Const(0) {
                return Err(self.err(
                    ParseErrorKind::NonAffine(format!(
                        "division by zero: the right side of `{op}` is 0, expected a positive constant"
                    )),
                    rhs_start..self.last_end(),
                ));
            }
            if op == "*" && !lhs.is_symbolic() && !rhs.is_symbolic() {
                return Err(self.err(
                    ParseErrorKind::NonAffine(
                        "non-affine expression: one side of `*` must be a constant or symbol"
                            .to_string(),
                    ),
                    span,
                ));
            }
            if op != "*" && !rhs.is_symbolic() {
                return Err(self.err(
                    ParseErrorKind::NonAffine(format!(
                        "non-affine expression: the right side of `{op}` must be a constant or symbol"
                    )),
                    span,
                ));
            }
            lhs = match op {
                "*" => AffineExpr::times(lhs, rhs),
                "floordiv" => AffineExpr::floordiv(lhs, rhs),
                "ceildiv" => AffineExpr::ceildiv(lhs, rhs),
                _ => AffineExpr::modulo(lhs, rhs),
            };
        }
    }

    fn unary(&mut self, scope: Scope, names: &Names) -> Result<AffineExpr, ParseError> {
        if self.depth >= MAX_DEPTH {
            let span = self.peek().span.clone();
            return Err(self.err(
                ParseErrorKind::NonAffine(format!(
                    "expression nested deeper than {MAX_DEPTH} levels"
                )),
                span,
            ));
        }
        self.depth += 1;
        let e = self.unary_inner(scope, names);
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self, scope: Scope, names: &Names) -> Result<AffineExpr, ParseError> {
        if self.eat("-") {
            let e = self.unary(scope, names)?;
            return Ok(AffineExpr::times(e, AffineExpr::Const(-1)));
        }
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(s) if !s.starts_with("0x") => {
                self.bump();
                s.parse::<i64>().map(AffineExpr::Const).map_err(|_| {
                    self.err(
                        ParseErrorKind::InvalidNumber(format!("constant {s} is too large")),
                        t.span,
                    )
                })
            }
            Tok::Ident(s) if !matches!(s.as_str(), "floordiv" | "ceildiv" | "mod") => {
                self.bump();
                if let Some(i) = names.syms.iter().position(|n| n == s) {
                    return Ok(AffineExpr::Symbol(i));
                }
                let vars = if scope == Scope::Dims {
                    &names.dims
                } else {
                    &names.lvl_vars
                };
                match vars.iter().position(|n| n == s) {
                    Some(i) => Ok(AffineExpr::Dim(i)),
                    None => Err(self.err(ParseErrorKind::UndeclaredIdentifier(s.clone()), t.span)),
                }
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr(scope, names)?;
                self.expect(")", "`)` closing the parenthesized expression")?;
                Ok(e)
            }
            _ => Err(self.expected(if scope == Scope::Dims {
                "a level expression (a dimension, constant or `(`)"
            } else {
                "an expression over the level variables"
            })),
        }
    }

    fn build(
        &mut self,
        parts: MapParts,
        pos_width: u8,
        crd_width: u8,
        explicit_val: Option<String>,
        implicit_val: Option<String>,
    ) -> Result<Encoding, ParseError> {
        let enc = Encoding {
            dims: parts.dims,
            symbols: parts.symbols,
            levels: parts.levels,
            pos_width,
            crd_width,
            explicit_val,
            implicit_val,
        };
        self.check_inverse(&enc, &parts.inverse)?;
        Ok(enc)
    }

    /// Checks a stated inverse (`i = ib * 2 + ii`) against the level map on sample coordinates.
    fn check_inverse(
        &self,
        enc: &Encoding,
        inverse: &[Option<(AffineExpr, Range<usize>)>],
    ) -> Result<(), ParseError> {
        if enc.symbols > 0 || inverse.iter().all(Option::is_none) {
            return Ok(());
        }
        // Sample coordinates: zero, then pseudo-random points with every coordinate in 0..24
        // (enough to tell a wrong inverse from the right one, at any rank).
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut x = vec![0i64; enc.dims.len()];
        for sample in 0..2000 {
            if sample > 0 {
                for v in x.iter_mut() {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    *v = ((seed >> 33) % 24) as i64;
                }
            }
            let Some(lvls) = enc
                .levels
                .iter()
                .map(|l| l.expr.eval(&x))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            for (d, inv) in inverse.iter().enumerate() {
                let Some((e, span)) = inv else { continue };
                if e.eval(&lvls, &[]) != Some(x[d]) {
                    let text = &self.src[span.clone()];
                    let err = EncodingError::new(
                        EncodingErrorKind::NotInvertible,
                        format!(
                            "dimension {d}: the stated inverse `{text}` is not the inverse of the level map \
                             (it gives {:?} for coordinate {x:?})",
                            e.eval(&lvls, &[])
                        ),
                    )
                    .at_dim(d);
                    return Err(self.err(ParseErrorKind::Invalid(err), self.spans.dims[d].clone()));
                }
            }
        }
        Ok(())
    }
}

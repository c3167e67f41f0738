//! Tokens of the encoding text: identifiers, `#`-names, numbers, strings and punctuation.
//! `//` comments and whitespace are skipped.

use std::ops::Range;

use crate::error::{ParseError, ParseErrorKind};

/// One token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A bare identifier (letters, digits, `_`, `$`, `.`), e.g. `d0`, `floordiv`.
    Ident(String),
    /// `#name`, the name without `#`, e.g. `sparse_tensor.encoding`.
    Hash(String),
    /// An unsigned integer literal as written (decimal or `0x` hex).
    Int(String),
    /// An unsigned floating-point literal as written (`1.0`, `2.5e-3`).
    Float(String),
    /// A string literal, without quotes.
    Str(String),
    /// Punctuation: `( ) [ ] { } < > , : = -> + - * ?`.
    Punct(&'static str),
    /// End of the text.
    Eof,
}

impl Tok {
    /// How the token is named in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Hash(s) => format!("`#{s}`"),
            Tok::Int(s) | Tok::Float(s) => format!("`{s}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the text".to_string(),
        }
    }
}

/// A token with its byte span.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) span: Range<usize>,
}

/// An on-demand tokenizer over the source text.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

const PUNCT: &[&str] = &[
    "->", "(", ")", "[", "]", "{", "}", "<", ">", ",", ":", "=", "+", "-", "*", "?",
];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Lexer<'a> {
        Lexer { src, pos: 0 }
    }

    fn skip_trivia(&mut self) {
        loop {
            let rest = &self.src[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        let rest = &self.src[start..];
        let len = rest.find(|c: char| !f(c)).unwrap_or(rest.len());
        self.pos += len;
        &self.src[start..start + len]
    }

    /// The next token.
    pub(crate) fn next_token(&mut self) -> Result<Token, ParseError> {
        self.skip_trivia();
        let start = self.pos;
        let rest = &self.src[start..];
        let Some(c) = rest.chars().next() else {
            return Ok(Token {
                tok: Tok::Eof,
                span: start..start,
            });
        };
        let tok = if is_ident_start(c) {
            Tok::Ident(self.take_while(is_ident_char).to_string())
        } else if c == '#' {
            self.pos += 1;
            let name = self.take_while(is_ident_char);
            if name.is_empty() {
                return Err(ParseError::new(
                    ParseErrorKind::UnexpectedChar('#'),
                    self.src,
                    start..start + 1,
                ));
            }
            Tok::Hash(name.to_string())
        } else if c.is_ascii_digit() {
            if rest.starts_with("0x") || rest.starts_with("0X") {
                self.pos += 2;
                let digits = self.take_while(|c| c.is_ascii_hexdigit());
                Tok::Int(format!("0x{digits}"))
            } else {
                self.take_while(|c| c.is_ascii_digit());
                let mut float = false;
                if self.src[self.pos..].starts_with('.') {
                    float = true;
                    self.pos += 1;
                    self.take_while(|c| c.is_ascii_digit());
                }
                let after = &self.src[self.pos..];
                if after.starts_with(['e', 'E']) {
                    let exp = after[1..].trim_start_matches(['+', '-']);
                    if exp.starts_with(|c: char| c.is_ascii_digit()) {
                        float = true;
                        self.pos += after.len() - exp.len();
                        self.take_while(|c| c.is_ascii_digit());
                    }
                }
                let text = self.src[start..self.pos].to_string();
                if float {
                    Tok::Float(text)
                } else {
                    Tok::Int(text)
                }
            }
        } else if c == '"' {
            let body = &rest[1..];
            match body.find('"') {
                Some(end) => {
                    self.pos += end + 2;
                    Tok::Str(body[..end].to_string())
                }
                None => {
                    return Err(ParseError::new(
                        ParseErrorKind::Expected {
                            expected: "a closing `\"`".to_string(),
                            found: "the end of the text".to_string(),
                        },
                        self.src,
                        start..self.src.len(),
                    ))
                }
            }
        } else if let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) {
            self.pos += p.len();
            Tok::Punct(p)
        } else {
            return Err(ParseError::new(
                ParseErrorKind::UnexpectedChar(c),
                self.src,
                start..start + c.len_utf8(),
            ));
        };
        Ok(Token {
            tok,
            span: start..self.pos,
        })
    }
}

//! The `.npy` header: magic, version, and the Python dict literal that declares the
//! element type, the order and the shape.

use sptk_tensor::ValueType;

/// The magic string every `.npy` file starts with.
pub(crate) const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Element order of a multi-dimensional array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Row-major (C order): the last index varies fastest.
    C,
    /// Column-major (Fortran order): the first index varies fastest.
    Fortran,
}

/// What a `.npy` header declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The element type.
    pub dtype: ValueType,
    /// True for big-endian elements (`descr` starting with `>`).
    pub big_endian: bool,
    /// Element order.
    pub order: Order,
    /// The shape; empty for a 0-d array (one element).
    pub shape: Vec<u64>,
}

impl Header {
    /// The number of elements, or `None` if it overflows.
    pub fn len(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// True if the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The `descr` string NumPy writes for this element type (little endian).
    pub fn descr(dtype: ValueType) -> Option<&'static str> {
        Some(match dtype {
            ValueType::F16 => "<f2",
            ValueType::F32 => "<f4",
            ValueType::F64 => "<f8",
            ValueType::I8 => "|i1",
            ValueType::I16 => "<i2",
            ValueType::I32 => "<i4",
            ValueType::I64 => "<i8",
            ValueType::U8 => "|u1",
            ValueType::U16 => "<u2",
            ValueType::U32 => "<u4",
            ValueType::U64 => "<u8",
            ValueType::Bool => "|b1",
            ValueType::C64 => "<c8",
            ValueType::C128 => "<c16",
            // NumPy has no bfloat16 of its own.
            ValueType::BF16 => return None,
        })
    }

    /// The element type of a NumPy type string (`descr`, `__array_interface__`'s
    /// `typestr`: `<f8`, `|b1`, `>i4`, `d`), and whether it is big-endian; the `.npy`
    /// reader's own classifier.
    ///
    /// # Errors
    /// A type this reader does not know (structured, strings, datetimes, ...).
    pub fn value_type(descr: &str) -> Result<(ValueType, bool), String> {
        element(descr)
    }
}

/// The longest header dict this reader takes: NumPy's own reader refuses headers past
/// 10,000 bytes unless told otherwise, and the headers of the arrays read here (a type,
/// an order, a shape) are a few hundred bytes.
pub(crate) const MAX_DICT: usize = 1 << 20;

/// Bytes of the fixed start of a header: magic, version and length field (10 bytes for
/// version 1.0, 12 for 2.0 and 3.0).
pub(crate) const PREFIX: usize = 12;

/// Where the header dict starts and how long it is, from the first bytes of a file or
/// member (at least [`PREFIX`] of them where there are that many): the magic, the version
/// and the length field, checked. The one reader of the length field, for `.npy` files
/// and `.npz` members alike; the caller checks that the dict fits in what it has.
pub(crate) fn dict_span(bytes: &[u8]) -> Result<(usize, usize), String> {
    if !bytes.starts_with(MAGIC) {
        return Err("not a .npy file (it does not start with \\x93NUMPY)".into());
    }
    let cut = |at: usize| format!("the header is cut off at byte {at}");
    let major = *bytes.get(6).ok_or_else(|| cut(bytes.len()))?;
    let minor = *bytes.get(7).ok_or_else(|| cut(bytes.len()))?;
    let (len, start) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or_else(|| cut(bytes.len()))?;
            (usize::from(u16::from_le_bytes([b[0], b[1]])), 10usize)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or_else(|| cut(bytes.len()))?;
            let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usize::try_from(len).unwrap_or(usize::MAX), 12)
        }
        _ => {
            return Err(format!(
                "format version {major}.{minor} is not one this reader knows (1.0, 2.0, 3.0)"
            ))
        }
    };
    if len > MAX_DICT {
        return Err(format!(
            "the header says it is {len} bytes long (byte 8); this reader takes headers of \
             at most {MAX_DICT} bytes (a damaged file?)"
        ));
    }
    Ok((start, len))
}

/// Parses the header leaving `descr` as text ([`RawHeader`]).
pub(crate) fn parse_raw(bytes: &[u8]) -> Result<(RawHeader, usize), String> {
    let (start, len) = dict_span(bytes)?;
    let major = bytes.get(6).copied().unwrap_or_default();
    let minor = bytes.get(7).copied().unwrap_or_default();
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            format!(
                "the header says it is {len} bytes long from byte {start}, past the end of the \
                 file ({} bytes)",
                bytes.len()
            )
        })?;
    let text = std::str::from_utf8(bytes.get(start..end).unwrap_or_default())
        .map_err(|e| format!("the header is not text (byte {})", start + e.valid_up_to()))?;
    if major < 3 && !text.is_ascii() {
        return Err(format!(
            "the header of a version {major}.{minor} file must be ASCII"
        ));
    }
    let (at, descr, header) =
        dict(text).map_err(|(at, m)| format!("header, byte {}: {m}", start + at))?;
    Ok(((start + at, descr, header), end))
}

/// Splits a file's start into its header and the offset where the data begins.
/// Errors are messages; the caller adds the file name.
pub(crate) fn parse(bytes: &[u8]) -> Result<(Header, usize), String> {
    let (raw, end) = parse_raw(bytes)?;
    Ok((typed(&raw)?, end))
}

/// The header of `raw` with the element type its `descr` names, or why that is not one
/// this reader knows.
pub(crate) fn typed((descr_at, descr, raw): &RawHeader) -> Result<Header, String> {
    let (dtype, big_endian) =
        element(descr).map_err(|m| format!("header, byte {descr_at}: {m}"))?;
    Ok(Header {
        dtype,
        big_endian,
        ..raw.clone()
    })
}

/// A header with its `descr` as written (byte strings `|S3`, text `<U3` and every
/// numeric type; the header's `dtype` is not set) and the byte where that value starts.
pub(crate) type RawHeader = (usize, String, Header);

/// A value of the header dict.
enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    /// A list: NumPy's form for structured element types.
    List,
}

/// Parses `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`.
fn dict(text: &str) -> Result<RawHeader, (usize, String)> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.space();
        if p.eat(b'}') {
            break;
        }
        let key_at = p.at;
        let Lit::Str(key) = p.literal()? else {
            return Err((key_at, "expected a quoted key".into()));
        };
        if !matches!(key.as_str(), "descr" | "fortran_order" | "shape") {
            return Err((key_at, format!("unknown key '{key}'")));
        }
        p.space();
        p.expect(b':')?;
        p.space();
        let value_at = p.at;
        let value = p.literal()?;
        let slot_taken = |k: &str| (key_at, format!("the key '{k}' appears twice"));
        match (key.as_str(), value) {
            ("descr", Lit::Str(d)) => {
                if descr.replace((value_at, d)).is_some() {
                    return Err(slot_taken("descr"));
                }
            }
            ("descr", Lit::List) => {
                return Err((
                    value_at,
                    "a structured element type (a list of fields) is not supported".into(),
                ))
            }
            ("fortran_order", Lit::Bool(b)) => {
                if fortran.replace(b).is_some() {
                    return Err(slot_taken("fortran_order"));
                }
            }
            ("shape", Lit::Tuple(t)) => {
                if shape.replace(t).is_some() {
                    return Err(slot_taken("shape"));
                }
            }
            _ => return Err((value_at, format!("the value of '{key}' has the wrong kind"))),
        }
        p.space();
        if !p.eat(b',') {
            p.space();
            p.expect(b'}')?;
            break;
        }
    }
    let rest = &text[p.at..];
    if !rest.trim_matches([' ', '\n', '\t', '\r', '\0']).is_empty() {
        return Err((p.at, "text after the header dict".into()));
    }
    let (descr_at, descr) = descr.ok_or((0, "the key 'descr' is missing".to_string()))?;
    let header = Header {
        dtype: ValueType::U8,
        big_endian: false,
        order: match fortran.ok_or((0, "the key 'fortran_order' is missing".to_string()))? {
            true => Order::Fortran,
            false => Order::C,
        },
        shape: shape.ok_or((0, "the key 'shape' is missing".to_string()))?,
    };
    Ok((descr_at, descr, header))
}

/// The element type of a `descr` such as `<f8`, `>i4`, `|b1`.
fn element(descr: &str) -> Result<(ValueType, bool), String> {
    let unknown = || format!("element type '{descr}' is not one this reader knows");
    let mut chars = descr.chars();
    let first = chars.next().ok_or_else(unknown)?;
    let (big, code) = match first {
        '<' | '=' => (false, chars.as_str()),
        '|' => (false, chars.as_str()),
        '>' => (true, chars.as_str()),
        _ => (false, descr),
    };
    let t = match code {
        "f2" | "e" => ValueType::F16,
        "f4" | "f" => ValueType::F32,
        "f8" | "d" => ValueType::F64,
        "i1" | "b" => ValueType::I8,
        "i2" | "h" => ValueType::I16,
        "i4" | "i" => ValueType::I32,
        "i8" | "q" => ValueType::I64,
        "u1" | "B" => ValueType::U8,
        "u2" | "H" => ValueType::U16,
        "u4" | "I" => ValueType::U32,
        "u8" | "Q" => ValueType::U64,
        "b1" | "?" => ValueType::Bool,
        "c8" | "F" => ValueType::C64,
        "c16" | "D" => ValueType::C128,
        // What NumPy records for ml_dtypes' types (bfloat16, float8_*): bytes, no type.
        void if void.starts_with('V') => {
            return Err(format!(
                "element type '{descr}' is {} raw bytes, no type NumPy names: ml_dtypes' \
                 bfloat16 (or float8) arrays are saved so, and the file cannot say which; save \
                 a.astype(np.float32), or keep bf16 in .safetensors, which names its types",
                &void[1..]
            ))
        }
        _ => return Err(unknown()),
    };
    // One-byte types have no byte order; '>' on them is harmless.
    Ok((t, big && t.size() > 1))
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), (usize, String)> {
        if self.eat(c) {
            Ok(())
        } else {
            Err((self.at, format!("expected '{}'", c as char)))
        }
    }

    fn literal(&mut self) -> Result<Lit, (usize, String)> {
        let start = self.at;
        match self.s.get(self.at) {
            Some(&q @ (b'\'' | b'"')) => {
                self.at += 1;
                let from = self.at;
                while self.s.get(self.at).is_some_and(|&c| c != q) {
                    self.at += 1;
                }
                let body = self.s.get(from..self.at).unwrap_or_default();
                self.expect(q)?;
                Ok(Lit::Str(String::from_utf8_lossy(body).into_owned()))
            }
            Some(b'T') if self.s[self.at..].starts_with(b"True") => {
                self.at += 4;
                Ok(Lit::Bool(true))
            }
            Some(b'F') if self.s[self.at..].starts_with(b"False") => {
                self.at += 5;
                Ok(Lit::Bool(false))
            }
            Some(b'(') => {
                self.at += 1;
                let mut dims = Vec::new();
                loop {
                    self.space();
                    if self.eat(b')') {
                        break;
                    }
                    dims.push(self.integer()?);
                    self.space();
                    if !self.eat(b',') {
                        self.space();
                        self.expect(b')')?;
                        break;
                    }
                }
                Ok(Lit::Tuple(dims))
            }
            Some(b'[') => {
                // Skip to the matching bracket; the caller refuses it.
                let mut depth = 0usize;
                while let Some(&c) = self.s.get(self.at) {
                    self.at += 1;
                    match c {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(Lit::List);
                            }
                        }
                        _ => {}
                    }
                }
                Err((start, "an unclosed list".into()))
            }
            _ => Err((start, "expected a string, True, False or a tuple".into())),
        }
    }

    fn integer(&mut self) -> Result<u64, (usize, String)> {
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(&c) = self.s.get(self.at).filter(|c| c.is_ascii_digit()) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(c - b'0')))
                .ok_or((start, "a dimension too large for 64 bits".to_string()))?;
            self.at += 1;
        }
        if self.at == start {
            return Err((
                start,
                "expected a dimension (a non-negative integer)".into(),
            ));
        }
        // Python 2 wrote long integers with an L suffix.
        self.eat(b'L');
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v
    }

    #[test]
    fn raw_bytes_of_ml_dtypes_say_what_they_are_and_what_to_do() {
        let text = "{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }\n";
        let e = parse(&file(text)).unwrap_err();
        let e = format!("{e:?}");
        assert!(e.contains("'|V2' is 2 raw bytes"), "{e}");
        assert!(
            e.contains("bfloat16") && e.contains("astype(np.float32)"),
            "{e}"
        );
    }

    #[test]
    fn reads_what_numpy_writes() {
        let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n";
        let (h, at) = parse(&file(text)).unwrap();
        assert_eq!(h.dtype, ValueType::F64);
        assert_eq!(h.order, Order::C);
        assert_eq!(h.shape, vec![3, 4]);
        assert!(!h.big_endian);
        assert_eq!(at, 10 + text.len());
        let (h, _) = parse(&file(
            "{'descr': '>i4', 'fortran_order': True, 'shape': (5,), }\n",
        ))
        .unwrap();
        assert_eq!(
            (h.dtype, h.big_endian, h.order),
            (ValueType::I32, true, Order::Fortran)
        );
        assert_eq!(h.shape, vec![5]);
        let (h, _) = parse(&file(
            "{\"shape\": (), \"fortran_order\": False, \"descr\": \"|b1\"}",
        ))
        .unwrap();
        assert_eq!(
            (h.dtype, h.shape.len(), h.len()),
            (ValueType::Bool, 0, Some(1))
        );
        let (h, _) = parse(&file(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 0L)}",
        ))
        .unwrap();
        assert!(h.is_empty());
    }

    #[test]
    fn refuses_bad_headers_saying_where() {
        let cases = [
            (
                "{'descr': '<f8', 'fortran_order': False}",
                "'shape' is missing",
            ),
            (
                "{'descr': '<x9', 'fortran_order': False, 'shape': (1,)}",
                "'<x9'",
            ),
            (
                "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
                "structured",
            ),
            (
                "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}",
                "byte 44",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
                "non-negative",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
                "unknown key",
            ),
            (
                "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}",
                "twice",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                "64 bits",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} x",
                "after the header",
            ),
        ];
        for (text, want) in cases {
            let err = parse(&file(text)).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(parse(b"PK\x03\x04 zip").unwrap_err().contains("not a .npy"));
        let mut cut = file("{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}");
        cut.truncate(30);
        assert!(parse(&cut).unwrap_err().contains("past the end"));
        let mut v4 = file("{}");
        v4[6] = 4;
        assert!(parse(&v4).unwrap_err().contains("version 4.0"));
    }
}

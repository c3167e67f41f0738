//! Byte-level scanning shared by the text readers: blanks, tokens, hand-written integer
//! parsing and `fast-float2` for floating-point numbers.
//!
//! Every function treats the end of the buffer like a newline, so a parser never reads
//! past its slice and never needs unchecked indexing.

/// The byte at `p`, or `\n` past the end.
#[inline(always)]
pub(crate) fn at(t: &[u8], p: usize) -> u8 {
    match t.get(p) {
        Some(&b) => b,
        None => b'\n',
    }
}

/// Space, tab or carriage return (CRLF files end their lines with `\r\n`).
#[inline(always)]
pub(crate) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

/// Advances `p` over blanks.
#[inline(always)]
pub(crate) fn skip_blanks(t: &[u8], p: &mut usize) {
    while is_blank(at(t, *p)) {
        *p += 1;
    }
}

/// End of the token starting at `p` (first blank or newline).
pub(crate) fn token_end(t: &[u8], p: usize) -> usize {
    let mut e = p;
    while e < t.len() && !is_blank(at(t, e)) && at(t, e) != b'\n' {
        e += 1;
    }
    e
}

/// The token at `p` quoted for a message (`end of line` if there is none), cut at 40 bytes.
pub(crate) fn describe_token(t: &[u8], p: usize) -> String {
    let e = token_end(t, p);
    match t.get(p..e) {
        Some(tok) if !tok.is_empty() => {
            let cut = &tok[..tok.len().min(40)];
            let more = if tok.len() > 40 { "..." } else { "" };
            format!("`{}{more}`", String::from_utf8_lossy(cut))
        }
        _ => "end of line".to_string(),
    }
}

/// Index of the next `\n` at or after `p`, or `t.len()`.
#[inline]
pub(crate) fn find_newline(t: &[u8], p: usize) -> usize {
    match t.get(p..) {
        Some(rest) => memchr::memchr(b'\n', rest).map_or(t.len(), |i| p + i),
        None => t.len(),
    }
}

/// [`find_newline`] for a newline expected within a few dozen bytes (the rest of an entry
/// line): up to four 8-byte words tested in registers before the general search, which
/// costs a call and its setup per line.
#[inline(always)]
pub(crate) fn find_newline_near(t: &[u8], p: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut q = p;
    for _ in 0..4 {
        let Some(word) = t.get(q..).and_then(|r| r.first_chunk::<8>()) else {
            break;
        };
        // Zero bytes of `x` are the newlines; the lowest flagged byte is always a true
        // one (a borrow only flags bytes above a zero byte).
        let x = u64::from_le_bytes(*word) ^ (ONES * u64::from(b'\n'));
        let found = x.wrapping_sub(ONES) & !x & (ONES << 7);
        if found != 0 {
            return q + (found.trailing_zeros() / 8) as usize;
        }
        q += 8;
    }
    find_newline(t, q)
}

/// Why an integer token was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumErr {
    /// Not digits (or digits followed by something else than a blank).
    Invalid,
    /// Starts with `-`.
    Negative,
    /// More than 64 bits.
    Overflow,
}

/// Parses an unsigned decimal integer at `p` that must end at a blank or newline.
#[inline(always)]
pub(crate) fn parse_u64(t: &[u8], p: &mut usize) -> Result<u64, NumErr> {
    // The common case, 1 to 7 digits and their terminator within 8 readable bytes, in a
    // few word operations; everything else (and every error) takes the byte loop.
    if let Some(&word) = t.get(*p..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(word);
        let k = digit_run(w);
        if (1..8).contains(&k) {
            let next = word[k];
            if is_blank(next) || next == b'\n' {
                *p += k;
                return Ok(eight_digits((w & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - k))));
            }
        }
    }
    parse_u64_bytes(t, p)
}

/// Number of ASCII digits at the start of the little-endian word `w` (0 to 8).
#[inline(always)]
fn digit_run(w: u64) -> usize {
    // A byte is a digit iff its high nibble is 3 and its low nibble plus 6 stays below
    // 16; neither sum carries into the next byte.
    let high = (w & 0xF0F0_F0F0_F0F0_F0F0) ^ 0x3030_3030_3030_3030;
    let low = ((w & 0x0F0F_0F0F_0F0F_0F0F) + 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0;
    ((high | low).trailing_zeros() / 8) as usize
}

/// The value of eight digit nibbles (first digit in the lowest byte) by three
/// multiply-and-shift steps; leading zero bytes are leading zeros.
#[inline(always)]
fn eight_digits(mut v: u64) -> u64 {
    // Each step's wanted lanes stay below their width; what overflows is shifted out.
    v = (v.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    v.wrapping_mul(10000 << 32 | 1) >> 32
}

/// [`parse_u64`] a byte at a time.
#[inline(always)]
fn parse_u64_bytes(t: &[u8], p: &mut usize) -> Result<u64, NumErr> {
    let start = *p;
    let mut q = start;
    let mut v: u64 = 0;
    // Up to 19 digits cannot overflow.
    while q - start < 19 {
        let d = at(t, q).wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + d as u64;
        q += 1;
    }
    if q - start == 19 {
        loop {
            let d = at(t, q).wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v
                .checked_mul(10)
                .and_then(|x| x.checked_add(d as u64))
                .ok_or(NumErr::Overflow)?;
            q += 1;
        }
    }
    let next = at(t, q);
    if q == start {
        return Err(if next == b'-' {
            NumErr::Negative
        } else {
            NumErr::Invalid
        });
    }
    if !(is_blank(next) || next == b'\n') {
        return Err(NumErr::Invalid);
    }
    *p = q;
    Ok(v)
}

/// Why a value token was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValErr {
    /// Not a number of the expected kind.
    Invalid,
    /// An integer with a fraction or exponent.
    Fraction,
    /// An integer outside `i64`.
    Overflow,
}

/// Parses a signed 64-bit integer value at `p` (ends at a blank or newline).
#[inline(always)]
pub(crate) fn parse_i64(t: &[u8], p: &mut usize) -> Result<i64, ValErr> {
    let mut q = *p;
    let neg = match at(t, q) {
        b'-' => {
            q += 1;
            true
        }
        b'+' => {
            q += 1;
            false
        }
        _ => false,
    };
    let digits = q;
    let mut mag: u64 = 0;
    loop {
        let d = at(t, q).wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        mag = mag
            .checked_mul(10)
            .and_then(|x| x.checked_add(d as u64))
            .ok_or(ValErr::Overflow)?;
        q += 1;
    }
    let next = at(t, q);
    if matches!(next, b'.' | b'e' | b'E') && (q > digits || next == b'.') {
        return Err(ValErr::Fraction);
    }
    if q == digits || !(is_blank(next) || next == b'\n') {
        return Err(ValErr::Invalid);
    }
    let v = if neg {
        if mag > i64::MAX as u64 + 1 {
            return Err(ValErr::Overflow);
        }
        (mag as i64).wrapping_neg()
    } else {
        i64::try_from(mag).map_err(|_| ValErr::Overflow)?
    };
    *p = q;
    Ok(v)
}

/// Parses a floating-point value at `p` (ends at a blank or newline). Accepts what
/// `fast-float2` accepts: decimal and exponent forms, `inf`, `infinity` and `nan` in any case.
#[inline(always)]
pub(crate) fn parse_f64(t: &[u8], p: &mut usize) -> Result<f64, ValErr> {
    let rest = t.get(*p..).unwrap_or(&[]);
    match fast_float2::parse_partial::<f64, _>(rest) {
        Ok((v, n)) if n > 0 => {
            let next = at(rest, n);
            if is_blank(next) || next == b'\n' {
                *p += n;
                Ok(v)
            } else {
                Err(ValErr::Invalid)
            }
        }
        _ => Err(ValErr::Invalid),
    }
}

/// Counts `\n` bytes.
pub(crate) fn count_newlines(t: &[u8]) -> u64 {
    t.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Offset of the start of the `k`-th (0-based) data line of `t`: lines that are neither
/// blank nor comments (`%` first after blanks), counted the way the body parsers count
/// entries. `None` if there are fewer.
pub(crate) fn nth_data_line(t: &[u8], k: usize, comment: &[u8]) -> Option<usize> {
    let mut p = 0;
    let mut seen = 0;
    while p < t.len() {
        let mut q = p;
        skip_blanks(t, &mut q);
        let b = at(t, q);
        if b != b'\n' && !comment.contains(&b) {
            if seen == k {
                return Some(q);
            }
            seen += 1;
        }
        p = find_newline(t, q) + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_newline_search_agrees_with_the_general_one() {
        // Newlines at every distance within and past the four words, none at all, two in
        // one word, and bytes one off a newline (0x09, 0x0B, 0x8A) that the word test
        // must not take for one.
        let fillers: [&[u8]; 3] = [b"0.5e-3 ", b"\x09\x0B\x8A\xFF\x00", b"\n\n"];
        for filler in fillers {
            for gap in 0..48 {
                for tail in [&b""[..], b"\n", b"x\ny\n"] {
                    let mut t: Vec<u8> = filler.iter().copied().cycle().take(gap).collect();
                    t.extend_from_slice(tail);
                    for p in 0..=t.len() + 1 {
                        assert_eq!(
                            find_newline_near(&t, p),
                            find_newline(&t, p),
                            "{t:?} from {p}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn u64_parsing() {
        let mut p = 0;
        assert_eq!(parse_u64(b"18446744073709551615 x", &mut p), Ok(u64::MAX));
        assert_eq!(p, 20);
        let mut p = 0;
        assert_eq!(
            parse_u64(b"18446744073709551616", &mut p),
            Err(NumErr::Overflow)
        );
        let mut p = 0;
        assert_eq!(parse_u64(b"-1", &mut p), Err(NumErr::Negative));
        let mut p = 0;
        assert_eq!(parse_u64(b"1.5", &mut p), Err(NumErr::Invalid));
        let mut p = 0;
        assert_eq!(parse_u64(b"", &mut p), Err(NumErr::Invalid));
        let mut p = 0;
        assert_eq!(parse_u64(b"00012\r\n", &mut p), Ok(12));
    }

    #[test]
    fn i64_parsing() {
        let mut p = 0;
        assert_eq!(parse_i64(b"-9223372036854775808", &mut p), Ok(i64::MIN));
        let mut p = 0;
        assert_eq!(
            parse_i64(b"9223372036854775808", &mut p),
            Err(ValErr::Overflow)
        );
        let mut p = 0;
        assert_eq!(parse_i64(b"1.0", &mut p), Err(ValErr::Fraction));
        let mut p = 0;
        assert_eq!(parse_i64(b"1e3", &mut p), Err(ValErr::Fraction));
        let mut p = 0;
        assert_eq!(parse_i64(b"abc", &mut p), Err(ValErr::Invalid));
        let mut p = 0;
        assert_eq!(parse_i64(b"+7\t", &mut p), Ok(7));
    }

    #[test]
    fn f64_parsing() {
        let mut p = 0;
        assert_eq!(parse_f64(b"1E-300 ", &mut p), Ok(1e-300));
        let mut p = 0;
        assert!(parse_f64(b"nan", &mut p).unwrap().is_nan());
        let mut p = 0;
        assert_eq!(parse_f64(b"-inf", &mut p), Ok(f64::NEG_INFINITY));
        let mut p = 0;
        assert_eq!(parse_f64(b"1.5x", &mut p), Err(ValErr::Invalid));
        let mut p = 0;
        assert_eq!(parse_f64(b"", &mut p), Err(ValErr::Invalid));
    }

    #[test]
    fn data_lines() {
        let t = b"1 1\n\n% c\n  2 2\n3 3";
        assert_eq!(nth_data_line(t, 0, b"%"), Some(0));
        assert_eq!(nth_data_line(t, 1, b"%"), Some(11));
        assert_eq!(nth_data_line(t, 2, b"%"), Some(15));
        assert_eq!(nth_data_line(t, 3, b"%"), None);
    }

    #[test]
    fn word_parse_agrees_with_the_byte_loop() {
        let mut cases: Vec<String> = Vec::new();
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            1234567,
            9999999,
            10000000,
            12345678,
            u64::MAX,
        ] {
            cases.push(n.to_string());
        }
        let mut state = 7u64;
        for _ in 0..20000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let digits = (state >> 60) as usize % 10 + 1;
            let n = (state >> 8) % 10u64.pow(digits as u32);
            cases.push(format!("{n:0digits$}"));
        }
        for c in &cases {
            for tail in [" 1\n", "\t", "\r\n", "\n", "", "x", "-", ".5", "99999999 2"] {
                let text = format!("{c}{tail}");
                let t = text.as_bytes();
                let (mut a, mut b) = (0, 0);
                assert_eq!(parse_u64(t, &mut a), parse_u64_bytes(t, &mut b), "{text:?}");
                assert_eq!(a, b, "{text:?}");
            }
        }
        for bytes in [[b'/'; 8], [b':'; 8], [0xFA; 8], [0xFF; 8], *b"12\xFA4 567"] {
            let (mut a, mut b) = (0, 0);
            assert_eq!(parse_u64(&bytes, &mut a), parse_u64_bytes(&bytes, &mut b));
            assert_eq!(a, b);
        }
    }
}

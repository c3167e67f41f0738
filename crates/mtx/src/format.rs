//! Number formatting for the writers: the shortest text that reads back to the same value,
//! in the style of fast_matrix_market (and so of SciPy's `mmwrite`): scientific notation
//! with an upper-case `E`, no exponent when it is 0 (`1`, `0.5` is `5E-1`, `1.5E2`,
//! `-1E-300`). Infinities are written `inf` / `-inf` and NaN `nan`, which every common
//! reader (this crate, fast_matrix_market, SciPy, C's `strtod`) accepts.

use half::{bf16, f16};
use sptk_tensor::{Complex, Value};

/// Rewrites ryu's decimal notation (`[-]int.frac`, no exponent) in the style of
/// [`push_scientific`], a slice at a time; `false` (nothing written) for other shapes.
#[inline]
fn push_scientific_decimal(s: &[u8], out: &mut Vec<u8>) -> bool {
    let (neg, body) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let Some(point) = body.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (int, frac) = (&body[..point], &body[point + 1..]);
    if int.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return false;
    }
    let mut b = itoa::Buffer::new();
    if int == b"0" {
        // 0.000ddd: the digits after the zeros, exponent -(zeros + 1).
        let zeros = frac.iter().take_while(|&&d| d == b'0').count();
        let digits = &frac[zeros..];
        let digits =
            &digits[..digits.len() - digits.iter().rev().take_while(|&&d| d == b'0').count()];
        let Some((first, rest)) = digits.split_first() else {
            return false;
        };
        if neg {
            out.push(b'-');
        }
        out.push(*first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.extend_from_slice(b"E-");
        out.extend_from_slice(b.format(zeros + 1).as_bytes());
        return true;
    }
    if int[0] == b'0' {
        return false;
    }
    // int.frac: significant digits are int then frac less trailing zeros, exponent
    // len(int) - 1.
    let frac = &frac[..frac.len() - frac.iter().rev().take_while(|&&d| d == b'0').count()];
    let int_kept = if frac.is_empty() {
        &int[..int.len() - int.iter().rev().take_while(|&&d| d == b'0').count()]
    } else {
        int
    };
    if neg {
        out.push(b'-');
    }
    out.push(int_kept[0]);
    if int_kept.len() > 1 || !frac.is_empty() {
        out.push(b'.');
        out.extend_from_slice(&int_kept[1..]);
        out.extend_from_slice(frac);
    }
    if int.len() > 1 {
        out.push(b'E');
        out.extend_from_slice(b.format(int.len() - 1).as_bytes());
    }
    true
}

/// Rewrites a decimal `[-]digits[.digits][e[-]digits]` as fast_matrix_market does:
/// `d[.ddd]E<exp>`, `E0` left out, trailing zeros removed.
fn push_scientific(s: &[u8], out: &mut Vec<u8>) {
    if push_scientific_decimal(s, out) {
        return;
    }
    push_scientific_general(s, out);
}

/// [`push_scientific`] for every shape, a byte at a time.
fn push_scientific_general(s: &[u8], out: &mut Vec<u8>) {
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let (mant, exp) = match s.iter().position(|&b| b == b'e' || b == b'E') {
        Some(k) => {
            let e = std::str::from_utf8(&s[k + 1..])
                .ok()
                .and_then(|x| x.parse::<i32>().ok())
                .unwrap_or(0);
            (&s[..k], e)
        }
        None => (s, 0),
    };
    let mut digits = [0u8; 40];
    let mut n = 0;
    let mut frac_len: i32 = 0;
    let mut after_point = false;
    for &b in mant {
        if b == b'.' {
            after_point = true;
        } else if n < digits.len() {
            if n == 0 && b == b'0' {
                // Leading zeros do not change the value.
            } else {
                digits[n] = b;
                n += 1;
            }
            if after_point {
                frac_len += 1;
            }
        }
    }
    let mut exp10 = exp - frac_len;
    while n > 0 && digits[n - 1] == b'0' {
        n -= 1;
        exp10 += 1;
    }
    if neg {
        out.push(b'-');
    }
    if n == 0 {
        out.push(b'0');
        return;
    }
    out.push(digits[0]);
    if n > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..n]);
    }
    let sci = exp10 + n as i32 - 1;
    if sci != 0 {
        out.push(b'E');
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b.format(sci).as_bytes());
    }
}

fn push_special(x: f64, out: &mut Vec<u8>) -> bool {
    if x.is_nan() {
        out.extend_from_slice(b"nan");
    } else if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
    } else {
        return false;
    }
    true
}

/// Appends the shortest text that reads back to `x` exactly (see the module docs for the
/// style: `1`, `5E-1`, `-1.25E-300`, `inf`, `nan`).
pub fn write_f64(x: f64, out: &mut Vec<u8>) {
    if push_special(x, out) {
        return;
    }
    let mut b = ryu::Buffer::new();
    push_scientific(b.format_finite(x).as_bytes(), out);
}

/// Appends the shortest text that reads back (as `f32`, or as `f64` rounded to `f32`) to
/// `x` exactly.
pub fn write_f32(x: f32, out: &mut Vec<u8>) {
    if push_special(x as f64, out) {
        return;
    }
    let mut b = ryu::Buffer::new();
    push_scientific(b.format_finite(x).as_bytes(), out);
}

/// Shortest text for a narrow float: the fewest significant digits whose `f64` value
/// rounds back to `x`.
fn write_narrow<T: Copy + PartialEq>(
    x: T,
    wide: f64,
    narrow: impl Fn(f64) -> T,
    out: &mut Vec<u8>,
) {
    if push_special(wide, out) {
        return;
    }
    for prec in 0..17 {
        let s = format!("{wide:.prec$e}");
        if let Ok(back) = s.parse::<f64>() {
            if narrow(back) == x && back.is_sign_negative() == wide.is_sign_negative() {
                push_scientific(s.as_bytes(), out);
                return;
            }
        }
    }
    write_f64(wide, out);
}

/// How each value type is written.
pub(crate) trait WriteValue: Value {
    /// Appends the value text.
    fn write(&self, out: &mut Vec<u8>);
}

impl WriteValue for f64 {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        write_f64(*self, out)
    }
}
impl WriteValue for f32 {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        write_f32(*self, out)
    }
}
impl WriteValue for f16 {
    fn write(&self, out: &mut Vec<u8>) {
        write_narrow(
            self.to_bits(),
            self.to_f64(),
            |v| f16::from_f64(v).to_bits(),
            out,
        )
    }
}
impl WriteValue for bf16 {
    fn write(&self, out: &mut Vec<u8>) {
        write_narrow(
            self.to_bits(),
            self.to_f64(),
            |v| bf16::from_f64(v).to_bits(),
            out,
        )
    }
}

macro_rules! int_write {
    ($($t:ty),*) => {$(
        impl WriteValue for $t {
            #[inline]
            fn write(&self, out: &mut Vec<u8>) {
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format(*self).as_bytes());
            }
        }
    )*};
}
int_write!(i8, i16, i32, i64, u8, u16, u32, u64);

impl WriteValue for bool {
    fn write(&self, out: &mut Vec<u8>) {
        out.push(if *self { b'1' } else { b'0' });
    }
}

impl WriteValue for Complex<f32> {
    fn write(&self, out: &mut Vec<u8>) {
        write_f32(self.re, out);
        out.push(b' ');
        write_f32(self.im, out);
    }
}
impl WriteValue for Complex<f64> {
    fn write(&self, out: &mut Vec<u8>) {
        write_f64(self.re, out);
        out.push(b' ');
        write_f64(self.im, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> String {
        let mut v = Vec::new();
        write_f64(x, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn fast_matrix_market_style() {
        assert_eq!(f(1.0), "1");
        assert_eq!(f(0.1), "1E-1");
        assert_eq!(f(-0.0), "-0");
        assert_eq!(f(0.0), "0");
        assert_eq!(f(123.456), "1.23456E2");
        assert_eq!(f(1e-300), "1E-300");
        assert_eq!(f(1.5e16), "1.5E16");
        assert_eq!(f(100.0), "1E2");
        assert_eq!(f(0.7560181690757457), "7.560181690757457E-1");
        assert_eq!(f(-6.78195044747408E2), "-6.78195044747408E2");
        assert_eq!(f(f64::INFINITY), "inf");
        assert_eq!(f(f64::NAN), "nan");
        assert_eq!(f(5e-324), "5E-324");
    }

    #[test]
    fn narrow_floats_are_short() {
        let mut v = Vec::new();
        f16::from_f64(0.1).write(&mut v);
        assert_eq!(String::from_utf8(v).unwrap(), "1E-1");
        let mut v = Vec::new();
        write_f32(0.1f32, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), "1E-1");
    }

    #[test]
    fn decimal_fast_path_equals_the_general_rewrite() {
        let mut state = 0x853c49e6748fea9bu64;
        let check = |x: f64| {
            let mut b = ryu::Buffer::new();
            let s = b.format_finite(x).as_bytes().to_vec();
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            if super::push_scientific_decimal(&s, &mut fast) {
                super::push_scientific_general(&s, &mut slow);
                assert_eq!(fast, slow, "{x:e} ({})", String::from_utf8_lossy(&s));
            }
        };
        for x in [
            0.0,
            -0.0,
            1.0,
            10.0,
            100.0,
            120.5,
            0.5,
            0.001,
            0.0015,
            1e15,
            1.5e15,
            -3.25,
            7e-5,
            123456789.0,
        ] {
            check(x);
        }
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = f64::from_bits(state);
            if x.is_finite() {
                check(x);
            }
            // Values of every decimal magnitude ryu prints without an exponent.
            let e = (state >> 58) as i32 - 8;
            check((state >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi(e));
        }
    }
}

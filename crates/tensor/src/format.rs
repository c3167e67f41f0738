//! C's `%g` (precision 6) for the `sparse_tensor.print` layout.

/// Appends `x` formatted as C's `printf("%g", x)` does.
pub fn write_g(out: &mut String, x: f64) {
    const P: i32 = 6;
    if x.is_nan() {
        out.push_str(if x.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // The exponent X that %e with precision P-1 would print (after rounding).
    let e_form = format!("{:.*e}", (P - 1) as usize, x);
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..P).contains(&exp) {
        out.push_str(strip_zeros(mantissa));
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    } else {
        let f_form = format!("{:.*}", (P - 1 - exp) as usize, x);
        out.push_str(strip_zeros(&f_form));
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::write_g;

    fn g(x: f64) -> String {
        let mut s = String::new();
        write_g(&mut s, x);
        s
    }

    #[test]
    fn matches_c_printf_g() {
        // Expected strings are what glibc's printf("%g") prints.
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (5.5, "5.5"),
            (1.0 / 3.0, "0.333333"),
            (1e20, "1e+20"),
            (123456789.0, "1.23457e+08"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (999999.5, "1e+06"),
            (0.000123456789, "0.000123457"),
            (1e-300, "1e-300"),
            (f64::MAX, "1.79769e+308"),
            (f64::MIN_POSITIVE, "2.22507e-308"),
            (5e-324, "4.94066e-324"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0"),
            (0.1, "0.1"),
            (12345.678, "12345.7"),
        ];
        for &(x, want) in cases {
            assert_eq!(g(x), want, "%g of {x:e}");
        }
    }
}

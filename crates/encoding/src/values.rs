//! `explicitVal` / `implicitVal`: numeric attribute values, kept as canonical text the way MLIR
//! prints them (`1 : i32`, `1.000000e+00 : f64`, `true`,
//! `#complex.number<:f32 1.000000e+00, 0.000000e+00> : complex<f32>`).

/// A floating-point element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatTy {
    F16,
    Bf16,
    F32,
    F64,
}

impl FloatTy {
    pub(crate) fn from_name(name: &str) -> Option<FloatTy> {
        Some(match name {
            "f16" => FloatTy::F16,
            "bf16" => FloatTy::Bf16,
            "f32" => FloatTy::F32,
            "f64" => FloatTy::F64,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            FloatTy::F16 => "f16",
            FloatTy::Bf16 => "bf16",
            FloatTy::F32 => "f32",
            FloatTy::F64 => "f64",
        }
    }
    fn bits(self) -> u32 {
        match self {
            FloatTy::F16 | FloatTy::Bf16 => 16,
            FloatTy::F32 => 32,
            FloatTy::F64 => 64,
        }
    }
    /// Rounds an f64 to the nearest value of this type (ties to even).
    fn round(self, x: f64) -> f64 {
        let (mant, min_exp, max_exp) = match self {
            FloatTy::F64 => return x,
            FloatTy::F32 => return x as f32 as f64,
            FloatTy::F16 => (11, -14, 15),
            FloatTy::Bf16 => (8, -126, 127),
        };
        if x == 0.0 || !x.is_finite() {
            return x;
        }
        let e = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let q = e.max(min_exp) - (mant - 1);
        let r = (x / 2f64.powi(q)).round_ties_even() * 2f64.powi(q);
        if r.abs() >= 2f64.powi(max_exp + 1) {
            f64::INFINITY.copysign(x)
        } else {
            r
        }
    }
    /// The value of a bit pattern (`0x...` literal) of this type.
    fn value_of_bits(self, bits: u64) -> Option<f64> {
        match self {
            FloatTy::F64 => Some(f64::from_bits(bits)),
            FloatTy::F32 => u32::try_from(bits).ok().map(|b| f32::from_bits(b) as f64),
            FloatTy::Bf16 => u16::try_from(bits)
                .ok()
                .map(|b| f32::from_bits((b as u32) << 16) as f64),
            FloatTy::F16 => {
                let b = u16::try_from(bits).ok()?;
                let sign = if b >> 15 == 1 { -1.0 } else { 1.0 };
                let exp = ((b >> 10) & 0x1f) as i32;
                let frac = (b & 0x3ff) as f64;
                Some(
                    sign * match exp {
                        0 => frac * 2f64.powi(-24),
                        31 if frac == 0.0 => f64::INFINITY,
                        31 => f64::NAN,
                        _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
                    },
                )
            }
        }
    }
    /// The bit pattern of a value of this type (for printing NaN and infinities).
    fn to_bits(self, x: f64) -> u64 {
        match self {
            FloatTy::F64 => x.to_bits(),
            FloatTy::F32 => (x as f32).to_bits() as u64,
            FloatTy::Bf16 => ((x as f32).to_bits() >> 16) as u64,
            FloatTy::F16 => {
                let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
                sign | if x.is_nan() { 0x7e00 } else { 0x7c00 }
            }
        }
    }
}

/// MLIR's float printing: `%e` with 6 digits when that reads back exactly; otherwise the
/// shortest digits that read back exactly (MLIR uses APFloat's own form there, which this does
/// not reproduce digit for digit); NaN and infinities as a hex bit pattern.
pub(crate) fn format_float(x: f64, ty: FloatTy) -> String {
    if !x.is_finite() {
        let digits = (ty.bits() / 4) as usize;
        return format!("0x{:0digits$X}", ty.to_bits(x));
    }
    let six = normalize_exp(&format!("{x:.6e}"));
    if six
        .parse::<f64>()
        .map(|v| ty.round(v).to_bits() == x.to_bits())
        .unwrap_or(false)
    {
        return six;
    }
    let shortest = if ty == FloatTy::F64 {
        format!("{x:e}")
    } else {
        format!("{:e}", x as f32)
    };
    normalize_exp(&shortest)
}

/// `1.5e3` -> `1.5e+03`, `1e0` -> `1.0e+00`.
fn normalize_exp(s: &str) -> String {
    let (m, e) = s.split_once('e').unwrap_or((s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let m = if m.contains('.') {
        m.to_string()
    } else {
        format!("{m}.0")
    };
    format!(
        "{m}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// A number literal as the parser read it.
#[derive(Clone, Debug)]
pub(crate) enum Literal {
    /// Decimal integer text, with its sign.
    Int { negative: bool, text: String },
    /// Hex integer text (`0x...`), a bit pattern for float types.
    Hex(String),
    /// Float text, with its sign.
    Float { negative: bool, text: String },
    /// `true` / `false`.
    Bool(bool),
}

/// The canonical text of a scalar `literal : ty` (`ty` None: i64 for integers, f64 for floats).
pub(crate) fn canonical_scalar(lit: &Literal, ty: Option<&str>) -> Result<String, String> {
    let ty = ty.unwrap_or(match lit {
        Literal::Float { .. } => "f64",
        Literal::Bool(_) => "i1",
        _ => "i64",
    });
    if let Some(fty) = FloatTy::from_name(ty) {
        return Ok(format!("{} : {ty}", float_value(lit, fty)?));
    }
    let (signed, unsigned, bits) = if ty == "index" {
        (true, false, 64)
    } else if let Some(n) = ty.strip_prefix("si") {
        (true, false, n.parse::<u32>().map_err(|_| unknown(ty))?)
    } else if let Some(n) = ty.strip_prefix("ui") {
        (false, true, n.parse::<u32>().map_err(|_| unknown(ty))?)
    } else if let Some(n) = ty.strip_prefix('i') {
        (true, true, n.parse::<u32>().map_err(|_| unknown(ty))?)
    } else {
        return Err(unknown(ty));
    };
    if bits == 0 || bits > 64 {
        return Err(unknown(ty));
    }
    let v: i128 = match lit {
        Literal::Bool(b) if bits == 1 => *b as i128,
        Literal::Int { negative, text } => {
            let v: i128 = text
                .parse()
                .map_err(|_| format!("integer {text} is too large"))?;
            if *negative {
                -v
            } else {
                v
            }
        }
        Literal::Hex(h) => {
            i128::from_str_radix(&h[2..], 16).map_err(|_| format!("integer {h} is too large"))?
        }
        _ => return Err(format!("expected an integer value for {ty}")),
    };
    let min = if signed { -(1i128 << (bits - 1)) } else { 0 };
    let max = if unsigned {
        (1i128 << bits) - 1
    } else {
        (1i128 << (bits - 1)) - 1
    };
    if v < min || v > max {
        return Err(format!("integer {v} is out of range for {ty}"));
    }
    if bits == 1 && ty.starts_with('i') {
        return Ok(if v != 0 { "true" } else { "false" }.to_string());
    }
    // Signless integers print as signed (MLIR prints `255 : i8` as `-1 : i8`).
    let shown = if signed && v > (1i128 << (bits - 1)) - 1 {
        v - (1i128 << bits)
    } else {
        v
    };
    Ok(format!("{shown} : {ty}"))
}

fn unknown(ty: &str) -> String {
    format!("unsupported value type `{ty}` (expected iN, siN, uiN, index, f16, bf16, f32, f64 or complex<f32/f64>)")
}

/// The canonical text of a float component of type `ty`.
pub(crate) fn float_value(lit: &Literal, ty: FloatTy) -> Result<String, String> {
    let x = match lit {
        Literal::Float { negative, text } => {
            let v = if ty == FloatTy::F32 {
                text.parse::<f32>()
                    .map(f64::from)
                    .map_err(|_| format!("bad float {text}"))?
            } else {
                ty.round(
                    text.parse::<f64>()
                        .map_err(|_| format!("bad float {text}"))?,
                )
            };
            if *negative {
                -v
            } else {
                v
            }
        }
        Literal::Hex(h) => {
            let bits = u64::from_str_radix(&h[2..], 16).map_err(|_| format!("{h} is too large"))?;
            ty.value_of_bits(bits)
                .ok_or_else(|| format!("{h} does not fit {}", ty.name()))?
        }
        Literal::Int { text, .. } => {
            return Err(format!(
                "expected a float literal for {} (write {text}.0)",
                ty.name()
            ))
        }
        Literal::Bool(_) => return Err(format!("expected a float literal for {}", ty.name())),
    };
    Ok(format_float(x, ty))
}

/// True if a canonical value text is zero (every numeric component is zero).
pub(crate) fn is_zero(canonical: &str) -> bool {
    if canonical == "false" {
        return true;
    }
    let body = canonical
        .strip_prefix("#complex.number<:")
        .map_or(canonical, |rest| {
            let end = rest.find('>').unwrap_or(rest.len());
            rest[..end].split_once(' ').map_or("", |(_, nums)| nums)
        });
    let value_part = if canonical.starts_with('#') {
        body
    } else {
        canonical.split(" : ").next().unwrap_or("")
    };
    value_part.split(',').all(|n| {
        let n = n.trim();
        if let Some(h) = n.strip_prefix("0x") {
            // A float bit pattern: zero if only the sign bit may be set.
            u64::from_str_radix(h, 16)
                .map(|b| b << 1 == 0 || b == 1 << (h.len() * 4 - 1))
                .unwrap_or(false)
        } else {
            n.parse::<f64>().map(|v| v == 0.0).unwrap_or(false)
        }
    })
}

//! Affine expressions: simplifying constructors (the subset of MLIR's simplification that the
//! parser needs), evaluation, MLIR-style printing, and the classification of a level
//! expression into the supported [`LevelExpr`] forms.

use std::fmt;

use crate::model::{AffineExpr, LevelExpr};

fn boxed(a: AffineExpr, b: AffineExpr) -> (Box<AffineExpr>, Box<AffineExpr>) {
    (Box::new(a), Box::new(b))
}

/// Floor division for `b > 0`.
fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

/// Ceiling division for `b > 0` (computed wide, so it cannot overflow).
fn ceil_div(a: i64, b: i64) -> i64 {
    ((i128::from(a) + i128::from(b) - 1).div_euclid(i128::from(b))) as i64
}

impl AffineExpr {
    /// `a + b`, folding constants, dropping `+ 0` and putting a constant on the right.
    pub fn plus(a: AffineExpr, b: AffineExpr) -> AffineExpr {
        match (a, b) {
            (AffineExpr::Const(x), AffineExpr::Const(y)) if x.checked_add(y).is_some() => {
                AffineExpr::Const(x + y)
            }
            (AffineExpr::Const(0), e) | (e, AffineExpr::Const(0)) => e,
            // Sums associate to the left, as the printed text `a + b + c` reads back, so
            // `a + (b + c)` and `(a + b) + c` are one expression (found by fuzzing).
            (a, AffineExpr::Add(x, y)) => AffineExpr::plus(AffineExpr::plus(a, *x), *y),
            (c @ AffineExpr::Const(_), e) => {
                let (l, r) = boxed(e, c);
                AffineExpr::Add(l, r)
            }
            (a, b) => {
                let (l, r) = boxed(a, b);
                AffineExpr::Add(l, r)
            }
        }
    }

    /// `a * b`, folding constants, dropping `* 1`, putting a constant on the right and merging
    /// `(x * c1) * c2` into `x * (c1 * c2)`.
    pub fn times(a: AffineExpr, b: AffineExpr) -> AffineExpr {
        match (a, b) {
            (AffineExpr::Const(x), AffineExpr::Const(y)) if x.checked_mul(y).is_some() => {
                AffineExpr::Const(x * y)
            }
            (AffineExpr::Const(1), e) | (e, AffineExpr::Const(1)) => e,
            // Constants go right; two constants whose product overflows stay a `Mul`
            // (swapping them would recurse forever).
            (c @ AffineExpr::Const(_), e) if !matches!(e, AffineExpr::Const(_)) => {
                AffineExpr::times(e, c)
            }
            (AffineExpr::Mul(x, c1), AffineExpr::Const(c2)) if matches!(*c1, AffineExpr::Const(v) if v.checked_mul(c2).is_some()) =>
            {
                let AffineExpr::Const(v) = *c1 else {
                    unreachable!()
                };
                AffineExpr::times(*x, AffineExpr::Const(v * c2))
            }
            (a, b) => {
                let (l, r) = boxed(a, b);
                AffineExpr::Mul(l, r)
            }
        }
    }

    /// `a floordiv b`, folding constants when `b > 0` (a division by 1 is kept as written).
    pub fn floordiv(a: AffineExpr, b: AffineExpr) -> AffineExpr {
        match (a, b) {
            (AffineExpr::Const(x), AffineExpr::Const(y)) if y > 0 => {
                AffineExpr::Const(floor_div(x, y))
            }
            (a, b) => {
                let (l, r) = boxed(a, b);
                AffineExpr::FloorDiv(l, r)
            }
        }
    }

    /// `a ceildiv b`, folding constants when `b > 0`.
    pub fn ceildiv(a: AffineExpr, b: AffineExpr) -> AffineExpr {
        match (a, b) {
            (AffineExpr::Const(x), AffineExpr::Const(y)) if y > 0 => {
                AffineExpr::Const(ceil_div(x, y))
            }
            (a, b) => {
                let (l, r) = boxed(a, b);
                AffineExpr::CeilDiv(l, r)
            }
        }
    }

    /// `a mod b`, folding constants when `b > 0`.
    pub fn modulo(a: AffineExpr, b: AffineExpr) -> AffineExpr {
        match (a, b) {
            (AffineExpr::Const(x), AffineExpr::Const(y)) if y > 0 => {
                AffineExpr::Const(x.rem_euclid(y))
            }
            (a, b) => {
                let (l, r) = boxed(a, b);
                AffineExpr::Mod(l, r)
            }
        }
    }

    /// True if the expression uses no dimension variable (symbols and constants only).
    pub fn is_symbolic(&self) -> bool {
        match self {
            AffineExpr::Dim(_) => false,
            AffineExpr::Symbol(_) | AffineExpr::Const(_) => true,
            AffineExpr::Add(a, b)
            | AffineExpr::Mul(a, b)
            | AffineExpr::FloorDiv(a, b)
            | AffineExpr::CeilDiv(a, b)
            | AffineExpr::Mod(a, b) => a.is_symbolic() && b.is_symbolic(),
        }
    }

    /// Adds every dimension the expression uses to `out`.
    pub fn collect_dims(&self, out: &mut Vec<usize>) {
        match self {
            AffineExpr::Dim(d) => out.push(*d),
            AffineExpr::Symbol(_) | AffineExpr::Const(_) => {}
            AffineExpr::Add(a, b)
            | AffineExpr::Mul(a, b)
            | AffineExpr::FloorDiv(a, b)
            | AffineExpr::CeilDiv(a, b)
            | AffineExpr::Mod(a, b) => {
                a.collect_dims(out);
                b.collect_dims(out);
            }
        }
    }

    /// The value for the given dimension and symbol values (`None` on a division by a
    /// non-positive value, an unknown variable or an overflow).
    pub fn eval(&self, dims: &[i64], syms: &[i64]) -> Option<i64> {
        Some(match self {
            AffineExpr::Dim(d) => *dims.get(*d)?,
            AffineExpr::Symbol(s) => *syms.get(*s)?,
            AffineExpr::Const(c) => *c,
            AffineExpr::Add(a, b) => a.eval(dims, syms)?.checked_add(b.eval(dims, syms)?)?,
            AffineExpr::Mul(a, b) => a.eval(dims, syms)?.checked_mul(b.eval(dims, syms)?)?,
            AffineExpr::FloorDiv(a, b) | AffineExpr::CeilDiv(a, b) | AffineExpr::Mod(a, b) => {
                let (x, y) = (a.eval(dims, syms)?, b.eval(dims, syms)?);
                if y <= 0 {
                    return None;
                }
                match self {
                    AffineExpr::FloorDiv(..) => floor_div(x, y),
                    AffineExpr::CeilDiv(..) => ceil_div(x, y),
                    _ => x.rem_euclid(y),
                }
            }
        })
    }

    /// Displays the expression with the dimensions named as in `dims` (their
    /// [`DimSpec::name`](crate::DimSpec::name), `d0, d1, ...` where there is none), as a
    /// message quotes the user's text.
    pub fn named<'a>(&'a self, dims: &'a [crate::DimSpec]) -> impl fmt::Display + 'a {
        struct Named<'a>(&'a AffineExpr, &'a [crate::DimSpec]);
        impl fmt::Display for Named<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.print(f, false, self.1)
            }
        }
        Named(self, dims)
    }

    fn print(
        &self,
        f: &mut fmt::Formatter<'_>,
        strong: bool,
        names: &[crate::DimSpec],
    ) -> fmt::Result {
        let (op, a, b) = match self {
            AffineExpr::Dim(d) => {
                return match names.get(*d).and_then(|n| n.name.as_deref()) {
                    Some(n) => f.write_str(n),
                    None => write!(f, "d{d}"),
                }
            }
            AffineExpr::Symbol(s) => return write!(f, "s{s}"),
            AffineExpr::Const(c) => return write!(f, "{c}"),
            AffineExpr::Add(a, b) => (" + ", a, b),
            AffineExpr::Mul(a, b) => (" * ", a, b),
            AffineExpr::FloorDiv(a, b) => (" floordiv ", a, b),
            AffineExpr::CeilDiv(a, b) => (" ceildiv ", a, b),
            AffineExpr::Mod(a, b) => (" mod ", a, b),
        };
        if strong {
            f.write_str("(")?;
        }
        if op != " + " {
            if op == " * " && **b == AffineExpr::Const(-1) {
                f.write_str("-")?;
                a.print(f, true, names)?;
            } else {
                a.print(f, true, names)?;
                f.write_str(op)?;
                b.print(f, true, names)?;
            }
        } else {
            // MLIR's pretty forms of an addition: `a - x`, `a - x * c`, `a - c`.
            match &**b {
                AffineExpr::Mul(x, c) if matches!(**c, AffineExpr::Const(v) if v < 0) => {
                    let AffineExpr::Const(v) = **c else {
                        unreachable!()
                    };
                    a.print(f, false, names)?;
                    f.write_str(" - ")?;
                    if v == -1 {
                        x.print(f, matches!(**x, AffineExpr::Add(..)), names)?;
                    } else {
                        x.print(f, true, names)?;
                        write!(f, " * {}", -(v as i128))?;
                    }
                }
                AffineExpr::Const(c) if *c < 0 => {
                    a.print(f, false, names)?;
                    write!(f, " - {}", -(*c as i128))?;
                }
                _ => {
                    a.print(f, false, names)?;
                    f.write_str(" + ")?;
                    b.print(f, false, names)?;
                }
            }
        }
        if strong {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Prints as MLIR prints affine expressions: `d0 * 8 + d1`, `d0 - d1`, `(d0 + d1) floordiv 2`.
impl fmt::Display for AffineExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.print(f, false, &[])
    }
}

/// Collects the factors of a product: `(dims, symbols, constant product)`.
fn product_factors(
    e: &AffineExpr,
    dims: &mut Vec<usize>,
    syms: &mut Vec<usize>,
    k: &mut i128,
) -> bool {
    match e {
        AffineExpr::Dim(d) => dims.push(*d),
        AffineExpr::Symbol(s) => syms.push(*s),
        AffineExpr::Const(c) => match k.checked_mul(i128::from(*c)) {
            Some(v) => *k = v,
            None => return false,
        },
        AffineExpr::Mul(a, b) => {
            return product_factors(a, dims, syms, k) && product_factors(b, dims, syms, k);
        }
        _ => return false,
    }
    true
}

/// Classifies a level expression: `d`, `d floordiv c`, `d mod c` (c > 0), the ELL product of
/// one dimension, the symbol `s0` and a positive constant, or anything else (`Other`).
pub(crate) fn classify(raw: &AffineExpr) -> LevelExpr {
    match raw {
        AffineExpr::Dim(d) => return LevelExpr::Dim(*d),
        AffineExpr::FloorDiv(a, b) | AffineExpr::Mod(a, b) => {
            if let (AffineExpr::Dim(d), AffineExpr::Const(c)) = (&**a, &**b) {
                if *c > 0 {
                    return if matches!(raw, AffineExpr::FloorDiv(..)) {
                        LevelExpr::FloorDiv(*d, *c as u64)
                    } else {
                        LevelExpr::Mod(*d, *c as u64)
                    };
                }
            }
        }
        AffineExpr::Mul(..) => {
            let (mut dims, mut syms, mut k) = (Vec::new(), Vec::new(), 1i128);
            if product_factors(raw, &mut dims, &mut syms, &mut k)
                && dims.len() == 1
                && syms == [0]
                && k > 0
                && k <= u64::MAX as i128
            {
                return LevelExpr::Ell {
                    dim: dims[0],
                    k: k as u64,
                };
            }
        }
        _ => {}
    }
    LevelExpr::Other(simplify(raw))
}

/// Rebuilds an expression through the simplifying constructors.
pub(crate) fn simplify(e: &AffineExpr) -> AffineExpr {
    match e {
        AffineExpr::Dim(_) | AffineExpr::Symbol(_) | AffineExpr::Const(_) => e.clone(),
        AffineExpr::Add(a, b) => AffineExpr::plus(simplify(a), simplify(b)),
        AffineExpr::Mul(a, b) => AffineExpr::times(simplify(a), simplify(b)),
        AffineExpr::FloorDiv(a, b) => AffineExpr::floordiv(simplify(a), simplify(b)),
        AffineExpr::CeilDiv(a, b) => AffineExpr::ceildiv(simplify(a), simplify(b)),
        AffineExpr::Mod(a, b) => AffineExpr::modulo(simplify(a), simplify(b)),
    }
}

impl LevelExpr {
    /// The level coordinate for the given dimension coordinates (`None` if undefined; the ELL
    /// slice level and expressions with symbols evaluate with every symbol = 1).
    pub fn eval(&self, dims: &[i64]) -> Option<i64> {
        match self {
            LevelExpr::Dim(d) => dims.get(*d).copied(),
            LevelExpr::FloorDiv(d, c) => Some(floor_div(
                *dims.get(*d)?,
                i64::try_from(*c).ok().filter(|c| *c > 0)?,
            )),
            LevelExpr::Mod(d, c) => Some(
                dims.get(*d)?
                    .rem_euclid(i64::try_from(*c).ok().filter(|c| *c > 0)?),
            ),
            LevelExpr::Ell { dim, k } => dims.get(*dim)?.checked_mul(i64::try_from(*k).ok()?),
            LevelExpr::Other(e) => e.eval(dims, &[1; 16]),
        }
    }

    /// The expression as a general affine expression.
    pub fn to_affine(&self) -> AffineExpr {
        let c = |v: u64| AffineExpr::Const(v as i64);
        match self {
            LevelExpr::Dim(d) => AffineExpr::Dim(*d),
            LevelExpr::FloorDiv(d, v) => {
                AffineExpr::FloorDiv(Box::new(AffineExpr::Dim(*d)), Box::new(c(*v)))
            }
            LevelExpr::Mod(d, v) => AffineExpr::Mod(Box::new(AffineExpr::Dim(*d)), Box::new(c(*v))),
            LevelExpr::Ell { dim, k } => AffineExpr::Mul(
                Box::new(AffineExpr::Dim(*dim)),
                Box::new(AffineExpr::Mul(
                    Box::new(AffineExpr::Symbol(0)),
                    Box::new(c(*k)),
                )),
            ),
            LevelExpr::Other(e) => e.clone(),
        }
    }
}

/// Prints the canonical form: `d0`, `d0 floordiv 2`, `d0 mod 2`, `d0 * (s0 * 3)`, or the
/// general expression as MLIR prints it.
impl fmt::Display for LevelExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelExpr::Dim(d) => write!(f, "d{d}"),
            LevelExpr::FloorDiv(d, c) => write!(f, "d{d} floordiv {c}"),
            LevelExpr::Mod(d, c) => write!(f, "d{d} mod {c}"),
            LevelExpr::Ell { dim, k } => write!(f, "d{dim} * (s0 * {k})"),
            LevelExpr::Other(e) => write!(f, "{e}"),
        }
    }
}

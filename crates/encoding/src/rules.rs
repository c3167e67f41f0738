//! The semantic rules of ENCODING.md ([`Encoding::validate`]) and the "not supported yet"
//! checks made before converting into an encoding ([`Encoding::check_convertible`]).
//!
//! Where the rules differ from MLIR's verifier on purpose:
//! - `crdWidth = 2` is accepted for n:m coordinates (ENCODING.md, "Where we differ").
//! - A singleton's parent must be *nonunique* (compressed, loose_compressed or singleton);
//!   MLIR only asks for a compressed or loose_compressed parent somewhere before.
//! - Level expressions MLIR cannot invert (`d0 * 8 + d1`, fewer levels than dimensions) are
//!   accepted as long as every dimension appears; converting into them is refused later.
//! - `structured[n, m]` always needs the `d floordiv m : dense` / `d mod m` split.
//! - A non-zero `implicitVal` is refused here already (MLIR refuses it once a tensor type
//!   uses the encoding).

use crate::error::{EncodingError, EncodingErrorKind as K};
use crate::model::*;

fn level_name(l: &LevelSpec) -> String {
    format!("{}{}", l.format, l.props)
}

impl Encoding {
    /// Checks every rule of ENCODING.md; the error names the level (or dimension) at fault.
    /// [`crate::parse`] calls this.
    pub fn validate(&self) -> Result<(), EncodingError> {
        let rank = self.dims.len();
        if rank == 0 {
            return Err(EncodingError::new(
                K::Empty,
                "the level map has no dimensions",
            ));
        }
        if self.levels.is_empty() {
            return Err(EncodingError::new(K::Empty, "the level map has no levels"));
        }
        if ![0, 8, 16, 32, 64].contains(&self.pos_width) {
            return Err(EncodingError::new(
                K::PosWidth,
                format!(
                    "posWidth = {} is not a supported bit width (0, 8, 16, 32 or 64)",
                    self.pos_width
                ),
            ));
        }
        if ![0, 2, 8, 16, 32, 64].contains(&self.crd_width) {
            return Err(EncodingError::new(
                K::CrdWidth,
                format!(
                    "crdWidth = {} is not a supported bit width (0, 2, 8, 16, 32 or 64)",
                    self.crd_width
                ),
            ));
        }
        self.check_variables()?;
        self.check_properties()?;
        self.check_batch()?;
        self.check_singletons()?;
        self.check_structured()?;
        self.check_ell()?;
        self.check_invertible()?;
        self.check_crd_width_2()?;
        self.check_slices()?;
        self.check_values()
    }

    /// Refuses what parses and validates but cannot be converted into yet: batch levels,
    /// `explicitVal` / `implicitVal`, and level expressions other than `d`, `d floordiv c`,
    /// `d mod c` and the ELL form. Also runs [`Encoding::validate`].
    pub fn check_convertible(&self) -> Result<(), EncodingError> {
        self.validate()?;
        if let Some(l) = self
            .levels
            .iter()
            .position(|l| l.format == LevelFormat::Batch)
        {
            return Err(EncodingError::batch_level(l));
        }
        for (l, level) in self.levels.iter().enumerate() {
            if let LevelExpr::Other(e) = &level.expr {
                let expr = e.named(&self.dims).to_string();
                return Err(EncodingError::level_expression(l, &expr));
            }
        }
        if self.explicit_val.is_some() || self.implicit_val.is_some() {
            return Err(EncodingError::new(
                K::NotSupported,
                "explicitVal / implicitVal parse and print, but converting into an encoding that uses \
                 them is not supported yet",
            ));
        }
        Ok(())
    }

    fn check_variables(&self) -> Result<(), EncodingError> {
        let rank = self.dims.len();
        for (l, level) in self.levels.iter().enumerate() {
            let mut dims = Vec::new();
            match &level.expr {
                LevelExpr::Other(e) => {
                    e.collect_dims(&mut dims);
                    if max_symbol(e).is_some_and(|s| s >= self.symbols) {
                        return Err(EncodingError::new(
                            K::NotInvertible,
                            format!("level {l}: the expression uses a symbol that is not declared"),
                        )
                        .at_level(l));
                    }
                }
                other => dims.extend(other.dim()),
            }
            if let Some(d) = dims.iter().find(|d| **d >= rank) {
                return Err(EncodingError::new(
                    K::NotInvertible,
                    format!(
                        "level {l}: dimension d{d} does not exist (the map has {rank} dimensions)"
                    ),
                )
                .at_level(l));
            }
            let zero_div = matches!(level.expr, LevelExpr::FloorDiv(_, 0) | LevelExpr::Mod(_, 0));
            if zero_div {
                return Err(EncodingError::new(
                    K::NotInvertible,
                    format!("level {l}: `{}` divides by zero", level.expr),
                )
                .at_level(l));
            }
        }
        Ok(())
    }

    fn check_properties(&self) -> Result<(), EncodingError> {
        for (l, level) in self.levels.iter().enumerate() {
            let p = level.props;
            let takes_props = matches!(
                level.format,
                LevelFormat::Compressed | LevelFormat::LooseCompressed | LevelFormat::Singleton
            );
            if !takes_props && (p.nonunique || p.nonordered || p.soa) {
                return Err(EncodingError::new(
                    K::Properties,
                    format!(
                        "level {l}: {} levels take no properties, found {}{p}",
                        level.format, level.format
                    ),
                )
                .at_level(l));
            }
            if p.soa && level.format != LevelFormat::Singleton {
                return Err(EncodingError::new(
                    K::Properties,
                    format!(
                        "level {l}: soa applies only to singleton levels; level {l} is {}",
                        level_name(level)
                    ),
                )
                .at_level(l));
            }
        }
        Ok(())
    }

    fn check_batch(&self) -> Result<(), EncodingError> {
        let leading = self
            .levels
            .iter()
            .take_while(|l| l.format == LevelFormat::Batch)
            .count();
        if let Some(l) = self.levels[leading..]
            .iter()
            .position(|l| l.format == LevelFormat::Batch)
        {
            let l = l + leading;
            return Err(EncodingError::new(
                K::Batch,
                format!("level {l}: batch levels must all come first, but level {leading} is not a batch level"),
            )
            .at_level(l));
        }
        Ok(())
    }

    fn check_singletons(&self) -> Result<(), EncodingError> {
        let mut first_soa: Option<(usize, bool)> = None;
        for (l, level) in self.levels.iter().enumerate() {
            if level.format != LevelFormat::Singleton {
                continue;
            }
            if l == 0 {
                return Err(EncodingError::new(
                    K::Singleton,
                    "level 0: a singleton level cannot be the first level (it needs a compressed(nonunique) \
                     parent)",
                )
                .at_level(0));
            }
            let parent = &self.levels[l - 1];
            let parent_ok = matches!(
                parent.format,
                LevelFormat::Compressed | LevelFormat::LooseCompressed | LevelFormat::Singleton
            ) && parent.props.nonunique;
            if !parent_ok {
                return Err(EncodingError::new(
                    K::Singleton,
                    format!(
                        "level {l}: the parent of a singleton level must be compressed(nonunique), \
                         loose_compressed(nonunique) or singleton(nonunique); level {} is {}",
                        l - 1,
                        level_name(parent)
                    ),
                )
                .at_level(l));
            }
            match first_soa {
                None => first_soa = Some((l, level.props.soa)),
                Some((f, soa)) if soa != level.props.soa => {
                    let (with, without) = if soa { (f, l) } else { (l, f) };
                    return Err(EncodingError::new(
                        K::Singleton,
                        format!(
                            "level {l}: either every singleton level has soa or none has (level {with} has \
                             soa, level {without} does not)"
                        ),
                    )
                    .at_level(l));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn check_structured(&self) -> Result<(), EncodingError> {
        let Some(l) = self
            .levels
            .iter()
            .position(|l| matches!(l.format, LevelFormat::Structured { .. }))
        else {
            return Ok(());
        };
        let LevelFormat::Structured { n, m } = self.levels[l].format else {
            unreachable!()
        };
        let err = |msg: String| {
            Err(EncodingError::new(K::Structured, format!("level {l}: {msg}")).at_level(l))
        };
        if n == 0 || m == 0 {
            return err(format!("structured[{n}, {m}] needs n and m of at least 1"));
        }
        if n > m {
            return err(format!("structured[{n}, {m}] needs n <= m"));
        }
        if l + 1 != self.levels.len() {
            return err(format!(
                "a structured[{n}, {m}] level must be the last level"
            ));
        }
        if let Some(k) = self.levels[..l]
            .iter()
            .position(|x| x.format != LevelFormat::Dense)
        {
            return err(format!(
                "a structured[{n}, {m}] level needs dense levels before it; level {k} is {}",
                level_name(&self.levels[k])
            ));
        }
        let d = match self.levels[l].expr {
            LevelExpr::Mod(d, c) if c == u64::from(m) => d,
            _ => {
                return err(format!(
                    "a structured[{n}, {m}] level must be `d mod {m}` under a `d floordiv {m} : dense` level, \
                     found `{}`",
                    self.levels[l].expr
                ))
            }
        };
        if !self.levels[..l]
            .iter()
            .any(|x| x.expr == LevelExpr::FloorDiv(d, u64::from(m)))
        {
            return err(format!("structured[{n}, {m}] on `d{d} mod {m}` needs a `d{d} floordiv {m} : dense` level before it"));
        }
        if let Some(k) = self.levels[..l].iter().position(|x| {
            matches!(x.expr, LevelExpr::FloorDiv(e, _) | LevelExpr::Mod(e, _) if e != d)
                || matches!(x.expr, LevelExpr::Ell { .. } | LevelExpr::Other(_))
        }) {
            return err(format!(
                "with a structured[{n}, {m}] level only d{d} may be split; level {k} is `{}`",
                self.levels[k].expr
            ));
        }
        Ok(())
    }

    fn check_ell(&self) -> Result<(), EncodingError> {
        let Some(l) = self
            .levels
            .iter()
            .position(|l| matches!(l.expr, LevelExpr::Ell { .. }))
        else {
            return Ok(());
        };
        let form = "the ELL form is `[s0](d0, d1) -> (d0 * (s0 * K) : dense, d0 : dense, d1 : compressed)` with K >= 1";
        let bad =
            |at: usize| Err(EncodingError::new(K::Ell, format!("level {at}: {form}")).at_level(at));
        let LevelExpr::Ell { dim, k } = self.levels[l].expr else {
            unreachable!()
        };
        if l != 0 || k == 0 || self.symbols == 0 || self.levels[0].format != LevelFormat::Dense {
            return bad(l);
        }
        if self.dims.len() != 2 || self.levels.len() != 3 {
            return bad(l);
        }
        let plain = |i: usize, fmt: LevelFormat| {
            let x = &self.levels[i];
            x.format == fmt && x.props == LevelProps::default()
        };
        if !(plain(1, LevelFormat::Dense) && self.levels[1].expr == LevelExpr::Dim(dim)) {
            return bad(1);
        }
        if !(plain(2, LevelFormat::Compressed)
            && self.levels[2].expr == LevelExpr::Dim(1 - dim.min(1)))
        {
            return bad(2);
        }
        Ok(())
    }

    fn check_invertible(&self) -> Result<(), EncodingError> {
        let mut in_other = vec![false; self.dims.len()];
        for level in &self.levels {
            if let LevelExpr::Other(e) = &level.expr {
                let mut dims = Vec::new();
                e.collect_dims(&mut dims);
                for d in dims {
                    in_other[d] = true;
                }
            }
        }
        for (d, other) in in_other.iter().enumerate() {
            let uses = |f: &dyn Fn(&LevelExpr) -> Option<u64>| -> Vec<(usize, u64)> {
                self.levels
                    .iter()
                    .enumerate()
                    .filter_map(|(l, x)| f(&x.expr).map(|c| (l, c)))
                    .collect()
            };
            let plain = uses(&|e| (*e == LevelExpr::Dim(d)).then_some(0));
            let divs = uses(&|e| match e {
                LevelExpr::FloorDiv(x, c) if *x == d => Some(*c),
                _ => None,
            });
            let mods = uses(&|e| match e {
                LevelExpr::Mod(x, c) if *x == d => Some(*c),
                _ => None,
            });
            let not_inv = |l: usize, msg: String| {
                Err(EncodingError::new(
                    K::NotInvertible,
                    format!("level {l}: {msg}; the level map is not invertible"),
                )
                .at_level(l))
            };
            if plain.len() > 1 {
                return not_inv(
                    plain[1].0,
                    format!("dimension d{d} is already level {}", plain[0].0),
                );
            }
            if let (Some(p), Some(&(l, _))) = (plain.first(), divs.first().or(mods.first())) {
                return not_inv(
                    l,
                    format!(
                        "`{}` splits d{d}, which level {} stores whole",
                        self.levels[l].expr, p.0
                    ),
                );
            }
            if plain.is_empty() {
                match (divs.as_slice(), mods.as_slice()) {
                    ([], []) if *other => {}
                    ([], []) => {
                        return Err(EncodingError::new(
                            K::NotInvertible,
                            format!("dimension {d} (d{d}) does not appear in the level map; the map is not invertible"),
                        )
                        .at_dim(d))
                    }
                    ([(_, a)], [(_, b)]) if a == b => {}
                    ([(l, a)], [(k, b)]) => {
                        return not_inv(
                            (*l).max(*k),
                            format!("`d{d} floordiv {a}` and `d{d} mod {b}` split d{d} by different sizes"),
                        )
                    }
                    ([(l, c)], []) => return not_inv(*l, format!("`d{d} floordiv {c}` needs a `d{d} mod {c}` level")),
                    ([], [(l, c)]) => return not_inv(*l, format!("`d{d} mod {c}` needs a `d{d} floordiv {c}` level")),
                    _ => {
                        let l = divs.get(1).or(mods.get(1)).map_or(0, |x| x.0);
                        return not_inv(l, format!("d{d} is split more than once"));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_crd_width_2(&self) -> Result<(), EncodingError> {
        if self.crd_width != 2 {
            return Ok(());
        }
        for (l, level) in self.levels.iter().enumerate() {
            let ok = matches!(level.format, LevelFormat::Structured { m, .. } if m <= 4);
            if level.format.has_crd() && !ok {
                return Err(EncodingError::new(
                    K::CrdWidth,
                    format!(
                        "crdWidth = 2 is allowed only when every crd array belongs to a structured[n, m] \
                         level with m <= 4; level {l} is {}",
                        level_name(level)
                    ),
                )
                .at_level(l));
            }
        }
        Ok(())
    }

    pub(crate) fn check_slices(&self) -> Result<(), EncodingError> {
        for (d, dim) in self.dims.iter().enumerate() {
            if let Some(s) = dim.slice {
                for (name, v) in [("size", s.size), ("stride", s.stride)] {
                    if v == SliceValue::Static(0) {
                        return Err(EncodingError::new(
                            K::Slice,
                            format!("dimension {d}: the slice {name} must be positive ({s})"),
                        )
                        .at_dim(d));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_values(&self) -> Result<(), EncodingError> {
        for (name, v) in [
            ("explicitVal", &self.explicit_val),
            ("implicitVal", &self.implicit_val),
        ] {
            let Some(text) = v else { continue };
            let canonical = crate::parser::canonical_value(text)
                .map_err(|m| EncodingError::new(K::Value, format!("{name}: {m}")))?;
            if name == "implicitVal" && !crate::values::is_zero(&canonical) {
                return Err(EncodingError::new(
                    K::Value,
                    format!("implicitVal must be zero, found `{canonical}`"),
                ));
            }
        }
        Ok(())
    }
}

fn max_symbol(e: &AffineExpr) -> Option<usize> {
    match e {
        AffineExpr::Symbol(s) => Some(*s),
        AffineExpr::Dim(_) | AffineExpr::Const(_) => None,
        AffineExpr::Add(a, b)
        | AffineExpr::Mul(a, b)
        | AffineExpr::FloorDiv(a, b)
        | AffineExpr::CeilDiv(a, b)
        | AffineExpr::Mod(a, b) => max_symbol(a).max(max_symbol(b)),
    }
}

/// The refusals of [`Encoding::check_convertible`], worded once: the converters that meet
/// such a level (after that check, which refuses it first) give the same error.
impl EncodingError {
    /// Level `l` is a batch level, which cannot be converted into yet.
    pub fn batch_level(l: usize) -> EncodingError {
        EncodingError::new(
            K::NotSupported,
            format!(
                "level {l} is a batch level: batch levels parse and print, but converting into \
                 them is not supported yet"
            ),
        )
        .at_level(l)
    }

    /// Level `l`'s expression `expr` (as printed) cannot be converted into yet.
    pub fn level_expression(l: usize, expr: &str) -> EncodingError {
        EncodingError::new(
            K::NotSupported,
            format!(
                "level {l}: the level expression `{expr}` is not supported yet (supported: d, \
                 d floordiv c, d mod c, and the ELL form)"
            ),
        )
        .at_level(l)
    }
}

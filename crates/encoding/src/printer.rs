//! The canonical printer (ENCODING.md, "Canonical text"): one line, dimensions `d0, d1, ...`,
//! symbols `s0, ...`, properties in the order nonunique, nonordered, soa, widths left out
//! when 0.

use std::fmt;

use crate::model::*;

/// `dense`, `compressed`, `structured[2, 4]`, ...
impl fmt::Display for LevelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelFormat::Dense => f.write_str("dense"),
            LevelFormat::Batch => f.write_str("batch"),
            LevelFormat::Compressed => f.write_str("compressed"),
            LevelFormat::LooseCompressed => f.write_str("loose_compressed"),
            LevelFormat::Singleton => f.write_str("singleton"),
            LevelFormat::Structured { n, m } => write!(f, "structured[{n}, {m}]"),
        }
    }
}

/// `(nonunique, nonordered, soa)` with only the properties set; nothing when none is.
impl fmt::Display for LevelProps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = [
            (self.nonunique, "nonunique"),
            (self.nonordered, "nonordered"),
            (self.soa, "soa"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        if names.is_empty() {
            Ok(())
        } else {
            write!(f, "({})", names.join(", "))
        }
    }
}

/// A constant, or `?`.
impl fmt::Display for SliceValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SliceValue::Static(v) => write!(f, "{v}"),
            SliceValue::Dynamic => f.write_str("?"),
        }
    }
}

/// `#sparse_tensor<slice(offset, size, stride)>`.
impl fmt::Display for DimSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#sparse_tensor<slice({}, {}, {})>",
            self.offset, self.size, self.stride
        )
    }
}

/// `expr : format(props)`, e.g. `d1 floordiv 4 : dense`.
impl fmt::Display for LevelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} : {}{}", self.expr, self.format, self.props)
    }
}

impl Encoding {
    /// The level map alone, canonically: `[s0](d0, d1) -> (...)`.
    pub fn map_text(&self) -> String {
        let mut s = String::new();
        if self.symbols > 0 {
            let syms: Vec<String> = (0..self.symbols).map(|i| format!("s{i}")).collect();
            s += &format!("[{}]", syms.join(", "));
        }
        let dims: Vec<String> = self
            .dims
            .iter()
            .enumerate()
            .map(|(i, d)| match &d.slice {
                // Unlike MLIR, a dimension without a slice stays bare (MLIR would print the
                // default `slice(0, ?, 1)`, whose `?` means something else here).
                Some(sl) => format!("d{i} : {sl}"),
                None => format!("d{i}"),
            })
            .collect();
        let levels: Vec<String> = self.levels.iter().map(|l| l.to_string()).collect();
        s + &format!("({}) -> ({})", dims.join(", "), levels.join(", "))
    }
}

/// The canonical text:
/// `#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32 }>`.
impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#sparse_tensor.encoding<{{ map = {}", self.map_text())?;
        if self.pos_width != 0 {
            write!(f, ", posWidth = {}", self.pos_width)?;
        }
        if self.crd_width != 0 {
            write!(f, ", crdWidth = {}", self.crd_width)?;
        }
        if let Some(v) = &self.explicit_val {
            write!(f, ", explicitVal = {v}")?;
        }
        if let Some(v) = &self.implicit_val {
            write!(f, ", implicitVal = {v}")?;
        }
        f.write_str(" }>")
    }
}

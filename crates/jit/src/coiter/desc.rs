//! Co-iteration kernel descriptions: each operand as its levels (kind, ordered / unique)
//! and index widths, C's layout, the operation, the phase and the instruction set, with a
//! one-line text form that parses back to the same description:
//!
//! ```text
//! ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill
//! ewise intersection mul coo:soa.p64.c16 csc.p32.c32 -> csc.c16 f32 avx512 count
//! ```
//!
//! An operand's name (`csr`, `csc`, `dcsr`, `dcsc`, `coo`, `coo:soa`, `vec`) is only how
//! its levels are spelled: the generator reads [`Operand::outer`] and [`Operand::inner`],
//! never the name, so CSR x DCSR, COO x CSC and every other pairing are one description
//! each and no generator of their own. C's coordinate width is printed only where it is
//! not the wider of the operands' (`csr.c16`). The description is the kernel cache's key.

use std::fmt;
use std::str::FromStr;

use sptk_tensor::IndexWidth;

use crate::desc::{Isa, Real};
use crate::ewise::EwiseOp;
use crate::KernelError;

/// What kind of level, as a cursor walks it (`docs/ENCODING.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelKind {
    /// Every coordinate below the level size; coordinate = position, located in O(1).
    Dense,
    /// A coordinate array (and, below a parent, a position range per parent position).
    Compressed,
    /// One coordinate per parent entry (the tail of COO).
    Singleton,
}

/// One level: its kind and whether its coordinates are ordered and unique under each parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// The kind.
    pub kind: LevelKind,
    /// Coordinates ascend under each parent.
    pub ordered: bool,
    /// No coordinate repeats under a parent.
    pub unique: bool,
}

impl Level {
    /// An ordered, unique level of `kind`.
    pub const fn plain(kind: LevelKind) -> Level {
        Level {
            kind,
            ordered: true,
            unique: true,
        }
    }
}

/// One sparse operand as the kernel reads it: outer level (a vector's virtual single row
/// is a dense outer level of size 1), inner level, widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    /// The outer level: dense (CSR, CSC, a vector), compressed (DCSR, DCSC) or compressed
    /// nonunique (COO: each stored coordinate once per entry, its run the child's segment).
    pub outer: Level,
    /// The inner level: compressed, or singleton (COO).
    pub inner: Level,
    /// Column-major (the outer level is the column): CSC, DCSC. Only the name depends on it.
    pub col_major: bool,
    /// Rank 1 (a sparse vector): only the name depends on it.
    pub vector: bool,
    /// COO's coordinates in two arrays (SoA) rather than interleaved (AoS).
    pub soa: bool,
    /// Position width (of the inner level's positions; COO's level 0 positions).
    pub pos: IndexWidth,
    /// Coordinate width (of every coordinate array).
    pub crd: IndexWidth,
}

const NAMES: [&str; 7] = ["csr", "csc", "dcsr", "dcsc", "coo", "coo:soa", "vec"];

impl Operand {
    /// The operand spelled `name` (`csr`, `csc`, `dcsr`, `dcsc`, `coo`, `coo:soa`, `vec`)
    /// at widths `pos`, `crd`.
    pub fn named(name: &str, pos: IndexWidth, crd: IndexWidth) -> Option<Operand> {
        use LevelKind::*;
        let dense = Level::plain(Dense);
        let comp = Level::plain(Compressed);
        let single = Level::plain(Singleton);
        let coo = Level {
            unique: false,
            ..comp
        };
        let (outer, inner, col_major, vector, soa) = match name {
            "csr" => (dense, comp, false, false, false),
            "csc" => (dense, comp, true, false, false),
            "dcsr" => (comp, comp, false, false, false),
            "dcsc" => (comp, comp, true, false, false),
            "coo" => (coo, single, false, false, false),
            "coo:soa" => (coo, single, false, false, true),
            "vec" => (dense, comp, false, true, false),
            _ => return None,
        };
        Some(Operand {
            outer,
            inner,
            col_major,
            vector,
            soa,
            pos,
            crd,
        })
    }

    /// The name of the operand's levels, if they have one.
    pub fn name(&self) -> Option<&'static str> {
        NAMES
            .into_iter()
            .find(|n| Operand::named(n, self.pos, self.crd).as_ref() == Some(self))
    }

    /// True for COO's outer level: compressed, nonunique, its runs the singleton child's
    /// segments.
    pub fn runs(&self) -> bool {
        self.outer.kind == LevelKind::Compressed && !self.outer.unique
    }
}

/// The phase of an element-wise kernel: counting C's entries per outer coordinate,
/// writing them, or summing the products of the intersection (`dot`, `rowdot`: the
/// operation is `mul`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Entries per outer coordinate into `counts`; returns the chunk's total.
    Count,
    /// C's coordinates and values at the counted places; returns the entries written.
    Fill,
    /// The chunk's `sum a_ij * b_ij` in storage order, from zero, at `out_val[0]`.
    Dot,
    /// Each outer coordinate's `sum_j a_ij * b_ij`, from zero, at `out_val[row - lo]`
    /// (rows the operands do not both hold are not written).
    RowDot,
    /// SpGEMM's masked dot form: for each column `j` of a mask row, A's row against B's
    /// column `j`, the products summed from the first; C's row takes `(j, sum)` where
    /// they meet (`mask_dot.rs`).
    MaskDot,
    /// [`Phase::MaskDot`] with the products folded by `min` (`min_plus` with `add` as the
    /// operation, `min_times` with `mul`): from the first product, a NaN giving way to
    /// the other operand as `f64::min` does.
    MaskMin,
    /// [`Phase::MaskMin`] by `max` (`max_times`, `max_plus`).
    MaskMax,
    /// [`Phase::MaskDot`] on the pattern (values not read): C's row takes `(j, matches)`
    /// as an `i64` where A's row and B's column `j` meet (`plus_pair`).
    MaskCount,
    /// [`Phase::MaskCount`] with `true` (a byte 1) as C's value (`lor_land`).
    MaskAny,
}

/// Every phase, in the order the text form lists them.
const PHASES: [Phase; 9] = [
    Phase::Count,
    Phase::Fill,
    Phase::Dot,
    Phase::RowDot,
    Phase::MaskDot,
    Phase::MaskMin,
    Phase::MaskMax,
    Phase::MaskCount,
    Phase::MaskAny,
];

/// How a sum phase folds a product into its sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// `sum + product`.
    Plus,
    /// `min(sum, product)` as `f64::min`: a NaN gives way to the other operand.
    Min,
    /// `max(sum, product)` as `f64::max`.
    Max,
}

impl Phase {
    /// The phase's word in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Count => "count",
            Phase::Fill => "fill",
            Phase::Dot => "dot",
            Phase::RowDot => "rowdot",
            Phase::MaskDot => "maskdot",
            Phase::MaskMin => "maskmin",
            Phase::MaskMax => "maskmax",
            Phase::MaskCount => "maskcount",
            Phase::MaskAny => "maskany",
        }
    }

    /// False for a phase on the pattern alone ([`Phase::MaskCount`], [`Phase::MaskAny`]).
    pub fn reads_values(self) -> bool {
        !matches!(self, Phase::MaskCount | Phase::MaskAny)
    }

    /// True for the sums of products (`dot`, `rowdot` and the masked dot forms).
    pub fn reduces(self) -> bool {
        !matches!(self, Phase::Count | Phase::Fill)
    }

    /// True for SpGEMM's masked dot forms (`mask_dot.rs`).
    pub fn masked(self) -> bool {
        matches!(
            self,
            Phase::MaskDot | Phase::MaskMin | Phase::MaskMax | Phase::MaskCount | Phase::MaskAny
        )
    }

    /// How the products are folded: by `min` / `max` for [`Phase::MaskMin`] /
    /// [`Phase::MaskMax`], else summed.
    pub fn fold(self) -> Fold {
        match self {
            Phase::MaskMin => Fold::Min,
            Phase::MaskMax => Fold::Max,
            _ => Fold::Plus,
        }
    }

    /// Whether `op` may form the products of this phase: `mul` for every sum, `add` too
    /// where they are folded by `min` / `max` (`min_plus`); none for count and fill.
    pub fn takes(self, op: EwiseOp) -> bool {
        match self.fold() {
            _ if !self.reduces() => true,
            Fold::Plus => op == EwiseOp::Mul,
            Fold::Min | Fold::Max => matches!(op, EwiseOp::Mul | EwiseOp::Add),
        }
    }
}

/// Everything a co-iteration kernel is generated for (its cache key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoDesc {
    /// Union (every coordinate either stores) or intersection (both store).
    pub union: bool,
    /// The operation on a pair of values.
    pub op: EwiseOp,
    /// A.
    pub a: Operand,
    /// B.
    pub b: Operand,
    /// C's coordinate width.
    pub out_crd: IndexWidth,
    /// The value type of A, B and C.
    pub value: Real,
    /// The instruction set.
    pub isa: Isa,
    /// Count or fill.
    pub phase: Phase,
}

impl CoDesc {
    /// C's default coordinate width: the wider of A's and B's.
    pub fn default_out_crd(a: &Operand, b: &Operand) -> IndexWidth {
        if a.crd.bits() >= b.crd.bits() {
            a.crd
        } else {
            b.crd
        }
    }

    /// The same description for the other phase.
    pub fn with_phase(self, phase: Phase) -> CoDesc {
        CoDesc { phase, ..self }
    }
}

fn operand_text(o: &Operand) -> String {
    let name = o.name().unwrap_or("levels?");
    format!("{name}.p{}.c{}", o.pos.bits(), o.crd.bits())
}

impl fmt::Display for CoDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let out = match (self.a.vector, self.a.col_major) {
            (true, _) => "vec",
            (_, false) => "csr",
            (_, true) => "csc",
        };
        let out_crd = if self.out_crd == CoDesc::default_out_crd(&self.a, &self.b) {
            String::new()
        } else {
            format!(".c{}", self.out_crd.bits())
        };
        write!(
            f,
            "ewise {} {} {} {} -> {out}{out_crd} {} {} {}",
            if self.union { "union" } else { "intersection" },
            self.op,
            operand_text(&self.a),
            operand_text(&self.b),
            self.value.name(),
            self.isa.name(),
            self.phase.name()
        )
    }
}

fn bad(m: String) -> KernelError {
    KernelError::Description(m)
}

fn width(text: &str, prefix: char, whole: &str) -> Result<IndexWidth, KernelError> {
    text.strip_prefix(prefix)
        .and_then(|b| b.parse::<u8>().ok())
        .filter(|b| matches!(b, 8 | 16 | 32 | 64))
        .and_then(IndexWidth::from_bits)
        .ok_or_else(|| {
            bad(format!(
                "'{text}' in '{whole}' is not a width: {prefix}8, {prefix}16, {prefix}32 or {prefix}64"
            ))
        })
}

/// `csr.p32.c32` (and `coo:soa.p64.c16`).
fn parse_operand(s: &str) -> Result<Operand, KernelError> {
    let parts: Vec<&str> = s.split('.').collect();
    let [name, p, c] = parts.as_slice() else {
        return Err(bad(format!(
            "operand '{s}' is not NAME.pW.cW (e.g. csr.p32.c32; names: {})",
            NAMES.join(", ")
        )));
    };
    let (pos, crd) = (width(p, 'p', s)?, width(c, 'c', s)?);
    Operand::named(name, pos, crd).ok_or_else(|| {
        bad(format!(
            "unknown operand '{name}' in '{s}' ({})",
            NAMES.join(", ")
        ))
    })
}

impl FromStr for CoDesc {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<CoDesc, KernelError> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let [kw, set, op, a, b, arrow, out, value, isa, phase] = words.as_slice() else {
            return Err(bad(format!(
                "'{s}' is not ten words: ewise SET OP A B -> C TYPE ISA PHASE, e.g. \
                 'ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill'"
            )));
        };
        if *kw != "ewise" || *arrow != "->" {
            return Err(bad(format!("'{s}' does not read 'ewise ... -> ...'")));
        }
        let union = match *set {
            "union" => true,
            "intersection" => false,
            other => return Err(bad(format!("'{other}' is not union or intersection"))),
        };
        let op: EwiseOp = op.parse().map_err(bad)?;
        let (a, b) = (parse_operand(a)?, parse_operand(b)?);
        if a.vector != b.vector {
            return Err(bad(format!("'{s}' pairs a vector with a matrix")));
        }
        let (out_name, out_crd) = match out.split_once('.') {
            Some((n, c)) => (n, Some(width(c, 'c', out)?)),
            None => (*out, None),
        };
        let expected = match (a.vector, a.col_major) {
            (true, _) => "vec",
            (_, false) => "csr",
            (_, true) => "csc",
        };
        if out_name != expected {
            return Err(bad(format!(
                "C is '{out_name}' but is built as {expected} (A's order) in '{s}'"
            )));
        }
        let value = match *value {
            "f32" => Real::F32,
            "f64" => Real::F64,
            other => return Err(bad(format!("unknown value type '{other}' (f32, f64)"))),
        };
        let phase = PHASES
            .into_iter()
            .find(|p| p.name() == *phase)
            .ok_or_else(|| {
                let names: Vec<&str> = PHASES.iter().map(|p| p.name()).collect();
                bad(format!("unknown phase '{phase}' ({})", names.join(", ")))
            })?;
        if phase.reduces() && (union || !phase.takes(op)) {
            return Err(bad(format!(
                "'{s}': {} folds the products of an intersection: 'ewise intersection mul' \
                 (or 'add' where folded by min or max)",
                phase.name()
            )));
        }
        Ok(CoDesc {
            union,
            op,
            out_crd: out_crd.unwrap_or_else(|| CoDesc::default_out_crd(&a, &b)),
            a,
            b,
            value,
            isa: isa.parse()?,
            phase,
        })
    }
}

/// A kernel description of either part: part 1's single-operand kernels
/// (`spmv csr f64 pos32 crd32 avx2`) or an element-wise co-iteration kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyDesc {
    /// SpMV / SpMM.
    Single(crate::Desc),
    /// Element-wise co-iteration.
    Ewise(CoDesc),
    /// SpGEMM's scatter into the dense accumulator.
    Scatter(crate::spgemm::ScatterDesc),
}

impl AnyDesc {
    /// The code of the description for its instruction set, generated on any host, as
    /// text: one instruction per line with its offset.
    ///
    /// # Errors
    /// A description no generator takes.
    pub fn disassembly(&self) -> Result<String, KernelError> {
        Ok(match self {
            AnyDesc::Single(d) => crate::generate(d)?.disassembly(),
            AnyDesc::Ewise(d) => super::disassemble(&super::generate(d)?),
            AnyDesc::Scatter(d) => super::disassemble(&crate::spgemm::generate(d)?),
        })
    }
}

impl FromStr for AnyDesc {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<AnyDesc, KernelError> {
        let first = s.split_whitespace().next();
        if first == Some("ewise") {
            s.parse().map(AnyDesc::Ewise)
        } else if first == Some("spgemm") {
            s.parse().map(AnyDesc::Scatter)
        } else {
            s.parse().map(AnyDesc::Single)
        }
    }
}

impl fmt::Display for AnyDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyDesc::Single(d) => d.fmt(f),
            AnyDesc::Ewise(d) => d.fmt(f),
            AnyDesc::Scatter(d) => d.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for text in [
            "ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill",
            "ewise intersection mul coo:soa.p64.c16 csc.p32.c32 -> csr f32 avx512 count",
            "ewise intersection min dcsc.p8.c8 csc.p16.c16 -> csc.c8 f64 avx2 count",
            "ewise union sub vec.p64.c64 vec.p32.c8 -> vec f32 avx2 fill",
            "ewise union max coo.p64.c32 dcsr.p32.c32 -> csr.c64 f64 scalar fill",
            "ewise intersection mul csr.p32.c32 dcsr.p64.c16 -> csr f64 avx512 dot",
            "ewise intersection mul coo.p64.c32 csr.p32.c32 -> csr f32 avx2 rowdot",
            "ewise intersection mul csr.p64.c32 csr.p64.c32 -> csr f64 avx512 maskdot",
            "ewise intersection mul csr.p64.c64 csr.p64.c64 -> csr f64 avx2 maskcount",
            "ewise intersection add csr.p64.c32 csr.p64.c32 -> csr f32 avx512 maskmin",
            "ewise intersection mul csr.p64.c64 csr.p64.c64 -> csr f64 avx2 maskmax",
            "ewise intersection mul csr.p64.c32 csr.p64.c32 -> csr f64 avx512 maskany",
        ] {
            let d: CoDesc = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
            assert_eq!(text.parse::<AnyDesc>().unwrap(), AnyDesc::Ewise(d));
        }
        // Part 1's text keeps parsing, through AnyDesc too.
        let part1 = "spmv csr f64 pos32 crd32 avx512";
        let d: crate::Desc = part1.parse().unwrap();
        assert_eq!(part1.parse::<AnyDesc>().unwrap(), AnyDesc::Single(d));
        assert_eq!(AnyDesc::Single(d).to_string(), part1);
        // SpGEMM's scatter too, and every kind prints its code.
        let scatter = "spgemm scatter max_times f32 c64 complement avx512";
        let any: AnyDesc = scatter.parse().unwrap();
        assert_eq!(any.to_string(), scatter);
        for text in [
            part1,
            scatter,
            "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
            "ewise intersection mul csr.p32.c32 csr.p32.c32 -> csr f64 avx512 rowdot",
            "ewise intersection mul csr.p64.c64 csr.p64.c64 -> csr f32 avx2 maskdot",
        ] {
            let listing = text.parse::<AnyDesc>().unwrap().disassembly().unwrap();
            assert!(
                listing.lines().count() > 10 && listing.contains("ret"),
                "{text}"
            );
        }
    }

    #[test]
    fn names_are_levels() {
        let w = IndexWidth::W32;
        let csr = Operand::named("csr", w, w).unwrap();
        let csc = Operand::named("csc", w, w).unwrap();
        assert_eq!((csr.outer, csr.inner), (csc.outer, csc.inner));
        let coo = Operand::named("coo", w, w).unwrap();
        assert!(coo.runs() && !csr.runs());
        assert_eq!(coo.inner.kind, LevelKind::Singleton);
        for n in NAMES {
            assert_eq!(Operand::named(n, w, w).unwrap().name(), Some(n));
        }
    }

    #[test]
    fn refusals_name_the_word() {
        for (bad, says) in [
            (
                "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx2",
                "ten words",
            ),
            (
                "ewise both add csr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
                "'both'",
            ),
            (
                "ewise union mul csr.p32.c32 csr.p32.c32 -> csr f64 avx2 dot",
                "intersection mul",
            ),
            (
                "ewise intersection add csr.p32.c32 csr.p32.c32 -> csr f64 avx2 rowdot",
                "intersection mul",
            ),
            (
                "ewise intersection add csr.p64.c32 csr.p64.c32 -> csr f64 avx2 maskdot",
                "intersection mul",
            ),
            (
                "ewise intersection sub csr.p64.c32 csr.p64.c32 -> csr f64 avx2 maskmin",
                "'add' where folded",
            ),
            (
                "ewise intersection add csr.p64.c32 csr.p64.c32 -> csr f64 avx2 maskany",
                "intersection mul",
            ),
            (
                "ewise intersection mul csr.p32.c32 csr.p32.c32 -> csr f64 avx2 sum",
                "'sum'",
            ),
            (
                "ewise union pow csr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
                "pow",
            ),
            (
                "ewise union add bsr.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
                "'bsr'",
            ),
            (
                "ewise union add csr.p12.c32 csr.p32.c32 -> csr f64 avx2 fill",
                "'p12'",
            ),
            (
                "ewise union add csr.p32 csr.p32.c32 -> csr f64 avx2 fill",
                "NAME.pW.cW",
            ),
            (
                "ewise union add vec.p32.c32 csr.p32.c32 -> csr f64 avx2 fill",
                "vector",
            ),
            (
                "ewise union add csr.p32.c32 csr.p32.c32 -> csc f64 avx2 fill",
                "'csc'",
            ),
            (
                "ewise union add csr.p32.c32 csr.p32.c32 -> csr i32 avx2 fill",
                "'i32'",
            ),
            (
                "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 mmx fill",
                "'mmx'",
            ),
            (
                "ewise union add csr.p32.c32 csr.p32.c32 -> csr f64 avx2 both",
                "'both'",
            ),
            (
                "ewise union add csr.p32.c32 csr.p32.c32 => csr f64 avx2 fill",
                "->",
            ),
        ] {
            let err = bad.parse::<CoDesc>().unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}

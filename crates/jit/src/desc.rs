//! Kernel descriptions: what a generated kernel is specialized for, and their one-line
//! text form (`spmv csr f64 pos32 crd32 avx512`).

use std::fmt;
use std::str::FromStr;

use sptk_encoding::{self as enc, Encoding, LevelExpr, LevelFormat};
use sptk_tensor::{IndexWidth, Tensor, ValueType};

use crate::KernelError;

/// The operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `y = alpha A x + beta y`.
    Spmv,
    /// `y = alpha A^T x + beta y`.
    SpmvT,
    /// `Y = alpha A X + beta Y`, X with k columns.
    Spmm,
}

/// The sparse operand's layout, as far as kernels care: the encoding up to its widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `(i, j) -> (i : dense, j : compressed)`.
    Csr,
    /// `(i, j) -> (j : dense, i : compressed)`.
    Csc,
    /// `(i, j) -> (i : compressed, j : compressed)`.
    Dcsr,
    /// `(i, j) -> (j : compressed, i : compressed)`.
    Dcsc,
    /// Sorted COO, coordinates interleaved (array of structures).
    Coo,
    /// Sorted COO, one coordinate array per dimension (structure of arrays).
    CooSoa,
    /// Row blocks of `r x c`.
    Bsr(u32, u32),
    /// Column blocks of `r x c`.
    Bsc(u32, u32),
    /// ELLPACK with `k` slots per row.
    Ell(u32),
    /// `n` of every `m` columns stored (2:4 and the like).
    Nm(u32, u32),
}

impl Format {
    /// The format of a rank-2 encoding, ignoring its widths; `None` if kernels have no
    /// name for it.
    pub fn of(e: &Encoding) -> Option<Format> {
        if e.dims.len() != 2 {
            return None;
        }
        let mut candidates = vec![
            (Format::Csr, enc::csr()),
            (Format::Csc, enc::csc()),
            (Format::Dcsr, enc::dcsr()),
            (Format::Dcsc, enc::dcsc()),
            (Format::Coo, enc::coo(2, false)),
            (Format::CooSoa, enc::coo(2, true)),
        ];
        let small = |x: u64| u32::try_from(x).ok();
        match e.levels.as_slice() {
            [_, _, a, b] => {
                if let (LevelExpr::Mod(_, r), LevelExpr::Mod(_, c)) = (&a.expr, &b.expr) {
                    if let (Some(r), Some(c)) = (small(*r), small(*c)) {
                        candidates.push((Format::Bsr(r, c), enc::bsr(r.into(), c.into())));
                        candidates.push((Format::Bsc(r, c), enc::bsc(r.into(), c.into())));
                    }
                }
            }
            [a, _, _] => {
                if let LevelExpr::Ell { k, .. } = a.expr {
                    if let Some(k) = small(k) {
                        candidates.push((Format::Ell(k), enc::ell(k.into())));
                    }
                }
            }
            _ => {}
        }
        if let Some(LevelFormat::Structured { n, m }) = e.levels.last().map(|l| l.format) {
            candidates.push((Format::Nm(n, m), enc::structured(n, m, 2)));
        }
        candidates
            .into_iter()
            .find(|(_, c)| c.levels == e.levels)
            .map(|(f, _)| f)
    }

    /// True for the formats whose stored zeros may be padding (blocks, ELL, n:m).
    pub fn padded(self) -> bool {
        matches!(
            self,
            Format::Bsr(..) | Format::Bsc(..) | Format::Ell(_) | Format::Nm(..)
        )
    }
}

/// An instruction set generated code is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// x86-64 scalar SSE2 (every x86-64 CPU).
    Scalar,
    /// AVX2 with FMA, F16C, BMI1, BMI2, POPCNT and LZCNT ([`Isa::features`]).
    Avx2,
    /// AVX-512 F, VL, DQ and BW, with AVX2's extensions ([`Isa::features`]).
    Avx512,
    /// AArch64 with Advanced SIMD (NEON, 128-bit vectors): every AArch64 CPU that runs
    /// Linux. Generated on any host; run natively only on AArch64, and in the tests under
    /// user-mode emulation (`qemu-aarch64`).
    Neon,
}

#[cfg(test)]
impl Isa {
    /// AVX2 and AVX-512 where this CPU runs them, for the in-crate tests of generated code;
    /// one that `REQUIRE_ISA` (as `.ci/run` sets it) names but this CPU lacks fails the
    /// test instead of being skipped.
    pub(crate) fn tested() -> Vec<Isa> {
        [Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|i| sptk_testkit::isa_available(i.name(), i.available(), "generated code"))
            .collect()
    }
}

impl Isa {
    /// The x86-64 instruction sets, weakest first: the ones the x86-64 kernels are
    /// generated for in every form (every operation and format).
    pub const ALL: [Isa; 3] = [Isa::Scalar, Isa::Avx2, Isa::Avx512];

    /// Every instruction set: the x86-64 ones, then AArch64's.
    pub const EVERY: [Isa; 4] = [Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon];

    /// True for the x86-64 instruction sets.
    pub fn is_x86(self) -> bool {
        self != Isa::Neon
    }

    /// The best instruction set this CPU runs, or `None` off x86-64 and AArch64.
    pub fn best() -> Option<Isa> {
        Isa::EVERY.into_iter().rev().find(|i| i.available())
    }

    /// The name in descriptions and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }
}

impl FromStr for Isa {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Isa, KernelError> {
        Isa::EVERY
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| {
                KernelError::Description(format!(
                    "unknown instruction set '{s}' (scalar, avx2, avx512, neon)"
                ))
            })
    }
}

/// The value types kernels compute in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Real {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl Real {
    /// The name (`f32`, `f64`).
    pub fn name(self) -> &'static str {
        match self {
            Real::F32 => "f32",
            Real::F64 => "f64",
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Real::F32 => 4,
            Real::F64 => 8,
        }
    }

    /// The kernel type of a tensor value type, if it is one.
    pub fn of(t: ValueType) -> Option<Real> {
        match t {
            ValueType::F32 => Some(Real::F32),
            ValueType::F64 => Some(Real::F64),
            _ => None,
        }
    }
}

/// A 16-bit float type the sparse operand's values are stored in, widened to `f32` as they
/// are loaded (the kernel computes in `f32`; x and y are `f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Half {
    /// IEEE half precision (F16C `vcvtph2ps`).
    F16,
    /// bfloat16 (the upper half of an `f32`: a 16-bit shift).
    Bf16,
}

impl Half {
    /// The name (`f16`, `bf16`).
    pub fn name(self) -> &'static str {
        match self {
            Half::F16 => "f16",
            Half::Bf16 => "bf16",
        }
    }
}

/// Everything a generated kernel is specialized for; the sizes are not in it (they are
/// arguments, checked at every call).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Desc {
    /// The operation.
    pub op: Op,
    /// The sparse operand's format.
    pub format: Format,
    /// The type the kernel computes in, and the value type of every operand but A's
    /// values where `half` says otherwise.
    pub value: Real,
    /// A's values stored as `f16` / `bf16` (`value` is then `f32`), or `None`.
    pub half: Option<Half>,
    /// The width of the positions.
    pub pos: IndexWidth,
    /// The width of the coordinates.
    pub crd: IndexWidth,
    /// The instruction set.
    pub isa: Isa,
    /// True if 32-bit coordinates may be 2^31 or more (a dimension is larger than 2^31;
    /// text form: a seventh word `dims>2^31`). A gather's 32-bit index lanes are signed, so
    /// such coordinates are widened (or biased) before they index one; below 2^31 they
    /// index it as they are, 8 lanes per instruction. Always false for other widths: 8- and
    /// 16-bit coordinates are below 2^31, 64-bit ones index qword lanes.
    pub wide_dims: bool,
}

/// The largest dimension whose 32-bit coordinates are all valid signed gather indices.
const SIGNED_DIM: u64 = 1 << 31;

impl Desc {
    /// The description of `op` on `a` for `isa`.
    ///
    /// # Errors
    /// `a` is not of rank 2, has an encoding no kernel handles, or values other than f32
    /// and f64.
    pub fn for_tensor(op: Op, a: &Tensor, isa: Isa) -> Result<Desc, KernelError> {
        let e = a.encoding();
        let format = Format::of(e).ok_or_else(|| {
            KernelError::Unsupported(format!(
                "no kernel for the encoding {e}: kernels take CSR, CSC, DCSR, DCSC, COO, \
                 COO:soa, BSR, BSC, ELL and n:m matrices"
            ))
        })?;
        let half = match a.value_type() {
            ValueType::F16 => Some(Half::F16),
            ValueType::BF16 => Some(Half::Bf16),
            _ => None,
        };
        let value = match half {
            Some(_) => Real::F32,
            None => Real::of(a.value_type()).ok_or_else(|| KernelError::ValueType {
                operand: "A",
                expected: "f16, bf16, f32 or f64",
                found: a.value_type().name().into(),
            })?,
        };
        let width = |bits: u8| IndexWidth::from_bits(bits).unwrap_or(IndexWidth::W64);
        let crd = width(e.crd_width);
        Ok(Desc {
            op,
            format,
            value,
            half,
            pos: width(e.pos_width),
            crd,
            isa,
            wide_dims: crd == IndexWidth::W32 && a.dim_sizes().iter().any(|&n| n > SIGNED_DIM),
        })
    }

    /// True if a kernel for `self` computes what one for `wanted` would: the same
    /// description, or one for dimensions past 2^31 (`wide_dims`) run on smaller ones.
    pub fn runs(&self, wanted: &Desc) -> bool {
        self == wanted
            || (self.wide_dims
                && *self
                    == Desc {
                        wide_dims: true,
                        ..*wanted
                    })
    }
}

impl Op {
    /// The product `A x` (`transpose`: `A^T x`), or `A X` with `matrices`.
    pub fn product(matrices: bool, transpose: bool) -> Op {
        match (matrices, transpose) {
            (true, _) => Op::Spmm,
            (false, true) => Op::SpmvT,
            (false, false) => Op::Spmv,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Spmv => "spmv",
            Op::SpmvT => "spmvt",
            Op::Spmm => "spmm",
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Format::Csr => f.write_str("csr"),
            Format::Csc => f.write_str("csc"),
            Format::Dcsr => f.write_str("dcsr"),
            Format::Dcsc => f.write_str("dcsc"),
            Format::Coo => f.write_str("coo"),
            Format::CooSoa => f.write_str("coo:soa"),
            Format::Bsr(r, c) => write!(f, "bsr{r}x{c}"),
            Format::Bsc(r, c) => write!(f, "bsc{r}x{c}"),
            Format::Ell(k) => write!(f, "ell{k}"),
            Format::Nm(n, m) => write!(f, "{n}:{m}"),
        }
    }
}

impl fmt::Display for Desc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} pos{} crd{} {}",
            self.op,
            self.format,
            self.half.map_or(self.value.name(), Half::name),
            self.pos.bits(),
            self.crd.bits(),
            self.isa.name()
        )?;
        if self.wide_dims {
            f.write_str(" dims>2^31")?;
        }
        Ok(())
    }
}

impl FromStr for Format {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Format, KernelError> {
        let bad = || {
            KernelError::Description(format!(
                "unknown format '{s}' (csr, csc, dcsr, dcsc, coo, coo:soa, bsrRxC, bscRxC, ellK, N:M)"
            ))
        };
        let pair = |t: &str, sep: char| -> Option<(u32, u32)> {
            let (a, b) = t.split_once(sep)?;
            let (a, b) = (a.parse().ok()?, b.parse().ok()?);
            (a > 0 && b > 0).then_some((a, b))
        };
        Ok(match s {
            "csr" => Format::Csr,
            "csc" => Format::Csc,
            "dcsr" => Format::Dcsr,
            "dcsc" => Format::Dcsc,
            "coo" => Format::Coo,
            "coo:soa" => Format::CooSoa,
            _ => {
                if let Some(t) = s.strip_prefix("bsr") {
                    pair(t, 'x')
                        .map(|(r, c)| Format::Bsr(r, c))
                        .ok_or_else(bad)?
                } else if let Some(t) = s.strip_prefix("bsc") {
                    pair(t, 'x')
                        .map(|(r, c)| Format::Bsc(r, c))
                        .ok_or_else(bad)?
                } else if let Some(t) = s.strip_prefix("ell") {
                    t.parse()
                        .ok()
                        .filter(|&k| k > 0)
                        .map(Format::Ell)
                        .ok_or_else(bad)?
                } else {
                    pair(s, ':')
                        .filter(|(n, m)| n < m)
                        .map(|(n, m)| Format::Nm(n, m))
                        .ok_or_else(bad)?
                }
            }
        })
    }
}

impl FromStr for Desc {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Desc, KernelError> {
        let mut words: Vec<&str> = s.split_whitespace().collect();
        let wide_dims = words.len() == 7 && words.last() == Some(&"dims>2^31");
        if wide_dims {
            words.pop();
        }
        let [op, format, value, pos, crd, isa] = words.as_slice() else {
            return Err(KernelError::Description(format!(
                "'{s}' is not six words (and `dims>2^31`): OP FORMAT TYPE posW crdW ISA, e.g. \
                 'spmv csr f64 pos32 crd32 avx512'"
            )));
        };
        let op = match *op {
            "spmv" => Op::Spmv,
            "spmvt" => Op::SpmvT,
            "spmm" => Op::Spmm,
            other => {
                return Err(KernelError::Description(format!(
                    "unknown operation '{other}' (spmv, spmvt, spmm)"
                )))
            }
        };
        let (value, half) = match *value {
            "f32" => (Real::F32, None),
            "f64" => (Real::F64, None),
            "f16" => (Real::F32, Some(Half::F16)),
            "bf16" => (Real::F32, Some(Half::Bf16)),
            other => {
                return Err(KernelError::Description(format!(
                    "unknown value type '{other}' (f32, f64, f16, bf16)"
                )))
            }
        };
        let width = |w: &str, prefix: &str| {
            w.strip_prefix(prefix)
                .and_then(|b| b.parse::<u8>().ok())
                .filter(|&b| matches!(b, 8 | 16 | 32 | 64) || (prefix == "crd" && b == 2))
                .and_then(IndexWidth::from_bits)
                .ok_or_else(|| {
                    KernelError::Description(format!(
                        "'{w}' is not a width: {prefix}8, {prefix}16, {prefix}32 or {prefix}64"
                    ))
                })
        };
        let crd = width(crd, "crd")?;
        if wide_dims && crd != IndexWidth::W32 {
            return Err(KernelError::Description(format!(
                "'{s}': `dims>2^31` is for 32-bit coordinates (crd32); other widths have one form"
            )));
        }
        Ok(Desc {
            op,
            format: format.parse()?,
            value,
            half,
            pos: width(pos, "pos")?,
            crd,
            isa: isa.parse()?,
            wide_dims,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_kernel_format() {
        let cases = [
            (enc::csr(), Format::Csr),
            (enc::csc(), Format::Csc),
            (enc::dcsr(), Format::Dcsr),
            (enc::dcsc(), Format::Dcsc),
            (enc::coo(2, false), Format::Coo),
            (enc::coo(2, true), Format::CooSoa),
            (enc::bsr(4, 2), Format::Bsr(4, 2)),
            (enc::bsc(3, 3), Format::Bsc(3, 3)),
            (enc::ell(5), Format::Ell(5)),
            (enc::structured(2, 4, 2), Format::Nm(2, 4)),
        ];
        for (mut e, want) in cases {
            e.pos_width = 32;
            e.crd_width = 16;
            assert_eq!(Format::of(&e), Some(want), "{e}");
        }
        assert_eq!(Format::of(&enc::csf(3)), None);
        assert_eq!(Format::of(&enc::dense(2)), None);
    }

    /// A CSR matrix of `dims` with one entry, at 32-bit coordinates.
    fn csr32(dims: Vec<u64>) -> Tensor {
        let entries = sptk_tensor::Entries::from_parts(
            dims,
            vec![vec![0], vec![1]],
            sptk_tensor::ValueVec::F64(vec![1.0].into()),
        )
        .unwrap();
        let target = enc::resolve_target("CSR", 2)
            .unwrap()
            .with_widths(Some(32), Some(32))
            .unwrap();
        sptk_tensor::convert(&entries, &target, &Default::default())
            .unwrap()
            .tensor
    }

    #[test]
    fn dimensions_past_2_pow_31_are_in_the_description() {
        let small = Desc::for_tensor(Op::Spmv, &csr32(vec![4, 1 << 31]), Isa::Avx512).unwrap();
        let wide = Desc::for_tensor(Op::Spmv, &csr32(vec![4, (1 << 31) + 1]), Isa::Avx512).unwrap();
        assert!(!small.wide_dims && wide.wide_dims);
        assert_eq!(small.to_string(), "spmv csr f64 pos32 crd32 avx512");
        assert_eq!(
            wide.to_string(),
            "spmv csr f64 pos32 crd32 avx512 dims>2^31"
        );
        // The kernel for wide dimensions computes the narrow ones too; not the other way.
        assert!(wide.runs(&small) && small.runs(&small) && !small.runs(&wide));
        assert!(!wide.runs(&Desc {
            isa: Isa::Avx2,
            ..small
        }));
    }

    #[test]
    fn text_form_round_trips() {
        for text in [
            "spmv csr f64 pos32 crd32 avx512",
            "spmvt csc f32 pos64 crd8 scalar",
            "spmm bsr4x2 f64 pos16 crd16 avx2",
            "spmv 2:4 f32 pos64 crd2 avx512",
            "spmv ell3 f64 pos64 crd64 scalar",
            "spmv coo:soa f64 pos64 crd32 avx2",
            "spmv 2:4 bf16 pos32 crd2 avx2",
            "spmv 2:4 f16 pos32 crd8 avx512",
            "spmv csr f64 pos32 crd32 neon",
            "spmvt coo:soa f32 pos8 crd16 neon",
            "spmv csr f64 pos64 crd32 avx512 dims>2^31",
        ] {
            let d: Desc = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
        }
        for (bad, says) in [
            ("spmv csr f64 pos32 crd32", "six words"),
            ("spmv csr i16 pos32 crd32 avx2", "'i16'"),
            ("spmv csr f64 pos12 crd32 avx2", "'pos12'"),
            ("spmv csr f64 pos2 crd32 avx2", "'pos2'"),
            ("spmv bsr0x4 f64 pos32 crd32 avx2", "'bsr0x4'"),
            ("spmv 4:2 f64 pos32 crd32 avx2", "'4:2'"),
            ("spmv csr f64 pos32 crd32 sve", "'sve'"),
            ("gemm csr f64 pos32 crd32 avx2", "'gemm'"),
            ("spmv csr f64 pos32 crd64 avx2 dims>2^31", "crd32"),
            ("spmv csr f64 pos32 crd32 avx2 dims", "six words"),
        ] {
            let err = bad.parse::<Desc>().unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}

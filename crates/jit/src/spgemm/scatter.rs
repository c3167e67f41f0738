//! Generated scatter: row `i` of A times B into the dense accumulator or the hash table,
//! the inner loops of Gustavson's form (`accumulate.rs`), as machine code per accumulator,
//! coordinate width, semiring, value type, mask filter and instruction set
//! (`scatter_emit.rs` writes it).
//!
//! For each stored `a_ik` and each stored `b_kj` of row `k` of B, the product `a_ik (x)
//! b_kj` lands in column `j`: a column whose mark is not the row's stamp is new (the
//! product is its value, the mark is set, `j` joins the touched list), else the product
//! is `(+)`-summed into it. The Rust loop branches on the mark; the generated one does not
//! (the new value and the sum are both computed and one is kept by a mask), so a product
//! costs the same whether its column is new or not and mispredicted branches go away.
//! With a mask, the row's filter bits (`accumulate::Filter`) turn a product away before
//! the accumulator is touched, as the Rust loop does; without a filter (C wider than the
//! filter takes) masked rows stay in Rust.
//!
//! Into the hash table (`accumulate::Hash`: open addressing, linear probing, at most half
//! full) the product's column is hashed as the Rust loop hashes it, the probe ends at the
//! column's slot or an empty one, and an empty slot takes the column (its slot joins the
//! used list, the new columns so far); the value is updated as above, at the slot. The
//! filter decides the mask, so the table holds no mask columns beforehand.
//!
//! The description's text form, which `sparse-run asm` prints code for on any host:
//!
//! ```text
//! spgemm scatter plus_times f64 c32 unmasked avx512
//! spgemm scatter plus_pair i64 c64 mask avx2
//! spgemm hash min_plus f32 c32 complement avx512
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use sptk_tensor::{IndexWidth, ValueType};

use super::semiring::Semiring;
use crate::code::{Cache, Code};
use crate::desc::Isa;
use crate::KernelError;

/// Which products a row's filter lets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filtered {
    /// No mask: every product.
    Unmasked,
    /// `C<M>`: products in the mask's columns of the row.
    Mask,
    /// `C<!M>`: products in the other columns.
    Complement,
}

impl Filtered {
    fn name(self) -> &'static str {
        match self {
            Filtered::Unmasked => "unmasked",
            Filtered::Mask => "mask",
            Filtered::Complement => "complement",
        }
    }
}

/// The accumulator a scatter kernel writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// A mark and a value per column of C (`scatter`).
    Dense,
    /// An open-addressing table of the row's columns (`hash`).
    Hash,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Dense => "scatter",
            Table::Hash => "hash",
        }
    }
}

/// A scatter kernel: what it computes and for which instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterDesc {
    /// The accumulator.
    pub table: Table,
    /// The semiring.
    pub semiring: Semiring,
    /// C's value type: f32 / f64 for the valued semirings (the operands' too), i64 for
    /// `plus_pair`, bool for `lor_land`.
    pub value: ValueType,
    /// The operands' coordinate width (32 or 64 bits); positions are 64-bit.
    pub crd: IndexWidth,
    /// The mask filter.
    pub filter: Filtered,
    /// AVX2 or AVX-512.
    pub isa: Isa,
}

impl ScatterDesc {
    /// The one value type `semiring` gives with operands of `value` (`None`: it takes no
    /// such operands).
    pub(crate) fn checked(self) -> Result<ScatterDesc, KernelError> {
        let ok_value = match self.semiring {
            Semiring::PlusPair => self.value == ValueType::I64,
            Semiring::LorLand => self.value == ValueType::Bool,
            _ => matches!(self.value, ValueType::F32 | ValueType::F64),
        };
        if !ok_value {
            return Err(KernelError::Description(format!(
                "{} gives {} values, not {} (plus_pair: i64, lor_land: bool, the others \
                 f32 or f64)",
                self.semiring,
                match self.semiring {
                    Semiring::PlusPair => "i64",
                    Semiring::LorLand => "bool",
                    _ => "f32 or f64",
                },
                self.value.name()
            )));
        }
        if !matches!(self.crd, IndexWidth::W32 | IndexWidth::W64) {
            return Err(KernelError::Description(format!(
                "coordinates of {} bits: the product reads 32 or 64",
                self.crd.bits()
            )));
        }
        if !matches!(self.isa, Isa::Avx2 | Isa::Avx512) {
            return Err(KernelError::Unsupported(format!(
                "no {} scatter kernel: AVX2 and AVX-512 only (the Rust loops run elsewhere)",
                self.isa.name()
            )));
        }
        Ok(self)
    }
}

impl fmt::Display for ScatterDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "spgemm {} {} {} c{} {} {}",
            self.table.name(),
            self.semiring,
            self.value.name(),
            self.crd.bits(),
            self.filter.name(),
            self.isa.name()
        )
    }
}

impl FromStr for ScatterDesc {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<ScatterDesc, KernelError> {
        let bad = |m: String| KernelError::Description(m);
        let words: Vec<&str> = s.split_whitespace().collect();
        let ["spgemm", table, ring, value, crd, filter, isa] = words.as_slice() else {
            return Err(bad(format!(
                "'{s}' does not read 'spgemm scatter|hash SEMIRING TYPE cBITS FILTER ISA', \
                 e.g. 'spgemm scatter plus_times f64 c32 unmasked avx512'"
            )));
        };
        let table = [Table::Dense, Table::Hash]
            .into_iter()
            .find(|t| t.name() == *table)
            .ok_or_else(|| bad(format!("'{table}' is not scatter or hash")))?;
        let semiring: Semiring = ring.parse().map_err(bad)?;
        let value = match *value {
            "f32" => ValueType::F32,
            "f64" => ValueType::F64,
            "i64" => ValueType::I64,
            "bool" => ValueType::Bool,
            other => {
                return Err(bad(format!(
                    "unknown value type '{other}' (f32, f64, i64, bool)"
                )))
            }
        };
        let crd = match *crd {
            "c32" => IndexWidth::W32,
            "c64" => IndexWidth::W64,
            other => return Err(bad(format!("'{other}' is not c32 or c64"))),
        };
        let filter = [Filtered::Unmasked, Filtered::Mask, Filtered::Complement]
            .into_iter()
            .find(|f| f.name() == *filter)
            .ok_or_else(|| bad(format!("'{filter}' is not unmasked, mask or complement")))?;
        ScatterDesc {
            table,
            semiring,
            value,
            crd,
            filter,
            isa: isa.parse()?,
        }
        .checked()
    }
}

/// The machine code of `desc`, on any host (nothing is mapped or run).
///
/// # Errors
/// A description no generator takes (see [`ScatterDesc`]).
pub fn generate(desc: &ScatterDesc) -> Result<Vec<u8>, KernelError> {
    super::scatter_emit::generate(&desc.checked()?)
}

/// What generated scatter code reads and writes (System V: `rdi` holds its address);
/// field offsets are `scatter_emit::arg`, checked below.
#[repr(C)]
pub(crate) struct ScatterArgs {
    /// A's row `i`: coordinates (`k`) and values (null on the pattern), `a_len` of each.
    pub a_crd: *const u8,
    pub a_val: *const u8,
    pub a_len: u64,
    /// B's positions (`b_rows + 1`), coordinates and values (`b_n` of each; values null
    /// on the pattern).
    pub b_pos: *const u64,
    pub b_crd: *const u8,
    pub b_val: *const u8,
    pub b_rows: u64,
    pub b_n: u64,
    /// The accumulator's marks and values, `cols` of each (and the filter's bits, `cols`
    /// bits at least, null unmasked).
    pub marks: *mut u32,
    pub values: *mut u8,
    pub cols: u64,
    /// The row's stamp: a mark of `hit` is a column already in the row.
    pub hit: u64,
    pub filter: *const u64,
    /// The touched list: room for `cap` columns, at the coordinates' width (the hash
    /// table's used list: `cap` slots, 64-bit).
    pub touched: *mut u8,
    pub cap: u64,
    /// The hash table's keys (`wrap + 1` of them, empty `u64::MAX`), and the shift of its
    /// hash (`64 - log2(wrap + 1)`); null and 0 for the dense accumulator. `values` then
    /// holds `wrap + 1` values and `marks` is not read.
    pub keys: *mut u64,
    pub wrap: u64,
    pub shift: u64,
}

const _: () = {
    use super::scatter_emit::arg;
    use std::mem::offset_of;
    assert!(offset_of!(ScatterArgs, a_crd) == arg::A_CRD as usize);
    assert!(offset_of!(ScatterArgs, a_val) == arg::A_VAL as usize);
    assert!(offset_of!(ScatterArgs, a_len) == arg::A_LEN as usize);
    assert!(offset_of!(ScatterArgs, b_pos) == arg::B_POS as usize);
    assert!(offset_of!(ScatterArgs, b_crd) == arg::B_CRD as usize);
    assert!(offset_of!(ScatterArgs, b_val) == arg::B_VAL as usize);
    assert!(offset_of!(ScatterArgs, b_rows) == arg::B_ROWS as usize);
    assert!(offset_of!(ScatterArgs, b_n) == arg::B_N as usize);
    assert!(offset_of!(ScatterArgs, marks) == arg::MARKS as usize);
    assert!(offset_of!(ScatterArgs, values) == arg::VALUES as usize);
    assert!(offset_of!(ScatterArgs, cols) == arg::COLS as usize);
    assert!(offset_of!(ScatterArgs, hit) == arg::HIT as usize);
    assert!(offset_of!(ScatterArgs, filter) == arg::FILTER as usize);
    assert!(offset_of!(ScatterArgs, touched) == arg::TOUCHED as usize);
    assert!(offset_of!(ScatterArgs, cap) == arg::CAP as usize);
    assert!(offset_of!(ScatterArgs, keys) == arg::KEYS as usize);
    assert!(offset_of!(ScatterArgs, wrap) == arg::WRAP as usize);
    assert!(offset_of!(ScatterArgs, shift) == arg::SHIFT as usize);
};

/// A scatter kernel mapped executable.
pub struct ScatterKernel {
    desc: ScatterDesc,
    code: Code,
}

/// The signature of generated scatter code: the new columns of the row, `u64::MAX` where
/// the touched list's room would not hold them.
#[cfg(target_arch = "x86_64")]
type Entry = unsafe extern "sysv64" fn(*const ScatterArgs) -> u64;

impl ScatterKernel {
    /// The description.
    pub fn desc(&self) -> &ScatterDesc {
        &self.desc
    }

    /// The machine code.
    pub fn code(&self) -> &[u8] {
        self.code.bytes()
    }

    /// Runs the code on `args`.
    ///
    /// # Safety
    /// Every pointer of `args` addresses the elements its field's text gives (`a_len`
    /// coordinates and values from `a_crd` / `a_val`, and so on), `values` of this
    /// kernel's value type, the coordinates of its width; `cols` is at most the marks',
    /// values' and filter bits' lengths. The code reads nothing else: it skips a `k` of
    /// `b_rows` or more and a `j` of `cols` or more, clamps B's positions to `b_n`, and
    /// refuses a row before its touched list would pass `cap`.
    #[cfg(target_arch = "x86_64")]
    pub(crate) unsafe fn call(&self, args: &ScatterArgs) -> u64 {
        // SAFETY: the code was generated for this description and mapped executable
        // (`kernel`, which refuses an ISA this CPU lacks); it follows System V and reads
        // only what the caller's contract above names.
        unsafe {
            let entry: Entry = std::mem::transmute(self.code.entry());
            entry(args)
        }
    }
}

/// The kernel of `desc`, generated once per process.
///
/// # Errors
/// The instruction set is not on this CPU, the description is refused, or the code pages
/// cannot be mapped.
pub fn kernel(desc: &ScatterDesc) -> Result<Arc<ScatterKernel>, KernelError> {
    static CACHE: Cache<ScatterDesc, ScatterKernel> = Cache::new();
    CACHE.get(desc, |d| {
        let code = crate::code::map_generated(d.isa, d, || generate(d))?;
        Ok(ScatterKernel { desc: *d, code })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spgemm::accumulate::{Dense, Filter, Hash, MaskMode, Out, Product};
    use crate::spgemm::operand::{Coord, Rows};
    use crate::spgemm::semiring::{LorLand, MaxTimes, MinPlus, PlusPair, PlusTimes, Ring};
    use sptk_tensor::Value;

    /// One row as a run left it: its count, columns and values (as text: every NaN alike).
    type RowSeen = (usize, Vec<u64>, Vec<String>);

    /// A small generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    /// Rows of a `rows x cols` matrix, each a random ascending set of columns.
    fn lists<C: Coord>(rng: &mut Rng, rows: usize, cols: u64, per: u64) -> (Vec<u64>, Vec<C>) {
        let mut pos = vec![0u64];
        let mut crd = Vec::new();
        for _ in 0..rows {
            let mut row: Vec<u64> = (0..rng.below(per + 1)).map(|_| rng.below(cols)).collect();
            row.sort_unstable();
            row.dedup();
            crd.extend(row.iter().map(|&j| C::from_u64_unchecked(j)));
            pos.push(crd.len() as u64);
        }
        (pos, crd)
    }

    /// Dense rows of random products, by the Rust loop and by generated code on `isa`:
    /// the same count, columns and value bits, filled and counted, under each mask mode.
    fn rows_match<C: Coord, R: Ring>(isa: Isa, value: fn(u64) -> R::In) {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (cols, b_rows) = (300usize, 40usize);
        let (b_pos, b_crd) = lists::<C>(&mut rng, b_rows, cols as u64, 40);
        let b_val: Vec<R::In> = (0..b_crd.len()).map(|_| value(rng.below(8))).collect();
        let (a_pos, a_crd) = lists::<C>(&mut rng, 30, b_rows as u64, 12);
        let a_val: Vec<R::In> = (0..a_crd.len()).map(|_| value(rng.below(8))).collect();
        let (m_pos, m_crd) = lists::<C>(&mut rng, 30, cols as u64, 150);
        let units = vec![(); m_crd.len()];
        for (mode, filtered) in [
            (MaskMode::None, Filtered::Unmasked),
            (MaskMode::Keep, Filtered::Mask),
            (MaskMode::Skip, Filtered::Complement),
        ] {
            let desc = ScatterDesc {
                table: Table::Dense,
                semiring: R::SEMIRING,
                value: <R::Out as Value>::TYPE,
                crd: C::WIDTH,
                filter: filtered,
                isa,
            };
            let k = kernel(&desc).unwrap();
            let hash = kernel(&ScatterDesc {
                table: Table::Hash,
                ..desc
            })
            .unwrap();
            let product = |scatter, hash| Product::<C, R> {
                a: Rows {
                    pos: &a_pos,
                    crd: &a_crd,
                    val: &a_val,
                },
                b: Rows {
                    pos: &b_pos,
                    crd: &b_crd,
                    val: &b_val,
                },
                b_cols: None,
                mask: (mode != MaskMode::None).then_some(Rows {
                    pos: &m_pos,
                    crd: &m_crd,
                    val: &units,
                }),
                mode,
                cols,
                scatter,
                hash,
                b_longest: 40,
                mask_dot: None,
            };
            let (rust, generated) = (product(None, None), product(Some(&*k), Some(&*hash)));
            let mut runs: Vec<Vec<RowSeen>> = Vec::new();
            for (p, by_hash) in [
                (&rust, false),
                (&generated, false),
                (&rust, true),
                (&generated, true),
            ] {
                let mut dense = Dense::<C, R::Out>::new(cols).unwrap();
                let mut table = Hash::<R::Out>::default();
                let mut filter = Filter::new(cols);
                let mut rows = Vec::new();
                for i in 0..30 {
                    let (ak, _) = p.a.row(i);
                    let flops: u64 = ak
                        .iter()
                        .map(|&k| p.b.row(k.to_u64() as usize).0.len() as u64)
                        .sum();
                    let filt = if mode == MaskMode::None {
                        None
                    } else {
                        filter.as_mut()
                    };
                    let mask_len = p.mask.as_ref().map_or(0, |m| m.len(i));
                    let bound = match mode {
                        MaskMode::None => flops,
                        MaskMode::Keep => mask_len,
                        MaskMode::Skip => mask_len + flops,
                    }
                    .min(cols as u64)
                    .max(mask_len) as usize;
                    let counted = match by_hash {
                        true => table.row(p, (i, flops), bound, filt, None),
                        false => dense.row(p, (i, flops), filt, None),
                    };
                    let mut crd = vec![C::default(); counted];
                    let mut val = vec![R::Out::default(); counted];
                    let filt = if mode == MaskMode::None {
                        None
                    } else {
                        filter.as_mut()
                    };
                    let out = Out {
                        crd: &mut crd,
                        val: &mut val,
                    };
                    let filled = match by_hash {
                        true => table.row(p, (i, flops), bound, filt, Some(out)),
                        false => dense.row(p, (i, flops), filt, Some(out)),
                    };
                    assert_eq!(counted, filled, "{desc}: row {i}");
                    let crd = crd.iter().map(|c| c.to_u64()).collect();
                    let val = val.iter().map(|v| format!("{v:?}")).collect();
                    rows.push((counted, crd, val));
                }
                runs.push(rows);
            }
            for (n, run) in runs.iter().enumerate().skip(1) {
                assert_eq!(
                    runs[0], *run,
                    "{desc}: run {n} (1: generated, 2: hash, 3: both)"
                );
            }
            assert!(
                runs[0].iter().map(|r| r.0).sum::<usize>() > 30,
                "{desc}: too few entries"
            );
        }
    }

    #[test]
    fn generated_rows_match_the_rust_loop_at_both_widths() {
        let isas = Isa::tested();
        const F: [f64; 8] = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            3.0,
        ];
        for isa in isas {
            rows_match::<u32, PlusTimes<f64>>(isa, |x| F[x as usize]);
            rows_match::<u64, PlusTimes<f32>>(isa, |x| F[x as usize] as f32);
            rows_match::<u32, MinPlus<f32>>(isa, |x| F[x as usize] as f32);
            rows_match::<u64, MinPlus<f64>>(isa, |x| F[x as usize]);
            rows_match::<u64, MaxTimes<f64>>(isa, |x| F[x as usize]);
            rows_match::<u32, MaxTimes<f32>>(isa, |x| F[x as usize] as f32);
            rows_match::<u32, PlusPair>(isa, |_| ());
            rows_match::<u64, PlusPair>(isa, |_| ());
            rows_match::<u32, LorLand>(isa, |_| ());
            rows_match::<u64, LorLand>(isa, |_| ());
        }
    }

    #[test]
    fn text_round_trips_and_refusals_say_why() {
        for text in [
            "spgemm scatter plus_times f64 c32 unmasked avx512",
            "spgemm scatter min_plus f32 c64 mask avx2",
            "spgemm scatter plus_pair i64 c32 complement avx512",
            "spgemm scatter lor_land bool c64 unmasked avx2",
            "spgemm hash min_plus f32 c32 complement avx512",
            "spgemm hash plus_pair i64 c64 unmasked avx2",
        ] {
            let d: ScatterDesc = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
            assert!(!generate(&d).unwrap().is_empty());
        }
        for (bad, says) in [
            ("spgemm scatter plus_pair f64 c32 unmasked avx2", "i64"),
            ("spgemm scatter plus_times f64 c16 unmasked avx2", "c16"),
            ("spgemm scatter plus_times f64 c32 both avx2", "both"),
            ("spgemm scatter plus_times f64 c32 unmasked neon", "AVX2"),
            ("spgemm scatter plus_times f64 c32", "does not read"),
            ("spgemm heap plus_times f64 c32 unmasked avx2", "'heap'"),
        ] {
            let e = bad.parse::<ScatterDesc>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    /// Arrays no validated tensor holds: columns of C's width or more in B, a row of A
    /// naming no row of B, a row of B whose positions pass B's entries. Each array is a
    /// slice of a larger one whose ends hold a valid column (5) and value (99): a read
    /// outside would put it in C. The Rust loop reads the passing row as empty, the
    /// generated code up to B's last entry; both skip the rest.
    #[test]
    fn damaged_rows_are_skipped_inside_the_arrays() {
        let Some(&isa) = Isa::tested().last() else {
            return;
        };
        let cols = 64usize;
        // B: row 0 columns 3 and 9; row 1 columns 70 and 1000 (past C) and 63; row 2's
        // positions 5..9 pass the 6 entries.
        let b_pos = [0u64, 2, 5, 9];
        let b_crd_all = [5u32, 3, 9, 70, 1000, 63, 7, 5];
        let b_val_all = [99.0f64, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 99.0];
        let (b_crd, b_val) = (&b_crd_all[1..7], &b_val_all[1..7]);
        // A's row: k = 0, 1, 2 and 7 (no such row of B), in a larger array likewise.
        let a_crd_all = [0u32, 0, 1, 2, 7, 0];
        let a_val_all = [99.0f64, 1.0, 1.0, 1.0, 1.0, 99.0];
        let (a_crd, a_val) = (&a_crd_all[1..5], &a_val_all[1..5]);
        let desc = ScatterDesc {
            table: Table::Dense,
            semiring: Semiring::PlusTimes,
            value: ValueType::F64,
            crd: IndexWidth::W32,
            filter: Filtered::Unmasked,
            isa,
        };
        let k = kernel(&desc).unwrap();
        let mut found = Vec::new();
        for scatter in [None, Some(&*k)] {
            let p = Product::<u32, PlusTimes<f64>> {
                a: Rows {
                    pos: &[0, 4],
                    crd: a_crd,
                    val: a_val,
                },
                b: Rows {
                    pos: &b_pos,
                    crd: b_crd,
                    val: b_val,
                },
                b_cols: None,
                mask: None,
                mode: MaskMode::None,
                cols,
                scatter,
                hash: None,
                b_longest: 5,
                mask_dot: None,
            };
            let mut dense = Dense::<u32, f64>::new(cols).unwrap();
            let n = dense.row(&p, (0, 16), None, None);
            let mut crd = vec![0u32; n];
            let mut val = vec![0f64; n];
            let out = Out {
                crd: &mut crd,
                val: &mut val,
            };
            assert_eq!(dense.row(&p, (0, 16), None, Some(out)), n);
            found.push((crd, val));
        }
        assert_eq!(found[0], (vec![3, 9, 63], vec![1.0, 2.0, 5.0]));
        assert_eq!(found[1], (vec![3, 7, 9, 63], vec![1.0, 6.0, 2.0, 5.0]));
    }
}

/*!
Sparse times sparse over a semiring: `C = A (+).(x) B`, and masked `C<M> = A (+).(x) B`
(`docs/OPERATIONS.md`, "SpGEMM").

GraphBLAS semantics: only stored entries take part; `C(i, j)` exists where some `k` has
`A(i, k)` and `B(k, j)` stored (and, with a mask, where `M(i, j)` is stored, or with the
complement where it is not), and is the `(+)`-sum of `a_ik (x) b_kj` over those `k`,
summed in increasing `k` from the first product. Every form below sums in that order and
each row is computed whole by one thread, so C has the same bits for every thread count.

- [`Semiring`]: `plus_times`, `plus_pair` (i64 counts), `min_plus`, `max_times`,
  `lor_land` (bool), in `semiring.rs`.
- Operands (`operand.rs`): any sparse operand the element-wise operations accept,
  brought to CSR through the planner (B by columns too for the dot form, B's columns as
  rows for [`Options::transpose_b`]).
- The symbolic pass (`symbolic.rs`): flops per row, each row's form, chunks of rows of
  equal cost.
- The forms: Gustavson's with a stamped dense accumulator or a hash accumulator
  (`accumulate.rs`), the dot form for masks much sparser than the product (`dot.rs`).
- The numeric passes (`numeric.rs`): count each row, allocate C once, fill in place with
  columns sorted; C built as the element-wise operations build theirs (widths, zeros
  dropped where asked, `--to`).
- [`reference`]: the oracle, a map per row.

```
use sptk_jit::spgemm::{spgemm, Options, Semiring};
use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};

let csr = |dims: Vec<u64>, rows: Vec<u64>, cols: Vec<u64>, vals: Vec<f64>| {
    let e = Entries::from_parts(dims, vec![rows, cols], ValueVec::F64(vals.into()))?;
    let target = sptk_encoding::resolve_target("CSR", 2)?;
    Ok::<_, Box<dyn std::error::Error>>(convert(&e, &target, &ConvertOptions::default())?.tensor)
};
// A = [[1, 2], [0, 3]], B = [[4, 0], [5, 6]].
let a = csr(vec![2, 2], vec![0, 0, 1], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
let b = csr(vec![2, 2], vec![0, 1, 1], vec![0, 0, 1], vec![4.0, 5.0, 6.0])?;
let c = spgemm(&a, &b, Semiring::PlusTimes, None, &Options::default())?;
assert_eq!(c.pos(1).unwrap().to_u64_vec(), [0, 2, 4]);
assert_eq!(c.crd(1).unwrap().to_u64_vec(), [0, 1, 0, 1]);
assert_eq!(c.values(), &ValueVec::F64(vec![14.0, 12.0, 15.0, 18.0].into()));
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/

mod accumulate;
mod dot;
mod numeric;
mod operand;
pub mod reference;
mod scatter;
mod scatter_emit;
mod semiring;
mod sort;
mod symbolic;

use std::fmt;
use std::time::{Duration, Instant};

use sptk_tensor::{IndexWidth, Tensor};

use accumulate::{MaskMode, Product};
use operand::{coord_width, plan, Coord, Lists, Operand, Rows};
use semiring::{with_ring, Ring, RingJob};
use symbolic::{symbolic, Form, Shape, Symbolic};

pub use scatter::{generate, kernel, Filtered, ScatterDesc, ScatterKernel, Table};
pub use semiring::Semiring;

/// A mask: the structure of `tensor` chooses which entries of C may exist, or with
/// `complement` which may not. Its values are not read.
#[derive(Clone, Copy, Debug)]
pub struct Mask<'a> {
    /// M, of C's shape, any sparse encoding.
    pub tensor: &'a Tensor,
    /// `C<!M>`: C may hold entries only where M stores none.
    pub complement: bool,
}

/// Which accumulator Gustavson's form uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulator {
    /// Chosen per row: hash where the row's products are few against C's column count.
    #[default]
    Auto,
    /// The dense accumulator for every row.
    Dense,
    /// The hash accumulator for every row.
    Hash,
}

/// Which form a masked product takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MaskedForm {
    /// Chosen per row by the symbolic pass's costs.
    #[default]
    Auto,
    /// Gustavson's for every row.
    Gustavson,
    /// Dot products for every row (a structural mask; a complemented one stays
    /// Gustavson's).
    Dot,
}

/// What a product does beyond its operands and semiring.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `C = A B^T`: B's rows are C's columns.
    pub transpose_b: bool,
    /// Gustavson's accumulator (for tests and measurements; the default chooses per row).
    pub accumulator: Accumulator,
    /// A masked product's form (for tests and measurements; the default chooses per row).
    pub masked_form: MaskedForm,
    /// The instruction set of the generated scatter (for tests; `None`: the best this CPU
    /// has). [`Options::common`]'s `kernels` says whether it runs.
    pub isa: Option<crate::Isa>,
    /// Threads, C's encoding and widths, zeros dropped, the memory limit: as the
    /// element-wise operations take them (`intersect` and `first_touch_apart` do not
    /// apply). By default a `plus_times` sum that cancels stays a stored entry, and C is
    /// CSR at the narrowest widths.
    pub common: crate::ewise::Options,
}

impl Options {
    /// The thread count: as given, or every core.
    pub fn threads(&self) -> usize {
        self.common.threads()
    }
}

/// Why a product cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpgemmError {
    /// The operands' shapes do not meet, or are not matrices.
    Shape(String),
    /// A semiring on values it does not take.
    ValueType(String),
    /// An operand or C could not go through the planner.
    Convert(String),
    /// C's arrays do not fit the widths asked for.
    Width(String),
    /// Memory for C or an accumulator cannot be allocated.
    Alloc(String),
    /// Generated code was asked for (`--kernels generated`, `--isa`) and cannot run: why.
    Kernels(String),
}

impl fmt::Display for SpgemmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpgemmError::Shape(m) => write!(f, "shapes: {m}"),
            SpgemmError::ValueType(m) | SpgemmError::Convert(m) | SpgemmError::Kernels(m) => {
                f.write_str(m)
            }
            SpgemmError::Width(m) => write!(f, "C's widths: {m}"),
            SpgemmError::Alloc(m) => write!(f, "memory: {m}"),
        }
    }
}

impl std::error::Error for SpgemmError {}

impl From<crate::ewise::EwiseError> for SpgemmError {
    fn from(e: crate::ewise::EwiseError) -> SpgemmError {
        use crate::ewise::EwiseError as E;
        match e {
            E::Shape(m) => SpgemmError::Shape(m),
            E::ValueType(m) | E::Option(m) => SpgemmError::ValueType(m),
            E::Width(m) => SpgemmError::Width(m),
            E::Alloc(m) => SpgemmError::Alloc(m),
            other => SpgemmError::Convert(other.to_string()),
        }
    }
}

/// Times of the phases of one product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// Planning the operands (conversions, B by columns for the dot form).
    pub prepare: Duration,
    /// The symbolic pass: flops per row, forms, chunks.
    pub symbolic: Duration,
    /// Counting each row's entries.
    pub count: Duration,
    /// Allocating C's arrays.
    pub allocate: Duration,
    /// Computing and writing C's sorted rows.
    pub fill: Duration,
    /// Positions, narrowing, dropped zeros, `--to`.
    pub finish: Duration,
}

/// How a product ran, with its size.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Products of the unmasked product (`sum_i sum_{k in A_i} nnz(B_k)`).
    pub flops: u64,
    /// Entries of C.
    pub entries: u64,
    /// Rows computed by each form: dense accumulator, hash accumulator, dot products.
    pub rows_by_form: [usize; 3],
    /// Each operand's route through the planner, `A`, `B` (and `B by columns`, `M`).
    pub routes: Vec<(String, String)>,
    /// The loops, as one line: `spgemm plus_times csr.p32.c32 csr.p32.c32 -> csr f64`.
    pub kernel: String,
    /// The phases' times.
    pub times: Times,
}

/// A product with how it ran.
#[derive(Clone, Debug)]
pub struct Report {
    /// C.
    pub tensor: Tensor,
    /// How it ran.
    pub stats: Stats,
}

/// `C = A (+).(x) B` over `semiring`, or `C<M>` with a mask (see the module text). Safe to
/// call from any thread; runs on [`Options::threads`] threads.
///
/// # Errors
/// Shapes that do not meet, a semiring on values it does not take, a conversion through
/// the planner that fails (memory limit), widths too narrow for C, memory.
pub fn spgemm(
    a: &Tensor,
    b: &Tensor,
    semiring: Semiring,
    mask: Option<Mask<'_>>,
    opts: &Options,
) -> Result<Tensor, SpgemmError> {
    Ok(spgemm_report(a, b, semiring, mask, opts)?.tensor)
}

/// The shape of `C = A B` (`B^T` with `transpose_b`): rows, inner size, columns; the
/// mask, if any, of C's shape.
fn shape(
    a: &Tensor,
    b: &Tensor,
    mask: Option<&Mask<'_>>,
    transpose_b: bool,
) -> Result<(u64, u64, u64), SpgemmError> {
    let (&[m, ka], &[r, c]) = (a.dim_sizes(), b.dim_sizes()) else {
        return Err(SpgemmError::Shape(format!(
            "A is {:?} and B is {:?}; a sparse product takes matrices",
            a.dim_sizes(),
            b.dim_sizes()
        )));
    };
    let (kb, n) = if transpose_b { (c, r) } else { (r, c) };
    if ka != kb {
        return Err(SpgemmError::Shape(format!(
            "A is {m} x {ka} and B{} is {kb} x {n}: A's columns must be B's rows",
            if transpose_b { "^T" } else { "" }
        )));
    }
    if let Some(mk) = mask {
        if mk.tensor.dim_sizes() != [m, n] {
            return Err(SpgemmError::Shape(format!(
                "M is {:?}; C is [{m}, {n}]",
                mk.tensor.dim_sizes()
            )));
        }
    }
    Ok((m, ka, n))
}

/// [`spgemm`] with how it ran and the time of each phase.
///
/// # Errors
/// As [`spgemm`].
pub fn spgemm_report(
    a: &Tensor,
    b: &Tensor,
    semiring: Semiring,
    mask: Option<Mask<'_>>,
    opts: &Options,
) -> Result<Report, SpgemmError> {
    use crate::ewise::align::{self, Onto};
    // Labelled operands meet by label (`ewise::Align`): B's inner dimension renumbered into
    // A's column labels, the mask's rows and columns into C's.
    let by = opts.common.align;
    let (inner, outer) = if opts.transpose_b { (1, 0) } else { (0, 1) };
    let onto_a = Onto {
        dim: inner,
        labels: a.labels(1),
        sides: ("A's columns", "B's rows"),
    };
    let b_aligned = align::onto_labels(b, &[onto_a], by).map_err(SpgemmError::from_aligning)?;
    let b = &*b_aligned;
    let onto_c = [
        Onto {
            dim: 0,
            labels: a.labels(0),
            sides: ("C's rows", "M's rows"),
        },
        Onto {
            dim: 1,
            labels: b.labels(outer),
            sides: ("C's columns", "M's columns"),
        },
    ];
    let mask_aligned = match &mask {
        Some(mk) => {
            Some(align::onto_labels(mk.tensor, &onto_c, by).map_err(SpgemmError::from_aligning)?)
        }
        None => None,
    };
    let mask = mask.zip(mask_aligned.as_deref()).map(|(mk, t)| Mask {
        tensor: t,
        complement: mk.complement,
    });
    let labels = match (a.dim_sizes().len(), b.dim_sizes().len()) {
        (2, 2) => vec![a.labels(0).cloned(), b.labels(outer).cloned()],
        _ => Vec::new(),
    };
    let mut report = spgemm_aligned(a, b, semiring, mask, opts)?;
    report.tensor = align::labelled(report.tensor, &labels).map_err(SpgemmError::from_aligning)?;
    Ok(report)
}

impl SpgemmError {
    /// An element-wise alignment's error as a product's.
    fn from_aligning(e: crate::ewise::EwiseError) -> SpgemmError {
        use crate::ewise::EwiseError as E;
        match e {
            E::Shape(m) => SpgemmError::Shape(m),
            E::Alloc(m) => SpgemmError::Alloc(m),
            other => SpgemmError::Convert(other.to_string()),
        }
    }
}

/// [`spgemm_report`] on operands already aligned.
fn spgemm_aligned(
    a: &Tensor,
    b: &Tensor,
    semiring: Semiring,
    mask: Option<Mask<'_>>,
    opts: &Options,
) -> Result<Report, SpgemmError> {
    let (m, k, n) = shape(a, b, mask.as_ref(), opts.transpose_b)?;
    let start = Instant::now();
    let limit = opts.common.memory_limit;
    let ops = Planned {
        a: plan(a, false, limit, "A")?,
        b: plan(b, opts.transpose_b, limit, "B")?,
        mask: match &mask {
            Some(mk) => Some(plan(mk.tensor, false, limit, "M")?),
            None => None,
        },
        mode: match mask {
            None => MaskMode::None,
            Some(Mask {
                complement: false, ..
            }) => MaskMode::Keep,
            Some(_) => MaskMode::Skip,
        },
        dims: [m, n],
        prepare: start.elapsed(),
    };
    let largest = m.max(n).max(k);
    if usize::try_from(largest).is_err() || largest >= 1 << 62 {
        return Err(SpgemmError::Shape(format!(
            "dimensions up to {largest} do not fit this machine's indices"
        )));
    }
    match coord_width(largest) {
        IndexWidth::W64 => ops.run::<u64>(semiring, opts),
        _ => ops.run::<u32>(semiring, opts),
    }
}

/// The operands after the planner.
struct Planned<'a> {
    a: Operand<'a>,
    b: Operand<'a>,
    mask: Option<Operand<'a>>,
    mode: MaskMode,
    /// C's rows and columns.
    dims: [u64; 2],
    prepare: Duration,
}

/// The rows of `lists` with values `val`.
fn rows_of<'x, C: Coord, V>(lists: &'x Lists<'_, C>, val: &'x [V]) -> Rows<'x, C, V> {
    Rows {
        pos: &lists.0,
        crd: &lists.1,
        val,
    }
}

impl Planned<'_> {
    fn run<C: Coord>(&self, semiring: Semiring, opts: &Options) -> Result<Report, SpgemmError> {
        let threads = opts.threads();
        let start = Instant::now();
        let (rows, cols) = (self.dims[0] as usize, self.dims[1] as usize);
        let a = self.a.lists::<C>()?;
        // `A A` (a FEM or Markov step, a graph's square): B's lists are A's.
        let b_lists;
        let b = if std::ptr::eq::<Tensor>(&*self.a.tensor, &*self.b.tensor) {
            &a
        } else {
            b_lists = self.b.lists::<C>()?;
            &b_lists
        };
        let mask = self.mask.as_ref().map(|m| m.lists::<C>()).transpose()?;
        let units = vec![(); self.a.nnz().max(self.b.nnz())];
        let mask_units = vec![(); self.mask.as_ref().map_or(0, |m| m.nnz())];
        let pattern = |l, n: usize| rows_of(l, units.get(..n).unwrap_or_default());
        let shape = Shape {
            a: pattern(&a, self.a.nnz()),
            b: pattern(b, self.b.nnz()),
            mask: mask.as_ref().map(|l| rows_of(l, &mask_units)),
            mode: self.mode,
            rows,
            cols,
        };
        let sym = symbolic(&shape, opts.accumulator, opts.masked_form, threads);
        let symbolic_time = start.elapsed();
        let by_columns = sym.rows_by_form[Form::Dot as usize] > 0;
        let values = [self.a.tensor.values(), self.b.tensor.values()];
        let job = Numeric {
            a: &a,
            b,
            by_columns,
            mask: shape.mask,
            mode: self.mode,
            dims: self.dims,
            sym: &sym,
            threads,
            opts,
        };
        let (tensor, mut times, entries, out_type, (scatter, hash, mask_dot)) =
            with_ring(job, semiring, &values)??;
        times.prepare += self.prepare;
        times.symbolic = symbolic_time;
        let mut routes = vec![
            ("A".to_string(), self.a.route.clone()),
            ("B".to_string(), self.b.route.clone()),
        ];
        if by_columns {
            routes.push((
                "B by columns".into(),
                "transposed from B by rows (values only where the semiring reads them)".into(),
            ));
        }
        if let Some(o) = &self.mask {
            routes.push(("M".into(), o.route.clone()));
        }
        // Masked rows run generated code only with the filter (C's columns within it).
        let filtered = self.dims[1] as usize <= accumulate::FILTER_COLS;
        let ran = |k: &Option<ScatterDesc>| match k {
            Some(d) if self.mode == MaskMode::None || filtered => format!("generated `{d}`"),
            _ => "rust loop".to_string(),
        };
        let kernel =
            format!(
            "spgemm {semiring} {} {}{}{} -> csr {out_type}: rows dense {} ({}), hash {} ({}), dot {} ({}){}",
            self.a.name(false),
            self.b.name(opts.transpose_b),
            if opts.transpose_b { " (as B^T)" } else { "" },
            match (&self.mask, self.mode) {
                (Some(o), MaskMode::Skip) => format!(" mask !{}", o.name(false)),
                (Some(o), _) => format!(" mask {}", o.name(false)),
                (None, _) => String::new(),
            },
            sym.rows_by_form[0],
            ran(&scatter),
            sym.rows_by_form[1],
            ran(&hash),
            sym.rows_by_form[2],
            match mask_dot {
                Some(d) => format!("generated `{d}`"),
                None => "rust loop".to_string(),
            },
            match sym.costs {
                [0, 0] => String::new(),
                [g, d] => format!(" (modelled costs: gustavson {g}, dot {d})"),
            },
        );
        Ok(Report {
            tensor,
            stats: Stats {
                flops: sym.total_flops,
                entries,
                rows_by_form: sym.rows_by_form,
                routes,
                kernel,
                times,
            },
        })
    }
}

/// The numeric passes and C's tensor, as a [`RingJob`].
struct Numeric<'x, 'p, C: Coord> {
    a: &'x Lists<'p, C>,
    b: &'x Lists<'p, C>,
    /// B by columns is made (some rows take the dot form).
    by_columns: bool,
    mask: Option<Rows<'x, C, ()>>,
    mode: MaskMode,
    dims: [u64; 2],
    sym: &'x Symbolic,
    threads: usize,
    opts: &'x Options,
}

/// The generated kernels a product ran (if any): the dense accumulator's scatter, the
/// hash table's, the dot form's.
type Generated = (
    Option<ScatterDesc>,
    Option<ScatterDesc>,
    Option<crate::coiter::CoDesc>,
);

/// C, the phases' times, C's entries, C's value type and the generated kernels.
type NumericOut = Result<(Tensor, Times, u64, &'static str, Generated), SpgemmError>;

impl<C: Coord> RingJob for Numeric<'_, '_, C> {
    type Out = NumericOut;
    fn call<R: Ring>(self, values: &[&[R::In]]) -> NumericOut {
        let v = |q: usize| values.get(q).copied().unwrap_or_default();
        let start = Instant::now();
        let b = rows_of(self.b, v(1));
        let b_rows = self.b.0.len().saturating_sub(1);
        let by_columns = match self.by_columns {
            true => Some(operand::transpose(&b, b_rows, self.dims[1] as usize)?),
            false => None,
        };
        let transposing = start.elapsed();
        let scatter = scatter_kernel::<C, R>(self.opts, self.mode, Table::Dense)?;
        let hash = match self.sym.rows_by_form[1] {
            0 => None,
            _ => scatter_kernel::<C, R>(self.opts, self.mode, Table::Hash)?,
        };
        let mask_dot = match by_columns {
            Some(_) => mask_dot_kernel::<C, R>(self.opts)?,
            None => None,
        };
        let p = Product::<C, R> {
            a: rows_of(self.a, v(0)),
            b,
            b_cols: by_columns
                .as_ref()
                .map(|(pos, crd, val)| Rows { pos, crd, val }),
            mask: self.mask,
            mode: self.mode,
            cols: self.dims[1] as usize,
            scatter: scatter.as_deref(),
            hash: hash.as_deref(),
            // Read only by the dense accumulator's generated code: a pass over B's rows
            // where none runs is waste.
            b_longest: match scatter {
                Some(_) => b
                    .pos
                    .windows(2)
                    .map(|w| w[1].saturating_sub(w[0]))
                    .max()
                    .unwrap_or(0),
                None => 0,
            },
            mask_dot: mask_dot.as_ref(),
        };
        let run = (self.threads, self.opts.common.pool.as_ref());
        let filled = numeric::multiply(&p, self.sym, self.dims[0] as usize, run)?;
        // B by columns is not needed past the fill: its memory goes before C is finished.
        drop(by_columns);
        let t = filled.times;
        let mut times = Times {
            prepare: transposing,
            count: t.count,
            allocate: t.allocate,
            fill: t.fill,
            ..Times::default()
        };
        let start = Instant::now();
        let c = crate::ewise::build_output(filled, (&self.dims, 0), &self.opts.common)?;
        times.finish = start.elapsed();
        let entries = c.entry_count() as u64;
        Ok((
            c,
            times,
            entries,
            <R::Out as sptk_tensor::Value>::TYPE.name(),
            (
                scatter.map(|k| *k.desc()),
                hash.map(|k| *k.desc()),
                mask_dot.map(|k| *k.desc()),
            ),
        ))
    }
}

/// The dot form's generated code for `R` (every semiring: the valued ones on f32 / f64)
/// where [`Options`] asks for generated code (`auto`: wherever it exists), else `None`
/// (the Rust loop).
///
/// # Errors
/// `--kernels generated` (or `--isa`) where the kernel cannot be generated or run here.
fn mask_dot_kernel<C: Coord, R: Ring>(
    opts: &Options,
) -> Result<Option<crate::coiter::MaskDot>, SpgemmError> {
    let Some(isa) = opts
        .common
        .kernels
        .isa(opts.isa, |_| true)
        .map_err(SpgemmError::Kernels)?
    else {
        return Ok(None);
    };
    asked_or_none(
        opts,
        crate::coiter::MaskDot::new::<C, R::Out>(isa, R::SEMIRING),
    )
}

/// The generated scatter kernel for the dense accumulator's rows of a product at `C`'s
/// width over `R` under `mode`, where [`Kernels`](crate::ewise::Kernels) asks for one and
/// this CPU has AVX2 or AVX-512 ([`Options::isa`]); `None` runs the Rust loop.
///
/// [`Kernels::Auto`](crate::ewise::Kernels::Auto) takes it for unmasked products on AVX2
/// and AVX-512 and for masked ones on AVX-512 (the vector filter), where it was at least
/// as fast as the Rust loop on the three benchmark cases; masked products on AVX2 (scalar
/// filter: 1.2x slower on the triangle count at 2 threads) keep the Rust loop. Measured
/// in `docs/PERFORMANCE.md` ("SpGEMM: the generated scatter").
///
/// # Errors
/// `--kernels generated` (or `--isa`) where the kernel cannot be generated or run here.
fn scatter_kernel<C: Coord, R: Ring>(
    opts: &Options,
    mode: MaskMode,
    table: Table,
) -> Result<Option<std::sync::Arc<ScatterKernel>>, SpgemmError> {
    let isa = opts.common.kernels.isa(opts.isa, |isa| {
        mode == MaskMode::None || isa == crate::Isa::Avx512
    });
    let Some(isa) = isa.map_err(SpgemmError::Kernels)? else {
        return Ok(None);
    };
    let desc = ScatterDesc {
        table,
        semiring: R::SEMIRING,
        value: <R::Out as sptk_tensor::Value>::TYPE,
        crd: C::WIDTH,
        filter: match mode {
            MaskMode::None => Filtered::Unmasked,
            MaskMode::Keep => Filtered::Mask,
            MaskMode::Skip => Filtered::Complement,
        },
        isa,
    };
    asked_or_none(opts, scatter::kernel(&desc))
}

/// A generated kernel, or `None` where it cannot be had (the Rust loop runs); but an
/// error where `--kernels generated` asked for it: an explicit request is never quietly
/// turned into the Rust loops.
fn asked_or_none<K>(
    opts: &Options,
    made: Result<K, crate::KernelError>,
) -> Result<Option<K>, SpgemmError> {
    match made {
        Ok(k) => Ok(Some(k)),
        Err(e) if opts.common.kernels == crate::ewise::Kernels::Generated => {
            Err(SpgemmError::Kernels(format!("--kernels generated: {e}")))
        }
        Err(_) => Ok(None),
    }
}

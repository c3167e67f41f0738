/*!
Element-wise co-iteration of two sparse operands: `add`, `sub`, `min`, `max` over the
union of their stored coordinates, `mul`, `div`, `first`, `second` (and `min` / `max`
asked for so) over the intersection, the `dot` product, `rowdot`, and the reductions of
one operand (`reduce`). `docs/OPERATIONS.md` states what each computes.

- [`ops`]: the operations and their meaning on each value type.
- [`reference`]: the oracle, a map over stored entries that states every rule.
- The fast path: operands made ready by the planner (`operand.rs`), the outer level pair
  (`levels.rs`: dense x dense walks, dense x compressed locates, compressed x compressed
  merges), the inner level pair (`merge.rs`: a branchless merge, or a gallop of a short
  list through a long one), instantiated per operation and index widths
  (`dispatch.rs`), counted then filled on threads (`fast.rs`), C built once at its exact
  size (`output.rs`); reductions in `reduce.rs`.

Results have the same bits for every thread count: work is split into a fixed number of
outer-coordinate ranges balanced by nnz(A) + nnz(B), whatever the thread count; `dot`
sums each range in storage order and then the range sums in range order, and the
reference does the same.

```
use sptk_jit::ewise::{ewise, EwiseOp, Options};
use sptk_tensor::{convert, ConvertOptions, Entries, ValueVec};

let matrix = |rows: Vec<u64>, cols: Vec<u64>, vals: Vec<f64>| {
    let e = Entries::from_parts(vec![2, 3], vec![rows, cols], ValueVec::F64(vals.into()))?;
    let csr = sptk_encoding::resolve_target("CSR", 2)?;
    Ok::<_, Box<dyn std::error::Error>>(convert(&e, &csr, &ConvertOptions::default())?.tensor)
};
let a = matrix(vec![0, 0, 1], vec![0, 2, 1], vec![1.0, 2.0, 3.0])?;
let b = matrix(vec![0, 1], vec![2, 2], vec![10.0, 20.0])?;

let c = ewise(&a, &b, EwiseOp::Add, &Options::default())?;
assert_eq!(c.pos(1).unwrap().to_u64_vec(), [0, 2, 4]);
assert_eq!(c.crd(1).unwrap().to_u64_vec(), [0, 2, 1, 2]);
assert_eq!(c.values(), &ValueVec::F64(vec![1.0, 12.0, 3.0, 20.0].into()));

let m = ewise(&a, &b, EwiseOp::Mul, &Options::default())?;
assert_eq!(m.values(), &ValueVec::F64(vec![20.0].into()));
let d = sptk_jit::ewise::dot(&a, &b, &Options::default())?;
assert_eq!(d, ValueVec::F64(vec![20.0].into()));
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/

pub(crate) mod align;
mod dispatch;
mod fast;
mod generated;
mod levels;
mod merge;
mod operand;
pub mod ops;
mod output;
mod positions;
mod reduce;
pub mod reference;
#[cfg(target_arch = "x86_64")]
mod short;
mod symmetrize;

use std::fmt;
use std::time::Instant;

use sptk_encoding::Target;
use sptk_tensor::{AutoWidths, BufferPool, IndexWidth, Tensor, ValueType, ValueVec};

pub(crate) use self::{operand::plan, output::build as build_output};
use crate::run::Chunk;
use dispatch::{on_type, Kind, OpJob, TypeJob, Width, WidthJob};
use fast::Pair;
/// C's arrays as a merge leaves them, and the pieces its threads write: shared with the
/// generated co-iteration of `coiter`.
pub(crate) use fast::{lock, one_pass, split, Filled, PassRun, Room};
use levels::Side;
pub(crate) use merge::GALLOP_RATIO;
use operand::{Arrays, Planned};
use ops::Binary;

pub use align::Align;
pub use fast::PhaseTimes;
pub use operand::compute_type;
pub use ops::EwiseOp;
pub use reduce::{reduce, reduce_sparse, Axis, ReduceOp};
pub use symmetrize::symmetrize;

/// What an element-wise operation does beyond its operation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `min` / `max` over the intersection instead of the union (other operations refuse
    /// it: their set is fixed).
    pub intersect: bool,
    /// How operands whose dimensions carry labels meet: by label (the default, as pandas
    /// aligns frames) or by position ([`Align`]).
    pub align: Align,
    /// Leave out of C the entries whose value is zero (SciPy drops them; by default a
    /// result that cancels to zero stays a stored entry).
    pub drop_zeros: bool,
    /// Threads to run on (`None`: every core). The result does not depend on it.
    pub threads: Option<usize>,
    /// C's encoding, reached through the planner from the CSR-like layout C is built in
    /// (`None`: CSR or CSC in A's dimension order; a sparse vector for vectors).
    pub to: Option<Target>,
    /// With [`Options::to`]: widths the planner picks from the data instead of the
    /// target's.
    pub auto_widths: AutoWidths,
    /// C's position width (`None`: the narrowest that holds C).
    pub pos_width: Option<IndexWidth>,
    /// C's coordinate width (`None`: the narrowest that holds C's inner dimension).
    pub crd_width: Option<IndexWidth>,
    /// The most memory a conversion through the planner may hold (`None`: the machine's
    /// default, see [`sptk_tensor::default_memory_limit`]).
    pub memory_limit: Option<u64>,
    /// Write every page of the room for C's arrays once before the merge, so that
    /// [`PhaseTimes::allocate`] holds the first touch apart from the fill (for `--stats`;
    /// the room is a bound on C's size, so this touches more memory than C needs). Arrays
    /// taken from [`Options::pool`] are not touched: their pages are there already.
    pub first_touch_apart: bool,
    /// Which loops merge `C = op(A, B)`: generated code or the monomorphized loops
    /// ([`Kernels`]; `dot`, `rowdot` and the reductions always run the latter).
    pub kernels: Kernels,
    /// Large arrays of earlier results to build C's coordinates and values in (`None`:
    /// fresh memory). A caller making one result after another hands each result it is
    /// done with back ([`BufferPool::keep_tensor`]), and the next one is written into
    /// pages already faulted in instead of fresh ones the kernel zeroes on first touch.
    pub pool: Option<BufferPool>,
}

/// Which loops build an element-wise result. Either way C is built by the same one-pass
/// pipeline and has the same bits; [`Explain::kernel`] says which ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernels {
    /// Generated code (`coiter`) for the operations and operand pairs where it was
    /// measured at least as fast as the monomorphized loops, those loops elsewhere.
    #[default]
    Auto,
    /// The monomorphized loops always.
    Monomorphized,
    /// Generated code, and an error that says why where none can run (values other than
    /// f32 / f64, a CPU without AVX2 or AVX-512, an operation that has none): an explicit
    /// request is never quietly turned into the monomorphized loops.
    Generated,
}

impl Kernels {
    /// The instruction set generated code runs on (`pinned`, else the widest of AVX-512
    /// and AVX2 this CPU has), or `None` where the Rust loops run: always for
    /// `Monomorphized`, and for `Auto` where `auto` says no or no such ISA is here.
    ///
    /// # Errors
    /// `Generated` where no instruction set that has these kernels is here (why, as text).
    pub(crate) fn isa(
        self,
        pinned: Option<crate::Isa>,
        auto: impl FnOnce(crate::Isa) -> bool,
    ) -> Result<Option<crate::Isa>, String> {
        use crate::Isa;
        let isa = pinned.or_else(|| [Isa::Avx512, Isa::Avx2].into_iter().find(|i| i.available()));
        match (self, isa) {
            (Kernels::Monomorphized, _) | (Kernels::Auto, None) => Ok(None),
            (Kernels::Auto, Some(isa)) => Ok(auto(isa).then_some(isa)),
            (Kernels::Generated, Some(isa)) => Ok(Some(isa)),
            (Kernels::Generated, None) => Err(format!(
                "--kernels generated: these kernels are generated for AVX2 and AVX-512, and \
                 this CPU runs {} (use --kernels auto or monomorphized)",
                Isa::best().map_or("neither", Isa::name)
            )),
        }
    }

    /// `r`, generated code's outcome, where it has no kernel for these values or levels:
    /// `None` (the monomorphized loops run) for `Auto`, the error for `Generated`.
    pub(crate) fn or_loops<T>(self, r: Result<T, EwiseError>) -> Result<Option<T>, EwiseError> {
        match r {
            Ok(done) => Ok(Some(done)),
            Err(EwiseError::Convert(m) | EwiseError::ValueType(m))
                if self == Kernels::Generated =>
            {
                Err(EwiseError::Option(format!("--kernels generated: {m}")))
            }
            Err(EwiseError::Convert(_) | EwiseError::ValueType(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Options {
    /// The thread count: as given, or every core.
    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }
}

/// Why an element-wise operation cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EwiseError {
    /// The operands' shapes do not match, or are not matrices or vectors.
    Shape(String),
    /// The operands' value types do not meet, or the type has no such operation.
    ValueType(String),
    /// An option the operation does not take (`--intersect` with `add`).
    Option(String),
    /// An operand or C could not go through the planner.
    Convert(String),
    /// C's arrays do not fit the widths asked for.
    Width(String),
    /// Memory for C cannot be allocated.
    Alloc(String),
}

impl fmt::Display for EwiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EwiseError::Shape(m) => write!(f, "shapes: {m}"),
            EwiseError::ValueType(m) | EwiseError::Option(m) | EwiseError::Convert(m) => {
                f.write_str(m)
            }
            EwiseError::Width(m) => write!(f, "C's widths: {m}"),
            EwiseError::Alloc(m) => write!(f, "memory for C: {m}"),
        }
    }
}

impl std::error::Error for EwiseError {}

/// How an operation ran, for `--explain`: each operand's route through the planner and
/// the loops that ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explain {
    /// A's route (`as stored`, or the planner's steps).
    pub a: String,
    /// B's route.
    pub b: String,
    /// The loops, as a one-line description: the monomorphized loops as
    /// `ewise union add csr.p32.c32 dcsr.p32.c32 -> csr f64 fast`, generated code as its
    /// kernel's description, `ewise union add csr.p32.c32 dcsr.p32.c32 -> csr f64 avx512
    /// fill` (see [`crate::coiter::CoDesc`]).
    pub kernel: String,
    /// True if generated code merged C (else the monomorphized loops; see [`Kernels`]).
    pub generated: bool,
}

/// An element-wise result with how it was computed.
#[derive(Clone, Debug)]
pub struct Report {
    /// C.
    pub tensor: Tensor,
    /// The routes and loops.
    pub explain: Explain,
    /// Time of each phase.
    pub times: PhaseTimes,
}

/// `C = op(A, B)` element-wise (see [`EwiseOp`] and `docs/OPERATIONS.md`). Safe to call
/// from any thread; runs on [`Options::threads`] threads.
///
/// # Errors
/// Shapes or value types that do not meet, an option the operation does not take, a
/// conversion through the planner that fails (memory limit), widths too narrow for C.
pub fn ewise(a: &Tensor, b: &Tensor, op: EwiseOp, opts: &Options) -> Result<Tensor, EwiseError> {
    Ok(ewise_report(a, b, op, opts)?.tensor)
}

/// [`ewise`] with the routes taken and the time of each phase.
///
/// # Errors
/// As [`ewise`].
pub fn ewise_report(
    a: &Tensor,
    b: &Tensor,
    op: EwiseOp,
    opts: &Options,
) -> Result<Report, EwiseError> {
    let union = set_of(op, opts)?;
    let start = Instant::now();
    let aligned = align::align(a, b, opts.align)?;
    let prep = Prep::new(&aligned.a, &aligned.b, opts, false)?;
    let prepare = start.elapsed();
    let job = EwiseJob {
        op,
        union,
        opts,
        prep: &prep,
    };
    let (tensor, kernel, mut times) = prep.run(job)??;
    times.prepare = prepare;
    Ok(Report {
        tensor: align::labelled(tensor, &aligned.labels)?,
        explain: prep.explain(kernel),
        times,
    })
}

/// True for a union: `add`, `sub`, and `min` / `max` without [`Options::intersect`].
///
/// # Errors
/// [`Options::intersect`] with an operation other than `min` / `max`.
fn set_of(op: EwiseOp, opts: &Options) -> Result<bool, EwiseError> {
    if opts.intersect && !matches!(op, EwiseOp::Min | EwiseOp::Max) {
        return Err(EwiseError::Option(format!(
            "--intersect applies to min and max; {op} is {} already",
            if op.is_union() {
                "a union"
            } else {
                "an intersection"
            }
        )));
    }
    Ok(op.is_union() && !opts.intersect)
}

/// `sum a_ij * b_ij` over the coordinates both store, as a one-element vector of the
/// compute type (see the module text for the order of the sums).
///
/// # Errors
/// Shapes or value types that do not meet, a conversion through the planner that fails.
pub fn dot(a: &Tensor, b: &Tensor, opts: &Options) -> Result<ValueVec, EwiseError> {
    Ok(dot_report(a, b, opts)?.values)
}

/// [`dot`] or [`rowdot`]'s result with how it was computed.
#[derive(Clone, Debug)]
pub struct DotReport {
    /// The scalar (one element) or the row sums.
    pub values: ValueVec,
    /// The routes and the loops that ran.
    pub explain: Explain,
}

/// [`dot`] with the routes taken and the loops that ran.
///
/// # Errors
/// As [`dot`].
pub fn dot_report(a: &Tensor, b: &Tensor, opts: &Options) -> Result<DotReport, EwiseError> {
    dots(a, b, opts, false)
}

/// [`rowdot`] with the routes taken and the loops that ran.
///
/// # Errors
/// As [`dot`].
pub fn rowdot_report(a: &Tensor, b: &Tensor, opts: &Options) -> Result<DotReport, EwiseError> {
    dots(a, b, opts, true)
}

/// `sum_j a_ij * b_ij` for every row `i` (one element for vectors): a dense vector, zero
/// where the operands' rows do not meet. Column-major operands go through the planner to
/// rows first, so that each row is summed in column order.
///
/// # Errors
/// As [`dot`].
pub fn rowdot(a: &Tensor, b: &Tensor, opts: &Options) -> Result<ValueVec, EwiseError> {
    Ok(rowdot_report(a, b, opts)?.values)
}

/// [`dot_report`], or [`rowdot_report`] with `rows`.
fn dots(a: &Tensor, b: &Tensor, opts: &Options, rows: bool) -> Result<DotReport, EwiseError> {
    let aligned = align::align(a, b, opts.align)?;
    let prep = Prep::new(&aligned.a, &aligned.b, opts, rows)?;
    let (values, kernel) = prep.run(DotJob { rows, opts })??;
    Ok(DotReport {
        values,
        explain: prep.explain(kernel),
    })
}

/// Two operands made ready: planned in A's dimension order, with their compute type.
struct Prep<'a> {
    a: Planned<'a>,
    b: Planned<'a>,
    value_type: ValueType,
    /// A's outer dimension (0 for row-major, 1 for column-major).
    outer_dim: usize,
    dims: Vec<u64>,
    /// Outer and inner sizes.
    shape: (usize, usize),
}

impl<'a> Prep<'a> {
    /// Both operands planned in A's dimension order, or by rows with `by_rows`.
    fn new(
        a: &'a Tensor,
        b: &'a Tensor,
        opts: &Options,
        by_rows: bool,
    ) -> Result<Prep<'a>, EwiseError> {
        if a.dim_sizes() != b.dim_sizes() {
            return Err(EwiseError::Shape(format!(
                "A is {:?} and B is {:?}",
                a.dim_sizes(),
                b.dim_sizes()
            )));
        }
        let value_type = compute_type(a.value_type(), b.value_type())?;
        let outer_dim = if a.dim_sizes().len() == 2 && !by_rows {
            operand::outer_dim(a)
        } else {
            0
        };
        let pa = operand::plan(a, outer_dim, opts.memory_limit)?;
        let pb = operand::plan(b, outer_dim, opts.memory_limit)?;
        Ok(Prep {
            shape: pa.shape,
            a: pa,
            b: pb,
            value_type,
            outer_dim,
            dims: a.dim_sizes().to_vec(),
        })
    }

    fn run<J: PairJob>(&self, job: J) -> Result<J::Out, EwiseError> {
        on_type(TypedPrep { prep: self, job }, self.value_type)?
    }

    fn explain(&self, (kernel, generated): (String, bool)) -> Explain {
        Explain {
            a: self.a.route.clone(),
            b: self.b.route.clone(),
            kernel,
            generated,
        }
    }

    /// C's layout as the loops build it: `vec`, `csr` or `csc` (A's order).
    fn out_name(&self) -> &'static str {
        match (self.dims.len(), self.outer_dim) {
            (1, _) => "vec",
            (_, 0) => "csr",
            _ => "csc",
        }
    }

    /// `csr.p32.c32`: an operand's levels and widths as the loops read them.
    fn name(&self, p: &Planned<'_>, (pw, cw): (IndexWidth, IndexWidth)) -> String {
        let kind = match (self.dims.len(), p.outer_dense, self.outer_dim) {
            (1, _, _) => "vec",
            (_, true, 0) => "csr",
            (_, true, _) => "csc",
            (_, false, 0) => "dcsr",
            (_, false, _) => "dcsc",
        };
        format!("{kind}.p{}.c{}", pw.bits(), cw.bits())
    }
}

/// Work on two typed operands.
trait PairJob {
    type Out;
    fn call<V: Kind, P: Width, C: Width>(
        self,
        prep: &Prep<'_>,
        pair: Pair<'_, P, C, V>,
        chunks: &[Chunk],
        widths: (IndexWidth, IndexWidth),
    ) -> Self::Out;
}

struct TypedPrep<'p, 'a, J> {
    prep: &'p Prep<'a>,
    job: J,
}

impl<J: PairJob> TypeJob for TypedPrep<'_, '_, J> {
    type Out = Result<J::Out, EwiseError>;
    fn call<V: Kind>(self) -> Self::Out {
        let width = |p: &Planned<'_>| {
            let t = &p.tensor;
            let l = t.dim_sizes().len() - 1;
            let pos = t.pos(l).map_or(IndexWidth::W64, |a| a.width());
            let crd = t.crd(l).map_or(IndexWidth::W64, |a| a.width());
            (pos, crd)
        };
        let ((ap, ac), (bp, bc)) = (width(&self.prep.a), width(&self.prep.b));
        let pw = dispatch::common_width(V::POS, &[ap, bp]);
        let cw = dispatch::common_width(V::CRD, &[ac, bc]);
        let a = Arrays::of(&self.prep.a, (pw, cw), V::TYPE)?;
        let b = Arrays::of(&self.prep.b, (pw, cw), V::TYPE)?;
        let stage = WidthStage::<J, V> {
            prep: self.prep,
            job: self.job,
            arrays: (&a, &b),
            widths: (pw, cw),
            _v: std::marker::PhantomData,
        };
        V::at_widths(stage, pw, cw)
            .ok_or_else(|| EwiseError::Convert(format!("no loops for widths {pw:?}, {cw:?}")))?
    }
}

struct WidthStage<'p, 'a, J, V> {
    prep: &'p Prep<'a>,
    job: J,
    arrays: (&'p Arrays<'p>, &'p Arrays<'p>),
    widths: (IndexWidth, IndexWidth),
    _v: std::marker::PhantomData<V>,
}

impl<J: PairJob, V: Kind> WidthJob for WidthStage<'_, '_, J, V> {
    type Out = Result<J::Out, EwiseError>;
    fn call<P: Width, C: Width>(self) -> Self::Out {
        let missing =
            || EwiseError::Convert("an operand's arrays are not at the loops' widths".into());
        let (a, av) = side::<P, C, V>(self.arrays.0).ok_or_else(missing)?;
        let (b, bv) = side::<P, C, V>(self.arrays.1).ok_or_else(missing)?;
        let outer = self.prep.shape.0;
        let chunks = crate::run::chunk_by_weight(0..outer, crate::run::ENTRY_CHUNKS, |i| {
            a.entries_before(i).saturating_add(b.entries_before(i))
        });
        Ok(self
            .job
            .call(self.prep, Pair { a, av, b, bv }, &chunks, self.widths))
    }
}

/// An operand's arrays as typed slices, if they are at widths `P`, `C` and of type `V`.
fn side<'x, P: Width, C: Width, V: Kind>(x: &'x Arrays<'_>) -> Option<(Side<'x, P, C>, &'x [V])> {
    Some((
        Side {
            outer: match &x.outer {
                Some(o) => Some(C::slice(o)?),
                None => None,
            },
            pos: P::slice(&x.pos)?,
            crd: C::slice(&x.crd)?,
        },
        V::slice(&x.values)?,
    ))
}

/// The element-wise operation as a [`PairJob`]: C, the loops' description, the times.
struct EwiseJob<'o, 'p, 'a> {
    op: EwiseOp,
    union: bool,
    opts: &'o Options,
    prep: &'p Prep<'a>,
}

type EwiseOut = Result<(Tensor, (String, bool), PhaseTimes), EwiseError>;

impl PairJob for EwiseJob<'_, '_, '_> {
    type Out = EwiseOut;
    fn call<V: Kind, P: Width, C: Width>(
        self,
        prep: &Prep<'_>,
        pair: Pair<'_, P, C, V>,
        _: &[Chunk],
        widths: (IndexWidth, IndexWidth),
    ) -> EwiseOut {
        let fast_kernel = format!(
            "ewise {} {} {} {} -> {} {} fast",
            if self.union { "union" } else { "intersection" },
            self.op,
            prep.name(&prep.a, widths),
            prep.name(&prep.b, widths),
            prep.out_name(),
            V::TYPE.name()
        );
        let (op, opts) = (self.op, self.opts);
        let generated = generated::run(
            pair,
            (op, self.union),
            (prep.shape.0, opts),
            (prep.a.outer_dense, prep.b.outer_dense),
        )?;
        let (filled, kernel) = match generated {
            Some((filled, desc)) => (filled, (desc.to_string(), true)),
            None => {
                let stage = OpStage { job: self, pair };
                let filled = V::with_op(stage, op).ok_or_else(|| {
                    EwiseError::ValueType(format!(
                        "{op} is not defined on {} values",
                        V::TYPE.name()
                    ))
                })??;
                (filled, (fast_kernel, false))
            }
        };
        let mut times = filled.times;
        let start = Instant::now();
        let c = output::build(filled, (&prep.dims, prep.outer_dim), opts)?;
        times.finish = start.elapsed();
        Ok((c, kernel, times))
    }
}

struct OpStage<'o, 'p, 'a, 'x, P, C, V> {
    job: EwiseJob<'o, 'p, 'a>,
    pair: Pair<'x, P, C, V>,
}

impl<P: Width, C: Width, V: Kind> OpJob<V> for OpStage<'_, '_, '_, '_, P, C, V> {
    type Out = Result<Filled<C, V>, EwiseError>;
    fn call<O: Binary<V = V>>(self) -> Self::Out {
        let (opts, prep) = (self.job.opts, self.job.prep);
        fast::ewise::<O, P, C>(
            self.pair,
            self.job.union,
            prep.shape.0,
            fast::PassRun::of(opts),
        )
    }
}

/// `dot` or `rowdot` as a [`PairJob`]: the sums and the loops that ran.
struct DotJob<'o> {
    rows: bool,
    opts: &'o Options,
}

impl PairJob for DotJob<'_> {
    type Out = Result<(ValueVec, (String, bool)), EwiseError>;
    fn call<V: Kind, P: Width, C: Width>(
        self,
        prep: &Prep<'_>,
        pair: Pair<'_, P, C, V>,
        chunks: &[Chunk],
        widths: (IndexWidth, IndexWidth),
    ) -> Self::Out {
        if V::TYPE == ValueType::Bool {
            return Err(EwiseError::ValueType(
                "dot products of bool values: convert with sparse-convert --dtype".into(),
            ));
        }
        let (rows, outer) = (self.rows, prep.shape.0);
        let dense = (prep.a.outer_dense, prep.b.outer_dense);
        if let Some((sums, desc)) =
            generated::run_dot(pair, (rows, outer, chunks), self.opts, dense)?
        {
            let sums = match rows {
                true => sums,
                // The chunks' sums in chunk order, as `fast::dot` adds them.
                false => vec![sums.into_iter().reduce(V::add).unwrap_or(V::ZERO)],
            };
            return Ok((V::wrap(sums), (desc.to_string(), true)));
        }
        let fast_kernel = format!(
            "ewise intersection mul {} {} -> {} {} fast {}",
            prep.name(&prep.a, widths),
            prep.name(&prep.b, widths),
            prep.out_name(),
            V::TYPE.name(),
            if rows { "rowdot" } else { "dot" }
        );
        let threads = self.opts.threads();
        let sums = if rows {
            V::wrap(fast::rowdot(pair, (outer, chunks), threads)?)
        } else {
            V::wrap(vec![fast::dot(pair, chunks, threads)])
        };
        Ok((sums, (fast_kernel, false)))
    }
}

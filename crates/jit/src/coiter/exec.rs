//! Running generated co-iteration code: operands as levels over their arrays (any widths,
//! either operand's own), the argument struct the code reads, the kernel cache, the fill
//! kernel run per range inside the fast path's one-pass pipeline (`ewise::one_pass`: each
//! range merged into a thread's buffer and copied into C in range order), and the count
//! kernel run on its own (its counts checked against the fill's by the tests).

use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::Arc;

use sptk_tensor::{big_zeroed, Index, IndexVec, IndexWidth, Value};

use super::desc::{CoDesc, Operand, Phase};
use super::emit::arg;
use crate::code::{Cache, Code};
use crate::desc::{Isa, Real};
use crate::ewise::{lock, one_pass, split, EwiseError, EwiseOp, Filled, PassRun, Room};
use crate::run::{map_chunks, Chunk};
use crate::spgemm::Semiring;
use crate::KernelError;

/// An index array as generated code reads it: address, length and width.
#[derive(Clone, Copy)]
pub(crate) struct Ix<'a> {
    ptr: *const u8,
    len: usize,
    width: IndexWidth,
    _life: PhantomData<&'a [u8]>,
}

// SAFETY: an `Ix` is a shared view of an immutable slice (`&'a [T]` is Send + Sync).
unsafe impl Send for Ix<'_> {}
// SAFETY: as above.
unsafe impl Sync for Ix<'_> {}

impl<'a> Ix<'a> {
    /// A view of `v` (`None` for 2-bit packed arrays, which no operand here has).
    pub(crate) fn of_vec(v: &'a IndexVec) -> Option<Ix<'a>> {
        Some(match v {
            IndexVec::U8(b) => Ix::of_slice::<u8>(b),
            IndexVec::U16(b) => Ix::of_slice::<u16>(b),
            IndexVec::U32(b) => Ix::of_slice::<u32>(b),
            IndexVec::U64(b) => Ix::of_slice::<u64>(b),
            IndexVec::Packed2 { .. } => return None,
        })
    }

    /// A view of `s`, an array of `u8`, `u16`, `u32` or `u64` (others: empty).
    pub(crate) fn of_slice<C: Index>(s: &'a [C]) -> Ix<'a> {
        let t = TypeId::of::<C>();
        let width = if t == TypeId::of::<u8>() {
            IndexWidth::W8
        } else if t == TypeId::of::<u16>() {
            IndexWidth::W16
        } else if t == TypeId::of::<u32>() {
            IndexWidth::W32
        } else if t == TypeId::of::<u64>() {
            IndexWidth::W64
        } else {
            return Ix {
                ptr: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
                len: 0,
                width: IndexWidth::W64,
                _life: PhantomData,
            };
        };
        Ix {
            ptr: s.as_ptr().cast(),
            len: s.len(),
            width,
            _life: PhantomData,
        }
    }

    /// Element `i`, zero-extended, or `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<u64> {
        if i >= self.len {
            return None;
        }
        // SAFETY: `ptr` holds `len` elements of `width` (made from such a slice, whose
        // element type the width names), and `i < len`.
        Some(unsafe {
            match self.width {
                IndexWidth::W8 | IndexWidth::W2 => u64::from(*self.ptr.add(i)),
                IndexWidth::W16 => u64::from(*self.ptr.cast::<u16>().add(i)),
                IndexWidth::W32 => u64::from(*self.ptr.cast::<u32>().add(i)),
                IndexWidth::W64 => *self.ptr.cast::<u64>().add(i),
            }
        })
    }
}

/// One operand's levels over its arrays, as the kernel reads them (see [`Operand`]).
#[derive(Clone, Copy)]
pub(crate) struct Levels<'a> {
    /// The levels and widths (widths as the arrays are).
    pub desc: Operand,
    /// Compressed outer level: its coordinates; COO: level 0's coordinates (interleaved
    /// with level 1's for AoS).
    outer: Option<Ix<'a>>,
    /// The inner level's positions (none for COO).
    pos: Option<Ix<'a>>,
    /// The inner level's coordinates (COO AoS: the interleaved array).
    crd: Ix<'a>,
    /// The values' address and count.
    val: (*const u8, usize),
}

// SAFETY: a view of immutable slices, as `Ix`.
unsafe impl Send for Levels<'_> {}
// SAFETY: as above.
unsafe impl Sync for Levels<'_> {}

/// The kernel's value type of `V`, if generated code computes in it (f32, f64).
fn real_of<V: Value>() -> Option<Real> {
    Real::of(V::TYPE)
}

impl<'a> Levels<'a> {
    /// Levels over arrays: `desc` says which are used (`outer` for compressed and COO
    /// outer levels, `pos` for compressed inner ones). Widths are taken from the arrays.
    ///
    /// # Errors
    /// An array the levels need is missing, or the coordinate arrays' widths differ.
    pub(crate) fn new<V: Value>(
        mut desc: Operand,
        (outer, pos, crd): (Option<Ix<'a>>, Option<Ix<'a>>, Ix<'a>),
        values: &'a [V],
    ) -> Result<Levels<'a>, EwiseError> {
        use super::desc::LevelKind::*;
        let missing = |w: &str| EwiseError::Convert(format!("generated code: {w} missing"));
        let needs_outer = desc.outer.kind == Compressed;
        let needs_pos = desc.inner.kind == Compressed;
        if needs_outer && outer.is_none() {
            return Err(missing("the outer coordinates"));
        }
        if needs_pos && pos.is_none() {
            return Err(missing("the positions"));
        }
        if let Some(o) = outer.filter(|_| needs_outer) {
            if o.width != crd.width {
                return Err(EwiseError::Convert(
                    "generated code: outer and inner coordinates of different widths".into(),
                ));
            }
        }
        desc.crd = crd.width;
        if let Some(p) = pos.filter(|_| needs_pos) {
            desc.pos = p.width;
        }
        Ok(Levels {
            desc,
            outer: outer.filter(|_| needs_outer),
            pos: pos.filter(|_| needs_pos),
            crd,
            val: (values.as_ptr().cast(), values.len()),
        })
    }

    /// Stored entries the inner positions are clamped to.
    fn entries(&self) -> usize {
        let vals = self.val.1;
        match (self.desc.runs(), self.desc.soa) {
            (false, _) => self.crd.len.min(vals),
            (true, false) => (self.crd.len / 2).min(vals),
            (true, true) => self.crd.len.min(self.outer.map_or(0, |o| o.len)).min(vals),
        }
    }

    /// Number of outer positions.
    fn outer_len(&self) -> usize {
        let below = self.pos.map_or(0, |p| p.len.saturating_sub(1));
        match (self.desc.outer.kind, self.desc.runs()) {
            (_, true) => self.entries(),
            (super::desc::LevelKind::Dense, _) => below,
            _ => below.min(self.outer.map_or(0, |o| o.len)),
        }
    }

    /// The outer coordinate at position `q < outer_len()`.
    fn coord(&self, q: usize) -> u64 {
        match (self.desc.outer.kind, self.desc.runs(), self.desc.soa) {
            (super::desc::LevelKind::Dense, _, _) => q as u64,
            (_, true, false) => self
                .outer
                .and_then(|o| o.get(q.saturating_mul(2)))
                .unwrap_or(u64::MAX),
            _ => self.outer.and_then(|o| o.get(q)).unwrap_or(u64::MAX),
        }
    }

    /// The outer positions whose coordinates lie in `lo..hi`.
    pub(crate) fn positions(&self, lo: usize, hi: usize) -> (usize, usize) {
        let n = self.outer_len();
        if self.desc.outer.kind == super::desc::LevelKind::Dense {
            return (lo.min(n), hi.min(n));
        }
        let first = |x: usize| {
            let (mut l, mut h) = (0, n);
            while l < h {
                let m = l + (h - l) / 2;
                if self.coord(m) < x as u64 {
                    l = m + 1;
                } else {
                    h = m;
                }
            }
            l
        };
        (first(lo), first(hi))
    }

    /// Entries stored before outer coordinate `i` (the weight that balances chunks).
    pub(crate) fn entries_before(&self, i: usize) -> u64 {
        let q = self.positions(0, i).1;
        match self.pos {
            Some(p) if !self.desc.runs() => p.get(q).unwrap_or(0),
            _ => q as u64,
        }
    }

    fn args(&self, (lo, hi): Chunk) -> SideArgs {
        let (q0, q1) = self.positions(lo, hi);
        let null = std::ptr::null();
        SideArgs {
            outer: self.outer.map_or(null, |o| o.ptr),
            pos: self.pos.map_or(null, |p| p.ptr),
            crd: self.crd.ptr,
            val: self.val.0,
            q0: q0 as u64,
            q1: q1 as u64,
            n: self.entries() as u64,
            _pad: 0,
        }
    }
}

/// One operand's fields of [`CoArgs`].
#[repr(C)]
struct SideArgs {
    outer: *const u8,
    pos: *const u8,
    crd: *const u8,
    val: *const u8,
    q0: u64,
    q1: u64,
    n: u64,
    _pad: u64,
}

/// What one call of generated co-iteration code reads (offsets: `emit::arg`).
#[repr(C)]
struct CoArgs {
    a: SideArgs,
    b: SideArgs,
    lo: u64,
    hi: u64,
    counts: *mut u64,
    out_crd: *mut u8,
    out_val: *mut u8,
    cap: u64,
}

const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(CoArgs, a) == arg::A as usize);
    assert!(offset_of!(CoArgs, b) == arg::B as usize);
    assert!(std::mem::size_of::<SideArgs>() == arg::SIDE as usize);
    assert!(offset_of!(SideArgs, outer) == arg::OUTER as usize);
    assert!(offset_of!(SideArgs, pos) == arg::POS as usize);
    assert!(offset_of!(SideArgs, crd) == arg::CRD as usize);
    assert!(offset_of!(SideArgs, val) == arg::VAL as usize);
    assert!(offset_of!(SideArgs, q0) == arg::Q0 as usize);
    assert!(offset_of!(SideArgs, q1) == arg::Q1 as usize);
    assert!(offset_of!(SideArgs, n) == arg::N as usize);
    assert!(offset_of!(CoArgs, lo) == arg::LO as usize);
    assert!(offset_of!(CoArgs, hi) == arg::HI as usize);
    assert!(offset_of!(CoArgs, counts) == arg::COUNTS as usize);
    assert!(offset_of!(CoArgs, out_crd) == arg::OUT_CRD as usize);
    assert!(offset_of!(CoArgs, out_val) == arg::OUT_VAL as usize);
    assert!(offset_of!(CoArgs, cap) == arg::CAP as usize);
};

/// The signature of generated co-iteration code (System V: `rdi` the arguments); returns
/// the chunk's count (count phase) or entries written (fill), `u64::MAX` on refusal.
#[cfg(target_arch = "x86_64")]
type Entry = unsafe extern "sysv64" fn(*const CoArgs) -> u64;
/// Never called: co-iteration code is generated for x86-64 only (the generator refuses
/// NEON), so off x86-64 none is mapped.
#[cfg(not(target_arch = "x86_64"))]
type Entry = unsafe extern "C" fn(*const CoArgs) -> u64;

/// A co-iteration kernel mapped executable.
pub struct CoKernel {
    desc: CoDesc,
    code: Code,
}

impl CoKernel {
    /// The description.
    pub fn desc(&self) -> &CoDesc {
        &self.desc
    }

    /// The machine code.
    pub fn code(&self) -> &[u8] {
        self.code.bytes()
    }
}

/// The kernel of `desc`, generated once per process.
///
/// # Errors
/// The instruction set is not on this CPU, no cursor reads the levels, or the code pages
/// cannot be mapped.
pub fn kernel(desc: &CoDesc) -> Result<Arc<CoKernel>, KernelError> {
    static CACHE: Cache<CoDesc, CoKernel> = Cache::new();
    CACHE.get(desc, |d| {
        let code = crate::code::map_generated(d.isa, d, || super::emit::generate(d))?;
        Ok(CoKernel { desc: *d, code })
    })
}

/// How a co-iteration runs: the operation, its set, the instruction set, threads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan<'a> {
    /// The operation.
    pub op: EwiseOp,
    /// Union (else intersection).
    pub union: bool,
    /// The instruction set (AVX2 or AVX-512).
    pub isa: Isa,
    /// Threads.
    pub threads: usize,
    /// Write C's pages once before the fill (timed as allocation).
    pub first_touch_apart: bool,
    /// Arrays of earlier results to build C in ([`crate::ewise::Options::pool`]).
    pub pool: Option<&'a sptk_tensor::BufferPool>,
    /// The width of C's positions asked for ([`crate::ewise::Options::pos_width`]).
    pub pos_width: Option<IndexWidth>,
}

/// The kernel of `plan`'s operation on `a` and `b` in `phase`, with C's coordinates of
/// type `C` and values of type `V`, as a callable entry.
///
/// # Errors
/// No kernel for the pair or the value type (`EwiseError::Convert`: the fast path should
/// run).
fn entry<C: Index, V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    phase: Phase,
) -> Result<(Arc<CoKernel>, Entry), EwiseError> {
    let value = real_of::<V>().ok_or_else(|| {
        EwiseError::Convert(format!("no generated code for {} values", V::TYPE.name()))
    })?;
    let desc = CoDesc {
        union: plan.union,
        op: plan.op,
        a: a.desc,
        b: b.desc,
        out_crd: Ix::of_slice::<C>(&[]).width,
        value,
        isa: plan.isa,
        phase,
    };
    let k = kernel(&desc).map_err(|e| EwiseError::Convert(format!("generated code: {e}")))?;
    // SAFETY: the code was generated for `Entry`'s signature (emit.rs: System V, `rdi` the
    // arguments, the result in `rax`) and mapped executable on a CPU with its ISA
    // (`kernel` checks `Isa::available`).
    let f = unsafe { std::mem::transmute::<*const u8, Entry>(k.code.entry()) };
    Ok((k, f))
}

/// The arguments of one call over the outer coordinates `range`.
fn call_args(
    (a, b): (&Levels<'_>, &Levels<'_>),
    range: Chunk,
    counts: *mut u64,
    out: (*mut u8, *mut u8),
    cap: usize,
) -> CoArgs {
    CoArgs {
        a: a.args(range),
        b: b.args(range),
        lo: range.0 as u64,
        hi: range.1 as u64,
        counts,
        out_crd: out.0,
        out_val: out.1,
        cap: cap as u64,
    }
}

/// `op` over the union or intersection of `a` and `b` by generated code, over the outer
/// coordinates `0..outer`, in one pass: the fill kernel merges each range of the fast
/// path's pipeline (`ewise::one_pass`) into room for its bound, storing each outer
/// coordinate's count. Returns C's counts, ranges, offsets, coordinates (of type `C`) and
/// values, as the fast path does; the kernel's description comes back with them.
///
/// # Errors
/// No kernel for the pair or the value type (`EwiseError::Convert`: the fast path should
/// run), memory for C, or a kernel refusing a range (arrays that contradict their counts).
pub(crate) fn ewise_levels<C: Index, V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    outer: usize,
) -> Result<(Filled<C, V>, CoDesc), EwiseError> {
    let (k, fill) = entry::<C, V>(a, b, plan, Phase::Fill)?;
    let filled = one_pass(
        |i| (a.entries_before(i), b.entries_before(i)),
        (plan.union, outer),
        PassRun {
            threads: plan.threads,
            first_touch_apart: plan.first_touch_apart,
            pool: plan.pool,
            pos_width: plan.pos_width,
        },
        |range, counts: &mut [u64], (oc, ov): Room<'_, C, V>| {
            let cap = oc.len().min(ov.len());
            if counts.len() != range.1.checked_sub(range.0)? {
                return None;
            }
            let out = (oc.as_mut_ptr().cast::<u8>(), ov.as_mut_ptr().cast::<u8>());
            let x = call_args((a, b), range, counts.as_mut_ptr(), out, cap);
            // SAFETY: the code reads A's and B's arrays at outer positions `q0..q1`
            // (computed inside them by `Levels::positions`) and inner positions clamped to
            // `n` (the stored entries, within the coordinate and value arrays:
            // `Levels::entries`). It writes `counts[row - lo]` only for `row - lo < hi -
            // lo`, the slice's length (checked above), and C's coordinates and values at
            // `k` only while `k < k_end`, where `k_end`, the row's start plus the row's
            // bound, is checked against `cap` (both rooms' length) before the row
            // (emit.rs). `Levels` views immutable slices alive for this call.
            let k = unsafe { fill(&x) };
            usize::try_from(k).ok().filter(|&k| k <= cap)
        },
    )?;
    Ok((filled, k.desc))
}

/// The count kernel's entries per outer coordinate `0..outer` (the count phase of the
/// same description as the fill, run over `chunks`).
///
/// # Errors
/// As [`ewise_levels`]; a kernel refusing a chunk.
pub(crate) fn count_levels<V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    (outer, chunks): (usize, &[Chunk]),
) -> Result<Vec<u64>, EwiseError> {
    let (_k, count) = entry::<u64, V>(a, b, plan, Phase::Count)?;
    let mut counts: Vec<u64> = big_zeroed(outer).map_err(|e| EwiseError::Alloc(e.to_string()))?;
    let count_pieces = split(&mut counts, chunks.iter().map(|&(lo, hi)| hi - lo));
    let totals = map_chunks(chunks, plan.threads, |c, range| {
        let mut piece = lock(&count_pieces[c]);
        if piece.len() != range.1 - range.0 {
            return u64::MAX;
        }
        let none = std::ptr::null_mut();
        let x = call_args((a, b), range, piece.as_mut_ptr(), (none, none), 0);
        // SAFETY: reads as in the fill ([`ewise_levels`]); writes `counts[row - lo]` only
        // for `row - lo < hi - lo`, the piece's length (checked above), and nothing of C.
        unsafe { count(&x) }
    });
    drop(count_pieces);
    if totals.contains(&u64::MAX) {
        return Err(EwiseError::Convert(
            "generated code refused a chunk in the count phase".into(),
        ));
    }
    Ok(counts)
}

/// The `dot` kernel's sum of each chunk (`sum a_ij * b_ij` over the intersection, from
/// zero in storage order), in chunk order; the caller adds them in that order, as the
/// monomorphized `dot` does.
///
/// # Errors
/// As [`ewise_levels`]; a kernel refusing a chunk.
pub(crate) fn dot_levels<V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    chunks: &[Chunk],
) -> Result<(Vec<V>, CoDesc), EwiseError> {
    let (k, dot) = entry::<u64, V>(a, b, plan, Phase::Dot)?;
    let sums = map_chunks(chunks, plan.threads, |_, range| {
        let mut sum = V::default();
        let none = std::ptr::null_mut();
        let at = (&mut sum as *mut V).cast::<u8>();
        let x = call_args((a, b), range, none, (none.cast(), at), 0);
        // SAFETY: reads as in the fill ([`ewise_levels`]); writes one value at `out_val`
        // (`sum`, a `V`, the kernel's value type) and nothing else.
        let r = unsafe { dot(&x) };
        (r != u64::MAX).then_some(sum)
    });
    let sums: Option<Vec<V>> = sums.into_iter().collect();
    match sums {
        Some(s) if s.len() == chunks.len() => Ok((s, k.desc)),
        _ => Err(EwiseError::Convert(
            "generated code refused a chunk of the dot product".into(),
        )),
    }
}

/// The `rowdot` kernel's `sum_j a_ij * b_ij` for every outer coordinate `0..outer`, from
/// zero in storage order (zero where the operands' rows do not meet), run over `chunks`.
///
/// # Errors
/// As [`ewise_levels`]; a kernel refusing a chunk.
pub(crate) fn rowdot_levels<V: Value>(
    a: &Levels<'_>,
    b: &Levels<'_>,
    plan: Plan<'_>,
    (outer, chunks): (usize, &[Chunk]),
) -> Result<(Vec<V>, CoDesc), EwiseError> {
    let (k, rowdot) = entry::<u64, V>(a, b, plan, Phase::RowDot)?;
    let mut out: Vec<V> = big_zeroed(outer).map_err(|e| EwiseError::Alloc(e.to_string()))?;
    let pieces = split(&mut out, chunks.iter().map(|&(lo, hi)| hi - lo));
    let done = map_chunks(chunks, plan.threads, |c, range| {
        let Some(piece) = pieces.get(c) else {
            return false;
        };
        let mut piece = lock(piece);
        if piece.len() != range.1 - range.0 {
            return false;
        }
        let none = std::ptr::null_mut();
        let at = piece.as_mut_ptr().cast::<u8>();
        let x = call_args((a, b), range, none, (none.cast(), at), 0);
        // SAFETY: reads as in the fill ([`ewise_levels`]); writes `out_val[row - lo]` only
        // for `row - lo < hi - lo`, the piece's length (checked above; emit.rs refuses a
        // row outside the chunk), values of `V`, the kernel's value type.
        unsafe { rowdot(&x) != u64::MAX }
    });
    drop(pieces);
    if done.len() != chunks.len() || done.contains(&false) {
        return Err(EwiseError::Convert(
            "generated code refused a chunk of the row dot products".into(),
        ));
    }
    Ok((out, k.desc))
}

/// The signature of the masked dot form's code (`mask_dot.rs`).
#[cfg(target_arch = "x86_64")]
type MaskDotEntry = unsafe extern "sysv64" fn(*const super::mask_dot::MaskDotArgs) -> u64;
/// Never called: the masked dot form is generated for x86-64 only (the generator refuses
/// NEON), so off x86-64 none is mapped.
#[cfg(not(target_arch = "x86_64"))]
type MaskDotEntry = unsafe extern "C" fn(*const super::mask_dot::MaskDotArgs) -> u64;

/// SpGEMM's masked dot form by generated code, for one coordinate width and one semiring:
/// `plus_times`, `min_plus`, `max_times` on one value type (f32, f64), `plus_pair` and
/// `lor_land` on the pattern; one call per row of C.
pub struct MaskDot {
    kernel: Arc<CoKernel>,
    entry: MaskDotEntry,
}

impl MaskDot {
    /// The kernel for coordinates `C`, `semiring` on values `V` (any type for the pattern
    /// semirings, which read none) on `isa`, generated once per process.
    ///
    /// # Errors
    /// A valued semiring on values other than f32 / f64, coordinates other than 32 / 64
    /// bits, an ISA this CPU lacks, code that cannot be mapped.
    pub fn new<C: Index, V: Value>(isa: Isa, semiring: Semiring) -> Result<MaskDot, KernelError> {
        let (op, phase) = match semiring {
            Semiring::PlusTimes => (EwiseOp::Mul, Phase::MaskDot),
            Semiring::MinPlus => (EwiseOp::Add, Phase::MaskMin),
            Semiring::MaxTimes => (EwiseOp::Mul, Phase::MaskMax),
            Semiring::PlusPair => (EwiseOp::Mul, Phase::MaskCount),
            Semiring::LorLand => (EwiseOp::Mul, Phase::MaskAny),
        };
        let value = match phase.reads_values() {
            true => real_of::<V>().ok_or_else(|| {
                KernelError::Unsupported(format!(
                    "no masked dot form of {semiring} on {} values",
                    V::TYPE.name()
                ))
            })?,
            // The pattern: the description names a type no code reads.
            false => Real::F64,
        };
        let crd = Ix::of_slice::<C>(&[]).width;
        if !matches!(crd, IndexWidth::W32 | IndexWidth::W64) {
            return Err(KernelError::Unsupported(
                "the masked dot form reads 32- or 64-bit coordinates".into(),
            ));
        }
        let side = Operand::named("csr", IndexWidth::W64, crd)
            .ok_or_else(|| KernelError::Unsupported("no csr operand".into()))?;
        let desc = CoDesc {
            union: false,
            op,
            a: side,
            b: side,
            out_crd: crd,
            value,
            isa,
            phase,
        };
        let kernel = kernel(&desc)?;
        // SAFETY: the code was generated for `MaskDotEntry`'s signature (mask_dot.rs: System
        // V, `rdi` the arguments, the result in `rax`) and mapped executable on a CPU with
        // its ISA (`kernel` checks `Isa::available`).
        let entry = unsafe { std::mem::transmute::<*const u8, MaskDotEntry>(kernel.code.entry()) };
        Ok(MaskDot { kernel, entry })
    }

    /// The description.
    pub fn desc(&self) -> &CoDesc {
        &self.kernel.desc
    }

    /// Row `i` of `C<M> = A (+).(x) B` by dot products: `a` A's row, `mask` the mask's row
    /// (ascending columns), `b` B by columns (positions, rows, values), written to `out`
    /// (room for the mask's row); the entries written, or `None` where the types are not
    /// the kernel's or the code refused the row (the room too small).
    pub fn row<C: Index, I: 'static, O: 'static>(
        &self,
        (ak, av): (&[C], &[I]),
        mask: &[C],
        (bp, bk, bv): (&[u64], &[C], &[I]),
        (oc, ov): (&mut [C], &mut [O]),
    ) -> Option<usize> {
        let d = self.kernel.desc;
        let types = match d.phase.reads_values() {
            // Values of the description's type in and out.
            true => {
                let value = match TypeId::of::<I>() {
                    t if t == TypeId::of::<f64>() => Some(Real::F64),
                    t if t == TypeId::of::<f32>() => Some(Real::F32),
                    _ => None,
                };
                value == Some(d.value) && TypeId::of::<O>() == TypeId::of::<I>()
            }
            // The pattern in; counts (`plus_pair`) or `true` (`lor_land`) out.
            false => {
                let out = match d.phase {
                    Phase::MaskAny => TypeId::of::<bool>(),
                    _ => TypeId::of::<i64>(),
                };
                TypeId::of::<I>() == TypeId::of::<()>() && TypeId::of::<O>() == out
            }
        };
        if Ix::of_slice::<C>(&[]).width != d.out_crd || !types {
            return None;
        }
        let cap = oc.len().min(ov.len());
        let args = super::mask_dot::MaskDotArgs {
            a_crd: ak.as_ptr().cast(),
            a_val: av.as_ptr().cast(),
            a_len: ak.len().min(av.len()) as u64,
            mask: mask.as_ptr().cast(),
            mask_len: mask.len() as u64,
            b_pos: bp.as_ptr(),
            b_crd: bk.as_ptr().cast(),
            b_val: bv.as_ptr().cast(),
            b_rows: bp.len().saturating_sub(1) as u64,
            b_n: bk.len().min(bv.len()) as u64,
            out_crd: oc.as_mut_ptr().cast(),
            out_val: ov.as_mut_ptr().cast(),
            cap: cap as u64,
        };
        // SAFETY: the kernel was made for `C`'s width and values of `I` = `O` (checked
        // above: f32 or f64, the description's), or on the pattern (no value read, `i64`
        // counts written to `O` = `i64`, or a byte 1 to `O` = `bool`); it reads A's row below `a_len`, the mask below
        // `mask_len`, B's positions at `j` and `j + 1` for `j < b_rows` (`bp` holds
        // `b_rows + 1`), B's coordinates and values below `b_n` (positions clamped to it),
        // and writes C's row below `cap`, the room of both output slices (mask_dot.rs); all
        // are live slices, not written by anyone else during the call.
        let n = unsafe { (self.entry)(&args) };
        usize::try_from(n).ok().filter(|&n| n <= cap)
    }
}

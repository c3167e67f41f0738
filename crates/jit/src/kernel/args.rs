//! The argument structs generated code reads (one per kernel signature), laid out as
//! `x86::at` says and checked against it when compiled, and the signatures the run code
//! calls generated code through.

use sptk_tensor::IndexVec;

use std::marker::PhantomData;
use std::mem::size_of;

use super::Kernel;
use crate::code::{Executor, Runner};
use crate::reference::RealValue;
use crate::run::{run_chunks, Chunk};

/// The fields every argument struct starts with, in this order: the arrays, the outer
/// positions `begin..end` of one call, and alpha and beta.
#[repr(C)]
pub(crate) struct Head {
    pub(super) pos: *const u8,
    pub(super) crd: *const u8,
    pub(super) val: *const u8,
    pub(super) x: *const u8,
    pub(super) y: *mut u8,
    pub(super) begin: u64,
    pub(super) end: u64,
    pub(super) alpha: u64,
    pub(super) beta: u64,
    pub(super) beta_zero: u64,
}

impl Head {
    /// The head of one call over the outer positions `begin..end` (the values read from
    /// `vals`: [`crate::half::values_ptr`] replaces `val` where they are stored narrower).
    pub(super) fn new<T: RealValue>(
        (pos, crd): (&IndexVec, &IndexVec),
        vals: &[T],
        x: &[T],
        y: *mut T,
        (begin, end): (usize, usize),
        (alpha, beta): (T, T),
    ) -> Head {
        Head {
            pos: index_ptr(pos),
            crd: index_ptr(crd),
            val: vals.as_ptr().cast(),
            x: x.as_ptr().cast(),
            y: y.cast(),
            begin: begin as u64,
            end: end as u64,
            alpha: bits(alpha),
            beta: bits(beta),
            beta_zero: u64::from(beta == T::ZERO),
        }
    }
}

/// The arguments of a generated SpMV kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
pub(crate) struct SpmvArgs {
    pub(super) head: Head,
    /// The outer level's coordinates (DCSR, DCSC), or null.
    pub(super) outer: *const u8,
    /// ELL: the distance between slots of one row (the row count).
    pub(super) stride: u64,
    /// Dot-product kernels: 0 where x is read near each row's diagonal position (then it
    /// stays in cache and prefetching it ahead only costs), else 1.
    pub(super) x_prefetch: u64,
}

/// The arguments of a generated SpMM kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
pub(crate) struct SpmmArgs {
    pub(super) head: Head,
    pub(super) k: u64,
    /// A's rows and columns: edge blocks stop at them.
    pub(super) rows: u64,
    pub(super) cols: u64,
    /// The outer level's coordinates (DCSR, DCSC; COO:soa's second array), or null.
    pub(super) outer: *const u8,
    /// n:m: slots per row.
    pub(super) stride: u64,
    /// AVX-512: the lanes of the last, partial vector of a row of X or Y (`k % lanes` ones).
    pub(super) tail_mask: u64,
}

// The generated code reads the argument structs at the offsets of `x86::at`: checked
// when compiled, so a field added or moved cannot leave a kernel reading the wrong one.
const _: () = {
    use crate::x86::at;
    use std::mem::offset_of;
    macro_rules! at {
        ($s:ty, $($field:ident = $off:expr),* $(,)?) => {
            $(assert!(offset_of!($s, $field) == $off as usize);)*
        };
    }
    at!(
        Head,
        pos = at::POS,
        crd = at::CRD,
        val = at::VAL,
        x = at::X,
        y = at::Y
    );
    at!(
        Head,
        begin = at::BEGIN,
        end = at::END,
        alpha = at::ALPHA,
        beta = at::BETA
    );
    at!(Head, beta_zero = at::BETA_ZERO);
    at!(SpmvArgs, head = 0, outer = at::OUTER, stride = at::STRIDE);
    at!(SpmvArgs, x_prefetch = at::X_PREFETCH);
    at!(
        SpmmArgs,
        head = 0,
        k = at::K,
        rows = at::ROWS,
        cols = at::COLS
    );
    at!(
        SpmmArgs,
        outer = at::MM_OUTER,
        stride = at::MM_STRIDE,
        tail_mask = at::TAIL_MASK
    );
    assert!(std::mem::size_of::<Head>() == at::BETA_ZERO as usize + 8);
    assert!(std::mem::size_of::<SpmvArgs>() == at::X_PREFETCH as usize + 8);
    assert!(std::mem::size_of::<SpmmArgs>() == at::TAIL_MASK as usize + 8);
};

/// Generated code, entered with the address of its argument struct `A` in `rdi`: the
/// System V calling convention, whatever the host's default.
#[cfg(target_arch = "x86_64")]
type EntryFn<A> = unsafe extern "sysv64" fn(*const A);
/// Generated code, entered with the address of its argument struct `A` in `x0` (AAPCS64):
/// on AArch64, NEON kernels; elsewhere never called, since this CPU runs neither an x86-64
/// instruction set nor NEON and [`Kernel::compile`](crate::Kernel::compile) refuses before
/// any code is mapped.
#[cfg(not(target_arch = "x86_64"))]
type EntryFn<A> = unsafe extern "C" fn(*const A);

/// A kernel's code as a function of its argument struct `A` ([`SpmvArgs`] or
/// [`SpmmArgs`]), or the executor that runs its calls instead of this CPU.
pub(super) enum Entry<'k, A> {
    /// Called on this CPU.
    Native(EntryFn<A>),
    /// Handed to an executor (the emulation harness), as the bytes of `A`.
    Recorded(&'k dyn Executor, PhantomData<fn(*const A)>),
}

impl<A> Clone for Entry<'_, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Entry<'_, A> {}

impl<'k, A> Entry<'k, A> {
    /// The entry of `kernel`'s code.
    ///
    /// # Safety
    /// The code was generated for the signature taking `A`: an SpMV description for
    /// [`SpmvArgs`], an SpMM one for [`SpmmArgs`].
    pub(super) unsafe fn of(kernel: &'k Kernel) -> Entry<'k, A> {
        match kernel.code.runner() {
            Runner::Native(p) => {
                // SAFETY: the caller's assertion: the code at this address takes a pointer
                // to `A`; it was mapped executable by `Kernel::compile` on a CPU that runs
                // it.
                Entry::Native(unsafe { std::mem::transmute::<*const u8, EntryFn<A>>(p) })
            }
            Runner::Recorded(exec) => Entry::Recorded(exec, PhantomData),
        }
    }

    /// One call of the code.
    ///
    /// # Safety
    /// `args` describe arrays the code may read (and write) in full: a validated tensor of
    /// the kernel's description, dense operands of the lengths the code reads at the
    /// tensor's coordinates, and outputs no other thread writes at the same places.
    pub(super) unsafe fn call(&self, args: &A) {
        match self {
            Entry::Native(f) => {
                // Instructions fetched after the code was written (code.rs).
                #[cfg(target_arch = "aarch64")]
                dynasmrt::cache_control::prepare_for_execution(&[]);
                // SAFETY: the caller's assertion.
                unsafe { f(args) }
            }
            Entry::Recorded(exec, _) => {
                // SAFETY: `A` is SpmvArgs or SpmmArgs, repr(C) structs of 8-byte fields
                // with no padding (their sizes are checked above): plain bytes.
                let bytes = unsafe {
                    std::slice::from_raw_parts((args as *const A).cast::<u8>(), size_of::<A>())
                };
                exec.call(bytes);
            }
        }
    }

    /// One call per chunk of `bounds` (the outer positions it runs), on `threads` threads,
    /// with the arguments `args` makes of the chunk.
    ///
    /// # Safety
    /// As [`Entry::call`] for the arguments of every chunk; chunks running at once write
    /// disjoint outputs.
    pub(super) unsafe fn run_chunks(
        &self,
        bounds: &[Chunk],
        threads: usize,
        args: impl Fn(Chunk) -> A + Sync,
    ) {
        run_chunks(bounds, threads, |_, range| {
            // SAFETY: the caller's assertion.
            unsafe { self.call(&args(range)) }
        });
    }
}

/// The bits of an f32 or f64 in the low bytes of a u64, as the kernels read alpha and beta.
pub(super) fn bits<T: RealValue>(v: T) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: T is f32 or f64 (RealValue is implemented for those only): plain bytes, at
    // most 8 of them.
    let src = unsafe {
        std::slice::from_raw_parts((&v as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    b[..src.len()].copy_from_slice(src);
    u64::from_le_bytes(b)
}

/// The first byte of an index array, whatever its width.
pub(crate) fn index_ptr(v: &IndexVec) -> *const u8 {
    match v {
        IndexVec::Packed2 { bytes, .. } | IndexVec::U8(bytes) => bytes.as_ptr(),
        IndexVec::U16(b) => b.as_ptr().cast(),
        IndexVec::U32(b) => b.as_ptr().cast(),
        IndexVec::U64(b) => b.as_ptr().cast(),
    }
}

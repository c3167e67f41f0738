//! The argument structs generated code reads (one per kernel signature), laid out as
//! `x86::at` says and checked against it when compiled, and the signatures the run code
//! calls generated code through.

use sptk_tensor::IndexVec;

use crate::reference::RealValue;

/// The arguments of a generated SpMV kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
pub(crate) struct SpmvArgs {
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
    /// The outer level's coordinates (DCSR, DCSC), or null.
    pub(super) outer: *const u8,
    /// ELL: the distance between slots of one row (the row count).
    pub(super) stride: u64,
    /// Dot-product kernels: 0 where x is read near each row's diagonal position (then it
    /// stays in cache and prefetching it ahead only costs), else 1.
    pub(super) x_prefetch: u64,
}

/// The signature of generated SpMV code: the System V calling convention, whatever the
/// host's default (`rdi` holds the arguments' address).
#[cfg(target_arch = "x86_64")]
pub(super) type SpmvEntry = unsafe extern "sysv64" fn(*const SpmvArgs);
/// Never called: off x86-64 no instruction set is available, so
/// [`Kernel::compile`](crate::Kernel::compile) refuses before any code is mapped.
#[cfg(not(target_arch = "x86_64"))]
pub(super) type SpmvEntry = unsafe extern "C" fn(*const SpmvArgs);

impl SpmvArgs {
    /// The arguments of one call over the outer positions `begin..end`, with no outer
    /// coordinates and no stride (set those where a walk needs them).
    pub(super) fn new<T: RealValue>(
        (pos, crd): (&IndexVec, &IndexVec),
        vals: &[T],
        x: &[T],
        y: *mut T,
        (begin, end): (usize, usize),
        (alpha, beta): (T, T),
    ) -> SpmvArgs {
        SpmvArgs {
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
            outer: std::ptr::null(),
            stride: 0,
            x_prefetch: 1,
        }
    }
}

/// The arguments of a generated SpMM kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
pub(super) struct SpmmArgs {
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
    // The first ten fields, which both structs share.
    macro_rules! shared {
        ($s:ty) => {
            at!(
                $s,
                pos = at::POS,
                crd = at::CRD,
                val = at::VAL,
                x = at::X,
                y = at::Y
            );
            at!(
                $s,
                begin = at::BEGIN,
                end = at::END,
                alpha = at::ALPHA,
                beta = at::BETA
            );
            at!($s, beta_zero = at::BETA_ZERO);
        };
    }
    shared!(SpmvArgs);
    at!(
        SpmvArgs,
        outer = at::OUTER,
        stride = at::STRIDE,
        x_prefetch = at::X_PREFETCH
    );
    shared!(SpmmArgs);
    at!(
        SpmmArgs,
        k = at::K,
        rows = at::ROWS,
        cols = at::COLS,
        outer = at::MM_OUTER
    );
    at!(SpmmArgs, stride = at::MM_STRIDE, tail_mask = at::TAIL_MASK);
    assert!(std::mem::size_of::<SpmvArgs>() == at::X_PREFETCH as usize + 8);
    assert!(std::mem::size_of::<SpmmArgs>() == at::TAIL_MASK as usize + 8);
};

/// The signature of generated SpMM code, as [`SpmvEntry`].
#[cfg(target_arch = "x86_64")]
pub(super) type SpmmEntry = unsafe extern "sysv64" fn(*const SpmmArgs);
/// Never called, as [`SpmvEntry`] off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) type SpmmEntry = unsafe extern "C" fn(*const SpmmArgs);

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
pub(super) fn index_ptr(v: &IndexVec) -> *const u8 {
    match v {
        IndexVec::Packed2 { bytes, .. } | IndexVec::U8(bytes) => bytes.as_ptr(),
        IndexVec::U16(b) => b.as_ptr().cast(),
        IndexVec::U32(b) => b.as_ptr().cast(),
        IndexVec::U64(b) => b.as_ptr().cast(),
    }
}

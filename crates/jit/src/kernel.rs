//! Compiled kernels: made once per description, run on validated tensors whose
//! description matches, with every size checked at each call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sptk_tensor::{IndexVec, Tensor};

use crate::code::Code;
use crate::dense::{Dense, DenseMut, Order};
use crate::desc::{Desc, Format, Op, Real};
use crate::reference::{matrix, RealValue};
use crate::run::{
    chunk_entries, chunk_range, chunk_rows, combine, run_chunks, scatter_sum, zero_padded,
    zeroed_partials, SendPtr, ENTRY_CHUNKS as CHUNKS, SCATTER_CHUNKS,
};
use crate::KernelError;

/// The arguments of a generated SpMV kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
pub(crate) struct SpmvArgs {
    pos: *const u8,
    crd: *const u8,
    val: *const u8,
    x: *const u8,
    y: *mut u8,
    begin: u64,
    end: u64,
    alpha: u64,
    beta: u64,
    beta_zero: u64,
    /// The outer level's coordinates (DCSR, DCSC), or null.
    outer: *const u8,
    /// ELL: the distance between slots of one row (the row count).
    stride: u64,
    /// Dot-product kernels: 0 where x is read near each row's diagonal position (then it
    /// stays in cache and prefetching it ahead only costs), else 1.
    x_prefetch: u64,
}

#[cfg(target_arch = "x86_64")]
type SpmvEntry = unsafe extern "sysv64" fn(*const SpmvArgs);
/// Never called: off x86-64 no [`Kernel`] is made ([`generate`] makes no code).
#[cfg(not(target_arch = "x86_64"))]
type SpmvEntry = unsafe extern "C" fn(*const SpmvArgs);

impl SpmvArgs {
    /// The arguments of one call over the outer positions `begin..end`, with no outer
    /// coordinates and no stride (set those where a walk needs them).
    fn new<T: RealValue>(
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

/// True if, in a sample of the outer positions, nearly every coordinate lies within
/// [`NEAR`] of the outer coordinate's diagonal place in x (`i * x_len / outer_size`), as in
/// banded and block-diagonal matrices: x is then read in a sliding window that stays in
/// cache. Random columns are not near, and gain from x prefetched ahead.
fn x_near_diagonal(
    (pos, crd, outer): (&IndexVec, &IndexVec, Option<&IndexVec>),
    (outer_size, x_len): (usize, usize),
) -> bool {
    const SAMPLES: usize = 512;
    const PER_ROW: usize = 16;
    let n = pos.len().saturating_sub(1);
    if n == 0 || outer_size == 0 {
        return false;
    }
    let (mut near, mut all) = (0u64, 0u64);
    for s in 0..SAMPLES.min(n) {
        let q = s * n / SAMPLES.min(n);
        let i = outer.map_or(Some(q as u64), |o| o.get(q)).unwrap_or(0);
        let diagonal = (i as u128 * x_len as u128 / outer_size as u128) as u64;
        let (a, b) = (pos.get(q).unwrap_or(0), pos.get(q + 1).unwrap_or(0));
        for k in a..b.min(a + PER_ROW as u64) {
            let c = crd.get(k as usize).unwrap_or(0);
            near += u64::from(c.abs_diff(diagonal) <= NEAR);
            all += 1;
        }
    }
    all > 0 && near * 10 >= all * 9
}

/// See [`x_near_diagonal`]: 16384 elements (128 KiB of f64) either side.
const NEAR: u64 = 16384;

/// How a generated SpMV walks the matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// A dot product per outer coordinate (CSR x, CSC^T x); `true` if the outer level is
    /// compressed (DCSR, DCSC).
    Gather(bool),
    /// Products scattered into y per outer coordinate (CSR^T x, CSC x).
    Scatter(bool),
    /// Products per entry (COO); `true` for coordinates in two arrays (SoA).
    Entries(bool),
    /// Dot products per block row (BSR x, BSC^T x): `p` outputs and `q` products per
    /// block, value `(o, t)` at `o * so + t * st` inside a block.
    Blocks { p: u32, q: u32, so: u32, st: u32 },
    /// ELL rows, vectorized across rows; K slots per row.
    Ell(u32),
    /// n:m rows: n slots per group of m columns.
    Nm(u32, u32),
    /// ELL^T and n:m^T: each row's slots scatter `val * x[r]` into partials.
    RowScatter,
    /// Block products scattered into partials (BSR^T x, BSC x): `p` outputs and `q` x
    /// values per block, value `(o, t)` at `o * so + t * st` inside a block.
    BlockScatter { p: u32, q: u32, so: u32, st: u32 },
}

/// The arrays of a walk: positions, coordinates and outer coordinates.
type Operands<'a> = (&'a IndexVec, &'a IndexVec, Option<&'a IndexVec>);

impl Walk {
    /// The arrays this walk's kernel reads from `a`: (pos, crd, outer).
    fn operands<'a>(self, a: &'a Tensor, desc: &Desc) -> Result<Operands<'a>, KernelError> {
        let missing = || KernelError::Unsupported(format!("{desc}: arrays missing"));
        // (the level of pos and crd, the level of the outer coordinates). COO reads its
        // coordinates from `crd` (and `outer`, the second array of SoA); its positions only
        // size it.
        let (lvl, outer) = match self {
            // ELL has no positions: `pos` stands for nothing there and is never read.
            Walk::Ell(_) | Walk::Nm(..) | Walk::RowScatter => {
                let crd = a.crd(2).ok_or_else(missing)?;
                return Ok((crd, crd, None));
            }
            Walk::Blocks { .. } | Walk::BlockScatter { .. } => (1, None),
            Walk::Gather(c) | Walk::Scatter(c) => (1, c.then_some(0)),
            Walk::Entries(soa) => (0, soa.then_some(1)),
        };
        Ok((
            a.pos(lvl).ok_or_else(missing)?,
            a.crd(lvl).ok_or_else(missing)?,
            match outer {
                Some(l) => Some(a.crd(l).ok_or_else(missing)?),
                None => None,
            },
        ))
    }
}
/// The machine code of `desc`, or `Unsupported` where no generator handles it yet.
#[cfg(target_arch = "x86_64")]
fn generate(desc: &Desc) -> Result<Vec<u8>, KernelError> {
    crate::half::check(desc)?;
    let bytes = match walk(desc) {
        _ if desc.op == Op::Spmm => match mm_walk(desc) {
            Some(MmWalk::Gather { r, c, outer }) => crate::x86::spmm_gather(desc, (r, c), outer)?,
            Some(MmWalk::Scatter { r, c, outer }) => crate::x86::spmm_scatter(desc, (r, c), outer)?,
            Some(MmWalk::Ell(k)) => crate::x86::spmm_ell(desc, k)?,
            Some(MmWalk::Nm(n, m)) => crate::x86::spmm_nm(desc, n, m)?,
            Some(MmWalk::Entries { soa }) => crate::x86::spmm_coo(desc, soa)?,
            None => {
                return Err(KernelError::Unsupported(format!(
                    "no generated kernel for {desc} yet: the reference kernels \
                     (sptk_jit::reference) compute it"
                )))
            }
        },
        Some(Walk::Gather(outer)) => crate::x86::spmv_gather(desc, outer)?,
        Some(Walk::Scatter(outer)) => crate::x86::spmv_scatter(desc, outer)?,
        Some(Walk::Entries(soa)) => crate::x86::spmv_coo(desc, soa, desc.op == Op::SpmvT)?,
        Some(Walk::Ell(k)) => crate::x86::spmv_ell(desc, k)?,
        Some(Walk::Nm(n, m)) => crate::x86::spmv_nm(desc, n, m, false)?,
        Some(Walk::RowScatter) => match desc.format {
            Format::Ell(k) => crate::x86::spmv_ell_scatter(desc, k)?,
            Format::Nm(n, m) => crate::x86::spmv_nm(desc, n, m, true)?,
            _ => return Err(KernelError::Unsupported(desc.to_string())),
        },
        Some(Walk::BlockScatter { p, q, so, st }) => {
            crate::x86::spmv_block_scatter(desc, (p, q), (so, st))?
        }
        Some(Walk::Blocks { p, q, so, st }) => crate::x86::spmv_blocks(desc, (p, q), (so, st))?,
        _ => {
            return Err(KernelError::Unsupported(format!(
                "no generated kernel for {desc} yet: the reference kernels \
                 (sptk_jit::reference) compute it"
            )))
        }
    };
    Ok(bytes)
}

/// Off x86-64 no code is generated (no [`Isa`] is available there, so [`Kernel::compile`]
/// refuses first): the reference kernels compute everything.
#[cfg(not(target_arch = "x86_64"))]
fn generate(desc: &Desc) -> Result<Vec<u8>, KernelError> {
    Err(KernelError::Unsupported(format!(
        "no generated kernel for {desc} off x86-64: the reference kernels \
         (sptk_jit::reference) compute it"
    )))
}

fn walk(desc: &Desc) -> Option<Walk> {
    Some(match (desc.op, desc.format) {
        (Op::Spmv, Format::Csr) | (Op::SpmvT, Format::Csc) => Walk::Gather(false),
        (Op::Spmv, Format::Dcsr) | (Op::SpmvT, Format::Dcsc) => Walk::Gather(true),
        (Op::SpmvT, Format::Csr) | (Op::Spmv, Format::Csc) => Walk::Scatter(false),
        (Op::SpmvT, Format::Dcsr) | (Op::Spmv, Format::Dcsc) => Walk::Scatter(true),
        (Op::Spmv | Op::SpmvT, Format::Coo) => Walk::Entries(false),
        (Op::Spmv | Op::SpmvT, Format::CooSoa) => Walk::Entries(true),
        (Op::Spmv, Format::Bsr(r, c)) => Walk::Blocks {
            p: r,
            q: c,
            so: c,
            st: 1,
        },
        (Op::Spmv, Format::Ell(k)) => Walk::Ell(k),
        (Op::Spmv, Format::Nm(n, m)) => Walk::Nm(n, m),
        (Op::SpmvT, Format::Ell(_) | Format::Nm(..)) => Walk::RowScatter,
        (Op::SpmvT, Format::Bsr(r, c)) => Walk::BlockScatter {
            p: c,
            q: r,
            so: 1,
            st: c,
        },
        (Op::Spmv, Format::Bsc(r, c)) => Walk::BlockScatter {
            p: r,
            q: c,
            so: c,
            st: 1,
        },
        (Op::SpmvT, Format::Bsc(r, c)) => Walk::Blocks {
            p: c,
            q: r,
            so: 1,
            st: c,
        },
        _ => return None,
    })
}

/// A generated kernel.
pub struct Kernel {
    desc: Desc,
    code: Code,
    compile_time: Duration,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel({}, {} bytes)",
            self.desc,
            self.code.bytes().len()
        )
    }
}

impl Kernel {
    /// Generates the kernel of `desc`.
    ///
    /// # Errors
    /// The instruction set is not on this CPU, or no generator handles `desc` yet.
    pub fn compile(desc: &Desc) -> Result<Kernel, KernelError> {
        if !desc.isa.available() {
            return Err(KernelError::Isa(format!(
                "this CPU does not run {} code (kernel {desc})",
                desc.isa.name()
            )));
        }
        let start = Instant::now();
        let bytes = generate(desc)?;
        let code = Code::new(&bytes)
            .map_err(|e| KernelError::Alloc(format!("cannot map code pages: {e}")))?;
        Ok(Kernel {
            desc: *desc,
            code,
            compile_time: start.elapsed(),
        })
    }

    /// The description the kernel was generated for.
    pub fn desc(&self) -> &Desc {
        &self.desc
    }

    /// The machine code.
    pub fn code(&self) -> &[u8] {
        self.code.bytes()
    }

    /// The machine code as text, one instruction per line with its offset (Intel syntax).
    pub fn disassembly(&self) -> String {
        #[cfg(target_arch = "x86_64")]
        {
            crate::x86::disassemble(self.code.bytes())
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            String::new()
        }
    }

    /// The dimensions of `a` if this kernel was generated for it: a matrix of `T` whose
    /// encoding, widths and value type make this kernel's description.
    fn fits<T: RealValue>(&self, a: &Tensor) -> Result<(usize, usize), KernelError> {
        let dims = match self.desc.half {
            // f16 / bf16 values (the description below checks which) with f32 x and y.
            Some(_) if T::NAME == Real::F32.name() => crate::reference::dims(a)?,
            Some(_) => {
                return Err(KernelError::ValueType {
                    operand: "x and y",
                    expected: "f32",
                    found: T::NAME.into(),
                })
            }
            None => matrix::<T>(a)?,
        };
        let wanted = Desc::for_tensor(self.desc.op, a, self.desc.isa)?;
        if wanted != self.desc {
            return Err(KernelError::Unsupported(format!(
                "kernel {} cannot run on a tensor that needs {wanted}",
                self.desc
            )));
        }
        Ok(dims)
    }

    /// How long generating it took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// `y = alpha A x + beta y` (`beta == 0` overwrites `y`), or `A^T x` for an `spmvt`
    /// kernel, on `threads` threads.
    ///
    /// # Errors
    /// The kernel is not an SpMV kernel for `a`'s encoding, value type and widths, or `x`
    /// / `y` do not fit `a`.
    pub fn spmv<T: RealValue>(
        &self,
        a: &Tensor,
        x: &[T],
        y: &mut [T],
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        let (rows, cols) = self.fits::<T>(a)?;
        let (xn, yn) = match self.desc.op {
            Op::SpmvT => (rows, cols),
            _ => (cols, rows),
        };
        crate::dense::check_len("x", x.len(), xn, 1)?;
        crate::dense::check_len("y", y.len(), yn, 1)?;
        let walk =
            walk(&self.desc).ok_or_else(|| KernelError::Unsupported(self.desc.to_string()))?;
        let (pos, crd, outer) = walk.operands(a, &self.desc)?;
        let compressed = matches!(walk, Walk::Gather(true));
        let n_outer = pos.len().saturating_sub(1);
        let vals = T::slice(a.values()).unwrap_or_default();
        // SAFETY: the code was generated for `SpmvEntry`'s signature and this kernel's
        // description, which `a` matches (checked above).
        let entry: SpmvEntry = unsafe { std::mem::transmute(self.code.entry()) };
        let args = |range: (usize, usize), out: *mut T, ab: (T, T)| SpmvArgs {
            outer: outer.map_or(std::ptr::null(), index_ptr),
            stride: rows as u64,
            val: crate::half::values_ptr(a, vals),
            ..SpmvArgs::new((pos, crd), vals, x, out, range, ab)
        };
        // SAFETY (for every call of `entry` below): `a` is a validated tensor of the
        // kernel's format and widths (a `Tensor` exists only after validation: positions
        // ascend and end at the entry count, coordinates are below their level sizes,
        // outer coordinates of DCSR/DCSC and COO's row coordinates too); `x` has `xn`
        // elements and every output `yn` (checked above). A call reads `pos[begin..=end]`
        // and the entries between (COO: the entries `begin..end`), the outer coordinates
        // `begin..end`, and `x` at the coordinates it multiplies; it writes the output at
        // the coordinates of those entries only.
        match walk {
            Walk::Gather(_) => {
                let mut beta_k = beta;
                if let (true, Some(oc)) = (compressed, outer) {
                    // Outer coordinates with no entries get what the reference gives an
                    // empty row, alpha * 0 (+ beta * y): -0 for a negative alpha, NaN for
                    // an infinite one. The stored ones get beta * y, to which the kernel
                    // adds alpha * sum.
                    let mut stored = vec![false; y.len()];
                    for q in 0..oc.len() {
                        if let Some(s) = stored.get_mut(oc.get(q).unwrap_or(0) as usize) {
                            *s = true;
                        }
                    }
                    let empty = alpha * T::ZERO;
                    for (v, &st) in y.iter_mut().zip(&stored) {
                        *v = match (st, beta == T::ZERO) {
                            (false, true) => empty,
                            (false, false) => empty + beta * *v,
                            (true, true) => T::ZERO,
                            (true, false) => beta * *v,
                        };
                    }
                    if beta != T::ZERO {
                        beta_k = T::ONE;
                    }
                }
                let bounds = chunk_rows(pos, n_outer, CHUNKS);
                let y_ptr = SendPtr(y.as_mut_ptr());
                let x_prefetch = u64::from(!x_near_diagonal((pos, crd, outer), (yn, xn)));
                // Chunks are disjoint ranges of outer positions, whose outer coordinates
                // are distinct: no two threads write the same element of y.
                run_chunks(&bounds, threads, |_, range| {
                    let a = SpmvArgs {
                        x_prefetch,
                        ..args(range, y_ptr.get(), (alpha, beta_k))
                    };
                    // SAFETY: as stated above the match.
                    unsafe { entry(&a) };
                });
            }
            Walk::Ell(_) => {
                // Every row has K slots: equal row ranges are equal work. Rows are
                // disjoint across chunks, so no two threads write the same element of y.
                // Chunks of whole 64-row groups, so the vector steps see full groups.
                let groups = rows.div_ceil(64);
                let bounds: Vec<(usize, usize)> = chunk_entries(groups, CHUNKS)
                    .into_iter()
                    .map(|(b, e)| (b * 64, (e * 64).min(rows)))
                    .collect();
                let y_ptr = SendPtr(y.as_mut_ptr());
                run_chunks(&bounds, threads, |_, range| {
                    let a = args(range, y_ptr.get(), (alpha, beta));
                    // SAFETY: as stated above the match; the kernel reads the slots
                    // `s * rows + r` of its rows, all below `K * rows`, the length of `crd`
                    // and the values (validated), and x at their coordinates (in range).
                    unsafe { entry(&a) };
                });
            }
            Walk::Nm(n, m) => {
                // Slots per row; x padded to whole groups (a padding offset may point past
                // the last column; its value is 0 and never multiplies).
                let (n, m) = (n as usize, m as usize);
                let groups = cols.div_ceil(m);
                let x_in = zero_padded(x, groups * m);
                let bounds = chunk_entries(rows, CHUNKS);
                let y_ptr = SendPtr(y.as_mut_ptr());
                run_chunks(&bounds, threads, |_, range| {
                    let a = SpmvArgs {
                        x: x_in.as_ptr().cast(),
                        stride: (groups * n) as u64,
                        ..args(range, y_ptr.get(), (alpha, beta))
                    };
                    // SAFETY: as stated above the match; row r reads the slots
                    // `r * groups * n ..` of `crd` and the values (validated lengths
                    // rows * groups * n) and x at `g * m + offset < groups * m`, the length
                    // of `x_in`; rows are disjoint across chunks.
                    unsafe { entry(&a) };
                });
            }
            Walk::Blocks { p, q, .. } => {
                // Whole blocks: x and y padded with zeros to a multiple of the block, so
                // the unrolled products never leave them (a copy only when a dimension is
                // not a multiple of the block). Padding values are zeros the kernel skips.
                let (p, q) = (p as usize, q as usize);
                let x_len = xn.div_ceil(q) * q;
                let y_len = n_outer * p;
                let x_in = zero_padded(x, x_len);
                let mut y_pad: Vec<T> = Vec::new();
                let y_out: &mut [T] = if y_len == yn {
                    &mut *y
                } else {
                    y_pad = zero_padded(y, y_len.max(yn)).into_owned();
                    &mut y_pad
                };
                if y_out.len() < y_len {
                    return Err(KernelError::Unsupported(format!(
                        "{}: y shorter than its blocks",
                        self.desc
                    )));
                }
                let bounds = chunk_rows(pos, n_outer, CHUNKS);
                let y_ptr = SendPtr(y_out.as_mut_ptr());
                let block_args = |range: (usize, usize)| SpmvArgs {
                    x: x_in.as_ptr().cast(),
                    ..args(range, y_ptr.get(), (alpha, beta))
                };
                // Chunks are disjoint ranges of block rows, whose outputs are disjoint.
                run_chunks(&bounds, threads, |_, range| {
                    let a = block_args(range);
                    // SAFETY: as stated above the match; x is read through `x_in`, padded to
                    // whole blocks, and y written through `y_out`, `n_outer * p` long.
                    unsafe { entry(&a) };
                });
                if y_len != yn {
                    y.copy_from_slice(&y_pad[..yn]);
                }
            }
            Walk::RowScatter => {
                // Rows in 8 fixed chunks, each scattering into its own partial; n:m
                // partials reach whole groups (a padding offset may point past the last
                // column), and the partials are added in chunk order.
                let (part_len, stride) = match self.desc.format {
                    Format::Nm(n, m) => {
                        let groups = yn.div_ceil(m as usize);
                        (groups * m as usize, groups * n as usize)
                    }
                    _ => (yn, rows),
                };
                let bounds = chunk_entries(rows, SCATTER_CHUNKS);
                let mut partials = zeroed_partials::<T>(bounds.len(), part_len)?;
                let base = SendPtr(partials.as_mut_ptr());
                run_chunks(&bounds, threads, |c, range| {
                    // SAFETY: c < bounds.len(), so the partial lies inside `partials`.
                    let out = unsafe { base.get().add(c * part_len) };
                    let a = SpmvArgs {
                        stride: stride as u64,
                        ..args(range, out, (alpha, beta))
                    };
                    // SAFETY: as stated above the match; row r reads its slots (below the
                    // validated lengths of crd and the values) and x[r], and writes its
                    // own partial at columns below `part_len`.
                    unsafe { entry(&a) };
                });
                combine(
                    y,
                    partials.as_slice(),
                    (yn, part_len),
                    (alpha, beta),
                    threads,
                );
            }
            Walk::BlockScatter { p, q, .. } => {
                // x padded to whole outer blocks, each partial to whole inner blocks, so the
                // unrolled products never leave them; padding values are skipped zeros.
                let (p, q) = (p as usize, q as usize);
                let x_len = n_outer * q;
                let x_in = zero_padded(x, x_len.max(xn));
                let part_len = yn.div_ceil(p) * p;
                let bounds = chunk_rows(pos, n_outer, SCATTER_CHUNKS);
                let mut partials = zeroed_partials::<T>(bounds.len(), part_len)?;
                let base = SendPtr(partials.as_mut_ptr());
                run_chunks(&bounds, threads, |c, range| {
                    // SAFETY: c < bounds.len(), so the partial lies inside `partials`.
                    let out = unsafe { base.get().add(c * part_len) };
                    let a = SpmvArgs {
                        x: x_in.as_ptr().cast(),
                        ..args(range, out, (alpha, beta))
                    };
                    // SAFETY: as stated above the match; x is read through `x_in`, whole
                    // outer blocks long, and each call writes its own partial, whole inner
                    // blocks long (block coordinates are below the inner block count).
                    unsafe { entry(&a) };
                });
                combine(
                    y,
                    partials.as_slice(),
                    (yn, part_len),
                    (alpha, beta),
                    threads,
                );
            }
            Walk::Scatter(_) | Walk::Entries(_) => {
                let bounds = match walk {
                    Walk::Entries(_) => chunk_entries(vals.len(), SCATTER_CHUNKS),
                    _ => chunk_rows(pos, n_outer, SCATTER_CHUNKS),
                };
                let mut partials = zeroed_partials::<T>(bounds.len(), yn)?;
                let base = SendPtr(partials.as_mut_ptr());
                // Chunk c adds into its own partial, elements c * yn .. (c + 1) * yn.
                run_chunks(&bounds, threads, |c, range| {
                    // SAFETY: c < bounds.len(), so the partial lies inside `partials`.
                    let out = unsafe { base.get().add(c * yn) };
                    let a = args(range, out, (alpha, beta));
                    // SAFETY: as stated above the match.
                    unsafe { entry(&a) };
                });
                combine(y, partials.as_slice(), (yn, yn), (alpha, beta), threads);
            }
        }
        Ok(())
    }
}

impl Kernel {
    /// The outputs of the outer range `outer` only (a row view): `y = alpha A[outer] x +
    /// beta y` for CSR and BSR kernels (`outer` in rows, or block rows: y then holds those
    /// blocks' rows that exist), and the same for the columns of CSC and BSC transposed
    /// kernels. Nothing is copied: the kernel runs on the parent tensor's arrays.
    ///
    /// # Errors
    /// The kernel is of another walk (scatters, COO, ELL, n:m have no outer views here),
    /// `outer` is past the outer level, or x / y do not fit.
    pub fn spmv_outer<T: RealValue>(
        &self,
        a: &Tensor,
        outer: std::ops::Range<usize>,
        x: &[T],
        y: &mut [T],
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        let (rows, cols) = self.fits::<T>(a)?;
        let (p, q) = match walk(&self.desc) {
            Some(Walk::Gather(false)) => (1, 1),
            Some(Walk::Blocks { p, q, .. }) => (p as usize, q as usize),
            _ => {
                return Err(KernelError::Unsupported(format!(
                    "{}: outer views run on CSR and BSR kernels (and CSC, BSC transposed)",
                    self.desc
                )))
            }
        };
        let (xn, yn) = match self.desc.op {
            Op::SpmvT => (rows, cols),
            _ => (cols, rows),
        };
        let (Some(pos), Some(crd)) = (a.pos(1), a.crd(1)) else {
            return Err(KernelError::Unsupported(format!(
                "{}: arrays missing",
                self.desc
            )));
        };
        let n_outer = pos.len().saturating_sub(1);
        if outer.start > outer.end || outer.end > n_outer {
            return Err(KernelError::Shape {
                operand: "the outer range",
                expected: format!("a range within 0..{n_outer}"),
                found: format!("{}..{}", outer.start, outer.end),
            });
        }
        // The outputs the range covers (an edge block may reach past the last row).
        let first = outer.start * p;
        let covered = (outer.end * p).min(yn).saturating_sub(first);
        crate::dense::check_len("x", x.len(), xn, 1)?;
        crate::dense::check_len("y", y.len(), covered, 1)?;
        let x_len = xn.div_ceil(q) * q;
        let x_in = zero_padded(x, x_len);
        let padded = outer.len() * p;
        let mut y_pad: Vec<T> = Vec::new();
        let y_out: &mut [T] = if padded == covered {
            &mut *y
        } else {
            y_pad = zero_padded(y, padded).into_owned();
            &mut y_pad
        };
        let vals = T::slice(a.values()).unwrap_or_default();
        // SAFETY: the code was generated for `SpmvEntry`'s signature and this kernel's
        // description, which `a` matches (checked above).
        let entry: SpmvEntry = unsafe { std::mem::transmute(self.code.entry()) };
        // The kernel writes y[b * p + o] for the outer positions b of the range: shifted
        // back by the range's first output, those land in `y_out` (wrapping arithmetic:
        // the shifted pointer itself is never dereferenced).
        let base = SendPtr(y_out.as_mut_ptr().wrapping_sub(first));
        let bounds = chunk_range(pos, outer, CHUNKS);
        run_chunks(&bounds, threads, |_, (begin, end)| {
            let args = SpmvArgs {
                val: crate::half::values_ptr(a, vals),
                ..SpmvArgs::new(
                    (pos, crd),
                    vals,
                    &x_in,
                    base.get(),
                    (begin, end),
                    (alpha, beta),
                )
            };
            // SAFETY: `a` is validated (see `spmv`); the call reads pos[begin..=end], the
            // entries between and x (padded to whole blocks) at their coordinates, and
            // writes outputs b * p + o for b in begin..end, which lie in
            // first..first + padded, i.e. inside `y_out` after the shift. Chunks are
            // disjoint outer ranges.
            unsafe { entry(&args) };
        });
        if padded != covered {
            y.copy_from_slice(&y_pad[..covered]);
        }
        Ok(())
    }
}

/// The arguments of a generated SpMM kernel (the offsets of `x86::at`, checked below).
#[repr(C)]
struct SpmmArgs {
    pos: *const u8,
    crd: *const u8,
    val: *const u8,
    x: *const u8,
    y: *mut u8,
    begin: u64,
    end: u64,
    alpha: u64,
    beta: u64,
    beta_zero: u64,
    k: u64,
    /// A's rows and columns: edge blocks stop at them.
    rows: u64,
    cols: u64,
    /// The outer level's coordinates (DCSR, DCSC; COO:soa's second array), or null.
    outer: *const u8,
    /// n:m: slots per row.
    stride: u64,
    /// AVX-512: the lanes of the last, partial vector of a row of X or Y (`k % lanes` ones).
    tail_mask: u64,
}

// The generated code reads the argument structs at the offsets of `x86::at`: checked
// when compiled, so a field added or moved cannot leave a kernel reading the wrong one.
#[cfg(target_arch = "x86_64")]
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

/// How a generated SpMM walks the matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MmWalk {
    /// Sums per output row in registers, in the reference's order: CSR and BSR (`r x c`
    /// blocks; 1 x 1 for CSR) and DCSR (1 x 1, `outer`: the output row is the stored outer
    /// coordinate).
    Gather { r: u32, c: u32, outer: bool },
    /// Products scattered into 8 partials: CSC and DCSC (1 x 1, `outer` for DCSC), BSC.
    Scatter { r: u32, c: u32, outer: bool },
    /// ELL rows of K slots, a gather per row.
    Ell(u32),
    /// n:m rows: n slots per group of m columns, a gather per row.
    Nm(u32, u32),
    /// COO entries scattered into 8 partials; `soa` for coordinates in two arrays.
    Entries { soa: bool },
}

fn mm_walk(desc: &Desc) -> Option<MmWalk> {
    if desc.op != Op::Spmm {
        return None;
    }
    Some(match desc.format {
        Format::Csr => MmWalk::Gather {
            r: 1,
            c: 1,
            outer: false,
        },
        Format::Dcsr => MmWalk::Gather {
            r: 1,
            c: 1,
            outer: true,
        },
        Format::Bsr(r, c) => MmWalk::Gather { r, c, outer: false },
        Format::Csc => MmWalk::Scatter {
            r: 1,
            c: 1,
            outer: false,
        },
        Format::Dcsc => MmWalk::Scatter {
            r: 1,
            c: 1,
            outer: true,
        },
        Format::Bsc(r, c) => MmWalk::Scatter { r, c, outer: false },
        Format::Ell(k) => MmWalk::Ell(k),
        Format::Nm(n, m) => MmWalk::Nm(n, m),
        Format::Coo => MmWalk::Entries { soa: false },
        Format::CooSoa => MmWalk::Entries { soa: true },
    })
}

#[cfg(target_arch = "x86_64")]
type SpmmEntry = unsafe extern "sysv64" fn(*const SpmmArgs);
/// Never called: off x86-64 no [`Kernel`] is made ([`generate`] makes no code).
#[cfg(not(target_arch = "x86_64"))]
type SpmmEntry = unsafe extern "C" fn(*const SpmmArgs);

impl Kernel {
    /// `Y = alpha A X + beta Y` (`beta == 0` overwrites `Y`) on `threads` threads, for an
    /// `spmm` kernel. X and Y may be in either order; the kernel works on row-major ones,
    /// so a column-major operand costs one copy.
    ///
    /// # Errors
    /// The kernel is not an SpMM kernel for `a`'s encoding, value type and widths, or X / Y
    /// do not fit `a`.
    pub fn spmm<T: RealValue>(
        &self,
        a: &Tensor,
        x: Dense<'_, T>,
        y: DenseMut<'_, T>,
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        self.spmm_rows(a, None, x, y, (alpha, beta), threads)
    }

    /// The rows of the outer range `outer` only (a row view): `Y = alpha A[outer] X + beta
    /// Y` for CSR and BSR `spmm` kernels (`outer` in rows, or block rows: Y then holds those
    /// blocks' rows that exist), as [`Kernel::spmv_outer`] for SpMV. Nothing is copied
    /// from A: the kernel runs on the parent tensor's arrays.
    ///
    /// # Errors
    /// The kernel is of another format, `outer` is past the outer level, or X / Y do not
    /// fit.
    pub fn spmm_outer<T: RealValue>(
        &self,
        a: &Tensor,
        outer: std::ops::Range<usize>,
        x: Dense<'_, T>,
        y: DenseMut<'_, T>,
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        self.spmm_rows(a, Some(outer), x, y, (alpha, beta), threads)
    }

    fn spmm_rows<T: RealValue>(
        &self,
        a: &Tensor,
        view: Option<std::ops::Range<usize>>,
        x: Dense<'_, T>,
        y: DenseMut<'_, T>,
        (alpha, beta): (T, T),
        threads: usize,
    ) -> Result<(), KernelError> {
        let (rows, cols) = self.fits::<T>(a)?;
        let walk =
            mm_walk(&self.desc).ok_or_else(|| KernelError::Unsupported(self.desc.to_string()))?;
        let missing = || KernelError::Unsupported(format!("{}: arrays missing", self.desc));
        // The arrays each walk reads: (pos, crd, outer). ELL has no positions (`pos` stands
        // for nothing there and is never read); COO reads its coordinates from `crd` (and
        // `outer`, the second array of SoA), its positions only size it.
        let (pos, crd, outer) = match walk {
            MmWalk::Ell(_) | MmWalk::Nm(..) => (
                a.crd(2).ok_or_else(missing)?,
                a.crd(2).ok_or_else(missing)?,
                None,
            ),
            MmWalk::Entries { soa } => (
                a.pos(0).ok_or_else(missing)?,
                a.crd(0).ok_or_else(missing)?,
                if soa {
                    Some(a.crd(1).ok_or_else(missing)?)
                } else {
                    None
                },
            ),
            MmWalk::Gather { outer, .. } | MmWalk::Scatter { outer, .. } => (
                a.pos(1).ok_or_else(missing)?,
                a.crd(1).ok_or_else(missing)?,
                if outer {
                    Some(a.crd(0).ok_or_else(missing)?)
                } else {
                    None
                },
            ),
        };
        let vals = T::slice(a.values()).unwrap_or_default();
        // Outer positions: rows (ELL), entries (COO), else the positions' outer level.
        let n_outer = match walk {
            MmWalk::Ell(_) | MmWalk::Nm(..) => rows,
            MmWalk::Entries { .. } => vals.len(),
            _ => pos.len().saturating_sub(1),
        };
        // The outer positions to run and the rows of Y they cover: `first..first + y_rows`.
        let (range, first, y_rows) = match (view, walk) {
            (None, _) => (0..n_outer, 0, rows),
            (Some(range), MmWalk::Gather { outer: false, .. }) => {
                if range.start > range.end || range.end > n_outer {
                    return Err(KernelError::Shape {
                        operand: "the outer range",
                        expected: format!("a range within 0..{n_outer}"),
                        found: format!("{}..{}", range.start, range.end),
                    });
                }
                let p = match walk {
                    MmWalk::Gather { r, .. } => r as usize,
                    _ => 1,
                };
                let first = range.start * p;
                let covered = (range.end * p).min(rows).saturating_sub(first);
                (range, first, covered)
            }
            (Some(_), _) => {
                return Err(KernelError::Unsupported(format!(
                    "{}: outer views run on CSR and BSR SpMM kernels",
                    self.desc
                )))
            }
        };
        crate::dense::check_len("X", x.data.len(), x.rows, x.cols)?;
        crate::dense::check_len("Y", y.data.len(), y.rows, y.cols)?;
        if x.rows != cols || y.rows != y_rows || y.cols != x.cols {
            return Err(KernelError::Shape {
                operand: "X and Y",
                expected: format!("{cols} x k and {y_rows} x k for A of {rows} x {cols}"),
                found: format!("{} x {} and {} x {}", x.rows, x.cols, y.rows, y.cols),
            });
        }
        let k = x.cols;
        let x_rows: Vec<T>;
        let x_rm: &[T] = match x.order {
            Order::RowMajor => x.data,
            Order::ColMajor => {
                x_rows = to_row_major(x.data, x.rows, k);
                &x_rows
            }
        };
        let mut y_rows_rm: Vec<T> = Vec::new();
        let y_order = y.order;
        let y_rm: &mut [T] = match y_order {
            Order::RowMajor => &mut *y.data,
            Order::ColMajor => {
                y_rows_rm = if beta == T::ZERO {
                    vec![T::ZERO; y_rows * k]
                } else {
                    to_row_major(y.data, y_rows, k)
                };
                &mut y_rows_rm
            }
        };
        // SAFETY: the code was generated for `SpmmEntry`'s signature and this kernel's
        // description, which `a` matches (checked above).
        let entry: SpmmEntry = unsafe { std::mem::transmute(self.code.entry()) };
        let args = |(begin, end): (usize, usize), out: *mut T, (alpha, beta): (T, T)| SpmmArgs {
            pos: index_ptr(pos),
            crd: index_ptr(crd),
            val: vals.as_ptr().cast(),
            x: x_rm.as_ptr().cast(),
            y: out.cast(),
            begin: begin as u64,
            end: end as u64,
            alpha: bits(alpha),
            beta: bits(beta),
            beta_zero: u64::from(beta == T::ZERO),
            k: k as u64,
            rows: rows as u64,
            cols: cols as u64,
            outer: outer.map_or(std::ptr::null(), index_ptr),
            stride: match walk {
                MmWalk::Nm(n, m) => (cols.div_ceil(m as usize) * n as usize) as u64,
                _ => 0,
            },
            tail_mask: (1u64 << (k % (64 / std::mem::size_of::<T>()))) - 1,
        };
        // SAFETY (for every call of `entry` below): `a` is a validated tensor of the
        // kernel's format and widths (positions ascend and end at the entry count,
        // coordinates are below their level sizes, DCSR/DCSC outer coordinates and COO's
        // row coordinates too; ELL has K * rows slots); X is `cols x k` and Y `rows x k`,
        // row-major (checked and arranged above). A call reads `pos[begin..=end]` and the
        // entries between (and their outer coordinates; ELL: the slots `s * rows + i` of
        // its rows; COO: the entries `begin..end`), and the X rows of their columns below
        // `cols`.
        match walk {
            MmWalk::Gather { .. } | MmWalk::Ell(_) | MmWalk::Nm(..) => {
                if let (Some(oc), MmWalk::Gather { .. }) = (outer, walk) {
                    // DCSR: the rows not stored get what the reference gives a row with no
                    // entries, alpha * 0 (+ beta * Y); the kernel computes the stored ones.
                    let mut stored = vec![false; rows];
                    for q in 0..oc.len() {
                        if let Some(s) = stored.get_mut(oc.get(q).unwrap_or(0) as usize) {
                            *s = true;
                        }
                    }
                    let empty = alpha * T::ZERO;
                    for (row, _) in y_rm.chunks_mut(k.max(1)).zip(&stored).filter(|r| !*r.1) {
                        for v in row {
                            *v = if beta == T::ZERO {
                                empty
                            } else {
                                empty + beta * *v
                            };
                        }
                    }
                }
                let bounds = match walk {
                    // Every row has K slots: equal row ranges are equal work.
                    MmWalk::Ell(_) | MmWalk::Nm(..) => chunk_entries(rows, CHUNKS),
                    _ => chunk_range(pos, range, CHUNKS),
                };
                // The kernel writes row i at `i * k` from the pointer: shifted back by the
                // view's first row, those land in `y_rm` (wrapping arithmetic: the shifted
                // pointer itself is never dereferenced).
                let y_ptr = SendPtr(y_rm.as_mut_ptr().wrapping_sub(first * k));
                run_chunks(&bounds, threads, |_, range| {
                    let args = args(range, y_ptr.get(), (alpha, beta));
                    // SAFETY: as stated above the match; the call writes the Y rows of the
                    // outer positions `begin..end` (block rows: their rows below `rows`;
                    // DCSR: the stored outer coordinates), disjoint across chunks; in a
                    // view, those are rows first..first + y_rows, inside `y_rm` after the
                    // shift.
                    unsafe { entry(&args) };
                });
            }
            MmWalk::Scatter { r, c, .. } => {
                // 8 fixed chunks of outer positions, each adding into its own partial (whole
                // block rows long), the partials added in chunk order (`scatter_sum`). The
                // last block column of BSC, where it reaches past X, is added by
                // `scatter_edge` (same order).
                let (r, c) = (r as usize, c as usize);
                let part_len = rows.div_ceil(r) * r * k;
                let edge = (cols % c != 0 && n_outer > 0).then(|| n_outer - 1);
                let bounds = chunk_rows(pos, n_outer, SCATTER_CHUNKS);
                let sum = scatter_sum(&bounds, part_len, threads, |_, (begin, end), out| {
                    let stop = match edge {
                        Some(e) if e < end => e,
                        _ => end,
                    };
                    if stop > begin {
                        let args = args((begin, stop), out, (alpha, beta));
                        // SAFETY: as stated above the match; the call reads the X rows
                        // `b * c + t` of its outer positions b (all below `cols`: the edge
                        // column is left out) and writes its own partial, `part_len` long,
                        // at rows below `part_len / k` (block rows are below the block row
                        // count).
                        unsafe { entry(&args) };
                    }
                    if let Some(e) = edge.filter(|&e| begin <= e && e < end) {
                        // SAFETY: the chunk's own partial, `part_len` long, written by
                        // nobody else while the chunk runs.
                        let part = unsafe { std::slice::from_raw_parts_mut(out, part_len) };
                        scatter_edge((pos, crd), vals, x_rm, part, e, (r, c), (cols, k));
                    }
                })?;
                combine(
                    y_rm,
                    sum.as_slice(),
                    (rows * k, part_len),
                    (alpha, beta),
                    threads,
                );
            }
            MmWalk::Entries { .. } => {
                // 8 fixed chunks of entries, each adding into its own partial, added in
                // chunk order.
                let part_len = rows * k;
                let bounds = chunk_entries(n_outer, SCATTER_CHUNKS);
                let sum = scatter_sum(&bounds, part_len, threads, |_, range, out| {
                    let args = args(range, out, (alpha, beta));
                    // SAFETY: as stated above the match; the call reads the coordinates
                    // and values of the entries `begin..end` (below the entry count) and
                    // the X rows of their columns, and writes its own partial (`rows * k`
                    // long) at their rows.
                    unsafe { entry(&args) };
                })?;
                combine(
                    y_rm,
                    sum.as_slice(),
                    (rows * k, part_len),
                    (alpha, beta),
                    threads,
                );
            }
        }
        if y_order == Order::ColMajor {
            for i in 0..y_rows {
                for c in 0..k {
                    y.data[c * y_rows + i] = y_rows_rm[i * k + c];
                }
            }
        }
        Ok(())
    }
}

/// What the scatter SpMM kernel adds for the block column `b` into `part`, for the last
/// block column of BSC, which reaches past X's last row: the same products in the same
/// order and rounding, the columns past `cols` and padding zeros left out.
fn scatter_edge<T: RealValue>(
    (pos, crd): (&IndexVec, &IndexVec),
    vals: &[T],
    x: &[T],
    part: &mut [T],
    b: usize,
    (r, c): (usize, usize),
    (cols, k): (usize, usize),
) {
    let at = |v: &IndexVec, i: usize| v.get(i).unwrap_or(0) as usize;
    for e in at(pos, b)..at(pos, b + 1) {
        let br = at(crd, e);
        for o in 0..r {
            let i = br * r + o;
            for t in 0..c {
                let j = b * c + t;
                let v = vals[(e * r + o) * c + t];
                if j >= cols || v == T::ZERO {
                    continue;
                }
                let (row, xj) = (&mut part[i * k..(i + 1) * k], &x[j * k..(j + 1) * k]);
                for (p, &xv) in row.iter_mut().zip(xj) {
                    *p = *p + v * xv;
                }
            }
        }
    }
}

/// A column-major `rows x k` matrix in row-major order.
fn to_row_major<T: Copy>(data: &[T], rows: usize, k: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(rows * k);
    for i in 0..rows {
        out.extend((0..k).map(|c| data[c * rows + i]));
    }
    out
}

/// The bits of an f32 or f64 in the low bytes of a u64, as the kernels read alpha and beta.
fn bits<T: RealValue>(v: T) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: T is f32 or f64 (RealValue is implemented for those only): plain bytes, at
    // most 8 of them.
    let src = unsafe {
        std::slice::from_raw_parts((&v as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    b[..src.len()].copy_from_slice(src);
    u64::from_le_bytes(b)
}

fn index_ptr(v: &IndexVec) -> *const u8 {
    match v {
        IndexVec::Packed2 { bytes, .. } | IndexVec::U8(bytes) => bytes.as_ptr(),
        IndexVec::U16(b) => b.as_ptr().cast(),
        IndexVec::U32(b) => b.as_ptr().cast(),
        IndexVec::U64(b) => b.as_ptr().cast(),
    }
}

/// The kernel of `desc`, generated on first use and kept for the life of the process.
///
/// # Errors
/// As [`Kernel::compile`].
pub fn kernel(desc: &Desc) -> Result<Arc<Kernel>, KernelError> {
    static CACHE: OnceLock<Mutex<HashMap<Desc, Arc<Kernel>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.get(desc) {
        return Ok(Arc::clone(k));
    }
    let k = Arc::new(Kernel::compile(desc)?);
    map.insert(*desc, Arc::clone(&k));
    Ok(k)
}

#[cfg(test)]
mod top_of_width_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Kernel>();
        shared::<Arc<Kernel>>();
    }

    /// 100k x 200k with 10 entries a row: a band around each row's diagonal place is
    /// near (also as DCSR, whose stored rows carry their coordinates), columns spread over
    /// all of x are not, nor is a band that sits far from the diagonal.
    #[test]
    fn x_is_near_the_diagonal_in_banded_matrices_only() {
        let (rows, cols) = (100_000u64, 200_000u64);
        let pos = IndexVec::U64((0..=rows).map(|r| r * 10).collect::<Vec<_>>().into());
        let matrix = |col: &dyn Fn(u64, u64) -> u64| {
            let c: Vec<u32> = (0..rows)
                .flat_map(|r| (0..10).map(move |k| (r, k)))
                .map(|(r, k)| col(r, k) as u32)
                .collect();
            IndexVec::U32(c.into())
        };
        let banded = matrix(&|r, k| (2 * r + 5 * k).min(cols - 1));
        let spread = matrix(&|r, k| (r * 7919 + k * 104_729) % cols);
        let shifted = matrix(&|r, k| (2 * r + 50_000 + k) % cols);
        let sizes = (rows as usize, cols as usize);
        assert!(x_near_diagonal((&pos, &banded, None), sizes));
        assert!(!x_near_diagonal((&pos, &spread, None), sizes));
        assert!(!x_near_diagonal((&pos, &shifted, None), sizes));
        // Every other row stored, as DCSR: outer coordinates 0, 2, 4, ...
        let half = IndexVec::U64((0..=rows / 2).map(|r| r * 10).collect::<Vec<_>>().into());
        let outer = IndexVec::U64((0..rows / 2).map(|r| 2 * r).collect::<Vec<_>>().into());
        let dcsr = matrix(&|r, k| (4 * r + 5 * k).min(cols - 1));
        assert!(x_near_diagonal((&half, &dcsr, Some(&outer)), sizes));
        assert!(!x_near_diagonal((&half, &dcsr, None), sizes));
        let empty = IndexVec::U64(vec![0u64].into());
        assert!(!x_near_diagonal((&empty, &empty, None), (0, 5)));
    }
}

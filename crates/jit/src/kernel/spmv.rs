//! SpMV: `y = alpha A x + beta y` (or `A^T x`) through generated code, the matrix split
//! into chunks by [`crate::run`], each chunk one call of the code, and where the code
//! scatters, partials added in chunk order.

use std::borrow::Cow;

use sptk_tensor::{IndexVec, Tensor};

use super::args::{index_ptr, Entry, Head, SpmvArgs};
use super::walk::{walk, Walk};
use super::{outer_outputs, scatter, Kernel, Partials::PerChunk};
use crate::desc::{Format, Op};
use crate::reference::RealValue;
use crate::run::{
    chunk_entries, chunk_range, chunk_rows, prefill_rows, scatter_chunks, zero_padded, Chunk,
    SendPtr, ENTRY_CHUNKS,
};
use crate::KernelError;

/// True if, in a sample of the outer positions, nearly every coordinate lies within
/// [`NEAR`] of the outer coordinate's diagonal place in x (`i * x_len / outer_size`), as in
/// banded and block-diagonal matrices: x is then read in a sliding window that stays in
/// cache. Random columns are not near, and gain from x prefetched ahead.
pub(super) fn x_near_diagonal(
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

impl Kernel {
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
        let (xn, yn) = self.spmv_lengths(rows, cols);
        crate::dense::check_len("x", x.len(), xn, 1)?;
        crate::dense::check_len("y", y.len(), yn, 1)?;
        let walk =
            walk(&self.desc).ok_or_else(|| KernelError::Unsupported(self.desc.to_string()))?;
        let (pos, crd, outer) = walk.arrays().of(a, &self.desc)?;
        let compressed = matches!(walk, Walk::Gather(true));
        let n_outer = pos.len().saturating_sub(1);
        let vals = T::slice(a.values()).unwrap_or_default();
        // SAFETY: the code was generated for an SpMV description, this kernel's, which `a`
        // matches (checked above).
        let entry = unsafe { Entry::<SpmvArgs>::of(self) };
        // The arguments of a call over `range` that reads `x` and writes `out`.
        let args = |range: Chunk, x: &[T], out: *mut T, ab: (T, T)| SpmvArgs {
            head: Head {
                val: crate::half::values_ptr(a, vals),
                ..Head::new((pos, crd), vals, x, out, range, ab)
            },
            outer: outer.map_or(std::ptr::null(), index_ptr),
            stride: rows as u64,
            x_prefetch: 1,
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
                    // empty row; the stored ones get beta * y, to which the kernel adds
                    // alpha * sum.
                    prefill_rows(y, 1, oc, (alpha, beta), true);
                    if beta != T::ZERO {
                        beta_k = T::ONE;
                    }
                }
                let bounds = chunk_rows(pos, n_outer, ENTRY_CHUNKS);
                let y_ptr = SendPtr(y.as_mut_ptr());
                let x_prefetch = u64::from(!x_near_diagonal((pos, crd, outer), (yn, xn)));
                // SAFETY: as stated above the match. Chunks are disjoint ranges of outer
                // positions, whose outer coordinates are distinct: no two threads write the
                // same element of y.
                unsafe {
                    entry.run_chunks(&bounds, threads, |range| SpmvArgs {
                        x_prefetch,
                        ..args(range, x, y_ptr.get(), (alpha, beta_k))
                    })
                };
            }
            Walk::Ell(_) => {
                // Every row has K slots: equal row ranges are equal work. Chunks of whole
                // 64-row groups, so the vector steps see full groups.
                let groups = rows.div_ceil(64);
                let bounds: Vec<Chunk> = chunk_entries(groups, ENTRY_CHUNKS)
                    .into_iter()
                    .map(|(b, e)| (b * 64, (e * 64).min(rows)))
                    .collect();
                let y_ptr = SendPtr(y.as_mut_ptr());
                // SAFETY: as stated above the match; the kernel reads the slots
                // `s * rows + r` of its rows, all below `K * rows`, the length of `crd` and
                // the values (validated), and x at their coordinates (in range). Rows are
                // disjoint across chunks, so no two threads write the same element of y.
                unsafe {
                    entry.run_chunks(&bounds, threads, |range| {
                        args(range, x, y_ptr.get(), (alpha, beta))
                    })
                };
            }
            Walk::Nm(n, m) => {
                // Slots per row; x padded to whole groups (a padding offset may point past
                // the last column; its value is 0 and never multiplies).
                let (n, m) = (n as usize, m as usize);
                let groups = cols.div_ceil(m);
                let x_in = zero_padded(x, groups * m);
                let bounds = chunk_entries(rows, ENTRY_CHUNKS);
                let y_ptr = SendPtr(y.as_mut_ptr());
                // SAFETY: as stated above the match; row r reads the slots
                // `r * groups * n ..` of `crd` and the values (validated lengths
                // rows * groups * n) and x at `g * m + offset < groups * m`, the length of
                // `x_in`; rows are disjoint across chunks.
                unsafe {
                    entry.run_chunks(&bounds, threads, |range| SpmvArgs {
                        stride: (groups * n) as u64,
                        ..args(range, &x_in, y_ptr.get(), (alpha, beta))
                    })
                };
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
                let bounds = chunk_rows(pos, n_outer, ENTRY_CHUNKS);
                let y_ptr = SendPtr(y_out.as_mut_ptr());
                // SAFETY: as stated above the match; x is read through `x_in`, padded to
                // whole blocks, and y written through `y_out`, `n_outer * p` long. Chunks
                // are disjoint ranges of block rows, whose outputs are disjoint.
                unsafe {
                    entry.run_chunks(&bounds, threads, |range| {
                        args(range, &x_in, y_ptr.get(), (alpha, beta))
                    })
                };
                if y_len != yn {
                    y.copy_from_slice(&y_pad[..yn]);
                }
            }
            Walk::RowScatter | Walk::BlockScatter { .. } | Walk::Scatter(_) | Walk::Entries(_) => {
                // Chunks fixed by the sizes (`scatter_chunks`), each scattering into its
                // own partial: (the chunks, a partial's length, x as the kernel reads it,
                // the kernel's stride).
                let entries = a.values().len();
                let (bounds, part_len, x_in, stride) = match walk {
                    // Rows; n:m partials reach whole groups (a padding offset may point
                    // past the last column).
                    Walk::RowScatter => {
                        let (part_len, stride) = match self.desc.format {
                            Format::Nm(n, m) => {
                                let groups = yn.div_ceil(m as usize);
                                (groups * m as usize, groups * n as usize)
                            }
                            _ => (yn, rows),
                        };
                        let bounds = chunk_entries(rows, scatter_chunks(entries, part_len));
                        (bounds, part_len, Cow::Borrowed(x), stride)
                    }
                    // x padded to whole outer blocks, each partial to whole inner blocks,
                    // so the unrolled products never leave them; padding values are
                    // skipped zeros.
                    Walk::BlockScatter { p, q, .. } => {
                        let (p, q) = (p as usize, q as usize);
                        let x_in = zero_padded(x, (n_outer * q).max(xn));
                        let part_len = yn.div_ceil(p) * p;
                        let bounds = chunk_rows(pos, n_outer, scatter_chunks(entries, part_len));
                        (bounds, part_len, x_in, rows)
                    }
                    Walk::Entries(_) => {
                        let bounds = chunk_entries(entries, scatter_chunks(entries, yn));
                        (bounds, yn, Cow::Borrowed(x), rows)
                    }
                    _ => {
                        let bounds = chunk_rows(pos, n_outer, scatter_chunks(entries, yn));
                        (bounds, yn, Cow::Borrowed(x), rows)
                    }
                };
                let part = (bounds.as_slice(), part_len);
                scatter(
                    y,
                    part,
                    PerChunk,
                    (alpha, beta),
                    threads,
                    |_, range, out| {
                        let a = SpmvArgs {
                            stride: stride as u64,
                            ..args(range, &x_in, out, (alpha, beta))
                        };
                        // SAFETY: as stated above the match; x is read through `x_in` (BSR^T,
                        // BSC: whole outer blocks long), and each call writes its own partial,
                        // `part_len` long, at the coordinates of its entries (ELL^T, n:m^T: row
                        // r reads its slots, below the validated lengths of crd and the values,
                        // and x[r]; block coordinates are below the inner block count).
                        unsafe { entry.call(&a) };
                    },
                )?;
            }
        }
        Ok(())
    }

    /// The lengths of x and y for an SpMV kernel on a `rows x cols` matrix.
    fn spmv_lengths(&self, rows: usize, cols: usize) -> (usize, usize) {
        match self.desc.op {
            Op::SpmvT => (rows, cols),
            _ => (cols, rows),
        }
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
        let (xn, yn) = self.spmv_lengths(rows, cols);
        let (Some(pos), Some(crd)) = (a.pos(1), a.crd(1)) else {
            return Err(KernelError::Unsupported(format!(
                "{}: arrays missing",
                self.desc
            )));
        };
        let n_outer = pos.len().saturating_sub(1);
        let (first, covered) = outer_outputs(&outer, n_outer, (p, yn))?;
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
        // SAFETY: the code was generated for an SpMV description, this kernel's, which `a`
        // matches (checked above).
        let entry = unsafe { Entry::<SpmvArgs>::of(self) };
        // The kernel writes y[b * p + o] for the outer positions b of the range: shifted
        // back by the range's first output, those land in `y_out` (wrapping arithmetic:
        // the shifted pointer itself is never dereferenced).
        let base = SendPtr(y_out.as_mut_ptr().wrapping_sub(first));
        let bounds = chunk_range(pos, outer, ENTRY_CHUNKS);
        // SAFETY: `a` is validated (see `spmv`); a call reads pos[begin..=end], the entries
        // between and x (padded to whole blocks) at their coordinates, and writes outputs
        // b * p + o for b in begin..end, which lie in first..first + padded, i.e. inside
        // `y_out` after the shift. Chunks are disjoint outer ranges.
        unsafe {
            entry.run_chunks(&bounds, threads, |range| SpmvArgs {
                head: Head {
                    val: crate::half::values_ptr(a, vals),
                    ..Head::new((pos, crd), vals, &x_in, base.get(), range, (alpha, beta))
                },
                outer: std::ptr::null(),
                stride: 0,
                x_prefetch: 1,
            })
        };
        if padded != covered {
            y.copy_from_slice(&y_pad[..covered]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

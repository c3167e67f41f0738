//! SpMM: `Y = alpha A X + beta Y` through generated code, on row-major X and Y (a
//! column-major operand costs one copy), the matrix split into chunks by [`crate::run`];
//! where the code scatters, partials added in chunk order.

use sptk_tensor::{IndexVec, Tensor};

use super::args::{index_ptr, Entry, Head, SpmmArgs};
use super::walk::{mm_walk, MmWalk};
use super::{outer_outputs, scatter, Kernel, Partials::Waves};
use crate::dense::{Dense, DenseMut, Order};
use crate::reference::RealValue;
use crate::run::{
    chunk_entries, chunk_range, chunk_rows, prefill_rows, scatter_chunks, Chunk, SendPtr,
    ENTRY_CHUNKS,
};
use crate::KernelError;

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
        let (pos, crd, outer) = walk.arrays().of(a, &self.desc)?;
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
            (
                Some(range),
                MmWalk::Gather {
                    r, outer: false, ..
                },
            ) => {
                let (first, covered) = outer_outputs(&range, n_outer, (r as usize, rows))?;
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
        // SAFETY: the code was generated for an SpMM description, this kernel's, which
        // `a` matches (checked above).
        let entry = unsafe { Entry::<SpmmArgs>::of(self) };
        let stride = match walk {
            MmWalk::Nm(n, m) => (cols.div_ceil(m as usize) * n as usize) as u64,
            _ => 0,
        };
        let args = |range: Chunk, out: *mut T| SpmmArgs {
            head: Head::new((pos, crd), vals, x_rm, out, range, (alpha, beta)),
            k: k as u64,
            rows: rows as u64,
            cols: cols as u64,
            outer: outer.map_or(std::ptr::null(), index_ptr),
            stride,
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
                    // entries; the kernel computes the stored ones.
                    prefill_rows(y_rm, k, oc, (alpha, beta), false);
                }
                let bounds = match walk {
                    // Every row has K slots: equal row ranges are equal work.
                    MmWalk::Ell(_) | MmWalk::Nm(..) => chunk_entries(rows, ENTRY_CHUNKS),
                    _ => chunk_range(pos, range, ENTRY_CHUNKS),
                };
                // The kernel writes row i at `i * k` from the pointer: shifted back by the
                // view's first row, those land in `y_rm` (wrapping arithmetic: the shifted
                // pointer itself is never dereferenced).
                let y_ptr = SendPtr(y_rm.as_mut_ptr().wrapping_sub(first * k));
                // SAFETY: as stated above the match; a call writes the Y rows of the outer
                // positions `begin..end` (block rows: their rows below `rows`; DCSR: the
                // stored outer coordinates), disjoint across chunks; in a view, those are
                // rows first..first + y_rows, inside `y_rm` after the shift.
                unsafe { entry.run_chunks(&bounds, threads, |range| args(range, y_ptr.get())) };
            }
            MmWalk::Scatter { r, c, .. } => {
                // Chunks of outer positions fixed by the sizes (`scatter_chunks`: each
                // value makes k products), each adding into its own partial (whole block
                // rows long), the partials added in chunk order. The last block
                // column of BSC, where it reaches past X, is added by `scatter_edge` (same
                // order).
                let (r, c) = (r as usize, c as usize);
                let part_len = rows.div_ceil(r) * r * k;
                let edge = (cols % c != 0 && n_outer > 0).then(|| n_outer - 1);
                let chunks = scatter_chunks(a.values().len().saturating_mul(k), part_len);
                let bounds = chunk_rows(pos, n_outer, chunks);
                let part = (bounds.as_slice(), part_len);
                scatter(
                    y_rm,
                    part,
                    Waves,
                    (alpha, beta),
                    threads,
                    |_, (begin, end), out| {
                        let stop = match edge {
                            Some(e) if e < end => e,
                            _ => end,
                        };
                        if stop > begin {
                            // SAFETY: as stated above the match; the call reads the X rows
                            // `b * c + t` of its outer positions b (all below `cols`: the edge
                            // column is left out) and writes its own partial, `part_len` long,
                            // at rows below `part_len / k` (block rows are below the block row
                            // count).
                            unsafe { entry.call(&args((begin, stop), out)) };
                        }
                        if let Some(e) = edge.filter(|&e| begin <= e && e < end) {
                            // SAFETY: the chunk's own partial, `part_len` long, written by
                            // nobody else while the chunk runs.
                            let part = unsafe { std::slice::from_raw_parts_mut(out, part_len) };
                            scatter_edge((pos, crd), vals, x_rm, part, e, (r, c), (cols, k));
                        }
                    },
                )?;
            }
            MmWalk::Entries { .. } => {
                // Chunks of entries fixed by the sizes, each adding into its own partial,
                // added in chunk order.
                let chunks = scatter_chunks(n_outer.saturating_mul(k), rows * k);
                let bounds = chunk_entries(n_outer, chunks);
                let part = (bounds.as_slice(), rows * k);
                scatter(
                    y_rm,
                    part,
                    Waves,
                    (alpha, beta),
                    threads,
                    |_, range, out| {
                        // SAFETY: as stated above the match; the call reads the coordinates
                        // and values of the entries `begin..end` (below the entry count) and
                        // the X rows of their columns, and writes its own partial (`rows * k`
                        // long) at their rows.
                        unsafe { entry.call(&args(range, out)) };
                    },
                )?;
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

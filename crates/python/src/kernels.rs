//! `sptk.spmv` and `sptk.spmm` on NumPy operands, by `sptk_jit` as `sparse-run` runs them:
//! machine code generated for the tensor's exact encoding and widths where the JIT has
//! it for this CPU, else the reference kernels (one thread). A product computes in the
//! wider type of A and the dense operands (`sptk_jit::widen`); f16 / bf16 values stay as
//! stored where the generated kernel widens them as it loads them, as `sparse-run` runs
//! them (`widen::for_kernel`), else they are widened into a copy of A first.

use pyo3::prelude::*;
use sptk_jit::reference::{self, RealValue};
use sptk_jit::{kernel, widen, Dense, DenseMut, Desc, Isa, KernelError, Op, Order, Real};
use sptk_tensor::{Tensor, ValueType};

use crate::array::ArrayHandle;
use crate::error::{attached, detached, Failure, Kind, Result};
use crate::numpy_in::{real, real_vec, with_array};
use crate::tensor::PyTensor;

fn kernel_error(e: KernelError) -> Failure {
    Failure::new(Kind::Argument, e.to_string())
}

/// A dense operand: its value type, shape and values as `f64` or `f32`.
struct Operand {
    dtype: ValueType,
    shape: Vec<u64>,
    bytes: Vec<u8>,
}

fn operand(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Operand> {
    attached(|| {
        with_array(obj, what, |t, s, b| {
            let dtype = match t {
                "<f4" => ValueType::F32,
                "<f8" => ValueType::F64,
                other => {
                    return Err(Failure::argument(format!(
                        "{what}: float32 or float64 expected, not {other}"
                    )))
                }
            };
            Ok(Operand {
                dtype,
                shape: s.to_vec(),
                bytes: b.to_vec(),
            })
        })
    })
}

/// The generated kernel of `op` on `a`, or None where the JIT has none (other CPUs,
/// encodings it does not generate): the reference kernel runs then.
fn generated(op: Op, a: &Tensor) -> Result<Option<std::sync::Arc<sptk_jit::Kernel>>> {
    let Some(isa) = Isa::best() else {
        return Ok(None);
    };
    match Desc::for_tensor(op, a, isa).and_then(|d| kernel(&d)) {
        Ok(k) => Ok(Some(k)),
        Err(KernelError::Unsupported(_)) => Ok(None),
        Err(e) => Err(kernel_error(e)),
    }
}

/// The compute type of A and `dense`, and A as the kernels of `op` take it: itself (as
/// stored, or already of that type), or a widened copy.
fn prepared(a: &Tensor, dense: &[ValueType], op: Op) -> Result<(Real, Option<Tensor>)> {
    let real = widen::product_type(a.value_type(), dense).map_err(|_| {
        Failure::argument(format!(
            "A holds {} values; kernels compute in f16, bf16, f32 or f64 (convert(dtype=\"f64\") first)",
            a.value_type().name()
        ))
    })?;
    let (wide, _) = widen::for_kernel(a, real, op, Isa::best()).map_err(kernel_error)?;
    Ok((real, wide))
}

/// Kernels generated and A's values widened into copies, by this process so far: counts
/// for the tests (a product compiles once per description, and copies nothing where its
/// kernel widens as it loads).
#[pyfunction]
pub fn kernel_counts() -> (u64, u64) {
    (sptk_jit::kernels_made(), widen::widened_copies())
}

/// The output's first values: the given y (scaled by beta), else `n` zeros.
fn start<T: RealValue>(y0: Option<&Operand>, n: usize) -> Result<Vec<T>> {
    match y0 {
        Some(y) => real_vec(y.dtype, &y.bytes),
        None => Ok(vec![T::ZERO; n]),
    }
}

fn spmv_as<T: RealValue>(
    a: &Tensor,
    x: &Operand,
    y0: Option<&Operand>,
    args: &Args,
) -> Result<Vec<T>> {
    let x: Vec<T> = real_vec(x.dtype, &x.bytes)?;
    let [rows, cols] = a.dim_sizes() else {
        return Err(Failure::argument("spmv: A must be a matrix"));
    };
    let yn = if args.transpose { *cols } else { *rows } as usize;
    let mut y: Vec<T> = start(y0, yn)?;
    let (alpha, beta) = (real::<T>(args.alpha), real::<T>(args.beta));
    let op = if args.transpose { Op::SpmvT } else { Op::Spmv };
    match generated(op, a)? {
        Some(k) => k.spmv(a, &x, &mut y, (alpha, beta), args.threads),
        None => reference::spmv(a, &x, &mut y, args.transpose, (alpha, beta)),
    }
    .map_err(kernel_error)?;
    Ok(y)
}

fn spmm_as<T: RealValue>(
    a: &Tensor,
    x: &Operand,
    y0: Option<&Operand>,
    args: &Args,
) -> Result<Vec<T>> {
    let [rows, _] = a.dim_sizes() else {
        return Err(Failure::argument("spmm: A must be a matrix"));
    };
    let [xr, k] = x.shape[..] else {
        return Err(Failure::argument("spmm: X must have two dimensions"));
    };
    let xv: Vec<T> = real_vec(x.dtype, &x.bytes)?;
    let mut y: Vec<T> = start(y0, (*rows * k) as usize)?;
    let xd = Dense {
        data: &xv,
        rows: xr as usize,
        cols: k as usize,
        order: Order::RowMajor,
    };
    let yd = DenseMut {
        data: &mut y,
        rows: *rows as usize,
        cols: k as usize,
        order: Order::RowMajor,
    };
    let (alpha, beta) = (real::<T>(args.alpha), real::<T>(args.beta));
    match generated(Op::Spmm, a)? {
        Some(kern) => kern.spmm(a, xd, yd, (alpha, beta), args.threads),
        None => reference::spmm(a, xd, yd, (alpha, beta)),
    }
    .map_err(kernel_error)?;
    Ok(y)
}

/// The scalars and switches of a product.
struct Args {
    alpha: f64,
    beta: f64,
    transpose: bool,
    threads: usize,
}

fn run(
    py: Python<'_>,
    a: &PyTensor,
    x: &Bound<'_, PyAny>,
    y: Option<&Bound<'_, PyAny>>,
    args: Args,
    matrices: bool,
) -> PyResult<ArrayHandle> {
    let t = a.tensor(py)?;
    let x = operand(x, if matrices { "X" } else { "x" })?;
    let y0 = y.map(|y| operand(y, "y")).transpose()?;
    detached(py, move || {
        let mut dense = vec![x.dtype];
        dense.extend(y0.as_ref().map(|y| y.dtype));
        let op = Op::product(matrices, args.transpose);
        let (real, wide) = prepared(&t, &dense, op)?;
        let a = wide.as_ref().unwrap_or(&t);
        let y0 = y0.as_ref();
        Ok(match (real, matrices) {
            (Real::F64, false) => ArrayHandle::owned(spmv_as::<f64>(a, &x, y0, &args)?, "<f8"),
            (Real::F32, false) => ArrayHandle::owned(spmv_as::<f32>(a, &x, y0, &args)?, "<f4"),
            (Real::F64, true) => ArrayHandle::owned(spmm_as::<f64>(a, &x, y0, &args)?, "<f8"),
            (Real::F32, true) => ArrayHandle::owned(spmm_as::<f32>(a, &x, y0, &args)?, "<f4"),
        })
    })
}

/// `y = alpha A x + beta y` (`transpose`: `A^T x`), or with `matrices`
/// `Y = alpha A X + beta Y` (X and Y row-major): a new array.
#[pyfunction]
#[pyo3(signature = (a, x, y, alpha, beta, transpose, threads, matrices))]
#[allow(clippy::too_many_arguments)]
pub fn product(
    py: Python<'_>,
    a: &PyTensor,
    x: &Bound<'_, PyAny>,
    y: Option<&Bound<'_, PyAny>>,
    alpha: f64,
    beta: f64,
    transpose: bool,
    threads: usize,
    matrices: bool,
) -> PyResult<ArrayHandle> {
    if matrices && transpose {
        return Err(Failure::argument("spmm computes A X only (convert A to CSC for A^T)").into());
    }
    let args = Args {
        alpha,
        beta,
        transpose,
        threads: threads_or_all(threads),
    };
    run(py, a, x, y, args, matrices)
}

/// 0: one thread per core, as `sparse-run` takes it.
fn threads_or_all(threads: usize) -> usize {
    if threads > 0 {
        return threads;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

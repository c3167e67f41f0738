//! Arrays handed to NumPy without a copy.
//!
//! An [`ArrayHandle`] holds the owner of some memory (a tensor's `Arc`, or an opened
//! `.spt` file's, which keeps its map) and describes a window of it by NumPy's
//! `__array_interface__` (version 3), read-only. `numpy.asarray(handle)` makes an array
//! whose `base` is the handle, so the array keeps the handle, the handle keeps the owner,
//! and the memory outlives every Python object that was made from it.
//!
//! `__array_interface__` rather than the buffer protocol: it needs nothing of the C API,
//! so one abi3 wheel serves CPython 3.9 and newer (the buffer protocol is in the limited
//! API from 3.11 only), and it carries NumPy's type strings (`<f2`, `<c16`) directly.

use std::any::Any;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sptk_tensor::{IndexVec, ValueType, ValueVec};

/// Keeps the memory of a handle alive.
pub type Owner = Arc<dyn Any + Send + Sync>;

/// A read-only window of memory that an owner keeps alive, described to NumPy.
#[pyclass(frozen, module = "sptk._sptk", name = "_Array")]
pub struct ArrayHandle {
    _owner: Owner,
    /// Address of the first element.
    address: usize,
    /// Number of elements.
    len: usize,
    /// NumPy's type string (`<u4`, `<f8`, `|b1`, ...).
    typestr: &'static str,
}

#[pymethods]
impl ArrayHandle {
    /// NumPy's array interface (version 3): one dimension, read-only.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.len,))?;
        d.set_item("typestr", self.typestr)?;
        d.set_item("data", (self.address, true))?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.len
    }
}

impl ArrayHandle {
    /// A handle on `slice`, which `owner` keeps alive and unchanged.
    ///
    /// The memory is only ever read (the interface says read-only), and `owner` holds the
    /// `Arc` that owns it: a tensor's buffers (owned vectors, or windows of a map that
    /// the file's `Arc<Mmap>` keeps), which are never changed once built.
    pub fn new<T>(owner: Owner, slice: &[T], typestr: &'static str) -> ArrayHandle {
        ArrayHandle {
            _owner: owner,
            address: slice.as_ptr() as usize,
            len: slice.len(),
            typestr,
        }
    }

    /// A handle owning `v` (a kernel's result).
    pub fn owned<T: Send + Sync + 'static>(v: Vec<T>, typestr: &'static str) -> ArrayHandle {
        let v = Arc::new(v);
        ArrayHandle::new(v.clone(), &v[..], typestr)
    }

    /// A handle on an index array at its width. Packed 2-bit arrays have no NumPy type:
    /// they are unpacked into one byte each (a copy, owned by the handle).
    pub fn index(owner: Owner, v: &IndexVec) -> ArrayHandle {
        match v {
            IndexVec::U8(b) => ArrayHandle::new(owner, b, "|u1"),
            IndexVec::U16(b) => ArrayHandle::new(owner, b, "<u2"),
            IndexVec::U32(b) => ArrayHandle::new(owner, b, "<u4"),
            IndexVec::U64(b) => ArrayHandle::new(owner, b, "<u8"),
            IndexVec::Packed2 { .. } => {
                let bytes: Vec<u8> = v.iter().map(|x| x as u8).collect();
                let bytes = Arc::new(bytes);
                ArrayHandle::new(bytes.clone(), &bytes[..], "|u1")
            }
        }
    }

    /// A handle on the values. `bf16` has no NumPy type: its bits are given as `uint16`.
    pub fn values(owner: Owner, v: &ValueVec) -> ArrayHandle {
        let (address, len) = sptk_tensor::with_values!(v, b => (b.as_ptr() as usize, b.len()));
        ArrayHandle {
            _owner: owner,
            address,
            len,
            typestr: value_typestr(v.value_type()),
        }
    }

    /// A handle on `bytes` holding values of type `t`, which `owner` keeps alive and
    /// unchanged (a window of a mapped file); `None` unless `bytes` is whole elements.
    pub fn raw_values(owner: Owner, bytes: &[u8], t: ValueType) -> Option<ArrayHandle> {
        if !bytes.len().is_multiple_of(t.size()) {
            return None;
        }
        Some(ArrayHandle {
            _owner: owner,
            address: bytes.as_ptr() as usize,
            len: bytes.len() / t.size(),
            typestr: value_typestr(t),
        })
    }

    /// A handle on elements `range` of what `self` describes (same owner, no copy).
    pub fn window(&self, range: std::ops::Range<usize>) -> Option<ArrayHandle> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        let size = item_size(self.typestr);
        Some(ArrayHandle {
            _owner: self._owner.clone(),
            address: self.address + range.start * size,
            len: range.end - range.start,
            typestr: self.typestr,
        })
    }
}

/// NumPy's type string for a value type: NumPy's `.npy` `descr` (`sptk_npy`), and
/// `bf16`, which NumPy lacks, as its bits (`<u2`).
pub fn value_typestr(t: ValueType) -> &'static str {
    sptk_npy::Header::descr(t).unwrap_or("<u2")
}

/// Bytes per element of a NumPy type string (`<u4` is 4; `<c16` is 16).
fn item_size(typestr: &str) -> usize {
    typestr.get(2..).and_then(|n| n.parse().ok()).unwrap_or(1)
}

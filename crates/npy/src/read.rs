//! Opening a `.npy` file and reading its elements as floats.

use std::path::{Path, PathBuf};

use half::f16;
use sptk_tensor::ValueType;

use crate::bytes::Bytes;
use crate::header::{self, Header, Order};
use crate::NpyError;

/// An opened `.npy` file: its header and its data, memory-mapped.
pub struct Npy {
    path: PathBuf,
    header: Header,
    bytes: Bytes,
    data_start: usize,
}

/// The float types elements can be read as.
pub trait Float: Copy + Send + Sync + 'static {
    /// The type's name, for messages.
    const NAME: &'static str;
    /// Rounds an `f64` to this type (the identity for `f64`).
    fn from_f64(x: f64) -> Self;
    /// Converts an `f32` (exactly for `f32` and `f64`).
    fn from_f32(x: f32) -> Self;
}

impl Float for f64 {
    const NAME: &'static str = "f64";
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn from_f32(x: f32) -> f64 {
        f64::from(x)
    }
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn from_f32(x: f32) -> f32 {
        x
    }
}

impl Npy {
    /// Opens and maps `path`, checking its header and that the data section is exactly as
    /// long as the shape and element type say.
    ///
    /// # Errors
    /// The file cannot be read, or is not a `.npy` file this reader supports; the message
    /// names the file and, for header errors, the byte.
    pub fn open(path: &Path) -> Result<Npy, NpyError> {
        Npy::from_bytes_inner(path, Bytes::map(path)?)
    }

    /// Reads a `.npy` file held in memory (a stream, an archive member); `name` is used in
    /// messages.
    ///
    /// # Errors
    /// As [`Npy::open`].
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Npy, NpyError> {
        Npy::from_bytes_inner(name, Bytes::Owned(bytes))
    }

    fn from_bytes_inner(path: &Path, bytes: Bytes) -> Result<Npy, NpyError> {
        let all = bytes.as_slice();
        let (header, data_start) = header::parse(all).map_err(|m| NpyError::new(path, m))?;
        let want = header
            .len()
            .and_then(|n| n.checked_mul(header.dtype.size() as u64))
            .ok_or_else(|| {
                NpyError::new(
                    path,
                    format!("shape {:?} has too many elements", header.shape),
                )
            })?;
        let have = (all.len() - data_start) as u64;
        if have != want {
            return Err(NpyError::new(
                path,
                format!(
                    "shape {:?} of {} needs {want} bytes of data after the header (byte \
                     {data_start}), the file has {have}",
                    header.shape,
                    header.dtype.name()
                ),
            ));
        }
        Ok(Npy {
            path: path.to_path_buf(),
            header,
            bytes,
            data_start,
        })
    }

    /// The file's name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the header declares.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.header.shape
    }

    /// The element type.
    pub fn dtype(&self) -> ValueType {
        self.header.dtype
    }

    /// The element order.
    pub fn order(&self) -> Order {
        self.header.order
    }

    /// The data section as stored (the header's byte order and element order).
    pub fn data(&self) -> &[u8] {
        self.bytes
            .as_slice()
            .get(self.data_start..)
            .unwrap_or_default()
    }

    /// The nonzeros of the array, in row-major order whatever its storage order, counted
    /// against `memory_limit` (the machine's default where `None`) before they are
    /// allocated.
    ///
    /// # Errors
    /// A 0-dimensional array, or nonzeros past the memory limit; the message names the
    /// file.
    pub fn to_entries(&self, memory_limit: Option<u64>) -> Result<sptk_tensor::Entries, NpyError> {
        let a = sptk_tensor::DenseArray {
            dtype: self.header.dtype,
            shape: &self.header.shape,
            fortran: self.header.order == Order::Fortran,
            big_endian: self.header.big_endian,
            bytes: self.data(),
        };
        sptk_tensor::dense_entries(&a, memory_limit)
            .map_err(|e| NpyError::new(&self.path, e.to_string()))
    }

    /// The elements in stored order as `T`: f64 and f32 arrays convert (f64 -> f32
    /// rounds to nearest), f16 widens exactly. Big-endian files are swapped. The result
    /// is counted against the machine's memory limit
    /// ([`sptk_tensor::default_memory_limit`]) before it is allocated.
    ///
    /// # Errors
    /// Integer, boolean and complex arrays: a kernel operand must be real floating point,
    /// and this reader does not guess a conversion for it. An array whose floats would
    /// pass the memory limit.
    pub fn to_floats<T: Float>(&self) -> Result<Vec<T>, NpyError> {
        let data = self.data();
        let big = self.header.big_endian;
        let dtype = self.header.dtype;
        if !matches!(dtype, ValueType::F64 | ValueType::F32 | ValueType::F16) {
            return Err(NpyError::new(
                &self.path,
                format!(
                    "holds {} elements; a {} operand must be a real float array (f16, f32 \
                     or f64): convert it with numpy's astype first",
                    dtype.name(),
                    T::NAME
                ),
            ));
        }
        let n = data.len() / dtype.size();
        let bytes = n as u128 * std::mem::size_of::<T>() as u128;
        let limit = sptk_tensor::default_memory_limit();
        let mut out = Vec::new();
        if bytes > u128::from(limit) || out.try_reserve_exact(n).is_err() {
            return Err(NpyError::over_limit(
                &self.path,
                format!(
                    "{n} elements as {} take {bytes} bytes, past this machine's memory limit \
                     of {limit} bytes",
                    T::NAME
                ),
                "the array",
                (bytes, bytes),
                limit,
            ));
        }
        match dtype {
            ValueType::F64 => out.extend(data.chunks_exact(8).map(|c| {
                let b: [u8; 8] = c.try_into().unwrap_or_default();
                T::from_f64(if big {
                    f64::from_be_bytes(b)
                } else {
                    f64::from_le_bytes(b)
                })
            })),
            ValueType::F32 => out.extend(data.chunks_exact(4).map(|c| {
                let b: [u8; 4] = c.try_into().unwrap_or_default();
                T::from_f32(if big {
                    f32::from_be_bytes(b)
                } else {
                    f32::from_le_bytes(b)
                })
            })),
            _ => out.extend(data.chunks_exact(2).map(|c| {
                let b: [u8; 2] = c.try_into().unwrap_or_default();
                let h = if big {
                    f16::from_be_bytes(b)
                } else {
                    f16::from_le_bytes(b)
                };
                T::from_f32(h.to_f32())
            })),
        }
        Ok(out)
    }
}

//! MATLAB Level 5 `.mat` files (MATLAB's v5, v6 and v7 formats, which
//! `scipy.io.savemat` writes; v7 compresses each variable with zlib): a 128-byte header
//! (text starting `MATLAB 5.0 MAT-file`, version 0x0100, `IM` or `MI` for the byte
//! order), then one data element per variable. Sparse variables (`mxSPARSE_CLASS`: `ir`,
//! `jc`, `pr` and `pi`; double, complex or logical) become CSC level arrays; dense numeric
//! variables become their nonzeros, in column-major storage as MATLAB keeps them. Cells,
//! structs, objects and text are listed and skipped with a note. v4 files and v7.3 (HDF5,
//! read by `sptk-hdf5`) are told apart and refused with what to do.

mod element;
mod matrix;
mod read;

use std::path::{Path, PathBuf};

use sptk_tensor::ValueType;

use crate::bytes::Bytes;
use crate::NpyError;
use element::{element, inflate_prefix, MI_COMPRESSED, MI_MATRIX};
use matrix::{class_name, head, value_type, Head};

pub use read::Mat5Matrix;

/// The text a Level 5 file starts with.
pub const MAT5_HEADER: &[u8] = b"MATLAB 5.0 MAT-file";

/// How many inflated bytes are read to list a compressed variable (its flags,
/// dimensions and name).
const HEAD_BYTES: u64 = 4096;

/// One variable of a Level 5 file.
#[derive(Clone, Debug)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// MATLAB's class (`sparse`, `double`, `struct`, ...), with `logical` and `complex`.
    pub class: String,
    /// Dimension sizes.
    pub dims: Vec<u64>,
    /// The value type it is read as; None for a variable not read (cell, struct, text).
    pub value_type: Option<ValueType>,
    /// Whether it is sparse.
    pub sparse: bool,
    /// Stored entries of a sparse variable, where known without inflating it.
    pub entries: Option<u64>,
    /// Its element's offset in the file.
    at: usize,
}

/// An opened Level 5 `.mat` file: its variables listed, its bytes mapped.
pub struct Mat5File {
    path: PathBuf,
    bytes: Bytes,
    big: bool,
    vars: Vec<Variable>,
}

/// Whether `head` (a file's first bytes) looks like a MATLAB v4 file: a first matrix
/// header whose type code `MOPT` and sizes are plausible, in either byte order.
fn looks_v4(head: &[u8]) -> bool {
    let word = |i: usize, big: bool| element::u32_at(head, 4 * i, big);
    [false, true].into_iter().any(|big| {
        let (Some(t), Some(imag), Some(namlen)) = (word(0, big), word(3, big), word(4, big)) else {
            return false;
        };
        t < 5000
            && t % 10 <= 2
            && (t / 10) % 10 <= 5
            && (t / 100) % 10 == 0
            && imag <= 1
            && (1..=64).contains(&namlen)
    })
}

impl Mat5File {
    /// Opens and maps `path`, checks its header and lists its variables.
    ///
    /// # Errors
    /// Not a Level 5 file (a v4 file is named as one), or an element past the end.
    pub fn open(path: &Path) -> Result<Mat5File, NpyError> {
        Mat5File::with_bytes(path, Bytes::map(path)?)
    }

    /// A file held in memory (a stream); `name` is used in messages.
    ///
    /// # Errors
    /// As [`Mat5File::open`].
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Mat5File, NpyError> {
        Mat5File::with_bytes(name, Bytes::Owned(bytes))
    }

    fn with_bytes(path: &Path, bytes: Bytes) -> Result<Mat5File, NpyError> {
        let err = |m: String| NpyError::new(path, m);
        let all = bytes.as_slice();
        if !all.starts_with(MAT5_HEADER) {
            return Err(err(if all.starts_with(b"MATLAB 7.3 MAT-file") {
                "a MATLAB v7.3 file, which is HDF5: read by the `mat` reader of a build with HDF5 support (the default features)".into()
            } else if looks_v4(all) {
                "a MATLAB v4 file (scipy.io.savemat(..., format='4')), which is not read: save it as format='5' (SciPy's default) or -v7 / -v7.3 in MATLAB".into()
            } else {
                "not a MATLAB Level 5 file: it does not start with `MATLAB 5.0 MAT-file`".into()
            }));
        }
        let big = match all.get(126..128) {
            Some(b"IM") => false,
            Some(b"MI") => true,
            other => {
                return Err(err(format!(
                    "byte 126: the byte-order mark is {other:?}, not `IM` or `MI` (or the file is shorter than its 128-byte header)"
                )))
            }
        };
        let version = all.get(124..126).map(|v| {
            let v = [v[0], v[1]];
            if big {
                u16::from_be_bytes(v)
            } else {
                u16::from_le_bytes(v)
            }
        });
        if version != Some(0x0100) {
            return Err(err(format!(
                "byte 124: version {version:#06x?}, not 0x0100 (MATLAB Level 5)"
            )));
        }
        let mut vars = Vec::new();
        let mut at = 128;
        while at < all.len() {
            let e = element(all, at, big).map_err(err)?;
            let var = match e.ty {
                MI_MATRIX => head(e.data, big).map(|h| {
                    let n = (h.class == matrix::MX_SPARSE)
                        .then(|| matrix::stored_entries(e.data, &h, big))
                        .flatten();
                    (h, n)
                }),
                MI_COMPRESSED => {
                    let inner = inflate_prefix(e.data, HEAD_BYTES);
                    match element::u32_at(&inner, 0, big) {
                        Some(MI_MATRIX) => {
                            head(inner.get(8..).unwrap_or(&[]), big).map(|h| (h, None))
                        }
                        _ => Err("holds no variable".into()),
                    }
                }
                _ => Err(String::new()),
            };
            match var {
                Ok((h, entries)) => vars.push(describe(h, entries, at)),
                // Other elements (MATLAB's subsystem data) are not variables.
                Err(m) if m.is_empty() => {}
                Err(m) => return Err(err(format!("element at byte {at}: {m}"))),
            }
            at = e.next;
        }
        vars.retain(|v| !v.name.is_empty());
        Ok(Mat5File {
            path: path.to_path_buf(),
            bytes,
            big,
            vars,
        })
    }

    /// Every variable, in file order (those not read among them).
    pub fn variables(&self) -> &[Variable] {
        &self.vars
    }

    /// Variable `name` (a leading `/` allowed), or with None the only sparse variable, or
    /// the only readable one.
    ///
    /// # Errors
    /// No such variable, or several and none named.
    pub fn variable(&self, name: Option<&str>) -> Result<&Variable, NpyError> {
        let readable: Vec<&Variable> = self
            .vars
            .iter()
            .filter(|v| v.value_type.is_some())
            .collect();
        let names = || {
            let n: Vec<&str> = self.vars.iter().map(|v| v.name.as_str()).collect();
            n.join(", ")
        };
        let found = match name {
            Some(n) => {
                let n = n.trim_start_matches('/');
                return self.vars.iter().find(|v| v.name == n).ok_or_else(|| {
                    NpyError::new(
                        &self.path,
                        format!("no variable `{n}` (it holds {})", names()),
                    )
                });
            }
            None => {
                let sparse: Vec<&&Variable> = readable.iter().filter(|v| v.sparse).collect();
                match (&sparse[..], &readable[..]) {
                    ([one], _) => Some(**one),
                    ([], [one]) => Some(*one),
                    _ => None,
                }
            }
        };
        found.ok_or_else(|| {
            NpyError::new(
                &self.path,
                format!(
                    "holds {} variables ({}); choose one with --var NAME (or FILE:NAME)",
                    self.vars.len(),
                    names()
                ),
            )
        })
    }
}

fn describe(h: Head, entries: Option<u64>, at: usize) -> Variable {
    let mut class = class_name(h.class).to_string();
    if h.logical {
        class = if h.class == matrix::MX_SPARSE {
            "sparse logical".into()
        } else {
            "logical".into()
        };
    } else if h.complex {
        class.push_str(" complex");
    }
    Variable {
        value_type: value_type(&h),
        sparse: h.class == matrix::MX_SPARSE,
        entries,
        name: h.name,
        class,
        dims: h.dims,
        at,
    }
}

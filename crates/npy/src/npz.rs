//! `.npz` archives: a zip of `.npy` members, each read into a typed array without an
//! intermediate copy (a deflated member is inflated straight into the array's memory).

use std::path::{Path, PathBuf};

use sptk_tensor::{IndexVec, Pod, ValueType, ValueVec};

use crate::bytes::{bytes_mut, Bytes};
use crate::header::{self, Header};
use crate::zip::{self, Entry, MemberReader};
use crate::{Npy, NpyError};

/// The longest string member [`Npz::text`] reads.
const MAX_TEXT: usize = 1 << 16;

/// An opened `.npz` archive: its members listed, its bytes mapped.
pub struct Npz {
    path: PathBuf,
    bytes: Bytes,
    entries: Vec<Entry>,
}

/// A member's `.npy` header, as far as an archive reader needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberHeader {
    /// The `descr` as written (`<f8`, `|S3`, ...).
    pub descr: String,
    /// The header, with its element type when `descr` is numeric.
    pub header: Option<Header>,
    /// Bytes of the header (the data starts here).
    pub len: usize,
}

impl Npz {
    /// Opens and maps `path` and reads its central directory.
    ///
    /// # Errors
    /// The file cannot be read or is not a zip archive this reader takes; the message
    /// names the file.
    pub fn open(path: &Path) -> Result<Npz, NpyError> {
        Npz::with_bytes(path, Bytes::map(path)?)
    }

    /// An archive held in memory (a stream); `name` is used in messages.
    ///
    /// # Errors
    /// As [`Npz::open`].
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Npz, NpyError> {
        Npz::with_bytes(name, Bytes::Owned(bytes))
    }

    fn with_bytes(path: &Path, bytes: Bytes) -> Result<Npz, NpyError> {
        let entries = zip::entries(bytes.as_slice()).map_err(|m| NpyError::new(path, m))?;
        Ok(Npz {
            path: path.to_path_buf(),
            bytes,
            entries,
        })
    }

    /// The archive's name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The members' names, in archive order (`data.npy`, ...).
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// An error about this archive.
    pub(crate) fn err(&self, message: impl Into<String>) -> NpyError {
        NpyError::new(&self.path, message)
    }

    fn entry(&self, name: &str) -> Result<&Entry, NpyError> {
        self.entries.iter().find(|e| e.name == name).ok_or_else(|| {
            self.err(format!(
                "no member {name} (the archive holds {})",
                self.names().join(", ")
            ))
        })
    }

    /// Reads the `.npy` header at the start of member `name`.
    ///
    /// # Errors
    /// A missing member, or one that is not a `.npy` array.
    pub fn header(&self, name: &str) -> Result<MemberHeader, NpyError> {
        let entry = self.entry(name)?;
        let mut r = MemberReader::new(self.bytes.as_slice(), entry);
        self.read_header(name, entry, &mut r)
    }

    fn read_header(
        &self,
        name: &str,
        entry: &Entry,
        r: &mut MemberReader,
    ) -> Result<MemberHeader, NpyError> {
        let at = |m: String| self.err(format!("{name}: {m}"));
        let size = entry.size;
        let mut head = vec![0u8; header::PREFIX.min(usize::try_from(size).unwrap_or(usize::MAX))];
        r.fill(&mut head).map_err(|m| self.err(m))?;
        // At most `header::MAX_DICT` bytes, and no more than the member holds: the
        // buffer below is sized from the file only after both checks.
        let (start, dict) = header::dict_span(&head).map_err(at)?;
        let len = start + dict;
        if len as u64 > size {
            return Err(at(format!(
                "the .npy header says it is {dict} bytes long from byte {start}, past the end \
                 of the member ({size} bytes)"
            )));
        }
        if len > head.len() {
            let have = head.len();
            head.resize(len, 0);
            r.fill(&mut head[have..]).map_err(|m| self.err(m))?;
        }
        head.truncate(len);
        let (raw, _) = header::parse_raw(&head).map_err(at)?;
        Ok(MemberHeader {
            header: header::typed(&raw).ok(),
            descr: raw.1,
            len,
        })
    }

    /// Opens member `name` positioned at its data, checking that the data is exactly as
    /// long as the header says.
    pub(crate) fn array(&self, name: &str) -> Result<Array<'_>, NpyError> {
        let entry = self.entry(name)?;
        let mut r = MemberReader::new(self.bytes.as_slice(), entry);
        let h = self.read_header(name, entry, &mut r)?;
        let at = |m: String| self.err(format!("{name}: {m}"));
        let Some(header) = h.header else {
            return Err(at(format!("element type '{}' is not numeric", h.descr)));
        };
        let n = header
            .len()
            .filter(|&n| n.checked_mul(header.dtype.size() as u64).is_some())
            .ok_or_else(|| at(format!("shape {:?} has too many elements", header.shape)))?;
        let want = n * header.dtype.size() as u64;
        let have = entry.size - h.len as u64;
        if want != have {
            return Err(at(format!(
                "shape {:?} of {} needs {want} bytes after the header, the member holds {have}",
                header.shape, header.dtype
            )));
        }
        let len = usize::try_from(n)
            .map_err(|_| at(format!("shape {:?} has too many elements", header.shape)))?;
        Ok(Array {
            npz: self,
            name: name.to_string(),
            header,
            reader: r,
            len,
        })
    }

    /// Member `name` read whole as a `.npy` array (an `np.savez` archive's named arrays),
    /// its size counted against `memory_limit` (the machine's default where `None`) before
    /// it is inflated; named `ARCHIVE:NAME` in messages.
    ///
    /// # Errors
    /// A missing member, one past the memory limit, a damaged deflate stream or CRC, and
    /// every error of [`Npy::from_bytes`].
    pub fn npy(&self, name: &str, memory_limit: Option<u64>) -> Result<Npy, NpyError> {
        let entry = self.entry(name)?;
        let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
        if entry.size > limit {
            let bytes = u128::from(entry.size);
            return Err(NpyError::over_limit(
                &self.path,
                format!("{name}: {bytes} bytes, past the memory limit of {limit} bytes (--memory-limit)"),
                name,
                (bytes, bytes),
                limit,
            ));
        }
        let size = usize::try_from(entry.size)
            .map_err(|_| self.err(format!("{name}: {} bytes", entry.size)))?;
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(size)
            .map_err(|_| self.err(format!("{name}: {size} bytes cannot be allocated")))?;
        bytes.resize(size, 0);
        let mut r = MemberReader::new(self.bytes.as_slice(), entry);
        r.fill(&mut bytes).map_err(|m| self.err(m))?;
        r.finish().map_err(|m| self.err(m))?;
        let shown = format!("{}:{}", self.path.display(), name.trim_end_matches(".npy"));
        Npy::from_bytes(Path::new(&shown), bytes)
    }

    /// Member `name` as text: a 0-d byte string (`|S3`, what SciPy writes for `format`) or
    /// a 0-d Unicode string (`<U3`).
    ///
    /// # Errors
    /// A missing member, or one that is not a 0-d string.
    pub fn text(&self, name: &str) -> Result<String, NpyError> {
        let entry = self.entry(name)?;
        let mut r = MemberReader::new(self.bytes.as_slice(), entry);
        let h = self.read_header(name, entry, &mut r)?;
        let at = |m: String| self.err(format!("{name}: {m}"));
        let code = h.descr.trim_start_matches(['|', '<', '=', '>']);
        let mut chars = code.chars();
        let kind = chars.next();
        let width: usize = chars.as_str().parse().unwrap_or(0);
        let unit = match kind {
            Some('S') => 1,
            Some('U') => 4,
            _ => return Err(at(format!("holds '{}' elements, not a string", h.descr))),
        };
        // A 0-d string (SciPy's `format`) is a few bytes: refuse a long one before its
        // buffer is sized from the file.
        let bytes = width
            .checked_mul(unit)
            .filter(|&b| b <= MAX_TEXT)
            .ok_or_else(|| {
                at(format!(
                    "'{}' is a string longer than the {MAX_TEXT} bytes this reader takes",
                    h.descr
                ))
            })?;
        if entry.size != (h.len + bytes) as u64 {
            return Err(at(format!("'{}' is not one string", h.descr)));
        }
        let mut raw = vec![0u8; bytes];
        r.fill(&mut raw).map_err(|m| self.err(m))?;
        r.finish().map_err(|m| self.err(m))?;
        let text: String = if unit == 1 {
            raw.iter().map(|&b| b as char).collect()
        } else {
            let big = h.descr.starts_with('>');
            raw.chunks_exact(4)
                .filter_map(|c| {
                    let b = [c[0], c[1], c[2], c[3]];
                    char::from_u32(if big {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    })
                })
                .collect()
        };
        Ok(text.trim_end_matches('\0').to_string())
    }
}

/// A member's array, positioned at its data.
pub(crate) struct Array<'a> {
    npz: &'a Npz,
    name: String,
    pub(crate) header: Header,
    reader: MemberReader<'a>,
    pub(crate) len: usize,
}

impl Array<'_> {
    fn err(&self, message: String) -> NpyError {
        self.npz.err(format!("{}: {message}", self.name))
    }

    /// Reads the whole array into `T`s (bytes swapped if the file is big-endian).
    fn read<T: Pod + sptk_tensor::Value + Swap>(mut self) -> Result<Vec<T>, NpyError> {
        let mut v: Vec<T> =
            sptk_tensor::big_zeroed(self.len).map_err(|e| self.err(e.to_string()))?;
        let bytes = bytes_mut(&mut v);
        // Pieces of 64 MiB, so a huge member is not one giant call.
        for piece in bytes.chunks_mut(64 << 20) {
            self.reader.fill(piece).map_err(|m| self.npz.err(m))?;
        }
        let Array { reader, header, .. } = self;
        reader.finish().map_err(|m| self.npz.err(m))?;
        if header.big_endian {
            v.iter_mut().for_each(|x| *x = x.swap());
        }
        Ok(v)
    }

    /// The array as indices: 32- or 64-bit integers, signed ones checked for negatives.
    pub(crate) fn indices(self) -> Result<IndexVec, NpyError> {
        let name = self.name.clone();
        let npz = self.npz;
        let negative = |v: &[u64], half: u64| {
            let found = sptk_tensor::par::fold_chunks(v.len(), |r| {
                let s = r.start;
                v[r].iter().position(|&x| x >= half).map(|p| s + p)
            });
            found.into_iter().flatten().next()
        };
        Ok(match self.header.dtype {
            ValueType::I32 | ValueType::U32 => {
                let signed = self.header.dtype == ValueType::I32;
                let v: Vec<u32> = self.read()?;
                if signed {
                    let bad = sptk_tensor::par::fold_chunks(v.len(), |r| {
                        let s = r.start;
                        v[r].iter().position(|&x| x >= 1 << 31).map(|p| s + p)
                    });
                    if let Some(i) = bad.into_iter().flatten().next() {
                        return Err(npz.err(format!(
                            "{name}: element {i} is {}; indices cannot be negative",
                            v[i] as i32
                        )));
                    }
                }
                IndexVec::U32(v.into())
            }
            ValueType::I64 | ValueType::U64 => {
                let signed = self.header.dtype == ValueType::I64;
                let v: Vec<u64> = self.read()?;
                if let Some(i) = negative(&v, 1 << 63).filter(|_| signed) {
                    return Err(npz.err(format!(
                        "{name}: element {i} is {}; indices cannot be negative",
                        v[i] as i64
                    )));
                }
                IndexVec::U64(v.into())
            }
            other => {
                return Err(npz.err(format!(
                    "{name}: holds {other} elements; indices are int32 or int64"
                )))
            }
        })
    }

    /// The array as small integers (a shape, DIA offsets), any integer type: at most
    /// `max` of them, checked before they are read.
    pub(crate) fn integers(self, max: usize) -> Result<Vec<i64>, NpyError> {
        let err = |m: String| self.npz.err(format!("{}: {m}", self.name));
        let t = self.header.dtype;
        if self.len > max {
            return Err(err(format!(
                "{} elements; expected a short list (at most {max})",
                self.len
            )));
        }
        let wide = |v: Vec<u64>| v.into_iter().map(|x| x as i64).collect();
        Ok(match t {
            ValueType::I64 | ValueType::U64 => wide(self.read::<u64>()?),
            ValueType::I32 => self
                .read::<u32>()?
                .into_iter()
                .map(|x| i64::from(x as i32))
                .collect(),
            ValueType::U32 => self.read::<u32>()?.into_iter().map(i64::from).collect(),
            ValueType::I16 => self
                .read::<u16>()?
                .into_iter()
                .map(|x| i64::from(x as i16))
                .collect(),
            ValueType::U16 => self.read::<u16>()?.into_iter().map(i64::from).collect(),
            ValueType::I8 => self
                .read::<u8>()?
                .into_iter()
                .map(|x| i64::from(x as i8))
                .collect(),
            ValueType::U8 => self.read::<u8>()?.into_iter().map(i64::from).collect(),
            other => return Err(err(format!("holds {other} elements; expected integers"))),
        })
    }

    /// The array as values of its own type (booleans checked to be 0 or 1).
    pub(crate) fn values(self) -> Result<ValueVec, NpyError> {
        macro_rules! typed {
            ($($tag:ident: $t:ty),*) => {
                match self.header.dtype {
                    ValueType::Bool => {
                        let name = self.name.clone();
                        let npz = self.npz;
                        let v: Vec<u8> = self.read()?;
                        if let Some(i) = v.iter().position(|&b| b > 1) {
                            return Err(npz.err(format!(
                                "{name}: element {i} is {}, not a bool (0 or 1)", v[i]
                            )));
                        }
                        ValueVec::Bool(v.into_iter().map(|b| b == 1).collect::<Vec<bool>>().into())
                    }
                    $(ValueType::$tag => ValueVec::$tag(self.read::<$t>()?.into()),)*
                }
            };
        }
        Ok(typed!(
            F16: half::f16, BF16: half::bf16, F32: f32, F64: f64, I8: i8, I16: i16, I32: i32,
            I64: i64, U8: u8, U16: u16, U32: u32, U64: u64,
            C64: sptk_tensor::C64, C128: sptk_tensor::C128
        ))
    }
}

/// Byte order swap of an element (each component of a complex value on its own).
pub(crate) trait Swap: Copy {
    fn swap(self) -> Self;
}

macro_rules! swap_int {
    ($($t:ty),*) => {$(
        impl Swap for $t {
            fn swap(self) -> $t {
                self.swap_bytes()
            }
        }
    )*};
}
swap_int!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! swap_float {
    ($($t:ty),*) => {$(
        impl Swap for $t {
            fn swap(self) -> $t {
                <$t>::from_bits(self.to_bits().swap_bytes())
            }
        }
    )*};
}
swap_float!(f32, f64, half::f16, half::bf16);

impl<T: Swap> Swap for sptk_tensor::Complex<T> {
    fn swap(self) -> Self {
        sptk_tensor::Complex {
            re: self.re.swap(),
            im: self.im.swap(),
        }
    }
}

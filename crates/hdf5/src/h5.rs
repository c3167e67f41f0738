//! Reading HDF5 objects by their stored types: every numeric dataset is read in the type
//! the file declares (never converted by the library, which would truncate an f32 read as
//! i32 without a word), index arrays are checked for negatives, strings are read whether
//! they are variable-length or fixed-length, and every array's size is checked against the
//! memory budget before it is allocated. Every error names the file and the object.

use std::path::Path;

use hdf5::types::{FloatSize, IntSize, TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Container, Dataset, Group, Location};
use sptk_tensor::{IndexVec, ValueType, ValueVec, C128, C64};

use crate::error::{At, H5Error};
use crate::plan::Plan;

/// An open HDF5 file being read, with the budget every array is checked against.
pub(crate) struct H5<'a> {
    /// Where errors are reported.
    pub at: At<'a>,
    /// The file.
    pub file: hdf5::File,
    /// Bytes any one array may take.
    pub limit: u64,
}

/// Marks the descriptor libhdf5 holds for `file` close-on-exec. Its default driver (sec2,
/// the one every file here is opened and created with) opens files without `O_CLOEXEC`, so
/// a child process that another thread starts while the file is open (a peer tool, the
/// isolated reader's helper, anything a library caller runs) inherits the descriptor, and
/// with it the file's lock: the next open of that file then fails with `unable to lock
/// file, errno = 11` until the child ends. (A child started between the library's `open`
/// and this call still inherits it; the window is a few instructions wide.)
pub(crate) fn keep_from_children(file: &hdf5::File) {
    let mut handle: *mut std::ffi::c_void = std::ptr::null_mut();
    // Under the bindings' global lock, as every call into libhdf5.
    let status = hdf5::sync::sync(|| {
        // SAFETY: `file.id()` is an open file identifier that `file` keeps open for the
        // call; `handle` is a live local the library writes one pointer into; the global
        // lock held by `sync` keeps every other thread out of the library.
        unsafe {
            hdf5_sys::h5f::H5Fget_vfd_handle(file.id(), hdf5_sys::h5p::H5P_DEFAULT, &mut handle)
        }
    });
    if status < 0 || handle.is_null() {
        return;
    }
    // SAFETY: for the sec2 driver the handle points at the file's `int` descriptor, which
    // stays open as long as `file` does; the file was opened with the default access list,
    // so its driver is sec2.
    let fd = unsafe { *handle.cast::<libc::c_int>() };
    // SAFETY: `fcntl` on a descriptor number with plain integer arguments; no memory is
    // handed over. A failure leaves the flag as it was, which is only the old behaviour.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// Opens `path` for reading.
pub(crate) fn open(path: &Path, limit: Option<u64>) -> Result<H5<'_>, H5Error> {
    let at = At { file: path };
    let meta = std::fs::metadata(path).map_err(|e| at.err("", e.to_string()))?;
    if meta.len() == 0 {
        return Err(at.err("", "an empty file, not HDF5"));
    }
    let file = hdf5::File::open(path).map_err(|e| {
        at.err(
            "",
            format!(
                "not a readable HDF5 file (truncated or damaged?): {}",
                crate::error::describe(&e)
            ),
        )
    })?;
    keep_from_children(&file);
    Ok(H5 {
        at,
        file,
        limit: limit.unwrap_or_else(sptk_tensor::default_memory_limit),
    })
}

impl H5<'_> {
    /// The group at `path` (`/` for the root).
    pub fn group(&self, path: &str) -> Result<Group, H5Error> {
        self.file
            .group(path)
            .map_err(|_| self.at.err(path, self.missing(path)))
    }

    /// Why `path` is not there, with what its nearest existing group holds (a typo in
    /// `layers/count` lists the layers).
    fn missing(&self, path: &str) -> String {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        for depth in (0..parts.len()).rev() {
            let parent = format!("/{}", parts[..depth].join("/"));
            let Ok(g) = self.file.group(&parent) else {
                continue;
            };
            let mut names = g.member_names().unwrap_or_default();
            names.sort();
            let shown: Vec<String> = names.iter().take(20).map(|n| format!("`{n}`")).collect();
            let more = names.len().saturating_sub(shown.len());
            let held = match (shown.is_empty(), more) {
                (true, _) => "nothing".to_string(),
                (false, 0) => shown.join(", "),
                (false, n) => format!("{} and {n} more", shown.join(", ")),
            };
            return format!(
                "no such group or dataset in the file: `{}` is not in {parent}, which holds {held}",
                parts[depth]
            );
        }
        "no such group or dataset in the file".into()
    }

    /// The dataset `name` of group `g`.
    pub fn dataset(&self, g: &Group, name: &str) -> Result<Dataset, H5Error> {
        let path = join(&g.name(), name);
        if !g.link_exists(name) {
            return Err(self.at.err(path, "missing dataset"));
        }
        g.dataset(name)
            .map_err(|_| self.at.err(path, "is not a dataset"))
    }

    /// Whether `g` has a dataset `name`.
    pub fn has_dataset(g: &Group, name: &str) -> bool {
        g.link_exists(name) && g.dataset(name).is_ok()
    }

    /// Whether `g` has a group `name`.
    pub fn has_group(g: &Group, name: &str) -> bool {
        g.link_exists(name) && g.group(name).is_ok()
    }

    /// A string attribute (variable- or fixed-length, ASCII or UTF-8), if present.
    pub fn attr_string(&self, loc: &Location, name: &str) -> Result<Option<String>, H5Error> {
        let Some(attr) = attr(loc, name) else {
            return Ok(None);
        };
        let object = attr_object(loc, name);
        let td = self.descriptor(&attr, &object)?;
        let text = match td {
            TypeDescriptor::VarLenUnicode => attr
                .read_scalar::<VarLenUnicode>()
                .map(|s| s.as_str().to_string()),
            TypeDescriptor::VarLenAscii => attr
                .read_scalar::<VarLenAscii>()
                .map(|s| s.as_str().to_string()),
            TypeDescriptor::FixedAscii(_) | TypeDescriptor::FixedUnicode(_) => {
                let mut all = self.fixed_strings(&attr, &object, true)?;
                if all.len() != 1 {
                    return Err(self
                        .at
                        .err(object, format!("{} strings where one belongs", all.len())));
                }
                Ok(all.remove(0))
            }
            other => {
                return Err(self.at.err(
                    object,
                    format!("{} where a string belongs", type_words(&other)),
                ))
            }
        };
        text.map(Some)
            .map_err(|e| self.at.lib(object, "reading the string", e))
    }

    /// An integer attribute or 1-D integer array attribute, as unsigned numbers (negatives
    /// refused), if present.
    pub fn attr_u64s(&self, loc: &Location, name: &str) -> Result<Option<Vec<u64>>, H5Error> {
        let Some(attr) = attr(loc, name) else {
            return Ok(None);
        };
        let object = attr_object(loc, name);
        self.u64s(&attr, &object).map(Some)
    }

    /// The integers of a (small) dataset or attribute, as unsigned numbers.
    pub fn u64s(&self, c: &Container, object: &str) -> Result<Vec<u64>, H5Error> {
        let v = self.index(c, object)?;
        Ok(v.to_u64_vec())
    }

    /// The stored type of an object.
    pub fn descriptor(&self, c: &Container, object: &str) -> Result<TypeDescriptor, H5Error> {
        c.dtype()
            .and_then(|t| t.to_descriptor())
            .map_err(|e| self.at.lib(object, "reading its type", e))
    }

    /// Checks that `elements` of `elem_bytes` each fit the budget.
    pub fn check_budget(
        &self,
        object: &str,
        elements: usize,
        elem_bytes: usize,
    ) -> Result<(), H5Error> {
        let bytes = (elements as u128) * (elem_bytes as u128);
        if bytes > self.limit as u128 {
            let what = format!("{elements} elements");
            return Err(self
                .at
                .over_limit(object, &what, elements as u128, bytes, self.limit));
        }
        Ok(())
    }

    /// A numeric array: by its plan where the dataset's layout has one (see `plan`), else
    /// through the library.
    fn read_num<T: hdf5::H5Type + crate::direct::Plain>(
        &self,
        c: &Container,
        ds: Option<&Dataset>,
        object: &str,
    ) -> Result<Vec<T>, H5Error> {
        if let Some(ds) = ds {
            if let Some(p) = crate::plan::plan(self, ds, T::TYPE, object)? {
                return crate::direct::execute(&self.source()?, &p, object);
            }
        }
        self.read_raw(c, object)
    }

    /// The file, for executing plans.
    pub fn source(&self) -> Result<crate::direct::Source<'_>, H5Error> {
        crate::direct::Source::open(self.at, self.limit)
    }

    /// The plan of the 1-D integer dataset `ds`, if its layout has one.
    pub fn index_plan(&self, ds: &Dataset, object: &str) -> Result<Option<Plan>, H5Error> {
        match value_type_of(&self.descriptor(ds, object)?) {
            Some(t) if crate::plan::is_integer(t) => crate::plan::plan(self, ds, t, object),
            _ => Ok(None),
        }
    }

    /// The plan of the 1-D numeric dataset `ds`, if its layout has one.
    pub fn values_plan(&self, ds: &Dataset, object: &str) -> Result<Option<Plan>, H5Error> {
        match value_type_of(&self.descriptor(ds, object)?) {
            Some(t) => crate::plan::plan(self, ds, t, object),
            None => Ok(None),
        }
    }

    /// Signed integers read whole and checked for negatives, as unsigned ones.
    fn unsigned<S: hdf5::H5Type + crate::direct::Signed>(
        &self,
        c: &Container,
        ds: Option<&Dataset>,
        object: &str,
    ) -> Result<Vec<S::Unsigned>, H5Error> {
        crate::direct::unsigned(self.at, object, self.read_num::<S>(c, ds, object)?)
    }

    fn read_raw<T: hdf5::H5Type>(&self, c: &Container, object: &str) -> Result<Vec<T>, H5Error> {
        self.check_budget(object, c.size(), std::mem::size_of::<T>())?;
        c.read_raw::<T>()
            .map_err(|e| self.at.lib(object, "reading", e))
    }

    /// An array of non-negative integers in its stored width (any shape, flattened).
    pub fn index(&self, c: &Container, object: &str) -> Result<IndexVec, H5Error> {
        self.index_from(c, None, object)
    }

    /// [`H5::index`] of a dataset, read straight from the file where its layout allows.
    pub fn index_ds(&self, ds: &Dataset, object: &str) -> Result<IndexVec, H5Error> {
        self.index_from(ds, Some(ds), object)
    }

    fn index_from(
        &self,
        c: &Container,
        ds: Option<&Dataset>,
        object: &str,
    ) -> Result<IndexVec, H5Error> {
        let td = self.descriptor(c, object)?;
        Ok(match td {
            TypeDescriptor::Unsigned(IntSize::U1) => {
                IndexVec::U8(self.read_num(c, ds, object)?.into())
            }
            TypeDescriptor::Unsigned(IntSize::U2) => {
                IndexVec::U16(self.read_num(c, ds, object)?.into())
            }
            TypeDescriptor::Unsigned(IntSize::U4) => {
                IndexVec::U32(self.read_num(c, ds, object)?.into())
            }
            TypeDescriptor::Unsigned(IntSize::U8) => {
                IndexVec::U64(self.read_num(c, ds, object)?.into())
            }
            TypeDescriptor::Integer(IntSize::U1) => {
                IndexVec::U8(self.unsigned::<i8>(c, ds, object)?.into())
            }
            TypeDescriptor::Integer(IntSize::U2) => {
                IndexVec::U16(self.unsigned::<i16>(c, ds, object)?.into())
            }
            TypeDescriptor::Integer(IntSize::U4) => {
                IndexVec::U32(self.unsigned::<i32>(c, ds, object)?.into())
            }
            TypeDescriptor::Integer(IntSize::U8) => {
                IndexVec::U64(self.unsigned::<i64>(c, ds, object)?.into())
            }
            other => {
                return Err(self.at.err(
                    object,
                    format!("{} where integers belong", type_words(&other)),
                ))
            }
        })
    }

    /// The 1-D dataset `name` of `g`.
    pub fn dataset_1d(&self, g: &Group, name: &str) -> Result<Dataset, H5Error> {
        let ds = self.dataset(g, name)?;
        self.expect_1d(&ds, &ds.name())?;
        Ok(ds)
    }

    /// A 1-D index array (the dataset `name` of `g`).
    pub fn index_1d(&self, g: &Group, name: &str) -> Result<IndexVec, H5Error> {
        let ds = self.dataset_1d(g, name)?;
        self.index_ds(&ds, &ds.name())
    }

    /// Refuses an array of other than one dimension.
    pub fn expect_1d(&self, ds: &Dataset, object: &str) -> Result<(), H5Error> {
        let shape = ds.shape();
        if shape.len() != 1 {
            return Err(self.at.err(
                object,
                format!(
                    "a {}-dimensional dataset {shape:?} where a 1-D array belongs",
                    shape.len()
                ),
            ));
        }
        Ok(())
    }

    /// The value type an object stores, if it is numeric (compound `{real, imag}` is
    /// complex).
    pub fn value_type(&self, c: &Container, object: &str) -> Result<ValueType, H5Error> {
        let td = self.descriptor(c, object)?;
        value_type_of(&td).ok_or_else(|| {
            self.at
                .err(object, format!("{} where numbers belong", type_words(&td)))
        })
    }

    /// Numeric values in their stored type (any shape, flattened in storage order).
    pub fn values(&self, c: &Container, object: &str) -> Result<ValueVec, H5Error> {
        self.values_from(c, None, object)
    }

    /// [`H5::values`] of a dataset, read straight from the file where its layout allows.
    pub fn values_ds(&self, ds: &Dataset, object: &str) -> Result<ValueVec, H5Error> {
        self.values_from(ds, Some(ds), object)
    }

    fn values_from(
        &self,
        c: &Container,
        ds: Option<&Dataset>,
        object: &str,
    ) -> Result<ValueVec, H5Error> {
        let t = self.value_type(c, object)?;
        Ok(match t {
            ValueType::F16 => ValueVec::F16(self.read_num(c, ds, object)?.into()),
            ValueType::F32 => ValueVec::F32(self.read_num(c, ds, object)?.into()),
            ValueType::F64 => ValueVec::F64(self.read_num(c, ds, object)?.into()),
            ValueType::I8 => ValueVec::I8(self.read_num(c, ds, object)?.into()),
            ValueType::I16 => ValueVec::I16(self.read_num(c, ds, object)?.into()),
            ValueType::I32 => ValueVec::I32(self.read_num(c, ds, object)?.into()),
            ValueType::I64 => ValueVec::I64(self.read_num(c, ds, object)?.into()),
            ValueType::U8 => ValueVec::U8(self.read_num(c, ds, object)?.into()),
            ValueType::U16 => ValueVec::U16(self.read_num(c, ds, object)?.into()),
            ValueType::U32 => ValueVec::U32(self.read_num(c, ds, object)?.into()),
            ValueType::U64 => ValueVec::U64(self.read_num(c, ds, object)?.into()),
            ValueType::Bool => ValueVec::Bool(self.read_raw(c, object)?.into()),
            ValueType::C128 | ValueType::C64 => self.complex(c, object, t)?,
            other => {
                return Err(self
                    .at
                    .err(object, format!("values of type {other:?} cannot be read")))
            }
        })
    }

    /// Complex values, from either compound naming (`{real, imag}` or `{r, i}`).
    fn complex(&self, c: &Container, object: &str, t: ValueType) -> Result<ValueVec, H5Error> {
        let ri = matches!(self.descriptor(c, object)?, TypeDescriptor::Compound(ref k) if k.fields[0].name == "r");
        Ok(match (t, ri) {
            (ValueType::C128, false) => {
                let v: Vec<ComplexMatlab<f64>> = self.read_raw(c, object)?;
                ValueVec::C128(
                    v.iter()
                        .map(|z| C128 {
                            re: z.real,
                            im: z.imag,
                        })
                        .collect::<Vec<_>>()
                        .into(),
                )
            }
            (ValueType::C128, true) => {
                let v: Vec<ComplexRi<f64>> = self.read_raw(c, object)?;
                ValueVec::C128(
                    v.iter()
                        .map(|z| C128 { re: z.r, im: z.i })
                        .collect::<Vec<_>>()
                        .into(),
                )
            }
            (_, false) => {
                let v: Vec<ComplexMatlab<f32>> = self.read_raw(c, object)?;
                ValueVec::C64(
                    v.iter()
                        .map(|z| C64 {
                            re: z.real,
                            im: z.imag,
                        })
                        .collect::<Vec<_>>()
                        .into(),
                )
            }
            (_, true) => {
                let v: Vec<ComplexRi<f32>> = self.read_raw(c, object)?;
                ValueVec::C64(
                    v.iter()
                        .map(|z| C64 { re: z.r, im: z.i })
                        .collect::<Vec<_>>()
                        .into(),
                )
            }
        })
    }

    /// Every string of a 1-D string dataset (variable- or fixed-length); variable-length
    /// ones from the file's bytes where they can be (`vlen.rs`), else by the library.
    pub fn strings(&self, ds: &Dataset, object: &str) -> Result<Vec<String>, H5Error> {
        self.expect_1d(ds, object)?;
        let td = self.descriptor(ds, object)?;
        if matches!(
            td,
            TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii
        ) {
            if let Some(v) = crate::vlen::strings(self, ds, object)? {
                return Ok(v);
            }
        }
        self.strings_by_library(ds, object, td)
    }

    /// [`H5::strings`] through the library alone (and the oracle of `vlen.rs`'s tests).
    pub(crate) fn strings_by_library(
        &self,
        ds: &Dataset,
        object: &str,
        td: TypeDescriptor,
    ) -> Result<Vec<String>, H5Error> {
        match td {
            TypeDescriptor::VarLenUnicode => {
                let v: Vec<VarLenUnicode> = self.read_raw(ds, object)?;
                Ok(v.iter().map(|s| s.as_str().to_string()).collect())
            }
            TypeDescriptor::VarLenAscii => {
                let v: Vec<VarLenAscii> = self.read_raw(ds, object)?;
                Ok(v.iter().map(|s| s.as_str().to_string()).collect())
            }
            TypeDescriptor::FixedAscii(_) | TypeDescriptor::FixedUnicode(_) => {
                self.fixed_strings(ds, object, false)
            }
            other => Err(self.at.err(
                object,
                format!("{} where strings belong", type_words(&other)),
            )),
        }
    }

    /// Fixed-length strings, read as the bytes the file stores (HDF5 will not convert
    /// them into variable-length ones), cut at the first NUL and trailing spaces.
    fn fixed_strings(
        &self,
        c: &Container,
        object: &str,
        is_attr: bool,
    ) -> Result<Vec<String>, H5Error> {
        let dtype = c
            .dtype()
            .map_err(|e| self.at.lib(object, "reading its type", e))?;
        let width = dtype.size();
        let count = c.size();
        self.check_budget(object, count, width)?;
        let mut bytes = vec![0u8; count * width];
        let out = bytes.as_mut_ptr().cast();
        // Under the bindings' global lock, as every call the bindings make: libhdf5 is not
        // thread-safe, and `sync` is what serialises it against other threads' calls.
        let status = hdf5::sync::sync(|| {
            // SAFETY: `out` is `bytes`, which holds `count` elements of the object's own
            // type (`width` bytes each, from its datatype; `count` is the object's size and
            // `count * width` passed the budget check above); reading with that same type as
            // the memory type makes the library copy exactly `count * width` bytes, no
            // conversion, no pointers. `c` and `dtype` are open identifiers owned by the
            // bindings for the whole call, and the global lock held by `sync` keeps any
            // other thread out of the library meanwhile.
            unsafe {
                if is_attr {
                    hdf5_sys::h5a::H5Aread(c.id(), dtype.id(), out)
                } else {
                    hdf5_sys::h5d::H5Dread(
                        c.id(),
                        dtype.id(),
                        hdf5_sys::h5s::H5S_ALL,
                        hdf5_sys::h5s::H5S_ALL,
                        hdf5_sys::h5p::H5P_DEFAULT,
                        out,
                    )
                }
            }
        });
        if status < 0 {
            return Err(self
                .at
                .err(object, "the HDF5 library could not read the strings"));
        }
        Ok(bytes
            .chunks(width.max(1))
            .take(count)
            .map(|s| {
                let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).trim_end().to_string()
            })
            .collect())
    }
}

/// A complex number as MATLAB stores it (`{real, imag}`).
#[derive(hdf5::H5Type, Clone, Copy)]
#[repr(C)]
pub(crate) struct ComplexMatlab<T: Copy + hdf5::H5Type + 'static> {
    pub real: T,
    pub imag: T,
}

/// A complex number as h5py (and so AnnData) stores it (`{r, i}`).
#[derive(hdf5::H5Type, Clone, Copy)]
#[repr(C)]
pub(crate) struct ComplexRi<T: Copy + hdf5::H5Type + 'static> {
    pub r: T,
    pub i: T,
}

/// The value type of a stored HDF5 type, if numeric.
pub(crate) fn value_type_of(td: &TypeDescriptor) -> Option<ValueType> {
    Some(match td {
        TypeDescriptor::Float(FloatSize::U2) => ValueType::F16,
        TypeDescriptor::Float(FloatSize::U4) => ValueType::F32,
        TypeDescriptor::Float(FloatSize::U8) => ValueType::F64,
        TypeDescriptor::Integer(IntSize::U1) => ValueType::I8,
        TypeDescriptor::Integer(IntSize::U2) => ValueType::I16,
        TypeDescriptor::Integer(IntSize::U4) => ValueType::I32,
        TypeDescriptor::Integer(IntSize::U8) => ValueType::I64,
        TypeDescriptor::Unsigned(IntSize::U1) => ValueType::U8,
        TypeDescriptor::Unsigned(IntSize::U2) => ValueType::U16,
        TypeDescriptor::Unsigned(IntSize::U4) => ValueType::U32,
        TypeDescriptor::Unsigned(IntSize::U8) => ValueType::U64,
        TypeDescriptor::Boolean => ValueType::Bool,
        TypeDescriptor::Compound(c) => {
            let names: Vec<&str> = c.fields.iter().map(|f| f.name.as_str()).collect();
            if names != ["real", "imag"] && names != ["r", "i"] {
                return None;
            }
            match (&c.fields[0].ty, &c.fields[1].ty) {
                (TypeDescriptor::Float(FloatSize::U8), TypeDescriptor::Float(FloatSize::U8)) => {
                    ValueType::C128
                }
                (TypeDescriptor::Float(FloatSize::U4), TypeDescriptor::Float(FloatSize::U4)) => {
                    ValueType::C64
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A stored type in words, for errors.
pub(crate) fn type_words(td: &TypeDescriptor) -> String {
    match td {
        TypeDescriptor::FixedAscii(_)
        | TypeDescriptor::FixedUnicode(_)
        | TypeDescriptor::VarLenAscii
        | TypeDescriptor::VarLenUnicode => "strings".into(),
        TypeDescriptor::Compound(c) => format!(
            "a compound type {{{}}}",
            c.fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => format!("type {other}"),
    }
}

fn attr(loc: &Location, name: &str) -> Option<hdf5::Attribute> {
    if !loc.attr_names().is_ok_and(|n| n.iter().any(|x| x == name)) {
        return None;
    }
    loc.attr(name).ok()
}

fn attr_object(loc: &Location, name: &str) -> String {
    format!("attribute `{name}` of {}", loc.name())
}

/// `group/name` without doubled slashes.
pub(crate) fn join(group: &str, name: &str) -> String {
    if group.ends_with('/') {
        format!("{group}{name}")
    } else {
        format!("{group}/{name}")
    }
}

//! Writing stored tensors into HDF5 files: binsparse (`.h5`, `.bsp.h5`), AnnData `.h5ad`
//! and MATLAB v7.3 `.mat`. Every file is written to a temporary beside the target and
//! renamed over it only when complete, so a failed write leaves the old file or none.
//! Arrays are contiguous datasets, uncompressed, by default (as anndata and h5py write
//! them: quicker to write and to read), or chunked with the shuffle filter before deflate
//! when asked.

mod anndata;
mod binsparse;
mod matlab;
mod structure;

use std::path::Path;

use hdf5::types::VarLenUnicode;
use hdf5::{Group, Location};
use sptk_tensor::{IndexVec, ValueVec};

use crate::error::{At, H5Error};
use crate::h5::ComplexRi;

pub use anndata::write_h5ad;
pub use binsparse::write_binsparse;
pub use matlab::write_mat;
pub use structure::Structure;

/// How to write.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// Deflate level of the arrays, 1-9 ([`WriteOptions::GZIP_LEVEL`] is h5py's for
    /// `gzip`), or 0 (the default): not compressed, as anndata writes unless asked.
    pub deflate: u8,
    /// The MATLAB variable name (`A` by default).
    pub var: Option<String>,
    /// binsparse: write the lower triangle with this `structure` (checked first).
    pub structure: Option<Structure>,
}

impl WriteOptions {
    /// The deflate level h5py's `compression="gzip"` uses when given none.
    pub const GZIP_LEVEL: u8 = 4;
}

/// Elements per chunk of a written array (512 KiB of 8-byte elements).
const CHUNK: usize = 1 << 16;

/// Creates the HDF5 file at a temporary beside `path` (with a user block of `userblock`
/// bytes), lets `fill` write it, closes it, lets `finish` touch the closed file (MATLAB's
/// header), and renames it over `path`.
pub(crate) fn atomic(
    path: &Path,
    userblock: u64,
    fill: impl FnOnce(&At, &hdf5::File) -> Result<(), H5Error>,
    finish: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), H5Error> {
    let at = At { file: path };
    let io = |e: std::io::Error| at.err("", e.to_string());
    let out = sptk_output::AtomicPath::create(path).map_err(io)?;
    {
        let mut builder = hdf5::File::with_options();
        if userblock > 0 {
            builder.with_fcpl(|p| p.userblock(userblock));
        }
        let file = builder
            .create(out.path())
            .map_err(|e| at.lib("", "creating the file", e))?;
        crate::h5::keep_from_children(&file);
        fill(&at, &file)?;
        sptk_output::pause_point("filled");
        file.close()
            .map_err(|e| at.lib("", "closing the file", e))?;
    }
    finish(out.path()).map_err(io)?;
    out.commit().map_err(io)
}

/// Writes a 1-D array: contiguous when `deflate` is 0, else as a chunked, shuffled and
/// deflated dataset.
pub(crate) fn array<T: hdf5::H5Type>(
    at: &At,
    g: &Group,
    name: &str,
    data: &[T],
    deflate: u8,
) -> Result<(), H5Error> {
    let object = crate::h5::join(&g.name(), name);
    let mut b = g.new_dataset_builder();
    if !data.is_empty() && deflate > 0 {
        b = b.chunk(data.len().min(CHUNK)).shuffle().deflate(deflate);
    }
    b.with_data(data)
        .create(name)
        .map(|_| ())
        .map_err(|e| at.lib(object, "writing", e))
}

/// Writes an index array in its own width, or in `width` bits (8..64, for formats that
/// want one type), signed when `signed`.
pub(crate) fn index_array(
    at: &At,
    g: &Group,
    name: &str,
    v: &IndexVec,
    signed: bool,
    deflate: u8,
) -> Result<(), H5Error> {
    match (v, signed) {
        (IndexVec::U8(x), false) => array(at, g, name, &x[..], deflate),
        (IndexVec::U16(x), false) => array(at, g, name, &x[..], deflate),
        (IndexVec::U32(x), false) => array(at, g, name, &x[..], deflate),
        (IndexVec::U64(x), false) => array(at, g, name, &x[..], deflate),
        (IndexVec::Packed2 { bytes, .. }, false) => array(at, g, name, &bytes[..], deflate),
        // Signed, as AnnData and MATLAB readers expect: 32- and 64-bit arrays whose values
        // fit are written from their own bytes (no copy: a 40M-entry index array copied
        // twice was most of an .h5ad write), narrower ones widened to int32.
        (IndexVec::U32(x), true) if x.iter().all(|&c| c <= i32::MAX as u32) => {
            let x: &[u32] = &x[..];
            // SAFETY: u32 and i32 have one size and alignment, and every value is at most
            // i32::MAX (checked just above), so each reads back as the same number.
            let s: &[i32] = unsafe { std::slice::from_raw_parts(x.as_ptr().cast(), x.len()) };
            array(at, g, name, s, deflate)
        }
        (IndexVec::U64(x), true) if x.iter().all(|&c| c <= i64::MAX as u64) => {
            let x: &[u64] = &x[..];
            // SAFETY: u64 and i64 have one size and alignment, and every value is at most
            // i64::MAX (checked just above), so each reads back as the same number.
            let s: &[i64] = unsafe { std::slice::from_raw_parts(x.as_ptr().cast(), x.len()) };
            array(at, g, name, s, deflate)
        }
        (IndexVec::U8(x), true) => {
            let s: Vec<i32> = x.iter().map(|&c| i32::from(c)).collect();
            array(at, g, name, &s, deflate)
        }
        (IndexVec::U16(x), true) => {
            let s: Vec<i32> = x.iter().map(|&c| i32::from(c)).collect();
            array(at, g, name, &s, deflate)
        }
        (v @ IndexVec::Packed2 { .. }, true) => {
            let s: Vec<i32> = (0..v.len()).map(|e| v.get(e).unwrap_or(0) as i32).collect();
            array(at, g, name, &s, deflate)
        }
        (v, true) => {
            // 32-bit values past i32::MAX (as int64), or a 64-bit value past i64::MAX
            // (refused).
            let object = crate::h5::join(&g.name(), name);
            let s: Vec<i64> = (0..v.len())
                .map(|e| {
                    let x = v.get(e).unwrap_or(0);
                    i64::try_from(x).map_err(|_| {
                        at.err(&object, format!("{x} does not fit a signed 64-bit index"))
                    })
                })
                .collect::<Result<_, _>>()?;
            array(at, g, name, &s, deflate)
        }
    }
}

/// Writes values in their own type (complex as h5py's `{r, i}` compound); f16 and bf16
/// are refused, HDF5 files of these kinds having no such type.
pub(crate) fn value_array(
    at: &At,
    g: &Group,
    name: &str,
    v: &ValueVec,
    deflate: u8,
) -> Result<(), H5Error> {
    match v {
        ValueVec::F32(x) => array(at, g, name, &x[..], deflate),
        ValueVec::F64(x) => array(at, g, name, &x[..], deflate),
        ValueVec::I8(x) => array(at, g, name, &x[..], deflate),
        ValueVec::I16(x) => array(at, g, name, &x[..], deflate),
        ValueVec::I32(x) => array(at, g, name, &x[..], deflate),
        ValueVec::I64(x) => array(at, g, name, &x[..], deflate),
        ValueVec::U8(x) => array(at, g, name, &x[..], deflate),
        ValueVec::U16(x) => array(at, g, name, &x[..], deflate),
        ValueVec::U32(x) => array(at, g, name, &x[..], deflate),
        ValueVec::U64(x) => array(at, g, name, &x[..], deflate),
        ValueVec::Bool(x) => array(at, g, name, &x[..], deflate),
        ValueVec::C64(x) => {
            let c: Vec<ComplexRi<f32>> = x.iter().map(|z| ComplexRi { r: z.re, i: z.im }).collect();
            array(at, g, name, &c, deflate)
        }
        ValueVec::C128(x) => {
            let c: Vec<ComplexRi<f64>> = x.iter().map(|z| ComplexRi { r: z.re, i: z.im }).collect();
            array(at, g, name, &c, deflate)
        }
        ValueVec::F16(_) | ValueVec::BF16(_) => Err(at.err(
            crate::h5::join(&g.name(), name),
            format!(
                "{} values have no HDF5 type here; convert them with --dtype f32",
                v.value_type().name()
            ),
        )),
    }
}

/// A variable-length UTF-8 string attribute (as h5py, anndata and binsparse write them).
pub(crate) fn string_attr(at: &At, loc: &Location, name: &str, text: &str) -> Result<(), H5Error> {
    let object = format!("attribute `{name}` of {}", loc.name());
    let v: VarLenUnicode = text
        .parse()
        .map_err(|_| at.err(&object, "the text holds a NUL byte"))?;
    loc.new_attr::<VarLenUnicode>()
        .create(name)
        .and_then(|a| a.write_scalar(&v))
        .map_err(|e| at.lib(object, "writing", e))
}

/// A 1-D array of variable-length UTF-8 strings.
pub(crate) fn strings(at: &At, g: &Group, name: &str, list: &[String]) -> Result<(), H5Error> {
    let object = crate::h5::join(&g.name(), name);
    let v: Vec<VarLenUnicode> = list
        .iter()
        .map(|s| {
            s.parse()
                .map_err(|_| at.err(&object, format!("the label {s:?} holds a NUL byte")))
        })
        .collect::<Result<_, _>>()?;
    g.new_dataset_builder()
        .with_data(&v)
        .create(name)
        .map(|_| ())
        .map_err(|e| at.lib(object, "writing", e))
}

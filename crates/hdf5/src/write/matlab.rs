//! MATLAB v7.3 `.mat` written from a matrix: one sparse variable (double, logical or
//! complex double, as MATLAB's sparse type allows), CSC as MATLAB keeps it (another
//! encoding is converted first), behind the 512-byte text header MATLAB and libmatio
//! look for.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use hdf5::types::FixedAscii;
use sptk_tensor::{IndexVec, Tensor, ValueVec};

use super::anndata::{compressed_form, csr_or_csc};
use super::{array, atomic, WriteOptions};
use crate::error::{At, H5Error};
use crate::h5::ComplexMatlab;

/// Whether `name` is a MATLAB variable name: a letter, then letters, digits or `_`, at
/// most 63 characters.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 63
}

/// Writes `tensor` as the sparse variable `opts.var` (`A` by default) of a new `.mat`
/// file. Returns notes for the user.
///
/// # Errors
/// A tensor that is not a matrix, values MATLAB's sparse type cannot hold, a bad variable
/// name; HDF5 errors.
pub fn write_mat(
    path: &Path,
    tensor: &Tensor,
    opts: &WriteOptions,
) -> Result<Vec<String>, H5Error> {
    let at = At { file: path };
    let name = opts.var.clone().unwrap_or_else(|| "A".into());
    if !valid_name(&name) {
        return Err(at.err("", format!("`{name}` is not a MATLAB variable name (a letter, then letters, digits or _, at most 63)")));
    }
    let class = match tensor.values() {
        ValueVec::F64(_) | ValueVec::C128(_) => "double",
        ValueVec::Bool(_) => "logical",
        other => {
            return Err(at.err(
                "",
                format!(
                    "MATLAB sparse matrices hold double, logical or complex double values, not {}; convert them with --dtype f64",
                    other.value_type().name()
                ),
            ))
        }
    };
    let mut notes = Vec::new();
    let t = compressed_form(&at, tensor, "CSC", "a MATLAB sparse variable", &mut notes)?;
    let t = if csr_or_csc(&t) == Some(false) {
        t
    } else {
        let target =
            sptk_encoding::resolve_target("CSC", 2).map_err(|e| at.err("", e.to_string()))?;
        let c = sptk_tensor::convert_tensor(&t, &target, &Default::default())
            .map_err(|e| at.err("", e.to_string()))?;
        notes.push("MATLAB keeps sparse matrices by columns: converted to CSC".into());
        std::borrow::Cow::Owned(c.tensor)
    };
    if t.all_labels().iter().any(Option::is_some) {
        notes.push("a MATLAB sparse variable has no place for labels; they are not written".into());
    }
    let z = opts.deflate;
    atomic(
        path,
        512,
        |at, file| {
            let g = file
                .create_group(&name)
                .map_err(|e| at.lib(&name, "creating", e))?;
            let object = |a: &str| format!("attribute `{a}` of /{name}");
            if class == "double" {
                let v = FixedAscii::<6>::from_ascii(b"double")
                    .map_err(|e| at.err(object("MATLAB_class"), e.to_string()))?;
                g.new_attr::<FixedAscii<6>>()
                    .create("MATLAB_class")
                    .and_then(|a| a.write_scalar(&v))
            } else {
                let v = FixedAscii::<7>::from_ascii(b"logical")
                    .map_err(|e| at.err(object("MATLAB_class"), e.to_string()))?;
                g.new_attr::<FixedAscii<7>>()
                    .create("MATLAB_class")
                    .and_then(|a| a.write_scalar(&v))
                    .and_then(|()| g.new_attr::<i32>().create("MATLAB_int_decode"))
                    .and_then(|a| a.write_scalar(&1))
            }
            .map_err(|e| at.lib(object("MATLAB_class"), "writing", e))?;
            g.new_attr::<u64>()
                .create("MATLAB_sparse")
                .and_then(|a| a.write_scalar(&t.dim_sizes()[0]))
                .map_err(|e| at.lib(object("MATLAB_sparse"), "writing", e))?;
            let wide = |v: Option<&IndexVec>| v.map(IndexVec::to_u64_vec).unwrap_or_default();
            array(at, &g, "jc", &wide(t.pos(1)), z)?;
            array(at, &g, "ir", &wide(t.crd(1)), z)?;
            match t.values() {
                ValueVec::F64(x) => array(at, &g, "data", &x[..], z),
                ValueVec::Bool(x) => array(
                    at,
                    &g,
                    "data",
                    &x.iter().map(|&b| b as u8).collect::<Vec<_>>(),
                    z,
                ),
                ValueVec::C128(x) => array(
                    at,
                    &g,
                    "data",
                    &x.iter()
                        .map(|c| ComplexMatlab {
                            real: c.re,
                            imag: c.im,
                        })
                        .collect::<Vec<_>>(),
                    z,
                ),
                _ => unreachable!("value types checked above"),
            }
        },
        write_header,
    )?;
    Ok(notes)
}

/// MATLAB's 128-byte header at the start of the 512-byte user block: text, the subsystem
/// offset (none), version 0x0200 and the endian indicator `IM`.
fn write_header(path: &Path) -> std::io::Result<()> {
    let mut header = [b' '; 128];
    let text = "MATLAB 7.3 MAT-file, Platform: GLNXA64, written by sptk, HDF5 schema 1.00 .";
    header[..text.len()].copy_from_slice(text.as_bytes());
    header[116..124].fill(0);
    header[124..126].copy_from_slice(&0x0200u16.to_le_bytes());
    header[126..128].copy_from_slice(b"IM");
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&header)?;
    f.flush()
}

//! Matrix Market written from a converted or stored tensor. A CSR- or CSC-like tensor is
//! written straight from its arrays, in parallel chunks of entries, with no coordinate
//! list in between; any other layout goes through its entries. Both give the same bytes:
//! entries in storage order, as [`sptk_tensor::Tensor::to_entries`] lists them.

use crate::error::MtxError;
use crate::format::WriteValue;
use crate::header::Symmetry;
use crate::write::{
    header_text, write_atomic, write_chunks, write_named, Coords, WriteOptions, CHUNK_ENTRIES,
};
use sptk_encoding::{LevelExpr, LevelFormat};
use sptk_tensor::{with_values, Tensor};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes `t` (a matrix) to `path` as Matrix Market, atomically, like
/// [`crate::write_path`] does for entries.
pub fn write_tensor_path(path: &Path, t: &Tensor, opts: &WriteOptions) -> Result<(), MtxError> {
    write_atomic(path, &|w, name| write_tensor_named(w, t, opts, name))
}

/// Writes `t` (a matrix) as Matrix Market text to `w` (see [`crate::write_to`]).
pub fn write_tensor_to<W: Write>(w: W, t: &Tensor, opts: &WriteOptions) -> Result<(), MtxError> {
    write_tensor_named(w, t, opts, "-")
}

fn write_tensor_named<W: Write>(
    w: W,
    t: &Tensor,
    opts: &WriteOptions,
    name: &str,
) -> Result<(), MtxError> {
    let general = opts.symmetry.is_none_or(|s| s == Symmetry::General);
    match compressed_outer(t) {
        // Symmetric output checks the matrix first, which the entry path does.
        Some(outer) if general => write_compressed(w, t, outer, opts, name),
        _ => write_named(w, &t.to_entries(), opts, name),
    }
}

/// The outer dimension if `t` is `(a : dense, b : compressed)` over a matrix, no slices.
fn compressed_outer(t: &Tensor) -> Option<usize> {
    let enc = t.encoding();
    if enc.dim_rank() != 2 || enc.levels.len() != 2 || enc.has_slices() {
        return None;
    }
    match (
        &enc.levels[0].expr,
        enc.levels[0].format,
        &enc.levels[1].expr,
        enc.levels[1].format,
    ) {
        (LevelExpr::Dim(a), LevelFormat::Dense, LevelExpr::Dim(b), LevelFormat::Compressed)
            if a != b =>
        {
            Some(*a)
        }
        _ => None,
    }
}

fn write_compressed<W: Write>(
    w: W,
    t: &Tensor,
    outer: usize,
    opts: &WriteOptions,
    name: &str,
) -> Result<(), MtxError> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    let io = |e: std::io::Error| MtxError::io(name, e);
    let (Some(pos), Some(crd)) = (t.pos(1), t.crd(1)) else {
        return write_named(w, &t.to_entries(), opts, name);
    };
    let pos = pos.to_u64_vec();
    let crd = Coords::new(crd);
    let n = t.nse();
    let (field, pattern) = opts.field_to_write(t.value_type());
    let retyped = opts.retyped(t.values())?;
    let values = retyped.as_ref().unwrap_or(t.values());
    let dims = t.dim_sizes();
    let head = header_text(field, Symmetry::General, [dims[0], dims[1], n as u64], opts);
    w.write_all(head.as_bytes()).map_err(io)?;
    let chunks = n.div_ceil(CHUNK_ENTRIES);
    let range = |k: usize| k * CHUNK_ENTRIES..((k + 1) * CHUNK_ENTRIES).min(n);
    with_values!(values, v => write_chunks(
        &mut w,
        chunks,
        opts.threads,
        &|k, out| format_compressed(&pos, crd, v, range(k), outer, pattern, out),
        &|k| range(k).end as u64,
        opts.progress.as_ref(),
        name,
    ))?;
    w.flush().map_err(io)?;
    Ok(())
}

/// Formats entries `range` of a compressed matrix (outer coordinate from `pos`).
fn format_compressed<V: WriteValue>(
    pos: &[u64],
    crd: Coords<'_>,
    vals: &[V],
    range: std::ops::Range<usize>,
    outer: usize,
    pattern: bool,
    out: &mut Vec<u8>,
) {
    let mut ib = itoa::Buffer::new();
    // The row holding the first entry: the last one starting at or before it.
    let mut r = pos
        .partition_point(|&p| p <= range.start as u64)
        .saturating_sub(1);
    for e in range {
        while pos.get(r + 1).is_some_and(|&p| p <= e as u64) {
            r += 1;
        }
        let c = crd.get(e);
        let (i, j) = if outer == 0 {
            (r as u64, c)
        } else {
            (c, r as u64)
        };
        out.extend_from_slice(ib.format(i + 1).as_bytes());
        out.push(b' ');
        out.extend_from_slice(ib.format(j + 1).as_bytes());
        if !pattern {
            if let Some(v) = vals.get(e) {
                out.push(b' ');
                v.write(out);
            }
        }
        out.push(b'\n');
    }
}

//! The Matrix Market reader: header, then the body in windows of complete lines, each
//! window cut into chunks parsed in parallel and appended in file order (so the result does
//! not depend on the number of threads), then symmetric expansion.

use crate::alloc::{too_large, zeroed};
use crate::error::{MtxError, RawError};
use crate::header::{Field, Format, HeaderParser, HeaderStep, MtxHeader, Symmetry};
use crate::input::{open_path, open_reader, Input, Progress, Source};
use crate::parse::{
    parse_array_chunk, parse_coo_chunk, ComplexField, CooBuf, FieldKind, Idx, IntField,
    PatternField, RealField,
};
use crate::scan::{find_newline, nth_data_line};
use sptk_tensor::par;
use sptk_tensor::{coord_width_for, Entries, IndexWidth, Value, ValueVecAccess};
use std::io::Read;
use std::path::Path;

/// Options of the readers.
#[derive(Clone, Default)]
pub struct ReadOptions {
    /// Worker threads for parsing (0: rayon's default, the number of CPUs).
    pub threads: usize,
    /// Called with the number of input bytes consumed so far, after each block.
    pub progress: Option<Progress>,
    /// Bytes of text per parallel chunk (0: the default, 4 MiB). Only a tuning and testing
    /// knob: the result is the same for every value.
    pub chunk_size: usize,
    /// Memory budget in bytes for [`crate::read_direct`]: a direct read whose arrays
    /// (output and scratch, sized from the header and the file's length) would pass it is
    /// refused up front with [`MtxError::TooLarge`], before any large allocation. `None`:
    /// no budget; the read is still refused when the machine cannot allocate that much.
    pub memory_limit: Option<u64>,
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .field("chunk_size", &self.chunk_size)
            .field("memory_limit", &self.memory_limit)
            .finish()
    }
}

/// A Matrix Market file read into memory: its header and its entries (symmetric storage
/// expanded to both triangles, `array` files reduced to their nonzero positions).
#[derive(Clone, Debug, PartialEq)]
pub struct MtxData {
    /// What the header says.
    pub header: MtxHeader,
    /// The entries: rank 2, dimension sizes `[rows, cols]`, 0-based coordinates in file
    /// order (mirrored entries of symmetric files follow all stored ones), duplicates kept.
    pub entries: Entries,
}

const DEFAULT_CHUNK: usize = 4 << 20;

/// Parses one chunk into a reusable buffer.
pub(crate) type ChunkParser<B> = dyn Fn(&[u8], &mut B) -> Result<(), RawError> + Sync;
/// Chunk byte ranges and each chunk's parse result.
pub(crate) type ChunkResults = (Vec<(usize, usize)>, Vec<Result<(), RawError>>);

/// Parallel parsing setup.
pub(crate) struct Workers {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    chunk: usize,
}

impl Workers {
    pub(crate) fn new(threads: usize, chunk: usize) -> Result<Workers, MtxError> {
        let pool = if threads == 0 {
            None
        } else {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| MtxError::unsupported(format!("cannot start threads: {e}")))?,
            )
        };
        let threads = pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
            .max(1);
        let chunk = if chunk == 0 { DEFAULT_CHUNK } else { chunk };
        Ok(Workers {
            pool,
            threads,
            chunk,
        })
    }

    /// Number of worker threads.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` on the pool.
    pub(crate) fn install<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Bytes per window: a few chunks per thread.
    pub(crate) fn window(&self) -> usize {
        self.chunk.saturating_mul(self.threads * 2)
    }

    /// Splits `t` into chunks at line ends and parses them in parallel into `bufs` (reused
    /// between windows). Returns the chunk ranges and each chunk's result, errors located
    /// relative to `t`.
    pub(crate) fn run<B: Default + Send>(
        &self,
        t: &[u8],
        bufs: &mut Vec<B>,
        parse: &ChunkParser<B>,
    ) -> ChunkResults {
        let mut ranges = Vec::new();
        let mut s = 0;
        while s < t.len() {
            let mut e = s.saturating_add(self.chunk).min(t.len());
            if e < t.len() {
                e = (find_newline(t, e) + 1).min(t.len());
            }
            ranges.push((s, e));
            s = e;
        }
        if bufs.len() < ranges.len() {
            bufs.resize_with(ranges.len(), B::default);
        }
        let one = |(b, &(s, e)): (&mut B, &(usize, usize))| {
            parse(&t[s..e], b).map_err(|mut err| {
                err.pos += s;
                err
            })
        };
        let results = if ranges.len() <= 1 || self.threads == 1 {
            bufs.iter_mut().zip(ranges.iter()).map(one).collect()
        } else {
            let mut go = || {
                let work: Vec<_> = bufs.iter_mut().zip(ranges.iter()).collect();
                par::map_items(work, |_, job| one(job))
            };
            match &self.pool {
                Some(p) => p.install(go),
                None => go(),
            }
        };
        (ranges, results)
    }
}

/// Reads a Matrix Market file (`-` is standard input). Gzip input is recognized by its
/// magic bytes and decompressed on the fly; uncompressed regular files are memory-mapped
/// and parsed in parallel.
pub fn read_path(path: &Path, opts: &ReadOptions) -> Result<MtxData, MtxError> {
    let mut input = open_path(path)?;
    let name = path.display().to_string();
    read_input(&mut input, &name, opts)
}

/// Reads a Matrix Market stream; `name` is used in error messages. Gzip input is
/// recognized by its magic bytes.
pub fn read_from<R: Read>(r: R, name: &str, opts: &ReadOptions) -> Result<MtxData, MtxError> {
    let mut input = open_reader(r, name)?;
    read_input(&mut input, name, opts)
}

fn read_input(input: &mut Input<'_>, name: &str, opts: &ReadOptions) -> Result<MtxData, MtxError> {
    let workers = Workers::new(opts.threads, opts.chunk_size)?;
    let mut src = Source::new(input, name, opts.progress.clone());
    let header = read_header(&mut src)?;
    let entries = match header.field {
        Field::Real => read_body::<RealField>(&header, &mut src, &workers),
        Field::Integer => read_body::<IntField>(&header, &mut src, &workers),
        Field::Complex => read_body::<ComplexField>(&header, &mut src, &workers),
        Field::Pattern => read_body::<PatternField>(&header, &mut src, &workers),
    }?;
    Ok(MtxData { header, entries })
}

pub(crate) fn read_header(src: &mut Source<'_>) -> Result<MtxHeader, MtxError> {
    let mut hp = HeaderParser::default();
    while let Some((line, no)) = src.next_line()? {
        match hp.feed(&line) {
            Ok(HeaderStep::More) => {}
            Ok(HeaderStep::Done(h)) => return Ok(h),
            Err(e) => return Err(src.error_at(no, e.pos as u64 + 1, e.msg)),
        }
    }
    let (line, col) = src.eof_location();
    let msg = if hp.has_banner() {
        "the file ends before the size line, expected `rows columns entries` (or `rows columns` for an array)"
    } else {
        "the file is empty, expected the banner `%%MatrixMarket matrix <format> <field> <symmetry>`"
    };
    Err(src.error_at(line, col, msg.to_string()))
}

fn read_body<F: FieldKind>(
    h: &MtxHeader,
    src: &mut Source<'_>,
    w: &Workers,
) -> Result<Entries, MtxError> {
    let r32 = coord_width_for(h.rows) == IndexWidth::W32;
    let c32 = coord_width_for(h.cols) == IndexWidth::W32;
    match (r32, c32) {
        (true, true) => read_typed::<u32, u32, F>(h, src, w),
        (true, false) => read_typed::<u32, u64, F>(h, src, w),
        (false, true) => read_typed::<u64, u32, F>(h, src, w),
        (false, false) => read_typed::<u64, u64, F>(h, src, w),
    }
}

/// The accumulated entries.
struct Sink<R, C, V> {
    rows: Vec<R>,
    cols: Vec<C>,
    vals: Vec<V>,
}

fn read_typed<R: Idx, C: Idx, F: FieldKind>(
    h: &MtxHeader,
    src: &mut Source<'_>,
    w: &Workers,
) -> Result<Entries, MtxError> {
    // Never trust the declared count for allocation: reserve at most what the file's bytes
    // can hold (an entry line takes at least 4 bytes, `1 1\n`; an array value 2, `0\n`).
    let per_line = match h.format {
        Format::Coordinate => 4,
        Format::Array => 2,
    };
    let cap_limit = match src.size_hint() {
        Some(n) => n / per_line + 1,
        None => 1 << 20,
    };
    let cap = h.nnz_stored.min(cap_limit);
    let mut sink: Sink<R, C, F::V> = match h.format {
        // Zeroed allocations (calloc: pages committed only when written), filled in place.
        Format::Coordinate => Sink {
            rows: zeroed(cap, "the row indices")?,
            cols: zeroed(cap, "the column indices")?,
            vals: zeroed(cap, "the values")?,
        },
        Format::Array => Sink {
            rows: reserved(cap, "the row indices")?,
            cols: reserved(cap, "the column indices")?,
            vals: reserved(cap, "the values")?,
        },
    };
    let stored = match h.format {
        Format::Coordinate => read_coordinate::<R, C, F>(h, src, w, &mut sink)?,
        Format::Array => read_array::<R, C, F>(h, src, w, &mut sink)?,
    };
    if stored < h.nnz_stored {
        let (line, col) = src.eof_location();
        let what = match h.format {
            Format::Coordinate => "entries",
            Format::Array => "values",
        };
        return Err(src.error_at(
            line,
            col,
            format!(
                "the file ends after {stored} of the {} {what} declared in the size line, expected {} more",
                h.nnz_stored,
                h.nnz_stored - stored
            ),
        ));
    }
    if h.symmetry != Symmetry::General {
        expand::<R, C, F>(&mut sink, h.symmetry);
    }
    let Sink { rows, cols, vals } = sink;
    Ok(Entries::from_checked_arrays(
        vec![h.rows, h.cols],
        vec![R::wrap(rows), C::wrap(cols)],
        <F::V as ValueVecAccess>::wrap(vals),
    )?)
}

/// An empty vector with room for `n` elements, or [`MtxError::TooLarge`].
fn reserved<T>(n: u64, what: &str) -> Result<Vec<T>, MtxError> {
    let mut v = Vec::new();
    let n_usize = usize::try_from(n)
        .map_err(|_| too_large::<T>(what, n, "cannot be allocated on this machine"))?;
    v.try_reserve_exact(n_usize)
        .map_err(|_| too_large::<T>(what, n, "cannot be allocated on this machine"))?;
    Ok(v)
}

fn too_many(t: &[u8], range: (usize, usize), k: usize, declared: u64, what: &str) -> RawError {
    let (s, e) = range;
    let pos = nth_data_line(&t[s..e], k, b"%").unwrap_or(0) + s;
    RawError::new(
        pos,
        format!("more {what} than the {declared} declared in the size line, expected end of file"),
    )
}

fn read_coordinate<R: Idx, C: Idx, F: FieldKind>(
    h: &MtxHeader,
    src: &mut Source<'_>,
    w: &Workers,
    sink: &mut Sink<R, C, F::V>,
) -> Result<u64, MtxError> {
    let (nrows, ncols, sym, nnz) = (h.rows, h.cols, h.symmetry, h.nnz_stored);
    let mut bufs: Vec<CooBuf<R, C, F::V>> = Vec::new();
    let mut stored: usize = 0;
    // The output arrays come pre-sized (see `read_typed`), so chunks are copied in
    // parallel into their final places.
    let parse = move |c: &[u8], b: &mut CooBuf<R, C, F::V>| {
        b.clear();
        parse_coo_chunk::<R, C, F>(c, nrows, ncols, sym, b)
    };
    src.windows(w.window(), &mut |t: &[u8]| {
        let (ranges, results) = w.run(t, &mut bufs, &parse);
        let mut total = 0usize;
        let mut used = 0;
        for ((b, res), &range) in bufs.iter().zip(results).zip(&ranges) {
            let n = b.len() as u64;
            let room = nnz - (stored + total) as u64;
            if n > room {
                return Err(too_many(t, range, room as usize, nnz, "entries"));
            }
            res?;
            total += b.len();
            used += 1;
        }
        let need = stored + total;
        if sink.rows.len() < need {
            let grow = need.max(sink.rows.len() * 2);
            sink.rows.resize(grow, R::default());
            sink.cols.resize(grow, C::default());
            sink.vals.resize(grow, F::V::default());
        }
        let mut jobs = Vec::with_capacity(used);
        let mut rr = &mut sink.rows[stored..need];
        let mut cc = &mut sink.cols[stored..need];
        let mut vv = &mut sink.vals[stored..need];
        for b in bufs.iter().take(used) {
            let (r, r2) = std::mem::take(&mut rr).split_at_mut(b.len());
            let (c, c2) = std::mem::take(&mut cc).split_at_mut(b.len());
            let (v, v2) = std::mem::take(&mut vv).split_at_mut(b.len());
            (rr, cc, vv) = (r2, c2, v2);
            jobs.push((b, r, c, v));
        }
        w.install(|| {
            par::for_each_item(jobs, |(b, r, c, v)| {
                r.copy_from_slice(&b.rows);
                c.copy_from_slice(&b.cols);
                v.copy_from_slice(&b.vals);
            })
        });
        stored = need;
        Ok(())
    })?;
    sink.rows.truncate(stored);
    sink.cols.truncate(stored);
    sink.vals.truncate(stored);
    Ok(stored as u64)
}

/// Walks the positions of an `array` body: column-major, the lower triangle for symmetric
/// and Hermitian storage, the strict lower triangle for skew-symmetric storage.
struct ArrayPos {
    i: u64,
    j: u64,
    rows: u64,
    sym: Symmetry,
}

impl ArrayPos {
    fn new(rows: u64, sym: Symmetry) -> Self {
        let i = if sym == Symmetry::SkewSymmetric { 1 } else { 0 };
        ArrayPos { i, j: 0, rows, sym }
    }
    #[inline]
    fn advance(&mut self) {
        self.i += 1;
        if self.i >= self.rows {
            self.j += 1;
            self.i = match self.sym {
                Symmetry::General => 0,
                Symmetry::Symmetric | Symmetry::Hermitian => self.j,
                Symmetry::SkewSymmetric => self.j + 1,
            };
        }
    }
}

fn read_array<R: Idx, C: Idx, F: FieldKind>(
    h: &MtxHeader,
    src: &mut Source<'_>,
    w: &Workers,
    sink: &mut Sink<R, C, F::V>,
) -> Result<u64, MtxError> {
    let total = h.nnz_stored;
    let mut bufs: Vec<Vec<F::V>> = Vec::new();
    let mut seen: u64 = 0;
    let mut pos = ArrayPos::new(h.rows, h.symmetry);
    let parse = |c: &[u8], b: &mut Vec<F::V>| {
        b.clear();
        parse_array_chunk::<F>(c, b)
    };
    let skew = h.symmetry == Symmetry::SkewSymmetric;
    src.windows(w.window(), &mut |t: &[u8]| {
        let (ranges, results) = w.run(t, &mut bufs, &parse);
        for ((b, res), &range) in bufs.iter().zip(results).zip(&ranges) {
            let n = b.len() as u64;
            if n > total - seen {
                return Err(too_many(t, range, (total - seen) as usize, total, "values"));
            }
            for (k, v) in b.iter().enumerate() {
                if !v.is_zero() {
                    if skew && !F::negatable(v) {
                        let p = nth_data_line(&t[range.0..range.1], k, b"%").unwrap_or(0);
                        return Err(RawError::new(
                            p + range.0,
                            "a value of a skew-symmetric matrix cannot be negated in 64 bits, expected a value above -9223372036854775808",
                        ));
                    }
                    sink.rows.push(R::from_u64(pos.i));
                    sink.cols.push(C::from_u64(pos.j));
                    sink.vals.push(*v);
                }
                pos.advance();
            }
            seen += n;
            res?;
        }
        Ok(())
    })?;
    Ok(seen)
}

/// Appends the mirror of every off-diagonal entry.
fn expand<R: Idx, C: Idx, F: FieldKind>(sink: &mut Sink<R, C, F::V>, sym: Symmetry) {
    let n = sink.vals.len();
    let off = sink
        .rows
        .iter()
        .zip(&sink.cols)
        .filter(|(r, c)| r.to_u64() != c.to_u64())
        .count();
    sink.rows.reserve_exact(off);
    sink.cols.reserve_exact(off);
    sink.vals.reserve_exact(off);
    for e in 0..n {
        let (r, c, v) = (sink.rows[e].to_u64(), sink.cols[e].to_u64(), sink.vals[e]);
        if r != c {
            sink.rows.push(R::from_u64(c));
            sink.cols.push(C::from_u64(r));
            sink.vals.push(F::mirror(v, sym));
        }
    }
}

//! The Matrix Market writer: coordinate output formatted in parallel chunks (byte-identical
//! for any number of threads), optionally one triangle of a symmetric, skew-symmetric or
//! Hermitian matrix after checking that the matrix has that symmetry; atomic file output.

use crate::error::MtxError;
use crate::format::WriteValue;
use crate::header::{Field, Symmetry, BANNER};
use crate::input::Progress;
use rayon::slice::ParallelSliceMut;
use sptk_tensor::par;
use sptk_tensor::{with_values, Entries, IndexVec, Scalar, Value, ValueType, ValueVec};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Options of the writers.
#[derive(Clone, Default)]
pub struct WriteOptions {
    /// Write only the lower triangle with this symmetry in the banner (after checking that
    /// the matrix has it). `None` or `General` writes every entry.
    pub symmetry: Option<Symmetry>,
    /// Write the `pattern` field: coordinates only, no values (the same as
    /// `field: Some(Field::Pattern)`).
    pub pattern: bool,
    /// The field to write (`None`: the one the value type gives, see [`write_to`]).
    /// `Some(Field::Pattern)` writes coordinates only; `integer`, `real` and `complex` need
    /// every value to read back unchanged in that field (see [`crate::field_fits`]), else
    /// the write is refused with [`MtxError::Unsupported`] naming the first value that
    /// does not fit. To keep the field of a file that was read, pass its
    /// [`crate::MtxHeader::field`] when `field_fits` holds.
    pub field: Option<Field>,
    /// Formatting threads (0: rayon's default).
    pub threads: usize,
    /// Comment lines written after the banner, each prefixed with `%` (so `" made by x"`
    /// gives `% made by x`). `None` writes a single empty comment line `%`, as
    /// fast_matrix_market and SciPy do.
    pub comment: Option<String>,
    /// Called with the number of entries written so far, after each block.
    pub progress: Option<Progress>,
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("symmetry", &self.symmetry)
            .field("pattern", &self.pattern)
            .field("field", &self.field)
            .field("threads", &self.threads)
            .field("comment", &self.comment)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl WriteOptions {
    /// The banner's field word and whether values are left out.
    pub(crate) fn field_to_write(&self, vt: ValueType) -> (&'static str, bool) {
        match (self.pattern, self.field) {
            (true, _) | (_, Some(Field::Pattern)) => ("pattern", true),
            (false, Some(f)) => (f.name(), false),
            (false, None) => (field_of(vt), false),
        }
    }

    /// The values retyped for the asked field, if it differs from theirs.
    pub(crate) fn retyped(&self, values: &ValueVec) -> Result<Option<ValueVec>, MtxError> {
        match (self.pattern, self.field) {
            (false, Some(f)) => crate::field::retype(values, f),
            _ => Ok(None),
        }
    }
}

/// Entries per formatting chunk.
pub(crate) const CHUNK_ENTRIES: usize = 1 << 15;

/// Coordinates of one dimension, typed once per call rather than per entry.
#[derive(Clone, Copy)]
pub(crate) enum Coords<'a> {
    U32(&'a [u32]),
    U64(&'a [u64]),
    Other(&'a IndexVec),
}

impl<'a> Coords<'a> {
    pub(crate) fn new(v: &'a IndexVec) -> Self {
        match v {
            IndexVec::U32(x) => Coords::U32(x),
            IndexVec::U64(x) => Coords::U64(x),
            other => Coords::Other(other),
        }
    }
    #[inline(always)]
    pub(crate) fn get(&self, e: usize) -> u64 {
        match self {
            Coords::U32(x) => x.get(e).map_or(0, |&v| v as u64),
            Coords::U64(x) => x.get(e).copied().unwrap_or(0),
            Coords::Other(x) => x.get(e).unwrap_or(0),
        }
    }
}

/// Which entries are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    All,
    /// Row >= column.
    Lower,
    /// Row > column.
    StrictLower,
}

impl Keep {
    #[inline(always)]
    fn keeps(self, i: u64, j: u64) -> bool {
        match self {
            Keep::All => true,
            Keep::Lower => i >= j,
            Keep::StrictLower => i > j,
        }
    }
}

/// Formats entries `range` (coordinates 1-based, then the value unless `pattern`) into
/// `out`.
pub(crate) fn format_entries<V: WriteValue>(
    coords: &[Coords<'_>],
    vals: &[V],
    range: std::ops::Range<usize>,
    keep: Keep,
    pattern: bool,
    out: &mut Vec<u8>,
) {
    let mut ib = itoa::Buffer::new();
    for e in range {
        if keep != Keep::All {
            let (i, j) = (coords[0].get(e), coords[1].get(e));
            if !keep.keeps(i, j) {
                continue;
            }
        }
        for (d, c) in coords.iter().enumerate() {
            if d > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(ib.format(c.get(e) + 1).as_bytes());
        }
        if !pattern {
            if let Some(v) = vals.get(e) {
                out.push(b' ');
                v.write(out);
            }
        }
        out.push(b'\n');
    }
}

/// Writes every entry through parallel chunk formatting.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_body<W: Write, V: WriteValue>(
    w: &mut W,
    coords: &[Coords<'_>],
    vals: &[V],
    keep: Keep,
    pattern: bool,
    threads: usize,
    progress: Option<&Progress>,
    name: &str,
) -> Result<(), MtxError> {
    let n = vals.len();
    let chunks = n.div_ceil(CHUNK_ENTRIES);
    let range = |k: usize| k * CHUNK_ENTRIES..((k + 1) * CHUNK_ENTRIES).min(n);
    write_chunks(
        w,
        chunks,
        threads,
        &|k, out| format_entries(coords, vals, range(k), keep, pattern, out),
        &|k| range(k).end as u64,
        progress,
        name,
    )
}

/// Formats chunks `0..chunks` with `fill` in parallel, a window of a few per thread at a
/// time, and writes them in order (so the bytes do not depend on the thread count);
/// `done(k)` is the entries written once chunk `k` is out, for progress.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_chunks<W: Write>(
    w: &mut W,
    chunks: usize,
    threads: usize,
    fill: &(dyn Fn(usize, &mut Vec<u8>) + Sync),
    done: &dyn Fn(usize) -> u64,
    progress: Option<&Progress>,
    name: &str,
) -> Result<(), MtxError> {
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
    let nthreads = pool
        .as_ref()
        .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
        .max(1);
    let per_window = nthreads * 4;
    // Two sets of buffers: while this thread writes one window, the workers format the
    // next into the other.
    let mut ready: Vec<Vec<u8>> = vec![Vec::new(); per_window];
    let mut spare: Vec<Vec<u8>> = vec![Vec::new(); per_window];
    let format = |first: usize, bufs: &mut [Vec<u8>]| {
        let one = |(k, b): (usize, &mut Vec<u8>)| {
            b.clear();
            fill(first + k, b);
        };
        if nthreads == 1 || bufs.len() == 1 {
            bufs.iter_mut().enumerate().for_each(one);
        } else {
            par::for_each_item(bufs.iter_mut().enumerate().collect(), one);
        }
    };
    let format_on_pool = |first: usize, bufs: &mut [Vec<u8>]| match &pool {
        Some(p) => p.install(|| format(first, bufs)),
        None => format(first, bufs),
    };
    let window = |first: usize| (first + per_window).min(chunks) - first;
    let mut first = 0;
    format_on_pool(0, &mut ready[..window(0)]);
    while first < chunks {
        let n = window(first);
        let next = first + n;
        let m = if next < chunks { window(next) } else { 0 };
        let spare_now = &mut spare[..m];
        let written = std::thread::scope(|sc| {
            let formatting = (m > 0).then(|| sc.spawn(|| format_on_pool(next, spare_now)));
            let written = ready[..n]
                .iter()
                .try_for_each(|b| w.write_all(b).map_err(|e| MtxError::io(name, e)));
            if let Some(h) = formatting {
                if h.join().is_err() {
                    return Err(MtxError::unsupported("a formatting thread failed"));
                }
            }
            written
        });
        written?;
        if let Some(p) = progress {
            p(done(next - 1));
        }
        std::mem::swap(&mut ready, &mut spare);
        first = next;
    }
    Ok(())
}

/// The mirrored value a symmetric matrix must hold at `(j, i)`.
fn mirror(s: Scalar, sym: Symmetry) -> Option<Scalar> {
    Some(match (s, sym) {
        (x, Symmetry::General | Symmetry::Symmetric) => x,
        (Scalar::Float(x), _) => Scalar::Float(-x),
        (Scalar::Int(x), Symmetry::SkewSymmetric) => Scalar::Int(x.checked_neg()?),
        (Scalar::Int(x), _) => Scalar::Int(x),
        (Scalar::Complex(re, im), Symmetry::SkewSymmetric) => Scalar::Complex(-re, -im),
        (Scalar::Complex(re, im), _) => Scalar::Complex(re, -im),
        (Scalar::Bool(b), Symmetry::SkewSymmetric) => {
            if b {
                return None;
            }
            Scalar::Bool(false)
        }
        (Scalar::Bool(b), _) => Scalar::Bool(b),
    })
}

fn same(a: Scalar, b: Scalar) -> bool {
    let f = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => f(x, y),
        (Scalar::Complex(a, b), Scalar::Complex(c, d)) => f(a, c) && f(b, d),
        (x, y) => x == y,
    }
}

/// Checks that the matrix has `sym` (duplicates summed first). Names the first mismatch in
/// row-major order of the lower triangle.
pub(crate) fn check_symmetry<V: Value>(
    rows: Coords<'_>,
    cols: Coords<'_>,
    vals: &[V],
    sym: Symmetry,
) -> Result<(), MtxError> {
    let n = vals.len();
    let mut keys: Vec<(u64, u64, u64)> = par::map(n, |e| {
        let (i, j) = (rows.get(e), cols.get(e));
        let upper = (i < j) as u64;
        (i.max(j), i.min(j), (upper << 63) | e as u64)
    });
    keys.par_sort_unstable();
    let mut g = 0;
    while g < keys.len() {
        let (a, b, _) = keys[g];
        let mut lower: Option<V> = None;
        let mut upper: Option<V> = None;
        let mut k = g;
        while k < keys.len() && keys[k].0 == a && keys[k].1 == b {
            let tag = keys[k].2;
            let e = (tag & !(1 << 63)) as usize;
            let v = vals.get(e).copied().unwrap_or_default();
            let slot = if tag >> 63 == 1 {
                &mut upper
            } else {
                &mut lower
            };
            *slot = Some(match *slot {
                None => v,
                Some(acc) => acc.accumulate(v).ok_or_else(|| {
                    MtxError::unsupported(format!(
                        "the sum of the duplicates at ({}, {}) overflows its integer type",
                        a + 1,
                        b + 1
                    ))
                })?,
            });
            k += 1;
        }
        let l = lower.unwrap_or_default().to_scalar();
        if a == b {
            let bad = match (sym, l) {
                (Symmetry::SkewSymmetric, _) => !lower.unwrap_or_default().is_zero(),
                (Symmetry::Hermitian, Scalar::Complex(_, im)) => im != 0.0,
                _ => false,
            };
            if bad {
                let want = if sym == Symmetry::SkewSymmetric {
                    "a skew-symmetric matrix has a zero diagonal"
                } else {
                    "a hermitian matrix has a real diagonal"
                };
                return Err(MtxError::unsupported(format!(
                    "the matrix is not {}: diagonal entry ({}, {}) is {l}, but {want}",
                    sym.name(),
                    a + 1,
                    a + 1
                )));
            }
        } else {
            let u = upper.unwrap_or_default().to_scalar();
            let ok = mirror(l, sym).is_some_and(|m| same(m, u));
            if !ok {
                return Err(MtxError::unsupported(format!(
                    "the matrix is not {}: entry ({}, {}) is {l} but entry ({}, {}) is {u}",
                    sym.name(),
                    a + 1,
                    b + 1,
                    b + 1,
                    a + 1
                )));
            }
        }
        g = k;
    }
    Ok(())
}

/// The banner, comment lines and size line.
pub(crate) fn header_text(
    field: &str,
    sym: Symmetry,
    [rows, cols, written]: [u64; 3],
    opts: &WriteOptions,
) -> String {
    let mut head = format!("{BANNER} matrix coordinate {field} {}\n", sym.name());
    match &opts.comment {
        None => head.push_str("%\n"),
        Some(c) => {
            for line in c.split('\n') {
                head.push('%');
                head.push_str(line);
                head.push('\n');
            }
        }
    }
    head.push_str(&format!("{rows} {cols} {written}\n"));
    head
}

pub(crate) fn field_of(t: ValueType) -> &'static str {
    match t {
        ValueType::F16 | ValueType::BF16 | ValueType::F32 | ValueType::F64 => "real",
        ValueType::C64 | ValueType::C128 => "complex",
        _ => "integer",
    }
}

/// Writes `entries` (a matrix: rank 2) as Matrix Market `coordinate` text to `w`.
///
/// The field follows the value type: floats (`f16`, `bf16`, `f32`, `f64`) are `real`,
/// integers `integer`, complex `complex`, and `bool` is `integer` 0/1 (so stored `false`
/// entries survive; ask for [`WriteOptions::pattern`] to drop the values). Entries are
/// written in the order given, duplicates included. With a symmetry other than `general`
/// only entries with row >= column (row > column for skew-symmetric) are written, after
/// checking that the matrix really has that symmetry (else [`MtxError::Unsupported`]
/// naming the first mismatching entry); an entry whose mirror is missing counts as
/// mirrored by a zero.
pub fn write_to<W: Write>(w: W, entries: &Entries, opts: &WriteOptions) -> Result<(), MtxError> {
    write_named(w, entries, opts, "-")
}

pub(crate) fn write_named<W: Write>(
    w: W,
    entries: &Entries,
    opts: &WriteOptions,
    name: &str,
) -> Result<(), MtxError> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    if entries.rank() != 2 {
        return Err(MtxError::unsupported(format!(
            "Matrix Market holds matrices (rank 2), but this tensor has rank {}; write it as FROSTT .tns instead",
            entries.rank()
        )));
    }
    let (rows, cols) = (entries.dim_sizes()[0], entries.dim_sizes()[1]);
    let sym = opts.symmetry.unwrap_or(Symmetry::General);
    let vt = entries.value_type();
    let (field, pattern) = opts.field_to_write(vt);
    if sym != Symmetry::General && rows != cols {
        return Err(MtxError::unsupported(format!(
            "a {} matrix must be square, but this one is {rows} x {cols}",
            sym.name()
        )));
    }
    if sym == Symmetry::Hermitian && field != "complex" {
        return Err(MtxError::unsupported(format!(
            "`hermitian` needs complex values, but they are {vt}{}; use `symmetric`",
            if pattern { " written as pattern" } else { "" }
        )));
    }
    if sym == Symmetry::SkewSymmetric && pattern {
        return Err(MtxError::unsupported(
            "a pattern matrix cannot be skew-symmetric",
        ));
    }
    let coords = [
        Coords::new(entries.coords(0)),
        Coords::new(entries.coords(1)),
    ];
    let keep = match sym {
        Symmetry::General => Keep::All,
        Symmetry::Symmetric | Symmetry::Hermitian => Keep::Lower,
        Symmetry::SkewSymmetric => Keep::StrictLower,
    };
    let n = entries.len();
    if sym != Symmetry::General {
        with_values!(entries.values(), v => check_symmetry(coords[0], coords[1], v, sym))?;
    }
    let written = if keep == Keep::All {
        n as u64
    } else {
        par::fold_chunks(n, |r| {
            r.filter(|&e| keep.keeps(coords[0].get(e), coords[1].get(e)))
                .count() as u64
        })
        .into_iter()
        .sum()
    };
    let io = |e: io::Error| MtxError::io(name, e);
    let head = header_text(field, sym, [rows, cols, written], opts);
    w.write_all(head.as_bytes()).map_err(io)?;
    let retyped = opts.retyped(entries.values())?;
    let values = retyped.as_ref().unwrap_or(entries.values());
    with_values!(values, v => write_body(
        &mut w,
        &coords,
        v,
        keep,
        pattern,
        opts.threads,
        opts.progress.as_ref(),
        name
    ))?;
    w.flush().map_err(io)?;
    Ok(())
}

/// Writes through `f` to `path` atomically with [`sptk_output`]: a temporary file in the
/// target's folder, fsync, rename, fsync of the folder; the permissions a new file gets
/// from the umask (or the replaced file's). `-` writes to standard output; a `.gz`
/// extension compresses.
pub(crate) fn write_atomic(
    path: &Path,
    f: &dyn Fn(&mut dyn Write, &str) -> Result<(), MtxError>,
) -> Result<(), MtxError> {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        let stdout = io::stdout();
        let mut lock = stdout.lock();
        f(&mut lock, &name)?;
        return lock.flush().map_err(|e| MtxError::io(&name, e));
    }
    let io = |e: io::Error| MtxError::io(&name, e);
    let mut out = sptk_output::AtomicFile::create(path).map_err(io)?;
    let gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    {
        let file: &File = out.file();
        if gz {
            let mut enc = flate2::write::GzEncoder::new(
                BufWriter::with_capacity(1 << 20, file),
                flate2::Compression::new(6),
            );
            f(&mut enc, &name)?;
            let mut inner = enc.finish().map_err(io)?;
            inner.flush().map_err(io)?;
        } else {
            let mut wr = Writeback::new(file);
            f(&mut wr, &name)?;
        }
    }
    out.commit().map_err(io)
}

/// A file writer that starts the kernel's writeback of every 32 MiB written
/// (`sync_file_range`, without waiting), so the disk works while the text is still being
/// formatted and the final fsync has little left to do.
struct Writeback<'a> {
    file: &'a File,
    written: u64,
    started: u64,
}

impl<'a> Writeback<'a> {
    /// Bytes between two writeback requests.
    const STEP: u64 = 32 << 20;

    fn new(file: &'a File) -> Self {
        Writeback {
            file,
            written: 0,
            started: 0,
        }
    }
}

impl Write for Writeback<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= Self::STEP {
            #[cfg(target_os = "linux")]
            {
                use std::os::unix::io::AsRawFd;
                // SAFETY: a plain system call on a descriptor `self.file` keeps open; it
                // touches no memory of ours. Its result is advice only: a failure here
                // shows again, and is reported, at the fsync that ends every write.
                let _ = unsafe {
                    libc::sync_file_range(
                        self.file.as_raw_fd(),
                        self.started as libc::off64_t,
                        (self.written - self.started) as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WRITE,
                    )
                };
            }
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Writes `entries` to `path` as Matrix Market (see [`write_to`]): atomically (a temporary
/// file in the same folder, fsync, rename, so an error leaves no partial file), `-` for
/// standard output, gzip-compressed when the name ends in `.gz`.
pub fn write_path(path: &Path, entries: &Entries, opts: &WriteOptions) -> Result<(), MtxError> {
    write_atomic(path, &|w, name| write_named(w, entries, opts, name))
}

//! Matrix Market straight into CSR or CSC: the body of a memory-mapped `coordinate` file is
//! cut into parts at line ends and handed to [`sptk_tensor::convert_parts`], which counts
//! each part's entries per row in a first pass and parses them into their final places in a
//! second. No coordinate list is built, so the nonzeros exist once, in the output.
//!
//! This route only accelerates: when it does not apply (streams, gzip, `array` files, other
//! encodings) or when anything goes wrong (a malformed line, a count that differs from the
//! size line, a conversion error), it answers `None` and the caller reads the file the
//! ordinary way, which reports the problem with its exact location.

use crate::alloc::can_allocate;
use crate::header::{Field, Format, MtxHeader, Symmetry};
use crate::input::{open_path, Input, Progress, Source};
use crate::parse::{
    count_coo_lines, parse_coo_lines, ComplexField, FieldKind, IntField, PatternField, RealField,
};
use crate::read::{read_header, ReadOptions, Workers};
use crate::scan::find_newline;
use crate::MtxError;
use memmap2::Mmap;
use sptk_encoding::{Encoding, LevelExpr, LevelFormat};
use sptk_tensor::{convert_parts, ConvertError, ConvertOptions, EntryParts, SourceError, Tensor};
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A Matrix Market file converted without an intermediate coordinate list.
#[derive(Debug)]
pub struct DirectRead {
    /// What the header says.
    pub header: MtxHeader,
    /// The entries read, symmetric storage expanded (duplicates counted).
    pub entries: u64,
    /// The converted tensor.
    pub tensor: Tensor,
}

/// Reads `path` straight into `encoding` if it is CSR-like (`(a : dense, b : compressed)`)
/// and the file is a regular, uncompressed `coordinate` file; duplicates are summed in
/// file order and zeros dropped, widths chosen and memory limited as `convert` asks (see
/// [`convert_parts`]), byte for byte as reading the entries and converting them would. `Ok(None)` means "read it the ordinary way": the route does not
/// apply, or the file has a problem that the ordinary reader reports precisely. Standard
/// input (`-`) is never touched.
pub fn read_direct(
    path: &Path,
    encoding: &Encoding,
    convert: &ConvertOptions,
    opts: &ReadOptions,
) -> Result<Option<DirectRead>, MtxError> {
    let name = path.display().to_string();
    let Some((input, header, body_start)) = open_mapped(path)? else {
        return Ok(None);
    };
    let Input::Mapped(map) = &input else {
        return Ok(None);
    };
    let workers = Workers::new(opts.threads, opts.chunk_size)?;
    let threads = workers.threads();
    let body_len = map.len().saturating_sub(body_start) as u64;
    check_memory(
        &header,
        body_len,
        encoding,
        threads,
        opts.memory_limit,
        &name,
    )?;
    let (h, enc) = (&header, encoding);
    let result = workers.install(|| match h.field {
        Field::Real => direct::<RealField>(map, body_start, h, enc, convert, opts, threads),
        Field::Integer => direct::<IntField>(map, body_start, h, enc, convert, opts, threads),
        Field::Complex => direct::<ComplexField>(map, body_start, h, enc, convert, opts, threads),
        Field::Pattern => direct::<PatternField>(map, body_start, h, enc, convert, opts, threads),
    })?;
    Ok(match result {
        Some((tensor, lines, entries)) if lines == header.nnz_stored => Some(DirectRead {
            header,
            entries,
            tensor,
        }),
        _ => None,
    })
}

/// Bytes of one element of an array of `width` bits (0 means 64).
fn width_bytes(width: u8) -> u64 {
    match width {
        0 => 8,
        w => u64::from(w).div_ceil(8),
    }
}

/// The outer dimension if `encoding` is CSR-like (`(a : dense, b : compressed)`, unique
/// and ordered), the only encodings the direct route builds.
pub(crate) fn csr_outer(encoding: &Encoding) -> Option<usize> {
    let [l0, l1] = encoding.levels.as_slice() else {
        return None;
    };
    if encoding.dims.len() != 2 || encoding.has_slices() {
        return None;
    }
    match (&l0.expr, l0.format, &l1.expr, l1.format) {
        (LevelExpr::Dim(a), LevelFormat::Dense, LevelExpr::Dim(b), LevelFormat::Compressed)
            if !l1.props.nonunique && !l1.props.nonordered && a != b && *a < 2 && *b < 2 =>
        {
            Some(*a)
        }
        _ => None,
    }
}

/// The bytes a direct read of this file into `encoding` needs at most.
struct DirectBytes {
    /// Rows of the outer dimension.
    rows: u64,
    /// Entries the file's length can hold (symmetric storage mirrored).
    entries: u64,
    /// The output's `pos`: one position per row, plus one.
    pos: Option<u64>,
    /// The builder's scratch: row starts and lengths for every row, and the per-block
    /// counters of every part.
    scratch: Option<u64>,
    /// The output's `crd` and values, and the builder's 2-byte row-in-block, per entry.
    entries_bytes: Option<u64>,
}

impl DirectBytes {
    /// All of it; `None` past `u64`.
    fn total(&self) -> Option<u64> {
        self.pos?
            .checked_add(self.scratch?)?
            .checked_add(self.entries_bytes?)
    }
}

fn direct_bytes(
    header: &MtxHeader,
    body_len: u64,
    encoding: &Encoding,
    outer: usize,
    parts: usize,
    value_bytes: u64,
) -> DirectBytes {
    let rows = if outer == 0 { header.rows } else { header.cols };
    // An entry line takes at least 4 bytes (`1 1\n`); symmetric storage mirrors each.
    let lines = header.nnz_stored.min(body_len / 4 + 1);
    let entries = match header.symmetry {
        Symmetry::General => lines,
        _ => lines.saturating_mul(2),
    };
    let positions = rows.checked_add(1);
    let pos = positions.and_then(|r| r.checked_mul(width_bytes(encoding.pos_width)));
    // Row blocks: at most 2048, or one per 2^16 rows beyond that; 4 + 16 bytes per part
    // and block, 8 per block.
    let blocks = (rows >> 16).max(2048) + 1;
    let block_bytes = blocks.checked_mul(parts as u64 * 20 + 8);
    let scratch = positions
        .and_then(|r| r.checked_mul(16))
        .and_then(|r| r.checked_add(block_bytes?));
    let per_entry = width_bytes(encoding.crd_width) + value_bytes + 2;
    DirectBytes {
        rows,
        entries,
        pos,
        scratch,
        entries_bytes: entries.checked_mul(per_entry),
    }
}

/// Refuses up front a direct read that would pass `limit` or that the machine cannot
/// allocate, naming the arrays (see [`direct_bytes`]).
fn check_memory(
    header: &MtxHeader,
    body_len: u64,
    encoding: &Encoding,
    parts: usize,
    limit: Option<u64>,
    name: &str,
) -> Result<(), MtxError> {
    let Some(outer) = csr_outer(encoding) else {
        // Not a direct-route target: the route answers `None` without allocating.
        return Ok(());
    };
    let value_bytes = match header.field {
        Field::Complex => 16,
        _ => 8,
    };
    let need = direct_bytes(header, body_len, encoding, outer, parts, value_bytes);
    let total = need.total();
    let show = |b: Option<u64>| match b {
        Some(b) => format!("{b} bytes"),
        None => "more than 2^64 bytes".to_string(),
    };
    let (target, lines) = if outer == 1 {
        ("CSC", "column")
    } else {
        ("CSR", "row")
    };
    let what = format!(
        "{name}: reading straight into {target} needs {}: {} for `pos[1]` ({} elements), {} for `crd[1]` and the values (up to {} entries), and {} of the builder's scratch (16 bytes per {lines} and its row blocks' counters)",
        show(total),
        show(need.pos),
        need.rows as u128 + 1,
        show(need.entries_bytes),
        need.entries,
        show(need.scratch),
    );
    match (total, limit) {
        (Some(t), Some(l)) if t <= l => {}
        (_, Some(l)) => {
            let bytes = total.map_or(u128::from(u64::MAX) + 1, u128::from);
            return Err(MtxError::OverLimit {
                message: format!("{what}; more than the memory limit of {l} bytes"),
                memory: Box::new(sptk_tensor::MemoryLimit {
                    array: format!("the arrays of a direct read into {target}"),
                    elements: u128::from(need.entries),
                    bytes,
                    total: bytes,
                    limit: l,
                }),
            });
        }
        _ => {}
    }
    if !can_allocate(total) {
        return Err(MtxError::TooLarge {
            message: format!("{what}; more than this machine can allocate"),
        });
    }
    Ok(())
}

/// The header of a regular, uncompressed `coordinate` file (the direct route's files);
/// None for any other input.
pub(crate) fn peek_header(path: &Path) -> Result<Option<MtxHeader>, MtxError> {
    Ok(open_mapped(path)?.map(|(_, header, _)| header))
}

/// A regular, uncompressed `coordinate` file mapped, its header, and where its entries
/// start (the direct and out-of-core routes' files); `None` for any other input, and for
/// standard input, which is never touched.
pub(crate) fn open_mapped(
    path: &Path,
) -> Result<Option<(Input<'static>, MtxHeader, usize)>, MtxError> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let name = path.display().to_string();
    let mut input = open_path(path)?;
    let (header, body_start) = {
        let mut src = Source::new(&mut input, &name, None);
        let header = read_header(&mut src)?;
        match src.map_position() {
            Some(pos) => (header, pos),
            None => return Ok(None),
        }
    };
    if header.format != Format::Coordinate || !matches!(input, Input::Mapped(_)) {
        return Ok(None);
    }
    Ok(Some((input, header, body_start)))
}

/// Runs the conversion; `(tensor, entry lines, entries after expansion)`, `None` when the
/// ordinary reader should read the file (it reports malformed input precisely), or the
/// error of an output that cannot be held.
fn direct<F: FieldKind>(
    map: &Mmap,
    body_start: usize,
    header: &MtxHeader,
    encoding: &Encoding,
    convert: &ConvertOptions,
    opts: &ReadOptions,
    threads: usize,
) -> Result<Option<(Tensor, u64, u64)>, MtxError> {
    let data: &[u8] = map;
    let Some(body) = data.get(body_start..) else {
        return Ok(None);
    };
    let parts = threads.max(1);
    let ranges = split_lines(body, parts);
    let source = MappedParts::<F>::new(map, body_start, header, ranges, opts.progress.clone());
    let convert = ConvertOptions {
        memory_limit: convert.memory_limit.or(opts.memory_limit),
        ..convert.clone()
    };
    let tensor = match convert_parts(&source, encoding, &convert) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(ConvertError::MemoryLimit(memory)) => {
            return Err(MtxError::OverLimit {
                message: memory.to_string(),
                memory,
            })
        }
        Err(e @ ConvertError::TooLarge(_)) => {
            return Err(MtxError::TooLarge {
                message: e.to_string(),
            })
        }
        Err(_) => return Ok(None),
    };
    Ok(Some((
        tensor,
        source.lines.load(Ordering::Relaxed),
        source.entries.load(Ordering::Relaxed),
    )))
}

/// `parts` byte ranges of `t` of about equal size, cut after line ends.
pub(crate) fn split_lines(t: &[u8], parts: usize) -> Vec<(usize, usize)> {
    let mut ranges = Vec::with_capacity(parts);
    let mut s = 0;
    for p in 1..=parts {
        let mut e = t.len() / parts * p;
        if p == parts {
            e = t.len();
        } else if e > s {
            e = (find_newline(t, e) + 1).min(t.len());
        }
        let e = e.max(s);
        ranges.push((s, e));
        s = e;
    }
    ranges
}

/// What reads a window of whole lines: its offset in the file, and its bytes.
type Window<'a> = dyn FnMut(usize, &[u8]) -> Result<(), SourceError> + 'a;

/// Bytes read between progress reports and page releases.
const WINDOW: usize = 8 << 20;
const PAGE: usize = 4096;

/// The body of a mapped file, as parts for `convert_parts`.
pub(crate) struct MappedParts<'a, F> {
    map: &'a Mmap,
    body_start: usize,
    /// Part ranges, relative to the body.
    ranges: Vec<(usize, usize)>,
    header: &'a MtxHeader,
    progress: Option<Progress>,
    /// Bytes read over every pass.
    done: AtomicU64,
    /// Entry lines seen by the first pass.
    pub(crate) lines: AtomicU64,
    /// Entries after symmetric expansion seen by the first pass.
    pub(crate) entries: AtomicU64,
    /// The first malformed line found (by byte offset in the file), located precisely:
    /// the out-of-core route reports it itself (it cannot fall back to the ordinary
    /// reader, which would hold the whole input).
    failure: std::sync::Mutex<Option<(usize, String)>>,
    _field: PhantomData<F>,
}

impl<'a, F: FieldKind> MappedParts<'a, F> {
    /// The parts `ranges` (relative to the body, which starts at `body_start`) of the
    /// mapped file `map` with header `header`; `progress` is told the bytes read.
    pub(crate) fn new(
        map: &'a Mmap,
        body_start: usize,
        header: &'a MtxHeader,
        ranges: Vec<(usize, usize)>,
        progress: Option<Progress>,
    ) -> Self {
        MappedParts {
            map,
            body_start,
            ranges,
            header,
            progress,
            done: AtomicU64::new(0),
            lines: AtomicU64::new(0),
            entries: AtomicU64::new(0),
            failure: std::sync::Mutex::new(None),
            _field: PhantomData,
        }
    }

    /// Records the malformed line at byte `pos` of the file (the first one wins).
    fn fail(&self, pos: usize, msg: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.as_ref().is_none_or(|(p, _)| pos < *p) {
            *f = Some((pos, msg));
        }
    }

    /// The first malformed line recorded, as the ordinary reader would report it.
    pub(crate) fn failure(&self, name: &str) -> Option<MtxError> {
        let f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        let (pos, msg) = f.as_ref()?;
        let (line, column) = crate::error::locate(self.map, *pos, 1);
        Some(MtxError::Parse {
            file: name.to_string(),
            line,
            column,
            message: msg.clone(),
        })
    }

    /// Parses the window at file offset `base` only to find its first malformed line.
    fn find_failure(&self, base: usize, t: &[u8]) {
        let h = self.header;
        if let Err(e) = parse_coo_lines::<F, _>(t, h.rows, h.cols, h.symmetry, |_, _, _| true) {
            self.fail(base + e.pos, e.msg);
        }
    }

    /// Calls `f` on windows of complete lines of `part`, releasing the pages read and
    /// reporting progress (half the file per pass) after each.
    fn windows(&self, part: usize, f: &mut Window<'_>) -> Result<(), SourceError> {
        let data: &[u8] = self.map;
        let &(s, e) = self.ranges.get(part).ok_or("no such part")?;
        let (s, e) = (self.body_start + s, self.body_start + e);
        let mut pos = s;
        while pos < e {
            let mut end = pos.saturating_add(WINDOW).min(e);
            if end < e {
                end = (find_newline(&data[..e], end) + 1).min(e);
            }
            f(pos, &data[pos..end])?;
            // Pages wholly read are given back: the second pass maps them in again from
            // the page cache, and the peak resident set stays near the output's size.
            let (a, b) = (pos.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
            if b > a {
                // SAFETY: the range lies inside the read-only file mapping; after
                // MADV_DONTNEED the kernel re-reads these pages from the file if they are
                // touched again, so the contents seen through `data` do not change.
                let _ = unsafe {
                    self.map
                        .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, a, b - a)
                };
            }
            let done =
                self.done.fetch_add((end - pos) as u64, Ordering::Relaxed) + (end - pos) as u64;
            if let Some(p) = &self.progress {
                p(self.body_start as u64 + done / 2);
            }
            pos = end;
        }
        Ok(())
    }
}

impl<F: FieldKind> EntryParts for MappedParts<'_, F> {
    type Value = F::V;

    fn dim_sizes(&self) -> [u64; 2] {
        [self.header.rows, self.header.cols]
    }

    fn part_count(&self) -> usize {
        self.ranges.len()
    }

    fn len_hint(&self) -> u64 {
        // The declared count, but no more than the body can hold (an entry line takes at
        // least 4 bytes): a size line that overstates it is reported by the reader, not
        // refused as too large for memory.
        let body = self.map.len().saturating_sub(self.body_start) as u64;
        let lines = self.header.nnz_stored.min(body / 4 + 1);
        match self.header.symmetry {
            Symmetry::General => lines,
            _ => lines.saturating_mul(2),
        }
    }

    fn count(
        &self,
        part: usize,
        dim: usize,
        shift: u32,
        counts: &mut [u32],
    ) -> Result<u64, SourceError> {
        let h = self.header;
        let (mut lines, mut entries) = (0u64, 0u64);
        self.windows(part, &mut |base, t| {
            let Some((l, e)) = count_coo_lines(t, h.rows, h.cols, h.symmetry, dim, shift, counts)
            else {
                self.find_failure(base, t);
                return Err("a line without readable indices".into());
            };
            lines += l;
            entries += e;
            Ok(())
        })?;
        self.lines.fetch_add(lines, Ordering::Relaxed);
        self.entries.fetch_add(entries, Ordering::Relaxed);
        Ok(entries)
    }

    fn visit<P: FnMut(u64, u64, F::V) -> bool>(
        &self,
        part: usize,
        mut put: P,
    ) -> Result<(), SourceError> {
        let h = self.header;
        let sym = h.symmetry;
        self.windows(part, &mut |base, t| {
            let whole = parse_coo_lines::<F, _>(t, h.rows, h.cols, sym, |i, j, v| {
                // Mirrors can interleave with stored entries here: in a valid symmetric
                // file a stored entry (i >= j) and a mirrored one (j < i) never share a
                // position, so the order of duplicates inside a row is unchanged.
                put(i, j, v) && (sym == Symmetry::General || i == j || put(j, i, F::mirror(v, sym)))
            })
            .map_err(|e| {
                self.fail(base + e.pos, e.msg.clone());
                e.msg
            })?;
            if whole {
                Ok(())
            } else {
                Err("stopped".into())
            }
        })
    }
}

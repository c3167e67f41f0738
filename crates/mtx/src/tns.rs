//! FROSTT `.tns`: N-dimensional coordinate text, one entry per line (`i j k value`,
//! 1-based). Two forms are read:
//!
//! - **extended** (as MLIR's sparse tensor runtime reads and writes it): comment lines
//!   (`#` or `%`), then a line `rank nnz`, a line of `rank` dimension sizes, then exactly
//!   `nnz` entries;
//! - **plain** FROSTT: only entries; the rank is the number of fields minus one and each
//!   dimension size is the largest coordinate in that mode.
//!
//! The form is recognized from the data: a comment containing `extended FROSTT` demands the
//! extended form; otherwise the file is extended when its first line holds two integers
//! `rank nnz`, the next `rank` integers, and the line after that (if any) `rank + 1` fields.
//! Values are read as `f64`.

use crate::alloc::too_large;
use crate::error::{MtxError, RawError};
use crate::format::WriteValue;
use crate::input::{open_path, open_reader, Input, Progress, Source};
use crate::read::Workers;
use crate::scan::{
    at, describe_token, find_newline, nth_data_line, parse_f64, parse_u64, skip_blanks, token_end,
    NumErr,
};
use crate::write::{write_atomic, write_body, Coords, Keep, WriteOptions};
use sptk_tensor::{coord_width_for, with_values, Entries, IndexVec, IndexWidth, ValueVec};
use std::io::{BufWriter, Read, Write};
use std::path::Path;

/// Options of the FROSTT readers.
#[derive(Clone, Default)]
pub struct TnsReadOptions {
    /// Called with the number of input bytes consumed so far, after each block.
    pub progress: Option<Progress>,
    /// Worker threads for parsing (0: rayon's default, the number of CPUs).
    pub threads: usize,
    /// Bytes of text per parallel chunk (0: the default, 4 MiB). Only a tuning and testing
    /// knob: the result is the same for every value.
    pub chunk_size: usize,
}

impl std::fmt::Debug for TnsReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TnsReadOptions")
            .field("progress", &self.progress.is_some())
            .field("threads", &self.threads)
            .field("chunk_size", &self.chunk_size)
            .finish()
    }
}

/// A FROSTT file read into memory.
#[derive(Clone, Debug, PartialEq)]
pub struct TnsData {
    /// The entries (`f64` values, 0-based coordinates in file order, duplicates kept).
    pub entries: Entries,
    /// True if the file had the extended header (`rank nnz` and dimension sizes).
    pub extended: bool,
    /// The leading comment lines without their `#`/`%`, joined with `\n`.
    pub comment: String,
}

/// Reads a FROSTT file (`-` is standard input; gzip is recognized by its magic bytes).
pub fn read_tns_path(path: &Path, opts: &TnsReadOptions) -> Result<TnsData, MtxError> {
    let mut input = open_path(path)?;
    read_tns_input(&mut input, &path.display().to_string(), opts)
}

/// Reads a FROSTT stream; `name` is used in error messages.
pub fn read_tns_from<R: Read>(
    r: R,
    name: &str,
    opts: &TnsReadOptions,
) -> Result<TnsData, MtxError> {
    let mut input = open_reader(r, name)?;
    read_tns_input(&mut input, name, opts)
}

fn is_comment_or_blank(line: &[u8]) -> Option<Option<&[u8]>> {
    let mut p = 0;
    skip_blanks(line, &mut p);
    match at(line, p) {
        b'\n' => Some(None),
        b'#' | b'%' => {
            let t = line.get(p + 1..).unwrap_or(&[]);
            Some(Some(t.strip_suffix(b"\r").unwrap_or(t)))
        }
        _ => None,
    }
}

/// Tokens of a line as (start, bytes).
fn tokens(line: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut p = 0;
    loop {
        skip_blanks(line, &mut p);
        if at(line, p) == b'\n' {
            return out;
        }
        let e = token_end(line, p);
        out.push((p, &line[p..e]));
        p = e;
    }
}

fn all_uints(toks: &[(usize, &[u8])]) -> bool {
    toks.iter()
        .all(|(_, t)| !t.is_empty() && t.iter().all(u8::is_ascii_digit))
}

fn number(line: &[u8], p: &mut usize, what: &str) -> Result<u64, RawError> {
    number_named(line, p, || what.to_string())
}

/// Parses a non-negative integer; `what` names it in an error (built only then).
fn number_named(
    line: &[u8],
    p: &mut usize,
    what: impl FnOnce() -> String,
) -> Result<u64, RawError> {
    skip_blanks(line, p);
    let s = *p;
    if at(line, s) == b'\n' {
        return Err(RawError::new(
            s,
            format!("the line ends early, expected {}", what()),
        ));
    }
    parse_u64(line, p).map_err(|e| {
        let tok = describe_token(line, s);
        let what = what();
        RawError::new(
            s,
            match e {
                NumErr::Negative => {
                    format!("{what} {tok} is negative, expected a non-negative integer")
                }
                NumErr::Overflow => {
                    format!("{what} {tok} overflows 64 bits, expected a smaller integer")
                }
                NumErr::Invalid => {
                    format!("{tok} is not a valid {what}, expected a non-negative integer")
                }
            },
        )
    })
}

/// The entries of one chunk of lines: 0-based coordinates by dimension, values, and the
/// largest 1-based coordinate seen in each dimension.
#[derive(Default)]
struct Chunk {
    coords: Vec<Vec<u64>>,
    vals: Vec<f64>,
    maxc: Vec<u64>,
}

impl Chunk {
    fn clear(&mut self, rank: usize) {
        self.coords.resize_with(rank, Vec::new);
        self.coords.iter_mut().for_each(Vec::clear);
        self.vals.clear();
        self.maxc.clear();
        self.maxc.resize(rank, 0);
    }
}

/// Parses the entry lines of `t` (rank coordinates then a value) into `b`. With `dims`,
/// coordinates are checked against them; otherwise any positive coordinate is taken.
fn parse_chunk(t: &[u8], rank: usize, dims: Option<&[u64]>, b: &mut Chunk) -> Result<(), RawError> {
    b.clear(rank);
    let mut p = 0;
    while p < t.len() {
        skip_blanks(t, &mut p);
        match at(t, p) {
            b'\n' => {
                p += 1;
                continue;
            }
            b'#' | b'%' => {
                p = find_newline(t, p) + 1;
                continue;
            }
            _ => {}
        }
        for (d, (col, m)) in b.coords.iter_mut().zip(b.maxc.iter_mut()).enumerate() {
            skip_blanks(t, &mut p);
            let s = p;
            let what = || format!("coordinate {} of {rank}", d + 1);
            let c = number_named(t, &mut p, what)?;
            let size = dims.and_then(|x| x.get(d).copied()).unwrap_or(u64::MAX);
            if c == 0 || c > size {
                let range = if dims.is_some() {
                    format!("1..={size}")
                } else {
                    "a positive integer".to_string()
                };
                return Err(RawError::new(
                    s,
                    format!(
                        "{} is {c}, out of range, expected {range} (coordinates are 1-based)",
                        what()
                    ),
                ));
            }
            col.push(c - 1);
            *m = (*m).max(c);
        }
        skip_blanks(t, &mut p);
        if at(t, p) == b'\n' {
            return Err(RawError::new(
                p,
                format!("the line ends after {rank} coordinates, expected a value"),
            ));
        }
        let s = p;
        let v = parse_f64(t, &mut p).map_err(|_| {
            RawError::new(
                s,
                format!(
                    "{} is not a valid number, expected a value after {rank} coordinates",
                    describe_token(t, s)
                ),
            )
        })?;
        skip_blanks(t, &mut p);
        if at(t, p) != b'\n' {
            return Err(RawError::new(
                p,
                format!(
                    "unexpected {} after the value, expected {rank} coordinates and one value per line",
                    describe_token(t, p)
                ),
            ));
        }
        p += 1;
        b.vals.push(v);
    }
    Ok(())
}

/// Coordinates of one dimension in their final width: the narrowest that holds the
/// dimension size when the header declares it, else 32 bits, widened to 64 (once, by a
/// copy) when a coordinate needs it.
enum Column {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Column {
    fn new(width: IndexWidth) -> Column {
        match width {
            IndexWidth::W8 => Column::U8(Vec::new()),
            IndexWidth::W16 => Column::U16(Vec::new()),
            IndexWidth::W32 => Column::U32(Vec::new()),
            _ => Column::U64(Vec::new()),
        }
    }

    fn try_reserve(&mut self, n: usize) -> bool {
        match self {
            Column::U8(v) => v.try_reserve_exact(n).is_ok(),
            Column::U16(v) => v.try_reserve_exact(n).is_ok(),
            Column::U32(v) => v.try_reserve_exact(n).is_ok(),
            Column::U64(v) => v.try_reserve_exact(n).is_ok(),
        }
    }

    /// Widens a 32-bit column to 64 bits, with room for `cap` coordinates in all; false
    /// if that cannot be allocated.
    fn widen(&mut self, cap: usize) -> bool {
        if let Column::U32(v) = self {
            let mut wide: Vec<u64> = Vec::new();
            if wide.try_reserve_exact(cap.max(v.len())).is_err() {
                return false;
            }
            wide.extend(v.iter().map(|&x| u64::from(x)));
            *self = Column::U64(wide);
        }
        true
    }

    /// Appends coordinates already checked to fit this column's width.
    fn extend(&mut self, c: &[u64]) {
        match self {
            Column::U8(v) => v.extend(c.iter().map(|&x| x as u8)),
            Column::U16(v) => v.extend(c.iter().map(|&x| x as u16)),
            Column::U32(v) => v.extend(c.iter().map(|&x| x as u32)),
            Column::U64(v) => v.extend_from_slice(c),
        }
    }

    fn into_index_vec(self, size: u64) -> Result<IndexVec, MtxError> {
        Ok(match self {
            Column::U8(v) => IndexVec::U8(v.into()),
            Column::U16(v) => IndexVec::U16(v.into()),
            Column::U32(v) => IndexVec::U32(v.into()),
            Column::U64(v) => IndexVec::from_vec_u64(v, coord_width_for(size)).map_err(|o| {
                MtxError::unsupported(format!("coordinate {} does not fit", o.value))
            })?,
        })
    }
}

/// The entries read so far, in their final columns.
struct Acc {
    columns: Vec<Column>,
    /// The entries the columns have room for.
    cap: usize,
    vals: Vec<f64>,
    maxc: Vec<u64>,
}

impl Acc {
    fn len(&self) -> u64 {
        self.vals.len() as u64
    }

    /// Appends a chunk's entries; false if a column must widen and cannot be allocated.
    #[must_use]
    fn append(&mut self, b: &Chunk) -> bool {
        for ((col, c), &m) in self.columns.iter_mut().zip(&b.coords).zip(&b.maxc) {
            // `m` is 1-based: the coordinate m - 1 fits 32 bits when m <= 2^32.
            if m > u64::from(u32::MAX) + 1 && !col.widen(self.cap) {
                return false;
            }
            col.extend(c);
        }
        for (m, &x) in self.maxc.iter_mut().zip(&b.maxc) {
            *m = (*m).max(x);
        }
        self.vals.extend_from_slice(&b.vals);
        true
    }
}

/// The error for coordinate columns (room for `cap` entries) that cannot be allocated.
fn columns_too_large(cap: u64) -> MtxError {
    too_large::<u64>(
        "the coordinates",
        cap,
        "cannot be allocated on this machine",
    )
}

/// The error for the entry past the `declared` count: the `room`-th data line of `range`.
fn too_many(t: &[u8], (s, e): (usize, usize), room: usize, declared: u64) -> RawError {
    let pos = nth_data_line(&t[s..e], room, b"#%").unwrap_or(0) + s;
    RawError::new(
        pos,
        format!("more entries than the {declared} declared in the header, expected end of file"),
    )
}

fn read_tns_input(
    input: &mut Input<'_>,
    name: &str,
    opts: &TnsReadOptions,
) -> Result<TnsData, MtxError> {
    let mut src = Source::new(input, name, opts.progress.clone());
    let mut comment: Vec<String> = Vec::new();
    let mut forced = false;
    // Up to three data lines of lookahead decide the form.
    let mut look: Vec<(Vec<u8>, u64)> = Vec::new();
    let mut ended = false;
    while look.len() < 3 {
        let Some((line, no)) = src.next_line()? else {
            ended = true;
            break;
        };
        match is_comment_or_blank(&line) {
            Some(Some(c)) if look.is_empty() => {
                let text = String::from_utf8_lossy(c).into_owned();
                if text.to_ascii_lowercase().contains("extended frostt") {
                    forced = true;
                }
                comment.push(text);
            }
            Some(_) => {}
            None => look.push((line, no)),
        }
    }
    let located =
        |src: &Source<'_>, no: u64, e: RawError| src.error_at(no, e.pos as u64 + 1, e.msg);
    let extended = match look.first() {
        None => false,
        Some((l1, _)) => {
            let t1 = tokens(l1);
            forced
                || (t1.len() == 2 && all_uints(&t1) && {
                    let rank = std::str::from_utf8(t1[0].1)
                        .ok()
                        .and_then(|s| s.parse::<usize>().ok())
                        .unwrap_or(0);
                    rank > 0
                        && look.get(1).is_some_and(|(l2, _)| {
                            let t2 = tokens(l2);
                            t2.len() == rank && all_uints(&t2)
                        })
                        && look
                            .get(2)
                            .map_or(ended, |(l3, _)| tokens(l3).len() == rank + 1)
                })
        }
    };
    let (rank, dims, nnz) = if extended {
        let Some((l1, n1)) = look.first() else {
            let (l, c) = src.eof_location();
            return Err(src.error_at(
                l,
                c,
                "the file ends before the header line, expected `rank nnz`".into(),
            ));
        };
        let mut p = 0;
        let rank = number(l1, &mut p, "the rank").map_err(|e| located(&src, *n1, e))?;
        let nnz = number(l1, &mut p, "the number of entries").map_err(|e| located(&src, *n1, e))?;
        skip_blanks(l1, &mut p);
        if at(l1, p) != b'\n' {
            return Err(located(
                &src,
                *n1,
                RawError::new(
                    p,
                    format!(
                        "unexpected {} in the header line, expected `rank nnz`",
                        describe_token(l1, p)
                    ),
                ),
            ));
        }
        if rank == 0 || rank > 1 << 16 {
            return Err(located(
                &src,
                *n1,
                RawError::new(
                    0,
                    format!("rank {rank} is out of range, expected 1..=65536"),
                ),
            ));
        }
        let Some((l2, n2)) = look.get(1) else {
            let (l, c) = src.eof_location();
            return Err(src.error_at(
                l,
                c,
                format!("the file ends before the dimension sizes, expected {rank} sizes"),
            ));
        };
        let mut p = 0;
        let mut dims = Vec::with_capacity(rank as usize);
        for d in 0..rank {
            let what = format!("dimension size {} of {rank}", d + 1);
            dims.push(number(l2, &mut p, &what).map_err(|e| located(&src, *n2, e))?);
        }
        skip_blanks(l2, &mut p);
        if at(l2, p) != b'\n' {
            return Err(located(
                &src,
                *n2,
                RawError::new(
                    p,
                    format!(
                        "unexpected {} after the {rank} dimension sizes, expected end of line",
                        describe_token(l2, p)
                    ),
                ),
            ));
        }
        (rank as usize, Some(dims), nnz)
    } else {
        let Some((l1, _)) = look.first() else {
            let (l, c) = src.eof_location();
            return Err(src.error_at(l, c, "the file has no entries and no header, expected `rank nnz` and the dimension sizes (extended FROSTT) to know the shape".into()));
        };
        let n = tokens(l1).len();
        (n.saturating_sub(1).max(1), None, u64::MAX)
    };
    // Never trust the declared count for allocation: an entry line takes at least
    // 2 * (rank + 1) bytes (`1 1 1\n`), and a stream reserves at most 2^20 numbers in all.
    let per_line = 2 * (rank as u64 + 1);
    let cap = match src.size_hint() {
        Some(n) => n / per_line + 1,
        None => (1 << 20) / (rank as u64 + 1),
    };
    let cap = nnz.min(cap);
    let cap_usize = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut acc = Acc {
        columns: Vec::with_capacity(rank),
        cap: cap_usize,
        vals: Vec::new(),
        maxc: vec![0; rank],
    };
    for d in 0..rank {
        let width = dims
            .as_ref()
            .and_then(|x| x.get(d))
            .map_or(IndexWidth::W32, |&n| coord_width_for(n));
        let mut col = Column::new(width);
        if !col.try_reserve(cap_usize) {
            return Err(columns_too_large(cap));
        }
        acc.columns.push(col);
    }
    acc.vals
        .try_reserve_exact(cap_usize)
        .map_err(|_| too_large::<f64>("the values", cap, "cannot be allocated on this machine"))?;
    let dims_ref = dims.as_deref();
    let first_entry = if extended { 2 } else { 0 };
    let mut one = Chunk::default();
    for (line, no) in look.iter().skip(first_entry) {
        parse_chunk(line, rank, dims_ref, &mut one).map_err(|e| located(&src, *no, e))?;
        if acc.len() + one.vals.len() as u64 > nnz {
            let e = too_many(line, (0, line.len()), 0, nnz);
            return Err(located(&src, *no, e));
        }
        if !acc.append(&one) {
            return Err(columns_too_large(cap));
        }
    }
    let workers = Workers::new(opts.threads, opts.chunk_size)?;
    let mut bufs: Vec<Chunk> = Vec::new();
    let sizes = dims.clone();
    let parse = move |c: &[u8], b: &mut Chunk| parse_chunk(c, rank, sizes.as_deref(), b);
    src.windows(workers.window(), &mut |t: &[u8]| {
        let (ranges, results) = workers.run(t, &mut bufs, &parse);
        for ((b, res), &range) in bufs.iter().zip(results).zip(&ranges) {
            let room = nnz - acc.len();
            if b.vals.len() as u64 > room {
                return Err(too_many(t, range, room as usize, nnz));
            }
            res?;
            if !acc.append(b) {
                // Reported at the first line that needs 64 bits.
                return Err(RawError::new(range.0, columns_too_large(cap).to_string()));
            }
        }
        Ok(())
    })?;
    if extended && acc.len() < nnz {
        let (l, c) = src.eof_location();
        return Err(src.error_at(
            l,
            c,
            format!(
                "the file ends after {} of the {nnz} entries declared in the header, expected {} more",
                acc.vals.len(),
                nnz - acc.vals.len() as u64
            ),
        ));
    }
    let dims = dims.unwrap_or(acc.maxc);
    let mut coords = Vec::with_capacity(rank);
    for (col, &size) in acc.columns.into_iter().zip(&dims) {
        coords.push(col.into_index_vec(size)?);
    }
    let entries = Entries::from_checked_arrays(dims, coords, ValueVec::F64(acc.vals.into()))?;
    Ok(TnsData {
        entries,
        extended,
        comment: comment.join("\n"),
    })
}

fn write_tns_named<W: Write>(
    w: W,
    entries: &Entries,
    opts: &WriteOptions,
    name: &str,
) -> Result<(), MtxError> {
    if entries.value_type().is_complex() {
        return Err(MtxError::unsupported(
            "FROSTT .tns files hold real or integer values, but these are complex; write Matrix Market instead",
        ));
    }
    if entries.rank() == 0 {
        return Err(MtxError::unsupported("a FROSTT file needs rank 1 or more"));
    }
    let mut w = BufWriter::with_capacity(1 << 20, w);
    let io = |e: std::io::Error| MtxError::io(name, e);
    let mut head = String::from("# extended FROSTT format\n");
    if let Some(c) = &opts.comment {
        for line in c.split('\n') {
            head.push('#');
            head.push_str(line);
            head.push('\n');
        }
    }
    head.push_str(&format!("{} {}\n", entries.rank(), entries.len()));
    let dims: Vec<String> = entries.dim_sizes().iter().map(|d| d.to_string()).collect();
    head.push_str(&dims.join(" "));
    head.push('\n');
    w.write_all(head.as_bytes()).map_err(io)?;
    let coords: Vec<Coords<'_>> = entries.coord_arrays().iter().map(Coords::new).collect();
    fn body<W: Write, V: WriteValue>(
        w: &mut W,
        coords: &[Coords<'_>],
        v: &[V],
        opts: &WriteOptions,
        name: &str,
    ) -> Result<(), MtxError> {
        write_body(
            w,
            coords,
            v,
            Keep::All,
            false,
            opts.threads,
            opts.progress.as_ref(),
            name,
        )
    }
    with_values!(entries.values(), v => body(&mut w, &coords, v, opts, name))?;
    w.flush().map_err(io)?;
    Ok(())
}

/// Writes `entries` as extended FROSTT text: `# extended FROSTT format`, any comment lines
/// (each prefixed with `#`), `rank nnz`, the dimension sizes, then one line per entry with
/// 1-based coordinates and the shortest value text (as the Matrix Market writer).
/// Complex values are refused. Only `threads`, `comment` and `progress` of the options apply.
pub fn write_tns_to<W: Write>(
    w: W,
    entries: &Entries,
    opts: &WriteOptions,
) -> Result<(), MtxError> {
    write_tns_named(w, entries, opts, "-")
}

/// Writes `entries` to `path` as extended FROSTT (see [`write_tns_to`]), atomically; `-`
/// is standard output and a `.gz` extension compresses.
pub fn write_tns_path(path: &Path, entries: &Entries, opts: &WriteOptions) -> Result<(), MtxError> {
    write_atomic(path, &|w, name| write_tns_named(w, entries, opts, name))
}

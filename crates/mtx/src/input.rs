//! Input plumbing shared by the readers: memory-mapped regular files, streams (standard
//! input, any `Read`), transparent gzip (detected by its magic bytes `1f 8b`), progress
//! reporting, and the walk over a body in windows of complete lines.

use crate::error::{locate, MtxError, RawError};
use crate::scan::count_newlines;
use flate2::read::MultiGzDecoder;
use memmap2::Mmap;
use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::rc::Rc;

/// A progress callback: called with the number of input bytes consumed so far (compressed
/// bytes for gzip input), after each block.
pub use sptk_tensor::Progress;

/// Counts bytes read from the raw input.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// An opened input.
pub(crate) enum Input<'a> {
    /// A regular uncompressed file, mapped.
    Mapped(Mmap),
    /// Anything else, read sequentially.
    Stream {
        reader: BufReader<Box<dyn Read + 'a>>,
        consumed: Rc<Cell<u64>>,
    },
}

fn read_prefix<R: Read>(r: &mut R, name: &str) -> Result<Vec<u8>, MtxError> {
    let mut prefix = Vec::with_capacity(2);
    while prefix.len() < 2 {
        let mut b = [0u8; 2];
        let want = 2 - prefix.len();
        match r.read(&mut b[..want]) {
            Ok(0) => break,
            Ok(n) => prefix.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(MtxError::io(name, e)),
        }
    }
    Ok(prefix)
}

/// Wraps a reader: detects gzip by its magic bytes and counts raw bytes for progress.
pub(crate) fn open_reader<'a, R: Read + 'a>(r: R, name: &str) -> Result<Input<'a>, MtxError> {
    let consumed = Rc::new(Cell::new(0));
    let mut counting = Counting {
        inner: r,
        count: consumed.clone(),
    };
    let prefix = read_prefix(&mut counting, name)?;
    let gz = prefix == [0x1f, 0x8b];
    let chained = Cursor::new(prefix).chain(counting);
    let boxed: Box<dyn Read + 'a> = if gz {
        Box::new(MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            chained,
        )))
    } else {
        Box::new(chained)
    };
    Ok(Input::Stream {
        reader: BufReader::with_capacity(1 << 16, boxed),
        consumed,
    })
}

/// Opens a path: `-` is standard input; a regular file that does not start with the gzip
/// magic is memory-mapped; everything else is streamed.
pub(crate) fn open_path(path: &Path) -> Result<Input<'static>, MtxError> {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        return open_reader(io::stdin(), &name);
    }
    let mut file = File::open(path).map_err(|e| MtxError::io(&name, e))?;
    let meta = file.metadata().map_err(|e| MtxError::io(&name, e))?;
    let prefix = read_prefix(&mut file, &name)?;
    if meta.is_file() && meta.len() >= 2 && prefix != [0x1f, 0x8b] {
        // SAFETY: the map is read-only and private; we never write through it. Like every
        // reader of a memory-mapped file we rely on no other process truncating or changing
        // the file while it is read (the same contract as fast_matrix_market's and MLIR's
        // mmap readers); changed contents could only produce parse errors or wrong values,
        // since every byte is read through bounds-checked slices.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| MtxError::io(&name, e))?;
        let _ = map.advise(memmap2::Advice::Sequential);
        return Ok(Input::Mapped(map));
    }
    let file = File::open(path).map_err(|e| MtxError::io(&name, e))?;
    open_reader(file, &name)
}

/// Iterates lines of an input, then walks the rest in windows of complete lines.
pub(crate) struct Source<'a> {
    name: String,
    progress: Option<Progress>,
    kind: SourceKind<'a>,
}

enum SourceKind<'a> {
    Map {
        data: &'a [u8],
        map: &'a Mmap,
        pos: usize,
        released: usize,
        /// Line number of `pos` (header lines only).
        line: u64,
    },
    Stream {
        reader: &'a mut (dyn BufRead + 'a),
        consumed: Rc<Cell<u64>>,
        buf: Vec<u8>,
        /// Line number of the first byte of `buf`.
        line: u64,
        /// Bytes of the last (unterminated) line once the input is exhausted.
        tail: u64,
        eof: bool,
    },
}

/// Granularity of released mapped pages.
const PAGE: usize = 4096;

impl<'a> Source<'a> {
    /// A source over an opened input.
    pub(crate) fn new<'r: 'a>(
        input: &'a mut Input<'r>,
        name: &str,
        progress: Option<Progress>,
    ) -> Self {
        let kind = match input {
            Input::Mapped(map) => SourceKind::Map {
                data: &map[..],
                map,
                pos: 0,
                released: 0,
                line: 1,
            },
            Input::Stream { reader, consumed } => SourceKind::Stream {
                reader,
                consumed: consumed.clone(),
                buf: Vec::new(),
                line: 1,
                tail: 0,
                eof: false,
            },
        };
        Source {
            name: name.to_string(),
            progress,
            kind,
        }
    }

    /// Total size if known (mapped files).
    pub(crate) fn size_hint(&self) -> Option<u64> {
        match &self.kind {
            SourceKind::Map { data, .. } => Some(data.len() as u64),
            SourceKind::Stream { .. } => None,
        }
    }

    /// For a mapped input, the offset of the next unread byte (after the header lines
    /// read so far); `None` for streams.
    pub(crate) fn map_position(&self) -> Option<usize> {
        match &self.kind {
            SourceKind::Map { pos, .. } => Some(*pos),
            SourceKind::Stream { .. } => None,
        }
    }

    /// A parse error at `(line, column)`.
    pub(crate) fn error_at(&self, line: u64, column: u64, msg: String) -> MtxError {
        MtxError::Parse {
            file: self.name.clone(),
            line,
            column,
            message: msg,
        }
    }

    /// The next line (without `\n`) and its 1-based number; `None` at the end. Only used
    /// for headers, before any call to [`Source::windows`].
    pub(crate) fn next_line(&mut self) -> Result<Option<(Vec<u8>, u64)>, MtxError> {
        match &mut self.kind {
            SourceKind::Map {
                data, pos, line, ..
            } => {
                if *pos >= data.len() {
                    return Ok(None);
                }
                let no = *line;
                let end = crate::scan::find_newline(data, *pos);
                let text = data[*pos..end].to_vec();
                *pos = end + 1;
                *line += 1;
                Ok(Some((text, no)))
            }
            SourceKind::Stream {
                reader,
                line,
                tail,
                eof,
                ..
            } => {
                let mut text = Vec::new();
                let n = reader
                    .read_until(b'\n', &mut text)
                    .map_err(|e| MtxError::io(&self.name, e))?;
                if n == 0 {
                    *eof = true;
                    return Ok(None);
                }
                let no = *line;
                if text.last() == Some(&b'\n') {
                    text.pop();
                    *line += 1;
                } else {
                    *tail = text.len() as u64;
                    *eof = true;
                }
                Ok(Some((text, no)))
            }
        }
    }

    /// Calls `f` on successive windows of about `target` bytes of complete lines until the
    /// input is exhausted. Errors from `f` carry offsets into the window and come back
    /// located.
    pub(crate) fn windows(
        &mut self,
        target: usize,
        f: &mut dyn FnMut(&[u8]) -> Result<(), RawError>,
    ) -> Result<(), MtxError> {
        let target = target.max(1);
        match &mut self.kind {
            SourceKind::Map {
                data,
                map,
                pos,
                released,
                ..
            } => {
                while *pos < data.len() {
                    let mut end = (*pos).saturating_add(target).min(data.len());
                    if end < data.len() {
                        end = (crate::scan::find_newline(data, end) + 1).min(data.len());
                    }
                    let start = *pos;
                    if let Err(e) = f(&data[start..end]) {
                        let (line, col) = locate(data, start + e.pos, 1);
                        return Err(MtxError::Parse {
                            file: self.name.clone(),
                            line,
                            column: col,
                            message: e.msg,
                        });
                    }
                    *pos = end;
                    // Give the consumed pages back: they are never read again, and
                    // dropping them keeps the file out of the peak resident set.
                    let upto = end / PAGE * PAGE;
                    if upto > *released {
                        // SAFETY: the range lies inside the read-only file mapping; after
                        // MADV_DONTNEED the kernel re-reads these pages from the file if they
                        // are touched again, so the contents seen through `data` do not change.
                        let _ = unsafe {
                            map.unchecked_advise_range(
                                memmap2::UncheckedAdvice::DontNeed,
                                *released,
                                upto - *released,
                            )
                        };
                        *released = upto;
                    }
                    if let Some(p) = &self.progress {
                        p(end as u64);
                    }
                }
                Ok(())
            }
            SourceKind::Stream {
                reader,
                consumed,
                buf,
                line,
                tail,
                eof,
            } => loop {
                let mut cut = None;
                while !*eof {
                    let have = buf.len();
                    let want = target.saturating_sub(have).max(1 << 16) as u64;
                    let n = (&mut **reader)
                        .take(want)
                        .read_to_end(buf)
                        .map_err(|e| MtxError::io(&self.name, e))?;
                    if (n as u64) < want {
                        *eof = true;
                    }
                    if buf.len() >= target || *eof {
                        if let Some(p) = buf.iter().rposition(|&b| b == b'\n') {
                            cut = Some(p + 1);
                            break;
                        }
                    }
                }
                let cut = if *eof {
                    buf.len()
                } else {
                    cut.unwrap_or(buf.len())
                };
                if cut == 0 {
                    return Ok(());
                }
                let window = &buf[..cut];
                if let Err(e) = f(window) {
                    let (l, col) = locate(window, e.pos, *line);
                    return Err(MtxError::Parse {
                        file: self.name.clone(),
                        line: l,
                        column: col,
                        message: e.msg,
                    });
                }
                *line += count_newlines(window);
                if *eof {
                    *tail = window
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(window.len(), |p| window.len() - p - 1)
                        as u64;
                }
                buf.drain(..cut);
                if let Some(p) = &self.progress {
                    p(consumed.get());
                }
            },
        }
    }

    /// Line and column just past the last byte of the input (for "file ends early").
    pub(crate) fn eof_location(&self) -> (u64, u64) {
        match &self.kind {
            SourceKind::Map { data, .. } => locate(data, data.len(), 1),
            SourceKind::Stream { line, tail, .. } => (*line, *tail + 1),
        }
    }
}

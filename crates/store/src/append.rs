/*!
A `.spt` file written while its tensor is built, for conversions larger than memory
([`Appender`], the [`ArraySink`] of [`sptk_tensor::convert_parts_out_of_core`]).

The conversion first says which arrays it will write and at most how long each will be
([`OutputPlan`]). The file is then laid out for those bounds (the header as it would be,
every array at its place), its free space checked and the whole file allocated on the
disk, so that a full disk is an error before any data is written. The arrays arrive in
order, each a stretch at a time, and go straight to their places with positioned writes,
hashed chunk by chunk on the way; the pages written are handed to the disk and dropped
from the page cache behind the writer ([`sptk_output::WriteBehind`]), so the output holds
no memory however large it is. [`Appender::finish`] then places the arrays where their
final lengths put them (summed duplicates and dropped zeros shorten them: the arrays after
the first short one move down, a sequential copy inside the file, and nothing moves when
the bounds were exact), writes the chunk checksums, the header and the prefix, cuts the
file to its length and publishes it atomically as [`crate::write`] does. The bytes are
those [`crate::write`] gives for the same tensor.

An appender dropped before `finish` leaves the target as it was and no temporary.
*/

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use sptk_output::{AtomicFile, WriteBehind};
use sptk_tensor::{ArrayKind, ArraySink, Labels, Layout, OutputPlan};

use crate::error::{StoreError, StoreErrorKind};
use crate::format::{align_up, hex64, Dtype, MAGIC, PREFIX_LEN, VERSION};
use crate::header::{expected_arrays, label_arrays, raw_from_parts, RawHeader, Shape, CHECKSUMS};
use crate::write::{chunk_bytes_of, header_bytes, provenance_of, ChunkSums, WriteOptions};

/// A `.spt` file being written array by array, in stretches (see the module doc).
pub struct Appender {
    out: AtomicFile,
    path: PathBuf,
    opts: WriteOptions,
    labels: Vec<Option<Labels>>,
    chunk_bytes: u64,
    state: Option<Laid>,
    behind: WriteBehind,
    /// Bytes of array data written so far, and the file's planned length.
    written: u64,
}

/// The file as laid out for the plan's bounds.
struct Laid {
    plan: OutputPlan,
    layout: Layout,
    /// Every array but `checksums`, in directory order: the plan's, then the labels'.
    arrays: Vec<Slot>,
    /// Where the data section starts.
    data_start: u64,
    /// The file's length as laid out.
    total: u64,
}

struct Slot {
    name: String,
    dtype: Dtype,
    /// Bytes of the bound.
    room: u64,
    /// Bytes written.
    filled: u64,
    /// Offset inside the data section, as laid out.
    offset: u64,
    sums: ChunkSums,
}

impl std::fmt::Debug for Appender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Appender")
            .field("path", &self.path)
            .field("written", &self.written)
            .finish()
    }
}

impl Appender {
    /// Starts a replacement of `path` (a temporary file beside it) for a tensor whose
    /// dimensions carry `labels` (one entry per dimension, or none); `opts` as for
    /// [`crate::write`].
    ///
    /// # Errors
    /// Standard output, a folder that refuses the file, a bad chunk size.
    pub fn create(
        path: &Path,
        labels: Vec<Option<Labels>>,
        opts: &WriteOptions,
    ) -> Result<Appender, StoreError> {
        let at = |e: io::Error| StoreError::from(e).at(path);
        let chunk_bytes = chunk_bytes_of(opts).map_err(at)?;
        Ok(Appender {
            out: AtomicFile::create(path).map_err(at)?,
            path: path.to_path_buf(),
            opts: opts.clone(),
            labels,
            chunk_bytes,
            state: None,
            behind: WriteBehind::new(),
            written: 0,
        })
    }

    /// Gives the tensor's dimensions their labels (one entry per dimension), when they are
    /// known only after [`Appender::create`]; before the conversion plans its arrays.
    ///
    /// # Errors
    /// Labels given after the plan.
    pub fn set_labels(&mut self, labels: Vec<Option<Labels>>) -> Result<(), StoreError> {
        if self.state.is_some() {
            return Err(self.err(internal("labels after the plan")));
        }
        self.labels = labels;
        Ok(())
    }

    fn err(&self, e: impl Into<StoreError>) -> StoreError {
        e.into().at(&self.path)
    }

    /// The error of a write that failed: a full disk says how far it got.
    fn io_err(&self, e: io::Error) -> StoreError {
        if sptk_output::is_disk_full(&e) {
            let total = self.state.as_ref().map_or(0, |s| s.total);
            return self.err(StoreErrorKind::DiskFull {
                written: self.written,
                total,
            });
        }
        self.err(e)
    }

    fn file(&mut self) -> &File {
        self.out.file()
    }

    /// The header of the arrays at lengths `lens` (bytes per array of `arrays`).
    fn header(&self, laid: &Laid, lens: &[u64], nse: u64, entries: u64) -> RawHeader {
        let list = laid
            .arrays
            .iter()
            .zip(lens)
            .map(|(s, &bytes)| (s.name.clone(), s.dtype, elements(s.dtype, bytes)))
            .collect();
        let shape = Shape {
            encoding: &laid.plan.encoding,
            layout: &laid.layout,
            dim_sizes: &laid.plan.dim_sizes,
            value_type: laid.plan.value_type,
            nse,
            entries,
        };
        raw_from_parts(
            &shape,
            list,
            provenance_of(&self.opts, &[]),
            self.opts.metadata.clone(),
            self.chunk_bytes,
        )
    }

    /// Writes `bytes` at `offset` of the file, counting them, and writes back behind.
    fn put(&mut self, region: Option<usize>, offset: u64, bytes: &[u8]) -> Result<(), StoreError> {
        if let Err(e) = self.out.file().write_all_at(bytes, offset) {
            return Err(self.io_err(e));
        }
        self.written += bytes.len() as u64;
        let end = offset + bytes.len() as u64;
        if let Some(region) = region {
            let file = self.out.file();
            self.behind.written(file, region, offset, end);
        }
        if let Some(p) = &self.opts.progress {
            p(self.written);
        }
        Ok(())
    }

    /// Places the arrays at their final lengths, writes the checksums, the header and the
    /// prefix, and publishes the file. `entries` is the header's count of entries (for an
    /// encoding without padding, the stored values). Returns the file's length.
    ///
    /// # Errors
    /// An array left unfinished or overfilled (a bug of the caller), I/O errors, a full
    /// disk.
    pub fn finish(mut self, entries: u64) -> Result<u64, StoreError> {
        let Some(mut laid) = self.state.take() else {
            return Err(self.err(internal("finished before anything was planned")));
        };
        let lens: Vec<u64> = laid.arrays.iter().map(|s| s.filled).collect();
        let values = laid.plan.arrays.len() - 1;
        let nse = elements(laid.arrays[values].dtype, lens[values]);
        for s in &laid.arrays {
            if Dtype::bytes_for(s.dtype, elements(s.dtype, s.filled)) != Some(s.filled) {
                return Err(self.err(internal(&format!("{} ends inside an element", s.name))));
            }
        }
        let mut raw = self.header(&laid, &lens, nse, entries);
        let mut sums = Vec::new();
        for s in &mut laid.arrays {
            s.sums.end_array();
            sums.append(&mut s.sums.sums);
        }
        let sum_bytes: Vec<u8> = sums.iter().flat_map(|h| h.to_le_bytes()).collect();
        match raw.arrays.last_mut() {
            Some(last) if last.name == CHECKSUMS && last.len == sums.len() as u64 => {
                last.checksum = Some(hex64(crate::format::checksum(&sum_bytes)));
            }
            _ => return Err(self.err(internal("the chunk checksums do not match the directory"))),
        }
        let header = header_bytes(&raw).map_err(|e| self.err(e))?;
        let data_start = (PREFIX_LEN + header.len()) as u64;
        // Arrays move down in order (each lands at or below where it was laid out:
        // lengths only shrink), then each is followed by its zero padding.
        self.behind.finish(self.out.file());
        let mut buf = Vec::new();
        for (s, placed) in laid.arrays.iter().zip(&raw.arrays) {
            let from = laid.data_start + s.offset;
            let to = data_start + placed.offset;
            if from != to {
                self.move_down(from, to, placed.nbytes, &mut buf)?;
            }
            self.pad(to + placed.nbytes)?;
        }
        let Some(placed) = raw.arrays.last() else {
            return Err(self.err(internal("no checksums array")));
        };
        let at = data_start + placed.offset;
        self.put(None, at, &sum_bytes)?;
        let end = self.pad(at + placed.nbytes)?;
        let mut prefix = Vec::with_capacity(PREFIX_LEN + header.len());
        prefix.extend_from_slice(&MAGIC);
        prefix.extend_from_slice(&VERSION.to_le_bytes());
        prefix.extend_from_slice(&0u32.to_le_bytes());
        prefix.extend_from_slice(&(header.len() as u64).to_le_bytes());
        prefix.extend_from_slice(&header);
        let file = self.out.file();
        let done = file
            .write_all_at(&prefix, 0)
            .and_then(|()| file.set_len(end));
        done.map_err(|e| self.io_err(e))?;
        let path = self.path.clone();
        self.out
            .commit()
            .map_err(|e| StoreError::from(e).at(&path))?;
        Ok(end)
    }

    /// Zeros from `end` to the next multiple of 64 of the data section; returns that end.
    fn pad(&mut self, end: u64) -> Result<u64, StoreError> {
        let to = align_up(end).unwrap_or(end);
        if to > end {
            let zeros = [0u8; 64];
            let n = (to - end) as usize;
            self.out
                .file()
                .write_all_at(&zeros[..n], end)
                .map_err(|e| self.io_err(e))?;
        }
        Ok(to)
    }

    /// Copies `n` bytes from `from` down to `to` (< `from`) inside the file, front first,
    /// so no byte is overwritten before it is read.
    fn move_down(
        &mut self,
        from: u64,
        to: u64,
        n: u64,
        buf: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        const STEP: u64 = 8 << 20;
        buf.resize(STEP as usize, 0);
        let mut done = 0u64;
        while done < n {
            let k = (n - done).min(STEP) as usize;
            let file = self.out.file();
            let r = file
                .read_exact_at(&mut buf[..k], from + done)
                .and_then(|()| file.write_all_at(&buf[..k], to + done));
            r.map_err(|e| self.io_err(e))?;
            let file = self.out.file();
            self.behind
                .written(file, 0, to + done, to + done + k as u64);
            done += k as u64;
        }
        let file = self.out.file();
        self.behind.finish(file);
        Ok(())
    }
}

/// Elements of type `dtype` in `bytes` bytes (rounded down).
fn elements(dtype: Dtype, bytes: u64) -> u64 {
    match dtype {
        Dtype::U2 => bytes * 4,
        Dtype::Scalar(v) => bytes / v.size() as u64,
    }
}

fn internal(what: &str) -> StoreError {
    StoreError::from(io::Error::other(format!("internal: {what}")))
}

impl ArraySink for Appender {
    type Error = StoreError;

    fn begin(&mut self, plan: &OutputPlan) -> Result<(), StoreError> {
        if self.state.is_some() {
            return Err(self.err(internal("planned twice")));
        }
        let layout = Layout::new(&plan.encoding, &plan.dim_sizes)
            .map_err(|e| self.err(StoreErrorKind::Convert(e)))?;
        let mut list: Vec<(String, Dtype, u64)> = Vec::new();
        for a in &plan.arrays {
            let dtype = match a.kind {
                ArrayKind::Index(w) => Dtype::index(w),
                ArrayKind::Values(v) => Dtype::Scalar(v),
            };
            list.push((a.name.clone(), dtype, a.bound));
        }
        let wanted = expected_arrays(&layout, plan.value_type);
        let named: Vec<(String, Dtype)> = list.iter().map(|(n, d, _)| (n.clone(), *d)).collect();
        if named != wanted || plan.arrays.last().map(|a| a.name.as_str()) != Some("values") {
            return Err(self.err(internal("the planned arrays are not the encoding's")));
        }
        let labels = std::mem::take(&mut self.labels);
        if !labels.is_empty() && labels.len() != plan.dim_sizes.len() {
            return Err(self.err(internal("labels for another rank")));
        }
        for (d, l) in labels.iter().enumerate() {
            if let Some(l) = l {
                if l.len() as u64 != plan.dim_sizes[d] {
                    return Err(self.err(internal("labels of another size")));
                }
                list.extend(label_arrays(d, l));
            }
        }
        let bound = plan.arrays.last().map_or(0, |a| a.bound);
        let shape = Shape {
            encoding: &plan.encoding,
            layout: &layout,
            dim_sizes: &plan.dim_sizes,
            value_type: plan.value_type,
            nse: bound,
            entries: bound,
        };
        let raw = raw_from_parts(
            &shape,
            list.clone(),
            provenance_of(&self.opts, &[]),
            self.opts.metadata.clone(),
            self.chunk_bytes,
        );
        let header = header_bytes(&raw).map_err(|e| self.err(e))?;
        let data_start = (PREFIX_LEN + header.len()) as u64;
        let total = raw
            .arrays
            .last()
            .and_then(|a| align_up(a.offset + a.nbytes))
            .map_or(data_start, |e| data_start + e);
        let arrays = list
            .iter()
            .zip(&raw.arrays)
            .map(|((name, dtype, _), placed)| Slot {
                name: name.clone(),
                dtype: *dtype,
                room: placed.nbytes,
                filled: 0,
                offset: placed.offset,
                sums: ChunkSums::new(self.chunk_bytes as usize),
            })
            .collect();
        self.state = Some(Laid {
            plan: plan.clone(),
            layout,
            arrays,
            data_start,
            total,
        });
        let free = sptk_output::free_bytes(sptk_output::folder(&self.path)).unwrap_or(u64::MAX);
        if free < total {
            return Err(self.err(StoreErrorKind::DiskFull { written: 0, total }));
        }
        if let Err(e) = sptk_output::allocate(self.file(), total) {
            return Err(self.io_err(e));
        }
        // The labels are known now: they go to their places at once.
        let first_label = plan.arrays.len();
        let mut k = first_label;
        for l in labels.iter().flatten() {
            let offsets = crate::write::index_bytes(l.offsets());
            self.append_at(k, &offsets)?;
            self.append_at(k + 1, l.bytes())?;
            k += 2;
        }
        Ok(())
    }

    fn append(&mut self, array: usize, bytes: &[u8]) -> Result<(), StoreError> {
        let planned = self.state.as_ref().map_or(0, |s| s.plan.arrays.len());
        if array >= planned {
            return Err(self.err(internal("an array outside the plan")));
        }
        self.append_at(array, bytes)
    }
}

impl Appender {
    fn append_at(&mut self, array: usize, bytes: &[u8]) -> Result<(), StoreError> {
        let Some(laid) = self.state.as_mut() else {
            return Err(self.err(internal("data before the plan")));
        };
        let slot = &mut laid.arrays[array];
        if slot.filled + bytes.len() as u64 > slot.room {
            let name = slot.name.clone();
            return Err(self.err(internal(&format!("{name} overfilled"))));
        }
        let at = laid.data_start + slot.offset + slot.filled;
        slot.filled += bytes.len() as u64;
        slot.sums.feed(bytes);
        self.put(Some(array), at, bytes)
    }
}

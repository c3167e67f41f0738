//! Table files opened for reading: Parquet files (parts are row groups), Arrow IPC files
//! (parts are record batches, found from the footer without decoding them) and Arrow IPC
//! streams (read once, front to back). A file is reopened by every part that reads it, so
//! parts read in parallel; a stream given on standard input arrives as buffered bytes.
//!
//! Opening checks what arrow-rs and parquet would otherwise trust (see [`check_message`],
//! [`parquet_parts`]): every IPC message inside the file, every buffer inside its body, the
//! uncompressed sizes compressed buffers declare within the memory budget, every Parquet
//! column chunk inside the file's data. arrow-ipc's own validation of the arrays it builds
//! stays on (no `with_skip_validation`), and batches the Parquet reader decodes are
//! validated in full where it builds them unchecked (dictionaries, text). Every call into
//! the libraries runs inside [`contain`], for the panics these checks do not foresee.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

use crate::error::TableError;
use crate::guard::contain;

/// The kinds of table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC file format (Feather v2).
    ArrowFile,
    /// Arrow IPC stream format.
    ArrowStream,
}

impl TableKind {
    /// The kind of table a file starting with `head` is, if any.
    pub fn of(head: &[u8]) -> Option<TableKind> {
        if head.starts_with(b"PAR1") {
            Some(TableKind::Parquet)
        } else if head.starts_with(b"ARROW1") {
            Some(TableKind::ArrowFile)
        } else if head.len() >= 8 && head[..4] == [0xff; 4] && head[4..8] != [0; 4] {
            // A stream opens with a schema message: continuation marker, then its length.
            Some(TableKind::ArrowStream)
        } else {
            None
        }
    }

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Parquet => "Parquet",
            TableKind::ArrowFile => "Arrow IPC file",
            TableKind::ArrowStream => "Arrow IPC stream",
        }
    }
}

/// Where a table file's bytes are.
pub(crate) enum Data {
    Path,
    Buffered(Bytes),
    /// Record batches already in memory (an Arrow C stream, see `crate::batches`), one per
    /// part: read by slicing, never decoded.
    Batches(Vec<RecordBatch>),
}

/// The refusal of a file-format read of record batches held in memory (a bug if met:
/// [`TableFile::each_batch`] serves them first).
fn not_a_file(path: &Path) -> TableError {
    TableError::invalid(
        path,
        "record batches held in memory have no file format to decode",
    )
}

/// One table file, opened: its schema and its parts.
pub(crate) struct TableFile {
    /// The file (`-` for standard input).
    pub path: PathBuf,
    /// Its kind.
    pub kind: TableKind,
    pub(crate) data: Data,
    /// Its schema, with the metadata the writer put there.
    pub schema: SchemaRef,
    pub(crate) parquet: Option<ArrowReaderMetadata>,
    /// Rows of each part (empty for a stream, which has none).
    pub parts: Vec<u64>,
    /// Partition keys from `key=value` folders on the way to the file.
    pub hive: HashMap<String, String>,
    /// The memory budget sizes read from the file are checked against.
    pub(crate) limit: u64,
}

fn format_err(path: &Path) -> impl Fn(&dyn std::fmt::Display) -> TableError + '_ {
    move |e| TableError::format(path, e)
}

impl TableFile {
    /// Opens a file of a known kind. `limit` is the memory budget that sizes read from
    /// the file (compressed Arrow buffers, for one) are checked against before the
    /// libraries allocate them.
    pub fn open(
        path: &Path,
        kind: TableKind,
        hive: HashMap<String, String>,
        limit: u64,
    ) -> Result<TableFile, TableError> {
        let file = File::open(path).map_err(|e| TableError::io(path, e))?;
        contain(
            path,
            || "reading its metadata".into(),
            || Self::open_data(path, kind, Data::Path, Some(file), hive, limit),
        )
    }

    /// Opens a table held in memory (standard input, buffered).
    pub fn from_bytes(
        name: &Path,
        kind: TableKind,
        bytes: Bytes,
        limit: u64,
    ) -> Result<TableFile, TableError> {
        contain(
            name,
            || "reading its metadata".into(),
            || {
                Self::open_data(
                    name,
                    kind,
                    Data::Buffered(bytes),
                    None,
                    HashMap::new(),
                    limit,
                )
            },
        )
    }

    fn open_data(
        path: &Path,
        kind: TableKind,
        data: Data,
        file: Option<File>,
        hive: HashMap<String, String>,
        limit: u64,
    ) -> Result<TableFile, TableError> {
        let err = format_err(path);
        let mut parquet = None;
        let (schema, parts) = match (kind, &data) {
            (_, Data::Batches(_)) => return Err(not_a_file(path)),
            (TableKind::Parquet, _) => {
                let opts = ArrowReaderOptions::new();
                let (meta, len) = match (&data, &file) {
                    (Data::Buffered(b), _) => (
                        ArrowReaderMetadata::load(b, opts),
                        parquet_data_end(&mut std::io::Cursor::new(b), path)?,
                    ),
                    (Data::Path, Some(f)) => (
                        ArrowReaderMetadata::load(f, opts),
                        parquet_data_end(&mut &*f, path)?,
                    ),
                    (Data::Path, None) => {
                        return Err(TableError::invalid(path, "a path source without its file"))
                    }
                    (Data::Batches(_), _) => return Err(not_a_file(path)),
                };
                let meta = meta.map_err(|e| {
                    TableError::format(
                        path,
                        format!("not a readable Parquet file (truncated or damaged?): {e}"),
                    )
                })?;
                let parts = parquet_parts(meta.metadata(), len, path)?;
                let schema = meta.schema().clone();
                parquet = Some(meta);
                (schema, parts)
            }
            (TableKind::ArrowFile, Data::Path) => {
                let mut f = file.ok_or_else(|| TableError::invalid(path, "not opened"))?;
                let rows = ipc_file_blocks(&mut f, path, limit)?;
                f.seek(SeekFrom::Start(0))
                    .map_err(|e| TableError::io(path, e))?;
                let r = FileReader::try_new(BufReader::new(f), None).map_err(|e| err(&e))?;
                (r.schema(), rows)
            }
            (TableKind::ArrowFile, Data::Buffered(b)) => {
                let mut c = std::io::Cursor::new(b.clone());
                let rows = ipc_file_blocks(&mut c, path, limit)?;
                c.set_position(0);
                let r = FileReader::try_new(c, None).map_err(|e| err(&e))?;
                (r.schema(), rows)
            }
            (TableKind::ArrowStream, _) => {
                let schema = match (&data, file) {
                    (Data::Buffered(b), _) => {
                        let mut c = std::io::Cursor::new(b.clone());
                        ipc_stream_messages(&mut c, path, limit)?;
                        c.set_position(0);
                        StreamReader::try_new(c, None)
                            .map_err(|e| err(&e))?
                            .schema()
                    }
                    (Data::Path, Some(mut f)) => {
                        ipc_stream_messages(&mut BufReader::new(&mut f), path, limit)?;
                        f.seek(SeekFrom::Start(0))
                            .map_err(|e| TableError::io(path, e))?;
                        StreamReader::try_new(BufReader::new(f), None)
                            .map_err(|e| err(&e))?
                            .schema()
                    }
                    (Data::Path, None) => {
                        return Err(TableError::invalid(path, "a path source without its file"))
                    }
                    (Data::Batches(_), _) => return Err(not_a_file(path)),
                };
                (schema, Vec::new())
            }
        };
        Ok(TableFile {
            path: path.to_path_buf(),
            kind,
            data,
            schema,
            parquet,
            parts,
            hive,
            limit,
        })
    }

    /// The Parquet metadata, for a Parquet file.
    pub fn parquet(&self) -> Option<&ArrowReaderMetadata> {
        self.parquet.as_ref()
    }

    /// Calls `each` with the batches of part `part` (at most `window` rows each for
    /// Parquet; IPC batches as written), holding the schema columns `projection` in that
    /// order of the schema. A stream has no parts: see [`TableFile::each_stream_batch`].
    pub fn each_batch(
        &self,
        part: usize,
        projection: &[usize],
        window: usize,
        mut each: impl FnMut(RecordBatch) -> Result<(), TableError>,
    ) -> Result<(), TableError> {
        let place = || match self.kind {
            TableKind::Parquet => format!("row group {part}"),
            _ => format!("record batch {part}"),
        };
        contain(&self.path, place, || {
            self.each_batch_inner(part, projection, window, &mut each)
        })
    }

    fn each_batch_inner(
        &self,
        part: usize,
        projection: &[usize],
        window: usize,
        each: &mut dyn FnMut(RecordBatch) -> Result<(), TableError>,
    ) -> Result<(), TableError> {
        let path = &self.path;
        if let Data::Batches(batches) = &self.data {
            return crate::batches::each_window(batches, part, projection, window, path, each);
        }
        let err = format_err(path);
        match self.kind {
            TableKind::Parquet => {
                let meta = self
                    .parquet
                    .clone()
                    .ok_or_else(|| TableError::invalid(path, "no metadata"))?;
                let schema = meta.parquet_schema();
                let mask = ProjectionMask::roots(schema, projection.iter().copied());
                let leaves: Vec<usize> = (0..schema.num_columns())
                    .filter(|&l| projection.contains(&schema.get_column_root_idx(l)))
                    .collect();
                macro_rules! run {
                    ($input:expr) => {{
                        let input = $input;
                        crate::pages::check_row_group(
                            &input,
                            meta.metadata(),
                            part,
                            &leaves,
                            self.limit,
                            path,
                        )?;
                        let reader =
                            ParquetRecordBatchReaderBuilder::new_with_metadata(input, meta)
                                .with_row_groups(vec![part])
                                .with_projection(mask)
                                .with_batch_size(window.max(1))
                                .build()
                                .map_err(|e| err(&e))?;
                        for batch in reader {
                            let batch = batch.map_err(|e| err(&e))?;
                            validate_decoded(&batch, path, part)?;
                            each(batch)?;
                        }
                    }};
                }
                match &self.data {
                    Data::Path => run!(File::open(path).map_err(|e| TableError::io(path, e))?),
                    Data::Buffered(b) => run!(b.clone()),
                    Data::Batches(_) => return Err(not_a_file(path)),
                }
            }
            TableKind::ArrowFile => {
                macro_rules! run {
                    ($input:expr) => {{
                        let mut r = FileReader::try_new($input, Some(projection.to_vec()))
                            .map_err(|e| err(&e))?;
                        r.set_index(part).map_err(|e| err(&e))?;
                        match r.next() {
                            Some(batch) => each(batch.map_err(|e| err(&e))?)?,
                            None => {
                                return Err(TableError::format(
                                    path,
                                    format!("record batch {part} is missing"),
                                ))
                            }
                        }
                    }};
                }
                match &self.data {
                    Data::Path => run!(BufReader::new(
                        File::open(path).map_err(|e| TableError::io(path, e))?
                    )),
                    Data::Buffered(b) => run!(std::io::Cursor::new(b.clone())),
                    Data::Batches(_) => return Err(not_a_file(path)),
                }
            }
            TableKind::ArrowStream => {
                return Err(TableError::invalid(path, "a stream has no parts"));
            }
        }
        Ok(())
    }

    /// Calls `each` with every batch of a stream, front to back.
    pub fn each_stream_batch(
        &self,
        projection: &[usize],
        mut each: impl FnMut(RecordBatch) -> Result<(), TableError>,
    ) -> Result<(), TableError> {
        let path = &self.path;
        let err = format_err(path);
        // The batch being read, for the place a caught panic is reported at.
        let mut at = 0usize;
        let place = |at: usize| format!("record batch {at} of the stream");
        macro_rules! run {
            ($input:expr) => {{
                let mut r = contain(
                    path,
                    || place(0),
                    || {
                        StreamReader::try_new($input, Some(projection.to_vec()))
                            .map_err(|e| err(&e))
                    },
                )?;
                loop {
                    let Some(batch) = contain(path, || place(at), || Ok(r.next()))? else {
                        break;
                    };
                    each(batch.map_err(|e| err(&e))?)?;
                    at += 1;
                }
            }};
        }
        match &self.data {
            Data::Path => run!(BufReader::new(
                File::open(path).map_err(|e| TableError::io(path, e))?
            )),
            Data::Buffered(b) => run!(std::io::Cursor::new(b.clone())),
            Data::Batches(_) => return Err(not_a_file(path)),
        }
        Ok(())
    }
}

/// Where a Parquet file's data ends: at its footer (the metadata, its length, `PAR1`).
/// Zero for a file too short to have one (the metadata reader then refuses it).
pub(crate) fn parquet_data_end<R: Read + Seek>(f: &mut R, path: &Path) -> Result<u64, TableError> {
    let io = |e| TableError::io(path, e);
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    if len < 12 {
        return Ok(0);
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::End(-8)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    Ok(len.saturating_sub(8).saturating_sub(footer))
}

/// Rows of every row group of a Parquet file, after checking what the reader will trust:
/// row counts that are not negative and add up, and every column chunk's bytes between
/// the file's start and `len`, where its data ends (the reader allocates a chunk's
/// stated size before reading it).
pub(crate) fn parquet_parts(
    meta: &ParquetMetaData,
    len: u64,
    path: &Path,
) -> Result<Vec<u64>, TableError> {
    let mut parts = Vec::with_capacity(meta.row_groups().len());
    let mut total = 0u64;
    for (g, group) in meta.row_groups().iter().enumerate() {
        let rows = u64::try_from(group.num_rows()).map_err(|_| {
            TableError::format(
                path,
                format!("row group {g}: a row count of {}", group.num_rows()),
            )
        })?;
        total = total.checked_add(rows).ok_or_else(|| {
            TableError::format(path, format!("row group {g}: the row counts overflow"))
        })?;
        for chunk in group.columns() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(size).ok())
                .and_then(|(s, n)| s.checked_add(n));
            if end.is_none_or(|e| e > len) {
                return Err(TableError::column(
                    path,
                    &chunk.column_path().string(),
                    None,
                    format!(
                        "row group {g}: its {size} bytes at offset {start} lie outside the file's {len} bytes of data (truncated or damaged?)"
                    ),
                ));
            }
        }
        parts.push(rows);
    }
    Ok(parts)
}

/// Checks the arrays of a batch the Parquet reader decoded whose layout it builds
/// unchecked and we then index: dictionaries (their keys) and text (offsets, UTF-8).
/// Primitive arrays need no pass: their buffers' lengths are checked on construction.
fn validate_decoded(batch: &RecordBatch, path: &Path, group: usize) -> Result<(), TableError> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if matches!(
            column.data_type(),
            DataType::Dictionary(..) | DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            column.to_data().validate_full().map_err(|e| {
                TableError::column(path, field.name(), None, format!("row group {group}: {e}"))
            })?;
        }
    }
    Ok(())
}

/// What one IPC message header says, once checked.
struct Checked {
    /// Rows, for a record batch.
    rows: Option<u64>,
    /// Bytes of the body that follows the header.
    body: u64,
}

/// Checks one IPC message header `msg` (continuation marker and length included) whose
/// body starts at `body_at` and may take at most `room` bytes: every buffer inside the
/// body (arrow-buffer panics on one outside: `the offset of the new Buffer cannot exceed
/// the existing length`), and, for a compressed body, the uncompressed sizes the buffers
/// declare (read through `f`; arrow-ipc reserves them before decompressing) within the
/// memory budget `limit`.
fn check_message<R: Read + Seek>(
    f: &mut R,
    msg: &[u8],
    body_at: u64,
    room: u64,
    limit: u64,
    what: &dyn Fn() -> String,
    path: &Path,
) -> Result<Checked, TableError> {
    let bad = |m: String| {
        TableError::format(
            path,
            format!("not a readable Arrow IPC file: {}: {m}", what()),
        )
    };
    let skip = if msg.get(..4) == Some(&[0xff; 4]) {
        8
    } else {
        4
    };
    let header = msg
        .get(skip..)
        .ok_or_else(|| bad("its header is cut short".into()))?;
    let m = arrow_ipc::root_as_message(header).map_err(|e| bad(e.to_string()))?;
    let body = u64::try_from(m.bodyLength())
        .map_err(|_| bad(format!("a body of {} bytes", m.bodyLength())))?;
    if body > room {
        return Err(bad(format!(
            "a body of {body} bytes where {room} are left in the file (truncated or damaged?)"
        )));
    }
    let batch = match m.header_type() {
        arrow_ipc::MessageHeader::RecordBatch => m.header_as_record_batch(),
        arrow_ipc::MessageHeader::DictionaryBatch => {
            m.header_as_dictionary_batch().and_then(|d| d.data())
        }
        _ => None,
    };
    let Some(batch) = batch else {
        return Ok(Checked { rows: None, body });
    };
    let rows = u64::try_from(batch.length())
        .map_err(|_| bad(format!("a length of {} rows", batch.length())))?;
    let compressed = batch.compression().is_some();
    let mut unpacked = 0u64;
    for (i, b) in batch.buffers().into_iter().flatten().enumerate() {
        let end = u64::try_from(b.offset())
            .ok()
            .zip(u64::try_from(b.length()).ok())
            .and_then(|(o, n)| o.checked_add(n));
        if end.is_none_or(|e| e > body) {
            return Err(bad(format!(
                "buffer {i} ({} bytes at offset {}) lies outside the body of {body} bytes",
                b.length(),
                b.offset()
            )));
        }
        if compressed && b.length() >= 8 {
            let mut prefix = [0u8; 8];
            f.seek(SeekFrom::Start(body_at.saturating_add(b.offset() as u64)))
                .and_then(|_| f.read_exact(&mut prefix))
                .map_err(|e| TableError::io(path, e))?;
            let n = i64::from_le_bytes(prefix);
            if n > 0 {
                unpacked = unpacked.saturating_add(n as u64);
            }
        }
    }
    if unpacked > limit {
        return Err(TableError::too_large(
            format!(
                "{}: {}: its compressed buffers declare {unpacked} bytes uncompressed, more than the memory limit of {limit} bytes",
                path.display(),
                what()
            ),
            "compressed buffers",
            unpacked,
            limit,
        ));
    }
    Ok(Checked {
        rows: Some(rows),
        body,
    })
}

/// The rows of every record batch of an Arrow IPC file, from its footer and each
/// block's message header (no batch is decoded), after checking every block (record
/// batches and dictionaries) with [`check_message`]: inside the file, its buffers inside
/// its body, its compressed sizes within the budget.
fn ipc_file_blocks<R: Read + Seek>(
    f: &mut R,
    path: &Path,
    limit: u64,
) -> Result<Vec<u64>, TableError> {
    let io = |e| TableError::io(path, e);
    let bad =
        |what: String| TableError::format(path, format!("not a readable Arrow IPC file: {what}"));
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    if len < 18 {
        return Err(bad(format!("{len} bytes is too short")));
    }
    let mut tail = [0u8; 10];
    f.seek(SeekFrom::End(-10)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let footer_len = arrow_ipc::reader::read_footer_length(tail).map_err(|e| bad(e.to_string()))?;
    let footer_at = len
        .checked_sub(10 + footer_len as u64)
        .ok_or_else(|| bad(format!("a footer of {footer_len} bytes in a file of {len}")))?;
    let mut footer = vec![0u8; footer_len];
    f.seek(SeekFrom::Start(footer_at)).map_err(io)?;
    f.read_exact(&mut footer).map_err(io)?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| bad(format!("footer: {e}")))?;
    let dictionaries = footer.dictionaries().into_iter().flatten();
    let batches = footer.recordBatches().into_iter().flatten();
    let mut rows = Vec::new();
    for (i, (is_batch, block)) in dictionaries
        .map(|b| (false, b))
        .chain(batches.map(|b| (true, b)))
        .enumerate()
    {
        let n = rows.len();
        let what = || {
            if is_batch {
                format!("record batch {n}")
            } else {
                format!("dictionary block {i}")
            }
        };
        let meta_len = u64::try_from(block.metaDataLength()).unwrap_or(0);
        let at = u64::try_from(block.offset()).ok();
        let body_len = u64::try_from(block.bodyLength()).ok();
        let (Some(at), Some(body_len)) = (at, body_len) else {
            return Err(bad(format!("{}: a negative offset or length", what())));
        };
        let end = at
            .checked_add(meta_len)
            .and_then(|e| e.checked_add(body_len));
        if meta_len < 8 || end.is_none_or(|e| e > footer_at) {
            return Err(bad(format!(
                "{}: its message lies outside the file",
                what()
            )));
        }
        let mut msg = vec![0u8; meta_len as usize];
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        f.read_exact(&mut msg).map_err(io)?;
        let checked = check_message(f, &msg, at + meta_len, body_len, limit, &what, path)?;
        if is_batch {
            rows.push(
                checked
                    .rows
                    .ok_or_else(|| bad(format!("{} is not a record batch", what())))?,
            );
        }
    }
    Ok(rows)
}

/// Walks the messages of an Arrow IPC stream front to back, reading only their headers
/// (bodies are skipped), and checks each with [`check_message`]: the header and body
/// inside the stream, buffers inside the body, compressed sizes within the budget. Ends
/// at the end-of-stream marker or the end of the bytes.
fn ipc_stream_messages<R: Read + Seek>(
    f: &mut R,
    path: &Path,
    limit: u64,
) -> Result<(), TableError> {
    let io = |e| TableError::io(path, e);
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    f.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut at = 0u64;
    let mut index = 0usize;
    while len - at >= 4 {
        let what = || format!("message {index} of the stream");
        let bad = |m: String| {
            TableError::format(
                path,
                format!("not a readable Arrow IPC stream: {}: {m}", what()),
            )
        };
        let mut word = [0u8; 4];
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        f.read_exact(&mut word).map_err(io)?;
        let (marker, meta_len) = if word == [0xff; 4] {
            if len - at < 8 {
                return Err(bad("cut short after its continuation marker".into()));
            }
            f.read_exact(&mut word).map_err(io)?;
            (8u64, u32::from_le_bytes(word))
        } else {
            (4u64, u32::from_le_bytes(word))
        };
        if meta_len == 0 {
            return Ok(());
        }
        let meta_len = u64::from(meta_len);
        if meta_len > len - at - marker {
            return Err(bad(format!(
                "a header of {meta_len} bytes where {} are left (truncated or damaged?)",
                len - at - marker
            )));
        }
        let mut msg = vec![0u8; (marker + meta_len) as usize];
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        f.read_exact(&mut msg).map_err(io)?;
        let body_at = at + marker + meta_len;
        let checked = check_message(f, &msg, body_at, len - body_at, limit, &what, path)?;
        at = body_at + checked.body;
        index += 1;
    }
    Ok(())
}

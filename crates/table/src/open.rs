//! Table files opened for reading: Parquet files (parts are row groups), Arrow IPC files
//! (parts are record batches, found from the footer without decoding them) and Arrow IPC
//! streams (read once, front to back). A file is reopened by every part that reads it, so
//! parts read in parallel; a stream given on standard input arrives as buffered bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use crate::error::TableError;

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
enum Data {
    Path,
    Buffered(Bytes),
}

/// One table file, opened: its schema and its parts.
pub(crate) struct TableFile {
    /// The file (`-` for standard input).
    pub path: PathBuf,
    /// Its kind.
    pub kind: TableKind,
    data: Data,
    /// Its schema, with the metadata the writer put there.
    pub schema: SchemaRef,
    parquet: Option<ArrowReaderMetadata>,
    /// Rows of each part (empty for a stream, which has none).
    pub parts: Vec<u64>,
    /// Partition keys from `key=value` folders on the way to the file.
    pub hive: HashMap<String, String>,
}

fn format_err(path: &Path) -> impl Fn(&dyn std::fmt::Display) -> TableError + '_ {
    move |e| TableError::format(path, e)
}

impl TableFile {
    /// Opens a file of a known kind.
    pub fn open(
        path: &Path,
        kind: TableKind,
        hive: HashMap<String, String>,
    ) -> Result<TableFile, TableError> {
        let file = File::open(path).map_err(|e| TableError::io(path, e))?;
        Self::open_data(path, kind, Data::Path, Some(file), hive)
    }

    /// Opens a table held in memory (standard input, buffered).
    pub fn from_bytes(name: &Path, kind: TableKind, bytes: Bytes) -> Result<TableFile, TableError> {
        Self::open_data(name, kind, Data::Buffered(bytes), None, HashMap::new())
    }

    fn open_data(
        path: &Path,
        kind: TableKind,
        data: Data,
        file: Option<File>,
        hive: HashMap<String, String>,
    ) -> Result<TableFile, TableError> {
        let err = format_err(path);
        let mut parquet = None;
        let (schema, parts) = match (kind, &data) {
            (TableKind::Parquet, _) => {
                let opts = ArrowReaderOptions::new();
                let meta = match (&data, &file) {
                    (Data::Buffered(b), _) => ArrowReaderMetadata::load(b, opts),
                    (Data::Path, Some(f)) => ArrowReaderMetadata::load(f, opts),
                    (Data::Path, None) => unreachable!("a path source comes with its file"),
                }
                .map_err(|e| {
                    TableError::format(
                        path,
                        format!("not a readable Parquet file (truncated or damaged?): {e}"),
                    )
                })?;
                let parts = meta
                    .metadata()
                    .row_groups()
                    .iter()
                    .map(|g| u64::try_from(g.num_rows()).unwrap_or(0))
                    .collect();
                let schema = meta.schema().clone();
                parquet = Some(meta);
                (schema, parts)
            }
            (TableKind::ArrowFile, Data::Path) => {
                let mut f = file.ok_or_else(|| TableError::invalid(path, "not opened"))?;
                let rows = ipc_batch_rows(&mut f, path)?;
                f.seek(SeekFrom::Start(0))
                    .map_err(|e| TableError::io(path, e))?;
                let r = FileReader::try_new(BufReader::new(f), None).map_err(|e| err(&e))?;
                (r.schema(), rows)
            }
            (TableKind::ArrowFile, Data::Buffered(b)) => {
                let mut c = std::io::Cursor::new(b.clone());
                let rows = ipc_batch_rows(&mut c, path)?;
                c.set_position(0);
                let r = FileReader::try_new(c, None).map_err(|e| err(&e))?;
                (r.schema(), rows)
            }
            (TableKind::ArrowStream, _) => {
                let schema = match (&data, file) {
                    (Data::Buffered(b), _) => {
                        StreamReader::try_new(std::io::Cursor::new(b.clone()), None)
                            .map_err(|e| err(&e))?
                            .schema()
                    }
                    (Data::Path, Some(f)) => StreamReader::try_new(BufReader::new(f), None)
                        .map_err(|e| err(&e))?
                        .schema(),
                    (Data::Path, None) => unreachable!("a path source comes with its file"),
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
        let path = &self.path;
        let err = format_err(path);
        match self.kind {
            TableKind::Parquet => {
                let meta = self
                    .parquet
                    .clone()
                    .ok_or_else(|| TableError::invalid(path, "no metadata"))?;
                let mask = ProjectionMask::roots(meta.parquet_schema(), projection.iter().copied());
                macro_rules! run {
                    ($input:expr) => {{
                        let reader =
                            ParquetRecordBatchReaderBuilder::new_with_metadata($input, meta)
                                .with_row_groups(vec![part])
                                .with_projection(mask)
                                .with_batch_size(window.max(1))
                                .build()
                                .map_err(|e| err(&e))?;
                        for batch in reader {
                            each(batch.map_err(|e| err(&e))?)?;
                        }
                    }};
                }
                match &self.data {
                    Data::Path => run!(File::open(path).map_err(|e| TableError::io(path, e))?),
                    Data::Buffered(b) => run!(b.clone()),
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
        macro_rules! run {
            ($input:expr) => {{
                let r = StreamReader::try_new($input, Some(projection.to_vec()))
                    .map_err(|e| err(&e))?;
                for batch in r {
                    each(batch.map_err(|e| err(&e))?)?;
                }
            }};
        }
        match &self.data {
            Data::Path => run!(BufReader::new(
                File::open(path).map_err(|e| TableError::io(path, e))?
            )),
            Data::Buffered(b) => run!(std::io::Cursor::new(b.clone())),
        }
        Ok(())
    }
}

/// The rows of every record batch of an Arrow IPC file, from its footer and each batch's
/// message header (no batch is decoded).
fn ipc_batch_rows<R: Read + Seek>(f: &mut R, path: &Path) -> Result<Vec<u64>, TableError> {
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
    let mut rows = Vec::new();
    for (i, block) in footer.recordBatches().into_iter().flatten().enumerate() {
        let meta_len = usize::try_from(block.metaDataLength())
            .map_err(|_| bad(format!("batch {i}: negative metadata length")))?;
        let at = u64::try_from(block.offset())
            .map_err(|_| bad(format!("batch {i}: negative offset")))?;
        if meta_len < 8 || at.saturating_add(meta_len as u64) > footer_at {
            return Err(bad(format!("batch {i}: its message lies outside the file")));
        }
        let mut msg = vec![0u8; meta_len];
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        f.read_exact(&mut msg).map_err(io)?;
        let skip = if msg[..4] == [0xff; 4] { 8 } else { 4 };
        let m =
            arrow_ipc::root_as_message(&msg[skip..]).map_err(|e| bad(format!("batch {i}: {e}")))?;
        let b = m
            .header_as_record_batch()
            .ok_or_else(|| bad(format!("block {i} is not a record batch")))?;
        rows.push(
            u64::try_from(b.length()).map_err(|_| bad(format!("batch {i}: negative length")))?,
        );
    }
    Ok(rows)
}

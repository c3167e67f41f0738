//! Arrow IPC (file and stream formats) and Parquet tables through `sptk_table`: a COO
//! table in one file, several files, or a folder of partitions; standard input is
//! buffered within the memory budget. Two-dimensional tables go straight into CSR / CSC
//! (and what the planner reaches from them) without a coordinate list.

use std::path::{Path, PathBuf};

use sptk_encoding::Target;
use sptk_table::{Table, TableKind, TableOptions, ValueColumn};
use sptk_tensor::ConvertOptions;

use crate::error::InputError;
use crate::input::{Content, Input, ReadConverted, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;
use crate::spec::Origin;

/// Reads one kind of table file (and folders of partitions, for Parquet).
pub struct Tables(pub TableKind);

/// What to suggest when a table's dimension sizes, the largest integer coordinates + 1,
/// pass the memory limit.
const SPARSE_IDS: &str = "the dimension sizes are the largest coordinates + 1: if the \
     coordinates are ids rather than indices, --relabel numbers them densely (or give --shape)";

/// The table options the read options ask for (columns, value column, shape, index base,
/// relabelling, memory limit): the same for files and for record batches in memory.
pub fn table_options(opts: &ReadOptions) -> TableOptions {
    let c = &opts.columns;
    TableOptions {
        columns: c.coordinates.clone(),
        value_column: match c.value.as_deref() {
            None => ValueColumn::Auto,
            Some(v) if v.eq_ignore_ascii_case("none") => ValueColumn::Pattern,
            Some(v) => ValueColumn::Named(v.to_string()),
        },
        shape: c.shape.clone(),
        index_base: c.index_base,
        relabel: match c.relabel {
            crate::Relabel::Text => sptk_table::Relabel::Text,
            crate::Relabel::Shared => sptk_table::Relabel::Shared,
            crate::Relabel::Separate => sptk_table::Relabel::Separate,
        },
        labels: c.labels.clone(),
        memory_limit: opts.memory_limit,
        ..TableOptions::default()
    }
}

impl Tables {
    fn open(&self, source: &mut Source, opts: &ReadOptions) -> Result<Table, InputError> {
        let topts = table_options(opts);
        let name = PathBuf::from(source.spec().to_string());
        let table = match &source.spec().origin {
            Origin::Stdin => {
                let bytes = source.buffer_stream(opts.memory_limit, self.name())?;
                contained(&name, || Table::from_bytes(Path::new("-"), bytes, &topts))?
            }
            Origin::Folder(dir) => {
                contained(&name, || Table::open(sptk_table::files_in(dir)?, &topts))?
            }
            Origin::File(_) | Origin::Files(_) => {
                let files = source
                    .files()
                    .iter()
                    .map(|p| (p.clone(), Default::default()))
                    .collect();
                contained(&name, || Table::open(files, &topts))?
            }
        };
        Ok(table)
    }

    fn header(table: &Table) -> String {
        let value = match table.value_column() {
            Some(v) => format!("`{v}` ({})", table.value_type()),
            None => "none (pattern)".into(),
        };
        let files = match table.file_count() {
            1 => String::new(),
            n => format!(", {n} files"),
        };
        // A stream's record batches are not counted before they are read.
        let parts = match (table.rows(), table.part_count()) {
            (None, _) => "record batches read as they come".to_string(),
            (Some(rows), 1) => format!("{rows} rows in 1 part"),
            (Some(rows), n) => format!("{rows} rows in {n} parts"),
        };
        format!(
            "COO table: coordinates {}, values {value}, {parts}{files}",
            table
                .coordinate_columns()
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

impl Reader for Tables {
    fn numbers_ids(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        match self.0 {
            TableKind::Parquet => "Parquet",
            TableKind::ArrowFile => "Arrow IPC file",
            TableKind::ArrowStream => "Arrow IPC stream",
        }
    }

    fn keys(&self) -> &'static [&'static str] {
        match self.0 {
            TableKind::Parquet => &["parquet", "pq"],
            TableKind::ArrowFile => &["arrow", "feather", "ipc"],
            TableKind::ArrowStream => &["arrows", "arrow-stream"],
        }
    }

    fn detect(&self, probe: &Probe) -> Match {
        if let Some(files) = &probe.folder {
            // A folder of partitions: table files, or `key=value` folders of them.
            let partitions = files.iter().any(|f| {
                sptk_table::is_table_name(Path::new(f)) || (f.contains('=') && !f.starts_with('.'))
            });
            return if self.0 == TableKind::Parquet && partitions && !probe.name.ends_with(".levels")
            {
                Match::Content
            } else {
                Match::No
            };
        }
        let kind = TableKind::of(&probe.head);
        let footer_ok =
            self.0 != TableKind::Parquet || probe.tail.is_none() || probe.tail == Some(*b"PAR1");
        if !probe.gzip && kind == Some(self.0) && footer_ok {
            Match::Content
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            stream: true,
            files: true,
            folder: self.0 == TableKind::Parquet,
            members: false,
            file: true,
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let table = self.open(source, opts)?;
        TableInput {
            name: source.spec().to_string(),
            format: self.name(),
            table,
        }
        .read(opts)
    }

    fn read_converted(
        &self,
        source: &mut Source,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        if source.spec().origin == Origin::Stdin {
            return Ok(None);
        }
        let table = self.open(source, opts)?;
        TableInput {
            name: source.spec().to_string(),
            format: self.name(),
            table,
        }
        .read_converted(target, convert, opts)
    }

    fn out_of_core_size(
        &self,
        source: &mut Source,
        opts: &ReadOptions,
    ) -> Result<Option<crate::out_of_core::InputSize>, InputError> {
        if source.spec().origin == Origin::Stdin {
            return Ok(None);
        }
        let table = self.open(source, opts)?;
        let Some((dims, rows)) = table.out_of_core_shape() else {
            return Ok(None);
        };
        Ok(Some(crate::out_of_core::InputSize {
            dims,
            entries: rows,
            value_type: table.value_type(),
            parts: table.part_count(),
        }))
    }

    fn convert_out_of_core(
        &self,
        source: &mut Source,
        encoding: &sptk_encoding::Encoding,
        convert: &ConvertOptions,
        opts: &ReadOptions,
        out: &mut crate::out_of_core::Sink<'_>,
    ) -> Result<Option<crate::out_of_core::Done>, InputError> {
        if source.spec().origin == Origin::Stdin {
            return Ok(None);
        }
        let table = self.open(source, opts)?;
        let name = source.spec().to_string();
        let Some((dims, _)) = table.out_of_core_shape() else {
            return Ok(None);
        };
        out.labels(&name, &dims, table.stored_labels())?;
        let written = table.convert_out_of_core(encoding, convert, out.stretch_bytes, out.appender);
        let written = match written {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(None),
            Err(sptk_tensor::OutOfCoreFailure::Read(e)) => {
                return Err(sparse_ids_hint(&table, e.into()))
            }
            Err(sptk_tensor::OutOfCoreFailure::Write(e)) => return Err(e.into()),
        };
        Ok(Some(crate::out_of_core::Done {
            input: Input {
                name,
                format: self.name(),
                header: Tables::header(&table),
                field: None,
                one_based: opts.columns.index_base == 1,
                content: Content::Streamed {
                    dims: dims.to_vec(),
                    value_type: written.value_type,
                    entries: table.rows().unwrap_or(0),
                    labels: table.stored_labels().to_vec(),
                },
                notes: table.notes().to_vec(),
                memory_hint: None,
            },
            written,
        }))
    }
}

/// A table opened (from files, or record batches in memory: [`Table::from_batches`]),
/// with its name and format for reports.
pub struct TableInput {
    /// The input as named.
    pub name: String,
    /// The format's name in reports.
    pub format: &'static str,
    /// The table.
    pub table: Table,
}

impl TableInput {
    /// Reads the table whole, as a coordinate list with its labels.
    ///
    /// # Errors
    /// The table's errors, naming the input, column and row.
    pub fn read(self, opts: &ReadOptions) -> Result<Input, InputError> {
        let table = &self.table;
        let header = Tables::header(table);
        let name = PathBuf::from(&self.name);
        let read = contained(&name, || table.read_entries())?;
        let memory_hint = table.sizes_from_ids().then_some(SPARSE_IDS);
        Ok(Input {
            name: self.name,
            format: self.format,
            header,
            field: None,
            one_based: opts.columns.index_base == 1,
            content: Content::Entries {
                entries: read.entries,
                labels: read.labels,
            },
            notes: read.notes,
            memory_hint,
        })
    }

    /// Reads the table straight into `target` where it has a route (see
    /// [`Table::read_converted`]); None otherwise.
    ///
    /// # Errors
    /// The table's and the conversion's errors.
    pub fn read_converted(
        &mut self,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        let table = &self.table;
        let name = PathBuf::from(&self.name);
        let read = contained(&name, || table.read_converted(target, convert));
        let Some(d) = read.map_err(|e| sparse_ids_hint(table, e))? else {
            return Ok(None);
        };
        let mut converted = d.converted;
        let labels = table.stored_labels().to_vec();
        sptk_tensor::attach_labels(&mut converted.tensor, &labels)
            .map_err(|error| InputError::convert(&self.name, false, error))?;
        let t = &converted.tensor;
        Ok(Some(ReadConverted {
            input: Input {
                name: self.name.clone(),
                format: self.format,
                header: Tables::header(table),
                field: None,
                one_based: opts.columns.index_base == 1,
                content: Content::Streamed {
                    dims: t.dim_sizes().to_vec(),
                    value_type: table.value_type(),
                    entries: table.rows().unwrap_or(0),
                    labels,
                },
                notes: table.notes().to_vec(),
                memory_hint: None,
            },
            converted,
            convert_time: d.convert_time,
        }))
    }
}

/// `e`, with [`SPARSE_IDS`] as its hint when it is a memory-limit refusal and the table's
/// dimension sizes come from its largest coordinates.
fn sparse_ids_hint(table: &Table, e: InputError) -> InputError {
    match e {
        InputError::Convert {
            input,
            one_based,
            hint: None,
            error: error @ sptk_tensor::ConvertError::MemoryLimit(_),
        } if table.sizes_from_ids() => InputError::Convert {
            input,
            one_based,
            hint: Some(SPARSE_IDS),
            error,
        },
        other => other,
    }
}

/// The input side of the reader seam: runs a call into `sptk_table` with a panic that
/// escaped it (the crate contains its own, so there should be none) turned into an error
/// naming the input, never a crash of the caller. The release profile unwinds for this.
fn contained<T>(
    name: &Path,
    f: impl FnOnce() -> Result<T, sptk_table::TableError>,
) -> Result<T, InputError> {
    Ok(sptk_table::contain(name, || "reading it".into(), f)?)
}

/// Reads a levels folder (`NAME.levels/`, written by `sparse-convert -o NAME.levels`): the
/// exact arrays of an encoding, checked into a tensor.
pub struct Levels;

impl Reader for Levels {
    fn name(&self) -> &'static str {
        "levels folder (Parquet)"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["levels"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        match probe.holds(&["values.parquet"]) {
            Some(_) if probe.folder.is_some() => Match::Content,
            _ => Match::No,
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            folder: true,
            ..Accepts::default()
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let dir = source.folder().ok_or_else(|| {
            InputError::Source(format!("{}: a levels input is a folder", source.spec()))
        })?;
        let tensor = contained(dir, || {
            sptk_table::read_levels_within(dir, opts.memory_limit)
        })?;
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header: tensor.encoding().to_string(),
            field: None,
            one_based: false,
            content: Content::Tensor(tensor),
            notes: Vec::new(),
            memory_hint: None,
        })
    }
}

//! A tensor in one or more table files: which columns hold its coordinates and values,
//! its shape (from the schema's `shape` metadata, the caller, or the data), and the parts
//! it is read in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::{DataType, Schema};
use parquet::file::statistics::Statistics;
use sptk_tensor::{Labels, ValueType};

use crate::columns::{self, is_integer, is_text};
use crate::error::TableError;
use crate::guard::contain;
use crate::open::{TableFile, TableKind};
use crate::relabel::{self, Relabel, EDGE_ENDS};

/// Which column holds the values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ValueColumn {
    /// `value`, `val`, `values`, `data`, `v` or `weight`; else the one column left over
    /// besides the coordinates; else none (a pattern).
    #[default]
    Auto,
    /// This column.
    Named(String),
    /// None: every entry's value is one (a pattern).
    Pattern,
}

/// How to find a tensor in a table, and how to read it.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// The coordinate columns, one per dimension; None: `row`, `col` or `i`, `j`, `k`, ...
    pub columns: Option<Vec<String>>,
    /// The value column.
    pub value_column: ValueColumn,
    /// Dimension sizes, used when the file's metadata has no `shape`.
    pub shape: Option<Vec<u64>>,
    /// The number coordinates count from (0 or 1).
    pub index_base: u64,
    /// Which coordinates are numbered in order of first appearance (text always; integer
    /// ids too with [`Relabel::Shared`] or [`Relabel::Separate`]) and which share one list
    /// of ids; the lists become the tensor's labels.
    pub relabel: Relabel,
    /// Lists to number from, per dimension (`--labels-from`; empty: none): a dimension
    /// given one is numbered, an id in the list taking its position there and a new id
    /// the next number after the list, so two tables of one graph share one numbering.
    pub labels: Vec<Option<Arc<Labels>>>,
    /// Memory budget in bytes for arrays sized from the input.
    pub memory_limit: Option<u64>,
    /// Rows decoded at a time from a Parquet row group.
    pub window: usize,
}

impl TableOptions {
    /// The memory budget in bytes: [`TableOptions::memory_limit`], else the machine's
    /// default ([`sptk_tensor::default_memory_limit`]). Every allocation whose size comes
    /// from a file is checked against it first: an allocation that fails aborts the
    /// process, which no error handling can turn into a message.
    pub fn budget(&self) -> u64 {
        self.memory_limit
            .unwrap_or_else(sptk_tensor::default_memory_limit)
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            columns: None,
            value_column: ValueColumn::Auto,
            shape: None,
            index_base: 0,
            relabel: Relabel::Text,
            labels: Vec::new(),
            memory_limit: None,
            window: 1 << 16,
        }
    }
}

/// One part of a table: a row group or record batch of one file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    pub file: usize,
    pub index: usize,
    /// First row, counted in its file.
    pub row0: u64,
    pub rows: u64,
}

/// A coordinate or value column as found in one file.
#[derive(Clone, Debug)]
pub(crate) enum Found {
    /// At this index of the file's schema.
    Column(usize),
    /// Not in the file, but a `key=value` folder above it gives every row this value.
    Hive(String),
}

/// A table opened: its files, columns, value type and (where known before reading) shape.
pub struct Table {
    pub(crate) files: Vec<TableFile>,
    pub(crate) coords: Vec<String>,
    pub(crate) value: Option<String>,
    pub(crate) value_type: ValueType,
    /// Per dimension mapped to indices in order of first appearance, the list of ids it
    /// takes its numbers from (shared by an edge list's two ends); None: not numbered.
    pub(crate) lists: Vec<Option<usize>>,
    /// Per list of ids, the labels it starts from ([`TableOptions::labels`]).
    pub(crate) seeds: Vec<Option<Arc<Labels>>>,
    pub(crate) shape: Option<Vec<u64>>,
    /// Whether the shape is declared (metadata or caller), not taken from the data.
    pub(crate) declared: bool,
    pub(crate) parts: Vec<Part>,
    pub(crate) found: Vec<Vec<Found>>,
    pub(crate) opts: TableOptions,
    pub(crate) notes: Vec<String>,
    /// Per dimension, the labels the first file's schema metadata keeps for it
    /// ([`crate::write::LABELS_KEY`], written by [`crate::write_table`]).
    pub(crate) stored_labels: Vec<Option<Arc<Labels>>>,
}

/// Default names of a value column, in the order they are looked for.
const VALUE_NAMES: [&str; 6] = ["value", "val", "values", "data", "v", "weight"];

impl Table {
    /// Opens table files that hold one tensor together (one file, several, or the files
    /// of a partitioned folder as found by [`crate::files_in`]), each with its partition
    /// keys.
    ///
    /// # Errors
    /// A file that cannot be opened or is not a table; columns missing or of the wrong
    /// type; a `shape` that is not a JSON list of non-negative integers.
    pub fn open(
        files: Vec<(PathBuf, std::collections::HashMap<String, String>)>,
        opts: &TableOptions,
    ) -> Result<Table, TableError> {
        let mut opened = Vec::with_capacity(files.len());
        for (path, hive) in files {
            let kind = sniff(&path)?;
            opened.push(TableFile::open(&path, kind, hive, opts.budget())?);
        }
        let first = opened.first().map(|f| f.path.clone()).unwrap_or_default();
        contain(
            &first,
            || "finding the tensor in it".into(),
            || Table::from_files(opened, opts),
        )
    }

    /// Opens a table held in memory (standard input, buffered); `name` names it in
    /// messages.
    ///
    /// # Errors
    /// As for [`Table::open`].
    pub fn from_bytes(
        name: &Path,
        bytes: Vec<u8>,
        opts: &TableOptions,
    ) -> Result<Table, TableError> {
        let kind = TableKind::of(&bytes).ok_or_else(|| {
            TableError::format(
                name,
                "not an Arrow IPC or Parquet table (no PAR1 / ARROW1 / stream signature)",
            )
        })?;
        let file = TableFile::from_bytes(name, kind, bytes::Bytes::from(bytes), opts.budget())?;
        contain(
            name,
            || "finding the tensor in it".into(),
            || Table::from_files(vec![file], opts),
        )
    }

    pub(crate) fn from_files(
        files: Vec<TableFile>,
        opts: &TableOptions,
    ) -> Result<Table, TableError> {
        let first = files
            .first()
            .ok_or_else(|| TableError::invalid(Path::new("-"), "no table files"))?;
        let schema = first.schema.clone();
        let path = first.path.clone();
        let coords = coordinate_columns(&schema, &first.hive, opts, &path)?;
        let mut notes = Vec::new();
        let value = value_column(&schema, &coords, opts, &path, &mut notes)?;
        let value_type = match &value {
            None => ValueType::F64,
            Some(v) => {
                let field = schema
                    .field_with_name(v)
                    .map_err(|_| TableError::column(&path, v, None, "no such column"))?;
                columns::value_type(field.data_type())
                    .map_err(|m| TableError::column(&path, v, None, m))?
            }
        };
        if opts.index_base > 1 {
            return Err(TableError::invalid(
                &path,
                format!(
                    "--index-base {}: coordinates count from 0 or 1",
                    opts.index_base
                ),
            ));
        }
        if !opts.labels.is_empty() && opts.labels.len() != coords.len() {
            return Err(TableError::invalid(
                &path,
                format!(
                    "labels to number from are given for {} dimensions, but the table has {} coordinate columns ({})",
                    opts.labels.len(),
                    coords.len(),
                    coords.join(", ")
                ),
            ));
        }
        let mut found = Vec::with_capacity(files.len());
        let mut relabel: Vec<bool> = (0..coords.len())
            .map(|d| opts.relabel.numbers_integers() || matches!(opts.labels.get(d), Some(Some(_))))
            .collect();
        let mut text = vec![false; coords.len()];
        for f in &files {
            let mut cols = Vec::new();
            for (d, name) in coords.iter().chain(value.iter()).enumerate() {
                let c = find(f, name)?;
                if let Found::Column(i) = c {
                    let t = f.schema.field(i).data_type();
                    let is_coord = d < coords.len();
                    if is_coord && is_text(t) {
                        relabel[d] = true;
                        text[d] = true;
                    } else if is_coord && !is_integer(t) {
                        return Err(TableError::column(
                            &f.path,
                            name,
                            None,
                            format!("coordinates must be integers or text, not {t}"),
                        ));
                    } else if !is_coord && columns::value_type(t) != Ok(value_type) {
                        return Err(TableError::column(
                            &f.path,
                            name,
                            None,
                            format!("holds {t}, but the first file's values are {value_type}"),
                        ));
                    }
                }
                cols.push(c);
            }
            found.push(cols);
        }
        let mut parts = Vec::new();
        for (fi, f) in files.iter().enumerate() {
            let mut row0 = 0u64;
            for (index, &rows) in f.parts.iter().enumerate() {
                parts.push(Part {
                    file: fi,
                    index,
                    row0,
                    rows,
                });
                row0 += rows;
            }
        }
        let mode = relabel::mode_with_labels(opts.relabel, &opts.labels);
        let (lists, list_notes) = relabel::assign_lists(mode, &coords, &relabel, &text);
        notes.extend(list_notes);
        let seeds = relabel::seeds(&lists, &opts.labels, &coords)
            .map_err(|m| TableError::invalid(&path, m))?;
        let mut table = Table {
            files,
            coords,
            value,
            value_type,
            lists,
            seeds,
            shape: None,
            declared: false,
            parts,
            found,
            opts: opts.clone(),
            notes,
            stored_labels: Vec::new(),
        };
        table.shape = table.declared_shape()?;
        table.declared = table.shape.is_some();
        if table.shape.is_none() && !table.relabels() {
            table.shape = table
                .shape_from_statistics()
                .or_else(|| table.shape_from_batches());
        }
        table.stored_labels = table.labels_from_metadata();
        Ok(table)
    }

    /// The labels the schema metadata keeps for each dimension that is not numbered
    /// here: a JSON list of text per coordinate column, as long as the declared size.
    /// Anything else is set aside with a note.
    fn labels_from_metadata(&mut self) -> Vec<Option<Arc<Labels>>> {
        let meta = self.files[0].schema.metadata().clone();
        let mut out = vec![None; self.coords.len()];
        for (d, column) in self.coords.iter().enumerate() {
            let key = format!("{}{column}", crate::write::LABELS_KEY);
            let Some(text) = meta.get(&key) else { continue };
            if self.lists[d].is_some() {
                self.notes.push(format!(
                    "column `{column}` is numbered here: the labels in the schema metadata `{key}` are not used"
                ));
                continue;
            }
            let size = self.shape.as_ref().filter(|_| self.declared).map(|s| s[d]);
            match serde_json::from_str::<Vec<String>>(text) {
                Ok(list) if Some(list.len() as u64) == size => {
                    out[d] = Some(Arc::new(Labels::from_strings(list)));
                }
                Ok(list) => self.notes.push(format!(
                    "schema metadata `{key}` holds {} labels for a dimension of size {}: not used",
                    list.len(),
                    size.map_or("unknown".to_string(), |s| s.to_string())
                )),
                Err(_) => self.notes.push(format!(
                    "schema metadata `{key}` is not a JSON list of text: not used"
                )),
            }
        }
        out
    }

    /// Per dimension, the labels kept in the file's schema metadata (see
    /// [`crate::write_table`]); relabelled dimensions take theirs from the ids instead.
    pub fn stored_labels(&self) -> &[Option<Arc<Labels>>] {
        &self.stored_labels
    }

    /// The coordinate columns, one per dimension.
    pub fn coordinate_columns(&self) -> &[String] {
        &self.coords
    }

    /// The value column (None for a pattern).
    pub fn value_column(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The value type of the entries.
    pub fn value_type(&self) -> ValueType {
        self.value_type
    }

    /// Dimension sizes, where known before reading the rows (metadata, caller, statistics).
    pub fn shape(&self) -> Option<&[u64]> {
        self.shape.as_deref()
    }

    /// Rows of all files, where known before reading (not for streams).
    pub fn rows(&self) -> Option<u64> {
        if self.files.iter().any(|f| f.kind == TableKind::ArrowStream) {
            return None;
        }
        Some(self.parts.iter().map(|p| p.rows).sum())
    }

    /// The kind of the first file.
    pub fn kind(&self) -> TableKind {
        self.files[0].kind
    }

    /// Number of files.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Number of parts (row groups, record batches) read in parallel.
    pub fn part_count(&self) -> usize {
        self.parts.len()
    }

    /// What a user should know about how the table was read.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// True if some dimension's size is the largest integer coordinate + 1 (no shape
    /// declared, not relabelled): sparse ids used as indices make such a size huge.
    pub fn sizes_from_ids(&self) -> bool {
        !self.declared && self.lists.iter().any(Option::is_none)
    }

    /// True if some dimension is relabelled (text or `--relabel`).
    pub fn relabels(&self) -> bool {
        self.lists.iter().any(Option::is_some)
    }

    /// The shape the file's metadata or the caller declares.
    fn declared_shape(&mut self) -> Result<Option<Vec<u64>>, TableError> {
        let f = &self.files[0];
        let rank = self.coords.len();
        let from_meta = f.schema.metadata().get("shape").map(|text| {
            parse_shape(text, rank).map_err(|m| {
                TableError::invalid(&f.path, format!("schema metadata `shape` = {text:?}: {m}"))
            })
        });
        let Some(given) = &self.opts.shape else {
            return from_meta.transpose();
        };
        if given.len() != rank {
            return Err(TableError::invalid(
                &f.path,
                format!(
                    "--shape has {} sizes, but there are {rank} coordinate columns ({})",
                    given.len(),
                    self.coords.join(", ")
                ),
            ));
        }
        match from_meta {
            Some(Ok(s)) if &s != given => self.notes.push(format!(
                "--shape {given:?} used instead of the file's shape {s:?}"
            )),
            Some(Err(e)) => self.notes.push(format!("--shape used: {e}")),
            _ => {}
        }
        Ok(Some(given.clone()))
    }

    /// The shape from Parquet row-group statistics (largest coordinate + 1), when every
    /// row group of every file has them for every coordinate column.
    fn shape_from_statistics(&mut self) -> Option<Vec<u64>> {
        let mut max = vec![None::<u64>; self.coords.len()];
        for (f, found) in self.files.iter().zip(&self.found) {
            let meta = f.parquet()?;
            for (d, c) in found.iter().take(self.coords.len()).enumerate() {
                let Found::Column(i) = c else { return None };
                if matches!(f.schema.field(*i).data_type(), DataType::Dictionary(..)) {
                    return None;
                }
                let leaf = meta
                    .parquet_schema()
                    .columns()
                    .iter()
                    .position(|c| c.name() == self.coords[d])?;
                for g in meta.metadata().row_groups() {
                    if g.num_rows() == 0 {
                        continue;
                    }
                    let m = match g.column(leaf).statistics()? {
                        Statistics::Int32(s) => u64::try_from(*s.max_opt()?).ok()?,
                        Statistics::Int64(s) => u64::try_from(*s.max_opt()?).ok()?,
                        _ => return None,
                    };
                    max[d] = Some(max[d].map_or(m, |x: u64| x.max(m)));
                }
            }
        }
        let base = self.opts.index_base;
        let shape: Vec<u64> = max
            .iter()
            .map(|m| m.map_or(0, |m| (m + 1).saturating_sub(base)))
            .collect();
        self.notes.push(format!(
            "no shape in the file: {shape:?}, the largest coordinates + 1 (from the row-group statistics)"
        ));
        Some(shape)
    }

    /// The projection of file `f` that holds the needed columns.
    pub(crate) fn projection(&self, f: usize, dims: &[usize], values: bool) -> Vec<usize> {
        let found = &self.found[f];
        let mut p: Vec<usize> = dims
            .iter()
            .map(|&d| &found[d])
            .chain(values.then(|| found.get(self.coords.len())).flatten())
            .filter_map(|c| match c {
                Found::Column(i) => Some(*i),
                Found::Hive(_) => None,
            })
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }
}

/// The kind of a table file from its first bytes.
fn sniff(path: &Path) -> Result<TableKind, TableError> {
    use std::io::Read;
    let mut head = [0u8; 8];
    let mut f = std::fs::File::open(path).map_err(|e| TableError::io(path, e))?;
    let n = f.read(&mut head).map_err(|e| TableError::io(path, e))?;
    if n == 0 {
        return Err(TableError::format(path, "the file is empty"));
    }
    TableKind::of(&head[..n]).ok_or_else(|| {
        TableError::format(
            path,
            "not an Arrow IPC or Parquet table (no PAR1 / ARROW1 / stream signature)",
        )
    })
}

/// A column of `f` by name, or a partition key of the folders above it.
fn find(f: &TableFile, name: &str) -> Result<Found, TableError> {
    if let Ok(i) = f.schema.index_of(name) {
        return Ok(Found::Column(i));
    }
    if let Some(v) = f.hive.get(name) {
        return Ok(Found::Hive(v.clone()));
    }
    Err(TableError::column(
        &f.path,
        name,
        None,
        format!("no such column (the file has: {})", column_names(&f.schema)),
    ))
}

fn column_names(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn coordinate_columns(
    schema: &Schema,
    hive: &std::collections::HashMap<String, String>,
    opts: &TableOptions,
    path: &Path,
) -> Result<Vec<String>, TableError> {
    if let Some(c) = &opts.columns {
        if c.is_empty() {
            return Err(TableError::invalid(path, "--columns names no column"));
        }
        // Named before the value column is looked for, so that a typo is reported as
        // itself and not as a question about the values.
        if let Some(missing) = c
            .iter()
            .find(|n| schema.index_of(n).is_err() && !hive.contains_key(n.as_str()))
        {
            return Err(TableError::column(
                path,
                missing,
                None,
                format!(
                    "no such column, named by --columns (the file has: {})",
                    column_names(schema)
                ),
            ));
        }
        return Ok(c.clone());
    }
    let has = |n: &str| schema.index_of(n).is_ok() || hive.contains_key(n);
    if has("row") && has("col") {
        return Ok(vec!["row".into(), "col".into()]);
    }
    if let Some([a, b]) = EDGE_ENDS.iter().find(|[a, b]| has(a) && has(b)) {
        return Ok(vec![a.to_string(), b.to_string()]);
    }
    if has("i") && has("j") {
        let mut c = vec!["i".to_string(), "j".to_string()];
        for n in ["k", "l", "m", "n"] {
            if !has(n) {
                break;
            }
            c.push(n.into());
        }
        return Ok(c);
    }
    Err(TableError::invalid(path, format!(
        "no coordinate columns `row`, `col`, `i`, `j`, ..., `src`, `dst`, `source`, `target` or `from`, `to`; name them with --columns (the file has: {})",
        column_names(schema)
    )))
}

fn value_column(
    schema: &Schema,
    coords: &[String],
    opts: &TableOptions,
    path: &Path,
    notes: &mut Vec<String>,
) -> Result<Option<String>, TableError> {
    match &opts.value_column {
        ValueColumn::Pattern => Ok(None),
        ValueColumn::Named(n) => {
            schema.index_of(n).map_err(|_| {
                TableError::column(
                    path,
                    n,
                    None,
                    format!("no such column (the file has: {})", column_names(schema)),
                )
            })?;
            Ok(Some(n.clone()))
        }
        ValueColumn::Auto => {
            if let Some(n) = VALUE_NAMES.iter().find(|n| schema.index_of(n).is_ok()) {
                return Ok(Some(n.to_string()));
            }
            let rest: Vec<&str> = schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .filter(|n| !coords.iter().any(|c| c == n))
                .collect();
            match rest.as_slice() {
                [] => {
                    notes.push("no value column: every entry is 1 (a pattern)".into());
                    Ok(None)
                }
                [one] => Ok(Some(one.to_string())),
                many => Err(TableError::invalid(
                    path,
                    format!(
                        "which column holds the values? say --value-column NAME (or none): {}",
                        many.join(", ")
                    ),
                )),
            }
        }
    }
}

/// A `shape` metadata value: a JSON list of `rank` non-negative integers.
pub(crate) fn parse_shape(text: &str, rank: usize) -> Result<Vec<u64>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let list = v.as_array().ok_or("not a JSON list")?;
    let shape = list
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| format!("{x} is not a non-negative integer"))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if shape.len() != rank {
        return Err(format!(
            "{} sizes for {rank} coordinate columns",
            shape.len()
        ));
    }
    Ok(shape)
}

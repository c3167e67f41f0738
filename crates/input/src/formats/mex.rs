//! The 10x Genomics MEX folder (Cell Ranger's `filtered_feature_bc_matrix/`): a Matrix
//! Market matrix of features x barcodes, with the gene symbols (second column of
//! `features.tsv`, or `genes.tsv` before Cell Ranger 3; the feature ids of the first with
//! `ReadOptions::feature_ids`, as scanpy's `read_10x_mtx` has `var_names`) and the
//! barcodes kept as the labels of its rows and columns. Each file may be gzip-compressed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sptk_encoding::Target;
use sptk_tensor::{ConvertOptions, Labels};

use crate::error::InputError;
use crate::formats::mtx::{header_words, read_converted_file, read_options};
use crate::input::{Content, Input, ReadConverted, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Reader};
use crate::source::Source;

/// Reads 10x Genomics MEX folders.
pub struct Mex;

const MATRIX: &[&str] = &["matrix.mtx.gz", "matrix.mtx"];
const BARCODES: &[&str] = &["barcodes.tsv.gz", "barcodes.tsv"];
const FEATURES: &[&str] = &[
    "features.tsv.gz",
    "features.tsv",
    "genes.tsv.gz",
    "genes.tsv",
];

/// The folder's file whose lower-case name is one of `names` (the first that exists).
fn find(folder: &Path, names: &[&str]) -> Result<PathBuf, InputError> {
    let entries = std::fs::read_dir(folder).map_err(|e| InputError::io(folder, e))?;
    let present: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    for want in names {
        let hit = present.iter().find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.eq_ignore_ascii_case(want))
        });
        if let Some(p) = hit {
            return Ok(p.clone());
        }
    }
    Err(InputError::Source(format!(
        "{}: a 10x MEX folder needs {} (or {})",
        folder.display(),
        names[0],
        names[1..].join(", ")
    )))
}

/// The labels of dimension `dim` (0: rows, from `features.tsv`; 1: columns, from
/// `barcodes.tsv`) of a MEX matrix with `size` coordinates there, read from `reader`
/// (gzip looked through): the tab-separated column `column` (from 0) of every line, the
/// first where a line has no such column. `path` names the file in errors.
///
/// The text is read whole, within `memory_limit` (the machine's default where `None`):
/// a file, or a gzip stream once inflated, larger than that is refused as soon as the
/// limit is passed, and so are labels whose index would take it past the limit.
///
/// # Errors
/// The limit; a read or gzip error; a line that is empty or not UTF-8; more or fewer
/// lines than `size`. Each names the file, and the line where there is one.
pub fn read_mex_labels(
    reader: impl Read,
    path: &Path,
    dim: usize,
    column: usize,
    size: u64,
    memory_limit: Option<u64>,
) -> Result<Labels, InputError> {
    let (what, of) = if dim == 0 {
        ("feature", "rows")
    } else {
        ("barcode", "columns")
    };
    let limit = memory_limit.unwrap_or_else(sptk_tensor::default_memory_limit);
    let too_large = |what: String| InputError::Labels {
        path: path.to_path_buf(),
        line: None,
        message: format!(
            "{what}, past the memory limit of {limit} bytes (--memory-limit); a damaged or \
             hostile file?"
        ),
    };
    let mut reader = std::io::BufReader::new(reader);
    let gz = {
        use std::io::BufRead;
        let buf = reader.fill_buf().map_err(|e| InputError::io(path, e))?;
        buf.starts_with(&[0x1f, 0x8b])
    };
    // One byte past the limit tells a file at the limit from one past it.
    let bound = limit.saturating_add(1);
    let mut raw = Vec::new();
    let read = if gz {
        flate2::read::MultiGzDecoder::new(reader)
            .take(bound)
            .read_to_end(&mut raw)
    } else {
        reader.take(bound).read_to_end(&mut raw)
    };
    read.map_err(|e| InputError::io(path, e))?;
    if raw.len() as u64 > limit {
        let form = if gz { " once inflated" } else { "" };
        return Err(too_large(format!("more than {limit} bytes{form}")));
    }
    let bad = |line: usize, message: String| InputError::Labels {
        path: path.to_path_buf(),
        line: Some(line as u64 + 1),
        message,
    };
    let body = raw.strip_suffix(b"\n").unwrap_or(&raw);
    let count = if raw.is_empty() {
        0
    } else {
        body.iter().filter(|&&b| b == b'\n').count() + 1
    };
    if count as u64 != size {
        return Err(InputError::Labels {
            path: path.to_path_buf(),
            line: None,
            message: format!(
                "{count} {what}s for the {size} {of} of the matrix; a MEX folder has one per line"
            ),
        });
    }
    // The text (`raw`), the labels' slices, then their copy and offsets in `Labels`.
    let need = (raw.len() as u128) * 2 + (count as u128) * 24;
    if need > u128::from(limit) {
        return Err(too_large(format!(
            "{count} {what}s in {} bytes take {need} bytes to index",
            raw.len()
        )));
    }
    let mut labels = Vec::with_capacity(count);
    if !raw.is_empty() {
        for (i, line) in body.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let mut fields = line.split(|&b| b == b'\t');
            let first = fields.next().unwrap_or(line);
            let field = if column == 0 {
                first
            } else {
                fields.nth(column - 1).unwrap_or(first)
            };
            let text = std::str::from_utf8(field)
                .map_err(|_| bad(i, "the label is not UTF-8 text".into()))?;
            if text.is_empty() {
                return Err(bad(i, format!("an empty {what} (expected one per line)")));
            }
            labels.push(text);
        }
    }
    Ok(Labels::from_strings(labels))
}

/// [`read_mex_labels`] of the file `path`; symbols made unique (see [`labels`]) where
/// `column` is not the first.
fn read_labels(
    path: &Path,
    dim: usize,
    column: usize,
    size: u64,
    memory_limit: Option<u64>,
) -> Result<(Labels, Vec<String>), InputError> {
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, e))?;
    let labels = read_mex_labels(file, path, dim, column, size, memory_limit)?;
    if column == 0 {
        return Ok((labels, Vec::new()));
    }
    let mut names: Vec<String> = labels.iter().map(str::to_string).collect();
    let renamed = sptk_tensor::make_unique(&mut names);
    if renamed.is_empty() {
        return Ok((labels, renamed));
    }
    Ok((Labels::from_strings(names), renamed))
}

/// The folder's files: matrix, features, barcodes.
fn files(source: &Source) -> Result<[PathBuf; 3], InputError> {
    let folder = source
        .folder()
        .ok_or_else(|| InputError::Source(format!("{}: not a folder", source.spec())))?;
    Ok([
        find(folder, MATRIX)?,
        find(folder, FEATURES)?,
        find(folder, BARCODES)?,
    ])
}

/// A tensor's labels, one list (or none) per dimension.
type DimLabels = Vec<Option<Arc<Labels>>>;

/// Row labels (features: gene symbols, repeated ones made unique as anndata's
/// `var_names_make_unique` does, or with `opts.feature_ids` the ids) and column labels
/// (barcodes) for a matrix of `dims`, each file read within the memory limit; and the
/// notes that say so.
fn labels(
    features: &Path,
    barcodes: &Path,
    dims: &[u64],
    opts: &ReadOptions,
) -> Result<(DimLabels, Vec<String>), InputError> {
    let (rows, cols) = (dims.first().copied(), dims.get(1).copied());
    let (Some(rows), Some(cols)) = (rows, cols) else {
        return Err(InputError::Source("a MEX matrix has two dimensions".into()));
    };
    let column = usize::from(!opts.feature_ids);
    let (rows, renamed) = read_labels(features, 0, column, rows, opts.memory_limit)?;
    let (cols, _) = read_labels(barcodes, 1, 0, cols, opts.memory_limit)?;
    let mut notes = vec![note(features, barcodes, opts.feature_ids)];
    notes.extend(sptk_tensor::renamed_symbols_note(&renamed));
    Ok((vec![Some(Arc::new(rows)), Some(Arc::new(cols))], notes))
}

fn note(features: &Path, barcodes: &Path, ids: bool) -> String {
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    format!(
        "rows labelled from {} ({}), columns from {} (barcodes)",
        name(features),
        if ids { "feature ids" } else { "gene symbols" },
        name(barcodes)
    )
}

impl Reader for Mex {
    fn name(&self) -> &'static str {
        "10x Genomics MEX folder"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["mex", "10x-mex"]
    }

    fn detect(&self, probe: &Probe) -> Match {
        if probe.holds(MATRIX).is_some() && probe.holds(BARCODES).is_some() {
            Match::Content
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            folder: true,
            ..Accepts::default()
        }
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let [matrix, features, barcodes] = files(source)?;
        let data = sptk_mtx::read_path(&matrix, &read_options(opts, 0))?;
        let (labels, notes) = labels(&features, &barcodes, data.entries.dim_sizes(), opts)?;
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header: header_words(&data.header),
            field: Some(data.header.field),
            one_based: true,
            content: Content::Entries {
                entries: data.entries,
                labels,
            },
            notes,
            memory_hint: None,
        })
    }

    fn read_converted(
        &self,
        source: &mut Source,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        let [matrix, features, barcodes] = files(source)?;
        let name = source.spec().to_string();
        let Some(mut d) = read_converted_file(&matrix, name, target, convert, opts)? else {
            return Ok(None);
        };
        let (labels, notes) = labels(&features, &barcodes, &d.input.dim_sizes(), opts)?;
        super::attach_labels(&mut d.converted.tensor, &labels, source, true)?;
        d.input.format = self.name();
        d.input.notes.extend(notes);
        Ok(Some(d))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::{read, SourceSpec};

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(9));
        z.write_all(b).unwrap();
        z.finish().unwrap()
    }

    /// A gzip bomb as `features.tsv.gz`: 56 MiB of labels in about 60 KB. It was
    /// inflated whole before any check; now the memory limit stops it.
    #[test]
    fn a_gzip_bomb_of_labels_stops_at_the_memory_limit() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        let put = |name: &str, b: &[u8]| std::fs::write(folder.join(name), b).unwrap();
        put(
            "matrix.mtx",
            b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 5\n",
        );
        put("barcodes.tsv", b"AAAC-1\nAAAG-1\n");
        put("features.tsv.gz", &gzip(&b"ENSG01\n".repeat(64 << 17)));
        let opts = ReadOptions {
            memory_limit: Some(4 << 20),
            ..Default::default()
        };
        let e = read(SourceSpec::resolve(&[folder]).unwrap(), None, &opts)
            .err()
            .unwrap()
            .to_string();
        let want = format!(
            "{}: more than 4194304 bytes once inflated, past the memory limit of 4194304 bytes",
            folder.join("features.tsv.gz").display()
        );
        assert!(e.starts_with(&want), "{e}");
    }

    /// Labels whose slices and copy would pass the limit though their text does not.
    #[test]
    fn labels_whose_index_passes_the_limit_are_refused() {
        let text = b"a\n".repeat(1000);
        let e = read_mex_labels(&text[..], Path::new("b.tsv"), 1, 0, 1000, Some(20_000))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("b.tsv: 1000 barcodes in 2000 bytes take 28000 bytes to index"),
            "{e}"
        );
        let l = read_mex_labels(&text[..], Path::new("b.tsv"), 1, 0, 1000, Some(28_000)).unwrap();
        assert_eq!(l.len(), 1000);
    }
}

//! The 10x Genomics MEX folder (Cell Ranger's `filtered_feature_bc_matrix/`): a Matrix
//! Market matrix of features x barcodes, with the feature ids (first column of
//! `features.tsv`, or `genes.tsv` before Cell Ranger 3) and the barcodes kept as the
//! labels of its rows and columns. Each file may be gzip-compressed.

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

/// The first tab-separated column of every line of `path` (gzip looked through): one
/// label per line, checked to number `size` coordinates (`what` names them).
fn read_labels(path: &Path, size: u64, what: &str, of: &str) -> Result<Labels, InputError> {
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, e))?;
    let mut raw = Vec::new();
    let mut head = [0u8; 2];
    let mut reader = std::io::BufReader::new(file);
    let gz = {
        use std::io::BufRead;
        let buf = reader.fill_buf().map_err(|e| InputError::io(path, e))?;
        head[..buf.len().min(2)].copy_from_slice(&buf[..buf.len().min(2)]);
        head == [0x1f, 0x8b]
    };
    let read = if gz {
        flate2::read::MultiGzDecoder::new(reader).read_to_end(&mut raw)
    } else {
        reader.read_to_end(&mut raw)
    };
    read.map_err(|e| InputError::io(path, e))?;
    let bad = |line: usize, message: String| InputError::Labels {
        path: path.to_path_buf(),
        line: Some(line as u64 + 1),
        message,
    };
    let mut lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut labels = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let first = line.split(|&b| b == b'\t').next().unwrap_or(line);
        let text =
            std::str::from_utf8(first).map_err(|_| bad(i, "the label is not UTF-8 text".into()))?;
        if text.is_empty() {
            return Err(bad(i, format!("an empty {what} (expected one per line)")));
        }
        labels.push(text);
    }
    if labels.len() as u64 != size {
        return Err(InputError::Labels {
            path: path.to_path_buf(),
            line: None,
            message: format!(
                "{} {what}s for the {size} {of} of the matrix; a MEX folder has one per line",
                labels.len()
            ),
        });
    }
    Ok(Labels::from_strings(labels))
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

/// Row labels (features) and column labels (barcodes) for a matrix of `dims`.
fn labels(
    features: &Path,
    barcodes: &Path,
    dims: &[u64],
) -> Result<Vec<Option<Arc<Labels>>>, InputError> {
    let (rows, cols) = (dims.first().copied(), dims.get(1).copied());
    let (Some(rows), Some(cols)) = (rows, cols) else {
        return Err(InputError::Source("a MEX matrix has two dimensions".into()));
    };
    Ok(vec![
        Some(Arc::new(read_labels(features, rows, "feature", "rows")?)),
        Some(Arc::new(read_labels(barcodes, cols, "barcode", "columns")?)),
    ])
}

fn note(features: &Path, barcodes: &Path) -> String {
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    format!(
        "rows labelled from {} (feature ids), columns from {} (barcodes)",
        name(features),
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
        let labels = labels(&features, &barcodes, data.entries.dim_sizes())?;
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
            notes: vec![note(&features, &barcodes)],
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
        let labels = labels(&features, &barcodes, &d.input.dim_sizes())?;
        sptk_tensor::attach_labels(&mut d.converted.tensor, &labels).map_err(|error| {
            InputError::Convert {
                one_based: true,
                error,
            }
        })?;
        d.input.format = self.name();
        d.input.notes.push(note(&features, &barcodes));
        Ok(Some(d))
    }
}

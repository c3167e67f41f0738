//! The keyword arguments of `sptk.read`, `convert`, `from_*`: the command line's options,
//! named as its flags are (`pos_width` for `--pos-width`), read once into the library's
//! option types. An unknown keyword is an `ArgumentError`, not silently ignored.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sptk_encoding::Target;
use sptk_input::{
    ColumnOptions, Helper, Isolation, ReadOptions, Relabel, Request, RequestError, RouteError,
    Width,
};
use sptk_tensor::{ConvertOptions, Labels, ValueType};

use crate::error::{Failure, Result};
use crate::tensor::PyTensor;

/// The keywords every call that converts takes.
const CONVERT_KEYS: &[&str] = &[
    "to",
    "dtype",
    "pos_width",
    "crd_width",
    "memory_limit",
    "prune",
    "drop_zeros",
    "keep_duplicates",
    "slice_values",
];

/// The keywords of `sptk.read` besides [`CONVERT_KEYS`].
const READ_KEYS: &[&str] = &[
    "format",
    "dataset",
    "columns",
    "value_column",
    "shape",
    "index_base",
    "relabel",
    "labels",
    "transpose",
    "threads",
    "mmap",
    "checksums",
    "isolate",
    "isolate_timeout",
    "isolate_helper",
    "feature_ids",
    "out",
];

/// What a conversion was asked for.
#[derive(Clone, Debug, Default)]
pub struct Conversion {
    /// `to`, `pos_width`, `crd_width` (and for `sptk.read`, `transpose`), as the reader
    /// seam takes them; without `to`, a stored encoding is kept, else CSR for a matrix and
    /// COO for any other rank.
    pub request: Request,
    /// The library's options.
    pub options: ConvertOptions,
}

/// What a read was asked for, besides the conversion.
#[derive(Clone, Debug, Default)]
pub struct Reading {
    /// `format`: the reader, as `--from` names it.
    pub format: Option<String>,
    /// `dataset`: the matrix inside a container.
    pub dataset: Option<String>,
    /// `out`: the `.spt` file to convert into (out of core where the input has such a
    /// route), returned opened.
    pub out: Option<std::path::PathBuf>,
    /// The library's read options.
    pub options: ReadOptions,
}

fn item<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> Result<Option<T>> {
    let Some(v) = d
        .get_item(key)
        .map_err(|e| Failure::argument(e.to_string()))?
    else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(None);
    }
    v.extract()
        .map(Some)
        .map_err(|_| Failure::argument(format!("{key}={}: {}", repr(&v), expected(key))))
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_default()
}

/// What each keyword takes, for messages.
fn expected(key: &str) -> &'static str {
    match key {
        "to" | "dtype" | "format" | "dataset" | "value_column" => "a str",
        "pos_width" | "crd_width" => "bits (8, 16, 32, 64) or \"auto\"",
        "memory_limit" | "threads" | "index_base" => "an int",
        "columns" => "a list of column names",
        "shape" | "slice_values" => "a list of ints",
        "relabel" => "True, \"shared\" or \"separate\"",
        "labels" => "an sptk.Tensor, the path of a .spt file, or a list per dimension (a list of str, or None)",
        "isolate_timeout" => "seconds (a float)",
        "isolate_helper" => "the path of a helper program",
        _ => "a bool",
    }
}

fn width(d: &Bound<'_, PyDict>, key: &str) -> Result<Option<Width>> {
    if let Ok(Some(text)) = item::<String>(d, key) {
        return if text.eq_ignore_ascii_case("auto") {
            Ok(Some(Width::Auto))
        } else {
            Err(Failure::argument(format!(
                "{key}={text:?}: {}",
                expected(key)
            )))
        };
    }
    Ok(item::<u8>(d, key)?.map(Width::Bits))
}

/// Refuses keywords that no option of this call has.
pub fn check_keys(d: &Bound<'_, PyDict>, read: bool) -> Result<()> {
    for key in d.keys() {
        let key = key.to_string();
        let known =
            CONVERT_KEYS.contains(&key.as_str()) || (read && READ_KEYS.contains(&key.as_str()));
        if !known {
            let mut all: Vec<&str> = CONVERT_KEYS.to_vec();
            if read {
                all.extend(READ_KEYS);
            }
            return Err(Failure::argument(format!(
                "unknown keyword argument `{key}` (this call takes {})",
                all.join(", ")
            )));
        }
    }
    Ok(())
}

impl Conversion {
    /// The conversion keywords of `d`.
    pub fn from_dict(d: &Bound<'_, PyDict>) -> Result<Conversion> {
        let dtype = match item::<String>(d, "dtype")? {
            Some(t) => Some(
                t.parse::<ValueType>()
                    .map_err(|e| Failure::argument(format!("dtype: {e}")))?,
            ),
            None => None,
        };
        let request = Request {
            to: item(d, "to")?,
            pos_width: width(d, "pos_width")?,
            crd_width: width(d, "crd_width")?,
            default_target: true,
            transpose: item(d, "transpose")?.unwrap_or(false),
            // Results go to SciPy and NumPy: unsaid widths at least 32 bits, which they
            // take without a copy (the command line keeps the narrowest).
            width_floor: 32,
        };
        let options = ConvertOptions {
            drop_zeros: item(d, "drop_zeros")?.unwrap_or(false),
            keep_duplicates: item(d, "keep_duplicates")?.unwrap_or(false),
            prune: item(d, "prune")?.unwrap_or(false),
            dtype,
            slice_values: item(d, "slice_values")?.unwrap_or_default(),
            memory_limit: item(d, "memory_limit")?,
            auto_widths: request.auto_widths(),
        };
        Ok(Conversion { request, options })
    }

    /// The target for a tensor of `rank` dimensions whose encoding, if it has one, is
    /// `stored`, and the options to convert into it with (see [`Request::target`]).
    pub fn target(
        &self,
        rank: usize,
        stored: Option<&sptk_encoding::Encoding>,
    ) -> Result<(Target, Cow<'_, ConvertOptions>)> {
        self.request
            .target(rank, stored, &self.options)
            .map_err(request_error)
    }

    /// Whether `to` was left out without widths: the caller may then keep a tensor as it
    /// is.
    pub fn keeps_as_is(&self) -> bool {
        self.request.to.is_none()
            && self.request.pos_width.is_none()
            && self.request.crd_width.is_none()
            && self.options.dtype.is_none()
            && !self.options.drop_zeros
            && self.options.slice_values.is_empty()
    }
}

/// A target refused, in the keywords' words.
pub fn request_error(e: RequestError) -> Failure {
    match e {
        RequestError::Encoding(e) => e.into(),
        RequestError::Widths { error, .. } => {
            Failure::argument(format!("pos_width / crd_width: {error}"))
        }
        RequestError::PruneNeedsNm => Failure::argument(
            "prune=True applies to n:m targets (to=\"2:4\", \"N:M\", or a structured[n, m] level)",
        ),
        RequestError::Missing => Failure::argument("to: no target encoding"),
    }
}

/// A read or its conversion failed: the input's errors as the library words them, the
/// target's in the keywords' words.
pub fn route_error(e: RouteError) -> Failure {
    match e {
        RouteError::Input(e) => e.into(),
        RouteError::Target(e) => request_error(e),
    }
}

/// `labels=`: the lists to number a table's ids from (see [`ColumnOptions::labels`]): a
/// tensor's labels, a `.spt` file's, or a list per dimension (a list of str, or None).
fn given_labels(d: &Bound<'_, PyDict>) -> Result<Vec<Option<Arc<Labels>>>> {
    let Some(v) = d.get_item("labels").ok().flatten().filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let labels = if let Ok(t) = v.extract::<PyRef<'_, PyTensor>>() {
        let t = t
            .tensor(d.py())
            .map_err(|e| Failure::new(crate::error::Kind::Format, e.to_string()))?;
        t.shared_labels()
    } else if let Ok(path) = v.extract::<std::path::PathBuf>() {
        sptk_input::labels_of_file(&path)?
    } else {
        let lists: Vec<Option<Vec<String>>> = v.extract().map_err(|_| {
            Failure::argument(format!("labels={}: {}", repr(&v), expected("labels")))
        })?;
        lists
            .into_iter()
            .map(|l| l.map(|l| Arc::new(Labels::from_strings(l))))
            .collect()
    };
    if labels.iter().all(Option::is_none) {
        return Err(Failure::argument(
            "labels=: no dimension has labels to number from",
        ));
    }
    Ok(labels)
}

impl Reading {
    /// The read keywords of `d`.
    pub fn from_dict(d: &Bound<'_, PyDict>, memory_limit: Option<u64>) -> Result<Reading> {
        let relabel = match d.get_item("relabel").ok().flatten() {
            None => Relabel::Text,
            Some(v) if v.is_none() => Relabel::Text,
            Some(v) => match (v.extract::<bool>(), v.extract::<String>()) {
                (Ok(true), _) => Relabel::Shared,
                (Ok(false), _) => Relabel::Text,
                (_, Ok(s)) if s == "shared" => Relabel::Shared,
                (_, Ok(s)) if s == "separate" => Relabel::Separate,
                _ => {
                    return Err(Failure::argument(format!(
                        "relabel={}: {}",
                        repr(&v),
                        expected("relabel")
                    )))
                }
            },
        };
        let isolation = if item(d, "isolate")?.unwrap_or(true) {
            Isolation::Child(Helper {
                program: item::<std::path::PathBuf>(d, "isolate_helper")?,
                timeout: item::<f64>(d, "isolate_timeout")?
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .map(Duration::from_secs_f64),
            })
        } else {
            Isolation::InProcess
        };
        let index_base: u64 = item(d, "index_base")?.unwrap_or(0);
        if index_base > 1 {
            return Err(Failure::argument("index_base: 0 or 1"));
        }
        Ok(Reading {
            format: item(d, "format")?,
            dataset: item(d, "dataset")?,
            out: item(d, "out")?,
            options: ReadOptions {
                threads: item(d, "threads")?.unwrap_or(0),
                memory_limit,
                progress: None,
                mmap: item(d, "mmap")?.unwrap_or(true),
                checksums: item(d, "checksums")?.unwrap_or(true),
                columns: ColumnOptions {
                    coordinates: item(d, "columns")?,
                    value: item(d, "value_column")?,
                    shape: item(d, "shape")?,
                    index_base,
                    relabel,
                    labels: given_labels(d)?,
                },
                isolation,
                metadata_only: false,
                feature_ids: item(d, "feature_ids")?.unwrap_or(false),
            },
        })
    }
}

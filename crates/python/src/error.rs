//! Errors as Python exceptions, and the one way every long call runs: without the GIL, with
//! any panic caught.
//!
//! The exception classes live in `sptk/_errors.py` (each is an `sptk.Error` and also the
//! built-in it fits: `ValueError`, `OSError`, `MemoryError`, `RuntimeError`); this module
//! sorts the library crates' errors into them and keeps their messages, which are the
//! command line's.

use std::error::Error as StdError;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Which `sptk` exception a failure raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sptk.FileError` (`OSError`): a path that cannot be opened, read or written.
    File,
    /// `sptk.FormatError` (`ValueError`): damaged or unreadable input, arrays that break
    /// the encoding's rules, a conversion the data refuses.
    Format,
    /// `sptk.ArgumentError` (`ValueError`): an argument that does not make sense (encoding
    /// text that does not parse, an unknown value type).
    Argument,
    /// `sptk.MemoryLimitError` (`MemoryError`): the memory limit refused an array.
    Memory,
    /// `sptk.InternalError` (`RuntimeError`): a bug in sptk (a caught panic).
    Internal,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::File => "FileError",
            Kind::Format => "FormatError",
            Kind::Argument => "ArgumentError",
            Kind::Memory => "MemoryLimitError",
            Kind::Internal => "InternalError",
        }
    }
}

/// A failure on its way to Python: the exception class and the message.
#[derive(Debug)]
pub struct Failure {
    /// The class.
    pub kind: Kind,
    /// The message, as the command line prints it.
    pub message: String,
}

/// A result of the Rust side, turned into a Python exception by `?` in a `#[pyfunction]`.
pub type Result<T> = std::result::Result<T, Failure>;

impl Failure {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }

    /// A bad argument.
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::new(Kind::Argument, message)
    }

    /// Sorts any library error by its chain of causes: the memory limit anywhere is a
    /// `MemoryLimitError`; an operating-system error at the root is a `FileError`; the
    /// rest are `FormatError`s.
    pub fn from_error(e: &(dyn StdError + 'static)) -> Failure {
        let mut kind = Kind::Format;
        let mut cause: Option<&(dyn StdError + 'static)> = Some(e);
        while let Some(c) = cause {
            // The one mark of a refusal for size, whichever library made it.
            if sptk_tensor::over_memory_limit(c) {
                kind = Kind::Memory;
                break;
            }
            if c.is::<std::io::Error>() {
                kind = Kind::File;
            }
            cause = c.source();
        }
        if let Some(sptk_input::InputError::Source(_)) = e.downcast_ref() {
            kind = Kind::File;
        }
        Failure::new(kind, message(e))
    }
}

/// The error and its causes, each said once, as `sparse-convert` prints them.
fn message(e: &(dyn StdError + 'static)) -> String {
    sptk_tensor::error_text(e)
}

macro_rules! from_library_error {
    ($($t:ty),*) => {$(
        impl From<$t> for Failure {
            fn from(e: $t) -> Failure {
                Failure::from_error(&e)
            }
        }
    )*};
}
from_library_error!(
    sptk_input::InputError,
    sptk_store::StoreError,
    sptk_tensor::ConvertError,
    sptk_npy::NpyError,
    sptk_mtx::MtxError,
    sptk_hdf5::H5Error,
    sptk_table::TableError,
    std::io::Error
);

impl From<sptk_encoding::TargetError> for Failure {
    fn from(e: sptk_encoding::TargetError) -> Failure {
        let text = e.render();
        let text = text.strip_prefix("error: ").unwrap_or(&text).trim_end();
        Failure::argument(format!("to: {text}"))
    }
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        Python::attach(|py| {
            let class = ERRORS
                .get_or_try_init(py, || py.import("sptk._errors").map(|m| m.unbind()))
                .and_then(|m| m.bind(py).getattr(f.kind.class_name()));
            match class {
                Ok(class) => match class.call1((f.message.clone(),)) {
                    Ok(instance) => PyErr::from_value(instance),
                    Err(e) => e,
                },
                // `sptk._errors` missing: the package is broken; still say what failed.
                Err(_) => PyRuntimeError::new_err(f.message),
            }
        })
    }
}

/// Runs `work` without the GIL (other Python threads run meanwhile), turning a panic
/// into `sptk.InternalError`: no panic crosses into Python.
pub fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    F: FnOnce() -> Result<T> + Send,
    T: Send,
{
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    settle(outcome)
}

/// Runs `work` with the GIL held (it reads memory Python owns), a panic caught as in
/// [`detached`].
pub fn attached<T>(work: impl FnOnce() -> Result<T>) -> PyResult<T> {
    settle(catch_unwind(AssertUnwindSafe(work)))
}

fn settle<T>(outcome: std::thread::Result<Result<T>>) -> PyResult<T> {
    match outcome {
        Ok(Ok(x)) => Ok(x),
        Ok(Err(f)) => Err(f.into()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".into());
            Err(Failure::new(
                Kind::Internal,
                format!("internal error in sptk (a bug; please report it): {what}"),
            )
            .into())
        }
    }
}

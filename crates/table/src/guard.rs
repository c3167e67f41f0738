//! The reader seam: every call into arrow-rs and parquet on a file's bytes runs inside
//! [`contain`], which turns a panic (a damaged file the libraries do not check for, such
//! as arrow-buffer's `the offset of the new Buffer cannot exceed the existing length`)
//! into a [`TableError::Panicked`] naming the file and the place, instead of ending the
//! process. The release profile unwinds (`panic = "unwind"` in the workspace manifest) so
//! that this works in the tools too; under `panic = "abort"` it compiles to a plain call.
//!
//! A panic is caught where it is most precisely located (a column of a record batch, a
//! row group), and again at every public entry point, so nothing that unwinds leaves the
//! crate. An allocation failure is not a panic: it aborts whatever the profile, which is
//! why sizes read from files go through the memory budget before anything is allocated.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::error::TableError;

/// The text of a panic's payload (`panic!` with a literal or a formatted message).
fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

thread_local! {
    /// How many [`contain`] calls this thread is inside.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
}

/// True while this thread runs inside [`contain`]: a panic here becomes an error that
/// carries its message, so a panic hook can stay quiet instead of printing what looks like
/// a crash before the error line (`sparse-convert` installs such a hook). A panic on
/// another thread (a rayon worker) is still caught, but this says `false` there.
pub fn panic_is_contained() -> bool {
    CONTAINED.with(|c| c.get() > 0)
}

/// Runs `f`; a panic inside it becomes [`TableError::Panicked`] naming `path` and `place`
/// (for example `row group 3`, or a column and the row its batch starts at), with the
/// panic's message. The crate's own entry points already run inside it; callers use it
/// for the seam on their side (`sptk-input` does).
///
/// `f` is treated as unwind safe: what it was building is dropped with the error, and the
/// table itself is only read, so a caught panic leaves nothing half-changed that is used
/// again.
pub fn contain<T>(
    path: &Path,
    place: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<T, TableError>,
) -> Result<T, TableError> {
    CONTAINED.with(|c| c.set(c.get() + 1));
    let caught = catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(c.get() - 1));
    match caught {
        Ok(r) => r,
        Err(payload) => Err(TableError::Panicked {
            path: path.to_path_buf(),
            place: place(),
            message: panic_text(payload.as_ref()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_naming_file_place_and_message() {
        let e = contain(
            Path::new("t.arrow"),
            || "record batch 2".into(),
            || {
                let v: Vec<u8> = Vec::new();
                let i = v.len() + 3;
                if i > 0 {
                    panic!("index {i} out of range");
                }
                Ok(())
            },
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("t.arrow: record batch 2: "), "{text}");
        assert!(text.contains("index 3 out of range"), "{text}");
        assert!(matches!(e, TableError::Panicked { .. }));
    }

    #[test]
    fn errors_and_values_pass_through() {
        assert_eq!(contain(Path::new("x"), String::new, || Ok(5)).unwrap(), 5);
        let e = contain::<()>(Path::new("x"), String::new, || {
            Err(TableError::format(Path::new("x"), "bad"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "x: bad");
    }
}

//! The readers of this build, one module per format: each adapts a format crate's reading
//! functions to the [`Reader`](crate::Reader) seam.

#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod mat5;
pub mod mex;
pub mod mtx;
pub mod npy;
pub mod npz;
pub mod safetensors;
pub mod spt;
#[cfg(feature = "table")]
pub mod table;
pub mod tns;

use crate::input::{Progress, ReadOptions};

/// Progress of one file of several, reported as bytes of all of them: `before` bytes of
/// earlier files are added to what this file's reader reports.
pub(crate) fn progress_after(opts: &ReadOptions, before: u64) -> Option<Progress> {
    let outer = opts.progress.clone()?;
    Some(std::sync::Arc::new(move |done: u64| {
        outer(before.saturating_add(done))
    }))
}

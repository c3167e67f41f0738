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

use std::path::Path;

use crate::error::InputError;
use crate::input::{Progress, ReadOptions};
use crate::source::Source;

/// Opens a file format read whole: from its file (`open`, which maps it), or from
/// standard input buffered within the memory limit (`from_bytes`); `what` names the
/// format in the memory-limit message.
pub(crate) fn open_or_buffer<T, E>(
    source: &mut Source,
    opts: &ReadOptions,
    what: &'static str,
    open: impl FnOnce(&Path) -> Result<T, E>,
    from_bytes: impl FnOnce(&Path, Vec<u8>) -> Result<T, E>,
) -> Result<T, InputError>
where
    InputError: From<E>,
{
    Ok(match source.path() {
        Some(path) => open(path)?,
        None => from_bytes(
            Path::new("standard input"),
            source.buffer_stream(opts.memory_limit, what)?,
        )?,
    })
}

/// Attaches the labels a reader found to the tensor it made of the input `source`
/// (`one_based` as the input numbers its coordinates), a failure named as that input.
pub(crate) fn attach_labels(
    tensor: &mut sptk_tensor::Tensor,
    labels: &[Option<std::sync::Arc<sptk_tensor::Labels>>],
    source: &Source,
    one_based: bool,
) -> Result<(), InputError> {
    sptk_tensor::attach_labels(tensor, labels)
        .map_err(|error| InputError::convert(source.spec(), one_based, error))
}

/// Progress of one file of several, reported as bytes of all of them: `before` bytes of
/// earlier files are added to what this file's reader reports.
pub(crate) fn progress_after(opts: &ReadOptions, before: u64) -> Option<Progress> {
    let outer = opts.progress.clone()?;
    Some(std::sync::Arc::new(move |done: u64| {
        outer(before.saturating_add(done))
    }))
}

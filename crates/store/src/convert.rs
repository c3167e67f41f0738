/*!
Conversion of a stored tensor into another encoding: validate, then the core's
[`sptk_tensor::convert_tensor`] (a direct path such as the CSR <-> CSC transpose where
there is one, else back to coordinates and [`sptk_tensor::convert`]).
*/

use std::path::Path;

use sptk_encoding::Target;
use sptk_tensor::{ConvertOptions, Converted};

use crate::error::{StoreError, StoreErrorKind};
use crate::open::SptFile;
use crate::write::{write, WriteOptions};

impl SptFile {
    /// Validates the stored tensor and converts it into `target`.
    ///
    /// # Errors
    /// Validation errors, then [`StoreErrorKind::Convert`].
    pub fn convert(&self, target: &Target, opts: &ConvertOptions) -> Result<Converted, StoreError> {
        let t = self.validate()?;
        sptk_tensor::convert_tensor(&t, target, opts)
            .map_err(|e| self.err(StoreErrorKind::Convert(e)))
    }
}

/// Opens `src`, converts it into `target` and writes the result to `dst` atomically
/// (`dst` may be `src`: the source stays mapped until the rename replaces it).
///
/// # Errors
/// As for [`SptFile::open`], [`SptFile::convert`] and [`write`].
pub fn convert_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    target: &Target,
    opts: &ConvertOptions,
    write_opts: &WriteOptions,
) -> Result<Converted, StoreError> {
    let file = SptFile::open(src)?;
    let converted = file.convert(target, opts)?;
    write(dst, &converted.tensor, write_opts)?;
    Ok(converted)
}

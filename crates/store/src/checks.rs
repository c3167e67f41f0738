/*!
Checksums on read. From version 2 every array is hashed in chunks of `chunk_bytes`
(xxh3-64 each) and the chunk checksums sit in the file's last array, `checksums`, whose own
xxh3-64 is in the header. Validation checks every chunk in parallel beside the O(n) pass,
a row view checks the few chunks it reads, and `verify` checks everything. Version 1 files
have one checksum per array: validation and `verify` check those; row views cannot.
*/

use std::ops::Range;

use sptk_tensor::par;

use crate::error::{StoreError, StoreErrorKind};
use crate::format::checksum;
use crate::header::{ArrayInfo, CHECKSUMS};
use crate::open::SptFile;

impl SptFile {
    /// The bytes of array `a` (padding excluded; in bounds by the checks of `open`).
    pub(crate) fn bytes_of(&self, a: &ArrayInfo) -> &[u8] {
        self.as_bytes().get(self.byte_range(a)).unwrap_or(&[])
    }

    /// The chunk checksum stored for chunk `k` of `a` (version 2).
    fn stored_chunk(&self, a: &ArrayInfo, k: usize) -> Option<u64> {
        let sums = self
            .header()
            .arrays
            .last()
            .filter(|c| c.name == CHECKSUMS)?;
        let i = a.first_chunk.checked_add(k)?.checked_mul(8)?;
        let b = self.bytes_of(sums).get(i..i.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    /// Checks chunk `k` of `a` against its stored checksum.
    fn check_chunk(&self, a: &ArrayInfo, chunk: usize, k: usize) -> Result<(), StoreError> {
        let data = self.bytes_of(a);
        let lo = k.saturating_mul(chunk).min(data.len());
        let hi = lo.saturating_add(chunk).min(data.len());
        let found = checksum(&data[lo..hi]);
        let expected = self.stored_chunk(a, k);
        if expected == Some(found) {
            return Ok(());
        }
        Err(self.err(StoreErrorKind::ChunkChecksum {
            array: a.name.clone(),
            chunk: k,
            bytes: lo as u64..hi as u64,
            expected: expected.unwrap_or(0),
            found,
        }))
    }

    /// Checks the chunks of `a` that hold its bytes `range` (counted from the array's
    /// start), in order. Version 1 files have no chunk checksums: nothing is checked.
    ///
    /// # Errors
    /// [`StoreErrorKind::ChunkChecksum`] for the first damaged chunk.
    pub(crate) fn check_bytes(&self, a: &ArrayInfo, range: Range<usize>) -> Result<(), StoreError> {
        let Some(chunk) = self.chunk_size() else {
            return Ok(());
        };
        if range.start >= range.end {
            return Ok(());
        }
        let first = range.start / chunk;
        let last = (range.end - 1) / chunk;
        (first..=last).try_for_each(|k| self.check_chunk(a, chunk, k))
    }

    /// Bytes per checksummed chunk (version 2), as usize.
    fn chunk_size(&self) -> Option<usize> {
        self.header()
            .chunk_bytes
            .and_then(|c| usize::try_from(c).ok())
    }

    /// Checks every array against its checksums, in parallel: from version 2 first the
    /// `checksums` array against the header, then every chunk of every array; version 1
    /// every array's single checksum. The error names the first damaged array (and chunk)
    /// in file order.
    ///
    /// # Errors
    /// [`StoreErrorKind::Checksum`] or [`StoreErrorKind::ChunkChecksum`].
    pub fn verify_checksums(&self) -> Result<(), StoreError> {
        let whole = |a: &ArrayInfo| -> Result<(), StoreError> {
            let Some(expected) = a.checksum else {
                return Ok(());
            };
            let found = checksum(self.bytes_of(a));
            if found == expected {
                return Ok(());
            }
            Err(self.err(StoreErrorKind::Checksum {
                array: a.name.clone(),
                expected,
                found,
            }))
        };
        let arrays = &self.header().arrays;
        let Some(chunk) = self.chunk_size() else {
            let results = par::map_tasks(arrays.len(), |i| whole(&arrays[i]));
            return results.into_iter().collect();
        };
        if let Some(sums) = arrays.last() {
            whole(sums)?;
        }
        for a in arrays.iter().filter(|a| a.name != CHECKSUMS) {
            let chunks = a.nbytes.div_ceil(chunk);
            let bad = par::map_tasks(chunks, |k| self.check_chunk(a, chunk, k).is_err())
                .iter()
                .position(|&b| b);
            if let Some(k) = bad {
                return self.check_chunk(a, chunk, k);
            }
        }
        Ok(())
    }
}

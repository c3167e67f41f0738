//! [`Tensor`]: a sparse tensor stored in an encoding: level arrays and values.

use sptk_encoding::Encoding;

use std::sync::Arc;

use crate::index::IndexVec;
use crate::labels::{LabelError, Labels};
use crate::layout::Layout;
use crate::value::{ValueType, ValueVec};

/// The arrays of one level: `pos` for compressed and loose_compressed levels, `crd` for
/// levels that own a coordinate array (see [`crate::LevelPlan::crd_owner`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LevelArrays {
    /// `pos[l]`, if the level has one.
    pub pos: Option<IndexVec>,
    /// `crd[l]`, if the level owns one.
    pub crd: Option<IndexVec>,
}

/// A dimension slice that was applied when the tensor was made (provenance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppliedSlice {
    /// The dimension.
    pub dim: usize,
    /// First selected coordinate of the source.
    pub offset: u64,
    /// Number of selected coordinates.
    pub size: u64,
    /// Distance between selected coordinates.
    pub stride: u64,
}

/// A tensor stored in an encoding. Its arrays always satisfy the encoding's invariants:
/// conversion builds them so, and [`Tensor::try_from_parts`] checks them.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub(crate) encoding: Encoding,
    pub(crate) layout: Layout,
    pub(crate) levels: Vec<LevelArrays>,
    pub(crate) values: ValueVec,
    pub(crate) slices: Vec<AppliedSlice>,
    /// Empty, or one entry per dimension with at least one `Some` (see `set_labels`).
    pub(crate) labels: Vec<Option<Arc<Labels>>>,
}

impl Tensor {
    /// The encoding the arrays are stored in (canonical, no slices).
    pub fn encoding(&self) -> &Encoding {
        &self.encoding
    }
    /// The storage plan.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Dimension sizes.
    pub fn dim_sizes(&self) -> &[u64] {
        &self.layout.dim_sizes
    }
    /// Level sizes.
    pub fn lvl_sizes(&self) -> Vec<u64> {
        self.layout.lvl_sizes()
    }
    /// Number of stored values, padding included (the length of `values`).
    pub fn nse(&self) -> usize {
        self.values.len()
    }
    /// Number of entries as [`Tensor::to_entries`] lists them: every stored value, less
    /// the zeros of padded layouts (which may be padding). One pass over the values of a
    /// padded layout; none otherwise.
    pub fn entry_count(&self) -> usize {
        if !self.layout.padded {
            return self.values.len();
        }
        crate::with_values!(&self.values, v => v.iter().filter(|x| !crate::Value::is_zero(*x)).count())
    }

    /// The value type.
    pub fn value_type(&self) -> ValueType {
        self.values.value_type()
    }
    /// The arrays of level `l`.
    pub fn level(&self, l: usize) -> &LevelArrays {
        &self.levels[l]
    }
    /// The arrays of every level.
    pub fn levels(&self) -> &[LevelArrays] {
        &self.levels
    }
    /// `pos[l]`, if level `l` has one.
    pub fn pos(&self, l: usize) -> Option<&IndexVec> {
        self.levels.get(l)?.pos.as_ref()
    }
    /// `crd[l]`, if level `l` owns one.
    pub fn crd(&self, l: usize) -> Option<&IndexVec> {
        self.levels.get(l)?.crd.as_ref()
    }
    /// The values array.
    pub fn values(&self) -> &ValueVec {
        &self.values
    }
    /// The same tensor with its provenance: the slices applied when it was made (for
    /// tensors rebuilt from stored arrays, whose files record them).
    pub fn with_applied_slices(mut self, slices: Vec<AppliedSlice>) -> Tensor {
        self.slices = slices;
        self
    }
    /// Slices applied when the tensor was made.
    pub fn applied_slices(&self) -> &[AppliedSlice] {
        &self.slices
    }
    /// The labels of dimension `dim` (row names, column names), if it has any.
    pub fn labels(&self, dim: usize) -> Option<&Labels> {
        self.labels.get(dim)?.as_deref()
    }
    /// The same tensor with `labels` naming the coordinates of dimension `dim` (replacing
    /// any it had). Labels travel with the tensor: conversions keep them (a dimension
    /// slice keeps the labels it selects) and the storage file stores them.
    ///
    /// # Errors
    /// `dim` is not a dimension, or the number of labels is not its size.
    pub fn with_labels(mut self, dim: usize, labels: Labels) -> Result<Tensor, LabelError> {
        let size = *self.dim_sizes().get(dim).ok_or_else(|| LabelError {
            message: format!(
                "dimension {dim} does not exist (rank {})",
                self.dim_sizes().len()
            ),
        })?;
        if labels.len() as u64 != size {
            return Err(LabelError {
                message: format!(
                    "{} labels for dimension {dim}, whose size is {size}",
                    labels.len()
                ),
            });
        }
        self.set_labels(dim, Some(Arc::new(labels)));
        Ok(self)
    }
    /// The same tensor without labels on dimension `dim`.
    pub fn without_labels(mut self, dim: usize) -> Tensor {
        self.set_labels(dim, None);
        self
    }
    /// Every dimension's labels as the tensor holds them (shared, not copied), one entry
    /// per dimension: for handing them to another tensor or reader.
    pub fn shared_labels(&self) -> Vec<Option<Arc<Labels>>> {
        (0..self.dim_sizes().len())
            .map(|d| self.labels.get(d).cloned().flatten())
            .collect()
    }
    /// Every dimension's labels, one entry per dimension.
    pub fn all_labels(&self) -> Vec<Option<&Labels>> {
        (0..self.dim_sizes().len())
            .map(|d| self.labels(d))
            .collect()
    }
    /// Sets one dimension's labels, keeping `labels` canonical (empty when no dimension
    /// has any), so that equal tensors compare equal. The count is the caller's to check.
    pub(crate) fn set_labels(&mut self, dim: usize, labels: Option<Arc<Labels>>) {
        let rank = self.dim_sizes().len();
        if dim >= rank {
            return;
        }
        self.labels.resize(rank, None);
        self.labels[dim] = labels;
        if self.labels.iter().all(Option::is_none) {
            self.labels.clear();
        }
    }
    /// Every stored array by its name (`pos[1]`, `crd[1]`), in level order; values last
    /// are not included.
    pub fn index_arrays(&self) -> Vec<(String, &IndexVec)> {
        let mut out = Vec::new();
        for (l, a) in self.levels.iter().enumerate() {
            if let Some(p) = &a.pos {
                out.push((format!("pos[{l}]"), p));
            }
            if let Some(c) = &a.crd {
                out.push((format!("crd[{l}]"), c));
            }
        }
        out
    }
    /// Bytes used by the arrays (index arrays at their widths, plus values).
    pub fn storage_bytes(&self) -> usize {
        self.index_arrays()
            .iter()
            .map(|(_, a)| a.byte_len())
            .sum::<usize>()
            + self.values.len() * self.value_type().size()
    }
    /// Splits into the encoding, level arrays and values.
    pub fn into_parts(self) -> (Encoding, Vec<u64>, Vec<LevelArrays>, ValueVec) {
        (
            self.encoding,
            self.layout.dim_sizes,
            self.levels,
            self.values,
        )
    }
}

impl Tensor {
    /// CRC-32 (IEEE) of the arrays: every index array in print order with each element
    /// widened to a little-endian `u64`, then the values' little-endian bytes (bool as one
    /// byte, complex as re then im). Any tool can recompute it from the same arrays, e.g.
    /// `zlib.crc32(a.astype('<u8').tobytes(), crc)` in Python.
    pub fn checksum(&self) -> u32 {
        let mut h = crc32fast::Hasher::new();
        for (_, a) in self.index_arrays() {
            match a {
                // Already little-endian u64: hash the bytes as they are.
                IndexVec::U64(x) => hash_values(&mut h, x),
                IndexVec::U32(x) => hash_widened(&mut h, x),
                IndexVec::U16(x) => hash_widened(&mut h, x),
                IndexVec::U8(x) => hash_widened(&mut h, x),
                IndexVec::Packed2 { .. } => hash_values(&mut h, &a.to_u64_vec()),
            }
        }
        crate::with_values!(&self.values, v => hash_values(&mut h, v));
        h.finalize()
    }
}

/// Hashes `v` widened to little-endian u64: pieces widened and hashed in parallel,
/// combined in order.
fn hash_widened<I: crate::index::Index>(h: &mut crc32fast::Hasher, v: &[I]) {
    const PIECE: usize = 1 << 19;
    const BLOCK: usize = 4096;
    let pieces = crate::par::map_tasks(v.len().div_ceil(PIECE), |k| {
        let mut p = crc32fast::Hasher::new();
        let mut bytes = vec![0u8; BLOCK * 8];
        for part in v[k * PIECE..v.len().min((k + 1) * PIECE)].chunks(BLOCK) {
            for (w, &x) in bytes.chunks_exact_mut(8).zip(part) {
                w.copy_from_slice(&x.to_u64().to_le_bytes());
            }
            p.update(&bytes[..part.len() * 8]);
        }
        p
    });
    for p in &pieces {
        h.combine(p);
    }
}

fn hash_values<V: Copy>(h: &mut crc32fast::Hasher, v: &[V]) {
    // SAFETY: called with value types and `u64` only, plain old data without padding
    // (see `Value`'s "Transmute safety"), so their memory is `size_of_val(v)` initialized
    // bytes; this project only builds for little-endian targets (checked in lib.rs).
    let bytes =
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) };
    // Large arrays: CRCs of 4 MiB pieces in parallel, combined in order.
    const PIECE: usize = 4 << 20;
    let pieces = crate::par::map_tasks(bytes.len().div_ceil(PIECE), |k| {
        let mut p = crc32fast::Hasher::new();
        p.update(&bytes[k * PIECE..bytes.len().min((k + 1) * PIECE)]);
        p
    });
    for p in &pieces {
        h.combine(p);
    }
}

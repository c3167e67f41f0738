//! Zero-copy views of a range of the outermost level (a row range of CSR, a block-row
//! range of BSR, a column range of CSC): the arrays of the range are contiguous
//! sub-slices of the tensor's arrays.

use std::ops::Range;

use sptk_encoding::{LevelExpr, LevelFormat};

use crate::error::ConvertError;
use crate::index::IndexVec;
use crate::tensor::{LevelArrays, Tensor};
use crate::value::{Value, ValueVecAccess};
use crate::with_values;

/// A borrowed window `[start, start + len)` of an index array (any width, packed too).
#[derive(Clone, Copy, Debug)]
pub struct IndexSlice<'a> {
    array: &'a IndexVec,
    start: usize,
    len: usize,
}

impl<'a> IndexSlice<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Element `i` of the window.
    pub fn get(&self, i: usize) -> Option<u64> {
        if i < self.len {
            self.array.get(self.start + i)
        } else {
            None
        }
    }
    /// The elements widened to `u64`.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        let (a, s, n) = (self.array, self.start, self.len);
        (s..s + n).map(move |i| a.get(i).unwrap_or(0))
    }
    /// The window as a typed slice when the array is `u32` (no copy).
    pub fn as_u32(&self) -> Option<&'a [u32]> {
        match self.array {
            IndexVec::U32(v) => v.get(self.start..self.start + self.len),
            _ => None,
        }
    }
    /// The window as a typed slice when the array is `u64` (no copy).
    pub fn as_u64(&self) -> Option<&'a [u64]> {
        match self.array {
            IndexVec::U64(v) => v.get(self.start..self.start + self.len),
            _ => None,
        }
    }
}

/// A range of the outermost (dense) level of a tensor, borrowed.
#[derive(Debug)]
pub struct OuterView<'a> {
    tensor: &'a Tensor,
    range: Range<u64>,
    /// Per level: the range of positions of that level inside the view.
    positions: Vec<Range<usize>>,
    /// The range of the values array.
    values: Range<usize>,
}

impl Tensor {
    /// A view of outer coordinates `range` (rows of CSR, block rows of BSR, columns of
    /// CSC). The outermost level must be dense and no level loose_compressed (its
    /// segments need not be contiguous); ELL has no outer range.
    ///
    /// Only the positions bounding the range are read, after checking them.
    pub fn outer_range(&self, range: Range<u64>) -> Result<OuterView<'_>, ConvertError> {
        let layout = &self.layout;
        let first = layout.levels.first().ok_or_else(|| {
            ConvertError::Encoding("a tensor without levels has no outer range".into())
        })?;
        if layout.ell || first.format != LevelFormat::Dense {
            return Err(ConvertError::Encoding(
                "outer-range views need a dense outermost level (CSR, CSC, BSR, n:m, dense)".into(),
            ));
        }
        if range.start > range.end || range.end > first.size {
            return Err(ConvertError::Encoding(format!(
                "outer range {}..{} is outside 0..{}",
                range.start, range.end, first.size
            )));
        }
        let mut positions = Vec::with_capacity(layout.lvl_rank());
        positions.push(range.start as usize..range.end as usize);
        for l in 1..layout.lvl_rank() {
            let plan = layout.levels[l];
            let prev = positions[l - 1].clone();
            let next = match plan.format {
                LevelFormat::Dense => prev.start * plan.size as usize..prev.end * plan.size as usize,
                LevelFormat::Singleton => prev,
                LevelFormat::Structured { n, .. } => prev.start * n as usize..prev.end * n as usize,
                LevelFormat::Compressed => {
                    let pos = self.levels[l].pos.as_ref().ok_or_else(|| ConvertError::Invalid(format!("pos[{l}] missing")))?;
                    let lo = pos.get(prev.start).ok_or_else(|| ConvertError::Invalid(format!("pos[{l}][{}] out of range", prev.start)))?;
                    let hi = pos.get(prev.end).ok_or_else(|| ConvertError::Invalid(format!("pos[{l}][{}] out of range", prev.end)))?;
                    if lo > hi {
                        return Err(ConvertError::Invalid(format!("pos[{l}]: {lo} > {hi}")));
                    }
                    lo as usize..hi as usize
                }
                LevelFormat::LooseCompressed | LevelFormat::Batch => {
                    return Err(ConvertError::Encoding(format!(
                        "level {l} is loose_compressed: its segments need not be contiguous, so it has no outer-range view"
                    )))
                }
            };
            positions.push(next);
        }
        let last = positions.last().cloned().unwrap_or(0..0);
        let per = 1usize; // one value per position of the last level
        let values = last.start * per..last.end * per;
        if values.end > self.values.len() {
            return Err(ConvertError::Invalid(
                "values: the view reaches past the end".into(),
            ));
        }
        Ok(OuterView {
            tensor: self,
            range,
            positions,
            values,
        })
    }
}

impl<'a> OuterView<'a> {
    /// The outer coordinate range.
    pub fn range(&self) -> Range<u64> {
        self.range.clone()
    }

    /// `pos[l]` of the view: the `(parents + 1)` positions bounding its segments, not
    /// rebased (they index the tensor's `crd[l]`).
    pub fn pos(&self, l: usize) -> Option<IndexSlice<'a>> {
        let arr = self.tensor.levels.get(l)?.pos.as_ref()?;
        let parents = self.positions.get(l.checked_sub(1)?)?.clone();
        Some(IndexSlice {
            array: arr,
            start: parents.start,
            len: parents.len() + 1,
        })
    }

    /// `crd[l]` of the view (for AoS COO runs, the interleaved window).
    pub fn crd(&self, l: usize) -> Option<IndexSlice<'a>> {
        let arr = self.tensor.levels.get(l)?.crd.as_ref()?;
        let stride = self.tensor.layout.levels[l].crd_stride.max(1);
        let p = self.positions.get(l)?.clone();
        Some(IndexSlice {
            array: arr,
            start: p.start * stride,
            len: p.len() * stride,
        })
    }

    /// The range of the values array the view covers.
    pub fn value_range(&self) -> Range<usize> {
        self.values.clone()
    }

    /// The view as an ordinary tensor: arrays copied, positions rebased to start at 0,
    /// the outer dimension cut to the range.
    pub fn to_tensor(&self) -> Result<Tensor, ConvertError> {
        let t = self.tensor;
        let mut levels = Vec::with_capacity(t.levels.len());
        for l in 0..t.levels.len() {
            let pos = match self.pos(l) {
                Some(p) => {
                    let base = p.get(0).unwrap_or(0);
                    let rebased: Vec<u64> = p.iter().map(|x| x - base).collect();
                    Some(
                        IndexVec::from_vec_u64(rebased, t.layout.pos_width)
                            .map_err(|o| ConvertError::Invalid(format!("pos[{l}]: {}", o.value)))?,
                    )
                }
                None => None,
            };
            let crd = match self.crd(l) {
                Some(c) => {
                    let mut v = IndexVec::with_capacity(
                        t.levels[l]
                            .crd
                            .as_ref()
                            .map_or(crate::IndexWidth::W64, |a| a.width()),
                        c.len(),
                    );
                    for x in c.iter() {
                        v.push_unchecked(x);
                    }
                    Some(v)
                }
                None => None,
            };
            levels.push(LevelArrays { pos, crd });
        }
        let values = with_values!(&t.values, v => copy_range(v, self.values.clone()));
        let mut dims = t.dim_sizes().to_vec();
        match t.encoding.levels[0].expr {
            LevelExpr::Dim(d) => dims[d] = self.range.end - self.range.start,
            LevelExpr::FloorDiv(d, k) => {
                let hi = (self.range.end * k).min(dims[d]);
                dims[d] = hi.saturating_sub(self.range.start * k);
            }
            _ => {}
        }
        Tensor::try_from_parts(t.encoding.clone(), dims, levels, values)
    }
}

fn copy_range<V: Value + ValueVecAccess>(v: &[V], r: Range<usize>) -> crate::ValueVec {
    V::wrap(v.get(r).unwrap_or(&[]).to_vec())
}

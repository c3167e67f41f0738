//! Reading a stored tensor back: every stored position with its level and dimension
//! coordinates, and the tensor as a coordinate list.

use sptk_encoding::{LevelExpr, LevelFormat};

use crate::entries::Entries;
use crate::index::IndexVec;
use crate::tensor::Tensor;
use crate::value::{Value, ValueVec, ValueVecAccess};
use crate::with_values;

impl Tensor {
    /// Coordinate of level `l` stored at position `q` of that level.
    #[inline]
    fn lvl_crd(&self, l: usize, q: usize) -> u64 {
        let plan = &self.layout.levels[l];
        let Some(owner) = plan.crd_owner else {
            return 0;
        };
        let stride = self.layout.levels[owner].crd_stride;
        let arr: Option<&IndexVec> = self.levels[owner].crd.as_ref();
        arr.and_then(|a| a.get(q * stride + (l - owner)))
            .unwrap_or(0)
    }

    #[inline]
    fn pos_at(&self, l: usize, i: usize) -> usize {
        self.levels[l]
            .pos
            .as_ref()
            .and_then(|p| p.get(i))
            .unwrap_or(0) as usize
    }

    /// Calls `f(level coordinates, value position)` for every stored value position in
    /// level order, padding included.
    pub fn for_each_stored(&self, mut f: impl FnMut(&[u64], usize)) {
        let n = self.layout.lvl_rank();
        let mut coords = vec![0u64; n];
        if self.layout.ell {
            let k = self.layout.levels[0].size as usize;
            let rows = self.layout.levels[1].size as usize;
            for s in 0..k {
                for r in 0..rows {
                    let slot = s * rows + r;
                    coords[0] = s as u64;
                    coords[1] = r as u64;
                    coords[2] = self.lvl_crd(2, slot);
                    f(&coords, slot);
                }
            }
            return;
        }
        self.walk_level(0, 0, &mut coords, &mut f);
    }

    fn walk_level(
        &self,
        l: usize,
        p: usize,
        coords: &mut Vec<u64>,
        f: &mut impl FnMut(&[u64], usize),
    ) {
        if l == self.layout.lvl_rank() {
            f(coords, p);
            return;
        }
        let plan = self.layout.levels[l];
        match plan.format {
            LevelFormat::Dense | LevelFormat::Batch => {
                let size = plan.size as usize;
                for c in 0..size {
                    coords[l] = c as u64;
                    self.walk_level(l + 1, p * size + c, coords, f);
                }
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let (lo, hi) = if plan.format == LevelFormat::Compressed {
                    (self.pos_at(l, p), self.pos_at(l, p + 1))
                } else {
                    (self.pos_at(l, 2 * p), self.pos_at(l, 2 * p + 1))
                };
                for q in lo..hi {
                    coords[l] = self.lvl_crd(l, q);
                    self.walk_level(l + 1, q, coords, f);
                }
            }
            LevelFormat::Singleton => {
                coords[l] = self.lvl_crd(l, p);
                self.walk_level(l + 1, p, coords, f);
            }
            LevelFormat::Structured { n, .. } => {
                let n = n as usize;
                for q in p * n..(p + 1) * n {
                    coords[l] = self.lvl_crd(l, q);
                    self.walk_level(l + 1, q, coords, f);
                }
            }
        }
    }

    /// Dimension coordinates from level coordinates.
    pub fn dim_coords(&self, lvl: &[u64], out: &mut [u64]) {
        for o in out.iter_mut() {
            *o = 0;
        }
        for (l, spec) in self.encoding.levels.iter().enumerate() {
            let c = lvl.get(l).copied().unwrap_or(0);
            match spec.expr {
                LevelExpr::Dim(d) => out[d] = c,
                LevelExpr::FloorDiv(d, k) => out[d] += c * k,
                LevelExpr::Mod(d, _) => out[d] += c,
                LevelExpr::Ell { .. } | LevelExpr::Other(_) => {}
            }
        }
    }

    /// The tensor as a coordinate list in level order. Padding is skipped: in padded
    /// formats (dense below sparse, n:m, ELL, all-dense) zero values are not entries.
    pub fn to_entries(&self) -> Entries {
        with_values!(self.values(), v => self.to_entries_typed(v))
    }

    /// Calls `f(coordinates per dimension, values)` with the entries [`Tensor::to_entries`]
    /// gives, in chunks of at most `max` (so a writer holds one chunk, not a copy of the
    /// tensor); stops early when `f` returns false.
    pub fn for_each_entry_chunk(
        &self,
        max: usize,
        f: &mut dyn FnMut(Vec<Vec<u64>>, ValueVec) -> bool,
    ) {
        with_values!(self.values(), v => self.chunks_typed(v, max.max(1), f))
    }

    fn chunks_typed<V: Value + ValueVecAccess>(
        &self,
        vals: &[V],
        max: usize,
        f: &mut dyn FnMut(Vec<Vec<u64>>, ValueVec) -> bool,
    ) {
        let dims = self.dim_sizes().to_vec();
        let rank = dims.len();
        let mut coords: Vec<Vec<u64>> = vec![Vec::new(); rank];
        let mut out_vals: Vec<V> = Vec::new();
        let mut dc = vec![0u64; rank];
        let padded = self.layout.padded;
        let mut going = true;
        self.for_each_stored(|lvl, q| {
            let v = vals.get(q).copied().unwrap_or_default();
            if !going || (padded && v.is_zero()) {
                return;
            }
            self.dim_coords(lvl, &mut dc);
            if dc.iter().zip(&dims).any(|(c, s)| c >= s) {
                return;
            }
            for (arr, &c) in coords.iter_mut().zip(&dc) {
                arr.push(c);
            }
            out_vals.push(v);
            if out_vals.len() == max {
                let full = std::mem::replace(&mut coords, vec![Vec::new(); rank]);
                going = f(full, V::wrap(std::mem::take(&mut out_vals)));
            }
        });
        if going && !out_vals.is_empty() {
            f(coords, V::wrap(out_vals));
        }
    }

    fn to_entries_typed<V: Value + ValueVecAccess>(&self, vals: &[V]) -> Entries {
        let dims = self.dim_sizes().to_vec();
        let mut all = Entries::new(dims.clone(), V::TYPE);
        self.chunks_typed(vals, usize::MAX, &mut |coords, values| {
            // In bounds: the walk skips coordinates past the dimension sizes.
            if let Ok(e) = Entries::from_parts(dims.clone(), coords, values) {
                all = e;
            }
            false
        });
        all
    }
}

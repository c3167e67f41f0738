/*!
Levels straight from items sorted by packed keys, with no per-part arrays to join: every
level compressed (CSF, DCSR, DCSC, and their N-D and blocked kin), and COO of any rank.

In key order, item `i` starts a new node on level `l` exactly when its key differs from the
item before it within the bits of levels `0..=l`; it then starts one on every deeper level
too. So:
1. one parallel pass over chunks of items counts the nodes each chunk starts on each level
   (the highest differing bit of two neighbouring keys says the first level);
2. prefix sums over the chunks give each chunk its stretch of every `crd[l]` and `pos[l+1]`;
3. a second parallel pass writes each node's coordinate, and for each node the position of
   its first child, into the final arrays.

Each array is written once, in order, by one task per chunk. The result equals the
level-by-level walk of `build.rs` byte for byte (a test compares them).
*/

use sptk_encoding::LevelFormat;

use crate::convert::derive::{moved, widths_hold};
use crate::convert::order::{Keyer, Sorted};
use crate::error::ConvertError;
use crate::layout::Layout;
use crate::par;
use crate::tensor::LevelArrays;

/// One level's field in a packed key: (shift, mask).
type Field = (u32, u64);

/// The levels of `layout` straight from `sorted`'s packed keys, where the layout is all
/// compressed ([`compressed_levels`]) or COO ([`coo_levels`]); `None` for the walk.
pub(crate) fn levels_from_keys(
    layout: &Layout,
    keyer: &Keyer,
    sorted: &Sorted,
    chunk: usize,
) -> Result<Option<Vec<LevelArrays>>, ConvertError> {
    let (Some(keys), Some(fields)) = (sorted.keys(), keyer.fields()) else {
        return Ok(None);
    };
    let keyed = !layout.ell && !fields.is_empty() && fields.len() == layout.levels.len();
    if !keyed || !widths_hold(layout, keys.len() as u64) {
        return Ok(None);
    }
    match compressed_levels(layout, keys, fields, chunk)? {
        Some(levels) => Ok(Some(levels)),
        None => coo_levels(layout, keys, fields, chunk),
    }
}

/// COO of any rank (`compressed(nonunique)` then singletons, AoS, SoA or mixed): every
/// item is one entry, so `pos[0] = (0, n)` and each item's level coordinates go to its
/// slots in the coordinate arrays, in parallel. `None` for other layouts or unpacked keys.
fn coo_levels(
    layout: &Layout,
    keys: &[u64],
    fields: &[Field],
    chunk: usize,
) -> Result<Option<Vec<LevelArrays>>, ConvertError> {
    let lv = &layout.levels;
    let coo = lv.len() >= 2
        && lv[0].format == LevelFormat::Compressed
        && lv[0].nonunique
        && lv[0].has_pos
        && lv[1..]
            .iter()
            .all(|p| p.format == LevelFormat::Singleton && !p.has_pos)
        && lv.iter().enumerate().all(|(l, p)| {
            p.crd_owner
                .is_some_and(|o| o <= l && l - o < lv[o].crd_stride.max(1))
        });
    if !coo {
        return Ok(None);
    }
    let n = keys.len();
    let chunk = chunk.max(1);
    let mut levels = Vec::with_capacity(lv.len());
    for (l, p) in lv.iter().enumerate() {
        let pos = (l == 0).then(|| vec![0, n as u64]);
        let crd = if p.crd_owner == Some(l) {
            let stride = p.crd_stride.max(1);
            let len = n
                .checked_mul(stride)
                .ok_or_else(|| ConvertError::TooLarge("COO coordinates: too many".into()))?;
            let mut out: Vec<u64> = crate::alloc::big_zeroed(len)?;
            let own = &fields[l..l + stride];
            par::chunks_mut(&mut out, chunk.saturating_mul(stride), |c, part| {
                for (k, slots) in part.chunks_exact_mut(stride).enumerate() {
                    let key = keys[c * chunk + k];
                    for (slot, &(shift, mask)) in slots.iter_mut().zip(own) {
                        *slot = key.checked_shr(shift).unwrap_or(0) & mask;
                    }
                }
            });
            Some(out)
        } else {
            None
        };
        levels.push(LevelArrays {
            pos: pos.map(|p| moved(p, layout.pos_width)).transpose()?,
            crd: crd.map(|c| moved(c, layout.crd_width)).transpose()?,
        });
    }
    Ok(Some(levels))
}

/// The levels of `layout` from the items' sorted `keys`, when every level is compressed
/// and unique and no two items share a key; `None` otherwise.
fn compressed_levels(
    layout: &Layout,
    keys: &[u64],
    fields: &[Field],
    chunk: usize,
) -> Result<Option<Vec<LevelArrays>>, ConvertError> {
    let plain = layout.levels.iter().enumerate().all(|(l, p)| {
        p.format == LevelFormat::Compressed && !p.nonunique && p.has_pos && p.crd_owner == Some(l)
    });
    if !plain {
        return Ok(None);
    }
    let chunk = chunk.max(1);
    let chunks = keys.len().div_ceil(chunk);
    let depth = fields.len();
    // Pass 1: nodes started per chunk and level; `None` where two items share a key.
    let counts: Vec<Option<Vec<usize>>> = par::map_tasks(chunks, |c| {
        let (a, b) = (c * chunk, ((c + 1) * chunk).min(keys.len()));
        let mut first = vec![0usize; depth];
        for i in a..b {
            first[first_level(keys, i, fields)?] += 1;
        }
        // A node started on level d is started on every deeper level too.
        for l in 1..depth {
            first[l] += first[l - 1];
        }
        Some(first)
    });
    let Some(counts) = counts.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    // Each chunk's first node on each level, and the totals.
    let mut starts = Vec::with_capacity(chunks);
    let mut total = vec![0usize; depth];
    for c in &counts {
        starts.push(total.clone());
        for (t, k) in total.iter_mut().zip(c) {
            *t += k;
        }
    }
    // Pass 2: coordinates of every level, and positions of every level below the first.
    let mut crd: Vec<Vec<u64>> = Vec::with_capacity(depth);
    let mut pos: Vec<Vec<u64>> = Vec::with_capacity(depth);
    for l in 0..depth {
        crd.push(crate::alloc::big_zeroed(total[l])?);
        let parents = if l == 0 { 1 } else { total[l - 1] };
        let mut p: Vec<u64> = crate::alloc::big_zeroed(parents + 1)?;
        p[parents] = total[l] as u64;
        pos.push(p);
    }
    {
        let mut tasks: Vec<Task<'_>> = (0..chunks)
            .map(|c| Task {
                chunk: c,
                starts: &starts[c],
                crd: Vec::with_capacity(depth),
                first_child: Vec::with_capacity(depth),
            })
            .collect();
        // `pos[l + 1][j]` for the level-l nodes `j` a chunk starts; none below the last.
        let below = pos
            .iter_mut()
            .skip(1)
            .map(Some)
            .chain(std::iter::once(None));
        for (l, (crd_l, pos_below)) in crd.iter_mut().zip(below).enumerate() {
            let mut crd_rest: &mut [u64] = crd_l;
            let mut pos_rest: &mut [u64] = match pos_below {
                Some(p) => p,
                None => &mut [],
            };
            for (t, c) in tasks.iter_mut().zip(&counts) {
                let (head, tail) = std::mem::take(&mut crd_rest).split_at_mut(c[l]);
                t.crd.push(head);
                crd_rest = tail;
                let k = if l + 1 < depth { c[l] } else { 0 };
                let (head, tail) = std::mem::take(&mut pos_rest).split_at_mut(k);
                t.first_child.push(head);
                pos_rest = tail;
            }
        }
        par::for_each_item(tasks, |t| t.fill(keys, fields, chunk));
    }
    let mut levels = Vec::with_capacity(depth);
    for (p, c) in pos.into_iter().zip(crd) {
        levels.push(LevelArrays {
            pos: Some(moved(p, layout.pos_width)?),
            crd: Some(moved(c, layout.crd_width)?),
        });
    }
    Ok(Some(levels))
}

/// The first level on which item `i` starts a node (0 for the first item); `None` if its
/// key equals the one before.
#[inline]
fn first_level(keys: &[u64], i: usize, fields: &[Field]) -> Option<usize> {
    if i == 0 {
        return Some(0);
    }
    let x = keys[i] ^ keys[i - 1];
    if x == 0 {
        return None;
    }
    let top = 63 - x.leading_zeros();
    // Fields run from the highest bits (level 0) down: the first whose lowest bit is at or
    // below the highest differing bit.
    fields.iter().position(|&(shift, _)| shift <= top)
}

/// One chunk's share of the output arrays.
struct Task<'a> {
    chunk: usize,
    /// The chunk's first node on each level.
    starts: &'a [usize],
    /// Per level: the coordinates of the nodes the chunk starts.
    crd: Vec<&'a mut [u64]>,
    /// Per level but the last: each started node's first child on the next level.
    first_child: Vec<&'a mut [u64]>,
}

impl Task<'_> {
    fn fill(mut self, keys: &[u64], fields: &[Field], chunk: usize) {
        let depth = fields.len();
        let (a, b) = (
            self.chunk * chunk,
            ((self.chunk + 1) * chunk).min(keys.len()),
        );
        let mut next = vec![0usize; depth];
        for i in a..b {
            // Pass 1 saw every key differ from the one before.
            let Some(d) = first_level(keys, i, fields) else {
                continue;
            };
            for l in d..depth {
                let (shift, mask) = fields[l];
                self.crd[l][next[l]] = keys[i].checked_shr(shift).unwrap_or(0) & mask;
                if l + 1 < depth {
                    // The child this item starts next is the next node of level l + 1.
                    self.first_child[l][next[l]] = (self.starts[l + 1] + next[l + 1]) as u64;
                }
                next[l] += 1;
            }
        }
    }
}

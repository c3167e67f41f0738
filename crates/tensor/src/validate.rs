//! [`Tensor::try_from_parts`]: a tensor from raw level arrays, with every invariant of its
//! encoding checked once, so that readers holding CSR/CSC arrays hand them over without a
//! round trip through coordinates.

use sptk_encoding::{Encoding, LevelFormat};

use crate::error::ConvertError;
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::tensor::{LevelArrays, Tensor};
use crate::value::ValueVec;

fn bad(msg: String) -> ConvertError {
    ConvertError::Invalid(msg)
}

fn get(a: &IndexVec, name: &str, i: usize) -> Result<u64, ConvertError> {
    a.get(i).ok_or_else(|| {
        bad(format!(
            "{name}: index {i} is past the end (length {})",
            a.len()
        ))
    })
}

impl Tensor {
    /// A tensor from raw arrays: `levels[l]` holds `pos[l]` and `crd[l]` exactly as the
    /// encoding stores them (see `docs/ENCODING.md`), `values` every stored value.
    ///
    /// # Errors
    /// Any broken invariant, named by array and index: an array missing or extra, a width
    /// other than the encoding's, positions that do not start at 0, decrease, or do not
    /// end at the coordinate count, loose pairs out of order or overlapping, a coordinate
    /// at or past its level size, unsorted or repeated coordinates where the level
    /// promises order or uniqueness, n:m groups with repeated offsets, and a values array
    /// of the wrong length.
    pub fn try_from_parts(
        encoding: Encoding,
        dim_sizes: Vec<u64>,
        levels: Vec<LevelArrays>,
        values: ValueVec,
    ) -> Result<Tensor, ConvertError> {
        let t = Tensor::assemble(encoding, dim_sizes, levels)?;
        t.check_contents(values)
    }

    /// [`Tensor::try_from_parts`] for arrays their maker built valid: the arrays present
    /// and their widths are checked (a few comparisons), their contents are not (in debug
    /// builds they are, as by [`Tensor::try_from_parts`]). For the outputs of this
    /// project's own kernels, whose making guarantees what the full check would read
    /// every element to find, at O(nnz).
    ///
    /// # Errors
    /// An array missing, extra, or of a width other than the encoding's (and in debug
    /// builds whatever [`Tensor::try_from_parts`] finds).
    ///
    /// # Safety
    /// The arrays must hold every invariant [`Tensor::try_from_parts`] checks: readers and
    /// generated kernels index with positions and coordinates of a tensor without
    /// checking them again.
    pub unsafe fn from_parts_unchecked(
        encoding: Encoding,
        dim_sizes: Vec<u64>,
        levels: Vec<LevelArrays>,
        values: ValueVec,
    ) -> Result<Tensor, ConvertError> {
        let t = Tensor::assemble(encoding, dim_sizes, levels)?;
        if cfg!(debug_assertions) {
            return t.check_contents(values);
        }
        Ok(Tensor { values, ..t })
    }

    /// The tensor around the level arrays, checked for presence and widths, with no
    /// values yet.
    fn assemble(
        encoding: Encoding,
        dim_sizes: Vec<u64>,
        levels: Vec<LevelArrays>,
    ) -> Result<Tensor, ConvertError> {
        let layout = Layout::new(&encoding, &dim_sizes)?;
        if levels.len() != layout.lvl_rank() {
            return Err(bad(format!(
                "{} level(s) of arrays given; the encoding has {} levels",
                levels.len(),
                layout.lvl_rank()
            )));
        }
        for (l, (plan, arrays)) in layout.levels.iter().zip(&levels).enumerate() {
            let want_crd = plan.crd_owner == Some(l);
            if plan.has_pos != arrays.pos.is_some() {
                return Err(bad(format!(
                    "pos[{l}]: {} for a {:?} level",
                    if plan.has_pos {
                        "missing"
                    } else {
                        "not expected"
                    },
                    plan.format
                )));
            }
            if want_crd != arrays.crd.is_some() {
                return Err(bad(format!(
                    "crd[{l}]: {}",
                    if want_crd {
                        "missing"
                    } else {
                        "not expected at this level"
                    }
                )));
            }
            if let Some(p) = &arrays.pos {
                if p.width() != layout.pos_width {
                    return Err(bad(format!(
                        "pos[{l}]: {}-bit elements; the encoding says posWidth = {}",
                        p.width().bits(),
                        layout.pos_width.bits()
                    )));
                }
            }
            if let Some(c) = &arrays.crd {
                let want = match plan.format {
                    LevelFormat::Structured { .. } => layout.crd_width,
                    _ if layout.crd_width == IndexWidth::W2 => IndexWidth::W64,
                    _ => layout.crd_width,
                };
                if c.width() != want {
                    return Err(bad(format!(
                        "crd[{l}]: {}-bit elements; the encoding says crdWidth = {}",
                        c.width().bits(),
                        want.bits()
                    )));
                }
            }
        }
        Ok(Tensor {
            encoding,
            layout,
            levels,
            values: ValueVec::F64(Vec::new().into()),
            slices: Vec::new(),
            labels: Vec::new(),
        })
    }

    /// Every invariant of the level arrays, and `values` of the length they address.
    fn check_contents(self, values: ValueVec) -> Result<Tensor, ConvertError> {
        let t = Tensor { values, ..self };
        let expected_values = if t.layout.ell {
            check_ell(&t)?
        } else {
            check_levels(&t)?
        };
        if t.values.len() as u64 != expected_values {
            return Err(bad(format!(
                "values: length {}; the level arrays address {expected_values}",
                t.values.len()
            )));
        }
        Ok(t)
    }
}

fn check_ell(t: &Tensor) -> Result<u64, ConvertError> {
    let k = t.layout.levels[0].size;
    let rows = t.layout.levels[1].size;
    let cols = t.layout.levels[2].size;
    let crd = t.levels[2]
        .crd
        .as_ref()
        .ok_or_else(|| bad("crd[2]: missing".into()))?;
    let slots = k
        .checked_mul(rows)
        .ok_or_else(|| bad("ELL: K x rows overflows".into()))?;
    if crd.len() as u64 != slots {
        return Err(bad(format!(
            "crd[2]: length {}; ELL needs K x rows = {slots}",
            crd.len()
        )));
    }
    if let Some((i, c)) = crd.iter().enumerate().find(|&(_, c)| c >= cols) {
        return Err(bad(format!(
            "crd[2][{i}]: coordinate {c} is not below the level size {cols}"
        )));
    }
    Ok(slots)
}

/// Walks the levels top-down: `count` parent positions enter each level.
fn check_levels(t: &Tensor) -> Result<u64, ConvertError> {
    let n = t.layout.lvl_rank();
    let mut count: u64 = 1;
    for l in 0..n {
        let plan = t.layout.levels[l];
        let size = plan.size;
        match plan.format {
            LevelFormat::Dense | LevelFormat::Batch => {
                count = count
                    .checked_mul(size)
                    .ok_or_else(|| bad(format!("level {l}: too many dense positions")))?;
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let name = format!("pos[{l}]");
                let pos = t.levels[l]
                    .pos
                    .as_ref()
                    .ok_or_else(|| bad(format!("{name}: missing")))?;
                let owner = plan.crd_owner.unwrap_or(l);
                let crd_name = format!("crd[{owner}]");
                let crd = t.levels[owner]
                    .crd
                    .as_ref()
                    .ok_or_else(|| bad(format!("{crd_name}: missing")))?;
                let stride = t.layout.levels[owner].crd_stride.max(1);
                if crd.len() % stride != 0 {
                    return Err(bad(format!(
                        "{crd_name}: length {} is not a multiple of {stride}",
                        crd.len()
                    )));
                }
                let entries = (crd.len() / stride) as u64;
                let run = run_levels(t, l);
                if plan.format == LevelFormat::Compressed
                    && run.len() == 1
                    && fast_compressed(pos, crd, count, plan.size, plan.nonunique, nonordered(t, l))
                {
                    count = entries;
                    continue;
                }
                // The slow path finds and names the first problem (or checks what the
                // fast path does not cover: COO runs, loose segments).
                let segments = segments(pos, &name, count, plan.format, entries)?;
                for (lo, hi) in segments {
                    check_segment(t, l, &run, lo, hi)?;
                }
                count = entries;
            }
            LevelFormat::Singleton => {
                let owner = plan.crd_owner.unwrap_or(l);
                let crd = t.levels[owner]
                    .crd
                    .as_ref()
                    .ok_or_else(|| bad(format!("crd[{owner}]: missing")))?;
                let stride = t.layout.levels[owner].crd_stride.max(1);
                if (crd.len() / stride) as u64 != count {
                    return Err(bad(format!(
                        "crd[{owner}]: {} entries for level {l}; its parent has {count}",
                        crd.len() / stride
                    )));
                }
                if owner == l {
                    for q in 0..count as usize {
                        let c = get(crd, &format!("crd[{l}]"), q)?;
                        if c >= size {
                            return Err(bad(format!(
                                "crd[{l}][{q}]: coordinate {c} is not below the level size {size}"
                            )));
                        }
                    }
                }
            }
            LevelFormat::Structured { n: gn, m } => {
                let crd = t.levels[l]
                    .crd
                    .as_ref()
                    .ok_or_else(|| bad(format!("crd[{l}]: missing")))?;
                let want = count
                    .checked_mul(gn as u64)
                    .ok_or_else(|| bad(format!("level {l}: too many n:m slots")))?;
                if crd.len() as u64 != want {
                    return Err(bad(format!(
                        "crd[{l}]: length {}; {count} groups of {gn} need {want}",
                        crd.len()
                    )));
                }
                for g in 0..count as usize {
                    let mut prev: Option<u64> = None;
                    for s in 0..gn as usize {
                        let q = g * gn as usize + s;
                        let c = get(crd, &format!("crd[{l}]"), q)?;
                        if c >= m as u64 {
                            return Err(bad(format!(
                                "crd[{l}][{q}]: offset {c} is not below the group size {m}"
                            )));
                        }
                        if prev.is_some_and(|p| p >= c) {
                            return Err(bad(format!(
                                "crd[{l}][{q}]: offsets in a group must ascend without repeats"
                            )));
                        }
                        prev = Some(c);
                    }
                }
                count = want;
            }
        }
    }
    Ok(count)
}

/// The segment bounds of a compressed or loose level, checked.
fn segments(
    pos: &IndexVec,
    name: &str,
    parents: u64,
    format: LevelFormat,
    entries: u64,
) -> Result<Vec<(u64, u64)>, ConvertError> {
    let parents = usize::try_from(parents).map_err(|_| bad(format!("{name}: too many parents")))?;
    let want = if format == LevelFormat::Compressed {
        parents.checked_add(1)
    } else {
        parents.checked_mul(2)
    };
    if want != Some(pos.len()) {
        return Err(bad(format!(
            "{name}: length {}; {parents} parent position(s) need {}",
            pos.len(),
            want.map_or_else(|| "more".to_string(), |w| w.to_string())
        )));
    }
    // The length matches the array, so this allocation is bounded by real data.
    let mut out = Vec::with_capacity(parents);
    if format == LevelFormat::Compressed {
        if pos.len() != parents + 1 {
            return Err(bad(format!(
                "{name}: length {}; {parents} parent position(s) need {}",
                pos.len(),
                parents + 1
            )));
        }
        let first = get(pos, name, 0)?;
        if first != 0 {
            return Err(bad(format!("{name}[0]: {first}; positions start at 0")));
        }
        let mut prev = 0;
        for i in 1..=parents {
            let p = get(pos, name, i)?;
            if p < prev {
                return Err(bad(format!(
                    "{name}[{i}]: {p} is below the previous position {prev}"
                )));
            }
            out.push((prev, p));
            prev = p;
        }
        if prev != entries {
            return Err(bad(format!(
                "{name}[{parents}]: ends at {prev}; the coordinate array holds {entries}"
            )));
        }
    } else {
        if pos.len() != 2 * parents {
            return Err(bad(format!(
                "{name}: length {}; {parents} parent position(s) need {} (lo, hi pairs)",
                pos.len(),
                2 * parents
            )));
        }
        for i in 0..parents {
            let lo = get(pos, name, 2 * i)?;
            let hi = get(pos, name, 2 * i + 1)?;
            if lo > hi {
                return Err(bad(format!(
                    "{name}[{}]: segment ({lo}, {hi}) has lo > hi",
                    2 * i
                )));
            }
            if hi > entries {
                return Err(bad(format!(
                    "{name}[{}]: {hi} is past the coordinate array ({entries})",
                    2 * i + 1
                )));
            }
            out.push((lo, hi));
        }
        let mut sorted = out.clone();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(bad(format!(
                    "{name}: segments ({}, {}) and ({}, {}) overlap",
                    w[0].0, w[0].1, w[1].0, w[1].1
                )));
            }
        }
    }
    Ok(out)
}

/// Level `l` and the singleton levels that follow it (its COO run).
fn run_levels(t: &Tensor, l: usize) -> Vec<usize> {
    let mut run = vec![l];
    let mut k = l + 1;
    while k < t.layout.lvl_rank() && t.layout.levels[k].format == LevelFormat::Singleton {
        run.push(k);
        k += 1;
    }
    run
}

/// Coordinates of one segment: below their level sizes; ordered and unique as promised,
/// comparing whole COO-run tuples.
fn check_segment(
    t: &Tensor,
    l: usize,
    run: &[usize],
    lo: u64,
    hi: u64,
) -> Result<(), ConvertError> {
    let crd_of = |lev: usize, q: usize| -> Result<u64, ConvertError> {
        let plan = t.layout.levels[lev];
        let owner = plan.crd_owner.unwrap_or(lev);
        let stride = t.layout.levels[owner].crd_stride.max(1);
        let arr = t.levels[owner]
            .crd
            .as_ref()
            .ok_or_else(|| bad(format!("crd[{owner}]: missing")))?;
        let i = q * stride + (lev - owner);
        let c = get(arr, &format!("crd[{owner}]"), i)?;
        if c >= plan.size {
            return Err(bad(format!(
                "crd[{owner}][{i}]: coordinate {c} is not below the level size {}",
                plan.size
            )));
        }
        Ok(c)
    };
    let mut prev: Option<Vec<u64>> = None;
    for q in lo as usize..hi as usize {
        let cur: Vec<u64> = run
            .iter()
            .map(|&lev| crd_of(lev, q))
            .collect::<Result<_, _>>()?;
        if let Some(p) = &prev {
            // The first level of the run where the tuples differ decides.
            match run
                .iter()
                .zip(p.iter().zip(&cur))
                .find(|(_, (a, b))| a != b)
            {
                Some((&lev, (a, b))) => {
                    if a > b && !t.layout.levels[lev].nonordered_hint(t, lev) {
                        return Err(bad(format!(
                            "crd[{}]: level {lev} coordinates {a} then {b} at position {q}: not sorted, but the level is ordered",
                            t.layout.levels[lev].crd_owner.unwrap_or(lev)
                        )));
                    }
                }
                None => {
                    let last = *run.last().unwrap_or(&l);
                    if !t.layout.levels[last].nonunique && !t.layout.levels[l].nonunique_alone(run)
                    {
                        return Err(bad(format!(
                            "crd[{l}]: coordinate {cur:?} repeated at position {q}, but level {last} is unique"
                        )));
                    }
                }
            }
        }
        prev = Some(cur);
    }
    Ok(())
}

trait PlanChecks {
    fn nonordered_hint(&self, t: &Tensor, lev: usize) -> bool;
    fn nonunique_alone(&self, run: &[usize]) -> bool;
}

impl PlanChecks for crate::layout::LevelPlan {
    fn nonordered_hint(&self, t: &Tensor, lev: usize) -> bool {
        t.encoding
            .levels
            .get(lev)
            .is_some_and(|s| s.props.nonordered)
    }
    /// A compressed(nonunique) level without a singleton tail may repeat coordinates.
    fn nonunique_alone(&self, run: &[usize]) -> bool {
        run.len() == 1 && self.nonunique
    }
}

fn nonordered(t: &Tensor, l: usize) -> bool {
    t.encoding.levels.get(l).is_some_and(|s| s.props.nonordered)
}

/// Typed check of one compressed level that is not the head of a COO run: positions
/// start at 0, never decrease and end at the coordinate count; coordinates are below the
/// level size and, where promised, sorted (and unique) inside each segment. Returns false
/// on any problem; the slow path then locates it.
fn fast_compressed(
    pos: &IndexVec,
    crd: &IndexVec,
    parents: u64,
    size: u64,
    nonunique: bool,
    nonordered: bool,
) -> bool {
    macro_rules! typed {
        ($p:expr, $c:expr) => {
            compressed_ok($p, $c, parents, size, nonunique, nonordered)
        };
    }
    macro_rules! by_crd {
        ($p:expr) => {
            match crd {
                IndexVec::U8(c) => typed!($p, c),
                IndexVec::U16(c) => typed!($p, c),
                IndexVec::U32(c) => typed!($p, c),
                IndexVec::U64(c) => typed!($p, c),
                IndexVec::Packed2 { .. } => false,
            }
        };
    }
    match pos {
        IndexVec::U8(p) => by_crd!(p),
        IndexVec::U16(p) => by_crd!(p),
        IndexVec::U32(p) => by_crd!(p),
        IndexVec::U64(p) => by_crd!(p),
        IndexVec::Packed2 { .. } => false,
    }
}

fn compressed_ok<P: Index, C: Index>(
    pos: &[P],
    crd: &[C],
    parents: u64,
    size: u64,
    nonunique: bool,
    nonordered: bool,
) -> bool {
    let Ok(parents) = usize::try_from(parents) else {
        return false;
    };
    if pos.len() != parents + 1 || pos.first().map(|p| p.to_u64()) != Some(0) {
        return false;
    }
    if pos.last().map(|p| p.to_u64()) != Some(crd.len() as u64) {
        return false;
    }
    segments_ok(pos, crd, size, nonunique, nonordered)
}

/// Elements per parallel task in the whole-array scans below.
const SCAN_CHUNK: usize = 1 << 18;

/// Segments `pos[i]..pos[i + 1]` of `crd` (`pos` starts at 0 and ends at `crd.len()`,
/// checked by the caller): positions never decrease, coordinates are below `size` and,
/// unless `nonordered`, increase (or, if `nonunique`, never decrease) inside each segment.
///
/// The order check runs over the whole coordinate array at once rather than segment by
/// segment, so it streams at memory speed whatever the segment lengths: count the places
/// where a coordinate does not exceed its predecessor ("descents"); every such place must
/// be the start of a segment, so the count must equal the count taken at segment starts
/// alone.
fn segments_ok<P: Index, C: Index>(
    pos: &[P],
    crd: &[C],
    size: u64,
    nonunique: bool,
    nonordered: bool,
) -> bool {
    if !never_decreases(pos) {
        return false;
    }
    let strict = !nonunique;
    let n = crd.len();
    // Per chunk of coordinates: its descents, minus those at segment starts inside the
    // chunk (found from the positions, which never decrease, and read while the chunk is
    // still in cache), and its largest coordinate.
    let (inside, max) = crate::par::map_tasks(n.div_ceil(SCAN_CHUNK), |t| {
        let (a, b) = (t * SCAN_CHUNK, ((t + 1) * SCAN_CHUNK).min(n));
        // Pairs (k - 1, k) for k in a.max(1)..b; `crd[0]` has no pair.
        let (d, max) = pair_scan(&crd[a.max(1) - 1..b - 1], &crd[a.max(1)..b], strict);
        let max = if a == 0 { max.max(crd[0]) } else { max };
        let first = if nonordered {
            pos.len()
        } else {
            pos.partition_point(|p| (p.to_u64() as usize) < a.max(1))
        };
        let mut at_starts = 0u32;
        let mut last = usize::MAX;
        for p in &pos[first..] {
            let k = p.to_u64() as usize;
            if k >= b {
                break;
            }
            if k != last {
                at_starts += descent(crd[k - 1], crd[k], strict) as u32;
                last = k;
            }
        }
        ((d - at_starts) as u64, max.to_u64())
    })
    .into_iter()
    .fold((0, 0), |(d1, m1), (d2, m2)| (d1 + d2, m1.max(m2)));
    if n == 0 {
        return true;
    }
    max < size && (nonordered || inside == 0)
}

/// Whether `y` does not come strictly (or, if not `strict`, at all) after `x`.
#[inline(always)]
fn descent<C: Index>(x: C, y: C, strict: bool) -> bool {
    if strict {
        y <= x
    } else {
        y < x
    }
}

/// Whether `v` never decreases.
fn never_decreases<P: Index>(v: &[P]) -> bool {
    let n = v.len().saturating_sub(1);
    let chunks = n.div_ceil(SCAN_CHUNK);
    crate::par::all_tasks(chunks, |t| {
        let (a, b) = (t * SCAN_CHUNK, ((t + 1) * SCAN_CHUNK).min(n));
        pair_scan(&v[a..b], &v[a + 1..b + 1], false).0 == 0
    })
}

/// Over pairs `(x[k], y[k])`: how many `y[k]` are descents after `x[k]`, and the largest
/// `y[k]` (`C::default()` if none). Compiled for AVX2 where the CPU has it: baseline
/// x86-64 (SSE2) has no 64-bit compare and no unsigned max, so there the loop runs two to
/// four times narrower.
fn pair_scan<C: Index>(x: &[C], y: &[C], strict: bool) -> (u32, C) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `pair_scan_avx2` needs AVX2, which the CPU has (checked just above).
        return unsafe { pair_scan_avx2(x, y, strict) };
    }
    pair_scan_plain(x, y, strict)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn pair_scan_avx2<C: Index>(x: &[C], y: &[C], strict: bool) -> (u32, C) {
    pair_scan_plain(x, y, strict)
}

/// The loop of [`pair_scan`], branch-free so the compiler vectorizes it; `x` and `y` are
/// chunks of at most [`SCAN_CHUNK`] elements, so the count cannot overflow.
#[inline(always)]
fn pair_scan_plain<C: Index>(x: &[C], y: &[C], strict: bool) -> (u32, C) {
    let (mut d, mut m) = (0u32, C::default());
    if strict {
        for (p, q) in x.iter().zip(y) {
            d += (q <= p) as u32;
            m = m.max(*q);
        }
    } else {
        for (p, q) in x.iter().zip(y) {
            d += (q < p) as u32;
            m = m.max(*q);
        }
    }
    (d, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain definition: every segment inside `crd`, below `size`, sorted as promised.
    fn naive(pos: &[u32], crd: &[u32], size: u64, nonunique: bool, nonordered: bool) -> bool {
        if pos.first() != Some(&0) || pos.last().map(|&p| p as usize) != Some(crd.len()) {
            return false;
        }
        pos.windows(2).all(|w| {
            w[0] <= w[1]
                && crd[w[0] as usize..w[1] as usize]
                    .iter()
                    .all(|&c| (c as u64) < size)
                && (nonordered
                    || crd[w[0] as usize..w[1] as usize].windows(2).all(|x| {
                        if nonunique {
                            x[0] <= x[1]
                        } else {
                            x[0] < x[1]
                        }
                    }))
        })
    }

    proptest! {
        #[test]
        fn fast_compressed_check_is_the_plain_definition(
            lens in proptest::collection::vec(0usize..5, 0..12),
            crd in proptest::collection::vec(0u32..8, 0..40),
            size in 1u64..9,
            nonunique in any::<bool>(),
            nonordered in any::<bool>(),
            shuffle in any::<bool>(),
        ) {
            let mut pos = vec![0u32];
            for l in &lens {
                pos.push(pos[pos.len() - 1] + *l as u32);
            }
            let n = *pos.last().unwrap() as usize;
            let mut crd: Vec<u32> = crd.into_iter().cycle().take(n).collect();
            if crd.len() < n {
                crd.resize(n, 0);
            }
            if !shuffle {
                // Mostly-valid inputs too: sort each segment.
                for w in pos.windows(2) {
                    crd[w[0] as usize..w[1] as usize].sort_unstable();
                }
            }
            let parents = (pos.len() - 1) as u64;
            prop_assert_eq!(
                compressed_ok(&pos, &crd, parents, size, nonunique, nonordered),
                naive(&pos, &crd, size, nonunique, nonordered)
            );
        }
    }
}

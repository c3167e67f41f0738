//! Conversions that start from a stored tensor, by direct paths where the source order
//! already gives the target's (a valid source is sorted and unique, so no sort is needed):
//! - CSR <-> CSC (any CSR-like pair with the dimensions swapped): the two-pass radix
//!   transpose of `transpose.rs`;
//! - CSR -> BSR / BSC-ordered blocks of the same outer dimension: each block row merges
//!   its rows' sorted coordinates into blocks, block rows in parallel;
//! - CSR -> DCSR / COO over the same dimensions (`derived.rs`): no sort at all.
//!
//! Every other pair goes through the tensor's coordinate list.

use rayon::prelude::*;
use sptk_encoding::Target;

use crate::budget::{self, Budget, Need};
use crate::convert::{
    convert_within, count_block_row, AutoChoice, BlockCounts, ConvertOptions, Converted,
    BLOCK_SIDES,
};
use crate::derived::{self, derived_like, Derived};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::fast::{csr_levels, csr_like};
use crate::index::{Index, IndexVec, IndexWidth};
use crate::layout::Layout;
use crate::plan::{self, Route, Step};
use crate::raw::{with_raw, Arith, Raw};
use crate::tensor::{LevelArrays, Tensor};

/// Converts a stored tensor into `target`, by a direct path where there is one.
pub fn convert_tensor(
    t: &Tensor,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    let budget = Budget::new(opts.memory_limit);
    // The entries bound the positions of every route: a direct step starts from a CSR-like
    // (unpadded) tensor, the others from its coordinate list.
    let nnz = t.entry_count() as u64;
    let target = &crate::fit_widths(target, t.dim_sizes(), nnz, opts.auto_widths)?;
    if let Some(mut converted) = direct(t, target, opts, &budget)? {
        // Direct paths apply no slices and keep the dimensions, and so the labels.
        converted.pruned = budget.pruned();
        return Ok(converted);
    }
    // The general path, over the tensor's coordinate list.
    let nnz = t.values().len() as u128;
    budget.charge(&[
        Need::new("coordinate list", nnz * t.dim_sizes().len() as u128, 64),
        Need::new(
            "coordinate list values",
            nnz,
            t.value_type().size() as u32 * 8,
        ),
    ])?;
    // The widths are fitted already.
    let opts = &ConvertOptions {
        auto_widths: crate::AutoWidths::default(),
        ..opts.clone()
    };
    let mut converted = convert_within(&t.to_entries(), target, opts, &budget)?;
    carry_labels(t, &mut converted.tensor)?;
    converted.route = std::mem::take(&mut converted.route).after(Step::Coordinates);
    Ok(converted)
}

/// Gives `out` (converted from `src` by the general path) the labels of `src`, through
/// the slices that conversion applied (`out`'s applied slices are this conversion's own).
fn carry_labels(src: &Tensor, out: &mut Tensor) -> Result<(), ConvertError> {
    for (dim, labels) in src.labels.iter().enumerate() {
        let Some(labels) = labels else { continue };
        let mut carried = Some(labels.clone());
        for s in out.slices.iter().filter(|s| s.dim == dim) {
            let sliced = carried
                .as_ref()
                .and_then(|l| l.slice(s.offset, s.size, s.stride))
                .ok_or_else(|| {
                    ConvertError::Encoding(format!(
                        "the slice of dimension {dim} runs past its {} labels",
                        labels.len()
                    ))
                })?;
            carried = Some(std::sync::Arc::new(sliced));
        }
        out.set_labels(dim, carried);
    }
    Ok(())
}

/// `enc` (DCSR / DCSC / COO over the same dimensions) from the CSR-like tensor `t`, whose
/// inner coordinates and values move into the result. None where a width might not hold
/// a value (the general path then reports it).
fn derive(
    t: Tensor,
    enc: &sptk_encoding::Encoding,
    kind: Derived,
    budget: &Budget,
) -> Result<Option<Converted>, ConvertError> {
    let layout = Layout::new(enc, t.dim_sizes())?;
    let nnz = t.values.len() as u64;
    if !derived::widths_hold(&layout, nnz) {
        return Ok(None);
    }
    // Only the new arrays: the rest are the CSR's (re-typed if the width differs).
    let (pb, cb) = (layout.pos_width.bits(), layout.crd_width.bits());
    let outer = u128::from(layout.levels[0].size.min(nnz));
    let mut needs = match kind {
        Derived::Doubly => vec![
            Need::new("crd[0]", outer, cb),
            Need::new("pos[1]", outer + 1, pb),
        ],
        Derived::Coo { soa } => {
            let per = if soa { 1 } else { 2 };
            vec![Need::new("crd[0]", u128::from(nnz) * per, cb)]
        }
    };
    if t.levels[1].crd.as_ref().map(IndexVec::width) != Some(layout.crd_width) {
        needs.push(Need::new(
            "crd[1] at the target's width",
            u128::from(nnz),
            cb,
        ));
    }
    budget.charge(&needs)?;
    let pos = positions(&t).into_owned();
    let Tensor {
        mut levels,
        values,
        slices,
        labels,
        ..
    } = t;
    let crd = levels
        .get_mut(1)
        .and_then(|l| l.crd.take())
        .unwrap_or_else(|| IndexVec::new(IndexWidth::W64));
    let levels = derived::derive_levels(kind, &pos, crd, &layout);
    Ok(Some(Converted {
        tensor: Tensor {
            encoding: enc.clone(),
            layout,
            levels,
            values,
            slices,
            labels,
        },
        choice: None,
        pruned: 0,
        route: Route::of(&[Step::Derive]),
    }))
}

/// Converts a coordinate list through CSR where the planner says so ([`plan::csr_first`]):
/// a counting-sort scatter into CSR, then the direct path from it. None where that route
/// does not apply.
pub(crate) fn via_csr<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    target: &Target,
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Option<Converted>, ConvertError> {
    let dims = entries.dim_sizes();
    let nnz = entries.len() as u64;
    let Some((a, b)) = plan::csr_first(target, dims, nnz, ar.ty, opts) else {
        return Ok(None);
    };
    let derived = target.encoding().and_then(|e| derived_like(e, a, b));
    if let (Some(enc), None) = (target.encoding(), derived) {
        // The output before the intermediate: a target that cannot be held is refused
        // naming its own arrays. (Derived targets reuse the intermediate's.)
        let layout = Layout::new(enc, dims)?;
        budget.charge_layout(&layout, nnz, ar.bits())?;
    }
    let t = csr_of(entries, (vals, ar), (a, b), opts.drop_zeros, budget)?;
    // Zeros are already dropped.
    let rest = ConvertOptions {
        drop_zeros: false,
        ..opts.clone()
    };
    let done = if let (Some(enc), Some(kind)) = (target.encoding(), derived) {
        // The intermediate CSR is this conversion's own: its arrays move into the result.
        derive(t, enc, kind, budget)?
    } else {
        direct(&t, target, &rest, budget)?
    };
    Ok(done.map(|mut d| {
        d.route = std::mem::take(&mut d.route).after(Step::Scatter);
        d
    }))
}

/// CSR-like `(a : dense, b : compressed)` of a coordinate list, with 32-bit coordinates
/// where they fit.
fn csr_of<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    (a, b): (usize, usize),
    drop_zeros: bool,
    budget: &Budget,
) -> Result<Tensor, ConvertError> {
    let enc = plan::intermediate_csr(entries.dim_sizes(), (a, b));
    let layout = Layout::new(&enc, entries.dim_sizes())?;
    // Alive beside the target's arrays: counted under its own names.
    let (nnz, vbits) = (entries.len() as u64, ar.bits());
    let work = crate::fast::work_width(entries.dim_sizes()[b], layout.crd_width);
    let rows = entries.dim_sizes()[a];
    let mut needs = budget::layout_needs(&layout, nnz, vbits);
    needs.extend(budget::counting_sort_needs(rows, nnz, work, &layout, vbits));
    let needs: Vec<Need> = needs
        .into_iter()
        .map(|n| n.prefixed("intermediate CSR "))
        .collect();
    budget.charge(&needs)?;
    let (levels, out) = crate::fast::build_csr(entries, (vals, ar), a, b, &layout, drop_zeros)?;
    Ok(Tensor {
        encoding: enc,
        layout,
        levels,
        values: ar.wrap(out),
        slices: Vec::new(),
        labels: Vec::new(),
    })
}

/// Runs the planner's direct step from the valid stored tensor `t` ([`plan::stored_step`]),
/// or returns None where it has none.
fn direct(
    t: &Tensor,
    target: &Target,
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Option<Converted>, ConvertError> {
    let nnz = t.values().len() as u64;
    let source = (&t.encoding, &t.layout);
    let Some(step) = plan::stored_step(source, target, (t.value_type(), nnz), opts)? else {
        return Ok(None);
    };
    let route = Route::of(&[step]);
    // The automatic targets choose from a CSR source: K is its longest row, the block the
    // one that stores the fewest bytes.
    let (enc, choice) = match target {
        Target::Fixed(enc) => (enc.clone(), None),
        Target::AutoEll {
            pos_width,
            crd_width,
        } => {
            let k = crate::padded::longest_row(&positions(t)).max(1);
            let mut enc = sptk_encoding::ell(k);
            enc.pos_width = *pos_width;
            enc.crd_width = *crd_width;
            (enc, Some(AutoChoice::Ell { k }))
        }
        Target::AutoBlock {
            pos_width,
            crd_width,
            ..
        } => {
            let widths = (*pos_width, *crd_width);
            let (r, c, bytes) = choose_block_csr(t, widths)?;
            let mut enc = sptk_encoding::bsr(r, c);
            enc.pos_width = *pos_width;
            enc.crd_width = *crd_width;
            let choice = AutoChoice::Block {
                rows: r,
                cols: c,
                bytes,
            };
            (enc, Some(choice))
        }
    };
    let (a, b) = csr_like(&t.encoding, &t.layout).unwrap_or((0, 1));
    let layout = Layout::new(&enc, t.dim_sizes())?;
    let vbits = t.value_type().size() as u32 * 8;
    let charge_output = || budget.charge_layout(&layout, nnz, vbits);
    let (levels, values) = match step {
        Step::Share => {
            // Already in the target encoding: no copy for stored files.
            return Ok(Some(Converted {
                tensor: t.clone(),
                choice: None,
                pruned: 0,
                route,
            }));
        }
        Step::Derive => {
            let Some(kind) = derived_like(&enc, a, b) else {
                return Ok(None);
            };
            // Shares the arrays of a stored tensor; copies those of one in memory.
            return derive(t.clone(), &enc, kind, budget);
        }
        Step::BlockMerge => {
            let Some((r, c, inner_first)) = bsr_like(&enc, a, b) else {
                return Ok(None);
            };
            charge_output()?;
            budget.charge(&[Need::new("scratch: block columns", nnz, 64)])?;
            let shape = (r, c, inner_first);
            with_raw!(t.values(), (v, ar) => blocks_values(t, (v, &ar), &layout, shape, budget)?)
        }
        Step::Pad => {
            charge_output()?;
            with_raw!(t.values(), (v, ar) => ell_values(t, (v, &ar), &layout)?)
        }
        Step::Groups => {
            let Some((n, m)) = crate::padded::nm_like(&enc, a, b) else {
                return Ok(None);
            };
            charge_output()?;
            let shape = (n, m);
            let built = with_raw!(t.values(), (v, ar) => structured_values(t, (v, &ar), &layout, shape, opts.prune)?);
            let Some(built) = built else {
                return Ok(None);
            };
            if opts.prune {
                // A valid CSR holds each coordinate once: what n:m keeps of its nonzeros
                // tells how many were pruned.
                let nonzeros = |v: &crate::ValueVec| with_raw!(v, (x, ar) => count_nonzero(x, &ar));
                budget.add_pruned(nonzeros(t.values()).saturating_sub(nonzeros(&built.1)));
            }
            built
        }
        Step::Transpose => {
            charge_output()?;
            let inner = u128::from(layout.dim_sizes[b]);
            let mut needs = vec![Need::new("scratch: rows inside column blocks", nnz, 16)];
            if layout.pos_width != IndexWidth::W64 {
                needs.push(Need::new(
                    "scratch: positions before narrowing",
                    inner + 1,
                    64,
                ));
            }
            budget.charge(&needs)?;
            with_raw!(t.values(), (v, ar) => transpose_values(t, (v, &ar), &layout)?)
        }
        Step::Scatter | Step::Coordinates | Step::General => return Ok(None),
    };
    Ok(Some(Converted {
        tensor: Tensor {
            encoding: enc,
            layout,
            levels,
            values,
            slices: t.slices.clone(),
            labels: t.labels.clone(),
        },
        choice,
        pruned: 0,
        route,
    }))
}

/// Transposes a valid CSR-like tensor into the CSR-like `enc` with the dimensions swapped
/// (see `transpose.rs`).
fn transpose_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let inner = usize::try_from(t.layout.levels[1].size)
        .map_err(|_| ConvertError::TooLarge("too many columns".into()))?;
    let rows = pos.len().saturating_sub(1) as u64;
    // Build the new coordinates in the target's width where it is 64 bits (no widening
    // copy at the end), else in 32 bits (narrowed at the end if the target is narrower).
    let wide = crate::fast::work_width(rows, layout.crd_width) == crate::IndexWidth::W64;
    macro_rules! go {
        ($c:expr) => {
            if !wide {
                let x = crate::transpose::transpose::<_, u32, V>(&pos, $c, vals, inner)?;
                (csr_levels(x.pos, x.crd, layout)?, ar.wrap(x.val))
            } else {
                let x = crate::transpose::transpose::<_, u64, V>(&pos, $c, vals, inner)?;
                (csr_levels(x.pos, x.crd, layout)?, ar.wrap(x.val))
            }
        };
    }
    Ok(match crd {
        IndexVec::U16(c) => go!(&c[..]),
        IndexVec::U32(c) => go!(&c[..]),
        IndexVec::U64(c) => go!(&c[..]),
        other => go!(&other.to_u64_vec()),
    })
}

/// Runs `$body` with `$c` bound to level 1's coordinates as a typed slice.
macro_rules! with_crd {
    ($t:expr, $c:ident => $body:expr) => {{
        let crd = $t.levels[1]
            .crd
            .as_ref()
            .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
        match crd {
            IndexVec::U8(x) => {
                let $c: &[u8] = x;
                $body
            }
            IndexVec::U16(x) => {
                let $c: &[u16] = x;
                $body
            }
            IndexVec::U32(x) => {
                let $c: &[u32] = x;
                $body
            }
            IndexVec::U64(x) => {
                let $c: &[u64] = x;
                $body
            }
            other => {
                let wide = other.to_u64_vec();
                let $c: &[u64] = &wide;
                $body
            }
        }
    }};
}

/// A valid CSR into ELL (see `padded.rs`).
fn ell_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let k = layout.levels[0].size;
    let (levels, out) = with_crd!(t, c => crate::padded::ell(&pos, c, vals, k, layout)?);
    Ok((levels, ar.wrap(out)))
}

fn count_nonzero<V: Raw>(v: &[V], ar: &Arith<V>) -> u64 {
    v.par_iter().filter(|&&x| !ar.is_zero(x)).count() as u64
}

/// A valid CSR into n:m (see `padded.rs`); None where the general path must decide.
fn structured_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
    (n, m): (u32, u32),
    prune: bool,
) -> Result<Option<(Vec<LevelArrays>, crate::ValueVec)>, ConvertError> {
    let pos = positions(t);
    let cols = layout.levels[1].size.saturating_mul(u64::from(m));
    let built = with_crd!(t, c => crate::padded::structured(&pos, c, (vals, ar), cols, n, m, prune, layout)?);
    Ok(built.map(|(levels, out)| (levels, ar.wrap(out))))
}

/// Level 1's positions as `u64`: borrowed when stored so (no copy), else widened.
fn positions(t: &Tensor) -> std::borrow::Cow<'_, [u64]> {
    match &t.levels[1].pos {
        Some(IndexVec::U64(p)) => std::borrow::Cow::Borrowed(&p[..]),
        Some(p) => std::borrow::Cow::Owned(p.to_u64_vec()),
        None => std::borrow::Cow::Owned(Vec::new()),
    }
}

fn width_err(
    array: &'static str,
    field: &'static str,
) -> impl Fn(crate::index::WidthOverflow) -> ConvertError {
    move |o| ConvertError::Width {
        array: array.to_string(),
        value: o.value,
        field,
        bits: o.width.bits(),
    }
}

/// `(R, C)` if `enc` is BSR over the source's (outer `a`, inner `b`) dimensions:
/// `(a floordiv R : dense, b floordiv C : compressed, a mod R : dense, b mod C : dense)`.
pub(crate) fn bsr_like(
    enc: &sptk_encoding::Encoding,
    a: usize,
    b: usize,
) -> Option<(u64, u64, bool)> {
    use sptk_encoding::{LevelExpr as E, LevelFormat as F};
    if enc.levels.len() != 4 || enc.dim_rank() != 2 {
        return None;
    }
    let l = &enc.levels;
    let plain = l.iter().all(|s| !s.props.nonunique && !s.props.nonordered);
    let formats = [F::Dense, F::Compressed, F::Dense, F::Dense];
    if !plain || l.iter().zip(formats).any(|(s, f)| s.format != f) {
        return None;
    }
    let (E::FloorDiv(d0, r), E::FloorDiv(d1, c)) = (&l[0].expr, &l[1].expr) else {
        return None;
    };
    if (*d0, *d1) != (a, b) {
        return None;
    }
    // Inside a block: `a mod r` then `b mod c` (BSR), or the other way round (BSC,
    // whose blocks are row-major while the block grid is column-major).
    match (&l[2].expr, &l[3].expr) {
        (E::Mod(x, r2), E::Mod(y, c2)) if (*x, *y) == (a, b) && (r2, c2) == (r, c) => {
            Some((*r, *c, false))
        }
        (E::Mod(x, c2), E::Mod(y, r2)) if (*x, *y) == (b, a) && (r2, c2) == (r, c) => {
            Some((*r, *c, true))
        }
        _ => None,
    }
}

fn blocks_values<V: Raw>(
    t: &Tensor,
    (vals, ar): (&[V], &Arith<V>),
    layout: &Layout,
    (r, c, inner_first): (u64, u64, bool),
    budget: &Budget,
) -> Result<(Vec<LevelArrays>, crate::ValueVec), ConvertError> {
    let pos = positions(t);
    let crd = t.levels[1]
        .crd
        .as_ref()
        .ok_or_else(|| ConvertError::Invalid("crd[1] missing".into()))?;
    let shape = (
        layout.levels[0].size as usize,
        r as usize,
        c as usize,
        inner_first,
    );
    let (bpos, bcrd, bvals) = match crd {
        IndexVec::U32(x) => blocks::<u32, V>(&pos, x, vals, shape, budget)?,
        IndexVec::U64(x) => blocks::<u64, V>(&pos, x, vals, shape, budget)?,
        other => blocks::<u64, V>(&pos, &other.to_u64_vec(), vals, shape, budget)?,
    };
    if let Some(e) = crate::fast::first_overflow(&bpos, &bcrd, layout, 1) {
        return Err(e);
    }
    let pos =
        IndexVec::from_vec_u64(bpos, layout.pos_width).map_err(width_err("pos[1]", "posWidth"))?;
    let crd =
        IndexVec::from_vec_u64(bcrd, layout.crd_width).map_err(width_err("crd[1]", "crdWidth"))?;
    let none = || LevelArrays {
        pos: None,
        crd: None,
    };
    let levels = vec![
        none(),
        LevelArrays {
            pos: Some(pos),
            crd: Some(crd),
        },
        none(),
        none(),
    ];
    Ok((levels, ar.wrap(bvals)))
}

/// `pos`, `crd` and the values of a block layout.
type BlockArrays<V> = (Vec<u64>, Vec<u64>, Vec<V>);

/// Block rows per parallel task.
const BLOCK_ROWS_PER_TASK: usize = 1024;

/// CSR (`pos`, `crd`, `vals`, sorted and unique) into `r x c` blocks: `pos`, `crd` over
/// block rows and the blocks' values, zeros elsewhere; inside each block outer-major, or
/// inner-major with `inner_first` (BSC from CSC).
fn blocks<C: Index, V: Raw>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    (block_rows, r, c, inner_first): (usize, usize, usize, bool),
    budget: &Budget,
) -> Result<BlockArrays<V>, ConvertError> {
    if c.is_power_of_two() {
        blocks_by::<C, V, true>(
            pos,
            crd,
            vals,
            (block_rows, r, Split::new(c as u64), inner_first),
            budget,
        )
    } else {
        blocks_by::<C, V, false>(
            pos,
            crd,
            vals,
            (block_rows, r, Split::new(c as u64), inner_first),
            budget,
        )
    }
}

/// A column as (block column, column inside the block): a shift and a mask when the block
/// width is a power of two (`POW2`), as it nearly always is, else a division.
#[derive(Clone, Copy)]
struct Split<const POW2: bool> {
    c: u64,
    shift: u32,
}

impl<const POW2: bool> Split<POW2> {
    fn new(c: u64) -> Self {
        Split {
            c,
            shift: c.trailing_zeros(),
        }
    }

    #[inline(always)]
    fn block(self, x: u64) -> u64 {
        if POW2 {
            x >> self.shift
        } else {
            x / self.c
        }
    }

    #[inline(always)]
    fn inside(self, x: u64) -> u64 {
        if POW2 {
            x & (self.c - 1)
        } else {
            x % self.c
        }
    }
}

fn blocks_by<C: Index, V: Raw, const POW2: bool>(
    pos: &[u64],
    crd: &[C],
    vals: &[V],
    (block_rows, r, split, inner_first): (usize, usize, Split<POW2>, bool),
    budget: &Budget,
) -> Result<BlockArrays<V>, ConvertError> {
    let changed = || ConvertError::Invalid("blocks: the source changed while read".into());
    let rows = pos.len().saturating_sub(1);
    let row_range = |br: usize| (br * r).min(rows)..((br + 1) * r).min(rows);
    let tasks: Vec<(usize, usize)> = (0..block_rows)
        .step_by(BLOCK_ROWS_PER_TASK)
        .map(|b| (b, (b + BLOCK_ROWS_PER_TASK).min(block_rows)))
        .collect();
    // Pass 1: per task, its block rows' block columns (one list) and where each ends.
    let lists: Vec<(Vec<u64>, Vec<usize>)> = tasks
        .par_iter()
        .map(|&(b0, b1)| {
            let (mut cols, mut ends) = (Vec::new(), Vec::with_capacity(b1 - b0));
            let mut scratch = (Vec::new(), Vec::new());
            for br in b0..b1 {
                block_columns(pos, crd, row_range(br), split, &mut scratch).ok_or_else(changed)?;
                cols.extend_from_slice(&scratch.0);
                ends.push(cols.len());
            }
            Ok((cols, ends))
        })
        .collect::<Result<_, ConvertError>>()?;
    let mut bpos = Vec::with_capacity(block_rows + 1);
    bpos.push(0u64);
    let mut base = 0u64;
    for (cols, ends) in &lists {
        bpos.extend(ends.iter().map(|&e| base + e as u64));
        base += cols.len() as u64;
    }
    let nblocks = base as usize;
    let bsize = r
        .checked_mul(split.c as usize)
        .ok_or_else(|| ConvertError::TooLarge("block too large".into()))?;
    let total = nblocks
        .checked_mul(bsize)
        .ok_or_else(|| ConvertError::TooLarge("the values array would be too large".into()))?;
    // The blocks are known now: count their padding before allocating it.
    budget.charge(&[
        Need::new("crd[1]", nblocks as u64, 64),
        Need::new("values", total as u64, 8 * std::mem::size_of::<V>() as u32),
    ])?;
    let mut bcrd = crate::alloc::big_zeroed::<u64>(nblocks)?;
    let mut bvals = crate::fast::big_zeroed::<V>(total)?;
    // Pass 2: each task copies its block columns and fills its blocks: disjoint slices.
    let mut work = Vec::with_capacity(tasks.len());
    let (mut crest, mut vrest): (&mut [u64], &mut [V]) = (&mut bcrd, &mut bvals);
    for (&(b0, b1), (cols, ends)) in tasks.iter().zip(&lists) {
        let (cc, ct) = crest.split_at_mut(cols.len());
        let (vv, vt) = vrest.split_at_mut(cols.len() * bsize);
        work.push((b0..b1, cols, ends, cc, vv));
        (crest, vrest) = (ct, vt);
    }
    work.into_par_iter()
        .try_for_each(|(brs, cols, ends, cc, vv)| {
            cc.copy_from_slice(cols);
            let mut first = 0;
            for (br, &end) in brs.zip(ends) {
                let cols = &cols[first..end];
                let blocks = &mut vv[first * bsize..end * bsize];
                for (ii, row) in row_range(br).enumerate() {
                    let (q0, q1) = (pos[row] as usize, pos[row + 1] as usize);
                    let (Some(cs), Some(vs)) = (crd.get(q0..q1), vals.get(q0..q1)) else {
                        return Err(changed());
                    };
                    let mut b = 0usize;
                    for (&x, &v) in cs.iter().zip(vs) {
                        let x = x.to_u64();
                        let jb = split.block(x);
                        while cols.get(b).is_some_and(|&k| k < jb) {
                            b += 1;
                        }
                        let at = if inner_first {
                            b * bsize + split.inside(x) as usize * r + ii
                        } else {
                            b * bsize + ii * split.c as usize + split.inside(x) as usize
                        };
                        match (cols.get(b), blocks.get_mut(at)) {
                            (Some(&k), Some(slot)) if k == jb => *slot = v,
                            _ => return Err(changed()),
                        }
                    }
                }
                first = end;
            }
            Ok(())
        })?;
    Ok((bpos, bcrd, bvals))
}

/// The distinct column blocks of `rows`, ascending, into `out`: each row's coordinates are
/// sorted, so the rows' block lists are merged (no sort); `tmp` is scratch. `None` if a
/// row's positions are out of range (only a source changed under us has that).
fn block_columns<C: Index, const POW2: bool>(
    pos: &[u64],
    crd: &[C],
    rows: std::ops::Range<usize>,
    split: Split<POW2>,
    (out, tmp): &mut (Vec<u64>, Vec<u64>),
) -> Option<()> {
    out.clear();
    for row in rows {
        let seg = crd.get(pos[row] as usize..pos[row + 1] as usize)?;
        let mut blocks = seg.iter().map(|x| split.block(x.to_u64())).peekable();
        if out.is_empty() {
            for b in blocks {
                if out.last() != Some(&b) {
                    out.push(b);
                }
            }
            continue;
        }
        tmp.clear();
        let mut i = 0;
        while let Some(&b) = blocks.peek() {
            match out.get(i) {
                Some(&o) if o < b => {
                    tmp.push(o);
                    i += 1;
                }
                Some(&o) if o == b => {
                    blocks.next();
                }
                _ => {
                    if tmp.last() != Some(&b) {
                        tmp.push(b);
                    }
                    blocks.next();
                }
            }
        }
        tmp.extend_from_slice(&out[i..]);
        std::mem::swap(out, tmp);
    }
    Some(())
}

/// Chooses the BSR block for a valid CSR, as the coordinate path does.
fn choose_block_csr(t: &Tensor, widths: (u8, u8)) -> Result<(u64, u64, u64), ConvertError> {
    let pos = positions(t);
    let counts = with_crd!(t, crd => count_blocks(&pos, crd)?);
    Ok(crate::convert::choose_block(
        t.dim_sizes(),
        t.value_type().size() as u64,
        false,
        widths,
        &counts,
    ))
}

/// Blocks of every candidate shape holding an entry of a valid CSR: each block row's
/// coordinates are one stretch of `crd`, counted in a scratch of its own size, block rows
/// in parallel. Time and memory in proportion to the entries.
fn count_blocks<C: Index>(pos: &[u64], crd: &[C]) -> Result<BlockCounts, ConvertError> {
    let changed = || ConvertError::Invalid("blocks: the source changed while read".into());
    let rows = pos.len().saturating_sub(1) as u64;
    let mut counts = [[0u64; 4]; 4];
    for (a, &r) in BLOCK_SIDES.iter().enumerate() {
        let block_rows = rows.div_ceil(r);
        let per_task = BLOCK_ROWS_PER_TASK as u64;
        counts[a] = (0..block_rows.div_ceil(per_task))
            .into_par_iter()
            .map_init(Vec::new, |cols, task| {
                let mut counts = [0u64; 4];
                let b0 = task * per_task;
                for br in b0..(b0 + per_task).min(block_rows) {
                    let at = |row: u64| pos.get(row.min(rows) as usize).copied();
                    let (Some(lo), Some(hi)) = (at(br * r), at((br + 1) * r)) else {
                        return Err(changed());
                    };
                    let seg = crd.get(lo as usize..hi as usize).ok_or_else(changed)?;
                    cols.clear();
                    cols.extend(seg.iter().map(|x| x.to_u64()));
                    count_block_row(cols, &mut counts);
                }
                Ok(counts)
            })
            .try_reduce(
                || [0u64; 4],
                |x, y| Ok(std::array::from_fn(|i| x[i] + y[i])),
            )?;
    }
    Ok(counts)
}

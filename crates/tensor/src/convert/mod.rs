//! Conversion into any encoding, from a coordinate list ([`convert`]) or a stored tensor
//! ([`convert_tensor`]). The planner (`plan.rs`) decides the route; this module runs it,
//! one file per step:
//!
//! - `scatter.rs`: coordinates into CSR / CSC by a parallel counting sort; `parts.rs`: the
//!   same straight from a re-readable text file, with no coordinate list; `stretches.rs`:
//!   that build out of core, its output appended to a sink a stretch of rows at a time;
//! - from a valid CSR / CSC, whose rows are sorted and unique so that nothing needs a sort:
//!   `transpose.rs` (CSR <-> CSC), `derive.rs` (DCSR, DCSC, COO), `blocks.rs` (BSR, BSC),
//!   `padded.rs` (ELL, n:m);
//! - `general.rs`: everything else (any rank, slices, value types, kept duplicates): sort
//!   into level order (`order.rs`) and build level by level (`build.rs`), or, where every
//!   level is compressed, count and fill the levels straight from the sorted keys
//!   (`tree.rs`);
//! - `widths.rs`: index widths chosen for the data.
//!
//! Steps read their sources through `csr.rs` and never call back into this module.

use sptk_encoding::{Encoding, Target};

use crate::budget::{self, Budget, Need};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::index::IndexWidth;
use crate::layout::Layout;
use crate::raw::{with_raw, Arith, Raw};
use crate::tensor::Tensor;
use crate::value::ValueType;

#[macro_use]
mod csr;
mod blocks;
pub(crate) mod build;
mod derive;
mod general;
pub(crate) mod order;
pub(crate) mod padded;
mod parts;
pub(crate) mod plan;
pub(crate) mod scatter;
mod sizing;
mod stretches;
mod transpose;
mod tree;
mod widths;

pub use parts::{convert_parts, EntryParts};
pub use plan::{csr_route, plan, scatter_into, Plan, Route, Source, Step};
pub use sizing::{size_plan, OutOfCoreSize, SizePlan};
pub use stretches::{
    convert_parts_out_of_core, ArrayKind, ArraySink, OutOfCore, OutOfCoreError, OutOfCoreFailure,
    OutputPlan, PassTimes, PlannedArray,
};
pub use widths::{fit_widths, narrowest_width, AutoWidths};

use blocks::{blocks_values, choose_block_csr};
use csr::positions;
use derive::derive;
use general::general;
use padded::{count_nonzero, ell_values, structured_values};
use plan::Direct;
use transpose::transpose_values;

/// What a conversion does beyond building the target layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvertOptions {
    /// Remove entries whose value is zero (after summing duplicates).
    pub drop_zeros: bool,
    /// Keep duplicate coordinates instead of summing them (COO or nonunique targets).
    pub keep_duplicates: bool,
    /// n:m: keep the n entries of largest magnitude of an overfull group.
    pub prune: bool,
    /// Convert values to this type.
    pub dtype: Option<ValueType>,
    /// Values of the `?` in the encoding's dimension slices, in text order.
    pub slice_values: Vec<u64>,
    /// The most memory, in bytes, that the conversion may hold (its output arrays and the
    /// scratch of its route; see [`crate::default_memory_limit`] for `None`). A conversion
    /// that would need more is refused before its large allocations.
    pub memory_limit: Option<u64>,
    /// Index widths to choose for the data (the narrowest that hold the arrays), in place
    /// of the target's `posWidth` / `crdWidth`; see [`crate::fit_widths`].
    pub auto_widths: crate::AutoWidths,
}

/// Which block or K an automatic target chose, for reporting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoChoice {
    /// `BSR` / `BSC` alone: the block shape chosen and the bytes it stores.
    Block {
        /// Block rows.
        rows: u64,
        /// Block columns.
        cols: u64,
        /// Bytes of values, coordinates and positions with that block.
        bytes: u64,
    },
    /// `ELL` alone: K, the longest row (at least 1).
    Ell {
        /// Number of slices.
        k: u64,
    },
}

/// The result of a conversion: the tensor and, for `BSR`/`BSC`/`ELL` alone, the choice made.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The tensor.
    pub tensor: Tensor,
    /// The block shape or K chosen by an automatic target.
    pub choice: Option<AutoChoice>,
    /// n:m with [`ConvertOptions::prune`]: nonzeros dropped from overfull groups.
    pub pruned: u64,
    /// The steps the conversion took (what [`crate::plan`] foretells).
    pub route: Route,
}

/// Converts a coordinate list into `target`.
pub fn convert(
    entries: &Entries,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    convert_within(entries, target, opts, &Budget::new(opts.memory_limit))
}

/// [`convert`] counting its memory in `budget`, which may already hold what the caller
/// keeps alive during the conversion.
pub(crate) fn convert_within(
    entries: &Entries,
    target: &Target,
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Converted, ConvertError> {
    let fitted = fitted(entries, target, opts)?;
    let target = &fitted;
    let direct =
        with_raw!(entries.values(), (v, ar) => via_csr(entries, (v, &ar), target, opts, budget))?;
    let mut done = match direct {
        Some(done) => done,
        None => general(entries, target, opts, budget)?,
    };
    done.pruned = budget.pruned();
    Ok(done)
}

/// Converts into a fixed encoding (no automatic choice).
pub fn convert_to(
    entries: &Entries,
    encoding: &Encoding,
    opts: &ConvertOptions,
) -> Result<Tensor, ConvertError> {
    Ok(convert(entries, &Target::Fixed(encoding.clone()), opts)?.tensor)
}

/// [`convert`] by the general path alone (sort into level order, then build the levels),
/// never through CSR: the oracle that tests and benchmarks compare the direct paths with.
#[doc(hidden)]
pub fn convert_general(
    entries: &Entries,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    let budget = Budget::new(opts.memory_limit);
    let mut done = general(entries, &fitted(entries, target, opts)?, opts, &budget)?;
    done.pruned = budget.pruned();
    Ok(done)
}

/// `target` with the widths [`ConvertOptions::auto_widths`] chooses for `entries`.
fn fitted(
    entries: &Entries,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Target, ConvertError> {
    crate::fit_widths(
        target,
        entries.dim_sizes(),
        entries.len() as u64,
        opts.auto_widths,
    )
}

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
    attach_labels(&mut converted.tensor, &t.labels)?;
    converted.route = std::mem::take(&mut converted.route).after(Step::Coordinates);
    Ok(converted)
}

/// The levels of `t` with every index array at `layout`'s widths (each checked to fit).
fn rewidth_levels(t: &Tensor, layout: &Layout) -> Result<Vec<crate::LevelArrays>, ConvertError> {
    // Errors name the array and the field as the level builders do (`crd[0]: value 273
    // does not fit crdWidth = 8 (max 255)`).
    let rewidth = |v: &Option<crate::IndexVec>, w: IndexWidth, array: String, field| {
        v.as_ref()
            .map(|v| v.to_width(w))
            .transpose()
            .map_err(|o| ConvertError::Width {
                array,
                value: o.value,
                field,
                bits: o.width.bits(),
            })
    };
    t.levels
        .iter()
        .enumerate()
        .map(|(l, arrays)| {
            Ok(crate::LevelArrays {
                pos: rewidth(
                    &arrays.pos,
                    layout.pos_width,
                    format!("pos[{l}]"),
                    "posWidth",
                )?,
                crd: rewidth(
                    &arrays.crd,
                    layout.crd_width,
                    format!("crd[{l}]"),
                    "crdWidth",
                )?,
            })
        })
        .collect()
}

/// [`convert_tensor`] of a tensor the caller no longer needs: where the route keeps its
/// arrays (DCSR, DCSC and COO derived from a CSR or CSC over the same dimensions), they
/// move into the result instead of being copied.
pub fn convert_tensor_owned(
    t: Tensor,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    let nnz = t.entry_count() as u64;
    let fitted = crate::fit_widths(target, t.dim_sizes(), nnz, opts.auto_widths)?;
    let source = (&t.encoding, &t.layout);
    let step = plan::stored_step(source, &fitted, (t.value_type(), nnz), opts)?;
    match (step, fitted.encoding()) {
        (Some(Direct::Share), _) => {
            return Ok(Converted {
                tensor: t,
                choice: None,
                pruned: 0,
                route: Route::of(&[Step::Share]),
            })
        }
        (Some(Direct::Rewidth), Some(enc)) => {
            let layout = Layout::new(enc, t.dim_sizes())?;
            let vbits = t.value_type().size() as u32 * 8;
            Budget::new(opts.memory_limit).charge_layout(&layout, nnz, vbits)?;
            let levels = rewidth_levels(&t, &layout)?;
            return Ok(Converted {
                tensor: Tensor {
                    encoding: enc.clone(),
                    layout,
                    levels,
                    values: t.values,
                    slices: t.slices,
                    labels: t.labels,
                },
                choice: None,
                pruned: 0,
                route: Route::of(&[Step::Rewidth]),
            });
        }
        _ => {}
    }
    if let (Some(Direct::Derive(kind)), Some(enc)) = (step, fitted.encoding()) {
        let budget = Budget::new(opts.memory_limit);
        match derive(t, enc, kind, &budget)? {
            Ok(converted) => return Ok(converted),
            Err(t) => return convert_tensor(&t, target, opts),
        }
    }
    convert_tensor(&t, target, opts)
}

/// Gives `out`, converted from a source whose dimensions carry `labels` (a stored tensor,
/// or a reader's coordinate list with row and column names), those labels through the
/// slices the conversion applied (`out`'s applied slices are that conversion's own).
///
/// # Errors
/// A slice that runs past its dimension's labels, or labels that do not number a
/// dimension's coordinates (or name one the tensor does not have).
pub fn attach_labels(
    out: &mut Tensor,
    labels: &[Option<std::sync::Arc<crate::Labels>>],
) -> Result<(), ConvertError> {
    for (dim, labels) in labels.iter().enumerate() {
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
        let size = out.dim_sizes().get(dim).copied();
        if carried.as_ref().map(|l| l.len() as u64) != size {
            return Err(ConvertError::Encoding(format!(
                "dimension {dim} has {} labels for {} coordinates",
                carried.as_ref().map_or(0, |l| l.len()),
                size.map_or_else(|| "no".to_string(), |s| s.to_string())
            )));
        }
        out.set_labels(dim, carried);
    }
    Ok(())
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
    let Some(via) = plan::csr_first(target, dims, nnz, ar.ty, opts) else {
        return Ok(None);
    };
    let derived = via.derived;
    if let (Some(enc), None) = (target.encoding(), derived) {
        // The output before the intermediate: a target that cannot be held is refused
        // naming its own arrays. (Derived targets reuse the intermediate's.)
        let layout = Layout::new(enc, dims)?;
        budget.charge_layout(&layout, nnz, ar.bits())?;
    }
    let t = csr_of(entries, (vals, ar), via, target, opts.drop_zeros, budget)?;
    // Zeros are already dropped.
    let rest = ConvertOptions {
        drop_zeros: false,
        ..opts.clone()
    };
    let done = if let (Some(enc), Some(kind)) = (target.encoding(), derived) {
        // The intermediate CSR is this conversion's own: its arrays move into the result.
        derive(t, enc, kind, budget)?.ok()
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
    via: plan::ViaCsr,
    target: &Target,
    drop_zeros: bool,
    budget: &Budget,
) -> Result<Tensor, ConvertError> {
    let (a, b) = via.outer;
    let enc = plan::intermediate_csr(entries.dim_sizes(), via, target);
    let layout = Layout::new(&enc, entries.dim_sizes())?;
    // Alive beside the target's arrays: counted under its own names.
    let (nnz, vbits) = (entries.len() as u64, ar.bits());
    let work = crate::convert::scatter::work_width(entries.dim_sizes()[b], layout.crd_width);
    let rows = entries.dim_sizes()[a];
    let mut needs = budget::layout_needs(&layout, nnz, vbits);
    needs.extend(budget::counting_sort_needs(rows, nnz, work, &layout, vbits));
    let needs: Vec<Need> = needs
        .into_iter()
        .map(|n| n.prefixed("intermediate CSR "))
        .collect();
    budget.charge(&needs)?;
    let (levels, out) =
        crate::convert::scatter::build_csr(entries, (vals, ar), a, b, &layout, drop_zeros)?;
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
    // As the planner counts: entries, padding excluded (they bound every position).
    let nnz = t.entry_count() as u64;
    let source = (&t.encoding, &t.layout);
    let Some(step) = plan::stored_step(source, target, (t.value_type(), nnz), opts)? else {
        return Ok(None);
    };
    let route = Route::of(&[step.step()]);
    // The automatic targets choose from a CSR source: K is its longest row, the block the
    // one that stores the fewest bytes.
    let (enc, choice) = match target {
        Target::Fixed(enc) => (enc.clone(), None),
        Target::AutoEll {
            pos_width,
            crd_width,
        } => {
            let k = crate::convert::padded::longest_row(&positions(t)).max(1);
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
    let layout = Layout::new(&enc, t.dim_sizes())?;
    let vbits = t.value_type().size() as u32 * 8;
    let charge_output = || budget.charge_layout(&layout, nnz, vbits);
    let (levels, values) = match step {
        Direct::Share => {
            // Already in the target encoding: no copy for stored files.
            return Ok(Some(Converted {
                tensor: t.clone(),
                choice: None,
                pruned: 0,
                route,
            }));
        }
        Direct::Rewidth => {
            charge_output()?;
            (rewidth_levels(t, &layout)?, t.values().clone())
        }
        Direct::Derive(kind) => {
            // Shares the arrays of a stored tensor; copies those of one in memory (which
            // `convert_tensor_owned` moves instead).
            return Ok(derive(t.clone(), &enc, kind, budget)?.ok());
        }
        Direct::BlockMerge(block) => {
            // The automatic block was chosen above: row-major blocks of a BSR.
            let (r, c, inner_first) = match (block, &choice) {
                (Some(block), _) => block,
                (None, Some(AutoChoice::Block { rows, cols, .. })) => (*rows, *cols, false),
                (None, _) => {
                    return Err(ConvertError::Invalid(
                        "internal: an automatic block merge without its chosen block".into(),
                    ))
                }
            };
            charge_output()?;
            budget.charge(&[Need::new("scratch: block columns", nnz, 64)])?;
            let shape = (r, c, inner_first);
            with_raw!(t.values(), (v, ar) => blocks_values(t, (v, &ar), &layout, shape, budget)?)
        }
        Direct::Pad => {
            charge_output()?;
            with_raw!(t.values(), (v, ar) => ell_values(t, (v, &ar), &layout)?)
        }
        Direct::Groups(shape) => {
            charge_output()?;
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
        Direct::Transpose((_, b)) => {
            charge_output()?;
            let inner = u128::from(layout.dim_sizes.get(b).copied().unwrap_or(0));
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

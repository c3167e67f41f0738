//! The planner: the one place that decides how a conversion runs, from what it starts
//! with (a coordinate list, or a valid stored tensor), the target and the options.
//!
//! [`plan`] tells the route before anything is read or converted (`sparse-convert info
//! --to`). The conversions take their decisions from the same functions as they run:
//! `stored_step` hands the executor a [`Direct`] step that carries what it decided (the
//! source's outer and inner dimensions, the derived kind, the block or n:m shape), and
//! `csr_first` a [`ViaCsr`]; the executor runs them as they are and tests no encoding
//! again. The route taken is recorded in [`crate::Converted::route`], which tests compare
//! with the plan.
//!
//! The routes, fastest first:
//! - **share**: the target is the stored tensor's own encoding; the arrays are shared.
//! - **scatter**: coordinates into CSR / CSC by a parallel counting sort on the outer
//!   dimension (the `.mtx` reader does the same straight from the file's text).
//! - from a valid CSR / CSC, whose rows are sorted and unique, so nothing needs a sort:
//!   **transpose** (CSR <-> CSC), **derive** (DCSR, DCSC, COO), **block merge** (BSR, BSC),
//!   **pad** (ELL), **groups** (n:m).
//! - **general**: sort the entries into level order, sum duplicates, build the levels one
//!   by one; every encoding, slices and value-type changes included.
//!
//! A coordinate list whose target has a CSR route is scattered into CSR first; a stored
//! tensor with no route of its own becomes a coordinate list first.

use std::fmt;

use sptk_encoding::{Encoding, Target};

use crate::convert::derive::{derived_like, widths_hold, Derived};
use crate::convert::padded::{ell_like, nm_like};
use crate::convert::scatter::csr_like;
use crate::convert::ConvertOptions;
use crate::error::ConvertError;
use crate::index::IndexWidth;
use crate::layout::Layout;
use crate::value::ValueType;

/// One step of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The target is the source's encoding: the arrays are shared, not copied.
    Share,
    /// The target is the source's encoding at other index widths: each index array is
    /// copied at its new width, the values shared.
    Rewidth,
    /// Coordinates into CSR / CSC by a counting sort on the outer dimension.
    Scatter,
    /// CSR <-> CSC by a two-pass radix transpose.
    Transpose,
    /// DCSR / DCSC / COO from the arrays of a CSR / CSC (no sort).
    Derive,
    /// BSR / BSC by merging the sorted rows of a CSR / CSC into blocks.
    BlockMerge,
    /// ELL from the rows of a CSR.
    Pad,
    /// n:m groups from the rows of a CSR.
    Groups,
    /// A stored tensor's coordinate list.
    Coordinates,
    /// Sort into level order, sum duplicates, build the levels.
    General,
}

impl Step {
    /// What the step does, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Step::Share => "share the stored arrays (same encoding)",
            Step::Rewidth => "copy the index arrays at the target's widths (same levels)",
            Step::Scatter => "scatter into CSR/CSC (counting sort)",
            Step::Transpose => "transpose CSR <-> CSC (radix, two passes)",
            Step::Derive => "derive from CSR/CSC arrays (no sort)",
            Step::BlockMerge => "merge sorted rows into blocks",
            Step::Pad => "pad rows into ELL slices",
            Step::Groups => "fill n:m groups from sorted rows",
            Step::Coordinates => "list the stored coordinates",
            Step::General => "sort into level order and build the levels",
        }
    }

    /// A short name (`scatter`, `block-merge`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Step::Share => "share",
            Step::Rewidth => "rewidth",
            Step::Scatter => "scatter",
            Step::Transpose => "transpose",
            Step::Derive => "derive",
            Step::BlockMerge => "block-merge",
            Step::Pad => "pad",
            Step::Groups => "groups",
            Step::Coordinates => "coordinates",
            Step::General => "general",
        }
    }
}

/// The steps of a conversion, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// The steps.
    pub steps: Vec<Step>,
}

impl Route {
    /// A route of these steps.
    pub fn of(steps: &[Step]) -> Route {
        Route {
            steps: steps.to_vec(),
        }
    }

    /// This route after `first`.
    pub fn after(mut self, first: Step) -> Route {
        self.steps.insert(0, first);
        self
    }
}

impl fmt::Display for Route {
    /// `scatter -> block-merge`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.steps.iter().map(|s| s.name()).collect();
        f.write_str(&names.join(" -> "))
    }
}

/// A route and why the planner chose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The steps.
    pub route: Route,
    /// Why this route, in a sentence.
    pub why: String,
}

impl Plan {
    fn new(steps: &[Step], why: impl Into<String>) -> Plan {
        Plan {
            route: Route::of(steps),
            why: why.into(),
        }
    }
}

/// What a conversion starts from, as far as the planner needs to know.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A coordinate list (any order, duplicates allowed), or a text file read like one.
    Coordinates {
        /// Dimension sizes.
        dims: &'a [u64],
        /// Number of entries (an upper bound will do).
        entries: u64,
        /// The value type.
        value_type: ValueType,
    },
    /// A valid stored tensor.
    Stored {
        /// Its encoding.
        encoding: &'a Encoding,
        /// Its dimension sizes.
        dims: &'a [u64],
        /// Entries, padding excluded ([`crate::Tensor::entry_count`]; a `.spt` header's
        /// `entries`).
        entries: u64,
        /// The value type.
        value_type: ValueType,
    },
}

/// The route a conversion of `source` into `target` takes (after the widths are fitted as
/// [`ConvertOptions::auto_widths`] asks), and why.
pub fn plan(
    source: Source<'_>,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Plan, ConvertError> {
    match source {
        Source::Coordinates {
            dims,
            entries,
            value_type,
        } => {
            let target = crate::fit_widths(target, dims, entries, opts.auto_widths)?;
            coordinate_route(dims, entries, value_type, &target, opts)
        }
        Source::Stored {
            encoding,
            dims,
            entries,
            value_type,
        } => {
            let target = crate::fit_widths(target, dims, entries, opts.auto_widths)?;
            let layout = Layout::new(encoding, dims)?;
            let source = (encoding, &layout);
            if let Some(step) = stored_step(source, &target, (value_type, entries), opts)? {
                let step = step.step();
                let why = if step == Step::Share {
                    "the target is the stored encoding"
                } else if step == Step::Rewidth {
                    "the target is the stored encoding with other index widths"
                } else {
                    "the source is a CSR/CSC over the target's dimensions: its rows are sorted and unique, so nothing needs a sort"
                };
                return Ok(Plan::new(&[step], why));
            }
            let mut plan = coordinate_route(dims, entries, value_type, &target, opts)?;
            plan.route = plan.route.after(Step::Coordinates);
            plan.why = format!("no direct path from the stored encoding; then {}", plan.why);
            Ok(plan)
        }
    }
}

fn coordinate_route(
    dims: &[u64],
    entries: u64,
    value_type: ValueType,
    target: &Target,
    opts: &ConvertOptions,
) -> Result<Plan, ConvertError> {
    if let Some(via) = csr_first(target, dims, entries, value_type, opts) {
        let csr = intermediate_csr(dims, via, target);
        let layout = Layout::new(&csr, dims)?;
        let rest = ConvertOptions {
            drop_zeros: false,
            ..opts.clone()
        };
        if let Some(step) = stored_step((&csr, &layout), target, (value_type, entries), &rest)? {
            let step = step.step();
            let why = "the target is built from a CSR/CSC of its dimensions, which a counting sort makes without a global sort";
            return Ok(Plan::new(&[Step::Scatter, step], why));
        }
    }
    let step = general_step(target, dims, value_type, opts)?;
    let why = if step == Step::Scatter {
        "the target is CSR-like: a counting sort by the outer dimension".to_string()
    } else {
        general_reason(target, dims, entries, value_type, opts)
    };
    Ok(Plan::new(&[step], why))
}

/// Why the general path: the options, the shape, or the encoding.
fn general_reason(
    target: &Target,
    dims: &[u64],
    entries: u64,
    value_type: ValueType,
    opts: &ConvertOptions,
) -> String {
    if opts.dtype.is_some_and(|d| d != value_type) {
        return "values change type (--dtype): the general path converts them".into();
    }
    if opts.keep_duplicates {
        return "duplicates are kept: the general path keeps them in order".into();
    }
    if !opts.slice_values.is_empty() || target.encoding().is_some_and(Encoding::has_slices) {
        return "the encoding slices dimensions: the general path applies slices".into();
    }
    if dims.len() != 2 {
        return format!(
            "{} dimensions: the direct paths are for matrices",
            dims.len()
        );
    }
    if let Some(enc) = target.encoding() {
        if let Some((a, _)) = [(0, 1), (1, 0)]
            .into_iter()
            .find(|&(a, b)| derived_like(enc, a, b).is_some())
        {
            return format!(
                "a CSR over {} outer coordinates for {entries} entries would cost more than sorting the entries (or the target's widths may not hold them)",
                dims[a]
            );
        }
    }
    "no direct path into this encoding: sort into level order and build the levels".into()
}

/// For a reader that can scatter its entries straight into CSR / CSC (a mapped text file,
/// [`crate::convert_parts`]): the CSR-like encoding to scatter into when the route into
/// `target` starts with a scatter, and whether a direct step from it follows (`false`
/// when it is the target itself). None for the general path.
pub fn scatter_into(
    target: &Target,
    dims: &[u64],
    entries: u64,
    value_type: ValueType,
    opts: &ConvertOptions,
) -> Result<Option<(Encoding, bool)>, ConvertError> {
    let source = Source::Coordinates {
        dims,
        entries,
        value_type,
    };
    let route = plan(source, target, opts)?.route;
    let fitted = crate::fit_widths(target, dims, entries, opts.auto_widths)?;
    Ok(match route.steps.as_slice() {
        [Step::Scatter] => fitted.encoding().cloned().map(|e| (e, false)),
        [Step::Scatter, _] => csr_first(&fitted, dims, entries, value_type, opts)
            .map(|via| (intermediate_csr(dims, via, &fitted), true)),
        _ => None,
    })
}

/// True when `opts` asks for nothing a direct path does not do: no kept duplicates, no
/// slice values, no value type change (zeros may be dropped where `zeros_ok`).
pub(crate) fn plain(opts: &ConvertOptions, value_type: ValueType, zeros_ok: bool) -> bool {
    (zeros_ok || !opts.drop_zeros)
        && !opts.keep_duplicates
        && opts.slice_values.is_empty()
        && opts.dtype.is_none_or(|d| d == value_type)
}

/// The CSR-like orientation `(outer, inner)` through which a coordinate list goes into
/// `target` (scatter into CSR, then a direct path from it), or None for the general path:
/// BSR, ELL and n:m over those dimensions and the automatic `ELL` and `BSR`; DCSR, DCSC
/// and COO when a CSR over them is cheap for these sizes (its positions, one per outer
/// coordinate, cost no more than a few per entry: hypersparse inputs take the general
/// path, whose cost grows with the entries only) and the target's widths hold every value.
pub(crate) fn csr_first(
    target: &Target,
    dims: &[u64],
    entries: u64,
    value_type: ValueType,
    opts: &ConvertOptions,
) -> Option<ViaCsr> {
    if dims.len() != 2 || !plain(opts, value_type, true) {
        return None;
    }
    if target.encoding().is_some_and(Encoding::has_slices) {
        return None;
    }
    if let Some(outer) = csr_route(target) {
        // BSR, ELL and n:m have 3 or 4 levels: none is derived from CSR's 2.
        return Some(ViaCsr {
            outer,
            derived: None,
        });
    }
    let enc = target.encoding()?;
    let (outer, kind) = [(0, 1), (1, 0)]
        .into_iter()
        .find_map(|(a, b)| derived_like(enc, a, b).map(|kind| ((a, b), kind)))?;
    let cheap = dims[outer.0] <= entries.saturating_mul(4).max(1 << 16);
    let layout = Layout::new(enc, dims).ok()?;
    (cheap && widths_hold(&layout, entries)).then_some(ViaCsr {
        outer,
        derived: Some(kind),
    })
}

/// The CSR route of a coordinate list ([`csr_first`]) as the planner decided it: the
/// intermediate CSR / CSC's (outer, inner) dimensions, and the kind of a target derived
/// from it (DCSR, DCSC, COO: the intermediate's arrays move into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ViaCsr {
    /// `(a, b)`: `(a : dense, b : compressed)`.
    pub(crate) outer: (usize, usize),
    /// The target's kind where it is derived from the intermediate.
    pub(crate) derived: Option<Derived>,
}

/// The CSR-like orientation `(outer, inner)` from which `target` has a direct path other
/// than CSR / CSC themselves: BSR, ELL and n:m over those dimensions (n:m where its offsets
/// fit the coordinate width), automatic `ELL` and `BSR`.
pub fn csr_route(target: &Target) -> Option<(usize, usize)> {
    match target {
        Target::Fixed(enc) => [(0, 1), (1, 0)].into_iter().find(|&(a, b)| {
            crate::convert::blocks::bsr_like(enc, a, b).is_some()
                || ell_like(enc, a, b)
                || nm_like(enc, a, b).is_some_and(|(_, m)| offsets_fit(enc, m))
        }),
        Target::AutoEll { .. } => Some((0, 1)),
        Target::AutoBlock { column_blocks, .. } => (!column_blocks).then_some((0, 1)),
    }
}

/// True if n:m offsets (below `m`) fit the encoding's coordinate width.
pub(crate) fn offsets_fit(enc: &Encoding, m: u32) -> bool {
    match IndexWidth::from_bits(enc.crd_width) {
        Some(IndexWidth::W2) => m <= 4,
        Some(w) => u64::from(m) - 1 <= w.max(),
        None => false,
    }
}

/// The CSR (or CSC, with `a = 1`) a coordinate list is scattered into on its way to
/// another target: 32-bit coordinates where they fit, or the target's own width where its
/// inner coordinates are the intermediate's (DCSR, DCSC, COO).
pub(crate) fn intermediate_csr(dims: &[u64], via: ViaCsr, target: &Target) -> Encoding {
    let (a, b) = via.outer;
    let mut enc = if a == 0 {
        sptk_encoding::csr()
    } else {
        sptk_encoding::csc()
    };
    match target.encoding() {
        // DCSR, DCSC and COO keep the intermediate's inner coordinates: scattered at the
        // target's width, they move into it without a copy.
        Some(t) if via.derived.is_some() => enc.crd_width = t.crd_width,
        _ => {
            if dims.get(b).is_some_and(|&n| n <= u64::from(u32::MAX) + 1) {
                enc.crd_width = 32;
            }
        }
    }
    enc
}

/// A direct step from a valid stored tensor with what the planner decided for it, so that
/// the executor (`convert::direct`) runs it as it is and tests nothing again. `(a, b)` is
/// the source CSR / CSC's (outer, inner) dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direct {
    /// [`Step::Share`].
    Share,
    /// [`Step::Rewidth`].
    Rewidth,
    /// [`Step::Transpose`] of a CSR / CSC over `(a, b)`.
    Transpose((usize, usize)),
    /// [`Step::Derive`] of this kind.
    Derive(Derived),
    /// [`Step::BlockMerge`]: `(R, C, inner_first)` of a fixed target; `None` for the
    /// automatic block, chosen from the source as it runs (row-major BSR blocks).
    BlockMerge(Option<(u64, u64, bool)>),
    /// [`Step::Pad`].
    Pad,
    /// [`Step::Groups`] of `(n, m)`.
    Groups((u32, u32)),
}

impl Direct {
    /// The step this is.
    pub(crate) fn step(self) -> Step {
        match self {
            Direct::Share => Step::Share,
            Direct::Rewidth => Step::Rewidth,
            Direct::Transpose(_) => Step::Transpose,
            Direct::Derive(_) => Step::Derive,
            Direct::BlockMerge(_) => Step::BlockMerge,
            Direct::Pad => Step::Pad,
            Direct::Groups(_) => Step::Groups,
        }
    }
}

/// The direct step from a valid stored tensor (`encoding`, `layout`) into `target`, or
/// None if there is none (the conversion then goes through the coordinate list).
pub(crate) fn stored_step(
    (encoding, layout): (&Encoding, &Layout),
    target: &Target,
    (value_type, nnz): (ValueType, u64),
    opts: &ConvertOptions,
) -> Result<Option<Direct>, ConvertError> {
    if !plain(opts, value_type, false) {
        return Ok(None);
    }
    let source_csr = csr_like(encoding, layout);
    let enc = match target {
        Target::Fixed(enc) => enc,
        Target::AutoEll { .. } => {
            return Ok((source_csr == Some((0, 1))).then_some(Direct::Pad));
        }
        Target::AutoBlock {
            column_blocks: false,
            ..
        } => return Ok((source_csr == Some((0, 1))).then_some(Direct::BlockMerge(None))),
        Target::AutoBlock { .. } => return Ok(None),
    };
    if enc.has_slices() {
        return Ok(None);
    }
    if enc == encoding {
        return Ok(Some(Direct::Share));
    }
    let target_layout = Layout::new(enc, &layout.dim_sizes)?;
    // Padded layouts (blocks, ELL, n:m) cannot tell stored zeros from padding: their
    // conversions go through the entries, which drop both, so they do not rewidth.
    if !layout.padded && same_levels(enc, encoding) && rewidth_holds(&target_layout, nnz) {
        return Ok(Some(Direct::Rewidth));
    }
    let Some((a, b)) = source_csr else {
        return Ok(None);
    };
    Ok(if let Some(kind) = derived_like(enc, a, b) {
        widths_hold(&target_layout, nnz).then_some(Direct::Derive(kind))
    } else if let Some(block) = crate::convert::blocks::bsr_like(enc, a, b) {
        Some(Direct::BlockMerge(Some(block)))
    } else if ell_like(enc, a, b) {
        Some(Direct::Pad)
    } else if let Some((n, m)) = nm_like(enc, a, b) {
        offsets_fit(enc, m).then_some(Direct::Groups((n, m)))
    } else {
        match csr_like(enc, &target_layout) {
            Some((a2, b2)) if (a2, b2) == (b, a) => Some(Direct::Transpose((a, b))),
            _ => None,
        }
    })
}

/// Whether every index array of a tensor of `layout`'s levels fits its widths: each
/// coordinate array the level sizes, each position array `nnz` (stored entries bound
/// every position). Levels without arrays ask nothing.
fn rewidth_holds(layout: &Layout, nnz: u64) -> bool {
    let crd_max = layout.crd_width.max();
    let crd_ok = layout
        .levels
        .iter()
        .enumerate()
        .filter(|(l, p)| p.crd_owner == Some(*l))
        .all(|(_, p)| p.size.saturating_sub(1) <= crd_max);
    let pos_ok = !layout.levels.iter().any(|p| p.has_pos) || nnz <= layout.pos_width.max();
    crd_ok && pos_ok
}

/// Whether two encodings differ in their index widths at most (no packed 2-bit arrays,
/// whose width is part of the layout).
fn same_levels(a: &Encoding, b: &Encoding) -> bool {
    let packed = |e: &Encoding| e.crd_width == 2;
    let widthless = |e: &Encoding| Encoding {
        pos_width: 0,
        crd_width: 0,
        ..e.clone()
    };
    !packed(a) && !packed(b) && widthless(a) == widthless(b)
}

/// The step of the general path's own shortcut: a CSR-like target of the same value type
/// is scattered; everything else is built level by level.
fn general_step(
    target: &Target,
    dims: &[u64],
    value_type: ValueType,
    opts: &ConvertOptions,
) -> Result<Step, ConvertError> {
    let Target::Fixed(enc) = target else {
        return Ok(Step::General);
    };
    let enc = crate::convert::general::resolve_keep_duplicates(
        enc.without_slices(),
        opts.keep_duplicates,
    )?;
    let layout = Layout::new(&enc, dims)?;
    let same_type = opts.dtype.is_none_or(|t| t == value_type);
    Ok(if same_type && csr_like(&enc, &layout).is_some() {
        Step::Scatter
    } else {
        Step::General
    })
}

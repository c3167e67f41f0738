//! Which way a CSR-like conversion of a known size will go, before any entry is read
//! ([`size_plan`]): in memory, or out of core and in about how many fill passes. The
//! figures are the charges the two routes make themselves (`parts.rs`'s
//! `in_memory_needs`, `stretches.rs`'s counters, stretch room and sort copies), with the
//! entries assumed spread evenly over the rows where only the count pass would tell.

use sptk_encoding::Encoding;

use crate::budget::{Budget, Need};
use crate::convert::parts::{in_memory_needs, CsrRoute, RowBlocks};
use crate::convert::scatter::work_width;
use crate::convert::stretches::{
    counters_need, sort_copies, stretch_needs, LOCAL_BYTES, ROW_BYTES,
};
use crate::convert::ConvertOptions;
use crate::error::ConvertError;
use crate::layout::Layout;
use crate::value::ValueType;

/// How a CSR-like conversion of a given size would use memory.
#[derive(Clone, Debug, PartialEq)]
pub struct SizePlan {
    /// The encoding, with the widths chosen for the size.
    pub encoding: Encoding,
    /// The memory limit it was planned against, in bytes.
    pub limit: u64,
    /// Bytes the conversion in memory holds: the output and its scratch.
    pub in_memory: u64,
    /// Bytes of the output's arrays alone (what a `.spt` file of it holds, about).
    pub output: u64,
    /// The size of the dimension the positions run over (rows for CSR, columns for CSC).
    pub outer_size: u64,
    /// The entries it was planned for.
    pub entries: u64,
    /// The out-of-core route's figures, or why the limit is too small even for it.
    pub out_of_core: Result<OutOfCoreSize, ConvertError>,
}

impl SizePlan {
    /// True if the conversion fits the limit in memory.
    pub fn fits(&self) -> bool {
        self.in_memory <= self.limit
    }
}

/// What the out-of-core route would do: its counters, the entries a fill pass holds, and
/// the passes (for entries spread evenly over the rows; skewed rows make more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfCoreSize {
    /// Bytes of the count pass's counters.
    pub counters: u64,
    /// Entries one fill pass holds.
    pub stretch_entries: u64,
    /// Fill passes.
    pub passes: u64,
}

/// Plans the conversion of `entries` entries (an upper bound: before duplicates are
/// summed) of `value_type`, read in `parts` parts, into `encoding` of shape `dims`, under
/// `opts`' memory limit. `Ok(None)`: the target is not CSR-like, or `opts` asks what
/// these routes do not do (the general path's figures are not planned here).
///
/// # Errors
/// An encoding that does not fit the shape.
pub fn size_plan(
    encoding: &Encoding,
    dims: [u64; 2],
    entries: u64,
    value_type: ValueType,
    parts: usize,
    opts: &ConvertOptions,
) -> Result<Option<SizePlan>, ConvertError> {
    let Some(route) = CsrRoute::of(encoding, dims, entries, value_type, opts)? else {
        return Ok(None);
    };
    let CsrRoute {
        encoding,
        layout,
        outer,
        inner,
    } = route;
    let needs = in_memory_needs(&layout, &dims, (outer, inner), entries, value_type);
    let in_memory = total(&needs);
    let output = total(&crate::budget::layout_needs(
        &layout,
        entries,
        value_type.size() as u32 * 8,
    ));
    let limit = Budget::new(opts.memory_limit).limit();
    let out_of_core = out_of_core_size(
        &layout,
        dims,
        (outer, inner),
        entries,
        value_type,
        parts,
        opts,
    );
    Ok(Some(SizePlan {
        encoding,
        limit,
        in_memory,
        output,
        outer_size: dims[outer],
        entries,
        out_of_core,
    }))
}

fn out_of_core_size(
    layout: &Layout,
    dims: [u64; 2],
    (outer, inner): (usize, usize),
    entries: u64,
    value_type: ValueType,
    parts: usize,
    opts: &ConvertOptions,
) -> Result<OutOfCoreSize, ConvertError> {
    // As the route checks before it counts: rows and one more fit a usize.
    let RowBlocks {
        rows,
        shift,
        blocks,
    } = RowBlocks::of(dims[outer], entries)?;
    let rows = rows as u64;
    let budget = Budget::new(opts.memory_limit);
    let counters = counters_need(parts, blocks);
    budget.charge(std::slice::from_ref(&counters))?;
    let work = work_width(dims[inner], layout.crd_width);
    let per_entry = u64::from(work.bits() / 8).max(1) + value_type.size() as u64;
    let entry_bytes = per_entry + LOCAL_BYTES;
    let largest = entries.div_ceil(blocks.max(1) as u64);
    let room = budget
        .left()
        .saturating_sub(sort_copies(largest, per_entry));
    let block_rows = (1u64 << shift).min(rows);
    let block_cost = largest * entry_bytes + block_rows * ROW_BYTES;
    let blocks_per_pass = (room / block_cost.max(1)).max(1);
    let stretch_entries = (blocks_per_pass * largest).min(entries);
    // What the route charges for its widest stretch: past the limit, its refusal.
    budget.charge(&stretch_needs(
        (stretch_entries, (blocks_per_pass * block_rows).min(rows)),
        (work.bits(), value_type.size() as u32 * 8),
        sort_copies(largest, per_entry),
    ))?;
    let passes = (blocks as u64).div_ceil(blocks_per_pass).max(1);
    Ok(OutOfCoreSize {
        counters: total(std::slice::from_ref(&counters)),
        stretch_entries,
        passes,
    })
}

/// The bytes of `needs` as the budget counts them (an array named twice counted at its
/// larger size).
fn total(needs: &[Need]) -> u64 {
    let budget = Budget::new(Some(u64::MAX));
    // Within u64::MAX bytes: it cannot be refused.
    let _ = budget.charge(needs);
    u64::MAX - budget.left()
}

/*!
The run side of every kernel: how work is split into chunks, how chunks run on threads, and
how the partial results of chunks are added, so that a result has the same bits for every
thread count.

Generated code and plain-Rust loops alike compute one chunk at a time, a half-open range
`(begin, end)` of entries, outer positions or outer coordinates; this module decides the
ranges and runs them. Its users: the SpMV and SpMM kernels of [`Kernel`](crate::Kernel)
(`kernel/spmv.rs`, `kernel/spmm.rs`), and the element-wise co-iteration of two sparse
operands (`ewise`); the AArch64 test harness runs the same chunks under emulation.

- Splitting ([`chunk_entries`], [`chunk_range`], [`chunk_by_weight`], [`chunk_outer`]):
  a fixed number of chunks that depends on the data only, never on the thread count.
  Entries split into equal counts; outer ranges split where a monotone weight (entries
  before an outer coordinate, of one operand or of two) crosses equal shares, found by
  binary search.
- Running ([`run_chunks`], [`map_chunks`], [`reduce_chunks`]): scoped threads, each
  taking the next chunk as it finishes one; results come back in chunk order.
- Partials ([`zeroed_partials`], [`fold`], [`combine`]): chunks that scatter into a
  shared output each add into their own zeroed partial, and the partials are added in
  chunk order.
- Outputs and operands made ready ([`zero_padded`], [`prefill_rows`]): operands padded
  to whole blocks, and the output rows a compressed outer level does not store filled
  in before the kernel writes the stored ones.

```
use sptk_jit::run::{chunk_entries, reduce_chunks, ENTRY_CHUNKS};

// A sum whose bits do not depend on the thread count: each of a fixed number of entry
// chunks is summed in storage order, then the chunk sums in chunk order.
let v: Vec<f64> = (0..10_000).map(|i| 1.0 / (1.0 + i as f64)).collect();
let chunks = chunk_entries(v.len(), ENTRY_CHUNKS);
let sum = |threads| {
    reduce_chunks(&chunks, threads, |_, (b, e)| v[b..e].iter().sum::<f64>(), |a, b| a + b)
};
assert_eq!(sum(1).map(f64::to_bits), sum(7).map(f64::to_bits));
```
*/

mod outputs;
mod partials;
mod sequence;
mod split;
mod stream;
mod threads;

pub use outputs::{prefill_rows, zero_padded};
pub(crate) use partials::scatter_sum;
pub use partials::{combine, fold, zeroed_partials};
pub(crate) use sequence::Sequence;
pub use split::{chunk_by_weight, chunk_entries, chunk_outer, chunk_range, chunk_rows, OuterLevel};
pub(crate) use stream::{copy_out, streams, uninit};
pub use threads::{map_chunks, reduce_chunks, run_chunks};
pub(crate) use threads::{run_chunks_with, SendPtr};

/// A chunk of work: the half-open range `begin..end` of entries, outer positions or outer
/// coordinates, as `(begin, end)`.
pub type Chunk = (usize, usize);

/// How many chunks entries or outer ranges are split into for work that writes disjoint
/// outputs or sums into one value per chunk, whatever the thread count, so that a result
/// never depends on how many threads ran (256: enough for load balance on many cores, few
/// enough that a chunk is thousands of entries on a large matrix).
pub const ENTRY_CHUNKS: usize = 256;

/// At most how many chunks scatter work (each chunk adding into a partial as long as the
/// output) is split into: fewer than [`ENTRY_CHUNKS`], since each costs an output-sized
/// vector; [`scatter_chunks`] says how many for given sizes.
pub const SCATTER_CHUNKS: usize = 8;

/// Entries a scatter chunk must carry per value of its partial. A partial is zeroed, then
/// read, read and written again by the fold: a chunk with fewer entries than that costs
/// more than it saves. Measured (`docs/PERFORMANCE.md`, 2026-12-04, 2 threads): of 1, 2,
/// 3 and 5 per value and one chunk, 2 was fastest both on a 975k-node graph of 5M edges
/// (2 chunks) and on a uniform 2M x 2M matrix of 20M entries (5 chunks).
pub const SCATTER_ENTRIES_PER_VALUE: usize = 2;

/// How many chunks a scatter of `entries` products into partials of `part_len` values is
/// split into: as many as leave each chunk [`SCATTER_ENTRIES_PER_VALUE`] entries per value
/// of its partial, between 1 and [`SCATTER_CHUNKS`]. It depends on the sizes only, never
/// on the thread count, so the partials, and the bits of their sum, do not either.
pub fn scatter_chunks(entries: usize, part_len: usize) -> usize {
    let per_chunk = part_len.max(1).saturating_mul(SCATTER_ENTRIES_PER_VALUE);
    (entries / per_chunk).clamp(1, SCATTER_CHUNKS)
}

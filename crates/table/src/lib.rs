//! Arrow IPC and Parquet tables in and out.
//!
//! **Reading** finds a sparse tensor in a COO table: one integer (or text) column per
//! dimension and a value column, in one file, several, or a folder of partitions
//! ([`files_in`]). [`Table::open`] reads only the files' metadata: schema, row groups or
//! record batches, the `shape` metadata key, and row-group statistics. Rows are then read
//! part by part (a Parquet row group, an IPC record batch) in parallel, a window at a
//! time: into a coordinate list ([`Table::read_entries`]), or straight into CSR / CSC
//! ([`Table::read_converted`]), where the nonzeros exist once, in the output. Record
//! batches already in memory (an Arrow C stream) are read the same way
//! ([`Table::from_batches`]).

mod batches;
mod columns;
mod direct;
mod error;
mod files;
mod guard;
mod levels;
mod open;
mod ordered;
mod out_of_core;
mod pages;
mod read;
mod relabel;
mod table;
mod write;

pub use direct::TableConverted;
pub use error::TableError;
pub use files::{files_in, is_table_name, PartitionFile};
pub use guard::{contain, panic_is_contained};
pub use levels::{is_levels_folder, read_levels, read_levels_within, write_levels};
pub use open::TableKind;
pub use read::TableEntries;
pub use relabel::Relabel;
pub use table::{Table, TableOptions, ValueColumn};
pub use write::{coordinate_names, write_table, write_table_to, WriteOptions};

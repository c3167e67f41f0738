//! The table reader on arbitrary bytes read as an Arrow IPC file (`ARROW1`): schema, columns and
//! shape found, rows read into a coordinate list and straight into CSR, with and without
//! `--relabel` (see common/table.rs for what counts as a finding). Inputs of another kind
//! are skipped: the other table targets take them.
#![no_main]

#[path = "../common/table.rs"]
mod table;

use libfuzzer_sys::fuzz_target;
use sptk_table::TableKind;

fuzz_target!(|data: &[u8]| table::run(TableKind::ArrowFile, data));

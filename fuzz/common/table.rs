//! Shared by the table targets (`table_ipc_file`, `table_ipc_stream`, `table_parquet`):
//! the bytes are read as `sparse-convert` reads a table from standard input, through every
//! public reading path (the coordinate list, the direct scatter into CSR, and both again
//! with `--relabel`, which maps every coordinate, dictionaries included, to dense indices)
//! within a memory limit of 64 MiB. Refusals are fine; a panic is not.
//!
//! The reader seam (`sptk_table::contain`) turns a panic inside arrow-rs or parquet into
//! `TableError::Panicked`, so a panic the crate's pre-checks miss would otherwise pass as
//! a refusal: here it is a finding, and the target panics with its message. Except the
//! classes in [`KNOWN`], library bugs that no check made before the library decodes the
//! file can foresee; the seam's containment of them is what is tested there.
//!
//! libfuzzer-sys's panic hook aborts on every panic, caught or not; the hook installed here
//! is silent while the library runs (its caught panics are reported below, with their
//! message, if they are findings) and aborts otherwise, as libfuzzer-sys's does.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

use sptk_table::{Relabel, Table, TableError, TableKind, TableOptions};
use sptk_tensor::ConvertOptions;

/// A class of library panic accepted as contained.
struct Known {
    /// The kind of table it is accepted in (the one whose library decoding raises it).
    kind: TableKind,
    /// The crate the panic is raised in (`/parquet-` matches `.../parquet-60.1.0/...`).
    krate: &'static str,
    /// The source file the panic is raised in (the end of its path).
    file: &'static str,
    /// Part of its message.
    message: &'static str,
}

/// Panics of the libraries that no check of ours can foresee without decoding the pages
/// itself, accepted as contained when reading that kind of table (matched by where they are
/// raised, not only by message):
///
/// - parquet's `BitReader::get_vlq_int` (`util/bit_util.rs`), which reads the run headers
///   of the RLE / bit-packed hybrid encoding (definition levels, dictionary indices) and
///   panics by design on a varint longer than ten bytes: `Num of bytes exceed
///   MAX_VLQ_BYTE_LEN (10)`, or, one byte earlier, `attempt to shift left with overflow`
///   where overflow checks are on (this build; a release build wraps and then hits the
///   assertion). Regression: `a_page_that_makes_parquet_panic_is_refused_naming_file_and_row_group`
///   in crates/table/tests/damaged.rs (`table_parquet`'s first 60 s run found the shift).
/// - parquet's definition-level decoder (`PackedDecoder::read`) trusts a bit-packed run's
///   length: a run longer than the page's level bytes reaches arrow-buffer's
///   `BitChunks::new` (`offset + len out of bounds`; matched by that place in a Parquet
///   file, where only parquet builds arrays from the file's bytes unchecked). Regression:
///   `a_bit_packed_level_run_past_its_page_is_refused_naming_file_and_row_group` in
///   crates/table/tests/damaged.rs (found by `table_parquet` in its second 60 s run).
///
/// Both are inside the data pages, compressed: only decoding the page finds them, so no
/// check made before the library sees the file can refuse them; the seam contains them.
const KNOWN: &[Known] = &[
    Known {
        kind: TableKind::Parquet,
        krate: "/parquet-",
        file: "/src/util/bit_util.rs",
        message: "MAX_VLQ_BYTE_LEN",
    },
    Known {
        kind: TableKind::Parquet,
        krate: "/parquet-",
        file: "/src/util/bit_util.rs",
        message: "attempt to shift left with overflow",
    },
    Known {
        kind: TableKind::Parquet,
        krate: "/arrow-buffer-",
        file: "/src/util/bit_chunk_iterator.rs",
        message: "offset + len out of bounds",
    },
];

/// A panic caught while the library ran: where it was raised and its message.
struct Caught {
    at: String,
    message: String,
}

/// The distinct panics caught in this run (the first 64), for the report of a finding and for telling
/// known classes from findings.
static CAUGHT: Mutex<Vec<Caught>> = Mutex::new(Vec::new());

/// True while the library runs: its panics are caught by the seam (or below) and judged
/// here, so the hook stays quiet.
static INSIDE: AtomicBool = AtomicBool::new(false);

/// Installs the hook; set `FUZZ_BACKTRACE=1` when replaying an input to see where each
/// caught panic came from.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !INSIDE.load(Ordering::Relaxed) {
                default(info);
                std::process::abort();
            }
            let mut caught = CAUGHT.lock().unwrap_or_else(|e| e.into_inner());
            if caught.len() >= 64 {
                return;
            }
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let message = panic_text(info.payload());
            if std::env::var_os("FUZZ_BACKTRACE").is_some() {
                eprintln!("{}", std::backtrace::Backtrace::force_capture());
            }
            if !caught.iter().any(|c| c.at == at && c.message == message) {
                caught.push(Caught { at, message });
            }
        }));
    });
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Whether a caught panic with `message`, reading a table of `kind`, is of a known class.
fn known(kind: TableKind, message: &str) -> bool {
    let caught = CAUGHT.lock().unwrap_or_else(|e| e.into_inner());
    caught.iter().any(|c| {
        c.message == message
            && KNOWN.iter().any(|k| {
                k.kind == kind
                    && c.at.contains(k.krate)
                    && c.at.contains(k.file)
                    && message.contains(k.message)
            })
    })
}

/// The error, if it is a panic the seam caught that is not of a known class.
fn finding<T>(kind: TableKind, r: &Result<T, TableError>) -> Option<String> {
    match r {
        Err(e @ TableError::Panicked { message, .. }) if !known(kind, message) => {
            Some(e.to_string())
        }
        _ => None,
    }
}

fn read_every_way(kind: TableKind, data: &[u8]) -> Option<String> {
    let csr = sptk_encoding::resolve_target("CSR", 2).expect("CSR");
    for relabel in [Relabel::Text, Relabel::Shared, Relabel::Separate] {
        let o = TableOptions {
            memory_limit: Some(64 << 20),
            relabel,
            ..TableOptions::default()
        };
        let table = Table::from_bytes(Path::new("fuzz"), data.to_vec(), &o);
        if let Some(f) = finding(kind, &table) {
            return Some(f);
        }
        let Ok(table) = table else { continue };
        if let Some(f) = finding(kind, &table.read_entries()) {
            return Some(f);
        }
        if let Some(f) = finding(
            kind,
            &table.read_converted(&csr, &ConvertOptions::default()),
        ) {
            return Some(f);
        }
    }
    None
}

/// Reads `data` every way if it is a table of `kind`; panics on a finding.
pub fn run(kind: TableKind, data: &[u8]) {
    if TableKind::of(data) != Some(kind) {
        return;
    }
    install_hook();
    CAUGHT.lock().unwrap_or_else(|e| e.into_inner()).clear();
    INSIDE.store(true, Ordering::Relaxed);
    let r = catch_unwind(AssertUnwindSafe(|| read_every_way(kind, data)));
    INSIDE.store(false, Ordering::Relaxed);
    let places = CAUGHT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .take(4)
        .map(|c| format!("{}: {}", c.at, c.message))
        .collect::<Vec<_>>()
        .join("\n  ");
    match r {
        Ok(None) => {}
        Ok(Some(f)) => panic!(
            "a panic inside arrow-rs / parquet that no check refused: {f}\n  raised at {places}"
        ),
        Err(payload) => panic!(
            "a panic left sptk-table: {}\n  raised at {places}",
            panic_text(payload.as_ref())
        ),
    }
}

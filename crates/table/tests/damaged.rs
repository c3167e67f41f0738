//! Damaged tables never take the process down. Arrow IPC files, IPC streams and Parquet
//! files (the shared test data, and files written here with arrow-rs: compressed,
//! dictionary-encoded, several row groups) are damaged at a fixed seed (bit flips,
//! overwritten runs, truncations; a few hundred of each kind) and read through every
//! public reading path: the coordinate list, the direct scatter into CSR, relabelling, and
//! from memory as standard input is. Each read must end in a value or an error: a panic
//! that leaves the library fails the test, and an abort (an allocation failure) ends it.
//! Panics the libraries raise are caught at the reader seam and come back as
//! `TableError::Panicked`, naming the file; the summary counts them.
//!
//! Plus the regression of the issue that started this: an Arrow IPC buffer whose offset
//! lies past its message body made arrow-buffer panic (`the offset of the new Buffer
//! cannot exceed the existing length`), which `panic = "abort"` turned into SIGABRT.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sptk_table::{Relabel, Table, TableError, TableOptions};
use sptk_tensor::ConvertOptions;

/// A small deterministic generator (splitmix64): the same damage on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/arrow")
}

/// A COO batch: 2000 rows of a 300 x 200 matrix, with `shape` metadata; `text` adds a
/// dictionary-encoded text column and a text coordinate `name`.
fn batch(text: bool) -> RecordBatch {
    let n = 2000;
    let rows: Vec<i32> = (0..n).map(|i| (i * 7919) % 300).collect();
    let cols: Vec<i64> = (0..n).map(|i| i64::from((i * 104_729) % 200)).collect();
    let vals: Vec<f64> = (0..n).map(|i| f64::from(i) * 0.5 - 3.0).collect();
    let mut fields = vec![
        Field::new("row", DataType::Int32, false),
        Field::new("col", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
    ];
    let mut columns: Vec<arrow_array::ArrayRef> = vec![
        Arc::new(Int32Array::from(rows)),
        Arc::new(Int64Array::from(cols)),
        Arc::new(Float64Array::from(vals)),
    ];
    if text {
        let words: Vec<String> = (0..n).map(|i| format!("w{}", i % 37)).collect();
        let dict: DictionaryArray<arrow_array::types::Int32Type> =
            words.iter().map(String::as_str).collect();
        fields.push(Field::new(
            "tag",
            arrow_array::Array::data_type(&dict).clone(),
            false,
        ));
        columns.push(Arc::new(dict));
        fields.push(Field::new("name", DataType::Utf8, false));
        columns.push(Arc::new(StringArray::from(words)));
    }
    let mut meta = HashMap::new();
    meta.insert("shape".to_string(), "[300, 200]".to_string());
    RecordBatch::try_new(Arc::new(Schema::new_with_metadata(fields, meta)), columns).unwrap()
}

/// Record batches of 500 rows each.
fn pieces(b: &RecordBatch) -> Vec<RecordBatch> {
    (0..b.num_rows())
        .step_by(500)
        .map(|at| b.slice(at, 500.min(b.num_rows() - at)))
        .collect()
}

fn ipc_options(zstd: bool) -> IpcWriteOptions {
    let o = IpcWriteOptions::default();
    if zstd {
        o.try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))
            .unwrap()
    } else {
        o
    }
}

fn ipc_file(text: bool, zstd: bool) -> Vec<u8> {
    let b = batch(text);
    let mut out = Vec::new();
    let mut w = FileWriter::try_new_with_options(&mut out, &b.schema(), ipc_options(zstd)).unwrap();
    for p in pieces(&b) {
        w.write(&p).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

fn ipc_stream(text: bool, zstd: bool) -> Vec<u8> {
    let b = batch(text);
    let mut out = Vec::new();
    let mut w =
        StreamWriter::try_new_with_options(&mut out, &b.schema(), ipc_options(zstd)).unwrap();
    for p in pieces(&b) {
        w.write(&p).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

fn parquet(text: bool, compression: Compression) -> Vec<u8> {
    let b = batch(text);
    let mut out = Vec::new();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(700))
        .set_data_page_row_count_limit(200)
        .set_write_batch_size(100)
        .build();
    let mut w = ArrowWriter::try_new(&mut out, b.schema(), Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    out
}

/// One of three kinds of damage to a copy of `good`.
fn damage(good: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bad = good.to_vec();
    match rng.below(3) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(bad.len());
                bad[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let at = rng.below(bad.len());
            let len = (1 + rng.below(64)).min(bad.len() - at);
            let fill = rng.below(4);
            for b in &mut bad[at..at + len] {
                *b = match fill {
                    0 => 0,
                    1 => 0xff,
                    _ => rng.next() as u8,
                };
            }
        }
        _ => bad.truncate(rng.below(bad.len())),
    }
    bad
}

#[derive(Default, Debug)]
struct Outcomes {
    read: usize,
    refused: usize,
    /// Refused because a library panicked and the seam caught it.
    caught: usize,
}

impl Outcomes {
    fn note<T>(&mut self, r: Result<T, TableError>, path: &Path) {
        match r {
            Ok(_) => self.read += 1,
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(&path.display().to_string()) || text.contains("memory limit"),
                    "the error does not name the file: {text}"
                );
                if matches!(e, TableError::Panicked { .. }) {
                    self.caught += 1;
                } else {
                    self.refused += 1;
                }
            }
        }
    }
}

/// Every reading path over one damaged file; a panic that escapes fails the test.
fn read_every_way(path: &Path, bytes: &[u8], memory: bool, out: &mut Outcomes) {
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let opts = TableOptions {
        memory_limit: Some(64 << 20),
        ..TableOptions::default()
    };
    let relabel = TableOptions {
        relabel: Relabel::Shared,
        ..opts.clone()
    };
    let escaped = catch_unwind(AssertUnwindSafe(|| {
        for o in [&opts, &relabel] {
            let table = if memory {
                Table::from_bytes(path, bytes.to_vec(), o)
            } else {
                Table::open(vec![(path.to_path_buf(), HashMap::new())], o)
            };
            let table = match table {
                Ok(t) => t,
                Err(e) => {
                    out.note::<()>(Err(e), path);
                    continue;
                }
            };
            out.note(table.read_entries(), path);
            if o.relabel == Relabel::Text {
                out.note(table.read_converted(&csr, &ConvertOptions::default()), path);
            }
        }
    }));
    if let Err(payload) = escaped {
        let text = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let keep = std::env::temp_dir().join("sptk-damaged-escaped");
        std::fs::write(&keep, bytes).unwrap();
        panic!(
            "a panic left the library reading a damaged {} (kept as {}): {text}",
            path.display(),
            keep.display()
        );
    }
}

/// Damages `count` copies of each source, round robin, and reads each every way.
fn campaign(kind: &str, sources: Vec<(String, Vec<u8>)>, count: usize, seed: u64) -> Outcomes {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut out = Outcomes::default();
    // The good files read, every way.
    for (name, good) in &sources {
        let path = dir.path().join(name);
        std::fs::write(&path, good).unwrap();
        let mut o = Outcomes::default();
        read_every_way(&path, good, false, &mut o);
        assert_eq!(o.refused + o.caught, 0, "{name} undamaged: {o:?}");
    }
    for i in 0..count {
        let (name, good) = &sources[i % sources.len()];
        let bad = damage(good, &mut rng);
        let path = dir.path().join(format!("{i}-{name}"));
        std::fs::write(&path, &bad).unwrap();
        read_every_way(&path, &bad, i % 4 == 3, &mut out);
        std::fs::remove_file(&path).unwrap();
    }
    eprintln!("{kind}: {count} damaged files: {out:?}");
    out
}

fn from_testdata(names: &[&str]) -> Vec<(String, Vec<u8>)> {
    names
        .iter()
        .map(|n| (n.to_string(), std::fs::read(testdata().join(n)).unwrap()))
        .collect()
}

/// Silences the messages of the panics the seam catches (hundreds of them), for this
/// test binary.
fn quiet() {
    std::panic::set_hook(Box::new(|_| {}));
}

#[test]
fn damaged_arrow_ipc_files_are_read_or_refused() {
    quiet();
    let mut sources = from_testdata(&[
        "coo_i32_f64_uncompressed.arrow",
        "coo_i64_f64_lz4.arrow",
        "coo_dict_values.arrow",
    ]);
    sources.push(("zstd.arrow".into(), ipc_file(false, true)));
    sources.push(("text.arrow".into(), ipc_file(true, false)));
    campaign("Arrow IPC file", sources, 400, 26);
}

#[test]
fn damaged_arrow_ipc_streams_are_read_or_refused() {
    quiet();
    let sources = vec![
        ("plain.arrows".into(), ipc_stream(false, false)),
        ("zstd.arrows".into(), ipc_stream(false, true)),
        ("text.arrows".into(), ipc_stream(true, false)),
    ];
    campaign("Arrow IPC stream", sources, 400, 2026);
}

#[test]
fn damaged_parquet_files_are_read_or_refused() {
    quiet();
    let mut sources = from_testdata(&[
        "coo_i64_f64.parquet",
        "coo_i32_f32_rowgroups.parquet",
        "coo_unsorted_dups.parquet",
    ]);
    sources.push(("snappy.parquet".into(), parquet(true, Compression::SNAPPY)));
    sources.push((
        "plain.parquet".into(),
        parquet(false, Compression::UNCOMPRESSED),
    ));
    campaign("Parquet", sources, 400, 126);
}

/// Moves the last buffer of the first record batch of an IPC file or stream (`at`: where
/// its message starts, continuation marker included) past the end of the body.
fn buffer_past_the_body(bytes: &mut [u8], at: usize) {
    let meta_len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
    let msg = &bytes[at + 8..at + 8 + meta_len];
    let m = arrow_ipc::root_as_message(msg).unwrap();
    let body = m.bodyLength();
    let b = m.header_as_record_batch().unwrap().buffers().unwrap();
    let last = b.get(b.len() - 1);
    let mut pattern = last.offset().to_le_bytes().to_vec();
    pattern.extend_from_slice(&last.length().to_le_bytes());
    let i = msg
        .windows(16)
        .position(|w| w == pattern.as_slice())
        .unwrap();
    let past = (body + 64).to_le_bytes();
    bytes[at + 8 + i..at + 16 + i].copy_from_slice(&past);
}

/// Where the first record batch's message starts in an IPC file (from its footer).
fn first_batch_of_file(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let footer_len = u32::from_le_bytes(bytes[n - 10..n - 6].try_into().unwrap()) as usize;
    let footer = arrow_ipc::root_as_footer(&bytes[n - 10 - footer_len..n - 10]).unwrap();
    footer.recordBatches().unwrap().get(0).offset() as usize
}

/// Where the first record batch's message starts in an IPC stream without dictionaries
/// (after the schema message).
fn first_batch_of_stream(bytes: &[u8]) -> usize {
    let meta_len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    8 + meta_len
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

const ARROW_BUFFER_PANIC: &str = "the offset of the new Buffer cannot exceed the existing length";

#[test]
fn a_buffer_past_its_body_is_refused_where_arrow_buffer_panicked() {
    quiet();
    let dir = tempfile::tempdir().unwrap();
    let mut file = ipc_file(false, false);
    let at = first_batch_of_file(&file);
    buffer_past_the_body(&mut file, at);
    let mut stream = ipc_stream(false, false);
    let at = first_batch_of_stream(&stream);
    buffer_past_the_body(&mut stream, at);

    // arrow-rs alone panics on both: the crash of issue 26.
    let raw_file = |bytes: Vec<u8>| {
        let r = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)?;
        r.collect::<Result<Vec<_>, _>>()
    };
    let raw_stream = |bytes: Vec<u8>| {
        let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)?;
        r.collect::<Result<Vec<_>, _>>()
    };
    let f = catch_unwind(|| raw_file(file.clone())).unwrap_err();
    assert!(panic_message(f).contains(ARROW_BUFFER_PANIC));
    let s = catch_unwind(|| raw_stream(stream.clone())).unwrap_err();
    assert!(panic_message(s).contains(ARROW_BUFFER_PANIC));

    // The seam turns that very panic into an error naming file and place.
    let e = sptk_table::contain(
        Path::new("bad.arrow"),
        || "record batch 0".into(),
        || raw_file(file.clone()).map_err(|_| unreachable!("arrow panics first")),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, TableError::Panicked { .. }), "{text}");
    assert!(
        text.starts_with("bad.arrow: record batch 0: the Arrow / Parquet library failed on it (")
            && text.contains(ARROW_BUFFER_PANIC),
        "{text}"
    );

    // Ours checks the buffers before arrow-rs sees them: a format error, located.
    for (name, bytes, want) in [
        ("bad.arrow", &file, "record batch 0: buffer 5 "),
        ("bad.arrows", &stream, "message 1 of the stream: buffer 5 "),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = Table::open(
            vec![(path.clone(), HashMap::new())],
            &TableOptions::default(),
        )
        .err()
        .unwrap();
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{}: not a readable Arrow IPC", path.display()))
                && text.contains(want)
                && text.contains("lies outside the body"),
            "{text}"
        );
        let e = Table::from_bytes(Path::new("-"), bytes.clone(), &TableOptions::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains(want), "{e}");
    }
}

#[test]
fn compressed_buffers_declaring_more_than_the_budget_are_refused_before_allocation() {
    // A zstd buffer whose 8-byte prefix says 2^40 bytes uncompressed: arrow-ipc would
    // reserve that before decompressing, an allocation failure that aborts.
    let mut file = ipc_file(false, true);
    let at = first_batch_of_file(&file);
    let meta_len = u32::from_le_bytes(file[at + 4..at + 8].try_into().unwrap()) as usize;
    let m = arrow_ipc::root_as_message(&file[at + 8..at + 8 + meta_len]).unwrap();
    let b = m.header_as_record_batch().unwrap().buffers().unwrap();
    let last = b.get(b.len() - 1);
    let prefix = at + 8 + meta_len + last.offset() as usize;
    file[prefix..prefix + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
    let opts = TableOptions {
        memory_limit: Some(1 << 30),
        ..TableOptions::default()
    };
    let e = Table::from_bytes(Path::new("big.arrow"), file, &opts)
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(
        matches!(e, TableError::TooLarge { .. })
            && text.starts_with("big.arrow: record batch 0: its compressed buffers declare ")
            && text.contains("more than the memory limit of 1073741824 bytes"),
        "{text}"
    );
}

#[test]
fn parquet_column_chunks_past_the_end_of_the_file_are_refused() {
    // Cut in the middle of the data, with the footer put back: the metadata is whole,
    // the chunks it points to past the cut are not (the reader would reserve a chunk's
    // stated size before reading it).
    let good = parquet(false, Compression::UNCOMPRESSED);
    let footer_len = u32::from_le_bytes(good[good.len() - 8..good.len() - 4].try_into().unwrap());
    let footer = good[good.len() - 8 - footer_len as usize..].to_vec();
    let mut cut = good[..good.len() / 2].to_vec();
    cut.extend_from_slice(&footer);
    let e = Table::from_bytes(Path::new("cut.parquet"), cut, &TableOptions::default())
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(
        text.starts_with("cut.parquet: column `")
            && text.contains("lie outside the file's")
            && text.contains(": row group "),
        "{text}"
    );
}

#[test]
fn rows_read_front_to_back_are_counted_against_the_budget_before_they_are_decoded() {
    // A stream is read batch by batch: the budget refuses the batch that would pass it,
    // before its rows are decoded (2000 rows x (2 x 8 + 8) bytes = 48,000 > 30,000).
    let opts = TableOptions {
        memory_limit: Some(30_000),
        ..TableOptions::default()
    };
    let t = Table::from_bytes(Path::new("s.arrows"), ipc_stream(false, false), &opts).unwrap();
    let e = t.read_entries().err().unwrap();
    let text = e.to_string();
    assert!(
        matches!(e, TableError::TooLarge { .. })
            && text.starts_with("s.arrows: 1500 rows as a coordinate list need 36000 bytes"),
        "{text}"
    );
    // Without a limit given, the machine's default applies.
    assert_eq!(
        TableOptions::default().budget(),
        sptk_tensor::default_memory_limit()
    );
}

/// `coo_unsorted_dups.parquet` with 49 bytes of its data pages overwritten with 0xff (found
/// by the campaign above at a larger count): parquet's RLE decoder panics on it (`Num of
/// bytes exceed MAX_VLQ_BYTE_LEN`, or a shift overflow where overflow checks are on),
/// past every check made before reading. With `panic = "abort"` the release
/// `sparse-convert` died of SIGABRT on this file.
fn parquet_that_panics() -> Vec<u8> {
    let mut bytes = std::fs::read(testdata().join("coo_unsorted_dups.parquet")).unwrap();
    bytes[7353..7402].fill(0xff);
    bytes
}

#[test]
fn a_page_that_makes_parquet_panic_is_refused_naming_file_and_row_group() {
    quiet();
    let t = Table::from_bytes(
        Path::new("rle.parquet"),
        parquet_that_panics(),
        &TableOptions::default(),
    )
    .unwrap();
    both_reads_caught(
        &t,
        "rle.parquet: row group 0: the Arrow / Parquet library failed on it (",
    );
}

/// Both ways of reading `t`'s rows end in a panic the seam caught, reported as `starts`.
fn both_reads_caught(t: &Table, starts: &str) {
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let direct = t
        .read_converted(&csr, &ConvertOptions::default())
        .err()
        .unwrap();
    let listed = t.read_entries().err().unwrap();
    for e in [direct, listed] {
        let text = e.to_string();
        assert!(
            matches!(e, TableError::Panicked { .. })
                && text.starts_with(starts)
                && text.ends_with("); the file is damaged or not a valid table"),
            "{text}"
        );
    }
}

/// A Parquet file of a nullable COO table (100 rows, no nulls, uncompressed, plain) whose
/// first definition-level run, an RLE run of 100 ones, is rewritten as a bit-packed run of
/// 100 groups (800 levels) in its three bytes. parquet's level decoder trusts the run's
/// length and asks arrow-buffer for bits past the page's level bytes, which panics
/// (`offset + len out of bounds`). Found by the `table_parquet` fuzz target; the run sits
/// inside a data page (compressed, in general), so nothing checked before the library
/// decodes the page can see it: the seam contains it.
fn parquet_with_a_level_run_past_its_page() -> Vec<u8> {
    let n = 100;
    let fields = vec![
        Field::new("row", DataType::Int32, true),
        Field::new("col", DataType::Int32, true),
        Field::new("value", DataType::Float64, true),
    ];
    let columns: Vec<arrow_array::ArrayRef> = vec![
        Arc::new(Int32Array::from((0..n).map(|i| i % 10).collect::<Vec<_>>())),
        Arc::new(Int32Array::from((0..n).map(|i| i / 10).collect::<Vec<_>>())),
        Arc::new(Float64Array::from(
            (0..n).map(f64::from).collect::<Vec<_>>(),
        )),
    ];
    let b = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let mut out = Vec::new();
    let props = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .build();
    let mut w = ArrowWriter::try_new(&mut out, b.schema(), Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    // The levels' length (3), the run header 100 << 1 as a varint, the value 1.
    let run = [3, 0, 0, 0, 0xc8, 0x01, 0x01];
    let at = out
        .windows(run.len())
        .position(|w| w == run)
        .expect("the first definition-level run");
    // A bit-packed run ((100 << 1) | 1) of 100 groups of 8, with one byte of them.
    out[at + 4..at + 7].copy_from_slice(&[0xc9, 0x01, 0x00]);
    out
}

#[test]
fn a_bit_packed_level_run_past_its_page_is_refused_naming_file_and_row_group() {
    quiet();
    let opts = TableOptions {
        shape: Some(vec![10, 10]),
        ..TableOptions::default()
    };
    let t = Table::from_bytes(
        Path::new("levels.parquet"),
        parquet_with_a_level_run_past_its_page(),
        &opts,
    )
    .unwrap();
    both_reads_caught(
        &t,
        "levels.parquet: row group 0: the Arrow / Parquet library failed on it (offset + len out of bounds)",
    );
}

#[test]
fn a_gzip_page_that_inflates_past_its_declared_size_is_refused_by_every_reading_path() {
    // parquet 60 inflates GZIP pages with `read_to_end`, ignoring the size the page header
    // declares: 8 MiB of zeros packed into one page of `value` that declares 16,000 bytes
    // would be inflated whole (and 1032 times the file's size at worst). The page check
    // refuses it first, by name, on the coordinate-list and the direct paths alike.
    use std::io::Write;
    let n = 2000;
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::Int64, false),
        Field::new("col", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
    ]));
    let mut rng = Rng(3);
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| (i * 7) % n))),
            Arc::new(Float64Array::from_iter_values((0..n).map(|_| {
                f64::from_bits(0x3ff0_0000_0000_0000 | (rng.next() >> 12))
            }))),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::GZIP(Default::default()))
        .set_dictionary_enabled(false)
        .build();
    let mut file = Vec::new();
    let mut w = ArrowWriter::try_new(&mut file, schema, Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    let meta = parquet::file::reader::FileReader::metadata(
        &parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(
            file.clone(),
        ))
        .unwrap(),
    )
    .clone();
    let chunk = meta.row_group(0).column(2);
    let start = chunk.data_page_offset() as usize;
    let end = start + chunk.compressed_size() as usize;
    // One page: its header, then its gzip member.
    let body = start
        + file[start..end]
            .windows(3)
            .position(|w| w == [0x1f, 0x8b, 8])
            .unwrap();
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    bomb.write_all(&vec![0u8; 8 << 20]).unwrap();
    let bomb = bomb.finish().unwrap();
    assert!(bomb.len() < end - body);
    file[body..end].fill(0);
    file[body..body + bomb.len()].copy_from_slice(&bomb);

    let opts = TableOptions {
        memory_limit: Some(64 << 20),
        ..TableOptions::default()
    };
    let t = Table::from_bytes(Path::new("bomb.parquet"), file, &opts).unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    for e in [
        t.read_entries().err().unwrap(),
        t.read_converted(&csr, &ConvertOptions::default())
            .err()
            .unwrap(),
    ] {
        let text = e.to_string();
        assert!(
            text.starts_with("bomb.parquet: column `value`: row group 0: the page at byte ")
                && text.contains("declares 16000 bytes of values but its GZIP")
                && text.contains("data decompresses to more"),
            "{text}"
        );
    }
}

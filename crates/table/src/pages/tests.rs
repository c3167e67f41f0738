use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;

/// A table of 30,000 rows: a sorted integer, a pseudo-random float (incompressible) and a
/// text column of 50 words (dictionary-encoded), in pages of at most 16 KiB.
fn table(compression: Compression, version: WriterVersion) -> Bytes {
    let n = 30_000i64;
    let mut state = 7u64;
    let noise: Vec<f64> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            f64::from_bits(0x3ff0_0000_0000_0000 | (state >> 12))
        })
        .collect();
    let words: Vec<String> = (0..n).map(|i| format!("word{}", i % 50)).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
        Field::new("tag", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(Float64Array::from(noise)),
            Arc::new(StringArray::from(words)),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_writer_version(version)
        .set_data_page_size_limit(16 << 10)
        .set_max_row_group_row_count(Some(20_000))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Bytes::from(out)
}

fn meta(file: &Bytes) -> Arc<ParquetMetaData> {
    SerializedFileReader::new(file.clone())
        .unwrap()
        .metadata()
        .clone()
        .into()
}

fn check_all(file: &Bytes, limit: u64) -> Result<(), TableError> {
    let m = meta(file);
    for g in 0..m.num_row_groups() {
        check_row_group(file, &m, g, &[0, 1, 2], limit, Path::new("t.parquet"))?;
    }
    Ok(())
}

/// The byte ranges of every page of a column chunk: (header start, data start, data end).
fn pages(file: &Bytes, chunk: &ColumnChunkMetaData) -> Vec<(usize, usize, usize)> {
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or(chunk.data_page_offset()) as usize;
    let end = start + chunk.compressed_size() as usize;
    let mut at = start;
    let mut out = Vec::new();
    while at < end {
        let h = parse_page_header(&file[at..end]).unwrap();
        let body = at + h.len;
        out.push((at, body, body + h.compressed as usize));
        at = body + h.compressed as usize;
    }
    assert_eq!(at, end, "the pages fill the chunk exactly");
    out
}

#[test]
fn every_codec_and_page_version_the_writer_makes_passes_the_walk() {
    for compression in [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::GZIP(Default::default()),
        Compression::ZSTD(Default::default()),
        Compression::LZ4_RAW,
    ] {
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            let file = table(compression, version);
            // A budget small enough that every GZIP page is decoded by the check (a page's
            // share is 349,525 bytes, the dictionary page of `row` 160,000).
            check_all(&file, 4 << 20).unwrap_or_else(|e| panic!("{compression} {version:?}: {e}"));
            let m = meta(&file);
            let chunk = m.row_group(0).column(1);
            assert!(
                pages(&file, chunk).len() > 3,
                "{compression}: several pages"
            );
        }
    }
}

/// The first data page of column `value` in row group 0 replaced by `packed`, padded
/// with zeros to its length.
fn with_page_data(file: &Bytes, packed: &[u8]) -> Bytes {
    let m = meta(file);
    let (_, body, end) = pages(file, m.row_group(0).column(1))[0];
    assert!(
        packed.len() <= end - body,
        "{} > {}",
        packed.len(),
        end - body
    );
    let mut bytes = file.to_vec();
    bytes[body..end].fill(0);
    bytes[body..body + packed.len()].copy_from_slice(packed);
    Bytes::from(bytes)
}

#[test]
fn a_gzip_page_that_inflates_past_its_declared_size_is_refused_before_it_is_inflated() {
    // 4 MiB of zeros in a 4 KiB gzip member, where the page declares 16 KiB.
    use std::io::Write;
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    bomb.write_all(&vec![0u8; 4 << 20]).unwrap();
    let bomb = bomb.finish().unwrap();
    let file = with_page_data(
        &table(
            Compression::GZIP(Default::default()),
            WriterVersion::PARQUET_1_0,
        ),
        &bomb,
    );
    let e = check_all(&file, 64 << 20).unwrap_err().to_string();
    assert!(
        e.starts_with("t.parquet: column `value`: row group 0: the page at byte ")
            && e.contains("data decompresses to more"),
        "{e}"
    );
    // With a budget whose share covers the worst case, the walk leaves the page to the
    // parquet crate, whose own check then refuses it.
    check_all(&file, 1 << 40).unwrap();
}

#[test]
fn declared_page_sizes_past_the_budget_are_refused() {
    let file = table(Compression::SNAPPY, WriterVersion::PARQUET_1_0);
    let e = check_all(&file, 64 << 10).unwrap_err();
    assert!(
        matches!(e, TableError::TooLarge { .. })
            && e.to_string().contains(
                "bytes uncompressed, more than one page's share of the memory limit (5461 bytes)"
            ),
        "{e}"
    );
}

#[test]
fn page_sizes_that_leave_the_chunk_are_refused() {
    let file = table(Compression::UNCOMPRESSED, WriterVersion::PARQUET_1_0);
    let m = meta(&file);
    let (at, _, _) = pages(&file, m.row_group(0).column(1))[1];
    // The header's third field (compressed_page_size) of the second page, made huge: the
    // header is rewritten whole (type, two sizes, then a stop), which the walk reads.
    let mut bytes = file.to_vec();
    let header = [
        0x15, 0x00, 0x15, 0x80, 0x02, 0x15, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00,
    ];
    bytes[at..at + header.len()].copy_from_slice(&header);
    let e = check_all(&Bytes::from(bytes), 1 << 30)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "the page at byte {at} says it holds 2147483647 compressed bytes where"
        )),
        "{e}"
    );
}

#[test]
fn headers_parse_nested_fields_and_refuse_malformed_ones() {
    // type=DATA_PAGE_V2 (3), uncompressed 100, compressed 60, then field 8 (v2 header):
    // num_values 5, def 4, rep 6, is_compressed false; a statistics struct (field 8) with
    // a binary max; stop, stop.
    let v2 = [
        0x15, 0x06, // 1: i32 3
        0x15, 0xc8, 0x01, // 2: i32 100
        0x15, 0x78, // 3: i32 60
        0x5c, // 8 (delta 5): struct
        0x15, 0x0a, // 1: 5
        0x45, 0x08, // 5: 4
        0x15, 0x0c, // 6: 6
        0x12, // 7: false
        0x1c, // 8: struct
        0x18, 0x03, b'a', b'b', b'c', // 1: binary "abc"
        0x00, 0x00, 0x00,
    ];
    let h = parse_page_header(&v2).unwrap();
    assert_eq!(
        h,
        PageHead {
            len: v2.len(),
            uncompressed: 100,
            compressed: 60,
            levels: 10,
            compressed_values: false,
        }
    );
    for cut in 0..v2.len() {
        assert!(
            matches!(parse_page_header(&v2[..cut]), Err(Thrift::Short)),
            "{cut}"
        );
    }
    // Structs nested past the limit, an unknown type, a missing size.
    let deep: Vec<u8> = std::iter::repeat_n(0x1c, 40).chain([0; 41]).collect();
    assert!(matches!(
        parse_page_header(&deep),
        Err(Thrift::Bad("nested too deeply"))
    ));
    assert!(matches!(
        parse_page_header(&[0x1d, 0x00]),
        Err(Thrift::Bad(_))
    ));
    assert!(matches!(
        parse_page_header(&[0x25, 0x02, 0x00]),
        Err(Thrift::Bad(_))
    ));
}

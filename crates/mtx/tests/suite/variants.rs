//! Valid Matrix Market variants built in the tests: symmetries, fields, arrays, odd
//! spacing, CRLF, gzip, 64-bit dimensions, duplicates and explicit zeros.

use crate::common;
use common::read_str;
use sptk_mtx::{read_from, read_path, Field, Format, ReadOptions, Symmetry};
use sptk_tensor::{IndexVec, ValueVec, C128};
use std::io::Write;

fn triples(m: &sptk_mtx::MtxData) -> Vec<(u64, u64, f64)> {
    let ValueVec::F64(v) = m.entries.values() else {
        panic!("not f64")
    };
    (0..m.entries.len())
        .map(|e| (m.entries.coord(e, 0), m.entries.coord(e, 1), v[e]))
        .collect()
}

#[test]
fn symmetric_expands_without_duplicating_the_diagonal() {
    let m =
        read_str("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n3 1 2\n3 2 3\n")
            .unwrap();
    assert_eq!(m.header.symmetry, Symmetry::Symmetric);
    assert_eq!(m.header.nnz_stored, 3);
    assert_eq!(
        triples(&m),
        vec![
            (0, 0, 1.0),
            (2, 0, 2.0),
            (2, 1, 3.0),
            (0, 2, 2.0),
            (1, 2, 3.0)
        ]
    );
}

#[test]
fn skew_symmetric_mirrors_negated() {
    let m =
        read_str("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n")
            .unwrap();
    assert_eq!(
        triples(&m),
        vec![(1, 0, 1.5), (2, 1, -4.0), (0, 1, -1.5), (1, 2, 4.0)]
    );
    let m = read_str("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 7\n")
        .unwrap();
    assert_eq!(m.entries.values(), &ValueVec::I64(vec![7, -7].into()));
}

#[test]
fn hermitian_mirrors_the_conjugate_and_real_hermitian_is_symmetric() {
    let m =
        read_str("%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 3 0\n2 1 1 2\n")
            .unwrap();
    let c = |re, im| C128 { re, im };
    assert_eq!(
        m.entries.values(),
        &ValueVec::C128(vec![c(3.0, 0.0), c(1.0, 2.0), c(1.0, -2.0)].into())
    );
    assert_eq!((m.entries.coord(2, 0), m.entries.coord(2, 1)), (0, 1));
    let m = read_str("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 5\n").unwrap();
    assert_eq!(triples(&m), vec![(1, 0, 5.0), (0, 1, 5.0)]);
}

#[test]
fn empty_matrices() {
    let m = read_str("%%MatrixMarket matrix coordinate real general\n0 0 0\n").unwrap();
    assert_eq!(m.entries.dim_sizes(), &[0, 0]);
    assert!(m.entries.is_empty());
    let m = read_str("%%MatrixMarket matrix coordinate real general\n5 7 0\n").unwrap();
    assert_eq!(m.entries.dim_sizes(), &[5, 7]);
    let m = read_str("%%MatrixMarket matrix array real general\n0 3\n").unwrap();
    assert!(m.entries.is_empty());
}

#[test]
fn sixty_four_bit_dimensions() {
    let m = read_str("%%MatrixMarket matrix coordinate integer general\n5000000000 3 2\n5000000000 3 -1\n4294967297 1 2\n").unwrap();
    assert_eq!(m.entries.dim_sizes(), &[5_000_000_000, 3]);
    assert!(matches!(m.entries.coords(0), IndexVec::U64(_)));
    assert!(matches!(m.entries.coords(1), IndexVec::U32(_)));
    assert_eq!(
        m.entries.coords(0).to_u64_vec(),
        vec![4_999_999_999, 4_294_967_296]
    );
    // Exactly 2^32 still fits 32-bit coordinates.
    let m =
        read_str("%%MatrixMarket matrix coordinate real general\n4294967296 1 1\n4294967296 1 1\n")
            .unwrap();
    assert!(matches!(m.entries.coords(0), IndexVec::U32(_)));
    assert_eq!(m.entries.coord(0, 0), 4_294_967_295);
}

#[test]
fn odd_spacing_crlf_comments_and_case() {
    let text = "%%matrixmarket MATRIX Coordinate REAL General\r\n% a comment\r\n\r\n  %indented comment\r\n \t 3   3\t\t2 \r\n\r\n  1\t 1    1.5  \r\n% mid comment\r\n\t3 2 -2e-3\r\n\r\n";
    let m = read_str(text).unwrap();
    assert_eq!(m.header.comment, " a comment\nindented comment");
    assert_eq!(triples(&m), vec![(0, 0, 1.5), (2, 1, -2e-3)]);
    let m = read_str("%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 1").unwrap();
    assert_eq!(m.header.field, Field::Real);
    assert_eq!(triples(&m), vec![(0, 0, 1.0)]);
}

#[test]
fn duplicates_and_explicit_zeros_are_kept() {
    let m = read_str(
        "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 1 2\n2 2 0\n2 1 -0\n",
    )
    .unwrap();
    let t = triples(&m);
    assert_eq!(t.len(), 4);
    assert_eq!(t[2], (1, 1, 0.0));
    assert!(t[3].2 == 0.0 && t[3].2.is_sign_negative());
}

#[test]
fn pattern_and_integer_fields() {
    let m =
        read_str("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n").unwrap();
    assert_eq!(triples(&m), vec![(1, 0, 1.0), (2, 2, 1.0), (0, 1, 1.0)]);
    let m = read_str("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -9223372036854775808\n2 1 +9223372036854775807\n").unwrap();
    assert_eq!(
        m.entries.values(),
        &ValueVec::I64(vec![i64::MIN, i64::MAX].into())
    );
}

#[test]
fn arrays_keep_only_nonzeros() {
    // 2 x 3 column-major: [[1, 0, 3], [0, 2, 0]]
    let m = read_str("%%MatrixMarket matrix array real general\n2 3\n1\n0\n0\n2\n3\n-0\n").unwrap();
    assert_eq!(m.header.format, Format::Array);
    assert_eq!(m.header.nnz_stored, 6);
    assert_eq!(triples(&m), vec![(0, 0, 1.0), (1, 1, 2.0), (0, 2, 3.0)]);
    // Symmetric 3 x 3: lower triangle column by column: a11 a21 a31 a22 a32 a33.
    let m =
        read_str("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n0\n4\n5\n6\n").unwrap();
    assert_eq!(
        triples(&m),
        vec![
            (0, 0, 1.0),
            (1, 0, 2.0),
            (1, 1, 4.0),
            (2, 1, 5.0),
            (2, 2, 6.0),
            (0, 1, 2.0),
            (1, 2, 5.0)
        ]
    );
    // Skew-symmetric arrays list the strict lower triangle.
    let m = read_str("%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    assert_eq!(
        m.entries.values(),
        &ValueVec::I64(vec![1, 2, 3, -1, -2, -3].into())
    );
    assert_eq!(m.entries.coords(0).to_u64_vec(), vec![1, 2, 2, 0, 0, 1]);
    let m = read_str("%%MatrixMarket matrix array complex general\n1 2\n0 0\n1 -1\n").unwrap();
    assert_eq!(
        m.entries.values(),
        &ValueVec::C128(vec![C128 { re: 1.0, im: -1.0 }].into())
    );
}

#[test]
fn gzip_is_detected_by_magic_bytes_and_streams() {
    let text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 2\n";
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    let plain = read_str(text).unwrap();
    let m = read_from(&gz[..], "x", &ReadOptions::default()).unwrap();
    assert_eq!(m, plain);
    // The extension does not matter, the magic does; multi-member gzip works.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no_gz_extension.mtx");
    let mut two = gz.clone();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"% trailing comment in a second member\n")
        .unwrap();
    two.extend(enc.finish().unwrap());
    std::fs::write(&p, &two).unwrap();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s2 = seen.clone();
    let opts = ReadOptions {
        progress: Some(std::sync::Arc::new(move |n| {
            s2.store(n, std::sync::atomic::Ordering::SeqCst)
        })),
        ..Default::default()
    };
    assert_eq!(read_path(&p, &opts).unwrap(), plain);
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        two.len() as u64
    );
}

#[test]
fn thread_count_and_chunking_do_not_change_the_result() {
    let mut text =
        String::from("%%MatrixMarket matrix coordinate real symmetric\n% c\n1000 1000 5000\n");
    let mut s: u64 = 7;
    for k in 0..5000u64 {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (s >> 33) % 1000 + 1;
        let j = (s >> 13) % i + 1;
        if k % 97 == 0 {
            text.push_str("\n% interleaved comment\n");
        }
        text.push_str(&format!("{i} {j} {}\n", (s >> 11) as f64 / 7.0));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    std::fs::write(&p, &text).unwrap();
    let base = read_path(
        &p,
        &ReadOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        base.entries.len() as u64,
        5000 + (0..5000)
            .filter(|&e| base.entries.coord(e, 0) != base.entries.coord(e, 1))
            .count() as u64
    );
    for (threads, chunk) in [(2, 0), (2, 1), (2, 100), (1, 33), (4, 4096)] {
        let got = read_path(
            &p,
            &ReadOptions {
                threads,
                chunk_size: chunk,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(got, base, "{threads} threads, chunk {chunk}");
        let streamed = read_from(
            text.as_bytes(),
            "s",
            &ReadOptions {
                threads,
                chunk_size: chunk,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(streamed, base);
    }
}

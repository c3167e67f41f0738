//! The writers: shortest values read back bit for bit (random f64 bit patterns, subnormals,
//! signed zeros, extremes), every value type, symmetry checks, atomic and gzip output,
//! thread-count independence, and FROSTT in and out.

use crate::common;
use proptest::prelude::*;
use sptk_mtx::*;
use sptk_tensor::{Entries, ValueVec, C128};

fn write(e: &Entries, opts: &WriteOptions) -> String {
    let mut out = Vec::new();
    write_to(&mut out, e, opts).unwrap();
    String::from_utf8(out).unwrap()
}

fn entries_f64(rows: u64, cols: u64, t: &[(u64, u64, f64)]) -> Entries {
    let mut e = Entries::new(vec![rows, cols], sptk_tensor::ValueType::F64);
    for &(i, j, v) in t {
        e.push(&[i, j], v).unwrap();
    }
    e
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn f64_values_round_trip_bit_for_bit(bits in proptest::collection::vec(any::<u64>(), 1..200), threads in 1usize..3) {
        let mut vals: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).filter(|v| !v.is_nan()).collect();
        vals.extend([0.0, -0.0, f64::MIN_POSITIVE, 5e-324, -5e-324, f64::MAX, f64::MIN, 0.1, 1e-300, 1.0, f64::INFINITY, f64::NEG_INFINITY]);
        let n = vals.len() as u64;
        let t: Vec<_> = vals.iter().enumerate().map(|(k, &v)| (k as u64 % 7, k as u64 / 7, v)).collect();
        let e = entries_f64(7, n / 7 + 1, &t);
        let opts = WriteOptions { threads, ..Default::default() };
        let text = write(&e, &opts);
        let back = read_from(text.as_bytes(), "rt", &ReadOptions::default()).unwrap();
        let ValueVec::F64(got) = back.entries.values() else { panic!() };
        for (a, b) in got.iter().zip(&vals) {
            prop_assert_eq!(a.to_bits(), b.to_bits());
        }
        prop_assert_eq!(&back.entries, &e);
        prop_assert_eq!(text, write(&e, &WriteOptions { threads: 3, ..Default::default() }));
    }

    #[test]
    fn f32_values_round_trip(bits in proptest::collection::vec(any::<u32>(), 1..100)) {
        let vals: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).filter(|v| !v.is_nan()).collect();
        let mut e = Entries::new(vec![1, vals.len() as u64 + 1], sptk_tensor::ValueType::F32);
        for (k, &v) in vals.iter().enumerate() {
            e.push(&[0, k as u64], v).unwrap();
        }
        let text = write(&e, &WriteOptions::default());
        let back = read_from(text.as_bytes(), "rt", &ReadOptions::default()).unwrap();
        let ValueVec::F64(got) = back.entries.values() else { panic!() };
        for (a, b) in got.iter().zip(&vals) {
            prop_assert_eq!((*a as f32).to_bits(), b.to_bits());
        }
    }
}

#[test]
fn nan_is_written_as_nan_and_reads_back_as_nan() {
    let e = entries_f64(1, 1, &[(0, 0, f64::NAN)]);
    let text = write(&e, &WriteOptions::default());
    assert!(text.ends_with("1 1 nan\n"), "{text}");
    let back = read_from(text.as_bytes(), "n", &ReadOptions::default()).unwrap();
    let ValueVec::F64(v) = back.entries.values() else {
        panic!()
    };
    assert!(v[0].is_nan());
}

#[test]
fn value_types_choose_their_field() {
    let mut e = Entries::new(vec![2, 2], sptk_tensor::ValueType::Bool);
    e.push(&[0, 0], true).unwrap();
    e.push(&[1, 1], false).unwrap();
    assert_eq!(
        write(&e, &WriteOptions::default()),
        "%%MatrixMarket matrix coordinate integer general\n%\n2 2 2\n1 1 1\n2 2 0\n"
    );
    let p = write(
        &e,
        &WriteOptions {
            pattern: true,
            comment: Some(" hi\n two".into()),
            ..Default::default()
        },
    );
    assert_eq!(
        p,
        "%%MatrixMarket matrix coordinate pattern general\n% hi\n% two\n2 2 2\n1 1\n2 2\n"
    );
    let mut e = Entries::new(vec![1, 1], sptk_tensor::ValueType::U64);
    e.push(&[0, 0], u64::MAX).unwrap();
    assert!(write(&e, &WriteOptions::default()).ends_with("1 1 18446744073709551615\n"));
    let mut e = Entries::new(vec![1, 1], sptk_tensor::ValueType::C128);
    e.push(&[0, 0], C128 { re: 0.5, im: -2.0 }).unwrap();
    assert_eq!(
        write(&e, &WriteOptions::default()),
        "%%MatrixMarket matrix coordinate complex general\n%\n1 1 1\n1 1 5E-1 -2\n"
    );
    let mut e = Entries::new(vec![1, 2], sptk_tensor::ValueType::F16);
    e.push(&[0, 0], half::f16::from_f64(0.1)).unwrap();
    e.push(&[0, 1], half::f16::from_f64(65504.0)).unwrap();
    assert!(write(&e, &WriteOptions::default()).ends_with("1 1 1E-1\n1 2 6.55E4\n"));
}

#[test]
fn symmetric_output_writes_the_lower_triangle_after_checking() {
    let e = entries_f64(
        3,
        3,
        &[
            (0, 0, 1.0),
            (2, 0, 2.0),
            (0, 2, 2.0),
            (1, 2, 3.0),
            (2, 1, 1.0),
            (2, 1, 2.0),
        ],
    );
    let opts = WriteOptions {
        symmetry: Some(Symmetry::Symmetric),
        ..Default::default()
    };
    let text = write(&e, &opts);
    assert_eq!(
        text,
        "%%MatrixMarket matrix coordinate real symmetric\n%\n3 3 4\n1 1 1\n3 1 2\n3 2 1\n3 2 2\n"
    );
    let back = read_from(text.as_bytes(), "s", &ReadOptions::default()).unwrap();
    assert_eq!(common::canonical(&back.entries), common::canonical(&e));

    let bad = entries_f64(3, 3, &[(0, 0, 1.0), (2, 0, 2.0), (0, 2, 2.5), (1, 0, 1.0)]);
    let err = write_to(Vec::new(), &bad, &opts).unwrap_err().to_string();
    assert_eq!(
        err,
        "the matrix is not symmetric: entry (2, 1) is 1 but entry (1, 2) is 0"
    );
    let skew = entries_f64(2, 2, &[(1, 0, 2.0), (0, 1, -2.0)]);
    let s = WriteOptions {
        symmetry: Some(Symmetry::SkewSymmetric),
        ..Default::default()
    };
    assert!(write(&skew, &s).ends_with("2 2 1\n2 1 2\n"));
    let err = write_to(Vec::new(), &entries_f64(2, 2, &[(1, 1, 1.0)]), &s)
        .unwrap_err()
        .to_string();
    assert!(err.contains("diagonal entry (2, 2) is 1"), "{err}");
    let mut h = Entries::new(vec![2, 2], sptk_tensor::ValueType::C128);
    h.push(&[1, 0], C128 { re: 1.0, im: 2.0 }).unwrap();
    h.push(&[0, 1], C128 { re: 1.0, im: -2.0 }).unwrap();
    let hopts = WriteOptions {
        symmetry: Some(Symmetry::Hermitian),
        ..Default::default()
    };
    let text = write(&h, &hopts);
    assert!(text.ends_with("2 2 1\n2 1 1 2\n"), "{text}");
    let err = write_to(Vec::new(), &entries_f64(2, 3, &[]), &opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("must be square"));
}

#[test]
fn files_are_written_atomically_and_gzip_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let e = entries_f64(4, 4, &[(3, 0, 0.25), (1, 2, -7.0)]);
    let p = dir.path().join("out.mtx.gz");
    write_path(&p, &e, &WriteOptions::default()).unwrap();
    assert_eq!(std::fs::read(&p).unwrap()[..2], [0x1f, 0x8b]);
    assert_eq!(read_path(&p, &ReadOptions::default()).unwrap().entries, e);
    // A failing write leaves the old file untouched and no temporary behind.
    let q = dir.path().join("keep.mtx");
    std::fs::write(&q, "old").unwrap();
    let opts = WriteOptions {
        symmetry: Some(Symmetry::Symmetric),
        ..Default::default()
    };
    assert!(write_path(&q, &e, &opts).is_err());
    assert_eq!(std::fs::read_to_string(&q).unwrap(), "old");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|d| d.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn large_output_is_identical_for_any_thread_count() {
    let t: Vec<_> = (0..100_000u64)
        .map(|k| (k % 1000, k / 1000, (k as f64).sqrt()))
        .collect();
    let e = entries_f64(1000, 100, &t);
    let one = write(
        &e,
        &WriteOptions {
            threads: 1,
            ..Default::default()
        },
    );
    let two = write(
        &e,
        &WriteOptions {
            threads: 2,
            ..Default::default()
        },
    );
    assert_eq!(one, two);
    let back = read_from(
        one.as_bytes(),
        "x",
        &ReadOptions {
            threads: 2,
            chunk_size: 4096,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(back.entries, e);
}

#[test]
fn frostt_extended_round_trip_and_plain_form() {
    let mut e = Entries::new(vec![2, 3, 4], sptk_tensor::ValueType::F64);
    e.push(&[0, 0, 0], 1.0).unwrap();
    e.push(&[1, 2, 3], -0.5).unwrap();
    let mut out = Vec::new();
    write_tns_to(&mut out, &e, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "# extended FROSTT format\n3 2\n2 3 4\n1 1 1 1\n2 3 4 -5E-1\n"
    );
    let back = read_tns_from(text.as_bytes(), "t.tns", &TnsReadOptions::default()).unwrap();
    assert!(back.extended);
    assert_eq!(back.entries, e);
    // MLIR's integration-test style file.
    let mlir = "# Extended FROSTT tensor with a coordinate that does not fit in uint8_t.\n2 1\n300 1\n300 1 1.0\n";
    let m = read_tns_from(mlir.as_bytes(), "n.tns", &TnsReadOptions::default()).unwrap();
    assert_eq!(m.entries.dim_sizes(), &[300, 1]);
    assert_eq!(m.entries.coord(0, 0), 299);
    // Plain FROSTT: dimensions from the largest coordinates.
    let plain = "1 1 1 1.5\n3 2 5 2\n\n2 7 1 -1\n";
    let p = read_tns_from(plain.as_bytes(), "p.tns", &TnsReadOptions::default()).unwrap();
    assert!(!p.extended);
    assert_eq!(p.entries.dim_sizes(), &[3, 7, 5]);
    assert_eq!(p.entries.len(), 3);
    // 1-D plain with integer values is not mistaken for a header.
    let p = read_tns_from(
        "1 5\n2 7\n4 1\n".as_bytes(),
        "v.tns",
        &TnsReadOptions::default(),
    )
    .unwrap();
    assert!(!p.extended);
    assert_eq!(p.entries.dim_sizes(), &[4]);
    // Through a file, gzip included.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.tns.gz");
    write_tns_path(&f, &e, &WriteOptions::default()).unwrap();
    assert_eq!(
        read_tns_path(&f, &TnsReadOptions::default())
            .unwrap()
            .entries,
        e
    );
}

#[test]
fn frostt_errors_have_locations() {
    let cases: &[(&str, u64, u64, &str)] = &[
        (
            "# extended FROSTT format\n2 1\n4 4\n0 1 1.0\n",
            4,
            1,
            "coordinate 1 of 2 is 0, out of range",
        ),
        (
            "# extended FROSTT format\n2 1\n4 4\n1 5 1.0\n",
            4,
            3,
            "coordinate 2 of 2 is 5, out of range, expected 1..=4",
        ),
        (
            "# extended FROSTT format\n2 1\n4 4\n-1 1 1.0\n",
            4,
            1,
            "is negative",
        ),
        (
            "# extended FROSTT format\n2 1\n4 4\n99999999999999999999 1 1.0\n",
            4,
            1,
            "overflows 64 bits",
        ),
        (
            "# extended FROSTT format\n2 2\n4 4\n1 1 1.0\n",
            5,
            1,
            "ends after 1 of the 2 entries",
        ),
        (
            "# extended FROSTT format\n2 1\n4 4\n1 1 1.0\n2 2 2\n",
            5,
            1,
            "more entries than the 1 declared",
        ),
        (
            "# extended FROSTT format\n2 1\n4\n",
            3,
            2,
            "expected dimension size 2 of 2",
        ),
        (
            "# extended FROSTT format\n2 1\n4 4\n1 1 x\n",
            4,
            5,
            "`x` is not a valid number",
        ),
        ("1 1 1.0\n1 1 1 1.0\n", 2, 7, "after the value"),
        ("", 1, 1, "no entries and no header"),
    ];
    for (text, line, col, phrase) in cases {
        // Chunks smaller than a line and a few lines long must locate errors the same way.
        for chunk_size in [0, 1, 7, 64] {
            let opts = TnsReadOptions {
                chunk_size,
                threads: 2,
                ..Default::default()
            };
            let err = read_tns_from(text.as_bytes(), "t.tns", &opts).unwrap_err();
            let msg = err.to_string();
            assert_eq!(
                err.location(),
                Some((*line, *col)),
                "{text:?} chunk {chunk_size}: {msg}"
            );
            assert!(msg.contains(phrase), "{msg}");
        }
    }
}

/// A file read in many small chunks by several threads gives the entries of one
/// sequential read, in file order, in both FROSTT forms; an error deep in the file names
/// its line whichever chunk it falls in.
#[test]
fn frostt_chunked_reads_match_one_pass() {
    let dims = [300u64, 70_000, 5];
    let mut body = String::new();
    let mut x = 12345u64;
    let n = 5000;
    for k in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let c: Vec<u64> = dims.iter().map(|d| (x >> 11) % d + 1).collect();
        if k % 97 == 0 {
            body.push_str("# a comment line\n\n");
        }
        body.push_str(&format!(
            "{} {}  {}\t{}.{}\n",
            c[0],
            c[1],
            c[2],
            k,
            x % 1000
        ));
    }
    let extended = format!("# extended FROSTT format\n3 {n}\n300 70000 5\n{body}");
    for text in [extended.as_str(), body.as_str()] {
        let whole = read_tns_from(
            text.as_bytes(),
            "t.tns",
            &TnsReadOptions {
                threads: 1,
                chunk_size: usize::MAX / 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(whole.entries.len(), n);
        for (threads, chunk_size) in [(1, 64), (2, 64), (2, 1000), (2, 0), (3, 9)] {
            let opts = TnsReadOptions {
                threads,
                chunk_size,
                ..Default::default()
            };
            let got = read_tns_from(text.as_bytes(), "t.tns", &opts).unwrap();
            assert_eq!(got, whole, "threads {threads} chunk {chunk_size}");
        }
    }
    // A bad coordinate on line 4000 of the extended file.
    let mut lines: Vec<&str> = extended.lines().collect();
    let bad_line = 4000;
    let bad = "1 70001 1 1.0";
    lines[bad_line - 1] = bad;
    let text = lines.join("\n") + "\n";
    for chunk_size in [0, 64, 333] {
        let opts = TnsReadOptions {
            threads: 2,
            chunk_size,
            ..Default::default()
        };
        let err = read_tns_from(text.as_bytes(), "t.tns", &opts).unwrap_err();
        assert_eq!(err.location(), Some((bad_line as u64, 3)), "{err}");
        assert!(
            err.to_string().contains("coordinate 2 of 3 is 70001"),
            "{err}"
        );
    }
}

/// A CSR or CSC tensor written straight from its arrays gives the bytes its entries give
/// through `write_to` (storage order), for several value types, widths, pattern output and
/// thread counts. Values are arbitrary doubles for `f64` and small integers for the other
/// value types, so every generated case converts: the test counts that all of them reach
/// the comparison.
#[test]
fn tensors_write_like_their_entries() {
    use proptest::test_runner::{Config, TestRunner};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let strategy = (
        1u64..60,
        1u64..60,
        proptest::collection::vec((0u64..60, 0u64..60, any::<u64>()), 0..400),
        prop_oneof![Just("CSR"), Just("CSC"), Just("DCSR"), Just("COO")],
        prop_oneof![
            Just(None),
            Just(Some("f32")),
            Just(Some("i32")),
            Just(Some("complex128"))
        ],
        prop_oneof![Just(None), Just(Some(8u8)), Just(Some(32))],
        any::<bool>(),
        1usize..4,
    );
    let (tried, compared) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut runner = TestRunner::new(Config::with_cases(48));
    runner
        .run(
            &strategy,
            |(rows, cols, t, preset, dtype, cw, pattern, threads)| {
                tried.fetch_add(1, Ordering::Relaxed);
                let mut e = Entries::new(vec![rows, cols], sptk_tensor::ValueType::F64);
                for &(i, j, bits) in &t {
                    // Arbitrary doubles only where the value type holds them.
                    let v = if dtype.is_none() && bits % 3 != 0 {
                        f64::from_bits(bits)
                    } else {
                        (bits % 7) as f64
                    };
                    if v.is_finite() {
                        e.push(&[i % rows, j % cols], v).unwrap();
                    }
                }
                let target = sptk_encoding::resolve_target(preset, 2)
                    .unwrap()
                    .with_widths(None, cw)
                    .unwrap();
                let opts = sptk_tensor::ConvertOptions {
                    dtype: dtype.map(|d| d.parse().unwrap()),
                    ..Default::default()
                };
                let c = sptk_tensor::convert(&e, &target, &opts);
                prop_assume!(c.is_ok(), "conversion refused: {:?}", c.err());
                let c = c.unwrap();
                let wopts = WriteOptions {
                    pattern,
                    threads,
                    ..Default::default()
                };
                let mut direct = Vec::new();
                write_tensor_to(&mut direct, &c.tensor, &wopts).unwrap();
                let mut plain = Vec::new();
                write_to(&mut plain, &c.tensor.to_entries(), &wopts).unwrap();
                prop_assert_eq!(
                    String::from_utf8(direct).unwrap(),
                    String::from_utf8(plain).unwrap()
                );
                compared.fetch_add(1, Ordering::Relaxed);
                Ok(())
            },
        )
        .unwrap();
    let (tried, compared) = (tried.into_inner(), compared.into_inner());
    assert!(
        compared * 10 >= tried * 9,
        "only {compared} of {tried} generated cases reached the comparison"
    );
}

/// More than one formatting window (chunks of 32768 entries, a few per thread), so the
/// double-buffered writer hands windows over in order.
#[test]
fn large_tensor_writes_like_its_entries() {
    let n = 300_000u64;
    let mut e = Entries::new(vec![5000, 7000], sptk_tensor::ValueType::F64);
    for k in 0..n {
        e.push(&[(k * 7919) % 5000, (k * 104729) % 7000], k as f64 / 3.0)
            .unwrap();
    }
    for preset in ["CSR", "CSC"] {
        let t = sptk_tensor::convert(
            &e,
            &sptk_encoding::resolve_target(preset, 2).unwrap(),
            &Default::default(),
        )
        .unwrap()
        .tensor;
        for threads in [1, 2, 3] {
            let wopts = WriteOptions {
                threads,
                ..Default::default()
            };
            let mut direct = Vec::new();
            write_tensor_to(&mut direct, &t, &wopts).unwrap();
            let mut plain = Vec::new();
            write_to(&mut plain, &t.to_entries(), &wopts).unwrap();
            assert!(direct == plain, "{preset}, {threads} threads");
        }
    }
}

/// The field a file was read with is written back where the values allow it: `pattern`
/// stays `pattern` (not `real`), and `integer`, `real` and `complex` can be asked for.
#[test]
fn the_field_of_a_file_can_be_kept() {
    let text = "%%MatrixMarket matrix coordinate pattern general\n%\n3 4 3\n1 1\n3 2\n2 4\n";
    let m = read_from(text.as_bytes(), "p.mtx", &ReadOptions::default()).unwrap();
    assert_eq!(m.header.field, Field::Pattern);
    assert_eq!(m.header.symmetry, Symmetry::General);
    assert!(field_fits(m.entries.values(), Field::Pattern));
    let keep = WriteOptions {
        field: Some(m.header.field),
        ..Default::default()
    };
    assert_eq!(write(&m.entries, &keep), text);
    // Without it, the values' own type decides (f64 ones: `real`).
    assert!(write(&m.entries, &WriteOptions::default())
        .starts_with("%%MatrixMarket matrix coordinate real general\n%\n3 4 3\n1 1 1\n"));

    let e = entries_f64(2, 2, &[(0, 0, 2.0), (1, 0, -3.0), (1, 1, 0.0)]);
    let as_field = |f: Field| WriteOptions {
        field: Some(f),
        ..Default::default()
    };
    assert!(field_fits(e.values(), Field::Integer));
    assert!(!field_fits(e.values(), Field::Pattern));
    assert_eq!(
        write(&e, &as_field(Field::Integer)),
        "%%MatrixMarket matrix coordinate integer general\n%\n2 2 3\n1 1 2\n2 1 -3\n2 2 0\n"
    );
    assert_eq!(
        write(&e, &as_field(Field::Complex)),
        "%%MatrixMarket matrix coordinate complex general\n%\n2 2 3\n1 1 2 0\n2 1 -3 0\n2 2 0 0\n"
    );
    // What reads back changed is refused, naming the value.
    let frac = entries_f64(2, 2, &[(0, 0, 2.0), (1, 1, 1.5)]);
    assert!(!field_fits(frac.values(), Field::Integer));
    let err = write_to(Vec::new(), &frac, &as_field(Field::Integer)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write the values as the `integer` field: stored value 1 is 1.5, but an integer field holds 64-bit integers"
    );
    let big = entries_f64(1, 1, &[(0, 0, 1e300)]);
    assert!(!field_fits(big.values(), Field::Integer));

    // Complex values with no imaginary part can be `real`; others cannot.
    let c = Entries::from_parts(
        vec![2, 2],
        vec![vec![0, 1], vec![0, 1]],
        ValueVec::C128(vec![C128 { re: 1.5, im: 0.0 }, C128 { re: 2.0, im: 0.0 }].into()),
    )
    .unwrap();
    assert!(field_fits(c.values(), Field::Real));
    assert_eq!(
        write(&c, &as_field(Field::Real)),
        "%%MatrixMarket matrix coordinate real general\n%\n2 2 2\n1 1 1.5\n2 2 2\n"
    );
    let ci = Entries::from_parts(
        vec![1, 1],
        vec![vec![0], vec![0]],
        ValueVec::C128(vec![C128 { re: 1.0, im: 1.0 }].into()),
    )
    .unwrap();
    assert!(!field_fits(ci.values(), Field::Real));
    assert!(field_fits(ci.values(), Field::Complex));
    assert_eq!(
        write_to(Vec::new(), &ci, &as_field(Field::Real)).unwrap_err().to_string(),
        "cannot write the values as the `real` field: stored value 0 is ( 1, 1 ), but a real field holds no imaginary parts (nor integers past 2^53)"
    );
}

/// Tensors written straight from CSR arrays keep the asked field too.
#[test]
fn tensors_keep_the_field() {
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 1\n3 1\n";
    let m = read_from(text.as_bytes(), "p.mtx", &ReadOptions::default()).unwrap();
    let t = sptk_tensor::convert(
        &m.entries,
        &sptk_encoding::resolve_target("CSR", 2).unwrap(),
        &Default::default(),
    )
    .unwrap()
    .tensor;
    assert!(field_fits(t.values(), m.header.field));
    let opts = WriteOptions {
        field: Some(m.header.field),
        ..Default::default()
    };
    let mut out = Vec::new();
    write_tensor_to(&mut out, &t, &opts).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "%%MatrixMarket matrix coordinate pattern general\n%\n3 3 3\n1 1\n1 3\n3 1\n"
    );
    // Keeping the symmetry too: the CLI passes the header's symmetry.
    let opts = WriteOptions {
        field: Some(m.header.field),
        symmetry: Some(m.header.symmetry),
        ..Default::default()
    };
    let mut out = Vec::new();
    write_tensor_to(&mut out, &t, &opts).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "%%MatrixMarket matrix coordinate pattern symmetric\n%\n3 3 2\n1 1\n3 1\n"
    );
}

//! Every encoding, width and value type: tensor -> `.spt` -> open -> identical arrays,
//! borrowed from the file; rows agree with the core's views; same input, same bytes.

use crate::common;

use common::{tensor, ENCODINGS};
use std::path::Path;

use sptk_store::{to_bytes, write, Dtype, SptFile, WriteOptions};
use sptk_tensor::{IndexVec, ValueType, ValueVec};

const WIDTHS: &[(Option<u8>, Option<u8>)] = &[
    (None, None),
    (Some(8), Some(8)),
    (Some(16), Some(16)),
    (Some(32), Some(32)),
    (Some(64), Some(16)),
    (Some(32), Some(2)),
];

fn shared(v: &IndexVec) -> bool {
    match v {
        IndexVec::Packed2 { bytes, .. } => bytes.is_shared(),
        IndexVec::U8(b) => b.is_shared(),
        IndexVec::U16(b) => b.is_shared(),
        IndexVec::U32(b) => b.is_shared(),
        IndexVec::U64(b) => b.is_shared(),
    }
}

fn values_shared(v: &ValueVec) -> bool {
    fn s<T>(b: &sptk_tensor::Buf<T>) -> bool {
        b.is_shared()
    }
    sptk_tensor::with_values!(v, b => s(b))
}

#[test]
fn every_encoding_width_and_value_type_round_trips() {
    let mut cases = 0;
    for &(name, rank, text) in ENCODINGS {
        for &(pos, crd) in WIDTHS {
            for vt in ValueType::ALL {
                let Some(t) = tensor(text, rank, vt, pos, crd, 11) else {
                    continue; // e.g. crdWidth = 2 on anything but n:m
                };
                let label = format!("{name} pos={pos:?} crd={crd:?} {vt}");
                let bytes = to_bytes(&t, &WriteOptions::default()).unwrap();
                assert_eq!(
                    bytes,
                    to_bytes(&t, &WriteOptions::default()).unwrap(),
                    "{label}: deterministic"
                );
                assert_eq!(bytes.len() % 64, 0, "{label}");
                let f = SptFile::from_bytes(&bytes).unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(f.header().encoding, *t.encoding(), "{label}");
                assert_eq!(f.header().value_type, vt, "{label}");
                let back = f.verify().unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(back, t, "{label}");
                for (n, a) in back.index_arrays() {
                    assert!(shared(a), "{label}: {n} is a copy");
                    let info = f.header().array(&n).unwrap();
                    assert_eq!(info.dtype, Dtype::index(a.width()), "{label}: {n}");
                    assert_eq!(info.offset % 64, 0);
                }
                assert!(values_shared(back.values()), "{label}: values copied");
                assert_eq!(f.header().entries, t.to_entries().len() as u64, "{label}");
                cases += 1;
            }
        }
    }
    assert!(cases > 1000, "only {cases} cases ran");
}

#[test]
fn files_on_disk_open_mapped_and_read() {
    let dir = tempfile::tempdir().unwrap();
    for &(name, rank, text) in ENCODINGS {
        let t = tensor(text, rank, ValueType::F32, Some(32), Some(32), 3).unwrap();
        let path = dir.path().join(format!("{}.spt", name.replace(':', "_")));
        write(&path, &t, &WriteOptions::default()).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            to_bytes(&t, &WriteOptions::default()).unwrap(),
            "{name}"
        );
        assert_eq!(SptFile::open(&path).unwrap().verify().unwrap(), t, "{name}");
        assert_eq!(SptFile::read(&path).unwrap().verify().unwrap(), t, "{name}");
        assert!(sptk_store::temporaries(&path).unwrap().is_empty());
        // Seeds for the fuzz target: `SPT_WRITE_SEEDS=fuzz/seeds/spt_open`.
        if let Some(seeds) = std::env::var_os("SPT_WRITE_SEEDS") {
            std::fs::create_dir_all(&seeds).unwrap();
            std::fs::copy(&path, Path::new(&seeds).join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn rows_match_the_core_views() {
    for text in [
        "CSR",
        "CSC",
        "BSR:2x3",
        "BSC:2x2",
        "map = (i, j) -> (i : dense, j : compressed(nonordered))",
    ] {
        for vt in [ValueType::F64, ValueType::Bool, ValueType::I16] {
            let t = tensor(text, 2, vt, Some(16), Some(8), 5).unwrap();
            let f = SptFile::from_bytes(&to_bytes(&t, &WriteOptions::default()).unwrap()).unwrap();
            let rows = t.layout().levels[0].size;
            for r in 0..rows {
                let row = f.row(r).unwrap();
                let view = t.outer_range(r..r + 1).unwrap();
                assert_eq!(
                    row.crd().to_u64_vec(),
                    view.crd(1).unwrap().iter().collect::<Vec<_>>(),
                    "{text} row {r}"
                );
                let vr = view.value_range();
                assert_eq!(row.values().len(), vr.len(), "{text} row {r}");
                for k in 0..vr.len() {
                    assert_eq!(row.values().scalar(k), t.values().scalar(vr.start + k));
                }
                assert_eq!(row.block() * row.len(), row.values().len());
            }
            assert!(f.row(rows).is_err());
            // Every range a..b: the same arrays as the core's view of those rows.
            for a in 0..=rows {
                for b in a..=rows {
                    let r = f.rows(a..b).unwrap();
                    let view = t.outer_range(a..b).unwrap();
                    let pos = t.pos(1).unwrap().to_u64_vec();
                    assert_eq!(
                        r.pos().to_u64_vec(),
                        pos[a as usize..=b as usize].to_vec(),
                        "{text} rows {a}..{b}"
                    );
                    assert_eq!(
                        r.crd().to_u64_vec(),
                        view.crd(1).unwrap().iter().collect::<Vec<_>>(),
                        "{text} rows {a}..{b}"
                    );
                    let vr = view.value_range();
                    assert_eq!(r.values().len(), vr.len(), "{text} rows {a}..{b}");
                    assert_eq!(r.positions().start, pos[a as usize]);
                    assert_eq!(r.block() * r.crd().len(), r.values().len());
                }
            }
            assert!(f.rows(0..rows + 1).is_err());
            #[allow(clippy::reversed_empty_ranges)]
            let backwards = f.rows(2..1);
            assert!(backwards.is_err());
        }
    }
    for text in ["COO", "DCSR", "ELL:8", "2:4"] {
        let t = tensor(text, 2, ValueType::F64, None, None, 5).unwrap();
        let f = SptFile::from_bytes(&to_bytes(&t, &WriteOptions::default()).unwrap()).unwrap();
        assert!(
            matches!(
                f.row(0).unwrap_err().kind(),
                sptk_store::StoreErrorKind::NoRows { .. }
            ),
            "{text}"
        );
    }
}

#[test]
fn provenance_and_metadata_are_kept() {
    let t = common::csr_f64();
    let mut opts = WriteOptions {
        source: Some("in.mtx".into()),
        ..Default::default()
    };
    opts.metadata
        .insert("note".into(), serde_json::json!({"a": [1, 2]}));
    let f = SptFile::from_bytes(&to_bytes(&t, &opts).unwrap()).unwrap();
    assert_eq!(f.header().provenance.source.as_deref(), Some("in.mtx"));
    assert_eq!(f.header().provenance.created_unix, None);
    assert_eq!(
        f.header().metadata["note"],
        serde_json::json!({"a": [1, 2]})
    );
    let b = f.header().binsparse.as_ref().unwrap();
    let b = serde_json::to_value(b).unwrap();
    assert_eq!(b["format"], "CSR");
    assert_eq!(b["arrays"]["indices_1"], "crd[1]");
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s2 = seen.clone();
    let with_progress = WriteOptions {
        progress: Some(std::sync::Arc::new(move |n| {
            s2.store(n, std::sync::atomic::Ordering::Relaxed)
        })),
        ..opts.clone()
    };
    let b = to_bytes(&t, &with_progress).unwrap();
    assert_eq!(b, to_bytes(&t, &opts).unwrap());
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let stamped = to_bytes(
        &t,
        &WriteOptions {
            timestamp: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(SptFile::from_bytes(&stamped)
        .unwrap()
        .header()
        .provenance
        .created_unix
        .is_some());
}

#[test]
fn slices_are_recorded_as_provenance() {
    let e = common::entries(&[20, 20], 60, 1, ValueType::F64);
    let enc: sptk_encoding::Encoding =
        "map = (i : #sparse_tensor<slice(2, 5, 3)>, j) -> (i : dense, j : compressed)"
            .parse()
            .unwrap();
    let t = sptk_tensor::convert_to(&e, &enc, &Default::default()).unwrap();
    assert_eq!(t.applied_slices().len(), 1);
    let f = SptFile::from_bytes(&to_bytes(&t, &WriteOptions::default()).unwrap()).unwrap();
    assert_eq!(f.header().provenance.slices, t.applied_slices());
    assert_eq!(f.header().dim_sizes(), t.dim_sizes());
}

#[test]
fn conversion_from_a_stored_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("a.spt");
    let dst = dir.path().join("b.spt");
    let t = common::csr_f64();
    write(&src, &t, &WriteOptions::default()).unwrap();
    let bsr = sptk_encoding::resolve_target("BSR:2x2", 2).unwrap();
    let c = sptk_store::convert_file(
        &src,
        &dst,
        &bsr,
        &Default::default(),
        &WriteOptions::default(),
    )
    .unwrap();
    let back = SptFile::open(&dst).unwrap().verify().unwrap();
    assert_eq!(back, c.tensor);
    assert_eq!(
        common::triples(&back.to_entries()),
        common::triples(&t.to_entries())
    );
    // In place: the source stays mapped while it is replaced.
    let csc = sptk_encoding::resolve_target("CSC", 2).unwrap();
    sptk_store::convert_file(
        &src,
        &src,
        &csc,
        &Default::default(),
        &WriteOptions::default(),
    )
    .unwrap();
    let f = SptFile::open(&src).unwrap();
    assert_eq!(f.header().encoding, sptk_encoding::csc());
    assert_eq!(
        common::triples(&f.verify().unwrap().to_entries()),
        common::triples(&t.to_entries())
    );
}

#[test]
fn a_large_file_reads_in_parallel_pieces_as_it_maps() {
    // Past 32 MiB, `SptFile::read` reads 16 MiB pieces in parallel into huge-page memory.
    let n = 3_000_000u64;
    let entries = sptk_tensor::Entries::from_parts(
        vec![n, 7],
        vec![(0..n).collect(), (0..n).map(|i| (i * 5) % 7).collect()],
        ValueVec::F64((0..n).map(|i| i as f64 * 0.5).collect::<Vec<_>>().into()),
    )
    .unwrap();
    let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let t = sptk_tensor::convert(&entries, &target, &Default::default())
        .unwrap()
        .tensor;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.spt");
    write(&path, &t, &WriteOptions::default()).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 20);
    let read = SptFile::read(&path).unwrap();
    assert_eq!(read.verify().unwrap(), t);
    assert_eq!(
        read.verify().unwrap(),
        SptFile::open(&path).unwrap().verify().unwrap()
    );
}

//! Every writer on every preset: what is written reads back as the same matrix (and, for
//! binsparse, as the same encoding and arrays, through sptk's level arrays where binsparse
//! has no format).

use sptk_hdf5::{read, write_binsparse, write_h5ad, write_mat, Content, ReadOptions, WriteOptions};
use sptk_tensor::{convert, ConvertOptions, Entries, Labels, Tensor, ValueType};

/// A 37 x 29 matrix with empty rows and columns, a full row, and negative values.
fn matrix(value_type: ValueType) -> Entries {
    let mut e = Entries::new(vec![37, 29], ValueType::F64);
    let mut x = 1u64;
    // Unsigned and boolean values cannot be negative.
    let unsigned = matches!(
        value_type,
        ValueType::U8 | ValueType::U16 | ValueType::U32 | ValueType::U64 | ValueType::Bool
    );
    let shift = if unsigned { -1.0 } else { 100.0 };
    let boolean = value_type == ValueType::Bool;
    for i in 0..37u64 {
        for j in 0..29u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let keep = i == 5 || (i % 7 != 3 && j % 5 != 2 && (x >> 60) < 3);
            if keep {
                let v = ((x >> 40) % 200) as f64 - shift;
                let v = if v == 0.0 || boolean { 1.0 } else { v };
                e.push(&[i, j], v).unwrap();
            }
        }
    }
    if value_type == ValueType::F64 {
        return e;
    }
    let target = sptk_encoding::resolve_target("COO", 2).unwrap();
    let opts = ConvertOptions {
        dtype: Some(value_type),
        ..Default::default()
    };
    convert(&e, &target, &opts).unwrap().tensor.to_entries()
}

fn to(e: &Entries, preset: &str) -> Tensor {
    let target = sptk_encoding::resolve_target(preset, e.rank()).unwrap();
    convert(e, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

fn back(path: &std::path::Path, member: Option<&str>) -> Tensor {
    let m = read(path, None, member, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    match m.content {
        Content::Tensor(t) => t,
        Content::Entries(e) => to(&e, "COO"),
        Content::Planned(_) => panic!("read leaves no array planned"),
    }
}

fn same_matrix(a: &Tensor, b: &Tensor) -> bool {
    let key = |t: &Tensor| {
        let e = t.to_entries();
        // Explicit zeros (every position of a dense layout) are not compared.
        let mut v: Vec<(Vec<u64>, String)> = (0..e.len())
            .filter(|&k| !matches!(e.scalar(k), Some(sptk_tensor::Scalar::Float(x)) if x == 0.0))
            .map(|k| {
                let c = (0..e.rank()).map(|d| e.coord(k, d)).collect();
                (c, format!("{:?}", e.scalar(k)))
            })
            .collect();
        v.sort();
        (e.dim_sizes().to_vec(), v)
    };
    key(a) == key(b)
}

const PRESETS: &[&str] = &[
    "COO", "COO:soa", "CSR", "CSC", "DCSR", "DCSC", "BSR:2x4", "BSC:4x2", "ELL", "2:4", "CSF",
    "Dense",
];

#[test]
fn binsparse_round_trips_every_preset_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let e = matrix(ValueType::F64);
    for preset in PRESETS {
        let mut e = e.clone();
        if *preset == "2:4" {
            // n:m needs at most 2 entries per group of 4.
            let target = sptk_encoding::resolve_target("2:4", 2).unwrap();
            let opts = ConvertOptions {
                prune: true,
                ..Default::default()
            };
            e = convert(&e, &target, &opts).unwrap().tensor.to_entries();
        }
        let t = to(&e, preset);
        let path = dir
            .path()
            .join(format!("{}.bsp.h5", preset.replace(':', "_")));
        write_binsparse(&path, &t, &WriteOptions::default())
            .unwrap_or_else(|e| panic!("{preset}: {e}"));
        let got = back(&path, None);
        assert!(same_matrix(&got, &t), "{preset}");
        let m = read(&path, None, None, &ReadOptions::default()).unwrap();
        let format = match *preset {
            "COO" | "COO:soa" => "binsparse COOR",
            "CSF" => "binsparse DCSR",
            "Dense" => "binsparse DMATR",
            p if p.starts_with("BS") || p == "ELL" || p == "2:4" => {
                // No binsparse format: sptk's own arrays come back exactly.
                assert_eq!(
                    got.encoding(),
                    t.encoding(),
                    "{preset}: the encoding comes back"
                );
                assert_eq!(got.levels(), t.levels(), "{preset}: the arrays come back");
                assert_eq!(got.values(), t.values(), "{preset}");
                "binsparse COOR with sptk's level arrays"
            }
            p => &format!("binsparse {p}"),
        };
        assert_eq!(m.layout, format, "{preset}");
    }
}

#[test]
fn binsparse_keeps_every_value_type() {
    let dir = tempfile::tempdir().unwrap();
    for vt in [
        ValueType::F32,
        ValueType::I8,
        ValueType::I64,
        ValueType::U16,
        ValueType::Bool,
        ValueType::C64,
        ValueType::C128,
    ] {
        let t = to(&matrix(vt), "CSR");
        let path = dir.path().join("v.bsp.h5");
        write_binsparse(&path, &t, &WriteOptions::default()).unwrap();
        let got = back(&path, None);
        assert_eq!(got.value_type(), vt);
        assert!(same_matrix(&got, &t), "{vt:?}");
    }
    let t = to(&matrix(ValueType::F16), "CSR");
    let e =
        write_binsparse(&dir.path().join("h.bsp.h5"), &t, &WriteOptions::default()).unwrap_err();
    assert!(e.to_string().contains("--dtype f32"), "{e}");
    assert!(
        !dir.path().join("h.bsp.h5").exists(),
        "nothing is left behind"
    );
}

#[test]
fn h5ad_and_mat_round_trip_every_preset() {
    let dir = tempfile::tempdir().unwrap();
    let e = matrix(ValueType::F64);
    for preset in PRESETS.iter().filter(|p| **p != "2:4") {
        let t = to(&e, preset);
        let h5ad = dir.path().join("m.h5ad");
        write_h5ad(&h5ad, &t, &WriteOptions::default()).unwrap_or_else(|e| panic!("{preset}: {e}"));
        assert!(same_matrix(&back(&h5ad, None), &t), "h5ad {preset}");
        let mat = dir.path().join("m.mat");
        let notes = write_mat(&mat, &t, &WriteOptions::default())
            .unwrap_or_else(|e| panic!("{preset}: {e}"));
        // MATLAB keeps CSC as it is and says what it converted anything else from.
        let converted = notes
            .iter()
            .any(|n| n.starts_with("a MATLAB sparse variable holds CSC; "));
        assert_eq!(converted, *preset != "CSC", "{preset}: {notes:?}");
        assert_eq!(sptk_hdf5::detect(&mat).unwrap(), sptk_hdf5::Kind::Matlab);
        assert!(same_matrix(&back(&mat, None), &t), "mat {preset}");
    }
}

#[test]
fn h5ad_keeps_labels_and_csc() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = to(&matrix(ValueType::F32), "CSC");
    let rows: Vec<String> = (0..37).map(|i| format!("cell-{i}")).collect();
    t = t.with_labels(0, Labels::from_strings(&rows)).unwrap();
    let path = dir.path().join("l.h5ad");
    write_h5ad(&path, &t, &WriteOptions::default()).unwrap();
    let m = read(&path, None, None, &ReadOptions::default()).unwrap();
    assert_eq!(m.layout, "csc_matrix");
    let l = m.labels[0].as_ref().unwrap();
    assert_eq!(l.get(36), Some("cell-36"));
    assert_eq!(m.labels[1].as_ref().unwrap().get(3), Some("3"));
}

#[test]
fn mat_writes_logical_and_complex_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    for vt in [ValueType::Bool, ValueType::C128] {
        let t = to(&matrix(vt), "CSC");
        let path = dir.path().join("v.mat");
        let opts = WriteOptions {
            var: Some("W_1".into()),
            ..Default::default()
        };
        write_mat(&path, &t, &opts).unwrap();
        let got = back(&path, Some("W_1"));
        assert_eq!(got.value_type(), vt);
        assert!(same_matrix(&got, &t));
    }
    let t = to(&matrix(ValueType::F32), "CSC");
    let e = write_mat(&dir.path().join("f.mat"), &t, &WriteOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("double, logical or complex double"),
        "{e}"
    );
    let opts = WriteOptions {
        var: Some("1x".into()),
        ..Default::default()
    };
    let t = to(&matrix(ValueType::F64), "CSC");
    assert!(write_mat(&dir.path().join("g.mat"), &t, &opts).is_err());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().all(|f| {
            let n = f.unwrap().file_name();
            let n = n.to_string_lossy();
            n == "v.mat"
        }),
        "nothing is left behind"
    );
}

#[test]
fn binsparse_writes_3d_tensors_as_custom_trees() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Entries::new(vec![6, 5, 7], ValueType::F64);
    for (n, (i, j, k)) in [(0, 0, 0), (0, 4, 6), (2, 1, 3), (2, 1, 5), (5, 3, 0)]
        .into_iter()
        .enumerate()
    {
        e.push(&[i, j, k], n as f64 + 0.5).unwrap();
    }
    for (preset, layout) in [
        ("CSF", "binsparse custom"),
        ("COO", "binsparse custom"),
        ("Dense", "binsparse custom"),
    ] {
        let t = to(&e, preset);
        let path = dir.path().join("t.bsp.h5");
        write_binsparse(&path, &t, &WriteOptions::default()).unwrap();
        let m = read(&path, None, None, &ReadOptions::default()).unwrap();
        assert_eq!(m.layout, layout, "{preset}");
        assert!(same_matrix(&back(&path, None), &t), "{preset}");
    }
}

#[test]
fn binsparse_structure_writes_one_triangle_and_reads_back_whole() {
    use sptk_hdf5::Structure;
    let dir = tempfile::tempdir().unwrap();
    let mut sym = Entries::new(vec![5, 5], ValueType::F64);
    let mut skew = Entries::new(vec![5, 5], ValueType::F64);
    for (i, j, v) in [(0u64, 0u64, 2.0), (1, 0, 3.0), (4, 2, -1.5), (3, 3, 7.0)] {
        sym.push(&[i, j], v).unwrap();
        if i != j {
            sym.push(&[j, i], v).unwrap();
            skew.push(&[i, j], v).unwrap();
            skew.push(&[j, i], -v).unwrap();
        }
    }
    for (e, s, name) in [
        (&sym, Structure::Symmetric, "symmetric_lower"),
        (&skew, Structure::SkewSymmetric, "skew_symmetric_lower"),
    ] {
        for preset in ["CSR", "COO", "BSR:2x2"] {
            let t = to(e, preset);
            let path = dir.path().join("s.bsp.h5");
            let opts = WriteOptions {
                structure: Some(s),
                ..Default::default()
            };
            write_binsparse(&path, &t, &opts).unwrap_or_else(|e| panic!("{preset}: {e}"));
            let text = {
                let f = hdf5::File::open(&path).unwrap();
                let a = f.attr("binsparse").unwrap();
                a.read_scalar::<hdf5::types::VarLenUnicode>()
                    .unwrap()
                    .to_string()
            };
            assert!(text.contains(name), "{text}");
            assert!(same_matrix(&back(&path, None), &t), "{preset} {name}");
        }
    }
    // A matrix without the structure is refused, naming an entry, and nothing is written.
    let t = to(&skew, "CSR");
    let path = dir.path().join("no.bsp.h5");
    let opts = WriteOptions {
        structure: Some(Structure::Symmetric),
        ..Default::default()
    };
    let e = write_binsparse(&path, &t, &opts).unwrap_err();
    assert!(e.to_string().contains("is not symmetric"), "{e}");
    assert!(!path.exists());
}

//! Tables written by pyarrow read exactly here (every Parquet codec, a hive-partitioned
//! dataset, narrow and unsigned types, dictionary and text columns, an IPC stream), and
//! tables written here open in pyarrow with the content we wrote (`tests/peers.py`
//! compares). Skipped with a note when no Python has pyarrow and SciPy, unless
//! `SPTK_REQUIRE_PYTHON` is set (CI sets it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use sptk_table::{write_table, Table, TableKind, TableOptions, WriteOptions};
use sptk_tensor::{ConvertOptions, Entries, Scalar, ValueType};

fn peer_python() -> Option<PathBuf> {
    sptk_testkit::python(&["numpy", "scipy", "pyarrow"], "table peer check")
}

fn script(python: &Path, mode: &str, dir: &Path) {
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers.py"))
        .args([mode, dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "peers.py {mode}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn as_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Float(x) => x,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::Complex(..) => panic!("complex"),
    }
}

fn canonical(e: &Entries) -> Vec<Value> {
    let mut v: Vec<(Vec<u64>, f64)> = (0..e.len())
        .map(|n| {
            (
                (0..e.rank()).map(|d| e.coord(n, d)).collect(),
                as_f64(e.scalar(n).unwrap()),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v.into_iter()
        .map(|(c, x)| {
            let mut row: Vec<Value> = c.into_iter().map(Value::from).collect();
            row.push(json!(x));
            Value::Array(row)
        })
        .collect()
}

#[test]
fn pyarrow_tables_read_exactly() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    script(&python, "write", dir.path());
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("expected.json")).unwrap())
            .unwrap();
    let csr = sptk_encoding::resolve_target("CSR", 2).unwrap();
    for (name, want) in expected.as_object().unwrap() {
        let path = dir.path().join(name);
        let files = if path.is_dir() {
            sptk_table::files_in(&path).unwrap()
        } else {
            vec![(path.clone(), HashMap::new())]
        };
        let t = Table::open(files.clone(), &TableOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = t.read_entries().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(json!(r.entries.dim_sizes()), want["shape"], "{name}");
        assert_eq!(
            Value::Array(canonical(&r.entries)),
            want["entries"],
            "{name}"
        );
        if let Some(labels) = want.get("labels0") {
            let got: Vec<&str> = r.labels[0].as_ref().unwrap().iter().collect();
            assert_eq!(json!(got), *labels, "{name}");
        }
        // The direct route into CSR agrees wherever it applies.
        if let Some(d) = t.read_converted(&csr, &ConvertOptions::default()).unwrap() {
            assert_eq!(
                Value::Array(canonical(&d.converted.tensor.to_entries())),
                want["entries"],
                "{name} (direct)"
            );
        }
    }
}

#[test]
fn pyarrow_opens_the_tables_we_write() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    // A matrix (with an empty row), in several encodings and value types, and a 3-D tensor.
    let mut m = Entries::new(vec![70_000, 300], ValueType::F64);
    for r in (0..70_000u64).step_by(97) {
        m.push(&[r, (r * 7) % 300], (r % 1000) as f64 + 1.0)
            .unwrap();
    }
    let mut t3 = Entries::new(vec![5, 6, 7], ValueType::F64);
    for i in 0..5u64 {
        t3.push(&[i, (i * 2) % 6, (i * 3) % 7], i as f64 + 0.25)
            .unwrap();
    }
    // (entries, encoding, value type, file, kind, expected coordinate column types)
    type Job<'a> = (
        &'a Entries,
        &'a str,
        Option<ValueType>,
        &'a str,
        TableKind,
        [&'a str; 3],
    );
    let jobs: [Job; 6] = [
        (
            &m,
            "CSR",
            None,
            "csr.parquet",
            TableKind::Parquet,
            ["int32", "int16", ""],
        ),
        (
            &m,
            "BSR:4x4",
            Some(ValueType::F32),
            "bsr.arrow",
            TableKind::ArrowFile,
            ["int32", "int16", ""],
        ),
        (
            &m,
            "DCSC",
            Some(ValueType::I32),
            "dcsc.arrows",
            TableKind::ArrowStream,
            ["int32", "int16", ""],
        ),
        (
            &m,
            "COO",
            Some(ValueType::I16),
            "coo.parquet",
            TableKind::Parquet,
            ["int32", "int16", ""],
        ),
        (
            &m,
            "2:4",
            Some(ValueType::F16),
            "nm.parquet",
            TableKind::Parquet,
            ["int32", "int16", ""],
        ),
        (
            &t3,
            "CSF",
            None,
            "csf.parquet",
            TableKind::Parquet,
            ["int8", "int8", "int8"],
        ),
    ];
    for (e, preset, dtype, file, kind, types) in jobs {
        let target = sptk_encoding::resolve_target(preset, e.rank()).unwrap();
        let o = ConvertOptions {
            dtype,
            prune: true,
            ..ConvertOptions::default()
        };
        let t = sptk_tensor::convert(e, &target, &o).unwrap().tensor;
        let opts = WriteOptions {
            rows_per_group: 300,
            ..WriteOptions::default()
        };
        write_table(&dir.path().join(file), &t, kind, &opts).unwrap();
        let names = sptk_table::coordinate_names(e.rank());
        cases.push(json!({
            "file": file,
            "columns": names,
            "types": types[..e.rank()],
            "shape": t.dim_sizes(),
            "entries": canonical(&t.to_entries()),
        }));
    }
    std::fs::write(
        dir.path().join("cases.json"),
        serde_json::to_string(&cases).unwrap(),
    )
    .unwrap();
    script(&python, "check", dir.path());
}

//! Files written here opened by the peer tools, through the CI virtual environment:
//! `anndata.read_h5ad`, the binsparse reference reader and `mat73.loadmat` must each find
//! the matrix that was written (`tests/peers.py` compares). Skipped with a note when no
//! Python has those packages, unless `SPTK_REQUIRE_PYTHON` is set (CI sets it).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};
use sptk_hdf5::{write_binsparse, write_h5ad, write_mat, WriteOptions};
use sptk_tensor::{convert, ConvertOptions, Entries, Labels, Scalar, Tensor, ValueType};

fn peer_python() -> Option<PathBuf> {
    let modules = ["numpy", "scipy", "anndata", "binsparse", "mat73"];
    sptk_testkit::python(&modules, "HDF5 peer check")
}

fn entries(vt: ValueType) -> Entries {
    let mut e = Entries::new(vec![41, 23], ValueType::F64);
    let mut x = 7u64;
    for i in 0..41u64 {
        for j in 0..23u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if i == 2 || (i % 9 != 4 && (x >> 61) < 2) {
                let frac = if matches!(vt, ValueType::F32 | ValueType::F64 | ValueType::C128) {
                    0.25
                } else {
                    0.0
                };
                let v = if vt == ValueType::Bool {
                    1.0
                } else {
                    ((x >> 33) % 97) as f64 + 1.0 + frac
                };
                e.push(&[i, j], v).unwrap();
            }
        }
    }
    let target = sptk_encoding::resolve_target("COO", 2).unwrap();
    let opts = ConvertOptions {
        dtype: Some(vt),
        ..Default::default()
    };
    convert(&e, &target, &opts).unwrap().tensor.to_entries()
}

fn to(e: &Entries, preset: &str) -> Tensor {
    let target = sptk_encoding::resolve_target(preset, 2).unwrap();
    convert(e, &target, &ConvertOptions::default())
        .unwrap()
        .tensor
}

/// The expected content of a case, as the peer script reads it.
fn case(file: &std::path::Path, peer: &str, t: &Tensor) -> Value {
    let e = t.to_entries();
    let vals: Vec<Value> = (0..e.len())
        .map(|k| match e.scalar(k).unwrap() {
            Scalar::Float(x) => json!(x),
            Scalar::Int(x) => json!(x as i64),
            Scalar::Bool(b) => json!(b as u8),
            Scalar::Complex(re, im) => json!([re, im]),
        })
        .collect();
    json!({
        "file": file,
        "peer": peer,
        "shape": e.dim_sizes(),
        "rows": e.coords(0).to_u64_vec(),
        "cols": e.coords(1).to_u64_vec(),
        "vals": vals,
    })
}

#[test]
fn peers_open_what_we_write() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cases = Vec::new();
    let opts = WriteOptions::default();
    let base = entries(ValueType::F64);
    for preset in [
        "CSR", "CSC", "DCSR", "DCSC", "COO", "BSR:2x2", "ELL", "Dense",
    ] {
        let t = to(&base, preset);
        let path = d.join(format!("{}.bsp.h5", preset.replace(':', "_")));
        write_binsparse(&path, &t, &opts).unwrap();
        cases.push(case(&path, "binsparse", &t));
    }
    for vt in [
        ValueType::F32,
        ValueType::I32,
        ValueType::C128,
        ValueType::Bool,
    ] {
        let t = to(&entries(vt), "CSR");
        let path = d.join(format!("{}.bsp.h5", vt.name()));
        write_binsparse(&path, &t, &opts).unwrap();
        cases.push(case(&path, "binsparse", &t));
    }
    for (preset, vt) in [
        ("CSR", ValueType::F32),
        ("CSC", ValueType::F64),
        ("BSR:2x2", ValueType::I64),
    ] {
        let mut t = to(&entries(vt), preset);
        let obs: Vec<String> = (0..41).map(|i| format!("cell_{i}")).collect();
        t = t.with_labels(0, Labels::from_strings(&obs)).unwrap();
        let path = d.join(format!("{}.h5ad", preset.replace(':', "_")));
        write_h5ad(&path, &t, &opts).unwrap();
        let mut c = case(&path, "anndata", &t);
        c["obs"] = json!(obs);
        c["var"] = json!((0..23).map(|i| i.to_string()).collect::<Vec<_>>());
        cases.push(c);
    }
    for (name, vt) in [
        ("A", ValueType::F64),
        ("L", ValueType::Bool),
        ("Z", ValueType::C128),
    ] {
        let t = to(&entries(vt), "CSR");
        let path = d.join(format!("{name}.mat"));
        let o = WriteOptions {
            var: Some(name.into()),
            ..Default::default()
        };
        write_mat(&path, &t, &o).unwrap();
        let mut c = case(&path, "mat73", &t);
        c["member"] = json!(name);
        cases.push(c);
    }
    let manifest = d.join("cases.json");
    std::fs::write(&manifest, serde_json::to_vec(&cases).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&manifest)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("{n} of {n} files", n = cases.len())),
        "{text}"
    );
}

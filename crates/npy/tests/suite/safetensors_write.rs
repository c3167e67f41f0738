//! `.safetensors` output: a dense tensor read back by our reader with every value and
//! type kept; a 2:4 tensor as `NAME.values` / `NAME.indices` and its metadata, which put
//! back together give the pruned matrix; both loaded by the `safetensors` Python package
//! as the same arrays; complex128 refused.

use crate::peer;

use safetensors::SafeTensors;
use sptk_npy::{write_safetensors, SafeTensorsFile};
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, ValueType};

/// A 6 x 10 matrix (10 is not a multiple of 4: the last group is short), values of `vt`.
fn matrix(vt: ValueType) -> Entries {
    let mut e = Entries::new(vec![6, 10], ValueType::F64);
    for i in 0..6u64 {
        for j in 0..10u64 {
            if (i * 7 + j * 3) % 5 < 2 {
                let v = if vt == ValueType::Bool {
                    1.0
                } else {
                    (i * 10 + j) as f64 - 20.0
                };
                e.push(&[i, j], v).unwrap();
            }
        }
    }
    let o = ConvertOptions {
        dtype: Some(vt),
        ..Default::default()
    };
    let coo = sptk_encoding::resolve_target("COO", 2).unwrap();
    convert(&e, &coo, &o).unwrap().tensor.to_entries()
}

fn to(e: &Entries, preset: &str) -> Tensor {
    let target = sptk_encoding::resolve_target(preset, 2).unwrap();
    let o = ConvertOptions {
        prune: preset == "2:4",
        ..Default::default()
    };
    convert(e, &target, &o).unwrap().tensor
}

#[test]
fn a_dense_tensor_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    for vt in [
        ValueType::F32,
        ValueType::BF16,
        ValueType::I64,
        ValueType::Bool,
        ValueType::C64,
    ] {
        let e = matrix(vt);
        let path = dir.path().join(format!("{}.safetensors", vt.name()));
        let notes = write_safetensors(&path, &to(&e, "CSR"), "w", None).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let f = SafeTensorsFile::open(&path).unwrap();
        let t = f.tensor(None).unwrap();
        assert_eq!(
            (t.name.as_str(), t.dtype, t.shape.as_slice()),
            ("w", Some(vt), &[6u64, 10][..])
        );
        let got = f.entries(None, None).unwrap();
        assert_eq!(peer::listed(&got), peer::listed(&e), "{vt:?}");
        assert_eq!(got.value_type(), vt);
    }
    let e = matrix(ValueType::C128);
    let path = dir.path().join("c.safetensors");
    let err = write_safetensors(&path, &to(&e, "CSR"), "w", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("c.safetensors: complex128 values have no safetensors type"),
        "{err}"
    );
    assert!(!path.exists());
    // A dense array past the memory limit is refused before it is built.
    let err = write_safetensors(&path, &to(&e, "CSR"), "w", Some(100)).unwrap_err();
    assert!(!path.exists(), "{err}");
}

/// The dense matrix that `NAME.values` and `NAME.indices` of an n:m file hold.
fn unpacked(file: &[u8], name: &str) -> (Vec<f32>, [usize; 2]) {
    let st = SafeTensors::deserialize(file).unwrap();
    let (_, meta) = SafeTensors::read_metadata(file).unwrap();
    let meta = meta.metadata().clone().unwrap();
    assert_eq!(meta["format"], "2:4");
    assert_eq!((meta["n"].as_str(), meta["m"].as_str()), ("2", "4"));
    let shape: Vec<usize> = meta["shape"]
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let values = st.tensor(&format!("{name}.values")).unwrap();
    let offsets = st.tensor(&format!("{name}.indices")).unwrap();
    assert_eq!(values.shape(), offsets.shape());
    assert_eq!(values.shape(), [shape[0], 6]);
    let v: Vec<f32> = values
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let mut dense = vec![0f32; shape[0] * shape[1]];
    for (k, (&x, &o)) in v.iter().zip(offsets.data()).enumerate() {
        let (row, slot) = (k / 6, k % 6);
        let col = slot / 2 * 4 + o as usize;
        assert!(o < 4 && col < shape[1], "offset {o} at {k}");
        dense[row * shape[1] + col] += x;
    }
    (dense, [shape[0], shape[1]])
}

#[test]
fn a_2_4_tensor_is_written_as_values_indices_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let e = matrix(ValueType::F32);
    let pruned = to(&e, "2:4");
    let path = dir.path().join("w.safetensors");
    let notes = write_safetensors(&path, &pruned, "fc1.weight", None).unwrap();
    assert!(notes[0].contains("`fc1.weight.values`"), "{notes:?}");
    let (dense, [rows, cols]) = unpacked(&std::fs::read(&path).unwrap(), "fc1.weight");
    let mut want = vec![0f32; rows * cols];
    let kept = pruned.to_entries();
    for k in 0..kept.len() {
        let x = match kept.scalar(k).unwrap() {
            sptk_tensor::Scalar::Float(x) => x as f32,
            other => panic!("{other:?}"),
        };
        want[kept.coord(k, 0) as usize * cols + kept.coord(k, 1) as usize] = x;
    }
    assert_eq!(dense, want);
    assert!(want.iter().filter(|&&x| x != 0.0).count() > 20);

    // The Python package loads both files as the same arrays.
    let Some(py) = peer::python("numpy, safetensors") else {
        return;
    };
    let dense_path = dir.path().join("d.safetensors");
    write_safetensors(&dense_path, &to(&e, "CSR"), "w", None).unwrap();
    let got = peer::run(&py, LOAD, &[&path, &dense_path]);
    assert_eq!(got["meta"]["format"], "2:4");
    let flat: Vec<f64> = dense.iter().map(|&x| f64::from(x)).collect();
    assert_eq!(got["nm"], serde_json::json!(flat));
    let mut full = vec![0f64; 60];
    for k in 0..e.len() {
        if let Some(sptk_tensor::Scalar::Float(x)) = e.scalar(k) {
            full[e.coord(k, 0) as usize * 10 + e.coord(k, 1) as usize] = x;
        }
    }
    assert_eq!(got["dense"], serde_json::json!(full));
    assert_eq!(got["dtype"], "float32");
}

/// Loads an n:m file (unpacking it as documented) and a dense one.
const LOAD: &str = r#"
import json, sys
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file
with safe_open(sys.argv[1], framework="numpy") as f:
    meta = f.metadata()
nm = load_file(sys.argv[1])
v, o = nm["fc1.weight.values"], nm["fc1.weight.indices"]
rows, cols = map(int, meta["shape"].split(","))
n, m = int(meta["n"]), int(meta["m"])
out = np.zeros((rows, cols), dtype=v.dtype)
slots = np.arange(v.shape[1])
for r in range(rows):
    np.add.at(out[r], slots // n * m + o[r], v[r])
d = load_file(sys.argv[2])["w"]
print(json.dumps({"meta": meta, "nm": [float(x) for x in out.ravel()],
                  "dense": [float(x) for x in d.ravel()], "dtype": str(d.dtype)}))
"#;

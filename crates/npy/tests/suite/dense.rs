//! Dense arrays as coordinates: `.npy` files NumPy writes (C and Fortran order, N-D, every
//! numeric type) and tensors in `.safetensors` files, their nonzeros read exactly; damaged
//! safetensors headers and arrays past the memory budget refused naming the file.

use crate::peer;

use std::path::Path;

use serde_json::{json, Value};
use sptk_npy::{Npy, SafeTensorsFile};
use sptk_tensor::{Entries, Scalar};

/// Nonzeros as `[[coords...], re, im]`, in the order read.
fn nonzeros(e: &Entries) -> Value {
    let items: Vec<Value> = (0..e.len())
        .map(|k| {
            let c: Vec<u64> = (0..e.rank()).map(|d| e.coord(k, d)).collect();
            let (re, im) = match e.scalar(k).unwrap() {
                Scalar::Float(x) => (x, 0.0),
                Scalar::Int(x) => (x as f64, 0.0),
                Scalar::Bool(b) => (b as u8 as f64, 0.0),
                Scalar::Complex(re, im) => (re, im),
            };
            json!([c, re, im])
        })
        .collect();
    json!({"shape": e.dim_sizes(), "nonzeros": items})
}

const WRITE_DENSE: &str = r#"
import json, os, sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(5)
def nz(a):
    idx = np.argwhere(a != 0)
    return {"shape": list(a.shape),
            "nonzeros": [[[int(i) for i in ix], float(np.real(a[tuple(ix)])), float(np.imag(a[tuple(ix)]))] for ix in idx]}
base = rng.integers(-3, 4, size=(6, 5, 4)) * (rng.random((6, 5, 4)) < 0.4)
cases = {}
def save(name, a, st=False):
    path = os.path.join(out, name)
    if st:
        from safetensors.numpy import save_file
        save_file({"other": np.zeros(3, np.float32), "w": a}, path)
    else:
        np.save(path, a)
    cases[path] = nz(a)
save("c2.npy", (base[0] * 0.5).astype(np.float64))
save("f2.npy", np.asfortranarray(base[1].astype(np.float32)))
save("n3.npy", base.astype(np.int16))
save("f3.npy", np.asfortranarray(base.astype(np.float64)))
save("h.npy", base[2].astype(np.float16))
save("b.npy", base[3] != 0)
save("be.npy", base[4].astype(">i4"))
save("c.npy", (base[0] + 1j * base[1]).astype(np.complex64))
save("u.npy", np.abs(base[5]).astype(np.uint64))
for dt in ["float32", "float16", "int64", "uint8", "bool"]:
    save(f"w_{dt}.safetensors", base[1].astype(dt), True)
print(json.dumps(cases))
"#;

#[test]
fn files_numpy_and_safetensors_write_read_exactly() {
    let Some(py) = peer::python("numpy, safetensors") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = peer::run(&py, WRITE_DENSE, &[dir.path()]);
    let cases = cases.as_object().unwrap();
    assert_eq!(cases.len(), 14);
    for (path, want) in cases {
        let p = Path::new(path);
        let e = if path.ends_with(".npy") {
            Npy::open(p).unwrap().to_entries(None).unwrap()
        } else {
            let f = SafeTensorsFile::open(p).unwrap();
            assert_eq!(f.tensors().len(), 2);
            assert!(f
                .entries(None, None)
                .unwrap_err()
                .to_string()
                .contains("holds 2 tensors"));
            f.entries(Some("w"), None).unwrap()
        };
        assert_eq!(&nonzeros(&e), want, "{path}");
    }
}

/// A safetensors file from its header text and data bytes.
fn safetensors(dir: &Path, name: &str, header: &str, data: &[u8]) -> std::path::PathBuf {
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend(header.as_bytes());
    b.extend(data);
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

#[test]
fn bfloat16_reads_and_damaged_headers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bf: Vec<u8> = [0.0f32, 1.5, -0.0, -2.0]
        .iter()
        .flat_map(|&x| half::bf16::from_f32(x).to_le_bytes())
        .collect();
    let good = r#"{"fc1.weight":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}"#;
    let p = safetensors(d, "bf.safetensors", good, &bf);
    let e = SafeTensorsFile::open(&p)
        .unwrap()
        .entries(Some("fc1.weight"), None)
        .unwrap();
    assert_eq!(
        nonzeros(&e)["nonzeros"],
        json!([[[0, 1], 1.5, 0.0], [[1, 1], -2.0, 0.0]])
    );
    let cases = [
        ("json.safetensors", "{not json", &bf[..], "bad header"),
        (
            "past.safetensors",
            r#"{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}"#,
            &bf[..6],
            "truncated file, or offsets past the end",
        ),
        (
            "shape.safetensors",
            r#"{"w":{"dtype":"BF16","shape":[3,2],"data_offsets":[0,8]}}"#,
            &bf[..],
            "do not match its shape",
        ),
        (
            "dtype.safetensors",
            r#"{"w":{"dtype":"X99","shape":[2,2],"data_offsets":[0,8]}}"#,
            &bf[..],
            "X99",
        ),
    ];
    for (name, header, data, want) in cases {
        let p = safetensors(d, name, header, data);
        let e = SafeTensorsFile::open(&p).err().unwrap().to_string();
        assert!(e.contains(name) && e.contains(want), "{e}");
    }
    let p = safetensors(
        d,
        "f8.safetensors",
        r#"{"w":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}"#,
        &bf,
    );
    let e = SafeTensorsFile::open(&p)
        .unwrap()
        .entries(None, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor `w`: element type F8_E4M3 has no value type"),
        "{e}"
    );
    let e = SafeTensorsFile::open(&p)
        .unwrap()
        .entries(Some("x"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no tensor `x` (it holds w)"), "{e}");
    let p = d.join("short.safetensors");
    std::fs::write(&p, b"\x05\x00").unwrap();
    assert!(SafeTensorsFile::open(&p)
        .err()
        .unwrap()
        .to_string()
        .contains("shorter than"));
}

#[test]
fn a_dense_array_whose_nonzeros_pass_the_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.npy");
    let v = vec![1.0f64; 1000];
    sptk_npy::write(&p, &[10, 100], sptk_npy::Order::C, &v).unwrap();
    let a = Npy::open(&p).unwrap();
    assert_eq!(a.to_entries(Some(16_000)).unwrap().len(), 1000);
    let e = a.to_entries(Some(15_999)).unwrap_err().to_string();
    assert!(
        e.contains("big.npy") && e.contains("past its memory limit of 15999 bytes"),
        "{e}"
    );
    let s = dir.path().join("scalar.npy");
    sptk_npy::write(&s, &[], sptk_npy::Order::C, &[2.0f64]).unwrap();
    assert!(Npy::open(&s)
        .unwrap()
        .to_entries(None)
        .unwrap_err()
        .to_string()
        .contains("0-dimensional"));
}

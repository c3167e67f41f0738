//! NumPy, SciPy and safetensors through the command line: the 2:4 pruning workflow from a
//! `.safetensors` tensor, `info` listing a file's tensors, `.npz` and dense `.npy` written
//! by extension and read back (by us, and by SciPy and NumPy when a Python with them is at
//! hand), and damaged inputs refused naming the file.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{fails, run};

fn ok(args: &[&str], dir: &Path) -> (String, String) {
    common::succeeds(args, dir, None)
}

/// A `.safetensors` file of `(name, dtype, shape, bytes)` tensors.
fn safetensors(path: &Path, tensors: &[(&str, &str, &[u64], Vec<u8>)]) {
    let mut header = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{},{}]}}",
            data.len(),
            data.len() + bytes.len()
        ));
        data.extend(bytes);
    }
    let mut text = format!("{{{}}}", header.join(","));
    while (8 + text.len()) % 8 != 0 {
        text.push(' ');
    }
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend(text.as_bytes());
    out.extend(data);
    std::fs::write(path, out).unwrap();
}

/// The weight: 4 x 8, value `(i * 8 + j) % 7 - 3` (so some zeros), as f32.
fn weight() -> Vec<f32> {
    (0..32).map(|k| ((k % 7) as f32) - 3.0).collect()
}

/// Entries `(row, col, value)` of a Matrix Market file, 0-based.
fn mtx_entries(path: &Path) -> Vec<(u64, u64, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    lines.next();
    let mut v: Vec<(u64, u64, f64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse::<u64>().unwrap() - 1,
                f[1].parse::<u64>().unwrap() - 1,
                f[2].parse().unwrap(),
            )
        })
        .collect();
    v.sort_by_key(|e| (e.0, e.1));
    v
}

#[test]
fn safetensors_weights_prune_to_2_4_and_info_lists_the_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = weight();
    safetensors(
        &d.join("w.safetensors"),
        &[
            ("fc1.bias", "F32", &[4], vec![0u8; 16]),
            (
                "fc1.weight",
                "F32",
                &[4, 8],
                w.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ),
        ],
    );
    let (info, _) = ok(&["info", "w.safetensors"], d);
    assert!(
        info.contains("w.safetensors:fc1.weight  dense F32  4 x 8"),
        "{info}"
    );
    assert!(info.contains("w.safetensors:fc1.bias"), "{info}");
    let (_, err) = ok(
        &[
            "w.safetensors:fc1.weight",
            "--to",
            "2:4",
            "--prune",
            "--dtype",
            "bf16",
            "-o",
            "fc1.spt",
        ],
        d,
    );
    assert!(err.contains("--prune dropped"), "{err}");
    let (info, _) = ok(&["info", "fc1.spt"], d);
    assert!(
        info.contains("value type  bf16") && info.contains("structured[2, 4]"),
        "{info}"
    );
    ok(&["fc1.spt", "-o", "fc1.mtx"], d);
    let got = mtx_entries(&d.join("fc1.mtx"));
    // Each group of 4 keeps its 2 nonzeros of largest magnitude.
    let mut want = Vec::new();
    for i in 0..4u64 {
        for g in 0..2u64 {
            let mut group: Vec<(u64, f32)> = (0..4)
                .map(|k| (g * 4 + k, w[(i * 8 + g * 4 + k) as usize]))
                .filter(|&(_, x)| x != 0.0)
                .collect();
            group.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
            want.extend(group.into_iter().take(2).map(|(j, x)| (i, j, f64::from(x))));
        }
    }
    want.sort_by_key(|e| (e.0, e.1));
    assert_eq!(got.len(), 16);
    assert_eq!(got, want);
    fails(
        &["w.safetensors", "--to", "CSR", "-o", "x.spt"],
        d,
        "holds 2 tensors; name one",
    );
    fails(
        &["w.safetensors:nope", "--to", "CSR", "-o", "x.spt"],
        d,
        "no tensor `nope`",
    );
    assert!(!d.join("x.spt").exists());
}

const MTX: &str = "%%MatrixMarket matrix coordinate real general\n6 4 7\n1 1 1.5\n2 4 -2\n3 2 4\n4 1 0.25\n4 3 8\n6 2 -1\n6 4 3\n";

#[test]
fn npz_and_npy_outputs_read_back_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    let want = mtx_entries(&d.join("a.mtx"));
    for (to, extra, format, note) in [
        ("CSR", None, "csr_matrix", false),
        ("CSC", Some("--uncompressed"), "csc_matrix", false),
        ("COO", None, "coo_matrix", false),
        ("BSR:2x2", None, "bsr_matrix", false),
        ("DCSR", None, "csr_matrix", true),
    ] {
        let mut args = vec!["a.mtx", "--to", to, "-o", "a.npz"];
        args.extend(extra);
        let (_, err) = ok(&args, d);
        assert_eq!(err.contains("written as CSR"), note, "{to}: {err}");
        let (info, _) = ok(&["info", "a.npz"], d);
        assert!(
            info.contains(&format!("SciPy sparse .npz ({format})")),
            "{to}: {info}"
        );
        ok(&["a.npz", "--to", "CSR", "-o", "back.mtx"], d);
        assert_eq!(mtx_entries(&d.join("back.mtx")), want, "{to}");
        // From standard input too.
        let bytes = std::fs::read(d.join("a.npz")).unwrap();
        let o = run(&["-", "--to", "CSR", "-o", "in.mtx"], d, Some(&bytes));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(mtx_entries(&d.join("in.mtx")), want, "{to} from stdin");
    }
    // Dense .npy out and in.
    ok(&["a.mtx", "--to", "CSR", "-o", "a.npy"], d);
    let (info, _) = ok(&["info", "a.npy"], d);
    assert!(
        info.contains("NumPy .npy (dense) (dense f64 6 x 4 (C order))"),
        "{info}"
    );
    ok(&["a.npy", "--to", "CSR", "-o", "dense.mtx"], d);
    assert_eq!(mtx_entries(&d.join("dense.mtx")), want);
    std::fs::write(
        d.join("wide.mtx"),
        "%%MatrixMarket matrix coordinate real general\n100000 100000 2\n1 1 1\n5 9 2\n",
    )
    .unwrap();
    fails(
        &["wide.mtx", "--to", "CSR", "-o", "big.npy", "--memory-limit", "64M"],
        d,
        "big.npy: a dense 100000 x 100000 array of f64 is 80000000000 bytes, past the memory limit of 67108864 bytes",
    );
    assert!(!d.join("big.npy").exists());
    // The refusal's mark (sptk_tensor::MemoryLimit, its source) adds no second message.
    let o = crate::common::run(
        &[
            "wide.mtx",
            "--to",
            "CSR",
            "-o",
            "big.npy",
            "--memory-limit",
            "64M",
        ],
        d,
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("memory limit").count(), 1, "{err}");
    fails(
        &["a.mtx", "-o", "a.npz", "--to", "CSR", "--format", "npy"],
        d,
        "make them agree",
    );
}

#[test]
fn damaged_numpy_inputs_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    ok(&["a.mtx", "--to", "CSR", "-o", "a.npz"], d);
    let bytes = std::fs::read(d.join("a.npz")).unwrap();
    std::fs::write(d.join("cut.npz"), &bytes[..bytes.len() / 2]).unwrap();
    fails(
        &["cut.npz", "--to", "CSR", "-o", "x.spt"],
        d,
        "cut.npz: not a zip archive, or cut short",
    );
    std::fs::write(d.join("empty.npz"), b"").unwrap();
    fails(
        &["empty.npz", "--from", "npz", "--to", "CSR", "-o", "x.spt"],
        d,
        "empty.npz: an empty file",
    );
    ok(&["a.mtx", "--to", "CSR", "-o", "a.npy"], d);
    let npy = std::fs::read(d.join("a.npy")).unwrap();
    std::fs::write(d.join("cut.npy"), &npy[..npy.len() - 8]).unwrap();
    fails(
        &["cut.npy", "--to", "CSR", "-o", "x.spt"],
        d,
        "cut.npy: shape [6, 4] of f64 needs 192 bytes",
    );
    fails(
        &[
            "a.npy",
            "--to",
            "CSR",
            "-o",
            "x.spt",
            "--memory-limit",
            "50",
        ],
        d,
        "past its memory limit of 50 bytes",
    );
    std::fs::write(
        d.join("bad.safetensors"),
        b"\x0f\x00\x00\x00\x00\x00\x00\x00{\"w\": nonsense}",
    )
    .unwrap();
    fails(
        &["bad.safetensors", "--to", "CSR", "-o", "x.spt"],
        d,
        "bad.safetensors: bad header",
    );
    assert!(!d.join("x.spt").exists());
}

fn python() -> Option<PathBuf> {
    sptk_testkit::python(&["numpy", "scipy"], "SciPy peer check")
}

#[test]
fn scipy_and_numpy_open_what_the_command_line_writes() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.mtx"), MTX).unwrap();
    ok(&["a.mtx", "--to", "BSR:2x2", "-o", "a.npz"], d);
    ok(
        &["a.mtx", "--to", "ELL", "-o", "b.npz", "--uncompressed"],
        d,
    );
    ok(&["a.mtx", "--to", "CSR", "-o", "a.npy"], d);
    let script = "import sys, numpy as np, scipy.sparse as sp, scipy.io as sio
m = sio.mmread('a.mtx').toarray()
for f in ['a.npz', 'b.npz']:
    assert np.array_equal(sp.load_npz(f).toarray(), m), f
assert np.array_equal(np.load('a.npy'), m)
print('same')";
    let o = Command::new(py)
        .arg("-c")
        .arg(script)
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "same",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn an_archive_of_named_arrays_is_read_member_by_member() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = "import numpy as np
np.savez('named.npz', a=np.array([[0, 1.5], [2, 0]]), b=np.arange(4.0))
np.savez_compressed('one.npz', w=np.array([[0, 0, 3.0]]))";
    let o = Command::new(py)
        .arg("-c")
        .arg(script)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A member is a dense array: its nonzeros, row by row.
    let (print, _) = ok(&["named.npz:a", "--to", "CSR", "--print"], d);
    assert!(
        print.contains("crd[1] : ( 1, 0 )") && print.contains("values : ( 1.5, 2 )"),
        "{print}"
    );
    // The one array of a deflated archive needs no name.
    let (print, _) = ok(&["one.npz", "--to", "COO", "--print"], d);
    assert!(print.contains("values : ( 3 )"), "{print}");
    // Several: the message names them; info lists them.
    fails(
        &["named.npz", "--to", "CSR"],
        d,
        "named.npz: a NumPy .npz of named arrays (a, b): choose one as named.npz:NAME",
    );
    fails(
        &["named.npz:c", "--to", "CSR"],
        d,
        "no member c.npy (the archive holds a.npy, b.npy)",
    );
    let (info, _) = ok(&["info", "named.npz"], d);
    assert!(
        info.contains("named.npz:a") && info.contains("named.npz:b"),
        "{info}"
    );
}

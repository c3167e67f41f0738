//! MATLAB Level 5 `.mat` files through the reader seam: told by their header (not taken
//! for v7.3), a variable chosen as `FILE:NAME`, the variables listed for `info`, a struct
//! skipped with a note, and a v4 file (known by its name) refused saying what it is.
//! The files are SciPy's (`testdata/matlab5/`, see its README).

use std::path::{Path, PathBuf};

use sptk_input::{read, Content, Opened, ReadOptions, SourceSpec};
use sptk_tensor::{Scalar, ValueType};

/// Why reading `path` fails.
fn refusal(path: &Path) -> String {
    read(
        SourceSpec::resolve(&[path]).unwrap(),
        None,
        &ReadOptions::default(),
    )
    .unwrap_err()
    .to_string()
}

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/matlab5")
        .join(name)
}

/// `(row, column, value)` of every entry, row-major.
fn listed(content: &Content) -> Vec<(u64, u64, f64)> {
    let e = match content {
        Content::Tensor(t) => t.to_entries(),
        Content::Entries { entries, .. } => entries.clone(),
        _ => panic!("neither level arrays nor coordinates"),
    };
    let mut out: Vec<(u64, u64, f64)> = (0..e.len())
        .map(|k| {
            let v = match e.scalar(k).unwrap() {
                Scalar::Float(x) => x,
                Scalar::Int(x) => x as f64,
                other => panic!("{other:?}"),
            };
            (e.coord(k, 0), e.coord(k, 1), v)
        })
        .collect();
    out.sort_by_key(|a| (a.0, a.1));
    out
}

#[test]
fn scipy_files_are_read_by_variable() {
    for name in ["small_v5.mat", "small_v7.mat"] {
        let path = file(name);
        let opened = Opened::open(SourceSpec::resolve(&[&path]).unwrap(), None).unwrap();
        assert_eq!(opened.reader.name(), "MATLAB v5 .mat", "{name}");
        let members = opened.members().unwrap().unwrap();
        let shown: Vec<(&str, &str, &[u64])> = members
            .iter()
            .map(|m| (m.path.as_str(), m.layout.as_str(), m.dims.as_slice()))
            .collect();
        assert_eq!(
            shown,
            [
                ("A", "sparse (CSC)", &[3u64, 4][..]),
                ("D", "dense int32", &[3, 2][..]),
                ("S", "struct (not read)", &[1, 1][..]),
            ],
            "{name}"
        );
        // Stored entries from `jc` where the variable is not compressed (no inflating).
        let want = (name == "small_v5.mat").then_some(4);
        assert_eq!(members[0].entries, want, "{name}");
        // The only sparse variable is read without a name.
        let a = read(
            SourceSpec::resolve(&[&path]).unwrap(),
            None,
            &ReadOptions::default(),
        )
        .unwrap();
        assert!(
            matches!(a.content, Content::Tensor(_)),
            "{name}: CSC level arrays"
        );
        assert_eq!(
            listed(&a.content),
            [(0, 1, 2.5), (1, 0, 1.0), (1, 3, -4.0), (2, 3, 0.125)],
            "{name}"
        );
        assert!(
            a.notes.iter().any(|n| n.contains("`S` (struct)")),
            "{:?}",
            a.notes
        );
        let with = |v: &str| PathBuf::from(format!("{}:{v}", path.display()));
        let d = read(
            SourceSpec::resolve(&[with("D")]).unwrap(),
            None,
            &ReadOptions::default(),
        )
        .unwrap();
        let Content::Entries { entries, .. } = &d.content else {
            panic!("{name}: D as coordinates")
        };
        assert_eq!(entries.value_type(), ValueType::I32);
        assert_eq!(listed(&d.content), [(0, 0, 1.0), (1, 1, -2.0), (2, 0, 3.0)]);
        let e = refusal(&with("S"));
        assert!(
            e.contains(name) && e.contains("variable `S`") && e.contains("not read"),
            "{e}"
        );
        let e = refusal(&with("X"));
        assert!(e.contains("no variable `X` (it holds A, D, S)"), "{e}");
    }
}

#[test]
fn a_v4_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // A v4 matrix header (type 0: double, 2x1, real, name of 2 bytes), then its data.
    let mut v4: Vec<u8> = [0u32, 2, 1, 0, 2]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    v4.extend(b"A\0");
    v4.extend([1.0f64, 2.0].iter().flat_map(|x| x.to_le_bytes()));
    let path = dir.path().join("old.mat");
    std::fs::write(&path, v4).unwrap();
    let e = refusal(&path);
    assert!(
        e.contains("old.mat: a MATLAB v4 file") && e.contains("format='5'"),
        "{e}"
    );
}

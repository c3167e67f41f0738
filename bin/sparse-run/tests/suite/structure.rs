//! `sparse-run tril|triu|offdiag|pattern|transpose|symmetrize A -o C.spt` end to end: C
//! read back, in A's encoding, holding exactly the entries each keeps (checked here entry
//! by entry against A's own); refusals exit non-zero and leave no output.

use std::collections::BTreeMap;

use crate::common;

/// A command's arguments before A, and which entries (row, column) it keeps.
type Case = (&'static [&'static str], fn(u64, u64) -> bool);

use common::{matrix, run, s};
use sptk_tensor::{Tensor, ValueVec};

fn open(p: &std::path::Path) -> Tensor {
    sptk_store::SptFile::open(p).unwrap().validate().unwrap()
}

/// Every entry as (row, column) -> value.
fn entries(t: &Tensor) -> BTreeMap<(u64, u64), f64> {
    let e = t.to_entries();
    let ValueVec::F64(v) = e.values() else {
        panic!("f64 values")
    };
    let (r, c) = (e.coords(0).to_u64_vec(), e.coords(1).to_u64_vec());
    (0..e.len()).map(|k| ((r[k], c[k]), v[k])).collect()
}

#[test]
fn structure_commands_keep_what_they_say_in_the_operands_encoding() {
    let dir = tempfile::tempdir().unwrap();
    for preset in ["CSR", "DCSC", "COO"] {
        let ap = dir.path().join(format!("a_{preset}.spt"));
        let a = matrix(&ap, 40, 40, preset);
        let want = entries(&a);
        let cases: [Case; 5] = [
            (&["tril"], |i, j| j <= i),
            (&["tril", "-k", "-1"], |i, j| j < i),
            (&["triu", "-k", "2"], |i, j| j >= i + 2),
            (&["offdiag"], |i, j| i != j),
            (&["pattern"], |_, _| true),
        ];
        for (args, keeps) in cases {
            let cp = dir.path().join("c.spt");
            let mut argv = args.to_vec();
            argv.extend([s(&ap), "-o", s(&cp), "--quiet"]);
            let (ok, _, err) = run(&argv);
            assert!(ok, "{argv:?}: {err}");
            let c = open(&cp);
            assert_eq!(c.encoding().levels, a.encoding().levels, "{argv:?}");
            let got = entries(&c);
            let mut expect: BTreeMap<_, _> = want
                .iter()
                .filter(|((i, j), _)| keeps(*i, *j))
                .map(|(&k, &v)| (k, v))
                .collect();
            if args[0] == "pattern" {
                expect.values_mut().for_each(|v| *v = 1.0);
            }
            assert_eq!(got, expect, "{argv:?}");
        }
        // A^T, and A + A^T / max(A, A^T).
        let tp = dir.path().join("t.spt");
        let (ok, _, err) = run(&["transpose", s(&ap), "-o", s(&tp), "--quiet"]);
        assert!(ok, "{err}");
        let t: BTreeMap<_, _> = want.iter().map(|(&(i, j), &v)| ((j, i), v)).collect();
        assert_eq!(entries(&open(&tp)), t, "{preset}");
        for (flag, combine) in [
            (None, (|x: f64, y: f64| x + y) as fn(f64, f64) -> f64),
            (Some("--max"), f64::max),
        ] {
            let sp = dir.path().join("s.spt");
            let mut argv = vec!["symmetrize", s(&ap), "-o", s(&sp), "--quiet"];
            argv.extend(flag);
            let (ok, _, err) = run(&argv);
            assert!(ok, "{argv:?}: {err}");
            let mut expect = want.clone();
            for (&k, &v) in &t {
                expect
                    .entry(k)
                    .and_modify(|x| *x = combine(*x, v))
                    .or_insert(v);
            }
            let got = open(&sp);
            assert_eq!(got.encoding().levels, a.encoding().levels, "{argv:?}");
            assert_eq!(entries(&got), expect, "{argv:?}");
        }
    }
    // Refusals: a rectangular symmetrize, -k where it means nothing, a non-.spt output.
    let rp = dir.path().join("r.spt");
    matrix(&rp, 10, 20, "CSR");
    let out = dir.path().join("never.spt");
    for (args, says) in [
        (vec!["symmetrize", s(&rp)], "square"),
        (vec!["offdiag", s(&rp), "-k", "1"], "-k"),
        (vec!["pattern", s(&rp), "--max"], "--max"),
        (vec!["tril", s(&rp), "--repeat", "3"], "runs once"),
        (vec!["transpose", s(&rp), "--stats"], "runs once"),
    ] {
        let mut argv = args.clone();
        argv.extend(["-o", s(&out)]);
        let (ok, _, err) = run(&argv);
        assert!(!ok && err.contains(says), "{argv:?}: {err}");
        assert!(!out.exists(), "{argv:?} left an output");
    }
    let (ok, _, err) = run(&["tril", s(&rp), "-o", "l.mtx"]);
    assert!(!ok && err.contains(".spt"), "{err}");
}

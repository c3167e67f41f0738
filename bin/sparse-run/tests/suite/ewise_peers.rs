//! End to end against SciPy and python-graphblas (issue 29): the element-wise operations of
//! `sparse-run` on small random operands, each written as `.spt` from a SciPy `.npz` by
//! sparse-convert's read and write path, their outputs (`-o C.spt`, `-o c.npy`) checked by
//! `tests/ewise_peers.py` against both peers (what is compared with which, and how exactly,
//! is said there). The `.spt` outputs are read by the independent reader
//! `crates/store/tests/spt_reader.py`.
//!
//! Every operation must be listed by `sparse-run --help` (one that is not fails the test).
//! A missing Python, SciPy or python-graphblas is a note, or a failure where
//! `SPTK_REQUIRE_PYTHON` is set (CI).

use crate::common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, s};
use sptk_encoding::resolve_target;
use sptk_input::{ReadOptions, SourceSpec};

/// The subcommands whose outputs are compared, in the order they run.
const OPS: &[&str] = &[
    "add", "sub", "mul", "div", "min", "max", "first", "second", "dot", "rowdot", "reduce",
];

/// The subcommands `sparse-run --help` lists.
fn subcommands() -> Vec<String> {
    let (_, out, _) = run(&["--help"]);
    let mut names = Vec::new();
    let mut in_commands = false;
    for line in out.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
        } else if in_commands && line.starts_with("  ") {
            if let Some(name) = line.split_whitespace().next() {
                names.push(name.to_string());
            }
        } else if in_commands && !line.trim().is_empty() {
            in_commands = false;
        }
    }
    names
}

/// One case of `tests/ewise_peers.py gen`: its name, the encodings of A and B, and whether
/// it holds NaN (kept out of min / max).
struct Case {
    name: String,
    a: String,
    b: String,
    nan: bool,
}

/// `cases.json`, read without a JSON library: one object per case, flat fields.
fn read_cases(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap();
    let field = |obj: &str, key: &str| -> String {
        let at = obj.find(&format!("\"{key}\": ")).unwrap() + key.len() + 4;
        let rest = &obj[at..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest[..end].trim().trim_matches('"').to_string()
    };
    text.split('{')
        .skip(1)
        .map(|obj| Case {
            name: field(obj, "name"),
            a: field(obj, "a"),
            b: field(obj, "b"),
            nan: field(obj, "nan") == "true",
        })
        .collect()
}

/// `npz` written as `.spt` in `encoding` as `sparse-convert NPZ --to ENCODING -o SPT` does
/// (read, convert by the planner's route, write atomically).
fn convert(npz: &Path, encoding: &str, spt: &Path) {
    let target = resolve_target(encoding, 2).unwrap();
    let (_, converted) = sptk_input::convert(
        SourceSpec::file(npz),
        None,
        &target,
        &Default::default(),
        &ReadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e:?}", npz.display()));
    sptk_store::write(spt, &converted.tensor, &Default::default()).unwrap();
}

fn peers_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ewise_peers.py")
}

fn spt_reader() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/store/tests/spt_reader.py")
}

/// A JSON string of plain text (paths, flags).
fn json_str(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn element_wise_results_agree_with_scipy_and_graphblas() {
    let Some(python) = sptk_testkit::python(
        &["numpy", "scipy.sparse", "graphblas"],
        "element-wise peer check (SciPy, python-graphblas)",
    ) else {
        return;
    };
    // The only peer check of the element-wise outputs cannot switch itself off: an
    // operation `sparse-run --help` does not list is a failure, not a skip.
    let have = subcommands();
    let missing: Vec<&str> = OPS
        .iter()
        .copied()
        .filter(|op| !have.iter().any(|h| h == op))
        .collect();
    assert!(
        missing.is_empty(),
        "`sparse-run --help` lists no {} subcommand (it lists {have:?})",
        missing.join(", ")
    );

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = Command::new(&python)
        .arg(peers_script())
        .args(["gen", s(d)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ewise_peers.py gen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases = read_cases(&d.join("cases.json"));
    assert!(cases.len() >= 10, "{} cases", cases.len());

    let mut runs = Vec::new();
    let mut failures = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        let a = d.join(format!("{}.a.spt", case.name));
        let b = d.join(format!("{}.b.spt", case.name));
        convert(&d.join(format!("{}.a.npz", case.name)), &case.a, &a);
        convert(&d.join(format!("{}.b.npz", case.name)), &case.b, &b);
        // (operation, flags, output file extension)
        let mut todo: Vec<(&str, Vec<&str>, &str)> = Vec::new();
        for &op in OPS {
            match op {
                "add" | "sub" => {
                    todo.push((op, vec![], "spt"));
                    todo.push((op, vec!["--drop-zeros"], "spt"));
                    if k % 3 == 0 {
                        todo.push((op, vec!["--to", "CSC"], "spt"));
                        todo.push((op, vec!["--threads", "3"], "spt"));
                    }
                }
                "min" | "max" if case.nan => {}
                "min" | "max" => {
                    todo.push((op, vec![], "spt"));
                    todo.push((op, vec!["--intersect"], "spt"));
                }
                "dot" | "rowdot" => todo.push((op, vec![], "npy")),
                "reduce" => {
                    for how in ["sum", "min", "max", "count"] {
                        if case.nan && (how == "min" || how == "max") {
                            continue;
                        }
                        for axis in ["row", "col", "all"] {
                            todo.push((op, vec![how, "--axis", axis], "npy"));
                        }
                    }
                }
                _ => todo.push((op, vec![], "spt")),
            }
        }
        for (i, (op, flags, ext)) in todo.into_iter().enumerate() {
            let out = d.join(format!("{}.{op}.{i}.{ext}", case.name));
            let mut args = vec![op];
            if op == "reduce" {
                args.push(flags[0]);
                args.push(s(&a));
                args.extend(&flags[1..]);
            } else {
                args.extend([s(&a), s(&b)]);
                args.extend(&flags);
            }
            args.extend(["-o", s(&out)]);
            let (ok, _, err) = run(&args);
            if !ok {
                failures.push(format!(
                    "case {} (A {}, B {}): sparse-run {} failed: {}",
                    case.name,
                    case.a,
                    case.b,
                    args.join(" "),
                    err.trim()
                ));
                continue;
            }
            runs.push(format!(
                "{{\"case\": {}, \"op\": {}, \"flags\": [{}], \"out\": {}}}",
                json_str(&case.name),
                json_str(op),
                flags
                    .iter()
                    .map(|f| json_str(f))
                    .collect::<Vec<_>>()
                    .join(", "),
                json_str(s(&out))
            ));
        }
    }
    std::fs::write(d.join("runs.json"), format!("[{}]", runs.join(",\n"))).unwrap();

    let out = Command::new(&python)
        .arg(peers_script())
        .args(["check", s(d), s(&spt_reader())])
        .output()
        .unwrap();
    let mut report = String::new();
    for f in &failures {
        writeln!(report, "{f}").unwrap();
    }
    report.push_str(&String::from_utf8_lossy(&out.stdout));
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
    assert!(
        failures.is_empty() && out.status.success(),
        "element-wise results differ from the peers:\n{report}"
    );
}

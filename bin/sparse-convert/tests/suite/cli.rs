//! The real `sparse-convert` binary, run in a fresh directory: every conformance case
//! through `--print` (2-D via `.mtx`, other ranks via `.tns`), refusals with a located
//! message and no output, and the subcommands.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
}

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn run(args: &[&str], dir: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sparse-convert")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn cases(file: &str) -> Vec<Json> {
    let path = testdata().join("conformance").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("missing {}: {e}", path.display()));
    let doc: Json = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// Text of one value for a Matrix Market or .tns file.
fn value_text(v: &Json, dtype: &str) -> String {
    match v {
        Json::Array(p) => format!("{} {}", p[0], p[1]),
        Json::String(s) => s.clone(),
        Json::Number(n) if dtype.starts_with("complex") => format!("{n} 0"),
        Json::Number(n) => n.to_string(),
        other => panic!("value {other}"),
    }
}

fn is_zero(v: &Json) -> bool {
    match v {
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::Array(p) => p.iter().all(|x| x.as_f64() == Some(0.0)),
        _ => false,
    }
}

/// The case's entries as (coordinates, value text) rows, in input order.
fn rows(case: &Json) -> Vec<(Vec<u64>, String)> {
    let dtype = case["dtype"].as_str().unwrap();
    let rank = case["dim_shape"].as_array().unwrap().len();
    let mut out = Vec::new();
    if let Some(list) = case.get("entries") {
        for r in list.as_array().unwrap() {
            let r = r.as_array().unwrap();
            let c = r[..rank].iter().map(|x| x.as_u64().unwrap()).collect();
            out.push((c, value_text(&r[rank], dtype)));
        }
        return out;
    }
    fn walk(
        v: &Json,
        prefix: &mut Vec<u64>,
        rank: usize,
        dtype: &str,
        out: &mut Vec<(Vec<u64>, String)>,
    ) {
        if prefix.len() < rank {
            for (i, item) in v.as_array().unwrap().iter().enumerate() {
                prefix.push(i as u64);
                walk(item, prefix, rank, dtype, out);
                prefix.pop();
            }
        } else if !is_zero(v) {
            out.push((prefix.clone(), value_text(v, dtype)));
        }
    }
    walk(&case["dense"], &mut Vec::new(), rank, dtype, &mut out);
    out
}

/// Writes the case's input file; returns its name and the `--dtype` needed to restore
/// the case's value type (files hold real, integer or complex values only).
fn write_input(case: &Json, dir: &Path) -> (String, Option<&'static str>) {
    let dtype = case["dtype"].as_str().unwrap();
    let shape: Vec<u64> = case["dim_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let rows = rows(case);
    let (field, restore) = match dtype {
        "f64" => ("real", None),
        "f32" => ("real", Some("f32")),
        "i64" => ("integer", None),
        "i32" => ("integer", Some("i32")),
        "i8" => ("integer", Some("i8")),
        "bool" => ("integer", Some("bool")),
        "complex128" => ("complex", None),
        other => panic!("no file form for dtype {other}"),
    };
    if shape.len() == 2 {
        let mut s = format!(
            "%%MatrixMarket matrix coordinate {field} general\n{} {} {}\n",
            shape[0],
            shape[1],
            rows.len()
        );
        for (c, v) in &rows {
            s.push_str(&format!("{} {} {v}\n", c[0] + 1, c[1] + 1));
        }
        std::fs::write(dir.join("in.mtx"), s).unwrap();
        ("in.mtx".into(), restore)
    } else {
        assert!(
            field == "real" || field == "integer",
            "tns holds real values"
        );
        let dims: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
        let mut s = format!(
            "# extended FROSTT format\n{} {}\n{}\n",
            shape.len(),
            rows.len(),
            dims.join(" ")
        );
        for (c, v) in &rows {
            let cs: Vec<String> = c.iter().map(|x| (x + 1).to_string()).collect();
            s.push_str(&format!("{} {v}\n", cs.join(" ")));
        }
        std::fs::write(dir.join("in.tns"), s).unwrap();
        ("in.tns".into(), restore)
    }
}

fn option_args(case: &Json, restore: Option<&str>) -> Vec<String> {
    let o = &case["options"];
    let mut a = Vec::new();
    if o["drop_zeros"].as_bool() == Some(true) {
        a.push("--drop-zeros".to_string());
    }
    if o["keep_duplicates"].as_bool() == Some(true) {
        a.push("--keep-duplicates".into());
    }
    if o["prune"].as_bool() == Some(true) {
        a.push("--prune".into());
    }
    if let Some(vals) = o["slice_values"].as_array() {
        let v: Vec<String> = vals.iter().map(|x| x.to_string()).collect();
        a.push(format!("--slice-values={}", v.join(",")));
    }
    match (o["dtype"].as_str(), restore) {
        (Some(t), _) => a.extend(["--dtype".into(), t.to_string()]),
        (None, Some(t)) => a.extend(["--dtype".into(), t.to_string()]),
        (None, None) => {}
    }
    a
}

fn run_cases(file: &str) {
    for case in cases(file) {
        let name = case["name"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (input, restore) = write_input(&case, dir.path());
        // A dtype case on a bool/f32/i8 input would convert twice; none exists.
        let mut targets = vec![case["encoding"].as_str().unwrap().to_string()];
        if let Some(p) = case["preset"].as_str() {
            targets.push(p.to_string());
        }
        for to in targets {
            let mut args: Vec<String> = vec![
                input.clone(),
                "--to".into(),
                to.clone(),
                "--print".into(),
                "--quiet".into(),
            ];
            args.extend(option_args(&case, restore));
            let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let out = run(&argv, dir.path());
            if case.get("expected_error").is_some() {
                assert!(
                    !out.status.success(),
                    "{name} ({to}): expected a refusal, got:\n{}",
                    stdout(&out)
                );
                assert!(
                    stdout(&out).is_empty(),
                    "{name}: nothing on stdout when refused"
                );
                assert!(stderr(&out).contains("error"), "{name}: message on stderr");
                continue;
            }
            assert!(out.status.success(), "{name} ({to}): {}", stderr(&out));
            let want = expected_print(&case);
            let got = stdout(&out);
            let got: Vec<&str> = got.lines().collect();
            assert_eq!(got, want, "{name} ({to})");
        }
    }
}

/// The `--print` text a case expects: its `expected_print` lines, or else the lines
/// written from its `expected` level arrays (the documentation examples give only
/// those). A case with neither would check nothing, so it fails.
fn expected_print(case: &Json) -> Vec<String> {
    let name = case["name"].as_str().unwrap();
    if let Some(lines) = case.get("expected_print") {
        return lines
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
    }
    let e = case
        .get("expected")
        .unwrap_or_else(|| panic!("{name}: no expected_print, expected or expected_error"));
    let list = |v: &Json| {
        let items: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect();
        format!("( {} )", items.join(", "))
    };
    let mut lines = vec![
        "---- Sparse Tensor ----".to_string(),
        format!("nse = {}", e["nse"]),
        format!("dim = {}", list(&case["dim_shape"])),
        format!("lvl = {}", list(&e["lvl"])),
    ];
    let levels = e["lvl"].as_array().unwrap().len();
    for l in 0..levels {
        for key in ["pos", "crd"] {
            if let Some(a) = e.get(key).and_then(|m| m.get(l.to_string())) {
                lines.push(format!("{key}[{l}] : {}", list(a)));
            }
        }
    }
    lines.push(format!("values : {}", list(&e["values"])));
    lines.push("----".to_string());
    lines
}

#[test]
fn conformance_doc_examples_through_print() {
    run_cases("doc_examples.json");
}

#[test]
fn conformance_layouts_through_print() {
    run_cases("layouts.json");
}

#[test]
fn bsr_alone_reports_its_choice_on_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/fmm_real_symmetric.mtx");
    let out = run(
        &[src.to_str().unwrap(), "--to", "BSR", "--print"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("---- Sparse Tensor ----\n"));
    assert!(stderr(&out).contains("chose"), "{}", stderr(&out));
    let quiet = run(
        &[src.to_str().unwrap(), "--to", "BSR", "--print", "--quiet"],
        dir.path(),
    );
    assert_eq!(stdout(&quiet), stdout(&out));
    assert!(stderr(&quiet).is_empty());
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let mut prints = Vec::new();
    for threads in ["1", "2", "5"] {
        let out = run(
            &[
                src.to_str().unwrap(),
                "--to",
                "BSR:2x2",
                "--print",
                "--threads",
                threads,
            ],
            dir.path(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        prints.push(stdout(&out));
    }
    assert_eq!(prints[0], prints[1]);
    assert_eq!(prints[0], prints[2]);
}

#[test]
fn writes_mtx_and_tns_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let src = src.to_str().unwrap();
    let direct = run(&[src, "--to", "CSC", "--print"], dir.path());
    for out_name in ["out.mtx", "out.mtx.gz", "out.tns"] {
        let w = run(&[src, "--to", "CSR", "-o", out_name, "--quiet"], dir.path());
        assert!(w.status.success(), "{}", stderr(&w));
        let r = run(&[out_name, "--to", "CSC", "--print"], dir.path());
        assert!(r.status.success(), "{out_name}: {}", stderr(&r));
        assert_eq!(stdout(&r), stdout(&direct), "{out_name}");
    }
}

#[test]
fn stdin_and_stdout_with_explicit_formats() {
    let dir = tempfile::tempdir().unwrap();
    let text = "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.5\n2 3 -2\n";
    let mut child = bin()
        .args([
            "-", "--from", "mtx", "--to", "COO", "-o", "-", "--format", "tns",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    assert!(s.contains("1 1 1.5"), "{s}");
    assert!(s.contains("2 3 -2"), "{s}");
}

#[test]
fn a_refused_conversion_leaves_no_output_and_keeps_an_old_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.mtx"),
        "%%MatrixMarket matrix coordinate real general\n2 300 1\n1 300 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("old.mtx"), "previous contents").unwrap();
    let out = run(
        &["in.mtx", "--to", "CSR", "--crd-width", "8", "-o", "new.mtx"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("crd[1]: value 299 does not fit crdWidth = 8"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("new.mtx").exists());
    let out = run(
        &["in.mtx", "--to", "CSR", "--crd-width", "8", "-o", "old.mtx"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("old.mtx")).unwrap(),
        "previous contents"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no stray files: {names:?}");
}

#[test]
fn malformed_input_is_located() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.mtx"),
        "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n",
    )
    .unwrap();
    let out = run(&["bad.mtx", "--to", "CSR", "-o", "out.mtx"], dir.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("bad.mtx:4:1"), "{}", stderr(&out));
    assert!(!dir.path().join("out.mtx").exists());
}

#[test]
fn info_table_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/fmm_real_symmetric.mtx");
    let out = run(
        &["info", src.to_str().unwrap(), "--to", "BSR:2x2", "--quiet"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    for word in [
        "dimensions",
        "nse",
        "fill",
        "pos[1]",
        "crd[1]",
        "values",
        "d0 floordiv 2",
    ] {
        assert!(s.contains(word), "missing {word} in:\n{s}");
    }
    let out = run(
        &["info", src.to_str().unwrap(), "--to", "CSR", "--json"],
        dir.path(),
    );
    let j: Json = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    // The preset's widths are the narrowest that hold this matrix's positions and columns.
    assert_eq!(
        j["encoding"],
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 16, crdWidth = 8 }>"
    );
    assert!(j["nse"].as_u64().unwrap() > 0);
}

#[test]
fn encoding_subcommand_prints_canonical_text_or_a_caret() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["encoding", "map = (i, j) -> (j : dense, i : compressed)"],
        dir.path(),
    );
    assert!(out.status.success());
    assert!(stdout(&out).starts_with(
        "#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed) }>"
    ));
    let out = run(
        &["encoding", "map = (i, j) -> (i : dense, j : compresed)"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains('^'), "{}", stderr(&out));
    let help = run(&["--help"], dir.path());
    for p in ["CSR", "BSR", "ELL", "2:4", "COO:soa"] {
        assert!(stdout(&help).contains(p), "--help lists {p}");
    }
}

#[test]
fn dry_run_reports_nse_sizes_and_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let out = run(&[src.to_str().unwrap(), "--to", "CSR"], dir.path());
    assert!(out.status.success());
    let s = stdout(&out);
    // CSR from a Matrix Market file is parsed straight into the output arrays.
    for word in [
        "nse",
        "checksum",
        "parsed straight into the output",
        "pos[1]",
    ] {
        assert!(s.contains(word), "{word} in {s}");
    }
    let out = run(&[src.to_str().unwrap(), "--to", "DCSR"], dir.path());
    assert!(out.status.success());
    let s = stdout(&out);
    for word in ["nse", "checksum", "convert", "pos[0]"] {
        assert!(s.contains(word), "{word} in {s}");
    }
}

/// The direct route (a mapped .mtx file into CSR / CSC, or through CSR into BSR, ELL and
/// n:m) prints what the ordinary route (standard input, read then converted) prints, for
/// every shared Matrix Market file, and reports the same automatic choice.
#[test]
fn direct_mtx_route_matches_the_ordinary_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(testdata().join("mtx")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "mtx") {
            continue;
        }
        let text = std::fs::read(&path).unwrap();
        for to in [
            "CSR",
            "CSC",
            "CSR --drop-zeros",
            "BSR",
            "BSR:2x3 --drop-zeros",
            "ELL",
            "ELL:2",
            "2:4",
            "2:4 --prune",
            "1:2 --prune --crd-width 2",
        ] {
            let mut args = vec![
                path.to_str().unwrap().to_string(),
                "--print".into(),
                "--to".into(),
            ];
            args.extend(to.split(' ').map(String::from));
            let direct = bin().args(&args).current_dir(dir.path()).output().unwrap();
            args[0] = "-".into();
            args.extend(["--from".into(), "mtx".into()]);
            let mut child = bin()
                .args(&args)
                .current_dir(dir.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&text).unwrap();
            let ordinary = child.wait_with_output().unwrap();
            assert_eq!(
                direct.status.success(),
                ordinary.status.success(),
                "{path:?} {to}"
            );
            assert_eq!(stdout(&direct), stdout(&ordinary), "{path:?} {to}");
            if direct.status.success() {
                assert_eq!(stderr(&direct), stderr(&ordinary), "{path:?} {to}");
            }
            n += 1;
        }
    }
    assert!(n >= 70, "{n} runs");
}

#[test]
fn spt_info_is_header_only_and_verify_names_a_corrupt_array() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let w = run(
        &[
            src.to_str().unwrap(),
            "--to",
            "CSR",
            "-o",
            "m.spt",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(w.status.success(), "{}", stderr(&w));
    let info = run(&["info", "m.spt"], dir.path());
    assert!(info.status.success(), "{}", stderr(&info));
    let s = stdout(&info);
    for word in [
        "sptk storage file",
        "scipy_real_general.mtx",
        "pos[1]",
        "crd[1]",
        "values",
        "nse",
    ] {
        assert!(s.contains(word), "{word} in {s}");
    }
    // Corrupt a byte inside the values array (the last array; at most 63 bytes of zero
    // padding follow it): info still answers from the header,
    // verify refuses naming the array, a conversion refuses too, and nothing is written.
    let path = dir.path().join("m.spt");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = value_byte(&path);
    bytes[at] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    assert!(run(&["info", "m.spt"], dir.path()).status.success());
    let v = run(&["verify", "m.spt"], dir.path());
    assert!(!v.status.success());
    assert!(stderr(&v).contains("values"), "{}", stderr(&v));
    assert!(stderr(&v).contains("m.spt"), "{}", stderr(&v));
    let mut bytes2 = bytes.clone();
    bytes2.truncate(bytes.len() - 100);
    std::fs::write(dir.path().join("short.spt"), &bytes2).unwrap();
    let c = run(&["short.spt", "--to", "CSC", "-o", "out.mtx"], dir.path());
    assert!(!c.status.success());
    assert!(!dir.path().join("out.mtx").exists());
}

/// The file offset of the first byte of a `.spt` file's values.
fn value_byte(path: &Path) -> usize {
    let f = sptk_store::SptFile::open(path).unwrap();
    let header_len = u64::from_le_bytes(f.as_bytes()[16..24].try_into().unwrap()) as usize;
    24 + header_len + f.header().array("values").unwrap().offset
}

#[test]
fn damaged_spt_is_refused_unless_no_verify() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let w = run(
        &[src.to_str().unwrap(), "--to", "CSR", "-o", "m.spt", "-q"],
        dir.path(),
    );
    assert!(w.status.success(), "{}", stderr(&w));
    let path = dir.path().join("m.spt");
    let mut bytes = std::fs::read(&path).unwrap();
    // The lowest mantissa byte of the first value: the arrays stay valid.
    bytes[value_byte(&path)] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let c = run(&["m.spt", "--to", "CSC", "-o", "out.mtx"], dir.path());
    assert_eq!(c.status.code(), Some(1));
    let err = stderr(&c);
    assert!(
        err.contains("m.spt: values: bytes 0..") && err.contains("are damaged"),
        "{err}"
    );
    assert!(!dir.path().join("out.mtx").exists());
    let c = run(
        &["m.spt", "--to", "CSC", "-o", "out.mtx", "--no-verify"],
        dir.path(),
    );
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(dir.path().join("out.mtx").exists());
}

#[test]
fn info_shows_labels_and_conversions_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sptk_tensor::Entries::new(vec![3, 2], sptk_tensor::ValueType::F64);
    e.push(&[0, 1], 1.0).unwrap();
    e.push(&[2, 0], 2.0).unwrap();
    let t = sptk_tensor::convert_to(&e, &sptk_encoding::csr(), &Default::default())
        .unwrap()
        .with_labels(
            0,
            sptk_tensor::Labels::from_strings(["AAAC-1", "AAAG-1", "ACGT-1"]),
        )
        .unwrap()
        .with_labels(1, sptk_tensor::Labels::from_strings(["Xkr4", "Gm1992"]))
        .unwrap();
    sptk_store::write(dir.path().join("l.spt"), &t, &Default::default()).unwrap();
    let c = run(&["l.spt", "--to", "COO", "-o", "l2.spt", "-q"], dir.path());
    assert!(c.status.success(), "{}", stderr(&c));
    for file in ["l.spt", "l2.spt"] {
        let info = run(&["info", file], dir.path());
        assert!(info.status.success(), "{}", stderr(&info));
        let s = stdout(&info);
        assert!(
            s.contains("labels      dimension 0: 3 labels (\"AAAC-1\", \"AAAG-1\", \"ACGT-1\")"),
            "{s}"
        );
        assert!(
            s.contains("labels      dimension 1: 2 labels (\"Xkr4\", \"Gm1992\")"),
            "{s}"
        );
        let json = run(&["info", file, "--json"], dir.path());
        let v: Json = serde_json::from_str(&stdout(&json)).unwrap();
        assert_eq!(v["labels"][1]["first"][1], "Gm1992");
        assert_eq!(v["labels"][0]["count"], 3);
    }
    // Matrix Market has no place for labels: said, not silently dropped.
    let m = run(&["l.spt", "-o", "l.mtx"], dir.path());
    assert!(m.status.success(), "{}", stderr(&m));
    assert!(
        stderr(&m).contains("note: the labels of 2 dimension(s) are not written: Matrix Market has no place for them"),
        "{}",
        stderr(&m)
    );
}

#[test]
fn spt_to_csc_and_bsr_match_the_text_path() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/fmm_real_symmetric.mtx");
    let src = src.to_str().unwrap();
    assert!(run(&[src, "--to", "CSR", "-o", "m.spt"], dir.path())
        .status
        .success());
    for to in ["CSC", "BSR:4x4", "DCSC", "COO", "2:4", "ELL"] {
        // --prune applies to n:m targets only.
        let prune: &[&str] = if to == "2:4" { &["--prune"] } else { &[] };
        let args = |input| {
            let mut v = vec![input, "--to", to, "--print", "--quiet"];
            v.extend_from_slice(prune);
            v
        };
        let a = run(&args(src), dir.path());
        let mut spt = args("m.spt");
        spt.push("--no-mmap");
        let b = run(&spt, dir.path());
        assert!(
            a.status.success() && b.status.success(),
            "{to}: {}{}",
            stderr(&a),
            stderr(&b)
        );
        assert_eq!(stdout(&a), stdout(&b), "{to}");
    }
}

/// A `.spt` input without --to keeps its encoding: written as .mtx it gives the bytes the
/// same matrix gives when converted from text.
#[test]
fn spt_without_to_keeps_its_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("mtx/scipy_real_general.mtx");
    let src = src.to_str().unwrap();
    for to in ["CSR", "CSC", "COO"] {
        let run_ok = |args: &[&str]| {
            let o = run(args, dir.path());
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        };
        run_ok(&[src, "--to", to, "-o", "m.spt"]);
        run_ok(&["m.spt", "-o", "from_spt.mtx"]);
        run_ok(&[src, "--to", to, "-o", "from_text.mtx"]);
        let a = std::fs::read(dir.path().join("from_spt.mtx")).unwrap();
        let b = std::fs::read(dir.path().join("from_text.mtx")).unwrap();
        assert!(a == b, "{to}");
    }
    let o = run(&[src, "-o", "x.mtx"], dir.path());
    assert!(!o.status.success(), "a text input still needs --to");
}

#[test]
fn what_a_new_user_met() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fails = |args: &[&str], want: &str| {
        let out = run(args, d);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    };
    // Kinds told from the content: a known kind not read yet is named as such, and an
    // extension-less .spt is read.
    let mut h5 = b"\x89HDF\r\n\x1a\n".to_vec();
    h5.extend([0u8; 64]);
    std::fs::write(d.join("cells.h5ad"), &h5).unwrap();
    if cfg!(feature = "hdf5") {
        fails(
            &["cells.h5ad", "--to", "CSR"],
            "cells.h5ad: not a readable HDF5 file (truncated or damaged?)",
        );
    } else {
        fails(&["cells.h5ad", "--to", "CSR"], "cells.h5ad: an AnnData .h5ad file (HDF5); this build of sptk cannot read this kind of input yet");
    }
    std::fs::write(d.join("t.parquet"), b"PAR1 row groups PAR1").unwrap();
    let want = if cfg!(feature = "table") {
        "t.parquet: not a readable Parquet file (truncated or damaged?)"
    } else {
        "t.parquet: a Parquet file;"
    };
    fails(&["t.parquet", "--to", "CSR"], want);
    let mtx =
        "%%MatrixMarket matrix coordinate real general\n2 8 5\n1 1 1\n1 2 2\n1 3 3\n2 5 4\n2 8 5\n";
    std::fs::write(d.join("a.mtx"), mtx).unwrap();
    assert!(run(
        &["a.mtx", "--to", "CSR", "-o", "noext", "--format", "spt"],
        d
    )
    .status
    .success());
    let out = run(&["noext", "--to", "CSC", "--print"], d);
    assert!(out.status.success(), "{}", stderr(&out));
    // The name and --format must agree; --format needs -o.
    fails(
        &["a.mtx", "--to", "CSR", "-o", "z.spt", "--format", "mtx"],
        "-o z.spt: the name says sptk storage file (.spt) but --format says Matrix Market",
    );
    assert!(!d.join("z.spt").exists());
    fails(
        &["a.mtx", "--to", "CSR", "--format", "mtx"],
        "--format says the format of -o OUT; there is no -o",
    );
    // --prune only where it applies, and it reports what it dropped.
    fails(
        &["a.mtx", "--to", "CSR", "--prune"],
        "--prune applies to n:m targets",
    );
    let out = run(&["a.mtx", "--to", "2:4", "--prune", "--print"], d);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--prune dropped 1 nonzero from overfull n:m groups"),
        "{}",
        stderr(&out)
    );
    // Rows in the file's own numbering, and the flag that would help.
    fails(&["a.mtx", "--to", "2:4"], "row 1 of the file (0-based row 0), group 0 (columns 0..3) has 3 nonzeros; structured[2, 4] holds at most 2 (--prune keeps the largest)");
    fails(
        &["a.mtx", "--to", "ELL:2"],
        "row 1 of the file (0-based row 0) has 3 entries; ELL:2 holds at most 2 per row",
    );
    // A missing file or folder is named once, as such.
    fails(
        &["nofolder/a.mtx", "--to", "CSR"],
        "nofolder/a.mtx: the folder nofolder does not exist",
    );
    fails(&["missing.mtx", "--to", "CSR"], "missing.mtx: no such file");
    let out = run(&["a.mtx", "--to", "CSR", "-o", "nofolder/out.spt"], d);
    assert_eq!(
        stderr(&out).trim_end(),
        "sparse-convert: error: -o nofolder/out.spt: the folder nofolder does not exist"
    );
    // A pattern file stays a pattern file.
    std::fs::write(
        d.join("p.mtx"),
        "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n3 2\n",
    )
    .unwrap();
    let out = run(&["p.mtx", "--to", "CSC", "-o", "q.mtx"], d);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(d.join("q.mtx")).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate pattern general"),
        "{text}"
    );
    // Absurd thread counts are clamped, with a note.
    let out = run(&["a.mtx", "--to", "CSR", "--threads", "100000"], d);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("note: --threads 100000 is more than 4 per core; using"),
        "{}",
        stderr(&out)
    );
}

/// `--pos-width auto` / `--crd-width auto` pick the narrowest widths on every route: the
/// direct `.mtx` reader, standard input (read, then converted), through CSR into BSR, and
/// from a stored tensor; the arrays equal those of the same widths asked for by number.
#[test]
fn automatic_widths_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("examples/fem_8x8.mtx");
    let src = src.to_str().unwrap();
    let auto = ["--pos-width", "auto", "--crd-width", "auto"];
    let info_encoding = |spt: &str| {
        let out = run(&["info", spt, "--json"], dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    for to in ["CSR", "BSR:2x2", "DCSC"] {
        let mut args = vec![src, "--to", to, "-o", "auto.spt", "--quiet"];
        args.extend(auto);
        let out = run(&args, dir.path());
        assert!(out.status.success(), "{to}: {}", stderr(&out));
        let text = info_encoding("auto.spt");
        assert!(
            text.contains("posWidth = 8") && text.contains("crdWidth = 8"),
            "{to}: {text}"
        );
        // The same arrays as asking for 8 bits.
        let fixed = run(
            &[
                src,
                "--to",
                to,
                "--pos-width",
                "8",
                "--crd-width",
                "8",
                "--print",
            ],
            dir.path(),
        );
        let mut args = vec![src, "--to", to, "--print"];
        args.extend(auto);
        let chosen = run(&args, dir.path());
        assert!(fixed.status.success() && chosen.status.success());
        assert_eq!(stdout(&fixed), stdout(&chosen), "{to}");
    }
    // Standard input (the ordinary reader), and a stored tensor as the source.
    let text = std::fs::read(testdata().join("examples/fem_8x8.mtx")).unwrap();
    let mut child = bin()
        .args([
            "-",
            "--from",
            "mtx",
            "--to",
            "CSC",
            "-o",
            "stdin.spt",
            "--quiet",
        ])
        .args(auto)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &text).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(info_encoding("stdin.spt").contains("crdWidth = 8"));
    // A preset alone takes the narrowest widths too; encoding text and explicit widths
    // keep what they say (0: the default 64 bits, printed without a width).
    assert!(run(
        &[src, "--to", "CSR", "-o", "preset.spt", "--quiet"],
        dir.path()
    )
    .status
    .success());
    let text = info_encoding("preset.spt");
    assert!(
        text.contains("posWidth = 8") && text.contains("crdWidth = 8"),
        "{text}"
    );
    let csr_text = "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>";
    assert!(run(
        &[src, "--to", csr_text, "-o", "text.spt", "--quiet"],
        dir.path()
    )
    .status
    .success());
    assert!(!info_encoding("text.spt").contains("Width"));
    let wide = run(
        &[
            src,
            "--to",
            "CSR",
            "--pos-width",
            "0",
            "--crd-width",
            "0",
            "-o",
            "wide.spt",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(wide.status.success());
    assert!(!info_encoding("wide.spt").contains("Width"));
    let mut args = vec!["wide.spt", "--to", "CSC", "-o", "narrow.spt", "--quiet"];
    args.extend(auto);
    assert!(run(&args, dir.path()).status.success());
    let text = info_encoding("narrow.spt");
    assert!(
        text.contains("posWidth = 8") && text.contains("crdWidth = 8"),
        "{text}"
    );
    // Not a width.
    let out = run(&[src, "--to", "CSR", "--pos-width", "wide"], dir.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("auto"), "{}", stderr(&out));
}

/// `info --to` and the dry run say which route a conversion takes, and `info` says why.
#[test]
fn info_and_dry_run_name_the_route() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata().join("examples/fem_8x8.mtx");
    let src = src.to_str().unwrap();
    let info = |args: &[&str]| {
        let out = run(args, dir.path());
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let text = info(&["info", src, "--to", "BSR:2x2"]);
    assert!(
        text.contains("route       scatter -> block-merge: "),
        "{text}"
    );
    assert!(text.contains("counting sort"), "{text}");
    let text = info(&["info", src, "--to", "CSR", "--dtype", "f32"]);
    assert!(text.contains("route       general: "), "{text}");
    assert!(text.contains("--dtype"), "{text}");
    let json = info(&["info", src, "--to", "DCSC", "--json"]);
    let doc: Json = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["route"],
        serde_json::json!(["scatter", "derive"]),
        "{json}"
    );
    // The dry run of the direct reader, and a stored source.
    let text = info(&[src, "--to", "ELL"]);
    assert!(text.contains("route      scatter -> pad"), "{text}");
    assert!(
        run(&[src, "--to", "CSR", "-o", "a.spt", "--quiet"], dir.path())
            .status
            .success()
    );
    let text = info(&["info", "a.spt", "--to", "CSC"]);
    assert!(text.contains("route       transpose: "), "{text}");
    let text = info(&["a.spt", "--to", "CSR"]);
    assert!(text.contains("route      share"), "{text}");
}

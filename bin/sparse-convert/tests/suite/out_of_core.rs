//! Conversions out of core (`--out-of-core`, or a `.spt` output past `--memory-limit`):
//! the same bytes as in memory over many passes (the hidden `--stretch-size` makes them),
//! a peak resident set within the limit plus a fixed allowance, malformed input located
//! as the ordinary reader locates it, a full disk, a run killed at any point, and the
//! outputs and targets it refuses.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{fails, run, succeeds};

/// Writes a Matrix Market file of `n` entries: `header` its banner's words after
/// `coordinate`, rows in random order unless `sorted`, about one in `dup` a repeat.
fn mtx(path: &Path, (rows, cols, n): (u64, u64, u64), field: &str, sorted: bool, dup: u64) {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut lines: Vec<(u64, u64, u64)> = Vec::with_capacity(n as usize);
    for k in 0..n {
        let r = next();
        if k > 0 && r.is_multiple_of(dup) {
            let (i, j, _) = lines[(r >> 16) as usize % lines.len()];
            lines.push((i, j, r >> 40));
        } else {
            let (i, j) = (next() % rows, next() % cols);
            let (i, j) = if field.ends_with("symmetric") {
                (i.max(j) % rows, i.min(j))
            } else {
                (i, j)
            };
            lines.push((i, j, r >> 40));
        }
    }
    if sorted {
        lines.sort_by_key(|l| l.0);
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "%%MatrixMarket matrix coordinate {field}").unwrap();
    writeln!(f, "% written by the out-of-core tests").unwrap();
    writeln!(f, "{rows} {cols} {n}").unwrap();
    for (i, j, v) in lines {
        let (i, j) = (i + 1, j + 1);
        match field.split(' ').next().unwrap() {
            "pattern" => writeln!(f, "{i} {j}"),
            "integer" => writeln!(f, "{i} {j} {}", v % 7),
            "complex" => writeln!(f, "{i} {j} {} {}", v % 5, v % 3),
            _ => writeln!(f, "{i} {j} {}", (v % 9) as f64 * 0.5 - 1.0),
        }
        .unwrap();
    }
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn many_passes_give_the_bytes_of_the_conversion_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&str, &str, bool, &[&str])] = &[
        ("real general", "CSR", false, &[]),
        ("real general", "CSC", false, &[]),
        ("real general", "CSR", true, &[]),
        ("real general", "CSR", false, &["--drop-zeros"]),
        (
            "real general",
            "CSR",
            false,
            &["--pos-width", "64", "--crd-width", "64"],
        ),
        ("real symmetric", "CSR", false, &[]),
        ("pattern general", "CSC", false, &[]),
        ("integer general", "CSR", false, &["--drop-zeros"]),
        ("complex general", "CSR", false, &[]),
    ];
    for (k, &(field, to, sorted, extra)) in cases.iter().enumerate() {
        let input = d.join(format!("in{k}.mtx"));
        let cols = if field.ends_with("symmetric") {
            40_000
        } else {
            3_000
        };
        mtx(&input, (40_000, cols, 150_000), field, sorted, 11);
        let inp = input.to_str().unwrap();
        let mut args = vec![inp, "--to", to, "-o", "mem.spt"];
        args.extend_from_slice(extra);
        succeeds(&args, d, None);
        for stretch in ["1", "200K"] {
            let mut args = vec![inp, "--to", to, "-o", "ooc.spt", "--out-of-core"];
            args.extend_from_slice(&["--stretch-size", stretch]);
            args.extend_from_slice(extra);
            let (_, err) = succeeds(&args, d, None);
            assert!(err.contains("out of core"), "{err}");
            let passes: u64 = err
                .split(" fill pass")
                .next()
                .and_then(|s| s.rsplit(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no passes in {err}"));
            assert!(passes >= 2, "{field} {to} {stretch}: {passes} passes");
            assert!(
                read(&d.join("ooc.spt")) == read(&d.join("mem.spt")),
                "{field} into {to} {extra:?}, stretch {stretch}: the files differ"
            );
        }
    }
}

#[test]
#[cfg(feature = "table")]
fn tables_convert_out_of_core_to_the_bytes_of_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (30_000, 2_000, 120_000),
        "real general",
        false,
        17,
    );
    for table in ["in.parquet", "in.arrow"] {
        succeeds(&["in.mtx", "--to", "COO", "-o", table], d, None);
        for to in ["CSR", "CSC"] {
            succeeds(&[table, "--to", to, "-o", "mem.spt"], d, None);
            let (_, err) = succeeds(
                &[
                    table,
                    "--to",
                    to,
                    "-o",
                    "ooc.spt",
                    "--out-of-core",
                    "--stretch-size",
                    "100K",
                ],
                d,
                None,
            );
            assert!(
                err.contains("out of core") && !err.contains(" 1 fill pass "),
                "{err}"
            );
            assert!(
                read(&d.join("ooc.spt")) == read(&d.join("mem.spt")),
                "{table} into {to}: the files differ"
            );
        }
    }
    // Past the memory limit, a table goes out of core by itself, as a text file does:
    // 2.4M entries hold about 25 MB in memory; out of core, a pass of row blocks fits
    // 16 MiB (and so do the Parquet pages of about 1 MB, each within a twelfth of it).
    mtx(
        &d.join("big.mtx"),
        (300_000, 2_000, 2_400_000),
        "real general",
        false,
        17,
    );
    succeeds(&["big.mtx", "--to", "COO", "-o", "big.parquet"], d, None);
    let (_, err) = succeeds(
        &[
            "big.parquet",
            "--to",
            "CSR",
            "-o",
            "small.spt",
            "--memory-limit",
            "16M",
        ],
        d,
        None,
    );
    assert!(
        err.contains("converting out of core into small.spt"),
        "{err}"
    );
    succeeds(&["big.parquet", "--to", "CSR", "-o", "mem.spt"], d, None);
    assert!(read(&d.join("small.spt")) == read(&d.join("mem.spt")));
    // Relabelled coordinates have no route yet, and say so.
    fails(
        &[
            "in.parquet",
            "--to",
            "CSR",
            "--relabel",
            "-o",
            "r.spt",
            "--out-of-core",
        ],
        d,
        "in.parquet: Parquet into CSR has no out-of-core route yet",
    );
}

#[test]
fn past_the_memory_limit_a_spt_output_is_converted_out_of_core() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (20_000, 20_000, 300_000),
        "real general",
        false,
        50,
    );
    succeeds(&["in.mtx", "--to", "CSR", "-o", "mem.spt"], d, None);
    let (_, err) = succeeds(
        &[
            "in.mtx",
            "--to",
            "CSR",
            "-o",
            "small.spt",
            "--memory-limit",
            "2M",
        ],
        d,
        None,
    );
    assert!(
        err.contains("note: the conversion does not fit the memory limit (")
            && err.contains("): converting out of core into small.spt"),
        "{err}"
    );
    assert!(read(&d.join("small.spt")) == read(&d.join("mem.spt")));
    // Outputs written from memory keep the refusal, and say why they cannot go out of core.
    fails(
        &[
            "in.mtx",
            "--to",
            "CSR",
            "-o",
            "small.mtx",
            "--memory-limit",
            "2M",
        ],
        d,
        "more than the memory limit of 2097152 bytes",
    );
    fails(
        &["in.mtx", "--to", "CSR", "-o", "x.mtx", "--out-of-core"],
        d,
        "--out-of-core: a Matrix Market output is written from memory (only .spt files are written out of core)",
    );
    fails(
        &[
            "in.mtx",
            "--to",
            "CSR",
            "-o",
            "-",
            "--format",
            "spt",
            "--out-of-core",
        ],
        d,
        "--out-of-core: standard output (-o -) is written from memory",
    );
    fails(
        &["in.mtx", "--to", "CSR", "--out-of-core"],
        d,
        "--out-of-core writes a .spt file: give -o OUT.spt",
    );
    fails(
        &["in.mtx", "--to", "DCSR", "-o", "d.spt", "--out-of-core"],
        d,
        "in.mtx: Matrix Market into DCSR has no out-of-core route yet",
    );
    assert!(!d.join("d.spt").exists());
}

#[test]
fn malformed_lines_are_located_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (3000, 3000, 100_000),
        "real general",
        false,
        1 << 40,
    );
    let text = std::fs::read_to_string(d.join("in.mtx")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Line 70001 of the file: a value that is not a number; then one past the columns.
    lines[70_000] = "5 7 1.5x".into();
    std::fs::write(d.join("bad.mtx"), lines.join("\n") + "\n").unwrap();
    lines[70_000] = "5 3001 1.5".into();
    std::fs::write(d.join("col.mtx"), lines.join("\n") + "\n").unwrap();
    lines[70_000] = "5 7 1.5".into();
    lines.truncate(90_000);
    std::fs::write(d.join("short.mtx"), lines.join("\n") + "\n").unwrap();
    std::fs::write(d.join("out.spt"), b"old").unwrap();
    for name in ["bad.mtx", "col.mtx", "short.mtx"] {
        let mem = run(&[name, "--to", "CSR"], d, None);
        let want = String::from_utf8_lossy(&mem.stderr).into_owned();
        assert!(
            !mem.status.success() && want.contains(&format!("{name}:")),
            "{want}"
        );
        for stretch in ["1", "64M"] {
            let ooc = run(
                &[
                    name,
                    "--to",
                    "CSR",
                    "-o",
                    "out.spt",
                    "--out-of-core",
                    "--stretch-size",
                    stretch,
                ],
                d,
                None,
            );
            let got = String::from_utf8_lossy(&ooc.stderr);
            assert!(!ooc.status.success(), "{name} converted");
            assert_eq!(got.trim_end(), want.trim_end(), "{name}, stretch {stretch}");
            assert_eq!(read(&d.join("out.spt")), b"old");
        }
    }
    assert_eq!(temporaries(d), Vec::<PathBuf>::new());
}

fn temporaries(d: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".tmp."))
        .collect()
}

/// `sparse-convert ARGS` in `d` with `SPTK_REPORT_PEAK` set: its peak resident bytes.
fn peak(args: &[&str], d: &Path) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
        .args(args)
        .current_dir(d)
        .env("SPTK_REPORT_PEAK", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    err.lines()
        .find_map(|l| l.strip_prefix("peak resident memory: "))
        .and_then(|l| l.strip_suffix(" bytes"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"))
}

#[test]
fn the_peak_resident_set_stays_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 5M entries, rows in random order (about 100 MB of text): in memory, about 70 MB of
    // coordinates, values and scratch; out of core with a 16 MiB limit, one stretch.
    mtx(
        &d.join("big.mtx"),
        (1_000_000, 1_000_000, 5_000_000),
        "real general",
        false,
        1 << 40,
    );
    mtx(
        &d.join("tiny.mtx"),
        (10, 10, 10),
        "real general",
        false,
        1 << 40,
    );
    let base = peak(
        &["tiny.mtx", "--to", "CSR", "-o", "tiny.spt", "--out-of-core"],
        d,
    );
    let limit: u64 = 16 << 20;
    let ooc = peak(
        &[
            "big.mtx",
            "--to",
            "CSR",
            "-o",
            "ooc.spt",
            "--memory-limit",
            "16M",
            "--threads",
            "2",
        ],
        d,
    );
    let mem = peak(
        &["big.mtx", "--to", "CSR", "-o", "mem.spt", "--threads", "2"],
        d,
    );
    assert!(read(&d.join("ooc.spt")) == read(&d.join("mem.spt")));
    // The allowance: the parser's windows of the mapped input (8 MiB per thread, given
    // back behind it), the output's 1 MiB staging buffer, thread stacks.
    let allowance: u64 = 24 << 20;
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "peak resident: {:.1} MiB out of core (limit 16 MiB), {:.1} MiB in memory, {:.1} MiB for a tiny file",
        mib(ooc),
        mib(mem),
        mib(base)
    );
    assert!(
        ooc <= base + limit + allowance,
        "out of core: {:.1} MiB, past {:.1} + 16 + 24 MiB",
        mib(ooc),
        mib(base)
    );
    assert!(
        mem > ooc + (24 << 20),
        "the test does not tell: {mem} vs {ooc}"
    );
}

#[test]
fn a_run_killed_at_any_point_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (100_000, 100_000, 1_500_000),
        "real general",
        false,
        1 << 40,
    );
    std::fs::write(d.join("out.spt"), b"the old file").unwrap();
    let mut killed = 0;
    for delay_ms in [5u64, 30, 80, 150, 300] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparse-convert"))
            .args([
                "in.mtx",
                "--to",
                "CSR",
                "-o",
                "out.spt",
                "--out-of-core",
                "--stretch-size",
                "1M",
            ])
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let now = read(&d.join("out.spt"));
        if status.success() {
            // Finished before the kill: the new file, whole.
            assert!(now.starts_with(b"SPTENSOR"));
            std::fs::write(d.join("out.spt"), b"the old file").unwrap();
        } else {
            killed += 1;
            assert_eq!(now, b"the old file", "killed after {delay_ms} ms");
        }
        // The temporary is unnamed (O_TMPFILE): a killed writer leaves nothing.
        assert_eq!(temporaries(d), Vec::<PathBuf>::new(), "after {delay_ms} ms");
    }
    assert!(
        killed > 0,
        "every run finished before its kill: the test tells nothing"
    );
}

#[test]
fn a_full_disk_is_said_and_leaves_nothing() {
    let Some(mount) = Tmpfs::new(1 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (50_000, 50_000, 400_000),
        "real general",
        false,
        1 << 40,
    );
    let out = mount.0.join("out.spt");
    std::fs::write(&out, b"old").unwrap();
    let o = run(
        &[
            "in.mtx",
            "--to",
            "CSR",
            "-o",
            out.to_str().unwrap(),
            "--out-of-core",
        ],
        d,
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains(&format!(
            "{}: the disk is full (0 bytes written of ",
            out.display()
        )),
        "{err}"
    );
    assert_eq!(read(&out), b"old");
    assert_eq!(temporaries(&mount.0), Vec::<PathBuf>::new());
}

/// A small tmpfs of the test's own, unmounted on drop; None (with the reason printed)
/// where it cannot be mounted (not root), unless `SPTK_REQUIRE_CGROUP` says the machine
/// must allow it (`.ci/run`, as root, sets it).
struct Tmpfs(PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl Tmpfs {
    fn new(bytes: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let why = "a full disk: a tmpfs cannot be mounted here (not root)";
            assert!(std::env::var_os("SPTK_REQUIRE_CGROUP").is_none(), "{why}");
            eprintln!("skipped: {why}");
            return None;
        }
        Some(Tmpfs(dir.path().to_path_buf(), dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn info_says_which_way_a_conversion_goes_and_its_passes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mtx(
        &d.join("in.mtx"),
        (200_000, 200_000, 1_000_000),
        "real general",
        false,
        1 << 40,
    );
    let (out, _) = succeeds(&["info", "in.mtx", "--to", "CSR"], d, None);
    assert!(
        out.contains("converts in memory: it fits the limit"),
        "{out}"
    );
    // 1M entries hold about 20 MB in memory: with a 6 MiB limit, out of core, and the
    // estimate of the passes is what the conversion then makes (the entries are uniform).
    let (out, _) = succeeds(
        &["info", "in.mtx", "--to", "CSR", "--memory-limit", "6M"],
        d,
        None,
    );
    assert!(out.contains("the entries are not read"), "{out}");
    assert!(out.contains("converts out of core"), "{out}");
    let planned: u64 = out
        .split("about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no passes in {out}"));
    let (_, err) = succeeds(
        &[
            "in.mtx",
            "--to",
            "CSR",
            "-o",
            "o.spt",
            "--memory-limit",
            "6M",
        ],
        d,
        None,
    );
    let made: u64 = err
        .split(" fill pass")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no passes in {err}"));
    assert!(made >= 2, "{err}");
    assert!(
        planned.abs_diff(made) <= 1,
        "planned {planned} passes, made {made}"
    );
    let (json, _) = succeeds(
        &[
            "info",
            "in.mtx",
            "--to",
            "CSR",
            "--memory-limit",
            "6M",
            "--json",
        ],
        d,
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["memory"]["way"], "out of core", "{json}");
    assert_eq!(v["entries"], 1_000_000);
    // Too small even for the counters and one block: refused, and said.
    let (out, _) = succeeds(
        &["info", "in.mtx", "--to", "CSR", "--memory-limit", "20K"],
        d,
        None,
    );
    assert!(out.contains("past the limit, and out of core too"), "{out}");
    // A fitting conversion reads the entries and says the plan after the layout.
    let (json, _) = succeeds(&["info", "in.mtx", "--to", "CSR", "--json"], d, None);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["memory"]["way"], "in memory", "{json}");
    assert!(v["nse"].as_u64().unwrap() > 900_000);
}

//! `sparse-run` end to end: `.spt` inputs written by the store, operands and results as
//! `.npy` files, results checked against the reference kernels; bad operands refused with
//! a message and a non-zero exit, leaving no output.

use crate::common;

use std::process::Command;

use common::{close, matrix, run, s};
use sptk_jit::reference;
use sptk_jit::{Dense, DenseMut};
use sptk_npy::{Npy, Order};

/// `--isa reference` runs the reference kernels on any CPU (the path a CPU without
/// generated code takes): the same y and Y as `sptk_jit::reference`, bit for bit, for
/// SpMV and SpMM, reported as "reference", with no note about a missing kernel.
#[test]
fn isa_reference_runs_the_reference_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    let a = matrix(&ap, 30, 20, "CSR");
    let x: Vec<f64> = (0..20).map(|j| j as f64 * 0.5 - 4.0).collect();
    let (xp, yp) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    sptk_npy::write(&xp, &[20], Order::C, &x).unwrap();
    let (ok, stdout, err) = run(&[
        "spmv",
        s(&ap),
        "--x",
        s(&xp),
        "-o",
        s(&yp),
        "--isa",
        "reference",
        "--stats",
        "--bandwidth",
        "30",
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("note"), "{err}");
    assert!(
        stdout.contains("reference") && !stdout.contains("generated"),
        "{stdout}"
    );
    let mut want = vec![0.0; 30];
    reference::spmv(&a, &x, &mut want, false, (1.0, 0.0)).unwrap();
    assert_eq!(Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), want);

    let k = 3;
    let xm: Vec<f64> = (0..20 * k).map(|v| (v % 7) as f64 - 2.5).collect();
    let (xmp, ymp) = (dir.path().join("X.npy"), dir.path().join("Y.npy"));
    sptk_npy::write(&xmp, &[20, k as u64], Order::C, &xm).unwrap();
    let (ok, _, err) = run(&[
        "spmm",
        s(&ap),
        "--x",
        s(&xmp),
        "-o",
        s(&ymp),
        "--isa",
        "reference",
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("note"), "{err}");
    let mut want = vec![0.0; 30 * k];
    let xd = Dense {
        data: &xm,
        rows: 20,
        cols: k,
        order: sptk_jit::Order::RowMajor,
    };
    let yd = DenseMut {
        data: &mut want,
        rows: 30,
        cols: k,
        order: sptk_jit::Order::RowMajor,
    };
    reference::spmm(&a, xd, yd, (1.0, 0.0)).unwrap();
    assert_eq!(Npy::open(&ymp).unwrap().to_floats::<f64>().unwrap(), want);
}

#[test]
fn spmv_writes_y_for_one_input_and_for_a_folder_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let a = matrix(&dir.path().join("a.spt"), 50, 40, "CSR");
    let x: Vec<f64> = (0..40).map(|j| j as f64 * 0.25 - 3.0).collect();
    let y0: Vec<f64> = (0..50).map(|i| i as f64).collect();
    let (xp, y0p, yp) = (
        dir.path().join("x.npy"),
        dir.path().join("y0.npy"),
        dir.path().join("y.npy"),
    );
    sptk_npy::write(&xp, &[40], Order::C, &x).unwrap();
    sptk_npy::write(&y0p, &[50], Order::C, &y0).unwrap();
    let (ok, _, err) = run(&[
        "spmv",
        s(&dir.path().join("a.spt")),
        "--x",
        s(&xp),
        "--alpha",
        "2",
        "--beta",
        "-0.5",
        "--y",
        s(&y0p),
        "-o",
        s(&yp),
        "--threads",
        "2",
    ]);
    assert!(ok, "{err}");
    let mut want = y0.clone();
    reference::spmv(&a, &x, &mut want, false, (2.0, -0.5)).unwrap();
    close(&Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), &want);

    // A folder of shards (CSR and one dense, which runs the reference kernel with a note),
    // one output each under -o DIR.
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    let p = matrix(&shards.join("p.spt"), 50, 40, "CSR");
    let q = matrix(&shards.join("q.spt"), 50, 40, "Dense");
    // -o names a folder that does not exist yet: it is made.
    let out = dir.path().join("out").join("y");
    let (ok, stdout, err) = run(&[
        "spmv",
        s(&shards),
        "--x",
        s(&xp),
        "-o",
        s(&out),
        "--stats",
        "--bandwidth",
        "30",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("running the reference kernel"), "{err}");
    assert!(
        stdout.contains("generated") && stdout.contains("reference") && stdout.contains("GFLOP/s"),
        "{stdout}"
    );
    for (t, name) in [(&p, "p.npy"), (&q, "q.npy")] {
        let mut want = vec![0.0; 50];
        reference::spmv(t, &x, &mut want, false, (1.0, 0.0)).unwrap();
        close(
            &Npy::open(&out.join(name))
                .unwrap()
                .to_floats::<f64>()
                .unwrap(),
            &want,
        );
    }

    // Transposed, f32 x converted with a note.
    let x32: Vec<f32> = (0..50).map(|i| i as f32 * 0.5).collect();
    let x32p = dir.path().join("x32.npy");
    sptk_npy::write(&x32p, &[50], Order::C, &x32).unwrap();
    let (ok, _, err) = run(&[
        "spmv",
        s(&dir.path().join("a.spt")),
        "--x",
        s(&x32p),
        "--transpose",
        "-o",
        s(&yp),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("holds f32 values, converted to f64"), "{err}");
    let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
    let mut want = vec![0.0; 40];
    reference::spmv(&a, &x64, &mut want, true, (1.0, 0.0)).unwrap();
    close(&Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), &want);
}

#[test]
fn bad_operands_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    matrix(&ap, 6, 5, "CSR");
    let good = dir.path().join("x.npy");
    sptk_npy::write(&good, &[5], Order::C, &[1.0f64; 5]).unwrap();
    let short = dir.path().join("short.npy");
    sptk_npy::write(&short, &[4], Order::C, &[1.0f64; 4]).unwrap();
    let two_d = dir.path().join("two_d.npy");
    sptk_npy::write(&two_d, &[5, 1], Order::C, &[1.0f64; 5]).unwrap();
    let ints = dir.path().join("ints.npy");
    let mut bytes = std::fs::read(&good).unwrap();
    let at = bytes.windows(3).position(|w| w == b"<f8").unwrap();
    bytes[at..at + 3].copy_from_slice(b"<i8");
    std::fs::write(&ints, bytes).unwrap();
    let y = dir.path().join("y.npy");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--x", s(&short)], "has 4 elements; A needs 5"),
        (vec!["--x", s(&two_d)], "shape [5, 1]"),
        (vec!["--x", s(&ints)], "holds i64 elements"),
        (
            vec!["--x", s(&good), "--beta", "1"],
            "--beta 1 scales a y given with --y",
        ),
        (
            vec!["--x", s(&good), "--isa", "mmx"],
            "unknown instruction set 'mmx'",
        ),
        (
            vec!["--x", s(&good), "--repeat", "0"],
            "--repeat must be at least 1",
        ),
    ];
    // NEON code is generated on any host, but runs only on an AArch64 CPU.
    let neon = cfg!(target_arch = "x86_64").then(|| {
        (
            vec!["--x", s(&good), "--isa", "neon"],
            "this CPU does not run neon code",
        )
    });
    for (extra, want) in cases.into_iter().chain(neon) {
        let mut args = vec!["spmv", s(&ap), "-o", s(&y)];
        args.extend(extra);
        let (ok, _, err) = run(&args);
        assert!(!ok && err.contains(want), "{args:?}: {err}");
        assert!(!y.exists(), "{args:?} left an output");
    }
    let (ok, _, err) = run(&["spmv", s(&dir.path().join("missing.spt")), "--x", s(&good)]);
    assert!(!ok && err.contains("missing.spt"), "{err}");
}

#[test]
fn asm_prints_a_kernels_instructions() {
    let (ok, out, err) = run(&["asm", "spmv csr f64 pos32 crd32 scalar"]);
    assert!(ok, "{err}");
    assert!(out.contains("mulsd") && out.contains("ret"), "{out}");
    // Any instruction set's code prints, whatever this CPU runs (generated, not mapped).
    // Below 2^31, 32-bit coordinates index dword gather lanes; past it, they are widened.
    let (ok, out, err) = run(&["asm", "spmv csr f64 pos32 crd32 avx512"]);
    assert!(ok, "{err}");
    assert!(out.contains("zmm") && out.contains("vgatherdpd"), "{out}");
    let (ok, out, err) = run(&["asm", "spmv csr f64 pos32 crd32 avx512 dims>2^31"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("vpmovzxdq") && out.contains("vgatherqpd"),
        "{out}"
    );
    // AArch64 NEON code too, in the Arm syntax.
    let (ok, out, err) = run(&["asm", "spmv csr f64 pos32 crd32 neon"]);
    assert!(ok, "{err}");
    assert!(out.contains("fmla v0.2d") && out.contains("ret"), "{out}");
    let (ok, _, err) = run(&["asm", "spmv csr f16 pos32 crd32 neon"]);
    assert!(!ok && err.contains("no generated kernel"), "{err}");
    let (ok, _, err) = run(&["asm", "spmv csr f64 pos32"]);
    assert!(!ok && err.contains("six words"), "{err}");
    // The element-wise co-iteration and SpGEMM's scatter kernels print the same way.
    let ewise = "ewise union add csr.p32.c32 dcsr.p64.c32 -> csr f64 avx2 fill";
    let (ok, out, err) = run(&["asm", ewise]);
    assert!(
        ok && out.contains("vaddsd") && out.contains("ret"),
        "{err}{out}"
    );
    let scatter = "spgemm scatter plus_pair i64 c32 mask avx512";
    let (ok, out, err) = run(&["asm", scatter]);
    assert!(
        ok && out.contains("vpgatherdq") && out.contains("ret"),
        "{err}{out}"
    );
    let (ok, _, err) = run(&["asm", "spgemm scatter plus_pair f64 c32 mask avx512"]);
    assert!(!ok && err.contains("i64"), "{err}");
}

#[test]
fn spmm_takes_either_order_and_writes_y_in_the_order_of_y0() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    let a = matrix(&ap, 50, 40, "CSR");
    // X of 40 x 3 in Fortran order: column c holds j + 100 c.
    let xf: Vec<f64> = (0..3)
        .flat_map(|c| (0..40).map(move |j| j as f64 + 100.0 * c as f64))
        .collect();
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[40, 3], Order::Fortran, &xf).unwrap();
    let yp = dir.path().join("y.npy");
    let (ok, _, err) = run(&[
        "spmm",
        s(&ap),
        "--x",
        s(&xp),
        "-o",
        s(&yp),
        "--threads",
        "2",
    ]);
    assert!(ok, "{err}");
    let y = Npy::open(&yp).unwrap();
    assert_eq!((y.shape(), y.order()), (&[50u64, 3][..], Order::C));
    let mut want = vec![0.0; 150];
    reference::spmm(
        &a,
        Dense {
            data: &xf,
            rows: 40,
            cols: 3,
            order: sptk_jit::Order::ColMajor,
        },
        DenseMut {
            data: &mut want,
            rows: 50,
            cols: 3,
            order: sptk_jit::Order::RowMajor,
        },
        (1.0, 0.0),
    )
    .unwrap();
    close(&y.to_floats::<f64>().unwrap(), &want);
    // A Y0 of the wrong shape, and a 1-D X, are refused.
    let bad = dir.path().join("bad.npy");
    sptk_npy::write(&bad, &[50, 2], Order::C, &[0.0f64; 100]).unwrap();
    let (ok, _, err) = run(&["spmm", s(&ap), "--x", s(&xp), "--beta", "1", "--y", s(&bad)]);
    assert!(!ok && err.contains("A needs (50, 3)"), "{err}");
    let v = dir.path().join("v.npy");
    sptk_npy::write(&v, &[40], Order::C, &[0.0f64; 40]).unwrap();
    let (ok, _, err) = run(&["spmm", s(&ap), "--x", s(&v)]);
    assert!(!ok && err.contains("spmm needs a 2-D array"), "{err}");
}

#[test]
fn spmm_runs_generated_code_on_blocks_and_columns_and_notes_the_fallback() {
    let dir = tempfile::tempdir().unwrap();
    // 50 x 41: no multiple of the 4 x 4 blocks either way.
    let xs: Vec<f64> = (0..41 * 7).map(|n| (n % 11) as f64 - 5.0).collect();
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[41, 7], Order::C, &xs).unwrap();
    for (target, desc) in [
        ("BSR:4x4", Some("spmm bsr4x4 f64")),
        ("BSC:2x3", Some("spmm bsc2x3 f64")),
        ("CSC", Some("spmm csc f64")),
        ("DCSR", Some("spmm dcsr f64")),
        ("ELL", Some("spmm ell6 f64")),
        ("COO", Some("spmm coo f64")),
        ("Dense", None),
    ] {
        let ap = dir.path().join("a.spt");
        let a = matrix(&ap, 50, 41, target);
        let yp = dir.path().join("y.npy");
        let (ok, out, err) = run(&[
            "spmm",
            s(&ap),
            "--x",
            s(&xp),
            "-o",
            s(&yp),
            "--threads",
            "2",
            "--stats",
        ]);
        assert!(ok, "{target}: {err}");
        match desc {
            Some(d) => {
                assert!(!err.contains("reference kernel"), "{target}: {err}");
                assert!(
                    out.contains(d) && out.contains("generated"),
                    "{target}: {out}"
                );
            }
            None => assert!(
                err.contains("running the reference kernel"),
                "{target}: {err}"
            ),
        }
        let mut want = vec![0.0; 50 * 7];
        reference::spmm(
            &a,
            Dense {
                data: &xs,
                rows: 41,
                cols: 7,
                order: sptk_jit::Order::RowMajor,
            },
            DenseMut {
                data: &mut want,
                rows: 50,
                cols: 7,
                order: sptk_jit::Order::RowMajor,
            },
            (1.0, 0.0),
        )
        .unwrap();
        close(&Npy::open(&yp).unwrap().to_floats::<f64>().unwrap(), &want);
    }
}

/// A Python with NumPy and SciPy (`sptk_testkit::python`); the SciPy comparison is skipped
/// without one unless `SPTK_REQUIRE_PYTHON` is set (CI).
fn scipy_python() -> Option<std::path::PathBuf> {
    sptk_testkit::python(&["numpy", "scipy.io"], "SciPy comparison")
}

#[test]
fn results_agree_with_scipy_on_the_same_matrices() {
    let Some(python) = scipy_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (300u64, 257u64);
    let x: Vec<f64> = (0..cols)
        .map(|j| ((j * 37 % 101) as f64 - 50.0) / 7.0)
        .collect();
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[cols], Order::C, &x).unwrap();
    for (target, transpose) in [
        ("CSR", false),
        ("CSC", false),
        ("BSR:4x4", false),
        ("COO", false),
        ("ELL", false),
        ("CSR", true),
    ] {
        let spt = dir.path().join("a.spt");
        let a = matrix(&spt, rows, cols, target);
        let mtx = dir.path().join("a.mtx");
        sptk_mtx::write_path(&mtx, &a.to_entries(), &Default::default()).unwrap();
        let (xs, yp) = if transpose {
            let xt: Vec<f64> = (0..rows).map(|i| (i % 13) as f64 - 6.0).collect();
            let p = dir.path().join("xt.npy");
            sptk_npy::write(&p, &[rows], Order::C, &xt).unwrap();
            (p, dir.path().join("yt.npy"))
        } else {
            (xp.clone(), dir.path().join("y.npy"))
        };
        let mut args = vec![
            "spmv",
            s(&spt),
            "--x",
            s(&xs),
            "-o",
            s(&yp),
            "--threads",
            "3",
        ];
        if transpose {
            args.push("--transpose");
        }
        let (ok, _, err) = run(&args);
        assert!(ok, "{target}: {err}");
        // SciPy's A @ x (or A.T @ x), and the bound 2 n u sum |a x| per element.
        let code = format!(
            "import numpy as np, scipy.io\n\
             A = scipy.io.mmread({m:?}).tocsr()\n\
             A = A.T.tocsr() if {t} else A\n\
             x = np.load({x:?}); y = np.load({y:?})\n\
             ref = A @ x\n\
             n = np.diff(A.indptr)\n\
             bound = 2 * n * np.finfo(float).eps * (abs(A) @ abs(x)) + 1e-300\n\
             bad = np.abs(y - ref) > bound\n\
             assert y.shape == ref.shape and not bad.any(), (np.flatnonzero(bad)[:5], y[bad][:5], ref[bad][:5])\n",
            m = mtx.to_str().unwrap(),
            t = if transpose { "True" } else { "False" },
            x = xs.to_str().unwrap(),
            y = yp.to_str().unwrap(),
        );
        let out = Command::new(&python).args(["-c", &code]).output().unwrap();
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn plot_draws_a_png_and_needs_a_font() {
    let dir = tempfile::tempdir().unwrap();
    let ap = dir.path().join("a.spt");
    matrix(&ap, 50, 40, "CSR");
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[40], Order::C, &[1.0f64; 40]).unwrap();
    let png = dir.path().join("roof.png");
    let (ok, _, err) = run(&[
        "spmv",
        s(&ap),
        "--x",
        s(&xp),
        "--plot",
        s(&png),
        "--bandwidth",
        "30",
        "--repeat",
        "3",
    ]);
    // A machine without any TrueType font cannot label the picture: the error says so.
    // CI installs DejaVu and sets SPTK_REQUIRE_FONT, so there it must draw.
    if !ok
        && err.contains("needs a TrueType font")
        && std::env::var_os("SPTK_REQUIRE_FONT").is_none()
    {
        eprintln!("\n!!! roofline drawing skipped: no TrueType font here ({err}) !!!\n");
        return;
    }
    assert!(ok, "{err}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, after the chunk's length and name.
    assert_eq!(&bytes[16..24], &[0, 0, 3, 0xc0, 0, 0, 2, 0x80]);
    let bad = dir.path().join("bad.png");
    let out = Command::new(env!("CARGO_BIN_EXE_sparse-run"))
        .args([
            "spmv",
            s(&ap),
            "--x",
            s(&xp),
            "--plot",
            s(&bad),
            "--bandwidth",
            "30",
        ])
        .env("SPTK_PLOT_FONT", dir.path().join("no-such-font.ttf"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no-such-font.ttf"),
        "{err}"
    );
    assert!(!bad.exists());
}

#[test]
fn no_mmap_reads_the_input_into_memory_and_gives_the_same_y() {
    // Above 4 MiB, so the private copy takes the huge-page path.
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (200_000, 150_000);
    let a = matrix(&dir.path().join("a.spt"), rows, cols, "CSR");
    assert!(std::fs::metadata(dir.path().join("a.spt")).unwrap().len() > 4 << 20);
    let x: Vec<f64> = (0..cols).map(|j| (j % 13) as f64 - 6.0).collect();
    let xp = dir.path().join("x.npy");
    sptk_npy::write(&xp, &[cols], Order::C, &x).unwrap();
    let ap = dir.path().join("a.spt");
    let mut ys = Vec::new();
    for (name, load) in [("mapped.npy", false), ("loaded.npy", true)] {
        let yp = dir.path().join(name);
        let mut args = vec!["spmv", s(&ap), "--x", s(&xp), "-o", s(&yp)];
        args.extend(["--threads", "2", "--repeat", "3"]);
        if load {
            args.push("--no-mmap");
        }
        let (ok, _, err) = run(&args);
        assert!(ok, "{err}");
        ys.push(std::fs::read(&yp).unwrap());
    }
    assert_eq!(ys[0], ys[1], "--no-mmap changed y");
    let mut want = vec![0.0; rows as usize];
    reference::spmv(&a, &x, &mut want, false, (1.0, 0.0)).unwrap();
    close(
        &Npy::open(&dir.path().join("loaded.npy"))
            .unwrap()
            .to_floats::<f64>()
            .unwrap(),
        &want,
    );
}

//! Files written by NumPy 2.4 (`tests/data`, made with `np.save`): each reads with the
//! values NumPy wrote, or is refused naming the file and the reason. Our writer's files
//! are read back here and, when a Python with NumPy is at hand, by NumPy itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use sptk_npy::{Npy, Order, ValueType};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn reads_every_float_layout_numpy_writes() {
    let a = Npy::open(&data("f64_1d.npy")).unwrap();
    assert_eq!(
        (a.dtype(), a.shape(), a.order()),
        (ValueType::F64, &[7u64][..], Order::C)
    );
    let want: Vec<f64> = (0..7).map(|i| i as f64 * 0.5 - 1.0).collect();
    assert_eq!(a.to_floats::<f64>().unwrap(), want);

    let c = Npy::open(&data("f32_2d_c.npy")).unwrap();
    assert_eq!(
        (c.dtype(), c.shape(), c.order()),
        (ValueType::F32, &[3u64, 4][..], Order::C)
    );
    let want: Vec<f64> = (0..12).map(|i| i as f64 / 4.0).collect();
    assert_eq!(c.to_floats::<f64>().unwrap(), want);

    // Fortran order: stored column by column.
    let f = Npy::open(&data("f64_2d_fortran.npy")).unwrap();
    assert_eq!((f.shape(), f.order()), (&[3u64, 4][..], Order::Fortran));
    let want: Vec<f64> = (0..4)
        .flat_map(|j| (0..3).map(move |i| (i * 4 + j) as f64 + 0.25))
        .collect();
    assert_eq!(f.to_floats::<f64>().unwrap(), want);

    let be = Npy::open(&data("f64_be.npy")).unwrap();
    assert!(be.header().big_endian);
    assert_eq!(
        be.to_floats::<f64>().unwrap(),
        vec![1.5, -2.25, f64::INFINITY, 3e300]
    );
    // f64 -> f32 rounds; 3e300 overflows to infinity as NumPy's astype does.
    assert_eq!(
        be.to_floats::<f32>().unwrap(),
        vec![1.5, -2.25, f32::INFINITY, f32::INFINITY]
    );

    let h = Npy::open(&data("f16.npy")).unwrap();
    assert_eq!(
        h.to_floats::<f64>().unwrap(),
        vec![0.5, -1.0, 65504.0, 2f64.powi(-24)]
    );

    let v2 = Npy::open(&data("f64_v2.npy")).unwrap();
    assert_eq!(v2.to_floats::<f64>().unwrap(), vec![1.0, 2.0]);

    let e = Npy::open(&data("empty_0x3.npy")).unwrap();
    assert_eq!(
        (e.shape(), e.to_floats::<f64>().unwrap().len()),
        (&[0u64, 3][..], 0)
    );
    let s = Npy::open(&data("scalar.npy")).unwrap();
    assert_eq!(
        (s.shape().len(), s.to_floats::<f64>().unwrap()),
        (0, vec![2.5])
    );
}

#[test]
fn refuses_what_is_not_a_real_float_array() {
    for (name, want) in [
        ("i32.npy", "holds i32 elements"),
        ("c128.npy", "holds complex128 elements"),
    ] {
        let err = Npy::open(&data(name))
            .unwrap()
            .to_floats::<f64>()
            .unwrap_err();
        assert!(
            err.to_string().contains(name) && err.to_string().contains(want),
            "{err}"
        );
    }
    let err = Npy::open(&data("object.npy")).err().unwrap().to_string();
    assert!(err.contains("object.npy") && err.contains("'|O'"), "{err}");
}

#[test]
fn refuses_damaged_files_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(data("f64_1d.npy")).unwrap();
    let cut = dir.path().join("cut.npy");
    std::fs::write(&cut, &good[..good.len() - 3]).unwrap();
    let err = Npy::open(&cut).err().unwrap().to_string();
    assert!(
        err.contains("cut.npy") && err.contains("needs 56 bytes") && err.contains("has 53"),
        "{err}"
    );
    let long = dir.path().join("long.npy");
    std::fs::write(&long, [&good[..], &[0u8; 8]].concat()).unwrap();
    assert!(Npy::open(&long)
        .err()
        .unwrap()
        .to_string()
        .contains("has 64"));
    let empty = dir.path().join("empty.npy");
    std::fs::write(&empty, b"").unwrap();
    assert!(Npy::open(&empty)
        .err()
        .unwrap()
        .to_string()
        .contains("not a .npy file"));
    let missing = Npy::open(&dir.path().join("missing.npy"))
        .err()
        .unwrap()
        .to_string();
    assert!(missing.contains("missing.npy"), "{missing}");
}

#[test]
fn writes_what_it_reads_and_refuses_a_wrong_shape() {
    let dir = tempfile::tempdir().unwrap();
    let y = dir.path().join("y.npy");
    let vals = [1.0f64, -0.0, f64::NAN, 1e-310, 7.25, 3.0];
    sptk_npy::write(&y, &[2, 3], Order::Fortran, &vals).unwrap();
    let back = Npy::open(&y).unwrap();
    assert_eq!(
        (back.shape(), back.order()),
        (&[2u64, 3][..], Order::Fortran)
    );
    let got = back.to_floats::<f64>().unwrap();
    assert!(got
        .iter()
        .zip(&vals)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let y32 = dir.path().join("y32.npy");
    sptk_npy::write(&y32, &[4], Order::C, &[1.5f32, 2.5, -3.5, 0.1]).unwrap();
    assert_eq!(
        Npy::open(&y32).unwrap().to_floats::<f32>().unwrap(),
        vec![1.5, 2.5, -3.5, 0.1]
    );
    let bad = dir.path().join("bad.npy");
    let err = sptk_npy::write(&bad, &[4], Order::C, &[1.0f64])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.npy") && err.contains("shape [4]"),
        "{err}"
    );
    assert!(!bad.exists());
    if let Some(python) = python() {
        let code = format!(
            "import numpy as np\n\
             a = np.load({:?}); b = np.load({:?})\n\
             assert a.dtype == np.float64 and a.shape == (2, 3) and a.flags.f_contiguous\n\
             assert a[0, 0] == 1.0 and a[1, 0] == 0.0 and np.isnan(a[0, 1]) and a[1, 2] == 3.0\n\
             assert b.dtype == np.float32 and list(b) == [np.float32(x) for x in (1.5, 2.5, -3.5, 0.1)]\n",
            y.to_str().unwrap(),
            y32.to_str().unwrap()
        );
        let out = Command::new(python).args(["-c", &code]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A Python with NumPy (`sptk_testkit::python`): without one the NumPy half of the round
/// trip is skipped with a note, unless `SPTK_REQUIRE_PYTHON` is set (as `.ci/run` does).
fn python() -> Option<PathBuf> {
    sptk_testkit::python(&["numpy"], "NumPy round trip")
}

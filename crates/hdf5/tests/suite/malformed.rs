//! Malformed HDF5 inputs built here, each refused with an error naming the file and the
//! dataset or attribute, never a panic: missing or wrong-typed datasets, pointers that do
//! not match the shape or decrease, indices out of range or negative, nnz mismatches,
//! unknown binsparse versions and formats, descriptors that are not JSON, truncated and
//! empty files, strings where numbers belong, and huge declared sizes over tiny arrays.

use std::path::{Path, PathBuf};

use hdf5::types::VarLenUnicode;
use sptk_hdf5::{read, ReadOptions};

/// An AnnData-like file with a CSR `X` of the given arrays; `edit` changes it first.
fn h5ad(dir: &Path, name: &str, edit: impl FnOnce(&hdf5::Group)) -> PathBuf {
    let path = dir.join(name);
    let f = hdf5::File::create(&path).unwrap();
    let enc: VarLenUnicode = "anndata".parse().unwrap();
    f.new_attr::<VarLenUnicode>()
        .create("encoding-type")
        .unwrap()
        .write_scalar(&enc)
        .unwrap();
    let x = f.create_group("X").unwrap();
    let t: VarLenUnicode = "csr_matrix".parse().unwrap();
    x.new_attr::<VarLenUnicode>()
        .create("encoding-type")
        .unwrap()
        .write_scalar(&t)
        .unwrap();
    edit(&x);
    path
}

fn shape(g: &hdf5::Group, s: &[i64]) {
    g.new_attr::<i64>()
        .shape(s.len())
        .create("shape")
        .unwrap()
        .write(s)
        .unwrap();
}

fn ds<T: hdf5::H5Type>(g: &hdf5::Group, name: &str, v: &[T]) {
    g.new_dataset_builder().with_data(v).create(name).unwrap();
}

/// A valid 3 x 4 CSR with 4 entries, then `edit`.
fn csr(g: &hdf5::Group, edit: impl FnOnce(&hdf5::Group)) {
    shape(g, &[3, 4]);
    ds(g, "indptr", &[0i32, 2, 2, 4]);
    ds(g, "indices", &[0i32, 3, 1, 2]);
    ds(g, "data", &[1.0f32, 2.0, 3.0, 4.0]);
    edit(g);
}

fn fails(path: &Path, member: Option<&str>, wants: &[&str]) {
    let e = match read(path, None, member, &ReadOptions::default()) {
        Ok(_) => panic!("{} was read", path.display()),
        Err(e) => e.to_string(),
    };
    assert!(e.starts_with(&path.display().to_string()), "{e}");
    for w in wants {
        assert!(e.contains(w), "wanted {w:?} in: {e}");
    }
}

#[test]
fn a_valid_file_reads() {
    let dir = tempfile::tempdir().unwrap();
    let p = h5ad(dir.path(), "ok.h5ad", |x| csr(x, |_| {}));
    let m = read(&p, None, None, &ReadOptions::default()).unwrap();
    assert_eq!(m.dim_sizes(), &[3, 4]);
}

#[test]
fn anndata_arrays_that_break_the_rules_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let case = |name: &str, f: fn(&hdf5::Group), wants: &[&str]| {
        let p = h5ad(d, name, f);
        fails(&p, None, wants);
    };
    case(
        "no_data.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
        },
        &["/X/data", "missing dataset"],
    );
    case(
        "short_indptr.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &["/X/indptr", "3 pointers for 3 rows; expected 4"],
    );
    case(
        "decreasing.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 3, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &["/X/indptr", "decreases: element 2 is 2, element 1 is 3"],
    );
    case(
        "out_of_range.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 4, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &[
            "/X/indices",
            "element 1 is 4, past the last of the 4 columns",
        ],
    );
    case(
        "negative.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, -3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &["/X/indices", "element 1 is -3; indices cannot be negative"],
    );
    case(
        "nnz.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0]);
        },
        &["/X/data", "3 values for 4 indices"],
    );
    case(
        "end.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 3]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &[
            "/X/indptr",
            "ends at 3, but /X/indices holds 4 indices (nnz mismatch)",
        ],
    );
    case(
        "float_indices.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0.0f64, 3.0, 1.0, 2.0]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &["/X/indices", "where integers belong"],
    );
    case(
        "string_data.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            let s: Vec<VarLenUnicode> = ["a", "b", "c", "d"]
                .iter()
                .map(|t| t.parse().unwrap())
                .collect();
            ds(x, "data", &s);
        },
        &["/X/data", "strings where numbers belong"],
    );
    case(
        "no_shape.h5ad",
        |x| {
            ds(x, "indptr", &[0i32, 2, 2, 4]);
        },
        &["/X", "without a `shape` attribute"],
    );
    case(
        "shape_3d.h5ad",
        |x| {
            shape(x, &[3, 4, 5]);
        },
        &["attribute `shape` of /X", "a matrix has two dimensions"],
    );
    case(
        "huge_shape.h5ad",
        |x| {
            shape(x, &[1_000_000_000_000, 1_000_000_000_000]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            ds(x, "data", &[1.0f32, 2.0, 3.0, 4.0]);
        },
        &["/X/indptr", "4 pointers for 1000000000000 rows"],
    );
    case(
        "huge_dataset.h5ad",
        |x| {
            shape(x, &[3, 4]);
            ds(x, "indptr", &[0i32, 2, 2, 4]);
            ds(x, "indices", &[0i32, 3, 1, 2]);
            // A chunked dataset that declares 2^40 values and stores none.
            x.new_dataset::<f32>()
                .chunk(1024)
                .shape(1usize << 40)
                .create("data")
                .unwrap();
        },
        &["/X/data", "exceed the memory limit"],
    );
    let p = h5ad(d, "ok.h5ad", |x| csr(x, |_| {}));
    fails(
        &p,
        Some("layers/none"),
        &["/layers/none", "`layers` is not in /, which holds `X`"],
    );
    // A typo in a layer's name lists the layers there.
    {
        let f = hdf5::File::open_rw(&p).unwrap();
        let layers = f.create_group("layers").unwrap();
        for name in ["counts", "spliced"] {
            csr(&layers.create_group(name).unwrap(), |_| {});
        }
    }
    fails(
        &p,
        Some("layers/count"),
        &["`count` is not in /layers, which holds `counts`, `spliced`"],
    );
}

/// A binsparse root with `descriptor` as its attribute and a valid CSR's arrays.
fn bsp(dir: &Path, name: &str, descriptor: &str) -> PathBuf {
    let path = dir.join(name);
    let f = hdf5::File::create(&path).unwrap();
    let g = f.group("/").unwrap();
    let text: VarLenUnicode = descriptor.parse().unwrap();
    g.new_attr::<VarLenUnicode>()
        .create("binsparse")
        .unwrap()
        .write_scalar(&text)
        .unwrap();
    ds(&g, "pointers_to_1", &[0u32, 2, 2, 4]);
    ds(&g, "indices_1", &[0u32, 3, 1, 2]);
    ds(&g, "values", &[1.0f64, 2.0, 3.0, 4.0]);
    path
}

fn descriptor(version: &str, format: &str, shape: &str, nnz: u64, values: &str) -> String {
    format!(
        r#"{{"binsparse": {{"version": "{version}", "format": "{format}", "shape": {shape}, "number_of_stored_values": {nnz}, "data_types": {{"pointers_to_1": "uint32", "indices_1": "uint32", "values": "{values}"}}}}, "user": {{"note": "kept"}}}}"#
    )
}

#[test]
fn binsparse_descriptors_that_break_the_rules_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ok = bsp(
        d,
        "ok.h5",
        &descriptor("0.1.3", "CSR", "[3, 4]", 4, "float64"),
    );
    assert_eq!(
        read(&ok, None, None, &ReadOptions::default())
            .unwrap()
            .dim_sizes(),
        &[3, 4]
    );
    let at = "attribute `binsparse` of /";
    for (name, desc, wants) in [
        (
            "v2.h5",
            descriptor("0.2.0", "CSR", "[3, 4]", 4, "float64"),
            vec![at, "version 0.2.0 is not supported"],
        ),
        (
            "fmt.h5",
            descriptor("0.1", "CSX", "[3, 4]", 4, "float64"),
            vec![at, "unknown binsparse format `CSX`"],
        ),
        (
            "json.h5",
            "{binsparse: nope".to_string(),
            vec![at, "not JSON"],
        ),
        (
            "nokey.h5",
            r#"{"other": 1}"#.to_string(),
            vec![at, "no `binsparse` object"],
        ),
        (
            "shape.h5",
            descriptor("0.1", "CSR", "[5, 4]", 4, "float64"),
            vec!["/pointers_to_1", "4 pointers for 5 rows"],
        ),
        (
            "rank.h5",
            descriptor("0.1", "CSR", "[3]", 4, "float64"),
            vec![at, "needs a 2-D shape"],
        ),
        (
            "type.h5",
            descriptor("0.1", "CSR", "[3, 4]", 4, "int32"),
            vec!["/values", "declared int32 but stored as f64"],
        ),
        (
            "vtype.h5",
            descriptor("0.1", "CSR", "[3, 4]", 4, "float128"),
            vec!["/values", "unknown binsparse value type"],
        ),
        (
            "iso.h5",
            descriptor("0.1", "CSR", "[3, 4]", 4, "iso[float64]"),
            vec!["/values", "iso values are stored once"],
        ),
        (
            // The count and the arrays must agree, either way.
            "more.h5",
            descriptor("0.1", "CSR", "[3, 4]", 5, "float64"),
            vec![
                "/indices_1",
                "holds 4 indices, but the descriptor's number_of_stored_values is 5",
            ],
        ),
        (
            "fewer.h5",
            descriptor("0.1", "CSC", "[4, 3]", 3, "float64"),
            vec![
                "/indices_1",
                "holds 4 indices, but the descriptor's number_of_stored_values is 3",
            ],
        ),
        (
            "nnz.h5",
            descriptor("0.1", "COO", "[3, 4]", 4, "float64"),
            vec!["/indices_0", "missing dataset"],
        ),
    ] {
        let p = bsp(d, name, &desc);
        fails(&p, None, &wants);
    }
    // A fill value other than zero is refused, naming the rule.
    let p = bsp(
        d,
        "fill.h5",
        &descriptor("0.1", "CSR", "[3, 4]", 4, "float64")
            .replace(r#""format""#, r#""fill": true, "format""#),
    );
    {
        let f = hdf5::File::open_rw(&p).unwrap();
        ds(&f.group("/").unwrap(), "fill_value", &[7.0f64]);
    }
    fails(&p, None, &["/fill_value", "a fill value other than zero"]);
}

#[test]
fn broken_files_are_named_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = d.join("empty.h5");
    std::fs::write(&empty, b"").unwrap();
    fails(&empty, None, &["an empty file, not HDF5"]);
    let good = h5ad(d, "good.h5ad", |x| csr(x, |_| {}));
    let bytes = std::fs::read(&good).unwrap();
    for cut in [8, 100, 1000, bytes.len() / 2, bytes.len() - 1] {
        let t = d.join(format!("cut{cut}.h5ad"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        // Truncated files are refused (the library may find some still readable; it
        // must never panic, and any error names the file).
        if let Err(e) = read(&t, None, None, &ReadOptions::default()) {
            assert!(e.to_string().starts_with(&t.display().to_string()), "{e}");
        }
    }
    let t = d.join("cut100.h5ad");
    fails(&t, None, &["not a readable HDF5 file"]);
    let missing = d.join("missing.h5");
    fails(&missing, None, &["No such file"]);
}

#[test]
fn matlab_and_tenx_arrays_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mat");
    {
        let f = hdf5::File::create(&p).unwrap();
        let g = f.create_group("A").unwrap();
        g.new_attr::<u64>()
            .create("MATLAB_sparse")
            .unwrap()
            .write_scalar(&3u64)
            .unwrap();
        ds(&g, "jc", &[0u64, 1, 5]);
        ds(&g, "ir", &[0u64, 1, 2]);
        ds(&g, "data", &[1.0f64, 2.0, 3.0]);
    }
    fails(
        &p,
        Some("A"),
        &["/A/jc", "ends at 5, but /A/ir holds 3 indices"],
    );
    let p = dir.path().join("t.h5");
    {
        let f = hdf5::File::create(&p).unwrap();
        let g = f.create_group("matrix").unwrap();
        ds(&g, "data", &[1i32, 2]);
        ds(&g, "indices", &[0i64, 7]);
        ds(&g, "indptr", &[0i64, 1, 2]);
        ds(&g, "shape", &[3i32, 2]);
        let text =
            |v: &[&str]| -> Vec<VarLenUnicode> { v.iter().map(|s| s.parse().unwrap()).collect() };
        ds(&g, "barcodes", &text(&["b1", "b2"]));
        ds(&g, "genes", &text(&["g1", "g2", "g3"]));
    }
    fails(
        &p,
        None,
        &[
            "/matrix/indices",
            "element 1 is 7, past the last of the 3 rows",
        ],
    );
}

#[test]
fn unsorted_and_repeated_indices_are_sorted_and_summed_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let p = h5ad(dir.path(), "unsorted.h5ad", |x| {
        shape(x, &[3, 4]);
        ds(x, "indptr", &[0i32, 3, 3, 5]);
        ds(x, "indices", &[3i32, 0, 3, 2, 1]);
        ds(x, "data", &[1.0f64, 2.0, 4.0, 8.0, 16.0]);
    });
    let m = read(&p, None, None, &ReadOptions::default()).unwrap();
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("sorted and repeated ones summed")),
        "{:?}",
        m.notes
    );
    let sptk_hdf5::Content::Entries(e) = &m.content else {
        panic!("non-canonical arrays come as coordinates")
    };
    let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
    let t = sptk_tensor::convert(e, &target, &Default::default())
        .unwrap()
        .tensor;
    assert_eq!(t.pos(1).unwrap().to_u64_vec(), vec![0, 2, 2, 4]);
    assert_eq!(t.crd(1).unwrap().to_u64_vec(), vec![0, 3, 1, 2]);
    assert_eq!(
        format!("{:?}", t.values()),
        format!(
            "{:?}",
            sptk_tensor::ValueVec::F64(vec![2.0, 5.0, 16.0, 8.0].into())
        )
    );
}

#[test]
fn tenx_v2_genomes_and_binsparse_subgroups_are_chosen_by_member() {
    let dir = tempfile::tempdir().unwrap();
    // Cell Ranger 2: one group per genome, gene ids in `genes`.
    let p = dir.path().join("v2.h5");
    {
        let f = hdf5::File::create(&p).unwrap();
        for (genome, n) in [("GRCh38", 3i32), ("mm10", 2)] {
            let g = f.create_group(genome).unwrap();
            ds(&g, "data", &[5i32, 6]);
            ds(&g, "indices", &[0i64, n as i64 - 1]);
            ds(&g, "indptr", &[0i64, 1, 2]);
            ds(&g, "shape", &[n, 2]);
            let bc: Vec<VarLenUnicode> = ["AAA-1", "CCC-1"]
                .iter()
                .map(|t| t.parse().unwrap())
                .collect();
            ds(&g, "barcodes", &bc);
            let genes: Vec<VarLenUnicode> = (0..n)
                .map(|i| format!("{genome}_g{i}").parse().unwrap())
                .collect();
            ds(&g, "genes", &genes);
        }
    }
    let e = read(&p, None, None, &ReadOptions::default())
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.to_string().contains("several matrices (/GRCh38, /mm10)"),
        "{e}"
    );
    let m = read(&p, None, Some("mm10"), &ReadOptions::default()).unwrap();
    assert_eq!(m.dim_sizes(), &[2, 2]);
    assert_eq!(m.labels[0].as_ref().unwrap().get(1), Some("mm10_g1"));
    assert_eq!(m.labels[1].as_ref().unwrap().get(0), Some("AAA-1"));

    // A binsparse matrix in a subgroup of a plain HDF5 file.
    let p = dir.path().join("sub.h5");
    {
        let f = hdf5::File::create(&p).unwrap();
        let g = f
            .create_group("results")
            .unwrap()
            .create_group("A")
            .unwrap();
        let text: VarLenUnicode = descriptor("0.1.0", "CSR", "[3, 4]", 4, "float64")
            .parse()
            .unwrap();
        g.new_attr::<VarLenUnicode>()
            .create("binsparse")
            .unwrap()
            .write_scalar(&text)
            .unwrap();
        ds(&g, "pointers_to_1", &[0u32, 2, 2, 4]);
        ds(&g, "indices_1", &[0u32, 3, 1, 2]);
        ds(&g, "values", &[1.0f64, 2.0, 3.0, 4.0]);
    }
    let m = read(&p, None, Some("/results/A"), &ReadOptions::default()).unwrap();
    assert_eq!(m.layout, "binsparse CSR");
    let e = read(&p, None, None, &ReadOptions::default())
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("sparse-convert info FILE` lists them"),
        "{e}"
    );
    let listed = sptk_hdf5::list(&p).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].path, "/results/A");
}

/// Bytes of a valid file's arrays changed one at a time, each read: an answer or an error
/// naming the file, never a panic. The damage stays inside the datasets' stored bytes
/// (pointers, indices, values), which is what this crate checks; damage to the file's own
/// metadata is parsed by libhdf5, which is not hardened against it (see the README).
#[test]
fn damaged_array_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let good = h5ad(dir.path(), "good.h5ad", |x| csr(x, |_| {}));
    let regions: Vec<(u64, u64)> = {
        let f = hdf5::File::open(&good).unwrap();
        ["indptr", "indices", "data"]
            .iter()
            .map(|n| {
                let ds = f.dataset(&format!("X/{n}")).unwrap();
                (ds.offset().expect("contiguous"), ds.storage_size())
            })
            .collect()
    };
    let bytes = std::fs::read(&good).unwrap();
    let cases: usize = std::env::var("SPTK_DAMAGE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let t = dir.path().join("damaged.h5ad");
    let mut errors = 0;
    for _ in 0..cases {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (start, len) = regions[(x % 3) as usize];
        let at = (start + (x >> 8) % len) as usize;
        let mut b = bytes.clone();
        b[at] ^= 1 << ((x >> 40) % 8);
        std::fs::write(&t, &b).unwrap();
        if let Err(e) = read(&t, None, None, &ReadOptions::default()) {
            assert!(e.to_string().starts_with(&t.display().to_string()), "{e}");
            errors += 1;
        }
    }
    assert!(errors > 0, "some damage must be noticed");
}

#[test]
fn matlab_struct_fields_are_read_by_dotted_name() {
    use hdf5::types::FixedAscii;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.mat");
    {
        let f = hdf5::File::create(&p).unwrap();
        let s = f.create_group("S").unwrap();
        let class = FixedAscii::<6>::from_ascii(b"struct").unwrap();
        s.new_attr::<FixedAscii<6>>()
            .create("MATLAB_class")
            .unwrap()
            .write_scalar(&class)
            .unwrap();
        let w = s.create_group("W").unwrap();
        let double = FixedAscii::<6>::from_ascii(b"double").unwrap();
        w.new_attr::<FixedAscii<6>>()
            .create("MATLAB_class")
            .unwrap()
            .write_scalar(&double)
            .unwrap();
        w.new_attr::<u64>()
            .create("MATLAB_sparse")
            .unwrap()
            .write_scalar(&4u64)
            .unwrap();
        ds(&w, "jc", &[0u64, 2, 3]);
        ds(&w, "ir", &[0u64, 3, 1]);
        ds(&w, "data", &[1.5f64, -2.0, 4.0]);
    }
    let m = read(
        &p,
        Some(sptk_hdf5::Kind::Matlab),
        Some("S.W"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(m.dim_sizes(), &[4, 2]);
    assert_eq!(m.layout, "sparse double");
    // Without a name, the only sparse variable (inside the struct) is read.
    let m = read(
        &p,
        Some(sptk_hdf5::Kind::Matlab),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(m.object, "/S/W");
}

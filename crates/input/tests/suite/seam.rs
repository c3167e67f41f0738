//! The reader seam end to end: naming, detection, every kind of source (file, several
//! files, folder, stream, container member), labels, level-array sources, errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sptk_encoding::{resolve_target, Target};
use sptk_input::{
    convert, read, Accepts, Content, Input, InputError, Match, Opened, Probe, ReadOptions, Reader,
    Source, SourceSpec,
};
use sptk_tensor::{ConvertOptions, Entries, IndexVec, LevelArrays, Tensor, ValueType, ValueVec};

const SMALL: &str =
    "%%MatrixMarket matrix coordinate real general\n3 4 4\n1 1 1.5\n2 4 -2\n3 2 4\n1 1 0.5\n";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn target(text: &str) -> Target {
    resolve_target(text, 2).unwrap()
}

fn opts() -> ConvertOptions {
    ConvertOptions::default()
}

fn spec(path: &Path) -> SourceSpec {
    SourceSpec::resolve(&[path]).unwrap()
}

fn entries_of(input: &Input) -> &Entries {
    match &input.content {
        Content::Entries { entries, .. } => entries,
        _ => panic!("expected a coordinate list"),
    }
}

/// The same matrix read the ordinary way, for comparisons.
fn reference(text: &str, to: &str) -> Tensor {
    let m = sptk_mtx::read_from(text.as_bytes(), "ref.mtx", &Default::default()).unwrap();
    sptk_tensor::convert(&m.entries, &target(to), &opts())
        .unwrap()
        .tensor
}

#[test]
fn detection_reads_content_before_names() {
    let dir = tempfile::tempdir().unwrap();
    // Named nothing like Matrix Market, gzip-compressed, named .tns: the banner decides.
    for (name, bytes) in [
        ("matrix.dat", SMALL.as_bytes().to_vec()),
        ("matrix.gz", gzip(SMALL.as_bytes())),
        ("really.tns", SMALL.as_bytes().to_vec()),
    ] {
        let path = write(dir.path(), name, &bytes);
        let input = read(spec(&path), None, &ReadOptions::default()).unwrap();
        assert_eq!(input.format, "Matrix Market", "{name}");
        assert_eq!(input.header, "matrix coordinate real general");
        assert_eq!(entries_of(&input).len(), 4);
    }
    // No banner: the name says .tns.
    let tns = write(dir.path(), "t.tns.gz", &gzip(b"1 1 1 2.0\n2 3 1 1.0\n"));
    let input = read(spec(&tns), None, &ReadOptions::default()).unwrap();
    assert_eq!(input.format, "FROSTT .tns");
    assert_eq!(entries_of(&input).dim_sizes(), &[2, 3, 1]);
    // A storage file by its magic, whatever its name.
    let t = reference(SMALL, "CSR");
    let spt = dir.path().join("stored.bin");
    sptk_store::write(&spt, &t, &Default::default()).unwrap();
    let input = read(spec(&spt), None, &ReadOptions::default()).unwrap();
    assert_eq!(input.format, "sptk storage file (.spt)");
    assert_eq!(input.convert(&target("CSR"), &opts()).unwrap().tensor, t);
}

#[test]
fn unknown_and_unsupported_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = write(dir.path(), "notes.txt", b"1 2 3\n");
    let e = read(spec(&text), None, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, InputError::Unknown { .. }), "{e}");
    assert!(e.to_string().contains("--from mtx, tns, spt, mex"), "{e}");
    // Given the format, it is read as that.
    let as_tns = read(spec(&text), Some("TNS"), &ReadOptions::default()).unwrap();
    assert_eq!(entries_of(&as_tns).dim_sizes(), &[1, 2]);

    let mut h5 = b"\x89HDF\r\n\x1a\n".to_vec();
    h5.extend([0u8; 64]);
    let h5 = write(dir.path(), "cells.h5ad", &h5);
    let e = read(spec(&h5), None, &ReadOptions::default()).unwrap_err();
    if cfg!(feature = "hdf5") {
        // The HDF5 readers take it by its signature and report what the library says.
        assert!(
            e.to_string().starts_with(&format!(
                "{}: not a readable HDF5 file (truncated or damaged?)",
                h5.display()
            )),
            "{e}"
        );
    } else {
        assert_eq!(
            e.to_string(),
            format!(
                "{}: an AnnData .h5ad file (HDF5); this build of sptk cannot read this kind of input yet (it reads Matrix Market, FROSTT .tns, sptk storage file (.spt), 10x Genomics MEX folder, SciPy sparse .npz, NumPy .npy (dense), safetensors, MATLAB v5 .mat)",
                h5.display()
            )
        );
    }
    let e = read(spec(&h5), Some("orc"), &ReadOptions::default()).unwrap_err();
    let keys = sptk_input::readers()
        .iter()
        .map(|r| r.keys()[0])
        .collect::<Vec<_>>()
        .join(", ");
    assert!(keys.starts_with("mtx, tns, spt, mex"), "{keys}");
    assert_eq!(
        e.to_string(),
        format!("--from orc: unknown format (expected one of: {keys})")
    );
    // A folder nobody recognises.
    let e = read(spec(dir.path()), None, &ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("a folder that no reader recognises"),
        "{e}"
    );
}

#[test]
fn sources_a_format_cannot_be_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mtx = write(dir.path(), "a.mtx", SMALL.as_bytes());
    let member = SourceSpec::resolve(&[format!("{}:/X", mtx.display())]).unwrap();
    let e = read(member, None, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:/X: a Matrix Market file holds one tensor, so there is no member `/X` to choose",
            mtx.display()
        )
    );
    let e = read(spec(dir.path()), Some("mtx"), &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("is not read from folders"), "{e}");
    let t = reference(SMALL, "CSR");
    let a = dir.path().join("a.spt");
    let b = dir.path().join("b.spt");
    sptk_store::write(&a, &t, &Default::default()).unwrap();
    sptk_store::write(&b, &t, &Default::default()).unwrap();
    let e = read(
        SourceSpec::resolve(&[&a, &b]).unwrap(),
        None,
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("are read one at a time"), "{e}");
}

#[test]
fn several_files_read_as_one_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "part-0.mtx",
        b"%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 1.5\n2 4 -2\n",
    );
    let b = write(
        dir.path(),
        "part-1.mtx.gz",
        &gzip(b"%%MatrixMarket matrix coordinate real general\n3 4 2\n3 2 4\n1 1 0.5\n"),
    );
    let seen = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let tick = seen.clone();
    let ropts = ReadOptions {
        progress: Some(Arc::new(move |done| {
            tick.fetch_max(done, std::sync::atomic::Ordering::Relaxed);
        })),
        ..Default::default()
    };
    let spec = SourceSpec::resolve(&[&a, &b]).unwrap();
    let total = Source::open(spec.clone()).len().unwrap();
    let (input, converted) = convert(spec, None, &target("CSR"), &opts(), &ropts).unwrap();
    assert_eq!(input.notes, vec!["2 files read as one matrix".to_string()]);
    // Duplicates across files are summed like duplicates within one.
    assert_eq!(converted.tensor, reference(SMALL, "CSR"));
    assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), total);

    let c = write(
        dir.path(),
        "part-2.mtx",
        b"%%MatrixMarket matrix coordinate integer general\n3 5 1\n1 1 1\n",
    );
    let e = read(
        SourceSpec::resolve(&[&a, &c]).unwrap(),
        None,
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: dimensions [3, 5], but {} has [3, 4]; files read as one tensor must have one shape",
            c.display(),
            a.display()
        )
    );
}

#[test]
fn streams_are_read_once_front_to_back() {
    let stream = |bytes: Vec<u8>| Source::from_stream(Box::new(std::io::Cursor::new(bytes)));
    let read_stream = |bytes: Vec<u8>, from: Option<&str>, ropts: &ReadOptions| {
        Opened::with_readers(stream(bytes), from, sptk_input::readers())?.read(ropts)
    };
    let ropts = ReadOptions::default();
    for bytes in [SMALL.as_bytes().to_vec(), gzip(SMALL.as_bytes())] {
        let input = read_stream(bytes, None, &ropts).unwrap();
        assert_eq!(input.name, "standard input");
        assert_eq!(
            input.convert(&target("CSR"), &opts()).unwrap().tensor,
            reference(SMALL, "CSR")
        );
    }
    // .tns has no magic: a stream must say it.
    let e = read_stream(b"1 1 2.0\n".to_vec(), None, &ropts).unwrap_err();
    assert!(matches!(e, InputError::Unknown { .. }), "{e}");
    let t = read_stream(b"1 1 2.0\n".to_vec(), Some("tns"), &ropts).unwrap();
    assert_eq!(entries_of(&t).len(), 1);
    // A storage file is buffered whole, within the memory limit.
    let csr = reference(SMALL, "CSR");
    let bytes = sptk_store::to_bytes(&csr, &Default::default()).unwrap();
    let input = read_stream(bytes.clone(), None, &ropts).unwrap();
    assert_eq!(input.convert(&target("CSR"), &opts()).unwrap().tensor, csr);
    let small = ReadOptions {
        memory_limit: Some(bytes.len() as u64 - 1),
        ..Default::default()
    };
    let e = read_stream(bytes, None, &small).unwrap_err();
    assert!(matches!(e, InputError::StdinTooLarge { .. }), "{e}");
    // Marked as every refusal for size is (Python's MemoryLimitError).
    let mark =
        std::error::Error::source(&e).and_then(|s| s.downcast_ref::<sptk_tensor::MemoryLimit>());
    assert!(
        mark.is_some_and(|m| Some(m.limit) == small.memory_limit),
        "{e}"
    );
}

/// Writes a MEX folder as Cell Ranger does (gzip, three feature columns).
fn mex(dir: &Path, gz: bool, features: &[&str], barcodes: &[&str]) -> PathBuf {
    let folder = dir.join("filtered_feature_bc_matrix");
    std::fs::create_dir_all(&folder).unwrap();
    let pack = |b: &[u8]| if gz { gzip(b) } else { b.to_vec() };
    let ext = if gz { ".gz" } else { "" };
    write(
        &folder,
        &format!("matrix.mtx{ext}"),
        &pack(SMALL.as_bytes()),
    );
    let f: String = features
        .iter()
        .map(|id| format!("{id}\tGENE-{id}\tGene Expression\n"))
        .collect();
    write(&folder, &format!("features.tsv{ext}"), &pack(f.as_bytes()));
    let b: String = barcodes.iter().map(|b| format!("{b}\n")).collect();
    write(&folder, &format!("barcodes.tsv{ext}"), &pack(b.as_bytes()));
    folder
}

const GENES: [&str; 3] = ["ENSG01", "ENSG02", "ENSG03"];
const CELLS: [&str; 4] = ["AAAC-1", "AAAG-1", "AACT-1", "AAGT-1"];

#[test]
fn a_mex_folder_keeps_features_and_barcodes_as_labels() {
    let dir = tempfile::tempdir().unwrap();
    for gz in [true, false] {
        let folder = mex(dir.path(), gz, &GENES, &CELLS);
        for to in ["CSC", "CSR", "COO", "DCSR"] {
            let (input, converted) = convert(
                spec(&folder),
                None,
                &target(to),
                &opts(),
                &ReadOptions::default(),
            )
            .unwrap();
            assert_eq!(input.format, "10x Genomics MEX folder");
            assert!(input.notes[0].starts_with("rows labelled from features.tsv"));
            let t = &converted.tensor;
            // Gene symbols (the second column), as scanpy's read_10x_mtx names them.
            let rows: Vec<&str> = t.labels(0).unwrap().iter().collect();
            let cols: Vec<&str> = t.labels(1).unwrap().iter().collect();
            let symbols: Vec<String> = GENES.iter().map(|g| format!("GENE-{g}")).collect();
            assert_eq!(rows, symbols);
            assert_eq!(cols, CELLS);
            let mut plain = reference(SMALL, to);
            plain = plain.with_labels(0, t.labels(0).unwrap().clone()).unwrap();
            plain = plain.with_labels(1, t.labels(1).unwrap().clone()).unwrap();
            assert_eq!(*t, plain, "{to} gz={gz}");
            // An uncompressed matrix takes the direct route.
            assert_eq!(
                matches!(input.content, Content::Streamed { .. }),
                !gz,
                "{to} gz={gz}"
            );
        }
        // A slice keeps the labels it selects.
        let sliced = resolve_target(
            "#sparse_tensor.encoding<{ map = (d0 : #sparse_tensor<slice(1, 2, 1)>, d1 : #sparse_tensor<slice(0, 2, 2)>) -> (d0 : dense, d1 : compressed) }>",
            2,
        )
        .unwrap();
        // (labelled by feature id, as asked: the first column)
        let by_id = ReadOptions {
            feature_ids: true,
            ..ReadOptions::default()
        };
        let (_, c) = convert(spec(&folder), None, &sliced, &opts(), &by_id).unwrap();
        assert_eq!(
            c.tensor.labels(0).unwrap().iter().collect::<Vec<_>>(),
            ["ENSG02", "ENSG03"]
        );
        assert_eq!(
            c.tensor.labels(1).unwrap().iter().collect::<Vec<_>>(),
            ["AAAC-1", "AACT-1"]
        );
        std::fs::remove_dir_all(&folder).unwrap();
    }
}

#[test]
fn a_mex_folder_with_wrong_label_counts_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = mex(dir.path(), true, &GENES[..2], &CELLS);
    let e = read(spec(&folder), None, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: 2 features for the 3 rows of the matrix; a MEX folder has one per line",
            folder.join("features.tsv.gz").display()
        )
    );
    std::fs::remove_dir_all(&folder).unwrap();
    let folder = mex(
        dir.path(),
        false,
        &GENES,
        &["AAAC-1", "", "AACT-1", "AAGT-1"],
    );
    let e = read(spec(&folder), None, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2: an empty barcode (expected one per line)",
            folder.join("barcodes.tsv").display()
        )
    );
    // Naming a file inside the folder reads just that file.
    let input = read(
        spec(&folder.join("matrix.mtx")),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(input.format, "Matrix Market");
}

/// A reader of a made-up container of CSR arrays: `CSRX` then little-endian u32 counts and
/// arrays for each member named in its table. It stands for the HDF5 and Parquet readers:
/// a container with members, whose sources already hold level arrays.
struct CsrContainer;

impl Reader for CsrContainer {
    fn name(&self) -> &'static str {
        "test CSR container"
    }
    fn keys(&self) -> &'static [&'static str] {
        &["csrx"]
    }
    fn detect(&self, probe: &Probe) -> Match {
        if probe.starts_with(b"CSRX") {
            Match::Content
        } else {
            Match::No
        }
    }
    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            members: true,
            ..Accepts::default()
        }
    }
    fn read(&self, source: &mut Source, _: &ReadOptions) -> Result<Input, InputError> {
        let member = source.spec().member.clone().unwrap_or_else(|| "X".into());
        if member != "X" {
            return Err(InputError::Source(format!(
                "{}: no member `{member}` (it holds X)",
                source.spec()
            )));
        }
        // The arrays of SMALL as CSR, duplicates summed: rows 3, cols 4.
        let csr = sptk_encoding::csr();
        let tensor = Tensor::try_from_parts(
            csr,
            vec![3, 4],
            vec![
                LevelArrays {
                    pos: None,
                    crd: None,
                },
                LevelArrays {
                    pos: Some(IndexVec::U64(vec![0u64, 1, 2, 3].into())),
                    crd: Some(IndexVec::U64(vec![0u64, 3, 1].into())),
                },
            ],
            ValueVec::F64(vec![2.0, -2.0, 4.0].into()),
        )
        .map_err(|error| InputError::Convert {
            input: None,
            one_based: false,
            hint: None,
            error,
        })?;
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header: String::new(),
            field: None,
            one_based: false,
            content: Content::Tensor(tensor),
            notes: Vec::new(),
            memory_hint: None,
        })
    }
}

#[test]
fn level_array_sources_in_containers_plug_in() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "m.csrx", b"CSRX....");
    let mut readers: Vec<&dyn Reader> = sptk_input::readers().to_vec();
    readers.push(&CsrContainer);
    let open = |name: String| {
        Opened::with_readers(
            Source::open(SourceSpec::resolve(&[name]).unwrap()),
            None,
            &readers,
        )
    };
    let input = open(format!("{}:X", file.display()))
        .unwrap()
        .read(&ReadOptions::default())
        .unwrap();
    assert_eq!(input.value_type(), ValueType::F64);
    assert_eq!(input.entry_count(), 3);
    // Planned and converted from the arrays: a transpose, not a trip through coordinates.
    let plan = input.plan(&target("CSC"), &opts()).unwrap();
    assert_eq!(plan.route.to_string(), "transpose");
    let csc = input.convert(&target("CSC"), &opts()).unwrap();
    assert_eq!(csc.route, plan.route);
    assert_eq!(csc.tensor, reference(SMALL, "CSC"));
    let e = open(format!("{}:Y", file.display()))
        .unwrap()
        .read(&ReadOptions::default());
    assert_eq!(
        e.err().unwrap().to_string(),
        format!("{}:Y: no member `Y` (it holds X)", file.display())
    );
}

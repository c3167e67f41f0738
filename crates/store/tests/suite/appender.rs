//! The out-of-core writer: a conversion written in stretches through [`Appender`] gives
//! the bytes [`sptk_store::to_bytes`] gives for the same conversion held in memory, for
//! many passes, summed duplicates and dropped zeros (arrays shorter than planned, moved
//! down at the end), both orientations, labels, and a disk that fills.

use sptk_store::{Appender, SptFile, StoreErrorKind, WriteOptions};
use sptk_tensor::{
    convert_parts, convert_parts_out_of_core, ConvertOptions, EntryParts, Labels, OutOfCoreError,
    SourceError,
};

/// Entries in parts, as a re-readable source would give them.
struct Parts {
    dims: [u64; 2],
    parts: Vec<Vec<(u64, u64, f64)>>,
}

impl EntryParts for Parts {
    type Value = f64;
    fn dim_sizes(&self) -> [u64; 2] {
        self.dims
    }
    fn part_count(&self) -> usize {
        self.parts.len()
    }
    fn count(
        &self,
        part: usize,
        dim: usize,
        shift: u32,
        counts: &mut [u32],
    ) -> Result<u64, SourceError> {
        for &(i, j, _) in &self.parts[part] {
            let c = if dim == 0 { i } else { j };
            let slot = counts
                .get_mut((c >> shift) as usize)
                .ok_or("out of range")?;
            *slot = slot.wrapping_add(1);
        }
        Ok(self.parts[part].len() as u64)
    }
    fn len_hint(&self) -> u64 {
        self.parts.iter().map(|p| p.len() as u64).sum()
    }
    fn visit<F: FnMut(u64, u64, f64) -> bool>(
        &self,
        part: usize,
        mut put: F,
    ) -> Result<(), SourceError> {
        for &(i, j, v) in &self.parts[part] {
            if !put(i, j, v) {
                return Err("stopped".into());
            }
        }
        Ok(())
    }
}

/// `n` entries of a `rows x cols` matrix from a fixed seed: rows in random order (or
/// sorted), about one in `dup` a repeat of an earlier coordinate, some values zero.
fn entries(rows: u64, cols: u64, n: usize, dup: usize, sorted: bool, parts: usize) -> Parts {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut all: Vec<(u64, u64, f64)> = Vec::with_capacity(n);
    for k in 0..n {
        let r = next();
        if k > 0 && (r as usize).is_multiple_of(dup) {
            let (i, j, _) = all[(r >> 20) as usize % k];
            all.push((i, j, ((r >> 8) % 5) as f64 - 2.0));
        } else {
            all.push((next() % rows, next() % cols, ((r >> 8) % 7) as f64 - 3.0));
        }
    }
    if sorted {
        all.sort_by_key(|&(i, _, _)| i);
    }
    let per = n.div_ceil(parts);
    Parts {
        dims: [rows, cols],
        parts: all.chunks(per.max(1)).map(<[_]>::to_vec).collect(),
    }
}

/// Converts `src` both ways and compares the files byte for byte; returns the passes.
fn same_bytes(
    src: &Parts,
    encoding: &sptk_encoding::Encoding,
    opts: &ConvertOptions,
    stretch: Option<u64>,
    labels: Vec<Option<Labels>>,
) -> usize {
    let mut held = convert_parts(src, encoding, opts).unwrap().unwrap();
    for (d, l) in labels.iter().enumerate() {
        if let Some(l) = l {
            held = held.with_labels(d, l.clone()).unwrap();
        }
    }
    let want = sptk_store::to_bytes(&held, &WriteOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.spt");
    let mut sink = Appender::create(&path, labels, &WriteOptions::default()).unwrap();
    let done = convert_parts_out_of_core(src, encoding, opts, stretch, &mut sink)
        .unwrap()
        .unwrap();
    let len = sink.finish(done.nse).unwrap();
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got.len() as u64, len);
    assert_eq!(done.nse as usize, held.nse());
    if got != want {
        let at = got.iter().zip(&want).position(|(a, b)| a != b);
        panic!(
            "the files differ: {} vs {} bytes, first difference at {at:?}",
            got.len(),
            want.len()
        );
    }
    assert_eq!(SptFile::open(&path).unwrap().verify().unwrap(), held);
    assert!(sptk_output::temporaries(&path).unwrap().is_empty());
    done.passes
}

#[test]
fn many_passes_give_the_bytes_of_one_conversion_in_memory() {
    // 300k entries: five or six row blocks (powers of two of rows, ~32k entries each
    // aimed at), so a one-byte stretch makes one pass per block.
    let src = entries(5000, 3000, 300_000, 9, false, 3);
    for encoding in [sptk_encoding::csr(), sptk_encoding::csc()] {
        for drop_zeros in [false, true] {
            let opts = ConvertOptions {
                drop_zeros,
                ..Default::default()
            };
            let one = same_bytes(&src, &encoding, &opts, None, Vec::new());
            assert_eq!(one, 1, "the default budget holds it in one pass");
            let many = same_bytes(&src, &encoding, &opts, Some(1), Vec::new());
            assert!(many >= 5, "{many} passes with a one-byte stretch");
            let some = same_bytes(&src, &encoding, &opts, Some(3 << 20), Vec::new());
            assert!((2..many).contains(&some), "{some} passes with 3 MiB");
        }
    }
}

#[test]
fn rows_in_order_and_labels() {
    let src = entries(70_000, 40, 200_000, 1_000_000, true, 8);
    let rows = Labels::from_strings((0..70_000).map(|i| format!("r{i}")));
    let cols = Labels::from_strings((0..40).map(|i| format!("column {i}")));
    let opts = ConvertOptions::default();
    let passes = same_bytes(
        &src,
        &sptk_encoding::csr(),
        &opts,
        Some(300_000),
        vec![Some(rows), Some(cols)],
    );
    assert!(passes > 2);
}

#[test]
fn shorter_arrays_move_down_whatever_the_header_shrinks_by() {
    // Mostly repeats: the arrays end far shorter than the count, and over these sizes the
    // header's padded length changes too (fewer digits), so every array moves.
    for n in [1usize, 63, 64, 65, 999, 1000, 1001, 4096, 10_000, 100_001] {
        let src = entries(50, 37, n, 2, false, 2);
        for drop_zeros in [false, true] {
            let opts = ConvertOptions {
                drop_zeros,
                ..Default::default()
            };
            same_bytes(&src, &sptk_encoding::csr(), &opts, Some(1), Vec::new());
        }
    }
}

#[test]
fn a_full_disk_is_an_error_before_the_data_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.spt");
    std::fs::write(&path, b"the old contents").unwrap();
    // A plan whose bound no disk holds: refused from the free space, before any data.
    let src = entries(10, 10, 100, 5, false, 1);
    let mut sink = Appender::create(&path, Vec::new(), &WriteOptions::default()).unwrap();
    struct Huge<'a>(&'a Parts);
    impl EntryParts for Huge<'_> {
        type Value = f64;
        fn dim_sizes(&self) -> [u64; 2] {
            [1 << 38, 1 << 38]
        }
        fn part_count(&self) -> usize {
            1
        }
        fn count(&self, p: usize, d: usize, s: u32, c: &mut [u32]) -> Result<u64, SourceError> {
            self.0.count(p, d, s, c)
        }
        fn len_hint(&self) -> u64 {
            100
        }
        fn visit<F: FnMut(u64, u64, f64) -> bool>(
            &self,
            p: usize,
            f: F,
        ) -> Result<(), SourceError> {
            self.0.visit(p, f)
        }
    }
    let err = convert_parts_out_of_core(
        &Huge(&src),
        &sptk_encoding::csr(),
        &ConvertOptions::default(),
        None,
        &mut sink,
    );
    match err {
        Err(OutOfCoreError::Sink(e)) => {
            assert!(
                matches!(e.kind(), StoreErrorKind::DiskFull { written: 0, .. }),
                "{e}"
            );
            let text = e.to_string();
            assert!(
                text.contains("big.spt: the disk is full (0 bytes written of "),
                "{text}"
            );
        }
        other => panic!("expected a full disk, got {other:?}"),
    }
    drop(sink);
    assert_eq!(std::fs::read(&path).unwrap(), b"the old contents");
    assert!(sptk_output::temporaries(&path).unwrap().is_empty());
}

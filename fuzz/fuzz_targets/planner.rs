//! The planner and every conversion route, on random small tensors and random encodings:
//! a preset or an encoding built from random level formats, maps, widths and options.
//! Whatever route the planner picks must be the route the conversion takes, and its result
//! must equal the general path's (sort into level order, build the levels), or both must
//! refuse with the same message; a stored CSR converted into the target must agree with
//! the general path on its entries as well. Values are small halves, so sums are exact in
//! any order.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use sptk_encoding::Target;
use sptk_tensor::{
    convert, convert_general, convert_tensor, plan, AutoWidths, ConvertError, ConvertOptions,
    Converted, Entries, Source, ValueType,
};

const PRESETS: &[&str] = &[
    "CSR", "CSC", "DCSR", "DCSC", "COO", "COO:soa", "ELL", "ELL:1", "ELL:3", "BSR", "BSC",
    "BSR:2x2", "BSR:1x3", "BSR:3x2", "BSC:2x2", "2:4", "1:2", "3:8", "CSF",
];

const FORMATS: &[&str] = &[
    "dense",
    "compressed",
    "compressed(nonunique)",
    "singleton",
    "loose_compressed",
    "compressed(nonordered)",
    "singleton(nonunique)",
    "structured[2, 4]",
];

/// Encoding text: the dimensions in a random order, some split into blocks, each level a
/// random format.
fn random_encoding(u: &mut Unstructured, rank: usize) -> Result<String> {
    let names = ["d0", "d1", "d2"];
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        let j = u.int_in_range(0..=i)?;
        order.swap(i, j);
    }
    let mut levels = Vec::new();
    let mut inner = Vec::new();
    for &d in &order {
        let fmt = FORMATS[u.choose_index(FORMATS.len())?];
        if u.ratio(1, 4)? {
            let b = u.int_in_range(1..=4u32)?;
            levels.push(format!("{} floordiv {b} : {fmt}", names[d]));
            let ifmt = FORMATS[u.choose_index(FORMATS.len())?];
            inner.push(format!("{} mod {b} : {ifmt}", names[d]));
        } else {
            levels.push(format!("{} : {fmt}", names[d]));
        }
    }
    levels.extend(inner);
    Ok(format!(
        "map = ({}) -> ({})",
        names[..rank].join(", "),
        levels.join(", ")
    ))
}

fn agree(
    a: std::result::Result<Converted, ConvertError>,
    b: std::result::Result<Converted, ConvertError>,
    what: &str,
) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(
            a.tensor, b.tensor,
            "{what}: the route and the general path differ"
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: refused differently"),
        (a, b) => panic!("{what}: one side refused: {:?} vs {:?}", a.err(), b.err()),
    }
}

fn case(u: &mut Unstructured) -> Result<()> {
    let rank = if u.ratio(1, 5)? { 3 } else { 2 };
    let dims: Vec<u64> = (0..rank)
        .map(|_| u.int_in_range(1..=12u64))
        .collect::<Result<_>>()?;
    let count = u.int_in_range(0..=48usize)?;
    let mut entries = Entries::new(dims.clone(), ValueType::F64);
    for _ in 0..count {
        let coords: Vec<u64> = dims
            .iter()
            .map(|&n| u.int_in_range(0..=n - 1))
            .collect::<Result<_>>()?;
        let v = f64::from(u.int_in_range(-4..=4i8)?) / 2.0;
        entries
            .push(&coords, v)
            .expect("coordinates drawn in range");
    }
    let text = if rank == 2 && u.ratio(1, 2)? {
        PRESETS[u.choose_index(PRESETS.len())?].to_string()
    } else if rank == 3 && u.ratio(1, 3)? {
        "CSF".to_string()
    } else {
        random_encoding(u, rank)?
    };
    let Ok(target) = sptk_encoding::resolve_target(&text, rank) else {
        return Ok(());
    };
    let widths = [None, Some(8u8), Some(16), Some(32)];
    let pos = widths[u.choose_index(widths.len())?];
    let crd = widths[u.choose_index(widths.len())?];
    let Ok(target) = target.with_widths(pos, crd) else {
        return Ok(());
    };
    let opts = ConvertOptions {
        drop_zeros: u.arbitrary()?,
        keep_duplicates: u.ratio(1, 4)?,
        prune: u.arbitrary()?,
        dtype: if u.ratio(1, 4)? {
            Some([ValueType::F32, ValueType::I32, ValueType::I64][u.choose_index(3)?])
        } else {
            None
        },
        auto_widths: AutoWidths {
            pos: u.ratio(1, 4)?,
            crd: u.ratio(1, 4)?,
            floor: 0,
        },
        ..Default::default()
    };
    check(&entries, &target, &opts, &text);
    Ok(())
}

fn check(entries: &Entries, target: &Target, opts: &ConvertOptions, text: &str) {
    let source = Source::Coordinates {
        dims: entries.dim_sizes(),
        entries: entries.len() as u64,
        value_type: entries.value_type(),
    };
    let routed = convert(entries, target, opts);
    if let (Ok(planned), Ok(done)) = (plan(source, target, opts), &routed) {
        assert_eq!(
            planned.route, done.route,
            "{text}: planned and taken routes differ"
        );
    }
    agree(routed, convert_general(entries, target, opts), text);

    // The same target from a stored CSR (duplicates summed there already).
    if entries.rank() != 2 || opts.keep_duplicates {
        return;
    }
    let csr = Target::Fixed(sptk_encoding::csr());
    let Ok(stored) = convert(entries, &csr, &ConvertOptions::default()) else {
        return;
    };
    let t = stored.tensor;
    let source = Source::Stored {
        encoding: t.encoding(),
        dims: t.dim_sizes(),
        entries: t.entry_count() as u64,
        value_type: t.value_type(),
    };
    let direct = convert_tensor(&t, target, opts);
    if let (Ok(planned), Ok(done)) = (plan(source, target, opts), &direct) {
        assert_eq!(
            planned.route, done.route,
            "stored CSR -> {text}: planned and taken routes differ"
        );
    }
    if target.encoding() == Some(t.encoding()) {
        // Into its own encoding a stored tensor stays as it is.
        return;
    }
    agree(direct, convert_general(&t.to_entries(), target, opts), text);
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = case(&mut u);
});

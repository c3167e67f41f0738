//! Every case of `testdata/conformance/{doc_examples,layouts}.json` through the library:
//! the exact arrays, the resolved encoding, the print layout, and the refusals.

use serde_json::Value as Json;
use sptk_tensor::{convert, ConvertOptions, Entries, Scalar, Tensor, ValueType, ValueVec};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance")
}

fn load(name: &str) -> Vec<Json> {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("conformance data missing: {}: {e}", path.display()));
    let doc: Json = serde_json::from_str(&text).expect("valid JSON");
    doc["cases"].as_array().expect("cases").clone()
}

fn scalar(v: &Json, t: ValueType) -> Scalar {
    match v {
        Json::Array(p) if t.is_complex() => {
            Scalar::Complex(p[0].as_f64().unwrap(), p[1].as_f64().unwrap())
        }
        Json::String(s) => Scalar::Float(match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("unknown value string {other}"),
        }),
        Json::Bool(b) => Scalar::Bool(*b),
        Json::Number(n) if t.is_complex() => Scalar::Complex(n.as_f64().unwrap(), 0.0),
        Json::Number(n) => {
            if t == ValueType::Bool {
                Scalar::Bool(n.as_f64() != Some(0.0))
            } else if let Some(i) = n.as_i64() {
                if matches!(
                    t,
                    ValueType::F16
                        | ValueType::BF16
                        | ValueType::F32
                        | ValueType::F64
                        | ValueType::C64
                        | ValueType::C128
                ) {
                    Scalar::Float(i as f64)
                } else {
                    Scalar::Int(i as i128)
                }
            } else if let Some(u) = n.as_u64() {
                Scalar::Int(u as i128)
            } else {
                Scalar::Float(n.as_f64().unwrap())
            }
        }
        other => panic!("unexpected value {other}"),
    }
}

fn is_zero(s: Scalar) -> bool {
    match s {
        Scalar::Float(x) => x == 0.0,
        Scalar::Int(i) => i == 0,
        Scalar::Complex(a, b) => a == 0.0 && b == 0.0,
        Scalar::Bool(b) => !b,
    }
}

/// The case's input as a coordinate list: a dense input contributes its nonzeros in
/// row-major order; an entries input its rows as listed.
fn input(case: &Json) -> Entries {
    let t: ValueType = case["dtype"].as_str().unwrap().parse().unwrap();
    let shape: Vec<u64> = case["dim_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let rank = shape.len();
    let mut coords: Vec<Vec<u64>> = vec![Vec::new(); rank];
    let mut values = ValueVec::with_capacity(t, 0);
    let mut add = |c: &[u64], s: Scalar| {
        for (d, &x) in c.iter().enumerate() {
            coords[d].push(x);
        }
        values.push_scalar(s).expect("input value fits its dtype");
    };
    if let Some(list) = case.get("entries") {
        for row in list.as_array().unwrap() {
            let row = row.as_array().unwrap();
            let c: Vec<u64> = row[..rank].iter().map(|x| x.as_u64().unwrap()).collect();
            add(&c, scalar(&row[rank], t));
        }
    } else {
        fn walk(
            v: &Json,
            prefix: &mut Vec<u64>,
            rank: usize,
            t: ValueType,
            add: &mut dyn FnMut(&[u64], Scalar),
        ) {
            match v {
                Json::Array(items) if prefix.len() < rank => {
                    for (i, item) in items.iter().enumerate() {
                        prefix.push(i as u64);
                        walk(item, prefix, rank, t, add);
                        prefix.pop();
                    }
                }
                leaf => {
                    let s = scalar(leaf, t);
                    if !is_zero(s) {
                        add(prefix, s);
                    }
                }
            }
        }
        walk(&case["dense"], &mut Vec::new(), rank, t, &mut add);
    }
    Entries::from_parts(shape, coords, values).expect("case input in bounds")
}

fn options(case: &Json) -> ConvertOptions {
    let o = &case["options"];
    ConvertOptions {
        drop_zeros: o["drop_zeros"].as_bool().unwrap_or(false),
        keep_duplicates: o["keep_duplicates"].as_bool().unwrap_or(false),
        prune: o["prune"].as_bool().unwrap_or(false),
        dtype: o["dtype"].as_str().map(|s| s.parse().unwrap()),
        slice_values: o["slice_values"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_u64().unwrap()).collect())
            .unwrap_or_default(),
        ..Default::default()
    }
}

fn run(text: &str, case: &Json) -> Result<Tensor, String> {
    let entries = input(case);
    // A rule the encoding breaks is compared by its message; the parse error's `column N: `
    // prefix locates it in the text, which the conformance files do not describe.
    let target = sptk_encoding::resolve_target(text, entries.rank()).map_err(|e| match &e {
        sptk_encoding::TargetError::Parse(p) => match p.encoding_error() {
            Some(rule) => rule.to_string(),
            None => e.to_string(),
        },
        _ => e.to_string(),
    })?;
    convert(&entries, &target, &options(case))
        .map(|c| c.tensor)
        .map_err(|e| e.to_string())
}

fn same_value(got: Option<Scalar>, want: Scalar) -> bool {
    match (got, want) {
        (Some(Scalar::Float(a)), Scalar::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
        (Some(Scalar::Float(a)), Scalar::Int(b)) => a == b as f64,
        (Some(Scalar::Int(a)), Scalar::Float(b)) => a as f64 == b,
        (Some(Scalar::Bool(a)), Scalar::Bool(b)) => a == b,
        (Some(Scalar::Bool(a)), Scalar::Int(b)) => a as i128 == b,
        (Some(a), b) => a == b,
        (None, _) => false,
    }
}

fn check(case: &Json, t: &Tensor, label: &str) {
    let name = case["name"].as_str().unwrap();
    let exp = &case["expected"];
    let as_u64s = |v: &Json| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    assert_eq!(t.lvl_sizes(), as_u64s(&exp["lvl"]), "{name} ({label}): lvl");
    assert_eq!(
        t.nse() as u64,
        exp["nse"].as_u64().unwrap(),
        "{name} ({label}): nse"
    );
    if let Some(dim) = exp.get("dim") {
        assert_eq!(t.dim_sizes(), as_u64s(dim), "{name} ({label}): dim");
    }
    let mut want_arrays: Vec<(String, Vec<u64>)> = Vec::new();
    for l in 0..t.lvl_sizes().len() {
        for kind in ["pos", "crd"] {
            if let Some(a) = exp.get(kind).and_then(|m| m.get(l.to_string())) {
                want_arrays.push((format!("{kind}[{l}]"), as_u64s(a)));
            }
        }
    }
    let got_arrays: Vec<(String, Vec<u64>)> = t
        .index_arrays()
        .into_iter()
        .map(|(n, a)| (n, a.to_u64_vec()))
        .collect();
    assert_eq!(got_arrays, want_arrays, "{name} ({label}): index arrays");
    let vt = t.value_type();
    let want_vals = exp["values"].as_array().unwrap();
    assert_eq!(
        t.values().len(),
        want_vals.len(),
        "{name} ({label}): values length"
    );
    for (i, w) in want_vals.iter().enumerate() {
        let want = scalar(w, vt);
        assert!(
            same_value(t.values().scalar(i), want),
            "{name} ({label}): values[{i}] = {:?}, want {want:?}",
            t.values().scalar(i)
        );
    }
    if let Some(resolved) = case.get("resolved_encoding") {
        assert_eq!(
            t.encoding().to_string(),
            resolved.as_str().unwrap(),
            "{name} ({label}): resolved encoding"
        );
    }
    if let Some(lines) = case.get("expected_print") {
        let want: Vec<&str> = lines
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let got = t.print_storage();
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got, want, "{name} ({label}): print");
    }
}

/// Runs every case of `file`; returns the number of cases and of refusals among them.
fn run_cases(file: &str) -> (usize, usize) {
    let cases = load(file);
    assert!(!cases.is_empty());
    let mut refusals = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let mut texts = vec![("encoding", case["encoding"].as_str().unwrap().to_string())];
        if let Some(p) = case.get("preset").and_then(|p| p.as_str()) {
            texts.push(("preset", p.to_string()));
        }
        for (label, text) in texts {
            let result = run(&text, case);
            if let Some(err) = case.get("expected_error") {
                let want = err.as_str().unwrap();
                match result {
                    Ok(_) => {
                        panic!("{name} ({label}): expected the refusal `{want}`, got a tensor")
                    }
                    Err(got) => assert_eq!(got, want, "{name} ({label}): the refusal's text"),
                }
                refusals += 1;
                continue;
            }
            match result {
                Ok(t) => {
                    check(case, &t, label);
                    // Reading back gives the input, modulo zeros for padded formats.
                    round_trip(case, &t, &text, label);
                }
                Err(e) => panic!("{name} ({label}): {e}"),
            }
        }
    }
    (cases.len(), refusals)
}

/// Reading the stored tensor back as coordinates and converting them into the same
/// encoding reproduces the arrays; for padded formats, those of the input without zeros
/// (explicit zeros do not survive padding).
fn round_trip(case: &Json, t: &Tensor, text: &str, label: &str) {
    let name = case["name"].as_str().unwrap();
    let back = t.to_entries();
    let keep = t
        .encoding()
        .levels
        .last()
        .is_some_and(|l| l.props.nonunique);
    let opts = ConvertOptions {
        keep_duplicates: keep,
        ..Default::default()
    };
    let again = sptk_tensor::convert_to(&back, t.encoding(), &opts)
        .unwrap_or_else(|e| panic!("{name} ({label}): round trip: {e}"));
    let want = if t.layout().padded {
        let entries = input(case);
        let target = match sptk_encoding::resolve_target(text, entries.rank()).unwrap() {
            sptk_encoding::Target::Fixed(e) => sptk_encoding::Target::Fixed(e),
            _ => sptk_encoding::Target::Fixed(t.encoding().clone()),
        };
        let opts = ConvertOptions {
            drop_zeros: true,
            ..options(case)
        };
        convert(&entries, &target, &opts).unwrap().tensor
    } else {
        t.clone()
    };
    assert_eq!(
        again.print_storage(),
        want.print_storage(),
        "{name} ({label}): round trip"
    );
}

#[test]
fn doc_examples() {
    assert_eq!(run_cases("doc_examples.json").0, 2);
}

#[test]
fn layouts() {
    let (cases, refusals) = run_cases("layouts.json");
    assert!(cases >= 78);
    // Each refusal is compared with its exact `expected_error` text, for the encoding and
    // for the preset spelling where the case has one.
    assert!(refusals >= 16, "{refusals} refusals compared");
}

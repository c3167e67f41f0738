//! Random byte flips, truncations, appended garbage and header number edits on valid
//! files: each is either refused cleanly or opens as a valid tensor; never a panic.

use crate::common;

use common::{join, split, tensor, Rng};
use sptk_store::{to_bytes, SptFile, WriteOptions};
use sptk_tensor::ValueType;

fn exercise(bytes: &[u8]) -> &'static str {
    let Ok(f) = SptFile::from_bytes(bytes) else {
        return "refused at open";
    };
    let rows = f
        .header()
        .layout
        .levels
        .first()
        .map_or(0, |p| p.size)
        .min(64);
    for r in 0..=rows {
        let _ = f.row(r);
    }
    let _ = f.verify();
    match f.validate() {
        Ok(t) => {
            // A valid tensor must support everything a valid tensor supports.
            let e = t.to_entries();
            let _ = sptk_tensor::convert_to(
                &e,
                &sptk_encoding::coo(e.rank(), false),
                &Default::default(),
            );
            let _ = t.checksum();
            "valid"
        }
        Err(_) => "refused at validation",
    }
}

fn mutate(good: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = good.to_vec();
    match rng.below(6) {
        0 => {
            // Flip 1..4 bits anywhere.
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            // A random byte in the data section.
            let h = u64::from_le_bytes(b[16..24].try_into().unwrap()) as usize;
            let lo = 24 + h;
            if b.len() > lo {
                let i = lo + rng.below((b.len() - lo) as u64) as usize;
                b[i] = rng.next() as u8;
            }
        }
        2 => b.truncate(rng.below(b.len() as u64) as usize),
        3 => {
            for _ in 0..1 + rng.below(100) {
                b.push(rng.next() as u8);
            }
        }
        _ => {
            // Set one number of the header to an interesting value.
            let mut p = split(&b);
            let mut slots = 0;
            count(&p.header, &mut slots);
            if slots > 0 {
                let k = rng.below(slots as u64) as usize;
                let old = number(&mut p.header, k);
                let new = match rng.below(6) {
                    0 => 0,
                    1 => old.wrapping_add(1),
                    2 => old.wrapping_sub(1),
                    3 => u64::MAX,
                    4 => old.wrapping_add(64),
                    _ => rng.below(1 << 20),
                };
                set_number(&mut p.header, k, new);
            }
            b = join(&p);
        }
    }
    b
}

fn count(v: &serde_json::Value, n: &mut usize) {
    match v {
        serde_json::Value::Number(_) => *n += 1,
        serde_json::Value::Array(a) => a.iter().for_each(|x| count(x, n)),
        serde_json::Value::Object(o) => o.values().for_each(|x| count(x, n)),
        _ => {}
    }
}

fn nth_number<'a>(
    v: &'a mut serde_json::Value,
    k: &mut usize,
) -> Option<&'a mut serde_json::Value> {
    match v {
        serde_json::Value::Number(_) => {
            if *k == 0 {
                return Some(v);
            }
            *k -= 1;
            None
        }
        serde_json::Value::Array(a) => a.iter_mut().find_map(|x| nth_number(x, k)),
        serde_json::Value::Object(o) => o.values_mut().find_map(|x| nth_number(x, k)),
        _ => None,
    }
}

fn number(v: &mut serde_json::Value, mut k: usize) -> u64 {
    nth_number(v, &mut k).and_then(|x| x.as_u64()).unwrap_or(0)
}

fn set_number(v: &mut serde_json::Value, mut k: usize, new: u64) {
    if let Some(x) = nth_number(v, &mut k) {
        *x = new.into();
    }
}

#[test]
fn mutated_files_never_panic() {
    type Spec<'a> = (&'a str, usize, ValueType, Option<u8>, Option<u8>);
    let specs: &[Spec] = &[
        ("CSR", 2, ValueType::F64, Some(32), Some(16)),
        ("CSC", 2, ValueType::Bool, Some(8), Some(8)),
        ("COO", 2, ValueType::I32, None, None),
        ("COO:soa", 2, ValueType::F32, None, None),
        ("BSR:2x3", 2, ValueType::C64, Some(16), Some(16)),
        ("ELL:8", 2, ValueType::F16, None, Some(8)),
        ("2:4", 2, ValueType::F32, Some(32), Some(2)),
        ("DCSR", 2, ValueType::U8, Some(8), Some(8)),
        (
            "map = (i, j) -> (i : dense, j : loose_compressed)",
            2,
            ValueType::F64,
            None,
            None,
        ),
        (
            "map = (i, j) -> (i : dense, j : compressed(nonordered))",
            2,
            ValueType::F64,
            None,
            None,
        ),
        ("CSF", 3, ValueType::I64, Some(16), Some(8)),
        (
            "map = (i, j, k) -> (i : dense, j : compressed(nonunique), k : singleton)",
            3,
            ValueType::F64,
            None,
            None,
        ),
        ("Dense", 2, ValueType::BF16, None, None),
    ];
    let rounds: u64 = std::env::var("SPT_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let mut tally = std::collections::BTreeMap::new();
    for (s, &(text, rank, vt, pos, crd)) in specs.iter().enumerate() {
        let t = tensor(text, rank, vt, pos, crd, 100 + s as u64).unwrap();
        let good = to_bytes(&t, &WriteOptions::default()).unwrap();
        assert_eq!(exercise(&good), "valid");
        let mut rng = Rng(0x5eed + s as u64);
        for round in 0..rounds {
            let bad = mutate(&good, &mut rng);
            let r = std::panic::catch_unwind(|| exercise(&bad));
            match r {
                Ok(outcome) => *tally.entry(outcome).or_insert(0) += 1,
                Err(_) => {
                    let path = std::env::temp_dir().join(format!("spt-mutation-{s}-{round}.spt"));
                    std::fs::write(&path, &bad).unwrap();
                    panic!(
                        "{text}: mutation {round} panicked; the file is {}",
                        path.display()
                    );
                }
            }
        }
    }
    eprintln!("outcomes: {tally:?}");
    assert!(tally.get("refused at open").copied().unwrap_or(0) > 0);
    assert!(tally.get("refused at validation").copied().unwrap_or(0) > 0);
}

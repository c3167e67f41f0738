//! Outputs larger than the machine can hold are refused with an error naming the size,
//! never an allocation abort.

use sptk_tensor::{convert, convert_general, ConvertError, ConvertOptions, Entries, ValueType};

#[test]
fn padded_outputs_too_large_for_the_machine_are_errors() {
    let mut e = Entries::new(vec![3_000_000, 3_000_000], ValueType::F64);
    e.push(&[1, 2], 1.5).unwrap();
    // 9e12 dense values, 4.5e12 n:m slots, 3e12 ELL slots: terabytes each.
    for (to, array, elements) in [
        ("Dense", "values", 9_000_000_000_000u128),
        ("2:4", "crd[2]", 4_500_000_000_000),
        ("ELL:1000000", "crd[2]", 3_000_000_000_000),
    ] {
        let target = sptk_encoding::resolve_target(to, 2).unwrap();
        for routed in [true, false] {
            let run = |opts: &ConvertOptions| {
                if routed {
                    convert(&e, &target, opts)
                } else {
                    convert_general(&e, &target, opts)
                }
            };
            // Under the machine's default limit: refused up front, naming the array.
            match run(&ConvertOptions::default()) {
                Err(ConvertError::MemoryLimit(m)) => {
                    assert_eq!((m.array.as_str(), m.elements), (array, elements), "{to}")
                }
                other => panic!("{to}: {:?}", other.map(|c| c.tensor.nse())),
            }
            // Without a limit the allocation itself fails: an error, never an abort.
            let unlimited = ConvertOptions {
                memory_limit: Some(u64::MAX),
                ..Default::default()
            };
            match run(&unlimited) {
                Err(ConvertError::TooLarge(m)) => {
                    assert!(
                        m.contains("cannot be allocated") || m.contains("more than this machine"),
                        "{to}: {m}"
                    )
                }
                other => panic!("{to}: {:?}", other.map(|c| c.tensor.nse())),
            }
        }
    }
}

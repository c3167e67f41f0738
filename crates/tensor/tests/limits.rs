//! Outputs larger than the machine can hold are refused with an error naming the size,
//! never an allocation abort.

use sptk_tensor::{convert, convert_general, ConvertError, ConvertOptions, Entries, ValueType};

#[test]
fn padded_outputs_too_large_for_the_machine_are_errors() {
    let mut e = Entries::new(vec![3_000_000, 3_000_000], ValueType::F64);
    e.push(&[1, 2], 1.5).unwrap();
    // 9e12 dense values, 4.5e12 n:m slots, 3e12 ELL slots: terabytes each.
    for to in ["Dense", "2:4", "ELL:1000000"] {
        let target = sptk_encoding::resolve_target(to, 2).unwrap();
        for routed in [true, false] {
            let got = if routed {
                convert(&e, &target, &ConvertOptions::default())
            } else {
                convert_general(&e, &target, &ConvertOptions::default())
            };
            match got {
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

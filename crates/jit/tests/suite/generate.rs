//! Generating a kernel needs no CPU that runs it: every instruction set's code for every
//! operation, format, value type and a sample of width pairs is generated on whatever host
//! runs the tests (AVX-512 code on a machine without AVX-512, x86-64 code on AArch64). Each
//! decodes whole, calls nothing, returns, branches only inside itself, uses no instruction
//! outside its instruction set's feature list (the audit of debug builds, and so of these tests,
//! checks every kernel any test generates) and no register
//! its instruction set lacks; where this CPU runs the instruction set, it is the very code
//! `Kernel::compile` maps.

use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};
use sptk_jit::{generate, Desc, Isa, Kernel, KernelError};

const OPS: [&str; 3] = ["spmv", "spmvt", "spmm"];
const FORMATS: [&str; 10] = [
    "csr", "csc", "dcsr", "dcsc", "coo", "coo:soa", "bsr2x3", "bsc4x1", "ell3", "2:4",
];
const VALUES: [&str; 4] = ["f64", "f32", "f16", "bf16"];
const WIDTHS: [(u8, u8); 5] = [(8, 8), (16, 32), (32, 32), (32, 16), (64, 64)];

/// Every description of the sample: its operation, format and value type, and its text.
fn descriptions(isa: Isa) -> Vec<(&'static str, &'static str, &'static str, String)> {
    let mut out = Vec::new();
    for op in OPS {
        for format in FORMATS {
            for value in VALUES {
                for (pos, crd) in WIDTHS {
                    // n:m offsets are 2 bits (a preset's width) or 8.
                    let crd = if format == "2:4" && crd != 8 { 2 } else { crd };
                    let text = format!("{op} {format} {value} pos{pos} crd{crd} {}", isa.name());
                    out.push((op, format, value, text));
                }
            }
        }
    }
    out
}

/// The sample's descriptions no generator takes yet (the reference kernels compute them),
/// stated here on their own so that a generator lost (or one gained) fails the test: f16 /
/// bf16 values everywhere but the dot products of row-major SpMV (CSR, DCSR; CSC and DCSC
/// transposed) and n:m SpMV on AVX2 and AVX-512, and bf16 n:m SpMV in scalar code.
fn expected_unsupported(op: &str, format: &str, value: &str, isa: Isa) -> bool {
    if !matches!(value, "f16" | "bf16") {
        return false;
    }
    let dots = matches!(
        (op, format),
        ("spmv", "csr" | "dcsr" | "2:4") | ("spmvt", "csc" | "dcsc")
    );
    let generated = match isa {
        Isa::Avx2 | Isa::Avx512 => dots,
        Isa::Scalar => (op, format, value) == ("spmv", "2:4", "bf16"),
        Isa::Neon => false,
    };
    !generated
}

/// Checks `code`, generated for `d`, as the module comment says; true if it uses zmm
/// registers.
fn check_code(d: &Desc, code: &[u8]) -> bool {
    let len = code.len() as u64;
    let ins: Vec<_> = Decoder::with_ip(64, code, 0, DecoderOptions::NONE)
        .iter()
        .collect();
    assert!(
        ins.iter().all(|i| !i.is_invalid()),
        "{d}: undecodable bytes"
    );
    assert!(
        ins.iter().any(|i| i.mnemonic() == Mnemonic::Ret),
        "{d}: no ret"
    );
    for i in &ins {
        let call = matches!(i.mnemonic(), Mnemonic::Call | Mnemonic::Syscall);
        let indirect = i.mnemonic() == Mnemonic::Jmp && i.op0_kind() != OpKind::NearBranch64;
        assert!(!call && !indirect, "{d}: {i} leaves the kernel");
        if i.op0_kind() == OpKind::NearBranch64 {
            assert!(
                i.near_branch64() < len,
                "{d}: {i} branches outside the code"
            );
        }
    }
    let registers = |i: &iced_x86::Instruction| {
        (0..i.op_count())
            .filter(|&o| i.op_kind(o) == OpKind::Register)
            .map(|o| i.op_register(o))
            .collect::<Vec<_>>()
    };
    let zmm = ins.iter().flat_map(registers).any(|r| r.is_zmm());
    assert!(!zmm || d.isa == Isa::Avx512, "{d}: zmm registers");
    if d.isa == Isa::Scalar {
        assert!(
            !ins.iter().flat_map(registers).any(|r| r.is_ymm()),
            "{d}: scalar code uses ymm registers"
        );
    }
    zmm
}

#[test]
fn every_instruction_sets_code_is_generated_on_any_host() {
    for isa in Isa::ALL {
        let (mut generated, mut zmm) = (0, 0);
        for (op, format, value, text) in descriptions(isa) {
            let d: Desc = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            let unsupported = expected_unsupported(op, format, value, isa);
            match generate(&d) {
                Ok(g) => {
                    assert!(!unsupported, "{d}: generated, but listed as unsupported");
                    assert_eq!(g.desc(), &d);
                    zmm += usize::from(check_code(&d, g.code()));
                    assert!(!g.disassembly().is_empty(), "{d}");
                    generated += 1;
                }
                Err(KernelError::Unsupported(m)) => {
                    assert!(unsupported, "{d}: not generated: {m}");
                    assert!(m.contains("no generated kernel"), "{d}: {m}");
                }
                Err(e) => panic!("{d}: {e}"),
            }
        }
        // AVX-512's code is mostly in zmm registers.
        if isa == Isa::Avx512 {
            assert!(zmm * 2 > generated, "avx512: {zmm} of {generated} use zmm");
        }
    }
}

/// The part 1 descriptions every instruction set generates, whatever the host.
#[test]
fn avx512_and_avx2_code_prints_without_the_cpu() {
    for isa in ["scalar", "avx2", "avx512"] {
        for op in OPS {
            let text = format!("{op} csr f64 pos32 crd32 {isa}");
            let g = generate(&text.parse().unwrap()).unwrap();
            let asm = g.disassembly();
            assert!(asm.lines().count() > 10, "{text}:\n{asm}");
            // (the transposed CSR kernel scatters one entry at a time, in xmm registers)
            if op != "spmvt" {
                assert_eq!(asm.contains("zmm"), isa == "avx512", "{text}:\n{asm}");
            }
        }
    }
}

/// Where this CPU runs an instruction set, `Kernel::compile` maps exactly the generated
/// bytes; where it does not, it refuses and generating still works.
#[test]
fn compile_maps_the_generated_code_and_refuses_an_isa_the_cpu_lacks() {
    for isa in Isa::ALL {
        for op in OPS {
            let d: Desc = format!("{op} dcsr f32 pos64 crd16 {}", isa.name())
                .parse()
                .unwrap();
            let g = generate(&d).unwrap();
            match Kernel::compile(&d) {
                Ok(k) => {
                    assert!(isa.available(), "{d}");
                    assert_eq!(k.code(), g.code(), "{d}");
                    assert_eq!(k.disassembly(), g.disassembly(), "{d}");
                }
                Err(e) => {
                    assert!(!isa.available(), "{d}: {e}");
                    assert!(matches!(e, KernelError::Isa(_)), "{d}: {e}");
                }
            }
        }
    }
}

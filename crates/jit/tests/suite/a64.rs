//! NEON (AArch64) kernels: generated on this host, run under user-mode emulation
//! (`qemu-aarch64`, the harness `sptk_jit::emulate`) against the reference kernels, and
//! their code checked by a disassembler (yaxpeax-arm).
//!
//! - SpMV and SpMV^T on CSR, CSC, DCSR, DCSC, COO and COO:soa, f32 and f64, every width
//!   pair of the x86 tests: within the x86 tests' error bound of the reference; the
//!   scatters and COO (one entry at a time, `fmul` + `fadd`) also bit for bit against the
//!   x86 scalar kernel, which rounds the same way through the same partials.
//! - `SPTK_JIT_CASES` (64 by default) scales the random matrices: each format, width pair
//!   and value type runs `SPTK_JIT_CASES / 32` of them, rounded up (2 by default).
//! - Without `qemu-aarch64` the emulated test says so and passes, unless `REQUIRE_ISA`
//!   names `neon-qemu` (as `.ci/run` does): then it fails.

use crate::common;

use std::time::Instant;

use common::{
    cases, check_inf_nan, check_spmv, inf_nan_case, neon_qemu, random_matrix, Rng, WIDTHS,
};
use sptk_jit::emulate::{Batch, Handle, Results};
use sptk_jit::reference::RealValue;
use sptk_jit::{generate, Desc, Isa, Op};
use sptk_tensor::Tensor;
use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Operand};

const FORMATS: [&str; 6] = ["CSR", "CSC", "DCSR", "DCSC", "COO", "COO:soa"];
const OPS: [Op; 2] = [Op::Spmv, Op::SpmvT];

/// One SpMV case: `y = alpha op(A) x + beta y0`.
struct Case<T> {
    a: Tensor,
    x: Vec<T>,
    y0: Vec<T>,
    op: Op,
    ab: (T, T),
}

impl<T: RealValue> Case<T> {
    fn desc(&self, isa: Isa) -> Desc {
        Desc::for_tensor(self.op, &self.a, isa).unwrap()
    }

    /// True for the kernels that scatter one entry at a time (CSR^T, CSC, COO ...).
    fn scatters(&self) -> bool {
        let d = self.desc(Isa::Neon).to_string();
        let mut w = d.split(' ');
        let (op, format) = (w.next(), w.next());
        matches!(
            (op, format),
            (Some("spmv"), Some("csc" | "dcsc")) | (Some("spmvt"), Some("csr" | "dcsr"))
        ) || format.is_some_and(|f| f.starts_with("coo"))
    }
}

/// Random cases of `format` at the widths `(pos, crd)`, both operations.
fn random_cases<T: RealValue + From<f32>>(
    rng: &mut Rng,
    f64s: bool,
    format: &str,
    (pos, crd): (u8, u8),
) -> Vec<Case<T>> {
    let mut out = Vec::new();
    for _ in 0..cases().div_ceil(32) {
        let a = random_matrix(rng, f64s, pos, crd, format);
        let dims = a.dim_sizes();
        let (rows, cols) = (dims[0] as usize, dims[1] as usize);
        for op in OPS {
            let (xn, yn) = if op == Op::SpmvT {
                (rows, cols)
            } else {
                (cols, rows)
            };
            let x: Vec<T> = (0..xn).map(|_| T::from(rng.value() as f32)).collect();
            let y0: Vec<T> = (0..yn).map(|_| T::from(rng.value() as f32)).collect();
            for (alpha, beta) in [(1.0f32, 0.0f32), (-1.5, 0.5)] {
                out.push(Case {
                    a: a.clone(),
                    x: x.clone(),
                    y0: y0.clone(),
                    op,
                    ab: (T::from(alpha), T::from(beta)),
                });
            }
        }
    }
    out
}

/// Adds every case to `batch`.
fn add<'a, T: RealValue + 'static>(batch: &mut Batch<'a>, cases: &'a [Case<T>]) -> Vec<Handle<T>> {
    cases
        .iter()
        .map(|c| {
            let d = c.desc(Isa::Neon);
            batch
                .spmv(&d, &c.a, &c.x, &c.y0, c.ab)
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// Checks each case's emulated y against the reference (and the scatters against the x86
/// scalar kernel, bit for bit, where this is an x86-64 CPU).
fn verify<T: RealValue + Into<f64> + 'static>(
    cases: &[Case<T>],
    hs: &[Handle<T>],
    r: &Results,
) -> usize {
    let ys: Vec<&[T]> = hs.iter().map(|h| r.y(h)).collect();
    verify_ys(cases, &ys)
}

/// [`verify`] for the results `ys` of `cases`, however computed.
fn verify_ys<T: RealValue + Into<f64> + 'static>(cases: &[Case<T>], ys: &[&[T]]) -> usize {
    let mut exact = 0;
    for (c, &got) in cases.iter().zip(ys) {
        let d = c.desc(Isa::Neon);
        assert_eq!(got.len(), c.y0.len(), "{d}: y");
        let (alpha, beta) = c.ab;
        check_spmv(
            &c.a,
            &c.x,
            &c.y0,
            got,
            (alpha, beta, c.op == Op::SpmvT),
            false,
            &d.to_string(),
        );
        if c.scatters() && Isa::Scalar.available() {
            let k = sptk_jit::kernel(&c.desc(Isa::Scalar)).unwrap();
            let mut want = c.y0.clone();
            k.spmv(&c.a, &c.x, &mut want, c.ab, 1).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let (g, w): (f64, f64) = ((*g).into(), (*w).into());
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{d}: element {i}: {g} != {w} (x86 scalar)"
                );
            }
            exact += 1;
        }
    }
    exact
}

#[test]
fn neon_spmv_matches_the_reference_under_emulation() {
    if neon_qemu().is_none() {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = Instant::now();
    let (mut n, mut exact, mut calls, mut runs) = (0, 0, 0, 0);
    let (mut emulated, mut recording) = (0.0, 0.0);
    // One batch per format and width pair (memory stays small at any SPTK_JIT_CASES).
    for format in FORMATS {
        for widths in WIDTHS {
            let c64 = random_cases::<f64>(&mut rng, true, format, widths);
            let c32 = random_cases::<f32>(&mut rng, false, format, widths);
            let begin = Instant::now();
            let mut batch = Batch::new();
            let h64 = add(&mut batch, &c64);
            let h32 = add(&mut batch, &c32);
            recording += begin.elapsed().as_secs_f64();
            let r = batch.run().unwrap_or_else(|e| panic!("{e}"));
            exact += verify(&c64, &h64, &r) + verify(&c32, &h32, &r);
            n += c64.len() + c32.len();
            assert!(
                r.calls >= c64.len() + c32.len(),
                "every case calls its kernel"
            );
            (calls, runs) = (calls + r.calls, runs + r.runs);
            emulated += r.emulated.as_secs_f64();
        }
    }
    // On x86-64 the scatters are also compared bit for bit with the x86 scalar kernel: a
    // sample in which none was is a sample that checks less than it says.
    if Isa::Scalar.available() {
        assert!(
            exact > 0,
            "no case was compared bit for bit with x86 scalar"
        );
    }
    eprintln!(
        "NEON SpMV under qemu: {n} cases ({exact} also bit for bit against x86 scalar), \
         {calls} kernel calls in {runs} emulated runs: {emulated:.2} s emulated, \
         {recording:.2} s recording, {:.2} s in all",
        start.elapsed().as_secs_f64()
    );
}

/// On an AArch64 CPU (never in this project's CI), the same cases through the native path:
/// `Kernel::compile` maps the code, flushes the instruction cache and calls it.
#[test]
fn neon_spmv_matches_the_reference_natively_where_the_cpu_runs_it() {
    if !Isa::Neon.available() {
        eprintln!("not an AArch64 CPU: the native NEON path is not run here");
        return;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for format in FORMATS {
        for widths in WIDTHS {
            let c64 = random_cases::<f64>(&mut rng, true, format, widths);
            let c32 = random_cases::<f32>(&mut rng, false, format, widths);
            let y64 = native(&c64);
            let y32 = native(&c32);
            verify_ys(&c64, &y64.iter().map(Vec::as_slice).collect::<Vec<_>>());
            verify_ys(&c32, &y32.iter().map(Vec::as_slice).collect::<Vec<_>>());
        }
    }
}

/// Each case's y by the compiled NEON kernel on this CPU, on 3 threads.
fn native<T: RealValue>(cases: &[Case<T>]) -> Vec<Vec<T>> {
    cases
        .iter()
        .map(|c| {
            let k = sptk_jit::kernel(&c.desc(Isa::Neon)).unwrap();
            let mut y = c.y0.clone();
            k.spmv(&c.a, &c.x, &mut y, c.ab, 3).unwrap();
            y
        })
        .collect()
}

/// Inf and NaN in x reach exactly the rows that use them; beta = 0 overwrites a NaN in y.
#[test]
fn inf_and_nan_in_x_reach_exactly_the_rows_that_use_them_under_emulation() {
    if neon_qemu().is_none() {
        return;
    }
    let y0 = [f64::NAN; 4];
    let cases: Vec<(Tensor, [f64; 5])> = ["CSR", "DCSR", "COO"].map(inf_nan_case).into();
    let mut batch = Batch::new();
    let hs: Vec<_> = cases
        .iter()
        .map(|(a, x)| {
            let d = Desc::for_tensor(Op::Spmv, a, Isa::Neon).unwrap();
            (d, batch.spmv(&d, a, x, &y0, (1.0, 0.0)).unwrap())
        })
        .collect();
    let r = batch.run().unwrap_or_else(|e| panic!("{e}"));
    for (d, h) in &hs {
        check_inf_nan(r.y(h), &d.to_string());
    }
}

/// Every instruction of `code` with its offset; panics on a word that is no instruction.
fn decode(d: &Desc, code: &[u8]) -> Vec<(usize, Instruction)> {
    let decoder = InstDecoder::default();
    code.chunks(4)
        .enumerate()
        .map(|(n, w)| {
            let mut r = U8Reader::new(w);
            let ins = decoder
                .decode(&mut r)
                .unwrap_or_else(|e| panic!("{d}: word {n}: {e:?}"));
            (n * 4, ins)
        })
        .collect()
}

/// The target of a PC-relative branch at `at`.
fn target(at: usize, ins: &Instruction) -> Option<i64> {
    ins.operands.iter().find_map(|o| match o {
        Operand::PCOffset(d) => Some(at as i64 + d),
        _ => None,
    })
}

/// The innermost loops: `(first, last)` indices of instructions from a backward branch's
/// target to the branch, holding no other such loop.
fn inner_loops(ins: &[(usize, Instruction)]) -> Vec<(usize, usize)> {
    let loops: Vec<(usize, usize)> = ins
        .iter()
        .enumerate()
        .filter_map(|(b, (at, i))| {
            let t = target(*at, i)?;
            (t <= *at as i64).then(|| (ins.iter().position(|(o, _)| *o as i64 == t).unwrap(), b))
        })
        .collect();
    innermost(&loops)
}

#[test]
fn neon_code_is_neon_calls_nothing_and_branches_inside_itself() {
    let mut kernels = 0;
    for op in ["spmv", "spmvt"] {
        for format in ["csr", "csc", "dcsr", "dcsc", "coo", "coo:soa"] {
            for value in ["f32", "f64"] {
                for (pos, crd) in WIDTHS {
                    let text = format!("{op} {format} {value} pos{pos} crd{crd} neon");
                    let d: Desc = text.parse().unwrap();
                    let g = generate(&d).unwrap_or_else(|e| panic!("{text}: {e}"));
                    let ins = decode(&d, g.code());
                    let len = g.code().len() as i64;
                    for (at, i) in &ins {
                        let name = format!("{:?}", i.opcode);
                        let leaves = name.starts_with("BL")
                            || name.starts_with("BR")
                            || ["SVC", "HVC", "SMC"].contains(&name.as_str());
                        assert!(!leaves, "{text}: {i} at {at:x} leaves the kernel");
                        if let Some(t) = target(*at, i) {
                            assert!((0..len).contains(&t), "{text}: {i} at {at:x} -> {t:x}");
                        }
                    }
                    assert_eq!(
                        format!("{:?}", ins.last().unwrap().1.opcode),
                        "RET",
                        "{text}"
                    );
                    let gathers = matches!(
                        (op, format),
                        ("spmv", "csr" | "dcsr") | ("spmvt", "csc" | "dcsc")
                    );
                    let lanes = if value == "f64" { ".2d" } else { ".4s" };
                    let loops = inner_loops(&ins);
                    let vector = loops.iter().any(|&(s, e)| {
                        ins[s..=e].iter().any(|(_, i)| {
                            let t = i.to_string();
                            t.starts_with("fmla") && t.contains(lanes)
                        })
                    });
                    assert_eq!(vector, gathers, "{text}: {lanes} fmla in a loop");
                    // Outside the vector loops every product is rounded before it is
                    // added: no fused scalar multiply-add anywhere.
                    assert!(
                        !ins.iter().any(|(_, i)| {
                            let t = i.to_string();
                            (t.starts_with("fmla") && !t.contains(lanes)) || t.starts_with("fmadd")
                        }),
                        "{text}: a fused scalar multiply-add"
                    );
                    kernels += 1;
                }
            }
        }
    }
    assert_eq!(kernels, 2 * 6 * 2 * WIDTHS.len());
    // NEON has no f16 / bf16 kernels and no SpMM yet: refused with the description.
    for text in [
        "spmm csr f64 pos32 crd32 neon",
        "spmv csr f16 pos32 crd32 neon",
        "spmv ell3 f64 pos32 crd32 neon",
    ] {
        let err = generate(&text.parse().unwrap()).unwrap_err().to_string();
        assert!(err.contains("no generated kernel for"), "{text}: {err}");
    }
}

/// An innermost loop of a kernel: its instructions per iteration and entries per
/// iteration (the step of the entry counter: `rax` on x86-64, `x14` on AArch64).
struct Loop {
    instructions: usize,
    entries: u64,
}

/// The innermost loops of x86-64 code, in code order.
fn x86_loops(code: &[u8]) -> Vec<Loop> {
    use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind, Register};
    let ins: Vec<_> = Decoder::with_ip(64, code, 0, DecoderOptions::NONE)
        .iter()
        .collect();
    let loops: Vec<(usize, usize)> = ins
        .iter()
        .enumerate()
        .filter(|(_, i)| i.op0_kind() == OpKind::NearBranch64 && i.near_branch64() <= i.ip())
        .map(|(b, i)| {
            (
                ins.iter()
                    .position(|j| j.ip() == i.near_branch64())
                    .unwrap(),
                b,
            )
        })
        .collect();
    innermost(&loops)
        .into_iter()
        .map(|(s, e)| {
            let body = &ins[s..=e];
            let entries = body.iter().find_map(|i| {
                let rax = i.op_count() > 0
                    && i.op0_kind() == OpKind::Register
                    && i.op0_register() == Register::RAX;
                match i.mnemonic() {
                    Mnemonic::Inc if rax => Some(1),
                    Mnemonic::Add if rax && i.op1_kind() != OpKind::Register => {
                        Some(i.immediate(1))
                    }
                    _ => None,
                }
            });
            Loop {
                instructions: body.len(),
                entries: entries.unwrap_or(0),
            }
        })
        .collect()
}

/// The loops of `loops` (first and last index) that hold no other.
fn innermost(loops: &[(usize, usize)]) -> Vec<(usize, usize)> {
    loops
        .iter()
        .copied()
        .filter(|&(s, e)| {
            !loops
                .iter()
                .any(|&(s2, e2)| (s2, e2) != (s, e) && s <= s2 && e2 <= e)
        })
        .collect()
}

/// The innermost loops of AArch64 code, in code order.
fn a64_loops(d: &Desc, code: &[u8]) -> Vec<Loop> {
    let ins = decode(d, code);
    inner_loops(&ins)
        .into_iter()
        .map(|(s, e)| {
            let body = &ins[s..=e];
            let entries = body.iter().find_map(|(_, i)| {
                let t = i.to_string();
                let imm = t
                    .strip_prefix("sub x14, x14, #0x")
                    .or_else(|| t.strip_prefix("subs x14, x14, #0x"))?;
                u64::from_str_radix(imm, 16).ok()
            });
            Loop {
                instructions: body.len(),
                entries: entries.unwrap_or(0),
            }
        })
        .collect()
}

/// The table of instructions per stored entry in the inner loops, AVX2 against NEON, from
/// the generated code (`cargo test -p sptk-jit --test suite a64::instructions_per_entry --
/// --nocapture` prints it). Each kernel's loops are found by their backward branches and
/// their entries by the step of the entry counter.
#[test]
fn instructions_per_entry_in_the_inner_loops_avx2_against_neon() {
    let mut table = String::from(
        "kernel (pos32 crd32)   ISA    loop                 instructions  entries  per entry\n",
    );
    for kernel in [
        "spmv csr f64",
        "spmv csr f32",
        "spmvt csr f64",
        "spmv coo f64",
    ] {
        let mut per_isa = Vec::new();
        for isa in ["avx2", "neon"] {
            let d: Desc = format!("{kernel} pos32 crd32 {isa}").parse().unwrap();
            let code = generate(&d).unwrap();
            let loops = if isa == "neon" {
                a64_loops(&d, code.code())
            } else {
                x86_loops(code.code())
            };
            assert!(!loops.is_empty(), "{d}: no inner loop");
            for (n, l) in loops.iter().enumerate() {
                assert!(l.entries > 0, "{d}: loop {n} has no entry counter step");
                let what = match (loops.len(), n) {
                    (1, _) => "one entry at a time",
                    (_, 0) => "vector step",
                    _ => "rest, one at a time",
                };
                table.push_str(&format!(
                    "{kernel:<22} {isa:<6} {what:<20} {:>12} {:>8} {:>10.2}\n",
                    l.instructions,
                    l.entries,
                    l.instructions as f64 / l.entries as f64
                ));
            }
            per_isa.push(loops);
        }
        // Where a kernel has vector steps, they cost fewer instructions per entry than
        // its one-at-a-time rest.
        for loops in &per_isa {
            if let [vector, rest] = loops.as_slice() {
                let per = |l: &Loop| l.instructions as f64 / l.entries as f64;
                assert!(per(vector) < per(rest), "{kernel}: vector steps cost more");
            }
        }
    }
    eprintln!("{table}");
}

/// Where binutils' AArch64 objdump is installed (Debian's `binutils-aarch64-linux-gnu`;
/// `.ci/run` installs it and sets `SPTK_REQUIRE_BINUTILS`, which makes it required), it
/// reads NEON kernels as yaxpeax-arm does: the same mnemonic at every offset.
#[test]
fn objdump_agrees_with_the_disassembler_where_installed() {
    let objdump = "aarch64-linux-gnu-objdump";
    let found = std::process::Command::new(objdump)
        .arg("--version")
        .output()
        .map_err(|e| format!("{objdump}: {e}"))
        .map(|_| ());
    let check = "objdump's cross-check of the NEON disassembly";
    if !sptk_testkit::available(found, "SPTK_REQUIRE_BINUTILS", check) {
        return;
    }
    let dir = std::env::temp_dir();
    for text in [
        "spmv csr f64 pos32 crd32 neon",
        "spmv dcsr f32 pos16 crd8 neon",
        "spmvt csr f64 pos64 crd64 neon",
        "spmv coo:soa f32 pos32 crd16 neon",
    ] {
        let d: Desc = text.parse().unwrap();
        let g = generate(&d).unwrap();
        let path = dir.join(format!("sptk-a64-objdump-{}.bin", std::process::id()));
        std::fs::write(&path, g.code()).unwrap();
        let out = std::process::Command::new(objdump)
            .args(["-D", "-b", "binary", "-m", "aarch64"])
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(out.status.success(), "{objdump}: {}", out.status);
        let theirs: Vec<(usize, String)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (at, rest) = l.trim().split_once(":\t")?;
                let mnemonic = match rest.split('\t').nth(1)?.split_whitespace().next()? {
                    // binutils names these conditions by the carry flag.
                    "b.cs" => "b.hs",
                    "b.cc" => "b.lo",
                    m => m,
                };
                Some((usize::from_str_radix(at, 16).ok()?, mnemonic.to_string()))
            })
            .collect();
        let ours: Vec<(usize, String)> = decode(&d, g.code())
            .iter()
            .map(|(at, i)| (*at, i.to_string().split(' ').next().unwrap().to_string()))
            .collect();
        assert_eq!(ours, theirs, "{text}");
    }
}

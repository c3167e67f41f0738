//! What each instruction set asks of the CPU: one list per [`Isa`], which
//! [`Isa::available`] checks before any code is mapped and which generated code may not go
//! beyond. A generator that starts to use an instruction of another extension (a BMI2
//! shift, a POPCNT) must add that extension to its instruction set's list here, or the
//! audit of every generated kernel fails (`audit`, on in debug builds and so in every
//! test): a CPU (or a VM, or an emulator) that lacks it is then given other code, not a
//! SIGILL.
//!
//! The lists are of what x86-64 adds to its baseline (SSE2, CMOV, CMPXCHG8B: every x86-64
//! CPU); NEON is every AArch64 Linux CPU's.

use crate::desc::Isa;
use crate::KernelError;

/// A CPU extension generated code may use beyond its architecture's baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// AVX (VEX-encoded SSE forms, 256-bit registers).
    Avx,
    /// AVX2 (256-bit integer operations, gathers).
    Avx2,
    /// FMA3 (fused multiply-add).
    Fma,
    /// F16C (half-precision conversions).
    F16c,
    /// BMI1 (`tzcnt`, `blsr`, `andn`, ...).
    Bmi1,
    /// BMI2 (`shrx`, `shlx`, `bzhi`, `pdep`, `pext`, ...).
    Bmi2,
    /// POPCNT.
    Popcnt,
    /// LZCNT.
    Lzcnt,
    /// AVX-512 Foundation.
    Avx512F,
    /// AVX-512 vector-length extensions (EVEX on xmm / ymm).
    Avx512Vl,
    /// AVX-512 doubleword and quadword instructions.
    Avx512Dq,
    /// AVX-512 byte and word instructions.
    Avx512Bw,
    /// Advanced SIMD (NEON).
    Neon,
}

/// The extensions AVX2 code may use (every CPU with AVX2 has them all: Haswell, Zen).
const AVX2: [Feature; 8] = [
    Feature::Avx,
    Feature::Avx2,
    Feature::Fma,
    Feature::F16c,
    Feature::Bmi1,
    Feature::Bmi2,
    Feature::Popcnt,
    Feature::Lzcnt,
];

/// What AVX-512 code may use beyond AVX2's list: F, VL, DQ and BW (Skylake-SP, Zen 4).
const AVX512_OWN: [Feature; 4] = [
    Feature::Avx512F,
    Feature::Avx512Vl,
    Feature::Avx512Dq,
    Feature::Avx512Bw,
];

/// The extensions AVX-512 code may use: AVX2's, then its own.
const AVX512: [Feature; AVX2.len() + AVX512_OWN.len()] = {
    let mut all = [Feature::Avx; AVX2.len() + AVX512_OWN.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = match i < AVX2.len() {
            true => AVX2[i],
            false => AVX512_OWN[i - AVX2.len()],
        };
        i += 1;
    }
    all
};

impl Feature {
    /// The name `is_x86_feature_detected!` and `/proc/cpuinfo` know it by.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Avx => "avx",
            Feature::Avx2 => "avx2",
            Feature::Fma => "fma",
            Feature::F16c => "f16c",
            Feature::Bmi1 => "bmi1",
            Feature::Bmi2 => "bmi2",
            Feature::Popcnt => "popcnt",
            Feature::Lzcnt => "lzcnt",
            Feature::Avx512F => "avx512f",
            Feature::Avx512Vl => "avx512vl",
            Feature::Avx512Dq => "avx512dq",
            Feature::Avx512Bw => "avx512bw",
            Feature::Neon => "neon",
        }
    }

    /// True if this CPU has the extension (and the OS saves its registers).
    pub fn detected(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Feature::Avx => has!("avx"),
                Feature::Avx2 => has!("avx2"),
                Feature::Fma => has!("fma"),
                Feature::F16c => has!("f16c"),
                Feature::Bmi1 => has!("bmi1"),
                Feature::Bmi2 => has!("bmi2"),
                Feature::Popcnt => has!("popcnt"),
                Feature::Lzcnt => has!("lzcnt"),
                Feature::Avx512F => has!("avx512f"),
                Feature::Avx512Vl => has!("avx512vl"),
                Feature::Avx512Dq => has!("avx512dq"),
                Feature::Avx512Bw => has!("avx512bw"),
                Feature::Neon => false,
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            self == Feature::Neon && std::arch::is_aarch64_feature_detected!("neon")
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    }
}

impl Isa {
    /// Every extension this instruction set's generated code may use beyond its
    /// architecture's baseline: what [`Isa::available`] checks, and all that the audit of
    /// generated code allows.
    pub fn features(self) -> &'static [Feature] {
        match self {
            Isa::Scalar => &[],
            Isa::Avx2 => &AVX2,
            Isa::Avx512 => &AVX512,
            Isa::Neon => &[Feature::Neon],
        }
    }

    /// True if this CPU runs the instruction set: it is of the instruction set's
    /// architecture and has every one of its [`features`](Isa::features).
    pub fn available(self) -> bool {
        self.is_host_arch() && self.features().iter().all(|f| f.detected())
    }

    /// True if the instruction set is of this CPU's architecture.
    fn is_host_arch(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return self.is_x86();
        #[cfg(target_arch = "aarch64")]
        return !self.is_x86();
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        return false;
    }

    /// The extensions of [`features`](Isa::features) this CPU lacks (none where it runs
    /// the instruction set), for a message that says what is missing.
    pub fn missing_features(self) -> Vec<Feature> {
        self.features()
            .iter()
            .copied()
            .filter(|f| !f.detected())
            .collect()
    }

    /// The dispatcher's check, before any code of the instruction set is mapped: an error
    /// naming the kernel `what` and what this CPU lacks, unless it runs the instruction set.
    pub(crate) fn check_available(self, what: &dyn std::fmt::Display) -> Result<(), KernelError> {
        if self.available() {
            return Ok(());
        }
        let missing = self.missing_features();
        let why = if missing.is_empty() || !self.is_host_arch() {
            "another architecture".to_string()
        } else {
            let names: Vec<&str> = missing.iter().map(|f| f.name()).collect();
            format!("no {}", names.join(", "))
        };
        Err(KernelError::Isa(format!(
            "this CPU does not run {} code (kernel {what}): {why}",
            self.name()
        )))
    }
}

/// The audit of generated x86-64 code: every instruction decoded and its CPUID features
/// (iced-x86's `instr_info`) held against the instruction set's list. On in every debug
/// build (as a debug assertion: the tests, of this crate and of the tools, check every
/// kernel they generate), off in release builds.
#[cfg(debug_assertions)]
pub(crate) mod audit {
    use iced_x86::{CpuidFeature as C, Decoder, DecoderOptions};

    use super::Feature;
    use crate::desc::Isa;

    /// The baseline every x86-64 CPU has.
    const BASELINE: [C; 14] = [
        C::INTEL8086,
        C::INTEL186,
        C::INTEL286,
        C::INTEL386,
        C::INTEL486,
        C::X64,
        C::CMOV,
        C::CX8,
        C::FPU,
        C::MMX,
        C::SSE,
        C::SSE2,
        C::MULTIBYTENOP,
        C::PAUSE,
    ];

    /// Our name for an extension iced reports, or `None` for one no list has.
    fn ours(c: C) -> Option<Feature> {
        Some(match c {
            C::AVX => Feature::Avx,
            C::AVX2 => Feature::Avx2,
            C::FMA => Feature::Fma,
            C::F16C => Feature::F16c,
            C::BMI1 => Feature::Bmi1,
            C::BMI2 => Feature::Bmi2,
            C::POPCNT => Feature::Popcnt,
            C::LZCNT => Feature::Lzcnt,
            C::AVX512F => Feature::Avx512F,
            C::AVX512VL => Feature::Avx512Vl,
            C::AVX512DQ => Feature::Avx512Dq,
            C::AVX512BW => Feature::Avx512Bw,
            _ => return None,
        })
    }

    /// Every instruction of `code` whose CPUID features are neither baseline nor in
    /// `isa`'s list, with the features it needs (empty when the code keeps to its list).
    pub(crate) fn outside_list(isa: Isa, code: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for ins in Decoder::with_ip(64, code, 0, DecoderOptions::NONE).iter() {
            let needs = ins.cpuid_features();
            let allowed = |c: &C| {
                BASELINE.contains(c) || ours(*c).is_some_and(|f| isa.features().contains(&f))
            };
            if !needs.iter().all(allowed) {
                out.push(format!("{:#x}: {ins} needs {needs:?}", ins.ip()));
            }
        }
        out
    }

    /// Panics where `code`, generated for `isa`, uses an instruction outside its list: a
    /// generator bug that a CPU without that extension would meet as SIGILL.
    pub(crate) fn check(isa: Isa, code: &[u8]) {
        if !isa.is_x86() {
            return;
        }
        let outside = outside_list(isa, code);
        assert!(
            outside.is_empty(),
            "{} code uses instructions outside its feature list ({:?}; add the extension \
             to the list in features.rs or emit something else):\n{}",
            isa.name(),
            isa.features().iter().map(|f| f.name()).collect::<Vec<_>>(),
            outside.join("\n")
        );
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// `shrx eax, ecx, edx` (BMI2), then `ret`.
        const SHRX: [u8; 6] = [0xc4, 0xe2, 0x6b, 0xf7, 0xc1, 0xc3];

        #[test]
        fn an_instruction_outside_the_list_is_found() {
            let outside = outside_list(Isa::Scalar, &SHRX);
            assert_eq!(outside.len(), 1, "{outside:?}");
            assert!(outside[0].contains("shrx") && outside[0].contains("BMI2"));
            assert!(outside_list(Isa::Avx2, &SHRX).is_empty());
            let r = std::panic::catch_unwind(|| check(Isa::Scalar, &SHRX));
            assert!(r.is_err(), "scalar code with shrx passed the audit");
        }

        #[test]
        fn every_list_keeps_its_architecture_and_grows_with_the_isa() {
            for f in Isa::Avx2.features() {
                assert!(Isa::Avx512.features().contains(f), "{}", f.name());
            }
            assert!(!Isa::Avx2.features().contains(&Feature::Neon));
            assert_eq!(Isa::Neon.features(), &[Feature::Neon]);
            assert!(Isa::Scalar.features().is_empty());
        }
    }
}

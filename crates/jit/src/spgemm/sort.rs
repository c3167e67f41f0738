//! Sorting a row's new columns before they are written to C.
//!
//! Rows of FEM and graph products have a few to a few dozen entries; sorting them is
//! a tenth of a FEM product's time with the standard library's sort (`A A`, 100^3: 25
//! entries a row). Up to 32 unique 32-bit columns are sorted instead by a bitonic
//! network in one or two AVX-512 registers (padding lanes hold `u32::MAX` and sort
//! last), which has no branch on the data.

use super::operand::Coord;

/// Columns up to this many are sorted by the network.
#[cfg(target_arch = "x86_64")]
const NETWORK: usize = 32;

/// Sorts `cols` ascending.
#[inline]
pub(crate) fn sort_columns<C: Coord>(cols: &mut [C]) {
    #[cfg(target_arch = "x86_64")]
    if (2..=NETWORK).contains(&cols.len())
        && std::any::TypeId::of::<C>() == std::any::TypeId::of::<u32>()
        && std::arch::is_x86_feature_detected!("avx512f")
    {
        // SAFETY: `C` is `u32` (checked just above), so the slice is one of `u32`s.
        let cols =
            unsafe { std::slice::from_raw_parts_mut(cols.as_mut_ptr().cast::<u32>(), cols.len()) };
        // SAFETY: the CPU has AVX-512F (checked just above); 2 to 32 columns.
        unsafe { network(cols) };
        return;
    }
    cols.sort_unstable();
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m512i, _mm512_mask_blend_epi32, _mm512_max_epu32, _mm512_min_epu32,
        _mm512_permutexvar_epi32, _mm512_set_epi32,
    };

    /// One compare-exchange step: each lane meets lane `i ^ j`; lanes set in `take_max`
    /// keep the larger of the two, the others the smaller.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn exchange(v: __m512i, j: i32, take_max: u16) -> __m512i {
        let idx = _mm512_set_epi32(
            15 ^ j,
            14 ^ j,
            13 ^ j,
            12 ^ j,
            11 ^ j,
            10 ^ j,
            9 ^ j,
            8 ^ j,
            7 ^ j,
            6 ^ j,
            5 ^ j,
            4 ^ j,
            3 ^ j,
            2 ^ j,
            1 ^ j,
            j,
        );
        let other = _mm512_permutexvar_epi32(idx, v);
        let lo = _mm512_min_epu32(v, other);
        let hi = _mm512_max_epu32(v, other);
        _mm512_mask_blend_epi32(take_max, lo, hi)
    }

    /// The lanes that keep the larger value in the step of partner distance `j` inside
    /// bitonic blocks of `k` lanes sorted ascending (`k` = 32: the whole register
    /// ascending).
    pub(super) const fn maxes(j: usize, k: usize) -> u16 {
        let mut m = 0u16;
        let mut i = 0;
        while i < 16 {
            let upper = i & j != 0;
            let descending = k < 32 && i & k != 0;
            if upper != descending {
                m |= 1 << i;
            }
            i += 1;
        }
        m
    }

    /// Sorts the 16 lanes of `v` ascending.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn sort16(mut v: __m512i) -> __m512i {
        v = exchange(v, 1, const { maxes(1, 2) });
        v = exchange(v, 2, const { maxes(2, 4) });
        v = exchange(v, 1, const { maxes(1, 4) });
        v = exchange(v, 4, const { maxes(4, 8) });
        v = exchange(v, 2, const { maxes(2, 8) });
        v = exchange(v, 1, const { maxes(1, 8) });
        merge16(v)
    }

    /// Sorts a bitonic 16 lanes (two sorted halves, the second descending) ascending.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn merge16(mut v: __m512i) -> __m512i {
        v = exchange(v, 8, const { maxes(8, 32) });
        v = exchange(v, 4, const { maxes(4, 32) });
        v = exchange(v, 2, const { maxes(2, 32) });
        exchange(v, 1, const { maxes(1, 32) })
    }
}

/// Sorts 2 to 32 columns: each 16 sorted in a register (`u32::MAX` past the end), the
/// second reversed and merged with the first (the lower 16 of every pair of lanes to the
/// first register), each half merged again, and the columns stored back.
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn network(cols: &mut [u32]) {
    use std::arch::x86_64::{
        _mm512_mask_loadu_epi32, _mm512_mask_storeu_epi32, _mm512_max_epu32, _mm512_min_epu32,
        _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_set_epi32,
    };
    let n = cols.len().min(NETWORK);
    let lanes = |from: usize| -> u16 {
        match n.saturating_sub(from) {
            0 => 0,
            l if l >= 16 => u16::MAX,
            l => (1u16 << l) - 1,
        }
    };
    let (m0, m1) = (lanes(0), lanes(16));
    let pad = _mm512_set1_epi32(-1);
    let at = cols.as_mut_ptr();
    // SAFETY: each masked load and store touches only the lanes of its mask, the first
    // `n` columns (`at` to `at + n`, inside `cols`); masked lanes do not fault.
    unsafe {
        let a = x86::sort16(_mm512_mask_loadu_epi32(pad, m0, at.cast()));
        if m1 == 0 {
            _mm512_mask_storeu_epi32(at.cast(), m0, a);
            return;
        }
        let b = x86::sort16(_mm512_mask_loadu_epi32(pad, m1, at.add(16).cast()));
        let reverse = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let b = _mm512_permutexvar_epi32(reverse, b);
        let (lo, hi) = (_mm512_min_epu32(a, b), _mm512_max_epu32(a, b));
        _mm512_mask_storeu_epi32(at.cast(), m0, x86::merge16(lo));
        _mm512_mask_storeu_epi32(at.add(16).cast(), m1, x86::merge16(hi));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where AVX-512 is here (required by `REQUIRE_ISA=avx512`) `sort_columns` takes the
    /// network for 32-bit columns; 64-bit ones and other CPUs take the standard sort.
    #[test]
    fn the_network_sorts_as_the_standard_sort_does() {
        let network = crate::Isa::tested().contains(&crate::Isa::Avx512);
        eprintln!("the network runs: {network}");
        let mut seed = 7u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in 0..=40usize {
            for round in 0..200 {
                // Unique columns (a row's touched list), from narrow and wide ranges, some
                // at the top of the width (next to the padding's u32::MAX).
                let range = match round % 3 {
                    0 => 64,
                    1 => 1 << 20,
                    _ => u64::from(u32::MAX) + 1,
                };
                let mut cols: Vec<u32> = Vec::new();
                while cols.len() < len {
                    let c = match round % 5 {
                        4 => u32::MAX - (next() % 64) as u32,
                        _ => (next() % range) as u32,
                    };
                    if !cols.contains(&c) {
                        cols.push(c);
                    }
                }
                let mut want = cols.clone();
                want.sort_unstable();
                let mut wide: Vec<u64> = cols.iter().map(|&c| u64::from(c)).collect();
                sort_columns(&mut cols);
                sort_columns(&mut wide);
                assert_eq!(cols, want, "len {len}");
                assert!(wide.iter().map(|&c| c as u32).eq(want.iter().copied()));
            }
        }
    }
}

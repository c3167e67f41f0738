//! Allocations whose size comes from the input: checked arithmetic, refused with
//! [`MtxError::TooLarge`] instead of an abort when the machine cannot hold them, and zeroed
//! by `sptk_tensor::big_zeroed` (the workspace's one zeroed allocator: the kernel hands out
//! zero pages lazily, so pre-sizing an array by what the file could hold costs only what
//! is written, and large arrays get huge pages).

use crate::error::MtxError;
pub(crate) use sptk_tensor::Zeroed;

/// The bytes of `n` elements of `T`, or `None` past `u64`.
pub(crate) fn bytes_of<T>(n: u64) -> Option<u64> {
    n.checked_mul(std::mem::size_of::<T>() as u64)
}

/// The error for an array of `n` elements of `T` named `what` that cannot be held.
pub(crate) fn too_large<T>(what: &str, n: u64, why: &str) -> MtxError {
    let bytes = match bytes_of::<T>(n) {
        Some(b) => format!("{b} bytes"),
        None => "more than 2^64 bytes".to_string(),
    };
    MtxError::TooLarge {
        message: format!("{what}: an array of {n} elements ({bytes}) {why}"),
    }
}

/// `n` zero elements of `T`, or [`MtxError::TooLarge`] naming `what` if they cannot be
/// allocated.
pub(crate) fn zeroed<T: Zeroed>(n: u64, what: &str) -> Result<Vec<T>, MtxError> {
    let fail = || too_large::<T>(what, n, "cannot be allocated on this machine");
    let n = usize::try_from(n).map_err(|_| fail())?;
    sptk_tensor::big_zeroed(n).map_err(|_| fail())
}

/// Checks that `bytes` could be allocated at all, without keeping or touching them: the
/// allocator refuses what the machine cannot back (more than its memory and swap under the
/// kernel's default overcommit policy, or more than the address space). `None` bytes
/// (past `u64`) is refused.
pub(crate) fn can_allocate(bytes: Option<u64>) -> bool {
    let Some(bytes) = bytes.and_then(|b| usize::try_from(b).ok()) else {
        return false;
    };
    let mut probe: Vec<u8> = Vec::new();
    // Never touched: the pages are released unmapped when `probe` drops.
    probe.try_reserve_exact(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_arrays_are_errors_not_aborts() {
        let e = zeroed::<u64>(1 << 61, "pos").unwrap_err();
        assert_eq!(
            e.to_string(),
            "pos: an array of 2305843009213693952 elements (more than 2^64 bytes) cannot be allocated on this machine"
        );
        let e = zeroed::<u32>(1 << 60, "crd").unwrap_err();
        assert_eq!(
            e.to_string(),
            "crd: an array of 1152921504606846976 elements (4611686018427387904 bytes) cannot be allocated on this machine"
        );
        assert_eq!(zeroed::<f64>(3, "v").unwrap(), vec![0.0; 3]);
        assert!(zeroed::<f64>(0, "v").unwrap().is_empty());
        assert!(!can_allocate(None));
        assert!(!can_allocate(Some(u64::MAX / 2)));
        assert!(can_allocate(Some(1 << 20)));
    }
}

//! Memory that faults on the first byte past an array: each array is copied to the end of
//! its own mapping, right before a `PROT_NONE` page, so a kernel reading or writing one
//! element too far is killed by SIGSEGV instead of reading a neighbour's bytes (which the
//! Inf / NaN sentinels of the other tests cannot see). Mappings are `MAP_NORESERVE`: an
//! x of 2^32 elements costs only the pages a kernel touches.

#![allow(dead_code)]

use std::sync::Arc;

use sptk_tensor::{Buf, IndexVec, LevelArrays, Owner, Pod, Tensor, ValueVec};

/// A mapping: `before` bytes of `PROT_NONE`, then `len` usable bytes ending at a page
/// boundary, then one `PROT_NONE` page.
pub struct Guarded {
    map: *mut u8,
    map_len: usize,
    /// Offset of the usable bytes' end (the guard page) from `map`.
    end: usize,
    len: usize,
}

// SAFETY: the mapping is owned by this value and lives until it is dropped; the tests
// write through `tail_mut` only before sharing it.
unsafe impl Send for Guarded {}
// SAFETY: as above.
unsafe impl Sync for Guarded {}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

impl Guarded {
    /// `len` usable bytes ending against a guard page, with `before` bytes of `PROT_NONE`
    /// in front (where a negative offset would land).
    pub fn new(len: usize, before: usize) -> Guarded {
        let p = page();
        let (before, body) = (before.div_ceil(p) * p, len.div_ceil(p) * p);
        let map_len = before + body + p;
        // SAFETY: a fresh anonymous mapping; nothing else refers to its address range.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "mmap of {map_len} bytes");
        if body > 0 {
            // SAFETY: the range lies inside the mapping made above.
            let rc = unsafe {
                libc::mprotect(
                    map.cast::<u8>().add(before).cast(),
                    body,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            assert_eq!(rc, 0, "mprotect");
        }
        Guarded {
            map: map.cast(),
            map_len,
            end: before + body,
            len,
        }
    }

    /// The usable bytes, ending at the guard page.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the `len` bytes before `end` are mapped read + write (rounded up to pages
        // inside the body) and live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.map.add(self.end - self.len), self.len) }
    }

    /// The last `n` elements of `T` before the guard page.
    #[allow(clippy::mut_from_ref)]
    pub fn tail_mut<T: Pod>(&self, n: usize) -> &mut [T] {
        let bytes = n * std::mem::size_of::<T>();
        assert!(bytes <= self.len);
        // SAFETY: in the usable bytes (checked above), aligned (the end is page-aligned and
        // `bytes` a multiple of the element size), any bits a valid `T` (`Pod`); the tests
        // take each tail once.
        unsafe { std::slice::from_raw_parts_mut(self.map.add(self.end - bytes).cast(), n) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, no longer referred to.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// A copy of `src` that ends against a guard page.
pub fn guarded_buf<T: Pod>(src: &[T]) -> Buf<T> {
    let g = Arc::new(Guarded::new(std::mem::size_of_val(src), 0));
    g.tail_mut::<T>(src.len()).copy_from_slice(src);
    let owner: Owner = g.clone();
    // SAFETY: the bytes belong to `g`, which the buffer keeps alive, and nobody writes them
    // again.
    unsafe { Buf::from_owner(owner, g.bytes(), 0..g.bytes().len()) }.unwrap()
}

fn guarded_index(v: &IndexVec) -> IndexVec {
    match v {
        IndexVec::Packed2 { bytes, len } => IndexVec::Packed2 {
            bytes: guarded_buf(bytes),
            len: *len,
        },
        IndexVec::U8(b) => IndexVec::U8(guarded_buf(b)),
        IndexVec::U16(b) => IndexVec::U16(guarded_buf(b)),
        IndexVec::U32(b) => IndexVec::U32(guarded_buf(b)),
        IndexVec::U64(b) => IndexVec::U64(guarded_buf(b)),
    }
}

/// `t` with every index and value array moved against a guard page of its own (values of
/// any type but bool).
pub fn guarded_tensor(t: Tensor) -> Tensor {
    let (encoding, dims, levels, values) = t.into_parts();
    let levels = levels
        .iter()
        .map(|l| LevelArrays {
            pos: l.pos.as_ref().map(guarded_index),
            crd: l.crd.as_ref().map(guarded_index),
        })
        .collect();
    macro_rules! guarded_values {
        ($($tag:ident),*) => {
            match &values {
                $(ValueVec::$tag(v) => ValueVec::$tag(guarded_buf(v)),)*
                other => panic!("no guarded copy of {:?} values", other.value_type()),
            }
        };
    }
    // Every value type but bool (not `Pod`: only 0 and 1 are valid).
    let values =
        guarded_values!(F64, F32, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, C64, C128);
    Tensor::try_from_parts(encoding, dims, levels, values).unwrap()
}

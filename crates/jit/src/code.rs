//! Executable memory. Each kernel's code is copied into fresh pages while they are
//! writable, then the pages are made read + execute once and never writable again (W^X):
//! no thread can run code that is being written.

use std::io;

use memmap2::{Mmap, MmapMut};

/// Machine code in read + execute pages.
pub(crate) struct Code {
    map: Mmap,
    len: usize,
}

impl Code {
    /// Copies `bytes` into new pages and makes them executable.
    pub(crate) fn new(bytes: &[u8]) -> io::Result<Code> {
        let mut map = MmapMut::map_anon(bytes.len().max(1))?;
        map[..bytes.len()].copy_from_slice(bytes);
        Ok(Code {
            map: map.make_exec()?,
            len: bytes.len(),
        })
    }

    /// The code's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map[..self.len]
    }

    /// The address of the first instruction.
    pub(crate) fn entry(&self) -> *const u8 {
        self.map.as_ptr()
    }
}

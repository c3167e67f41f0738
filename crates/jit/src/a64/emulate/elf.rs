//! A minimal static AArch64 Linux executable that runs many kernel calls: one `PT_LOAD`
//! segment per array with an unmapped page after each (a guard page: a read or write past
//! any array's end faults), the code (a start stub and the kernels) in a read + execute
//! segment at [`BASE`], where the stub was assembled, so nothing relocates.
//!
//! The stub calls each `(args, kernel)` pair of the call table in order (`blr`, the
//! argument struct's address in `x0`), then writes each output array to standard output
//! with the `write` system call and exits with 0; a short write exits with 3.

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi, VecAssembler};

/// The load address of the first segment (the code), and the address the stub is
/// assembled for.
pub(crate) const BASE: u64 = 0x40_0000;

/// The page size of the segments and guard pages (AArch64 Linux with 4 KiB pages; a
/// larger page size of the emulator would merge guard pages into their neighbours).
pub(crate) const PAGE: u64 = 4096;

/// How a segment may be accessed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read only: inputs (a kernel that writes one faults).
    Read,
    /// Read and write: outputs.
    ReadWrite,
    /// Read and execute: the code.
    Exec,
}

/// One segment: its bytes end at the segment's last byte, so the guard page follows the
/// array directly.
struct Segment {
    bytes: Vec<u8>,
    access: Access,
    vaddr: u64,
}

/// An executable being laid out: segments at increasing addresses, a guard page after
/// each.
pub(crate) struct Image {
    segments: Vec<Segment>,
    next: u64,
}

impl Image {
    /// An image whose first segment will be the code at [`BASE`].
    pub(crate) fn new() -> Image {
        Image {
            segments: Vec::new(),
            next: BASE,
        }
    }

    /// Adds `bytes` as a segment, placed so that its last byte is the last of a page
    /// (the next page unmapped); returns the address of its first byte. An empty array
    /// gets a page of its own and the address of the guard page after it.
    pub(crate) fn add(&mut self, bytes: Vec<u8>, access: Access) -> u64 {
        let pages = (bytes.len() as u64).div_ceil(PAGE).max(1);
        let vaddr = self.next;
        let end = vaddr + pages * PAGE;
        self.next = end + PAGE;
        let at = end - bytes.len() as u64;
        self.segments.push(Segment {
            bytes,
            access,
            vaddr,
        });
        at
    }

    /// Replaces the bytes of segment `index` by as many others (the stub, once the
    /// addresses it needs are known).
    pub(crate) fn patch(&mut self, index: usize, bytes: Vec<u8>) {
        if let Some(s) = self.segments.get_mut(index) {
            if s.bytes.len() == bytes.len() {
                s.bytes = bytes;
            }
        }
    }

    /// The ELF file: header, program headers, then each segment's pages.
    pub(crate) fn write(&self, entry: u64) -> Vec<u8> {
        let phnum = self.segments.len();
        let head = (64 + 56 * phnum) as u64;
        let mut file_off = head.div_ceil(PAGE) * PAGE;
        let mut out = Vec::new();
        // e_ident: ELF, 64-bit, little-endian, version 1, System V.
        out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        out.extend_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&entry.to_le_bytes());
        out.extend_from_slice(&64u64.to_le_bytes()); // program headers right after
        out.extend_from_slice(&0u64.to_le_bytes()); // no section headers
        out.extend_from_slice(&0u32.to_le_bytes());
        for v in [64u16, 56, phnum as u16, 64, 0, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let mut placed = Vec::with_capacity(phnum);
        for s in &self.segments {
            let size = (s.bytes.len() as u64).div_ceil(PAGE).max(1) * PAGE;
            let flags: u32 = match s.access {
                Access::Read => 4,
                Access::ReadWrite => 6,
                Access::Exec => 5,
            };
            out.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
            out.extend_from_slice(&flags.to_le_bytes());
            for v in [file_off, s.vaddr, s.vaddr, size, size, PAGE] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            placed.push((file_off, size));
            file_off += size;
        }
        for (s, (off, size)) in self.segments.iter().zip(placed) {
            out.resize((off + size - s.bytes.len() as u64) as usize, 0);
            out.extend_from_slice(&s.bytes);
        }
        out
    }
}

/// `x{reg} = v`, in four moves.
fn mov64(a: &mut VecAssembler<Aarch64Relocation>, reg: u8, v: u64) {
    let part = |s: u32| ((v >> s) & 0xffff) as u32;
    dynasm!(a
        ; .arch aarch64
        ; movz X(reg), part(0)
        ; movk X(reg), part(16), lsl #16
        ; movk X(reg), part(32), lsl #32
        ; movk X(reg), part(48), lsl #48
    );
}

/// The start stub, assembled for [`BASE`]: runs the `calls` pairs of (args, kernel) at
/// `call_table`, then writes the `outputs` pairs of (address, length) at `output_table`.
pub(crate) fn stub(
    (call_table, calls): (u64, usize),
    (output_table, outputs): (u64, usize),
) -> Result<Vec<u8>, String> {
    let mut a = VecAssembler::<Aarch64Relocation>::new(BASE as usize);
    let (call, write, exit, short) = (
        a.new_dynamic_label(),
        a.new_dynamic_label(),
        a.new_dynamic_label(),
        a.new_dynamic_label(),
    );
    mov64(&mut a, 19, call_table);
    mov64(&mut a, 20, calls as u64);
    dynasm!(a
        ; .arch aarch64
        ; =>call
        ; cbz x20, >writes
        ; ldp x0, x1, [x19], #16
        ; blr x1
        ; sub x20, x20, #1
        ; b =>call
        ; writes:
    );
    mov64(&mut a, 19, output_table);
    mov64(&mut a, 20, outputs as u64);
    dynasm!(a
        ; .arch aarch64
        ; =>write
        ; cbz x20, =>exit
        ; ldp x1, x2, [x19], #16
        ; mov x0, #1
        ; mov x8, #64
        ; svc #0
        ; cmp x0, x2
        ; b.ne =>short
        ; sub x20, x20, #1
        ; b =>write
        ; =>exit
        ; mov x0, #0
        ; mov x8, #93
        ; svc #0
        ; =>short
        ; mov x0, #3
        ; mov x8, #93
        ; svc #0
    );
    a.finalize()
        .map_err(|e| format!("cannot assemble the start stub: {e}"))
}

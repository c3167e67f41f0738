//! Cursors: the code each level kind emits to walk its positions, whatever the operand's
//! name. An outer cursor holds its position `q` and end in stack slots (the inner merge
//! needs the registers) and emits
//! - `coord`: the outer coordinate at `q` (dense: `q` itself; compressed: `crd[q]`; COO's
//!   nonunique level: `crd[q * stride]`);
//! - `segment`: the child's position range under `q`, clamped to the stored entries
//!   (compressed child: `pos[q]..pos[q + 1]`; singleton child under a nonunique level:
//!   the run of equal coordinates from `q`), and the step past it;
//! - `advance`: in an intersection, moving a cursor whose coordinate is behind the other's
//!   (dense: locate, `q = target`; compressed: one step).
//!
//! An inner cursor reads the coordinate at an absolute position (`crd[k]`, or COO's
//! `crd[2k + 1]` / `crd1[k]`); its end lives in a stack slot.

use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};

use super::desc::{LevelKind, Operand};
use super::emit::{arg, slot};
use crate::x86::asm::{bytes, load, Asm};

/// One operand's cursors and where their state lives.
#[derive(Clone, Copy)]
pub(super) struct Side {
    /// The operand's levels and widths.
    pub op: Operand,
    /// Offset of the operand's fields in the arguments (`arg::A` or `arg::B`).
    pub at: i32,
    /// Stack slot of the outer position.
    pub q: i32,
    /// Stack slot of the outer end position.
    pub qe: i32,
    /// Stack slot of the inner segment's end.
    pub end: i32,
    /// Register of the inner coordinate array.
    pub crd: u8,
    /// Register of the values.
    pub val: u8,
    /// Register of the inner position.
    pub k: u8,
}

impl Side {
    /// The stride and offset of the outer coordinates in their array.
    fn outer_stride(&self) -> u32 {
        if self.op.runs() && !self.op.soa {
            2
        } else {
            1
        }
    }

    /// `dst = the outer coordinate at position q` (`q` a register, not `dst` unless dense).
    // dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
    #[allow(clippy::useless_conversion)]
    pub fn coord(&self, a: &mut Asm, dst: u8, q: u8) {
        match self.op.outer.kind {
            LevelKind::Dense => {
                if dst != q {
                    dynasm!(a.ops ; .arch x64 ; mov Rq(dst), Rq(q));
                }
            }
            _ => {
                let stride = self.outer_stride();
                if stride * bytes(self.op.crd) > 8 {
                    // 64-bit interleaved: crd + q * 16, the base added from memory.
                    dynasm!(a.ops
                        ; .arch x64
                        ; mov Rq(dst), Rq(q)
                        ; shl Rq(dst), 4
                        ; add Rq(dst), QWORD [rdi + self.at + arg::OUTER]
                        ; mov Rq(dst), QWORD [Rq(dst)]
                    );
                } else {
                    dynasm!(a.ops ; .arch x64 ; mov Rq(dst), QWORD [rdi + self.at + arg::OUTER]);
                    load(a, self.op.crd, dst, dst, q, stride, 0);
                }
            }
        }
    }

    /// With `q` (register) at the current outer position, whose coordinate is in the slot
    /// `slot::I`: sets `q` to the child's first position, the slot `end` to its end (both
    /// clamped to the stored entries), and the slot `q` to the next outer position.
    /// Clobbers `t1`, `t2`.
    #[allow(clippy::useless_conversion)]
    pub fn segment(&self, a: &mut Asm, q: u8, t1: u8, t2: u8) {
        let (at, qs, end) = (self.at, self.q, self.end);
        if self.op.runs() {
            // The run of entries whose outer coordinate is this one.
            let [scan, done] = a.labels();
            dynasm!(a.ops
                ; .arch x64
                ; lea Rq(t2), [Rq(q) + 1]
                ; =>scan
                ; cmp Rq(t2), QWORD [rsp + self.qe]
                ; jae =>done
            );
            self.coord(a, t1, t2);
            dynasm!(a.ops
                ; .arch x64
                ; cmp Rq(t1), QWORD [rsp + slot::I]
                ; jne =>done
                ; inc Rq(t2)
                ; jmp =>scan
                ; =>done
                ; mov QWORD [rsp + end], Rq(t2)
                ; mov QWORD [rsp + qs], Rq(t2)
            );
        } else {
            dynasm!(a.ops ; .arch x64 ; mov Rq(t1), QWORD [rdi + at + arg::POS]);
            load(a, self.op.pos, t2, t1, q, 1, 1);
            dynasm!(a.ops
                ; .arch x64
                ; cmp Rq(t2), QWORD [rdi + at + arg::N]
                ; cmova Rq(t2), QWORD [rdi + at + arg::N]
                ; mov QWORD [rsp + end], Rq(t2)
                ; add QWORD [rsp + qs], 1
            );
            load(a, self.op.pos, q, t1, q, 1, 0);
            dynasm!(a.ops
                ; .arch x64
                ; cmp Rq(q), Rq(t2)
                ; cmova Rq(q), Rq(t2)
            );
        }
    }

    /// An empty segment: `k` = 0, the slot `end` = 0.
    #[allow(clippy::useless_conversion)]
    pub fn empty(&self, a: &mut Asm) {
        dynasm!(a.ops
            ; .arch x64
            ; xor Rd(self.k), Rd(self.k)
            ; mov QWORD [rsp + self.end], 0
        );
    }

    /// Intersection: this cursor's coordinate is below `target` (a register): a dense
    /// level locates it (`q = target`), a compressed one steps once.
    #[allow(clippy::useless_conversion)]
    pub fn advance(&self, a: &mut Asm, target: u8) {
        match self.op.outer.kind {
            LevelKind::Dense => dynasm!(a.ops ; .arch x64 ; mov QWORD [rsp + self.q], Rq(target)),
            _ => dynasm!(a.ops ; .arch x64 ; add QWORD [rsp + self.q], 1),
        }
    }

    /// `dst = the inner coordinate at position `k + ahead`` (`k` a register).
    pub fn inner(&self, a: &mut Asm, dst: u8, k: u8, ahead: i32) {
        let (stride, off) = match (self.op.inner.kind, self.op.soa) {
            (LevelKind::Singleton, false) => (2, 1),
            _ => (1, 0),
        };
        load(
            a,
            self.op.crd,
            dst,
            self.crd,
            k,
            stride,
            off + ahead * stride as i32,
        );
    }
}

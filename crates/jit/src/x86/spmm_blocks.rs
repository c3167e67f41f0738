//! SpMM, `Y = alpha A X + beta Y` with X and Y row-major (`k` columns, an argument), for the
//! encodings other than CSR ([`spmm_csr`](super::spmm_csr)):
//!
//! - [`spmm_gather`]: sums per output row, kept in registers: BSR (`R x C` blocks, both
//!   constants, every block's products unrolled) and DCSR (1 x 1 blocks whose output row is
//!   the stored outer coordinate), and ELL ([`spmm_ell`]: 1 x 1 blocks, row `i`'s K slots
//!   at `s * rows + i`). For each block row and tile of columns, the blocks are
//!   walked once: per block column `t` the tile's X segment is loaded into registers, per
//!   block row `o` the value is broadcast and multiplied with it into the row's sums.
//!   [`spmm_nm`] is the n:m gather (slots of offsets inside groups of `m` columns).
//! - [`spmm_scatter`]: products scattered into the caller's partial: CSC, DCSC and BSC. Per
//!   outer (block) column and tile, the X segments of its `C` rows are loaded once; each
//!   stored block adds `val[o, t] * X[j + t, tile]` into the partial's rows `i + o`, read
//!   and written once per block row `o`. [`spmm_coo`] does the same per COO entry. The
//!   caller adds the partials in chunk order.
//!
//! Every product is rounded before it is added (a multiply, then an add: no fused
//! multiply-add), in the reference's order (blocks ascending, then `t`), so a gather's
//! result is the reference's bit for bit on every instruction set, and each partial is the
//! reference's sum over its chunk's entries.
//!
//! Columns are taken in tiles of `u` vectors (as many as fit the registers, at most 4), then
//! single vectors, then the last `k % lanes` columns: with AVX-512 one vector under the
//! tail mask `k1` (an argument; masked loads and stores never touch the lanes past `k`),
//! else one column at a time (SSE2 for the scalar instruction set). Blocks
//! with more rows (gather) or columns (scatter) than the registers hold are done in groups
//! of rows or columns, the entries walked once per group; the order of the additions into
//! each output element stays the same.
//!
//! Padding (blocks): a stored zero (either sign) is tested on its bits and never
//! multiplies, so an `Inf` or `NaN` in X under it stays out of Y. A gather skips the block
//! columns past the last column of X (they are never loaded) and never writes the rows past
//! the last row of Y (`rows` and `cols` are arguments); n:m skips slots past the last
//! column. A scatter's caller pads its partials to whole block rows, and computes the last
//! block column itself when it reaches past X.
//!
//! Registers: `rdi` the arguments, `r8` pos, `r9` crd, `r10` values, `r11` X, `r15` bytes per
//! row of X and Y, `rcx` the outer position, `rax` the block, `rbx` the end block, `r13` the
//! tile's first column, `rdx` the block's values offset, `rbp` / `rsi` scratch; gather: `r12`
//! the X row, `r14` the call's end block (blocks before it are prefetched 4 ahead: a block's
//! unrolled products are many instructions, so without that few X rows' cache misses would
//! overlap); scatter: `rsi` the partial, `r12` its row, `r14` the X row.

use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi};
use iced_x86::Code as C;
use iced_x86::Register::{self, *};

use super::asm::{Arg, Asm};
use super::at;
use super::load_index;
use super::spmm::{forms, Forms};
use super::{check_block, enter, gp, leave, load_args};
use crate::desc::{Desc, Isa, Real};
use crate::KernelError;
use Arg::R;

/// The most vectors per tile.
const MAX_TILE: u32 = 4;

/// Block columns per group (scatter), one less block rows (gather): what the one-column
/// steps can hold in 16 registers.
const MAX_GROUP: u32 = 12;

/// The callee-saved registers the kernels use.
const SAVED: [u8; 6] = [gp::RBX, gp::RBP, gp::R12, gp::R13, gp::R14, gp::R15];

/// The vector registers of a width: `n` of the kind `f` works on.
fn vreg(f: &Forms, n: u32) -> Register {
    f.regs[0] + n
}

/// Registers of the kind `f` works on: 32 zmm with AVX-512, else 16.
fn nregs(f: &Forms) -> u32 {
    if f.regs[0] == ZMM0 {
        32
    } else {
        16
    }
}

fn zero(a: &mut Asm, f: &Forms, r: Register) -> Result<(), KernelError> {
    if f.regs[0] == ZMM0 {
        // zmm16..31 have no VEX form.
        a.ins(C::EVEX_Vpxorq_zmm_k1z_zmm_zmmm512b64, &[R(r), R(r), R(r)])
    } else {
        f.op(a, f.zero, r, r, R(r))
    }
}

/// Jumps to `skip` if the value at `[r10 + rdx + off]` is a zero of either sign (padding),
/// testing its bits in `rsi` (gather) or `rbp` (scatter).
// dynasm's dynamic registers expand to `.into()` calls on the `u8` register numbers.
#[allow(clippy::useless_conversion)]
fn skip_padding(a: &mut Asm, d: &Desc, scratch: u8, off: i32, skip: dynasmrt::DynamicLabel) {
    if d.value == Real::F64 {
        dynasm!(a.ops
            ; .arch x64
            ; mov Rq(scratch), QWORD [r10 + rdx + off]
            ; add Rq(scratch), Rq(scratch)
            ; jz =>skip
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; mov Rd(scratch), DWORD [r10 + rdx + off]
            ; add Rd(scratch), Rd(scratch)
            ; jz =>skip
        );
    }
}

/// The tile kinds of a kernel, in order: (forms, vectors per tile, masked). `per_vector` is
/// the registers a tile needs per vector (sums, and X values for scatters); 4 more are kept
/// for the broadcast value, a product, alpha and beta. The last columns (fewer than a
/// vector) are one vector under the tail mask `k1` with AVX-512, else one column at a time.
fn kinds(d: &Desc, per_vector: u32) -> Vec<(Forms, u32, bool)> {
    let mut out = Vec::new();
    if d.isa != Isa::Scalar {
        let f = forms(d, true);
        let u = ((nregs(&f) - 4) / per_vector).clamp(1, MAX_TILE);
        out.push((f, u, false));
        if u > 1 {
            out.push((f, 1, false));
        }
    }
    if d.isa == Isa::Avx512 {
        out.push((forms(d, true), 1, true));
    } else {
        out.push((forms(d, false), 1, false));
    }
    out
}

/// An instruction that reads or writes X, Y or a partial: under the tail mask `k1` (when
/// `masked`), a load zeroes the lanes past `k` and a store leaves them, and neither touches
/// their memory.
fn mem_ins(a: &mut Asm, code: C, args: &[Arg], masked: bool) -> Result<(), KernelError> {
    if !masked {
        return a.ins(code, args);
    }
    let store = matches!(args.first(), Some(Arg::M(..)));
    a.ins_masked(code, args, Some((K1, !store)))
}

/// The start of a tile loop: jumps to `done` unless a whole tile of `width` columns from
/// `r13` fits in `k` (masked: unless a column is left).
fn tile_start(a: &mut Asm, width: i32, masked: bool, tile: DynamicLabel, done: DynamicLabel) {
    if masked {
        dynasm!(a.ops
            ; .arch x64
            ; =>tile
            ; cmp r13, QWORD [rdi + at::K]
            ; jae =>done
        );
    } else {
        dynasm!(a.ops
            ; .arch x64
            ; =>tile
            ; lea rax, [r13 + width]
            ; cmp rax, QWORD [rdi + at::K]
            ; ja =>done
        );
    }
}

/// AVX-512 kernels: the tail mask into `k1`, once.
fn load_tail_mask(a: &mut Asm, d: &Desc) -> Result<(), KernelError> {
    if d.isa == Isa::Avx512 {
        a.ins(
            C::VEX_Kmovw_kr_km16,
            &[
                R(K1),
                Arg::M(RDI, Register::None, 1, i64::from(at::TAIL_MASK)),
            ],
        )?;
    }
    Ok(())
}

/// The machine code of a gather SpMM kernel: `r x c` blocks (1 x 1 for DCSR), `outer` if
/// the output row is the stored outer coordinate (DCSR).
pub(crate) fn spmm_gather(
    d: &Desc,
    (r, c): (u32, u32),
    outer: bool,
) -> Result<Vec<u8>, KernelError> {
    gather(d, (r, c), outer, Option::None)
}

/// The machine code of an ELL SpMM kernel: a gather whose row `i` has the `slots` entries
/// `s * rows + i` (padding: value 0 at column 0, skipped).
pub(crate) fn spmm_ell(d: &Desc, slots: u32) -> Result<Vec<u8>, KernelError> {
    if i32::try_from(slots).is_err() {
        return Err(KernelError::Unsupported(format!("{d}: too many slots")));
    }
    gather(d, (1, 1), false, Some(slots))
}

fn gather(
    d: &Desc,
    (r, c): (u32, u32),
    outer: bool,
    slots: Option<u32>,
) -> Result<Vec<u8>, KernelError> {
    check_block(d, r, c)?;
    let padded = d.format.padded();
    let vs = d.value.size() as i32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &SAVED);
    load_args(
        &mut a,
        &[
            (gp::R8, at::POS),
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RCX, at::BEGIN),
            (gp::R15, at::K),
        ],
    );
    dynasm!(a.ops ; .arch x64 ; imul r15, r15, vs);
    load_tail_mask(&mut a, d)?;
    if prefetches(d, r, c) {
        // The call's end block: blocks before it may be prefetched.
        dynasm!(a.ops ; .arch x64 ; mov r14, QWORD [rdi + at::END]);
        load_index(&mut a, d.pos, gp::R14, gp::R8, gp::R14, 0)?;
    }
    let [row_loop, done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>row_loop
        ; cmp rcx, QWORD [rdi + at::END]
        ; jae =>done
    );
    let group = r.min(MAX_GROUP - 1);
    for g0 in (0..r).step_by(group as usize) {
        let g1 = (g0 + group).min(r);
        dynasm!(a.ops ; .arch x64 ; xor r13, r13);
        // A tile of u vectors holds (g1 - g0) * u sums and u X values.
        for (f, u, masked) in kinds(d, g1 - g0 + 1) {
            let sh = Gather {
                r,
                c,
                rows: (g0, g1),
                padded,
                outer,
                slots,
                masked,
            };
            gather_tiles(&mut a, d, &f, u, &sh)?;
        }
    }
    dynasm!(a.ops ; .arch x64 ; inc rcx ; jmp =>row_loop ; =>done);
    if d.isa != Isa::Scalar {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &SAVED)
}

/// What one gather tile loop is generated for.
struct Gather {
    r: u32,
    c: u32,
    /// The block rows `[g0, g1)` of the group.
    rows: (u32, u32),
    padded: bool,
    outer: bool,
    /// ELL: the slots per row (entries `s * rows + i` of row `i`) instead of positions.
    slots: Option<u32>,
    /// The tile is the last columns, under the tail mask.
    masked: bool,
}

/// True if a gather kernel prefetches X rows: vector tiles of blocks larger than 1 x 1.
fn prefetches(d: &Desc, r: u32, c: u32) -> bool {
    d.isa != Isa::Scalar && r * c > 1
}

/// Columns from `r13` on, in tiles of `u` vectors of `f` while a whole tile fits in `k`,
/// for the block rows of `sh.rows`; leaves `r13` at the first column not done.
#[allow(clippy::useless_conversion)]
fn gather_tiles(a: &mut Asm, d: &Desc, f: &Forms, u: u32, sh: &Gather) -> Result<(), KernelError> {
    let width = (u * f.lanes) as i32;
    let vs = d.value.size() as u32;
    let (g0, g1) = sh.rows;
    let n = nregs(f);
    let (bcast, prod, alpha, beta) = (
        vreg(f, n - 4),
        vreg(f, n - 3),
        vreg(f, n - 2),
        vreg(f, n - 1),
    );
    let acc = |o: u32, v: u32| vreg(f, (o - g0) * u + v);
    let xr = |v: u32| vreg(f, (g1 - g0) * u + v);
    let [tile, tiles_done, entry, entries_done] = a.labels();
    tile_start(a, width, sh.masked, tile, tiles_done);
    for o in g0..g1 {
        for v in 0..u {
            zero(a, f, acc(o, v))?;
        }
    }
    match sh.slots {
        Option::None => {
            load_index(a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
            load_index(a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
        }
        Some(slots) => dynasm!(a.ops
            ; .arch x64
            ; mov rax, rcx
            ; mov rbx, QWORD [rdi + at::ROWS]
            ; imul rbx, rbx, slots as i32
            ; add rbx, rcx
        ),
    }
    let block_bytes = (sh.r * sh.c * vs) as i32;
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rbx ; jae =>entries_done);
    load_index(a, d.crd, gp::RBP, gp::R9, gp::RAX, 0)?;
    if sh.c > 1 {
        dynasm!(a.ops ; .arch x64 ; imul rbp, rbp, sh.c as i32);
    }
    dynasm!(a.ops ; .arch x64 ; imul rdx, rax, block_bytes);
    if f.lanes > 1 && prefetches(d, sh.r, sh.c) {
        prefetch_ahead(a, d, sh.c, 2 * (width as u32) * vs)?;
    }
    for t in 0..sh.c {
        let skip_t = a.ops.new_dynamic_label();
        // The X row of block column t: past the last column, the whole column is padding.
        dynasm!(a.ops ; .arch x64 ; lea r12, [rbp + t as i32]);
        if sh.padded && t > 0 {
            dynasm!(a.ops ; .arch x64 ; cmp r12, QWORD [rdi + at::COLS] ; jae =>skip_t);
        }
        dynasm!(a.ops ; .arch x64 ; imul r12, r15 ; add r12, r11);
        // The tile's X segment once per block column, for every block row of the group.
        for v in 0..u {
            let x = Arg::M(R12, R13, vs, i64::from(v * f.lanes * vs));
            mem_ins(a, f.load, &[R(xr(v)), x], sh.masked)?;
        }
        for o in g0..g1 {
            let skip = a.ops.new_dynamic_label();
            let v_off = ((o * sh.c + t) * vs) as i32;
            if sh.padded {
                skip_padding(a, d, gp::RSI, v_off, skip);
            }
            let val = Arg::M(R10, RDX, 1, i64::from(v_off));
            if f.lanes == 1 {
                a.ins(f.load, &[R(prod), val])?;
                f.op(a, f.mul, prod, prod, R(xr(0)))?;
                f.op(a, f.add, acc(o, 0), acc(o, 0), R(prod))?;
            } else {
                a.ins(f.broadcast, &[R(bcast), val])?;
                for v in 0..u {
                    f.op(a, f.mul, prod, bcast, R(xr(v)))?;
                    f.op(a, f.add, acc(o, v), acc(o, v), R(prod))?;
                }
            }
            dynasm!(a.ops ; .arch x64 ; =>skip);
        }
        dynasm!(a.ops ; .arch x64 ; =>skip_t);
    }
    match sh.slots {
        Option::None => dynasm!(a.ops ; .arch x64 ; inc rax),
        Some(_) => dynasm!(a.ops ; .arch x64 ; add rax, QWORD [rdi + at::ROWS]),
    }
    dynasm!(a.ops ; .arch x64 ; jmp =>entry ; =>entries_done);
    // The group's first output row in rsi, its Y row in rdx.
    if sh.outer {
        dynasm!(a.ops ; .arch x64 ; mov rsi, QWORD [rdi + at::MM_OUTER]);
        load_index(a, d.crd, gp::RSI, gp::RSI, gp::RCX, 0)?;
    } else {
        dynasm!(a.ops ; .arch x64 ; imul rsi, rcx, sh.r as i32);
        if g0 > 0 {
            dynasm!(a.ops ; .arch x64 ; add rsi, g0 as i32);
        }
    }
    dynasm!(a.ops
        ; .arch x64
        ; mov rdx, rsi
        ; imul rdx, r15
        ; add rdx, QWORD [rdi + at::Y]
    );
    a.ins(f.broadcast, &[R(alpha), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(f.broadcast, &[R(beta), Arg::M(RDI, None, 1, at::BETA)])?;
    // Y[i, c..] = alpha * sum (+ beta * Y), each product rounded on its own; rows past the
    // matrix's last (edge blocks) are never written.
    let stores_done = a.ops.new_dynamic_label();
    for o in g0..g1 {
        if sh.padded && sh.r > 1 {
            dynasm!(a.ops ; .arch x64 ; cmp rsi, QWORD [rdi + at::ROWS] ; jae =>stores_done);
        }
        for v in 0..u {
            let y_at = Arg::M(RDX, R13, vs, i64::from(v * f.lanes * vs));
            let store = a.ops.new_dynamic_label();
            let s = acc(o, v);
            f.op(a, f.mul, s, s, R(alpha))?;
            dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store);
            mem_ins(a, f.load, &[R(prod), y_at], sh.masked)?;
            f.op(a, f.mul, prod, prod, R(beta))?;
            f.op(a, f.add, s, s, R(prod))?;
            dynasm!(a.ops ; .arch x64 ; =>store);
            mem_ins(a, f.store, &[y_at, R(s)], sh.masked)?;
        }
        if o + 1 < g1 {
            dynasm!(a.ops ; .arch x64 ; inc rsi ; add rdx, r15);
        }
    }
    dynasm!(a.ops
        ; .arch x64
        ; =>stores_done
        ; add r13, width
        ; jmp =>tile
        ; =>tiles_done
    );
    Ok(())
}

/// Blocks between the one whose X rows are prefetched and the one being multiplied.
const PREFETCH_BLOCKS: i32 = 4;

/// Prefetches `bytes` from column `r13` (the tile's X segments and the next tile's) of the
/// `c` X rows of the block `PREFETCH_BLOCKS` ahead of `rax`, if the call has it: a block's
/// products are many instructions, so without this few of the X rows' cache misses
/// overlap.
#[allow(clippy::useless_conversion)]
fn prefetch_ahead(a: &mut Asm, d: &Desc, c: u32, bytes: u32) -> Result<(), KernelError> {
    let none = a.ops.new_dynamic_label();
    dynasm!(a.ops
        ; .arch x64
        ; lea rsi, [rax + PREFETCH_BLOCKS]
        ; cmp rsi, r14
        ; jae =>none
    );
    load_index(a, d.crd, gp::RSI, gp::R9, gp::RSI, 0)?;
    if c > 1 {
        dynasm!(a.ops ; .arch x64 ; imul rsi, rsi, c as i32);
    }
    dynasm!(a.ops ; .arch x64 ; imul rsi, r15 ; add rsi, r11);
    let vs = d.value.size() as u32;
    for t in 0..c {
        for line in (0..bytes).step_by(64) {
            let at = Arg::M(RSI, R13, vs, i64::from(line));
            a.ins(C::Prefetcht0_m8, &[at])?;
        }
        if t + 1 < c {
            dynasm!(a.ops ; .arch x64 ; add rsi, r15);
        }
    }
    dynasm!(a.ops ; .arch x64 ; =>none);
    Ok(())
}

/// The machine code of a scatter SpMM kernel: `r x c` blocks (1 x 1 for CSC and DCSC),
/// `outer` if the X row is the stored outer coordinate (DCSC). Adds into the partial at
/// `y` (no alpha, no beta); every X row it reads must exist (the caller keeps the last
/// block column, where it reaches past X, to itself).
pub(crate) fn spmm_scatter(
    d: &Desc,
    (r, c): (u32, u32),
    outer: bool,
) -> Result<Vec<u8>, KernelError> {
    check_block(d, r, c)?;
    let padded = d.format.padded();
    let vs = d.value.size() as i32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &SAVED);
    load_args(
        &mut a,
        &[
            (gp::R8, at::POS),
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::RCX, at::BEGIN),
            (gp::R15, at::K),
        ],
    );
    dynasm!(a.ops ; .arch x64 ; imul r15, r15, vs);
    load_tail_mask(&mut a, d)?;
    let [outer_loop, done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>outer_loop
        ; cmp rcx, QWORD [rdi + at::END]
        ; jae =>done
    );
    let group = c.min(MAX_GROUP);
    for t0 in (0..c).step_by(group as usize) {
        let t1 = (t0 + group).min(c);
        dynasm!(a.ops ; .arch x64 ; xor r13, r13);
        // A tile of u vectors holds (t1 - t0) * u X values and u sums.
        for (f, u, masked) in kinds(d, t1 - t0 + 1) {
            let sh = Scatter {
                r,
                c,
                cols: (t0, t1),
                padded,
                outer,
                masked,
            };
            scatter_tiles(&mut a, d, &f, u, &sh)?;
        }
    }
    dynasm!(a.ops ; .arch x64 ; inc rcx ; jmp =>outer_loop ; =>done);
    if d.isa != Isa::Scalar {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &SAVED)
}

/// What one scatter tile loop is generated for.
struct Scatter {
    r: u32,
    c: u32,
    /// The block columns `[t0, t1)` of the group.
    cols: (u32, u32),
    padded: bool,
    outer: bool,
    /// The tile is the last columns, under the tail mask.
    masked: bool,
}

/// Columns from `r13` on, in tiles of `u` vectors of `f` while a whole tile fits in `k`,
/// for the block columns of `sh.cols`; leaves `r13` at the first column not done.
#[allow(clippy::useless_conversion)]
fn scatter_tiles(
    a: &mut Asm,
    d: &Desc,
    f: &Forms,
    u: u32,
    sh: &Scatter,
) -> Result<(), KernelError> {
    let width = (u * f.lanes) as i32;
    let vs = d.value.size() as u32;
    let (t0, t1) = sh.cols;
    let xr = |t: u32, v: u32| vreg(f, (t - t0) * u + v);
    let acc = |v: u32| vreg(f, (t1 - t0) * u + v);
    let (bcast, prod) = (vreg(f, (t1 - t0 + 1) * u), vreg(f, (t1 - t0 + 1) * u + 1));
    let [tile, tiles_done, entry, entries_done] = a.labels();
    tile_start(a, width, sh.masked, tile, tiles_done);
    // The X rows of the group's block columns, once per tile.
    if sh.outer {
        dynasm!(a.ops ; .arch x64 ; mov r14, QWORD [rdi + at::MM_OUTER]);
        load_index(a, d.crd, gp::R14, gp::R14, gp::RCX, 0)?;
    } else {
        dynasm!(a.ops ; .arch x64 ; imul r14, rcx, sh.c as i32);
        if t0 > 0 {
            dynasm!(a.ops ; .arch x64 ; add r14, t0 as i32);
        }
    }
    dynasm!(a.ops ; .arch x64 ; imul r14, r15 ; add r14, r11);
    for t in t0..t1 {
        for v in 0..u {
            let x = Arg::M(R14, R13, vs, i64::from(v * f.lanes * vs));
            mem_ins(a, f.load, &[R(xr(t, v)), x], sh.masked)?;
        }
        if t + 1 < t1 {
            dynasm!(a.ops ; .arch x64 ; add r14, r15);
        }
    }
    load_index(a, d.pos, gp::RAX, gp::R8, gp::RCX, 0)?;
    load_index(a, d.pos, gp::RBX, gp::R8, gp::RCX, 1)?;
    let block_bytes = (sh.r * sh.c * vs) as i32;
    dynasm!(a.ops ; .arch x64 ; =>entry ; cmp rax, rbx ; jae =>entries_done);
    load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    if sh.r > 1 {
        dynasm!(a.ops ; .arch x64 ; imul r12, r12, sh.r as i32);
    }
    dynasm!(a.ops
        ; .arch x64
        ; imul r12, r15
        ; add r12, rsi
        ; imul rdx, rax, block_bytes
    );
    for o in 0..sh.r {
        for v in 0..u {
            let p_at = Arg::M(R12, R13, vs, i64::from(v * f.lanes * vs));
            mem_ins(a, f.load, &[R(acc(v)), p_at], sh.masked)?;
        }
        for t in t0..t1 {
            let skip = a.ops.new_dynamic_label();
            let v_off = ((o * sh.c + t) * vs) as i32;
            if sh.padded {
                skip_padding(a, d, gp::RBP, v_off, skip);
            }
            let val = Arg::M(R10, RDX, 1, i64::from(v_off));
            if f.lanes == 1 {
                a.ins(f.load, &[R(prod), val])?;
                f.op(a, f.mul, prod, prod, R(xr(t, 0)))?;
                f.op(a, f.add, acc(0), acc(0), R(prod))?;
            } else {
                a.ins(f.broadcast, &[R(bcast), val])?;
                for v in 0..u {
                    f.op(a, f.mul, prod, bcast, R(xr(t, v)))?;
                    f.op(a, f.add, acc(v), acc(v), R(prod))?;
                }
            }
            dynasm!(a.ops ; .arch x64 ; =>skip);
        }
        for v in 0..u {
            let p_at = Arg::M(R12, R13, vs, i64::from(v * f.lanes * vs));
            mem_ins(a, f.store, &[p_at, R(acc(v))], sh.masked)?;
        }
        if o + 1 < sh.r {
            dynasm!(a.ops ; .arch x64 ; add r12, r15);
        }
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; jmp =>entry
        ; =>entries_done
        ; add r13, width
        ; jmp =>tile
        ; =>tiles_done
    );
    Ok(())
}

/// The machine code of a COO SpMM kernel: each entry of `[begin, end)` adds
/// `val * X[j, :]` into the partial's row `i`, coordinates interleaved (`i0, j0, i1, ...` in
/// `crd`) or in two arrays (`crd` and `outer`, `soa`). The caller adds the partials.
#[allow(clippy::useless_conversion)]
pub(crate) fn spmm_coo(d: &Desc, soa: bool) -> Result<Vec<u8>, KernelError> {
    let vs = d.value.size() as i32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &SAVED);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R8, at::MM_OUTER),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::RSI, at::Y),
            (gp::R15, at::K),
        ],
    );
    dynasm!(a.ops ; .arch x64 ; imul r15, r15, vs ; xor r13, r13);
    load_tail_mask(&mut a, d)?;
    for (f, u, masked) in kinds(d, 1) {
        coo_tiles(&mut a, d, &f, (u, masked), soa)?;
    }
    if d.isa != Isa::Scalar {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &SAVED)
}

/// Columns from `r13` on, in tiles of `u` vectors of `f` while a whole tile fits in `k`:
/// every entry once per tile.
#[allow(clippy::useless_conversion)]
fn coo_tiles(
    a: &mut Asm,
    d: &Desc,
    f: &Forms,
    (u, masked): (u32, bool),
    soa: bool,
) -> Result<(), KernelError> {
    let width = (u * f.lanes) as i32;
    let vs = d.value.size() as u32;
    let (bcast, prod) = (vreg(f, u), vreg(f, u + 1));
    let [tile, tiles_done, entry, entries_done] = a.labels();
    tile_start(a, width, masked, tile, tiles_done);
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, QWORD [rdi + at::BEGIN]
        ; =>entry
        ; cmp rax, QWORD [rdi + at::END]
        ; jae =>entries_done
    );
    // r12: the partial's row i, r14: X's row j.
    if soa {
        load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
        load_index(a, d.crd, gp::R14, gp::R8, gp::RAX, 0)?;
    } else {
        dynasm!(a.ops ; .arch x64 ; lea rbx, [rax + rax]);
        load_index(a, d.crd, gp::R12, gp::R9, gp::RBX, 0)?;
        load_index(a, d.crd, gp::R14, gp::R9, gp::RBX, 1)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; imul r12, r15
        ; add r12, rsi
        ; imul r14, r15
        ; add r14, r11
    );
    let val = Arg::M(R10, RAX, vs, 0);
    if f.lanes > 1 {
        a.ins(f.broadcast, &[R(bcast), val])?;
    }
    for v in 0..u {
        let off = i64::from(v * f.lanes * vs);
        let (p_at, x_at) = (Arg::M(R12, R13, vs, off), Arg::M(R14, R13, vs, off));
        let s = vreg(f, v);
        if f.lanes == 1 {
            a.ins(f.load, &[R(prod), val])?;
            f.op(a, f.mul, prod, prod, x_at)?;
        } else {
            mem_ins(a, f.mul, &[R(prod), R(bcast), x_at], masked)?;
        }
        mem_ins(a, f.load, &[R(s), p_at], masked)?;
        f.op(a, f.add, s, s, R(prod))?;
        mem_ins(a, f.store, &[p_at, R(s)], masked)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; inc rax
        ; jmp =>entry
        ; =>entries_done
        ; add r13, width
        ; jmp =>tile
        ; =>tiles_done
    );
    Ok(())
}

/// The machine code of an n:m SpMM kernel: a gather whose row `i` has the `stride` slots
/// from `i * stride` (an argument: `n` per group of `m` columns), each slot's coordinate an
/// offset inside its group (2-bit packed, four per byte, or 8 to 64 bits). Padding slots
/// (value 0) never multiply, and slots past the last column (the last group's padding)
/// never read X.
#[allow(clippy::useless_conversion)]
pub(crate) fn spmm_nm(d: &Desc, n: u32, m: u32) -> Result<Vec<u8>, KernelError> {
    if n == 0 || m == 0 || i32::try_from(m).is_err() || i32::try_from(n).is_err() {
        return Err(KernelError::Unsupported(format!(
            "{d}: groups out of range"
        )));
    }
    let vs = d.value.size() as i32;
    let mut a = Asm::new(d.isa);
    enter(&mut a, &SAVED);
    load_args(
        &mut a,
        &[
            (gp::R9, at::CRD),
            (gp::R10, at::VAL),
            (gp::R11, at::X),
            (gp::R8, at::BEGIN),
            (gp::R15, at::K),
        ],
    );
    dynasm!(a.ops ; .arch x64 ; imul r15, r15, vs);
    load_tail_mask(&mut a, d)?;
    let [row_loop, done] = a.labels();
    dynasm!(a.ops
        ; .arch x64
        ; =>row_loop
        ; cmp r8, QWORD [rdi + at::END]
        ; jae =>done
        ; xor r13, r13
    );
    for (f, u, masked) in kinds(d, 2) {
        nm_tiles(&mut a, d, &f, (u, masked), (n, m))?;
    }
    dynasm!(a.ops ; .arch x64 ; inc r8 ; jmp =>row_loop ; =>done);
    if d.isa != Isa::Scalar {
        a.ins(C::VEX_Vzeroupper, &[])?;
    }
    leave(a, &SAVED)
}

/// Columns from `r13` on, in tiles of `u` vectors of `f` while a whole tile fits in `k`,
/// for the row `r8`: `rax` the slot, `rbx` the row's end slot, `r14` the slot inside its
/// group, `rdx` the group's first column, `r12` the offset, then the column, then its X
/// row; `rcx` the shift of packed offsets, `rsi` scratch.
#[allow(clippy::useless_conversion)]
fn nm_tiles(
    a: &mut Asm,
    d: &Desc,
    f: &Forms,
    (u, masked): (u32, bool),
    (n, m): (u32, u32),
) -> Result<(), KernelError> {
    let width = (u * f.lanes) as i32;
    let vs = d.value.size() as u32;
    let nreg = nregs(f);
    let (bcast, prod, alpha, beta) = (
        vreg(f, nreg - 4),
        vreg(f, nreg - 3),
        vreg(f, nreg - 2),
        vreg(f, nreg - 1),
    );
    let [tile, tiles_done, slot, slots_done, skip, same_group] = a.labels();
    tile_start(a, width, masked, tile, tiles_done);
    for v in 0..u {
        zero(a, f, vreg(f, v))?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; mov rax, r8
        ; imul rax, QWORD [rdi + at::MM_STRIDE]
        ; mov rbx, rax
        ; add rbx, QWORD [rdi + at::MM_STRIDE]
        ; xor r14, r14
        ; xor rdx, rdx
        ; =>slot
        ; cmp rax, rbx
        ; jae =>slots_done
    );
    // Padding: a zero of either sign, tested on its bits.
    if d.value == Real::F64 {
        dynasm!(a.ops ; .arch x64 ; mov rsi, QWORD [r10 + rax * 8] ; add rsi, rsi ; jz =>skip);
    } else {
        dynasm!(a.ops ; .arch x64 ; mov esi, DWORD [r10 + rax * 4] ; add esi, esi ; jz =>skip);
    }
    if d.crd == sptk_tensor::IndexWidth::W2 {
        // offset = (crd[slot / 4] >> (2 * (slot % 4))) & 3
        dynasm!(a.ops
            ; .arch x64
            ; mov r12, rax
            ; shr r12, 2
            ; movzx r12d, BYTE [r9 + r12]
            ; mov ecx, eax
            ; and ecx, 3
            ; add ecx, ecx
            ; shr r12d, cl
            ; and r12d, 3
        );
    } else {
        load_index(a, d.crd, gp::R12, gp::R9, gp::RAX, 0)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; add r12, rdx
        ; cmp r12, QWORD [rdi + at::COLS]
        ; jae =>skip
        ; imul r12, r15
        ; add r12, r11
    );
    let val = Arg::M(R10, RAX, vs, 0);
    if f.lanes == 1 {
        a.ins(f.load, &[R(prod), val])?;
        f.op(a, f.mul, prod, prod, Arg::M(R12, R13, vs, 0))?;
        f.op(a, f.add, vreg(f, 0), vreg(f, 0), R(prod))?;
    } else {
        a.ins(f.broadcast, &[R(bcast), val])?;
        for v in 0..u {
            let x = Arg::M(R12, R13, vs, i64::from(v * f.lanes * vs));
            mem_ins(a, f.mul, &[R(prod), R(bcast), x], masked)?;
            f.op(a, f.add, vreg(f, v), vreg(f, v), R(prod))?;
        }
    }
    dynasm!(a.ops
        ; .arch x64
        ; =>skip
        ; inc rax
        ; inc r14
        ; cmp r14, n as i32
        ; jb =>same_group
        ; xor r14, r14
        ; add rdx, m as i32
        ; =>same_group
        ; jmp =>slot
        ; =>slots_done
        ; mov rdx, r8
        ; imul rdx, r15
        ; add rdx, QWORD [rdi + at::Y]
    );
    a.ins(f.broadcast, &[R(alpha), Arg::M(RDI, None, 1, at::ALPHA)])?;
    a.ins(f.broadcast, &[R(beta), Arg::M(RDI, None, 1, at::BETA)])?;
    for v in 0..u {
        let y_at = Arg::M(RDX, R13, vs, i64::from(v * f.lanes * vs));
        let store = a.ops.new_dynamic_label();
        let s = vreg(f, v);
        f.op(a, f.mul, s, s, R(alpha))?;
        dynasm!(a.ops ; .arch x64 ; cmp QWORD [rdi + at::BETA_ZERO], 0 ; jne =>store);
        mem_ins(a, f.load, &[R(prod), y_at], masked)?;
        f.op(a, f.mul, prod, prod, R(beta))?;
        f.op(a, f.add, s, s, R(prod))?;
        dynasm!(a.ops ; .arch x64 ; =>store);
        mem_ins(a, f.store, &[y_at, R(s)], masked)?;
    }
    dynasm!(a.ops
        ; .arch x64
        ; add r13, width
        ; jmp =>tile
        ; =>tiles_done
    );
    Ok(())
}

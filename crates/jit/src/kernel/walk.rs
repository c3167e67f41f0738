//! How a kernel walks its matrix: which loop its code runs (a dot product per row, a
//! scatter per column, per entry, per block, ...), chosen from the description alone. The
//! generator picks its emitter by it and the run code its chunks and partials.

use sptk_tensor::{IndexVec, Tensor};

use crate::desc::{Desc, Format, Op};
use crate::KernelError;

/// How a generated SpMV walks the matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// A dot product per outer coordinate (CSR x, CSC^T x); `true` if the outer level is
    /// compressed (DCSR, DCSC).
    Gather(bool),
    /// Products scattered into y per outer coordinate (CSR^T x, CSC x).
    Scatter(bool),
    /// Products per entry (COO); `true` for coordinates in two arrays (SoA).
    Entries(bool),
    /// Dot products per block row (BSR x, BSC^T x): `p` outputs and `q` products per
    /// block, value `(o, t)` at `o * so + t * st` inside a block.
    Blocks { p: u32, q: u32, so: u32, st: u32 },
    /// ELL rows, vectorized across rows; K slots per row.
    Ell(u32),
    /// n:m rows: n slots per group of m columns.
    Nm(u32, u32),
    /// ELL^T and n:m^T: each row's slots scatter `val * x[r]` into partials.
    RowScatter,
    /// Block products scattered into partials (BSR^T x, BSC x): `p` outputs and `q` x
    /// values per block, value `(o, t)` at `o * so + t * st` inside a block.
    BlockScatter { p: u32, q: u32, so: u32, st: u32 },
}

/// The arrays of a walk: positions, coordinates and outer coordinates.
pub(super) type Operands<'a> = (&'a IndexVec, &'a IndexVec, Option<&'a IndexVec>);

/// Where a walk finds its arrays in a tensor: (pos, crd, outer) by [`Arrays::of`].
#[derive(Clone, Copy)]
pub(super) enum Arrays {
    /// ELL and n:m slots: coordinates at level 2, no positions (`pos` stands for the
    /// coordinates there and is never read).
    Slots,
    /// Positions and coordinates at `level`, outer coordinates at `outer`. COO reads its
    /// coordinates from `crd` (and `outer`, the second array of SoA); its positions only
    /// size it.
    Levels { level: usize, outer: Option<usize> },
}

impl Arrays {
    /// The arrays of `a`: (pos, crd, outer).
    pub(super) fn of<'a>(self, a: &'a Tensor, desc: &Desc) -> Result<Operands<'a>, KernelError> {
        let missing = || KernelError::Unsupported(format!("{desc}: arrays missing"));
        let (level, outer) = match self {
            Arrays::Slots => {
                let crd = a.crd(2).ok_or_else(missing)?;
                return Ok((crd, crd, None));
            }
            Arrays::Levels { level, outer } => (level, outer),
        };
        Ok((
            a.pos(level).ok_or_else(missing)?,
            a.crd(level).ok_or_else(missing)?,
            match outer {
                Some(l) => Some(a.crd(l).ok_or_else(missing)?),
                None => None,
            },
        ))
    }
}

impl Walk {
    /// Where this walk's kernel finds its arrays.
    pub(super) fn arrays(self) -> Arrays {
        match self {
            Walk::Ell(_) | Walk::Nm(..) | Walk::RowScatter => Arrays::Slots,
            Walk::Blocks { .. } | Walk::BlockScatter { .. } => Arrays::Levels {
                level: 1,
                outer: None,
            },
            Walk::Gather(c) | Walk::Scatter(c) => Arrays::Levels {
                level: 1,
                outer: c.then_some(0),
            },
            Walk::Entries(soa) => Arrays::Levels {
                level: 0,
                outer: soa.then_some(1),
            },
        }
    }
}

/// How the SpMV kernel of `desc` walks its matrix, or `None` for an operation other than
/// SpMV.
pub(super) fn walk(desc: &Desc) -> Option<Walk> {
    Some(match (desc.op, desc.format) {
        (Op::Spmv, Format::Csr) | (Op::SpmvT, Format::Csc) => Walk::Gather(false),
        (Op::Spmv, Format::Dcsr) | (Op::SpmvT, Format::Dcsc) => Walk::Gather(true),
        (Op::SpmvT, Format::Csr) | (Op::Spmv, Format::Csc) => Walk::Scatter(false),
        (Op::SpmvT, Format::Dcsr) | (Op::Spmv, Format::Dcsc) => Walk::Scatter(true),
        (Op::Spmv | Op::SpmvT, Format::Coo) => Walk::Entries(false),
        (Op::Spmv | Op::SpmvT, Format::CooSoa) => Walk::Entries(true),
        (Op::Spmv, Format::Bsr(r, c)) => Walk::Blocks {
            p: r,
            q: c,
            so: c,
            st: 1,
        },
        (Op::Spmv, Format::Ell(k)) => Walk::Ell(k),
        (Op::Spmv, Format::Nm(n, m)) => Walk::Nm(n, m),
        (Op::SpmvT, Format::Ell(_) | Format::Nm(..)) => Walk::RowScatter,
        (Op::SpmvT, Format::Bsr(r, c)) => Walk::BlockScatter {
            p: c,
            q: r,
            so: 1,
            st: c,
        },
        (Op::Spmv, Format::Bsc(r, c)) => Walk::BlockScatter {
            p: r,
            q: c,
            so: c,
            st: 1,
        },
        (Op::SpmvT, Format::Bsc(r, c)) => Walk::Blocks {
            p: c,
            q: r,
            so: 1,
            st: c,
        },
        _ => return None,
    })
}

/// How a generated SpMM walks the matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MmWalk {
    /// Sums per output row in registers, in the reference's order: CSR and BSR (`r x c`
    /// blocks; 1 x 1 for CSR) and DCSR (1 x 1, `outer`: the output row is the stored outer
    /// coordinate).
    Gather { r: u32, c: u32, outer: bool },
    /// Products scattered into 8 partials: CSC and DCSC (1 x 1, `outer` for DCSC), BSC.
    Scatter { r: u32, c: u32, outer: bool },
    /// ELL rows of K slots, a gather per row.
    Ell(u32),
    /// n:m rows: n slots per group of m columns, a gather per row.
    Nm(u32, u32),
    /// COO entries scattered into 8 partials; `soa` for coordinates in two arrays.
    Entries { soa: bool },
}

impl MmWalk {
    /// Where this walk's kernel finds its arrays.
    pub(super) fn arrays(self) -> Arrays {
        match self {
            MmWalk::Ell(_) | MmWalk::Nm(..) => Arrays::Slots,
            MmWalk::Entries { soa } => Arrays::Levels {
                level: 0,
                outer: soa.then_some(1),
            },
            MmWalk::Gather { outer, .. } | MmWalk::Scatter { outer, .. } => Arrays::Levels {
                level: 1,
                outer: outer.then_some(0),
            },
        }
    }
}

/// How the SpMM kernel of `desc` walks its matrix, or `None` for an operation other than
/// SpMM.
pub(super) fn mm_walk(desc: &Desc) -> Option<MmWalk> {
    if desc.op != Op::Spmm {
        return None;
    }
    Some(match desc.format {
        Format::Csr => MmWalk::Gather {
            r: 1,
            c: 1,
            outer: false,
        },
        Format::Dcsr => MmWalk::Gather {
            r: 1,
            c: 1,
            outer: true,
        },
        Format::Bsr(r, c) => MmWalk::Gather { r, c, outer: false },
        Format::Csc => MmWalk::Scatter {
            r: 1,
            c: 1,
            outer: false,
        },
        Format::Dcsc => MmWalk::Scatter {
            r: 1,
            c: 1,
            outer: true,
        },
        Format::Bsc(r, c) => MmWalk::Scatter { r, c, outer: false },
        Format::Ell(k) => MmWalk::Ell(k),
        Format::Nm(n, m) => MmWalk::Nm(n, m),
        Format::Coo => MmWalk::Entries { soa: false },
        Format::CooSoa => MmWalk::Entries { soa: true },
    })
}

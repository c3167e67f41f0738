//! Structure operations on a matrix of any encoding, as SciPy's `tril` / `triu`, `A.T`,
//! `setdiag(0)` + `eliminate_zeros` and GraphBLAS's pattern give them: keep a triangle
//! (with a diagonal offset) or what lies off the diagonal, set every stored value to one,
//! transpose. Each result is in the operand's encoding (its levels; widths the narrowest
//! that hold the result, at least the options' [`crate::AutoWidths::floor`]) and keeps its
//! labels (swapped with its dimensions by [`transpose`]).
//!
//! Each walks the operand's entries once (padding skipped: in padded formats a zero value
//! is no entry) into a coordinate list of what it keeps, which it then converts: the
//! operand, that list and the result are held at once.

use crate::convert::{convert, ConvertOptions};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::tensor::Tensor;
use crate::value::{Scalar, Value, ValueVecAccess};
use crate::with_values;
use crate::AutoWidths;
use sptk_encoding::Target;

/// Which entries of a matrix [`select`] keeps, by their row `i` and column `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `j - i <= k`: the lower triangle (SciPy's `tril(A, k)`; `k = -1` leaves out the
    /// diagonal).
    Lower(i64),
    /// `j - i >= k`: the upper triangle (SciPy's `triu(A, k)`).
    Upper(i64),
    /// `i != j`: everything but the diagonal (a graph without self-loops).
    OffDiagonal,
}

impl Part {
    /// True if the entry at row `i`, column `j` is kept.
    pub fn keeps(self, i: u64, j: u64) -> bool {
        // Dimensions are below 2^64, so the difference fits in i128 whatever k is.
        let d = i128::from(j) - i128::from(i);
        match self {
            Part::Lower(k) => d <= i128::from(k),
            Part::Upper(k) => d >= i128::from(k),
            Part::OffDiagonal => d != 0,
        }
    }
}

/// The entries of the matrix `a` that `part` keeps, in `a`'s encoding.
///
/// # Errors
/// `a` is not a matrix, or the conversion is refused (its memory limit).
pub fn select(a: &Tensor, part: Part, opts: &ConvertOptions) -> Result<Tensor, ConvertError> {
    matrix(a)?;
    rebuild(a, false, opts, |c| part.keeps(c[0], c[1]), None)
}

/// `a` with every stored value one (its type's one; `true` for booleans), after its
/// duplicates are summed and its padding skipped: the pattern of a graph.
///
/// # Errors
/// The conversion is refused (its memory limit).
pub fn pattern(a: &Tensor, opts: &ConvertOptions) -> Result<Tensor, ConvertError> {
    rebuild(a, false, opts, |_| true, Some(Scalar::Int(1)))
}

/// `a^T`, in `a`'s encoding (a CSR stays CSR: its rows are `a`'s columns).
///
/// # Errors
/// `a` is not a matrix, or the conversion is refused (its memory limit).
pub fn transpose(a: &Tensor, opts: &ConvertOptions) -> Result<Tensor, ConvertError> {
    matrix(a)?;
    rebuild(a, true, opts, |_| true, None)
}

/// `Ok` if `a` is a matrix, else the rank error.
fn matrix(a: &Tensor) -> Result<(), ConvertError> {
    if a.dim_sizes().len() == 2 {
        return Ok(());
    }
    Err(ConvertError::Rank {
        encoding: 2,
        tensor: a.dim_sizes().len(),
    })
}

/// `a`'s entries that `keep` keeps (by their coordinates), swapped if `swap`, with every
/// value `one` where given, converted into `a`'s encoding.
fn rebuild(
    a: &Tensor,
    swap: bool,
    opts: &ConvertOptions,
    keep: impl Fn(&[u64]) -> bool,
    one: Option<Scalar>,
) -> Result<Tensor, ConvertError> {
    let mut dims = a.dim_sizes().to_vec();
    if swap {
        dims.swap(0, 1);
    }
    let mut kept = Entries::new(dims, a.value_type());
    let mut failed = None;
    a.for_each_entry_chunk(1 << 16, &mut |coords, values| {
        with_values!(&values, v => {
            failed = push_kept(&mut kept, &coords, v, swap, &keep, one).err();
        });
        failed.is_none()
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let target = Target::Fixed(a.encoding().clone());
    let opts = ConvertOptions {
        auto_widths: AutoWidths {
            pos: true,
            crd: true,
            floor: opts.auto_widths.floor,
        },
        ..opts.clone()
    };
    let mut out = convert(&kept, &target, &opts)?.tensor;
    for (d, labels) in a.shared_labels().into_iter().enumerate() {
        let to = if swap && d < 2 { 1 - d } else { d };
        out.set_labels(to, labels);
    }
    Ok(out)
}

/// Appends to `kept` the entries of one chunk (coordinates per dimension, values `v`)
/// that `keep` keeps.
fn push_kept<V: Value + ValueVecAccess>(
    kept: &mut Entries,
    coords: &[Vec<u64>],
    v: &[V],
    swap: bool,
    keep: &impl Fn(&[u64]) -> bool,
    one: Option<Scalar>,
) -> Result<(), ConvertError> {
    let one = match one {
        Some(s) => Some(
            V::from_scalar(s)
                .or_else(|| V::from_scalar(Scalar::Bool(true)))
                .ok_or_else(|| {
                    ConvertError::Invalid(format!("{} values have no one", V::TYPE.name()))
                })?,
        ),
        None => None,
    };
    let mut c = vec![0u64; coords.len()];
    for (q, &value) in v.iter().enumerate() {
        for (d, col) in coords.iter().enumerate() {
            c[d] = col[q];
        }
        if !keep(&c) {
            continue;
        }
        if swap {
            c.swap(0, 1);
        }
        kept.push(&c, one.unwrap_or(value))
            .map_err(|e| ConvertError::Invalid(format!("internal: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ValueVec;
    use sptk_encoding::resolve_target;

    fn matrix(preset: &str) -> Tensor {
        // 4 x 5: every (i, j) with i + j odd or i == j, value 10 i + j + 1.
        let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..4u64 {
            for j in 0..5u64 {
                if (i + j) % 2 == 1 || i == j {
                    r.push(i);
                    c.push(j);
                    v.push((10 * i + j + 1) as f64);
                }
            }
        }
        let e = Entries::from_parts(vec![4, 5], vec![r, c], ValueVec::F64(v.into())).unwrap();
        let t = resolve_target(preset, 2).unwrap();
        convert(&e, &t, &ConvertOptions::default()).unwrap().tensor
    }

    /// (row, column, value) of every entry.
    fn triples(t: &Tensor) -> Vec<(u64, u64, f64)> {
        let e = t.to_entries();
        let ValueVec::F64(v) = e.values() else {
            panic!("f64")
        };
        let (r, c) = (e.coords(0).to_u64_vec(), e.coords(1).to_u64_vec());
        let mut out: Vec<_> = (0..e.len()).map(|k| (r[k], c[k], v[k])).collect();
        out.sort_by_key(|t| (t.0, t.1));
        out
    }

    #[test]
    fn parts_keep_what_scipy_keeps_in_every_encoding() {
        let all = triples(&matrix("CSR"));
        for preset in ["CSR", "CSC", "DCSR", "COO", "BSR:2x2", "ELL"] {
            let a = matrix(preset);
            for part in [
                Part::Lower(0),
                Part::Lower(-1),
                Part::Lower(2),
                Part::Upper(0),
                Part::Upper(1),
                Part::Upper(-2),
                Part::OffDiagonal,
            ] {
                let s = select(&a, part, &ConvertOptions::default()).unwrap();
                assert_eq!(
                    s.encoding().levels,
                    a.encoding().levels,
                    "{preset} {part:?}"
                );
                let want: Vec<_> = all
                    .iter()
                    .copied()
                    .filter(|t| part.keeps(t.0, t.1))
                    .collect();
                assert_eq!(triples(&s), want, "{preset} {part:?}");
            }
        }
        // Offsets and coordinates at their extremes do not overflow.
        assert!(Part::Lower(i64::MIN).keeps(u64::MAX, 0));
        assert!(Part::Upper(i64::MAX).keeps(0, u64::MAX) && !Part::Upper(i64::MAX).keeps(0, 5));
    }

    #[test]
    fn the_transpose_and_the_pattern() {
        for preset in ["CSR", "DCSC", "COO", "BSR:2x2"] {
            let a = matrix(preset);
            let t = transpose(&a, &ConvertOptions::default()).unwrap();
            assert_eq!(t.dim_sizes(), &[5, 4]);
            let mut want: Vec<_> = triples(&a).into_iter().map(|(i, j, v)| (j, i, v)).collect();
            want.sort_by_key(|t| (t.0, t.1));
            assert_eq!(triples(&t), want, "{preset}");
            let p = pattern(&a, &ConvertOptions::default()).unwrap();
            assert!(triples(&p).iter().all(|t| t.2 == 1.0), "{preset}");
            assert_eq!(triples(&p).len(), triples(&a).len());
        }
        let three = Entries::new(vec![2, 2, 2], crate::ValueType::F64);
        let coo = resolve_target("COO", 3).unwrap();
        let t = convert(&three, &coo, &ConvertOptions::default())
            .unwrap()
            .tensor;
        assert!(transpose(&t, &ConvertOptions::default()).is_err());
        assert!(pattern(&t, &ConvertOptions::default()).is_ok());
    }
}

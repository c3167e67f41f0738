//! The oracle of the sparse products: each operand as a map of rows, each row a map from
//! column to value, and C's row `i` a map filled by walking A's row `i` in increasing `k`
//! and B's row `k` in increasing `j`. It shares with the fast path only the meaning of
//! one semiring on one pair of values (`semiring.rs`) and C's widths and encoding
//! (`ewise`'s output); nothing of the planner, the accumulators or the forms.
//!
//! The rules, in order:
//! 1. An operand's entries are its stored entries (padding left out), duplicates (COO)
//!    summed in stored order in the stored type, as the planner sums them; with
//!    `transpose_b`, B's entry `(r, c)` is `(c, r)`.
//! 2. `C(i, j)` is the `(+)`-sum of `a_ik (x) b_kj` over the `k` where both store, from the
//!    first product, in increasing `k`.
//! 3. A mask keeps the `(i, j)` M stores (complement: those it does not store).
//! 4. `drop_zeros` removes the entries whose value is zero.

use std::collections::{BTreeMap, BTreeSet};

use sptk_encoding::Target;
use sptk_tensor::{convert, ConvertOptions, Entries, Tensor, Value, ValueVec, ValueVecAccess};

use super::semiring::{with_ring, Ring, RingJob};
use super::{shape, Mask, Options, Semiring, SpgemmError};

type Key = (u64, u64);

/// The entries of `t` keyed `(row, column)` (swapped with `swap`), in key order,
/// duplicates summed in stored order, and their values.
fn entries(t: &Tensor, swap: bool) -> Result<(Vec<Key>, ValueVec), SpgemmError> {
    fn go<V: Value + ValueVecAccess>(
        e: &Entries,
        vals: &[V],
        swap: bool,
    ) -> Result<(Vec<Key>, ValueVec), SpgemmError> {
        let mut typed: BTreeMap<Key, V> = BTreeMap::new();
        for (q, &v) in vals.iter().enumerate() {
            let (r, c) = (e.coord(q, 0), e.coord(q, 1));
            let key = if swap { (c, r) } else { (r, c) };
            match typed.get_mut(&key) {
                Some(acc) => {
                    *acc = acc.accumulate(v).ok_or_else(|| {
                        SpgemmError::Convert(format!("duplicates at {key:?} overflow their sum"))
                    })?
                }
                None => {
                    typed.insert(key, v);
                }
            }
        }
        let (keys, vals): (Vec<Key>, Vec<V>) = typed.into_iter().unzip();
        Ok((keys, V::wrap(vals)))
    }
    if t.dim_sizes().len() != 2 {
        return Err(SpgemmError::Shape(format!("{:?}", t.dim_sizes())));
    }
    let e = t.to_entries();
    sptk_tensor::with_values!(e.values(), v => go(&e, v, swap))
}

/// `C = A (+).(x) B` (or `C<M>`) by the rules of the module text, in CSR at the widths
/// the fast path gives (before `Options::common.to`, which the reference leaves out).
///
/// # Errors
/// As [`super::spgemm`].
pub fn spgemm(
    a: &Tensor,
    b: &Tensor,
    semiring: Semiring,
    mask: Option<Mask<'_>>,
    opts: &Options,
) -> Result<Tensor, SpgemmError> {
    let (m, _, n) = shape(a, b, mask.as_ref(), opts.transpose_b)?;
    let (ak, av) = entries(a, false)?;
    let (bk, bv) = entries(b, opts.transpose_b)?;
    let mask = match mask {
        Some(mk) => Some((
            entries(mk.tensor, false)?.0.into_iter().collect(),
            mk.complement,
        )),
        None => None,
    };
    let job = Job {
        a: &ak,
        b: &bk,
        mask,
        dims: [m, n],
        opts,
    };
    with_ring(job, semiring, &[&av, &bv])?
}

struct Job<'k> {
    a: &'k [Key],
    b: &'k [Key],
    mask: Option<(BTreeSet<Key>, bool)>,
    dims: [u64; 2],
    opts: &'k Options,
}

impl RingJob for Job<'_> {
    type Out = Result<Tensor, SpgemmError>;
    fn call<R: Ring>(self, values: &[&[R::In]]) -> Self::Out {
        let rows = |keys: &[Key], vals: Option<&&[R::In]>| {
            let mut out: BTreeMap<u64, Vec<(u64, R::In)>> = BTreeMap::new();
            for (&(r, c), &v) in keys.iter().zip(vals.copied().unwrap_or_default()) {
                out.entry(r).or_default().push((c, v));
            }
            out
        };
        let (a, b) = (rows(self.a, values.first()), rows(self.b, values.get(1)));
        let admit = |key: &Key| match &self.mask {
            None => true,
            Some((set, complement)) => set.contains(key) != *complement,
        };
        let (mut is, mut js, mut vs) = (Vec::new(), Vec::new(), Vec::<R::Out>::new());
        for (&i, a_row) in &a {
            let mut acc: BTreeMap<u64, R::Out> = BTreeMap::new();
            for &(k, x) in a_row {
                for &(j, y) in b.get(&k).map(Vec::as_slice).unwrap_or_default() {
                    if !admit(&(i, j)) {
                        continue;
                    }
                    let t = R::times(x, y);
                    acc.entry(j)
                        .and_modify(|s| *s = R::plus(*s, t))
                        .or_insert(t);
                }
            }
            for (j, v) in acc {
                if self.opts.common.drop_zeros && v.is_zero() {
                    continue;
                }
                is.push(i);
                js.push(j);
                vs.push(v);
            }
        }
        let e = Entries::from_parts(self.dims.to_vec(), vec![is, js], R::Out::wrap(vs))
            .map_err(|e| SpgemmError::Convert(e.to_string()))?;
        let csr = Target::Fixed(sptk_encoding::csr());
        let convert_opts = ConvertOptions {
            auto_widths: sptk_tensor::AutoWidths {
                pos: true,
                crd: true,
                floor: 0,
            },
            ..ConvertOptions::default()
        };
        convert(&e, &csr, &convert_opts)
            .map(|c| c.tensor)
            .map_err(|e| SpgemmError::Convert(e.to_string()))
    }
}

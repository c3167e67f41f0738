//! Operands whose dimensions carry labels (node ids, gene names, barcodes) meet by label,
//! as pandas aligns two frames by their index: coordinate `i` of A and coordinate `i` of B
//! are the same thing only where their labels say so. Two relabelled edge lists of one
//! graph read in a different order number its nodes differently; added by position they
//! would give a different graph, with no word.
//!
//! [`Align::Labels`] (the default): on each dimension where both operands carry labels,
//! the result's coordinates are the union of the two lists, A's labels first in A's order,
//! then B's labels A lacks in B's order; B's coordinates are renumbered into it (and A's
//! dimension grows where B brings new labels), and the result carries the union. Where the
//! lists are equal nothing is copied. A dimension labelled in one operand only, or a list
//! that names one label twice, cannot be aligned: refused, naming the dimension.
//! [`Align::Position`] combines coordinates by position, as without labels, and the result
//! keeps A's labels.

use std::borrow::Cow;
use std::collections::HashMap;

use sptk_encoding::Target;
use sptk_tensor::{convert, ConvertOptions, Entries, Labels, Tensor};

use super::EwiseError;

/// How an element-wise operation meets operands whose dimensions carry labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Align {
    /// By label (the module text): the result's coordinates are the union of both lists.
    #[default]
    Labels,
    /// By position, whatever the labels say; the result keeps A's labels.
    Position,
}

/// The operands as the operation sees them, and the labels its result carries (one entry
/// per dimension).
pub(crate) struct Aligned<'t> {
    pub a: Cow<'t, Tensor>,
    pub b: Cow<'t, Tensor>,
    pub labels: Vec<Option<Labels>>,
}

/// `a` and `b` aligned as `align` says (see the module text).
///
/// # Errors
/// A dimension labelled in one operand only, a list naming one label twice, or memory for
/// an operand renumbered.
pub(crate) fn align<'t>(
    a: &'t Tensor,
    b: &'t Tensor,
    align: Align,
) -> Result<Aligned<'t>, EwiseError> {
    let rank = a.dim_sizes().len();
    let same = (0..rank).all(|d| a.labels(d) == b.labels(d));
    if align == Align::Position || same || a.dim_sizes().len() != b.dim_sizes().len() {
        // (Shapes that differ are refused by the operation itself, with its message.)
        let labels = (0..rank).map(|d| a.labels(d).cloned()).collect();
        return Ok(Aligned {
            a: Cow::Borrowed(a),
            b: Cow::Borrowed(b),
            labels,
        });
    }
    let mut dims_a = a.dim_sizes().to_vec();
    let mut dims_b = b.dim_sizes().to_vec();
    let mut renumber: Vec<Option<Vec<u64>>> = vec![None; rank];
    let mut labels = Vec::with_capacity(rank);
    for d in 0..rank {
        match (a.labels(d), b.labels(d)) {
            (None, None) => labels.push(None),
            (Some(la), Some(lb)) if la == lb => labels.push(Some(la.clone())),
            (Some(la), Some(lb)) => {
                let (union, map) = union_of(la, lb, d)?;
                dims_a[d] = union.len() as u64;
                dims_b[d] = union.len() as u64;
                renumber[d] = Some(map);
                labels.push(Some(union));
            }
            (la, _) => {
                let (has, lacks) = if la.is_some() { ("A", "B") } else { ("B", "A") };
                return Err(EwiseError::Shape(format!(
                    "dimension {d}: {has}'s coordinates carry labels and {lacks}'s do not, so \
                     they cannot be aligned by label (read {lacks} with the same labels, \
                     sparse-convert --labels-from, or combine by position: --align position)"
                )));
            }
        }
    }
    let a = match dims_a == a.dim_sizes() {
        true => Cow::Borrowed(a),
        false => Cow::Owned(rebuilt(a, &dims_a, &vec![None; rank])?),
    };
    let b = Cow::Owned(rebuilt(b, &dims_b, &renumber)?);
    Ok(Aligned { a, b, labels })
}

/// The union of `a` and `b` (a's labels first, then b's new ones in b's order) and, for each
/// of b's coordinates, its coordinate in the union.
fn union_of(a: &Labels, b: &Labels, d: usize) -> Result<(Labels, Vec<u64>), EwiseError> {
    let mut at: HashMap<&str, u64> = HashMap::with_capacity(a.len() + b.len());
    let twice = |who: &str, label: &str| {
        EwiseError::Shape(format!(
            "dimension {d}: {who}'s labels name '{label}' twice, so they cannot be aligned by \
             label (--align position combines by position)"
        ))
    };
    let mut union: Vec<&str> = Vec::with_capacity(a.len());
    for label in a.iter() {
        if at.insert(label, union.len() as u64).is_some() {
            return Err(twice("A", label));
        }
        union.push(label);
    }
    let mut seen_in_b: HashMap<&str, ()> = HashMap::with_capacity(b.len());
    let mut map = Vec::with_capacity(b.len());
    for label in b.iter() {
        if seen_in_b.insert(label, ()).is_some() {
            return Err(twice("B", label));
        }
        let next = union.len() as u64;
        let i = *at.entry(label).or_insert_with(|| {
            union.push(label);
            next
        });
        map.push(i);
    }
    Ok((Labels::from_strings(union), map))
}

/// `t` with dimension sizes `dims` and, on each dimension `renumber` names, every
/// coordinate `c` renumbered to `renumber[d][c]`, in `t`'s own encoding.
fn rebuilt(t: &Tensor, dims: &[u64], renumber: &[Option<Vec<u64>>]) -> Result<Tensor, EwiseError> {
    let e = t.to_entries();
    let fail = |e: String| EwiseError::Convert(format!("aligning by label: {e}"));
    let coords: Vec<Vec<u64>> = (0..e.rank())
        .map(|d| {
            let c = e.coords(d).to_u64_vec();
            match &renumber[d] {
                // Every coordinate is below the dimension's size, which is the map's length
                // (the labels' count, checked when they were attached).
                Some(map) => c
                    .iter()
                    .map(|&x| map.get(x as usize).copied().unwrap_or(u64::MAX))
                    .collect(),
                None => c,
            }
        })
        .collect();
    let entries = Entries::from_parts(dims.to_vec(), coords, e.values().clone())
        .map_err(|e| fail(e.to_string()))?;
    built_like(t, &entries, &vec![None; e.rank()])
}

/// `entries` in `like`'s encoding, at the narrowest widths (a dimension may have grown past
/// the stored ones), carrying `labels`.
fn built_like(
    like: &Tensor,
    entries: &Entries,
    labels: &[Option<Labels>],
) -> Result<Tensor, EwiseError> {
    let opts = ConvertOptions {
        auto_widths: sptk_tensor::AutoWidths {
            pos: true,
            crd: true,
        },
        ..ConvertOptions::default()
    };
    let t = convert(entries, &Target::Fixed(like.encoding().clone()), &opts)
        .map_err(|e| EwiseError::Convert(format!("aligning by label: {e}")))?
        .tensor;
    labelled(t, labels)
}

/// One dimension of `b` by label onto a list it must match (SpGEMM's inner dimension:
/// B's rows, or its columns for `A B^T`, onto A's column labels; a mask's onto C's): `b`
/// with the coordinates of its dimension `dim` renumbered into `onto`, the entries whose
/// label `onto` lacks dropped (in a product they meet only zero columns of A; in a mask,
/// nothing of C), and that dimension's size `onto`'s length. `b` as it is where neither
/// side carries labels there, the lists are equal, or `align` is [`Align::Position`].
/// `what` names the two sides for a refusal (`("A's columns", "B's rows")`).
///
/// # Errors
/// The dimension labelled on one side only, a list naming a label twice, memory.
pub(crate) fn onto_labels<'t>(
    b: &'t Tensor,
    dim: usize,
    onto: Option<&Labels>,
    (what_onto, what_b): (&str, &str),
    align: Align,
) -> Result<Cow<'t, Tensor>, EwiseError> {
    let inner = dim;
    let theirs = b.labels(inner);
    if align == Align::Position || theirs == onto {
        return Ok(Cow::Borrowed(b));
    }
    let (Some(onto), Some(theirs)) = (onto, theirs) else {
        let (has, lacks) = match onto {
            Some(_) => (what_onto, what_b),
            None => (what_b, what_onto),
        };
        return Err(EwiseError::Shape(format!(
            "{has} carry labels and {lacks} do not, so they cannot be aligned by label \
             (read both with the same labels, sparse-convert --labels-from, or combine by \
             position: --align position)"
        )));
    };
    // Where each of A's labels is, and each of B's in A's list (or dropped).
    let (union, map) = union_of(onto, theirs, inner)?;
    let kept = onto.len() as u64;
    drop(union);
    let e = b.to_entries();
    let keep: Vec<bool> = (0..e.values().len())
        .map(|k| {
            map.get(e.coord(k, inner) as usize)
                .is_some_and(|&i| i < kept)
        })
        .collect();
    let mut dims = b.dim_sizes().to_vec();
    dims[inner] = kept;
    let coords: Vec<Vec<u64>> = (0..e.rank())
        .map(|d| {
            (0..keep.len())
                .filter(|&k| keep[k])
                .map(|k| match d == inner {
                    true => map[e.coord(k, d) as usize],
                    false => e.coord(k, d),
                })
                .collect()
        })
        .collect();
    let values = sptk_tensor::with_values!(e.values(), v => {
        let picked: Vec<_> = v.iter().zip(&keep).filter(|(_, &k)| k).map(|(x, _)| *x).collect();
        sptk_tensor::ValueVecAccess::wrap(picked)
    });
    let entries = Entries::from_parts(dims, coords, values)
        .map_err(|e| EwiseError::Convert(format!("aligning by label: {e}")))?;
    // The other dimensions keep their labels; this one now has `onto`'s.
    let labels: Vec<Option<Labels>> = (0..e.rank())
        .map(|d| match d == inner {
            true => Some(onto.clone()),
            false => b.labels(d).cloned(),
        })
        .collect();
    built_like(b, &entries, &labels).map(Cow::Owned)
}

/// `c` carrying `labels` (dimensions without any left as they are).
///
/// # Errors
/// A list whose length is not its dimension's size (a bug: the union sized both).
pub(crate) fn labelled(mut c: Tensor, labels: &[Option<Labels>]) -> Result<Tensor, EwiseError> {
    for (d, l) in labels.iter().enumerate() {
        if let Some(l) = l {
            c = c
                .with_labels(d, l.clone())
                .map_err(|e| EwiseError::Convert(format!("C's labels: {e}")))?;
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use sptk_tensor::ValueVec;

    /// A `labels.len()`-square CSR matrix of `cells` `(row label, column label, value)`,
    /// both dimensions labelled `labels`.
    pub(super) fn graph(labels: &[&str], cells: &[(&str, &str, f64)]) -> Tensor {
        let at = |l: &str| labels.iter().position(|x| *x == l).unwrap() as u64;
        let n = labels.len() as u64;
        let e = Entries::from_parts(
            vec![n, n],
            vec![
                cells.iter().map(|c| at(c.0)).collect(),
                cells.iter().map(|c| at(c.1)).collect(),
            ],
            ValueVec::F64(cells.iter().map(|c| c.2).collect::<Vec<_>>().into()),
        )
        .unwrap();
        let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
        let t = convert(&e, &target, &ConvertOptions::default())
            .unwrap()
            .tensor;
        let l = Labels::from_strings(labels.iter().copied());
        t.with_labels(0, l.clone())
            .unwrap()
            .with_labels(1, l)
            .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::graph;
    use super::*;
    use crate::ewise::{dot, ewise, EwiseOp, Options};
    use sptk_tensor::{ValueType, ValueVec};

    /// `t`'s entries as `(row label, column label, value)`, sorted.
    fn cells(t: &Tensor) -> Vec<(String, String, f64)> {
        let e = t.to_entries();
        let (r, c) = (t.labels(0).unwrap(), t.labels(1).unwrap());
        let ValueVec::F64(v) = e.values() else {
            panic!("values")
        };
        let mut out: Vec<_> = (0..v.len())
            .map(|k| {
                let name = |l: &Labels, d| l.get(e.coord(k, d) as usize).unwrap().to_string();
                (name(r, 0), name(c, 1), v[k])
            })
            .collect();
        out.sort_by(|x, y| x.partial_cmp(y).unwrap());
        out
    }

    const EDGES: [(&str, &str, f64); 3] = [("a", "b", 1.0), ("b", "c", 2.0), ("c", "a", 3.0)];

    #[test]
    fn one_graph_numbered_two_ways_adds_by_node() {
        let a = graph(&["a", "b", "c"], &EDGES);
        let b = graph(&["c", "b", "a"], &EDGES);
        let c = ewise(&a, &b, EwiseOp::Add, &Options::default()).unwrap();
        let doubled: Vec<_> = EDGES
            .iter()
            .map(|e| (e.0.into(), e.1.into(), 2.0 * e.2))
            .collect();
        assert_eq!(cells(&c), doubled);
        assert_eq!(
            c.labels(0).unwrap().iter().collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        let d = dot(&a, &b, &Options::default()).unwrap();
        assert_eq!(d, ValueVec::F64(vec![1.0 + 4.0 + 9.0].into()));
        // By position the same two are another graph.
        let by_position = Options {
            align: Align::Position,
            ..Options::default()
        };
        let p = ewise(&a, &b, EwiseOp::Add, &by_position).unwrap();
        assert_ne!(cells(&p), doubled);
    }

    #[test]
    fn new_labels_of_b_extend_the_result_after_a_s() {
        let a = graph(&["a", "b", "c"], &EDGES);
        let b = graph(&["d", "a"], &[("d", "a", 5.0), ("a", "a", 7.0)]);
        let c = ewise(&a, &b, EwiseOp::Add, &Options::default()).unwrap();
        assert_eq!(c.dim_sizes(), [4, 4]);
        assert_eq!(
            c.labels(1).unwrap().iter().collect::<Vec<_>>(),
            ["a", "b", "c", "d"]
        );
        let want = [
            ("a", "a", 7.0),
            ("a", "b", 1.0),
            ("b", "c", 2.0),
            ("c", "a", 3.0),
            ("d", "a", 5.0),
        ];
        let want: Vec<_> = want.iter().map(|e| (e.0.into(), e.1.into(), e.2)).collect();
        assert_eq!(cells(&c), want);
        let m = ewise(&a, &b, EwiseOp::Mul, &Options::default()).unwrap();
        assert_eq!(m.entry_count(), 0);
        assert_eq!(m.value_type(), ValueType::F64);
    }

    #[test]
    fn labels_on_one_side_only_or_named_twice_are_refused() {
        let a = graph(&["a", "b", "c"], &EDGES);
        let plain = a.clone().without_labels(0).without_labels(1);
        let e = ewise(&a, &plain, EwiseOp::Add, &Options::default()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("dimension 0") && text.contains("--align position"),
            "{text}"
        );
        let twice = graph(&["a", "b", "c"], &EDGES)
            .with_labels(0, Labels::from_strings(["a", "b", "a"]))
            .unwrap();
        let e = ewise(&a, &twice, EwiseOp::Add, &Options::default()).unwrap_err();
        assert!(e.to_string().contains("'a' twice"), "{e}");
        // Equal lists need no alignment, and the result keeps them.
        let c = ewise(&a, &a, EwiseOp::Add, &Options::default()).unwrap();
        assert_eq!(c.labels(0), a.labels(0));
    }
}

#[cfg(test)]
mod product_tests {
    use super::tests_support::graph;
    use crate::spgemm::{spgemm, Options, Semiring};

    /// A path a -> b -> c in two numberings: A @ B meets by node, so the product holds the
    /// two-step path a -> c, labelled; B's row for a node A lacks is dropped.
    #[test]
    fn a_product_meets_by_the_inner_labels() {
        let edges = [("a", "b", 1.0), ("b", "c", 2.0)];
        let a = graph(&["a", "b", "c"], &edges);
        let b = graph(
            &["c", "b", "a", "z"],
            &[("b", "c", 2.0), ("a", "b", 1.0), ("z", "a", 9.0)],
        );
        // Square labelled operands of different sizes: 3 x 3 times 4 x 4 by label.
        let c = spgemm(&a, &b, Semiring::PlusTimes, None, &Options::default()).unwrap();
        assert_eq!(c.dim_sizes(), [3, 4]);
        let e = c.to_entries();
        assert_eq!(e.values().len(), 1);
        let (r, col) = (e.coord(0, 0) as usize, e.coord(0, 1) as usize);
        assert_eq!(c.labels(0).unwrap().get(r), Some("a"));
        assert_eq!(c.labels(1).unwrap().get(col), Some("c"));
        // A side without labels is refused, naming it.
        let plain = b.clone().without_labels(0);
        let err = spgemm(&a, &plain, Semiring::PlusTimes, None, &Options::default()).unwrap_err();
        assert!(
            err.to_string().contains("A's columns carry labels"),
            "{err}"
        );
    }
}

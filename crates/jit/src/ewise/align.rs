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
use std::collections::{HashMap, HashSet};

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
    if align == Align::Position || same || rank != b.dim_sizes().len() {
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
                labels.push(Some(Labels::from_strings(union)));
            }
            (la, _) => {
                let (has, lacks) = if la.is_some() { ("A", "B") } else { ("B", "A") };
                return Err(one_sided(
                    &format!("dimension {d}: {has}'s coordinates"),
                    &format!("{lacks}'s"),
                ));
            }
        }
    }
    let a = match dims_a == a.dim_sizes() {
        true => Cow::Borrowed(a),
        false => Cow::Owned(renumbered(a, &dims_a, &vec![None; rank], &[])?),
    };
    let b = Cow::Owned(renumbered(b, &dims_b, &renumber, &[])?);
    Ok(Aligned { a, b, labels })
}

/// The refusal of a dimension labelled on one side only: `has` carry labels, `lacks` not.
fn one_sided(has: &str, lacks: &str) -> EwiseError {
    EwiseError::Shape(format!(
        "{has} carry labels and {lacks} do not, so they cannot be aligned by label (read both \
         with the same labels, sparse-convert --labels-from, or combine by position: --align \
         position)"
    ))
}

/// The union of `a` and `b` (a's labels first, then b's new ones in b's order) and, for each
/// of b's coordinates, its coordinate in the union (below `a.len()` where a has the label).
fn union_of<'l>(
    a: &'l Labels,
    b: &'l Labels,
    d: usize,
) -> Result<(Vec<&'l str>, Vec<u64>), EwiseError> {
    let twice = |who: &str, label: &str| {
        EwiseError::Shape(format!(
            "dimension {d}: {who}'s labels name '{label}' twice, so they cannot be aligned by \
             label (--align position combines by position)"
        ))
    };
    let mut at: HashMap<&str, u64> = HashMap::with_capacity(a.len() + b.len());
    let mut union: Vec<&str> = Vec::with_capacity(a.len());
    for label in a.iter() {
        if at.insert(label, union.len() as u64).is_some() {
            return Err(twice("A", label));
        }
        union.push(label);
    }
    let mut seen_in_b: HashSet<&str> = HashSet::with_capacity(b.len());
    let mut map = Vec::with_capacity(b.len());
    for label in b.iter() {
        if !seen_in_b.insert(label) {
            return Err(twice("B", label));
        }
        let next = union.len() as u64;
        let i = *at.entry(label).or_insert_with(|| {
            union.push(label);
            next
        });
        map.push(i);
    }
    Ok((union, map))
}

/// One dimension to bring onto a list it must match (SpGEMM's inner dimension: B's rows,
/// or its columns for `A B^T`, onto A's column labels; a mask's rows and columns onto C's),
/// and the names of the two sides for a refusal (`("A's columns", "B's rows")`).
pub(crate) struct Onto<'l> {
    /// The dimension of the tensor brought onto the list.
    pub dim: usize,
    /// The list it must match (`None`: unlabelled).
    pub labels: Option<&'l Labels>,
    /// Who holds the list, and who the tensor's dimension is.
    pub sides: (&'static str, &'static str),
}

/// `t` with each dimension of `onto` renumbered into its list: the entries whose label the
/// list lacks dropped (in a product they meet only zero columns of A; in a mask, nothing of
/// C), the dimension's size the list's length, and the list its labels. `t` as it is where
/// no dimension needs it (neither side labelled, equal lists) or `align` is
/// [`Align::Position`].
///
/// # Errors
/// A dimension labelled on one side only, a list naming a label twice, memory.
pub(crate) fn onto_labels<'t>(
    t: &'t Tensor,
    onto: &[Onto<'_>],
    align: Align,
) -> Result<Cow<'t, Tensor>, EwiseError> {
    let rank = t.dim_sizes().len();
    let mut dims = t.dim_sizes().to_vec();
    let mut renumber: Vec<Option<Vec<u64>>> = vec![None; rank];
    let mut labels: Vec<Option<Labels>> = (0..rank).map(|d| t.labels(d).cloned()).collect();
    for o in onto.iter().filter(|o| o.dim < rank) {
        let theirs = t.labels(o.dim);
        if align == Align::Position || theirs == o.labels {
            continue;
        }
        let (Some(list), Some(theirs)) = (o.labels, theirs) else {
            let (has, lacks) = match o.labels {
                Some(_) => o.sides,
                None => (o.sides.1, o.sides.0),
            };
            return Err(one_sided(has, lacks));
        };
        renumber[o.dim] = Some(union_of(list, theirs, o.dim)?.1);
        dims[o.dim] = list.len() as u64;
        labels[o.dim] = Some(list.clone());
    }
    if renumber.iter().all(Option::is_none) {
        return Ok(Cow::Borrowed(t));
    }
    renumbered(t, &dims, &renumber, &labels).map(Cow::Owned)
}

/// `t` with dimension sizes `dims`, each coordinate `c` of a dimension `renumber` names
/// renumbered to `renumber[d][c]` and the entries whose new coordinate falls at or past
/// `dims[d]` dropped, in `t`'s own encoding at the narrowest widths (a dimension may have
/// grown past the stored ones), carrying `labels` (none where it is empty).
///
/// # Errors
/// A coordinate past its map (the maps are as long as the labels, which are as long as
/// their dimension), memory.
fn renumbered(
    t: &Tensor,
    dims: &[u64],
    renumber: &[Option<Vec<u64>>],
    labels: &[Option<Labels>],
) -> Result<Tensor, EwiseError> {
    let fail = |e: String| EwiseError::Convert(format!("aligning by label: {e}"));
    let e = t.to_entries();
    let mut keep = vec![true; e.values().len()];
    let mut coords = Vec::with_capacity(e.rank());
    for d in 0..e.rank() {
        let c = e.coords(d).to_u64_vec();
        let Some(map) = &renumber[d] else {
            coords.push(c);
            continue;
        };
        let mut out = Vec::with_capacity(c.len());
        for (k, &x) in c.iter().enumerate() {
            let y = *map
                .get(x as usize)
                .ok_or_else(|| fail(format!("coordinate {x} of dimension {d} has no label")))?;
            keep[k] &= y < dims[d];
            out.push(y);
        }
        coords.push(out);
    }
    let (coords, values) = match keep.iter().all(|&k| k) {
        true => (coords, e.values().clone()),
        false => {
            let picked = |c: &[u64]| {
                c.iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k)
                    .map(|(x, _)| *x)
                    .collect()
            };
            let values = sptk_tensor::with_values!(e.values(), v => {
                let v: Vec<_> = v.iter().zip(&keep).filter(|(_, &k)| k).map(|(x, _)| *x).collect();
                sptk_tensor::ValueVecAccess::wrap(v)
            });
            (coords.iter().map(|c| picked(c)).collect(), values)
        }
    };
    let entries =
        Entries::from_parts(dims.to_vec(), coords, values).map_err(|e| fail(e.to_string()))?;
    let opts = ConvertOptions {
        auto_widths: sptk_tensor::AutoWidths {
            pos: true,
            crd: true,
            floor: 0,
        },
        ..ConvertOptions::default()
    };
    let built = convert(&entries, &Target::Fixed(t.encoding().clone()), &opts)
        .map_err(|e| fail(e.to_string()))?
        .tensor;
    labelled(built, labels)
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

//! Coordinates numbered in order of first appearance: which columns are numbered, which
//! of them share one list of ids, and the lists themselves.
//!
//! An edge list's two ends name the same nodes: numbered apart, the path a→b→c→d would
//! become `diag(1, 1, 1)` (a self-loop per node), so they share one list and the matrix
//! is square. Users x items are two kinds of thing and keep a list each.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use sptk_tensor::Labels;

use crate::columns::{self, Ctx};
use crate::error::TableError;
use crate::table::{Found, Table};

/// Which coordinate columns are numbered, and whether they share one list of ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Relabel {
    /// Only text coordinates are numbered; integers are indices. Text columns share one
    /// list when they are an edge list's two ends (`src` / `dst`, `source` / `target`,
    /// `from` / `to`), else each has its own.
    #[default]
    Text,
    /// Every coordinate column is numbered, from one list shared by all of them when they
    /// hold the same kind of ids (all integers or all text): a graph's nodes. Columns of
    /// different kinds keep a list each.
    Shared,
    /// Every coordinate column is numbered from its own list: bipartite data (users x
    /// items), where row 3 and column 3 are different things.
    Separate,
}

impl Relabel {
    /// True if integer coordinates are numbered too (`--relabel`).
    pub fn numbers_integers(self) -> bool {
        self != Relabel::Text
    }
}

/// Pairs of column names that are an edge list's two ends.
pub(crate) const EDGE_ENDS: [[&str; 2]; 3] = [["src", "dst"], ["source", "target"], ["from", "to"]];

/// The list each numbered dimension takes its ids from: `lists[d]` for dimension `d`
/// (None: not numbered), and the notes that say why columns keep a list each.
pub(crate) fn assign_lists(
    mode: Relabel,
    coords: &[String],
    numbered: &[bool],
    text: &[bool],
) -> (Vec<Option<usize>>, Vec<String>) {
    let edge_ends = coords.len() == 2
        && EDGE_ENDS
            .iter()
            .any(|[a, b]| coords[0].eq_ignore_ascii_case(a) && coords[1].eq_ignore_ascii_case(b));
    // An edge list's two ends name the same nodes whatever their column types: where one
    // end is numbered (text ids), the other is numbered with it from the one list (its
    // integers by their decimal text), never read as indices beside it. Numbered apart,
    // or one as indices, `1 -> "a"` and `"a" -> 1` would be different nodes.
    let graph = edge_ends && mode != Relabel::Separate && numbered.iter().any(|&n| n);
    let mut notes = Vec::new();
    if graph && numbered.iter().any(|&n| !n) {
        let (ints, texts): (Vec<usize>, Vec<usize>) = (0..2).partition(|&d| !text[d]);
        let name = |d: &[usize]| d.first().map_or(String::new(), |&d| coords[d].clone());
        notes.push(format!(
            "columns `{}` (integers) and `{}` (text): an edge list's two ends, so the \
             integers are numbered with the text ids from one list (the integer 7 and the \
             text \"7\" are one node)",
            name(&ints),
            name(&texts)
        ));
    }
    let numbered: Vec<bool> = match graph {
        true => vec![true; coords.len()],
        false => numbered.to_vec(),
    };
    let dims: Vec<usize> = (0..coords.len()).filter(|&d| numbered[d]).collect();
    let same_kind = dims.windows(2).all(|w| text[w[0]] == text[w[1]]);
    let shared = dims.len() > 1
        && match mode {
            Relabel::Shared => same_kind || graph,
            Relabel::Separate => false,
            Relabel::Text => edge_ends,
        };
    let names = || {
        dims.iter()
            .map(|&d| format!("`{}`", coords[d]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A shared list is described once read, with its length (see `read.rs`).
    if !shared && dims.len() > 1 {
        notes.push(match mode {
            Relabel::Shared => format!(
                "columns {}: each numbered on its own, as they hold different kinds of ids \
                 (text and integers)",
                names()
            ),
            Relabel::Separate => format!("columns {}: each numbered on its own", names()),
            Relabel::Text => format!(
                "columns {}: each numbered on its own (rows and columns are different \
                 things); --relabel shared numbers them from one list, as a graph's nodes",
                names()
            ),
        });
    }
    let mut next = 0;
    let lists = (0..coords.len())
        .map(|d| {
            numbered[d].then(|| {
                if shared {
                    0
                } else {
                    next += 1;
                    next - 1
                }
            })
        })
        .collect();
    (lists, notes)
}

/// How to number when lists are `given` and `mode` is the default: the lists of a graph
/// (every given dimension the same list) are shared, as `--relabel` shares them; other
/// lists (users x items) are numbered apart. A mode asked for is kept, and so is the
/// default where one list is given.
pub(crate) fn mode_with_labels(mode: Relabel, given: &[Option<Arc<Labels>>]) -> Relabel {
    let lists: Vec<&Labels> = given.iter().flatten().map(|l| &**l).collect();
    match lists.split_first() {
        Some((first, rest)) if mode == Relabel::Text && !rest.is_empty() => {
            if rest.iter().all(|l| *l == *first) {
                Relabel::Shared
            } else {
                Relabel::Separate
            }
        }
        _ => mode,
    }
}

/// The labels each list of ids starts from: `given[d]` for a dimension `d` numbered from
/// list `lists[d]`. Dimensions that share a list must be given the same labels (or none).
pub(crate) fn seeds(
    lists: &[Option<usize>],
    given: &[Option<Arc<Labels>>],
    coords: &[String],
) -> Result<Vec<Option<Arc<Labels>>>, String> {
    let count = lists.iter().flatten().max().map_or(0, |m| m + 1);
    let mut seeds: Vec<Option<(usize, Arc<Labels>)>> = vec![None; count];
    for (d, list) in lists.iter().enumerate() {
        let (Some(l), Some(Some(labels))) = (list, given.get(d)) else {
            continue;
        };
        match &seeds[*l] {
            Some((e, other)) if **other != **labels => {
                return Err(format!(
                    "columns `{}` and `{}` are numbered from one shared list of ids, but the \
                     labels given for dimensions {e} and {d} differ (--relabel separate numbers \
                     each column from its own)",
                    coords[*e], coords[d]
                ))
            }
            Some(_) => {}
            None => seeds[*l] = Some((d, labels.clone())),
        }
    }
    Ok(seeds.into_iter().map(|s| s.map(|(_, l)| l)).collect())
}

/// Ids (text, or integers by their decimal text) numbered in order of first appearance.
/// The integer 7 and the text "7" are one id.
#[derive(Default)]
pub(crate) struct IdList {
    index: HashMap<String, u64>,
    ints: HashMap<i128, u64>,
    /// The ids by number: the dimension's labels.
    pub order: Vec<String>,
}

impl IdList {
    /// A list that starts from `labels`, in their order; `column` names it in the message
    /// that refuses a label given twice (which could not say which number it means).
    pub(crate) fn seeded(labels: &Labels, column: &str) -> Result<IdList, String> {
        let mut list = IdList::default();
        for (i, label) in labels.iter().enumerate() {
            let n = list.intern(label);
            if n != i as u64 {
                return Err(format!(
                    "the labels given for column `{column}` name `{label}` twice (labels {n} \
                     and {i}): a list to number from names each id once"
                ));
            }
        }
        Ok(list)
    }

    /// The number of `s`, numbered next if new.
    fn intern(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let next = self.order.len() as u64;
        self.index.insert(s.to_string(), next);
        self.order.push(s.to_string());
        next
    }

    /// Numbers dimension `d`'s coordinates in `batch` (rows from `row0` of file `f`),
    /// appending them to `out`.
    pub(crate) fn map(
        &mut self,
        table: &Table,
        f: usize,
        d: usize,
        batch: &RecordBatch,
        row0: u64,
        out: &mut Vec<u64>,
    ) -> Result<(), TableError> {
        let file = &table.files[f];
        let name = &table.coords[d];
        let ctx = Ctx {
            path: &file.path,
            column: name,
            row0,
            base: 0,
            size: None,
        };
        match &table.found[f][d] {
            Found::Hive(text) => {
                let i = self.intern(text);
                out.extend(std::iter::repeat_n(i, batch.num_rows()));
            }
            Found::Column(_) => {
                let arr = columns::column(batch, &file.path, name)?;
                if columns::is_text(arr.data_type()) {
                    columns::texts(arr.as_ref(), &ctx, &mut |_, s| {
                        let i = self.intern(s);
                        out.push(i);
                    })?;
                } else {
                    let mut ids = Vec::new();
                    columns::ids(arr.as_ref(), &ctx, &mut ids)?;
                    out.reserve(ids.len());
                    for id in ids {
                        let i = match self.ints.get(&id) {
                            Some(&i) => i,
                            None => {
                                let i = self.intern(&id.to_string());
                                self.ints.insert(id, i);
                                i
                            }
                        };
                        out.push(i);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Renumbers a list shared by dimensions `dims` in order of first appearance row by row
/// (each row's dimensions left to right), as a reader of the table would number the nodes.
/// Columns are numbered a batch at a time, one column after the other, which gives
/// another order: this pass makes the numbers independent of the batch sizes. The first
/// `fixed` ids (a list given to number from) keep their numbers.
pub(crate) fn renumber_by_rows(
    coords: &mut [Vec<u64>],
    dims: &[usize],
    order: &mut Vec<String>,
    fixed: usize,
) {
    const UNSET: u64 = u64::MAX;
    let mut new_of = vec![UNSET; order.len()];
    for (i, n) in new_of.iter_mut().enumerate().take(fixed) {
        *n = i as u64;
    }
    let mut next = fixed as u64;
    let rows = dims.first().map_or(0, |&d| coords[d].len());
    // Row r of several columns at once: an index, not an iterator.
    #[allow(clippy::needless_range_loop)]
    for r in 0..rows {
        for &d in dims {
            let c = &mut coords[d][r];
            // Every coordinate was numbered from this list: below its length.
            let n = &mut new_of[*c as usize];
            if *n == UNSET {
                *n = next;
                next += 1;
            }
            *c = *n;
        }
    }
    // An id numbered but in no row (a partition folder of empty files) comes last.
    for n in new_of.iter_mut().filter(|n| **n == UNSET) {
        *n = next;
        next += 1;
    }
    let mut renumbered = vec![String::new(); order.len()];
    for (old, label) in order.drain(..).enumerate() {
        renumbered[new_of[old] as usize] = label;
    }
    *order = renumbered;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn edge_ends_share_a_list_of_text_ids_by_default() {
        let (lists, notes) = assign_lists(
            Relabel::Text,
            &names(&["source", "target"]),
            &[true, true],
            &[true, true],
        );
        assert_eq!(lists, [Some(0), Some(0)]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn other_text_columns_keep_a_list_each_by_default() {
        let (lists, notes) = assign_lists(
            Relabel::Text,
            &names(&["cell", "gene"]),
            &[true, true],
            &[true, true],
        );
        assert_eq!(lists, [Some(0), Some(1)]);
        assert!(notes[0].contains("--relabel shared"), "{notes:?}");
    }

    #[test]
    fn shared_needs_one_kind_of_id() {
        let cols = names(&["a", "b"]);
        let (lists, _) = assign_lists(Relabel::Shared, &cols, &[true, true], &[false, false]);
        assert_eq!(lists, [Some(0), Some(0)]);
        let (lists, notes) = assign_lists(Relabel::Shared, &cols, &[true, true], &[true, false]);
        assert_eq!(lists, [Some(0), Some(1)]);
        assert!(notes[0].contains("different kinds"), "{notes:?}");
    }

    #[test]
    fn integer_and_text_edge_ends_are_one_list_of_nodes() {
        let cols = names(&["src", "dst"]);
        for mode in [Relabel::Text, Relabel::Shared] {
            let (lists, notes) = assign_lists(mode, &cols, &[false, true], &[false, true]);
            assert_eq!(lists, [Some(0), Some(0)], "{mode:?}");
            assert!(notes[0].contains("one list"), "{notes:?}");
            let (lists, _) = assign_lists(mode, &cols, &[true, true], &[true, false]);
            assert_eq!(lists, [Some(0), Some(0)], "{mode:?}");
        }
        // Asked for apart, they stay apart; integer ends alone stay indices.
        let (lists, _) = assign_lists(Relabel::Separate, &cols, &[true, true], &[false, true]);
        assert_eq!(lists, [Some(0), Some(1)]);
        let (lists, _) = assign_lists(Relabel::Text, &cols, &[false, false], &[false, false]);
        assert_eq!(lists, [None, None]);
    }

    #[test]
    fn a_given_list_keeps_its_numbers_and_new_ids_follow_row_by_row() {
        let given = Labels::from_strings(["x", "y"]);
        let mut list = IdList::seeded(&given, "src").unwrap();
        // Rows (a, c), (b, a) numbered column by column: a 2, b 3, then c 4.
        let mut coords = vec![vec![list.intern("a"), list.intern("b")], Vec::new()];
        coords[1] = vec![list.intern("c"), list.intern("a")];
        assert_eq!(list.intern("y"), 1);
        let mut order = list.order;
        renumber_by_rows(&mut coords, &[0, 1], &mut order, 2);
        assert_eq!(coords, [vec![2, 4], vec![3, 2]]);
        assert_eq!(order, ["x", "y", "a", "c", "b"]);
        let twice = Labels::from_strings(["x", "y", "x"]);
        let e = IdList::seeded(&twice, "src").err().unwrap();
        assert!(e.contains("`x` twice (labels 0 and 2)"), "{e}");
    }

    #[test]
    fn dimensions_sharing_a_list_need_the_same_labels() {
        let cols = names(&["src", "dst"]);
        let a = Some(Arc::new(Labels::from_strings(["p", "q"])));
        let b = Some(Arc::new(Labels::from_strings(["q", "p"])));
        let seeds = seeds(&[Some(0), Some(0)], &[a.clone(), None], &cols).unwrap();
        assert_eq!(seeds, std::slice::from_ref(&a));
        let e = super::seeds(&[Some(0), Some(0)], &[a.clone(), b.clone()], &cols).unwrap_err();
        assert!(e.contains("dimensions 0 and 1 differ"), "{e}");
        let apart = super::seeds(&[Some(0), Some(1)], &[a.clone(), b.clone()], &cols).unwrap();
        assert_eq!(apart, [a, b]);
    }

    #[test]
    fn a_shared_list_is_numbered_row_by_row() {
        // Numbered column by column: src 1 -> 0, 3 -> 1; dst 2 -> 2, 1 -> 0. Row by row:
        // 1 -> 0, 2 -> 1, 3 -> 2, so (1, 2), (3, 1) become (0, 1), (2, 0).
        let mut coords = vec![vec![0, 1], vec![2, 0]];
        let mut order = vec!["1".to_string(), "3".into(), "2".into()];
        renumber_by_rows(&mut coords, &[0, 1], &mut order, 0);
        assert_eq!(coords, [vec![0, 2], vec![1, 0]]);
        assert_eq!(order, ["1", "2", "3"]);
    }

    #[test]
    fn separate_and_unnumbered_dimensions() {
        let cols = names(&["src", "dst", "t"]);
        let (lists, _) = assign_lists(
            Relabel::Separate,
            &cols,
            &[true, true, false],
            &[false, false, false],
        );
        assert_eq!(lists, [Some(0), Some(1), None]);
        let (lists, notes) = assign_lists(Relabel::Text, &cols, &[false; 3], &[false; 3]);
        assert_eq!(lists, [None, None, None]);
        assert!(notes.is_empty());
    }
}

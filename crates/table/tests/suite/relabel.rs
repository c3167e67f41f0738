//! Relabelled coordinates: an edge list's two ends name the same nodes (one shared list,
//! a square matrix), bipartite columns keep a list each. Each case's expected matrix is
//! written down from the edges by hand.

use crate::common;

use std::sync::Arc;

use arrow_array::{ArrayRef, StringArray};
use common::{i64s, open, write_batch};
use sptk_table::{Relabel, TableEntries, TableOptions, ValueColumn};

fn texts(v: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

/// The entries as (row, column) pairs in table order, the dimension sizes, the labels
/// of each dimension and the notes.
type Read = (Vec<(u64, u64)>, Vec<u64>, Vec<Vec<String>>, Vec<String>);

fn read(cols: Vec<(&str, ArrayRef)>, relabel: Relabel) -> Read {
    read_in_windows(cols, relabel, TableOptions::default().window)
}

/// As [`read`], decoding `window` rows of a row group at a time.
fn read_in_windows(cols: Vec<(&str, ArrayRef)>, relabel: Relabel, window: usize) -> Read {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edges.parquet");
    write_batch(&path, cols, &[]);
    let opts = TableOptions {
        value_column: ValueColumn::Pattern,
        relabel,
        window,
        ..TableOptions::default()
    };
    let TableEntries {
        entries,
        labels,
        notes,
    } = open(&[&path], &opts).unwrap().read_entries().unwrap();
    let pairs = (0..entries.len())
        .map(|n| (entries.coord(n, 0), entries.coord(n, 1)))
        .collect();
    let labels = labels
        .iter()
        .map(|l| {
            l.as_ref()
                .map_or_else(Vec::new, |l| l.iter().map(String::from).collect())
        })
        .collect();
    (pairs, entries.dim_sizes().to_vec(), labels, notes)
}

/// The path 10 -> 20 -> 30 -> 40 as sparse integer ids.
fn path_ids() -> Vec<(&'static str, ArrayRef)> {
    vec![("src", i64s(&[10, 20, 30])), ("dst", i64s(&[20, 30, 40]))]
}

#[test]
fn relabel_numbers_a_graphs_two_ends_from_one_list() {
    // Nodes numbered in order of first appearance over src then dst of each row:
    // 10 -> 0, 20 -> 1, 30 -> 2, 40 -> 3: the path is 0->1, 1->2, 2->3 in a 4 x 4 matrix.
    let (pairs, dims, labels, notes) = read(path_ids(), Relabel::Shared);
    assert_eq!(pairs, [(0, 1), (1, 2), (2, 3)]);
    assert_eq!(dims, [4, 4]);
    assert_eq!(labels[0], ["10", "20", "30", "40"]);
    assert_eq!(labels[1], labels[0]);
    assert!(
        notes.iter().any(|n| n.contains("one shared list")),
        "{notes:?}"
    );
}

#[test]
fn a_shared_list_numbers_nodes_row_by_row_whatever_the_batch_size() {
    // Rows (1, 2), (3, 1), (2, 4): read row by row 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 3. Read
    // column by column it would be 1, 3, 2, 4: the numbering must not depend on that.
    let cols = || vec![("src", i64s(&[1, 3, 2])), ("dst", i64s(&[2, 1, 4]))];
    for window in [1, 2, 1 << 16] {
        let (pairs, dims, labels, _) = read_in_windows(cols(), Relabel::Shared, window);
        assert_eq!(pairs, [(0, 1), (2, 0), (1, 3)], "window {window}");
        assert_eq!(dims, [4, 4]);
        assert_eq!(labels[0], ["1", "2", "3", "4"]);
    }
}

#[test]
fn relabel_separate_numbers_each_column_on_its_own() {
    // src: 10 -> 0, 20 -> 1, 30 -> 2; dst: 20 -> 0, 30 -> 1, 40 -> 2: a 3 x 3 diagonal.
    let (pairs, dims, labels, _) = read(path_ids(), Relabel::Separate);
    assert_eq!(pairs, [(0, 0), (1, 1), (2, 2)]);
    assert_eq!(dims, [3, 3]);
    assert_eq!(labels[0], ["10", "20", "30"]);
    assert_eq!(labels[1], ["20", "30", "40"]);
}

#[test]
fn text_edge_ends_share_a_list_without_being_asked() {
    // source/target are found as coordinate columns by name; a -> 0, b -> 1, c -> 2.
    let cols = vec![
        ("source", texts(&["a", "b", "c"])),
        ("target", texts(&["b", "c", "a"])),
    ];
    let (pairs, dims, labels, _) = read(cols, Relabel::Text);
    assert_eq!(pairs, [(0, 1), (1, 2), (2, 0)]);
    assert_eq!(dims, [3, 3]);
    assert_eq!(labels[1], ["a", "b", "c"]);
}

#[test]
fn text_rows_and_columns_keep_a_list_each_without_being_asked() {
    // row: x -> 0, y -> 1; col: y -> 0, z -> 1.
    let cols = vec![("row", texts(&["x", "y"])), ("col", texts(&["y", "z"]))];
    let (pairs, dims, labels, notes) = read(cols, Relabel::Text);
    assert_eq!(pairs, [(0, 0), (1, 1)]);
    assert_eq!(dims, [2, 2]);
    assert_eq!(labels[0], ["x", "y"]);
    assert_eq!(labels[1], ["y", "z"]);
    assert!(
        notes.iter().any(|n| n.contains("--relabel shared")),
        "{notes:?}"
    );
}

#[test]
fn integer_edge_ends_are_indices_without_relabel() {
    let (pairs, dims, labels, _) = read(
        vec![("from", i64s(&[0, 2])), ("to", i64s(&[1, 0]))],
        Relabel::Text,
    );
    assert_eq!(pairs, [(0, 1), (2, 0)]);
    assert_eq!(dims, [3, 2]);
    assert!(labels.iter().all(Vec::is_empty), "{labels:?}");
}

#[test]
fn sizes_come_from_ids_only_where_no_shape_is_declared_and_ids_are_indices() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("bare.parquet");
    let shaped = dir.path().join("shaped.parquet");
    write_batch(&bare, path_ids(), &[]);
    write_batch(&shaped, path_ids(), &[("shape", "[50, 50]")]);
    let with = |relabel| TableOptions {
        value_column: ValueColumn::Pattern,
        relabel,
        ..TableOptions::default()
    };
    let ids = |path, relabel| open(&[path], &with(relabel)).unwrap().sizes_from_ids();
    // The largest id + 1 is each dimension's size: the reader suggests --relabel when
    // that passes the memory limit.
    assert!(ids(&bare, Relabel::Text));
    assert!(!ids(&shaped, Relabel::Text));
    assert!(!ids(&bare, Relabel::Shared));
    assert!(!ids(&bare, Relabel::Separate));
}

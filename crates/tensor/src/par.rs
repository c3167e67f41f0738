//! Parallel loops through one non-generic entry point.
//!
//! Each `par_iter` chain makes the compiler instantiate rayon's splitting, joining and job
//! machinery for that chain's closure type, and the conversion code runs once per value
//! width and index width: those copies were 6.5 MB of the 14 MB command-line binary. The
//! helpers here hand rayon a `&dyn Fn(usize)`, so that machinery exists once; each caller
//! keeps its own tight, monomorphic inner loop over a chunk.
//!
//! Work is split into tasks by index. Element-wise helpers ([`map`], [`all`],
//! [`chunks_mut`]) group elements into chunks of [`CHUNK`] so that the dynamic call costs
//! nothing next to the loop it starts; task-wise helpers ([`for_each`], [`for_each_mut`],
//! [`for_each_item`], [`map_tasks`]) run one task per index and leave grouping to the caller.

use std::mem::MaybeUninit;
use std::sync::Mutex;

/// Elements per task in the element-wise helpers.
pub const CHUNK: usize = 1 << 14;

/// Threads of the pool the helpers run on.
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// Runs `task(i)` for every `i` in `0..n` on rayon's pool, stopping early once a task
/// returns false; true when every task ran and returned true.
#[inline(never)]
fn run(n: usize, task: &(dyn Fn(usize) -> bool + Sync)) -> bool {
    use rayon::prelude::*;
    match n {
        0 => true,
        1 => task(0),
        _ => (0..n).into_par_iter().all(task),
    }
}

/// Runs `task(i)` for every `i` in `0..n`, in parallel.
pub fn for_each(n: usize, task: impl Fn(usize) + Sync) {
    run(n, &|i| {
        task(i);
        true
    });
}

/// Runs `task(i)` for every `i` in `0..n`, in parallel, until one fails; returns one of
/// the errors (the one with the lowest index among those that ran).
pub fn try_for_each<E: Send>(
    n: usize,
    task: impl Fn(usize) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let first: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let ok = run(n, &|i| match task(i) {
        Ok(()) => true,
        Err(e) => {
            let mut slot = first.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                *slot = Some((i, e));
            }
            false
        }
    });
    match first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) if !ok => Err(e),
        _ => Ok(()),
    }
}

/// Runs `task` on every item, in parallel (one task per item).
pub fn for_each_mut<T: Send>(items: &mut [T], task: impl Fn(&mut T) + Sync) {
    let cells: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    for_each(cells.len(), |i| {
        let mut item = cells[i].lock().unwrap_or_else(|p| p.into_inner());
        task(&mut item)
    });
}

/// Runs `task` on every item, taking it by value, in parallel (one task per item).
pub fn for_each_item<T: Send>(items: Vec<T>, task: impl Fn(T) + Sync) {
    let _ = try_for_each_item(items, |item| {
        task(item);
        Ok::<(), ()>(())
    });
}

/// Runs `task` on every item, taking it by value, in parallel, until one fails.
pub fn try_for_each_item<T: Send, E: Send>(
    items: Vec<T>,
    task: impl Fn(T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let cells: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    try_for_each(cells.len(), |i| {
        let item = cells[i].lock().unwrap_or_else(|p| p.into_inner()).take();
        match item {
            Some(item) => task(item),
            None => Ok(()),
        }
    })
}

/// `items` mapped through `f(i, item)` (`i` counting items from 0), one parallel task per
/// item, results in item order.
pub fn map_items<T: Send, R: Send>(items: Vec<T>, f: impl Fn(usize, T) -> R + Sync) -> Vec<R> {
    let cells: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    map_tasks(cells.len(), |i| {
        let item = cells[i].lock().unwrap_or_else(|p| p.into_inner()).take();
        // Each index is visited once, so the item is still there.
        f(i, item.expect("each item is taken once"))
    })
}

/// `f` applied to consecutive ranges of `0..n` of [`CHUNK`] indices each, in parallel;
/// one result per range, in order (for reductions: maxima, counts, first matches).
pub fn fold_chunks<T: Send>(n: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync) -> Vec<T> {
    map_tasks(n.div_ceil(CHUNK), |c| f(c * CHUNK..n.min((c + 1) * CHUNK)))
}

/// Like [`try_for_each_item`], with scratch space: each task borrows a scratch value made by
/// `init`, reused by later tasks (at most one per concurrent task is made).
pub fn try_for_each_item_with<T: Send, S: Send, E: Send>(
    items: Vec<T>,
    init: impl Fn() -> S + Sync,
    task: impl Fn(&mut S, T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let pool: Mutex<Vec<S>> = Mutex::new(Vec::new());
    try_for_each_item(items, |item| {
        let spare = pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut scratch = spare.unwrap_or_else(&init);
        let r = task(&mut scratch, item);
        pool.lock().unwrap_or_else(|p| p.into_inner()).push(scratch);
        r
    })
}

/// Runs `task(c, part)` on consecutive parts of `data` of `chunk` elements each (the last
/// may be shorter), `c` counting parts from 0, in parallel.
pub fn chunks_mut<T: Send>(data: &mut [T], chunk: usize, task: impl Fn(usize, &mut [T]) + Sync) {
    let mut parts: Vec<&mut [T]> = data.chunks_mut(chunk.max(1)).collect();
    if parts.len() == 1 {
        task(0, parts[0]);
        return;
    }
    let cells: Vec<Mutex<&mut [T]>> = parts.drain(..).map(Mutex::new).collect();
    for_each(cells.len(), |c| {
        let mut part = cells[c].lock().unwrap_or_else(|p| p.into_inner());
        task(c, &mut part)
    });
}

/// True if `pred(i)` holds for every `i` in `0..n`; elements checked in parallel chunks.
pub fn all(n: usize, pred: impl Fn(usize) -> bool + Sync) -> bool {
    all_tasks(n.div_ceil(CHUNK), |c| {
        (c * CHUNK..n.min((c + 1) * CHUNK)).all(&pred)
    })
}

/// The indices `i` in `0..n` (increasing) for which `pred(i)` holds, checked in
/// parallel chunks.
pub fn select(n: usize, pred: impl Fn(usize) -> bool + Sync) -> Vec<u64> {
    let parts = map_tasks(n.div_ceil(CHUNK), |c| {
        (c * CHUNK..n.min((c + 1) * CHUNK))
            .filter(|&i| pred(i))
            .map(|i| i as u64)
            .collect::<Vec<u64>>()
    });
    parts.concat()
}

/// True if `pred(i)` holds for every `i` in `0..n`, one parallel task per index, stopping
/// early at a failure.
pub fn all_tasks(n: usize, pred: impl Fn(usize) -> bool + Sync) -> bool {
    run(n, &pred)
}

/// `(0..n).map(f)` collected, elements computed in parallel chunks.
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    fill(n, CHUNK, f)
}

/// `(0..n).map(task)` collected, one parallel task per element (for coarse tasks).
pub fn map_tasks<T: Send>(n: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    fill(n, 1, task)
}

/// `(0..n).map(f)` collected, `chunk` elements per task.
fn fill<T: Send>(n: usize, chunk: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let slots: &mut [MaybeUninit<T>] = &mut out.spare_capacity_mut()[..n];
    chunks_mut(slots, chunk, |c, part| {
        for (j, slot) in part.iter_mut().enumerate() {
            slot.write(f(c * chunk + j));
        }
    });
    // SAFETY: `chunks_mut` returned normally, so its task ran on every part of `slots`,
    // which together are the first `n` slots of `out`, and wrote each one (a panic in `f`
    // would have unwound past this line, leaving the length at 0).
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn helpers_visit_every_index_once() {
        for n in [0, 1, 2, 7, CHUNK - 1, CHUNK, 3 * CHUNK + 5] {
            let v = map(n, |i| i * 3);
            assert_eq!(v, (0..n).map(|i| i * 3).collect::<Vec<_>>());
            assert_eq!(
                map_tasks(n.min(50), |i| i + 1),
                (1..=n.min(50)).collect::<Vec<_>>()
            );
            assert!(all(n, |i| v[i] == 3 * i));
            let parts = fold_chunks(n, |r| r.len());
            assert_eq!(parts.iter().sum::<usize>(), n);
            assert_eq!(parts.len(), n.div_ceil(CHUNK));
            let doubled = map_items((0..n.min(64)).collect(), |i, x: usize| (i, 2 * x));
            assert!(doubled
                .iter()
                .enumerate()
                .all(|(i, &(j, x))| i == j && x == 2 * i));
            let odd: Vec<u64> = (0..n as u64).filter(|i| i % 3 == 1).collect();
            assert_eq!(select(n, |i| i % 3 == 1), odd);
            assert_eq!(all(n, |i| i + 1 != n), n == 0);
            assert_eq!(all_tasks(n, |i| i != n / 2), n == 0);
            let hits = AtomicUsize::new(0);
            for_each(n, |_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(hits.load(Ordering::Relaxed), n);
            let mut w = vec![0usize; n];
            chunks_mut(&mut w, 5, |c, part| {
                for (j, x) in part.iter_mut().enumerate() {
                    *x = c * 5 + j;
                }
            });
            assert!(w.iter().enumerate().all(|(i, &x)| i == x));
            let mut items: Vec<usize> = (0..n.min(100)).collect();
            for_each_mut(&mut items, |x| *x *= 2);
            assert!(items.iter().enumerate().all(|(i, &x)| x == 2 * i));
            let sum = AtomicUsize::new(0);
            for_each_item(items, |x| {
                sum.fetch_add(x, Ordering::Relaxed);
            });
            let m = n.min(100);
            assert_eq!(sum.load(Ordering::Relaxed), m * m.saturating_sub(1));
        }
    }

    #[test]
    fn try_for_each_reports_a_failure() {
        assert_eq!(
            try_for_each(100, |i| if i == 37 { Err(i) } else { Ok(()) }),
            Err(37)
        );
        assert_eq!(try_for_each(100, |_| Ok::<(), ()>(())), Ok(()));
        let r = try_for_each_item(vec![1, 2, 3], |x| if x == 2 { Err("two") } else { Ok(()) });
        assert_eq!(r, Err("two"));
        let made = AtomicUsize::new(0);
        let seen = AtomicUsize::new(0);
        let r = try_for_each_item_with(
            (0..1000).collect(),
            || {
                made.fetch_add(1, Ordering::Relaxed);
                Vec::<usize>::new()
            },
            |v, x: usize| {
                v.push(x);
                seen.fetch_add(1, Ordering::Relaxed);
                Ok::<(), ()>(())
            },
        );
        assert_eq!(r, Ok(()));
        assert_eq!(seen.load(Ordering::Relaxed), 1000);
        assert!(made.load(Ordering::Relaxed) <= rayon::current_num_threads() + 1);
    }
}

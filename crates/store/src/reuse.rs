/*!
Opening a file again: [`open_reused`] hands out the mapping and checked header of a file
this process opened lately, when it is still the same file, instead of mapping it anew.

A fresh open costs little in user space (the header and directory are checked in
microseconds), but the kernel's part does not shrink with the file: a new mapping, its
first page faults (header, directory, the chunk checksums, then every page a row view
reads), and at the end an unmapping that, in a process with threads running on other
cores (a BLAS pool, a data loader), interrupts those cores to drop their stale
translations. Code that opens a file per request (`sptk.open(p).rows(a, b)` in a data
loader) paid that each time: about 100 us for 1000 rows of a 10M-entry file with the
machine quiet, twice that with the caches cold.

Same file means the same path, device and inode, length, modification and status change
times (to the nanosecond the file system keeps), all read from the opened descriptor
(`fstat`), so the answer is about the file that would be mapped. A file replaced by
rename (this crate's writer, and most others) is a new inode; one rewritten in place
changes its times. The last [`KEEP`] files are kept, with the pages they have touched;
[`forget_reused`] lets them go. The threat model of [`SptFile::open`] is unchanged: a
kept mapping nobody reads cannot fault, and reuse checks the file first.
*/

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::{SptFile, StoreError};

/// Files kept for reuse, most recent first.
pub const KEEP: usize = 8;

/// What says a file is still the one that was mapped.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    path: PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Identity {
    fn of(path: &Path, meta: &std::fs::Metadata) -> Identity {
        Identity {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

static KEPT: Mutex<Vec<(Identity, Arc<SptFile>)>> = Mutex::new(Vec::new());

fn kept() -> std::sync::MutexGuard<'static, Vec<(Identity, Arc<SptFile>)>> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`SptFile::open`], reusing the mapping of the same file (see the module docs) when one
/// of the last [`KEEP`] files this function opened is it; a new mapping is kept in its
/// place.
///
/// # Errors
/// As for [`SptFile::open`].
pub fn open_reused(path: impl AsRef<Path>) -> Result<Arc<SptFile>, StoreError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| StoreError::from(e).at(path))?;
    let meta = file.metadata().map_err(|e| StoreError::from(e).at(path))?;
    let id = Identity::of(path, &meta);
    {
        let mut kept = kept();
        if let Some(at) = kept.iter().position(|(k, _)| *k == id) {
            let entry = kept.remove(at);
            let found = entry.1.clone();
            kept.insert(0, entry);
            return Ok(found);
        }
    }
    let opened = Arc::new(SptFile::map_file(&file, meta.len(), path)?);
    // Under one lock: any other entry of this path (stale, or mapped by another thread
    // meanwhile) and the oldest past `KEEP` leave, to be unmapped after the lock.
    let gone: Vec<_> = {
        let mut kept = kept();
        let (gone, mut stay): (Vec<_>, Vec<_>) = std::mem::take(&mut *kept)
            .into_iter()
            .partition(|(k, _)| k.path == id.path);
        stay.insert(0, (id, opened.clone()));
        let older = stay.split_off(KEEP.min(stay.len()));
        *kept = stay;
        gone.into_iter().chain(older).collect()
    };
    drop(gone);
    Ok(opened)
}

/// Lets every kept file go (their mappings end with the last tensor or view using them).
pub fn forget_reused() {
    kept().clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use sptk_tensor::{Entries, ValueVec};

    /// A diagonal CSR with these values.
    fn tensor(values: &[f64]) -> sptk_tensor::Tensor {
        let n = values.len() as u64;
        let e = Entries::from_parts(
            vec![n, n],
            vec![(0..n).collect(), (0..n).collect()],
            ValueVec::F64(values.to_vec().into()),
        )
        .unwrap();
        let target = sptk_encoding::resolve_target("CSR", 2).unwrap();
        sptk_tensor::convert(&e, &target, &Default::default())
            .unwrap()
            .tensor
    }

    fn values(f: &SptFile) -> Vec<f64> {
        match f.verify().unwrap().values() {
            ValueVec::F64(v) => v.to_vec(),
            other => panic!("{other:?}"),
        }
    }

    // One test: the kept files are the process's own.
    #[test]
    fn the_same_file_is_reused_and_a_changed_one_is_not() {
        forget_reused();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.spt");
        crate::write(&p, &tensor(&[1.0, 2.0]), &Default::default()).unwrap();
        let first = open_reused(&p).unwrap();
        assert!(Arc::ptr_eq(&first, &open_reused(&p).unwrap()));
        assert_eq!(values(&first), [1.0, 2.0]);

        // Replaced by rename (a new inode): the new contents, from a new mapping; the
        // old one still reads the old file.
        crate::write(&p, &tensor(&[3.0, 4.0]), &Default::default()).unwrap();
        let second = open_reused(&p).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(values(&second), [3.0, 4.0]);
        assert_eq!(values(&first), [1.0, 2.0]);

        // Rewritten in place (same inode, new length and times): not reused.
        let bytes = crate::to_bytes(&tensor(&[5.0, 6.0, 7.0]), &Default::default()).unwrap();
        std::fs::write(&p, &bytes).unwrap();
        let third = open_reused(&p).unwrap();
        assert!(!Arc::ptr_eq(&second, &third));
        assert_eq!(values(&third), [5.0, 6.0, 7.0]);

        // Another path to the same file is its own entry.
        let q = dir.path().join("b.spt");
        std::fs::hard_link(&p, &q).unwrap();
        let other = open_reused(&q).unwrap();
        assert!(!Arc::ptr_eq(&third, &other));
        assert_eq!(other.path(), Some(q.as_path()));

        // Only the last KEEP files stay; forgetting lets every one go.
        let paths: Vec<PathBuf> = (0..KEEP)
            .map(|i| {
                let f = dir.path().join(format!("{i}.spt"));
                crate::write(&f, &tensor(&[i as f64]), &Default::default()).unwrap();
                open_reused(&f).unwrap();
                f
            })
            .collect();
        assert!(!Arc::ptr_eq(&third, &open_reused(&p).unwrap()));
        let last = open_reused(&paths[KEEP - 1]).unwrap();
        assert!(Arc::ptr_eq(&last, &open_reused(&paths[KEEP - 1]).unwrap()));
        forget_reused();
        assert!(!Arc::ptr_eq(&last, &open_reused(&paths[KEEP - 1]).unwrap()));
        forget_reused();
    }
}

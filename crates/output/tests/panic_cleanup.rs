//! The panic hook of `remove_temporaries_on_panic` removes the named temporaries still
//! being written (the destructors that would remove them do not run under
//! `panic = "abort"`), and leaves committed files alone. One test in its own binary: the
//! list of temporaries is process-wide.

use sptk_output::{remove_pending_temporaries, remove_temporaries_on_panic, AtomicPath};

#[test]
fn named_temporaries_are_removed_by_the_panic_hook_and_committed_files_kept() {
    let dir = tempfile::tempdir().unwrap();

    // Pending, then removed directly: the later drop finds nothing to remove.
    let a = AtomicPath::create(&dir.path().join("a.h5")).unwrap();
    std::fs::write(a.path(), b"half").unwrap();
    assert!(a.path().exists());
    assert_eq!(remove_pending_temporaries(), 1);
    assert!(!a.path().exists());
    drop(a);
    assert!(!dir.path().join("a.h5").exists());

    // Committed and dropped ones are no longer pending.
    let b = AtomicPath::create(&dir.path().join("b.h5")).unwrap();
    std::fs::write(b.path(), b"whole").unwrap();
    b.commit().unwrap();
    drop(AtomicPath::create(&dir.path().join("c.h5")).unwrap());
    assert_eq!(remove_pending_temporaries(), 0);
    assert_eq!(std::fs::read(dir.path().join("b.h5")).unwrap(), b"whole");

    // A panic on another thread, while this one still writes: the hook removes it.
    remove_temporaries_on_panic();
    let d = AtomicPath::create(&dir.path().join("d.h5")).unwrap();
    std::fs::write(d.path(), b"half").unwrap();
    assert!(std::thread::spawn(|| panic!("a bug")).join().is_err());
    let _ = std::panic::take_hook();
    assert!(!d.path().exists(), "the hook left {}", d.path().display());
    drop(d);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only b.h5 is left");
}

//! Temporaries and panics. Under unwinding (tests always unwind, and so does the
//! workspace's release profile) a panic, caught or not, runs the destructors that remove
//! the temporaries it leaves behind, and `remove_temporaries_on_panic` installs nothing:
//! a caught panic in one write must not delete the other writes in flight.
//! `remove_pending_temporaries`, what the hook of a `panic = "abort"` build calls, removes
//! exactly the pending ones. One binary of its own: the list of temporaries and the panic
//! hook are process-wide.

use std::panic::{catch_unwind, AssertUnwindSafe};

use sptk_output::{
    remove_pending_temporaries, remove_temporaries_on_panic, AtomicFile, AtomicPath,
};

#[test]
fn panics_clean_up_through_destructors_and_leave_other_writes_alone() {
    let dir = tempfile::tempdir().unwrap();

    // What the abort-build hook calls: pending ones removed, the later drop finds none.
    let a = AtomicPath::create(&dir.path().join("a.h5")).unwrap();
    std::fs::write(a.path(), b"half").unwrap();
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

    remove_temporaries_on_panic();

    // A write in flight here while another thread panics (uncaught there, as a thread's
    // panic is) and this one catches a panic of its own: the write survives both.
    let d = AtomicPath::create(&dir.path().join("d.h5")).unwrap();
    std::fs::write(d.path(), b"half").unwrap();
    assert!(std::thread::spawn(|| panic!("a bug")).join().is_err());
    assert!(catch_unwind(|| panic!("a damaged input, caught")).is_err());
    assert!(
        d.path().exists(),
        "a caught panic removed {}",
        d.path().display()
    );

    // The panicking write cleans up after itself on the way out: a named temporary and
    // an `AtomicFile` (unnamed or named) dropped by the unwinding.
    let e_target = dir.path().join("e.h5");
    let f_target = dir.path().join("f.txt");
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let e = AtomicPath::create(&e_target).unwrap();
        std::fs::write(e.path(), b"half").unwrap();
        let mut f = AtomicFile::create(&f_target).unwrap();
        std::io::Write::write_all(f.file(), b"half").unwrap();
        assert_eq!(sptk_output::temporaries(&e_target).unwrap().len(), 1);
        panic!("the reader failed");
    }));
    assert!(caught.is_err());
    assert!(sptk_output::temporaries(&e_target).unwrap().is_empty());
    assert!(sptk_output::temporaries(&f_target).unwrap().is_empty());
    assert!(!e_target.exists() && !f_target.exists());

    // The surviving write still commits.
    std::fs::write(d.path(), b"whole").unwrap();
    d.commit().unwrap();
    assert_eq!(std::fs::read(dir.path().join("d.h5")).unwrap(), b"whole");
    let _ = std::panic::take_hook();
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["b.h5", "d.h5"]);
}

//! The properties of atomic output: replace or nothing, the temporary beside the target,
//! stale temporaries of dead writers removed (live ones kept), the target's permissions
//! kept, standard output refused.

use sptk_output::{remove_stale_temporaries, temporaries, write_atomic, AtomicFile};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

#[test]
fn writes_a_new_file_and_replaces_an_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    write_atomic(&path, |f| f.write_all(b"one")).unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"one");
    write_atomic(&path, |f| f.write_all(b"two, longer")).unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"two, longer");
    assert!(temporaries(&path).unwrap().is_empty());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, b"old").unwrap();
    let err = write_atomic(&path, |f| {
        f.write_all(b"half")?;
        Err(io::Error::other("the writer gave up"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "the writer gave up");
    assert_eq!(fs::read(&path).unwrap(), b"old");
    assert!(temporaries(&path).unwrap().is_empty());
    // Also without an old file: nothing at all is left.
    let new = dir.path().join("b.txt");
    assert!(write_atomic(&new, |_| Err(io::Error::other("no"))).is_err());
    assert!(!new.exists());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_dropped_file_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, b"old").unwrap();
    let mut out = AtomicFile::create(&path).unwrap();
    out.file().write_all(b"never published").unwrap();
    drop(out);
    assert_eq!(fs::read(&path).unwrap(), b"old");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// The folder of the open file behind `f`, as the kernel names it.
fn folder_of_open_file(f: &fs::File) -> std::path::PathBuf {
    use std::os::unix::io::AsRawFd;
    let link = fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
    link.parent().unwrap().to_path_buf()
}

#[test]
fn the_temporary_is_beside_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let path = sub.join("a.txt");
    let mut out = AtomicFile::create(&path).unwrap();
    assert_eq!(
        folder_of_open_file(out.file()),
        sub.canonicalize().unwrap(),
        "the temporary must be in the target's folder (same file system for the rename)"
    );
    out.file().write_all(b"x").unwrap();
    out.commit().unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"x");
}

#[test]
fn a_relative_bare_name_is_written_in_the_current_folder() {
    // `folder` of a bare name is `.`.
    assert_eq!(sptk_output::folder(Path::new("x.mtx")), Path::new("."));
    assert_eq!(sptk_output::folder(Path::new("d/x.mtx")), Path::new("d"));
}

fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn stale_temporaries_of_dead_writers_are_removed_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.mtx");
    let dead = dead_pid();
    let stale = dir.path().join(format!(".m.mtx.tmp.{dead}.0"));
    fs::write(&stale, b"half a file").unwrap();
    // pid 1 runs: its temporary may still be being written.
    let live = dir.path().join(".m.mtx.tmp.1.0");
    fs::write(&live, b"someone is writing").unwrap();
    // Another target's, and a folder (the levels writer's naming): a killed write into
    // out2 is cleaned by a later write of out3 in the same folder (issue 27).
    let other = dir.path().join(format!(".other.mtx.tmp.{dead}.0"));
    fs::write(&other, b"another target").unwrap();
    let folder = dir.path().join(format!(".other.levels.tmp.{dead}"));
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("values.parquet"), b"half").unwrap();
    let live_other = dir.path().join(".other.mtx.tmp.1.0");
    fs::write(&live_other, b"someone is writing").unwrap();
    write_atomic(&path, |f| f.write_all(b"new")).unwrap();
    assert!(!stale.exists(), "a dead writer's temporary is removed");
    assert!(live.exists(), "a live writer's temporary is kept");
    assert!(
        !other.exists() && !folder.exists(),
        "dead writers' temporaries of other targets are removed too"
    );
    assert!(live_other.exists());
    assert_eq!(temporaries(&path).unwrap(), vec![live.clone()]);
    assert_eq!(remove_stale_temporaries(&path).unwrap(), 0);
}

#[test]
fn standard_output_and_missing_folders_are_refused() {
    let err = AtomicFile::create(Path::new("-")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        "standard output (`-`) cannot be written atomically; write it directly"
    );
    let dir = tempfile::tempdir().unwrap();
    let err = write_atomic(
        &dir.path().join("no/such/a.txt"),
        |_| Ok::<_, io::Error>(()),
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

#[test]
fn an_existing_target_keeps_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("private.txt");
    fs::write(&path, b"old").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    write_atomic(&path, |f| f.write_all(b"new")).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o664)).unwrap();
    write_atomic(&path, |f| f.write_all(b"newer")).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o664);
}

#[test]
fn the_fill_can_seek_and_read_back() {
    // The .spt writer rewrites its header in place at the end.
    use std::io::{Read, Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.bin");
    write_atomic(&path, |f| {
        f.write_all(b"xxxx-body")?;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(b"HEAD")?;
        f.seek(SeekFrom::Start(0))?;
        let mut back = String::new();
        f.read_to_string(&mut back)?;
        assert_eq!(back, "HEAD-body");
        Ok::<_, io::Error>(())
    })
    .unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"HEAD-body");
}

#[test]
fn the_folder_sweep_removes_dead_writers_files_and_folders_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dead = dead_pid();
    let me = std::process::id();
    let stale_file = d.join(format!(".a.h5ad.tmp.{dead}.0"));
    let stale_dir = d.join(format!(".b.levels.tmp.{dead}"));
    fs::write(&stale_file, b"half").unwrap();
    fs::create_dir(&stale_dir).unwrap();
    fs::write(stale_dir.join("values.parquet"), b"half").unwrap();
    let keep = [
        d.join(format!(".c.mat.tmp.{me}.0")),
        d.join(".d.mat.tmp.1.0"),
        d.join(format!("e.mat.tmp.{dead}.0")),
        d.join(format!(".f.mat.tmp.{dead}.0.bak")),
    ];
    for k in &keep {
        fs::write(k, b"keep").unwrap();
    }
    assert_eq!(sptk_output::remove_stale_temporaries_in(d).unwrap(), 2);
    assert!(!stale_file.exists() && !stale_dir.exists());
    for k in &keep {
        assert!(k.exists(), "{}", k.display());
    }
    // By target: only that target's.
    let g = d.join(format!(".g.spt.tmp.{dead}.3"));
    let h = d.join(format!(".h.spt.tmp.{dead}"));
    fs::write(&g, b"").unwrap();
    fs::create_dir(&h).unwrap();
    assert_eq!(remove_stale_temporaries(&d.join("g.spt")).unwrap(), 1);
    assert!(!g.exists() && h.exists());
    assert_eq!(remove_stale_temporaries(&d.join("h.spt")).unwrap(), 1);
    assert!(!h.exists());
}

#[test]
fn a_folder_takes_the_place_of_an_old_folder_or_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.levels");
    let fill = |name: &str, files: &[&str]| {
        let p = dir.path().join(name);
        fs::create_dir(&p).unwrap();
        for f in files {
            fs::write(p.join(f), f.as_bytes()).unwrap();
        }
        p
    };
    let names = |p: &Path| {
        let mut v: Vec<String> = fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // Nothing there yet.
    let new = fill(".out.levels.tmp.1", &["a", "b"]);
    sptk_output::replace_folder(&new, &target).unwrap();
    assert_eq!(names(&target), ["a", "b"]);
    // An old folder with other files: none of them survive, nothing is left beside.
    let new = fill(".out.levels.tmp.2", &["c"]);
    sptk_output::replace_folder(&new, &target).unwrap();
    assert_eq!(names(&target), ["c"]);
    assert_eq!(names(dir.path()), ["out.levels"]);
    // A file of that name.
    fs::remove_dir_all(&target).unwrap();
    fs::write(&target, b"old").unwrap();
    let new = fill(".out.levels.tmp.3", &["d"]);
    sptk_output::replace_folder(&new, &target).unwrap();
    assert_eq!(names(&target), ["d"]);
    assert_eq!(names(dir.path()), ["out.levels"]);
}

//! What the user named as the input: standard input, a file, a member inside a container
//! file (`file.h5:/group/X`), a folder (a 10x MEX folder, a folder of partitions), or
//! several files read as one tensor.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::InputError;

/// Where an input's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Standard input (`-`): read once, front to back.
    Stdin,
    /// One file.
    File(PathBuf),
    /// A folder, read as one input.
    Folder(PathBuf),
    /// Several files of one format, read as one tensor (in the order given).
    Files(Vec<PathBuf>),
}

/// An input as named: where, and which member of a container file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceSpec {
    /// Where the bytes are.
    pub origin: Origin,
    /// The member inside a container (`/group/X` of `file.h5:/group/X`), if one was named.
    pub member: Option<String>,
}

impl SourceSpec {
    /// One file.
    pub fn file(path: impl Into<PathBuf>) -> SourceSpec {
        SourceSpec {
            origin: Origin::File(path.into()),
            member: None,
        }
    }

    /// Resolves names given on a command line: `-` (standard input), a file, a folder,
    /// `file:member` (when no file has the whole name and the part before the last `:`
    /// that makes one is a file), several plain files, or a quoted glob (`'parts/*.parquet'`:
    /// `*` and `?` in the file name, the matching files in name order).
    ///
    /// # Errors
    /// [`InputError::Source`]: nothing named, a missing file (saying whether its folder is
    /// missing too), or several names of which one is not a plain file.
    pub fn resolve<P: AsRef<Path>>(names: &[P]) -> Result<SourceSpec, InputError> {
        match names {
            [] => Err(InputError::Source(
                "no input given (a file, a folder, file:member, or - for standard input)".into(),
            )),
            [one] => match glob(one.as_ref())? {
                Some(files) if files.len() == 1 => Ok(SourceSpec::file(&files[0])),
                Some(files) => Ok(SourceSpec {
                    origin: Origin::Files(files),
                    member: None,
                }),
                None => resolve_one(one.as_ref()),
            },
            several => {
                let mut files = Vec::with_capacity(several.len());
                for name in several {
                    let spec = resolve_one(name.as_ref())?;
                    match spec {
                        SourceSpec {
                            origin: Origin::File(path),
                            member: None,
                        } => files.push(path),
                        other => {
                            return Err(InputError::Source(format!(
                                "{other}: several inputs are read as one tensor, so each must be a plain file (not standard input, a folder or file:member)"
                            )))
                        }
                    }
                }
                Ok(SourceSpec {
                    origin: Origin::Files(files),
                    member: None,
                })
            }
        }
    }

    /// The paths of the files this input names directly (none for standard input; the
    /// folder itself for a folder).
    pub fn paths(&self) -> Vec<&Path> {
        match &self.origin {
            Origin::Stdin => Vec::new(),
            Origin::File(p) | Origin::Folder(p) => vec![p.as_path()],
            Origin::Files(ps) => ps.iter().map(PathBuf::as_path).collect(),
        }
    }
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::Stdin => f.write_str("standard input")?,
            Origin::File(p) | Origin::Folder(p) => write!(f, "{}", p.display())?,
            Origin::Files(ps) => match ps.as_slice() {
                [] => f.write_str("(no files)")?,
                [one] => write!(f, "{}", one.display())?,
                [first, rest @ ..] => write!(
                    f,
                    "{} (+{} more file{})",
                    first.display(),
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                )?,
            },
        }
        if let Some(m) = &self.member {
            write!(f, ":{m}")?;
        }
        Ok(())
    }
}

fn resolve_one(path: &Path) -> Result<SourceSpec, InputError> {
    if path.as_os_str() == "-" {
        return Ok(SourceSpec {
            origin: Origin::Stdin,
            member: None,
        });
    }
    if path.is_dir() {
        return Ok(SourceSpec {
            origin: Origin::Folder(path.to_path_buf()),
            member: None,
        });
    }
    if path.exists() {
        return Ok(SourceSpec::file(path));
    }
    // `file:member`: the longest prefix ending before a `:` that is a file.
    if let Some(text) = path.to_str() {
        for (at, _) in text.rmatch_indices(':') {
            let (file, member) = (&text[..at], &text[at + 1..]);
            if !file.is_empty() && Path::new(file).is_file() {
                if member.is_empty() {
                    return Err(InputError::Source(format!(
                        "{text}: no member named after the `:` (say file:NAME, or leave the `:` out)"
                    )));
                }
                return Ok(SourceSpec {
                    origin: Origin::File(PathBuf::from(file)),
                    member: Some(member.to_string()),
                });
            }
        }
    }
    Err(missing(path))
}

/// The files a name with `*` or `?` in its last component matches, in name order; None
/// when the name has no wildcard or is itself a file.
fn glob(path: &Path) -> Result<Option<Vec<PathBuf>>, InputError> {
    let Some(pattern) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    if path.exists() || !pattern.contains(['*', '?']) {
        return Ok(None);
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let entries = std::fs::read_dir(folder).map_err(|e| InputError::io(folder, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| wildcard(pattern.as_bytes(), n.as_bytes()))
        })
        .map(|e| match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.join(e.file_name()),
            _ => PathBuf::from(e.file_name()),
        })
        .collect();
    if files.is_empty() {
        return Err(InputError::Source(format!(
            "{}: no file matches",
            path.display()
        )));
    }
    files.sort();
    Ok(Some(files))
}

/// Whether `name` matches `pattern` (`*` any run of bytes, `?` one byte).
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Says which part of a missing path is missing: the file, or the folder it would be in.
fn missing(path: &Path) -> InputError {
    match path
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        Some(folder) => InputError::Source(format!(
            "{}: the folder {} does not exist",
            path.display(),
            folder.display()
        )),
        None => InputError::Source(format!("{}: no such file", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_origins_and_members() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.h5");
        std::fs::write(&file, b"x").unwrap();
        let named = |s: &str| SourceSpec::resolve(&[PathBuf::from(s)]);

        assert_eq!(named("-").unwrap().origin, Origin::Stdin);
        assert_eq!(
            named(dir.path().to_str().unwrap()).unwrap().origin,
            Origin::Folder(dir.path().to_path_buf())
        );
        assert_eq!(
            named(file.to_str().unwrap()).unwrap(),
            SourceSpec::file(&file)
        );
        let with_member = named(&format!("{}:/obsp/distances", file.display())).unwrap();
        assert_eq!(with_member.origin, Origin::File(file.clone()));
        assert_eq!(with_member.member.as_deref(), Some("/obsp/distances"));
        assert_eq!(
            with_member.to_string(),
            format!("{}:/obsp/distances", file.display())
        );
        // A member may itself hold a colon.
        let colon = named(&format!("{}:a:b", file.display())).unwrap();
        assert_eq!(colon.member.as_deref(), Some("a:b"));

        let e = named(&format!("{}:", file.display())).unwrap_err();
        assert!(e.to_string().contains("no member named"), "{e}");
        let e = named(&format!("{}/nope.mtx", dir.path().display())).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}/nope.mtx: no such file", dir.path().display())
        );
        let e = named(&format!("{}/no/such.mtx", dir.path().display())).unwrap_err();
        assert!(e.to_string().contains("the folder"), "{e}");
    }

    #[test]
    fn a_glob_names_the_files_it_matches_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for n in [
            "part-1.parquet",
            "part-0.parquet",
            "part-2.csv",
            "other.parquet",
        ] {
            std::fs::write(dir.path().join(n), b"x").unwrap();
        }
        let pat = dir.path().join("part-*.parquet");
        let spec = SourceSpec::resolve(&[&pat]).unwrap();
        assert_eq!(
            spec.origin,
            Origin::Files(vec![
                dir.path().join("part-0.parquet"),
                dir.path().join("part-1.parquet")
            ])
        );
        let one = SourceSpec::resolve(&[dir.path().join("o?her.*")]).unwrap();
        assert_eq!(one, SourceSpec::file(dir.path().join("other.parquet")));
        let e = SourceSpec::resolve(&[dir.path().join("*.tns")]).unwrap_err();
        assert!(e.to_string().contains("no file matches"), "{e}");
        assert!(wildcard(b"a*b*c", b"aXXbYc") && !wildcard(b"a*b", b"ab_") && wildcard(b"*", b""));
    }

    #[test]
    fn several_names_must_be_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.mtx");
        let b = dir.path().join("b.mtx");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(&b, b"y").unwrap();
        let spec = SourceSpec::resolve(&[&a, &b]).unwrap();
        assert_eq!(spec.origin, Origin::Files(vec![a.clone(), b.clone()]));
        assert_eq!(spec.to_string(), format!("{} (+1 more file)", a.display()));
        let e = SourceSpec::resolve(&[a.as_path(), Path::new("-")]).unwrap_err();
        assert!(e.to_string().contains("each must be a plain file"), "{e}");
        let e = SourceSpec::resolve(&[a.as_path(), dir.path()]).unwrap_err();
        assert!(e.to_string().contains("each must be a plain file"), "{e}");
        assert!(SourceSpec::resolve::<&Path>(&[]).is_err());
    }
}

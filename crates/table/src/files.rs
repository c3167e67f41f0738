//! The table files of a folder of partitions (as Spark, Dask, DuckDB or pyarrow's dataset
//! writer leave them), with the keys of hive-style `key=value` folders.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::TableError;
use crate::open::TableKind;

/// A table file and the partition keys of the folders above it.
pub type PartitionFile = (PathBuf, HashMap<String, String>);

/// True if a file name says it is a table (`.parquet`, `.parq`, `.pq`, `.arrow`,
/// `.feather`, `.ipc`, `.arrows`).
pub fn is_table_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    [
        ".parquet", ".parq", ".pq", ".arrow", ".feather", ".ipc", ".arrows",
    ]
    .iter()
    .any(|e| name.ends_with(e))
}

/// The table files under `folder`, recursively, in path order: files whose name or first
/// bytes say they are tables. Hidden files and files whose name starts with `_`
/// (`_SUCCESS`, `_metadata`) are skipped.
///
/// # Errors
/// The folder cannot be listed, or holds no table file.
pub fn files_in(folder: &Path) -> Result<Vec<PartitionFile>, TableError> {
    let mut out = Vec::new();
    walk(folder, &HashMap::new(), &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    if out.is_empty() {
        return Err(TableError::invalid(
            folder,
            "the folder holds no Parquet or Arrow IPC file",
        ));
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    keys: &HashMap<String, String>,
    out: &mut Vec<PartitionFile>,
) -> Result<(), TableError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TableError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| TableError::io(dir, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| TableError::io(&path, e))?;
        if kind.is_dir() {
            let mut keys = keys.clone();
            if let Some((k, v)) = name.split_once('=') {
                keys.insert(k.to_string(), v.to_string());
            }
            walk(&path, &keys, out)?;
        } else if is_table_name(&path) || sniffs_as_table(&path) {
            out.push((path, keys.clone()));
        }
    }
    Ok(())
}

fn sniffs_as_table(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .is_ok_and(|n| TableKind::of(&head[..n]).is_some())
}

//! Variable-length strings read from the file's own bytes: the dataset's stored elements
//! (each a length, then a global heap ID: a collection's address and an object's index),
//! read by a plan as raw bytes, and the global heap collections they name, each read once.
//!
//! libhdf5 converts such a dataset one element at a time (a heap lookup, a `malloc` and a
//! copy each): the 130,000 obs and var names of a 100,000 x 30,000 `.h5ad` took about 40
//! ms that way, most of its read besides the matrix. This reader takes none of that, and
//! gives the library's answer or none: anything it does not expect (sizes of offsets or
//! lengths other than 8, a user block, a shuffled or compact dataset, bytes that are not
//! UTF-8) leaves the dataset to the library, and a heap that is damaged is an error
//! naming the dataset. Every address, size and index from the file is checked before use.
//!
//! Layouts (the HDF5 file format specification, "Global Heap" and "Variable-length"
//! datatypes): a stored element is `length: u32, collection: u64, index: u32`; a
//! collection is `"GCOL", version 1, 3 reserved bytes, size: u64` then objects `index:
//! u16, references: u16, 4 reserved bytes, size: u64, data` padded to 8 bytes, up to the
//! free-space object of index 0.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

use hdf5::Dataset;

use crate::direct::{execute, Source};
use crate::error::H5Error;
use crate::h5::H5;

/// Bytes of a stored element: the length, the collection's address, the object's index.
const ELEMENT: usize = 16;

/// Bytes of a collection's header and of an object's.
const HEADER: usize = 16;

/// The strings of the 1-D variable-length string dataset `ds` from the file's bytes, as
/// the library would give them (each cut at its first NUL); None where the library must
/// read them.
pub(crate) fn strings(h: &H5, ds: &Dataset, object: &str) -> Result<Option<Vec<String>>, H5Error> {
    if h.file.userblock() != 0 {
        return Ok(None);
    }
    let sizes = h.file.create_plist().map(|p| p.sizes());
    if !sizes.is_ok_and(|s| usize::from(s.sizeof_addr) == 8 && usize::from(s.sizeof_size) == 8) {
        return Ok(None);
    }
    let Some(plan) = crate::plan::plan_bytes(h, ds, ELEMENT, object)? else {
        return Ok(None);
    };
    let src = Source::open(h.at, h.limit)?;
    let raw: Vec<u8> = execute(&src, &plan, object)?;
    let mut heap = Heap {
        src: &src,
        object,
        collections: HashMap::new(),
        read: 0,
    };
    let mut out = Vec::with_capacity(raw.len() / ELEMENT);
    for e in raw.chunks_exact(ELEMENT) {
        let len = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
        if len == 0 {
            out.push(String::new());
            continue;
        }
        let addr = u64::from_le_bytes([e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11]]);
        let index = u32::from_le_bytes([e[12], e[13], e[14], e[15]]);
        let bytes = heap.object(addr, index, len, out.len())?;
        // The library hands out C strings: each ends at its first NUL.
        let bytes = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
        match std::str::from_utf8(bytes) {
            Ok(s) => out.push(s.to_string()),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The global heap collections read so far.
struct Heap<'s, 'a> {
    src: &'s Source<'a>,
    object: &'s str,
    collections: HashMap<u64, Collection>,
    /// Bytes of the collections read: at most the file's size, as collections do not
    /// overlap (a damaged heap that says they do cannot make this read more).
    read: u64,
}

/// One collection's bytes and where each of its objects lies in them.
struct Collection {
    bytes: Vec<u8>,
    /// The objects' indices, data starts and sizes, by index.
    objects: Vec<(u16, usize, usize)>,
}

impl Heap<'_, '_> {
    /// The first `len` bytes of object `index` of the collection at `addr`, for the
    /// string `element` (errors name it).
    fn object(
        &mut self,
        addr: u64,
        index: u32,
        len: usize,
        element: usize,
    ) -> Result<&[u8], H5Error> {
        if !self.collections.contains_key(&addr) {
            let c = self.read(addr, element)?;
            self.read += c.bytes.len() as u64;
            self.collections.insert(addr, c);
        }
        let at = self.src.at;
        let object = self.object;
        let c = &self.collections[&addr];
        let bad = |m: String| at.err(object, format!("string {element}: {m}"));
        let found = u16::try_from(index)
            .ok()
            .and_then(|i| c.objects.binary_search_by_key(&i, |o| o.0).ok());
        let Some(&(_, start, size)) = found.and_then(|k| c.objects.get(k)) else {
            return Err(bad(format!(
                "no object {index} in the global heap collection at offset {addr}"
            )));
        };
        if len > size {
            return Err(bad(format!(
                "{len} bytes long, but its heap object holds {size}"
            )));
        }
        c.bytes
            .get(start..start + len)
            .ok_or_else(|| bad("outside its heap collection".into()))
    }

    /// Reads and indexes the collection at `addr`.
    fn read(&self, addr: u64, element: usize) -> Result<Collection, H5Error> {
        let bad = |m: String| {
            self.src.at.err(
                self.object,
                format!("string {element}: the global heap collection at offset {addr} {m}"),
            )
        };
        let mut head = [0u8; HEADER];
        if addr
            .checked_add(HEADER as u64)
            .is_none_or(|end| end > self.src.len)
        {
            return Err(bad(format!(
                "runs past the end of the file ({} bytes)",
                self.src.len
            )));
        }
        self.src
            .file
            .read_exact_at(&mut head, addr)
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        if &head[..4] != b"GCOL" || head[4] != 1 {
            return Err(bad("is not one (no GCOL signature of version 1)".into()));
        }
        let size = u64::from_le_bytes([
            head[8], head[9], head[10], head[11], head[12], head[13], head[14], head[15],
        ]);
        if size < HEADER as u64 || addr.checked_add(size).is_none_or(|end| end > self.src.len) {
            return Err(bad(format!(
                "of {size} bytes runs past the end of the file ({} bytes)",
                self.src.len
            )));
        }
        if self.read.saturating_add(size) > self.src.len {
            return Err(bad(format!(
                "of {size} bytes overlaps others: the heap's collections hold more than the file"
            )));
        }
        if u128::from(size) > u128::from(self.src.limit) {
            return Err(bad(format!(
                "of {size} bytes exceeds the memory limit of {} bytes (--memory-limit)",
                self.src.limit
            )));
        }
        let mut bytes = vec![0u8; size as usize];
        self.src
            .file
            .read_exact_at(&mut bytes, addr)
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        let mut objects: Vec<(u16, usize, usize)> = Vec::new();
        let mut at = HEADER;
        while let Some(h) = bytes.get(at..at + HEADER) {
            let index = u16::from_le_bytes([h[0], h[1]]);
            if index == 0 {
                break; // the free space, to the end
            }
            let osize = u64::from_le_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]);
            let start = at + HEADER;
            let end = usize::try_from(osize)
                .ok()
                .and_then(|s| start.checked_add(s))
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    bad(format!(
                        "has an object {index} of {osize} bytes past its end"
                    ))
                })?;
            objects.push((index, start, end - start));
            at = end.next_multiple_of(8);
        }
        objects.sort_unstable_by_key(|o| o.0);
        if let Some(w) = objects.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(bad(format!("has two objects {}", w[0].0)));
        }
        Ok(Collection { bytes, objects })
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use hdf5::types::{TypeDescriptor, VarLenUnicode};

    use super::*;

    fn testdata() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
    }

    /// Every dataset of `g` and the groups under it, by path.
    fn datasets(g: &hdf5::Group, at: &str, out: &mut Vec<String>) {
        for name in g.member_names().unwrap() {
            let path = format!("{at}/{name}");
            if let Ok(sub) = g.group(&name) {
                datasets(&sub, &path, out);
            } else {
                out.push(path);
            }
        }
    }

    /// (direct, library) for every 1-D variable-length string dataset of `file`.
    fn both_ways(file: &Path) -> Vec<(String, Option<Vec<String>>, Vec<String>)> {
        let h = crate::h5::open(file, None).unwrap();
        let mut names = Vec::new();
        datasets(&h.file, "", &mut names);
        let mut out = Vec::new();
        for name in names {
            let ds = h.file.dataset(&name).unwrap();
            let Ok(td) = ds.dtype().and_then(|t| t.to_descriptor()) else {
                continue;
            };
            if ds.ndim() != 1
                || !matches!(
                    td,
                    TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii
                )
            {
                continue;
            }
            let direct = strings(&h, &ds, &name).unwrap();
            let library = h.strings_by_library(&ds, &name, td).unwrap();
            out.push((name, direct, library));
        }
        out
    }

    #[test]
    fn files_by_other_tools_read_as_the_library_reads_them() {
        let mut read = 0;
        for rel in [
            "anndata/adata_csc_f64.h5ad",
            "anndata/adata_csr_f32.h5ad",
            "anndata/adata_dense_f32.h5ad",
            "anndata/adata_layers.h5ad",
            "10x/filtered_feature_bc_matrix.h5",
        ] {
            for (name, direct, library) in both_ways(&testdata().join(rel)) {
                let direct = direct.unwrap_or_else(|| panic!("{rel} {name}: left to the library"));
                assert_eq!(direct, library, "{rel} {name}");
                read += 1;
            }
        }
        // obs and var names of each .h5ad, 10x's barcodes and features.
        assert!(read >= 10, "{read} datasets");
    }

    /// A file with one variable-length string dataset `/s` of `values`.
    fn file_with(values: &[&str]) -> tempfile::NamedTempFile {
        let f = tempfile::Builder::new().suffix(".h5").tempfile().unwrap();
        let h = hdf5::File::create(f.path()).unwrap();
        let v: Vec<VarLenUnicode> = values.iter().map(|s| s.parse().unwrap()).collect();
        h.new_dataset_builder().with_data(&v).create("s").unwrap();
        drop(h);
        f
    }

    fn direct(f: &tempfile::NamedTempFile) -> Result<Option<Vec<String>>, String> {
        let h = crate::h5::open(f.path(), None).unwrap();
        let ds = h.file.dataset("s").unwrap();
        strings(&h, &ds, "/s").map_err(|e| e.to_string())
    }

    #[test]
    fn empty_and_long_strings_and_a_damaged_heap() {
        let long = "x".repeat(10_000);
        let values = ["", "a", "ünïcödé", &long, "", "last"];
        let f = file_with(&values);
        assert_eq!(direct(&f).unwrap().unwrap(), values);

        // Damage the heap's collection in place: its signature, then an object's size.
        let bytes = std::fs::read(f.path()).unwrap();
        let at = bytes.windows(4).position(|w| w == b"GCOL").unwrap();
        let broken = |edit: &dyn Fn(&mut Vec<u8>), wants: &str| {
            let mut b = bytes.clone();
            edit(&mut b);
            std::fs::write(f.path(), &b).unwrap();
            let e = direct(&f).unwrap_err();
            assert!(
                e.contains("/s: string ") && e.contains(wants),
                "{wants}: {e}"
            );
        };
        broken(&|b| b[at] = b'X', "is not one (no GCOL signature");
        // The first object's size (after the 16-byte header, at +8 of the object's).
        broken(
            &|b| b[at + 24..at + 32].copy_from_slice(&u64::MAX.to_le_bytes()),
            "past its end",
        );
        broken(
            &|b| b[at + 8..at + 16].copy_from_slice(&(1u64 << 40).to_le_bytes()),
            "runs past the end of the file",
        );
    }
}

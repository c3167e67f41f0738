/*!
[`Labels`]: the names of one dimension's coordinates (gene ids, cell barcodes, node ids),
kept as Arrow and the storage file keep strings: one UTF-8 byte buffer and `len + 1`
offsets into it, so that a million barcodes are two arrays, not a million allocations,
and a stored file hands them out without a copy.
*/

use std::fmt;

use crate::buffer::Buf;
use crate::index::IndexVec;

/// The labels of one dimension: label `i` is `bytes[offsets[i] .. offsets[i + 1]]`,
/// valid UTF-8. Offsets start at 0, never decrease, end at `bytes.len()` and fall on
/// character boundaries (checked by [`Labels::try_from_parts`]).
#[derive(Clone, PartialEq)]
pub struct Labels {
    offsets: IndexVec,
    bytes: Buf<u8>,
}

/// Why offsets and bytes are not a valid set of labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelError {
    /// What is wrong, naming the offset or label by index.
    pub message: String,
}

impl fmt::Display for LabelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LabelError {}

fn bad(message: String) -> LabelError {
    LabelError { message }
}

impl Labels {
    /// Labels from strings, with 32-bit offsets where the text fits (else 64-bit).
    pub fn from_strings<I, S>(labels: I) -> Labels
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut bytes = Vec::new();
        let mut offsets: Vec<u64> = vec![0];
        for s in labels {
            bytes.extend_from_slice(s.as_ref().as_bytes());
            offsets.push(bytes.len() as u64);
        }
        let offsets = match u32::try_from(bytes.len()) {
            Ok(_) => IndexVec::U32(offsets.iter().map(|&o| o as u32).collect::<Vec<_>>().into()),
            Err(_) => IndexVec::U64(offsets.into()),
        };
        Labels {
            offsets,
            bytes: bytes.into(),
        }
    }

    /// Labels from stored arrays (zero-copy where they are), after checking them: at least
    /// one offset, the first 0, none decreasing, the last `bytes.len()`, every one on a
    /// character boundary of the UTF-8 text. O(labels + bytes).
    ///
    /// # Errors
    /// The first problem, naming the offset.
    pub fn try_from_parts(offsets: IndexVec, bytes: Buf<u8>) -> Result<Labels, LabelError> {
        if matches!(offsets, IndexVec::Packed2 { .. }) {
            return Err(bad("offsets cannot be 2-bit".into()));
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            bad(format!(
                "the label text is not UTF-8 (byte {} is the first that is not)",
                e.valid_up_to()
            ))
        })?;
        let n = offsets.len();
        if n == 0 {
            return Err(bad("offsets is empty; it needs labels + 1 elements".into()));
        }
        let mut prev = 0u64;
        for (i, o) in offsets.iter().enumerate() {
            if i == 0 && o != 0 {
                return Err(bad(format!("offsets[0] is {o}, not 0")));
            }
            if o < prev {
                return Err(bad(format!(
                    "offsets[{i}] = {o} is below offsets[{}] = {prev}",
                    i - 1
                )));
            }
            if o > bytes.len() as u64 {
                return Err(bad(format!(
                    "offsets[{i}] = {o} is past the end of the text ({} bytes)",
                    bytes.len()
                )));
            }
            if !text.is_char_boundary(o as usize) {
                return Err(bad(format!("offsets[{i}] = {o} splits a UTF-8 character")));
            }
            prev = o;
        }
        if prev != bytes.len() as u64 {
            return Err(bad(format!(
                "offsets[{}] = {prev}, but the text has {} bytes",
                n - 1,
                bytes.len()
            )));
        }
        Ok(Labels { offsets, bytes })
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True if there are no labels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Label `i`, or None past the end.
    pub fn get(&self, i: usize) -> Option<&str> {
        let lo = self.offsets.get(i)? as usize;
        let hi = self.offsets.get(i.checked_add(1)?)? as usize;
        // Offsets were checked to be ascending character boundaries of valid UTF-8.
        std::str::from_utf8(self.bytes.get(lo..hi)?).ok()
    }

    /// Every label, in coordinate order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or(""))
    }

    /// The offsets array (`len + 1` elements, 32 or 64 bits).
    pub fn offsets(&self) -> &IndexVec {
        &self.offsets
    }

    /// The UTF-8 text of all labels, concatenated.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The labels `offset, offset + stride, ...` (`size` of them), as a dimension slice
    /// selects coordinates. None if the slice runs past the end.
    pub fn slice(&self, offset: u64, size: u64, stride: u64) -> Option<Labels> {
        let last = match size {
            0 => None,
            _ => Some(offset.checked_add((size - 1).checked_mul(stride)?)?),
        };
        if last.is_some_and(|l| l >= self.len() as u64) {
            return None;
        }
        let picked = (0..size).map(|k| self.get((offset + k * stride) as usize).unwrap_or(""));
        Some(Labels::from_strings(picked))
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<&str> = self.iter().take(4).collect();
        write!(f, "Labels({} labels: {shown:?}", self.len())?;
        if self.len() > shown.len() {
            f.write_str(", ...")?;
        }
        f.write_str(")")
    }
}

/// Makes repeated names unique as anndata's `make_index_unique` (`var_names_make_unique`)
/// does, so that labels name one position each: the first of each name stays, each later
/// one becomes `NAME-1`, `NAME-2`, ..., skipping a new name that is already taken.
/// Returns the new names, in order (empty where every name was unique).
pub fn make_unique(names: &mut [String]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> = names.iter().cloned().collect();
    if taken.len() == names.len() {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    let mut counter: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut renamed = Vec::new();
    for n in names.iter_mut() {
        if seen.insert(n.clone()) {
            continue;
        }
        let c = counter.entry(n.clone()).or_insert(0);
        let new = loop {
            *c += 1;
            let candidate = format!("{n}-{c}");
            if taken.insert(candidate.clone()) {
                break candidate;
            }
        };
        renamed.push(new.clone());
        *n = new;
    }
    renamed
}

/// The note a reader adds where [`make_unique`] renamed gene symbols (`renamed`, in order),
/// or None where it renamed none.
pub fn renamed_symbols_note(renamed: &[String]) -> Option<String> {
    renamed.first().map(|first| {
        format!(
            "{} repeated gene symbol(s) made unique as anndata's var_names_make_unique does ({first}, ...); --feature-ids (Python: feature_ids=True) labels features by id",
            renamed.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_slices() {
        let l = Labels::from_strings(["AAAC-1", "", "Zelle-ä", "TTTG-1"]);
        assert_eq!(l.len(), 4);
        assert_eq!(l.get(2), Some("Zelle-ä"));
        assert_eq!(l.get(4), None);
        assert_eq!(
            l.iter().collect::<Vec<_>>(),
            ["AAAC-1", "", "Zelle-ä", "TTTG-1"]
        );
        let s = l.slice(1, 2, 2).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), ["", "TTTG-1"]);
        assert!(l.slice(1, 3, 2).is_none());
        assert_eq!(l.slice(9, 0, 1).map(|s| s.len()), Some(0));
        let again = Labels::try_from_parts(l.offsets().clone(), l.bytes().to_vec().into());
        assert_eq!(again, Ok(l));
    }

    #[test]
    fn broken_parts_are_named() {
        let text = "aäb".as_bytes().to_vec();
        let case = |offs: Vec<u64>, bytes: &[u8]| {
            Labels::try_from_parts(IndexVec::U64(offs.into()), bytes.to_vec().into())
                .map(|_| ())
                .map_err(|e| e.message)
        };
        assert_eq!(case(vec![0, 1, 4], &text), Ok(()));
        assert_eq!(
            case(vec![0, 2, 4], &text).unwrap_err(),
            "offsets[1] = 2 splits a UTF-8 character"
        );
        assert_eq!(
            case(vec![1, 4], &text).unwrap_err(),
            "offsets[0] is 1, not 0"
        );
        assert_eq!(
            case(vec![0, 3, 1, 4], &text).unwrap_err(),
            "offsets[2] = 1 is below offsets[1] = 3"
        );
        assert_eq!(
            case(vec![0, 9], &text).unwrap_err(),
            "offsets[1] = 9 is past the end of the text (4 bytes)"
        );
        assert_eq!(
            case(vec![0, 1], &text).unwrap_err(),
            "offsets[1] = 1, but the text has 4 bytes"
        );
        assert_eq!(
            case(vec![], &text).unwrap_err(),
            "offsets is empty; it needs labels + 1 elements"
        );
        assert!(case(vec![0, 1], &[0xff]).unwrap_err().contains("not UTF-8"));
    }

    /// As anndata 0.12's `make_index_unique`: `["A", "A", "B", "A-1", "A"]` becomes
    /// `["A", "A-2", "B", "A-1", "A-3"]` (A-1 was taken).
    #[test]
    fn repeated_names_become_unique_as_anndata_makes_them() {
        let mut n: Vec<String> = ["A", "A", "B", "A-1", "A"].map(String::from).to_vec();
        assert_eq!(make_unique(&mut n), ["A-2", "A-3"]);
        assert_eq!(n, ["A", "A-2", "B", "A-1", "A-3"]);
        let mut u: Vec<String> = ["x", "y"].map(String::from).to_vec();
        assert!(make_unique(&mut u).is_empty());
    }
}

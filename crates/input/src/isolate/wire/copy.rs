//! The copy request of a `read-vm` answer, written by the child and checked by the parent.

use super::*;

impl Writer<'_> {
    /// The copy request of a `read-vm` answer (see the module documentation): the table
    /// of the arrays where they lie in this process, the content's last, then the head.
    pub(crate) fn copy_request(&self) -> Vec<u8> {
        let placed = self.placed();
        let content = self.content();
        let order = (0..placed.len())
            .filter(|i| !content.contains(i))
            .chain(content.clone());
        let mut out = Vec::with_capacity(VM_PREFIX + VM_ENTRY * placed.len());
        out.extend_from_slice(VM_MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for n in [self.len(), placed.len(), content.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for i in order {
            let (at, bytes) = placed[i];
            for n in [at, bytes.as_ptr() as usize, bytes.len()] {
                out.extend_from_slice(&(n as u64).to_le_bytes());
            }
        }
        out.extend_from_slice(&self.head());
        out
    }
}

/// A copy request, checked: what the parent copies out of the helper.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CopyRequest {
    /// Bytes of the whole layout the parent rebuilds.
    pub(crate) total: usize,
    /// The head (prefix and record), for the layout's first bytes.
    pub(crate) head: Range<usize>,
    /// Each array: its offset in the layout, its address in the helper and its byte
    /// length, in the request's order; apart from each other, after the head, inside
    /// `total`.
    pub(crate) arrays: Vec<Remote>,
}

/// One array of a [`CopyRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Remote {
    /// Offset in the layout.
    pub(crate) at: usize,
    /// Address in the helper.
    pub(crate) addr: u64,
    /// Bytes.
    pub(crate) len: usize,
    /// True for the content's arrays (the helper may free each once it is copied).
    pub(crate) content: bool,
}

/// Reads the copy request `bytes` (what the helper left in the memfd), checking that every
/// array lies inside the layout, after the head and apart from the others.
///
/// # Errors
/// The request breaks its layout.
pub(crate) fn copy_request(bytes: &[u8]) -> Result<CopyRequest, Damaged> {
    if bytes.get(..8) != Some(&VM_MAGIC[..]) {
        return Err("it does not start with the copy request's magic bytes".into());
    }
    let word = |at: usize| -> Result<u64, Damaged> {
        let b = bytes
            .get(at..at + 8)
            .ok_or("the copy request is cut short")?;
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        Ok(u64::from_le_bytes(x))
    };
    let version = word(8)? as u32;
    if version != VERSION {
        return Err(format!("copy request version {version}, not {VERSION}"));
    }
    let size = |x: u64| usize::try_from(x).map_err(|_| format!("a size of {x} bytes"));
    let total = size(word(16)?)?;
    let count = size(word(24)?)?;
    let content = size(word(32)?)?;
    let table_end = count
        .checked_mul(VM_ENTRY)
        .and_then(|t| t.checked_add(VM_PREFIX))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| format!("a table of {count} arrays runs past the request"))?;
    if content > count {
        return Err(format!("{content} content arrays of {count}"));
    }
    let head = table_end..bytes.len();
    if head.len() > total {
        return Err(format!(
            "a head of {} bytes in a layout of {total}",
            head.len()
        ));
    }
    let arrays = (0..count)
        .map(|k| {
            let e = VM_PREFIX + k * VM_ENTRY;
            Ok(Remote {
                at: size(word(e)?)?,
                addr: word(e + 8)?,
                len: size(word(e + 16)?)?,
                content: k >= count - content,
            })
        })
        .collect::<Result<Vec<_>, Damaged>>()?;
    // In the layout's order, each array after the head, the one before it and inside.
    let mut placed: Vec<(usize, usize)> = arrays.iter().map(|a| (a.at, a.len)).collect();
    placed.sort_unstable();
    let mut end = head.len();
    for (at, len) in placed {
        if at < end || at.checked_add(len).is_none_or(|e| e > total) {
            return Err(format!(
                "an array of {len} bytes at {at} overlaps another or runs past the {total} bytes"
            ));
        }
        end = at + len;
    }
    Ok(CopyRequest {
        total,
        head,
        arrays,
    })
}

/// The content's arrays of a matrix, taken out of it in the order the layout places them
/// (each level's pos and crd, or each dimension's coordinates, then the values): the
/// helper writes each and frees it before the next.
pub(crate) fn content_in_order(content: Content) -> Vec<Owned> {
    match content {
        Content::Entries(e) => {
            let (_, coords, values) = e.into_parts();
            let mut out: Vec<Owned> = coords.into_iter().map(Owned::Index).collect();
            out.push(Owned::Values(values));
            out
        }
        Content::Tensor(t) => {
            let (_, _, levels, values) = t.into_parts();
            let mut out: Vec<Owned> = levels
                .into_iter()
                .flat_map(|l| [l.pos, l.crd])
                .flatten()
                .map(Owned::Index)
                .collect();
            out.push(Owned::Values(values));
            out
        }
        Content::Planned(_) => Vec::new(),
    }
}

/// One array of the content, owned.
pub(crate) enum Owned {
    /// Positions or coordinates.
    Index(IndexVec),
    /// Values.
    Values(ValueVec),
}

impl Owned {
    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Owned::Index(v) => index_bytes(v),
            Owned::Values(v) => value_bytes(v),
        }
    }
}

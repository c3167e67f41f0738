//! Reading an answer: every length and offset checked before a slice is made.

use super::*;

/// Why an answer cannot be used: it breaks the layout (a child that misbehaved).
pub(crate) type Damaged = String;

/// Reads an answer out of the mapped bytes `map`, kept alive by `owner`.
struct Reader<'m> {
    map: &'m [u8],
    owner: Owner,
    meta: Range<usize>,
    at: usize,
    data: usize,
}

impl<'m> Reader<'m> {
    fn take(&mut self, n: usize) -> Result<&'m [u8], Damaged> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.meta.end)
            .ok_or_else(|| format!("the record ends before byte {} + {n}", self.at))?;
        let out = self
            .map
            .get(self.at..end)
            .ok_or("the record is cut short")?;
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, Damaged> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, Damaged> {
        let b = self.take(8)?;
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        Ok(u64::from_le_bytes(x))
    }

    /// A count of items of at least `min_bytes` each in the record: never more than the
    /// record has room for, so a hostile count cannot make a large allocation.
    fn count(&mut self, min_bytes: usize) -> Result<usize, Damaged> {
        let n = self.u64()?;
        let room = (self.meta.end - self.at) / min_bytes.max(1);
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= room)
            .ok_or_else(|| format!("a count of {n} is more than the record holds"))
    }

    fn str(&mut self) -> Result<String, Damaged> {
        let n = self.count(1)?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| "a string is not UTF-8".into())
    }

    fn flag(&mut self) -> Result<bool, Damaged> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(format!("a flag is {x}, not 0 or 1")),
        }
    }

    fn u64s(&mut self) -> Result<Vec<u64>, Damaged> {
        let n = self.count(8)?;
        (0..n).map(|_| self.u64()).collect()
    }

    /// An array reference: its element count and its byte range in the mapping.
    fn range(&mut self) -> Result<(usize, Range<usize>), Damaged> {
        let len = self.u64()?;
        let at = self.u64()?;
        let bytes = self.u64()?;
        let start = (self.data as u64).checked_add(at);
        let end = start.and_then(|s| s.checked_add(bytes));
        match (usize::try_from(len), start, end) {
            (Ok(len), Some(start), Some(end)) if end <= self.map.len() as u64 => {
                Ok((len, start as usize..end as usize))
            }
            _ => Err(format!(
                "an array of {bytes} bytes at {at} runs past the {} bytes written",
                self.map.len()
            )),
        }
    }

    fn buf<T: Pod>(&mut self, len: usize, range: Range<usize>) -> Result<Buf<T>, Damaged> {
        if range.len() != len.saturating_mul(std::mem::size_of::<T>()) {
            return Err(format!(
                "an array of {len} elements of {} bytes spans {} bytes",
                std::mem::size_of::<T>(),
                range.len()
            ));
        }
        // SAFETY: `map` is the mapping `owner` keeps alive; the memfd behind it is sealed
        // against writes, shrinking and growing before it is mapped (see `super::run`), so
        // the bytes stay valid and unchanged while `owner` lives. `from_owner` checks the
        // range's bounds, alignment and length.
        unsafe { Buf::from_owner(self.owner.clone(), self.map, range) }.map_err(|e| e.to_string())
    }

    fn index(&mut self) -> Result<IndexVec, Damaged> {
        let bits = self.u8()?;
        let (len, range) = self.range()?;
        Ok(match bits {
            2 => {
                if range.len() != len.div_ceil(4) {
                    return Err(format!("{len} 2-bit elements in {} bytes", range.len()));
                }
                IndexVec::Packed2 {
                    bytes: self.buf(range.len(), range)?,
                    len,
                }
            }
            8 => IndexVec::U8(self.buf(len, range)?),
            16 => IndexVec::U16(self.buf(len, range)?),
            32 => IndexVec::U32(self.buf(len, range)?),
            64 => IndexVec::U64(self.buf(len, range)?),
            other => return Err(format!("an index width of {other} bits")),
        })
    }

    fn values(&mut self) -> Result<ValueVec, Damaged> {
        let name = self.str()?;
        let t: ValueType = name.parse()?;
        let (len, range) = self.range()?;
        Ok(match t {
            ValueType::Bool => {
                if range.len() != len {
                    return Err(format!("{len} bools in {} bytes", range.len()));
                }
                // SAFETY: as in `buf`; `from_owner_bools` also checks every byte is 0 or 1.
                let b = unsafe { Buf::from_owner_bools(self.owner.clone(), self.map, range) };
                ValueVec::Bool(b.map_err(|e| e.to_string())?)
            }
            ValueType::F16 => ValueVec::F16(self.buf(len, range)?),
            ValueType::BF16 => ValueVec::BF16(self.buf(len, range)?),
            ValueType::F32 => ValueVec::F32(self.buf(len, range)?),
            ValueType::F64 => ValueVec::F64(self.buf(len, range)?),
            ValueType::I8 => ValueVec::I8(self.buf(len, range)?),
            ValueType::I16 => ValueVec::I16(self.buf(len, range)?),
            ValueType::I32 => ValueVec::I32(self.buf(len, range)?),
            ValueType::I64 => ValueVec::I64(self.buf(len, range)?),
            ValueType::U8 => ValueVec::U8(self.buf(len, range)?),
            ValueType::U16 => ValueVec::U16(self.buf(len, range)?),
            ValueType::U32 => ValueVec::U32(self.buf(len, range)?),
            ValueType::U64 => ValueVec::U64(self.buf(len, range)?),
            ValueType::C64 => ValueVec::C64(self.buf(len, range)?),
            ValueType::C128 => ValueVec::C128(self.buf(len, range)?),
        })
    }

    fn labels(&mut self) -> Result<Vec<Option<Labels>>, Damaged> {
        let n = self.count(1)?;
        (0..n)
            .map(|_| {
                if !self.flag()? {
                    return Ok(None);
                }
                let offsets = self.index()?;
                let (len, range) = self.range()?;
                let text = self.buf::<u8>(len, range)?;
                Labels::try_from_parts(offsets, text)
                    .map(Some)
                    .map_err(|e| format!("labels: {}", e.message))
            })
            .collect()
    }

    fn matrix(&mut self) -> Result<Result<Box<Matrix>, String>, Damaged> {
        let object = self.str()?;
        let kind = kind_of_code(self.u8()?).ok_or("an unknown kind of file")?;
        let layout = self.str()?;
        let n = self.count(8)?;
        let notes = (0..n).map(|_| self.str()).collect::<Result<Vec<_>, _>>()?;
        let labels = self
            .labels()?
            .into_iter()
            .map(|l| l.map(Arc::new))
            .collect();
        // What the arrays break is said as the in-process checks say it.
        let content = match self.u8()? {
            0 => {
                let dims = self.u64s()?;
                let coords = (0..dims.len())
                    .map(|_| self.index())
                    .collect::<Result<Vec<_>, _>>()?;
                let values = self.values()?;
                match Entries::from_checked_arrays(dims, coords, values) {
                    Ok(e) => Content::Entries(e),
                    Err(e) => return Ok(Err(e.to_string())),
                }
            }
            1 => {
                let text = self.str()?;
                let encoding = text
                    .parse()
                    .map_err(|e| format!("the encoding `{text}` does not parse: {e}"))?;
                let dims = self.u64s()?;
                let n = self.count(2)?;
                let mut levels = Vec::with_capacity(n);
                for _ in 0..n {
                    let pos = if self.flag()? {
                        Some(self.index()?)
                    } else {
                        None
                    };
                    let crd = if self.flag()? {
                        Some(self.index()?)
                    } else {
                        None
                    };
                    levels.push(LevelArrays { pos, crd });
                }
                let values = self.values()?;
                let own = self.labels()?;
                let n = self.count(32)?;
                let mut slices = Vec::with_capacity(n);
                for _ in 0..n {
                    let dim = usize::try_from(self.u64()?).map_err(|_| "a slice's dimension")?;
                    slices.push(AppliedSlice {
                        dim,
                        offset: self.u64()?,
                        size: self.u64()?,
                        stride: self.u64()?,
                    });
                }
                let mut t = match Tensor::try_from_parts(encoding, dims, levels, values) {
                    Ok(t) => t,
                    Err(e) => return Ok(Err(e.to_string())),
                };
                for (d, l) in own.into_iter().enumerate() {
                    if let Some(l) = l {
                        t = match t.with_labels(d, l) {
                            Ok(t) => t,
                            Err(e) => return Ok(Err(e.message)),
                        };
                    }
                }
                Content::Tensor(t.with_applied_slices(slices))
            }
            2 => Content::Planned(self.planned()?),
            x => return Err(format!("an unknown content tag {x}")),
        };
        Ok(Ok(Box::new(Matrix {
            object,
            kind,
            layout,
            content,
            labels,
            notes,
        })))
    }

    /// Planned content, as [`Writer::planned`] lays it out; checked when it is executed.
    fn planned(&mut self) -> Result<Planned, Damaged> {
        let dims: [u64; 2] = self
            .u64s()?
            .try_into()
            .map_err(|d: Vec<u64>| format!("a planned matrix of {} dimensions", d.len()))?;
        let by_rows = self.flag()?;
        let mut one = || -> Result<(String, Plan), Damaged> {
            let name = self.str()?;
            let ty: ValueType = self.str()?.parse()?;
            let len = self.u64()?;
            let layout = match self.u8()? {
                0 => Layout::Contiguous {
                    offset: self.u64()?,
                },
                1 => {
                    let chunk = self.u64()?;
                    let shuffle = self.flag()?;
                    let deflate = self.flag()?;
                    let n = self.count(24)?;
                    let mut chunks = Vec::with_capacity(n);
                    for _ in 0..n {
                        let offset = self.u64()?;
                        let bytes = self.u64()?;
                        let skipped =
                            u32::try_from(self.u64()?).map_err(|_| "a chunk's filter mask")?;
                        chunks.push(StoredChunk {
                            offset,
                            bytes,
                            skipped,
                        });
                    }
                    Layout::Chunked {
                        chunk,
                        shuffle,
                        deflate,
                        chunks,
                    }
                }
                x => return Err(format!("an unknown layout tag {x}")),
            };
            Ok((name, Plan { ty, len, layout }))
        };
        let [(pn, pp), (cn, cp), (vn, vp)] = [one()?, one()?, one()?];
        Ok(Planned {
            dims,
            by_rows,
            arrays: [pp, cp, vp],
            names: [pn, cn, vn],
        })
    }

    fn members(&mut self) -> Result<Vec<Member>, Damaged> {
        let n = self.count(8)?;
        (0..n)
            .map(|_| {
                let path = self.str()?;
                let layout = self.str()?;
                let dims = self.u64s()?;
                let value_type = if self.flag()? {
                    Some(self.str()?.parse::<ValueType>()?)
                } else {
                    None
                };
                let entries = if self.flag()? {
                    Some(self.u64()?)
                } else {
                    None
                };
                Ok(Member {
                    path,
                    layout,
                    dims,
                    value_type,
                    entries,
                })
            })
            .collect()
    }
}

/// What the parent makes of an answer.
pub(crate) enum Decoded {
    /// A usable answer.
    Answer(Answer),
    /// Arrays that fail validation: what is wrong.
    Invalid(String),
}

/// Reads the answer in `map` (kept alive by `owner`), checking every length and offset
/// before a slice is made and validating the arrays as any input.
///
/// # Errors
/// The bytes break the layout.
pub(crate) fn decode(map: &[u8], owner: Owner, file: &std::path::Path) -> Result<Decoded, Damaged> {
    if map.get(..8) != Some(&MAGIC[..]) {
        return Err("it does not start with the layout's magic bytes".into());
    }
    let word = |r: Range<usize>| map.get(r).ok_or_else(|| "it is cut short".to_string());
    let mut v = [0u8; 4];
    v.copy_from_slice(word(8..12)?);
    if u32::from_le_bytes(v) != VERSION {
        return Err(format!(
            "layout version {}, not {VERSION}",
            u32::from_le_bytes(v)
        ));
    }
    let mut n = [0u8; 8];
    n.copy_from_slice(word(16..24)?);
    let meta_len = u64::from_le_bytes(n);
    let meta_end = usize::try_from(meta_len)
        .ok()
        .and_then(|m| m.checked_add(PREFIX))
        .filter(|&e| e <= map.len())
        .ok_or_else(|| format!("a record of {meta_len} bytes runs past the end"))?;
    let mut r = Reader {
        map,
        owner,
        meta: PREFIX..meta_end,
        at: PREFIX,
        data: meta_end.next_multiple_of(ALIGN),
    };
    let out = match r.u8()? {
        0 => match r.matrix()? {
            Ok(m) => Decoded::Answer(Answer::Matrix(m)),
            // The rest of the record is not read: the arrays are refused already.
            Err(why) => return Ok(Decoded::Invalid(why)),
        },
        tag @ (1 | 3) => {
            let object = r.str()?;
            let message = r.str()?;
            let memory_limit = match tag {
                3 => match r.u64s()?[..] {
                    [elements, bytes, limit] => Some(Box::new(sptk_tensor::MemoryLimit {
                        array: object.clone(),
                        elements: u128::from(elements),
                        bytes: u128::from(bytes),
                        total: u128::from(bytes),
                        limit,
                    })),
                    _ => return Err("a memory-limit error without its three counts".into()),
                },
                _ => None,
            };
            Decoded::Answer(Answer::Error(H5Error {
                file: file.to_path_buf(),
                object,
                message,
                memory_limit,
            }))
        }
        2 => Decoded::Answer(Answer::Members(r.members()?)),
        x => return Err(format!("an unknown answer tag {x}")),
    };
    if r.at != r.meta.end {
        return Err(format!(
            "{} bytes of the record are left over",
            r.meta.end - r.at
        ));
    }
    Ok(out)
}

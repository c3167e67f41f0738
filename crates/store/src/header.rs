/*!
The JSON header: [`RawHeader`] is exactly what serde reads and writes; [`Header`] is the
checked form (encoding parsed, sizes consistent with it, array directory in the order and
with the types the encoding needs). Checks that need the file's length (offsets, coverage)
live in `open.rs`.
*/

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sptk_encoding::{Encoding, LevelExpr, LevelFormat};
use sptk_tensor::{AppliedSlice, IndexWidth, Layout, ValueType};

use crate::error::{field, StoreError, StoreErrorKind};
use crate::format::{hex64, parse_hex64, Dtype, CHECKSUM_ALGORITHM};

/// The header as stored: field order here is the order in the file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHeader {
    pub encoding: String,
    pub dim_sizes: Vec<u64>,
    pub lvl_sizes: Vec<u64>,
    pub value_type: String,
    pub nse: u64,
    pub entries: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binsparse: Option<Binsparse>,
    #[serde(default)]
    pub provenance: RawProvenance,
    #[serde(default)]
    pub metadata: BTreeMap<String, serde_json::Value>,
    pub checksum_algorithm: String,
    /// Version 2: bytes per checksummed chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u64>,
    pub arrays: Vec<RawArray>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProvenance {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default)]
    pub slices: Vec<RawSlice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_unix: Option<u64>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSlice {
    pub dim: u64,
    pub offset: u64,
    pub size: u64,
    pub stride: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArray {
    pub name: String,
    pub dtype: String,
    pub len: u64,
    pub offset: u64,
    pub nbytes: u64,
    /// Version 1: on every array. Version 2: on the `checksums` array only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

/// A binsparse (v0.1) descriptor of the stored arrays, for the encodings binsparse has.
/// Its fields are binsparse's, plus `arrays` (this format's extension), which maps each
/// binsparse array name (`pointers_to_1`, `indices_1`, `values`) to its name in the
/// directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Binsparse {
    /// Array names: binsparse's -> the directory's.
    pub arrays: BTreeMap<String, String>,
    /// Element types by binsparse array name (`uint32`, `float64`, `complex[float64]`, ...).
    pub data_types: BTreeMap<String, String>,
    /// `CSR`, `CSC`, `DCSR`, `DCSC`, `COOR`, `CVEC`, `DVEC`, `DMATR` or `DMATC`.
    pub format: String,
    /// Stored values.
    pub number_of_stored_values: u64,
    /// Dimension sizes.
    pub shape: Vec<u64>,
    /// `0.1`.
    pub version: String,
}

/// Where the tensor came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The input file (as given by the writer).
    pub source: Option<String>,
    /// Dimension slices applied when the tensor was made.
    pub slices: Vec<AppliedSlice>,
    /// Seconds since the Unix epoch when written, if the writer asked for a timestamp.
    pub created_unix: Option<u64>,
}

/// One entry of the array directory, checked against the encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayInfo {
    /// `pos[l]`, `crd[l]` or `values`.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Number of elements.
    pub len: usize,
    /// Offset from the start of the data section (a multiple of 64).
    pub offset: usize,
    /// Bytes of data (`len` elements; padding excluded).
    pub nbytes: usize,
    /// xxh3-64 of the `nbytes` bytes: every array of a version 1 file, and the
    /// `checksums` array of a version 2 file (whose other arrays are checked by chunk).
    pub checksum: Option<u64>,
    /// Version 2: the index in the `checksums` array of this array's first chunk.
    pub first_chunk: usize,
}

/// The checked header of a `.spt` file.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Header {
    /// The format version of the file (1 or 2).
    pub version: u32,
    /// Version 2: bytes per checksummed chunk (None for version 1).
    pub chunk_bytes: Option<u64>,
    /// The dimensions that carry labels, ascending.
    pub labelled_dims: Vec<usize>,
    /// The encoding (canonical, no slices).
    pub encoding: Encoding,
    /// The storage plan for these sizes (dimension and level sizes, widths, array owners).
    pub layout: Layout,
    /// The value type.
    pub value_type: ValueType,
    /// Stored values, padding included (the length of `values`).
    pub nse: u64,
    /// Entries, padding excluded (checked by `verify`).
    pub entries: u64,
    /// A binsparse (v0.1) descriptor, for the encodings binsparse has.
    pub binsparse: Option<Binsparse>,
    /// Provenance.
    pub provenance: Provenance,
    /// User metadata (any JSON values).
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// The array directory, in file order.
    pub arrays: Vec<ArrayInfo>,
}

impl Header {
    /// Dimension sizes.
    pub fn dim_sizes(&self) -> &[u64] {
        &self.layout.dim_sizes
    }
    /// Level sizes.
    pub fn lvl_sizes(&self) -> Vec<u64> {
        self.layout.lvl_sizes()
    }
    /// The directory entry of the array called `name`.
    pub fn array(&self, name: &str) -> Option<&ArrayInfo> {
        self.arrays.iter().find(|a| a.name == name)
    }
}

/// The name of dimension `dim`'s label offsets array.
pub fn label_offsets_name(dim: usize) -> String {
    format!("label_offsets[{dim}]")
}

/// The name of dimension `dim`'s label text array.
pub fn label_bytes_name(dim: usize) -> String {
    format!("label_bytes[{dim}]")
}

/// The name of the array of chunk checksums (version 2).
pub const CHECKSUMS: &str = "checksums";

/// `label_offsets[d]` -> d.
fn label_dim(name: &str) -> Option<usize> {
    let d = name.strip_prefix("label_offsets[")?.strip_suffix(']')?;
    if d.len() > 1 && d.starts_with('0') {
        return None;
    }
    d.parse().ok()
}

/// Chunks of `nbytes` bytes: `ceil(nbytes / chunk_bytes)`.
pub(crate) fn chunk_count(nbytes: u64, chunk_bytes: u64) -> u64 {
    nbytes.div_ceil(chunk_bytes.max(1))
}

/// The arrays an encoding stores, in file order, with their element types.
pub fn expected_arrays(layout: &Layout, value_type: ValueType) -> Vec<(String, Dtype)> {
    let mut out = Vec::new();
    for (l, plan) in layout.levels.iter().enumerate() {
        if plan.has_pos {
            out.push((format!("pos[{l}]"), Dtype::index(layout.pos_width)));
        }
        if plan.crd_owner == Some(l) {
            let w = match plan.format {
                LevelFormat::Structured { .. } => layout.crd_width,
                _ if layout.crd_width == IndexWidth::W2 => IndexWidth::W64,
                _ => layout.crd_width,
            };
            out.push((format!("crd[{l}]"), Dtype::index(w)));
        }
    }
    out.push(("values".to_string(), Dtype::Scalar(value_type)));
    out
}

fn to_usize(x: u64, what: &str) -> Result<usize, StoreError> {
    usize::try_from(x).map_err(|_| field(what, format!("{x} does not fit this machine's usize")))
}

impl RawHeader {
    /// Checks everything that does not need the file's bytes, for format `version`.
    pub(crate) fn check(self, version: u32) -> Result<Header, StoreError> {
        let encoding: Encoding = self
            .encoding
            .parse()
            .map_err(|e: sptk_encoding::ParseError| field("encoding", e.to_string()))?;
        if encoding.dims.iter().any(|d| d.slice.is_some()) {
            return Err(field(
                "encoding",
                "a stored encoding carries no dimension slices (applied slices are provenance)",
            ));
        }
        let layout = Layout::new(&encoding, &self.dim_sizes)
            .map_err(|e| field("dim_sizes", e.to_string()))?;
        if layout.lvl_sizes() != self.lvl_sizes {
            return Err(field(
                "lvl_sizes",
                format!(
                    "{:?}; the encoding and dim_sizes give {:?}",
                    self.lvl_sizes,
                    layout.lvl_sizes()
                ),
            ));
        }
        let value_type = ValueType::ALL
            .into_iter()
            .find(|t| t.name() == self.value_type)
            .ok_or_else(|| {
                field(
                    "value_type",
                    format!("unknown value type {:?}", self.value_type),
                )
            })?;
        if self.entries > self.nse {
            return Err(field(
                "entries",
                format!("{} is above nse = {}", self.entries, self.nse),
            ));
        }
        if self.checksum_algorithm != CHECKSUM_ALGORITHM {
            return Err(field(
                "checksum_algorithm",
                format!(
                    "{:?} is not supported (expected {CHECKSUM_ALGORITHM:?})",
                    self.checksum_algorithm
                ),
            ));
        }
        let expected_binsparse = binsparse_descriptor(&encoding, &layout, value_type, self.nse);
        if self.binsparse != expected_binsparse {
            return Err(field(
                "binsparse",
                match &expected_binsparse {
                    Some(d) => format!(
                        "does not match the encoding; expected {}",
                        serde_json::to_string(d).unwrap_or_default()
                    ),
                    None => "this encoding has no binsparse descriptor".to_string(),
                },
            ));
        }
        let mut slices = Vec::with_capacity(self.provenance.slices.len());
        for (i, s) in self.provenance.slices.iter().enumerate() {
            let dim = usize::try_from(s.dim)
                .ok()
                .filter(|&d| d < self.dim_sizes.len())
                .ok_or_else(|| {
                    field(
                        format!("provenance.slices[{i}].dim"),
                        format!("{} is not a dimension", s.dim),
                    )
                })?;
            slices.push(AppliedSlice {
                dim,
                offset: s.offset,
                size: s.size,
                stride: s.stride,
            });
        }
        let chunk_bytes = match (version, self.chunk_bytes) {
            (1, None) => None,
            (1, Some(_)) => {
                return Err(field(
                    "chunk_bytes",
                    "version 1 files have no chunk checksums",
                ))
            }
            (_, Some(c)) if c.is_power_of_two() && (MIN_CHUNK..=MAX_CHUNK).contains(&c) => Some(c),
            (_, Some(c)) => {
                return Err(field(
                    "chunk_bytes",
                    format!("{c} is not a power of two from {MIN_CHUNK} to {MAX_CHUNK}"),
                ))
            }
            (_, None) => return Err(field("chunk_bytes", "missing (required from version 2)")),
        };
        let (arrays, labelled_dims) =
            check_directory(&self.arrays, &layout, value_type, self.nse, chunk_bytes)?;
        check_lengths(&layout, &arrays)?;
        Ok(Header {
            version,
            chunk_bytes,
            labelled_dims,
            encoding,
            layout,
            value_type,
            nse: self.nse,
            entries: self.entries,
            binsparse: self.binsparse,
            provenance: Provenance {
                source: self.provenance.source,
                slices,
                created_unix: self.provenance.created_unix,
            },
            metadata: self.metadata,
            arrays,
        })
    }
}

/// The smallest and largest chunk sizes a reader accepts (powers of two).
pub const MIN_CHUNK: u64 = 64;
/// See [`MIN_CHUNK`].
pub const MAX_CHUNK: u64 = 1 << 30;

/// What the directory must hold at one position.
struct Want {
    name: String,
    dtypes: Vec<Dtype>,
    len: Option<u64>,
}

/// Names, order, types and lengths of the directory (offsets are checked against the file
/// in `open.rs`): the encoding's arrays and `values`; from version 2 (`chunk_bytes` set)
/// then label offsets and text for some dimensions, ascending, and last `checksums`, one
/// u64 per chunk of every array before it. Returns the entries and the labelled dims.
fn check_directory(
    raw: &[RawArray],
    layout: &Layout,
    value_type: ValueType,
    nse: u64,
    chunk_bytes: Option<u64>,
) -> Result<(Vec<ArrayInfo>, Vec<usize>), StoreError> {
    let mut wants: Vec<Want> = expected_arrays(layout, value_type)
        .into_iter()
        .map(|(name, d)| Want {
            len: (name == "values").then_some(nse),
            name,
            dtypes: vec![d],
        })
        .collect();
    let mut labelled = Vec::new();
    if let Some(chunk) = chunk_bytes {
        let mut i = wants.len();
        while let Some(d) = raw.get(i).and_then(|a| label_dim(&a.name)) {
            let size = layout.dim_sizes.get(d).copied();
            let ascending = labelled.last().is_none_or(|&p| d > p);
            let Some(count) = size.filter(|_| ascending).and_then(|s| s.checked_add(1)) else {
                return Err(StoreErrorKind::ArrayList {
                    index: i,
                    expected: None,
                    found: Some(raw[i].name.clone()),
                }
                .into());
            };
            labelled.push(d);
            wants.push(Want {
                name: label_offsets_name(d),
                dtypes: vec![Dtype::Scalar(ValueType::U32), Dtype::Scalar(ValueType::U64)],
                len: Some(count),
            });
            wants.push(Want {
                name: label_bytes_name(d),
                dtypes: vec![Dtype::Scalar(ValueType::U8)],
                len: None,
            });
            i += 2;
        }
        let chunks = raw
            .iter()
            .take(wants.len())
            .try_fold(0u64, |n, a| n.checked_add(chunk_count(a.nbytes, chunk)))
            .ok_or_else(|| field("arrays", "the number of chunks overflows"))?;
        wants.push(Want {
            name: CHECKSUMS.to_string(),
            dtypes: vec![Dtype::Scalar(ValueType::U64)],
            len: Some(chunks),
        });
    }
    let mut out = Vec::with_capacity(wants.len());
    let mut first_chunk: u64 = 0;
    for index in 0..raw.len().max(wants.len()) {
        let (want, a) = match (wants.get(index), raw.get(index)) {
            (Some(w), Some(a)) if w.name == a.name => (w, a),
            (w, a) => {
                return Err(StoreErrorKind::ArrayList {
                    index,
                    expected: w.map(|w| w.name.clone()),
                    found: a.map(|a| a.name.clone()),
                }
                .into())
            }
        };
        let name = &want.name;
        let dtype = Dtype::from_name(&a.dtype)
            .filter(|d| want.dtypes.contains(d))
            .ok_or_else(|| StoreErrorKind::ArrayType {
                array: name.clone(),
                found: a.dtype.clone(),
                expected: want
                    .dtypes
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" or "),
            })?;
        let nbytes = dtype
            .bytes_for(a.len)
            .ok_or_else(|| StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!("{} elements of {} overflow", a.len, dtype.name()),
            })?;
        if nbytes != a.nbytes {
            return Err(StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!(
                    "nbytes is {}, but {} elements of {} take {nbytes}",
                    a.nbytes,
                    a.len,
                    dtype.name()
                ),
            }
            .into());
        }
        if let Some(len) = want.len.filter(|&l| l != a.len) {
            let why = match name.as_str() {
                "values" => format!("the header's nse is {len}"),
                CHECKSUMS => format!("the arrays before it have {len} chunks"),
                _ => format!("the dimension has {} coordinates", len - 1),
            };
            return Err(StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!("{} elements; {why}", a.len),
            }
            .into());
        }
        let needs_checksum = chunk_bytes.is_none() || name == CHECKSUMS;
        let checksum = match (&a.checksum, needs_checksum) {
            (Some(c), true) => Some(parse_hex64(c).ok_or_else(|| {
                field(
                    format!("arrays[{index}].checksum"),
                    format!("{c:?} is not 16 lowercase hex digits"),
                )
            })?),
            (None, false) => None,
            (None, true) => return Err(field(format!("arrays[{index}].checksum"), "missing")),
            (Some(_), false) => return Err(field(
                format!("arrays[{index}].checksum"),
                "from version 2 an array's checksums are kept by chunk in the `checksums` array",
            )),
        };
        out.push(ArrayInfo {
            name: name.clone(),
            dtype,
            len: to_usize(a.len, &format!("arrays[{index}].len"))?,
            offset: to_usize(a.offset, &format!("arrays[{index}].offset"))?,
            nbytes: to_usize(a.nbytes, &format!("arrays[{index}].nbytes"))?,
            checksum,
            first_chunk: to_usize(first_chunk, "arrays")?,
        });
        if let Some(chunk) = chunk_bytes {
            first_chunk = first_chunk.saturating_add(chunk_count(a.nbytes, chunk));
        }
    }
    Ok((out, labelled))
}

/// Array lengths against each other and the sizes, level by level (O(levels)): the
/// `pos` array of a compressed level has one more element than its parent has positions
/// (two per parent for loose_compressed), a singleton's coordinates one per parent entry,
/// n:m `n` per group, ELL `K x rows`, and `values` one per position of the last level.
/// Validation checks the same again with the contents; checking it here bounds every
/// count by the file's size before anything is allocated for it.
fn check_lengths(layout: &Layout, arrays: &[ArrayInfo]) -> Result<(), StoreError> {
    let len_of = |name: &str| {
        arrays
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.len as u64)
            .ok_or_else(|| field("arrays", format!("{name} missing")))
    };
    let bad = |array: String, message: String| -> StoreError {
        StoreErrorKind::ArrayLength { array, message }.into()
    };
    let overflow = |l: usize| {
        field(
            "dim_sizes",
            format!("level {l}: the number of positions overflows"),
        )
    };
    let values = len_of("values")?;
    if layout.ell {
        let (k, rows) = (layout.levels[0].size, layout.levels[1].size);
        let slots = k.checked_mul(rows).ok_or_else(|| overflow(0))?;
        for name in ["crd[2]", "values"] {
            if len_of(name)? != slots {
                return Err(bad(
                    name.into(),
                    format!("length {}; ELL needs K x rows = {slots}", len_of(name)?),
                ));
            }
        }
        return Ok(());
    }
    let mut count: u64 = 1;
    for (l, plan) in layout.levels.iter().enumerate() {
        let owner = plan.crd_owner.unwrap_or(l);
        let crd_name = format!("crd[{owner}]");
        let stride = layout.levels.get(owner).map_or(1, |p| p.crd_stride.max(1)) as u64;
        match plan.format {
            LevelFormat::Dense | LevelFormat::Batch => {
                count = count.checked_mul(plan.size).ok_or_else(|| overflow(l))?;
            }
            LevelFormat::Compressed | LevelFormat::LooseCompressed => {
                let name = format!("pos[{l}]");
                let want = if plan.format == LevelFormat::Compressed {
                    count.checked_add(1)
                } else {
                    count.checked_mul(2)
                }
                .ok_or_else(|| overflow(l))?;
                if len_of(&name)? != want {
                    return Err(bad(
                        name.clone(),
                        format!(
                            "length {}; {count} parent position(s) need {want}",
                            len_of(&name)?
                        ),
                    ));
                }
                let crd = len_of(&crd_name)?;
                if crd % stride != 0 {
                    return Err(bad(
                        crd_name,
                        format!(
                            "length {crd} is not a multiple of {stride} (coordinates per entry)"
                        ),
                    ));
                }
                count = crd / stride;
            }
            LevelFormat::Singleton => {
                let crd = len_of(&crd_name)?;
                if crd / stride != count {
                    return Err(bad(
                        crd_name,
                        format!(
                            "{} entries for level {l}; its parent has {count}",
                            crd / stride
                        ),
                    ));
                }
            }
            LevelFormat::Structured { n, .. } => {
                let want = count.checked_mul(u64::from(n)).ok_or_else(|| overflow(l))?;
                let crd = len_of(&crd_name)?;
                if crd != want {
                    return Err(bad(
                        crd_name,
                        format!("length {crd}; {count} groups of {n} need {want}"),
                    ));
                }
                count = want;
            }
        }
    }
    if values != count {
        return Err(bad(
            "values".into(),
            format!("length {values}; the level arrays address {count}"),
        ));
    }
    Ok(())
}

/// The binsparse v0.1 name of a value type (None for f16 and bf16, which it lacks).
fn binsparse_type(t: ValueType) -> Option<&'static str> {
    Some(match t {
        ValueType::U8 => "uint8",
        ValueType::U16 => "uint16",
        ValueType::U32 => "uint32",
        ValueType::U64 => "uint64",
        ValueType::I8 => "int8",
        ValueType::I16 => "int16",
        ValueType::I32 => "int32",
        ValueType::I64 => "int64",
        ValueType::F32 => "float32",
        ValueType::F64 => "float64",
        ValueType::Bool => "bint8",
        ValueType::C64 => "complex[float32]",
        ValueType::C128 => "complex[float64]",
        ValueType::F16 | ValueType::BF16 => return None,
    })
}

/// The binsparse descriptor for the encodings binsparse v0.1 has (CSR, CSC, DCSR, DCSC,
/// COO with `soa`, sparse vector, dense vector and matrix), with default level properties.
/// `arrays` (our extension) maps each binsparse array to its name in the directory.
pub(crate) fn binsparse_descriptor(
    enc: &Encoding,
    layout: &Layout,
    value_type: ValueType,
    nse: u64,
) -> Option<Binsparse> {
    use LevelFormat as F;
    let vt = binsparse_type(value_type)?;
    let idx = |w: IndexWidth| match w {
        IndexWidth::W8 => Some("uint8"),
        IndexWidth::W16 => Some("uint16"),
        IndexWidth::W32 => Some("uint32"),
        IndexWidth::W64 => Some("uint64"),
        IndexWidth::W2 => None,
    };
    let pos_t = idx(layout.pos_width)?;
    let crd_t = idx(layout.crd_width)?;
    let plain = enc
        .levels
        .iter()
        .all(|l| matches!(l.expr, LevelExpr::Dim(_)) && !l.props.nonordered)
        && enc.symbols == 0
        && enc.explicit_val.is_none()
        && enc.implicit_val.is_none();
    if !plain {
        return None;
    }
    let shape = |l: usize| enc.levels.get(l).and_then(|s| s.expr.dim());
    let fmt: Vec<(F, bool, bool)> = enc
        .levels
        .iter()
        .map(|l| (l.format, l.props.nonunique, l.props.soa))
        .collect();
    let identity = (0..enc.levels.len()).all(|l| shape(l) == Some(l));
    let swapped = enc.levels.len() == 2 && shape(0) == Some(1) && shape(1) == Some(0);
    let (format, arrays): (&str, Vec<(&str, &str, &str)>) =
        match (fmt.as_slice(), identity, swapped) {
            ([(F::Dense, false, false), (F::Compressed, false, false)], true, _) => (
                "CSR",
                vec![
                    ("pointers_to_1", "pos[1]", pos_t),
                    ("indices_1", "crd[1]", crd_t),
                ],
            ),
            ([(F::Dense, false, false), (F::Compressed, false, false)], _, true) => (
                "CSC",
                vec![
                    ("pointers_to_1", "pos[1]", pos_t),
                    ("indices_1", "crd[1]", crd_t),
                ],
            ),
            ([(F::Compressed, false, false), (F::Compressed, false, false)], i, s) if i || s => (
                if i { "DCSR" } else { "DCSC" },
                vec![
                    ("pointers_to_0", "pos[0]", pos_t),
                    ("indices_0", "crd[0]", crd_t),
                    ("pointers_to_1", "pos[1]", pos_t),
                    ("indices_1", "crd[1]", crd_t),
                ],
            ),
            ([(F::Compressed, true, false), (F::Singleton, false, true)], true, _) => (
                "COOR",
                vec![
                    ("indices_0", "crd[0]", crd_t),
                    ("indices_1", "crd[1]", crd_t),
                ],
            ),
            ([(F::Compressed, false, false)], true, _) => {
                ("CVEC", vec![("indices_0", "crd[0]", crd_t)])
            }
            ([(F::Dense, false, false)], true, _) => ("DVEC", vec![]),
            ([(F::Dense, false, false), (F::Dense, false, false)], true, _) => ("DMATR", vec![]),
            ([(F::Dense, false, false), (F::Dense, false, false)], _, true) => ("DMATC", vec![]),
            _ => return None,
        };
    let mut data_types = BTreeMap::new();
    let mut names = BTreeMap::new();
    for (b, ours, t) in arrays {
        data_types.insert(b.to_string(), t.to_string());
        names.insert(b.to_string(), ours.to_string());
    }
    data_types.insert("values".into(), vt.into());
    names.insert("values".into(), "values".into());
    Some(Binsparse {
        arrays: names,
        data_types,
        format: format.into(),
        number_of_stored_values: nse,
        shape: layout.dim_sizes.clone(),
        version: "0.1".into(),
    })
}

/// The raw header of a tensor about to be written, in the current version with chunks
/// of `chunk_bytes`; checksums are placeholders until the arrays have been streamed.
pub(crate) fn raw_for(
    tensor: &sptk_tensor::Tensor,
    entries: u64,
    provenance: RawProvenance,
    metadata: BTreeMap<String, serde_json::Value>,
    chunk_bytes: u64,
) -> RawHeader {
    let vt = tensor.value_type();
    let mut list: Vec<(String, Dtype, u64)> = Vec::new();
    for (name, a) in tensor.index_arrays() {
        list.push((name, Dtype::index(a.width()), a.len() as u64));
    }
    list.push(("values".into(), Dtype::Scalar(vt), tensor.nse() as u64));
    for (d, labels) in tensor.all_labels().into_iter().enumerate() {
        if let Some(l) = labels {
            list.extend(label_arrays(d, l));
        }
    }
    let shape = Shape {
        encoding: tensor.encoding(),
        layout: tensor.layout(),
        dim_sizes: tensor.dim_sizes(),
        value_type: vt,
        nse: tensor.nse() as u64,
        entries,
    };
    raw_from_parts(&shape, list, provenance, metadata, chunk_bytes)
}

/// The two arrays of dimension `d`'s labels: name, element type and length.
pub(crate) fn label_arrays(d: usize, l: &sptk_tensor::Labels) -> [(String, Dtype, u64); 2] {
    let offsets = l.offsets();
    [
        (
            label_offsets_name(d),
            Dtype::index(offsets.width()),
            offsets.len() as u64,
        ),
        (
            label_bytes_name(d),
            Dtype::Scalar(ValueType::U8),
            l.bytes().len() as u64,
        ),
    ]
}

/// What a header says of the tensor beyond its array directory.
pub(crate) struct Shape<'a> {
    pub encoding: &'a sptk_encoding::Encoding,
    pub layout: &'a sptk_tensor::Layout,
    pub dim_sizes: &'a [u64],
    pub value_type: ValueType,
    pub nse: u64,
    pub entries: u64,
}

/// The header of a tensor of `shape` whose arrays (checksums excluded) are `list`, in
/// directory order: the directory placed as the format's one valid placement, the
/// `checksums` array last with a placeholder checksum.
pub(crate) fn raw_from_parts(
    shape: &Shape<'_>,
    mut list: Vec<(String, Dtype, u64)>,
    provenance: RawProvenance,
    metadata: BTreeMap<String, serde_json::Value>,
    chunk_bytes: u64,
) -> RawHeader {
    let nbytes = |dtype: Dtype, len: u64| dtype.bytes_for(len).unwrap_or(0);
    let chunks: u64 = list
        .iter()
        .map(|&(_, d, len)| chunk_count(nbytes(d, len), chunk_bytes))
        .sum();
    list.push((CHECKSUMS.to_string(), Dtype::Scalar(ValueType::U64), chunks));
    let mut arrays = Vec::with_capacity(list.len());
    let mut offset: u64 = 0;
    for (name, dtype, len) in list {
        let n = nbytes(dtype, len);
        arrays.push(RawArray {
            checksum: (name == CHECKSUMS).then(|| hex64(0)),
            name,
            dtype: dtype.name().to_string(),
            len,
            offset,
            nbytes: n,
        });
        offset = crate::format::align_up(offset + n).unwrap_or(u64::MAX);
    }
    RawHeader {
        encoding: shape.encoding.to_string(),
        dim_sizes: shape.dim_sizes.to_vec(),
        lvl_sizes: shape.layout.lvl_sizes(),
        value_type: shape.value_type.name().to_string(),
        nse: shape.nse,
        entries: shape.entries,
        binsparse: binsparse_descriptor(shape.encoding, shape.layout, shape.value_type, shape.nse),
        provenance,
        metadata,
        checksum_algorithm: CHECKSUM_ALGORITHM.to_string(),
        chunk_bytes: Some(chunk_bytes),
        arrays,
    }
}

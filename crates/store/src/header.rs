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
    pub checksum: String,
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
    /// xxh3-64 of the `nbytes` bytes.
    pub checksum: u64,
}

/// The checked header of a `.spt` file.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Header {
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
    /// Checks everything that does not need the file's bytes.
    pub(crate) fn check(self) -> Result<Header, StoreError> {
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
        let arrays = check_directory(&self.arrays, &layout, value_type, self.nse)?;
        check_lengths(&layout, &arrays)?;
        Ok(Header {
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

/// Names, order, types and lengths of the directory (offsets are checked against the file
/// in `open.rs`).
fn check_directory(
    raw: &[RawArray],
    layout: &Layout,
    value_type: ValueType,
    nse: u64,
) -> Result<Vec<ArrayInfo>, StoreError> {
    let expected = expected_arrays(layout, value_type);
    let mut out = Vec::with_capacity(expected.len());
    for index in 0..raw.len().max(expected.len()) {
        let (name, want, a) = match (expected.get(index), raw.get(index)) {
            (Some((e, want)), Some(a)) if *e == a.name => (e, *want, a),
            (e, a) => {
                return Err(StoreErrorKind::ArrayList {
                    index,
                    expected: e.map(|(n, _)| n.clone()),
                    found: a.map(|a| a.name.clone()),
                }
                .into())
            }
        };
        let found = Dtype::from_name(&a.dtype);
        if found != Some(want) {
            return Err(StoreErrorKind::ArrayType {
                array: name.clone(),
                found: a.dtype.clone(),
                expected: want.name().to_string(),
            }
            .into());
        }
        let nbytes = want
            .bytes_for(a.len)
            .ok_or_else(|| StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!("{} elements of {} overflow", a.len, want.name()),
            })?;
        if nbytes != a.nbytes {
            return Err(StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!(
                    "nbytes is {}, but {} elements of {} take {nbytes}",
                    a.nbytes,
                    a.len,
                    want.name()
                ),
            }
            .into());
        }
        if name == "values" && a.len != nse {
            return Err(StoreErrorKind::ArrayLength {
                array: name.clone(),
                message: format!("{} elements; the header's nse is {nse}", a.len),
            }
            .into());
        }
        let checksum = parse_hex64(&a.checksum).ok_or_else(|| {
            field(
                format!("arrays[{index}].checksum"),
                format!("{:?} is not 16 lowercase hex digits", a.checksum),
            )
        })?;
        out.push(ArrayInfo {
            name: name.clone(),
            dtype: want,
            len: to_usize(a.len, &format!("arrays[{index}].len"))?,
            offset: to_usize(a.offset, &format!("arrays[{index}].offset"))?,
            nbytes: to_usize(a.nbytes, &format!("arrays[{index}].nbytes"))?,
            checksum,
        });
    }
    Ok(out)
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

/// The raw header of a tensor about to be written; checksums are placeholders until the
/// arrays have been streamed.
pub(crate) fn raw_for(
    tensor: &sptk_tensor::Tensor,
    entries: u64,
    provenance: RawProvenance,
    metadata: BTreeMap<String, serde_json::Value>,
) -> RawHeader {
    let layout = tensor.layout();
    let vt = tensor.value_type();
    let mut arrays = Vec::new();
    let mut offset: u64 = 0;
    let mut push = |name: String, dtype: Dtype, len: usize| {
        let nbytes = dtype.bytes_for(len as u64).unwrap_or(0);
        arrays.push(RawArray {
            name,
            dtype: dtype.name().to_string(),
            len: len as u64,
            offset,
            nbytes,
            checksum: hex64(0),
        });
        offset = crate::format::align_up(offset + nbytes).unwrap_or(u64::MAX);
    };
    for (name, a) in tensor.index_arrays() {
        push(name, Dtype::index(a.width()), a.len());
    }
    push("values".into(), Dtype::Scalar(vt), tensor.nse());
    RawHeader {
        encoding: tensor.encoding().to_string(),
        dim_sizes: tensor.dim_sizes().to_vec(),
        lvl_sizes: tensor.lvl_sizes(),
        value_type: vt.name().to_string(),
        nse: tensor.nse() as u64,
        entries,
        binsparse: binsparse_descriptor(tensor.encoding(), layout, vt, tensor.nse() as u64),
        provenance,
        metadata,
        checksum_algorithm: CHECKSUM_ALGORITHM.to_string(),
        arrays,
    }
}

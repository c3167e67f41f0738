//! binsparse v0.1 (<https://graphblas.org/binsparse-specification/>) read from HDF5: the
//! JSON descriptor in the string attribute `binsparse` of a group, every predefined format
//! (DVEC, DMAT/DMATR/DMATC, CVEC, CSR, CSC, DCSR, DCSC, COO/COOR/COOC and N-D COO) and
//! `custom` level trees (element / dense / sparse, with a transpose); value types
//! including `bint8`, `complex[...]` and `iso[...]`; `fill`; and `structure` (symmetric,
//! hermitian and skew-symmetric halves expanded).
//!
//! CSR and CSC become level arrays without a trip through coordinates; every other layout
//! is decoded level by level into coordinates.

use serde_json::Value as Json;
use sptk_encoding::Encoding;
use sptk_tensor::{
    coord_width_for, Entries, IndexVec, LevelArrays, Scalar, Tensor, ValueType, ValueVec, C128, C64,
};

use crate::arrays::{compressed, Compressed, Content, Matrix};
use crate::error::H5Error;
use crate::h5::{join, H5};
use crate::Kind;

/// The descriptor attribute.
pub const ATTRIBUTE: &str = "binsparse";

/// The descriptor key (and group) of the exact level arrays sptk writes beside a COO
/// fallback.
pub const SPTK_KEY: &str = "sptk";

/// One level of a level tree, top first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    /// `rank` dense dimensions.
    Dense(usize),
    /// `rank` dimensions of stored coordinates (rank > 1: a COO block).
    Sparse(usize),
}

/// A parsed descriptor.
struct Descriptor {
    format: String,
    shape: Vec<u64>,
    stored: u64,
    /// Levels above the element level.
    levels: Vec<Level>,
    /// `transpose[l]` is the tensor dimension of level dimension `l`.
    transpose: Vec<usize>,
    /// Declared value type: `float64`, `iso[...]`, `complex[...]`, `bint8`, ...
    values: String,
    structure: Option<String>,
    fill: bool,
    /// The exact level arrays sptk wrote beside a COO fallback, if any.
    sptk: Option<Json>,
}

/// Reads the binsparse matrix in group `group` (`/` for the root).
pub(crate) fn read(h: &H5, group: &str) -> Result<Matrix, H5Error> {
    let g = h.group(group)?;
    let object = format!("attribute `{ATTRIBUTE}` of {}", g.name());
    let text = h.attr_string(&g, ATTRIBUTE)?.ok_or_else(|| {
        h.at.err(g.name(), "no `binsparse` attribute: not a binsparse group")
    })?;
    let d = descriptor(&text).map_err(|m| h.at.err(&object, m))?;
    let mut notes = Vec::new();
    let name = |array: &str| join(&g.name(), array);

    if d.fill {
        check_fill(h, &g, &name("fill_value"))?;
    }
    if let Some(x) = &d.sptk {
        let t = exact(h, &g, &d, x).map_err(|e| {
            if e.object.is_empty() {
                h.at.err(
                    format!("{}/{SPTK_KEY}", g.name().trim_end_matches('/')),
                    e.message,
                )
            } else {
                e
            }
        })?;
        let content = match &d.structure {
            None => Content::Tensor(t),
            Some(s) => {
                // The stored half, expanded: the encoding's arrays hold one triangle.
                let mut e = t.to_entries();
                expand_structure(&mut e, s).map_err(|m| h.at.err(&object, m))?;
                notes.push(format!(
                    "`structure` {s}: the stored half was expanded to both"
                ));
                Content::Entries(e)
            }
        };
        return Ok(Matrix {
            object: g.name(),
            kind: Kind::Binsparse,
            layout: format!("binsparse {} with sptk's level arrays", d.format),
            content,
            labels: Vec::new(),
            notes,
        });
    }
    let values = read_values(h, &g, &d, &name("values"))?;

    let content = match (d.format.as_str(), d.structure.is_none()) {
        ("CSR" | "CSC", true) => {
            let csr = d.format == "CSR";
            let [rows, cols] = two(h, &d, &object)?;
            let values = values.expand_iso(h, d.stored, &name("values"))?;
            compressed(
                h,
                Compressed {
                    dims: [rows, cols],
                    by_rows: csr,
                    pos: h.index_1d(&g, "pointers_to_1")?,
                    crd: h.index_1d(&g, "indices_1")?,
                    values,
                    names: [&name("pointers_to_1"), &name("indices_1"), &name("values")],
                },
                &mut notes,
            )?
        }
        _ => {
            let mut e = decode(h, &g, &d, values)?;
            if let Some(s) = &d.structure {
                expand_structure(&mut e, s).map_err(|m| h.at.err(&object, m))?;
                notes.push(format!(
                    "`structure` {s}: the stored half was expanded to both"
                ));
            }
            Content::Entries(e)
        }
    };
    Ok(Matrix {
        object: g.name(),
        kind: Kind::Binsparse,
        layout: format!("binsparse {}", d.format),
        content,
        labels: Vec::new(),
        notes,
    })
}

fn two(h: &H5, d: &Descriptor, object: &str) -> Result<[u64; 2], H5Error> {
    match d.shape[..] {
        [r, c] => Ok([r, c]),
        _ => Err(h.at.err(
            object,
            format!("format {} needs a 2-D shape, not {:?}", d.format, d.shape),
        )),
    }
}

/// Parses the descriptor JSON: `{"binsparse": {...}}` beside any user keys.
fn descriptor(text: &str) -> Result<Descriptor, String> {
    let root: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let b = root
        .get("binsparse")
        .ok_or("the JSON has no `binsparse` object")?;
    let version = b
        .get("version")
        .and_then(Json::as_str)
        .ok_or("no `version` string")?;
    if !(version == "0.1" || version.starts_with("0.1.")) {
        return Err(format!(
            "binsparse version {version} is not supported (this build reads 0.1 and 0.1.x)"
        ));
    }
    let format = b
        .get("format")
        .and_then(Json::as_str)
        .ok_or("no `format` string")?
        .to_string();
    let shape: Vec<u64> = b
        .get("shape")
        .and_then(Json::as_array)
        .ok_or("no `shape` list")?
        .iter()
        .map(|x| x.as_u64().ok_or(format!("`shape` holds {x}, not a size")))
        .collect::<Result<_, _>>()?;
    let stored = b
        .get("number_of_stored_values")
        .and_then(Json::as_u64)
        .ok_or("no `number_of_stored_values` count")?;
    let values = b
        .get("data_types")
        .and_then(|t| t.get("values"))
        .and_then(Json::as_str)
        .ok_or("no `data_types.values` type")?
        .to_string();
    let structure = b
        .get("structure")
        .and_then(Json::as_str)
        .map(str::to_string);
    let fill = match b.get("fill") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(f)) => *f,
        Some(other) => return Err(format!("`fill` is {other}, not true or false")),
    };
    let rank = shape.len();
    let (levels, transpose) = match format.as_str() {
        "custom" => custom(
            b.get("custom")
                .ok_or("format custom without a `custom` object")?,
            rank,
        )?,
        f => predefined(f, rank)?,
    };
    Ok(Descriptor {
        format,
        shape,
        stored,
        levels,
        transpose,
        values,
        structure,
        fill,
        sptk: root.get(SPTK_KEY).cloned(),
    })
}

/// The level tree of a predefined format.
fn predefined(format: &str, rank: usize) -> Result<(Vec<Level>, Vec<usize>), String> {
    use Level::{Dense, Sparse};
    let id: Vec<usize> = (0..rank).collect();
    let need = |r: usize| {
        if rank == r {
            Ok(())
        } else {
            Err(format!("format {format} needs a {r}-D shape, not {rank}-D"))
        }
    };
    Ok(match format {
        "DVEC" => (need(1).map(|_| vec![Dense(1)])?, id),
        "DMAT" | "DMATR" => (need(2).map(|_| vec![Dense(2)])?, id),
        "DMATC" => (need(2).map(|_| vec![Dense(2)])?, vec![1, 0]),
        "CVEC" => (need(1).map(|_| vec![Sparse(1)])?, id),
        "CSR" => (need(2).map(|_| vec![Dense(1), Sparse(1)])?, id),
        "CSC" => (need(2).map(|_| vec![Dense(1), Sparse(1)])?, vec![1, 0]),
        "DCSR" => (need(2).map(|_| vec![Sparse(1), Sparse(1)])?, id),
        "DCSC" => (need(2).map(|_| vec![Sparse(1), Sparse(1)])?, vec![1, 0]),
        "COO" | "COOR" if rank >= 1 => (vec![Sparse(rank)], id),
        "COOC" => (need(2).map(|_| vec![Sparse(2)])?, vec![1, 0]),
        other => {
            return Err(format!(
                "unknown binsparse format `{other}` (expected DVEC, DMAT, DMATR, DMATC, CVEC, CSR, CSC, DCSR, DCSC, COO, COOR, COOC or custom)"
            ))
        }
    })
}

/// The level tree of a `custom` format.
fn custom(c: &Json, rank: usize) -> Result<(Vec<Level>, Vec<usize>), String> {
    let mut levels = Vec::new();
    let mut at = c.get("level").ok_or("`custom` has no `level`")?;
    let mut dims = 0usize;
    loop {
        let desc = at
            .get("level_desc")
            .and_then(Json::as_str)
            .ok_or("a level without a `level_desc`")?;
        if desc == "element" {
            break;
        }
        let r = at
            .get("rank")
            .and_then(Json::as_u64)
            .filter(|&r| r >= 1 && r as usize <= rank)
            .ok_or(format!(
                "a `{desc}` level without a rank between 1 and {rank}"
            ))? as usize;
        levels.push(match desc {
            "dense" => Level::Dense(r),
            "sparse" => Level::Sparse(r),
            other => {
                return Err(format!(
                    "unknown level_desc `{other}` (expected dense, sparse or element)"
                ))
            }
        });
        dims += r;
        at = at
            .get("level")
            .ok_or(format!("the `{desc}` level has no `level` below it"))?;
    }
    if dims != rank {
        return Err(format!(
            "the levels cover {dims} dimensions; the shape has {rank}"
        ));
    }
    let transpose = match c.get("transpose") {
        None => (0..rank).collect(),
        Some(t) => {
            let t: Vec<usize> = t
                .as_array()
                .ok_or("`transpose` is not a list")?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .map(|x| x as usize)
                        .ok_or("`transpose` holds a non-integer")
                })
                .collect::<Result<_, _>>()?;
            let mut seen = vec![false; rank];
            for &d in &t {
                if d >= rank || std::mem::replace(&mut seen[d], true) {
                    return Err(format!(
                        "`transpose` {t:?} is not a permutation of 0..{rank}"
                    ));
                }
            }
            if t.len() != rank {
                return Err(format!(
                    "`transpose` {t:?} is not a permutation of 0..{rank}"
                ));
            }
            t
        }
    };
    Ok((levels, transpose))
}

/// Values as declared: plain, `iso[...]` (one value for all), `complex[...]` (pairs).
struct Values {
    values: ValueVec,
    iso: bool,
}

impl Values {
    /// The values, one per stored entry (`iso` ones repeated `n` times).
    fn expand_iso(self, h: &H5, n: u64, object: &str) -> Result<ValueVec, H5Error> {
        if !self.iso {
            return Ok(self.values);
        }
        h.check_budget(object, n as usize, self.values.value_type().size())?;
        Ok(repeat(&self.values, n as usize))
    }
}

fn repeat(v: &ValueVec, n: usize) -> ValueVec {
    sptk_tensor::with_values!(v, x => sptk_tensor::ValueVecAccess::wrap(vec![x[0]; n]))
}

fn read_values(h: &H5, g: &hdf5::Group, d: &Descriptor, object: &str) -> Result<Values, H5Error> {
    let ds = h.dataset(g, "values")?;
    let raw = h.values_ds(&ds, object)?;
    let (iso, inner) = match d
        .values
        .strip_prefix("iso[")
        .and_then(|s| s.strip_suffix(']'))
    {
        Some(inner) => (true, inner),
        None => (false, d.values.as_str()),
    };
    let values = if let Some(part) = inner
        .strip_prefix("complex[")
        .and_then(|s| s.strip_suffix(']'))
    {
        pairs(h, raw, part, object)?
    } else if inner == "bint8" {
        match raw {
            ValueVec::I8(v) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
            ValueVec::U8(v) => ValueVec::Bool(v.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
            ValueVec::Bool(v) => ValueVec::Bool(v),
            other => {
                return Err(h.at.err(
                    object,
                    format!("declared bint8 but stored as {:?}", other.value_type()),
                ))
            }
        }
    } else {
        let declared = declared_type(inner).ok_or_else(|| {
            h.at.err(
                object,
                format!("unknown binsparse value type `{}`", d.values),
            )
        })?;
        if declared != raw.value_type() {
            return Err(h.at.err(
                object,
                format!("declared {inner} but stored as {}", raw.value_type().name()),
            ));
        }
        raw
    };
    if iso && values.len() != 1 {
        return Err(h.at.err(
            object,
            format!(
                "{} values for an iso type; iso values are stored once",
                values.len()
            ),
        ));
    }
    Ok(Values { values, iso })
}

/// Interleaved (real, imag) pairs.
fn pairs(h: &H5, raw: ValueVec, part: &str, object: &str) -> Result<ValueVec, H5Error> {
    let odd = |n: usize| {
        h.at.err(
            object,
            format!("{n} numbers; complex values are stored as (real, imag) pairs"),
        )
    };
    Ok(match (part, raw) {
        ("float64", ValueVec::F64(v)) => {
            if v.len() % 2 != 0 {
                return Err(odd(v.len()));
            }
            ValueVec::C128(
                v.chunks_exact(2)
                    .map(|p| C128 { re: p[0], im: p[1] })
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        ("float32", ValueVec::F32(v)) => {
            if v.len() % 2 != 0 {
                return Err(odd(v.len()));
            }
            ValueVec::C64(
                v.chunks_exact(2)
                    .map(|p| C64 { re: p[0], im: p[1] })
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        (_, ValueVec::C128(v)) if part == "float64" => ValueVec::C128(v),
        (_, ValueVec::C64(v)) if part == "float32" => ValueVec::C64(v),
        (_, other) => {
            return Err(h.at.err(
                object,
                format!(
                    "declared complex[{part}] but stored as {}",
                    other.value_type().name()
                ),
            ))
        }
    })
}

/// The value type a binsparse type name declares.
fn declared_type(name: &str) -> Option<ValueType> {
    Some(match name {
        "uint8" => ValueType::U8,
        "uint16" => ValueType::U16,
        "uint32" => ValueType::U32,
        "uint64" => ValueType::U64,
        "int8" => ValueType::I8,
        "int16" => ValueType::I16,
        "int32" => ValueType::I32,
        "int64" => ValueType::I64,
        "float32" => ValueType::F32,
        "float64" => ValueType::F64,
        _ => return None,
    })
}

/// Refuses a fill value other than zero.
fn check_fill(h: &H5, g: &hdf5::Group, object: &str) -> Result<(), H5Error> {
    let ds = h.dataset(g, "fill_value")?;
    let v = h.values(&ds, object)?;
    let zero = sptk_tensor::with_values!(&v, x => x.iter().all(sptk_tensor::Value::is_zero));
    if !zero {
        return Err(h.at.err(
            object,
            "a fill value other than zero: sptk's encodings leave unstored entries zero, so this matrix cannot be converted without changing it",
        ));
    }
    Ok(())
}

/// Positions of one level while decoding: `coords[k][p]` is level dimension `k` of
/// position `p`; `count` positions.
struct Positions {
    coords: Vec<Vec<u64>>,
    count: u64,
}

/// Decodes the level tree into coordinates, top level first.
fn decode(h: &H5, g: &hdf5::Group, d: &Descriptor, values: Values) -> Result<Entries, H5Error> {
    let name = |a: &str| join(&g.name(), a);
    // Level dimension sizes, in level order.
    let sizes: Vec<u64> = d.transpose.iter().map(|&t| d.shape[t]).collect();
    let mut at = Positions {
        coords: Vec::new(),
        count: 1,
    };
    let mut dim = 0usize;
    for (l, level) in d.levels.iter().enumerate() {
        at = match *level {
            Level::Dense(r) => dense_level(h, g, at, &sizes[dim..dim + r])?,
            Level::Sparse(r) => sparse_level(h, g, at, l == 0, dim, &sizes[dim..dim + r])?,
        };
        dim += match *level {
            Level::Dense(r) | Level::Sparse(r) => r,
        };
    }
    if at.count != d.stored {
        return Err(h.at.err(
            format!("attribute `{ATTRIBUTE}` of {}", g.name()),
            format!(
                "number_of_stored_values is {}, but the arrays hold {} entries",
                d.stored, at.count
            ),
        ));
    }
    let values = values.expand_iso(h, at.count, &name("values"))?;
    if values.len() as u64 != at.count {
        return Err(h.at.err(
            name("values"),
            format!(
                "{} values for {} stored entries (nnz mismatch)",
                values.len(),
                at.count
            ),
        ));
    }
    // Back from level order to dimension order.
    let mut by_dim: Vec<Vec<u64>> = vec![Vec::new(); d.shape.len()];
    for (l, c) in at.coords.into_iter().enumerate() {
        by_dim[d.transpose[l]] = c;
    }
    let coords = by_dim
        .into_iter()
        .zip(&d.shape)
        .map(|(c, &s)| {
            IndexVec::from_vec_u64(c, coord_width_for(s)).map_err(|o| {
                h.at.err(g.name(), format!("coordinate {} too large", o.value))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Entries::from_checked_arrays(d.shape.clone(), coords, values)
        .map_err(|e| h.at.err(g.name(), e.to_string()))
}

/// A dense level over dimensions of `sizes`: every position above gets every coordinate
/// of the block, row-major (the last dimension varies fastest).
fn dense_level(
    h: &H5,
    g: &hdf5::Group,
    at: Positions,
    sizes: &[u64],
) -> Result<Positions, H5Error> {
    let span: u128 = sizes.iter().map(|&s| s as u128).product();
    let total = span * at.count as u128;
    if total > usize::MAX as u128 / 8 {
        return Err(h.at.err(
            g.name(),
            "the dense levels span more positions than can be held",
        ));
    }
    let dims = at.coords.len() + sizes.len();
    h.check_budget(&g.name(), total as usize, 8 * dims)?;
    let (span, total) = (span as u64, total as u64);
    let mut coords: Vec<Vec<u64>> = at
        .coords
        .iter()
        .map(|c| {
            c.iter()
                .flat_map(|&x| std::iter::repeat_n(x, span as usize))
                .collect()
        })
        .collect();
    for k in 0..sizes.len() {
        let inner: u64 = sizes[k + 1..].iter().product();
        let size = sizes[k].max(1);
        coords.push(
            (0..total)
                .map(|p| (p % span) / inner.max(1) % size)
                .collect(),
        );
    }
    Ok(Positions {
        coords,
        count: total,
    })
}

/// A sparse level over dimensions `dim..` of `sizes`: `indices_{dim+k}` for each, under
/// `pointers_to_{dim}` unless it is the top level.
fn sparse_level(
    h: &H5,
    g: &hdf5::Group,
    at: Positions,
    top: bool,
    dim: usize,
    sizes: &[u64],
) -> Result<Positions, H5Error> {
    let name = |a: &str| join(&g.name(), a);
    let mut level_crd: Vec<IndexVec> = Vec::with_capacity(sizes.len());
    for (k, &size) in sizes.iter().enumerate() {
        let array = format!("indices_{}", dim + k);
        let c = h.index_1d(g, &array)?;
        if let Some(e) = c.iter().position(|x| x >= size) {
            return Err(h.at.err(
                name(&array),
                format!(
                    "element {e} is {}, past the last of {size} coordinates",
                    c.get(e).unwrap_or(0)
                ),
            ));
        }
        if let Some(first) = level_crd.first() {
            if c.len() != first.len() {
                return Err(h.at.err(
                    name(&array),
                    format!(
                        "{} indices where indices_{dim} has {}",
                        c.len(),
                        first.len()
                    ),
                ));
            }
        }
        level_crd.push(c);
    }
    let n = level_crd.first().map_or(0, |c| c.len() as u64);
    let pos = if top {
        vec![0, n]
    } else {
        let array = format!("pointers_to_{dim}");
        let pos = h.index_1d(g, &array)?.to_u64_vec();
        crate::arrays::check_pointers(
            h,
            &pos,
            at.count,
            n,
            &name(&array),
            &format!("indices_{dim}"),
        )?;
        pos
    };
    let mut coords: Vec<Vec<u64>> = at
        .coords
        .iter()
        .map(|c| {
            let mut out = Vec::with_capacity(n as usize);
            for (p, w) in pos.windows(2).enumerate() {
                out.extend(std::iter::repeat_n(c[p], (w[1] - w[0]) as usize));
            }
            out
        })
        .collect();
    coords.extend(level_crd.iter().map(IndexVec::to_u64_vec));
    Ok(Positions { coords, count: n })
}

/// Expands a stored triangle to both (`symmetric_lower`, `hermitian_upper`, ...).
fn expand_structure(e: &mut Entries, structure: &str) -> Result<(), String> {
    let kind = structure
        .strip_suffix("_lower")
        .or_else(|| structure.strip_suffix("_upper"))
        .ok_or(format!("unknown structure `{structure}`"))?;
    let (conj, negate) = match kind {
        "symmetric" => (false, false),
        "hermitian" => (true, false),
        "skew_symmetric" => (false, true),
        _ => return Err(format!("unknown structure `{structure}` (expected symmetric, hermitian or skew_symmetric, _lower or _upper)")),
    };
    if e.dim_sizes().len() != 2 || e.dim_sizes()[0] != e.dim_sizes()[1] {
        return Err(format!(
            "structure `{structure}` on a tensor of shape {:?}; it needs a square matrix",
            e.dim_sizes()
        ));
    }
    let (dims, mut coords, mut values) =
        std::mem::replace(e, Entries::new(vec![0, 0], ValueType::Bool)).into_parts();
    let n = values.len();
    let (rows, cols) = (coords[0].to_u64_vec(), coords[1].to_u64_vec());
    for k in 0..n {
        let (i, j) = (rows[k], cols[k]);
        if i == j {
            continue;
        }
        let v = values.scalar(k).ok_or("a value out of range")?;
        let m = match v {
            Scalar::Complex(re, im) if conj => Scalar::Complex(re, -im),
            Scalar::Complex(re, im) if negate => Scalar::Complex(-re, -im),
            Scalar::Float(x) if negate => Scalar::Float(-x),
            Scalar::Int(x) if negate => Scalar::Int(-x),
            Scalar::Bool(_) if negate => {
                return Err("a skew-symmetric structure with boolean values".into())
            }
            other => other,
        };
        values.push_scalar(m).ok_or(format!(
            "the mirrored value of ({i}, {j}) does not fit the value type"
        ))?;
        coords[0].push_unchecked(j);
        coords[1].push_unchecked(i);
    }
    *e = Entries::from_checked_arrays(dims, coords, values).map_err(|err| err.to_string())?;
    Ok(())
}

/// The exact level arrays sptk keeps in group `sptk` beside a COO fallback.
fn exact(h: &H5, g: &hdf5::Group, d: &Descriptor, x: &Json) -> Result<Tensor, H5Error> {
    let group = join(&g.name(), SPTK_KEY);
    let at = |m: String| h.at.err(&group, m);
    let text = x
        .get("encoding")
        .and_then(Json::as_str)
        .ok_or_else(|| at("no `encoding` text under the descriptor's `sptk` key".into()))?;
    let encoding: Encoding = text
        .parse()
        .map_err(|e| at(format!("the encoding `{text}` does not parse: {e}")))?;
    let lengths = x.get("lengths").and_then(Json::as_object);
    let s = h.group(&group)?;
    let mut levels = Vec::with_capacity(encoding.levels.len());
    for l in 0..encoding.levels.len() {
        let mut arrays = LevelArrays {
            pos: None,
            crd: None,
        };
        for (kind, slot) in [("pos", &mut arrays.pos), ("crd", &mut arrays.crd)] {
            let name = format!("{kind}_{l}");
            if !H5::has_dataset(&s, &name) {
                continue;
            }
            let mut v = h.index_1d(&s, &name)?;
            let width = if kind == "pos" {
                encoding.pos_bits()
            } else {
                encoding.crd_bits()
            };
            if width == 2 {
                let IndexVec::U8(bytes) = v else {
                    return Err(h.at.err(
                        join(&group, &name),
                        "packed 2-bit coordinates are stored as bytes",
                    ));
                };
                let len = lengths
                    .and_then(|m| m.get(&name))
                    .and_then(Json::as_u64)
                    .filter(|&n| n.div_ceil(4) == bytes.len() as u64)
                    .ok_or_else(|| {
                        h.at.err(
                            join(&group, &name),
                            "no length matching the packed bytes under `lengths`",
                        )
                    })?;
                v = IndexVec::Packed2 {
                    bytes,
                    len: len as usize,
                };
            }
            *slot = Some(v);
        }
        levels.push(arrays);
    }
    let vds = h.dataset(&s, "values")?;
    let values = h.values_ds(&vds, &join(&group, "values"))?;
    Tensor::try_from_parts(encoding, d.shape.clone(), levels, values).map_err(|e| at(e.to_string()))
}

//! binsparse v0.1 written from any stored tensor. Encodings made of dense and compressed
//! levels (unique, ordered, any dimension order) are written as their binsparse format:
//! CSR, CSC, DCSR, DCSC, CVEC, DVEC, DMATR, DMATC, else a `custom` level tree; COO as
//! COOR / COOC / an N-D `sparse` level. Encodings binsparse cannot express (blocks, ELL,
//! n:m, loose_compressed, slices, non-default properties) are written as a sorted COO that
//! every binsparse reader understands, plus the encoding's exact level arrays in the group
//! `sptk/`, named under the descriptor key `sptk`, from which our reader rebuilds them.

use std::path::Path;

use hdf5::Group;
use serde_json::{json, Map, Value as Json};
use sptk_encoding::{Encoding, LevelExpr, LevelFormat, LevelProps};
use sptk_tensor::{Entries, IndexVec, IndexWidth, Tensor, ValueVec};

use super::{atomic, index_array, string_attr, value_array, WriteOptions};
use crate::error::{At, H5Error};

/// A level of a binsparse tree: dense or sparse, rank 1.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dense,
    Sparse,
}

/// The level tree an encoding maps to, with its level-to-dimension order.
struct Tree {
    levels: Vec<Kind>,
    transpose: Vec<usize>,
}

/// Dense and compressed levels over a permutation of the dimensions, no slices.
fn tree(e: &Encoding) -> Option<Tree> {
    if e.dims.iter().any(|d| d.slice.is_some()) || e.levels.len() != e.dims.len() {
        return None;
    }
    let mut levels = Vec::new();
    let mut transpose = Vec::new();
    for l in &e.levels {
        let LevelExpr::Dim(d) = l.expr else {
            return None;
        };
        if l.props != LevelProps::default() {
            return None;
        }
        levels.push(match l.format {
            LevelFormat::Dense => Kind::Dense,
            LevelFormat::Compressed => Kind::Sparse,
            _ => return None,
        });
        transpose.push(d);
    }
    Some(Tree { levels, transpose })
}

/// COO: a compressed(nonunique) level then singletons, over a permutation, no slices;
/// returns the level-to-dimension order.
fn coo(e: &Encoding) -> Option<Vec<usize>> {
    if e.dims.iter().any(|d| d.slice.is_some())
        || e.levels.len() != e.dims.len()
        || e.levels.len() < 2
    {
        return None;
    }
    let first = &e.levels[0];
    if first.format != LevelFormat::Compressed || !first.props.nonunique || first.props.nonordered {
        return None;
    }
    let mut order = Vec::new();
    for l in &e.levels {
        let LevelExpr::Dim(d) = l.expr else {
            return None;
        };
        order.push(d);
    }
    e.levels[1..]
        .iter()
        .all(|l| l.format == LevelFormat::Singleton && !l.props.nonordered)
        .then_some(order)
}

/// The predefined name of a tree, where it has one.
fn predefined(t: &Tree) -> Option<&'static str> {
    use Kind::{Dense, Sparse};
    let id = t.transpose.iter().enumerate().all(|(l, &d)| l == d);
    Some(match (&t.levels[..], id) {
        ([Dense], _) => "DVEC",
        ([Sparse], _) => "CVEC",
        ([Dense, Sparse], true) => "CSR",
        ([Dense, Sparse], false) => "CSC",
        ([Sparse, Sparse], true) => "DCSR",
        ([Sparse, Sparse], false) => "DCSC",
        ([Dense, Dense], true) => "DMATR",
        ([Dense, Dense], false) => "DMATC",
        _ => return None,
    })
}

/// The binsparse name of an index array's type.
fn index_type(v: &IndexVec) -> &'static str {
    match v.width() {
        IndexWidth::W2 | IndexWidth::W8 => "uint8",
        IndexWidth::W16 => "uint16",
        IndexWidth::W32 => "uint32",
        IndexWidth::W64 => "uint64",
    }
}

/// The binsparse value type, and the values as written (bool as int8, complex as pairs).
fn values_of(at: &At, v: &ValueVec) -> Result<(&'static str, Option<ValueVec>), H5Error> {
    use sptk_tensor::ValueType as T;
    Ok(match v.value_type() {
        T::F32 => ("float32", None),
        T::F64 => ("float64", None),
        T::I8 => ("int8", None),
        T::I16 => ("int16", None),
        T::I32 => ("int32", None),
        T::I64 => ("int64", None),
        T::U8 => ("uint8", None),
        T::U16 => ("uint16", None),
        T::U32 => ("uint32", None),
        T::U64 => ("uint64", None),
        T::Bool => {
            let ValueVec::Bool(b) = v else {
                unreachable!("typed by value_type")
            };
            (
                "bint8",
                Some(ValueVec::I8(
                    b.iter().map(|&x| x as i8).collect::<Vec<_>>().into(),
                )),
            )
        }
        T::C64 => {
            let ValueVec::C64(c) = v else {
                unreachable!("typed by value_type")
            };
            (
                "complex[float32]",
                Some(ValueVec::F32(
                    c.iter()
                        .flat_map(|z| [z.re, z.im])
                        .collect::<Vec<_>>()
                        .into(),
                )),
            )
        }
        T::C128 => {
            let ValueVec::C128(c) = v else {
                unreachable!("typed by value_type")
            };
            (
                "complex[float64]",
                Some(ValueVec::F64(
                    c.iter()
                        .flat_map(|z| [z.re, z.im])
                        .collect::<Vec<_>>()
                        .into(),
                )),
            )
        }
        T::F16 | T::BF16 => {
            return Err(at.err(
                "values",
                format!(
                    "binsparse has no {} type; convert the values with --dtype f32",
                    v.value_type().name()
                ),
            ))
        }
    })
}

/// Writes `tensor` as binsparse in the root group of `path`. Returns notes for the user.
///
/// # Errors
/// f16 / bf16 values; HDF5 errors, naming the file and object.
pub fn write_binsparse(
    path: &Path,
    tensor: &Tensor,
    opts: &WriteOptions,
) -> Result<Vec<String>, H5Error> {
    let mut notes = Vec::new();
    if tensor.all_labels().iter().any(Option::is_some) {
        notes.push(
            "binsparse has no place for labels; they are not written (a .spt output keeps them)"
                .into(),
        );
    }
    let at = At { file: path };
    let half;
    let tensor = match opts.structure {
        Some(s) => {
            half = super::structure::lower_half(&at, tensor, s)?;
            &half
        }
        None => tensor,
    };
    atomic(
        path,
        0,
        |at, file| {
            let root = file
                .group("/")
                .map_err(|e| at.lib("/", "opening the root group", e))?;
            write_group(at, &root, tensor, opts, &mut notes)
        },
        |_| Ok(()),
    )?;
    Ok(notes)
}

fn write_group(
    at: &At,
    g: &Group,
    t: &Tensor,
    opts: &WriteOptions,
    notes: &mut Vec<String>,
) -> Result<(), H5Error> {
    let enc = t.encoding();
    let z = opts.deflate;
    let mut types = Map::new();
    let (vtype, converted) = values_of(at, t.values())?;
    let values = converted.as_ref().unwrap_or(t.values());
    types.insert("values".into(), json!(vtype));
    let shape = t.dim_sizes().to_vec();
    let mut desc = Map::new();
    desc.insert("version".into(), json!("0.1.0"));
    desc.insert("shape".into(), json!(shape));
    desc.insert("number_of_stored_values".into(), json!(t.values().len()));
    if let Some(s) = opts.structure {
        desc.insert("structure".into(), json!(s.lower_name()));
    }
    let mut extra = None;
    if let Some(tr) = tree(enc) {
        for (l, kind) in tr.levels.iter().enumerate() {
            if *kind == Kind::Dense {
                continue;
            }
            let crd = t
                .crd(l)
                .ok_or_else(|| at.err("", format!("crd[{l}] missing")))?;
            if l > 0 {
                let pos = t
                    .pos(l)
                    .ok_or_else(|| at.err("", format!("pos[{l}] missing")))?;
                let name = format!("pointers_to_{l}");
                index_array(at, g, &name, pos, false, z)?;
                types.insert(name, json!(index_type(pos)));
            }
            let name = format!("indices_{l}");
            index_array(at, g, &name, crd, false, z)?;
            types.insert(name, json!(index_type(crd)));
        }
        value_array(at, g, "values", values, z)?;
        match predefined(&tr) {
            Some(name) => {
                desc.insert("format".into(), json!(name));
            }
            None => {
                desc.insert("format".into(), json!("custom"));
                desc.insert("custom".into(), custom(&tr.levels, &tr.transpose));
            }
        }
    } else {
        let order = coo(enc);
        let exact = order.is_none();
        let order = order.unwrap_or_else(|| (0..shape.len()).collect());
        let e = sorted_entries(t, &order);
        desc.insert("number_of_stored_values".into(), json!(e.len()));
        for (l, &d) in order.iter().enumerate() {
            let c = e.coords(d);
            let name = format!("indices_{l}");
            index_array(at, g, &name, c, false, z)?;
            types.insert(name, json!(index_type(c)));
        }
        let (_, conv) = values_of(at, e.values())?;
        value_array(at, g, "values", conv.as_ref().unwrap_or(e.values()), z)?;
        let id = order.iter().enumerate().all(|(l, &d)| l == d);
        if shape.len() == 2 {
            desc.insert("format".into(), json!(if id { "COOR" } else { "COOC" }));
        } else {
            desc.insert("format".into(), json!("custom"));
            desc.insert(
                "custom".into(),
                json!({"transpose": order, "level": {"level_desc": "sparse", "rank": shape.len(), "level": {"level_desc": "element"}}}),
            );
        }
        if exact {
            extra = Some(write_levels(at, g, t, z)?);
            notes.push(format!(
                "binsparse has no format for {}; written as a sorted COO that any binsparse reader takes, plus the exact level arrays in group /sptk (read back by sptk), about twice the size",
                enc
            ));
        }
    }
    desc.insert("data_types".into(), Json::Object(types));
    let mut root = Map::new();
    root.insert("binsparse".into(), Json::Object(desc));
    if let Some(x) = extra {
        root.insert(crate::binsparse::SPTK_KEY.into(), x);
    }
    let text =
        serde_json::to_string_pretty(&Json::Object(root)).map_err(|e| at.err("", e.to_string()))?;
    string_attr(at, g, crate::binsparse::ATTRIBUTE, &text)
}

/// A custom level tree of rank-1 levels.
fn custom(levels: &[Kind], transpose: &[usize]) -> Json {
    let mut node = json!({"level_desc": "element"});
    for kind in levels.iter().rev() {
        node = json!({
            "level_desc": if *kind == Kind::Dense { "dense" } else { "sparse" },
            "rank": 1,
            "level": node,
        });
    }
    json!({"transpose": transpose, "level": node})
}

/// The entries in lexicographic order of the level dimensions `order`.
fn sorted_entries(t: &Tensor, order: &[usize]) -> Entries {
    let e = t.to_entries();
    let n = e.len();
    let keys: Vec<Vec<u64>> = order.iter().map(|&d| e.coords(d).to_u64_vec()).collect();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&a, &b| {
        keys.iter()
            .map(|k| k[a].cmp(&k[b]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return e;
    }
    let (dims, coords, values) = e.into_parts();
    let coords = coords
        .iter()
        .map(|c| {
            let mut out = IndexVec::with_capacity(c.width(), n);
            for &p in &perm {
                out.push_unchecked(c.get(p).unwrap_or(0));
            }
            out
        })
        .collect();
    let values = sptk_tensor::with_values!(&values, v => sptk_tensor::ValueVecAccess::wrap(perm.iter().map(|&p| v[p]).collect()));
    Entries::from_checked_arrays(dims, coords, values).unwrap_or_else(|_| t.to_entries())
}

/// Writes the encoding's exact arrays into group `sptk` and returns their description.
fn write_levels(at: &At, g: &Group, t: &Tensor, z: u8) -> Result<Json, H5Error> {
    let s = g
        .create_group(crate::binsparse::SPTK_KEY)
        .map_err(|e| at.lib("/sptk", "creating", e))?;
    let mut lengths = Map::new();
    for (l, level) in t.levels().iter().enumerate() {
        for (kind, arr) in [("pos", &level.pos), ("crd", &level.crd)] {
            if let Some(v) = arr {
                let name = format!("{kind}_{l}");
                index_array(at, &s, &name, v, false, z)?;
                lengths.insert(name, json!(v.len()));
            }
        }
    }
    value_array(at, &s, "values", t.values(), z)?;
    Ok(json!({
        "encoding": t.encoding().to_string(),
        "value_type": t.value_type().name(),
        "lengths": lengths,
    }))
}

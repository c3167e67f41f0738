//! binsparse v0.1 (<https://graphblas.org/binsparse-specification/>) read from HDF5: the
//! JSON descriptor in the string attribute `binsparse` of a group, every predefined format
//! (DVEC, DMAT/DMATR/DMATC, CVEC, CSR, CSC, DCSR, DCSC, COO/COOR/COOC and N-D COO) and
//! `custom` level trees (element / dense / sparse, with a transpose); value types
//! including `bint8`, `complex[...]` and `iso[...]`; `fill`; and `structure` (symmetric,
//! hermitian and skew-symmetric halves expanded).
//!
//! CSR and CSC become level arrays without a trip through coordinates; every other layout
//! is decoded level by level into coordinates.

mod decode;
mod descriptor;
mod values;

use serde_json::Value as Json;
use sptk_encoding::Encoding;
use sptk_tensor::{IndexVec, LevelArrays, Tensor};

use crate::arrays::{compressed, plan_compressed, Compressed, CompressedDs, Content, Matrix};
use crate::error::H5Error;
use crate::h5::{join, H5};
use crate::plan::Planned;
use crate::Kind;
use decode::{decode, expand_structure};
use descriptor::{descriptor, Descriptor};
use values::{check_fill, read_values};

/// The descriptor attribute.
pub const ATTRIBUTE: &str = "binsparse";

/// The descriptor key (and group) of the exact level arrays sptk writes beside a COO
/// fallback.
pub const SPTK_KEY: &str = "sptk";

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
    if let Some(p) = planned(h, &g, &d, &object)? {
        return Ok(Matrix {
            object: g.name(),
            kind: Kind::Binsparse,
            layout: format!("binsparse {}", d.format),
            content: Content::Planned(p),
            labels: Vec::new(),
            notes,
        });
    }
    let values = read_values(h, &g, &d, &name("values"))?;

    let content = match (d.format.as_str(), d.structure.is_none()) {
        ("CSR" | "CSC", true) => {
            let csr = d.format == "CSR";
            let [rows, cols] = two(h, &d, &object)?;
            let pos = h.index_1d(&g, "pointers_to_1")?;
            let crd = h.index_1d(&g, "indices_1")?;
            check_stored(h, &d, crd.len() as u64, &name("indices_1"), "indices")?;
            if !values.iso {
                check_stored(h, &d, values.values.len() as u64, &name("values"), "values")?;
            }
            let values = values.expand_iso(h, d.stored, &name("values"))?;
            compressed(
                h.at,
                Compressed {
                    dims: [rows, cols],
                    by_rows: csr,
                    pos,
                    crd,
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

/// A CSR / CSC matrix of plainly declared values (not `iso`, `complex` or `bint8`, no
/// `structure`) whose three arrays have plans of the declared types: planned, the
/// descriptor's count checked against the datasets' lengths. None for anything else,
/// which is read (and its errors found) below.
fn planned(
    h: &H5,
    g: &hdf5::Group,
    d: &Descriptor,
    object: &str,
) -> Result<Option<Planned>, H5Error> {
    let Some(declared) = values::declared_type(&d.values) else {
        return Ok(None);
    };
    if !matches!(d.format.as_str(), "CSR" | "CSC") || d.structure.is_some() {
        return Ok(None);
    }
    let arrays = ["pointers_to_1", "indices_1", "values"];
    if !arrays.iter().all(|a| H5::has_dataset(g, a)) {
        return Ok(None);
    }
    let [rows, cols] = two(h, d, object)?;
    let [pos, crd, values] = arrays.map(|a| h.dataset_1d(g, a));
    let (pos, crd, values) = (pos?, crd?, values?);
    let names = arrays.map(|a| join(&g.name(), a));
    let c = CompressedDs {
        dims: [rows, cols],
        by_rows: d.format == "CSR",
        datasets: [&pos, &crd, &values],
        names: [&names[0], &names[1], &names[2]],
    };
    let Some(p) = plan_compressed(h, &c)? else {
        return Ok(None);
    };
    if p.arrays[2].ty != declared {
        return Ok(None);
    }
    check_stored(h, d, p.arrays[1].len, &names[1], "indices")?;
    check_stored(h, d, p.arrays[2].len, &names[2], "values")?;
    Ok(Some(p))
}

/// Refuses an array of `len` elements (`what`: indices, values) where the descriptor's
/// `number_of_stored_values` says another count: the count and the arrays must agree.
fn check_stored(h: &H5, d: &Descriptor, len: u64, object: &str, what: &str) -> Result<(), H5Error> {
    if len == d.stored {
        return Ok(());
    }
    Err(h.at.err(
        object,
        format!(
            "holds {len} {what}, but the descriptor's number_of_stored_values is {}",
            d.stored
        ),
    ))
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

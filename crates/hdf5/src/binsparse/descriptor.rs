//! The binsparse descriptor: the JSON in the `binsparse` attribute, parsed into a level
//! tree (predefined formats mapped to theirs), its transpose, shape, count and types.

use serde_json::Value as Json;

use super::SPTK_KEY;

/// One level of a level tree, top first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    /// `rank` dense dimensions.
    Dense(usize),
    /// `rank` dimensions of stored coordinates (rank > 1: a COO block).
    Sparse(usize),
}

/// A parsed descriptor.
pub(super) struct Descriptor {
    pub(super) format: String,
    pub(super) shape: Vec<u64>,
    pub(super) stored: u64,
    /// Levels above the element level.
    pub(super) levels: Vec<Level>,
    /// `transpose[l]` is the tensor dimension of level dimension `l`.
    pub(super) transpose: Vec<usize>,
    /// Declared value type: `float64`, `iso[...]`, `complex[...]`, `bint8`, ...
    pub(super) values: String,
    pub(super) structure: Option<String>,
    pub(super) fill: bool,
    /// The exact level arrays sptk wrote beside a COO fallback, if any.
    pub(super) sptk: Option<Json>,
}

/// Parses the descriptor JSON: `{"binsparse": {...}}` beside any user keys.
pub(super) fn descriptor(text: &str) -> Result<Descriptor, String> {
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

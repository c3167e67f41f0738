//! Decoding a binsparse level tree into coordinates, level by level (dense levels repeat
//! the positions above, sparse ones follow their pointers), and expanding a stored
//! triangle of a `structure`.

use sptk_tensor::{coord_width_for, Entries, IndexVec, Scalar, ValueType};

use super::descriptor::{Descriptor, Level};
use super::values::Values;
use super::ATTRIBUTE;
use crate::error::H5Error;
use crate::h5::{join, H5};

/// Positions of one level while decoding: `coords[k][p]` is level dimension `k` of
/// position `p`; `count` positions.
struct Positions {
    coords: Vec<Vec<u64>>,
    count: u64,
}

/// Decodes the level tree into coordinates, top level first.
pub(super) fn decode(
    h: &H5,
    g: &hdf5::Group,
    d: &Descriptor,
    values: Values,
) -> Result<Entries, H5Error> {
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
            h.at,
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
pub(super) fn expand_structure(e: &mut Entries, structure: &str) -> Result<(), String> {
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

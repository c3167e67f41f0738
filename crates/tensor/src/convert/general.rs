//! Conversion from a coordinate list into any encoding, in the steps of ENCODING.md:
//! slice, sort into level order, sum duplicates unless kept, drop zeros if asked, convert
//! the value type if asked, n:m zero-dropping and pruning, then build the levels.

use sptk_encoding::{Encoding, LevelFormat, SliceValue, Target};

use crate::budget::{self, Budget, Need};
use crate::entries::Entries;
use crate::error::ConvertError;
use crate::layout::Layout;
use crate::par;
use crate::raw::{with_raw, Arith, Raw};
use crate::tensor::{AppliedSlice, Tensor};
use crate::value::{Scalar, Value, ValueType, ValueVec, ValueVecAccess};
use crate::with_values;

use super::blocks::{choose_block, count_blocks_sorted};
use super::build::{build, build_ell, Items};
use super::order::{Keyer, Sorted};
use super::plan::{Route, Step};
use super::{AutoChoice, ConvertOptions, Converted};
use rayon::slice::ParallelSliceMut;

pub(crate) fn general(
    entries: &Entries,
    target: &Target,
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Converted, ConvertError> {
    if let Target::Fixed(enc) = target {
        let (enc, sliced, applied) = apply_slices(enc, entries, &opts.slice_values, budget)?;
        let src = sliced.as_ref().unwrap_or(entries);
        let enc = resolve_keep_duplicates(enc, opts.keep_duplicates)?;
        let (mut t, step) = with_raw!(src.values(), (v, ar) => convert_fixed(src, (v, &ar), &enc, opts, None, budget))?;
        t.slices = applied;
        return Ok(Converted {
            tensor: t,
            choice: None,
            pruned: 0,
            route: Route::of(&[step]),
        });
    }
    with_raw!(entries.values(), (v, ar) => general_auto(entries, (v, &ar), target, opts, budget))
}

/// The automatic targets (`BSR` / `BSC` / `ELL` alone) by the general path: stage in row
/// order, choose, then build.
fn general_auto<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    target: &Target,
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Converted, ConvertError> {
    match target {
        Target::Fixed(_) => Err(ConvertError::Invalid(
            "a fixed encoding is not an automatic target".into(),
        )),
        Target::AutoBlock {
            column_blocks,
            pos_width,
            crd_width,
        } => {
            if entries.rank() != 2 {
                return Err(ConvertError::Encoding(format!(
                    "BSR / BSC need a matrix; the tensor has {} dimension(s)",
                    entries.rank()
                )));
            }
            if !opts.slice_values.is_empty() {
                return Err(ConvertError::Encoding(format!(
                    "{} slice value(s) left over",
                    opts.slice_values.len()
                )));
            }
            if opts.keep_duplicates {
                return Err(ConvertError::KeepDuplicates(
                    "--keep-duplicates needs a COO target (innermost singleton) or an innermost nonunique level to hold the duplicates; level 3 is dense".into(),
                ));
            }
            let csr = csr_encoding();
            let keyer = packed_keyer(entries, &csr, ar.bits(), budget)?;
            let staged = stage(entries, (vals, ar), &keyer, opts)?;
            let choice = choose_block(
                entries.dim_sizes(),
                u64::from(ar.bits() / 8),
                *column_blocks,
                (*pos_width, *crd_width),
                &count_blocks_sorted(entries, &staged.0.idx),
            );
            let (r, c, bytes) = choice;
            let mut enc = if *column_blocks {
                sptk_encoding::bsc(r, c)
            } else {
                sptk_encoding::bsr(r, c)
            };
            enc.pos_width = *pos_width;
            enc.crd_width = *crd_width;
            let (t, step) = convert_fixed(entries, (vals, ar), &enc, opts, Some(staged), budget)?;
            Ok(Converted {
                tensor: t,
                choice: Some(AutoChoice::Block {
                    rows: r,
                    cols: c,
                    bytes,
                }),
                pruned: 0,
                route: Route::of(&[step]),
            })
        }
        Target::AutoEll {
            pos_width,
            crd_width,
        } => {
            if entries.rank() != 2 {
                return Err(ConvertError::Encoding(format!(
                    "ELL needs a matrix; the tensor has {} dimension(s)",
                    entries.rank()
                )));
            }
            let csr = csr_encoding();
            let keyer = packed_keyer(entries, &csr, ar.bits(), budget)?;
            let staged = stage(entries, (vals, ar), &keyer, opts)?;
            let mut k = 1u64;
            let mut i = 0;
            let idx = &staged.0.idx;
            while i < idx.len() {
                let r = entries.coord(idx[i], 0);
                let mut e = i + 1;
                while e < idx.len() && entries.coord(idx[e], 0) == r {
                    e += 1;
                }
                k = k.max((e - i) as u64);
                i = e;
            }
            let mut enc = sptk_encoding::ell(k);
            enc.pos_width = *pos_width;
            enc.crd_width = *crd_width;
            let (t, step) = convert_fixed(entries, (vals, ar), &enc, opts, Some(staged), budget)?;
            Ok(Converted {
                tensor: t,
                choice: Some(AutoChoice::Ell { k }),
                pruned: 0,
                route: Route::of(&[step]),
            })
        }
    }
}

/// Entries sorted in row-major order with duplicates merged and zeros dropped as asked,
/// in the source value type: reused by automatic targets after they choose.
type Staged<V> = (Sorted, Vec<V>);

/// The keyer of `enc` with its keys packed, after charging the budget for the sort.
fn packed_keyer(
    entries: &Entries,
    enc: &Encoding,
    value_bits: u32,
    budget: &Budget,
) -> Result<Keyer, ConvertError> {
    let lvl_sizes = Layout::new(enc, entries.dim_sizes())?.lvl_sizes();
    let mut keyer = Keyer::new(enc, &lvl_sizes);
    budget.charge(&budget::sort_needs(
        entries.len() as u64,
        lvl_sizes.first().copied().unwrap_or(1),
        keyer.item_bits(entries.len()),
        value_bits,
    ))?;
    keyer.pack(entries);
    Ok(keyer)
}

/// Sorts into `keyer`'s level order, merges duplicates and drops zeros as asked, in the
/// source type.
fn stage<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    keyer: &Keyer,
    opts: &ConvertOptions,
) -> Result<Staged<V>, ConvertError> {
    let sorted = keyer.sort(entries, (0..entries.len()).collect());
    // Values in level order, gathered in parallel (the one random read of the merge).
    let mut vals: Vec<V> = par::map(sorted.len(), |k| vals[sorted.idx[k]]);
    let mut sorted = sorted;
    let keep = opts.keep_duplicates;
    let n = sorted.len();
    // Most inputs have neither duplicates nor zeros to drop: two parallel scans tell.
    let unique = keep
        || par::all(n.saturating_sub(1), |k| {
            !sorted.same(keyer, entries, k, k + 1)
        });
    let nonzero = !opts.drop_zeros || par::all(n, |k| !ar.is_zero(vals[k]));
    if !(unique && nonzero) {
        // Merge in place: item `w` is written only after items up to `k >= w` are read.
        let mut w = 0;
        let mut k = 0;
        while k < n {
            let mut v = vals[k];
            let mut e = k + 1;
            if !keep {
                while e < n && sorted.same(keyer, entries, k, e) {
                    v = ar
                        .add(v, vals[e])
                        .ok_or_else(|| ConvertError::SumOverflow {
                            coord: dim_coord(entries, sorted.idx[k]),
                        })?;
                    e += 1;
                }
            }
            if !(opts.drop_zeros && ar.is_zero(v)) {
                sorted.move_item(k, w);
                vals[w] = v;
                w += 1;
            }
            k = e;
        }
        sorted.truncate(w);
        vals.truncate(w);
    }
    Ok((sorted, vals))
}

fn dim_coord(entries: &Entries, e: usize) -> Vec<u64> {
    (0..entries.rank()).map(|d| entries.coord(e, d)).collect()
}

/// Converts into a fixed, slice-free encoding, by a scatter where the planner's general
/// step says so (see [`crate::plan`]), else level by level. `staged` holds items already
/// merged (in some order) by an automatic target.
fn convert_fixed<V: Raw>(
    entries: &Entries,
    (vals, ar): (&[V], &Arith<V>),
    enc: &Encoding,
    opts: &ConvertOptions,
    staged: Option<Staged<V>>,
    budget: &Budget,
) -> Result<(Tensor, Step), ConvertError> {
    let layout = Layout::new(enc, entries.dim_sizes())?;
    let target_type = opts.dtype.unwrap_or(ar.ty);
    let nnz = entries.len() as u64;
    budget.charge_layout(&layout, nnz, target_type.size() as u32 * 8)?;
    let same_type = opts.dtype.is_none_or(|t| t == ar.ty);
    if let (None, true, Some((outer, inner))) = (
        &staged,
        same_type,
        crate::convert::scatter::csr_like(enc, &layout),
    ) {
        let work =
            crate::convert::scatter::work_width(entries.dim_sizes()[inner], layout.crd_width);
        let rows = entries.dim_sizes()[outer];
        let vbits = ar.bits();
        budget.charge(&budget::counting_sort_needs(
            rows, nnz, work, &layout, vbits,
        ))?;
        let (levels, out) = crate::convert::scatter::build_csr(
            entries,
            (vals, ar),
            outer,
            inner,
            &layout,
            opts.drop_zeros,
        )?;
        let t = Tensor {
            encoding: enc.clone(),
            layout,
            levels,
            values: ar.wrap(out),
            slices: Vec::new(),
            labels: Vec::new(),
        };
        return Ok((t, Step::Scatter));
    }
    let keyer = packed_keyer(entries, enc, ar.bits(), budget)?;
    let (sorted, merged) = match staged {
        Some((staged, merged)) => {
            // Re-sort the merged items into this encoding's level order.
            let idx = staged.idx;
            let mut pos: Vec<usize> = (0..idx.len()).collect();
            pos.par_sort_by(|&a, &b| keyer.cmp(entries, idx[a], idx[b]).then(idx[a].cmp(&idx[b])));
            let merged2: Vec<V> = par::map(pos.len(), |k| merged[pos[k]]);
            let idx = par::map(pos.len(), |k| idx[pos[k]]);
            (keyer.sorted_from(idx), merged2)
        }
        None => stage(entries, (vals, ar), &keyer, opts)?,
    };
    if target_type == ar.ty {
        let t = finish_typed(
            entries,
            &keyer,
            &layout,
            enc,
            (sorted, merged, ar),
            opts,
            budget,
        )?;
        return Ok((t, Step::General));
    }
    let cast = cast_values(entries, &sorted.idx, &ar.wrap(merged), target_type)?;
    let t = with_raw!(&cast, (w, war) => finish_typed(
        entries,
        &keyer,
        &layout,
        enc,
        (sorted, w.to_vec(), &war),
        opts,
        budget
    ))?;
    Ok((t, Step::General))
}

/// Converts merged values to `target`; the first entry in input order whose value would
/// change is an error.
fn cast_values(
    entries: &Entries,
    idx: &[usize],
    vals: &ValueVec,
    target: ValueType,
) -> Result<ValueVec, ConvertError> {
    let mut out = ValueVec::with_capacity(target, vals.len());
    let mut bad: Option<(usize, usize)> = None;
    for (k, &e) in idx.iter().enumerate().take(vals.len()) {
        let s = vals.scalar(k).unwrap_or(Scalar::Int(0));
        if out.push_scalar(s).is_none() {
            // A placeholder keeps the positions; the conversion fails below.
            let _ = out.push_scalar(Scalar::Int(0));
            if bad.is_none_or(|(first, _)| e < first) {
                bad = Some((e, k));
            }
        }
    }
    if let Some((e, k)) = bad {
        return Err(ConvertError::Dtype {
            dtype: target.name().to_string(),
            coord: dim_coord(entries, e),
            value: vals.scalar(k).map(|s| s.to_string()).unwrap_or_default(),
        });
    }
    Ok(out)
}

fn finish_typed<W: Raw>(
    entries: &Entries,
    keyer: &Keyer,
    layout: &Layout,
    enc: &Encoding,
    (mut sorted, mut vals, ar): (Sorted, Vec<W>, &Arith<W>),
    opts: &ConvertOptions,
    budget: &Budget,
) -> Result<Tensor, ConvertError> {
    if let Some(LevelFormat::Structured { n, m }) = layout.levels.last().map(|p| p.format) {
        let items = (&mut sorted, &mut vals, ar);
        let pruned = fit_groups(entries, keyer, enc, items, (n, m), opts.prune)?;
        budget.add_pruned(pruned);
    }
    let items = Items {
        entries,
        keyer,
        sorted,
        vals,
    };
    let (levels, out_vals) = if layout.ell {
        build_ell(layout, &items, layout.levels[0].size)?
    } else {
        build(layout, items, budget)?
    };
    Ok(Tensor {
        encoding: enc.clone(),
        layout: layout.clone(),
        levels,
        values: ar.wrap(out_vals),
        slices: Vec::new(),
        labels: Vec::new(),
    })
}

/// n:m: drops zeros, then prunes or refuses groups with more than n nonzeros.
fn fit_groups<W: Raw>(
    entries: &Entries,
    keyer: &Keyer,
    enc: &Encoding,
    (sorted, vals, ar): (&mut Sorted, &mut Vec<W>, &Arith<W>),
    (n, m): (u32, u32),
    prune: bool,
) -> Result<u64, ConvertError> {
    let last = keyer.len() - 1;
    let len = sorted.len();
    let mut out = sorted.empty_like(len);
    let mut out_vals = Vec::with_capacity(vals.len());
    let same_group = |a: usize, b: usize| {
        (0..last).all(|l| sorted.coord(keyer, entries, a, l) == sorted.coord(keyer, entries, b, l))
    };
    let mut pruned = 0u64;
    let mut k = 0;
    while k < len {
        let mut e = k + 1;
        while e < len && same_group(k, e) {
            e += 1;
        }
        let mut group: Vec<usize> = (k..e).filter(|&i| !ar.is_zero(vals[i])).collect();
        if group.len() > n as usize {
            if !prune {
                return Err(ConvertError::GroupOverflow(group_message(
                    entries,
                    enc,
                    sorted.idx[k],
                    group.len(),
                    n,
                    m,
                )));
            }
            pruned += (group.len() - n as usize) as u64;
            crate::convert::padded::keep_largest(|i| ar.magnitude(vals[i]), &mut group, n as usize);
        }
        for i in group {
            out.push_from(sorted, i);
            out_vals.push(vals[i]);
        }
        k = e;
    }
    *sorted = out;
    *vals = out_vals;
    Ok(pruned)
}

fn group_message(
    entries: &Entries,
    enc: &Encoding,
    e: usize,
    count: usize,
    n: u32,
    m: u32,
) -> String {
    let split_dim = enc
        .levels
        .last()
        .and_then(|l| l.expr.dim())
        .unwrap_or(entries.rank().saturating_sub(1));
    let g = entries.coord(e, split_dim) / m as u64;
    let at = if entries.rank() == 2 {
        format!("row {}", entries.coord(e, 1 - split_dim.min(1)))
    } else {
        let parts: Vec<String> = (0..entries.rank())
            .map(|d| {
                if d == split_dim {
                    "*".to_string()
                } else {
                    entries.coord(e, d).to_string()
                }
            })
            .collect();
        format!("entry ({})", parts.join(", "))
    };
    crate::convert::padded::overflow_message(&at, g, count, n, m)
}

/// `--keep-duplicates`: a COO target's innermost singleton becomes nonunique; an innermost
/// nonunique level is kept; anything else cannot hold duplicates.
pub(crate) fn resolve_keep_duplicates(
    mut enc: Encoding,
    keep: bool,
) -> Result<Encoding, ConvertError> {
    if !keep {
        return Ok(enc);
    }
    let last = enc.levels.len().saturating_sub(1);
    let Some(level) = enc.levels.last_mut() else {
        return Ok(enc);
    };
    if level.format == LevelFormat::Singleton {
        level.props.nonunique = true;
        return Ok(enc);
    }
    if level.props.nonunique {
        return Ok(enc);
    }
    Err(ConvertError::KeepDuplicates(format!(
        "--keep-duplicates needs a COO target (innermost singleton) or an innermost nonunique level to hold the duplicates; level {last} is {}",
        format_name(level.format)
    )))
}

fn format_name(f: LevelFormat) -> String {
    match f {
        LevelFormat::Dense => "dense".into(),
        LevelFormat::Batch => "batch".into(),
        LevelFormat::Compressed => "compressed".into(),
        LevelFormat::LooseCompressed => "loose_compressed".into(),
        LevelFormat::Singleton => "singleton".into(),
        LevelFormat::Structured { n, m } => format!("structured[{n}, {m}]"),
    }
}

/// Resolves `?`, checks each slice against its dimension and materializes the selection.
fn apply_slices(
    enc: &Encoding,
    entries: &Entries,
    values: &[u64],
    budget: &Budget,
) -> Result<(Encoding, Option<Entries>, Vec<AppliedSlice>), ConvertError> {
    let has_slices = enc.dims.iter().any(|d| d.slice.is_some());
    if !has_slices {
        if !values.is_empty() {
            return Err(ConvertError::Encoding(format!(
                "{} slice value(s) left over",
                values.len()
            )));
        }
        return Ok((enc.clone(), None, Vec::new()));
    }
    let resolved = enc
        .with_slice_values(values)
        .map_err(|e| ConvertError::Encoding(e.to_string()))?;
    if resolved.dim_rank() != entries.rank() {
        return Err(ConvertError::Rank {
            encoding: resolved.dim_rank(),
            tensor: entries.rank(),
        });
    }
    let mut applied = Vec::new();
    let mut sizes = entries.dim_sizes().to_vec();
    for (d, spec) in resolved.dims.iter().enumerate() {
        let Some(s) = spec.slice else { continue };
        let get = |v: SliceValue| match v {
            SliceValue::Static(x) => x,
            SliceValue::Dynamic => 0,
        };
        let (offset, size, stride) = (get(s.offset), get(s.size), get(s.stride));
        let dim_size = entries.dim_sizes()[d];
        let last = size
            .checked_sub(1)
            .and_then(|k| k.checked_mul(stride))
            .and_then(|x| x.checked_add(offset));
        let fits = match last {
            None => size == 0 && offset <= dim_size,
            Some(last) => last < dim_size,
        };
        if stride == 0 || !fits {
            return Err(ConvertError::SliceOutside {
                dim: d,
                offset,
                size,
                stride,
                dim_size,
            });
        }
        sizes[d] = size;
        applied.push(AppliedSlice {
            dim: d,
            offset,
            size,
            stride,
        });
    }
    let n = entries.len() as u128;
    budget.charge(&[
        Need::new("sliced coordinates", n * entries.rank() as u128, 64),
        Need::new("sliced values", n, entries.value_type().size() as u32 * 8),
    ])?;
    let mut coords: Vec<Vec<u64>> = vec![Vec::new(); entries.rank()];
    let mut keep = Vec::new();
    'entry: for e in 0..entries.len() {
        let mut c = Vec::with_capacity(entries.rank());
        for d in 0..entries.rank() {
            let x = entries.coord(e, d);
            match applied.iter().find(|a| a.dim == d) {
                None => c.push(x),
                Some(a) => {
                    if x < a.offset
                        || !(x - a.offset).is_multiple_of(a.stride)
                        || (x - a.offset) / a.stride >= a.size
                    {
                        continue 'entry;
                    }
                    c.push((x - a.offset) / a.stride);
                }
            }
        }
        for (d, x) in c.into_iter().enumerate() {
            coords[d].push(x);
        }
        keep.push(e);
    }
    let values = with_values!(entries.values(), v => gather(v, &keep));
    let sliced = Entries::from_parts(sizes, coords, values)
        .map_err(|e| ConvertError::Invalid(e.to_string()))?;
    Ok((resolved.without_slices(), Some(sliced), applied))
}

fn gather<V: Value + ValueVecAccess>(v: &[V], keep: &[usize]) -> ValueVec {
    V::wrap(keep.iter().map(|&e| v[e]).collect())
}

/// `(d0, d1) -> (d0 : dense, d1 : compressed)`: the row-major order automatic targets stage in.
fn csr_encoding() -> Encoding {
    use sptk_encoding::{DimSpec, LevelExpr, LevelProps, LevelSpec};
    let level = |d, format| LevelSpec {
        expr: LevelExpr::Dim(d),
        format,
        props: LevelProps::default(),
    };
    Encoding {
        dims: vec![DimSpec::default(), DimSpec::default()],
        symbols: 0,
        levels: vec![
            level(0, LevelFormat::Dense),
            level(1, LevelFormat::Compressed),
        ],
        pos_width: 0,
        crd_width: 0,
        explicit_val: None,
        implicit_val: None,
    }
}

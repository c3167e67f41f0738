//! A table read whole into a coordinate list. Seekable files are read part by part in
//! parallel, each part decoded a window at a time into its own stretch of the final
//! arrays (allocated once, at the coordinates' final widths when the shape is known);
//! streams and tables whose coordinates are relabelled are read front to back, since
//! first appearance decides the labels.

use std::sync::Arc;

use arrow_array::RecordBatch;
use rayon::prelude::*;
use sptk_tensor::{coord_width_for, Entries, IndexVec, IndexWidth, Labels};

use crate::columns::{self, with_arrow_value, ArrowValue, Ctx};
use crate::error::TableError;
use crate::guard::contain;
use crate::open::TableKind;
use crate::relabel::{renumber_by_rows, IdList};
use crate::table::{Found, Part, Table};

/// A table read whole.
pub struct TableEntries {
    /// The entries, in table order.
    pub entries: Entries,
    /// Per dimension, the labels of relabelled coordinates (empty if none was).
    pub labels: Vec<Option<Arc<Labels>>>,
    /// What a user should know (shape inferred, labels made, ...).
    pub notes: Vec<String>,
}

/// One dimension's output stretch.
enum Out<'a> {
    W32(&'a mut [u32]),
    W64(&'a mut [u64]),
}

impl Out<'_> {
    fn split(self, n: usize) -> (Self, Self) {
        match self {
            Out::W32(s) => {
                let (a, b) = s.split_at_mut(n);
                (Out::W32(a), Out::W32(b))
            }
            Out::W64(s) => {
                let (a, b) = s.split_at_mut(n);
                (Out::W64(a), Out::W64(b))
            }
        }
    }

    /// Copies `src` to the stretch at `at` (coordinates already checked against a size
    /// the width holds).
    fn put(&mut self, at: usize, src: &[u64]) {
        match self {
            Out::W32(s) => s[at..at + src.len()]
                .iter_mut()
                .zip(src)
                .for_each(|(o, &c)| *o = c as u32),
            Out::W64(s) => s[at..at + src.len()].copy_from_slice(src),
        }
    }
}

impl Table {
    /// Reads the whole table as a coordinate list (with labels for relabelled
    /// dimensions), within the memory budget.
    ///
    /// # Errors
    /// Any [`TableError`], naming the file, column and row at fault.
    pub fn read_entries(&self) -> Result<TableEntries, TableError> {
        contain(
            &self.files[0].path,
            || "reading its rows".into(),
            || {
                with_arrow_value!(self.value_type, V => {
                    if self.relabels() || self.rows().is_none() {
                        self.read_sequential::<V>()
                    } else {
                        self.read_parallel::<V>()
                    }
                })
            },
        )
    }

    /// Checks `rows` entries of this table against the memory budget.
    pub(crate) fn charge(&self, rows: u64, coord_bytes: u64) -> Result<(), TableError> {
        let per = coord_bytes + self.value_type.size() as u64;
        let need = rows.saturating_mul(per);
        match self.opts.budget() {
            limit if need > limit => Err(TableError::too_large(
                format!(
                    "{}: {rows} rows as a coordinate list need {need} bytes ({per} per entry), more than the memory limit of {limit} bytes",
                    self.files[0].path.display()
                ),
                "the coordinate list",
                need,
                limit,
            )),
            _ => Ok(()),
        }
    }

    /// Decodes one batch of file `f` (starting at `row0` of the file): coordinates of the
    /// dimensions not relabelled into `coords[d]` (checked against `sizes`), values into
    /// `values`. Relabelled dimensions are left to the caller.
    pub(crate) fn decode<V: ArrowValue>(
        &self,
        f: usize,
        batch: &RecordBatch,
        row0: u64,
        sizes: Option<&[u64]>,
        coords: &mut [Vec<u64>],
        values: &mut Vec<V>,
    ) -> Result<(), TableError> {
        let all: Vec<usize> = (0..self.coords.len()).collect();
        self.decode_dims(f, batch, row0, sizes, &all, coords)?;
        self.decode_values(f, batch, row0, values)
    }

    /// Decodes the coordinates of dimensions `dims` of one batch (see [`Table::decode`]).
    pub(crate) fn decode_dims(
        &self,
        f: usize,
        batch: &RecordBatch,
        row0: u64,
        sizes: Option<&[u64]>,
        dims: &[usize],
        coords: &mut [Vec<u64>],
    ) -> Result<(), TableError> {
        let file = &self.files[f];
        let n = batch.num_rows();
        for &d in dims {
            let name = &self.coords[d];
            let out = &mut coords[d];
            out.clear();
            if self.lists[d].is_some() {
                continue;
            }
            let ctx = Ctx {
                path: &file.path,
                column: name,
                row0,
                base: self.opts.index_base,
                size: sizes.map(|s| s[d]),
            };
            match &self.found[f][d] {
                Found::Column(_) => {
                    let arr = columns::column(batch, &file.path, name)?;
                    contain(
                        &file.path,
                        || ctx.place(),
                        || columns::coords(arr.as_ref(), &ctx, out),
                    )?;
                }
                Found::Hive(text) => {
                    let c = hive_coord(text, &ctx)?;
                    // The row count comes from the file's metadata: within the budget
                    // before the array is made.
                    self.charge(n as u64, 8)?;
                    out.resize(n, c);
                }
            }
        }
        Ok(())
    }

    /// Decodes the values of one batch (ones for a pattern).
    pub(crate) fn decode_values<V: ArrowValue>(
        &self,
        f: usize,
        batch: &RecordBatch,
        row0: u64,
        values: &mut Vec<V>,
    ) -> Result<(), TableError> {
        let file = &self.files[f];
        values.clear();
        match &self.value {
            None => {
                self.charge(batch.num_rows() as u64, 0)?;
                values.resize(batch.num_rows(), V::one());
            }
            Some(name) => {
                let arr = columns::column(batch, &file.path, name)?;
                let ctx = Ctx {
                    path: &file.path,
                    column: name,
                    row0,
                    base: 0,
                    size: None,
                };
                contain(
                    &file.path,
                    || ctx.place(),
                    || V::extend(arr.as_ref(), &ctx, values),
                )?;
            }
        }
        Ok(())
    }

    fn read_parallel<V: ArrowValue>(&self) -> Result<TableEntries, TableError> {
        let total = self.rows().unwrap_or(0);
        let rank = self.coords.len();
        let sizes = self.shape.as_deref();
        let widths: Vec<IndexWidth> = (0..rank)
            .map(|d| sizes.map_or(IndexWidth::W64, |s| coord_width_for(s[d])))
            .collect();
        let coord_bytes: u64 = widths.iter().map(|w| u64::from(w.bits() / 8)).sum();
        self.charge(total, coord_bytes)?;
        let n = usize::try_from(total).map_err(|_| {
            TableError::too_large(
                format!("{total} rows do not fit this machine's memory"),
                "rows",
                total,
                usize::MAX as u64,
            )
        })?;
        let path = self.files[0].path.clone();
        let zeroed = |e: sptk_tensor::ConvertError| TableError::Convert {
            path: path.clone(),
            error: e,
        };
        let mut c32: Vec<Vec<u32>> = Vec::new();
        let mut c64: Vec<Vec<u64>> = Vec::new();
        for w in &widths {
            match w {
                IndexWidth::W32 => c32.push(sptk_tensor::big_zeroed(n).map_err(zeroed)?),
                _ => c64.push(sptk_tensor::big_zeroed(n).map_err(zeroed)?),
            }
        }
        let mut values: Vec<V> = sptk_tensor::big_zeroed(n).map_err(zeroed)?;
        {
            let (mut i32s, mut i64s) = (c32.iter_mut(), c64.iter_mut());
            let mut rest: Vec<Out> = widths
                .iter()
                .map(|w| match w {
                    IndexWidth::W32 => {
                        Out::W32(i32s.next().expect("one array per 32-bit dimension"))
                    }
                    _ => Out::W64(i64s.next().expect("one array per 64-bit dimension")),
                })
                .collect();
            let mut vrest: &mut [V] = &mut values;
            let mut jobs = Vec::with_capacity(self.parts.len());
            for p in &self.parts {
                let len = p.rows as usize;
                let mut mine = Vec::with_capacity(rank);
                for r in rest.iter_mut() {
                    let (a, b) = std::mem::replace(r, Out::W64(&mut [])).split(len);
                    mine.push(a);
                    *r = b;
                }
                let (va, vb) = std::mem::take(&mut vrest).split_at_mut(len);
                vrest = vb;
                jobs.push((*p, mine, va));
            }
            jobs.into_par_iter()
                .try_for_each(|(p, mut outs, vals)| self.fill_part(p, sizes, &mut outs, vals))?;
        }
        let (mut i32s, mut i64s) = (c32.into_iter(), c64.into_iter());
        let mut arrays: Vec<IndexVec> = widths
            .iter()
            .map(|w| match w {
                IndexWidth::W32 => IndexVec::U32(i32s.next().unwrap_or_default().into()),
                _ => IndexVec::U64(i64s.next().unwrap_or_default().into()),
            })
            .collect();
        let mut notes = self.notes.clone();
        let dims = match sizes {
            Some(s) => s.to_vec(),
            None => {
                let dims: Vec<u64> = arrays
                    .par_iter()
                    .map(|a| a.iter().max().map_or(0, |m| m + 1))
                    .collect();
                for (a, &size) in arrays.iter_mut().zip(&dims) {
                    let w = coord_width_for(size);
                    if w != a.width() {
                        *a = a.to_width(w).map_err(|o| {
                            TableError::invalid(
                                &self.files[0].path,
                                format!("coordinate {} does not fit", o.value),
                            )
                        })?;
                    }
                }
                notes.push(format!(
                    "no shape in the file: {dims:?}, the largest coordinates + 1"
                ));
                dims
            }
        };
        let entries = Entries::from_checked_arrays(dims, arrays, V::wrap(values))
            .map_err(|e| TableError::invalid(&self.files[0].path, e.to_string()))?;
        // Labels kept in the schema metadata (this path numbers no dimension).
        let labels = if self.stored_labels.iter().any(Option::is_some) {
            self.stored_labels.clone()
        } else {
            Vec::new()
        };
        Ok(TableEntries {
            entries,
            labels,
            notes,
        })
    }

    fn fill_part<V: ArrowValue>(
        &self,
        p: Part,
        sizes: Option<&[u64]>,
        outs: &mut [Out],
        vals: &mut [V],
    ) -> Result<(), TableError> {
        let file = &self.files[p.file];
        let all: Vec<usize> = (0..self.coords.len()).collect();
        let proj = self.projection(p.file, &all, true);
        let mut scratch = vec![Vec::new(); self.coords.len()];
        let mut vbuf = Vec::new();
        let mut filled = 0usize;
        file.each_batch(p.index, &proj, self.opts.window, |batch| {
            let n = batch.num_rows();
            if filled + n > vals.len() {
                return Err(TableError::format(
                    &file.path,
                    format!(
                        "part {} holds more rows than the {} its metadata says",
                        p.index, p.rows
                    ),
                ));
            }
            self.decode(
                p.file,
                &batch,
                p.row0 + filled as u64,
                sizes,
                &mut scratch,
                &mut vbuf,
            )?;
            for (o, s) in outs.iter_mut().zip(&scratch) {
                o.put(filled, s);
            }
            vals[filled..filled + n].copy_from_slice(&vbuf);
            filled += n;
            Ok(())
        })?;
        if filled != vals.len() {
            return Err(TableError::format(
                &file.path,
                format!(
                    "part {} holds {filled} rows, but its metadata says {}",
                    p.index, p.rows
                ),
            ));
        }
        Ok(())
    }

    /// The lists of ids to number from: empty, or starting from the labels given.
    fn id_lists(&self, count: usize) -> Result<Vec<IdList>, TableError> {
        (0..count)
            .map(|l| match self.seeds.get(l).cloned().flatten() {
                None => Ok(IdList::default()),
                Some(labels) => {
                    let d = self.lists.iter().position(|&x| x == Some(l)).unwrap_or(0);
                    let column = self.coords.get(d).map_or("", String::as_str);
                    IdList::seeded(&labels, column)
                        .map_err(|m| TableError::invalid(&self.files[0].path, m))
                }
            })
            .collect()
    }

    fn read_sequential<V: ArrowValue>(&self) -> Result<TableEntries, TableError> {
        let rank = self.coords.len();
        let sizes = if self.relabels() {
            None
        } else {
            self.shape.as_deref()
        };
        let mut coords: Vec<Vec<u64>> = vec![Vec::new(); rank];
        let mut values: Vec<V> = Vec::new();
        let list_count = self.lists.iter().flatten().max().map_or(0, |m| m + 1);
        let mut lists = self.id_lists(list_count)?;
        let mut scratch = vec![Vec::new(); rank];
        let mut vbuf = Vec::new();
        let all: Vec<usize> = (0..rank).collect();
        for (f, file) in self.files.iter().enumerate() {
            let proj = self.projection(f, &all, true);
            let mut row0 = 0u64;
            let mut each = |batch: RecordBatch| -> Result<(), TableError> {
                // Within the budget before the batch's rows are decoded and appended.
                let after = (values.len() + batch.num_rows()) as u64;
                self.charge(after, 8 * rank as u64)?;
                self.decode(f, &batch, row0, sizes, &mut scratch, &mut vbuf)?;
                for d in 0..rank {
                    if let Some(l) = self.lists[d] {
                        lists[l].map(self, f, d, &batch, row0, &mut coords[d])?;
                    } else {
                        coords[d].extend_from_slice(&scratch[d]);
                    }
                }
                values.extend_from_slice(&vbuf);
                row0 += batch.num_rows() as u64;
                Ok(())
            };
            if file.kind == TableKind::ArrowStream {
                file.each_stream_batch(&proj, &mut each)?;
            } else {
                for i in 0..file.parts.len() {
                    file.each_batch(i, &proj, self.opts.window, &mut each)?;
                }
            }
        }
        let mut notes = self.notes.clone();
        let mut labels = Vec::with_capacity(rank);
        let mut dims = Vec::with_capacity(rank);
        let mut made: Vec<Option<Arc<Labels>>> = vec![None; list_count];
        for d in 0..rank {
            if let Some(l) = self.lists[d] {
                let list = match &made[l] {
                    Some(list) => list.clone(),
                    None => {
                        let mut order = std::mem::take(&mut lists[l].order);
                        let shared: Vec<usize> =
                            (0..rank).filter(|&e| self.lists[e] == Some(l)).collect();
                        let seed = self.seeds.get(l).and_then(Option::as_ref);
                        let seeded = seed.map_or(0, |s| s.len());
                        if shared.len() > 1 {
                            renumber_by_rows(&mut coords, &shared, &mut order, seeded);
                        }
                        let columns: Vec<String> = shared
                            .iter()
                            .map(|&e| format!("`{}`", self.coords[e]))
                            .collect();
                        notes.push(if seed.is_some() {
                            format!(
                                "column{} {}: numbered from the {seeded} labels given, {} new id{} numbered after them; kept as labels",
                                if columns.len() > 1 { "s" } else { "" },
                                columns.join(", "),
                                order.len() - seeded,
                                if order.len() - seeded == 1 { "" } else { "s" }
                            )
                        } else if columns.len() > 1 {
                            format!(
                                "columns {}: {} distinct ids numbered in order of first appearance from one shared list, the same node in every dimension (a graph; --relabel separate numbers each column on its own); kept as labels",
                                columns.join(", "),
                                order.len()
                            )
                        } else {
                            format!(
                                "column {}: {} distinct values numbered in order of first appearance (kept as labels)",
                                columns[0],
                                order.len()
                            )
                        });
                        let list = Arc::new(Labels::from_strings(order));
                        made[l] = Some(list.clone());
                        list
                    }
                };
                dims.push(list.len() as u64);
                labels.push(Some(list));
            } else {
                labels.push(self.stored_labels.get(d).cloned().flatten());
                dims.push(match sizes {
                    Some(s) => s[d],
                    None => coords[d].iter().max().map_or(0, |m| m + 1),
                });
            }
        }
        if sizes.is_none() && self.lists.iter().any(Option::is_none) {
            if let Some(shape) = &self.shape {
                // Declared sizes still hold for dimensions not relabelled.
                for d in (0..rank).filter(|&d| self.lists[d].is_none()) {
                    if dims[d] > shape[d] {
                        return Err(TableError::column(
                            &self.files[0].path,
                            &self.coords[d],
                            None,
                            format!(
                                "coordinate {} is past the dimension size {}",
                                dims[d] - 1,
                                shape[d]
                            ),
                        ));
                    }
                    dims[d] = shape[d];
                }
            } else {
                notes.push(format!("no shape in the file: {dims:?}, the largest coordinates + 1 (or the number of labels)"));
            }
        }
        if !labels.iter().any(Option::is_some) {
            labels.clear();
        }
        let entries = Entries::from_parts(dims, coords, V::wrap(values))
            .map_err(|e| TableError::invalid(&self.files[0].path, e.to_string()))?;
        Ok(TableEntries {
            entries,
            labels,
            notes,
        })
    }
}

/// A partition key's value as a coordinate.
fn hive_coord(text: &str, ctx: &Ctx) -> Result<u64, TableError> {
    let v: u64 = text.parse().map_err(|_| {
        TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!(
                "the partition folder says {}={text}, which is not a coordinate",
                ctx.column
            ),
        )
    })?;
    let c = v.checked_sub(ctx.base).ok_or_else(|| {
        TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!("partition value {v} in a column counted from 1"),
        )
    })?;
    match ctx.size {
        Some(s) if c >= s => Err(TableError::column(
            ctx.path,
            ctx.column,
            None,
            format!("partition value {v} is past the dimension size {s}"),
        )),
        _ => Ok(c),
    }
}

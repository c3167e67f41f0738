//! A table straight into CSR / CSC (and the targets reached from them) without a
//! coordinate list: the table's parts are the ordered parts of
//! [`sptk_tensor::convert_parts`], which counts the outer coordinate column of every part
//! in a first pass and scatters every row into its final place in a second. Each pass
//! decodes a window of rows at a time, so memory is the output plus a window per thread.

use std::marker::PhantomData;
use std::sync::Mutex;
use std::time::Instant;

use sptk_encoding::Target;
use sptk_tensor::{
    convert_parts, scatter_into, ConvertOptions, Converted, EntryParts, Route, SourceError, Step,
    ValueType,
};

use crate::columns::{self, ArrowValue, Ctx};
use crate::error::TableError;
use crate::guard::contain;
use crate::ordered::NativeOf;
use crate::table::{Found, Table};

/// A table converted straight into its target.
pub struct TableConverted {
    /// The converted tensor, with the route taken.
    pub converted: Converted,
    /// Time spent converting after the read, for a route with a step after the scatter.
    pub convert_time: Option<std::time::Duration>,
}

/// A table's parts as [`EntryParts`]: each pass decodes its parts a window at a time.
pub(crate) struct Direct<'t, V> {
    table: &'t Table,
    dims: [u64; 2],
    rows: u64,
    /// The first error met, kept whole (the builder only passes its text on).
    error: Mutex<Option<TableError>>,
    _values: PhantomData<V>,
}

impl<'t, V: ArrowValue> Direct<'t, V> {
    /// The parts of `table`, of shape `dims` and `rows` rows in all.
    pub(crate) fn new(table: &'t Table, dims: [u64; 2], rows: u64) -> Self {
        Direct {
            table,
            dims,
            rows,
            error: Mutex::new(None),
            _values: PhantomData,
        }
    }

    /// The first error a pass met, whole.
    pub(crate) fn into_error(self) -> Option<TableError> {
        self.error.into_inner().ok().flatten()
    }

    fn fail(&self, e: TableError) -> SourceError {
        let text = e.to_string();
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
        text.into()
    }
}

impl<V: ArrowValue> EntryParts for Direct<'_, V> {
    type Value = V;

    fn dim_sizes(&self) -> [u64; 2] {
        self.dims
    }

    fn part_count(&self) -> usize {
        self.table.parts.len()
    }

    fn count(
        &self,
        part: usize,
        dim: usize,
        shift: u32,
        counts: &mut [u32],
    ) -> Result<u64, SourceError> {
        let t = self.table;
        let p = t.parts[part];
        let file = &t.files[p.file];
        let name = &t.coords[dim];
        let mut n = 0u64;
        let mut scratch = Vec::new();
        let mut row0 = p.row0;
        let mut count = |cs: &[u64]| {
            for &c in cs {
                // Below the dimension size (checked), so the block index is in range.
                let b = (c >> shift) as usize;
                if let Some(slot) = counts.get_mut(b) {
                    *slot = slot.wrapping_add(1);
                }
            }
            n += cs.len() as u64;
        };
        if let Found::Hive(_) = t.found[p.file][dim] {
            // A partition key: one value for the whole part.
            let mut coords = vec![Vec::new(), Vec::new()];
            let batch = arrow_array::RecordBatch::try_new_with_options(
                std::sync::Arc::new(arrow_schema::Schema::empty()),
                vec![],
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(p.rows as usize)),
            )
            .map_err(|e| self.fail(TableError::format(&file.path, e)))?;
            t.decode_dims(
                p.file,
                &batch,
                p.row0,
                Some(&self.dims),
                &[dim],
                &mut coords,
            )
            .map_err(|e| self.fail(e))?;
            count(&coords[dim]);
            return Ok(n);
        }
        let proj = t.projection(p.file, &[dim], false);
        file.each_batch(p.index, &proj, t.opts.window, |batch| {
            let arr = columns::column(&batch, &file.path, name)?;
            let ctx = Ctx {
                path: &file.path,
                column: name,
                row0,
                base: t.opts.index_base,
                size: Some(self.dims[dim]),
            };
            scratch.clear();
            contain(
                &file.path,
                || ctx.place(),
                || crate::columns::coords(arr.as_ref(), &ctx, &mut scratch),
            )?;
            count(&scratch);
            row0 += batch.num_rows() as u64;
            Ok(())
        })
        .map_err(|e| self.fail(e))?;
        Ok(n)
    }

    fn len_hint(&self) -> u64 {
        self.rows
    }

    fn visit<F: FnMut(u64, u64, V) -> bool>(
        &self,
        part: usize,
        mut put: F,
    ) -> Result<(), SourceError> {
        let t = self.table;
        let p = t.parts[part];
        let file = &t.files[p.file];
        let proj = t.projection(p.file, &[0, 1], true);
        let mut coords = vec![Vec::new(), Vec::new()];
        let mut values: Vec<V> = Vec::new();
        let mut row0 = p.row0;
        file.each_batch(p.index, &proj, t.opts.window, |batch| {
            t.decode(
                p.file,
                &batch,
                row0,
                Some(&self.dims),
                &mut coords,
                &mut values,
            )?;
            for ((&r, &c), &v) in coords[0].iter().zip(&coords[1]).zip(&values) {
                if !put(r, c, v) {
                    return Err(TableError::format(
                        &file.path,
                        "the file changed while it was read",
                    ));
                }
            }
            row0 += batch.num_rows() as u64;
            Ok(())
        })
        .map_err(|e| self.fail(e))
    }
}

impl Table {
    /// Reads a 2-D table straight into `target` where the planner routes it through a
    /// scatter into CSR / CSC (see [`sptk_tensor::scatter_into`]): no coordinate list is
    /// built. `Ok(None)`: no such route (other targets, relabelled coordinates, a stream,
    /// a shape known only after reading, value types other than f64 / f32 / i64 / i32);
    /// read the entries and convert them.
    ///
    /// # Errors
    /// The table's errors, naming the file, column and row; conversion errors.
    pub fn read_converted(
        &self,
        target: &Target,
        convert: &ConvertOptions,
    ) -> Result<Option<TableConverted>, TableError> {
        contain(
            &self.files[0].path,
            || "reading its rows".into(),
            || self.read_converted_inner(target, convert),
        )
    }

    fn read_converted_inner(
        &self,
        target: &Target,
        convert: &ConvertOptions,
    ) -> Result<Option<TableConverted>, TableError> {
        let (Some(shape), Some(rows)) = (self.shape(), self.rows()) else {
            return Ok(None);
        };
        let &[r, c] = shape else { return Ok(None) };
        if self.relabels() {
            return Ok(None);
        }
        match self.value_type {
            ValueType::F64 => self.direct::<f64>([r, c], rows, target, convert),
            ValueType::F32 => self.direct::<f32>([r, c], rows, target, convert),
            ValueType::I64 => self.direct::<i64>([r, c], rows, target, convert),
            ValueType::I32 => self.direct::<i32>([r, c], rows, target, convert),
            _ => Ok(None),
        }
    }

    fn direct<V: NativeOf>(
        &self,
        dims: [u64; 2],
        rows: u64,
        target: &Target,
        convert: &ConvertOptions,
    ) -> Result<Option<TableConverted>, TableError> {
        let path = &self.files[0].path;
        let Ok(Some((encoding, then))) = scatter_into(target, &dims, rows, V::TYPE, convert) else {
            return Ok(None);
        };
        let first = ConvertOptions {
            auto_widths: if then {
                Default::default()
            } else {
                convert.auto_widths
            },
            memory_limit: convert.memory_limit.or(self.opts.memory_limit),
            ..convert.clone()
        };
        let tensor = match self.read_in_order::<V>(dims, rows, &encoding, &first) {
            // Record batches in memory already in CSR order: one pass.
            Some(tensor) => Some(tensor),
            None => {
                let source = Direct::<V>::new(self, dims, rows);
                let built = convert_parts(&source, &encoding, &first);
                if let Some(e) = source.into_error() {
                    return Err(e);
                }
                built.map_err(|e| TableError::convert(path, e))?
            }
        };
        let Some(tensor) = tensor else {
            return Ok(None);
        };
        if !then {
            return Ok(Some(TableConverted {
                converted: Converted {
                    tensor,
                    choice: None,
                    pruned: 0,
                    route: Route::of(&[Step::Scatter]),
                },
                convert_time: None,
            }));
        }
        let start = Instant::now();
        let rest = ConvertOptions {
            drop_zeros: false,
            ..convert.clone()
        };
        let mut converted = sptk_tensor::convert_tensor_owned(tensor, target, &rest)
            .map_err(|e| TableError::convert(path, e))?;
        converted.route = std::mem::take(&mut converted.route).after(Step::Scatter);
        Ok(Some(TableConverted {
            converted,
            convert_time: Some(start.elapsed()),
        }))
    }
}

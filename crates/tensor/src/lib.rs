//! The sparse tensor core: level storage with narrow index buffers, the value types, the
//! coordinate list every reader produces, and conversion from it into **any** encoding of
//! [`sptk_encoding`] (and back), following `docs/ENCODING.md`.
//!
//! ```
//! use sptk_tensor::{convert_to, ConvertOptions, Entries};
//! let mut e = Entries::new(vec![4, 8], sptk_tensor::ValueType::F64);
//! for (i, j, v) in [(0, 0, 1.0), (0, 2, 2.0), (3, 2, 3.0), (3, 3, 4.0), (3, 5, 5.0)] {
//!     e.push(&[i, j], v).unwrap();
//! }
//! let csr: sptk_encoding::Encoding = "map = (i, j) -> (i : dense, j : compressed)".parse().unwrap();
//! let t = convert_to(&e, &csr, &ConvertOptions::default()).unwrap();
//! assert_eq!(t.pos(1).unwrap().to_u64_vec(), vec![0, 2, 2, 2, 5]);
//! assert_eq!(t.to_entries(), e);
//! ```

mod alloc;
mod budget;
mod buffer;
mod compressed;
mod convert;
mod dense;
mod entries;
mod error;
pub mod format;
mod index;
mod labels;
mod layout;
mod machine;
pub mod par;
mod pool;
mod print;
mod raw;
mod structure;
mod tensor;
mod validate;
mod value;
mod view;
mod walk;

pub use alloc::{big_capacity, big_zeroed, filled_pages, HugePageAlloc, Zeroed, HUGE_PAGE_FROM};
pub use compressed::{
    from_compressed, from_compressed_within, CompressedParts, FromCompressed, PartsArray,
    PartsError,
};
pub use dense::{dense_entries, DenseArray};
pub use machine::default_memory_limit;
pub use pool::{pooled_capacity, pooled_zeroed, BufferPool, Origin};
pub use structure::{pattern, select, transpose, Part};

/// A progress callback, called with a count of bytes done so far (input bytes read, or
/// array bytes written): what the command-line tools turn into progress bars.
pub type Progress = std::sync::Arc<dyn Fn(u64) + Send + Sync>;
pub use budget::bytes_text;
pub use buffer::{Buf, Owner, Pod, ViewError};
pub use convert::{
    attach_labels, convert, convert_general, convert_parts, convert_parts_out_of_core,
    convert_tensor, convert_tensor_owned, convert_to, csr_route, fit_widths, narrowest_width, plan,
    scatter_into, size_plan, ArrayKind, ArraySink, AutoChoice, AutoWidths, ConvertOptions,
    Converted, EntryParts, OutOfCore, OutOfCoreError, OutOfCoreFailure, OutOfCoreSize, OutputPlan,
    PassTimes, Plan, PlannedArray, Route, SizePlan, Source, Step,
};
pub use entries::{
    coord_width_for, CoordinateSource, Entries, EntriesSource, EntryError, SourceError,
};
pub use error::{error_text, over_memory_limit, ConvertError, MemoryLimit};
pub use index::{Index, IndexVec, IndexWidth, WidthOverflow};
pub use labels::{make_unique, renamed_symbols_note, LabelError, Labels};
pub use layout::{Layout, LevelPlan};
pub use raw::Raw;
pub use tensor::{AppliedSlice, LevelArrays, Tensor};
pub use value::{Complex, Scalar, Value, ValueType, ValueVec, ValueVecAccess, C128, C64};
pub use view::{IndexSlice, OuterView};

#[cfg(not(target_endian = "little"))]
compile_error!(
    "sptk stores arrays little-endian and reinterprets them in place: little-endian targets only"
);

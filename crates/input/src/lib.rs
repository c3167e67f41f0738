//! The reader seam: how an input is named, recognised and read, for every format.
//!
//! An input is named by a [`SourceSpec`]: standard input, a file, a member inside a
//! container (`file.h5:/X`), a folder (a 10x MEX folder) or several files read as one
//! tensor. [`Opened::open`] probes it and picks its [`Reader`] from [`readers`], by
//! content first ([`Probe`]: banners, magic bytes, a folder's files, gzip looked through),
//! then by name, unless the caller names the format (`--from`). A reader produces an
//! [`Input`] whose [`Content`] is a coordinate list (with labels), level arrays already
//! checked into a tensor (converted without a trip through coordinates), or a stored file;
//! where the format has a faster route into a target it offers it
//! ([`Opened::read_converted`]). The command line, `info` and library users all go through
//! here, so a new format is one module in `formats/` and one entry in [`readers`].
//!
//! ```no_run
//! use sptk_input::{convert, ReadOptions, SourceSpec};
//! let target = sptk_encoding::resolve_target("CSC", 2).unwrap();
//! let spec = SourceSpec::resolve(&["filtered_feature_bc_matrix"]).unwrap();
//! let (input, converted) = convert(spec, None, &target, &Default::default(), &ReadOptions::default()).unwrap();
//! println!("{} ({}): {} entries", input.name, input.format, converted.tensor.nse());
//! ```

mod error;
mod formats;
mod input;
pub mod isolate;
mod out_of_core;
mod probe;
mod reader;
mod route;
mod source;
mod spec;

pub use error::InputError;
pub use formats::mex::read_mex_labels;
pub use formats::spt::labels_of_file;
#[cfg(feature = "table")]
pub use formats::table::{table_options, TableInput};
pub use input::{ColumnOptions, Content, Input, Progress, ReadConverted, ReadOptions, Relabel};
#[cfg(feature = "hdf5")]
#[doc(hidden)]
pub use isolate::spare_pid;
pub use isolate::{Helper, Isolation};
pub use out_of_core::{
    convert_to_file, no_route, plan_conversion, Done, InputSize, OutOfCoreOptions, Sink,
    WrittenFile,
};
pub use probe::{known_kind, Match, Probe, HEAD_LEN};
pub use reader::{choose, readers, Accepts, Member, Reader};
#[cfg(feature = "table")]
pub use route::read_table_and_convert;
pub use route::{
    has_nm_level, open_named, read_and_convert, ReadAndConverted, Request, RequestError,
    RouteError, Width,
};
pub use source::Source;
pub use spec::{Origin, SourceSpec};

use sptk_encoding::Target;
use sptk_tensor::{ConvertOptions, Converted};

/// An input opened, probed, and matched with its reader.
pub struct Opened<'r> {
    /// The input.
    pub source: Source,
    /// Its reader.
    pub reader: &'r dyn Reader,
}

impl Opened<'static> {
    /// Opens `spec` and picks its reader from this build's [`readers`]: the one `from`
    /// names (`mtx`, `tns`, `spt`, `mex`, ...), else by content, else by name.
    ///
    /// # Errors
    /// See [`choose`].
    pub fn open(spec: SourceSpec, from: Option<&str>) -> Result<Opened<'static>, InputError> {
        Opened::with_readers(Source::open(spec), from, readers())
    }
}

impl<'r> Opened<'r> {
    /// Picks the reader of an opened source from `readers` (a build's own list, or a
    /// caller's with extra formats).
    ///
    /// # Errors
    /// See [`choose`].
    pub fn with_readers(
        source: Source,
        from: Option<&str>,
        readers: &[&'r dyn Reader],
    ) -> Result<Opened<'r>, InputError> {
        let reader = choose(readers, &source, from)?;
        Ok(Opened { source, reader })
    }

    /// The matrices the input holds when it is a container and none was chosen
    /// (`FILE:MEMBER`); None otherwise.
    ///
    /// # Errors
    /// The container cannot be opened.
    pub fn members(&self) -> Result<Option<Vec<Member>>, InputError> {
        self.members_with(&ReadOptions::default())
    }

    /// [`Opened::members`] as `opts` say (an HDF5 file listed in a helper process where
    /// [`ReadOptions::isolation`] asks for it).
    ///
    /// # Errors
    /// The container cannot be opened.
    pub fn members_with(&self, opts: &ReadOptions) -> Result<Option<Vec<Member>>, InputError> {
        if self.source.spec().member.is_some() {
            return Ok(None);
        }
        self.reader.members_with(&self.source, opts)
    }

    /// Refuses options this input's format cannot honour, rather than ignore them: lists
    /// to number from are for tables, whose ids are numbered as they are read.
    fn check_options(&self, opts: &ReadOptions) -> Result<(), InputError> {
        if opts.columns.labels.is_empty() || self.reader.numbers_ids() {
            return Ok(());
        }
        Err(InputError::Source(format!(
            "{}: labels to number from (--labels-from) are for tables (Parquet, Arrow), whose \
             ids are numbered as they are read; a {} input's coordinates are indices",
            self.source.spec(),
            self.reader.name()
        )))
    }

    /// Reads the input whole.
    ///
    /// # Errors
    /// The format's errors, located in the input.
    pub fn read(mut self, opts: &ReadOptions) -> Result<Input, InputError> {
        self.check_options(opts)?;
        self.reader
            .read(&mut self.source, opts)
            .map_err(|e| e.in_input(self.source.spec()))
    }

    /// Reads the input straight into `target` where its format has a route for it (see
    /// [`Reader::read_converted`]); `None` means: [`Opened::read`], then
    /// [`Input::convert`].
    ///
    /// # Errors
    /// The format's and the conversion's errors.
    pub fn read_converted(
        &mut self,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        self.check_options(opts)?;
        self.reader
            .read_converted(&mut self.source, target, convert, opts)
            .map_err(|e| e.in_input(self.source.spec()))
    }
}

/// Reads the input `spec` names (format from `from`, else detected).
///
/// # Errors
/// As for [`Opened::open`] and [`Opened::read`].
pub fn read(spec: SourceSpec, from: Option<&str>, opts: &ReadOptions) -> Result<Input, InputError> {
    Opened::open(spec, from)?.read(opts)
}

/// Reads the input `spec` names and converts it into `target`, by the fastest route the
/// format and the planner have (straight from the file where they can, else read then
/// convert); the input's labels are kept.
///
/// # Errors
/// As for [`Opened::open`], [`Opened::read`] and [`Input::convert`].
pub fn convert(
    spec: SourceSpec,
    from: Option<&str>,
    target: &Target,
    convert: &ConvertOptions,
    opts: &ReadOptions,
) -> Result<(Input, Converted), InputError> {
    let mut opened = Opened::open(spec, from)?;
    if let Some(d) = opened.read_converted(target, convert, opts)? {
        return Ok((d.input, d.converted));
    }
    let input = opened.read(opts)?;
    let converted = input.convert(target, convert)?;
    Ok((input, converted))
}

//! The seam every format plugs into: a [`Reader`] says whether an input is its format,
//! what kinds of source it takes, and reads it. The readers of this build are listed once,
//! in [`readers`]; the command line, `info` and the library all go through the list, so a
//! new format (HDF5, Arrow, Parquet) is one more entry there and nothing else.

use sptk_encoding::Target;
use sptk_tensor::ConvertOptions;

use crate::error::InputError;
use crate::formats;
use crate::input::{Input, ReadConverted, ReadOptions};
use crate::probe::{known_kind, Match, Probe};
use crate::source::Source;
use crate::spec::Origin;

/// The kinds of source a reader takes besides one plain file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accepts {
    /// A stream read once (standard input).
    pub stream: bool,
    /// Several files read as one tensor.
    pub files: bool,
    /// A folder read as one tensor (a 10x MEX folder, partitions).
    pub folder: bool,
    /// A member of a container file (`file.h5:/X`).
    pub members: bool,
    /// One plain file (false for readers of folders only).
    pub file: bool,
}

/// One input format.
pub trait Reader: Sync {
    /// The format's name in reports ("Matrix Market").
    fn name(&self) -> &'static str;

    /// The names `--from` accepts for it, the first being the one shown.
    fn keys(&self) -> &'static [&'static str];

    /// Whether the probed input is this format.
    fn detect(&self, probe: &Probe) -> Match;

    /// The kinds of source it reads.
    fn accepts(&self) -> Accepts;

    /// Whether its coordinates can be ids numbered as they are read (tables), and so be
    /// numbered from given lists ([`crate::ColumnOptions::labels`]).
    fn numbers_ids(&self) -> bool {
        false
    }

    /// Reads the source.
    ///
    /// # Errors
    /// The format's own errors, located in the input.
    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError>;

    /// The matrices a container file holds, for `info` when none is chosen; None for a
    /// format that holds one.
    ///
    /// # Errors
    /// The container cannot be opened.
    fn members(&self, _source: &Source) -> Result<Option<Vec<Member>>, InputError> {
        Ok(None)
    }

    /// [`Reader::members`] as `opts` say (where the format has a choice, such as HDF5's
    /// [`ReadOptions::isolation`]).
    ///
    /// # Errors
    /// The container cannot be opened.
    fn members_with(
        &self,
        source: &Source,
        _opts: &ReadOptions,
    ) -> Result<Option<Vec<Member>>, InputError> {
        self.members(source)
    }

    /// Reads the source straight into `target` where the format has a faster route than
    /// reading it whole and converting (Matrix Market into CSR-routed targets). `None`:
    /// no such route here; read, then convert.
    ///
    /// # Errors
    /// As for [`Reader::read`], and conversion errors.
    fn read_converted(
        &self,
        _source: &mut Source,
        _target: &Target,
        _convert: &ConvertOptions,
        _opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError> {
        Ok(None)
    }

    /// The size of what [`Reader::convert_out_of_core`] would read, from the input's
    /// header or metadata alone (no entry read): for planning a conversion
    /// ([`crate::plan_conversion`]). `None`: no out-of-core route, or no size known before
    /// reading.
    ///
    /// # Errors
    /// An input that cannot be opened; a malformed header.
    fn out_of_core_size(
        &self,
        _source: &mut Source,
        _opts: &ReadOptions,
    ) -> Result<Option<crate::out_of_core::InputSize>, InputError> {
        Ok(None)
    }

    /// Reads the input into `encoding` out of core, its arrays written through
    /// `out.appender` a stretch at a time (see [`crate::convert_to_file`]). `None`: this
    /// format has no out-of-core route into that encoding, and nothing was written.
    ///
    /// # Errors
    /// As for [`Reader::read`], conversion errors, and the output's (a full disk).
    fn convert_out_of_core(
        &self,
        _source: &mut Source,
        _encoding: &sptk_encoding::Encoding,
        _convert: &ConvertOptions,
        _opts: &ReadOptions,
        _out: &mut crate::out_of_core::Sink<'_>,
    ) -> Result<Option<crate::out_of_core::Done>, InputError> {
        Ok(None)
    }
}

/// One matrix inside a container file (an HDF5 group or dataset, a MATLAB variable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// How to name it after `FILE:` (`/X`, `/layers/counts`, `/A`).
    pub path: String,
    /// How it is stored, in words.
    pub layout: String,
    /// Dimension sizes, where the file says them without reading the arrays.
    pub dims: Vec<u64>,
    /// Value type, where numeric.
    pub value_type: Option<sptk_tensor::ValueType>,
    /// Stored entries, where known.
    pub entries: Option<u64>,
}

/// Every reader in this build, in the order detection asks them.
pub fn readers() -> &'static [&'static dyn Reader] {
    static READERS: &[&dyn Reader] = &[
        &formats::mtx::Mtx,
        &formats::tns::Tns,
        &formats::spt::Spt,
        &formats::mex::Mex,
        &formats::npz::NpzReader,
        &formats::npy::NpyReader,
        &formats::safetensors::SafeTensorsReader,
        &formats::mat5::Mat5,
        #[cfg(feature = "hdf5")]
        &formats::hdf5::Hdf5(sptk_hdf5::Kind::Matlab),
        #[cfg(feature = "hdf5")]
        &formats::hdf5::Hdf5(sptk_hdf5::Kind::Binsparse),
        #[cfg(feature = "hdf5")]
        &formats::hdf5::Hdf5(sptk_hdf5::Kind::AnnData),
        #[cfg(feature = "hdf5")]
        &formats::hdf5::Hdf5(sptk_hdf5::Kind::TenX),
        #[cfg(feature = "hdf5")]
        &formats::hdf5::Hdf5(sptk_hdf5::Kind::Plain),
        #[cfg(feature = "table")]
        &formats::table::Levels,
        #[cfg(feature = "table")]
        &formats::table::Tables(sptk_table::TableKind::Parquet),
        #[cfg(feature = "table")]
        &formats::table::Tables(sptk_table::TableKind::ArrowFile),
        #[cfg(feature = "table")]
        &formats::table::Tables(sptk_table::TableKind::ArrowStream),
    ];
    READERS
}

/// The reader for `source`: the one `from` names, else the first whose content matches,
/// else the first whose name matches; then checks that it takes this kind of source.
///
/// # Errors
/// An unknown `from`; content of a known kind no reader takes ([`InputError::Unsupported`]);
/// nothing recognisable ([`InputError::Unknown`]); a source kind the format cannot be
/// (`file.mtx:member`, a folder of `.tns` files, ...).
pub fn choose<'r>(
    readers: &[&'r dyn Reader],
    source: &Source,
    from: Option<&str>,
) -> Result<&'r dyn Reader, InputError> {
    let keys = || {
        readers
            .iter()
            .map(|r| r.keys()[0])
            .collect::<Vec<_>>()
            .join(", ")
    };
    let reader = match from {
        Some(key) => {
            let key = key.to_ascii_lowercase();
            *readers
                .iter()
                .find(|r| r.keys().contains(&key.as_str()))
                .ok_or_else(|| {
                    InputError::Source(format!(
                        "--from {key}: unknown format (expected one of: {})",
                        keys()
                    ))
                })?
        }
        None => detect(readers, source).map_err(|e| match e {
            Detected::Unsupported(kind) => InputError::Unsupported {
                input: source.spec().to_string(),
                kind,
                readable: readers
                    .iter()
                    .map(|r| r.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            Detected::Unknown => InputError::Unknown {
                input: source.spec().to_string(),
                keys: keys(),
                folder: source.folder().is_some(),
            },
        })?,
    };
    check_accepts(reader, source)?;
    Ok(reader)
}

enum Detected {
    Unsupported(&'static str),
    Unknown,
}

fn detect<'r>(readers: &[&'r dyn Reader], source: &Source) -> Result<&'r dyn Reader, Detected> {
    let probe = source.probe();
    for wanted in [Match::Content, Match::Name] {
        if let Some(r) = readers.iter().find(|r| r.detect(probe) == wanted) {
            return Ok(*r);
        }
    }
    if let Some(kind) = known_kind(probe) {
        return Err(Detected::Unsupported(kind));
    }
    // Nothing in the content says a format (an empty or cut-off file): the name's
    // extension picks the reader, which then says what is wrong in its own terms.
    let ext = std::path::Path::new(&probe.name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match readers
        .iter()
        .find(|r| !ext.is_empty() && r.keys().contains(&ext))
    {
        Some(r) if probe.folder.is_none() => Ok(*r),
        _ => Err(Detected::Unknown),
    }
}

fn check_accepts(reader: &dyn Reader, source: &Source) -> Result<(), InputError> {
    let a = reader.accepts();
    let spec = source.spec();
    let name = reader.name();
    let refuse = |why: String| Err(InputError::Source(format!("{spec}: {why}")));
    if let Some(member) = &spec.member {
        if !a.members {
            return refuse(format!(
                "a {name} file holds one tensor, so there is no member `{member}` to choose"
            ));
        }
    }
    match &spec.origin {
        Origin::Stdin if !a.stream => refuse(format!(
            "a {name} input cannot be read from standard input; give it as a file"
        )),
        Origin::Files(_) if !a.files => {
            refuse(format!("{name} inputs are read one at a time; give one"))
        }
        Origin::Folder(_) if !a.folder => refuse(format!(
            "a folder, and {name} is not read from folders; name a file in it"
        )),
        Origin::File(_) if !a.file => refuse(format!(
            "{name} is read from a folder; name the folder that holds this file"
        )),
        _ => Ok(()),
    }
}

//! The way from what a caller asked to a converted tensor, shared by `sparse-convert` and
//! the Python package's `sptk.read` (each spells the options its own way: `--to`, `to=`):
//!
//! 1. [`open_named`]: the names resolved ([`SourceSpec::resolve`]), a member chosen by an
//!    option (`--dataset`, `dataset=`) where the name did not choose one, the reader picked.
//! 2. [`Request::target`]: the target from `to`, else the input's own encoding, else (where
//!    the caller has one) a default; widths applied; `prune` refused unless the target has
//!    an n:m level (the prune selection).
//! 3. [`read_and_convert`]: straight into the target where the reader has a route for it (a
//!    Matrix Market file or a table into CSR-routed targets), else the input read whole,
//!    transposed if asked, and converted with its arrays moved into the result.
//!
//! Errors say which step failed ([`RouteError`]); the target's errors ([`RequestError`])
//! keep what was wrong, so each caller words them with its own names for the options.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use sptk_encoding::{Encoding, LevelFormat, Target};
use sptk_tensor::{AutoWidths, ConvertOptions, Converted};

use crate::error::InputError;
use crate::input::{Input, ReadConverted, ReadOptions};
use crate::spec::SourceSpec;
use crate::Opened;

/// An index width asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// These many bits (8, 16, 32, 64; 2 for n:m offsets; 0 = 64).
    Bits(u8),
    /// The narrowest that holds the data.
    Auto,
}

impl Width {
    /// The bits, unless `Auto`.
    pub fn bits(self) -> Option<u8> {
        match self {
            Width::Bits(b) => Some(b),
            Width::Auto => None,
        }
    }
}

/// What a conversion is asked for besides [`ConvertOptions`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// A preset or encoding text; None keeps a stored encoding.
    pub to: Option<String>,
    /// posWidth of the target.
    pub pos_width: Option<Width>,
    /// crdWidth of the target.
    pub crd_width: Option<Width>,
    /// Without `to` and a stored encoding: CSR for a matrix and COO otherwise (true), or
    /// [`RequestError::Missing`] (false).
    pub default_target: bool,
    /// Read the input with its dimensions in reverse order.
    pub transpose: bool,
    /// The narrowest width the unsaid widths of a preset take ([`AutoWidths::floor`]): 0
    /// on the command line, 32 in the Python package, whose results go to SciPy.
    pub width_floor: u8,
}

/// Why no target came of a [`Request`].
#[derive(Debug)]
pub enum RequestError {
    /// Neither `to` nor a stored encoding says one, and the request has no default.
    Missing,
    /// `to` does not resolve for this rank.
    Encoding(sptk_encoding::TargetError),
    /// The widths do not fit the target.
    Widths {
        /// Whether the target is the input's stored encoding (no `to` was given).
        stored: bool,
        /// The cause.
        error: sptk_encoding::EncodingError,
    },
    /// `prune` was asked of a target with no n:m level.
    PruneNeedsNm,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Missing => f.write_str("no target encoding"),
            RequestError::Encoding(e) => {
                let text = e.render();
                f.write_str(text.strip_prefix("error: ").unwrap_or(&text).trim_end())
            }
            RequestError::Widths { error, .. } => write!(f, "{error}"),
            RequestError::PruneNeedsNm => f.write_str("pruning applies to n:m targets only"),
        }
    }
}

impl std::error::Error for RequestError {}

/// Why [`read_and_convert`] failed.
#[derive(Debug)]
pub enum RouteError {
    /// Reading or converting the input.
    Input(InputError),
    /// The target asked for.
    Target(RequestError),
}

impl From<InputError> for RouteError {
    fn from(e: InputError) -> RouteError {
        RouteError::Input(e)
    }
}

impl From<RequestError> for RouteError {
    fn from(e: RequestError) -> RouteError {
        RouteError::Target(e)
    }
}

/// True if `target` has an n:m (structured) level: the targets `prune` applies to.
pub fn has_nm_level(target: &Target) -> bool {
    target.encoding().is_some_and(|e| {
        e.levels
            .iter()
            .any(|l| matches!(l.format, LevelFormat::Structured { .. }))
    })
}

impl Request {
    /// Which widths follow the data: those asked as `Auto`, and those a preset leaves
    /// unsaid (the narrowest that hold the data, as SciPy chooses); encoding text keeps the
    /// widths it declares.
    pub fn auto_widths(&self) -> AutoWidths {
        self.widths_following(self.to.as_deref())
    }

    /// [`Request::auto_widths`] for the target named `text` (None: none named).
    fn widths_following(&self, text: Option<&str>) -> AutoWidths {
        let unsaid = text.map(AutoWidths::for_target).unwrap_or_default();
        let auto =
            |w: Option<Width>, follows: bool| w == Some(Width::Auto) || (follows && w.is_none());
        AutoWidths {
            pos: auto(self.pos_width, unsaid.pos),
            crd: auto(self.crd_width, unsaid.crd),
            floor: if self.pos_width.is_none() && self.crd_width.is_none() {
                self.width_floor
            } else {
                0
            },
        }
    }

    /// The preset a tensor of `rank` dimensions becomes without `to` or a stored encoding,
    /// where the request has a default.
    fn default_preset(rank: usize) -> &'static str {
        if rank == 2 {
            "CSR"
        } else {
            "COO"
        }
    }

    /// The target for a tensor of `rank` dimensions whose encoding, if it has one, is
    /// `stored`: `to` resolved, else the stored encoding, else the default (see
    /// [`Request::default_target`]); the widths asked applied; `prune` (from `convert`)
    /// refused unless the target has an n:m level. With it, the options to convert into
    /// it with: `convert`, except that the default preset's unsaid widths follow the data
    /// as every preset's do, so leaving `to` out reads as `to="CSR"` (a matrix) does.
    ///
    /// # Errors
    /// See [`RequestError`].
    pub fn target<'a>(
        &self,
        rank: usize,
        stored: Option<&Encoding>,
        convert: &'a ConvertOptions,
    ) -> Result<(Target, Cow<'a, ConvertOptions>), RequestError> {
        let resolve =
            |text: &str| sptk_encoding::resolve_target(text, rank).map_err(RequestError::Encoding);
        let mut options = Cow::Borrowed(convert);
        let (target, from_stored) = match (&self.to, stored) {
            (Some(text), _) => (resolve(text)?, false),
            (None, Some(e)) => (Target::Fixed(e.clone()), true),
            (None, None) if !self.default_target => return Err(RequestError::Missing),
            (None, None) => {
                let preset = Self::default_preset(rank);
                options.to_mut().auto_widths = self.widths_following(Some(preset));
                (resolve(preset)?, false)
            }
        };
        let target = target
            .with_widths(
                self.pos_width.and_then(Width::bits),
                self.crd_width.and_then(Width::bits),
            )
            .map_err(|error| RequestError::Widths {
                stored: from_stored,
                error,
            })?;
        if convert.prune && !has_nm_level(&target) {
            return Err(RequestError::PruneNeedsNm);
        }
        Ok((target, options))
    }
}

/// Resolves `names` (see [`SourceSpec::resolve`]), chooses `member` inside a container
/// where one is given by an option (`option` names it in the message), and opens the input
/// with its reader (`from`, else detected).
///
/// # Errors
/// [`InputError::Source`] when the name chooses another member than the option; as for
/// [`SourceSpec::resolve`] and [`Opened::open`].
pub fn open_named<P: AsRef<Path>>(
    names: &[P],
    member: Option<&str>,
    option: &str,
    from: Option<&str>,
) -> Result<Opened<'static>, InputError> {
    let mut spec = SourceSpec::resolve(names)?;
    if let Some(member) = member {
        if let Some(named) = spec.member.as_ref().filter(|named| *named != member) {
            return Err(InputError::Source(format!(
                "{spec}: the input names the member `{named}` and {option} names `{member}`; give one"
            )));
        }
        spec.member = Some(member.to_string());
    }
    Opened::open(spec, from)
}

/// An input read and converted.
pub struct ReadAndConverted {
    /// The input (as read, or [`crate::Content::Streamed`] where it was read straight
    /// into the target or its arrays moved into the result).
    pub input: Input,
    /// The result.
    pub converted: Converted,
    /// Time reading took, from `started` (see [`read_and_convert`]).
    pub read_time: Duration,
    /// Time converting took after the read (none for a route that converted while it
    /// read).
    pub convert_time: Option<Duration>,
}

/// An input that can be read straight into a target where its format has a route, or
/// whole.
trait Readable {
    fn direct(
        &mut self,
        target: &Target,
        convert: &ConvertOptions,
        opts: &ReadOptions,
    ) -> Result<Option<ReadConverted>, InputError>;
    fn whole(self, opts: &ReadOptions) -> Result<Input, InputError>;
}

/// [`Readable`] for a type whose own `read_converted` and `read` are the two ways.
macro_rules! readable {
    ($($(#[$m:meta])* $t:ty),*) => {$(
        $(#[$m])*
        impl Readable for $t {
            fn direct(
                &mut self,
                target: &Target,
                convert: &ConvertOptions,
                opts: &ReadOptions,
            ) -> Result<Option<ReadConverted>, InputError> {
                self.read_converted(target, convert, opts)
            }

            fn whole(self, opts: &ReadOptions) -> Result<Input, InputError> {
                self.read(opts)
            }
        }
    )*};
}
readable!(
    Opened<'static>,
    #[cfg(feature = "table")]
    crate::TableInput
);

/// Reads `opened` and converts it as `request` and `convert` ask: straight into the
/// target where `to` is given (or the request has a default target), the input is not
/// transposed and its reader has a route (see
/// [`Opened::read_converted`]), else read whole, transposed if asked, and converted into
/// [`Request::target`] of what was read, its arrays moved into the result. A `to` that
/// does not resolve for a matrix takes the second way, which reports it for the input's
/// rank. `read_done` is called when reading ends (a caller's progress bar), `started` is
/// when the caller began (the read time counts from there).
///
/// # Errors
/// The input's errors ([`RouteError::Input`]), the target's ([`RouteError::Target`]).
pub fn read_and_convert(
    opened: Opened<'static>,
    request: &Request,
    convert: &ConvertOptions,
    opts: &ReadOptions,
    hooks: (Instant, &mut dyn FnMut()),
) -> Result<ReadAndConverted, RouteError> {
    route(opened, request, convert, opts, hooks)
}

/// [`read_and_convert`] for a table already opened, such as record batches held in memory
/// ([`sptk_table::Table::from_batches`]): the same two ways, the same column rules (see
/// [`crate::table_options`]).
///
/// # Errors
/// As for [`read_and_convert`].
#[cfg(feature = "table")]
pub fn read_table_and_convert(
    table: crate::TableInput,
    request: &Request,
    convert: &ConvertOptions,
    opts: &ReadOptions,
) -> Result<ReadAndConverted, RouteError> {
    route(table, request, convert, opts, (Instant::now(), &mut || {}))
}

fn route<R: Readable>(
    mut input: R,
    request: &Request,
    convert: &ConvertOptions,
    opts: &ReadOptions,
    (started, read_done): (Instant, &mut dyn FnMut()),
) -> Result<ReadAndConverted, RouteError> {
    // The default target (a caller's CSR for a matrix) takes the direct route too: only
    // coordinate formats have one, and they have no stored encoding to keep.
    if (request.to.is_some() || request.default_target) && !request.transpose {
        if let Ok((target, convert)) = request.target(2, None, convert) {
            let direct = input.direct(&target, &convert, opts);
            read_done();
            if let Some(d) = direct? {
                return Ok(ReadAndConverted {
                    read_time: started.elapsed() - d.convert_time.unwrap_or_default(),
                    input: d.input,
                    converted: d.converted,
                    convert_time: d.convert_time,
                });
            }
        }
    }
    let read = input.whole(opts);
    read_done();
    let mut input = read?;
    if request.transpose {
        input = input.transposed()?;
    }
    let read_time = started.elapsed();
    let rank = input.dim_sizes().len();
    let (target, convert) = request.target(rank, input.encoding(), convert)?;
    let start = Instant::now();
    let converted = input.convert_owned(&target, &convert)?;
    Ok(ReadAndConverted {
        input,
        converted,
        read_time,
        convert_time: Some(start.elapsed()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn request(to: Option<&str>) -> Request {
        Request {
            to: to.map(String::from),
            ..Request::default()
        }
    }

    #[test]
    fn the_target_comes_from_to_then_the_stored_encoding_then_the_default() {
        let plain = ConvertOptions::default();
        let csc = sptk_encoding::resolve_target("CSC", 2).unwrap();
        let stored = csc.encoding().unwrap().clone();
        let (t, _) = request(Some("DCSR"))
            .target(2, Some(&stored), &plain)
            .unwrap();
        assert_eq!(t, sptk_encoding::resolve_target("DCSR", 2).unwrap());
        let (t, options) = request(None).target(2, Some(&stored), &plain).unwrap();
        assert_eq!(t.encoding(), Some(&stored));
        // A stored encoding keeps its widths: the options are the caller's.
        assert!(!options.auto_widths.any());
        assert!(matches!(
            request(None).target(2, None, &plain),
            Err(RequestError::Missing)
        ));
        let default = Request {
            default_target: true,
            ..request(None)
        };
        for (rank, preset) in [(2, "CSR"), (3, "COO")] {
            let (t, options) = default.target(rank, None, &plain).unwrap();
            assert_eq!(t, sptk_encoding::resolve_target(preset, rank).unwrap());
            // The default is a preset: its widths follow the data.
            assert!(options.auto_widths.pos && options.auto_widths.crd);
        }
        assert!(matches!(
            request(Some("nonsense")).target(2, None, &plain),
            Err(RequestError::Encoding(_))
        ));
    }

    #[test]
    fn widths_and_prune_are_checked_against_the_target() {
        let plain = ConvertOptions::default();
        let bad = Request {
            pos_width: Some(Width::Bits(7)),
            ..request(Some("CSR"))
        };
        assert!(matches!(
            bad.target(2, None, &plain),
            Err(RequestError::Widths { stored: false, .. })
        ));
        let prune = ConvertOptions {
            prune: true,
            ..ConvertOptions::default()
        };
        assert!(matches!(
            request(Some("CSR")).target(2, None, &prune),
            Err(RequestError::PruneNeedsNm)
        ));
        assert!(request(Some("2:4")).target(2, None, &prune).is_ok());
        assert!(has_nm_level(
            &sptk_encoding::resolve_target("2:4", 2).unwrap()
        ));
    }

    #[test]
    fn auto_widths_follow_presets_and_auto() {
        let preset = request(Some("CSR")).auto_widths();
        assert!(preset.pos && preset.crd);
        let text = request(Some("(i, j) -> (i : dense, j : compressed)")).auto_widths();
        assert!(!text.pos && !text.crd);
        let asked = Request {
            pos_width: Some(Width::Bits(32)),
            crd_width: Some(Width::Auto),
            ..request(Some("(i, j) -> (i : dense, j : compressed)"))
        };
        let w = asked.auto_widths();
        assert!(!w.pos && w.crd);
    }

    #[test]
    fn a_default_target_takes_the_direct_route_and_a_stored_encoding_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mtx = dir.path().join("a.mtx");
        std::fs::write(
            &mtx,
            "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n3 1 2.5\n",
        )
        .unwrap();
        let request = Request {
            default_target: true,
            ..Request::default()
        };
        let read_as = |path: &Path, request: &Request| {
            let opened = open_named(&[path], None, "dataset=", None).unwrap();
            let opts = ReadOptions::default();
            read_and_convert(
                opened,
                request,
                &ConvertOptions {
                    auto_widths: request.auto_widths(),
                    ..ConvertOptions::default()
                },
                &opts,
                (Instant::now(), &mut || {}),
            )
            .map_err(|e| format!("{e:?}"))
            .unwrap()
        };
        let read = |path: &Path| read_as(path, &request);
        let done = read(&mtx);
        assert!(
            matches!(done.input.content, crate::Content::Streamed { .. }),
            "read whole: {:?}",
            done.input
        );
        // The default is the CSR preset, its widths the narrowest that hold the data
        // (8 bits here), exactly as `to = "CSR"` gives.
        let csr = sptk_encoding::resolve_target("CSR", 2)
            .unwrap()
            .with_widths(Some(8), Some(8))
            .unwrap();
        assert_eq!(Some(done.converted.tensor.encoding()), csr.encoding());
        let named = Request {
            to: Some("CSR".into()),
            ..request.clone()
        };
        let named = read_as(&mtx, &named);
        assert_eq!(named.converted.tensor, done.converted.tensor);
        // A width asked for is kept.
        let wide = Request {
            pos_width: Some(Width::Bits(64)),
            ..request.clone()
        };
        let t = read_as(&mtx, &wide).converted.tensor;
        assert_eq!(t.encoding().pos_width, 64);
        assert_eq!(t.encoding().crd_width, 8);
        // A stored CSC tensor keeps its encoding.
        let csc = sptk_encoding::resolve_target("CSC", 2).unwrap();
        let t = sptk_tensor::convert(
            &sptk_tensor::Entries::from_parts(
                vec![3, 3],
                vec![vec![0, 2], vec![1, 0]],
                sptk_tensor::ValueVec::F64(vec![1.5, 2.5].into()),
            )
            .unwrap(),
            &csc,
            &ConvertOptions::default(),
        )
        .unwrap()
        .tensor;
        let spt = dir.path().join("a.spt");
        sptk_store::write(&spt, &t, &Default::default()).unwrap();
        let kept = read(&spt);
        assert_eq!(Some(kept.converted.tensor.encoding()), csc.encoding());
    }

    #[test]
    fn a_member_named_twice_differently_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.h5");
        std::fs::write(&file, b"x").unwrap();
        let named = format!("{}:/X", file.display());
        let e = open_named(&[&named], Some("/Y"), "--dataset", None)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            format!("{named}: the input names the member `/X` and --dataset names `/Y`; give one")
        );
    }
}

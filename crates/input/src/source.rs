//! An input being read: its [`SourceSpec`], the [`Probe`] taken for detection, and for a
//! stream (standard input) the bytes detection already took, handed back in front of the
//! rest so that a non-seekable input is still read once, front to back.

use std::io::Read;
use std::path::Path;

use crate::error::InputError;
use crate::probe::{read_up_to, Probe, HEAD_LEN};
use crate::spec::{Origin, SourceSpec};

/// An input opened for reading.
pub struct Source {
    spec: SourceSpec,
    probe: Probe,
    /// For a stream: the bytes taken for detection, then the rest.
    stream: Option<(Vec<u8>, Box<dyn Read>)>,
}

impl Source {
    /// Opens `spec` and probes it (standard input: its first bytes are taken and kept).
    pub fn open(spec: SourceSpec) -> Source {
        match &spec.origin {
            Origin::Stdin => {
                let mut s = Source::from_stream(Box::new(std::io::stdin()));
                s.spec.member = spec.member;
                s
            }
            Origin::File(p) => Source {
                probe: Probe::file(p),
                spec,
                stream: None,
            },
            Origin::Files(ps) => Source {
                probe: ps.first().map(|p| Probe::file(p)).unwrap_or_default(),
                spec,
                stream: None,
            },
            Origin::Folder(p) => Source {
                probe: Probe::folder(p),
                spec,
                stream: None,
            },
        }
    }

    /// A source reading any stream once, front to back (standard input, a pipe, a
    /// network body): its first bytes are taken for detection and handed back.
    pub fn from_stream(mut stream: Box<dyn Read>) -> Source {
        let head = read_up_to(&mut stream, HEAD_LEN);
        Source {
            spec: SourceSpec {
                origin: Origin::Stdin,
                member: None,
            },
            probe: Probe::stream(&head),
            stream: Some((head, stream)),
        }
    }

    /// What was named.
    pub fn spec(&self) -> &SourceSpec {
        &self.spec
    }

    /// What detection saw.
    pub fn probe(&self) -> &Probe {
        &self.probe
    }

    /// The file, for a single-file source.
    pub fn path(&self) -> Option<&Path> {
        match &self.spec.origin {
            Origin::File(p) => Some(p),
            _ => None,
        }
    }

    /// The files of a single- or several-file source, in order.
    pub fn files(&self) -> &[std::path::PathBuf] {
        match &self.spec.origin {
            Origin::File(p) => std::slice::from_ref(p),
            Origin::Files(ps) => ps,
            _ => &[],
        }
    }

    /// The folder, for a folder source.
    pub fn folder(&self) -> Option<&Path> {
        match &self.spec.origin {
            Origin::Folder(p) => Some(p),
            _ => None,
        }
    }

    /// The total bytes of its files, for progress (None for a stream or a folder).
    pub fn len(&self) -> Option<u64> {
        match &self.spec.origin {
            Origin::File(_) | Origin::Files(_) => Some(
                self.files()
                    .iter()
                    .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
                    .sum(),
            ),
            _ => None,
        }
    }

    /// Whether [`Source::len`] is zero or unknown.
    pub fn is_empty(&self) -> bool {
        self.len().unwrap_or(0) == 0
    }

    /// The stream, whole: the bytes detection took, then the rest. Can be taken once.
    ///
    /// # Errors
    /// [`InputError::Source`] if this is not a stream, or it was taken already.
    pub fn take_stream(&mut self) -> Result<Box<dyn Read>, InputError> {
        match self.stream.take() {
            Some((head, rest)) => Ok(Box::new(std::io::Cursor::new(head).chain(rest))),
            None => Err(InputError::Source(format!(
                "{}: not a stream, or read already",
                self.spec
            ))),
        }
    }

    /// The stream buffered whole, for a format that needs all of it at once (a storage
    /// file is mapped, not streamed), within `limit` bytes.
    ///
    /// # Errors
    /// [`InputError::StdinTooLarge`] past the limit; an I/O error reading.
    pub fn buffer_stream(
        &mut self,
        limit: Option<u64>,
        format: &'static str,
    ) -> Result<Vec<u8>, InputError> {
        let stream = self.take_stream()?;
        let mut bytes = Vec::new();
        let cap = limit.map_or(u64::MAX, |l| l.saturating_add(1));
        stream
            .take(cap)
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::io(Path::new("-"), e))?;
        match limit {
            Some(limit) if bytes.len() as u64 > limit => {
                let read = bytes.len() as u128;
                Err(InputError::StdinTooLarge {
                    limit,
                    format,
                    memory: Box::new(sptk_tensor::MemoryLimit {
                        array: "standard input".into(),
                        elements: read,
                        bytes: read,
                        total: read,
                        limit,
                    }),
                })
            }
            _ => Ok(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_gives_back_what_detection_took() {
        let text: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut s = Source::from_stream(Box::new(std::io::Cursor::new(text.clone())));
        assert_eq!(s.probe().head, text[..HEAD_LEN]);
        let mut back = Vec::new();
        s.take_stream().unwrap().read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
        assert!(s.take_stream().is_err());
    }

    #[test]
    fn buffering_a_stream_keeps_to_the_limit() {
        let mk = || Source::from_stream(Box::new(std::io::Cursor::new(vec![7u8; 5000])));
        assert_eq!(mk().buffer_stream(Some(5000), "x").unwrap().len(), 5000);
        assert_eq!(mk().buffer_stream(None, "x").unwrap().len(), 5000);
        let e = mk().buffer_stream(Some(4999), "storage file").unwrap_err();
        assert!(
            matches!(e, InputError::StdinTooLarge { limit: 4999, .. }),
            "{e}"
        );
    }
}

//! Tensors in `.safetensors` files (`FILE:NAME` chooses one; a file of one tensor needs
//! no name): each nonzero an entry, through the core's one dense scan.

use sptk_npy::SafeTensorsFile;

use crate::error::InputError;
use crate::formats::npy::by;
use crate::input::{Content, Input, ReadOptions};
use crate::probe::{Match, Probe};
use crate::reader::{Accepts, Member, Reader};
use crate::source::Source;

/// Reads tensors of `.safetensors` files.
pub struct SafeTensorsReader;

fn open(source: &mut Source, opts: &ReadOptions) -> Result<SafeTensorsFile, InputError> {
    super::open_or_buffer(
        source,
        opts,
        "safetensors",
        SafeTensorsFile::open,
        SafeTensorsFile::from_bytes,
    )
}

impl Reader for SafeTensorsReader {
    fn name(&self) -> &'static str {
        "safetensors"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["safetensors", "st"]
    }

    /// An 8-byte little-endian header length that fits the file, then a JSON object.
    fn detect(&self, probe: &Probe) -> Match {
        let head = probe.head.as_slice();
        let len = head
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        let json = head.get(8) == Some(&b'{') && len.is_some_and(|n| n > 1 && n < 100 << 20);
        if json && !probe.gzip {
            Match::Content
        } else if probe.named(&[".safetensors"]) && !probe.gzip {
            Match::Name
        } else {
            Match::No
        }
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            file: true,
            stream: true,
            members: true,
            ..Accepts::default()
        }
    }

    fn members(&self, source: &Source) -> Result<Option<Vec<Member>>, InputError> {
        let Some(path) = source.path() else {
            return Ok(None);
        };
        let file = SafeTensorsFile::open(path)?;
        Ok(Some(
            file.tensors()
                .iter()
                .map(|t| Member {
                    path: t.name.clone(),
                    layout: format!("dense {}", t.dtype_name),
                    dims: t.shape.clone(),
                    value_type: t.dtype,
                    entries: None,
                })
                .collect(),
        ))
    }

    fn read(&self, source: &mut Source, opts: &ReadOptions) -> Result<Input, InputError> {
        let file = open(source, opts)?;
        let member = source.spec().member.clone();
        let t = file.tensor(member.as_deref())?;
        let header = format!("tensor {} {} {}", t.name, t.dtype_name, by(&t.shape));
        let entries = file.entries(Some(&t.name), opts.memory_limit)?;
        Ok(Input {
            name: source.spec().to_string(),
            format: self.name(),
            header,
            field: None,
            one_based: false,
            content: Content::Entries {
                entries,
                labels: Vec::new(),
            },
            notes: Vec::new(),
            memory_hint: None,
        })
    }
}

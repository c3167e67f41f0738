//! Laying an answer out: the record, then the arrays placed after it.

use super::*;

/// An answer being laid out: the record, and the arrays to place after it.
#[derive(Default)]
pub(crate) struct Writer<'a> {
    meta: Vec<u8>,
    arrays: Vec<&'a [u8]>,
    data_len: usize,
    /// Which of `arrays` are the content's (level or coordinate arrays and values), in
    /// the order [`content_in_order`] gives them.
    content: Range<usize>,
}

impl<'a> Writer<'a> {
    fn u8(&mut self, x: u8) {
        self.meta.push(x);
    }

    fn u64(&mut self, x: u64) {
        self.meta.extend_from_slice(&x.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.meta.extend_from_slice(s.as_bytes());
    }

    fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
    }

    /// Places `bytes` (`len` elements) in the data and refers to it.
    fn bytes(&mut self, len: usize, bytes: &'a [u8]) {
        let at = self.data_len.next_multiple_of(ALIGN);
        self.u64(len as u64);
        self.u64(at as u64);
        self.u64(bytes.len() as u64);
        self.data_len = at + bytes.len();
        self.arrays.push(bytes);
    }

    fn index(&mut self, v: &'a IndexVec) {
        let bits = v.width().bits() as u8;
        self.u8(bits);
        self.bytes(v.len(), index_bytes(v));
    }

    fn values(&mut self, v: &'a ValueVec) {
        self.str(v.value_type().name());
        self.bytes(v.len(), value_bytes(v));
    }

    fn labels<L: std::ops::Deref<Target = Labels>>(&mut self, all: &'a [Option<L>]) {
        self.u64(all.len() as u64);
        for l in all {
            match l {
                None => self.u8(0),
                Some(l) => {
                    self.u8(1);
                    self.index(l.offsets());
                    let text = l.bytes();
                    self.bytes(text.len(), text);
                }
            }
        }
    }

    /// Planned content: no arrays, only where they lie in the file.
    fn planned(&mut self, p: &Planned) {
        self.u64s(&p.dims);
        self.u8(u8::from(p.by_rows));
        for (plan, name) in p.arrays.iter().zip(&p.names) {
            self.str(name);
            self.str(plan.ty.name());
            self.u64(plan.len);
            match &plan.layout {
                Layout::Contiguous { offset } => {
                    self.u8(0);
                    self.u64(*offset);
                }
                Layout::Chunked {
                    chunk,
                    shuffle,
                    deflate,
                    chunks,
                } => {
                    self.u8(1);
                    self.u64(*chunk);
                    self.u8(u8::from(*shuffle));
                    self.u8(u8::from(*deflate));
                    self.u64(chunks.len() as u64);
                    for c in chunks {
                        for x in [c.offset, c.bytes, u64::from(c.skipped)] {
                            self.u64(x);
                        }
                    }
                }
            }
        }
    }

    /// Lays out `answer`.
    pub(crate) fn answer(answer: &'a Answer, tensor_labels: &'a [Option<&'a Labels>]) -> Self {
        let mut w = Writer::default();
        match answer {
            Answer::Matrix(m) => {
                w.u8(0);
                w.str(&m.object);
                w.u8(kind_code(m.kind));
                w.str(&m.layout);
                w.u64(m.notes.len() as u64);
                for n in &m.notes {
                    w.str(n);
                }
                w.labels(&m.labels);
                let first = w.arrays.len();
                match &m.content {
                    Content::Entries(e) => {
                        w.u8(0);
                        w.u64s(e.dim_sizes());
                        for c in e.coord_arrays() {
                            w.index(c);
                        }
                        w.values(e.values());
                        w.content = first..w.arrays.len();
                    }
                    Content::Tensor(t) => {
                        w.u8(1);
                        w.str(&t.encoding().to_string());
                        w.u64s(t.dim_sizes());
                        w.u64(t.levels().len() as u64);
                        for l in t.levels() {
                            for a in [&l.pos, &l.crd] {
                                match a {
                                    None => w.u8(0),
                                    Some(a) => {
                                        w.u8(1);
                                        w.index(a);
                                    }
                                }
                            }
                        }
                        w.values(t.values());
                        w.content = first..w.arrays.len();
                        w.labels(tensor_labels);
                        w.u64(t.applied_slices().len() as u64);
                        for a in t.applied_slices() {
                            for x in [a.dim as u64, a.offset, a.size, a.stride] {
                                w.u64(x);
                            }
                        }
                    }
                    Content::Planned(p) => {
                        w.u8(2);
                        w.planned(p);
                        w.content = first..first;
                    }
                }
            }
            Answer::Error(e) => {
                // 3: refused by the memory budget, with what it counted.
                w.u8(if e.memory_limit.is_some() { 3 } else { 1 });
                w.str(&e.object);
                w.str(&e.message);
                if let Some(m) = &e.memory_limit {
                    let wide = |x: u128| u64::try_from(x).unwrap_or(u64::MAX);
                    w.u64s(&[wide(m.elements), wide(m.bytes), m.limit]);
                }
            }
            Answer::Members(all) => {
                w.u8(2);
                w.u64(all.len() as u64);
                for m in all {
                    w.str(&m.path);
                    w.str(&m.layout);
                    w.u64s(&m.dims);
                    match m.value_type {
                        None => w.u8(0),
                        Some(t) => {
                            w.u8(1);
                            w.str(t.name());
                        }
                    }
                    match m.entries {
                        None => w.u8(0),
                        Some(n) => {
                            w.u8(1);
                            w.u64(n);
                        }
                    }
                }
            }
        }
        w
    }

    /// Where the data starts.
    fn data_start(&self) -> usize {
        (PREFIX + self.meta.len()).next_multiple_of(ALIGN)
    }

    /// Total bytes of the layout.
    pub(crate) fn len(&self) -> usize {
        self.data_start() + self.data_len
    }

    /// The prefix and the record.
    pub(crate) fn head(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PREFIX + self.meta.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(self.meta.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.meta);
        out
    }

    /// Which of [`Writer::placed`] are the content's arrays.
    pub(crate) fn content(&self) -> Range<usize> {
        self.content.clone()
    }

    /// Each array with the offset it goes to.
    pub(crate) fn placed(&self) -> Vec<(usize, &'a [u8])> {
        let start = self.data_start();
        let mut at = 0usize;
        self.arrays
            .iter()
            .map(|&a| {
                at = at.next_multiple_of(ALIGN);
                let here = start + at;
                at += a.len();
                (here, a)
            })
            .collect()
    }
}

//! What the commands print: the dry-run summary, `info` (table or JSON), the `encoding`
//! table, and the note on an automatic choice.

use std::fmt::Write;
use std::io::Write as _;
use std::time::Duration;

use sptk_encoding::{Encoding, LevelExpr, LevelFormat, Target};
use sptk_input::{Content, Input};
use sptk_tensor::{AutoChoice, Route, Tensor};

/// Writes `text` to standard output and flushes it. Unlike `print!`, which panics on a
/// failed write, this returns the error: a reader that closed the pipe early (`| head`)
/// ends the program quietly (see `main`).
pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The times of a conversion that wrote a file.
pub struct Times {
    /// Reading the input (with the conversion, when it was parsed straight into it).
    pub read: Duration,
    /// Converting, when it was a step of its own.
    pub convert: Option<Duration>,
    /// Writing the output.
    pub write: Duration,
    /// The whole conversion, from opening the input to the written output.
    pub total: Duration,
}

/// `wrote OUT in 9.612 s (read 8.102 s, convert 0.876 s, write 0.634 s)`: the whole
/// run's time first, then what each step took.
pub fn wrote(path: &std::path::Path, t: &Times) -> String {
    let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
    let convert = t
        .convert
        .map_or(String::new(), |c| format!(", convert {}", s(c)));
    format!(
        "wrote {} in {} (read {}{convert}, write {})",
        path.display(),
        s(t.total),
        s(t.read),
        s(t.write)
    )
}

/// A table with a header row; columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", parts.join("  ").trim_end());
    };
    line(
        &mut out,
        &header.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    );
    line(
        &mut out,
        &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    );
    for r in rows {
        line(&mut out, r);
    }
    out
}

fn list(v: &[u64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(", "))
}

fn human_bytes(b: usize) -> String {
    let b = b as f64;
    if b < 1024.0 {
        format!("{b} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", b / 1024.0 / 1024.0 / 1024.0)
    }
}

/// The note printed on standard error when `BSR` / `BSC` / `ELL` alone chose for the user.
pub fn choice_note(choice: &AutoChoice, t: &Tensor) -> String {
    match choice {
        AutoChoice::Block { rows, cols, bytes } => format!(
            "chose {rows}x{cols} blocks ({bytes} bytes of values, coordinates and positions; the fewest of the candidates): {}",
            t.encoding()
        ),
        AutoChoice::Ell { k } => format!("chose K = {k} (the longest row): {}", t.encoding()),
    }
}

fn level_rows(enc: &Encoding, lvl_sizes: Option<&[u64]>) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let text = enc.to_string();
    let _ = text;
    for (l, spec) in enc.levels.iter().enumerate() {
        let expr = match &spec.expr {
            LevelExpr::Dim(d) => format!("d{d}"),
            LevelExpr::FloorDiv(d, c) => format!("d{d} floordiv {c}"),
            LevelExpr::Mod(d, c) => format!("d{d} mod {c}"),
            LevelExpr::Ell { dim, k } => format!("d{dim} * (s0 * {k})"),
            LevelExpr::Other(_) => "(other)".to_string(),
        };
        let format = match spec.format {
            LevelFormat::Dense => "dense".to_string(),
            LevelFormat::Batch => "batch".to_string(),
            LevelFormat::Compressed => "compressed".to_string(),
            LevelFormat::LooseCompressed => "loose_compressed".to_string(),
            LevelFormat::Singleton => "singleton".to_string(),
            LevelFormat::Structured { n, m } => format!("structured[{n}, {m}]"),
        };
        let mut props = Vec::new();
        if spec.props.nonunique {
            props.push("nonunique");
        }
        if spec.props.nonordered {
            props.push("nonordered");
        }
        if spec.props.soa {
            props.push("soa");
        }
        let mut row = vec![l.to_string(), expr, format, props.join(", ")];
        if let Some(s) = lvl_sizes {
            row.push(s.get(l).map_or(String::new(), |x| x.to_string()));
        }
        rows.push(row);
    }
    rows
}

/// `sparse-convert encoding TEXT`: the canonical text and a table of levels.
pub fn encoding_table(target: &Target) -> String {
    let mut out = String::new();
    match target {
        Target::Fixed(enc) => {
            let _ = writeln!(out, "{enc}\n");
            out.push_str(&table(
                &["level", "expression", "format", "properties"],
                &level_rows(enc, None),
            ));
        }
        Target::AutoBlock { column_blocks, .. } => {
            let _ = writeln!(
                out,
                "{}: the block shape (R x C in {{1, 2, 4, 8}}, not 1 x 1) is chosen from the data to store the fewest bytes",
                if *column_blocks { "BSC" } else { "BSR" }
            );
        }
        Target::AutoEll { .. } => {
            let _ = writeln!(
                out,
                "ELL: K is chosen from the data (the longest row, at least 1)"
            );
        }
    }
    out
}

fn entries_in(t: &Tensor) -> usize {
    t.to_entries().len()
}

/// Rows of (array, element type, length, bytes) for every array of a tensor.
fn array_rows(t: &Tensor) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (name, a) in t.index_arrays() {
        rows.push(vec![
            name,
            format!("u{}", a.width().bits()),
            a.len().to_string(),
            a.byte_len().to_string(),
        ]);
    }
    rows.push(vec![
        "values".into(),
        t.value_type().name().into(),
        t.nse().to_string(),
        (t.nse() * t.value_type().size()).to_string(),
    ]);
    rows
}

/// The summary of a conversion that writes nothing (what the benchmarks time).
/// `convert` is `None` when the input was parsed straight into the output (one step).
pub fn dry_run(
    input: &Input,
    (t, route): (&Tensor, &Route),
    read: Duration,
    convert: Option<Duration>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "input      {} ({}, {} entries)",
        input.name,
        input.format,
        input.entry_count()
    );
    let _ = writeln!(out, "encoding   {}", t.encoding());
    let _ = writeln!(out, "dim        {}", list(t.dim_sizes()));
    let _ = writeln!(out, "lvl        {}", list(&t.lvl_sizes()));
    let _ = writeln!(out, "nse        {}", t.nse());
    let _ = writeln!(out, "route      {route}");
    let _ = writeln!(
        out,
        "bytes      {} ({})",
        t.storage_bytes(),
        human_bytes(t.storage_bytes())
    );
    match convert {
        Some(convert) => {
            let _ = writeln!(out, "read       {:.3} s", read.as_secs_f64());
            let _ = writeln!(out, "convert    {:.3} s", convert.as_secs_f64());
        }
        None => {
            let _ = writeln!(
                out,
                "read       {:.3} s (parsed straight into the output arrays)",
                read.as_secs_f64()
            );
        }
    }
    let _ = writeln!(out, "checksum   {:08x}", t.checksum());
    out.push('\n');
    out.push_str(&table(
        &["array", "type", "length", "bytes"],
        &array_rows(t),
    ));
    out
}

/// What `info` describes about a layout: from a converted tensor, or from a `.spt`
/// file's header and directory alone (no pass over the data).
pub struct Summary {
    encoding: Encoding,
    lvl: Vec<u64>,
    nse: u64,
    nonzeros: u64,
    padded: bool,
    arrays: Vec<Vec<String>>,
    bytes: u64,
    /// The route a conversion took, and why the planner chose it.
    route: Option<(Route, String)>,
}

impl Summary {
    /// From a tensor (counts its nonzeros: one pass).
    pub fn of_tensor(t: &Tensor) -> Summary {
        Summary {
            encoding: t.encoding().clone(),
            lvl: t.lvl_sizes(),
            nse: t.nse() as u64,
            nonzeros: entries_in(t) as u64,
            padded: t.layout().padded,
            arrays: array_rows(t),
            bytes: t.storage_bytes() as u64,
            route: None,
        }
    }

    /// Records the route of the conversion described.
    pub fn set_route(&mut self, route: Route, why: String) {
        self.route = Some((route, why));
    }

    /// From a `.spt` header and directory only.
    pub fn of_file(f: &sptk_store::SptFile) -> Summary {
        let h = f.header();
        let arrays: Vec<Vec<String>> = h
            .arrays
            .iter()
            .map(|a| {
                vec![
                    a.name.clone(),
                    a.dtype.name().to_string(),
                    a.len.to_string(),
                    a.nbytes.to_string(),
                ]
            })
            .collect();
        Summary {
            encoding: h.encoding.clone(),
            lvl: h.lvl_sizes(),
            nse: h.nse,
            nonzeros: h.entries,
            padded: h.layout.padded,
            bytes: h.arrays.iter().map(|a| a.nbytes as u64).sum(),
            arrays,
            route: None,
        }
    }
}

/// The summary to show for `info`: the converted tensor's, or a `.spt` input's own.
pub fn summary(input: &Input, t: Option<&Tensor>) -> Option<Summary> {
    match (t, &input.content) {
        (Some(t), _) => Some(Summary::of_tensor(t)),
        (None, Content::Stored { file, .. }) => Some(Summary::of_file(file)),
        (None, Content::Tensor(t)) => Some(Summary::of_tensor(t)),
        (None, Content::Entries { .. }) | (None, Content::Streamed { .. }) => None,
    }
}

/// `sparse-convert info` as a table.
/// How many labels `info` shows per dimension.
const LABELS_SHOWN: usize = 5;

/// A labelled dimension as `info` shows it: the dimension, its number of labels and the
/// first few.
pub struct LabelSummary {
    /// The dimension.
    pub dim: usize,
    /// Number of labels (the dimension's size).
    pub count: usize,
    /// The first few labels.
    pub first: Vec<String>,
}

/// The labelled dimensions of an input (a stored file's chunks and text checked on the
/// way).
pub fn label_summaries(input: &Input) -> Result<Vec<LabelSummary>, sptk_store::StoreError> {
    let summary = |dim: usize, l: &sptk_tensor::Labels| LabelSummary {
        dim,
        count: l.len(),
        first: l.iter().take(LABELS_SHOWN).map(str::to_string).collect(),
    };
    let mut out = Vec::new();
    match &input.content {
        Content::Stored { file, .. } => {
            for &dim in &file.header().labelled_dims {
                if let Some(l) = file.labels(dim)? {
                    out.push(summary(dim, &l));
                }
            }
        }
        Content::Entries { labels, .. } | Content::Streamed { labels, .. } => {
            for (dim, l) in labels.iter().enumerate() {
                if let Some(l) = l {
                    out.push(summary(dim, l));
                }
            }
        }
        Content::Tensor(t) => {
            for (dim, l) in t.all_labels().into_iter().enumerate() {
                if let Some(l) = l {
                    out.push(summary(dim, l));
                }
            }
        }
    }
    Ok(out)
}

/// The matrices a container holds, one row each.
pub fn members_table(input: &str, members: &[sptk_input::Member]) -> String {
    if members.is_empty() {
        return format!("{input}: holds no matrix that sptk reads\n");
    }
    let rows: Vec<Vec<String>> = members
        .iter()
        .map(|m| {
            vec![
                match m.path.trim_start_matches('/') {
                    "" => input.to_string(),
                    member => format!("{input}:{member}"),
                },
                m.layout.clone(),
                if m.dims.is_empty() {
                    "?".into()
                } else {
                    m.dims
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" x ")
                },
                m.value_type.map_or("-".into(), |t| t.to_string()),
                m.entries.map_or("?".into(), |n| n.to_string()),
            ]
        })
        .collect();
    table(
        &["matrix", "layout", "dimensions", "value type", "entries"],
        &rows,
    )
}

/// The matrices a container holds as a JSON list.
fn members_list(input: &str, members: &[sptk_input::Member]) -> String {
    let items: Vec<String> = members
        .iter()
        .map(|m| {
            format!(
                "{{\"input\": {}, \"path\": {}, \"layout\": {}, \"dimensions\": {}, \"value_type\": {}, \"entries\": {}}}",
                json_str(input),
                json_str(&m.path),
                json_str(&m.layout),
                json_list(&m.dims),
                m.value_type.map_or("null".into(), |t| json_str(t.name())),
                m.entries.map_or("null".into(), |n| n.to_string())
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `info --json` of a container with no main matrix: what it holds, and why none was read.
pub fn members_json(input: &str, members: &[sptk_input::Member], why: Option<&str>) -> String {
    format!(
        "{{\n  \"file\": {},\n  \"members\": {},\n  \"main\": {}\n}}\n",
        json_str(input),
        members_list(input, members),
        why.map_or("null".into(), |w| format!("{{\"error\": {}}}", json_str(w)))
    )
}

/// `info`'s description of an input (and of its conversion, with `--to`).
pub fn info_table(input: &Input, s: Option<&Summary>, labels: &[LabelSummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "file        {}", input.name);
    let header = if input.header.is_empty() {
        String::new()
    } else {
        format!(" ({})", input.header)
    };
    let _ = writeln!(out, "format      {}{header}", input.format);
    let _ = writeln!(out, "dimensions  {}", list(&input.dim_sizes()));
    let _ = writeln!(out, "value type  {}", input.value_type());
    let what = match input.content {
        Content::Entries { .. } | Content::Streamed { .. }
            if input.header.contains("symmetric") || input.header.contains("hermitian") =>
        {
            "as read, symmetric storage expanded"
        }
        Content::Entries { .. } | Content::Streamed { .. } => "as read",
        Content::Tensor(_) => "as stored in the input's level arrays",
        Content::Stored { .. } => "from the header; `verify` checks it",
    };
    let _ = writeln!(out, "entries     {} ({what})", input.entry_count());
    for note in &input.notes {
        let _ = writeln!(out, "note        {note}");
    }
    if let Content::Stored { file, .. } = &input.content {
        let p = &file.header().provenance;
        if let Some(src) = &p.source {
            let _ = writeln!(out, "source      {src}");
        }
        for sl in &p.slices {
            let _ = writeln!(
                out,
                "slice       dimension {}: slice({}, {}, {})",
                sl.dim, sl.offset, sl.size, sl.stride
            );
        }
    }
    for l in labels {
        let shown: Vec<String> = l.first.iter().map(|x| format!("{x:?}")).collect();
        let more = if l.count > l.first.len() { ", ..." } else { "" };
        let _ = writeln!(
            out,
            "labels      dimension {}: {} labels ({}{more})",
            l.dim,
            l.count,
            shown.join(", ")
        );
    }
    if let Some(s) = s {
        out.push('\n');
        let _ = writeln!(out, "encoding    {}", s.encoding);
        if let Some((route, why)) = &s.route {
            let _ = writeln!(out, "route       {route}: {why}");
            for step in &route.steps {
                let _ = writeln!(out, "            {:<12} {}", step.name(), step.describe());
            }
        }
        let _ = writeln!(out, "lvl         {}", list(&s.lvl));
        let _ = writeln!(out, "nse         {}", s.nse);
        if s.padded {
            let ratio = if s.nse == 0 {
                1.0
            } else {
                s.nonzeros as f64 / s.nse as f64
            };
            let _ = writeln!(
                out,
                "fill        {ratio:.3} ({} nonzeros in {} stored values)",
                s.nonzeros, s.nse
            );
        }
        let _ = writeln!(
            out,
            "bytes       {} ({})",
            s.bytes,
            human_bytes(s.bytes as usize)
        );
        out.push('\n');
        out.push_str(&table(
            &["level", "expression", "format", "properties", "size"],
            &level_rows(&s.encoding, Some(&s.lvl)),
        ));
        out.push('\n');
        out.push_str(&table(&["array", "type", "length", "bytes"], &s.arrays));
    }
    out
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_list(v: &[u64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `sparse-convert info --json`.
pub fn info_json(
    input: &Input,
    s: Option<&Summary>,
    labels: &[LabelSummary],
    members: Option<&[sptk_input::Member]>,
    memory: Option<&sptk_tensor::SizePlan>,
) -> String {
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"file\": {},", json_str(&input.name));
    let _ = writeln!(out, "  \"format\": {},", json_str(input.format));
    let _ = writeln!(out, "  \"header\": {},", json_str(&input.header));
    let _ = writeln!(out, "  \"dimensions\": {},", json_list(&input.dim_sizes()));
    let _ = writeln!(
        out,
        "  \"value_type\": {},",
        json_str(input.value_type().name())
    );
    let _ = write!(out, "  \"entries\": {}", input.entry_count());
    if let Some(m) = members {
        let _ = write!(out, ",\n  \"members\": {}", members_list(&input.name, m));
    }
    if !labels.is_empty() {
        out.push_str(",\n  \"labels\": [");
        for (i, l) in labels.iter().enumerate() {
            let first: Vec<String> = l.first.iter().map(|x| json_str(x)).collect();
            let _ = write!(
                out,
                "{}\n    {{\"dim\": {}, \"count\": {}, \"first\": [{}]}}",
                if i == 0 { "" } else { "," },
                l.dim,
                l.count,
                first.join(", ")
            );
        }
        out.push_str("\n  ]");
    }
    if let Some(s) = s {
        let _ = write!(
            out,
            ",\n  \"encoding\": {},",
            json_str(&s.encoding.to_string())
        );
        if let Some((route, why)) = &s.route {
            let steps: Vec<String> = route.steps.iter().map(|x| json_str(x.name())).collect();
            let _ = write!(out, "\n  \"route\": [{}],", steps.join(", "));
            let _ = write!(out, "\n  \"route_why\": {},", json_str(why));
        }
        let _ = write!(out, "\n  \"lvl\": {},", json_list(&s.lvl));
        let _ = write!(out, "\n  \"nse\": {},", s.nse);
        let _ = write!(out, "\n  \"nonzeros\": {},", s.nonzeros);
        let fill = if s.nse == 0 {
            1.0
        } else {
            s.nonzeros as f64 / s.nse as f64
        };
        let _ = write!(out, "\n  \"fill\": {fill},");
        let _ = write!(out, "\n  \"bytes\": {},", s.bytes);
        out.push_str("\n  \"arrays\": [");
        for (i, r) in s.arrays.iter().enumerate() {
            let _ = write!(
                out,
                "{}\n    {{\"name\": {}, \"type\": {}, \"length\": {}, \"bytes\": {}}}",
                if i == 0 { "" } else { "," },
                json_str(&r[0]),
                json_str(&r[1]),
                r[2],
                r[3]
            );
        }
        out.push_str("\n  ]");
    }
    if let Some(plan) = memory {
        let _ = write!(out, ",\n  \"memory\": {}", memory_json(plan));
    }
    out.push_str("\n}\n");
    out
}

/// `info --to`'s memory plan as a JSON object.
fn memory_json(plan: &sptk_tensor::SizePlan) -> String {
    let way = match (&plan.out_of_core, plan.fits()) {
        (_, true) => "in memory",
        (Ok(_), false) => "out of core",
        (Err(_), false) => "refused",
    };
    let mut out = format!(
        "{{\"way\": {}, \"limit\": {}, \"in_memory_bytes\": {}, \"output_bytes\": {}",
        json_str(way),
        plan.limit,
        plan.in_memory,
        plan.output
    );
    match &plan.out_of_core {
        Ok(o) => {
            let _ = write!(
                out,
                ", \"fill_passes\": {}, \"stretch_entries\": {}, \"counter_bytes\": {}",
                o.passes, o.stretch_entries, o.counters
            );
        }
        Err(e) => {
            let _ = write!(
                out,
                ", \"out_of_core_refused\": {}",
                json_str(&e.to_string())
            );
        }
    }
    out.push('}');
    out
}

/// `info --to`'s memory plan in words: which way the conversion goes and what it costs.
pub fn memory_text(plan: &sptk_tensor::SizePlan) -> String {
    let b = |n: u64| sptk_tensor::bytes_text(u128::from(n));
    let mut out = String::from("\nmemory\n");
    let _ = writeln!(
        out,
        "  in memory: {} (the output {}, the rest scratch), limit {}",
        b(plan.in_memory),
        b(plan.output),
        b(plan.limit)
    );
    match (&plan.out_of_core, plan.fits()) {
        (_, true) => out.push_str("  converts in memory: it fits the limit\n"),
        (Ok(o), false) => {
            let _ = writeln!(
                out,
                "  past the limit: into a .spt output it converts out of core, holding at \
                 most the limit: a count pass, then about {} fill pass{} of up to {} entries \
                 each (counters {}); the input is read once per pass where its rows are in \
                 random order, about twice in all where they are in row order. Other \
                 outputs are refused.",
                o.passes,
                if o.passes == 1 { "" } else { "es" },
                o.stretch_entries,
                b(o.counters)
            );
        }
        (Err(e), false) => {
            let _ = writeln!(
                out,
                "  past the limit, and out of core too: {}",
                sptk_tensor::error_text(e)
            );
        }
    }
    out
}

/// `info --to` for an input whose conversion does not fit: what its header says, and the
/// memory plan (the entries are not read).
pub fn memory_text_alone(
    name: &str,
    size: &sptk_input::InputSize,
    plan: &sptk_tensor::SizePlan,
) -> String {
    let mut out = format!(
        "{name}: {} x {}, {} entries of {} (from its header; the entries are not read: \
         the conversion does not fit the memory limit)\n",
        size.dims[0],
        size.dims[1],
        size.entries,
        size.value_type.name()
    );
    let _ = writeln!(out, "encoding  {}", plan.encoding);
    out.push_str(&memory_text(plan));
    out
}

/// [`memory_text_alone`] as JSON.
pub fn memory_json_alone(
    name: &str,
    size: &sptk_input::InputSize,
    plan: &sptk_tensor::SizePlan,
) -> String {
    format!(
        "{{\n  \"file\": {},\n  \"dimensions\": {},\n  \"value_type\": {},\n  \"entries\": {},\n  \"encoding\": {},\n  \"memory\": {}\n}}\n",
        json_str(name),
        json_list(&size.dims),
        json_str(size.value_type.name()),
        size.entries,
        json_str(&plan.encoding.to_string()),
        memory_json(plan)
    )
}

/// `sparse-convert verify`: what was checked.
pub fn verified(path: &str, f: &sptk_store::SptFile, t: &Tensor, elapsed: Duration) -> String {
    let h = f.header();
    let bytes: usize = h.arrays.iter().map(|a| a.nbytes).sum();
    let sums = match (h.chunk_bytes, h.array(sptk_store::CHECKSUMS)) {
        (Some(c), Some(a)) => format!(
            "every chunk checksum ({} chunks of {}, {}) matches",
            a.len,
            human_bytes(c as usize),
            sptk_store::CHECKSUM_ALGORITHM
        ),
        _ => format!(
            "every array checksum ({}, format version {}) matches",
            sptk_store::CHECKSUM_ALGORITHM,
            h.version
        ),
    };
    format!(
        "{path}: ok\n  encoding  {}\n  dim       {}\n  nse       {}\n  entries   {}\n  arrays    {} ({}), {sums}, every invariant holds\n  time      {:.3} s\n",
        t.encoding(),
        list(t.dim_sizes()),
        t.nse(),
        h.entries,
        h.arrays.len(),
        human_bytes(bytes),
        elapsed.as_secs_f64()
    )
}

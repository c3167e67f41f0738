//! The small harness behind `mlir_goldens.rs`: inputs restated from MLIR constants, the
//! conversion, and a line-for-line comparison with a transcribed `sparse_tensor.print` block.

use sptk_encoding::Encoding;
use sptk_tensor::{convert_to, ConvertOptions, Entries, Tensor, Value, ValueVecAccess};

/// `arith.constant dense<...>`: the shape and the values in row-major order. Only the
/// nonzeros are entries (ENCODING.md, "Entries, zeros and duplicates").
pub fn dense<V: Value + ValueVecAccess>(shape: &[u64], flat: &[V]) -> Entries {
    let n: u64 = shape.iter().product();
    assert_eq!(flat.len() as u64, n, "dense constant of shape {shape:?}");
    let mut e = Entries::new(shape.to_vec(), V::TYPE);
    let mut idx = vec![0u64; shape.len()];
    for (k, &v) in flat.iter().enumerate() {
        let mut r = k as u64;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        if !v.is_zero() {
            e.push(&idx, v).expect("dense entry in bounds");
        }
    }
    e
}

/// `arith.constant sparse<[coordinates], [values]>`: the entries as listed.
pub fn sparse<V: Value + ValueVecAccess>(shape: &[u64], coords: &[&[u64]], vals: &[V]) -> Entries {
    assert_eq!(
        coords.len(),
        vals.len(),
        "sparse constant: one value per coordinate"
    );
    let mut e = Entries::new(shape.to_vec(), V::TYPE);
    for (c, &v) in coords.iter().zip(vals) {
        e.push(c, v).expect("sparse constant entry in bounds");
    }
    e
}

/// Parses encoding text exactly as MLIR writes it (with its `#NAME = ` line).
pub fn encoding(text: &str) -> Result<Encoding, String> {
    text.parse::<Encoding>()
        .map_err(|e| format!("encoding does not parse: {e}"))
}

/// A transcribed CHECK block as lines. Blank lines are skipped and each line is trimmed.
///
/// Older revisions of MLIR's printer ended every array with a trailing `,  )` and their
/// tests check only a prefix of the line (`pos[1] : ( 0, 2, 2, 2, 5,`); newer tests check a
/// prefix without the closing parenthesis (`pos[1] : ( 0, 2`). The current printer, which
/// ours follows (conformance/README.md), writes `pos[1] : ( 0, 2, 2, 2, 5 )`. So an array line
/// that does not end in `)` is completed here: a trailing `,` is dropped and ` )` appended.
/// The comparison stays exact, so a prefix that left out elements would fail, not pass.
pub fn check_lines(block: &str) -> Vec<String> {
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let is_array = l.starts_with("values : (")
                || ((l.starts_with("pos[") || l.starts_with("crd[")) && l.contains("] : ("));
            if is_array && !l.ends_with(')') {
                format!("{} )", l.trim_end_matches(',').trim_end())
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// Collects every golden's outcome so that one run reports all mismatches.
pub struct Goldens {
    checked: usize,
    failures: Vec<String>,
}

impl Goldens {
    pub fn new() -> Goldens {
        Goldens {
            checked: 0,
            failures: Vec::new(),
        }
    }

    /// Converts `entries` into the encoding `text` with the default options.
    pub fn convert(&mut self, label: &str, entries: &Entries, text: &str) -> Option<Tensor> {
        let result = encoding(text).and_then(|enc| {
            convert_to(entries, &enc, &ConvertOptions::default())
                .map_err(|e| format!("conversion failed: {e}"))
        });
        match result {
            Ok(t) => Some(t),
            Err(e) => {
                self.checked += 1;
                self.failures
                    .push(format!("{label}\n  encoding: {}\n  {e}", one_line(text)));
                None
            }
        }
    }

    /// Converts and compares `print_storage()` with the CHECK block, line for line.
    pub fn print(
        &mut self,
        label: &str,
        entries: &Entries,
        text: &str,
        block: &str,
    ) -> Option<Tensor> {
        let t = self.convert(label, entries, text)?;
        self.compare_print(label, &t, text, block);
        Some(t)
    }

    /// Compares an existing tensor's print with the CHECK block.
    pub fn compare_print(&mut self, label: &str, t: &Tensor, text: &str, block: &str) {
        self.checked += 1;
        let want = check_lines(block);
        let got: Vec<String> = t.print_storage().lines().map(str::to_string).collect();
        if got != want {
            let mut msg = format!("{label}\n  encoding: {}\n", one_line(text));
            let n = want.len().max(got.len());
            for i in 0..n {
                let w = want.get(i).map(String::as_str).unwrap_or("<none>");
                let g = got.get(i).map(String::as_str).unwrap_or("<none>");
                if w == g {
                    msg.push_str(&format!("    same: {w}\n"));
                } else {
                    msg.push_str(&format!("  - want: {w}\n  + got:  {g}\n"));
                }
            }
            self.failures.push(msg);
        }
    }

    /// `vector.print` goldens of raw arrays: each `(name, "( a, b, ... )")` must equal our
    /// print line of that array (`crd[2]`, `values`); the name `nse` compares the count.
    pub fn arrays(&mut self, label: &str, t: &Tensor, text: &str, want: &[(&str, &str)]) {
        self.checked += 1;
        let printed = t.print_storage();
        let mut msg = String::new();
        for (name, w) in want {
            let got = if *name == "nse" {
                Some(t.nse().to_string())
            } else {
                let prefix = format!("{name} : ");
                printed
                    .lines()
                    .find_map(|l| l.strip_prefix(prefix.as_str()))
                    .map(str::to_string)
            };
            match got {
                Some(g) if g == *w => {}
                Some(g) => msg.push_str(&format!("  {name}\n  - want: {w}\n  + got:  {g}\n")),
                None => msg.push_str(&format!(
                    "  {name}\n  - want: {w}\n  + got:  <no such array>\n"
                )),
            }
        }
        if !msg.is_empty() {
            self.failures.push(format!(
                "{label}\n  encoding: {}\n{msg}  full print:\n{printed}",
                one_line(text)
            ));
        }
    }

    /// Records that a conversion must be refused (a documented difference): the text parses
    /// (batch levels "parse and print", ENCODING.md "Not yet") and converting into it fails
    /// with an error containing `reason`.
    pub fn refused(&mut self, label: &str, entries: &Entries, text: &str, reason: &str) {
        self.checked += 1;
        let outcome = encoding(text).and_then(|enc| {
            match convert_to(entries, &enc, &ConvertOptions::default()) {
                Ok(t) => Err(format!("expected a refusal, got:\n{}", t.print_storage())),
                Err(e) if e.to_string().contains(reason) => Ok(()),
                Err(e) => Err(format!("refused, but not with \"{reason}\": {e}")),
            }
        });
        if let Err(e) = outcome {
            self.failures
                .push(format!("{label}\n  encoding: {}\n  {e}", one_line(text)));
        }
    }

    /// Panics with every mismatch; checks that at least `min` goldens ran.
    pub fn finish(self, min: usize) {
        assert!(
            self.failures.is_empty(),
            "{} of {} MLIR goldens differ:\n\n{}",
            self.failures.len(),
            self.checked,
            self.failures.join("\n")
        );
        assert!(
            self.checked >= min,
            "only {} goldens ran, want at least {min}",
            self.checked
        );
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `( a, b, ... )` as MLIR prints a vector.
pub fn list<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        return "( )".to_string();
    }
    let body: Vec<String> = items.iter().map(|x| x.to_string()).collect();
    format!("( {} )", body.join(", "))
}

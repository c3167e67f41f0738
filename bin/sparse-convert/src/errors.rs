//! Conversion errors in the user's terms: the core numbers rows and entries from 0 (the
//! conformance files compare its messages exactly); a Matrix Market or `.tns` file counts
//! from 1, so messages about such a file give the file's own numbers too, and name the
//! flag that changes the outcome.

use sptk_tensor::ConvertError;

/// `e` as the command line reports it: named as `input` where known, in the file's own
/// numbers when it counts from 1 (`one_based`), with the reader's `hint`.
pub fn conversion(
    input: Option<&str>,
    e: ConvertError,
    one_based: bool,
    hint: Option<&str>,
) -> anyhow::Error {
    let text = e.to_string();
    let text = match &e {
        ConvertError::MemoryLimit(_) => format!(
            "{text} (raise it with --memory-limit SIZE, or choose an encoding whose arrays grow with the entries only: COO, DCSR, DCSC, CSF)"
        ),
        ConvertError::GroupOverflow(_) => {
            let text = text.replace("(prune to keep the largest)", "(--prune keeps the largest)");
            if one_based {
                in_file_rows(&text)
            } else {
                text
            }
        }
        ConvertError::RowTooLong { .. } if one_based => in_file_rows(&text),
        ConvertError::SumOverflow { coord } | ConvertError::Dtype { coord, .. } if one_based => {
            format!("{text}; in the file, counting from 1: {}", one_based_coord(coord))
        }
        _ => match e.explanation() {
            Some(more) => format!("{text}: {more}"),
            None => text,
        },
    };
    let text = match hint {
        Some(hint) => format!("{text}; {hint}"),
        None => text,
    };
    anyhow::Error::msg(match input {
        Some(input) => format!("{input}: {text}"),
        None => text,
    })
}

/// `row 13` at the start of `text` as `row 14 of the file (0-based row 13)`; an n:m
/// message about an entry of a tensor gets the file's coordinates appended.
fn in_file_rows(text: &str) -> String {
    if let Some(rest) = text.strip_prefix("row ") {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if let Ok(row) = rest[..digits].parse::<u64>() {
            return format!(
                "row {} of the file (0-based row {row}){}",
                row.saturating_add(1),
                &rest[digits..]
            );
        }
    }
    if let Some(rest) = text.strip_prefix("entry (") {
        if let Some(end) = rest.find(')') {
            let parts: Vec<String> = rest[..end]
                .split(", ")
                .map(|p| {
                    p.parse::<u64>()
                        .map_or(p.to_string(), |x| (x + 1).to_string())
                })
                .collect();
            return format!(
                "{text}; in the file, counting from 1: entry ({})",
                parts.join(", ")
            );
        }
    }
    text.to_string()
}

fn one_based_coord(coord: &[u64]) -> String {
    let parts: Vec<String> = coord
        .iter()
        .map(|c| c.saturating_add(1).to_string())
        .collect();
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_given_in_the_file_numbering_too() {
        let e = ConvertError::RowTooLong {
            row: 13,
            entries: 9,
            k: 8,
        };
        assert_eq!(
            conversion(None, e.clone(), true, None).to_string(),
            "row 14 of the file (0-based row 13) has 9 entries; ELL:8 holds at most 8 per row"
        );
        assert_eq!(
            conversion(None, e, false, None).to_string(),
            "row 13 has 9 entries; ELL:8 holds at most 8 per row"
        );
        let g = ConvertError::GroupOverflow(
            "row 2, group 0 (columns 0..3) has 3 nonzeros; structured[2, 4] holds at most 2 (prune to keep the largest)".into(),
        );
        assert_eq!(
            conversion(None, g, true, None).to_string(),
            "row 3 of the file (0-based row 2), group 0 (columns 0..3) has 3 nonzeros; structured[2, 4] holds at most 2 (--prune keeps the largest)"
        );
        let d = ConvertError::SumOverflow { coord: vec![0, 4] };
        assert_eq!(
            conversion(None, d, true, None).to_string(),
            "duplicates at (0, 4) overflow the value type when summed; in the file, counting from 1: (1, 5)"
        );
    }
}

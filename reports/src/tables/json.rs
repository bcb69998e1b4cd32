//! `summary.json`: `summary.csv` for machines, one object per scenario ×
//! detector with the CSV's columns as keys. A cell that is a finite number
//! is a JSON number (written exactly as in the CSV), an empty cell is
//! `null`, anything else a string. Built from the CSV's own rows, so the two
//! can never disagree.

use std::fmt::Write as _;

/// The JSON array of the rows of a CSV table (`header` first).
pub fn rows_to_json(csv_text: &str) -> Result<String, csv::Error> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
    let mut out = String::from("[\n");
    for (i, record) in reader.records().enumerate() {
        let record = record?;
        out.push_str(if i == 0 { "  {" } else { ",\n  {" });
        for (k, (key, cell)) in header.iter().zip(record.iter()).enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}: {}", string(key), value(cell));
        }
        out.push('}');
    }
    out.push_str("\n]\n");
    Ok(out)
}

fn value(cell: &str) -> String {
    if cell.is_empty() {
        return "null".into();
    }
    // A CSV number is written as JSON accepts it (no leading '+', '.', 'inf').
    let numeric = cell.parse::<f64>().is_ok_and(f64::is_finite)
        && cell
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | 'E'))
        && !cell.starts_with('.')
        && !cell.ends_with('.');
    if numeric {
        cell.to_string()
    } else {
        string(cell)
    }
}

/// A JSON string literal.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_objects_with_numbers_nulls_and_strings() {
        let csv =
            "scenario,detector,p50_ms,missed,note\ncrash \"a\",phi,2.5,0,\nb,x\\y,-1e3,7,1.\n";
        assert_eq!(
            rows_to_json(csv).unwrap(),
            "[\n  {\"scenario\": \"crash \\\"a\\\"\", \"detector\": \"phi\", \"p50_ms\": 2.5, \"missed\": 0, \"note\": null},\n  {\"scenario\": \"b\", \"detector\": \"x\\\\y\", \"p50_ms\": -1e3, \"missed\": 7, \"note\": \"1.\"}\n]\n"
        );
        assert_eq!(rows_to_json("a,b\n").unwrap(), "[\n\n]\n");
    }
}

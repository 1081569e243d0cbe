//! The uploaded CSV file: one transaction ID per row, an optional header row, at most
//! `reporting.max_ids_per_upload` IDs, no duplicates. Every problem is named with its row.

/// Header cells recognised as a header row (compared case-insensitively, spaces and `_` ignored).
const HEADERS: &[&str] = &[
    "transactionid",
    "transactionids",
    "id",
    "transactionnumber",
    "reference",
];

fn is_header(cell: &str) -> bool {
    let folded: String = cell
        .chars()
        .filter(|c| *c != '_' && *c != ' ' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    HEADERS.contains(&folded.as_str())
}

/// A transaction ID goes into a comma-separated query parameter and a goAML
/// `transactionnumber`: 1–100 characters, no commas, whitespace or control characters.
pub fn valid_id(id: &str) -> bool {
    let n = id.chars().count();
    (1..=100).contains(&n)
        && !id
            .chars()
            .any(|c| c == ',' || c.is_whitespace() || c.is_control())
}

/// The IDs of a CSV body, in file order, or every problem found (each naming its row).
pub fn parse(body: &[u8], max_ids: usize) -> Result<Vec<String>, Vec<String>> {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text.strip_prefix('\u{feff}').unwrap_or(text),
        Err(e) => return Err(vec![format!("the file is not UTF-8 text ({e})")]),
    };
    // Row by row, so every problem names the line it is on (blank lines included).
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(line.as_bytes());
        let mut cells: Vec<String> = match reader.records().next() {
            None => Vec::new(),
            Some(Ok(record)) => record.iter().map(str::to_owned).collect(),
            Some(Err(e)) => return Err(vec![format!("row {} is not valid CSV: {e}", n + 1)]),
        };
        while cells.last().is_some_and(String::is_empty) {
            cells.pop();
        }
        rows.push((n + 1, cells));
    }
    while rows.last().is_some_and(|(_, cells)| cells.is_empty()) {
        rows.pop();
    }
    let mut problems = Vec::new();
    if rows
        .first()
        .is_some_and(|(_, cells)| cells.len() == 1 && is_header(&cells[0]))
    {
        rows.remove(0);
    }
    let mut ids: Vec<String> = Vec::with_capacity(rows.len());
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (row, cells) in &rows {
        match cells.as_slice() {
            [] => problems.push(format!("row {row} is empty")),
            [id] if !valid_id(id) => problems.push(format!(
                "row {row}: '{}' is not a transaction ID (1-100 characters, no commas, spaces or control characters)",
                id.chars().take(40).collect::<String>()
            )),
            [id] => {
                if let Some(first) = seen.get(id) {
                    problems.push(format!(
                        "transaction ID '{id}' appears more than once (rows {first} and {row})"
                    ));
                } else {
                    seen.insert(id.clone(), *row);
                    ids.push(id.clone());
                }
            }
            many => problems.push(format!(
                "row {row} has {} values; one transaction ID per row",
                many.len()
            )),
        }
    }
    let count = rows.len();
    if count > max_ids {
        problems.insert(
            0,
            format!("the file has {count} transaction IDs; at most {max_ids} per upload"),
        );
    }
    if count == 0 {
        problems.push("the file has no transaction IDs".to_owned());
    }
    if problems.is_empty() {
        Ok(ids)
    } else {
        problems.truncate(20);
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_with_or_without_a_header_and_trailing_blank_lines_are_ignored() {
        assert_eq!(
            parse(b"transactionId\r\nTX-1\r\nTX-2,\r\n\r\n", 500),
            Ok(vec!["TX-1".to_owned(), "TX-2".to_owned()])
        );
        assert_eq!(parse(b"TX-9\n", 500), Ok(vec!["TX-9".to_owned()]));
    }

    #[test]
    fn too_many_ids_duplicates_and_malformed_rows_are_each_named() {
        let many: String = (0..501).map(|i| format!("TX-{i}\n")).collect();
        let problems = parse(many.as_bytes(), 500).expect_err("too many");
        assert!(
            problems[0].contains("501 transaction IDs; at most 500"),
            "{problems:?}"
        );

        let problems = parse(b"TX-1\nTX-2\nTX-1\n", 500).expect_err("duplicate");
        assert_eq!(
            problems,
            ["transaction ID 'TX-1' appears more than once (rows 1 and 3)"]
        );

        let problems = parse(b"TX-1,TX-2\n\nTX 3\n", 500).expect_err("malformed");
        assert_eq!(
            problems,
            [
                "row 1 has 2 values; one transaction ID per row",
                "row 2 is empty",
                "row 3: 'TX 3' is not a transaction ID (1-100 characters, no commas, spaces or control characters)"
            ]
        );

        let problems = parse(b"", 500).expect_err("empty");
        assert_eq!(problems, ["the file has no transaction IDs"]);
        let problems = parse(&[0xff, 0xfe, 0x00], 500).expect_err("binary");
        assert!(problems[0].contains("not UTF-8"));
    }
}

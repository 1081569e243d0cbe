//! List loaders: turn one publisher's file into [`ListEntity`] values.
//!
//! This module owns parsing only. It reads bytes (from disk or a download, the caller decides) in
//! one of the [`ListFormat`]s and answers a [`LoadedSource`]: the entities and, when the file
//! carries one, the publisher's date. It does not read files, name lists, normalise names or build
//! indexes: the list manager (`manager.rs`) reads the configured paths or URLs, calls [`load`],
//! fills every `ListEntity::id` as `<list name>:<external_id>`, and hands the entities to the
//! index (`index.rs`), which normalises names.
//!
//! Data flow: `SourceBytes` → [`load`] → one format module (`ofac`, `un`, `uk`, `opensanctions`,
//! `custom`) → `ListEntity { external_id, name as published, aliases, countries (ISO alpha-2 via
//! [`country`]), birth dates, … }` → `LoadedSource`.
//!
//! Every loader is strict: a file that is broken or cut short is an error ([`LoadError`]) naming
//! the line or byte, never a silently smaller list, and a file without entities is
//! [`LoadError::Empty`]. Records are never skipped, with three documented exceptions: OFAC CSV
//! rows whose first field is not a number (the publisher's trailing 0x1A line), OFAC alias,
//! address and comment rows for entries the primary file does not contain (the companion files
//! are often a different day's snapshot), and UK designations published without any name
//! (nothing to screen; logged). Values a loader cannot interpret inside an otherwise valid
//! publisher record (a country spelling no table knows, a free-text date of birth) are dropped;
//! in the operator's own lists (`custom`) they are errors.

pub mod country;
mod custom;
mod ofac;
mod opensanctions;
mod uk;
mod un;
mod xml;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::entity::{Alias, ListEntity, LoadedSource, NameQuality};

/// Why a list could not be loaded. Messages name the line (CSV, JSON lines) or byte offset (XML).
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("csv error at line {line}: {message}")]
    Csv { line: u64, message: String },
    #[error("xml error at byte {position}: {message}")]
    Xml { position: u64, message: String },
    #[error("json error at line {line}: {message}")]
    Json { line: usize, message: String },
    /// The file ends before its last record or its document is complete.
    #[error("file is truncated: {0}")]
    Truncated(String),
    /// Two records of a list the operator maintains share an id.
    #[error("duplicate id `{id}` at line {line}")]
    DuplicateId { id: String, line: u64 },
    /// The file parsed but holds no entities.
    #[error("list has no entities")]
    Empty,
    #[error("file is not valid utf-8")]
    Utf8,
}

/// The file format of a list (`format` in `[[screening.lists]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListFormat {
    /// OFAC legacy CSV: `sdn.csv` (or `cons_prim.csv`) with optional `alt`, `add` and
    /// `comments` companions.
    OfacCsv,
    /// OFAC `sdn.xml` (`sdnList` / `sdnEntry`).
    OfacXml,
    /// UN Security Council consolidated list XML.
    UnXml,
    /// UK FCDO "UK Sanctions List" summary CSV.
    UkCsv,
    /// OpenSanctions FollowTheMoney entities, JSON lines.
    FtmJson,
    /// OpenSanctions Senzing export, JSON lines.
    SenzingJson,
    /// An operator's own list: CSV with a header (`id,name,type,aliases,countries,birth_date,remarks`).
    CustomCsv,
    /// An operator's own list: a JSON array or JSON lines of `{"id","name",…}` objects.
    CustomJson,
}

impl ListFormat {
    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            ListFormat::OfacCsv => "ofac-csv",
            ListFormat::OfacXml => "ofac-xml",
            ListFormat::UnXml => "un-xml",
            ListFormat::UkCsv => "uk-csv",
            ListFormat::FtmJson => "ftm-json",
            ListFormat::SenzingJson => "senzing-json",
            ListFormat::CustomCsv => "custom-csv",
            ListFormat::CustomJson => "custom-json",
        }
    }
}

/// The bytes of one list. `alt`, `add` and `comments` are OFAC CSV's companion files (aliases,
/// addresses, remarks overflow); other formats ignore them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SourceBytes<'a> {
    pub primary: &'a [u8],
    pub alt: Option<&'a [u8]>,
    pub add: Option<&'a [u8]>,
    pub comments: Option<&'a [u8]>,
}

impl<'a> SourceBytes<'a> {
    /// A single-file source.
    pub fn new(primary: &'a [u8]) -> Self {
        SourceBytes {
            primary,
            ..SourceBytes::default()
        }
    }
}

/// Parses one list. Entities come back with an empty `id` (the manager fills it) and their
/// publisher's `external_id`.
pub fn load(format: ListFormat, src: &SourceBytes<'_>) -> Result<LoadedSource, LoadError> {
    let loaded = match format {
        ListFormat::OfacCsv => ofac::load_csv(src)?,
        ListFormat::OfacXml => ofac::load_xml(src.primary)?,
        ListFormat::UnXml => un::load(src.primary)?,
        ListFormat::UkCsv => uk::load(src.primary)?,
        ListFormat::FtmJson => opensanctions::load_ftm(src.primary)?,
        ListFormat::SenzingJson => opensanctions::load_senzing(src.primary)?,
        ListFormat::CustomCsv => custom::load_csv(src.primary)?,
        ListFormat::CustomJson => custom::load_json(src.primary)?,
    };
    if loaded.entities.is_empty() {
        return Err(LoadError::Empty);
    }
    Ok(loaded)
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the format modules.

/// The text of a file: UTF-8 without a byte-order mark. A multi-byte character cut at the very end
/// means the file was cut short.
fn text(bytes: &[u8]) -> Result<&str, LoadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| match e.error_len() {
        None => LoadError::Truncated("the file ends inside a utf-8 character".into()),
        Some(_) => LoadError::Utf8,
    })
}

/// `bytes` without a UTF-8 byte-order mark (for the CSV reader, which validates UTF-8 per record).
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// A CSV record and the line it starts on.
struct CsvRow {
    line: u64,
    record: csv::StringRecord,
}

/// Reads every record of a CSV file (no header handling, any field count) with its line number.
fn csv_rows(bytes: &[u8]) -> Result<Vec<CsvRow>, LoadError> {
    let mut rows = Vec::new();
    for_each_csv_row(bytes, |row, _| {
        rows.push(CsvRow {
            line: row.line,
            record: row.record.clone(),
        });
        Ok(())
    })?;
    Ok(rows)
}

/// Streams the records of a CSV file (no header handling, any field count) to `on_row` with
/// their line numbers and whether each is the file's last record, reusing two buffers.
fn for_each_csv_row(
    bytes: &[u8],
    mut on_row: impl FnMut(&CsvRow, bool) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    // Quotes come in pairs (an escaped quote is doubled), so an odd count means the file ends
    // inside a quoted field, which the CSV reader would accept as a complete last field.
    if bytes.iter().filter(|&&b| b == b'"').count() % 2 == 1 {
        return Err(LoadError::Truncated(
            "the file ends inside a quoted field".into(),
        ));
    }
    let input = without_bom(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut lines = LineCounter::default();
    let mut read = |row: &mut CsvRow| -> Result<bool, LoadError> {
        match reader.read_record(&mut row.record) {
            Ok(true) => {
                row.line = row
                    .record
                    .position()
                    .map_or(0, |p| lines.line_at(input, p.byte()));
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                let line = e.position().map_or(0, |p| lines.line_at(input, p.byte()));
                let message = match e.kind() {
                    csv::ErrorKind::Utf8 { err, .. } => {
                        format!("invalid utf-8 in field {}", err.field() + 1)
                    }
                    _ => e.to_string(),
                };
                Err(LoadError::Csv { line, message })
            }
        }
    };
    let mut current = CsvRow {
        line: 0,
        record: csv::StringRecord::new(),
    };
    let mut next = CsvRow {
        line: 0,
        record: csv::StringRecord::new(),
    };
    if !read(&mut current)? {
        return Ok(());
    }
    loop {
        let more = read(&mut next)?;
        on_row(&current, !more)?;
        if !more {
            return Ok(());
        }
        std::mem::swap(&mut current, &mut next);
    }
}

/// Line numbers from byte offsets, counted incrementally. (The CSV reader's own line count is one
/// short after a CRLF terminator: a record's position is taken before the `\n` is consumed.)
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: u64,
}

impl LineCounter {
    /// The line of the first character of a record starting at `offset` (offsets only grow).
    fn line_at(&mut self, input: &[u8], offset: u64) -> u64 {
        let mut offset = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(input.len());
        // Skip the rest of the previous record's terminator.
        while offset < input.len() && matches!(input[offset], b'\r' | b'\n') {
            offset += 1;
        }
        if offset < self.offset {
            return self.line + 1;
        }
        self.line += input[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.offset = offset;
        self.line + 1
    }
}

/// The error for a CSV row with the wrong number of fields: the last row of a file cut short, or a
/// malformed row anywhere else.
fn field_count_error(row: &CsvRow, expected: usize, is_last: bool) -> LoadError {
    let found = row.record.len();
    if is_last {
        LoadError::Truncated(format!(
            "the last row (line {}) has {found} fields where {expected} are expected",
            row.line
        ))
    } else {
        LoadError::Csv {
            line: row.line,
            message: format!("{found} fields where {expected} are expected"),
        }
    }
}

/// A field's value, or `None` when empty (after trimming).
fn non_empty(value: &str) -> Option<&str> {
    let value = value.trim();
    (!value.is_empty()).then_some(value)
}

fn push_unique(values: &mut Vec<String>, value: &str) {
    let value = value.trim();
    if !value.is_empty() && !values.iter().any(|v| v == value) {
        values.push(value.to_owned());
    }
}

/// Adds an alias unless it is empty, the primary name, or already there (case-insensitively); a
/// strong spelling upgrades an existing weak one.
fn push_alias(entity: &mut ListEntity, name: &str, quality: NameQuality) {
    let name = name.trim();
    if name.is_empty() || same_name(name, &entity.name) {
        return;
    }
    if let Some(existing) = entity.aliases.iter_mut().find(|a| same_name(&a.name, name)) {
        if quality == NameQuality::Strong {
            existing.quality = NameQuality::Strong;
        }
        return;
    }
    entity.aliases.push(Alias {
        name: name.to_owned(),
        quality,
    });
}

/// Equal ignoring case (Unicode lower-casing), without allocating.
fn same_name(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// Resolves a country name or code and adds its alpha-2 code; answers whether it resolved.
fn push_country(entity: &mut ListEntity, value: &str) -> bool {
    match country::country_code(value) {
        Some(code) => {
            if !entity.countries.contains(&code) {
                entity.countries.push(code);
            }
            true
        }
        None => false,
    }
}

/// Joins the non-empty (trimmed) parts with `separator`.
fn join_non_empty<'s>(parts: impl IntoIterator<Item = &'s str>, separator: &str) -> String {
    let mut out = String::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(separator);
        }
        out.push_str(part);
    }
    out
}

/// Joins the non-empty parts with ", ".
fn join_parts<'s>(parts: impl IntoIterator<Item = &'s str>) -> String {
    join_non_empty(parts, ", ")
}

/// Joins the non-empty parts with single spaces.
fn join_words<'s>(parts: impl IntoIterator<Item = &'s str>) -> String {
    join_non_empty(parts, " ")
}

/// The most years a range of birth years expands to; wider ranges keep only their ends.
const MAX_RANGE_YEARS: u16 = 10;

fn year(value: &str) -> Option<u16> {
    let value = value.trim();
    if value.len() != 4 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year: u16 = value.parse().ok()?;
    (1000..=2200).contains(&year).then_some(year)
}

/// Every year from `from` to `to` (ten at most; a wider range gives its two ends).
fn year_range(from: u16, to: u16) -> Vec<String> {
    let (from, to) = if from <= to { (from, to) } else { (to, from) };
    if to - from < MAX_RANGE_YEARS {
        (from..=to).map(|y| y.to_string()).collect()
    } else {
        vec![from.to_string(), to.to_string()]
    }
}

fn month_number(name: &str) -> Option<u8> {
    let lower = name.trim().trim_end_matches('.').to_ascii_lowercase();
    let prefix = lower.get(..3)?;
    let month = match prefix {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    Some(month)
}

/// A single date as OFAC writes it (`01 Jan 1960`, `Jan 1960`, `1960`) or ISO (`1960-01-01`,
/// `1960-01`): `YYYY-MM-DD`, `YYYY-MM` or `YYYY`, with the year as a number for ranges.
fn parse_date(value: &str) -> Option<(String, u16)> {
    let value = value.trim().trim_end_matches('.');
    if let Some(y) = year(value) {
        return Some((y.to_string(), y));
    }
    if let Some(iso) = iso_date(value) {
        let y = year(&iso[..4])?;
        return Some((iso, y));
    }
    let parts: Vec<&str> = value.split_whitespace().collect();
    match parts.as_slice() {
        [day, month, y] => {
            let day: u8 = day.parse().ok()?;
            let month = month_number(month)?;
            let y = year(y)?;
            (1..=31)
                .contains(&day)
                .then(|| (format!("{y:04}-{month:02}-{day:02}"), y))
        }
        [month, y] => {
            let month = month_number(month)?;
            let y = year(y)?;
            Some((format!("{y:04}-{month:02}"), y))
        }
        _ => None,
    }
}

/// `YYYY-MM-DD` or `YYYY-MM` (the first 10 characters of a timestamp count), checked.
fn iso_date(value: &str) -> Option<String> {
    let value = value.trim();
    let b = value.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() >= 7 && digits(0..4) && b[4] == b'-' && digits(5..7) {
        let month: u8 = value[5..7].parse().ok()?;
        if !(1..=12).contains(&month) {
            return None;
        }
        if b.len() >= 10 && b[7] == b'-' && digits(8..10) {
            let day: u8 = value[8..10].parse().ok()?;
            if !(1..=31).contains(&day) || (b.len() > 10 && b[10].is_ascii_digit()) {
                return None;
            }
            return Some(value[..10].to_owned());
        }
        if b.len() == 7 {
            return Some(value.to_owned());
        }
    }
    None
}

/// A date of birth as the publishers write it, possibly approximate or a range: `01 Jan 1960`,
/// `1960`, `circa 1960`, `1958 to 1960`, `01 Jan 1958 to 31 Dec 1960`, `1958-1960`, `1960-04-28`.
/// Ranges give every year (see [`year_range`]), or the month when both ends fall in one month.
fn parse_birth_dates(value: &str) -> Vec<String> {
    let value = value.trim().trim_end_matches('.');
    let lower = value.to_ascii_lowercase();
    let value = if lower.starts_with("circa ") {
        &value[6..]
    } else if lower.starts_with("approximately ") {
        &value[14..]
    } else {
        value
    };
    let range = value.split_once(" to ").or_else(|| {
        // `1958-1960`: two bare years.
        value
            .split_once('-')
            .filter(|(a, b)| year(a).is_some() && year(b).is_some())
    });
    if let Some((from, to)) = range {
        let (Some((from_text, from_year)), Some((to_text, to_year))) =
            (parse_date(from), parse_date(to))
        else {
            return Vec::new();
        };
        if from_text == to_text {
            return vec![from_text];
        }
        if from_year == to_year
            && from_text.len() >= 7
            && to_text.len() >= 7
            && from_text[..7] == to_text[..7]
        {
            return vec![from_text[..7].to_owned()];
        }
        return year_range(from_year, to_year);
    }
    parse_date(value).map(|(d, _)| vec![d]).unwrap_or_default()
}

/// Lower-case gender, `male`/`female` for the usual spellings.
fn gender(value: &str) -> Option<String> {
    let lower = value.trim().to_ascii_lowercase();
    match lower.as_str() {
        "" => None,
        "m" | "male" => Some("male".into()),
        "f" | "female" => Some("female".into()),
        _ => Some(lower),
    }
}

/// The error of a load the test expects to fail (without printing a whole list when it does not).
#[cfg(test)]
fn refused<T>(result: Result<T, LoadError>) -> LoadError {
    match result {
        Ok(_) => panic!("the load was expected to fail"),
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn birth_dates_in_the_publishers_spellings() {
        assert_eq!(parse_birth_dates("01 Jan 1960"), ["1960-01-01"]);
        assert_eq!(parse_birth_dates("1960"), ["1960"]);
        assert_eq!(parse_birth_dates("circa 1960"), ["1960"]);
        assert_eq!(parse_birth_dates("Sep 1971"), ["1971-09"]);
        assert_eq!(parse_birth_dates("1958 to 1960"), ["1958", "1959", "1960"]);
        assert_eq!(parse_birth_dates("circa 1955-1958").len(), 4);
        assert_eq!(parse_birth_dates("01 Mar 1970 to 31 Mar 1970"), ["1970-03"]);
        assert_eq!(
            parse_birth_dates("01 Jan 1960 to 31 Dec 1962"),
            ["1960", "1961", "1962"]
        );
        assert_eq!(parse_birth_dates("1940 to 1970"), ["1940", "1970"]);
        assert_eq!(parse_birth_dates("1960-04-28"), ["1960-04-28"]);
        assert!(parse_birth_dates("unknown").is_empty());
        assert!(parse_birth_dates("31 Foo 1960").is_empty());
    }

    #[test]
    fn formats_have_their_config_names() {
        for format in [
            ListFormat::OfacCsv,
            ListFormat::OfacXml,
            ListFormat::UnXml,
            ListFormat::UkCsv,
            ListFormat::FtmJson,
            ListFormat::SenzingJson,
            ListFormat::CustomCsv,
            ListFormat::CustomJson,
        ] {
            let json = serde_json::to_string(&format).expect("serialise");
            assert_eq!(json, format!("\"{}\"", format.as_str()));
            let back: ListFormat = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, format);
        }
    }

    #[test]
    fn an_empty_file_is_empty_in_every_format() {
        for format in [
            ListFormat::OfacCsv,
            ListFormat::OfacXml,
            ListFormat::UnXml,
            ListFormat::UkCsv,
            ListFormat::FtmJson,
            ListFormat::SenzingJson,
            ListFormat::CustomCsv,
            ListFormat::CustomJson,
        ] {
            let err = refused(load(format, &SourceBytes::new(b"")));
            assert!(matches!(err, LoadError::Empty), "{format:?}: {err}");
        }
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let err = refused(load(
            ListFormat::FtmJson,
            &SourceBytes::new(b"{\"id\":\"\xff\"}"),
        ));
        assert!(matches!(err, LoadError::Utf8), "{err}");
    }
}

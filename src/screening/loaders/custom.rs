//! An operator's own list, as CSV or JSON.
//!
//! CSV: a header is required; columns (any order, any case) are `id`, `name`, `type`, `aliases`,
//! `countries`, `birth_date` (or `birthdate`) and `remarks`, of which `id` and `name` are
//! required and an unknown column is an error (a misspelt `aliases` column would otherwise be
//! silently ignored). `aliases`, `countries` and `birth_date` take several values separated by `;`.
//!
//! JSON: a JSON array or JSON lines of `{"id", "name", "type"?, "aliases"?: [..],
//! "countries"?: [..], "birthDate"?, "remarks"?}`; unknown fields are errors.
//!
//! In both, `type` is `individual`, `entity`, `vessel` or `aircraft` (empty: unknown), countries
//! are ISO codes or names, birth dates `YYYY`, `YYYY-MM` or `YYYY-MM-DD`. Every problem is an
//! error naming its line: an empty id or name, a duplicate id, an unknown type, a country no
//! table knows, a malformed date.

use std::collections::HashMap;

use serde::Deserialize;

use super::country::country_code;
use super::opensanctions::json_error;
use super::{
    csv_rows, field_count_error, iso_date, non_empty, push_alias, push_unique, text, year,
    LoadError,
};
use crate::screening::entity::{EntityType, ListEntity, LoadedSource, NameQuality};

/// Where a record came from, for error messages.
#[derive(Clone, Copy)]
enum At {
    Csv(u64),
    Json(usize),
}

impl At {
    fn error(self, message: String) -> LoadError {
        match self {
            At::Csv(line) => LoadError::Csv { line, message },
            At::Json(line) => LoadError::Json { line, message },
        }
    }

    fn line(self) -> u64 {
        match self {
            At::Csv(line) => line,
            At::Json(line) => line as u64,
        }
    }
}

/// One record in either syntax, before validation.
#[derive(Default)]
struct Raw<'r> {
    id: String,
    name: &'r str,
    entity_type: Option<&'r str>,
    aliases: Vec<&'r str>,
    countries: Vec<&'r str>,
    birth_dates: Vec<&'r str>,
    remarks: Option<&'r str>,
}

/// Validates records and builds entities, refusing duplicate ids.
#[derive(Default)]
struct Builder {
    entities: Vec<ListEntity>,
    ids: HashMap<String, u64>,
}

impl Builder {
    fn push(&mut self, raw: Raw<'_>, at: At) -> Result<(), LoadError> {
        let id = raw.id.trim();
        if id.is_empty() {
            return Err(at.error("empty id".into()));
        }
        let Some(name) = non_empty(raw.name) else {
            return Err(at.error(format!("empty name for id `{id}`")));
        };
        if self.ids.insert(id.to_owned(), at.line()).is_some() {
            return Err(LoadError::DuplicateId {
                id: id.to_owned(),
                line: at.line(),
            });
        }
        let entity_type = match raw
            .entity_type
            .and_then(non_empty)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("unknown") => EntityType::Unknown,
            Some("individual" | "person") => EntityType::Individual,
            Some("entity" | "organisation" | "organization" | "company") => EntityType::Entity,
            Some("vessel" | "ship") => EntityType::Vessel,
            Some("aircraft" | "airplane") => EntityType::Aircraft,
            Some(other) => {
                return Err(at.error(format!(
                    "unknown type `{other}` for id `{id}` (individual, entity, vessel, aircraft)"
                )))
            }
        };
        let mut entity = ListEntity {
            external_id: id.to_owned(),
            entity_type,
            name: name.to_owned(),
            remarks: raw.remarks.and_then(non_empty).map(str::to_owned),
            ..ListEntity::default()
        };
        for alias in raw.aliases {
            push_alias(&mut entity, alias, NameQuality::Strong);
        }
        for value in raw.countries.into_iter().filter_map(non_empty) {
            let code = country_code(value)
                .ok_or_else(|| at.error(format!("unknown country `{value}` for id `{id}`")))?;
            if !entity.countries.contains(&code) {
                entity.countries.push(code);
            }
        }
        for value in raw.birth_dates.into_iter().filter_map(non_empty) {
            let valid =
                year(value).is_some() || iso_date(value).is_some_and(|d| d.len() == value.len());
            if !valid {
                return Err(at.error(format!(
                    "birth date `{value}` for id `{id}` is not YYYY, YYYY-MM or YYYY-MM-DD"
                )));
            }
            push_unique(&mut entity.birth_dates, value);
        }
        self.entities.push(entity);
        Ok(())
    }

    fn finish(self) -> LoadedSource {
        LoadedSource {
            entities: self.entities,
            published: None,
        }
    }
}

fn split_list(value: &str) -> Vec<&str> {
    value
        .split(';')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Id,
    Name,
    Type,
    Aliases,
    Countries,
    BirthDate,
    Remarks,
}

pub(super) fn load_csv(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let rows = csv_rows(bytes)?;
    let Some((header, rows)) = rows.split_first() else {
        return Ok(LoadedSource::default());
    };
    let mut columns = Vec::with_capacity(header.record.len());
    for name in header.record.iter() {
        let column = match name.trim().to_ascii_lowercase().as_str() {
            "id" => Column::Id,
            "name" => Column::Name,
            "type" => Column::Type,
            "aliases" => Column::Aliases,
            "countries" => Column::Countries,
            "birth_date" | "birthdate" => Column::BirthDate,
            "remarks" => Column::Remarks,
            other => {
                return Err(LoadError::Csv {
                    line: header.line,
                    message: format!(
                        "unknown column `{other}` (expected id, name, type, aliases, countries, birth_date, remarks)"
                    ),
                })
            }
        };
        if columns.contains(&column) {
            return Err(LoadError::Csv {
                line: header.line,
                message: format!("column `{}` appears twice", name.trim()),
            });
        }
        columns.push(column);
    }
    for required in [Column::Id, Column::Name] {
        if !columns.contains(&required) {
            let name = if required == Column::Id { "id" } else { "name" };
            return Err(LoadError::Csv {
                line: header.line,
                message: format!("the header has no `{name}` column"),
            });
        }
    }

    let mut builder = Builder::default();
    let last = rows.len().saturating_sub(1);
    for (i, row) in rows.iter().enumerate() {
        if row.record.len() != columns.len() {
            return Err(field_count_error(row, columns.len(), i == last));
        }
        let mut raw = Raw::default();
        for (column, value) in columns.iter().zip(row.record.iter()) {
            match column {
                Column::Id => raw.id = value.to_owned(),
                Column::Name => raw.name = value,
                Column::Type => raw.entity_type = Some(value),
                Column::Aliases => raw.aliases = split_list(value),
                Column::Countries => raw.countries = split_list(value),
                Column::BirthDate => raw.birth_dates = split_list(value),
                Column::Remarks => raw.remarks = Some(value),
            }
        }
        builder.push(raw, At::Csv(row.line))?;
    }
    Ok(builder.finish())
}

/// A JSON record's id: a string or a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum JsonId {
    Text(String),
    Number(i64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct JsonRecord {
    id: JsonId,
    name: String,
    #[serde(default, rename = "type")]
    entity_type: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    countries: Vec<String>,
    #[serde(default)]
    birth_date: Option<String>,
    #[serde(default)]
    remarks: Option<String>,
}

pub(super) fn load_json(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let doc = text(bytes)?;
    let chunks = if doc.trim_start().starts_with('[') {
        array_elements(doc)?
    } else {
        doc.lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line))
            .filter(|(_, line)| !line.trim().is_empty())
            .collect()
    };
    let mut builder = Builder::default();
    let last = chunks.len().saturating_sub(1);
    for (i, (line, chunk)) in chunks.into_iter().enumerate() {
        let record: JsonRecord = serde_json::from_str(chunk).map_err(|e| {
            // serde_json counts lines from the start of the chunk.
            json_error(&e, line + e.line().saturating_sub(1), i == last)
        })?;
        let raw = Raw {
            id: match record.id {
                JsonId::Text(id) => id,
                JsonId::Number(n) => n.to_string(),
            },
            name: &record.name,
            entity_type: record.entity_type.as_deref(),
            aliases: record.aliases.iter().map(String::as_str).collect(),
            countries: record.countries.iter().map(String::as_str).collect(),
            birth_dates: record
                .birth_date
                .as_deref()
                .map(split_list)
                .unwrap_or_default(),
            remarks: record.remarks.as_deref(),
        };
        builder.push(raw, At::Json(line))?;
    }
    Ok(builder.finish())
}

/// The top-level elements of a JSON array, each with the line it starts on. Only the structure is
/// scanned here (strings, nesting); each element is parsed on its own so errors name its line.
fn array_elements(doc: &str) -> Result<Vec<(usize, &str)>, LoadError> {
    let bytes = doc.as_bytes();
    let mut elements = Vec::new();
    let mut line = 1usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut start: Option<(usize, usize)> = None;
    let mut closed = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            line += 1;
        }
        if closed {
            if !b.is_ascii_whitespace() {
                return Err(LoadError::Json {
                    line,
                    message: "content after the closing `]`".into(),
                });
            }
            continue;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                if depth == 1 && start.is_none() {
                    start = Some((i, line));
                }
            }
            b'[' | b'{' => {
                if depth == 1 && start.is_none() {
                    start = Some((i, line));
                }
                depth += 1;
            }
            b']' | b'}' => {
                if depth == 0 {
                    return Err(LoadError::Json {
                        line,
                        message: format!("unexpected `{}`", b as char),
                    });
                }
                depth -= 1;
                if depth == 0 {
                    if let Some((s, l)) = start.take() {
                        elements.push((l, &doc[s..i]));
                    }
                    closed = true;
                }
            }
            b',' if depth == 1 => match start.take() {
                Some((s, l)) => elements.push((l, &doc[s..i])),
                None => {
                    return Err(LoadError::Json {
                        line,
                        message: "an empty array element".into(),
                    })
                }
            },
            _ => {
                if depth == 1 && start.is_none() && !b.is_ascii_whitespace() {
                    start = Some((i, line));
                }
            }
        }
    }
    if !closed {
        return Err(LoadError::Truncated("the JSON array is not closed".into()));
    }
    Ok(elements)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screening::entity::Alias;

    const CSV: &str = "id,name,type,aliases,countries,birth_date,remarks
S1,Ivan Petrovich Sidorov,individual,Иван Сидоров;Ivan Sydorov,ru,1961-04-02,test entry
S2,Golden Crescent Trading LLC,entity,Golden Crescent General Trading,United Arab Emirates,,
";

    #[test]
    fn a_custom_csv_loads() {
        let loaded = load_csv(CSV.as_bytes()).expect("loads");
        assert_eq!(loaded.entities.len(), 2);
        let e = &loaded.entities[0];
        assert_eq!(e.external_id, "S1");
        assert!(e.id.is_empty());
        assert_eq!(e.entity_type, EntityType::Individual);
        assert_eq!(
            e.aliases,
            [Alias::strong("Иван Сидоров"), Alias::strong("Ivan Sydorov")]
        );
        assert_eq!(e.countries, ["ru"]);
        assert_eq!(e.birth_dates, ["1961-04-02"]);
        assert_eq!(e.remarks.as_deref(), Some("test entry"));
        assert_eq!(loaded.entities[1].countries, ["ae"]);
        assert_eq!(loaded.entities[1].remarks, None);

        // Only id and name are required, in any order and case.
        let loaded = load_csv(b"Name,ID\nJane Roe,7\n").expect("loads");
        assert_eq!(loaded.entities[0].external_id, "7");
        assert_eq!(loaded.entities[0].entity_type, EntityType::Unknown);
    }

    #[test]
    fn custom_csv_problems_are_errors_with_their_lines() {
        let dup = format!("{CSV}S1,Someone Else,,,,,\n");
        match load_csv(dup.as_bytes()) {
            Err(LoadError::DuplicateId { id, line }) => assert_eq!((id.as_str(), line), ("S1", 4)),
            other => panic!("{:?}", other.map(|l| l.entities.len())),
        }
        let empty_name = "id,name\nA,Alice\nB,  \n";
        assert!(matches!(
            load_csv(empty_name.as_bytes()),
            Err(LoadError::Csv { line: 3, .. })
        ));
        let bad_type = "id,name,type\nA,Alice,persn\n";
        assert!(matches!(
            load_csv(bad_type.as_bytes()),
            Err(LoadError::Csv { line: 2, .. })
        ));
        let bad_country = "id,name,countries\nA,Alice,Atlantis\n";
        assert!(matches!(
            load_csv(bad_country.as_bytes()),
            Err(LoadError::Csv { line: 2, .. })
        ));
        let bad_date = "id,name,birth_date\nA,Alice,2 May 1960\n";
        assert!(matches!(
            load_csv(bad_date.as_bytes()),
            Err(LoadError::Csv { line: 2, .. })
        ));
        let typo = "id,name,alias\nA,Alice,Al\n";
        assert!(matches!(
            load_csv(typo.as_bytes()),
            Err(LoadError::Csv { line: 1, .. })
        ));
        let no_name = "id,aliases\nA,Al\n";
        assert!(matches!(
            load_csv(no_name.as_bytes()),
            Err(LoadError::Csv { line: 1, .. })
        ));
        // Cut in the middle of the last row (as the API test does), and a short row elsewhere.
        let cut = "id,name,type\nS1,Ivan Petrovich Sidorov,individual\nS2,Golden";
        assert!(matches!(
            load_csv(cut.as_bytes()),
            Err(LoadError::Truncated(_))
        ));
        let short = "id,name,type\nS1,Ivan\nS2,Golden,entity\n";
        assert!(matches!(
            load_csv(short.as_bytes()),
            Err(LoadError::Csv { line: 2, .. })
        ));
        assert!(matches!(
            load_csv(b"id,name\n").map(|l| l.entities.len()),
            Ok(0)
        ));
    }

    #[test]
    fn custom_json_as_array_and_as_lines() {
        let array = r#"[
  {"id": "J1", "name": "Jane Roe", "type": "individual", "aliases": ["J. Roe"], "countries": ["GB", "France"], "birthDate": "1970"},
  {"id": 2, "name": "Acme Shipping", "type": "entity", "remarks": "test"}
]"#;
        let loaded = load_json(array.as_bytes()).expect("array loads");
        assert_eq!(loaded.entities.len(), 2);
        assert_eq!(loaded.entities[0].countries, ["gb", "fr"]);
        assert_eq!(loaded.entities[0].birth_dates, ["1970"]);
        assert_eq!(loaded.entities[1].external_id, "2");

        let lines = "{\"id\":\"J1\",\"name\":\"Jane Roe\"}\n\n{\"id\":\"J2\",\"name\":\"John Doe\",\"aliases\":[\"Johnny \\\"D\\\", Jr\"]}\n";
        let loaded = load_json(lines.as_bytes()).expect("lines load");
        assert_eq!(
            loaded.entities[1].aliases,
            [Alias::strong("Johnny \"D\", Jr")]
        );
    }

    #[test]
    fn custom_json_problems_are_errors_with_their_lines() {
        let unknown = "{\"id\":\"J1\",\"name\":\"Jane Roe\"}\n{\"id\":\"J2\",\"name\":\"John Doe\",\"alias\":[\"JD\"]}\n";
        match load_json(unknown.as_bytes()) {
            Err(LoadError::Json { line, message }) => {
                assert_eq!(line, 2);
                assert!(message.contains("unknown field `alias`"), "{message}");
            }
            other => panic!("{:?}", other.map(|l| l.entities.len())),
        }
        let array =
            "[\n {\"id\":\"J1\",\"name\":\"Jane\"},\n {\"id\":\"J2\",\n  \"nmae\":\"John\"}\n]";
        assert!(matches!(
            load_json(array.as_bytes()),
            Err(LoadError::Json { line: 4, .. })
        ));
        let dup = "[{\"id\":\"J1\",\"name\":\"Jane\"},\n{\"id\":\"J1\",\"name\":\"John\"}]";
        assert!(matches!(
            load_json(dup.as_bytes()),
            Err(LoadError::DuplicateId { line: 2, .. })
        ));
        let empty = "{\"id\":\"J1\",\"name\":\" \"}";
        assert!(matches!(
            load_json(empty.as_bytes()),
            Err(LoadError::Json { line: 1, .. })
        ));
        let open = "[{\"id\":\"J1\",\"name\":\"Jane\"},\n{\"id\":\"J2\",";
        assert!(matches!(
            load_json(open.as_bytes()),
            Err(LoadError::Truncated(_))
        ));
        let cut = "{\"id\":\"J1\",\"name\":\"Jane\"}\n{\"id\":\"J2\",\"na";
        assert!(matches!(
            load_json(cut.as_bytes()),
            Err(LoadError::Truncated(_))
        ));
        assert!(matches!(load_json(b"[]").map(|l| l.entities.len()), Ok(0)));
    }
}

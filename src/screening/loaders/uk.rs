//! UK FCDO "UK Sanctions List" summary CSV (header `Unique ID,OFSI Group ID,Name,Regime Name,
//! Type,Designation source,Date Designated,Sanctions Imposed`; columns found by name).
//!
//! Rows sharing an OFSI Group ID are one designation listed under several regimes: they merge
//! into one entity (the first row's Unique ID and name; other names become aliases, every regime
//! a sanction, the earliest date `listed_on`). Rows without a group ID (mostly ships) stand alone.
//! The export carries primary names only: no aliases, dates of birth or countries.
//!
//! The publisher's file holds a few designations with an empty Name (two in the 2025-08-11 export,
//! `BEL0174` and `RUS1467`); a name is the only thing screening can match, so such a designation is
//! left out with a warning in the log rather than failing the whole list.

use std::collections::HashMap;

use super::{csv_rows, field_count_error, non_empty, push_alias, push_unique, LoadError};
use crate::screening::entity::{EntityType, ListEntity, LoadedSource, NameQuality};

const UNIQUE_ID: &str = "unique id";
const GROUP_ID: &str = "ofsi group id";
const NAME: &str = "name";
const REGIME: &str = "regime name";
const TYPE: &str = "type";
const SOURCE: &str = "designation source";
const DATE: &str = "date designated";
const IMPOSED: &str = "sanctions imposed";

/// Column positions, found by header name.
struct Columns {
    unique_id: usize,
    group_id: Option<usize>,
    name: usize,
    regime: Option<usize>,
    entity_type: usize,
    source: Option<usize>,
    date: Option<usize>,
    imposed: Option<usize>,
}

impl Columns {
    fn find(header: &csv::StringRecord, line: u64) -> Result<Columns, LoadError> {
        let position = |name: &str| {
            header.iter().position(|h| {
                h.trim()
                    .trim_start_matches('\u{feff}')
                    .eq_ignore_ascii_case(name)
            })
        };
        let required = |name: &str| {
            position(name).ok_or_else(|| LoadError::Csv {
                line,
                message: format!("the header has no `{name}` column"),
            })
        };
        Ok(Columns {
            unique_id: required(UNIQUE_ID)?,
            group_id: position(GROUP_ID),
            name: required(NAME)?,
            regime: position(REGIME),
            entity_type: required(TYPE)?,
            source: position(SOURCE),
            date: position(DATE),
            imposed: position(IMPOSED),
        })
    }
}

/// `DD-MM-YYYY` (or `DD/MM/YYYY`) → `YYYY-MM-DD`.
fn uk_date(value: &str) -> Option<String> {
    let value = value.trim();
    let mut parts = value.split(['-', '/']);
    let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || year.len() != 4 {
        return None;
    }
    let day: u8 = day.parse().ok()?;
    let month: u8 = month.parse().ok()?;
    let year: u16 = year.parse().ok()?;
    ((1..=31).contains(&day) && (1..=12).contains(&month))
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

pub(super) fn load(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let rows = csv_rows(bytes)?;
    let Some((header, rows)) = rows.split_first() else {
        return Ok(LoadedSource::default());
    };
    let columns = Columns::find(&header.record, header.line)?;
    let fields = header.record.len();

    let mut entities: Vec<ListEntity> = Vec::new();
    // Group key (OFSI Group ID, or the Unique ID when there is none) → entity index.
    let mut groups: HashMap<String, usize> = HashMap::new();
    let mut unique_ids: HashMap<String, u64> = HashMap::new();
    let mut imposed: Vec<Vec<String>> = Vec::new();
    let mut also: Vec<Vec<String>> = Vec::new();
    let last = rows.len().saturating_sub(1);

    for (i, row) in rows.iter().enumerate() {
        if row.record.len() != fields {
            return Err(field_count_error(row, fields, i == last));
        }
        let get = |index: usize| row.record.get(index).and_then(non_empty);
        let line = row.line;
        let Some(unique_id) = get(columns.unique_id) else {
            return Err(LoadError::Csv {
                line,
                message: "empty Unique ID".into(),
            });
        };
        if let Some(first) = unique_ids.insert(unique_id.to_owned(), line) {
            return Err(LoadError::Csv {
                line,
                message: format!("Unique ID {unique_id} repeats line {first}"),
            });
        }
        let entity_type = match get(columns.entity_type)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("individual") => EntityType::Individual,
            Some("entity") => EntityType::Entity,
            Some("ship") => EntityType::Vessel,
            other => {
                return Err(LoadError::Csv {
                    line,
                    message: format!("unknown Type `{}`", other.unwrap_or("")),
                })
            }
        };
        let listed_on = match columns.date.and_then(get) {
            None => None,
            Some(date) => Some(uk_date(date).ok_or_else(|| LoadError::Csv {
                line,
                message: format!("Date Designated `{date}` is not DD-MM-YYYY"),
            })?),
        };
        let name = get(columns.name).unwrap_or("");
        let key = columns
            .group_id
            .and_then(get)
            .map_or_else(|| format!("id:{unique_id}"), |g| format!("group:{g}"));

        let index = match groups.get(&key) {
            Some(&index) => {
                let entity = &mut entities[index];
                if entity.name.is_empty() {
                    entity.name = name.to_owned();
                } else {
                    push_alias(entity, name, NameQuality::Strong);
                }
                also[index].push(unique_id.to_owned());
                if let Some(date) = listed_on {
                    if entity.listed_on.as_ref().is_none_or(|d| &date < d) {
                        entity.listed_on = Some(date);
                    }
                }
                index
            }
            None => {
                groups.insert(key, entities.len());
                entities.push(ListEntity {
                    external_id: unique_id.to_owned(),
                    entity_type,
                    name: name.to_owned(),
                    listed_on,
                    ..ListEntity::default()
                });
                imposed.push(Vec::new());
                also.push(Vec::new());
                entities.len() - 1
            }
        };
        let entity = &mut entities[index];
        if let Some(regime) = columns.regime.and_then(get) {
            push_unique(&mut entity.sanctions, regime);
        }
        if let Some(source) = columns.source.and_then(get) {
            for part in source.split('|') {
                if let Some(part) = non_empty(part) {
                    push_unique(&mut entity.tags, &format!("source:{part}"));
                }
            }
        }
        if let Some(measures) = columns.imposed.and_then(get) {
            for measure in measures.split(',') {
                push_unique(&mut imposed[index], measure);
            }
        }
    }

    let mut nameless = Vec::new();
    let mut out = Vec::with_capacity(entities.len());
    for ((mut entity, imposed), also) in entities.into_iter().zip(imposed).zip(also) {
        if entity.name.is_empty() {
            nameless.push(entity.external_id);
            continue;
        }
        let mut remarks = Vec::new();
        if !imposed.is_empty() {
            remarks.push(format!("Sanctions imposed: {}", imposed.join(", ")));
        }
        if !also.is_empty() {
            remarks.push(format!("Also listed as {}", also.join(", ")));
        }
        if !remarks.is_empty() {
            entity.remarks = Some(remarks.join(". "));
        }
        out.push(entity);
    }
    if !nameless.is_empty() {
        tracing::warn!(
            designations = ?nameless,
            "UK sanctions list: designations without a name are left out (nothing to screen)"
        );
    }
    Ok(LoadedSource {
        entities: out,
        published: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screening::loaders::refused;

    fn uk_bytes() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/lists/uk/UK_Sanctions_List.csv"
        );
        std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_uk_list_loads_grouped_by_ofsi_group() {
        let loaded = load(&uk_bytes()).expect("loads");
        let n = loaded.entities.len();
        let count = |t: EntityType| {
            loaded
                .entities
                .iter()
                .filter(|e| e.entity_type == t)
                .count()
        };
        println!(
            "uk: {n} designations ({} individual, {} entity, {} vessel)",
            count(EntityType::Individual),
            count(EntityType::Entity),
            count(EntityType::Vessel)
        );
        // 5,302 rows: 4,855 in 4,839 OFSI groups plus 447 rows without a group, less the two
        // designations published without a name.
        assert_eq!(n, 5_284);
        assert!(n <= 5_302);
        assert!(loaded
            .entities
            .iter()
            .all(|e| !e.name.is_empty() && e.id.is_empty()));
        assert!(loaded
            .entities
            .iter()
            .all(|e| !e.sanctions.is_empty() && e.listed_on.is_some()));

        let aweys = loaded
            .entities
            .iter()
            .find(|e| e.external_id == "AQD0194")
            .expect("AQD0194");
        assert_eq!(aweys.name, "AWEYS HASSAN DAHIR");
        assert_eq!(aweys.entity_type, EntityType::Individual);
        assert_eq!(aweys.sanctions, ["ISIL (Da'esh) and Al-Qaida", "Somalia"]);
        assert_eq!(aweys.tags, ["source:UN"]);
        assert_eq!(aweys.listed_on.as_deref(), Some("2001-11-09"));
        assert!(loaded.entities.iter().all(|e| e.external_id != "SOM0003"));

        let karaev = loaded
            .entities
            .iter()
            .find(|e| e.external_id == "BEL0005")
            .expect("BEL0005");
        assert_eq!(karaev.name, "Karaev Yuri Khadzimuratovich");
        assert_eq!(karaev.aliases[0].name, "Karayev Yuri Khadzimuratovich");
        assert_eq!(karaev.listed_on.as_deref(), Some("2020-09-29"));

        let first = &loaded.entities[0];
        assert_eq!(first.external_id, "AFG0001");
        assert_eq!(first.entity_type, EntityType::Entity);
        assert_eq!(first.listed_on.as_deref(), Some("2012-06-29"));
        assert!(loaded
            .entities
            .iter()
            .any(|e| e.entity_type == EntityType::Vessel));
        assert!(
            loaded.entities.iter().any(|e| e.tags.len() == 2),
            "UK|UN gives two source tags"
        );
    }

    #[test]
    fn columns_are_found_by_name_and_required() {
        let csv = "Type,Name,Unique ID,Regime Name\nIndividual,Jane Roe,X1,Russia\n";
        let loaded = load(csv.as_bytes()).expect("loads");
        assert_eq!(loaded.entities[0].external_id, "X1");
        assert_eq!(loaded.entities[0].name, "Jane Roe");
        let err = refused(load(b"Unique ID,Type\nX1,Individual\n"));
        assert!(matches!(err, LoadError::Csv { line: 1, .. }), "{err}");
    }

    #[test]
    fn a_cut_file_and_bad_values_are_errors() {
        let bytes = uk_bytes();
        let text = std::str::from_utf8(&bytes).expect("utf-8");
        // Cut in the middle of a row.
        let cut = &text[..text.len() / 2];
        let cut = &cut[..cut.rfind(',').expect("a comma")];
        let err = refused(load(cut.as_bytes()));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
        let bad = "Unique ID,Name,Type\nX1,Jane Roe,Person\n";
        assert!(matches!(
            load(bad.as_bytes()),
            Err(LoadError::Csv { line: 2, .. })
        ));
    }
}

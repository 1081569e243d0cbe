//! UN Security Council consolidated list XML (`CONSOLIDATED_LIST` with `INDIVIDUALS/INDIVIDUAL`
//! and `ENTITIES/ENTITY`), read with quick-xml's streaming reader.
//!
//! external_id is `REFERENCE_NUMBER` (`QDi.001`); the name is FIRST_NAME … FOURTH_NAME joined by
//! spaces (the UN writes them in that order); `NAME_ORIGINAL_SCRIPT` becomes a strong alias and
//! `*_ALIAS` quality `Low` a weak one. The UN writes `na` for an unknown nationality or name part;
//! such values are dropped.

use std::collections::HashSet;

use super::xml::{attribute, walk, Step};
use super::{
    gender, iso_date, join_parts, join_words, non_empty, push_alias, push_country, push_unique,
    text, year, year_range, LoadError,
};
use crate::screening::entity::{EntityType, ListEntity, LoadedSource, NameQuality, Position};

/// The UN's "not available".
pub(super) fn is_null(value: &str) -> bool {
    matches!(value.trim(), "" | "na" | "n/a" | "N/A")
}

/// The leaf values of the group element being read (`INDIVIDUAL_ALIAS`, `NATIONALITY`, …).
#[derive(Default)]
struct Group {
    fields: Vec<(String, String)>,
}

impl Group {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !is_null(v))
    }

    fn all<'g>(&'g self, name: &'g str) -> impl Iterator<Item = &'g str> + 'g {
        self.fields
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !is_null(v))
    }
}

/// The record being read.
#[derive(Default)]
struct Record {
    entity: ListEntity,
    names: [String; 4],
    original_script: Vec<String>,
}

pub(super) fn load(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let doc = text(bytes)?;
    let mut entities = Vec::with_capacity(1_024);
    let mut published = None;
    let mut record: Option<Record> = None;
    let mut group = Group::default();
    let mut seen: HashSet<String> = HashSet::new();

    walk(doc, |step, position| {
        match step {
            Step::Open { path, start } => match path {
                [root] => {
                    if root != "CONSOLIDATED_LIST" {
                        return Err(LoadError::Xml {
                            position,
                            message: format!(
                                "expected a <CONSOLIDATED_LIST> document, found <{root}>"
                            ),
                        });
                    }
                    published = attribute(start, "dateGenerated", position)?;
                }
                [_, _, kind] => {
                    let entity_type = match kind.as_str() {
                        "INDIVIDUAL" => EntityType::Individual,
                        "ENTITY" => EntityType::Entity,
                        _ => return Ok(()),
                    };
                    record = Some(Record {
                        entity: ListEntity {
                            entity_type,
                            ..ListEntity::default()
                        },
                        ..Record::default()
                    });
                }
                [_, _, _, _] => group.fields.clear(),
                _ => {}
            },
            Step::Close { path, text } => {
                let Some(rec) = record.as_mut() else {
                    return Ok(());
                };
                match path {
                    [_, _, _, _, leaf] => group.fields.push((leaf.clone(), text.to_owned())),
                    [_, _, _, field] => close_field(rec, field, text, &group),
                    [_, _, _] => {
                        let Some(rec) = record.take() else {
                            return Ok(());
                        };
                        let entity = finish(rec, position)?;
                        if !seen.insert(entity.external_id.clone()) {
                            return Err(LoadError::Xml {
                                position,
                                message: format!(
                                    "duplicate REFERENCE_NUMBER {}",
                                    entity.external_id
                                ),
                            });
                        }
                        entities.push(entity);
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    })?;
    Ok(LoadedSource {
        entities,
        published,
    })
}

/// A direct child of INDIVIDUAL/ENTITY closed: a leaf (`text`) or a group (`group`).
fn close_field(rec: &mut Record, field: &str, text: &str, group: &Group) {
    let entity = &mut rec.entity;
    match field {
        "FIRST_NAME" => rec.names[0] = name_part(text),
        "SECOND_NAME" => rec.names[1] = name_part(text),
        "THIRD_NAME" => rec.names[2] = name_part(text),
        "FOURTH_NAME" => rec.names[3] = name_part(text),
        "REFERENCE_NUMBER" => entity.external_id = text.to_owned(),
        "UN_LIST_TYPE" => push_unique(&mut entity.sanctions, text),
        "LISTED_ON" => entity.listed_on = iso_date(text),
        "GENDER" => entity.gender = gender(text),
        "COMMENTS1" => entity.remarks = non_empty(text).map(str::to_owned),
        "NAME_ORIGINAL_SCRIPT" => {
            if let Some(name) = non_empty(text) {
                rec.original_script.push(name.to_owned());
            }
        }
        "LIST_TYPE" => {
            for value in group.all("VALUE") {
                push_unique(&mut entity.sanctions, value);
            }
        }
        "NATIONALITY" => {
            for value in group.all("VALUE") {
                push_country(entity, value);
            }
        }
        "DESIGNATION" => {
            for value in group.all("VALUE") {
                let title = value.trim();
                if !title.is_empty() && !entity.positions.iter().any(|p| p.title == title) {
                    entity.positions.push(Position {
                        title: title.to_owned(),
                        ..Position::default()
                    });
                }
            }
        }
        "INDIVIDUAL_ALIAS" | "ENTITY_ALIAS" => {
            if let Some(name) = group.get("ALIAS_NAME") {
                let weak = group
                    .get("QUALITY")
                    .is_some_and(|q| q.eq_ignore_ascii_case("low"));
                let quality = if weak {
                    NameQuality::Weak
                } else {
                    NameQuality::Strong
                };
                // Deduplicated against the primary name when the record closes.
                entity.aliases.push(crate::screening::entity::Alias {
                    name: name.trim().to_owned(),
                    quality,
                });
            }
        }
        "INDIVIDUAL_ADDRESS" | "ENTITY_ADDRESS" => {
            let country = group.get("COUNTRY");
            if let Some(country) = country {
                push_country(entity, country);
            }
            let street = group.get("STREET").unwrap_or("");
            let city = join_words(
                [group.get("CITY"), group.get("ZIP_CODE")]
                    .into_iter()
                    .flatten(),
            );
            let state = group.get("STATE_PROVINCE").unwrap_or("");
            if !street.trim().is_empty() || !city.is_empty() || !state.trim().is_empty() {
                let address = join_parts([street, city.as_str(), state, country.unwrap_or("")]);
                push_unique(&mut entity.addresses, &address);
            }
        }
        "INDIVIDUAL_DATE_OF_BIRTH" => {
            for date in birth_dates(group) {
                push_unique(&mut entity.birth_dates, &date);
            }
        }
        _ => {}
    }
}

fn name_part(text: &str) -> String {
    if is_null(text) {
        String::new()
    } else {
        text.trim().to_owned()
    }
}

/// `TYPE_OF_DATE` EXACT/APPROXIMATELY with `DATE` or `YEAR`, or BETWEEN with `FROM_YEAR` and
/// `TO_YEAR` (every year of the range).
fn birth_dates(group: &Group) -> Vec<String> {
    if let Some(date) = group.get("DATE").and_then(iso_date) {
        return vec![date];
    }
    if let Some(y) = group.get("YEAR").and_then(year) {
        return vec![y.to_string()];
    }
    match (
        group.get("FROM_YEAR").and_then(year),
        group.get("TO_YEAR").and_then(year),
    ) {
        (Some(from), Some(to)) => year_range(from, to),
        (Some(y), None) | (None, Some(y)) => vec![y.to_string()],
        (None, None) => Vec::new(),
    }
}

fn finish(rec: Record, position: u64) -> Result<ListEntity, LoadError> {
    let Record {
        mut entity,
        names,
        original_script,
    } = rec;
    if entity.external_id.is_empty() {
        return Err(LoadError::Xml {
            position,
            message: "a record without a REFERENCE_NUMBER".into(),
        });
    }
    entity.name = join_words(names.iter().map(String::as_str));
    if entity.name.is_empty() {
        return Err(LoadError::Xml {
            position,
            message: format!("record {} has no name", entity.external_id),
        });
    }
    let aliases = std::mem::take(&mut entity.aliases);
    for name in &original_script {
        push_alias(&mut entity, name, NameQuality::Strong);
    }
    for alias in aliases {
        push_alias(&mut entity, &alias.name, alias.quality);
    }
    Ok(entity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screening::entity::Alias;
    use crate::screening::loaders::refused;

    fn un_bytes() -> Vec<u8> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/lists/un/UN_consolidated.xml");
        std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_consolidated_list_loads_with_its_counts_and_details() {
        let loaded = load(&un_bytes()).expect("loads");
        assert_eq!(
            loaded.published.as_deref(),
            Some("2026-02-27T00:00:09.554Z")
        );
        let count = |t: EntityType| {
            loaded
                .entities
                .iter()
                .filter(|e| e.entity_type == t)
                .count()
        };
        assert_eq!(count(EntityType::Individual), 730);
        assert_eq!(count(EntityType::Entity), 273);
        assert_eq!(loaded.entities.len(), 1_003);
        assert!(loaded
            .entities
            .iter()
            .all(|e| !e.name.is_empty() && e.id.is_empty()));
        let aliases: usize = loaded.entities.iter().map(|e| e.aliases.len()).sum();
        let weak = loaded
            .entities
            .iter()
            .flat_map(|e| &e.aliases)
            .filter(|a| a.quality == NameQuality::Weak)
            .count();
        println!("un: {aliases} aliases ({weak} weak)");
        assert!(aliases > 2_500 && weak > 500, "{aliases} {weak}");

        let saddam = loaded
            .entities
            .iter()
            .find(|e| e.external_id == "IQi.001")
            .expect("IQi.001");
        assert_eq!(saddam.name, "SADDAM HUSSEIN AL-TIKRITI");
        assert_eq!(saddam.entity_type, EntityType::Individual);
        assert_eq!(saddam.aliases[0], Alias::strong("صدام حسين التكريتي"));
        assert!(saddam.aliases.contains(&Alias::weak("Abu Ali")));
        assert_eq!(saddam.birth_dates, ["1937-04-28"]);
        assert_eq!(saddam.countries, ["iq"]);
        assert_eq!(saddam.sanctions, ["Iraq", "UN List"]);
        assert_eq!(saddam.listed_on.as_deref(), Some("2003-06-27"));

        let badege = loaded
            .entities
            .iter()
            .find(|e| e.external_id == "CDi.001")
            .expect("CDi.001");
        assert_eq!(badege.name, "ERIC BADEGE");
        assert_eq!(badege.gender.as_deref(), Some("male"));
        assert_eq!(badege.countries, ["cd", "rw"]);
        assert_eq!(badege.birth_dates, ["1971"]);

        // "na" as a fourth name is the UN's "not available", not a name part.
        let noorzai = loaded
            .entities
            .iter()
            .find(|e| e.name.starts_with("FAIZULLAH KHAN NOORZAI"))
            .expect("Noorzai");
        assert_eq!(noorzai.name, "FAIZULLAH KHAN NOORZAI");

        // BETWEEN ranges give every year.
        let ranged = loaded
            .entities
            .iter()
            .filter(|e| e.birth_dates.len() >= 3 && e.birth_dates.iter().all(|d| d.len() == 4))
            .count();
        assert!(ranged > 10, "{ranged}");

        // Addresses join their parts; entities get "&" unescaped in names.
        assert!(loaded
            .entities
            .iter()
            .any(|e| e.name == "AL-HARAMAIN & AL MASJED AL-AQSA CHARITY FOUNDATION"));
        let addresses = loaded
            .entities
            .iter()
            .filter(|e| !e.addresses.is_empty())
            .count();
        assert!(addresses > 200, "{addresses}");
        let with_country = loaded
            .entities
            .iter()
            .filter(|e| !e.countries.is_empty())
            .count();
        println!("un: {addresses} with addresses, {with_country} with countries");
    }

    #[test]
    fn a_cut_document_is_truncated() {
        let bytes = un_bytes();
        let half = &bytes[..bytes.len() / 2];
        let err = refused(load(half));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
        // Cut right after a complete record, too.
        let text = std::str::from_utf8(&bytes).expect("utf-8");
        let at = text[..text.len() / 2]
            .rfind("</INDIVIDUAL>")
            .expect("a record")
            + "</INDIVIDUAL>".len();
        let err = refused(load(&bytes[..at]));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
    }

    #[test]
    fn another_document_is_refused() {
        let err = refused(load(b"<sdnList><sdnEntry/></sdnList>"));
        assert!(matches!(err, LoadError::Xml { .. }), "{err}");
    }
}

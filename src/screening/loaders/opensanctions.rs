//! OpenSanctions exports: FollowTheMoney entities and the Senzing format, both JSON lines.
//!
//! FtM: Person, Company, Organization, LegalEntity, PublicBody, Vessel and Airplane entities
//! become list entities; `Sanction` entities add their programme (or authority) to the entity they
//! name, and `Address` entities referenced by `addressEntity` add their full text. Other schemas
//! (Ownership, Family, Directorship, Passport, …) are read and set aside.
//!
//! Senzing: PERSON and ORGANIZATION records become entities; other records (the positions of the
//! PEP datasets, e.g. "United States senator") fill `positions` of the persons whose
//! RELATIONSHIPS point to them.
//!
//! OpenSanctions data is CC BY-NC 4.0: production use needs a licence from OpenSanctions.
//! `published` is the newest `last_change` in the file (its date part).

use std::collections::HashMap;

use serde::Deserialize;

use super::country::{country_code, is_iso_alpha2};
use super::{
    gender, iso_date, join_words, non_empty, parse_birth_dates, push_alias, push_unique, text,
    LoadError,
};
use crate::screening::entity::{EntityType, ListEntity, LoadedSource, NameQuality, Position};

/// The non-blank lines of a JSON-lines file with their 1-based numbers.
fn json_lines(doc: &str) -> impl Iterator<Item = (usize, &str)> {
    doc.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty())
}

/// Parses one JSON line; a line that ends mid-value as the file's last line means a cut file.
fn parse_line<'de, T: Deserialize<'de>>(
    line: &'de str,
    number: usize,
    is_last: bool,
) -> Result<T, LoadError> {
    serde_json::from_str(line).map_err(|e| json_error(&e, number, is_last))
}

pub(super) fn json_error(e: &serde_json::Error, line: usize, is_last: bool) -> LoadError {
    if e.is_eof() && is_last {
        LoadError::Truncated(format!("the last record (line {line}) ends mid-value"))
    } else {
        LoadError::Json {
            line,
            message: e.to_string(),
        }
    }
}

/// A lower-case alpha-2 code from an FtM/Senzing country value (`ru`, `us`, sometimes a name).
fn push_code(entity: &mut ListEntity, value: &str) {
    let value = value.trim();
    let code = if is_iso_alpha2(value) {
        Some(value.to_owned())
    } else {
        country_code(value)
    };
    if let Some(code) = code {
        if !entity.countries.contains(&code) {
            entity.countries.push(code);
        }
    }
}

fn newer(published: &mut Option<String>, last_change: Option<&str>) {
    if let Some(date) = last_change.and_then(iso_date) {
        if published.as_ref().is_none_or(|p| &date > p) {
            *published = Some(date);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// FollowTheMoney

#[derive(Deserialize)]
struct FtmEntity {
    id: String,
    schema: String,
    #[serde(default)]
    caption: Option<String>,
    #[serde(default)]
    properties: HashMap<String, Vec<String>>,
    #[serde(default)]
    last_change: Option<String>,
}

impl FtmEntity {
    fn values(&self, property: &str) -> impl Iterator<Item = &str> {
        self.properties
            .get(property)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    fn first(&self, property: &str) -> Option<&str> {
        self.values(property).next()
    }
}

fn ftm_type(schema: &str) -> Option<EntityType> {
    match schema {
        "Person" => Some(EntityType::Individual),
        "Company" | "Organization" | "LegalEntity" | "PublicBody" => Some(EntityType::Entity),
        "Vessel" => Some(EntityType::Vessel),
        "Airplane" => Some(EntityType::Aircraft),
        _ => None,
    }
}

pub(super) fn load_ftm(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let doc = text(bytes)?;
    let mut entities: Vec<ListEntity> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // (entity id, programme) and (entity id, listing date) from Sanction entities.
    let mut sanctions: Vec<(String, String, Option<String>)> = Vec::new();
    // Address entity id → full text; entity index → referenced address ids.
    let mut addresses: HashMap<String, String> = HashMap::new();
    let mut address_refs: Vec<(usize, String)> = Vec::new();
    let mut published = None;

    let lines: Vec<(usize, &str)> = json_lines(doc).collect();
    let last = lines.len().saturating_sub(1);
    for (i, &(number, line)) in lines.iter().enumerate() {
        let ftm: FtmEntity = parse_line(line, number, i == last)?;
        newer(&mut published, ftm.last_change.as_deref());
        match ftm.schema.as_str() {
            "Sanction" => {
                let label = ftm.first("program").or_else(|| ftm.first("authority"));
                let date = ftm
                    .values("listingDate")
                    .chain(ftm.values("startDate"))
                    .filter_map(iso_date)
                    .min();
                if let Some(label) = label {
                    for target in ftm.values("entity") {
                        sanctions.push((target.to_owned(), label.to_owned(), date.clone()));
                    }
                }
                continue;
            }
            "Address" => {
                let full = ftm.first("full").map(str::to_owned).unwrap_or_else(|| {
                    super::join_parts(
                        ["street", "postalCode", "city", "region", "country"]
                            .iter()
                            .filter_map(|p| ftm.first(p)),
                    )
                });
                if !full.is_empty() {
                    addresses.insert(ftm.id.clone(), full);
                }
                continue;
            }
            _ => {}
        }
        let Some(entity_type) = ftm_type(&ftm.schema) else {
            continue;
        };
        let names: Vec<&str> = ftm.values("name").collect();
        let primary = ftm
            .caption
            .as_deref()
            .and_then(non_empty)
            .or_else(|| names.first().copied());
        let Some(primary) = primary else {
            return Err(LoadError::Json {
                line: number,
                message: format!("{} {} has no name", ftm.schema, ftm.id),
            });
        };
        let mut entity = ListEntity {
            external_id: ftm.id.clone(),
            entity_type,
            name: primary.trim().to_owned(),
            ..ListEntity::default()
        };
        for name in names
            .iter()
            .copied()
            .chain(ftm.values("alias"))
            .chain(ftm.values("previousName"))
        {
            push_alias(&mut entity, name, NameQuality::Strong);
        }
        for name in ftm.values("weakAlias") {
            push_alias(&mut entity, name, NameQuality::Weak);
        }
        for property in ["country", "nationality", "citizenship", "jurisdiction"] {
            for value in ftm.values(property) {
                push_code(&mut entity, value);
            }
        }
        for value in ftm.values("birthDate") {
            for date in parse_birth_dates(value) {
                push_unique(&mut entity.birth_dates, &date);
            }
        }
        entity.gender = ftm.first("gender").and_then(gender);
        for title in ftm.values("position") {
            if !entity.positions.iter().any(|p| p.title == title.trim()) {
                entity.positions.push(Position {
                    title: title.trim().to_owned(),
                    ..Position::default()
                });
            }
        }
        // Programme codes on the entity itself (`GB-RUS`, `US-RUSHAR`); Sanction entities add theirs
        // below.
        for program in ftm.values("programId") {
            push_unique(&mut entity.sanctions, program);
        }
        for party in ftm.values("political") {
            push_unique(&mut entity.political_party, party);
        }
        for topic in ftm.values("topics") {
            push_unique(&mut entity.tags, topic);
        }
        for address in ftm.values("address") {
            push_unique(&mut entity.addresses, address);
        }
        if index.insert(ftm.id.clone(), entities.len()).is_some() {
            return Err(LoadError::Json {
                line: number,
                message: format!("entity id {} appears twice", ftm.id),
            });
        }
        for address_id in ftm.values("addressEntity") {
            address_refs.push((entities.len(), address_id.to_owned()));
        }
        entities.push(entity);
    }

    for (target, label, date) in sanctions {
        if let Some(&i) = index.get(&target) {
            let entity = &mut entities[i];
            push_unique(&mut entity.sanctions, &label);
            if let Some(date) = date {
                if entity.listed_on.as_ref().is_none_or(|d| &date < d) {
                    entity.listed_on = Some(date);
                }
            }
        }
    }
    for (i, address_id) in address_refs {
        if let Some(full) = addresses.get(&address_id) {
            let entity = &mut entities[i];
            if !entity
                .addresses
                .iter()
                .any(|a| a.eq_ignore_ascii_case(full))
            {
                entity.addresses.push(full.clone());
            }
        }
    }
    Ok(LoadedSource {
        entities,
        published,
    })
}

// ---------------------------------------------------------------------------------------------
// Senzing

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct SzRecord {
    RECORD_ID: String,
    #[serde(default)]
    RECORD_TYPE: Option<String>,
    #[serde(default)]
    LAST_CHANGE: Option<String>,
    #[serde(default)]
    NAMES: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    DATES: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    COUNTRIES: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    ADDRESSES: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    RISKS: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    RELATIONSHIPS: Vec<HashMap<String, Option<String>>>,
    #[serde(default)]
    GENDER: Option<String>,
}

fn get<'m>(map: &'m HashMap<String, Option<String>>, key: &str) -> Option<&'m str> {
    map.get(key).and_then(|v| v.as_deref()).and_then(non_empty)
}

/// A Senzing name: NAME_FULL, or its parts, or NAME_ORG.
fn sz_name(name: &HashMap<String, Option<String>>) -> Option<String> {
    if let Some(full) = get(name, "NAME_FULL") {
        return Some(full.to_owned());
    }
    let parts = join_words(
        [
            "NAME_PREFIX",
            "NAME_FIRST",
            "NAME_MIDDLE",
            "NAME_LAST",
            "NAME_SUFFIX",
        ]
        .iter()
        .filter_map(|k| get(name, k)),
    );
    if !parts.is_empty() {
        return Some(parts);
    }
    get(name, "NAME_ORG").map(str::to_owned)
}

pub(super) fn load_senzing(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let doc = text(bytes)?;
    let mut entities: Vec<ListEntity> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    // Non-party records (positions) by RECORD_ID and REL_ANCHOR_KEY → their name.
    let mut others: HashMap<String, String> = HashMap::new();
    // Entity index → the keys its relationships point to.
    let mut pointers: Vec<(usize, String)> = Vec::new();
    let mut published = None;

    let lines: Vec<(usize, &str)> = json_lines(doc).collect();
    let last = lines.len().saturating_sub(1);
    for (i, &(number, line)) in lines.iter().enumerate() {
        let record: SzRecord = parse_line(line, number, i == last)?;
        newer(&mut published, record.LAST_CHANGE.as_deref());
        let primary = record
            .NAMES
            .iter()
            .find(|n| get(n, "NAME_TYPE").is_some_and(|t| t.eq_ignore_ascii_case("PRIMARY")))
            .or_else(|| record.NAMES.first())
            .and_then(sz_name);
        let entity_type = match record.RECORD_TYPE.as_deref() {
            Some("PERSON") => EntityType::Individual,
            Some("ORGANIZATION") => EntityType::Entity,
            _ => {
                if let Some(name) = primary {
                    for rel in &record.RELATIONSHIPS {
                        if let Some(anchor) = get(rel, "REL_ANCHOR_KEY") {
                            others.insert(anchor.to_owned(), name.clone());
                        }
                    }
                    others.insert(record.RECORD_ID.clone(), name);
                }
                continue;
            }
        };
        let Some(name) = primary else {
            return Err(LoadError::Json {
                line: number,
                message: format!("record {} has no name", record.RECORD_ID),
            });
        };
        let mut entity = ListEntity {
            external_id: record.RECORD_ID.clone(),
            entity_type,
            name,
            ..ListEntity::default()
        };
        for alias in record.NAMES.iter().filter_map(sz_name) {
            push_alias(&mut entity, &alias, NameQuality::Strong);
        }
        for date in record.DATES.iter().filter_map(|d| get(d, "DATE_OF_BIRTH")) {
            for date in parse_birth_dates(date) {
                push_unique(&mut entity.birth_dates, &date);
            }
        }
        for country in record.COUNTRIES.iter().flat_map(|c| c.values()).flatten() {
            push_code(&mut entity, country);
        }
        for address in record.ADDRESSES.iter().filter_map(|a| get(a, "ADDR_FULL")) {
            push_unique(&mut entity.addresses, address);
        }
        for topic in record.RISKS.iter().filter_map(|r| get(r, "TOPIC")) {
            push_unique(&mut entity.tags, topic);
        }
        entity.gender = record.GENDER.as_deref().and_then(gender);
        entity.listed_on = record.LAST_CHANGE.as_deref().and_then(iso_date);
        if ids
            .insert(record.RECORD_ID.clone(), entities.len())
            .is_some()
        {
            return Err(LoadError::Json {
                line: number,
                message: format!("RECORD_ID {} appears twice", record.RECORD_ID),
            });
        }
        for key in record
            .RELATIONSHIPS
            .iter()
            .filter_map(|r| get(r, "REL_POINTER_KEY"))
        {
            pointers.push((entities.len(), key.to_owned()));
        }
        entities.push(entity);
    }

    for (i, key) in pointers {
        if let Some(title) = others.get(&key) {
            let entity = &mut entities[i];
            if !entity.positions.iter().any(|p| &p.title == title) {
                entity.positions.push(Position {
                    title: title.clone(),
                    ..Position::default()
                });
            }
        }
    }
    Ok(LoadedSource {
        entities,
        published,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screening::entity::Alias;
    use crate::screening::loaders::refused;

    fn lists(path: &str) -> Vec<u8> {
        let full = format!("{}/lists/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    #[test]
    fn the_us_congress_pep_file_loads_with_positions() {
        let loaded = load_senzing(&lists("opensanctions/us_congress_senzing.json")).expect("loads");
        assert_eq!(loaded.entities.len(), 1_317);
        assert!(loaded
            .entities
            .iter()
            .all(|e| e.entity_type == EntityType::Individual));
        assert!(
            loaded.entities.iter().all(|e| !e.positions.is_empty()),
            "every member has a seat"
        );
        assert!(loaded
            .entities
            .iter()
            .all(|e| e.tags == ["role.pep"] && e.countries == ["us"]));
        let senators = loaded
            .entities
            .iter()
            .filter(|e| {
                e.positions
                    .iter()
                    .any(|p| p.title == "United States senator")
            })
            .count();
        assert_eq!(senators, 209);
        let e = &loaded.entities[0];
        assert_eq!(e.external_id, "NK-AQ4HymsADSK2D63MkyTqfC");
        assert_eq!(e.name, "Jennifer L. McClellan");
        assert_eq!(e.birth_dates, ["1972"]);
        assert_eq!(e.listed_on.as_deref(), Some("2024-03-21"));
        assert_eq!(e.positions[0].title, "United States representative");
        let with_aliases = loaded
            .entities
            .iter()
            .filter(|e| !e.aliases.is_empty())
            .count();
        println!(
            "us_congress: {with_aliases} members with aliases, published {:?}",
            loaded.published
        );
        assert!(with_aliases > 0);
    }

    #[test]
    fn a_line_that_is_not_json_is_an_error_with_its_line() {
        let bytes = lists("opensanctions/us_congress_senzing.json");
        let text = std::str::from_utf8(&bytes).expect("utf-8");
        let mut lines: Vec<&str> = text.lines().collect();
        lines[41] = "this is not json";
        let broken = lines.join("\n");
        let err = refused(load_senzing(broken.as_bytes()));
        assert!(matches!(err, LoadError::Json { line: 42, .. }), "{err}");
        // The last line cut short is a truncated file.
        let cut = &text[..text.len() - 100];
        let err = refused(load_senzing(cut.as_bytes()));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
    }

    #[test]
    fn the_zala_ftm_sample_loads_with_sanctions_and_addresses() {
        let loaded = load_ftm(&lists("opensanctions/zala_entities.ftm.json")).expect("loads");
        let count = |t: EntityType| {
            loaded
                .entities
                .iter()
                .filter(|e| e.entity_type == t)
                .count()
        };
        assert_eq!(count(EntityType::Individual), 6);
        assert_eq!(count(EntityType::Entity), 11);
        assert_eq!(loaded.entities.len(), 17);

        let maria = loaded
            .entities
            .iter()
            .find(|e| e.external_id == "NK-2Tbri3s6GgNtAwsSXh4qpL")
            .expect("Osetrova");
        assert_eq!(maria.name, "Maria Aleksandrovna Osetrova");
        assert!(maria
            .aliases
            .contains(&Alias::strong("Мария Александровна Осетрова")));
        assert!(maria
            .aliases
            .contains(&Alias::strong("Захарова Мария Александровна")));
        assert!(maria
            .aliases
            .iter()
            .all(|a| a.name.to_lowercase() != maria.name.to_lowercase()));
        assert_eq!(maria.birth_dates, ["1988-01-07"]);
        assert_eq!(maria.countries, ["ru"]);
        assert_eq!(maria.gender.as_deref(), Some("female"));
        assert!(maria.tags.contains(&"sanction".to_owned()));
        assert!(
            !maria.sanctions.is_empty(),
            "sanction programmes attach to the person"
        );
        println!(
            "zala: {} sanctions on {}: {:?}",
            maria.sanctions.len(),
            maria.name,
            maria.sanctions
        );

        let sanctioned = loaded
            .entities
            .iter()
            .filter(|e| !e.sanctions.is_empty())
            .count();
        let with_address = loaded
            .entities
            .iter()
            .filter(|e| !e.addresses.is_empty())
            .count();
        println!("zala: {sanctioned} sanctioned, {with_address} with addresses");
        assert!(
            sanctioned >= 6 && with_address >= 10,
            "{sanctioned} {with_address}"
        );
        // An Address entity's full text is attached once even when the entity repeats it.
        assert!(loaded.entities.iter().any(|e| e
            .addresses
            .contains(&"130 Vorovskogo st. Izhevsk, 426063, Russia".to_owned())));
        assert!(loaded
            .entities
            .iter()
            .all(|e| e.countries.iter().all(|c| c.len() == 2)));
    }

    #[test]
    fn ftm_weak_aliases_positions_and_bad_records() {
        let doc = r#"{"id":"p1","schema":"Person","properties":{"name":["Jane Roe"],"weakAlias":["JR"],"position":["Minister of Finance"],"political":["Party A"],"country":["GB"]}}
{"id":"s1","schema":"Sanction","properties":{"entity":["p1"],"authority":["HM Treasury"]}}
{"id":"o1","schema":"Ownership","properties":{"owner":["p1"]}}"#;
        let loaded = load_ftm(doc.as_bytes()).expect("loads");
        let e = &loaded.entities[0];
        assert_eq!(e.aliases, [Alias::weak("JR")]);
        assert_eq!(e.positions[0].title, "Minister of Finance");
        assert_eq!(e.political_party, ["Party A"]);
        assert_eq!(e.countries, ["gb"]);
        assert_eq!(e.sanctions, ["HM Treasury"]);
        let err = refused(load_ftm(
            b"{\"id\":\"p1\",\"schema\":\"Person\",\"properties\":{}}\n",
        ));
        assert!(matches!(err, LoadError::Json { line: 1, .. }), "{err}");
    }
}

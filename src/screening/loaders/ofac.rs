//! US Treasury OFAC lists: the legacy CSV set (`sdn.csv` or `cons_prim.csv` with `alt`, `add` and
//! `comments` companions) and `sdn.xml`.
//!
//! CSV quirks: no header, CRLF, `-0- ` (with its trailing space) for null, and a 0x1A byte as the
//! last line. The primary, alias and address files must end with that byte (its absence means the
//! file was cut short); the comments file need not (older copies lack it). Rows whose first field
//! is not a number (that 0x1A line) are skipped; any other row with the wrong field count is an
//! error. Companion rows for entries the primary file lacks are ignored: OFAC publishes the four
//! files separately and mirrors often pair different days.
//!
//! Names stay as published ("LAST, First Middle" for individuals). Dates of birth, nationality,
//! citizenship and gender are read from the Remarks field; addresses and their countries from the
//! address file; vessel flags count as countries.

use std::collections::HashMap;

use super::xml::{walk, Step};
use super::{
    field_count_error, for_each_csv_row, gender, join_parts, join_words, non_empty,
    parse_birth_dates, push_alias, push_country, push_unique, text, CsvRow, LoadError, SourceBytes,
};
use crate::screening::entity::{
    Alias, EntityType, ListEntity, LoadedSource, NameQuality, Position,
};

const SDN_FIELDS: usize = 12;
const ALT_FIELDS: usize = 5;
const ADD_FIELDS: usize = 6;
const COMMENTS_FIELDS: usize = 2;
const TERMINATOR: u8 = 0x1A;

/// OFAC's null: `-0-` (written `-0- `).
pub(super) fn is_null(value: &str) -> bool {
    value.trim() == "-0-"
}

/// A field's value, `None` for OFAC's null or an empty field.
fn field(row: &CsvRow, index: usize) -> Option<&str> {
    row.record
        .get(index)
        .and_then(non_empty)
        .filter(|v| !is_null(v))
}

/// Streams the data rows of one OFAC CSV file to `on_row` (rows whose first field is numeric),
/// each checked for its field count, and checks the file for OFAC's end-of-file byte.
fn ofac_rows(
    bytes: &[u8],
    file: &str,
    fields: usize,
    terminator_required: bool,
    mut on_row: impl FnMut(&CsvRow) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    let in_file = |error: LoadError| match error {
        LoadError::Csv { line, message } => LoadError::Csv {
            line,
            message: format!("{file}: {message}"),
        },
        LoadError::Truncated(m) => LoadError::Truncated(format!("{file}: {m}")),
        other => other,
    };
    let mut any = false;
    for_each_csv_row(bytes, |row, is_last| {
        let first = row.record.get(0).unwrap_or("").trim();
        if first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(());
        }
        if row.record.len() != fields {
            return Err(field_count_error(row, fields, is_last));
        }
        any = true;
        on_row(row)
    })
    .map_err(in_file)?;
    if terminator_required && any {
        let end = bytes.iter().rev().find(|b| !b.is_ascii_whitespace());
        if end != Some(&TERMINATOR) {
            return Err(LoadError::Truncated(format!(
                "{file} does not end with OFAC's end-of-file byte (0x1A)"
            )));
        }
    }
    Ok(())
}

/// The OFAC legacy CSV set.
pub(super) fn load_csv(src: &SourceBytes<'_>) -> Result<LoadedSource, LoadError> {
    let mut entities: Vec<ListEntity> = Vec::with_capacity(16_384);
    let mut by_id: HashMap<String, usize> = HashMap::with_capacity(16_384);
    let mut remarks: Vec<Option<String>> = Vec::with_capacity(16_384);
    ofac_rows(src.primary, "primary file", SDN_FIELDS, true, |row| {
        let ent_num = row.record[0].trim();
        let entity_type = match field(row, 2).map(str::to_ascii_lowercase).as_deref() {
            None => EntityType::Entity,
            Some("individual") => EntityType::Individual,
            Some("vessel") => EntityType::Vessel,
            Some("aircraft") => EntityType::Aircraft,
            Some(other) => {
                return Err(LoadError::Csv {
                    line: row.line,
                    message: format!("unknown SDN_Type `{other}`"),
                })
            }
        };
        let Some(name) = field(row, 1) else {
            return Err(LoadError::Csv {
                line: row.line,
                message: format!("entry {ent_num} has no name"),
            });
        };
        if by_id.insert(ent_num.to_owned(), entities.len()).is_some() {
            return Err(LoadError::DuplicateId {
                id: ent_num.to_owned(),
                line: row.line,
            });
        }
        let mut entity = ListEntity {
            external_id: ent_num.to_owned(),
            entity_type,
            name: name.to_owned(),
            ..ListEntity::default()
        };
        if let Some(programs) = field(row, 3) {
            for program in programs.split("] [") {
                push_unique(
                    &mut entity.sanctions,
                    program.trim_matches(|c| c == '[' || c == ']'),
                );
            }
        }
        if let Some(title) = field(row, 4) {
            entity.positions.push(Position {
                title: title.to_owned(),
                ..Position::default()
            });
        }
        if let Some(flag) = field(row, 9) {
            push_country(&mut entity, flag);
        }
        // Untrimmed at the end: an overflow in the comments file may continue after a space.
        let remark = row
            .record
            .get(11)
            .filter(|r| !is_null(r) && !r.trim().is_empty());
        remarks.push(remark.map(|r| r.trim_start().to_owned()));
        entities.push(entity);
        Ok(())
    })?;

    if let Some(comments) = src.comments {
        ofac_rows(comments, "comments file", COMMENTS_FIELDS, false, |row| {
            let Some(&i) = by_id.get(row.record[0].trim()) else {
                return Ok(());
            };
            // The overflow continues the Remarks text mid-word.
            if let Some(extra) = row.record.get(1).filter(|v| !is_null(v)) {
                let extra = extra.trim_end();
                match &mut remarks[i] {
                    Some(r) => r.push_str(extra),
                    slot @ None => *slot = non_empty(extra).map(str::to_owned),
                }
            }
            Ok(())
        })?;
    }
    for (entity, remark) in entities.iter_mut().zip(remarks) {
        if let Some(remark) = remark {
            let remark = remark.trim_end();
            apply_remarks(entity, remark);
            entity.remarks = Some(remark.to_owned());
        }
    }

    if let Some(alt) = src.alt {
        ofac_rows(alt, "alias file", ALT_FIELDS, true, |row| {
            let Some(&i) = by_id.get(row.record[0].trim()) else {
                return Ok(());
            };
            let Some(name) = field(row, 3) else {
                return Err(LoadError::Csv {
                    line: row.line,
                    message: "alias without a name".into(),
                });
            };
            let weak = field(row, 4).is_some_and(|r| r.to_ascii_lowercase().contains("weak"));
            let quality = if weak {
                NameQuality::Weak
            } else {
                NameQuality::Strong
            };
            push_alias(&mut entities[i], name, quality);
            Ok(())
        })?;
    }

    if let Some(add) = src.add {
        ofac_rows(add, "address file", ADD_FIELDS, true, |row| {
            let Some(&i) = by_id.get(row.record[0].trim()) else {
                return Ok(());
            };
            let entity = &mut entities[i];
            let street = field(row, 2);
            let city = field(row, 3);
            let country = field(row, 4);
            if let Some(country) = country {
                push_country(entity, country);
            }
            if street.is_some() || city.is_some() {
                let address = join_parts([street, city, country].into_iter().flatten());
                push_unique(&mut entity.addresses, &address);
            }
            Ok(())
        })?;
    }

    Ok(LoadedSource {
        entities,
        published: None,
    })
}

/// The country an OFAC remarks item names as nationality or citizenship, if it is one.
pub(super) fn remark_country(item: &str) -> Option<&str> {
    let item = item.trim().trim_end_matches('.');
    let item = item.strip_prefix("alt. ").unwrap_or(item);
    for prefix in ["nationality ", "citizen ", "Nationality of Registration "] {
        if let Some(rest) = item.strip_prefix(prefix) {
            return non_empty(rest);
        }
    }
    None
}

/// Dates of birth, nationality, citizenship and gender from the `;`-separated Remarks field.
fn apply_remarks(entity: &mut ListEntity, remarks: &str) {
    for item in remarks.split(';') {
        let item = item.trim().trim_end_matches('.');
        let plain = item.strip_prefix("alt. ").unwrap_or(item);
        if let Some(dob) = plain.strip_prefix("DOB ") {
            for date in parse_birth_dates(dob) {
                push_unique(&mut entity.birth_dates, &date);
            }
        } else if let Some(country) = remark_country(item) {
            push_country(entity, country);
        } else if let Some(value) = plain.strip_prefix("Gender ") {
            if entity.gender.is_none() {
                entity.gender = gender(value);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// sdn.xml

/// An `akaList/aka`, `addressList/address`, … item being read: its leaf elements.
#[derive(Default)]
struct Item {
    fields: Vec<(String, String)>,
}

impl Item {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| non_empty(v))
    }
}

/// OFAC `sdn.xml` (`sdnList` with `publshInformation` and `sdnEntry` elements; either namespace).
pub(super) fn load_xml(bytes: &[u8]) -> Result<LoadedSource, LoadError> {
    let doc = text(bytes)?;
    let mut entities: Vec<ListEntity> = Vec::new();
    let mut published = None;
    let mut record_count: Option<(usize, u64)> = None;
    let mut current: Option<ListEntity> = None;
    let mut first_name: Option<String> = None;
    let mut last_name: Option<String> = None;
    let mut item = Item::default();
    let mut ids: HashMap<String, u64> = HashMap::new();

    walk(doc, |step, position| {
        match step {
            Step::Open { path, .. } => match path {
                [root] if root != "sdnList" => {
                    return Err(LoadError::Xml {
                        position,
                        message: format!("expected an <sdnList> document, found <{root}>"),
                    })
                }
                [_, entry] if entry == "sdnEntry" => {
                    current = Some(ListEntity::default());
                    first_name = None;
                    last_name = None;
                }
                [_, entry, _, _] if entry == "sdnEntry" => item.fields.clear(),
                _ => {}
            },
            Step::Close { path, text } => match path {
                [_, info, leaf] if info == "publshInformation" => match leaf.as_str() {
                    "Publish_Date" => published = us_date(text),
                    "Record_Count" => {
                        let count = text.parse().map_err(|_| LoadError::Xml {
                            position,
                            message: format!("Record_Count `{text}` is not a number"),
                        })?;
                        record_count = Some((count, position));
                    }
                    _ => {}
                },
                [_, entry] if entry == "sdnEntry" => {
                    let Some(mut entity) = current.take() else {
                        return Ok(());
                    };
                    if entity.external_id.is_empty() {
                        return Err(LoadError::Xml {
                            position,
                            message: "an sdnEntry without a uid".into(),
                        });
                    }
                    entity.name = xml_name(
                        entity.entity_type,
                        last_name.as_deref(),
                        first_name.as_deref(),
                    );
                    if entity.name.is_empty() {
                        return Err(LoadError::Xml {
                            position,
                            message: format!("sdnEntry {} has no name", entity.external_id),
                        });
                    }
                    if ids.insert(entity.external_id.clone(), position).is_some() {
                        return Err(LoadError::Xml {
                            position,
                            message: format!("duplicate uid {}", entity.external_id),
                        });
                    }
                    // Aliases were collected before the primary name was known.
                    let aliases = std::mem::take(&mut entity.aliases);
                    for alias in aliases {
                        push_alias(&mut entity, &alias.name, alias.quality);
                    }
                    entities.push(entity);
                }
                [_, entry, leaf] if entry == "sdnEntry" => {
                    let Some(entity) = current.as_mut() else {
                        return Ok(());
                    };
                    match leaf.as_str() {
                        "uid" => entity.external_id = text.to_owned(),
                        "firstName" => first_name = non_empty(text).map(str::to_owned),
                        "lastName" => last_name = non_empty(text).map(str::to_owned),
                        "title" => {
                            if let Some(title) = non_empty(text) {
                                entity.positions.push(Position {
                                    title: title.to_owned(),
                                    ..Position::default()
                                });
                            }
                        }
                        "sdnType" => {
                            entity.entity_type = match text.to_ascii_lowercase().as_str() {
                                "individual" => EntityType::Individual,
                                "entity" => EntityType::Entity,
                                "vessel" => EntityType::Vessel,
                                "aircraft" => EntityType::Aircraft,
                                other => {
                                    return Err(LoadError::Xml {
                                        position,
                                        message: format!("unknown sdnType `{other}`"),
                                    })
                                }
                            }
                        }
                        "remarks" => {
                            if let Some(remarks) = non_empty(text) {
                                apply_remarks(entity, remarks);
                                entity.remarks = Some(remarks.to_owned());
                            }
                        }
                        _ => {}
                    }
                }
                [_, entry, _, _, leaf] if entry == "sdnEntry" => {
                    item.fields.push((leaf.clone(), text.to_owned()));
                }
                [_, entry, list, leaf] if entry == "sdnEntry" => {
                    let Some(entity) = current.as_mut() else {
                        return Ok(());
                    };
                    match (list.as_str(), leaf.as_str()) {
                        ("programList", "program") => push_unique(&mut entity.sanctions, text),
                        ("vesselInfo", "vesselFlag") => {
                            push_country(entity, text);
                        }
                        (_, kind) => close_item(entity, kind, &item),
                    }
                }
                _ => {}
            },
        }
        Ok(())
    })?;

    if let Some((count, position)) = record_count {
        if count != entities.len() {
            return Err(LoadError::Truncated(format!(
                "Record_Count (byte {position}) says {count} entries, the document holds {}",
                entities.len()
            )));
        }
    }
    Ok(LoadedSource {
        entities,
        published,
    })
}

/// The name as the CSV writes it: "lastName, firstName" for individuals, lastName otherwise.
fn xml_name(entity_type: EntityType, last: Option<&str>, first: Option<&str>) -> String {
    match (last, first) {
        (Some(last), Some(first)) if entity_type == EntityType::Individual => {
            format!("{last}, {first}")
        }
        (Some(last), Some(first)) => join_words([first, last]),
        (Some(last), None) => last.to_owned(),
        (None, Some(first)) => first.to_owned(),
        (None, None) => String::new(),
    }
}

fn close_item(entity: &mut ListEntity, kind: &str, item: &Item) {
    match kind {
        "aka" => {
            let name = match (item.get("lastName"), item.get("firstName")) {
                (Some(last), Some(first)) => format!("{last}, {first}"),
                (Some(one), None) | (None, Some(one)) => one.to_owned(),
                (None, None) => return,
            };
            let weak = item
                .get("category")
                .is_some_and(|c| c.eq_ignore_ascii_case("weak"));
            let quality = if weak {
                NameQuality::Weak
            } else {
                NameQuality::Strong
            };
            // The primary name is not known yet: keep every alias, deduplicated when the entry closes.
            entity.aliases.push(Alias { name, quality });
        }
        "address" => {
            let country = item.get("country");
            if let Some(country) = country {
                push_country(entity, country);
            }
            let street = join_parts(
                ["address1", "address2", "address3"]
                    .iter()
                    .filter_map(|f| item.get(f)),
            );
            let city = join_words(
                ["city", "stateOrProvince", "postalCode"]
                    .iter()
                    .filter_map(|f| item.get(f)),
            );
            if !street.is_empty() || !city.is_empty() {
                let address = join_parts([street.as_str(), city.as_str(), country.unwrap_or("")]);
                push_unique(&mut entity.addresses, &address);
            }
        }
        "nationality" | "citizenship" => {
            if let Some(country) = item.get("country") {
                push_country(entity, country);
            }
        }
        "dateOfBirthItem" => {
            if let Some(date) = item.get("dateOfBirth") {
                for date in parse_birth_dates(date) {
                    push_unique(&mut entity.birth_dates, &date);
                }
            }
        }
        _ => {}
    }
}

/// `MM/DD/YYYY` → `YYYY-MM-DD`.
fn us_date(value: &str) -> Option<String> {
    let mut parts = value.trim().split('/');
    let (month, day, year) = (parts.next()?, parts.next()?, parts.next()?);
    let month: u8 = month.parse().ok()?;
    let day: u8 = day.parse().ok()?;
    let year: u16 = year.parse().ok()?;
    ((1..=12).contains(&month) && (1..=31).contains(&day) && parts.next().is_none())
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screening::loaders::refused;

    fn lists(path: &str) -> Vec<u8> {
        let full = format!("{}/lists/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    fn sdn() -> LoadedSource {
        let (sdn, alt, add, comments) = (
            lists("ofac/sdn.csv"),
            lists("ofac/alt.csv"),
            lists("ofac/add.csv"),
            lists("ofac/sdn_comments.csv"),
        );
        load_csv(&SourceBytes {
            primary: &sdn,
            alt: Some(&alt),
            add: Some(&add),
            comments: Some(&comments),
        })
        .expect("the bundled SDN list loads")
    }

    fn find<'e>(loaded: &'e LoadedSource, id: &str) -> &'e ListEntity {
        loaded
            .entities
            .iter()
            .find(|e| e.external_id == id)
            .unwrap_or_else(|| panic!("entry {id}"))
    }

    #[test]
    fn the_sdn_csv_set_loads_with_the_published_counts() {
        let loaded = sdn();
        let count = |t: EntityType| {
            loaded
                .entities
                .iter()
                .filter(|e| e.entity_type == t)
                .count()
        };
        assert_eq!(loaded.entities.len(), 14_965);
        assert_eq!(count(EntityType::Individual), 6_854);
        assert_eq!(count(EntityType::Entity), 6_884);
        assert_eq!(count(EntityType::Vessel), 851);
        assert_eq!(count(EntityType::Aircraft), 376);
        assert!(loaded
            .entities
            .iter()
            .all(|e| e.id.is_empty() && !e.name.is_empty()));
        // The alias snapshot joins 7,246 of the entries; 7 of those have only aliases that repeat
        // their primary name, which are dropped.
        let with_aliases = loaded
            .entities
            .iter()
            .filter(|e| !e.aliases.is_empty())
            .count();
        assert_eq!(with_aliases, 7_239);
        let weak = loaded
            .entities
            .iter()
            .flat_map(|e| &e.aliases)
            .filter(|a| a.quality == NameQuality::Weak)
            .count();
        println!("sdn: {with_aliases} entries with aliases, {weak} weak aliases");
        let with_dob = loaded
            .entities
            .iter()
            .filter(|e| !e.birth_dates.is_empty())
            .count();
        let with_country = loaded
            .entities
            .iter()
            .filter(|e| !e.countries.is_empty())
            .count();
        println!("sdn: {with_dob} with birth dates, {with_country} with countries");
        assert!(
            with_dob > 5_000 && with_country > 12_000,
            "{with_dob} {with_country}"
        );
    }

    #[test]
    fn sdn_entries_carry_remarks_aliases_addresses_and_programmes() {
        let loaded = sdn();
        let kim = find(&loaded, "11648");
        assert_eq!(kim.name, "KIM, Tong-Myo'ng");
        assert_eq!(kim.entity_type, EntityType::Individual);
        assert_eq!(kim.birth_dates, ["1964", "1962-08-28"]);
        assert_eq!(kim.countries, ["kp"]);
        assert_eq!(kim.sanctions, ["NPWMD"]);

        let harrach = find(&loaded, "11646");
        assert_eq!(harrach.birth_dates, ["1977-09-04"]);
        assert_eq!(harrach.countries.first().map(String::as_str), Some("de"));

        let bnc = find(&loaded, "306");
        assert_eq!(bnc.name, "BANCO NACIONAL DE CUBA");
        assert_eq!(bnc.entity_type, EntityType::Entity);
        assert!(bnc
            .aliases
            .iter()
            .any(|a| a.name == "NATIONAL BANK OF CUBA"));
        assert!(bnc
            .addresses
            .contains(&"Zweierstrasse 35, Zurich CH-8022, Switzerland".to_owned()));
        assert!(
            bnc.countries.contains(&"ch".to_owned()) && bnc.countries.contains(&"es".to_owned())
        );

        // "SDGT] [IRAN"-style programme lists are split.
        let multi = loaded
            .entities
            .iter()
            .find(|e| e.sanctions.len() > 2)
            .expect("an entry with several programmes");
        assert!(multi
            .sanctions
            .iter()
            .all(|p| !p.contains('[') && !p.contains(']')));

        // Remarks overflow from sdn_comments.csv continues the text mid-word.
        let lazarus = find(&loaded, "27307");
        let remarks = lazarus.remarks.as_deref().unwrap_or("");
        assert!(remarks.contains("a.k.a. 'WHOIS HACKING TEAM'"), "{remarks}");
        assert!(remarks.ends_with("a.k.a. 'APPLEWORM'."), "{remarks}");

        let genders = loaded
            .entities
            .iter()
            .filter(|e| e.gender.is_some())
            .count();
        assert!(genders > 4_000, "{genders}");
        let vessel = loaded
            .entities
            .iter()
            .find(|e| e.entity_type == EntityType::Vessel && !e.countries.is_empty())
            .expect("a vessel with a flag");
        assert!(vessel.countries.iter().all(|c| c.len() == 2));
    }

    #[test]
    fn the_consolidated_non_sdn_set_loads() {
        let (prim, alt, add, comments) = (
            lists("ofac/cons_prim.csv"),
            lists("ofac/cons_alt.csv"),
            lists("ofac/cons_add.csv"),
            lists("ofac/cons_comments.csv"),
        );
        let loaded = load_csv(&SourceBytes {
            primary: &prim,
            alt: Some(&alt),
            add: Some(&add),
            comments: Some(&comments),
        })
        .expect("loads");
        let count = |t: EntityType| {
            loaded
                .entities
                .iter()
                .filter(|e| e.entity_type == t)
                .count()
        };
        assert_eq!(loaded.entities.len(), 442);
        assert_eq!(count(EntityType::Individual), 79);
        assert_eq!(count(EntityType::Entity), 363);
        let aliases: usize = loaded.entities.iter().map(|e| e.aliases.len()).sum();
        println!("cons: {aliases} aliases");
        assert!(aliases > 1_000, "{aliases}");
    }

    const ROW: &str =
        "36,\"AEROCARIBBEAN AIRLINES\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n";

    #[test]
    fn a_row_with_a_missing_column_is_an_error_with_its_line() {
        let bad = format!("{ROW}173,\"ANGLO-CARIBBEAN CO., LTD.\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n{ROW}\x1a");
        let bad = bad.replacen("36,", "37,", 1);
        let err = refused(load_csv(&SourceBytes::new(bad.as_bytes())));
        match err {
            LoadError::Csv { line, ref message } => {
                assert_eq!(line, 2, "{err}");
                assert!(message.contains("11 fields"), "{err}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_cut_file_is_truncated() {
        let whole = lists("ofac/sdn.csv");
        // Cut inside a row, and cut exactly after a row (no 0x1A terminator).
        let cut = &whole[..whole.len() / 2];
        let err = refused(load_csv(&SourceBytes::new(cut)));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
        let end_of_row = cut.iter().rposition(|&b| b == b'\n').expect("a line") + 1;
        let err = refused(load_csv(&SourceBytes::new(&whole[..end_of_row])));
        assert!(matches!(err, LoadError::Truncated(_)), "{err}");
        // The terminator alone (or nothing) is an empty list.
        let err = refused(super::super::load(
            super::super::ListFormat::OfacCsv,
            &SourceBytes::new(b"\x1a"),
        ));
        assert!(matches!(err, LoadError::Empty), "{err}");
    }

    #[test]
    fn weak_alias_remarks_and_unknown_entries_in_companions() {
        let sdn = format!("{ROW}\x1a");
        let alt = "36,12,\"aka\",\"AERO-CARIBBEAN\",-0- \r\n36,13,\"aka\",\"AC\",\"weak\"\r\n99,14,\"aka\",\"NOBODY\",-0- \r\n\x1a";
        let loaded = load_csv(&SourceBytes {
            primary: sdn.as_bytes(),
            alt: Some(alt.as_bytes()),
            add: None,
            comments: None,
        })
        .expect("loads");
        let e = &loaded.entities[0];
        assert_eq!(e.entity_type, EntityType::Entity);
        assert_eq!(e.sanctions, ["CUBA"]);
        assert_eq!(
            e.aliases,
            [Alias::strong("AERO-CARIBBEAN"), Alias::weak("AC")]
        );
    }

    #[test]
    fn remarks_give_dates_countries_and_gender() {
        let mut e = ListEntity::default();
        apply_remarks(
            &mut e,
            "DOB 1958 to 1960; alt. DOB circa 1955; POB Tehran, Iran; nationality Iran; alt. citizen Korea, North; Gender Female; a.k.a. 'X'.",
        );
        assert_eq!(e.birth_dates, ["1958", "1959", "1960", "1955"]);
        assert_eq!(e.countries, ["ir", "kp"]);
        assert_eq!(e.gender.as_deref(), Some("female"));
    }

    #[test]
    fn the_xml_sample_loads() {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/screening/loaders/testdata/sdn_sample.xml"
        ))
        .expect("sample");
        let loaded = load_xml(&bytes).expect("loads");
        assert_eq!(loaded.published.as_deref(), Some("2024-05-03"));
        assert_eq!(loaded.entities.len(), 4);
        let e = &loaded.entities[0];
        assert_eq!(e.external_id, "36");
        assert_eq!(e.name, "AEROCARIBBEAN AIRLINES");
        assert_eq!(e.entity_type, EntityType::Entity);
        assert_eq!(e.aliases, [Alias::strong("AERO-CARIBBEAN")]);
        assert_eq!(e.addresses, Vec::<String>::new());
        assert_eq!(e.countries, ["cu"]);

        let kim = &loaded.entities[1];
        assert_eq!(kim.name, "KIM, Tong-Myo'ng");
        assert_eq!(kim.entity_type, EntityType::Individual);
        assert_eq!(kim.birth_dates, ["1964", "1962-08-28"]);
        assert_eq!(kim.countries, ["kp"]);
        assert_eq!(kim.sanctions, ["NPWMD"]);
        assert_eq!(
            kim.aliases,
            [Alias::strong("KIM, Jin Sok"), Alias::weak("KIM, Chin-so'k")]
        );

        let vessel = &loaded.entities[2];
        assert_eq!(vessel.entity_type, EntityType::Vessel);
        assert_eq!(vessel.countries, ["ir"]);
        assert_eq!(vessel.sanctions, ["IRAN", "SDGT"]);

        let bank = &loaded.entities[3];
        assert_eq!(bank.addresses, ["Ferdowsi Avenue 1, Tehran 11365, Iran"]);
        assert_eq!(
            bank.remarks.as_deref(),
            Some("SWIFT/BIC BMJIIRTH; Website www.bmi.ir & more.")
        );

        // A Record_Count that disagrees with the document means entries went missing.
        let text = String::from_utf8(bytes).expect("utf-8");
        let wrong = text.replace(
            "<Record_Count>4</Record_Count>",
            "<Record_Count>5</Record_Count>",
        );
        assert!(matches!(
            load_xml(wrong.as_bytes()),
            Err(LoadError::Truncated(_))
        ));
        let cut = &text[..text.len() - 200];
        assert!(matches!(
            load_xml(cut.as_bytes()),
            Err(LoadError::Truncated(_))
        ));
    }
}

//! Country names and codes as publishers write them, resolved to lower-case ISO 3166-1 alpha-2.
//!
//! `celes` knows the ISO codes and the usual names; a small table adds the spellings sanctions
//! publishers use that it misses or gets wrong (`Korea, North`, `Palestinian`, `West Bank`,
//! `St. Kitts & Nevis`, `Samoa`, …). Pure functions, nothing cached.

use celes::Country;

/// Lower-case ISO 3166-1 alpha-2 code for a country code (alpha-2 or alpha-3, any case) or name
/// (case-insensitive, punctuation ignored), or `None` for values that name no single country
/// (`None Identified`, `Region: Commonwealth of Independent States`, `former Soviet Union`, …).
pub fn country_code(value: &str) -> Option<String> {
    let value = value.trim().trim_end_matches('.').trim();
    if value.is_empty() {
        return None;
    }
    // Codes are matched only in their exact shape, so "na" (the UN's "not available") stays a
    // code question for the caller; two or three letters are codes.
    if value.len() == 2 && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        let lower = value.to_ascii_lowercase();
        return match lower.as_str() {
            "uk" => Some("gb".into()),
            _ => Country::from_alpha2(&lower)
                .ok()
                .map(|c| c.alpha2.to_ascii_lowercase()),
        };
    }
    if value.len() == 3 && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        if let Ok(country) = Country::from_alpha3(value) {
            return Some(country.alpha2.to_ascii_lowercase());
        }
        if value.eq_ignore_ascii_case("usa") {
            return Some("us".into());
        }
    }
    resolve_name(value)
}

/// Whether `code` is a lower-case alpha-2 code of an existing country (Kosovo's `xk` included).
pub fn is_iso_alpha2(code: &str) -> bool {
    code.len() == 2
        && code.bytes().all(|b| b.is_ascii_lowercase())
        && Country::from_alpha2(code).is_ok()
}

fn resolve_name(value: &str) -> Option<String> {
    let lower = value.to_lowercase();
    // "Region: Gaza", "possibly Palestinian": the place after the qualifier.
    for prefix in ["region:", "possibly "] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            return resolve_name(rest.trim());
        }
    }
    let plain = key(&lower);
    if let Some(code) = lookup(&plain) {
        return Some(code);
    }
    let mut candidates = vec![plain];
    // "Iran (Islamic Republic of)": without the parenthesis, and with it moved to the front.
    if let (Some(open), Some(close)) = (lower.find('('), lower.rfind(')')) {
        if open < close {
            let outside = format!("{} {}", &lower[..open], &lower[close + 1..]);
            candidates.push(key(&format!("{} {}", &lower[open + 1..close], outside)));
            candidates.push(key(&outside));
        }
    }
    // "Korea, North", "Congo, Democratic Republic of the", "Bahamas, The": the inverted order.
    if let Some((head, tail)) = lower.split_once(',') {
        if !tail.contains(',') {
            candidates.push(key(&format!("{tail} {head}")));
            candidates.push(key(head));
        }
    }
    for candidate in &candidates {
        if let Some(code) = lookup(candidate) {
            return Some(code);
        }
        if let Some(rest) = candidate.strip_prefix("the") {
            if let Some(code) = lookup(rest) {
                return Some(code);
            }
        }
    }
    None
}

/// Letters and digits only, transliterated to ASCII, with "&" read as "and".
fn key(value: &str) -> String {
    any_ascii::any_ascii(&value.replace('&', " and "))
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

fn lookup(key: &str) -> Option<String> {
    if key.is_empty() {
        return None;
    }
    if let Some(code) = extra(key) {
        return Some(code.to_owned());
    }
    Country::from_name(key)
        .or_else(|_| Country::from_alias(key))
        .ok()
        .map(|c| c.alpha2.to_ascii_lowercase())
}

/// Publisher spellings `celes` lacks, and the names it resolves wrongly ("samoa" is an alias of
/// American Samoa there).
fn extra(key: &str) -> Option<&'static str> {
    let code = match key {
        "samoa" | "westernsamoa" => "ws",
        "palestinian"
        | "palestinians"
        | "westbank"
        | "gaza"
        | "gazastrip"
        | "palestinianterritories"
        | "palestinianterritory"
        | "occupiedpalestinianterritory"
        | "occupiedpalestinianterritories"
        | "palestinianauthority" => "ps",
        "kosovo" | "republicofkosovo" => "xk",
        "burma" | "myanmarburma" => "mm",
        "northkorea" | "koreanorth" | "dprk" | "democraticpeoplesrepublicofkorea" => "kp",
        "southkorea" | "koreasouth" | "republicofkorea" | "korearepublicof" => "kr",
        "iran" | "islamicrepublicofiran" => "ir",
        "russia" | "russianfederation" => "ru",
        "syria" | "syrianarabrepublic" => "sy",
        "hongkongspecialadministrativeregionchina"
        | "chinahongkongspecialadministrativeregion"
        | "hongkongsar"
        | "hongkongchina"
        | "hongkong" => "hk",
        "macau"
        | "macao"
        | "macaospecialadministrativeregionchina"
        | "chinamacaospecialadministrativeregion" => "mo",
        "republicofthecongo" | "congorepublicofthe" | "congobrazzaville" | "republicofcongo" => {
            "cg"
        }
        "democraticrepublicofthecongo"
        | "congodemocraticrepublicofthe"
        | "congokinshasa"
        | "drc"
        | "democraticrepublicofcongo" => "cd",
        "stkittsandnevis" | "saintkittsandnevis" | "stkittsnevis" => "kn",
        "stvincentandthegrenadines" | "saintvincentandthegrenadines" => "vc",
        "stlucia" | "saintlucia" => "lc",
        "virginislandsbritish" | "britishvirginislands" => "vg",
        "virginislandsus" | "usvirginislands" => "vi",
        "isleofman" | "manisleof" => "im",
        "laos" | "laopeoplesdemocraticrepublic" => "la",
        "vietnam" => "vn",
        "cotedivoire" | "ivorycoast" => "ci",
        "northmacedonia"
        | "northmacedoniatherepublicof"
        | "therepublicofnorthmacedonia"
        | "republicofnorthmacedonia"
        | "macedonia"
        | "formeryugoslavrepublicofmacedonia"
        | "theformeryugoslavrepublicofmacedonia" => "mk",
        "crimea" => "ua",
        "northernmali" => "ml",
        "unitedkingdom" | "greatbritain" | "uk" => "gb",
        "unitedstates" | "unitedstatesofamerica" | "usa" => "us",
        "unitedrepublicoftanzania" | "tanzania" => "tz",
        "bolivia" | "boliviaplurinationalstateof" | "plurinationalstateofbolivia" => "bo",
        "venezuela" | "venezuelabolivarianrepublicof" | "bolivarianrepublicofvenezuela" => "ve",
        "moldova" | "republicofmoldova" | "moldovarepublicof" => "md",
        "turkey" | "turkiye" => "tr",
        "czechrepublic" | "czechia" => "cz",
        "micronesiafederatedstatesof" | "federatedstatesofmicronesia" | "micronesia" => "fm",
        "bahamasthe" | "thebahamas" | "bahamas" => "bs",
        "gambiathe" | "thegambia" | "gambia" => "gm",
        "eswatini" | "swaziland" => "sz",
        "caboverde" | "capeverde" => "cv",
        "timorleste" | "easttimor" => "tl",
        "vaticancity" | "holysee" => "va",
        "curacao" => "cw",
        "taiwan" | "taiwanprovinceofchina" | "republicofchina" => "tw",
        _ => return None,
    };
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn lists(path: &str) -> Vec<u8> {
        let full = format!("{}/lists/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    #[test]
    fn codes_names_and_publisher_spellings() {
        let cases = [
            ("US", "us"),
            ("usa", "us"),
            ("GBR", "gb"),
            ("ru", "ru"),
            ("xk", "xk"),
            ("Korea, North", "kp"),
            ("Korea, South", "kr"),
            ("Democratic People's Republic of Korea", "kp"),
            ("Burma", "mm"),
            ("Iran (Islamic Republic of)", "ir"),
            ("Russian Federation", "ru"),
            ("Syrian Arab Republic", "sy"),
            ("Palestinian", "ps"),
            ("possibly Palestinian", "ps"),
            ("West Bank", "ps"),
            ("Region: Gaza", "ps"),
            ("State of Palestine", "ps"),
            ("Kosovo", "xk"),
            ("Congo, Democratic Republic of the", "cd"),
            ("Congo, Republic of the", "cg"),
            ("Democratic Republic of the Congo", "cd"),
            ("Bahamas, The", "bs"),
            ("The Gambia", "gm"),
            ("Man, Isle of", "im"),
            ("Virgin Islands, British", "vg"),
            ("China, Hong Kong Special Administrative Region", "hk"),
            ("North Macedonia, The Republic of", "mk"),
            ("St. Kitts & Nevis", "kn"),
            ("Cote d Ivoire", "ci"),
            ("Côte d'Ivoire", "ci"),
            ("Türkiye", "tr"),
            ("Viet Nam", "vn"),
            ("Samoa", "ws"),
            ("united kingdom of great britain and northern ireland", "gb"),
            ("Netherlands", "nl"),
            ("Niger", "ne"),
            ("Nigeria", "ng"),
        ];
        for (value, code) in cases {
            assert_eq!(country_code(value).as_deref(), Some(code), "{value}");
        }
        for value in [
            "",
            "-0-",
            "None Identified",
            "undetermined",
            "Region: Kafia Kingi",
            "zz",
        ] {
            assert_eq!(country_code(value), None, "{value}");
        }
    }

    #[test]
    fn alpha2_validity() {
        assert!(is_iso_alpha2("us"));
        assert!(is_iso_alpha2("xk"));
        assert!(!is_iso_alpha2("US"));
        assert!(!is_iso_alpha2("zz"));
        assert!(!is_iso_alpha2("usa"));
    }

    /// Every country string in the bundled OFAC and UN files resolves, except a known handful
    /// that name no single current country.
    #[test]
    fn every_publisher_country_string_resolves_but_the_known_non_countries() {
        let mut values = BTreeSet::new();
        for file in ["ofac/add.csv", "ofac/cons_add.csv"] {
            for row in super::super::csv_rows(&lists(file)).expect("csv") {
                if let Some(country) = row.record.get(4) {
                    values.insert(country.trim().to_owned());
                }
            }
        }
        for file in ["ofac/sdn.csv", "ofac/cons_prim.csv"] {
            for row in super::super::csv_rows(&lists(file)).expect("csv") {
                if row.record.len() < 12 {
                    continue;
                }
                values.insert(row.record[9].trim().to_owned());
                for item in row.record[11].split(';') {
                    if let Some(country) = super::super::ofac::remark_country(item) {
                        values.insert(country.to_owned());
                    }
                }
            }
        }
        let un = lists("un/UN_consolidated.xml");
        let un = std::str::from_utf8(&un).expect("utf-8");
        super::super::xml::walk(un, |step, _| {
            if let super::super::xml::Step::Close { path, text } = step {
                let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
                let leaf = path.last().map(String::as_str);
                if matches!(
                    (parent, leaf),
                    (Some("NATIONALITY"), Some("VALUE"))
                        | (
                            Some("INDIVIDUAL_ADDRESS" | "ENTITY_ADDRESS"),
                            Some("COUNTRY")
                        )
                ) {
                    values.insert(text.to_owned());
                }
            }
            Ok(())
        })
        .expect("un xml");
        // "na" is the UN's "not available" (the UN loader drops it; as a code it is Namibia).
        let unresolved: Vec<&str> = values
            .iter()
            .map(String::as_str)
            .filter(|v| !v.is_empty() && !super::super::ofac::is_null(v))
            .filter(|v| super::super::un::is_null(v) || country_code(v).is_none())
            .collect();
        println!(
            "{} distinct country strings; unresolved: {unresolved:?}",
            values.len()
        );
        let expected = [
            "Netherlands Antilles",
            "None Identified",
            "Region: Commonwealth of Independent States",
            "Region: Kafia Kingi",
            "former Soviet Union",
            "na",
            "undetermined",
        ];
        assert_eq!(unresolved, expected);
    }
}

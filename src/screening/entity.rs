//! The list entity every loader produces and every index is built from.
//!
//! Loaders (`loaders/`) turn a publisher's file into [`ListEntity`] values; the index
//! (`index.rs`) normalises their names; the API maps them onto the spec's §2.3 list record.
//! Ids are stable across refreshes: `<list name>:<the publisher's own id>`.

use serde::{Deserialize, Serialize};

/// Which screening endpoint and which `screening.*` field a list feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListKind {
    Sanction,
    Pep,
}

impl ListKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ListKind::Sanction => "sanction",
            ListKind::Pep => "pep",
        }
    }
}

/// What kind of party a list entry designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EntityType {
    Individual,
    /// A company, organisation, bank, group or other legal person.
    Entity,
    Vessel,
    Aircraft,
    #[default]
    Unknown,
}

impl EntityType {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Individual => "individual",
            EntityType::Entity => "entity",
            EntityType::Vessel => "vessel",
            EntityType::Aircraft => "aircraft",
            EntityType::Unknown => "unknown",
        }
    }
}

/// How much a name can be trusted as an identifier: the UN marks some aliases "Low quality" and
/// OFAC marks some "weak a.k.a."; such names can only ever produce a potential match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NameQuality {
    #[default]
    Strong,
    Weak,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alias {
    pub name: String,
    #[serde(default)]
    pub quality: NameQuality,
}

impl Alias {
    pub fn strong(name: impl Into<String>) -> Alias {
        Alias {
            name: name.into(),
            quality: NameQuality::Strong,
        }
    }

    pub fn weak(name: impl Into<String>) -> Alias {
        Alias {
            name: name.into(),
            quality: NameQuality::Weak,
        }
    }
}

/// A position held by a politically exposed person (§2.3 `positions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Position {
    pub title: String,
    #[serde(default)]
    pub start_date: Option<String>,
    #[serde(default)]
    pub end_date: Option<String>,
}

/// One designated person, organisation, vessel or aircraft as a loader read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ListEntity {
    /// `<list name>:<external_id>`; filled in by the list manager from the list's configured name.
    pub id: String,
    /// The publisher's own identifier (OFAC `ent_num`, UN `REFERENCE_NUMBER`, UK `Unique ID`,
    /// OpenSanctions `id`, the custom list's `id`).
    pub external_id: String,
    pub entity_type: EntityType,
    /// The primary name as published (original case and script).
    pub name: String,
    /// Every other name: a.k.a., f.k.a., n.k.a., names in original script, spelling variants.
    pub aliases: Vec<Alias>,
    /// Lower-case ISO 3166-1 alpha-2 codes (nationality, citizenship, address or registration
    /// country) where the loader could resolve them.
    pub countries: Vec<String>,
    /// Free-text addresses, one per entry.
    pub addresses: Vec<String>,
    /// `YYYY-MM-DD`, `YYYY-MM` or `YYYY`; several when the publisher lists alternatives.
    pub birth_dates: Vec<String>,
    pub gender: Option<String>,
    pub positions: Vec<Position>,
    /// Programmes or regimes (`SDGT`, `IRAN`, `Russia`, `ISIL (Da'esh) and Al-Qaida`, …).
    pub sanctions: Vec<String>,
    pub political_party: Vec<String>,
    pub tags: Vec<String>,
    /// The publisher's remarks, when short enough to be useful.
    pub remarks: Option<String>,
    /// When the publisher designated or last changed the entry (`YYYY-MM-DD`), when given.
    pub listed_on: Option<String>,
}

impl ListEntity {
    /// Every name of the entity with its quality, the primary name first.
    pub fn names(&self) -> impl Iterator<Item = (&str, NameQuality)> {
        std::iter::once((self.name.as_str(), NameQuality::Strong))
            .chain(self.aliases.iter().map(|a| (a.name.as_str(), a.quality)))
    }
}

/// What a loader read from one source: its entities and, when the file says, its publish date.
#[derive(Debug, Clone, Default)]
pub struct LoadedSource {
    pub entities: Vec<ListEntity>,
    /// The publisher's date for this version (`YYYY-MM-DD` or RFC 3339), when the file carries one.
    pub published: Option<String>,
}

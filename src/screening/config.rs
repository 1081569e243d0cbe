//! Screening configuration: which lists load from where, and the thresholds that turn scores into
//! "clear", "potential match" and "match".
//!
//! With no `[[screening.lists]]` configured, the bundled lists under `lists_dir` load (OFAC SDN
//! and consolidated non-SDN, UN consolidated, UK sanctions list, and the OpenSanctions samples).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::entity::ListKind;
use super::loaders::ListFormat;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScreeningConfig {
    /// Screen transactions' parties and serve the screening endpoints.
    pub enabled: bool,
    /// Directory the bundled list paths are relative to.
    pub lists_dir: PathBuf,
    /// Score (0–100) from which a party is a "match" in a transaction's screening block.
    pub match_threshold: f32,
    /// Score (0–100) from which a party is a "potential match".
    pub potential_threshold: f32,
    /// Screening results cached (per shard thread) so a busy customer is not rescreened on every
    /// payment; dropped whenever the lists change.
    pub cache_entries: usize,
    /// How often lists with a `url` are downloaded again.
    pub refresh_interval_secs: u64,
    /// A new version of a list with fewer than this share of the previous version's entities is
    /// refused as truncated (the previous version keeps serving).
    pub min_retained_share: f32,
    /// Empty: the bundled lists.
    pub lists: Vec<ListSource>,
}

/// One list and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListSource {
    /// Short stable name; entity ids are `<name>:<publisher id>`.
    pub name: String,
    /// Shown as `dataset[].name` in list records.
    #[serde(default)]
    pub title: Option<String>,
    pub kind: ListKind,
    pub format: ListFormat,
    /// The file (for OFAC CSV: `sdn.csv`). Relative paths are relative to `lists_dir`.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// OFAC CSV companions.
    #[serde(default)]
    pub alt: Option<PathBuf>,
    #[serde(default)]
    pub add: Option<PathBuf>,
    #[serde(default)]
    pub comments: Option<PathBuf>,
    /// Download from here on start and every `refresh_interval_secs` (single-file formats); the
    /// last good download is kept under the data directory and `path`, if given, seeds the
    /// first start.
    #[serde(default)]
    pub url: Option<String>,
    /// Shown as `dataset[].url` in list records.
    #[serde(default)]
    pub source_url: Option<String>,
    /// A business's own watchlist: only that business's queries and transactions see it.
    #[serde(default)]
    pub business: Option<String>,
}

impl Default for ScreeningConfig {
    fn default() -> Self {
        ScreeningConfig {
            enabled: true,
            lists_dir: PathBuf::from("lists"),
            match_threshold: 90.0,
            potential_threshold: 80.0,
            cache_entries: 65_536,
            refresh_interval_secs: 6 * 3600,
            min_retained_share: 0.5,
            lists: Vec::new(),
        }
    }
}

impl ScreeningConfig {
    /// Problems with the settings, as (key, problem).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        for (key, value) in [
            ("screening.match_threshold", self.match_threshold),
            ("screening.potential_threshold", self.potential_threshold),
        ] {
            if !(0.0..=100.0).contains(&value) {
                problems.push((key.to_owned(), "must be between 0 and 100".to_owned()));
            }
        }
        if self.potential_threshold > self.match_threshold {
            problems.push((
                "screening.potential_threshold".to_owned(),
                "must not exceed screening.match_threshold".to_owned(),
            ));
        }
        if !(0.0..=1.0).contains(&self.min_retained_share) {
            problems.push((
                "screening.min_retained_share".to_owned(),
                "must be between 0 and 1".to_owned(),
            ));
        }
        let mut names = std::collections::HashSet::new();
        for (i, list) in self.lists.iter().enumerate() {
            let key = format!("screening.lists[{i}]");
            if list.name.is_empty()
                || !list
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                problems.push((
                    format!("{key}.name"),
                    "must be letters, digits, '-' or '_'".to_owned(),
                ));
            }
            if !names.insert(list.name.clone()) {
                problems.push((
                    format!("{key}.name"),
                    format!("duplicate list name {}", list.name),
                ));
            }
            if list.path.is_none() && list.url.is_none() {
                problems.push((key.clone(), "needs a path or a url".to_owned()));
            }
            if let Some(url) = &list.url {
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    problems.push((format!("{key}.url"), "must be an http(s) URL".to_owned()));
                }
                if list.format == ListFormat::OfacCsv {
                    problems.push((
                        format!("{key}.url"),
                        "ofac-csv spans four files; download them with a job or use ofac-xml"
                            .to_owned(),
                    ));
                }
            }
        }
        problems
    }

    /// The thresholds that turn scores into "clear", "potential match" and "match".
    pub fn thresholds(&self) -> super::Thresholds {
        super::Thresholds {
            potential: self.potential_threshold,
            matched: self.match_threshold,
        }
    }

    /// The configured lists, or the bundled ones when none are configured.
    pub fn sources(&self) -> Vec<ListSource> {
        if !self.lists.is_empty() {
            return self.lists.clone();
        }
        bundled_lists()
    }

    /// Resolves a list path against `lists_dir`.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.lists_dir.join(path)
        }
    }
}

fn source(
    name: &str,
    title: &str,
    kind: ListKind,
    format: ListFormat,
    path: &str,
    source_url: &str,
) -> ListSource {
    ListSource {
        name: name.to_owned(),
        title: Some(title.to_owned()),
        kind,
        format,
        path: Some(PathBuf::from(path)),
        alt: None,
        add: None,
        comments: None,
        url: None,
        source_url: Some(source_url.to_owned()),
        business: None,
    }
}

/// The lists shipped in `lists/` (see `lists/README.md` for provenance and licences).
pub fn bundled_lists() -> Vec<ListSource> {
    let ofac = "https://sanctionssearch.ofac.treas.gov/";
    let mut sdn = source(
        "ofac-sdn",
        "OFAC Specially Designated Nationals",
        ListKind::Sanction,
        ListFormat::OfacCsv,
        "ofac/sdn.csv",
        ofac,
    );
    sdn.alt = Some(PathBuf::from("ofac/alt.csv"));
    sdn.add = Some(PathBuf::from("ofac/add.csv"));
    sdn.comments = Some(PathBuf::from("ofac/sdn_comments.csv"));
    let mut cons = source(
        "ofac-cons",
        "OFAC Consolidated (non-SDN) Lists",
        ListKind::Sanction,
        ListFormat::OfacCsv,
        "ofac/cons_prim.csv",
        ofac,
    );
    cons.alt = Some(PathBuf::from("ofac/cons_alt.csv"));
    cons.add = Some(PathBuf::from("ofac/cons_add.csv"));
    cons.comments = Some(PathBuf::from("ofac/cons_comments.csv"));
    vec![
        sdn,
        cons,
        source(
            "un",
            "UN Security Council Consolidated List",
            ListKind::Sanction,
            ListFormat::UnXml,
            "un/UN_consolidated.xml",
            "https://main.un.org/securitycouncil/en/content/un-sc-consolidated-list",
        ),
        source(
            "uk",
            "UK Sanctions List (FCDO)",
            ListKind::Sanction,
            ListFormat::UkCsv,
            "uk/UK_Sanctions_List.csv",
            "https://www.gov.uk/government/publications/the-uk-sanctions-list",
        ),
        source(
            "zala",
            "OpenSanctions sample (sanctioned persons and companies)",
            ListKind::Sanction,
            ListFormat::FtmJson,
            "opensanctions/zala_entities.ftm.json",
            "https://www.opensanctions.org/",
        ),
        source(
            "us-congress",
            "OpenSanctions US Congress members (PEP)",
            ListKind::Pep,
            ListFormat::SenzingJson,
            "opensanctions/us_congress_senzing.json",
            "https://www.opensanctions.org/datasets/us_congress/",
        ),
    ]
}

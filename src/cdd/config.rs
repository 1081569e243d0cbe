//! `[cdd.risk]`: the customer risk model — a weighted factor table, the score bands, and the
//! floors that raise a customer's tier whatever the score.
//!
//! Each factor has a `weight`, the risk (0–100) of a missing value (`unknown`), of a value it does
//! not list (`default`), and a table of `values`. Values are compared lower-case; country factors
//! compare ISO 3166-1 alpha-2 codes (names and alpha-3 codes are resolved first); factors with
//! `contains = true` (free text such as occupations) also match a listed key that appears as whole
//! words inside the value, taking the riskiest such key. Settings merge onto the built-in model
//! key by key: `VIGIL_CDD__RISK__SANCTIONS__WEIGHT=30` changes one weight and keeps the rest, and
//! a `[cdd.risk.occupation.values]` entry adds to (or overrides) the built-in table; to drop a
//! built-in value, set it to the factor's `default`.
//!
//! The defaults are illustrative, not advice: country risks follow the FATF's public lists of
//! high-risk (100) and monitored (60) jurisdictions as of early 2025, with Nigeria — the home
//! market of the spec's BVN, NIN and CAC numbers — at 20 rather than 60, since a Nigerian
//! institution's own customers are the norm there, not an exception.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A risk band / due-diligence tier.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Low,
    Medium,
    High,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Low => "low",
            Tier::Medium => "medium",
            Tier::High => "high",
        }
    }

    pub fn parse(value: &str) -> Option<Tier> {
        match value {
            "low" => Some(Tier::Low),
            "medium" => Some(Tier::Medium),
            "high" => Some(Tier::High),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CddConfig {
    pub risk: RiskModel,
}

/// One factor of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Factor {
    /// Relative weight; the score is the weighted mean of the factors' risks.
    pub weight: f64,
    /// Risk (0–100) when the customer gives no value.
    pub unknown: f64,
    /// Risk (0–100) of a value the table does not list.
    pub default: f64,
    /// Free text: a listed key found as whole words inside the value matches.
    pub contains: bool,
    /// Lower-case value → risk (0–100).
    pub values: BTreeMap<String, f64>,
}

impl Default for Factor {
    fn default() -> Self {
        Factor {
            weight: 0.0,
            unknown: 50.0,
            default: 50.0,
            contains: false,
            values: BTreeMap::new(),
        }
    }
}

fn factor(
    weight: f64,
    unknown: f64,
    default: f64,
    contains: bool,
    values: &[(&str, f64)],
) -> Factor {
    Factor {
        weight,
        unknown,
        default,
        contains,
        values: values.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
    }
}

/// Conditions that raise the tier to at least the given one, whatever the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierFloors {
    pub sanction_match: Tier,
    pub sanction_potential_match: Tier,
    pub pep_match: Tier,
    pub pep_potential_match: Tier,
    /// The customer declares a political position (`politicalPosition: true`).
    pub political_position: Tier,
    /// The customer declares a political affiliation (`politicalAffiliation: true`).
    pub political_affiliation: Tier,
}

impl Default for TierFloors {
    fn default() -> Self {
        TierFloors {
            sanction_match: Tier::High,
            sanction_potential_match: Tier::High,
            pep_match: Tier::High,
            pep_potential_match: Tier::Medium,
            political_position: Tier::High,
            political_affiliation: Tier::Medium,
        }
    }
}

/// The weighted factor table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RiskModel {
    /// Scores from this value are `medium`.
    pub medium_from: f64,
    /// Scores from this value are `high`.
    pub high_from: f64,
    pub floors: TierFloors,
    /// Country of residence or incorporation (`country`, a Vigil addition).
    pub country: Factor,
    pub nationality: Factor,
    /// `occupation` (individuals) or `industry` (corporates).
    pub occupation: Factor,
    /// PEP screening of the customer's name: keys `match`, `potential match`, `clear`.
    pub pep: Factor,
    /// Sanctions screening of the customer's name: keys `match`, `potential match`, `clear`.
    pub sanctions: Factor,
    /// Declared political exposure: keys `position`, `affiliation`, `none`.
    pub political_exposure: Factor,
    /// Product / onboarding channel (`channel`).
    pub channel: Factor,
    pub source_of_funds: Factor,
    pub account_type: Factor,
    /// `purposeOfAccount`.
    pub purpose: Factor,
    /// `individual` or `corporate`.
    pub customer_type: Factor,
}

const HIGH_RISK_COUNTRIES: &[&str] = &["kp", "ir", "mm"];
const MONITORED_COUNTRIES: &[&str] = &[
    "dz", "ao", "bg", "bf", "cm", "ci", "hr", "cd", "ht", "ke", "la", "lb", "ml", "mc", "mz", "na",
    "np", "za", "ss", "sy", "tz", "ve", "vn", "ye",
];

fn countries(weight: f64) -> Factor {
    let mut values: BTreeMap<String, f64> = HIGH_RISK_COUNTRIES
        .iter()
        .map(|c| ((*c).to_owned(), 100.0))
        .chain(MONITORED_COUNTRIES.iter().map(|c| ((*c).to_owned(), 60.0)))
        .collect();
    values.insert("ng".to_owned(), 20.0);
    values.insert("ru".to_owned(), 70.0);
    values.insert("af".to_owned(), 80.0);
    Factor {
        weight,
        unknown: 50.0,
        default: 20.0,
        contains: false,
        values,
    }
}

impl Default for RiskModel {
    fn default() -> Self {
        RiskModel {
            medium_from: 35.0,
            high_from: 60.0,
            floors: TierFloors::default(),
            country: countries(10.0),
            nationality: countries(5.0),
            occupation: factor(
                10.0,
                50.0,
                30.0,
                true,
                &[
                    ("student", 10.0),
                    ("teacher", 10.0),
                    ("civil servant", 20.0),
                    ("salaried", 10.0),
                    ("employee", 15.0),
                    ("retired", 15.0),
                    ("trader", 50.0),
                    ("lawyer", 60.0),
                    ("accountant", 40.0),
                    ("real estate", 75.0),
                    ("car dealer", 75.0),
                    ("jeweller", 80.0),
                    ("jeweler", 80.0),
                    ("precious metals", 85.0),
                    ("bureau de change", 90.0),
                    ("money changer", 90.0),
                    ("crypto", 85.0),
                    ("casino", 90.0),
                    ("gambling", 90.0),
                    ("arms", 95.0),
                    ("politician", 90.0),
                    ("oil and gas", 60.0),
                ],
            ),
            pep: factor(
                15.0,
                50.0,
                50.0,
                false,
                &[("match", 100.0), ("potential match", 70.0), ("clear", 0.0)],
            ),
            sanctions: factor(
                20.0,
                50.0,
                50.0,
                false,
                &[("match", 100.0), ("potential match", 80.0), ("clear", 0.0)],
            ),
            political_exposure: factor(
                10.0,
                30.0,
                30.0,
                false,
                &[("position", 90.0), ("affiliation", 60.0), ("none", 0.0)],
            ),
            channel: factor(
                5.0,
                40.0,
                40.0,
                true,
                &[
                    ("branch", 10.0),
                    ("mobile", 30.0),
                    ("web", 35.0),
                    ("online", 35.0),
                    ("agent", 50.0),
                    ("third party", 70.0),
                ],
            ),
            source_of_funds: factor(
                10.0,
                60.0,
                40.0,
                true,
                &[
                    ("salary", 10.0),
                    ("pension", 10.0),
                    ("savings", 15.0),
                    ("business", 40.0),
                    ("investment", 40.0),
                    ("inheritance", 45.0),
                    ("gift", 60.0),
                    ("loan", 30.0),
                    ("cash", 70.0),
                    ("crypto", 85.0),
                ],
            ),
            account_type: factor(
                5.0,
                40.0,
                40.0,
                true,
                &[
                    ("savings", 10.0),
                    ("current", 30.0),
                    ("corporate", 40.0),
                    ("domiciliary", 60.0),
                    ("foreign currency", 60.0),
                ],
            ),
            purpose: factor(
                5.0,
                50.0,
                40.0,
                true,
                &[
                    ("salary", 10.0),
                    ("savings", 10.0),
                    ("personal", 15.0),
                    ("business", 40.0),
                    ("investment", 40.0),
                    ("international", 70.0),
                    ("remittance", 70.0),
                ],
            ),
            customer_type: factor(
                5.0,
                50.0,
                50.0,
                false,
                &[("individual", 20.0), ("corporate", 40.0)],
            ),
        }
    }
}

impl RiskModel {
    /// Every factor with its config key, in the order the analysis lists them.
    pub fn factors(&self) -> [(&'static str, &Factor); 11] {
        [
            ("sanctions", &self.sanctions),
            ("pep", &self.pep),
            ("political_exposure", &self.political_exposure),
            ("country", &self.country),
            ("nationality", &self.nationality),
            ("occupation", &self.occupation),
            ("source_of_funds", &self.source_of_funds),
            ("channel", &self.channel),
            ("account_type", &self.account_type),
            ("purpose", &self.purpose),
            ("customer_type", &self.customer_type),
        ]
    }

    /// Problems as (config key, problem), for config validation.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let in_range = |v: f64| v.is_finite() && (0.0..=100.0).contains(&v);
        if !in_range(self.medium_from) || !in_range(self.high_from) {
            problems.push((
                "cdd.risk.medium_from".to_owned(),
                "medium_from and high_from must be between 0 and 100".to_owned(),
            ));
        } else if self.medium_from >= self.high_from {
            problems.push((
                "cdd.risk.medium_from".to_owned(),
                "must be below cdd.risk.high_from".to_owned(),
            ));
        }
        let mut total = 0.0;
        for (name, factor) in self.factors() {
            let key = format!("cdd.risk.{name}");
            if !factor.weight.is_finite() || factor.weight < 0.0 {
                problems.push((format!("{key}.weight"), "must be 0 or more".to_owned()));
            }
            total += factor.weight.max(0.0);
            if !in_range(factor.unknown) || !in_range(factor.default) {
                problems.push((
                    key.clone(),
                    "unknown and default must be between 0 and 100".into(),
                ));
            }
            if let Some((value, _)) = factor.values.iter().find(|(_, risk)| !in_range(**risk)) {
                problems.push((
                    format!("{key}.values"),
                    format!("risk of '{value}' must be between 0 and 100"),
                ));
            }
            if let Some(value) = factor.values.keys().find(|k| k.to_lowercase() != **k) {
                problems.push((
                    format!("{key}.values"),
                    format!("keys are lower-case ('{value}')"),
                ));
            }
        }
        if total <= 0.0 {
            problems.push((
                "cdd.risk".to_owned(),
                "at least one factor needs a positive weight".to_owned(),
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_model_is_valid_and_weighs_one_hundred() {
        let model = RiskModel::default();
        assert!(model.problems().is_empty(), "{:?}", model.problems());
        let total: f64 = model.factors().iter().map(|(_, f)| f.weight).sum();
        assert_eq!(total, 100.0);
    }

    #[test]
    fn bad_models_are_named_by_key() {
        let mut model = RiskModel {
            medium_from: 70.0,
            ..RiskModel::default()
        };
        model.occupation.values.insert("Casino".into(), 120.0);
        let problems = model.problems();
        let keys: Vec<&str> = problems.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"cdd.risk.medium_from"), "{keys:?}");
        assert!(keys.contains(&"cdd.risk.occupation.values"), "{keys:?}");
    }
}

//! The customer risk rating: the weighted factor table of [`RiskModel`] applied to a customer's
//! profile and screening results, giving `riskScore` (0–100), `riskLevel` (the score's band),
//! `riskTier` (the band raised by the model's floors — what the institution acts on) and the
//! plain-words `analysis`.
//!
//! `riskScore = Σ weightᵢ · riskᵢ / Σ weightᵢ`, rounded to a whole number. Each factor's risk is
//! looked up in its table (see [`super::config`]); a missing value counts as the factor's
//! `unknown` risk and is named in the analysis, so incomplete profiles do not rate as low risk.

use serde::{Deserialize, Serialize};

use super::config::{Factor, RiskModel, Tier};
use crate::screening::loaders::country::country_code;

/// What the model reads from a customer profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RiskInputs {
    pub customer_type: Option<String>,
    pub country: Option<String>,
    pub nationality: Option<String>,
    pub occupation: Option<String>,
    pub channel: Option<String>,
    pub source_of_funds: Option<String>,
    pub account_type: Option<String>,
    pub purpose: Option<String>,
    pub political_position: Option<bool>,
    pub political_affiliation: Option<bool>,
}

/// The best list entity one screening found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenedEntity {
    pub entity_id: String,
    pub name: String,
    pub matched_name: String,
    pub list: String,
    /// 0–100.
    pub score: f64,
    /// How the score came about (matched parts, weights, adjustments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<crate::model::decision::MatchExplanation>,
}

/// One screening (sanctions or PEP) of the customer's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreeningCheck {
    /// `clear`, `potential match` or `match`; `not run` without a name or with screening off.
    #[schema(example = "clear")]
    pub status: String,
    pub best: Option<ScreenedEntity>,
}

impl ScreeningCheck {
    pub fn not_run() -> ScreeningCheck {
        ScreeningCheck {
            status: "not run".to_owned(),
            best: None,
        }
    }

    fn ran(&self) -> bool {
        self.status != "not run"
    }
}

/// Both screenings of a customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerScreening {
    /// The name screened, if any.
    pub name: Option<String>,
    pub sanction: ScreeningCheck,
    pub pep: ScreeningCheck,
    /// Why screening did not run, when it did not.
    pub note: Option<String>,
}

/// One factor's part in a rating.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FactorResult {
    /// The config key (`cdd.risk.<factor>`).
    #[schema(example = "nationality")]
    pub factor: String,
    /// In words.
    #[schema(example = "nationality")]
    pub label: String,
    /// The customer's value as the model read it (`null` when missing).
    pub value: Option<String>,
    /// The table key that matched, if any.
    pub matched: Option<String>,
    /// 0–100.
    pub risk: f64,
    pub weight: f64,
    /// Points this factor adds to the score (`weight · risk / Σ weights`).
    pub contribution: f64,
}

/// A rating.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rating {
    pub score: f64,
    pub level: Tier,
    pub tier: Tier,
    pub factors: Vec<FactorResult>,
    /// Why the tier is above the level, in words.
    pub floors: Vec<String>,
    pub analysis: String,
}

fn label(factor: &str) -> &'static str {
    match factor {
        "sanctions" => "sanctions screening",
        "pep" => "PEP screening",
        "political_exposure" => "declared political exposure",
        "country" => "country of residence",
        "nationality" => "nationality",
        "occupation" => "occupation or industry",
        "source_of_funds" => "source of funds",
        "channel" => "channel",
        "account_type" => "account type",
        "purpose" => "purpose of account",
        "customer_type" => "customer type",
        _ => "factor",
    }
}

/// Lower-case words separated by single spaces.
fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Looks `value` up in a factor's table: (risk, matched key).
fn lookup(factor: &Factor, value: &str) -> (f64, Option<String>) {
    let lower = value.trim().to_lowercase();
    if let Some(risk) = factor.values.get(&lower) {
        return (*risk, Some(lower));
    }
    if factor.contains {
        let padded = format!(" {} ", words(value));
        let best = factor
            .values
            .iter()
            .filter(|(key, _)| {
                let key = words(key);
                !key.is_empty() && padded.contains(&format!(" {key} "))
            })
            .max_by(|a, b| a.1.total_cmp(b.1));
        if let Some((key, risk)) = best {
            return (*risk, Some(key.clone()));
        }
    }
    (factor.default, None)
}

fn country_value(value: Option<&str>) -> Option<String> {
    let value = value?.trim();
    if value.is_empty() {
        return None;
    }
    Some(country_code(value).unwrap_or_else(|| value.to_lowercase()))
}

fn band(model: &RiskModel, score: f64) -> Tier {
    if score >= model.high_from {
        Tier::High
    } else if score >= model.medium_from {
        Tier::Medium
    } else {
        Tier::Low
    }
}

/// Rates a customer.
pub fn rate(model: &RiskModel, inputs: &RiskInputs, screening: &CustomerScreening) -> Rating {
    let exposure = match (inputs.political_position, inputs.political_affiliation) {
        (Some(true), _) => Some("position".to_owned()),
        (_, Some(true)) => Some("affiliation".to_owned()),
        (Some(false), _) | (_, Some(false)) => Some("none".to_owned()),
        (None, None) => None,
    };
    let screened = |check: &ScreeningCheck| check.ran().then(|| check.status.clone());
    let values: [(&str, Option<String>); 11] = [
        ("sanctions", screened(&screening.sanction)),
        ("pep", screened(&screening.pep)),
        ("political_exposure", exposure),
        ("country", country_value(inputs.country.as_deref())),
        ("nationality", country_value(inputs.nationality.as_deref())),
        ("occupation", inputs.occupation.clone()),
        ("source_of_funds", inputs.source_of_funds.clone()),
        ("channel", inputs.channel.clone()),
        ("account_type", inputs.account_type.clone()),
        ("purpose", inputs.purpose.clone()),
        ("customer_type", inputs.customer_type.clone()),
    ];
    let total_weight: f64 = model
        .factors()
        .iter()
        .map(|(_, f)| f.weight.max(0.0))
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let mut factors = Vec::with_capacity(values.len());
    for ((name, factor), (_, value)) in model.factors().into_iter().zip(values) {
        let value = value.filter(|v| !v.trim().is_empty());
        let (risk, matched) = match &value {
            None => (factor.unknown, None),
            Some(v) => lookup(factor, v),
        };
        let weight = factor.weight.max(0.0);
        factors.push(FactorResult {
            factor: name.to_owned(),
            label: label(name).to_owned(),
            value,
            matched,
            risk,
            weight,
            contribution: round1(weight * risk / total_weight),
        });
    }
    let score = (factors.iter().map(|f| f.weight * f.risk).sum::<f64>() / total_weight)
        .round()
        .clamp(0.0, 100.0);
    let level = band(model, score);
    let mut tier = level;
    let mut floors = Vec::new();
    let floors_model = &model.floors;
    let mut raise = |floor: Tier, why: String| {
        if floor > tier {
            tier = floor;
        }
        if floor > level {
            floors.push(format!("{why} (at least {})", floor.as_str()));
        }
    };
    match screening.sanction.status.as_str() {
        "match" => raise(
            floors_model.sanction_match,
            "sanctions screening found a match".into(),
        ),
        "potential match" => raise(
            floors_model.sanction_potential_match,
            "sanctions screening found a potential match".into(),
        ),
        _ => {}
    }
    match screening.pep.status.as_str() {
        "match" => raise(floors_model.pep_match, "PEP screening found a match".into()),
        "potential match" => raise(
            floors_model.pep_potential_match,
            "PEP screening found a potential match".into(),
        ),
        _ => {}
    }
    if inputs.political_position == Some(true) {
        raise(
            floors_model.political_position,
            "the customer declares a political position".into(),
        );
    }
    if inputs.political_affiliation == Some(true) {
        raise(
            floors_model.political_affiliation,
            "the customer declares a political affiliation".into(),
        );
    }
    let analysis = analysis(score, level, tier, &factors, &floors, screening);
    Rating {
        score,
        level,
        tier,
        factors,
        floors,
        analysis,
    }
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn describe(f: &FactorResult) -> String {
    let value = f.value.as_deref().unwrap_or("not given");
    format!(
        "{} '{}' (risk {:.0}/100, weight {}, +{:.1} points)",
        f.label, value, f.risk, f.weight, f.contribution
    )
}

fn screening_words(kind: &str, check: &ScreeningCheck) -> String {
    match &check.best {
        Some(best) if check.status != "clear" => format!(
            "{kind} screening: {} with '{}' on {} (score {:.1}, matched as '{}')",
            check.status, best.name, best.list, best.score, best.matched_name
        ),
        _ => format!("{kind} screening: {}", check.status),
    }
}

fn analysis(
    score: f64,
    level: Tier,
    tier: Tier,
    factors: &[FactorResult],
    floors: &[String],
    screening: &CustomerScreening,
) -> String {
    let mut text = format!(
        "Risk score {score:.0} of 100 ({} risk); risk tier {}.",
        level.as_str(),
        tier.as_str()
    );
    if !floors.is_empty() {
        text.push_str(&format!(
            " The tier is raised above the score's band because {}.",
            floors.join("; ")
        ));
    }
    let mut ranked: Vec<&FactorResult> = factors
        .iter()
        .filter(|f| f.value.is_some() && f.weight > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.contribution.total_cmp(&a.contribution));
    let drivers: Vec<String> = ranked
        .iter()
        .filter(|f| f.risk >= 50.0)
        .take(4)
        .map(|f| describe(f))
        .collect();
    if drivers.is_empty() {
        let largest: Vec<String> = ranked.iter().take(3).map(|f| describe(f)).collect();
        if largest.is_empty() {
            text.push_str(" No factor has a value.");
        } else {
            text.push_str(&format!(
                " No factor given is high-risk; the largest contributions are {}.",
                largest.join("; ")
            ));
        }
    } else {
        text.push_str(&format!(" Main drivers: {}.", drivers.join("; ")));
    }
    let lowest: Vec<String> = ranked
        .iter()
        .rev()
        .filter(|f| f.risk < 30.0)
        .take(3)
        .map(|f| format!("{} '{}'", f.label, f.value.as_deref().unwrap_or("")))
        .collect();
    if !lowest.is_empty() {
        text.push_str(&format!(" Lower-risk factors: {}.", lowest.join(", ")));
    }
    let missing: Vec<&str> = factors
        .iter()
        .filter(|f| f.value.is_none() && f.weight > 0.0)
        .map(|f| f.label.as_str())
        .collect();
    if !missing.is_empty() {
        text.push_str(&format!(
            " Not known, counted at each factor's 'unknown' risk: {}.",
            missing.join(", ")
        ));
    }
    text.push_str(&format!(
        " {}; {}.",
        screening_words("Sanctions", &screening.sanction),
        screening_words("PEP", &screening.pep)
    ));
    if let Some(note) = &screening.note {
        text.push_str(&format!(" {note}."));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clear() -> CustomerScreening {
        let check = ScreeningCheck {
            status: "clear".into(),
            best: None,
        };
        CustomerScreening {
            name: Some("Ada Obi".into()),
            sanction: check.clone(),
            pep: check,
            note: None,
        }
    }

    fn low_risk_inputs() -> RiskInputs {
        RiskInputs {
            customer_type: Some("individual".into()),
            country: Some("NG".into()),
            nationality: Some("Nigeria".into()),
            occupation: Some("Secondary school teacher".into()),
            channel: Some("branch".into()),
            source_of_funds: Some("Salary".into()),
            account_type: Some("savings".into()),
            purpose: Some("salary account".into()),
            political_position: Some(false),
            political_affiliation: Some(false),
        }
    }

    #[test]
    fn a_salaried_domestic_customer_with_clear_screening_rates_low() {
        let rating = rate(&RiskModel::default(), &low_risk_inputs(), &clear());
        assert_eq!(rating.level, Tier::Low, "{}", rating.analysis);
        assert_eq!(rating.tier, Tier::Low);
        assert!(rating.score < 20.0, "{}", rating.score);
        let occupation = rating
            .factors
            .iter()
            .find(|f| f.factor == "occupation")
            .expect("occupation");
        assert_eq!(occupation.matched.as_deref(), Some("teacher"));
        let nationality = rating
            .factors
            .iter()
            .find(|f| f.factor == "nationality")
            .expect("nationality");
        assert_eq!(nationality.value.as_deref(), Some("ng"));
        assert!(
            rating.analysis.contains("Risk score"),
            "{}",
            rating.analysis
        );
        assert!(rating.analysis.contains("Lower-risk factors"));
    }

    #[test]
    fn risky_values_raise_the_score_and_the_analysis_names_them() {
        let inputs = RiskInputs {
            nationality: Some("IR".into()),
            occupation: Some("Bureau de change operator".into()),
            source_of_funds: Some("cash from trading".into()),
            ..low_risk_inputs()
        };
        let rating = rate(&RiskModel::default(), &inputs, &clear());
        let base = rate(&RiskModel::default(), &low_risk_inputs(), &clear());
        assert!(
            rating.score > base.score + 15.0,
            "{} vs {}",
            rating.score,
            base.score
        );
        assert!(
            rating.analysis.contains("Main drivers"),
            "{}",
            rating.analysis
        );
        assert!(
            rating.analysis.contains("bureau de change")
                || rating.analysis.contains("Bureau de change")
        );
        assert!(
            rating.analysis.contains("nationality 'ir'"),
            "{}",
            rating.analysis
        );
    }

    #[test]
    fn a_sanctions_match_raises_the_tier_to_high_whatever_the_score() {
        let mut screening = clear();
        screening.sanction = ScreeningCheck {
            status: "match".into(),
            best: Some(ScreenedEntity {
                entity_id: "test:S1".into(),
                name: "Ivan Petrovich Sidorov".into(),
                matched_name: "Ivan Sidorov".into(),
                list: "test-sanctions".into(),
                score: 96.0,
                explanation: None,
            }),
        };
        let rating = rate(&RiskModel::default(), &low_risk_inputs(), &screening);
        assert_eq!(rating.tier, Tier::High);
        assert!(
            rating.level < Tier::High,
            "the score band stays what the score says"
        );
        assert!(rating
            .analysis
            .contains("sanctions screening found a match"));
        assert!(rating.analysis.contains("Ivan Petrovich Sidorov"));
    }

    #[test]
    fn missing_values_count_as_unknown_risk_and_are_listed() {
        let inputs = RiskInputs {
            customer_type: Some("individual".into()),
            ..RiskInputs::default()
        };
        let mut screening = clear();
        screening.sanction = ScreeningCheck::not_run();
        screening.pep = ScreeningCheck::not_run();
        screening.note = Some("No name to screen".into());
        let rating = rate(&RiskModel::default(), &inputs, &screening);
        assert!(rating.score >= 35.0, "{}", rating.score);
        assert!(rating.analysis.contains("Not known"), "{}", rating.analysis);
        assert!(rating.analysis.contains("source of funds"));
        assert!(rating.analysis.contains("No name to screen"));
    }

    #[test]
    fn contains_matching_uses_whole_words_and_takes_the_riskiest_key() {
        let model = RiskModel::default();
        assert_eq!(
            lookup(&model.occupation, "Teacher and crypto trader").0,
            85.0
        );
        // "arms" must not match inside "farmstead".
        assert_eq!(lookup(&model.occupation, "farmstead owner").1, None);
        assert_eq!(lookup(&model.country, "kp").0, 100.0);
    }
}

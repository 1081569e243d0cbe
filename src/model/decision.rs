//! The monitoring decision (spec §2.2) as Vigil produces, stores and returns it.
//!
//! A [`Decision`] serialises to exactly the `data` object of the instant response: the spec's
//! fields (`transactionId`, `riskScore`, `action`, `ruleResult`, `reason`, `screening`) plus the
//! explanation Vigil adds (`rules`, `ruleErrors`, `reference`, `rulesetVersion`, times).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How severe a rule's finding is; also orders decisive rules.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The outcome a client acts on. Ordered by strictness.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Approved,
    Review,
    Rejected,
}

impl Action {
    pub fn code(self) -> u8 {
        match self {
            Action::Approved => 0,
            Action::Review => 1,
            Action::Rejected => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approved => "approved",
            Action::Review => "review",
            Action::Rejected => "rejected",
        }
    }

    pub const ALL: [Action; 3] = [Action::Approved, Action::Review, Action::Rejected];
}

/// `action` as the spec shapes it: `{result, code}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ActionBody {
    pub result: Action,
    /// 0 approved, 1 review, 2 rejected.
    #[schema(minimum = 0, maximum = 2, example = 0)]
    pub code: u8,
}

impl From<Action> for ActionBody {
    fn from(action: Action) -> Self {
        ActionBody {
            result: action,
            code: action.code(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RuleRef {
    pub id: String,
    pub name: String,
}

/// The decisive rule of a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Reason {
    /// The decisive rule's id, or `none` when no rule triggered.
    #[schema(example = "none")]
    pub code: String,
    #[schema(example = "no rule triggered")]
    pub message: String,
    pub severity: Severity,
    pub rule: RuleRef,
}

/// `screening.sender` / `screening.receiver`: "clear", "potential match" or "match" per list kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PartyScreening {
    #[schema(example = "clear")]
    pub pep: String,
    #[schema(example = "clear")]
    pub sanction: String,
}

impl Default for PartyScreening {
    fn default() -> Self {
        PartyScreening {
            pep: "clear".to_owned(),
            sanction: "clear".to_owned(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ScreeningOutcome {
    pub sender: PartyScreening,
    pub receiver: PartyScreening,
}

/// One list entity a transaction's party matched (at least a potential match), so a decision
/// explains its `screening` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreeningMatch {
    /// "sender" or "receiver".
    pub party: String,
    /// "sanction" or "pep".
    pub list_kind: String,
    /// The configured list name (`ofac-sdn`, `un`, …).
    pub list: String,
    /// `<list>:<publisher id>`.
    pub entity_id: String,
    /// The entity's primary name.
    pub name: String,
    /// The listed name (primary or alias) the party's name matched.
    pub matched_name: String,
    /// 0–100.
    pub score: f32,
    /// "match" or "potential match".
    pub status: String,
    /// How the score came about: which name parts matched which, what each counted, and what
    /// raised or lowered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<MatchExplanation>,
}

/// Why a name scored what it did against a listed name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchExplanation {
    /// The query name as given.
    pub query: String,
    /// The listed name it was scored against.
    pub matched_name: String,
    /// Name similarity alone, 0–100: the sum of the parts' `points`.
    pub name_score: f32,
    /// Aligned name parts, most points first.
    pub parts: Vec<PartMatch>,
    /// Query parts that matched nothing; each counts against the score with its full weight.
    pub unmatched_query: Vec<UnmatchedPart>,
    /// Listed parts that matched nothing; each counts against the score with 35 % of its weight
    /// (lists often carry fuller names than callers type).
    pub unmatched_listed: Vec<UnmatchedPart>,
    /// What turned the name score into the final score, in the order applied.
    pub adjustments: Vec<ScoreAdjustment>,
    /// The final score, 0–100.
    pub score: f32,
}

/// One aligned pair of name parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PartMatch {
    /// The query's part (two parts joined with a space when they matched one written as one).
    pub query: String,
    /// The listed part.
    pub listed: String,
    /// 0–1.
    pub similarity: f32,
    /// exact, initial, nickname, spelling, sound, edits, script or joined.
    pub basis: String,
    /// The pair's weight: how rare its parts are among every listed name (a shared rare family
    /// name weighs more than a shared "Mohammed").
    pub weight: f32,
    /// What the pair adds to the name score (0–100).
    pub points: f32,
}

/// A name part left unmatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnmatchedPart {
    pub part: String,
    pub weight: f32,
}

/// One change from name score to final score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScoreAdjustment {
    /// weakAlias, crossScriptUnsupported, birthYearMatch, birthYearMismatch, countryMatch or
    /// commonName.
    pub reason: String,
    /// The change in points (negative lowers the score).
    pub points: f32,
    pub detail: String,
}

/// Whether a rule decides (active) or is only recorded (shadow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleMode {
    Active,
    Shadow,
}

/// One triggered rule in a decision's explanation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleHit {
    pub id: String,
    pub name: String,
    pub score: f64,
    pub severity: Severity,
    pub mode: RuleMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The goAML report code the rule marks the transaction with (e.g. `CTR`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reportable: Option<String>,
    /// The account-graph detector the rule reads, if any (`fan_in`, `cycle`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detector: Option<Detector>,
    /// What the detector saw: `account`, `accounts`, `legs` (reference, from, to, amount, at),
    /// `firstAt`, `lastAt` (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub evidence: Option<serde_json::Value>,
}

/// The detectors, as rules name them in their metadata (`detector = "fan_in"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detector {
    FanIn,
    FanOut,
    GatherScatter,
    ScatterGather,
    Layered,
    Cycle,
    Chain,
    PassThrough,
}

impl Detector {
    pub const ALL: [Detector; 8] = [
        Detector::FanIn,
        Detector::FanOut,
        Detector::GatherScatter,
        Detector::ScatterGather,
        Detector::Layered,
        Detector::Cycle,
        Detector::Chain,
        Detector::PassThrough,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Detector::FanIn => "fan_in",
            Detector::FanOut => "fan_out",
            Detector::GatherScatter => "gather_scatter",
            Detector::ScatterGather => "scatter_gather",
            Detector::Layered => "layered",
            Detector::Cycle => "cycle",
            Detector::Chain => "chain",
            Detector::PassThrough => "pass_through",
        }
    }
}

/// A rule that failed while evaluating (type error, sandbox limit): not a hit, but never hidden.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RuleErrorReport {
    pub id: String,
    pub error: String,
}

/// The monitoring decision (spec §2.2): the spec's fields plus Vigil's explanation (`reference`,
/// `rules`, `ruleErrors`, `rulesetVersion`, `transactionDate`, `evaluatedAt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Vigil's id for the transaction.
    pub transaction_id: String,
    /// The client's `transactionData.reference`.
    pub reference: String,
    /// Two decimal places in [0, 1], e.g. "0.35".
    #[schema(pattern = r"^(0\.\d{2}|1\.00)$", example = "0.35")]
    pub risk_score: String,
    pub action: ActionBody,
    /// A summary of the active rules that triggered.
    #[schema(example = "no rule triggered")]
    pub rule_result: String,
    pub reason: Reason,
    pub screening: ScreeningOutcome,
    pub rules: Vec<RuleHit>,
    /// The list entities behind any screening result other than "clear".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screening_matches: Vec<ScreeningMatch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule_errors: Vec<RuleErrorReport>,
    /// Fingerprint of the rule pack that decided.
    pub ruleset_version: String,
    /// Event time of the transaction (RFC 3339).
    #[schema(format = DateTime)]
    pub transaction_date: String,
    /// When Vigil evaluated the transaction (RFC 3339).
    #[schema(format = DateTime)]
    pub evaluated_at: String,
}

impl Decision {
    pub fn action(&self) -> Action {
        self.action.result
    }
}

/// Formats a risk score in [0, 1] with exactly two decimal places.
pub fn format_risk_score(score: f64) -> String {
    let clamped = if score.is_finite() {
        score.clamp(0.0, 1.0)
    } else {
        1.0
    };
    format!("{clamped:.2}")
}

/// Formats milliseconds since the epoch as RFC 3339 UTC with millisecond precision.
pub fn format_time_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risk_scores_have_two_places_and_stay_in_range() {
        assert_eq!(format_risk_score(0.349), "0.35");
        assert_eq!(format_risk_score(0.0), "0.00");
        assert_eq!(format_risk_score(1.7), "1.00");
        assert_eq!(format_risk_score(f64::NAN), "1.00");
    }

    #[test]
    fn actions_serialise_as_the_spec_shows() {
        let body = serde_json::to_value(ActionBody::from(Action::Approved)).expect("serialises");
        assert_eq!(body, serde_json::json!({"result": "approved", "code": 0}));
        assert!(Action::Rejected > Action::Review && Action::Review > Action::Approved);
    }
}

//! Data-driven rule fixtures: sequences of transactions and the hits they must (and must not)
//! produce. `vigil rules test`, `cargo test` and every hot reload run the same fixtures through the
//! same [`Evaluator`] the shards use.
//!
//! A fixture file (`fixtures/rules/*.json`) holds cases; each case starts from empty state and
//! runs its steps in order. A step's `tx` is a partial §2.1 payload deep-merged over
//! [`base_payload`] (objects merge, `null` deletes a key, other values replace); `reference`
//! defaults to `<case>#<step>`. Expectations: `expectHits`, `expectNoHits`, `expectAction`,
//! `expectDuplicate`. Cases may preload `lists` and registered `devices`, and steps may inject
//! `screening` results so screening rules are testable on their own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{RuleError, RuleSet};
use crate::engine::accounts::AccountGraph;
use crate::engine::evaluator::{Evaluator, Outcome};
use crate::engine::lists::{ListKind, Lists};
use crate::engine::rules::ScreeningFacts;
use crate::engine::state::StateLimits;
use crate::engine::Snapshot;
use crate::model::{Action, ScreeningOutcome, Transaction, TransactionPayload, ValidationClock};
use crate::screening::{Screener, ScreeningResult};

/// The tenant fixtures run as.
const FIXTURE_TENANT: i64 = 1;
/// Fixtures validate against a clock far in the future, so their dates are never clamped.
const FIXTURE_NOW_MS: i64 = 4_102_444_800_000; // 2100-01-01

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    #[serde(default)]
    pub description: String,
    pub cases: Vec<FixtureCase>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FixtureCase {
    pub name: String,
    #[serde(default)]
    pub lists: BTreeMap<ListKind, Vec<String>>,
    #[serde(default)]
    pub devices: Vec<FixtureDevice>,
    pub steps: Vec<FixtureStep>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FixtureDevice {
    pub customer_id: String,
    pub device_id: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FixtureStep {
    #[serde(default)]
    pub tx: Value,
    #[serde(default)]
    pub screening: Option<InjectedScreening>,
    #[serde(default)]
    pub expect_hits: Vec<String>,
    #[serde(default)]
    pub expect_no_hits: Vec<String>,
    #[serde(default)]
    pub expect_action: Option<Action>,
    #[serde(default)]
    pub expect_duplicate: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InjectedScreening {
    pub sender_sanction: Option<String>,
    pub sender_pep: Option<String>,
    pub receiver_sanction: Option<String>,
    pub receiver_pep: Option<String>,
}

/// Screening results injected by a fixture step.
#[derive(Debug)]
struct InjectedScreener(InjectedScreening);

impl Screener for InjectedScreener {
    fn screen(&self, _tenant: i64, _tx: &Transaction) -> ScreeningResult {
        let mut outcome = ScreeningOutcome::default();
        let pick = |value: &Option<String>, slot: &mut String| {
            if let Some(value) = value {
                *slot = value.clone();
            }
        };
        pick(&self.0.sender_sanction, &mut outcome.sender.sanction);
        pick(&self.0.sender_pep, &mut outcome.sender.pep);
        pick(&self.0.receiver_sanction, &mut outcome.receiver.sanction);
        pick(&self.0.receiver_pep, &mut outcome.receiver.pep);
        let facts = ScreeningFacts {
            sender_sanction: outcome.sender.sanction.as_str().into(),
            sender_pep: outcome.sender.pep.as_str().into(),
            receiver_sanction: outcome.receiver.sanction.as_str().into(),
            receiver_pep: outcome.receiver.pep.as_str().into(),
        };
        ScreeningResult {
            outcome,
            facts,
            matches: Vec::new(),
        }
    }

    fn describe(&self) -> String {
        "fixture-injected screening".to_owned()
    }
}

/// The payload every fixture step starts from.
pub fn base_payload() -> Value {
    json!({
        "transactionData": {
            "amount": 100.0,
            "type": "debit",
            "channel": "transfer",
            "currency": "NGN",
            "transactionDate": "2026-03-02T10:00:00Z",
            "senderAccount": "0000000001",
            "receiverAccount": "0000000002",
            "status": true
        },
        "anonymizedUserData": {
            "uniqueId": "fixture-user",
            "accountType": "individual",
            "country": "NG",
            "dateJoined": "2024-01-01T00:00:00Z",
            "isIdentityVerified": true
        }
    })
}

/// Deep-merges `patch` into `base`: objects merge, `null` deletes, anything else replaces.
pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    base.remove(key);
                } else {
                    merge(base.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

/// One failed expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureFailure {
    pub file: PathBuf,
    pub case: String,
    pub step: usize,
    pub problem: String,
}

impl std::fmt::Display for FixtureFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / step {}: {}",
            self.file.display(),
            self.case,
            self.step + 1,
            self.problem
        )
    }
}

/// What running a fixture directory produced.
#[derive(Debug, Default, Clone)]
pub struct FixtureReport {
    pub files: usize,
    pub cases: usize,
    pub steps: usize,
    /// Steps that were evaluated (not duplicates).
    pub evaluations: usize,
    /// Evaluations checked against the Rhai interpreter (all of them).
    pub native_checks: usize,
    pub failures: Vec<FixtureFailure>,
    /// Rules of the set that no fixture expects to hit.
    pub rules_never_hit: Vec<String>,
    /// Rules of the set that no fixture lists as a near miss (`expectNoHits`).
    pub rules_without_near_miss: Vec<String>,
}

impl FixtureReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
            && self.rules_never_hit.is_empty()
            && self.rules_without_near_miss.is_empty()
    }

    /// A one-paragraph summary, used in reload errors and CLI output.
    pub fn summary(&self) -> String {
        let mut lines = vec![format!(
            "{} files, {} cases, {} steps, {} failures",
            self.files,
            self.cases,
            self.steps,
            self.failures.len()
        )];
        lines.extend(self.failures.iter().map(ToString::to_string));
        if !self.rules_never_hit.is_empty() {
            lines.push(format!(
                "rules no fixture triggers: {}",
                self.rules_never_hit.join(", ")
            ));
        }
        if !self.rules_without_near_miss.is_empty() {
            lines.push(format!(
                "rules without a near-miss fixture: {}",
                self.rules_without_near_miss.join(", ")
            ));
        }
        lines.join("\n")
    }
}

/// Loads every `*.json` fixture file in `dir` (sorted by name).
pub fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, FixtureFile)>, RuleError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RuleError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|source| RuleError::Read {
            path: path.clone(),
            source,
        })?;
        let file: FixtureFile = serde_json::from_str(&text).map_err(|e| RuleError::Metadata {
            path: path.clone(),
            message: format!("invalid fixture file: {e}"),
        })?;
        files.push((path, file));
    }
    Ok(files)
}

/// Runs fixture files against a rule set.
pub fn run(rules: &Arc<RuleSet>, files: &[(PathBuf, FixtureFile)]) -> FixtureReport {
    let mut report = FixtureReport {
        files: files.len(),
        ..FixtureReport::default()
    };
    let mut expected_hits = BTreeSet::new();
    let mut expected_misses = BTreeSet::new();
    for (path, file) in files {
        for case in &file.cases {
            report.cases += 1;
            run_case(rules, path, case, &mut report);
            for step in &case.steps {
                expected_hits.extend(step.expect_hits.iter().cloned());
                expected_misses.extend(step.expect_no_hits.iter().cloned());
            }
        }
    }
    for rule in &rules.rules {
        if !expected_hits.contains(&rule.meta.id) {
            report.rules_never_hit.push(rule.meta.id.clone());
        }
        if !expected_misses.contains(&rule.meta.id) {
            report.rules_without_near_miss.push(rule.meta.id.clone());
        }
    }
    report
}

fn run_case(rules: &Arc<RuleSet>, path: &Path, case: &FixtureCase, report: &mut FixtureReport) {
    let fail = |report: &mut FixtureReport, step: usize, problem: String| {
        report.failures.push(FixtureFailure {
            file: path.to_path_buf(),
            case: case.name.clone(),
            step,
            problem,
        });
    };
    let entries = case.lists.iter().flat_map(|(kind, values)| {
        values
            .iter()
            .map(move |value| (FIXTURE_TENANT, *kind, value.clone()))
    });
    let lists = Arc::new(Lists::from_entries(entries));
    let mut evaluator = Evaluator::new(StateLimits::default())
        .with_clock(|| FIXTURE_NOW_MS)
        .checking_native();
    let mut graph = AccountGraph::default();
    for device in &case.devices {
        evaluator.register_device(FIXTURE_TENANT, &device.customer_id, &device.device_id);
    }
    for (index, step) in case.steps.iter().enumerate() {
        report.steps += 1;
        for id in step.expect_hits.iter().chain(&step.expect_no_hits) {
            if rules.rule_index(id).is_none() {
                fail(report, index, format!("expects unknown rule {id}"));
            }
        }
        let mut payload = base_payload();
        if !step.tx.is_null() {
            merge(&mut payload, &step.tx);
        }
        if payload.pointer("/transactionData/reference").is_none() {
            if let Some(data) = payload
                .get_mut("transactionData")
                .and_then(Value::as_object_mut)
            {
                data.insert(
                    "reference".into(),
                    Value::String(format!("{}#{}", case.name, index + 1)),
                );
            }
        }
        let parsed: TransactionPayload = match serde_json::from_value(payload) {
            Ok(parsed) => parsed,
            Err(e) => {
                fail(report, index, format!("transaction does not parse: {e}"));
                continue;
            }
        };
        let clock = ValidationClock {
            now_ms: FIXTURE_NOW_MS,
            max_future_skew_ms: 0,
        };
        let tx = match parsed.validate(clock) {
            Ok(tx) => tx,
            Err(errors) => {
                fail(report, index, format!("transaction is invalid: {errors:?}"));
                continue;
            }
        };
        let screener: Arc<dyn Screener> =
            Arc::new(InjectedScreener(step.screening.clone().unwrap_or_default()));
        let snapshot = Snapshot {
            rules: rules.clone(),
            rule_counters: None,
            lists: lists.clone(),
            screener,
        };
        // The account stage as serving runs it, in front of the evaluator.
        let facts = graph.observe(FIXTURE_TENANT, &tx, &rules.detectors);
        let (outcome, _) =
            evaluator.evaluate(&snapshot, FIXTURE_TENANT, tx, Some(Box::new(facts)), None);
        let decision = match outcome {
            Outcome::Duplicate { .. } => {
                if !step.expect_duplicate {
                    fail(report, index, "was treated as a duplicate".into());
                }
                continue;
            }
            Outcome::Decided(decision) => decision,
        };
        report.evaluations += 1;
        if step.expect_duplicate {
            fail(
                report,
                index,
                "expected a duplicate, got a fresh decision".into(),
            );
        }
        let hit = |id: &String| decision.rules.iter().any(|r| &r.id == id);
        for id in &step.expect_hits {
            if !hit(id) {
                fail(
                    report,
                    index,
                    format!("expected {id} to hit; hits were {}", hits(&decision)),
                );
            }
        }
        for id in &step.expect_no_hits {
            if hit(id) {
                fail(
                    report,
                    index,
                    format!("expected {id} not to hit; hits were {}", hits(&decision)),
                );
            }
        }
        if let Some(action) = step.expect_action {
            if decision.action() != action {
                fail(
                    report,
                    index,
                    format!(
                        "expected action {}, got {} (score {}, hits {})",
                        action.as_str(),
                        decision.action().as_str(),
                        decision.risk_score,
                        hits(&decision)
                    ),
                );
            }
        }
        for error in &decision.rule_errors {
            fail(
                report,
                index,
                format!("rule {} failed: {}", error.id, error.error),
            );
        }
    }
    report.native_checks += evaluator.native_checks() as usize;
}

fn hits(decision: &crate::model::Decision) -> String {
    if decision.rules.is_empty() {
        return "none".to_owned();
    }
    decision
        .rules
        .iter()
        .map(|r| r.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_replaces_merges_and_deletes() {
        let mut base = json!({"a": {"b": 1, "c": 2}, "d": 3});
        merge(&mut base, &json!({"a": {"b": 10, "c": null}, "e": [1]}));
        assert_eq!(base, json!({"a": {"b": 10}, "d": 3, "e": [1]}));
    }
}

//! Automatic cases: every stored decision that is not approved becomes an alert, and each alert
//! opens a `transaction-monitoring` case or joins the user's open one.
//!
//! Called by the store writer inside the database transaction that stores the decisions, so a
//! decision is never answered before its case exists, and a failed batch (retried by the writer)
//! leaves no half-made case. Alerts are only made for decisions stored for the first time, so a
//! resubmitted reference never alerts twice; `case_alerts` is also unique per (case, transaction):
//! a transaction with findings of two typologies is an alert of both cases.

use serde_json::{json, Value};

use super::store::log_entry;
use super::{CaseStatus, Priority, TRANSACTION_MONITORING};
use crate::audit::{self, Actor, EntityType};
use crate::model::decision::RuleMode;
use crate::model::{Action, Decision, Transaction};
use crate::store::{iso_time, new_id};

/// At most this many of a finding's accounts are recorded with its case (and looked up).
const MAX_CASE_MEMBERS: usize = 64;

/// The detector findings of a decision that open account-level cases: one per active hit of a
/// rule that reads a detector, on the account its evidence is about, once per (account, typology).
fn findings(decision: &Decision) -> Vec<AccountFinding> {
    let mut found: Vec<AccountFinding> = Vec::new();
    for hit in &decision.rules {
        let (RuleMode::Active, Some(detector), Some(evidence)) =
            (hit.mode, hit.detector, hit.evidence.as_ref())
        else {
            continue;
        };
        let Some(account) = evidence.get("account").and_then(Value::as_str) else {
            continue;
        };
        let typology = detector.as_str();
        if found
            .iter()
            .any(|f| f.account == account && f.typology == typology)
        {
            continue;
        }
        let mut members = vec![account.to_owned()];
        for other in evidence
            .get("accounts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if members.len() < MAX_CASE_MEMBERS && !members.iter().any(|m| m == other) {
                members.push(other.to_owned());
            }
        }
        found.push(AccountFinding {
            account: account.to_owned(),
            typology: typology.to_owned(),
            members,
            evidence: evidence.clone(),
        });
    }
    found
}

/// What a non-approved decision brings to cases: its detector findings (account, typology and
/// the accounts involved), else its customer's transaction case (`own_account`, "transaction",
/// no members).
pub fn case_keys(own_account: &str, decision: &Decision) -> Vec<CaseKey> {
    let mut keys: Vec<CaseKey> = findings(decision)
        .into_iter()
        .map(|f| CaseKey {
            account: f.account,
            typology: f.typology,
            members: f.members,
        })
        .collect();
    if keys.is_empty() {
        keys.push(CaseKey {
            account: own_account.to_owned(),
            typology: "transaction".to_owned(),
            members: Vec::new(),
        });
    }
    keys
}

/// One finding's claim on a case (see [`case_keys`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseKey {
    pub account: String,
    pub typology: String,
    /// The accounts involved, the finding's own first (empty for a transaction case).
    pub members: Vec<String>,
}

/// Which case each finding lands in, in memory: what [`open_or_append`] does in the store for
/// cases that stay open (replay uses it to count cases). A finding joins the case of the first of
/// its accounts that an earlier finding of the same typology named; otherwise it opens a case on
/// its own account. One laundering network is one case, not one per account it touches.
#[derive(Debug, Default)]
pub struct CaseNetwork {
    /// typology -> account -> the case (account, typology) it belongs to.
    case_of: std::collections::HashMap<String, std::collections::HashMap<String, (String, String)>>,
}

impl CaseNetwork {
    /// The case (its account and typology) the finding opens or joins.
    pub fn assign(&mut self, key: &CaseKey) -> (String, String) {
        let own = (key.account.clone(), key.typology.clone());
        if key.members.is_empty() {
            return own;
        }
        let cases = self.case_of.entry(key.typology.clone()).or_default();
        let case = key
            .members
            .iter()
            .find_map(|m| cases.get(m))
            .cloned()
            .unwrap_or(own);
        for member in &key.members {
            if !cases.contains_key(member) {
                cases.insert(member.clone(), case.clone());
            }
        }
        case
    }
}

/// One non-approved decision, as cases need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub business_id: i64,
    /// The monitored user (`anonymizedUserData.uniqueId`).
    pub user_id: String,
    pub transaction_id: String,
    pub reference: String,
    pub action: Action,
    pub risk_score: String,
    /// Names of the active rules that triggered.
    pub rules: Vec<String>,
    pub priority: Priority,
    pub rule_result: String,
    pub reason: String,
    /// For an account-level case: the account, the typology and the detector's evidence.
    pub account: Option<AccountFinding>,
}

/// A detector's finding about one account: opens or joins the account's case for the typology,
/// or the open case of that typology that already holds one of its `members`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountFinding {
    pub account: String,
    pub typology: String,
    /// The accounts the evidence names, `account` first.
    pub members: Vec<String>,
    pub evidence: Value,
}

impl AccountFinding {
    /// The case's record name, which also identifies it: one open case per (account, typology).
    fn record_name(&self) -> String {
        format!("{} · {}", self.account, self.typology)
    }
}

impl Alert {
    /// The alerts of a decision: one per account-level finding of an active detector rule, else
    /// one for the customer's case; none for an approved decision.
    pub fn from_decision_all(
        business_id: i64,
        tx: &Transaction,
        decision: &Decision,
    ) -> Vec<Alert> {
        let Some(base) = Alert::from_decision(business_id, tx, decision) else {
            return Vec::new();
        };
        let mut alerts: Vec<Alert> = findings(decision)
            .into_iter()
            .map(|finding| Alert {
                account: Some(finding),
                ..base.clone()
            })
            .collect();
        if alerts.is_empty() {
            alerts.push(base);
        }
        alerts
    }

    /// The alert of a decision, or `None` for an approved one.
    pub fn from_decision(business_id: i64, tx: &Transaction, decision: &Decision) -> Option<Alert> {
        let action = decision.action();
        if action == Action::Approved {
            return None;
        }
        let active: Vec<_> = decision
            .rules
            .iter()
            .filter(|r| r.mode == RuleMode::Active)
            .collect();
        let priority = active
            .iter()
            .map(|r| Priority::from(r.severity))
            .max()
            .unwrap_or_else(|| Priority::from(decision.reason.severity));
        Some(Alert {
            business_id,
            user_id: tx.user_id.to_string(),
            transaction_id: decision.transaction_id.clone(),
            reference: decision.reference.clone(),
            action,
            risk_score: decision.risk_score.clone(),
            rules: active.iter().map(|r| r.name.clone()).collect(),
            priority,
            rule_result: decision.rule_result.clone(),
            reason: decision.reason.message.clone(),
            account: None,
        })
    }

    /// The case title: the typology and account, or the triggered rules' names.
    pub fn title(&self) -> String {
        if let Some(finding) = &self.account {
            return truncate(
                &format!(
                    "{} on account {}",
                    finding.typology.replace('_', "-"),
                    finding.account
                ),
                200,
            );
        }
        let title = if self.rules.is_empty() {
            "Transaction flagged for review".to_owned()
        } else {
            self.rules.join("; ")
        };
        truncate(&title, 200)
    }

    /// The case description: what happened, in words.
    pub fn description(&self) -> String {
        let verb = match self.action {
            Action::Rejected => "rejected",
            _ => "held for review",
        };
        let mut text = format!(
            "Transaction {} of user {} was {verb} (risk score {}). {}.",
            self.reference, self.user_id, self.risk_score, self.rule_result
        );
        if !self.reason.is_empty() && self.reason != "no rule triggered" {
            text.push_str(&format!(" Decisive rule: {}.", self.reason));
        }
        if let Some(finding) = &self.account {
            let legs = finding.evidence.get("legs").and_then(Value::as_array);
            let accounts = finding.evidence.get("accounts").and_then(Value::as_array);
            text.push_str(&format!(
                " Detector {} on account {}: {} accounts involved, {} payments in evidence.",
                finding.typology,
                finding.account,
                accounts.map_or(0, Vec::len),
                legs.map_or(0, Vec::len)
            ));
        }
        truncate(&text, 2000)
    }

    fn summary(&self) -> Value {
        let mut summary = json!({"transactionId": self.transaction_id, "reference": self.reference,
            "action": self.action.as_str(), "riskScore": self.risk_score, "rules": self.rules});
        if let Some(finding) = &self.account {
            summary["typology"] = json!(finding.typology);
            summary["evidence"] = finding.evidence.clone();
        }
        summary
    }

    /// The subject and the record that identify the case this alert opens or joins. An
    /// account-level case's subject is the (account, typology) pair, so one account can have an
    /// open case per typology (at most one open case per subject).
    fn case_record(&self) -> (String, &'static str, String, String) {
        match &self.account {
            Some(finding) => (
                finding.record_name(),
                "account",
                finding.account.clone(),
                finding.record_name(),
            ),
            None => (
                self.user_id.clone(),
                "transaction",
                self.transaction_id.clone(),
                self.reference.clone(),
            ),
        }
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}

/// Opens or extends a case for each alert, in order, inside the caller's transaction.
pub async fn open_or_append(
    conn: &mut sqlx::AnyConnection,
    alerts: &[Alert],
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    for alert in alerts {
        open_or_append_one(conn, alert, now_ms).await?;
    }
    Ok(())
}

async fn open_or_append_one(
    conn: &mut sqlx::AnyConnection,
    alert: &Alert,
    now: i64,
) -> Result<(), sqlx::Error> {
    let actor = Actor::system();
    let (subject, record_type, record_id, record_name) = alert.case_record();
    // A customer's transactions join its open transaction case; a detector's finding joins the
    // open case of its (account, typology).
    let open: Option<(String, String, String)> = sqlx::query_as(
        "SELECT id, status, priority FROM cases WHERE business_id = $1 AND module = $2 \
         AND subject_id = $3 AND status IN ('open', 'in progress')",
    )
    .bind(alert.business_id)
    .bind(TRANSACTION_MONITORING)
    .bind(&subject)
    .fetch_optional(&mut *conn)
    .await?;
    let open = match (open, &alert.account) {
        (None, Some(finding)) => network_case(conn, alert.business_id, finding).await?,
        (open, _) => open,
    };
    if let Some((case_id, status, priority)) = open {
        let old = Priority::parse(&priority).unwrap_or(Priority::Low);
        let new = old.max(alert.priority);
        // The status condition re-checks under the row lock: a case closed meanwhile is skipped.
        let touched = sqlx::query(
            "UPDATE cases SET version = version + 1, priority = $1, updated_at_ms = $2 \
             WHERE id = $3 AND status IN ('open', 'in progress')",
        )
        .bind(new.as_str())
        .bind(now)
        .bind(&case_id)
        .execute(&mut *conn)
        .await?;
        if touched.rows_affected() == 1 {
            remember_members(conn, alert, &case_id).await?;
        }
        if touched.rows_affected() == 1 && link(conn, alert, &case_id, now).await? {
            let status = CaseStatus::parse(&status).unwrap_or(CaseStatus::Open);
            let mut message = format!(
                "Alert added: transaction {} ({}, risk score {})",
                alert.reference,
                alert.action.as_str(),
                alert.risk_score
            );
            if !alert.rules.is_empty() {
                message.push_str(&format!(": {}", alert.rules.join("; ")));
            }
            log_entry(
                conn,
                alert.business_id,
                &case_id,
                status,
                &message,
                audit::SYSTEM,
                now,
            )
            .await?;
            let mut changes = serde_json::Map::new();
            changes.insert(
                format!("alerts.{}", alert.transaction_id),
                json!({"from": null, "to": alert.summary()}),
            );
            if new != old {
                changes.insert(
                    "priority".into(),
                    json!({"from": old.as_str(), "to": new.as_str()}),
                );
            }
            audit::record(
                conn,
                alert.business_id,
                EntityType::Case,
                &case_id,
                "alert-added",
                &actor,
                now,
                &Value::Object(changes),
            )
            .await?;
            return Ok(());
        }
        if touched.rows_affected() == 1 {
            return Ok(());
        }
    }
    let case_id = new_id();
    let record = json!({"id": record_id, "type": record_type, "name": record_name});
    sqlx::query(
        "INSERT INTO cases (id, business_id, module, record_id, record_type, record_name, \
         subject_id, title, description, priority, status, is_escalated, version, \
         created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', 0, 0, $11, $11)",
    )
    .bind(&case_id)
    .bind(alert.business_id)
    .bind(TRANSACTION_MONITORING)
    .bind(&record_id)
    .bind(record_type)
    .bind(&record_name)
    .bind(&subject)
    .bind(alert.title())
    .bind(alert.description())
    .bind(alert.priority.as_str())
    .bind(now)
    .execute(&mut *conn)
    .await?;
    remember_members(conn, alert, &case_id).await?;
    link(conn, alert, &case_id, now).await?;
    log_entry(
        conn,
        alert.business_id,
        &case_id,
        CaseStatus::Open,
        "Case created",
        audit::SYSTEM,
        now,
    )
    .await?;
    let created = json!({
        "module": TRANSACTION_MONITORING, "record": record, "title": alert.title(),
        "description": alert.description(), "priority": alert.priority.as_str(),
        "status": "open", "isEscalated": false, "subject": subject,
        "alerts": {alert.transaction_id.clone(): alert.summary()}, "createdAt": iso_time(now),
    });
    audit::record(
        conn,
        alert.business_id,
        EntityType::Case,
        &case_id,
        "created",
        &actor,
        now,
        &audit::created(&created),
    )
    .await?;
    Ok(())
}

/// The open case of the finding's typology that already holds one of its accounts: the one of
/// its earliest-listed account (its own first), the oldest case if that account is in several.
async fn network_case(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    finding: &AccountFinding,
) -> Result<Option<(String, String, String)>, sqlx::Error> {
    let members = &finding.members;
    if members.is_empty() {
        return Ok(None);
    }
    let list: Vec<String> = (0..members.len()).map(|i| format!("${}", i + 4)).collect();
    let sql = format!(
        "SELECT c.id, c.status, c.priority, a.account FROM case_accounts a \
         JOIN cases c ON c.id = a.case_id \
         WHERE a.business_id = $1 AND a.typology = $2 AND c.module = $3 \
         AND c.status IN ('open', 'in progress') AND a.account IN ({}) \
         ORDER BY c.created_at_ms, c.id",
        list.join(", ")
    );
    let mut query = sqlx::query_as::<_, (String, String, String, String)>(&sql)
        .bind(business_id)
        .bind(&finding.typology)
        .bind(TRANSACTION_MONITORING);
    for member in members {
        query = query.bind(member);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    let position = |account: &str| members.iter().position(|m| m == account);
    Ok(rows
        .into_iter()
        .min_by_key(|row| position(&row.3))
        .map(|(id, status, priority, _)| (id, status, priority)))
}

/// Records the finding's accounts as the case's, so later findings naming them join it.
async fn remember_members(
    conn: &mut sqlx::AnyConnection,
    alert: &Alert,
    case_id: &str,
) -> Result<(), sqlx::Error> {
    let Some(finding) = &alert.account else {
        return Ok(());
    };
    for member in &finding.members {
        sqlx::query(
            "INSERT INTO case_accounts (business_id, case_id, typology, account) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(alert.business_id)
        .bind(case_id)
        .bind(&finding.typology)
        .bind(member)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Links the alert's transaction to the case; false if it was linked before.
async fn link(
    conn: &mut sqlx::AnyConnection,
    alert: &Alert,
    case_id: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO case_alerts (business_id, case_id, transaction_id, reference, action, \
         risk_score, rules, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (business_id, case_id, transaction_id) DO NOTHING",
    )
    .bind(alert.business_id)
    .bind(case_id)
    .bind(&alert.transaction_id)
    .bind(&alert.reference)
    .bind(alert.action.as_str())
    .bind(&alert.risk_score)
    .bind(serde_json::to_string(&alert.rules).unwrap_or_else(|_| "[]".into()))
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(account: &str, typology: &str, members: &[&str]) -> CaseKey {
        CaseKey {
            account: account.to_owned(),
            typology: typology.to_owned(),
            members: std::iter::once(account)
                .chain(members.iter().copied())
                .map(str::to_owned)
                .collect(),
        }
    }

    #[test]
    fn findings_that_share_an_account_land_in_one_case_per_typology() {
        let mut network = CaseNetwork::default();
        let case = |a: &str, t: &str| (a.to_owned(), t.to_owned());
        assert_eq!(
            network.assign(&finding("H1", "fan_in", &["A", "B"])),
            case("H1", "fan_in")
        );
        // Shares B: joins H1's case; its own accounts now lead there too.
        assert_eq!(
            network.assign(&finding("H2", "fan_in", &["B", "C"])),
            case("H1", "fan_in")
        );
        assert_eq!(
            network.assign(&finding("H3", "fan_in", &["C"])),
            case("H1", "fan_in")
        );
        // Another typology on the same accounts is another case; unrelated accounts too.
        assert_eq!(
            network.assign(&finding("H2", "cycle", &["B"])),
            case("H2", "cycle")
        );
        assert_eq!(
            network.assign(&finding("H9", "fan_in", &["X"])),
            case("H9", "fan_in")
        );
        // A transaction case (no members) is always the customer's own.
        let own = CaseKey {
            account: "B".into(),
            typology: "transaction".into(),
            members: Vec::new(),
        };
        assert_eq!(network.assign(&own), case("B", "transaction"));
    }

    #[test]
    fn long_titles_are_cut_on_a_character_boundary() {
        let text = "é".repeat(300);
        let cut = truncate(&text, 200);
        assert_eq!(cut.chars().count(), 200);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short", 200), "short");
    }
}

//! Automatic cases: every stored decision that is not approved becomes an alert, and each alert
//! opens a `transaction-monitoring` case or joins the user's open one.
//!
//! Called by the store writer inside the database transaction that stores the decisions, so a
//! decision is never answered before its case exists, and a failed batch (retried by the writer)
//! leaves no half-made case. Alerts are only made for decisions stored for the first time, so a
//! resubmitted reference never alerts twice; `case_alerts` is also unique per transaction.

use serde_json::{json, Value};

use super::store::log_entry;
use super::{CaseStatus, Priority, TRANSACTION_MONITORING};
use crate::audit::{self, Actor, EntityType};
use crate::model::decision::RuleMode;
use crate::model::{Action, Decision, Transaction};
use crate::store::{iso_time, new_id};

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
}

impl Alert {
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
        })
    }

    /// The case title: the triggered rules' names.
    pub fn title(&self) -> String {
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
        truncate(&text, 2000)
    }

    fn summary(&self) -> Value {
        json!({"transactionId": self.transaction_id, "reference": self.reference,
            "action": self.action.as_str(), "riskScore": self.risk_score, "rules": self.rules})
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
    let open: Option<(String, String, String)> = sqlx::query_as(
        "SELECT id, status, priority FROM cases WHERE business_id = $1 AND module = $2 \
         AND subject_id = $3 AND status IN ('open', 'in progress')",
    )
    .bind(alert.business_id)
    .bind(TRANSACTION_MONITORING)
    .bind(&alert.user_id)
    .fetch_optional(&mut *conn)
    .await?;
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
    let record =
        json!({"id": alert.transaction_id, "type": "transaction", "name": alert.reference});
    sqlx::query(
        "INSERT INTO cases (id, business_id, module, record_id, record_type, record_name, \
         subject_id, title, description, priority, status, is_escalated, version, \
         created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, 'transaction', $5, $6, $7, $8, $9, 'open', 0, 0, $10, $10)",
    )
    .bind(&case_id)
    .bind(alert.business_id)
    .bind(TRANSACTION_MONITORING)
    .bind(&alert.transaction_id)
    .bind(&alert.reference)
    .bind(&alert.user_id)
    .bind(alert.title())
    .bind(alert.description())
    .bind(alert.priority.as_str())
    .bind(now)
    .execute(&mut *conn)
    .await?;
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
        "status": "open", "isEscalated": false, "subject": alert.user_id,
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
         ON CONFLICT (business_id, transaction_id) DO NOTHING",
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

    #[test]
    fn long_titles_are_cut_on_a_character_boundary() {
        let text = "é".repeat(300);
        let cut = truncate(&text, 200);
        assert_eq!(cut.chars().count(), 200);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short", 200), "short");
    }
}

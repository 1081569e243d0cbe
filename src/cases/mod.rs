//! Case management (spec §2.5, §4.2): the cases analysts work, and the analyst directory their
//! `assignedTo`, `assignedBy` and `user` fields name.
//!
//! Data flow:
//! - **Automatic cases** ([`auto`]): the store writer (`sinks::store`) turns every freshly stored
//!   decision that is not approved into an [`auto::Alert`] and calls [`auto::open_or_append`]
//!   inside the very database transaction that stores the decision. An alert for a user who has
//!   an open (or in-progress) `transaction-monitoring` case is appended to it; otherwise a case
//!   opens with the log entry "Case created". The decision is only answered after that commit.
//! - **Analyst actions** ([`api`] → [`store`]): create a manual case, change status along
//!   [`CaseStatus::allowed_next`], escalate, assign, comment, add and complete tasks. Each action
//!   locks the case row (a version bump is the transaction's first write), checks the domain rule,
//!   writes the change and its log entry, and appends an audit entry with the diff of the case's
//!   audited form (`audit`) before committing.
//! - **Reads** render the spec's record ([`CaseRecord`]) with users resolved through the tenant's
//!   analyst directory ([`analysts`]).
//!
//! Every query carries the tenant's `business_id`; a case of another tenant is "not found".

pub mod analysts;
pub mod api;
pub mod auto;
pub mod store;

use serde::Serialize;
use thiserror::Error;

use crate::model::Severity;
use crate::store::StoreError;

/// The module automatic cases belong to.
pub const TRANSACTION_MONITORING: &str = "transaction-monitoring";

/// A case's status. Moves: open → in progress → resolved → closed; resolved or closed → open
/// (reopen). Escalation is a flag, not a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseStatus {
    Open,
    InProgress,
    Resolved,
    Closed,
}

impl CaseStatus {
    pub const ALL: [CaseStatus; 4] = [
        CaseStatus::Open,
        CaseStatus::InProgress,
        CaseStatus::Resolved,
        CaseStatus::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Open => "open",
            CaseStatus::InProgress => "in progress",
            CaseStatus::Resolved => "resolved",
            CaseStatus::Closed => "closed",
        }
    }

    pub fn parse(value: &str) -> Option<CaseStatus> {
        CaseStatus::ALL.into_iter().find(|s| s.as_str() == value)
    }

    /// The statuses a case may move to from this one.
    pub fn allowed_next(self) -> &'static [CaseStatus] {
        match self {
            CaseStatus::Open => &[CaseStatus::InProgress],
            CaseStatus::InProgress => &[CaseStatus::Resolved],
            CaseStatus::Resolved => &[CaseStatus::Closed, CaseStatus::Open],
            CaseStatus::Closed => &[CaseStatus::Open],
        }
    }

    /// Open or in progress: alerts append to it and it can be escalated.
    pub fn is_active(self) -> bool {
        matches!(self, CaseStatus::Open | CaseStatus::InProgress)
    }
}

/// A case's priority; automatic cases take the highest severity of the rules that triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Low,
    Medium,
    High,
    Critical,
}

impl Priority {
    pub const ALL: [Priority; 4] = [
        Priority::Low,
        Priority::Medium,
        Priority::High,
        Priority::Critical,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }

    pub fn parse(value: &str) -> Option<Priority> {
        Priority::ALL.into_iter().find(|p| p.as_str() == value)
    }
}

impl From<Severity> for Priority {
    fn from(severity: Severity) -> Self {
        match severity {
            Severity::Low => Priority::Low,
            Severity::Medium => Priority::Medium,
            Severity::High => Priority::High,
            Severity::Critical => Priority::Critical,
        }
    }
}

/// Why a case operation was refused.
#[derive(Debug, Error)]
pub enum CaseError {
    #[error("case not found")]
    NotFound,
    #[error("task not found")]
    TaskNotFound,
    #[error("cannot move a case from {from} to {to} (allowed next: {allowed})")]
    InvalidTransition {
        from: &'static str,
        to: &'static str,
        allowed: String,
    },
    #[error("case is {0}; reopen it first")]
    Inactive(&'static str),
    #[error("case is already escalated")]
    AlreadyEscalated,
    #[error("task is already completed")]
    TaskDone,
    #[error("another case is open for this user: {0}")]
    OpenCaseExists(String),
    #[error("{field}: no active analyst '{id}' in this business")]
    UnknownAnalyst { field: String, id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for CaseError {
    fn from(error: sqlx::Error) -> Self {
        CaseError::Store(StoreError::Database(error))
    }
}

/// A user as cases show them (`assignedTo`, `assignedBy`, comment and log `user`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserRef {
    #[serde(rename = "_id")]
    #[schema(example = "0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10")]
    pub id: String,
    #[schema(example = "Ada")]
    pub first_name: String,
    #[schema(example = "Obi")]
    pub last_name: String,
}

impl UserRef {
    /// Vigil itself, for automatic changes.
    pub fn system() -> UserRef {
        UserRef {
            id: crate::audit::SYSTEM.to_owned(),
            first_name: "Vigil".to_owned(),
            last_name: "System".to_owned(),
        }
    }

    /// A user id that is not (or no longer) in the directory.
    pub fn unknown(id: &str) -> UserRef {
        UserRef {
            id: id.to_owned(),
            first_name: String::new(),
            last_name: String::new(),
        }
    }
}

/// What a case is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct RecordRef {
    /// For automatic cases, the `transactionId` of the alert that opened it.
    pub id: String,
    /// `transaction` for automatic cases.
    #[serde(rename = "type")]
    #[schema(example = "transaction")]
    pub kind: String,
    /// For automatic cases, the transaction's reference.
    pub name: String,
}

/// A case task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Task {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
    /// `true` once completed.
    pub status: bool,
}

/// A case comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
    pub user: UserRef,
    /// Attachment URLs.
    pub attachments: Vec<String>,
    pub tagged_users: Vec<UserRef>,
    /// RFC 3339.
    pub date: String,
}

/// A case log entry: the status after the change, what happened, who, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct LogEntry {
    #[serde(rename = "_id")]
    pub id: String,
    #[schema(example = "in progress")]
    pub status: String,
    #[schema(example = "Status updated to in progress")]
    pub message: String,
    pub user: UserRef,
    /// RFC 3339.
    pub date: String,
}

/// The case record of spec §2.5, exactly its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseRecord {
    #[serde(rename = "_id")]
    pub id: String,
    /// The business (tenant) the case belongs to.
    #[schema(example = "Acme Bank")]
    pub business_profile: String,
    #[schema(example = "transaction-monitoring")]
    pub module: String,
    /// What the case is about; `null` for a manual case created without one.
    pub record: Option<RecordRef>,
    pub title: String,
    pub description: String,
    /// `low`, `medium`, `high` or `critical`.
    #[schema(example = "high")]
    pub priority: String,
    /// `open`, `in progress`, `resolved` or `closed`.
    #[schema(example = "open")]
    pub status: String,
    pub assigned_to: Option<UserRef>,
    pub assigned_by: Option<UserRef>,
    /// RFC 3339, or `null`.
    pub due_date: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub tasks: Vec<Task>,
    pub comments: Vec<Comment>,
    /// Case-level attachments (Vigil stores attachment URLs on comments; always empty).
    pub attachments: Vec<String>,
    pub is_escalated: bool,
    pub log: Vec<LogEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_move_only_along_the_documented_chain() {
        use CaseStatus::*;
        assert_eq!(Open.allowed_next(), &[InProgress]);
        assert_eq!(InProgress.allowed_next(), &[Resolved]);
        assert!(Resolved.allowed_next().contains(&Closed));
        assert!(Resolved.allowed_next().contains(&Open));
        assert_eq!(Closed.allowed_next(), &[Open]);
        assert!(!Open.allowed_next().contains(&Closed));
        for status in CaseStatus::ALL {
            assert_eq!(CaseStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(CaseStatus::parse("in_progress"), None);
    }

    #[test]
    fn priority_follows_rule_severity() {
        assert_eq!(Priority::from(Severity::Critical), Priority::Critical);
        assert_eq!(Priority::from(Severity::Low).as_str(), "low");
        assert!(Priority::High > Priority::Medium);
    }
}

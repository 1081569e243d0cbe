//! EDD requests (spec §2.9, §4.5): enhanced due diligence on one customer, routed through a
//! configured pipeline of steps.
//!
//! Data flow: `POST /api/v1/edd/requests` ([`api`], behind the single `Authorization` header of
//! spec part 5) validates the request, finds the pipeline by `pipelineSlug` in `[edd]`
//! ([`config`]), and stores the request (`pending`) with a copy of the pipeline's steps, so a
//! later config change never rewrites a request in flight ([`store`]). Steps are then acted on in
//! order — `complete` or `fail` a task step, `approve` or `fail` an approval step; the first move
//! puts the request `in progress`, a failed step `rejected`, the last passed step `completed`.
//! Each move is one transaction that updates the step, appends to the step history and to the
//! audit trail. Every query carries the tenant's `business_id`.

pub mod api;
pub mod config;
pub mod store;

use serde::Serialize;
use thiserror::Error;

use crate::store::StoreError;

/// Request statuses.
pub const PENDING: &str = "pending";
pub const IN_PROGRESS: &str = "in progress";
pub const COMPLETED: &str = "completed";
pub const REJECTED: &str = "rejected";
pub const REQUEST_STATUSES: &[&str] = &[PENDING, IN_PROGRESS, COMPLETED, REJECTED];

/// What a caller does to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepAction {
    Complete,
    Approve,
    Fail,
}

impl StepAction {
    pub fn parse(value: &str) -> Option<StepAction> {
        match value {
            "complete" => Some(StepAction::Complete),
            "approve" => Some(StepAction::Approve),
            "fail" => Some(StepAction::Fail),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StepAction::Complete => "complete",
            StepAction::Approve => "approve",
            StepAction::Fail => "fail",
        }
    }

    /// The step status the action leads to.
    pub fn outcome(self) -> &'static str {
        match self {
            StepAction::Complete => "completed",
            StepAction::Approve => "approved",
            StepAction::Fail => "failed",
        }
    }
}

/// Why an EDD operation was refused.
#[derive(Debug, Error)]
pub enum EddError {
    #[error("edd request not found")]
    NotFound,
    #[error("no step '{step}' in this request (steps: {known})")]
    StepNotFound { step: String, known: String },
    #[error("the edd request is {0}; its steps can no longer change")]
    Finished(String),
    #[error("step '{step}' is not the current step (current: '{current}')")]
    NotCurrent { step: String, current: String },
    #[error("'{action}' does not apply to {kind} step '{step}' (use {allowed})")]
    WrongAction {
        action: &'static str,
        kind: &'static str,
        step: String,
        allowed: &'static str,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for EddError {
    fn from(error: sqlx::Error) -> Self {
        EddError::Store(StoreError::Database(error))
    }
}

/// One step of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepView {
    #[schema(example = "source-of-funds")]
    pub key: String,
    pub name: String,
    /// `task` or `approval`.
    pub kind: String,
    /// `pending`, `completed`, `approved` or `failed`.
    #[schema(example = "pending")]
    pub status: String,
    pub note: Option<String>,
    /// The analyst (`userId`) who moved it last, if named.
    pub user_id: Option<String>,
    pub updated_at: String,
}

/// One move in a request's step history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub step: String,
    /// `complete`, `approve` or `fail`.
    pub action: String,
    pub from_status: String,
    pub to_status: String,
    /// The request's status after the move.
    pub request_status: String,
    pub note: Option<String>,
    pub user_id: Option<String>,
    /// The id of the API key that made the move (never the key).
    pub actor_key: String,
    pub at: String,
}

/// An EDD request with its steps and step history (Vigil's read shape).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    pub request_id: String,
    /// `pending`, `in progress`, `completed` or `rejected`.
    #[schema(example = "pending")]
    pub status: String,
    /// The pipeline slug.
    #[schema(example = "standard")]
    pub pipeline: String,
    pub unique_id: String,
    /// The request's customer fields as sent (firstName, lastName, dob, accountOfficer, …).
    #[schema(value_type = Object)]
    pub subject: serde_json::Value,
    /// The key of the step to act on next; `null` once the request is finished.
    pub current_step: Option<String>,
    pub steps: Vec<StepView>,
    pub history: Vec<HistoryEntry>,
    pub created_at: String,
    pub updated_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_parse_and_lead_to_their_step_status() {
        for action in [StepAction::Complete, StepAction::Approve, StepAction::Fail] {
            assert_eq!(StepAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(StepAction::Fail.outcome(), "failed");
        assert_eq!(StepAction::parse("reject"), None);
    }
}

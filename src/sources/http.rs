//! The HTTP intake of transactions (spec §4.1).
//!
//! `POST …/instant` validates, hands the transaction to its shard and answers with the decision
//! once the store has made it durable. `POST /api/v1/transaction-monitoring` first stores the
//! submission as pending (durable), answers "Transaction submitted", and lets the shard complete
//! it; a restart re-evaluates whatever was still pending. `GET …/{transactionId}` reads a stored
//! decision back.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::Serialize;
use tokio::sync::oneshot;

use crate::api::auth::Tenant;
use crate::api::error::ApiError;
use crate::api::extract::JsonBody;
use crate::api::AppState;
use crate::engine::{EvaluateJob, Intake, Outcome, SinkError};
use crate::model::{Decision, TransactionPayload, ValidationClock};
use crate::store::ProcessingMode;

#[derive(Serialize)]
struct Processed<'a> {
    message: &'static str,
    data: Option<&'a Decision>,
}

fn json_response(status: StatusCode, body: &impl Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(error) => ApiError::internal(error).into_response(),
    }
}

pub fn message(status: StatusCode, text: &str) -> Response {
    json_response(status, &serde_json::json!({ "message": text }))
}

fn clock(app: &AppState) -> ValidationClock {
    ValidationClock {
        now_ms: chrono::Utc::now().timestamp_millis(),
        max_future_skew_ms: app.settings.config.engine.max_future_skew_secs as i64 * 1000,
    }
}

fn sink_failure(error: SinkError) -> ApiError {
    tracing::error!(%error, "decision not stored");
    ApiError::unavailable("the decision could not be stored; retry with the same reference")
}

/// `POST /api/v1/transaction-monitoring/instant`
pub async fn instant(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<TransactionPayload>,
) -> Result<Response, ApiError> {
    let tx = body
        .value
        .validate(clock(&app))
        .map_err(ApiError::invalid)?;
    let (reply, wait) = oneshot::channel();
    app.engine
        .submit(EvaluateJob {
            tenant: tenant.id,
            tx: Box::new(tx),
            raw: body.raw,
            intake: Intake::Instant,
            reply: Some(reply),
        })
        .await
        .map_err(|_| ApiError::unavailable("the engine is shutting down"))?;
    let timeout = Duration::from_millis(app.settings.config.http.request_timeout_ms);
    let outcome = match tokio::time::timeout(timeout, wait).await {
        Err(_) => {
            return Err(ApiError::unavailable(
                "the decision is taking too long; retry with the same reference",
            ))
        }
        Ok(Err(_)) => return Err(sink_failure(SinkError::Closed)),
        Ok(Ok(Err(error))) => return Err(sink_failure(error)),
        Ok(Ok(Ok(outcome))) => outcome,
    };
    let decision = match outcome {
        Outcome::Decided(decision) => decision,
        Outcome::Duplicate { .. } => {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "this reference was submitted asynchronously and is still being processed",
            ))
        }
    };
    let data = match tenant.mode {
        ProcessingMode::Realtime => Some(&*decision),
        ProcessingMode::ReportingOnly => None,
    };
    Ok(json_response(
        StatusCode::OK,
        &Processed {
            message: "Transaction processed",
            data,
        },
    ))
}

/// `POST /api/v1/transaction-monitoring`
pub async fn submit(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<TransactionPayload>,
) -> Result<Response, ApiError> {
    let tx = body
        .value
        .validate(clock(&app))
        .map_err(ApiError::invalid)?;
    let tx = Box::new(tx);
    let is_new = app
        .writer
        .store_pending(tenant.id, tx.clone(), body.raw.clone())
        .await
        .map_err(sink_failure)?;
    if is_new {
        app.engine
            .submit(EvaluateJob {
                tenant: tenant.id,
                tx,
                raw: body.raw,
                intake: Intake::Async,
                reply: None,
            })
            .await
            .map_err(|_| ApiError::unavailable("the engine is shutting down"))?;
    }
    Ok(message(StatusCode::OK, "Transaction submitted"))
}

/// `GET /api/v1/transaction-monitoring/{transactionId}` — by Vigil's id or the client reference.
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let stored = match app.store.transaction(tenant.id, &id).await? {
        Some(stored) => Some(stored),
        None => app.store.transaction_by_reference(tenant.id, &id).await?,
    };
    let Some(stored) = stored else {
        return Err(ApiError::field(
            StatusCode::NOT_FOUND,
            "transaction not found",
            "transactionId",
            "no transaction with this id or reference",
        ));
    };
    let data = match stored.decision.as_deref() {
        Some(json) => {
            let mut value: serde_json::Value =
                serde_json::from_str(json).map_err(ApiError::internal)?;
            if let Some(object) = value.as_object_mut() {
                object.insert("status".into(), "decided".into());
                object.insert("intake".into(), stored.intake.clone().into());
            }
            value
        }
        None => serde_json::json!({
            "transactionId": stored.transaction_id,
            "reference": stored.reference,
            "status": "pending",
            "intake": stored.intake,
        }),
    };
    Ok(json_response(
        StatusCode::OK,
        &serde_json::json!({"message": "Transaction fetched successfully", "data": data}),
    ))
}

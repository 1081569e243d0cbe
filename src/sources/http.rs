//! The HTTP intake of transactions (spec §4.1).
//!
//! `POST …/instant` validates, hands the transaction to its shard and answers with the decision
//! once the store has made it durable. `POST /api/v1/transaction-monitoring` first stores the
//! submission as pending (durable), answers "Transaction submitted", and lets the shard complete
//! it; a restart re-evaluates whatever was still pending. `GET …/{transactionId}` reads a stored
//! decision back.

use std::time::Duration;

use crate::api::extract::Path;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::Serialize;
use tokio::sync::oneshot;

use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::openapi::{MessageBody, TransactionFetched};
use crate::api::AppState;
use crate::engine::{EvaluateJob, Intake, Outcome, SinkError};
use crate::model::{Decision, TransactionPayload, ValidationClock};
use crate::store::ProcessingMode;

/// The instant answer (spec §2.2): the decision, or `null` for a tenant in `reporting-only`
/// processing mode.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = TransactionProcessed)]
pub struct Processed<'a> {
    #[schema(example = "Transaction processed")]
    message: &'static str,
    #[schema(required = true)]
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
#[utoipa::path(
    post,
    path = "/api/v1/transaction-monitoring/instant",
    tag = "transaction-monitoring",
    summary = "Evaluate a transaction and return the decision",
    description = "Validates the payload (spec §2.1), evaluates it against the active rule pack \
        and the screening lists, stores it, and answers with the decision (spec §2.2) once it is \
        durable. `data` is `null` when the tenant's processing mode is `reporting-only`.\n\n\
        Idempotent per `transactionData.reference`: a reference already decided is answered with \
        the stored decision (its state is not counted again); a reference submitted \
        asynchronously and not yet evaluated is answered with 409.",
    request_body(content = TransactionPayload, description = "The transaction (spec §2.1)."),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The decision, or `data: null` in `reporting-only` mode.", body = Processed,
            examples(
                ("decided" = (summary = "A decision", value = json!({"message": "Transaction processed", "data": {
                        "transactionId": "018f3466-bf60-8786-84db-a534161a2e8e",
                        "reference": "TRX-2024-000123",
                        "riskScore": "0.00",
                        "action": {"result": "approved", "code": 0},
                        "ruleResult": "no rule triggered",
                        "reason": {"code": "none", "message": "no rule triggered", "severity": "low",
                            "rule": {"id": "", "name": ""}},
                        "screening": {"sender": {"pep": "clear", "sanction": "clear"},
                            "receiver": {"pep": "clear", "sanction": "clear"}},
                        "rules": [],
                        "rulesetVersion": "default@1.0.0+3f9a2c1d",
                        "transactionDate": "2024-05-01T13:45:00.000Z",
                        "evaluatedAt": "2024-05-01T13:45:00.012Z"}}))),
                ("reportingOnly" = (summary = "A tenant in reporting-only processing mode",
                    value = json!({"message": "Transaction processed", "data": null}))),
            )),
        crate::api::openapi::BodyErrors,
        (status = 409, description = "The reference was submitted asynchronously and is still being processed.", body = ErrorBody,
            example = json!({"message": "this reference was submitted asynchronously and is still being processed", "errors": []})),
        (status = 422, description = "The payload's fields are wrong; every problem is listed by field path.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [
                {"field": "transactionData.amount", "problem": "must not be negative"},
                {"field": "anonymizedUserData.uniqueId", "problem": "is required"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The decision could not be stored or took longer than `http.request_timeout_ms`, or the engine or store is unavailable; retry with the same reference.", body = ErrorBody,
            example = json!({"message": "the decision is taking too long; retry with the same reference", "errors": []})),
    ),
)]
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
            graph: None,
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
#[utoipa::path(
    post,
    path = "/api/v1/transaction-monitoring",
    tag = "transaction-monitoring",
    summary = "Submit a transaction for asynchronous evaluation",
    description = "Validates the payload (spec §2.1), stores it as pending (durable), answers \
        'Transaction submitted', and evaluates it afterwards; a restart re-evaluates whatever was \
        still pending. Idempotent per `transactionData.reference`: resubmitting a stored \
        reference is acknowledged again without a second evaluation. The decision can be read \
        with `GET /api/v1/transaction-monitoring/{transactionId}`.",
    request_body(content = TransactionPayload, description = "The transaction (spec §2.1)."),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Stored; evaluation follows.", body = MessageBody,
            example = json!({"message": "Transaction submitted"})),
        crate::api::openapi::BodyErrors,
        (status = 422, description = "The payload's fields are wrong; every problem is listed by field path.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [
                {"field": "transactionData.reference", "problem": "is required"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The submission could not be stored, or the engine is shutting down; retry with the same reference.", body = ErrorBody,
            example = json!({"message": "the decision could not be stored; retry with the same reference", "errors": []})),
    ),
)]
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
                graph: None,
            })
            .await
            .map_err(|_| ApiError::unavailable("the engine is shutting down"))?;
    }
    Ok(message(StatusCode::OK, "Transaction submitted"))
}

/// `GET /api/v1/transaction-monitoring/{transactionId}` — by Vigil's id or the client reference.
#[utoipa::path(
    get,
    path = "/api/v1/transaction-monitoring/{transactionId}",
    tag = "transaction-monitoring",
    summary = "Read a stored transaction's decision",
    description = "Looks the transaction up by Vigil's `transactionId`, then by the client's \
        `transactionData.reference`. A decided transaction is answered with its decision plus \
        `status: decided` and `intake`; an asynchronous submission not yet evaluated with \
        `status: pending`. (Vigil addition; not in the spec.)",
    params(
        ("transactionId" = String, Path, description = "Vigil's transaction id or the client's reference."),
    ),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The stored transaction.", body = TransactionFetched),
        (status = 404, description = "No transaction with this id or reference for this tenant.", body = ErrorBody,
            example = json!({"message": "transaction not found", "errors": [
                {"field": "transactionId", "problem": "no transaction with this id or reference"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable; retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
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

//! Operator and tenant settings endpoints (beyond the spec, which leaves them open).
//!
//! - `GET/PUT /api/v1/settings` — the calling tenant's processing mode (`realtime` or
//!   `reporting-only`).
//! - `GET /api/v1/admin/rules`, `POST /api/v1/admin/rules/reload` — the active rule pack and a
//!   reload on demand; admin keys only (`vigil keys create --admin`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;

use super::auth::Tenant;
use super::error::{ApiError, ErrorBody};
use super::extract::JsonBody;
use super::openapi::{RulesReloaded, RulesResponse, SettingsResponse};
use super::AppState;
use crate::model::FieldError;
use crate::store::ProcessingMode;

/// `PUT /api/v1/settings`: `processingMode` is required.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsBody {
    /// `realtime`: the instant endpoint returns decisions. `reporting-only`: transactions are
    /// evaluated and recorded, and the instant endpoint answers `data: null`.
    #[schema(value_type = ProcessingMode)]
    pub processing_mode: Option<String>,
}

const SETTINGS_NOTE: &str = "(Vigil addition; the spec leaves settings open.)";

#[utoipa::path(
    get,
    path = "/api/v1/settings",
    tag = "settings",
    summary = "Read the calling tenant's settings",
    description = SETTINGS_NOTE,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The tenant's settings.", body = SettingsResponse,
            example = json!({"message": "Settings fetched successfully",
                "data": {"business": "acme", "processingMode": "realtime"}})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn get_settings(Extension(tenant): Extension<Tenant>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "message": "Settings fetched successfully",
        "data": {"business": tenant.name, "processingMode": tenant.mode.as_str()},
    }))
}

#[utoipa::path(
    put,
    path = "/api/v1/settings",
    tag = "settings",
    summary = "Change the calling tenant's processing mode",
    description = SETTINGS_NOTE,
    request_body = SettingsBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Updated.", body = SettingsResponse,
            example = json!({"message": "Settings updated successfully",
                "data": {"business": "acme", "processingMode": "reporting-only"}})),
        crate::api::openapi::BodyErrors,
        (status = 422, description = "`processingMode` is missing or not `realtime` or `reporting-only`.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "processingMode",
                "problem": "unknown processing mode 'batch' (realtime or reporting-only)"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable; retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn put_settings(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<SettingsBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Some(mode) = body.value.processing_mode.as_deref() else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "processingMode",
            "is required",
        )]));
    };
    let mode: ProcessingMode = mode.parse().map_err(|problem: String| {
        ApiError::invalid(vec![FieldError::new("processingMode", problem)])
    })?;
    app.store.set_processing_mode(tenant.id, mode).await?;
    app.keys.refresh().await?;
    Ok(Json(serde_json::json!({
        "message": "Settings updated successfully",
        "data": {"business": tenant.name, "processingMode": mode.as_str()},
    })))
}

fn require_admin(tenant: &Tenant) -> Result<(), ApiError> {
    if tenant.admin {
        Ok(())
    } else {
        Err(ApiError::forbidden("this endpoint needs an admin key"))
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/admin/rules",
    tag = "admin",
    summary = "The active rule pack",
    description = "The rule pack's status, its decision thresholds and its rules. Admin keys only \
        (`vigil keys create --admin`).",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The active rule pack.", body = RulesResponse),
        crate::api::openapi::AuthErrors,
        (status = 403, description = "The key is not an admin key.", body = ErrorBody,
            example = json!({"message": "this endpoint needs an admin key", "errors": []})),
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn rules_status(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<serde_json::Value>, ApiError> {
    require_admin(&tenant)?;
    let snapshot = app.engine.snapshot().load();
    let rules: Vec<serde_json::Value> = snapshot
        .rules
        .rules
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.meta.id, "name": r.meta.name, "description": r.meta.description,
                "severity": r.meta.severity, "score": r.meta.score, "mode": r.meta.mode,
                "action": r.meta.action.map(|a| a.action()), "priority": r.meta.priority,
                "file": r.file.display().to_string(),
            })
        })
        .collect();
    Ok(Json(serde_json::json!({
        "message": "Rules fetched successfully",
        "data": {"status": &*app.rules.status(), "thresholds": {
            "review": snapshot.rules.thresholds.review, "reject": snapshot.rules.thresholds.reject,
        }, "rules": rules},
    })))
}

#[utoipa::path(
    post,
    path = "/api/v1/admin/rules/reload",
    tag = "admin",
    summary = "Reload the rule pack now",
    description = "Compiles the rule directory and runs its fixtures; on success the new pack \
        serves from the next transaction on, otherwise the previous pack keeps serving and the \
        problem is reported. Takes no body. Admin keys only.",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Reloaded.", body = RulesReloaded),
        crate::api::openapi::AuthErrors,
        (status = 403, description = "The key is not an admin key.", body = ErrorBody,
            example = json!({"message": "this endpoint needs an admin key", "errors": []})),
        (status = 422, description = "The pack was rejected (compile error or failing fixture); the previous pack keeps serving.", body = ErrorBody,
            example = json!({"message": "rule pack rejected; the previous pack keeps serving",
                "errors": [{"field": "rules", "problem": "velocity.rhai: syntax error at line 3"}]})),
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn reload_rules(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Response, ApiError> {
    require_admin(&tenant)?;
    let rules = app.rules.clone();
    let result = tokio::task::spawn_blocking(move || rules.reload())
        .await
        .map_err(ApiError::internal)?;
    match result {
        Ok(status) => Ok((
            StatusCode::OK,
            Json(serde_json::json!({"message": "Rules reloaded", "data": &*status})),
        )
            .into_response()),
        Err(problem) => Err(ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "rule pack rejected; the previous pack keeps serving",
            "rules",
            &problem,
        )),
    }
}

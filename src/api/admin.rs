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
use super::error::ApiError;
use super::extract::JsonBody;
use super::AppState;
use crate::model::FieldError;
use crate::store::ProcessingMode;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsBody {
    pub processing_mode: Option<String>,
}

pub async fn get_settings(Extension(tenant): Extension<Tenant>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "message": "Settings fetched successfully",
        "data": {"business": tenant.name, "processingMode": tenant.mode.as_str()},
    }))
}

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

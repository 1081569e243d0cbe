//! The webhook endpoints (Vigil additions; the spec leaves webhook configuration open):
//! configure and read the business's webhook, list deliveries with their attempts, replay one.

use crate::api::extract::Path;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use sqlx::Row;

use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::fields::{page_params, query_params, Problems};
use crate::api::openapi::{AuthErrors, BodyErrors, Unavailable};
use crate::api::AppState;
use crate::outbound::policy as ssrf;
use crate::store::page::Cursor;
use crate::store::{iso_time, now_ms, StoreError};

const MIN_SECRET: usize = 16;
const MAX_SECRET: usize = 256;

/// `PUT /api/v1/webhooks`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct WebhookBody {
    /// Where results are posted (http or https; checked against SSRF).
    #[schema(
        required = true,
        nullable = false,
        max_length = 2000,
        pattern = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]"
    )]
    pub url: Option<String>,
    /// The signing secret (16-256 characters), chosen by the business.
    #[schema(
        required = true,
        nullable = false,
        min_length = 16,
        max_length = 256,
        pattern = r"^\S(.*\S)?$"
    )]
    pub secret: Option<String>,
}

/// Shows only the last four characters of a secret.
pub fn mask(secret: &str) -> String {
    let tail: String = secret
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("****{tail}")
}

fn config_json(url: &str, secret: &str, created: i64, updated: i64) -> Value {
    json!({"url": url, "secret": mask(secret), "createdAt": iso_time(created), "updatedAt": iso_time(updated)})
}

#[utoipa::path(
    put,
    path = "/api/v1/webhooks",
    tag = "webhooks",
    summary = "Configure the business's webhook URL and signing secret",
    description = "Every result Vigil delivers to this business (asynchronous transaction \
        decisions, sanction and adverse-media requests) is posted to `url`, and every delivery \
        (risk-monitoring callbacks too) is signed with `secret`: header `X-Vigil-Signature: \
        t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + \".\" + body)>`. The URL must resolve \
        to public addresses (loopback and private ones only with `allow_private_callbacks`; \
        link-local and metadata addresses never). Deliveries still pending go to the new URL.",
    request_body = WebhookBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The webhook, secret masked.", body = Object,
            example = json!({"message": "Webhook saved", "data": {"url": "https://hooks.acme-bank.ng/vigil",
                "secret": "****c0de", "createdAt": "2026-03-02T10:15:30.123Z", "updatedAt": "2026-03-02T10:15:30.123Z"}})),
        BodyErrors,
        (status = 422, description = "`url` not http(s) or resolving to a refused address; `secret` missing or of the wrong length.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "url",
                "problem": "resolves to 127.0.0.1, a loopback address, which is refused"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn put_webhook(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<WebhookBody>,
) -> Result<Json<Value>, ApiError> {
    let mut problems = Problems::default();
    let url = body.value.url.unwrap_or_default().trim().to_owned();
    if url.is_empty() {
        problems.push("url", "is required");
    } else if url.len() > 2_000 {
        problems.push("url", "must be at most 2000 characters");
    } else if let Err(error) = ssrf::resolve_checked(&url, app.webhooks.allow_private).await {
        problems.push("url", error.to_string());
    }
    let secret = body.value.secret.unwrap_or_default();
    let length = secret.chars().count();
    if secret.trim().is_empty() {
        problems.push("secret", "is required");
    } else if !(MIN_SECRET..=MAX_SECRET).contains(&length) || secret.trim() != secret {
        problems.push(
            "secret",
            format!("must be {MIN_SECRET} to {MAX_SECRET} characters without surrounding spaces"),
        );
    }
    problems.finish()?;
    let now = now_ms();
    sqlx::query(
        "INSERT INTO webhook_configs (business_id, url, secret, created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $4) ON CONFLICT (business_id) DO UPDATE SET url = $2, \
         secret = $3, updated_at_ms = $4",
    )
    .bind(tenant.id)
    .bind(&url)
    .bind(&secret)
    .bind(now)
    .execute(app.store.pool())
    .await
    .map_err(StoreError::from)?;
    // Deliveries waiting for a webhook can go now.
    app.webhooks.wake();
    let saved = read_config(&app, tenant.id)
        .await?
        .ok_or_else(|| ApiError::internal("the webhook vanished after it was saved"))?;
    Ok(Json(json!({"message": "Webhook saved", "data": saved})))
}

async fn read_config(app: &AppState, business_id: i64) -> Result<Option<Value>, ApiError> {
    let row = sqlx::query(
        "SELECT url, secret, created_at_ms, updated_at_ms FROM webhook_configs WHERE business_id = $1",
    )
    .bind(business_id)
    .fetch_optional(app.store.pool())
    .await
    .map_err(StoreError::from)?;
    Ok(row.map(|row| {
        config_json(
            &row.get::<String, _>(0),
            &row.get::<String, _>(1),
            row.get(2),
            row.get(3),
        )
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks",
    tag = "webhooks",
    summary = "The business's webhook (secret masked)",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The webhook.", body = Object,
            example = json!({"message": "Webhook fetched successfully", "data": {"url": "https://hooks.acme-bank.ng/vigil",
                "secret": "****c0de", "createdAt": "2026-03-02T10:15:30.123Z", "updatedAt": "2026-03-02T10:15:30.123Z"}})),
        (status = 404, description = "No webhook is configured.", body = ErrorBody,
            example = json!({"message": "no webhook is configured", "errors": []})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn get_webhook(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<Value>, ApiError> {
    let config = read_config(&app, tenant.id)
        .await?
        .ok_or_else(|| ApiError::not_found("no webhook is configured"))?;
    Ok(Json(
        json!({"message": "Webhook fetched successfully", "data": config}),
    ))
}

const DELIVERY_COLUMNS: &str = "SELECT id, event, record_id, url, body, status, attempts, \
    next_attempt_at_ms, last_error, delivered_at_ms, created_at_ms, updated_at_ms \
    FROM webhook_deliveries";

async fn delivery_json(app: &AppState, row: sqlx::any::AnyRow) -> Result<Value, ApiError> {
    let id: String = row.get(0);
    let status: String = row.get(5);
    let body: String = row.get(4);
    let delivered: Option<i64> = row.get(9);
    let attempts = sqlx::query(
        "SELECT attempt, url, at_ms, duration_ms, status_code, error FROM webhook_attempts \
         WHERE delivery_id = $1 ORDER BY attempt",
    )
    .bind(&id)
    .fetch_all(app.store.pool())
    .await
    .map_err(StoreError::from)?;
    let attempts: Vec<Value> = attempts
        .into_iter()
        .map(|a| {
            json!({"attempt": a.get::<i64, _>(0), "url": a.get::<String, _>(1),
                "at": iso_time(a.get(2)), "durationMs": a.get::<i64, _>(3),
                "statusCode": a.get::<Option<i64>, _>(4), "error": a.get::<Option<String>, _>(5)})
        })
        .collect();
    Ok(json!({
        "id": id,
        "event": row.get::<String, _>(1),
        "recordId": row.get::<String, _>(2),
        "url": row.get::<Option<String>, _>(3),
        "status": status,
        "attemptCount": row.get::<i64, _>(6),
        "nextAttemptAt": (status == "pending").then(|| iso_time(row.get(7))),
        "lastError": row.get::<Option<String>, _>(8),
        "deliveredAt": delivered.map(iso_time),
        "createdAt": iso_time(row.get(10)),
        "updatedAt": iso_time(row.get(11)),
        "payload": serde_json::from_str::<Value>(&body).unwrap_or(Value::String(body)),
        "attempts": attempts,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks/deliveries",
    tag = "webhooks",
    summary = "The business's deliveries with their attempts",
    params(
        ("status" = Option<String>, Query, pattern = r"^\s*(pending|delivered|dead)?\s*$", description = "`pending`, `delivered` or `dead`"),
        ("event" = Option<String>, Query, pattern = r"^\s*(transaction-monitoring|sanction|adverse-media|risk-monitoring)?\s*$", description = "`transaction-monitoring`, `sanction`, `adverse-media` or `risk-monitoring`"),
        ("recordId" = Option<String>, Query, description = "Only deliveries of this transaction, request or check"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1-100, default 25"),
        ("cursor" = Option<String>, Query, description = "`next` of the previous page"),
    ),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Deliveries, newest first: `{message, data, next}`; each with its payload and every attempt (time, duration, status code, error).", body = Object),
        (status = 422, description = "An unknown parameter or a bad value.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn list_deliveries(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = query_params(
        raw.as_deref(),
        &["status", "event", "recordId", "limit", "cursor"],
    )?;
    let mut problems = Problems::default();
    let (limit, cursor) = page_params(&params, &mut problems);
    let status = params.get("status").filter(|s| !s.is_empty());
    if let Some(status) = status {
        if !["pending", "delivered", "dead"].contains(&status.as_str()) {
            problems.push("status", "must be pending, delivered or dead");
        }
    }
    let event = params.get("event").filter(|s| !s.is_empty());
    if let Some(event) = event {
        use super::event::*;
        if ![TRANSACTION, SANCTION, ADVERSE_MEDIA, RISK_MONITORING].contains(&event.as_str()) {
            problems.push(
                "event",
                "must be transaction-monitoring, sanction, adverse-media or risk-monitoring",
            );
        }
    }
    let record = params.get("recordId").filter(|s| !s.is_empty());
    problems.finish()?;
    let mut sql = format!("{DELIVERY_COLUMNS} WHERE business_id = $1");
    let mut binds: Vec<String> = Vec::new();
    for (column, value) in [("status", status), ("event", event), ("record_id", record)] {
        if let Some(value) = value {
            binds.push(value.clone());
            sql.push_str(&format!(" AND {column} = ${}", binds.len() + 1));
        }
    }
    let mut next = binds.len() + 2;
    if cursor.is_some() {
        next = crate::store::page::after_cursor(&mut sql, next);
    }
    sql.push_str(&format!(
        " ORDER BY created_at_ms DESC, id DESC LIMIT ${next}"
    ));
    let mut query = sqlx::query(&sql).bind(tenant.id);
    for value in binds {
        query = query.bind(value);
    }
    if let Some(cursor) = &cursor {
        query = query.bind(cursor.created_at_ms).bind(cursor.id.clone());
    }
    let rows = query
        .bind(i64::from(limit))
        .fetch_all(app.store.pool())
        .await
        .map_err(StoreError::from)?;
    let next = (rows.len() == limit as usize)
        .then(|| rows.last())
        .flatten()
        .map(|row| {
            Cursor {
                created_at_ms: row.get(10),
                id: row.get(0),
            }
            .encode()
        });
    let mut data = Vec::with_capacity(rows.len());
    for row in rows {
        data.push(delivery_json(&app, row).await?);
    }
    Ok(Json(json!({
        "message": "Webhook deliveries fetched successfully",
        "data": data,
        "next": next,
    })))
}

async fn one_delivery(app: &AppState, business_id: i64, id: &str) -> Result<Value, ApiError> {
    let sql = format!("{DELIVERY_COLUMNS} WHERE id = $1 AND business_id = $2");
    let row = sqlx::query(&sql)
        .bind(id)
        .bind(business_id)
        .fetch_optional(app.store.pool())
        .await
        .map_err(StoreError::from)?
        .ok_or_else(|| {
            ApiError::field(
                StatusCode::NOT_FOUND,
                "Delivery not found",
                "id",
                "no such delivery for this business",
            )
        })?;
    delivery_json(app, row).await
}

#[utoipa::path(
    get,
    path = "/api/v1/webhooks/deliveries/{id}",
    tag = "webhooks",
    summary = "One delivery with its attempts",
    params(("id" = String, Path, description = "The delivery id (also sent as `X-Vigil-Delivery`)")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The delivery.", body = Object),
        (status = 404, description = "No such delivery for this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn get_delivery(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let delivery = one_delivery(&app, tenant.id, &id).await?;
    Ok(Json(
        json!({"message": "Webhook delivery fetched successfully", "data": delivery}),
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/webhooks/deliveries/{id}/replay",
    tag = "webhooks",
    summary = "Deliver again (a dead-lettered or already delivered result)",
    description = "Puts the delivery back in the queue with a fresh retry window: it is attempted \
        at once, with the same body and delivery id, to the URL configured now. A delivery still \
        pending is a 409 (it is already being retried).",
    params(("id" = String, Path, description = "The delivery id")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The delivery, pending again.", body = Object),
        (status = 404, description = "No such delivery for this business.", body = ErrorBody),
        (status = 409, description = "The delivery is still pending.", body = ErrorBody,
            example = json!({"message": "the delivery is still pending", "errors": []})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn replay_delivery(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let now = now_ms();
    let done = sqlx::query(
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = $1, \
         retry_from_ms = $1, updated_at_ms = $1 \
         WHERE id = $2 AND business_id = $3 AND status <> 'pending'",
    )
    .bind(now)
    .bind(&id)
    .bind(tenant.id)
    .execute(app.store.pool())
    .await
    .map_err(StoreError::from)?;
    let delivery = one_delivery(&app, tenant.id, &id).await?;
    if done.rows_affected() == 0 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the delivery is still pending",
        ));
    }
    app.webhooks.wake();
    Ok(Json(
        json!({"message": "Webhook delivery queued for replay", "data": delivery}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masked_secret_shows_only_its_last_four_characters() {
        assert_eq!(mask("whsec_0123456789abcdef"), "****cdef");
        assert_eq!(mask("ab"), "****ab");
    }
}

//! `GET /api/v1/audit/{entityType}/{entityId}`: one record's audit trail, for the caller's
//! business only (a record of another business is 404, as if it did not exist).

use crate::api::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;

use super::{trail, AuditEntry, EntityType};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::openapi::{AuthErrors, Unavailable};
use crate::api::AppState;
use crate::model::FieldError;

#[utoipa::path(
    get,
    path = "/api/v1/audit/{entityType}/{entityId}",
    tag = "audit",
    summary = "Read a record's audit trail",
    description = "Every change to the record, oldest first: who (API key and analyst), when, \
        what (`action`) and the JSON diff (`changes`). `entityType` is `case`, `cdd-customer` \
        (by uniqueId, account number or `_id`), `edd-request` or `analyst`. The trail is \
        append-only: the database refuses updates and deletes on it. (Vigil addition.)",
    params(
        ("entityType" = String, Path, pattern = r"^(case|cdd-customer|edd-request|analyst)$", description = "case, cdd-customer, edd-request or analyst"),
        ("entityId" = String, Path, description = "The record's id (a CDD customer also by uniqueId or account number)."),
    ),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The trail.", body = AuditTrail,
            example = json!({"message": "Audit trail fetched successfully", "data": [
                {"seq": 41, "entityType": "case", "entityId": "0195f3a2-…", "action": "status-updated",
                 "actorKey": "vk_…", "actorUser": "0195f3a1-…", "at": "2026-03-02T11:02:09.310Z",
                 "changes": {"status": {"from": "open", "to": "in progress"}}}]})),
        (status = 404, description = "No such record in this business.", body = ErrorBody),
        (status = 422, description = "Unknown entity type.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "entityType",
                "problem": "must be one of case, cdd-customer, edd-request, analyst"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path((entity, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let Some(entity) = EntityType::parse(entity.trim()) else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "entityType",
            format!("must be one of {}", EntityType::NAMES),
        )]));
    };
    let pool = app.store.pool();
    let id = id.trim();
    let resolved: Option<String> = match entity {
        EntityType::Case => crate::cases::store::fetch(pool, tenant.id, &tenant.name, id)
            .await?
            .map(|c| c.id),
        EntityType::CddCustomer => {
            let mut conn = pool
                .acquire()
                .await
                .map_err(crate::store::StoreError::from)?;
            match crate::cdd::store::find(&mut conn, tenant.id, id).await? {
                Some(customer) => Some(customer.id),
                None => {
                    let by_id: Option<String> = sqlx::query_scalar(
                        "SELECT id FROM cdd_customers WHERE business_id = $1 AND id = $2",
                    )
                    .bind(tenant.id)
                    .bind(id)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(crate::store::StoreError::from)?;
                    by_id
                }
            }
        }
        EntityType::EddRequest => crate::edd::store::fetch(pool, tenant.id, id)
            .await?
            .map(|r| r.request_id),
        EntityType::Analyst => crate::cases::analysts::list(pool, tenant.id)
            .await?
            .into_iter()
            .find(|a| a.id == id)
            .map(|a| a.id),
    };
    let Some(resolved) = resolved else {
        return Err(ApiError::field(
            StatusCode::NOT_FOUND,
            "Record not found",
            "entityId",
            "no such record in this business",
        ));
    };
    let entries = trail(pool, tenant.id, entity, &resolved).await?;
    Ok(
        Json(json!({"message": "Audit trail fetched successfully", "data": entries}))
            .into_response(),
    )
}

/// A record's audit trail.
#[derive(utoipa::ToSchema)]
pub struct AuditTrail {
    #[schema(example = "Audit trail fetched successfully")]
    pub message: String,
    pub data: Vec<AuditEntry>,
}

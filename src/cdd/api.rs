//! The CDD customer endpoints (spec §4.4): `POST /cdd/customers`, `GET /cdd/customers/{uniqueId}`
//! and Vigil's `PATCH /cdd/customers/{uniqueId}` (change fields, re-rate, decide the review).

use crate::api::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Map, Value};

use super::profile::CustomerInput;
use super::risk::{self, CustomerScreening, Rating};
use super::store::{self, Update};
use super::{CddError, CustomerCreated, CustomerView, CDD_STATUSES, STATUSES};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::fields::Problems;
use crate::api::openapi::{AuthErrors, BodyErrors, Unavailable};
use crate::api::AppState;
use crate::audit::Actor;
use crate::model::FieldError;

impl From<CddError> for ApiError {
    fn from(error: CddError) -> Self {
        match error {
            CddError::NotFound => ApiError::field(
                StatusCode::NOT_FOUND,
                "Cdd customer not found",
                "uniqueId",
                "no customer with this uniqueId or account number",
            ),
            CddError::Duplicate(id) => ApiError::field(
                StatusCode::CONFLICT,
                "a cdd customer with this uniqueId already exists",
                "uniqueId",
                &format!("'{id}' is taken in this business"),
            ),
            CddError::Invalid(errors) => ApiError::invalid(errors),
            CddError::Store(store) => ApiError::from(store),
        }
    }
}

/// Screens (off the async threads) and rates a validated profile.
async fn screen_and_rate(
    app: &AppState,
    tenant: i64,
    input: &CustomerInput,
) -> Result<(CustomerScreening, Rating), ApiError> {
    let screener = app.screening.current();
    let enabled = app.settings.config.screening.enabled;
    let profile = input.clone();
    let screening =
        tokio::task::spawn_blocking(move || super::screen(&screener, enabled, tenant, &profile))
            .await
            .map_err(ApiError::internal)?;
    let rating = risk::rate(
        &app.settings.config.cdd.risk,
        &input.risk_inputs(),
        &screening,
    );
    Ok((screening, rating))
}

/// Runs the customer's waiting BVN and NIN checks against the identity lookups (see
/// `crate::identity::verify`); the customer is stored first, so a failed check never loses it.
async fn verify_identity(
    app: &AppState,
    tenant: i64,
    actor: &Actor,
    customer: store::StoredCustomer,
) -> Result<store::StoredCustomer, ApiError> {
    let screener = app.screening.current();
    Ok(crate::identity::verify::run_pending(
        &app.identity,
        screener.index(),
        app.store.pool(),
        tenant,
        actor,
        customer,
    )
    .await?)
}

/// `POST /cdd/customers`
#[utoipa::path(
    post,
    path = "/cdd/customers",
    tag = "cdd",
    summary = "Create a CDD customer",
    description = "Creates an individual or corporate customer (spec §2.6): validates the \
        fields, screens the name against the sanctions and PEP lists, rates the risk with the \
        configured factor table, and starts the verifications (BVN, NIN and other identity \
        documents \"Awaiting Confirmation\"). `uniqueId` is unique per business (409). \
        Validation: `type` individual or corporate; corporate needs `businessName`; `dob` a \
        YYYY-MM-DD date not in the future; `photo` and `proofOfAddress` absolute http(s) URLs; \
        `bvnNumber` and `ninNumber` 11 digits; `email` an e-mail address; `country` a country. \
        Unknown fields are ignored.",
    request_body = CustomerInput,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 201, description = "Created.", body = CustomerCreatedResponse,
            example = json!({"message": "CDD customer created successfully", "data": {
                "_id": "0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10", "uniqueId": "CUST-42",
                "type": "individual", "firstName": "Ada", "lastName": "Obi", "channel": "mobile",
                "status": "active", "kycLevel": "tier 2",
                "createdAt": "2026-03-02T10:15:31.204Z"}})),
        (status = 409, description = "The business already has a customer with this uniqueId.", body = ErrorBody,
            example = json!({"message": "a cdd customer with this uniqueId already exists",
                "errors": [{"field": "uniqueId", "problem": "'CUST-42' is taken in this business"}]})),
        BodyErrors,
        (status = 422, description = "Fields are missing or invalid; each is named.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [
                {"field": "businessName", "problem": "is required for a corporate customer"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn create(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<CustomerInput>,
) -> Result<Response, ApiError> {
    let input = body.value.validate().map_err(ApiError::invalid)?;
    let (screening, rating) = screen_and_rate(&app, tenant.id, &input).await?;
    let actor = Actor::key(&tenant.key_id, None);
    let customer = store::create(
        app.store.pool(),
        tenant.id,
        &input,
        &screening,
        &rating,
        &actor,
    )
    .await?;
    let customer = verify_identity(&app, tenant.id, &actor, customer).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"message": "CDD customer created successfully", "data": customer.created()})),
    )
        .into_response())
}

/// `GET /cdd/customers/{uniqueId}`
#[utoipa::path(
    get,
    path = "/cdd/customers/{uniqueId}",
    tag = "cdd",
    summary = "Fetch a CDD customer",
    description = "The customer by `uniqueId`, or else by account number (spec §4.4): CDD \
        status, risk tier and rating, verification status, verifications, and the rating's \
        `analysis` in plain words. Vigil adds `riskFactors` (each factor's value, risk, weight \
        and contribution), `screening`, `profile` and `updatedAt`.",
    params(("uniqueId" = String, Path, description = "The customer's uniqueId or account number.")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The customer.", body = CustomerFetched,
            example = json!({"message": "Cdd customer fetched successfully", "data": {
                "customer": {"_id": "0195f3a2-…", "name": "Ada Obi", "uniqueId": "CUST-42",
                    "type": "individual", "status": "active", "channel": "mobile",
                    "cddStatus": "pending review", "riskTier": "medium",
                    "overallRiskRating": {"riskLevel": "medium", "riskScore": 41,
                        "user": {"firstName": "Vigil", "lastName": "Risk Model"}},
                    "cddVerificationStatus": "Awaiting Confirmation",
                    "createdAt": "2026-03-02T10:15:31.204Z"},
                "verifications": {"id": [{"key": "bvn", "name": "BVN verification",
                    "status": "Awaiting Confirmation", "requestId": "0195f3a2-…", "lastRunAt": null}],
                    "others": [{"key": "sanction-screening", "name": "Sanctions screening",
                    "status": "Clear", "requestId": "0195f3a2-…", "lastRunAt": "2026-03-02T10:15:31.204Z"}]},
                "runningCdd": null,
                "analysis": "Risk score 41 of 100 (medium risk); risk tier medium. Main drivers: …"}})),
        (status = 404, description = "No customer with this uniqueId or account number in this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let customer = store::fetch(app.store.pool(), tenant.id, key.trim())
        .await?
        .ok_or(CddError::NotFound)?;
    Ok(
        Json(json!({"message": "Cdd customer fetched successfully", "data": customer.view()}))
            .into_response(),
    )
}

/// Profile fields a PATCH may set or clear (every §2.6 field but `uniqueId` and `type`).
fn profile_fields() -> Vec<String> {
    serde_json::to_value(CustomerInput::default())
        .ok()
        .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect()))
        .unwrap_or_default()
}

/// `PATCH /cdd/customers/{uniqueId}`
#[utoipa::path(
    patch,
    path = "/cdd/customers/{uniqueId}",
    tag = "cdd",
    summary = "Update a CDD customer and rate it again",
    description = "Sets the profile fields given (a `null` clears one; `uniqueId` and `type` \
        cannot change), and optionally `status` (active, inactive, closed — customers are never \
        deleted) and `cddStatus` (pending review, approved, rejected). The customer is screened \
        and rated again every time — an empty body `{}` re-rates against the lists serving now. \
        A new or changed identity number starts its verification over (\"Awaiting \
        Confirmation\"); a removed one is \"Withdrawn\". A rating that changes `riskTier` sets \
        `cddStatus` back to `pending review` unless the request sets it. `userId` (optional) \
        names the analyst for the audit trail. Unknown fields are a 422. (Vigil addition.)",
    params(("uniqueId" = String, Path, description = "The customer's uniqueId or account number.")),
    request_body(content = Object, description = "Any §2.6 field but uniqueId/type, plus `status`, `cddStatus`, `userId`.",
        example = json!({"occupation": "bureau de change operator", "cddStatus": "approved", "userId": "0195f3a2-…"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The customer after the update.", body = CustomerFetched),
        (status = 404, description = "No such customer in this business.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "A field is unknown, immutable or invalid.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "type", "problem": "cannot be changed"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn update(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(key): Path<String>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    let Value::Object(changes) = body.value else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "body",
            "expected a JSON object",
        )]));
    };
    let fields = profile_fields();
    let mut problems = Problems::default();
    let mut status = None;
    let mut cdd_status = None;
    let mut user_id = None;
    let mut profile_changes = Map::new();
    for (field, value) in &changes {
        match field.as_str() {
            "status" => match value.as_str().map(str::trim) {
                Some(s) if STATUSES.contains(&s) => status = Some(s.to_owned()),
                _ => problems.push("status", format!("must be one of {}", STATUSES.join(", "))),
            },
            "cddStatus" => match value.as_str().map(str::trim) {
                Some(s) if CDD_STATUSES.contains(&s) => cdd_status = Some(s.to_owned()),
                _ => problems.push(
                    "cddStatus",
                    format!("must be one of {}", CDD_STATUSES.join(", ")),
                ),
            },
            "userId" => match value.as_str().map(str::trim) {
                Some(s) if !s.is_empty() && s.len() <= 256 => user_id = Some(s.to_owned()),
                _ => problems.push("userId", "must be a non-empty string"),
            },
            name if fields.iter().any(|f| f == name) => {
                profile_changes.insert(field.clone(), value.clone());
            }
            _ => problems.push(field.as_str(), "unknown field"),
        }
    }
    problems.finish()?;
    if let Some(member) = user_id.as_deref() {
        // The analyst must exist in this business (the same directory cases use).
        let mut conn = app
            .store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        let directory = crate::cases::analysts::directory(&mut conn, tenant.id)
            .await
            .map_err(crate::store::StoreError::from)?;
        directory.active("userId", member)?;
    }
    let locked = store::lock(app.store.pool(), tenant.id, key.trim()).await?;
    let mut merged = locked.customer.profile.clone();
    let mut immutable = Vec::new();
    if let Some(profile) = merged.as_object_mut() {
        for (field, value) in profile_changes {
            if (field == "uniqueId" || field == "type") && profile.get(&field) != Some(&value) {
                immutable.push(FieldError::new(field, "cannot be changed"));
                continue;
            }
            if value.is_null() {
                profile.remove(&field);
            } else {
                profile.insert(field, value);
            }
        }
    }
    if !immutable.is_empty() {
        return Err(ApiError::invalid(immutable));
    }
    let input: CustomerInput = serde_path_to_error::deserialize(merged).map_err(|error| {
        let path = error.path().to_string();
        ApiError::invalid(vec![FieldError::new(
            path,
            error.into_inner().to_string().to_lowercase(),
        )])
    })?;
    let input = input.validate().map_err(ApiError::invalid)?;
    let (screening, rating) = screen_and_rate(&app, tenant.id, &input).await?;
    let customer = locked
        .update(
            tenant.id,
            Update {
                input: &input,
                screening: &screening,
                rating: &rating,
                status,
                cdd_status,
            },
            &Actor::key(&tenant.key_id, user_id.as_deref()),
        )
        .await?;
    let actor = Actor::key(&tenant.key_id, user_id.as_deref());
    let customer = verify_identity(&app, tenant.id, &actor, customer).await?;
    Ok(
        Json(json!({"message": "Cdd customer updated successfully", "data": customer.view()}))
            .into_response(),
    )
}

// Documentation-only response bodies.

/// `POST /cdd/customers` answer.
#[derive(utoipa::ToSchema)]
pub struct CustomerCreatedResponse {
    #[schema(example = "CDD customer created successfully")]
    pub message: String,
    pub data: CustomerCreated,
}

/// `GET /cdd/customers/{uniqueId}` answer.
#[derive(utoipa::ToSchema)]
pub struct CustomerFetched {
    #[schema(example = "Cdd customer fetched successfully")]
    pub message: String,
    pub data: CustomerView,
}

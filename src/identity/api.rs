//! The lookup endpoints (spec §4.4): `POST /kyc/nin` and `/api/v1/kyc/nin`, `POST /kyc/bvn` and
//! `/api/v1/kyc/bvn`, `POST /kyc/cac`; and Vigil's `GET /api/v1/kyc/lookups`, the tenant's
//! lookup audit.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::OpenApi;

use super::model::{self, LookupKind, LookupQuery};
use super::{IdentityError, LookupAudit};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::openapi::{AuthErrors, BodyErrors, Unavailable};
use crate::api::AppState;
use crate::model::FieldError;

impl From<IdentityError> for ApiError {
    fn from(error: IdentityError) -> Self {
        match error {
            IdentityError::NotFound(kind) => {
                let (field, problem) = match kind {
                    LookupKind::Cac => (
                        "rcNumber",
                        "no company of this type with this registration number".to_owned(),
                    ),
                    _ => (
                        "idNumber",
                        format!("no {} record with this number", kind.label()),
                    ),
                };
                ApiError::field(
                    StatusCode::NOT_FOUND,
                    &format!("{} not found", kind.label()),
                    field,
                    &problem,
                )
            }
            IdentityError::Unavailable(problem) => {
                tracing::warn!(%problem, "identity provider unavailable");
                ApiError::unavailable("identity provider is unavailable, retry later")
            }
            IdentityError::Store(store) => ApiError::from(store),
        }
    }
}

async fn person(
    app: AppState,
    tenant: Tenant,
    kind: LookupKind,
    body: Value,
) -> Result<Response, ApiError> {
    let query = model::person_query(kind, &body).map_err(ApiError::invalid)?;
    let found = app
        .identity
        .lookup(tenant.id, &tenant.key_id, "api", &query)
        .await?;
    let message = format!("{} lookup successful", kind.label());
    Ok(Json(json!({"message": message, "data": found.data})).into_response())
}

/// `POST /kyc/nin`
#[utoipa::path(
    post,
    path = "/kyc/nin",
    tag = "identity",
    summary = "Look up a NIN",
    description = "The National Identification Number's record (spec §2.7) from the configured \
        provider: the local registry (embedded default, `vigil registry import`) or the upstream \
        identity provider. `idNumber` is exactly 11 digits. Every lookup is audited \
        (`GET /api/v1/kyc/lookups`); found records are cached for `identity.cache_ttl_secs`.",
    request_body(content = PersonLookup, example = json!({"idNumber": "12345678901"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Found.", body = NinLookupResponse,
            example = json!({"message": "NIN lookup successful", "data": {"idNumber": "12345678901",
                "firstName": "Ada", "lastName": "Obi", "middleName": "Ngozi",
                "dateOfBirth": "1988-04-17", "gender": "F", "nationality": "NG", "photo": null}})),
        (status = 404, description = "No record with this number.", body = ErrorBody,
            example = json!({"message": "NIN not found", "errors": [{"field": "idNumber", "problem": "no NIN record with this number"}]})),
        BodyErrors,
        (status = 422, description = "`idNumber` is missing or not 11 digits.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "idNumber", "problem": "a NIN is exactly 11 digits"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn nin(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    person(app, tenant, LookupKind::Nin, body.value).await
}

/// `POST /api/v1/kyc/nin`
#[utoipa::path(
    post,
    path = "/api/v1/kyc/nin",
    tag = "identity",
    summary = "Look up a NIN (versioned path)",
    description = "The same as `POST /kyc/nin` (the spec lists both paths).",
    request_body(content = PersonLookup, example = json!({"idNumber": "12345678901"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Found.", body = NinLookupResponse),
        (status = 404, description = "No record with this number.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "`idNumber` is missing or not 11 digits.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn nin_v1(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    person(app, tenant, LookupKind::Nin, body.value).await
}

/// `POST /kyc/bvn`
#[utoipa::path(
    post,
    path = "/kyc/bvn",
    tag = "identity",
    summary = "Look up a BVN",
    description = "The Bank Verification Number's record (spec §2.7). `idNumber` is exactly 11 \
        digits. Audited and cached like NIN lookups.",
    request_body(content = PersonLookup, example = json!({"idNumber": "22212345678"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Found.", body = BvnLookupResponse,
            example = json!({"message": "BVN lookup successful", "data": {"idNumber": "22212345678",
                "firstName": "Ada", "lastName": "Obi", "dateOfBirth": "1988-04-17",
                "enrollmentBank": "058", "watchListed": "NO", "linkedNin": "12345678901"}})),
        (status = 404, description = "No record with this number.", body = ErrorBody,
            example = json!({"message": "BVN not found", "errors": [{"field": "idNumber", "problem": "no BVN record with this number"}]})),
        BodyErrors,
        (status = 422, description = "`idNumber` is missing or not 11 digits.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn bvn(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    person(app, tenant, LookupKind::Bvn, body.value).await
}

/// `POST /api/v1/kyc/bvn`
#[utoipa::path(
    post,
    path = "/api/v1/kyc/bvn",
    tag = "identity",
    summary = "Look up a BVN (versioned path)",
    description = "The same as `POST /kyc/bvn` (the spec lists both paths).",
    request_body(content = PersonLookup, example = json!({"idNumber": "22212345678"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Found.", body = BvnLookupResponse),
        (status = 404, description = "No record with this number.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "`idNumber` is missing or not 11 digits.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn bvn_v1(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    person(app, tenant, LookupKind::Bvn, body.value).await
}

/// `POST /kyc/cac`
#[utoipa::path(
    post,
    path = "/kyc/cac",
    tag = "identity",
    summary = "Look up a company in the CAC registry",
    description = "The Corporate Affairs Commission registry entry (spec §2.7) of `rcNumber` \
        (digits, a `BN`/`RC`/`IT` prefix allowed) and `companyType` (BN business name, RC \
        company, IT incorporated trustees). `companyName` is required and compared with the \
        registered name by the screening matcher; Vigil adds the result as `nameMatch` beside \
        `data` (the lookup answers either way: the number and type identify the entry).",
    request_body(content = CompanyLookup, example = json!({"rcNumber": "RC1234567",
        "companyName": "Zenith Harvest Foods Limited", "companyType": "RC"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Found.", body = CacLookupResponse,
            example = json!({"message": "CAC lookup successful", "data": {
                "registrationNumber": "RC1234567", "businessName": "ZENITH HARVEST FOODS LIMITED",
                "status": "ACTIVE", "classification": "Private Company Limited by Shares",
                "registrationDate": "2012-06-14", "affiliates": 2, "affiliatesData": []},
                "nameMatch": {"score": 100.0, "matches": true}})),
        (status = 404, description = "No company of this type with this number.", body = ErrorBody,
            example = json!({"message": "CAC not found", "errors": [{"field": "rcNumber", "problem": "no company of this type with this registration number"}]})),
        BodyErrors,
        (status = 422, description = "A field is missing, or `companyType` is not BN, RC or IT.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "companyType", "problem": "must be one of BN, RC, IT"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn cac(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    let query = model::company_query(&body.value).map_err(ApiError::invalid)?;
    let found = app
        .identity
        .lookup(tenant.id, &tenant.key_id, "api", &query)
        .await?;
    let LookupQuery::Company { company_name, .. } = &query else {
        return Err(ApiError::internal("a company query became a person query"));
    };
    let registered = found.data["businessName"].as_str().unwrap_or_default();
    let score = if registered.is_empty() {
        0.0
    } else {
        let score = app
            .screening
            .current()
            .index()
            .score_pair(company_name, registered);
        (f64::from(score) * 10.0).round() / 10.0
    };
    let matches = score >= f64::from(app.identity.config.name_match_threshold);
    Ok(Json(
        json!({"message": "CAC lookup successful", "data": found.data,
        "nameMatch": {"score": score, "matches": matches}}),
    )
    .into_response())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LookupsQuery {
    /// `nin`, `bvn` or `cac` (default: all).
    #[param(pattern = r"^([Nn][Ii][Nn]|[Bb][Vv][Nn]|[Cc][Aa][Cc])$")]
    pub kind: Option<String>,
    /// 1–500 (default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// `GET /api/v1/kyc/lookups`
#[utoipa::path(
    get,
    path = "/api/v1/kyc/lookups",
    tag = "identity",
    summary = "The lookup audit of the calling business",
    description = "Every identity lookup the business made, newest first: kind, what was asked, \
        outcome (`found`, `not-found`, `unavailable`), provider, whether it was cached, purpose \
        (`api` or `cdd-verification`), the API key and the time. Returned records are never \
        kept in the audit. (Vigil addition.)",
    params(LookupsQuery),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The lookups.", body = LookupsResponse),
        (status = 422, description = "A query parameter is invalid.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn lookups(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<LookupsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| {
        ApiError::invalid(vec![FieldError::new("query", e.body_text().to_lowercase())])
    })?;
    let kind = match query.kind.as_deref() {
        None => None,
        Some(k) => Some(LookupKind::parse(k).ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new("kind", "must be nin, bvn or cac")])
        })?),
    };
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "limit",
            "must be between 1 and 500",
        )]));
    }
    let data = app.identity.lookups(tenant.id, kind, limit).await?;
    Ok(Json(json!({"message": "Lookups fetched successfully", "data": data})).into_response())
}

// Documentation-only bodies.

/// A NIN or BVN lookup.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct PersonLookup {
    /// 11 digits.
    #[schema(example = "12345678901", pattern = "^[0-9]{11}$")]
    id_number: String,
}

/// A CAC lookup.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct CompanyLookup {
    /// Up to 20 digits, optionally after BN, RC or IT (any case); spaces, `-` and `/` are ignored.
    #[schema(
        min_length = 1,
        pattern = r"^[\s\u0085\uFEFF\-/]*(([Bb][\s\u0085\uFEFF\-/]*[Nn]|[Rr][\s\u0085\uFEFF\-/]*[Cc]|[Ii][\s\u0085\uFEFF\-/]*[Tt])[\s\u0085\uFEFF\-/]*)?([0-9][\s\u0085\uFEFF\-/]*){1,20}$",
        example = "RC1234567"
    )]
    rc_number: String,
    #[schema(
        min_length = 1,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "Zenith Harvest Foods Limited"
    )]
    company_name: String,
    /// BN, RC or IT (any case).
    #[schema(
        min_length = 1,
        pattern = r"^[\s\u0085\uFEFF]*([Bb][Nn]|[Rr][Cc]|[Ii][Tt])[\s\u0085\uFEFF]*$",
        example = "RC"
    )]
    company_type: String,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NinLookupResponse {
    #[schema(example = "NIN lookup successful")]
    message: String,
    data: model::NinDataDoc,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct BvnLookupResponse {
    #[schema(example = "BVN lookup successful")]
    message: String,
    data: model::BvnDataDoc,
}

/// Vigil's comparison of `companyName` with the registered name.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NameMatch {
    /// 0–100.
    score: f64,
    /// Whether `score` reaches `identity.name_match_threshold`.
    matches: bool,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct CacLookupResponse {
    #[schema(example = "CAC lookup successful")]
    message: String,
    data: model::CompanyDataDoc,
    name_match: NameMatch,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct LookupsResponse {
    #[schema(example = "Lookups fetched successfully")]
    message: String,
    data: Vec<LookupAudit>,
}

/// The identity endpoints' part of `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    paths(nin, nin_v1, bvn, bvn_v1, cac, lookups),
    tags((name = "identity", description = "NIN, BVN and CAC lookups (spec §2.7, §4.4) and the lookup audit.")),
)]
pub struct IdentityDoc;

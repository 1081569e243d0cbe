//! The reporting endpoints (the spec leaves them open; Vigil's design):
//! `PUT`/`GET /api/v1/reporting/config`, `POST /api/v1/reporting/uploads?reportType=…` (CSV),
//! `POST /api/v1/reporting/reports` (from rule-marked transactions), `GET
//! /api/v1/reporting/reports`, `GET /api/v1/reporting/reports/{reportId}` and
//! `GET /api/v1/reporting/reports/{reportId}/goaml.xml`.

use crate::api::extract::Path;
use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::OpenApi;

use super::client::{self, ClientAuth};
use super::goaml::{self, ReportingEntity};
use super::store::{self, ClientConfig, ReportView};
use super::upload;
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{body_bytes, JsonBody};
use crate::api::openapi::{AuthErrors, BodyErrors, Unavailable};
use crate::api::AppState;
use crate::model::FieldError;
use crate::store::now_ms;

fn not_configured() -> ApiError {
    ApiError::field(
        StatusCode::CONFLICT,
        "reporting is not configured",
        "clientUrl",
        "set the client endpoint first with PUT /api/v1/reporting/config",
    )
}

fn report_not_found() -> ApiError {
    ApiError::field(
        StatusCode::NOT_FOUND,
        "report not found",
        "reportId",
        "no report with this id in this business",
    )
}

fn config_view(config: &ClientConfig) -> Value {
    json!({"clientUrl": config.client_url, "auth": config.auth.masked(),
        "reportingEntity": config.entity, "updatedAt": crate::store::iso_time(config.updated_at_ms)})
}

/// `PUT /api/v1/reporting/config`
#[utoipa::path(
    put,
    path = "/api/v1/reporting/config",
    tag = "reporting",
    summary = "Set the business's reporting endpoint",
    description = "Where Vigil fetches transaction records for reports (spec §4.6: \
        `GET {clientUrl}/api/v1/reporting/send-transaction`) and how it authenticates: \
        `{\"type\": \"api-key\", \"header\": \"x-api-key\", \"value\": \"…\"}` or \
        `{\"type\": \"hmac\", \"secret\": \"…\"}` (16+ characters; `X-Vigil-Timestamp` and \
        `X-Vigil-Signature: sha256=hex(HMAC-SHA256(secret, \"<timestamp>.GET.<path>?<query>\"))`). \
        `clientUrl` must be http(s); link-local and metadata addresses are always refused, \
        loopback and private ones unless the deployment sets `allow_private_callbacks`. The host \
        is resolved and checked now and at every call. Optional `reportingEntity` fills the goAML \
        header (without it, placeholders that validate are written). Secrets are shown masked.",
    request_body(content = ReportingConfigRequest, example = json!({"clientUrl": "https://core.acme-bank.ng",
        "auth": {"type": "hmac", "secret": "0f6c3b0e9f5a4c2d8e7b"},
        "reportingEntity": {"rentityId": 1042, "rentityBranch": "Head office", "reportingUserCode": "CCO-0001",
            "currencyCode": "NGN", "address": "12 Marina Road", "city": "Lagos", "countryCode": "NG"}})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Saved.", body = ReportingConfigResponse,
            example = json!({"message": "Reporting config saved", "data": {"clientUrl": "https://core.acme-bank.ng",
                "auth": {"type": "hmac", "secret": "********"}, "reportingEntity": null,
                "updatedAt": "2026-03-02T10:15:31.204Z"}})),
        BodyErrors,
        (status = 422, description = "A field is missing or invalid, or the URL is refused.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "clientUrl",
                "problem": "host 169.254.169.254 is link-local (cloud metadata services live there)"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn put_config(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Value>,
) -> Result<Response, ApiError> {
    let Value::Object(body) = body.value else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "body",
            "expected a JSON object",
        )]));
    };
    let mut errors = Vec::new();
    for key in body.keys() {
        if !["clientUrl", "auth", "reportingEntity"].contains(&key.as_str()) {
            errors.push(FieldError::new(key.clone(), "unknown field"));
        }
    }
    let allow_private = app.reporting.allow_private;
    let url = match body.get("clientUrl").and_then(Value::as_str) {
        None => {
            errors.push(FieldError::new("clientUrl", "is required (a string)"));
            None
        }
        Some(raw) => match client::check_configured(raw, allow_private).await {
            Ok(_) => Some(raw.trim().trim_end_matches('/').to_owned()),
            Err(problem) => {
                errors.push(FieldError::new("clientUrl", problem));
                None
            }
        },
    };
    let auth = match body.get("auth") {
        Some(value @ Value::Object(_)) => match ClientAuth::parse(value) {
            Ok(auth) => Some(auth),
            Err(mut problems) => {
                errors.append(&mut problems);
                None
            }
        },
        _ => {
            errors.push(FieldError::new(
                "auth",
                "is required (an object with type api-key or hmac)",
            ));
            None
        }
    };
    let entity = match body.get("reportingEntity") {
        None | Some(Value::Null) => None,
        Some(value) => {
            match serde_path_to_error::deserialize::<_, ReportingEntity>(value.clone()) {
                Ok(entity) => {
                    for (field, problem) in entity.problems() {
                        errors.push(FieldError::new(field, problem));
                    }
                    Some(entity)
                }
                Err(error) => {
                    errors.push(FieldError::new(
                        format!("reportingEntity.{}", error.path()),
                        error.into_inner().to_string().to_lowercase(),
                    ));
                    None
                }
            }
        }
    };
    let (Some(client_url), Some(auth), true) = (url, auth, errors.is_empty()) else {
        return Err(ApiError::invalid(errors));
    };
    let config = ClientConfig {
        client_url,
        auth,
        entity,
        updated_at_ms: now_ms(),
    };
    store::save_config(app.store.pool(), tenant.id, &config).await?;
    Ok(
        Json(json!({"message": "Reporting config saved", "data": config_view(&config)}))
            .into_response(),
    )
}

/// `GET /api/v1/reporting/config`
#[utoipa::path(
    get,
    path = "/api/v1/reporting/config",
    tag = "reporting",
    summary = "The business's reporting endpoint",
    description = "The stored configuration, secrets masked.",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The configuration.", body = ReportingConfigResponse),
        (status = 404, description = "Not configured yet.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn get_config(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Response, ApiError> {
    let config = store::config(app.store.pool(), tenant.id)
        .await?
        .ok_or_else(|| ApiError::not_found("reporting is not configured"))?;
    Ok(Json(
        json!({"message": "Reporting config fetched successfully", "data": config_view(&config)}),
    )
    .into_response())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// goAML report code (any case): STR, SAR, CTR, AIF, ECTR, ICR, IRD, IRF, M, PEP, STRM, TFR.
    #[serde(rename = "reportType")]
    #[param(
        rename = "reportType",
        required = true,
        pattern = r"^[\s\u0085\uFEFF]*([Ss][Tt][Rr][Mm]?|[Ss][Aa][Rr]|[Ee]?[Cc][Tt][Rr]|[Aa][Ii][Ff]|[Ii][Cc][Rr]|[Ii][Rr][DdFf]|[Mm]|[Pp][Ee][Pp]|[Tt][Ff][Rr])[\s\u0085\uFEFF]*$",
        example = "STR"
    )]
    pub report_type: Option<String>,
}

fn report_type(value: Option<&str>) -> Result<String, ApiError> {
    match value.map(crate::model::trim_text) {
        None | Some("") => Err(ApiError::invalid(vec![FieldError::new(
            "reportType",
            "is required",
        )])),
        Some(code) => {
            let code = code.to_ascii_uppercase();
            if goaml::is_report_code(&code) {
                Ok(code)
            } else {
                Err(ApiError::invalid(vec![FieldError::new(
                    "reportType",
                    "must be a goAML report code: STR, SAR, CTR, AIF, ECTR, ICR, IRD, IRF, M, PEP, STRM or TFR",
                )]))
            }
        }
    }
}

fn accepted(report_id: &str) -> Response {
    (
        StatusCode::ACCEPTED,
        Json(
            json!({"message": "Report accepted; transaction records are being fetched",
            "data": {"reportId": report_id, "status": "pending"}}),
        ),
    )
        .into_response()
}

/// `POST /api/v1/reporting/uploads`
#[utoipa::path(
    post,
    path = "/api/v1/reporting/uploads",
    tag = "reporting",
    summary = "Upload transaction IDs for a report (CSV)",
    description = "A `text/csv` body with one transaction ID per row (a header row such as \
        `transactionId` is optional; at most 500 IDs; no duplicates; IDs are 1-100 characters \
        without commas or spaces). The report is stored `pending` before the answer; then Vigil \
        calls the client endpoint in batches of at most 100 IDs, at most 5 calls per second, \
        retrying failures with backoff, and builds the goAML report. Follow it with \
        `GET /api/v1/reporting/reports/{reportId}`.",
    params(UploadQuery),
    request_body(content = String, content_type = "text/csv", example = "transactionId\nTX-1001\nTX-1002\n"),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 202, description = "Stored; the records are being fetched.", body = UploadAccepted,
            example = json!({"message": "Report accepted; transaction records are being fetched",
                "data": {"reportId": "0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10", "status": "pending"}})),
        (status = 400, description = "The body could not be read.", body = ErrorBody),
        (status = 409, description = "Reporting is not configured for this business.", body = ErrorBody),
        (status = 413, description = "The body exceeds the configured maximum size.", body = ErrorBody),
        (status = 415, description = "The content type is not text/csv.", body = ErrorBody),
        (status = 422, description = "The file or reportType is refused; every problem is named.", body = ErrorBody,
            example = json!({"message": "the CSV file is refused", "errors": [
                {"field": "file", "problem": "the file has 501 transaction IDs; at most 500 per upload"},
                {"field": "file", "problem": "transaction ID 'TX-9' appears more than once (rows 3 and 7)"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn upload(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    query: Result<Query<UploadQuery>, axum::extract::rejection::QueryRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| {
        ApiError::invalid(vec![FieldError::new("query", e.body_text().to_lowercase())])
    })?;
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if !matches!(
        content_type.as_deref(),
        Some("text/csv") | Some("application/csv")
    ) {
        return Err(ApiError::field(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported content type",
            "Content-Type",
            "must be text/csv",
        ));
    }
    let code = report_type(query.report_type.as_deref())?;
    let body = body_bytes(request).await?;
    let ids =
        upload::parse(&body, app.reporting.config.max_ids_per_upload).map_err(|problems| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "the CSV file is refused").with_errors(
                problems
                    .into_iter()
                    .map(|p| FieldError::new("file", p))
                    .collect(),
            )
        })?;
    if store::config(app.store.pool(), tenant.id).await?.is_none() {
        return Err(not_configured());
    }
    let report_id = store::create_report(
        app.store.pool(),
        tenant.id,
        &code,
        "upload",
        &ids,
        &tenant.key_id,
    )
    .await?;
    app.reporting
        .spawn(report_id.clone(), tenant.id, tenant.name.clone());
    Ok(accepted(&report_id))
}

/// Body of `POST /api/v1/reporting/reports`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FromRulesRequest {
    /// The goAML code rules mark transactions with (`reportable = "CTR"` in a rule's metadata).
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        pattern = r"^[\s\u0085\uFEFF]*([Ss][Tt][Rr][Mm]?|[Ss][Aa][Rr]|[Ee]?[Cc][Tt][Rr]|[Aa][Ii][Ff]|[Ii][Cc][Rr]|[Ii][Rr][DdFf]|[Mm]|[Pp][Ee][Pp]|[Tt][Ff][Rr])[\s\u0085\uFEFF]*$",
        example = "CTR"
    )]
    pub report_type: Option<String>,
    /// Event time from (inclusive), RFC 3339 or a date; default: 30 days ago.
    pub from: Option<String>,
    /// Event time to (exclusive), RFC 3339 or a date; default: now.
    pub to: Option<String>,
}

fn time_ms(value: &str, field: &str) -> Result<i64, ApiError> {
    goaml::goaml_time(value)
        .and_then(|t| chrono::NaiveDateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M:%S").ok())
        .map(|t| t.and_utc().timestamp_millis())
        .ok_or_else(|| {
            ApiError::invalid(vec![FieldError::new(
                field,
                "must be an RFC 3339 date-time or a date",
            )])
        })
}

/// `POST /api/v1/reporting/reports`
#[utoipa::path(
    post,
    path = "/api/v1/reporting/reports",
    tag = "reporting",
    summary = "Report the transactions rules marked reportable (no CSV)",
    description = "Collects the business's decided transactions in `[from, to)` (event time) that \
        an active rule with `reportable = \"<reportType>\"` hit (for example a CTR rule for cash \
        above the threshold) and that no earlier rules-made report of this type included, oldest \
        first, at most 500; then proceeds as an upload of their references. `data.remaining` \
        says whether more are waiting for another call.",
    request_body(content = FromRulesRequest, example = json!({"reportType": "CTR", "from": "2026-03-01", "to": "2026-03-08"})),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 202, description = "Stored; the records are being fetched.", body = UploadAccepted),
        (status = 404, description = "No transaction in the period is marked reportable with this code.", body = ErrorBody),
        (status = 409, description = "Reporting is not configured for this business.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "A field is invalid.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn from_rules(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<FromRulesRequest>,
) -> Result<Response, ApiError> {
    let request = body.value;
    let code = report_type(request.report_type.as_deref())?;
    let now = now_ms();
    let from = match &request.from {
        Some(v) => time_ms(v, "from")?,
        None => now - 30 * 86_400_000,
    };
    let to = match &request.to {
        Some(v) => time_ms(v, "to")?,
        None => now + 1,
    };
    if from >= to {
        return Err(ApiError::invalid(vec![FieldError::new(
            "to",
            "must be after from",
        )]));
    }
    if store::config(app.store.pool(), tenant.id).await?.is_none() {
        return Err(not_configured());
    }
    let max = app.reporting.config.max_ids_per_upload;
    let mut ids = store::reportable(app.store.pool(), tenant.id, &code, from, to, max).await?;
    let remaining = ids.len() > max;
    ids.truncate(max);
    if ids.is_empty() {
        return Err(ApiError::field(
            StatusCode::NOT_FOUND,
            "no reportable transactions",
            "reportType",
            &format!(
                "no transaction in the period is marked reportable as {code} and not yet reported"
            ),
        ));
    }
    let report_id = store::create_report(
        app.store.pool(),
        tenant.id,
        &code,
        "rules",
        &ids,
        &tenant.key_id,
    )
    .await?;
    app.reporting
        .spawn(report_id.clone(), tenant.id, tenant.name.clone());
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"message": "Report accepted; transaction records are being fetched",
            "data": {"reportId": report_id, "status": "pending", "transactions": ids.len(), "remaining": remaining}})),
    )
        .into_response())
}

/// `GET /api/v1/reporting/reports`
#[utoipa::path(
    get,
    path = "/api/v1/reporting/reports",
    tag = "reporting",
    summary = "The business's reports",
    description = "The 100 newest reports, newest first, each with its status and failures.",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The reports.", body = ReportsResponse),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn list(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Response, ApiError> {
    let reports = store::reports(app.store.pool(), tenant.id, 100).await?;
    Ok(Json(json!({"message": "Reports fetched successfully", "data": reports})).into_response())
}

/// `GET /api/v1/reporting/reports/{reportId}`
#[utoipa::path(
    get,
    path = "/api/v1/reporting/reports/{reportId}",
    tag = "reporting",
    summary = "A report's status",
    description = "`status` is `pending` (stored, not started), `fetching` (calling the client \
        endpoint), `built` (the goAML XML is ready at `xmlUrl`; IDs that could not be reported are \
        in `failures`) or `failed` (no record could be fetched; see `error` and `failures`).",
    params(("reportId" = String, Path, description = "The id the upload answered.")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The report.", body = ReportResponse,
            example = json!({"message": "Report fetched successfully", "data": {
                "reportId": "0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10", "reportType": "STR", "source": "upload",
                "status": "built", "total": 3, "fetched": 2, "pending": 0,
                "failures": [{"transactionId": "TX-1003", "reason": "the client endpoint did not return this transaction"}],
                "error": null, "xmlUrl": "/api/v1/reporting/reports/0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10/goaml.xml",
                "createdAt": "2026-03-02T10:15:31.204Z", "updatedAt": "2026-03-02T10:15:32.011Z",
                "builtAt": "2026-03-02T10:15:32.011Z"}})),
        (status = 404, description = "No such report in this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(report_id): Path<String>,
) -> Result<Response, ApiError> {
    let report = store::report(app.store.pool(), tenant.id, report_id.trim())
        .await?
        .ok_or_else(report_not_found)?;
    Ok(Json(json!({"message": "Report fetched successfully", "data": report})).into_response())
}

/// `GET /api/v1/reporting/reports/{reportId}/goaml.xml`
#[utoipa::path(
    get,
    path = "/api/v1/reporting/reports/{reportId}/goaml.xml",
    tag = "reporting",
    summary = "A built report's goAML XML",
    description = "The goAML 5.0.1 XML (valid against the UNODC schema). 409 while the report is \
        not built.",
    params(("reportId" = String, Path, description = "The report's id.")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The XML.", body = String, content_type = "application/xml"),
        (status = 404, description = "No such report in this business.", body = ErrorBody),
        (status = 409, description = "The report is not built (yet).", body = ErrorBody,
            example = json!({"message": "report is not built", "errors": [{"field": "reportId", "problem": "status is fetching"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn xml(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(report_id): Path<String>,
) -> Result<Response, ApiError> {
    let (status, xml) = store::xml(app.store.pool(), tenant.id, report_id.trim())
        .await?
        .ok_or_else(report_not_found)?;
    match xml {
        Some(xml) if status == "built" => Ok((
            [
                (header::CONTENT_TYPE, "application/xml".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"goaml-{}.xml\"", report_id.trim()),
                ),
            ],
            xml,
        )
            .into_response()),
        _ => Err(ApiError::field(
            StatusCode::CONFLICT,
            "report is not built",
            "reportId",
            &format!("status is {status}"),
        )),
    }
}

// Documentation-only bodies.

/// `PUT /api/v1/reporting/config` body.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ReportingConfigRequest {
    /// The client's base URL; Vigil calls `{clientUrl}/api/v1/reporting/send-transaction`.
    #[schema(pattern = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]")]
    client_url: String,
    /// `{"type": "api-key", "header", "value"}` or `{"type": "hmac", "secret"}`.
    #[schema(value_type = Object)]
    auth: Value,
    reporting_entity: Option<ReportingEntity>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ReportingConfigView {
    client_url: String,
    /// Secrets masked.
    #[schema(value_type = Object)]
    auth: Value,
    reporting_entity: Option<ReportingEntity>,
    updated_at: String,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ReportingConfigResponse {
    #[schema(example = "Reporting config saved")]
    message: String,
    data: ReportingConfigView,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct UploadAcceptedData {
    report_id: String,
    #[schema(example = "pending")]
    status: String,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct UploadAccepted {
    #[schema(example = "Report accepted; transaction records are being fetched")]
    message: String,
    data: UploadAcceptedData,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ReportResponse {
    #[schema(example = "Report fetched successfully")]
    message: String,
    data: ReportView,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ReportsResponse {
    #[schema(example = "Reports fetched successfully")]
    message: String,
    data: Vec<ReportView>,
}

/// The reporting endpoints' part of `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    paths(put_config, get_config, upload, from_rules, list, fetch, xml),
    components(schemas(goaml::ReportRecord)),
    tags((name = "reporting", description = "FIU reporting in goAML (spec §2.10, §4.6, §8): the client endpoint's configuration, CSV uploads, rule-marked reports, status and XML (Vigil's design).")),
)]
pub struct ReportingDoc;

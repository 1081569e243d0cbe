//! The asynchronous AML endpoints (spec 4.3 async rows, 2.8) and Vigil's additions around them:
//! reading requests and checks back, cancelling checks, and ingesting adverse-media articles.

use crate::api::extract::Path;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{AmlError, CheckParams, MediaParams, SanctionParams, ADVERSE_MEDIA, SANCTION};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::fields::{page_params, query_params, Problems};
use crate::api::openapi::{AuthErrors, BodyErrors, NonBlank300, Unavailable};
use crate::api::screening::ScreenBody;
use crate::api::AppState;
use crate::media::ingest::{self, ArticleInput};
use crate::media::MediaError;
use crate::model::FieldError;
use crate::outbound::policy as ssrf;

/// The spec's answer to every asynchronous request.
pub const CREATED: &str = "Request created successfully. Result will be sent to your webhook";
/// Largest `limit` of adverse-media and risk-monitoring requests.
pub const MAX_LIMIT: u64 = 100;
const MAX_NAME_CHARS: usize = 300;

impl From<AmlError> for ApiError {
    fn from(error: AmlError) -> Self {
        match error {
            AmlError::Store(store) => ApiError::from(store),
            AmlError::Media(MediaError::Locked) => ApiError::unavailable(
                "the adverse-media index is being written by another process, retry later",
            ),
            other => ApiError::internal(other),
        }
    }
}

/// `name` / `q`: required, at most 300 characters, with letters or digits.
fn name_field(problems: &mut Problems, field: &str, value: Option<&str>) -> String {
    let value = value.unwrap_or_default().trim();
    if value.is_empty() {
        problems.push(field, "is required and must not be empty");
    } else if value.chars().count() > MAX_NAME_CHARS {
        problems.push(
            field,
            format!("must be at most {MAX_NAME_CHARS} characters"),
        );
    } else if !value.chars().any(char::is_alphanumeric) {
        problems.push(field, "must contain letters or digits");
    } else if value.chars().any(char::is_control) {
        problems.push(field, crate::model::TextProblem::Control.to_string());
    }
    value.to_owned()
}

fn limit_field(problems: &mut Problems, value: Option<f64>) -> usize {
    match value {
        None => {
            problems.push("limit", format!("is required (1-{MAX_LIMIT})"));
            0
        }
        Some(n) if n.fract() != 0.0 || !(1.0..=MAX_LIMIT as f64).contains(&n) => {
            problems.push(
                "limit",
                format!("must be a whole number from 1 to {MAX_LIMIT}"),
            );
            0
        }
        Some(n) => n as usize,
    }
}

fn threshold_field(problems: &mut Problems, value: Option<f64>) -> f32 {
    match value {
        None => {
            problems.push("threshold", "is required (0-100)");
            0.0
        }
        Some(t) if !t.is_finite() || !(0.0..=100.0).contains(&t) => {
            problems.push("threshold", "must be between 0 and 100");
            0.0
        }
        Some(t) => t as f32,
    }
}

fn not_found(what: &str, field: &str) -> ApiError {
    ApiError::field(
        StatusCode::NOT_FOUND,
        &format!("{what} not found"),
        field,
        "no such record for this business",
    )
}

// ---- sanction ----------------------------------------------------------------------------

#[utoipa::path(
    post,
    path = "/api/v1/aml/sanction",
    tag = "async-aml",
    summary = "Screen a name against the sanctions lists; the result goes to the webhook",
    description = "Answers the sanction request record of spec 2.8 at once. The name is then \
        screened exactly as by `/api/v1/aml/sanction/instant` (all matches at or above \
        `threshold`, at most 100) and the result — the `sanction` block of the 2.4 risk-monitoring \
        result with `requestId`, `threshold`, `country` — is delivered to the business's webhook \
        (`PUT /api/v1/webhooks`), signed, with retries. Read it back with \
        `GET /api/v1/aml/sanction/{id}`.",
    request_body = ScreenBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The request record.", body = Object,
            example = json!({"message": CREATED, "data": {"id": "0195f3a2-…", "query": "Ivan Sidorov",
                "businessProfile": "Acme Bank", "createdAt": "2026-03-02T10:15:30.123Z",
                "updatedAt": "2026-03-02T10:15:30.123Z"}})),
        BodyErrors,
        (status = 422, description = "`name` empty, `threshold` missing or outside 0-100, unknown `country`.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn sanction_request(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<ScreenBody>,
) -> Result<Json<Value>, ApiError> {
    let query = crate::api::screening::validate(body.value)?;
    let params = serde_json::to_string(&SanctionParams {
        threshold: query.threshold,
        country: query.country,
    })
    .map_err(ApiError::internal)?;
    let record = app
        .aml
        .create_request(tenant.id, SANCTION, &query.name, &params)
        .await?;
    app.aml.submit(&record.id);
    Ok(Json(
        json!({"message": CREATED, "data": record.json(false, false)}),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/aml/sanction/{id}",
    tag = "async-aml",
    summary = "A sanction request with its status and result (Vigil addition)",
    params(("id" = String, Path, description = "The request id")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The request record with `status` (`pending`, `completed`) and `result` (null while pending).", body = Object),
        (status = 404, description = "No such request for this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn sanction_fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    fetched(&app, tenant.id, SANCTION, &id).await
}

// ---- adverse media -----------------------------------------------------------------------

/// `POST /api/v1/adverse-media`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AdverseMediaBody {
    /// The full name of the person or company.
    #[schema(required = true, inline, value_type = NonBlank300)]
    pub q: Option<String>,
    /// The most articles returned (1-100).
    #[schema(
        required = true,
        nullable = false,
        minimum = 1.0,
        maximum = 100.0,
        multiple_of = 1.0
    )]
    pub limit: Option<f64>,
}

#[utoipa::path(
    post,
    path = "/api/v1/adverse-media",
    tag = "async-aml",
    summary = "Search adverse media for a name; the result goes to the webhook",
    description = "Answers the adverse-media request record of spec 2.8 with status `pending`. \
        The search then runs against Vigil's adverse-media index; the request becomes \
        `completed` (readable by id) and the 2.4 adverse-media result with `type: \"adverse \
        media\"` is delivered to the business's webhook. Articles must name the person or \
        company (the screening matcher, not a substring test) and say something adverse near \
        the mention; each carries `keyword.confidenceScore` and a score per adverse keyword, \
        strongest first, newest first among equals, at most `limit`.",
    request_body = AdverseMediaBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The request record.", body = Object,
            example = json!({"message": CREATED, "data": {"id": "0195f3a2-…", "query": "Ivan Sidorov",
                "businessProfile": "Acme Bank", "status": "pending", "createdAt": "2026-03-02T10:15:30.123Z",
                "updatedAt": "2026-03-02T10:15:30.123Z"}})),
        BodyErrors,
        (status = 422, description = "`q` empty or too long, `limit` missing or not a whole number from 1 to 100.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "limit", "problem": "is required (1-100)"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn adverse_media_request(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<AdverseMediaBody>,
) -> Result<Json<Value>, ApiError> {
    let mut problems = Problems::default();
    let q = name_field(&mut problems, "q", body.value.q.as_deref());
    let limit = limit_field(&mut problems, body.value.limit);
    problems.finish()?;
    let params = serde_json::to_string(&MediaParams { limit }).map_err(ApiError::internal)?;
    let record = app
        .aml
        .create_request(tenant.id, ADVERSE_MEDIA, &q, &params)
        .await?;
    app.aml.submit(&record.id);
    Ok(Json(
        json!({"message": CREATED, "data": record.json(true, false)}),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/adverse-media/{id}",
    tag = "async-aml",
    summary = "An adverse-media request with its status and result (Vigil addition)",
    params(("id" = String, Path, description = "The request id")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The 2.8 record; `status` is `pending` or `completed`, `result` the 2.4 adverse-media result once completed.", body = Object),
        (status = 404, description = "No such request for this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn adverse_media_fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    fetched(&app, tenant.id, ADVERSE_MEDIA, &id).await
}

#[utoipa::path(
    post,
    path = "/api/v1/adverse-media/articles",
    tag = "async-aml",
    summary = "Add articles to the adverse-media index (admin keys; Vigil addition)",
    description = "A JSON array of `{title, link, published, text}` (also accepted: `url`, \
        `publishedAt`/`date`, `content`/`body`/`description`). `link` identifies an article: \
        sending it again replaces it. The index is shared by every business, so only admin keys \
        may write to it. Committed to disk before the answer; active risk-monitoring checks run \
        again and report what they had not reported before.",
    request_body = Vec<Object>,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "How many articles were written and the index's size.", body = Object,
            example = json!({"message": "Articles ingested", "data": {"ingested": 2, "articles": 120}})),
        BodyErrors,
        (status = 403, description = "Not an admin key.", body = ErrorBody),
        (status = 422, description = "An article without `title` or an http(s) `link`, or with an unreadable date; fields are named by position (`[3].link`).", body = ErrorBody),
        AuthErrors,
        (status = 503, description = "The index is being written by another process; retry.", body = ErrorBody),
    ),
)]
pub async fn ingest_articles(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<Vec<ArticleInput>>,
) -> Result<Json<Value>, ApiError> {
    if !tenant.admin {
        return Err(ApiError::forbidden(
            "adding articles needs an admin key (the index is shared by every business)",
        ));
    }
    let max = app.aml.media_config.max_articles_per_request;
    if body.value.is_empty() || body.value.len() > max {
        return Err(ApiError::invalid(vec![FieldError::new(
            "body",
            format!("must be an array of 1 to {max} articles"),
        )]));
    }
    let mut articles = Vec::with_capacity(body.value.len());
    let mut errors = Vec::new();
    for (i, input) in body.value.into_iter().enumerate() {
        match ingest::validate(input, &format!("[{i}]")) {
            Ok(article) => articles.push(article),
            Err(mut problems) => errors.append(&mut problems),
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let written = app.aml.ingest(articles).await?;
    Ok(Json(json!({"message": "Articles ingested",
        "data": {"ingested": written, "articles": app.aml.media.count()}})))
}

// ---- risk monitoring -----------------------------------------------------------------------

/// `POST /api/v1/aml/risk-monitoring`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RiskMonitoringBody {
    /// The person or company to watch.
    #[schema(required = true, inline, value_type = NonBlank300)]
    pub name: Option<String>,
    /// 0-100: the lowest sanction/PEP `searchScore` reported.
    #[schema(required = true, nullable = false, minimum = 0.0, maximum = 100.0)]
    pub threshold: Option<f64>,
    /// The most results per section (sanction, pep, adverse media), 1-100.
    #[schema(
        required = true,
        nullable = false,
        minimum = 1.0,
        maximum = 100.0,
        multiple_of = 1.0
    )]
    pub limit: Option<f64>,
    /// Where results are posted (http or https; checked against SSRF).
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]"
    )]
    pub callback_url: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/aml/risk-monitoring",
    tag = "async-aml",
    summary = "Register a risk-monitoring check; results go to callbackUrl",
    description = "Screens `name` against the sanction and PEP lists and the adverse-media index \
        and posts the 2.4 risk-monitoring result (`checkId`, `adverseMedia`, `pep`, `sanction`, \
        plus Vigil's `newResults`) to `callbackUrl`, signed with the business's webhook secret. \
        The check stays registered: when a list refresh or newly ingested articles produce a hit \
        it had not reported, the result is posted again. `callbackUrl` must resolve to public \
        addresses only (loopback and private ones with `allow_private_callbacks`).",
    request_body = RiskMonitoringBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The check id.", body = Object,
            example = json!({"message": CREATED, "data": {"checkId": "3f1c9a52-5a7e-4f1b-9a64-0c1f2a3b4c5d"}})),
        BodyErrors,
        (status = 422, description = "A field missing or out of range, or a `callbackUrl` that is not http(s) or resolves to a refused address.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "callbackUrl",
                "problem": "resolves to 169.254.169.254, a cloud metadata address, which is refused"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn risk_register(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<RiskMonitoringBody>,
) -> Result<Json<Value>, ApiError> {
    let body = body.value;
    let mut problems = Problems::default();
    let name = name_field(&mut problems, "name", body.name.as_deref());
    let threshold = threshold_field(&mut problems, body.threshold);
    let limit = limit_field(&mut problems, body.limit);
    let callback = body.callback_url.unwrap_or_default().trim().to_owned();
    if callback.is_empty() {
        problems.push("callbackUrl", "is required");
    } else if let Err(error) =
        ssrf::resolve_checked(&callback, app.settings.config.allow_private_callbacks).await
    {
        problems.push("callbackUrl", error.to_string());
    }
    problems.finish()?;
    let id = app
        .aml
        .register_check(
            tenant.id,
            &tenant.name,
            &name,
            CheckParams { threshold, limit },
            &callback,
        )
        .await?;
    Ok(Json(json!({"message": CREATED, "data": {"checkId": id}})))
}

#[utoipa::path(
    get,
    path = "/api/v1/aml/risk-monitoring",
    tag = "async-aml",
    summary = "The business's risk-monitoring checks (Vigil addition)",
    params(
        ("status" = Option<String>, Query, pattern = r"^\s*(active|cancelled)?\s*$", description = "`active` or `cancelled`"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1-100, default 25"),
        ("cursor" = Option<String>, Query, description = "`next` of the previous page"),
    ),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Checks, newest first: `{message, data, next}`.", body = Object),
        (status = 422, description = "An unknown parameter or a bad value.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn risk_list(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = query_params(raw.as_deref(), &["status", "limit", "cursor"])?;
    let mut problems = Problems::default();
    let (limit, cursor) = page_params(&params, &mut problems);
    let status = params.get("status").filter(|s| !s.is_empty()).cloned();
    if let Some(status) = &status {
        if status != "active" && status != "cancelled" {
            problems.push("status", "must be active or cancelled");
        }
    }
    problems.finish()?;
    let checks = app
        .aml
        .checks(tenant.id, status.as_deref(), limit, cursor.as_ref())
        .await?;
    let next = (checks.len() == limit as usize)
        .then(|| checks.last())
        .flatten()
        .map(|c| {
            crate::store::page::Cursor {
                created_at_ms: c.created_at_ms,
                id: c.id.clone(),
            }
            .encode()
        });
    Ok(Json(json!({
        "message": "Risk-monitoring checks fetched successfully",
        "data": checks.iter().map(|c| c.json()).collect::<Vec<_>>(),
        "next": next,
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/aml/risk-monitoring/{checkId}",
    tag = "async-aml",
    summary = "One risk-monitoring check (Vigil addition)",
    params(("checkId" = String, Path, description = "The check id")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The check: name, threshold, limit, callbackUrl, status, the hits reported so far, last screening.", body = Object),
        (status = 404, description = "No such check for this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn risk_fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let check = app
        .aml
        .check(tenant.id, &id)
        .await?
        .ok_or_else(|| not_found("Check", "checkId"))?;
    Ok(Json(
        json!({"message": "Risk-monitoring check fetched successfully", "data": check.json()}),
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/aml/risk-monitoring/{checkId}",
    tag = "async-aml",
    summary = "Cancel a risk-monitoring check (Vigil addition)",
    description = "The check stops being re-run; the record and its deliveries stay.",
    params(("checkId" = String, Path, description = "The check id")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The cancelled check.", body = Object,
            example = json!({"message": "Risk-monitoring check cancelled", "data": {"checkId": "3f1c9a52-…", "status": "cancelled"}})),
        (status = 404, description = "No such check for this business.", body = ErrorBody),
        (status = 409, description = "The check was already cancelled.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn risk_cancel(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let cancelled = app.aml.cancel_check(tenant.id, &id).await?;
    let check = app
        .aml
        .check(tenant.id, &id)
        .await?
        .ok_or_else(|| not_found("Check", "checkId"))?;
    if !cancelled {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the check is already cancelled",
        ));
    }
    Ok(Json(
        json!({"message": "Risk-monitoring check cancelled", "data": check.json()}),
    ))
}

/// A stored request of `kind` with its status and result, as both fetch endpoints answer it.
async fn fetched(
    app: &AppState,
    tenant: i64,
    kind: &str,
    id: &str,
) -> Result<Json<Value>, ApiError> {
    let record = app
        .aml
        .request(tenant, kind, id)
        .await?
        .ok_or_else(|| not_found("Request", "id"))?;
    Ok(Json(
        json!({"message": "Request fetched successfully", "data": record.json(true, true)}),
    ))
}

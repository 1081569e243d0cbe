//! The EDD endpoints (spec §4.5 and Vigil's additions). They sit behind the single
//! `Authorization` header of spec part 5 (see `api::auth::require_authorization`), and every
//! answer carries `success` like §2.9: the error bodies get `"success": false` from
//! [`success_flag`].

use crate::api::extract::Path;
use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::store::{self, RequestFilter};
use super::{EddError, RequestView, StepAction, REQUEST_STATUSES};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::fields::{page_params, query_params, Problems, MAX_SHORT};
use crate::api::openapi::{BodyErrors, EddAuthErrors, Unavailable};
use crate::api::AppState;
use crate::audit::Actor;
use crate::model::FieldError;

impl From<EddError> for ApiError {
    fn from(error: EddError) -> Self {
        let message = error.to_string();
        match error {
            EddError::NotFound => ApiError::field(
                StatusCode::NOT_FOUND,
                "EDD request not found",
                "requestId",
                "no such request",
            ),
            EddError::StepNotFound { .. } => ApiError::field(
                StatusCode::NOT_FOUND,
                "EDD step not found",
                "stepKey",
                &message,
            ),
            EddError::Finished(_) | EddError::NotCurrent { .. } => {
                ApiError::field(StatusCode::CONFLICT, &message, "stepKey", &message)
            }
            EddError::WrongAction { .. } => {
                ApiError::invalid(vec![FieldError::new("action", message)])
            }
            EddError::Store(store) => ApiError::from(store),
        }
    }
}

/// Middleware on the EDD routes: error bodies (JSON, non-2xx) get `"success": false`.
pub async fn success_flag(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1024 * 1024).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let rebuilt = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut map)) => {
            map.insert("success".into(), Value::Bool(false));
            serde_json::to_vec(&Value::Object(map)).unwrap_or_else(|_| bytes.to_vec())
        }
        _ => bytes.to_vec(),
    };
    let mut response = Response::from_parts(parts, Body::from(rebuilt));
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

/// `POST /api/v1/edd/requests` (spec §4.5).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EddRequestBody {
    /// Required.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "Ada"
    )]
    pub first_name: Option<String>,
    /// Required.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "Obi"
    )]
    pub last_name: Option<String>,
    /// Required: YYYY-MM-DD, not in the future.
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^\s*\d{4}-\d{2}-\d{2}\s*$",
        example = "1985-07-14"
    )]
    pub dob: Option<String>,
    /// Required: the customer's id.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "CUST-42"
    )]
    pub unique_id: Option<String>,
    /// Required: the slug of a configured pipeline.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "standard"
    )]
    pub pipeline_slug: Option<String>,
    /// Required: the account officer's e-mail address.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "officer@acme-bank.ng"
    )]
    pub account_officer: Option<String>,
    #[schema(max_length = 200)]
    pub middle_name: Option<String>,
    #[schema(max_length = 64)]
    pub bvn_number: Option<String>,
    #[schema(max_length = 64)]
    pub nin_number: Option<String>,
    #[schema(max_length = 64)]
    pub phone: Option<String>,
    #[schema(max_length = 200)]
    pub nationality: Option<String>,
    /// An e-mail address.
    #[schema(max_length = 256)]
    pub email: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/edd/requests",
    tag = "edd",
    summary = "Create an EDD request",
    description = "Creates an EDD request routed through the pipeline named by `pipelineSlug` \
        (configured in `[edd]`; the default configuration ships `standard` and `pep`). Required: \
        firstName, lastName, dob (YYYY-MM-DD), uniqueId, pipelineSlug, accountOfficer (an e-mail \
        address); optional: middleName, bvnNumber, ninNumber, phone, nationality, email. An \
        unknown pipelineSlug is a 422 naming the known ones. Answers spec §2.9 with status \
        `pending`. Authentication: the single `Authorization` header (spec part 5) carrying \
        the API key, or `<apiKey>:<apiSecret>`, bare or after `Bearer`, or as HTTP Basic \
        credentials.",
    request_body = EddRequestBody,
    security(("authorization" = []), ("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Created (spec §2.9).", body = EddCreated,
            example = json!({"success": true, "message": "EDD request created successfully",
                "data": {"requestId": "0195f3a2-7c1e-7d20-9a51-3f1f4b2c8e10", "status": "pending",
                    "pipeline": "standard", "createdAt": "2026-03-02T10:15:31.204Z"}})),
        BodyErrors,
        (status = 422, description = "A required field is missing or invalid, or the pipeline is unknown.", body = ErrorBody,
            example = json!({"success": false, "message": "request validation failed", "errors": [
                {"field": "pipelineSlug", "problem": "unknown pipeline 'express' (known: standard, pep)"}]})),
        EddAuthErrors,
        Unavailable,
    ),
)]
pub async fn create(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<EddRequestBody>,
) -> Result<Response, ApiError> {
    let body = body.value;
    let mut problems = Problems::default();
    let first_name = problems.required("firstName", body.first_name.as_deref(), 200);
    let last_name = problems.required("lastName", body.last_name.as_deref(), 200);
    let dob = problems
        .required("dob", body.dob.as_deref(), 10)
        .filter(|d| problems.birth_date("dob", d).is_some());
    let unique_id = problems.required("uniqueId", body.unique_id.as_deref(), MAX_SHORT);
    let config = &app.settings.config.edd;
    let pipeline = problems
        .required("pipelineSlug", body.pipeline_slug.as_deref(), MAX_SHORT)
        .and_then(|slug| {
            let found = config.pipeline(&slug);
            if found.is_none() {
                problems.push(
                    "pipelineSlug",
                    format!(
                        "unknown pipeline '{slug}' (known: {})",
                        config.slugs().join(", ")
                    ),
                );
            }
            found
        });
    let officer = problems
        .required("accountOfficer", body.account_officer.as_deref(), MAX_SHORT)
        .and_then(|e| problems.email("accountOfficer", &e));
    let middle_name = problems.optional("middleName", body.middle_name.as_deref(), 200);
    let bvn = problems.optional("bvnNumber", body.bvn_number.as_deref(), 64);
    let nin = problems.optional("ninNumber", body.nin_number.as_deref(), 64);
    let phone = problems.optional("phone", body.phone.as_deref(), 64);
    let nationality = problems.optional("nationality", body.nationality.as_deref(), 200);
    let email = problems
        .optional("email", body.email.as_deref(), MAX_SHORT)
        .and_then(|e| problems.email("email", &e));
    problems.finish()?;
    let (Some(pipeline), Some(unique_id)) = (pipeline, unique_id) else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "pipelineSlug",
            "is required",
        )]));
    };
    let mut subject = json!({
        "firstName": first_name, "lastName": last_name, "middleName": middle_name,
        "dob": dob, "uniqueId": unique_id, "accountOfficer": officer, "bvnNumber": bvn,
        "ninNumber": nin, "phone": phone, "nationality": nationality, "email": email,
    });
    if let Some(map) = subject.as_object_mut() {
        map.retain(|_, v| !v.is_null());
    }
    let request = store::create(
        app.store.pool(),
        tenant.id,
        pipeline,
        &unique_id,
        &subject,
        &Actor::key(&tenant.key_id, None),
    )
    .await?;
    Ok(Json(json!({
        "success": true,
        "message": "EDD request created successfully",
        "data": {
            "requestId": request.request_id,
            "status": request.status,
            "pipeline": request.pipeline,
            "createdAt": request.created_at,
        }
    }))
    .into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/edd/requests/{requestId}",
    tag = "edd",
    summary = "Read an EDD request with its steps and step history",
    description = "The request, its pipeline's steps (status, note, who) in order, the step to \
        act on next (`currentStep`), and every move so far. (Vigil addition.)",
    params(("requestId" = String, Path, description = "The `requestId` from creation.")),
    security(("authorization" = []), ("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The request.", body = EddFetched),
        (status = 404, description = "No such request in this business.", body = ErrorBody,
            example = json!({"success": false, "message": "EDD request not found",
                "errors": [{"field": "requestId", "problem": "no such request"}]})),
        EddAuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let request = store::fetch(app.store.pool(), tenant.id, id.trim())
        .await?
        .ok_or(EddError::NotFound)?;
    Ok(Json(
        json!({"success": true, "message": "EDD request fetched successfully", "data": request}),
    )
    .into_response())
}

const LIST_PARAMS: &[&str] = &["status", "uniqueId", "pipeline", "limit", "cursor"];

#[utoipa::path(
    get,
    path = "/api/v1/edd/requests",
    tag = "edd",
    summary = "List EDD requests",
    description = "The business's requests, newest first. Filters: `status` (pending, in \
        progress, completed, rejected), `uniqueId`, `pipeline`; `limit` 1-100 (default 25) and \
        `cursor` (the previous page's `next`). (Vigil addition.)",
    params(
        ("status" = Option<String>, Query, pattern = r"^\s*(pending|in progress|completed|rejected)?\s*$", description = "pending, in progress, completed or rejected"),
        ("uniqueId" = Option<String>, Query, description = "the customer's id"),
        ("pipeline" = Option<String>, Query, description = "a pipeline slug"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "page size, 1-100, default 25"),
        ("cursor" = Option<String>, Query, description = "the `next` of the previous page"),
    ),
    security(("authorization" = []), ("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "A page of requests.", body = EddList),
        (status = 422, description = "A filter is invalid or a parameter unknown.", body = ErrorBody),
        EddAuthErrors,
        Unavailable,
    ),
)]
pub async fn list(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let params = query_params(query.as_deref(), LIST_PARAMS)?;
    let mut problems = Problems::default();
    let status = params.get("status").filter(|s| !s.is_empty()).cloned();
    if let Some(s) = &status {
        if !REQUEST_STATUSES.contains(&s.as_str()) {
            problems.push(
                "status",
                format!("must be one of {}", REQUEST_STATUSES.join(", ")),
            );
        }
    }
    let (limit, cursor) = page_params(&params, &mut problems);
    problems.finish()?;
    let filter = RequestFilter {
        status,
        unique_id: params.get("uniqueId").filter(|s| !s.is_empty()).cloned(),
        pipeline: params.get("pipeline").filter(|s| !s.is_empty()).cloned(),
        limit,
        cursor,
    };
    let (requests, next) = store::list(app.store.pool(), tenant.id, &filter).await?;
    Ok(Json(json!({
        "success": true,
        "message": "EDD requests fetched successfully",
        "data": requests,
        "next": next.map(|c| c.encode()),
    }))
    .into_response())
}

/// `POST /api/v1/edd/requests/{requestId}/steps/{stepKey}`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepBody {
    /// `complete` or `fail` (task steps), `approve` or `fail` (approval steps).
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^\s*(complete|approve|fail)\s*$",
        example = "complete"
    )]
    pub action: Option<String>,
    /// What was found or decided.
    #[schema(max_length = 5000)]
    pub note: Option<String>,
    /// The analyst acting (optional; must be an active analyst of the business when given).
    #[schema(max_length = 256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/edd/requests/{requestId}/steps/{stepKey}",
    tag = "edd",
    summary = "Complete, approve or fail the current step",
    description = "Steps are acted on in order. The first move puts the request `in progress`; \
        `fail` rejects it (`rejected`); passing the last step completes it (`completed`). Acting \
        on a step that is not the current one, or on a finished request, is a 409; `approve` on \
        a task step or `complete` on an approval step is a 422. Every move is kept in the step \
        history and the audit trail. (Vigil addition.)",
    params(
        ("requestId" = String, Path, description = "The request."),
        ("stepKey" = String, Path, description = "The step's key, e.g. `identity-verification`."),
    ),
    request_body = StepBody,
    security(("authorization" = []), ("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The request after the move.", body = EddFetched),
        (status = 404, description = "No such request or step.", body = ErrorBody),
        (status = 409, description = "Not the current step, or the request is finished.", body = ErrorBody,
            example = json!({"success": false, "message": "step 'source-of-funds' is not the current step (current: 'screening')",
                "errors": [{"field": "stepKey", "problem": "step 'source-of-funds' is not the current step (current: 'screening')"}]})),
        BodyErrors,
        (status = 422, description = "`action` missing or not allowed for the step's kind.", body = ErrorBody),
        EddAuthErrors,
        Unavailable,
    ),
)]
pub async fn act(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path((id, step)): Path<(String, String)>,
    body: JsonBody<StepBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let action = problems
        .required("action", body.value.action.as_deref(), 32)
        .and_then(|a| {
            let parsed = StepAction::parse(&a);
            if parsed.is_none() {
                problems.push("action", "must be complete, approve or fail");
            }
            parsed
        });
    let note = problems.optional("note", body.value.note.as_deref(), 5000);
    let user_id = problems.optional("userId", body.value.user_id.as_deref(), MAX_SHORT);
    problems.finish()?;
    let Some(action) = action else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "action",
            "is required",
        )]));
    };
    if let Some(user) = user_id.as_deref() {
        let mut conn = app
            .store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        crate::cases::analysts::directory(&mut conn, tenant.id)
            .await
            .map_err(crate::store::StoreError::from)?
            .active("userId", user)?;
    }
    let request = store::act(
        app.store.pool(),
        tenant.id,
        id.trim(),
        step.trim(),
        action,
        note.as_deref(),
        &Actor::key(&tenant.key_id, user_id.as_deref()),
    )
    .await?;
    Ok(
        Json(json!({"success": true, "message": "EDD step updated successfully", "data": request}))
            .into_response(),
    )
}

// Documentation-only response bodies.

/// The §2.9 creation answer.
#[derive(utoipa::ToSchema)]
pub struct EddCreated {
    pub success: bool,
    #[schema(example = "EDD request created successfully")]
    pub message: String,
    pub data: EddCreatedData,
}

/// §2.9 `data`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EddCreatedData {
    pub request_id: String,
    #[schema(example = "pending")]
    pub status: String,
    #[schema(example = "standard")]
    pub pipeline: String,
    pub created_at: String,
}

/// One request with steps and history.
#[derive(utoipa::ToSchema)]
pub struct EddFetched {
    pub success: bool,
    #[schema(example = "EDD request fetched successfully")]
    pub message: String,
    pub data: RequestView,
}

/// A page of requests.
#[derive(utoipa::ToSchema)]
pub struct EddList {
    pub success: bool,
    #[schema(example = "EDD requests fetched successfully")]
    pub message: String,
    pub data: Vec<RequestView>,
    #[schema(required = true)]
    pub next: Option<String>,
}

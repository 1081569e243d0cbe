//! The case-management endpoints (spec §4.2 and Vigil's additions): fetch, list, create, status,
//! escalate, assign, comments, tasks, and the analyst directory. Handlers validate the request
//! (every problem named by field, 422), call [`super::store`], and answer
//! `{message, data}` with the case record of §2.5.

use crate::api::extract::Path;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;

use super::analysts::{self, Analyst};
use super::store::{self, AssigneeFilter, CaseFilter, NewCase};
use super::{CaseError, CaseRecord, CaseStatus, Priority, RecordRef};
use crate::api::auth::Tenant;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::JsonBody;
use crate::api::fields::{page_params, parse_time, query_params, Problems, MAX_SHORT, MAX_TEXT};
use crate::api::openapi::{
    AuthErrors, BodyErrors, NonBlank10000, NonBlank200, NonBlank2000, NonBlank256, Unavailable,
};
use crate::api::AppState;
use crate::audit::Actor;
use crate::model::FieldError;

impl From<CaseError> for ApiError {
    fn from(error: CaseError) -> Self {
        let message = error.to_string();
        match error {
            CaseError::NotFound => ApiError::field(
                StatusCode::NOT_FOUND,
                "Case not found",
                "id",
                "no such case",
            ),
            CaseError::TaskNotFound => ApiError::field(
                StatusCode::NOT_FOUND,
                "Task not found",
                "taskId",
                "no such task on this case",
            ),
            CaseError::InvalidTransition { .. } => {
                ApiError::field(StatusCode::CONFLICT, &message, "status", &message)
            }
            CaseError::Inactive(_)
            | CaseError::AlreadyEscalated
            | CaseError::TaskDone
            | CaseError::OpenCaseExists(_) => ApiError::new(StatusCode::CONFLICT, message),
            CaseError::UnknownAnalyst { field, id } => ApiError::invalid(vec![FieldError::new(
                field,
                format!("no active analyst '{id}' in this business"),
            )]),
            CaseError::Store(store) => ApiError::from(store),
        }
    }
}

fn fetched(message: &str, case: CaseRecord) -> Response {
    Json(json!({"message": message, "data": case})).into_response()
}

/// The acting analyst of a request.
fn actor(tenant: &Tenant, problems: &mut Problems, user_id: Option<&str>) -> Actor {
    let user = problems.required("userId", user_id, MAX_SHORT);
    Actor::key(&tenant.key_id, Some(user.as_deref().unwrap_or("")))
}

/// `GET /case-management/case/{id}` and `GET /api/v1/case-management/case/{id}` (spec §4.2).
#[utoipa::path(
    get,
    path = "/api/v1/case-management/case/{id}",
    tag = "case-management",
    summary = "Fetch a case",
    description = "The case record of spec §2.5, exactly its fields. Also served at \
        `/case-management/case/{id}` (the spec lists both). A case of another business is 404.",
    params(("id" = String, Path, description = "The case `_id`.")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The case.", body = CaseFetched,
            example = json!({"message": "Case fetched successfully", "data": {"_id": "0195f3a2-…",
                "businessProfile": "Acme Bank", "module": "transaction-monitoring",
                "record": {"id": "5b0c…", "type": "transaction", "name": "TX-1001"},
                "title": "Big amount", "description": "Transaction TX-1001 of user CUST-42 was held for review (risk score 0.60). 1 rule triggered: Big amount.",
                "priority": "medium", "status": "open", "assignedTo": null, "assignedBy": null,
                "dueDate": null, "createdAt": "2026-03-02T10:15:31.204Z", "updatedAt": "2026-03-02T10:15:31.204Z",
                "tasks": [], "comments": [], "attachments": [], "isEscalated": false,
                "log": [{"_id": "0195f3a2-…", "status": "open", "message": "Case created",
                    "user": {"_id": "system", "firstName": "Vigil", "lastName": "System"},
                    "date": "2026-03-02T10:15:31.204Z"}]}})),
        (status = 404, description = "No such case in this business.", body = ErrorBody,
            example = json!({"message": "Case not found", "errors": [{"field": "id", "problem": "no such case"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let case = store::fetch(app.store.pool(), tenant.id, &tenant.name, id.trim())
        .await?
        .ok_or(CaseError::NotFound)?;
    Ok(fetched("Case fetched successfully", case))
}

/// `GET /case-management/case/{id}`: the spec's other address for the same case.
#[utoipa::path(
    get,
    path = "/case-management/case/{id}",
    tag = "case-management",
    operation_id = "fetch_case_unversioned",
    summary = "Fetch a case (address without /api/v1)",
    description = "The same as `GET /api/v1/case-management/case/{id}`; the spec lists both.",
    params(("id" = String, Path, description = "The case `_id`.")),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn fetch_unversioned(
    state: State<AppState>,
    tenant: Extension<Tenant>,
    id: Path<String>,
) -> Result<Response, ApiError> {
    fetch(state, tenant, id).await
}

const LIST_PARAMS: &[&str] = &[
    "status", "priority", "assignee", "module", "from", "to", "limit", "cursor",
];

/// `GET /api/v1/case-management/cases`
#[utoipa::path(
    get,
    path = "/api/v1/case-management/cases",
    tag = "case-management",
    summary = "List cases",
    description = "The business's cases, newest first, as §2.5 records. Filters (all optional): \
        `status` (open, in progress, resolved, closed), `priority` (low, medium, high, critical), \
        `assignee` (an analyst `_id`, or `unassigned`), `module`, `from` and `to` (creation time, \
        RFC 3339 or YYYY-MM-DD; a date covers its whole day, UTC). `limit` 1-100 (default 25). \
        `next` is the cursor of the following page (pass it as `cursor`), `null` on the last page. \
        An unknown parameter is a 422 naming it. (Vigil addition.)",
    params(
        ("status" = Option<String>, Query, pattern = r"^\s*(open|in progress|resolved|closed)?\s*$", description = "open, in progress, resolved or closed"),
        ("priority" = Option<String>, Query, pattern = r"^\s*(low|medium|high|critical)?\s*$", description = "low, medium, high or critical"),
        ("assignee" = Option<String>, Query, description = "analyst `_id`, or `unassigned`"),
        ("module" = Option<String>, Query, description = "e.g. transaction-monitoring"),
        ("from" = Option<String>, Query, description = "created at or after (RFC 3339 or YYYY-MM-DD)"),
        ("to" = Option<String>, Query, description = "created at or before (RFC 3339 or YYYY-MM-DD)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "page size, 1-100, default 25"),
        ("cursor" = Option<String>, Query, description = "the `next` of the previous page"),
    ),
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "A page of cases.", body = CaseList),
        (status = 422, description = "A filter value is invalid or a parameter unknown.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "status",
                "problem": "must be one of open, in progress, resolved, closed"}]})),
        AuthErrors,
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
    let status = params
        .get("status")
        .filter(|s| !s.is_empty())
        .and_then(|s| {
            let parsed = CaseStatus::parse(s);
            if parsed.is_none() {
                problems.push(
                    "status",
                    "must be one of open, in progress, resolved, closed",
                );
            }
            parsed
        });
    let priority = params
        .get("priority")
        .filter(|p| !p.is_empty())
        .and_then(|p| {
            let parsed = Priority::parse(p);
            if parsed.is_none() {
                problems.push("priority", "must be one of low, medium, high, critical");
            }
            parsed
        });
    let assignee = params
        .get("assignee")
        .filter(|a| !a.is_empty())
        .map(|a| match a.as_str() {
            "unassigned" => AssigneeFilter::Unassigned,
            id => AssigneeFilter::Analyst(id.to_owned()),
        });
    let mut time = |field: &str, end_of_day: bool| {
        params.get(field).filter(|v| !v.is_empty()).and_then(|v| {
            let parsed = parse_time(v, end_of_day);
            if parsed.is_none() {
                problems.push(field, "must be an RFC 3339 time or a YYYY-MM-DD date");
            }
            parsed
        })
    };
    let from_ms = time("from", false);
    let to_ms = time("to", true);
    let (limit, cursor) = page_params(&params, &mut problems);
    problems.finish()?;
    let filter = CaseFilter {
        status,
        priority,
        assignee,
        module: params.get("module").filter(|m| !m.is_empty()).cloned(),
        from_ms,
        to_ms,
        limit,
        cursor,
    };
    let (cases, next) = store::list(app.store.pool(), tenant.id, &tenant.name, &filter).await?;
    Ok(Json(json!({
        "message": "Cases fetched successfully",
        "data": cases,
        "next": next.map(|c| c.encode()),
    }))
    .into_response())
}

/// `POST /api/v1/case-management/cases`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCaseBody {
    /// Required, at most 200 characters.
    #[schema(required = true, inline, value_type = NonBlank200)]
    pub title: Option<String>,
    #[schema(max_length = 10000)]
    pub description: Option<String>,
    /// low, medium (default), high or critical.
    #[schema(pattern = r"^\s*(low|medium|high|critical)?\s*$")]
    pub priority: Option<String>,
    /// Default `case-management`.
    #[schema(max_length = 256)]
    pub module: Option<String>,
    /// What the case is about; all three fields required when given.
    pub record: Option<RecordBody>,
    /// Assign at once to this analyst.
    #[schema(max_length = 256)]
    pub assignee_id: Option<String>,
    /// RFC 3339 or YYYY-MM-DD.
    pub due_date: Option<String>,
    /// The acting analyst (required).
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

/// A case's `record`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct RecordBody {
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub id: Option<String>,
    #[serde(rename = "type")]
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub kind: Option<String>,
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub name: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/cases",
    tag = "case-management",
    summary = "Create a manual case",
    description = "Opens a case by hand (status `open`, log \"Case created\" by `userId`). \
        (Vigil addition: the spec shows no way to create a case.)",
    request_body = CreateCaseBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 201, description = "Created.", body = CaseFetched),
        BodyErrors,
        (status = 422, description = "A field is missing or invalid, or `userId`/`assigneeId` is no active analyst.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "title", "problem": "is required"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn create(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<CreateCaseBody>,
) -> Result<Response, ApiError> {
    let body = body.value;
    let mut problems = Problems::default();
    let title = problems.required("title", body.title.as_deref(), 200);
    let description = problems
        .optional("description", body.description.as_deref(), MAX_TEXT)
        .unwrap_or_default();
    let priority = match body.priority.as_deref().map(str::trim) {
        None | Some("") => Priority::Medium,
        Some(p) => Priority::parse(p).unwrap_or_else(|| {
            problems.push("priority", "must be one of low, medium, high, critical");
            Priority::Medium
        }),
    };
    let module = problems
        .optional("module", body.module.as_deref(), MAX_SHORT)
        .unwrap_or_else(|| "case-management".to_owned());
    let record = body.record.as_ref().map(|r| RecordRef {
        id: problems
            .required("record.id", r.id.as_deref(), MAX_SHORT)
            .unwrap_or_default(),
        kind: problems
            .required("record.type", r.kind.as_deref(), MAX_SHORT)
            .unwrap_or_default(),
        name: problems
            .required("record.name", r.name.as_deref(), MAX_SHORT)
            .unwrap_or_default(),
    });
    let assignee = problems.optional("assigneeId", body.assignee_id.as_deref(), MAX_SHORT);
    let due_at_ms = due(&mut problems, body.due_date.as_deref());
    let actor = actor(&tenant, &mut problems, body.user_id.as_deref());
    problems.finish()?;
    let new = NewCase {
        module,
        record,
        title: title.unwrap_or_default(),
        description,
        priority,
        assignee,
        due_at_ms,
    };
    let case = store::create(app.store.pool(), tenant.id, &tenant.name, new, &actor).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"message": "Case created successfully", "data": case})),
    )
        .into_response())
}

fn due(problems: &mut Problems, value: Option<&str>) -> Option<i64> {
    let value = value.map(str::trim).filter(|v| !v.is_empty())?;
    let parsed = parse_time(value, true);
    if parsed.is_none() {
        problems.push("dueDate", "must be an RFC 3339 time or a YYYY-MM-DD date");
    }
    parsed
}

/// `PATCH /api/v1/case-management/case/{id}/status`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusBody {
    /// open (reopen), in progress, resolved or closed.
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^\s*(open|in progress|resolved|closed)\s*$",
        example = "in progress"
    )]
    pub status: Option<String>,
    /// The acting analyst.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    patch,
    path = "/api/v1/case-management/case/{id}/status",
    tag = "case-management",
    summary = "Change a case's status",
    description = "Moves: open → in progress → resolved → closed; resolved or closed → open \
        (reopen). Each move writes the log entry \"Status updated to <status>\". Any other move \
        is a 409 naming the allowed ones. Reopening an automatic case while another case is open \
        for the same user is a 409. (Vigil addition.)",
    params(("id" = String, Path, description = "The case `_id`.")),
    request_body = StatusBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        (status = 409, description = "The move is not allowed from the current status.", body = ErrorBody,
            example = json!({"message": "cannot move a case from open to closed (allowed next: in progress)",
                "errors": [{"field": "status", "problem": "cannot move a case from open to closed (allowed next: in progress)"}]})),
        BodyErrors,
        (status = 422, description = "`status` or `userId` missing or invalid.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn set_status(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<StatusBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let status = problems
        .required("status", body.value.status.as_deref(), MAX_SHORT)
        .and_then(|s| {
            let parsed = CaseStatus::parse(&s);
            if parsed.is_none() {
                problems.push(
                    "status",
                    "must be one of open, in progress, resolved, closed",
                );
            }
            parsed
        });
    let actor = actor(&tenant, &mut problems, body.value.user_id.as_deref());
    problems.finish()?;
    let Some(status) = status else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "status",
            "is required",
        )]));
    };
    let case = store::set_status(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        status,
        &actor,
    )
    .await?;
    Ok(fetched("Case status updated successfully", case))
}

/// `POST /api/v1/case-management/case/{id}/escalate`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EscalateBody {
    /// Why; written into the log entry.
    #[schema(max_length = 2000)]
    pub reason: Option<String>,
    /// The acting analyst.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/case/{id}/escalate",
    tag = "case-management",
    summary = "Escalate a case",
    description = "Sets `isEscalated` on an open or in-progress case (log \"Case escalated\", \
        with the reason). Escalating twice, or a resolved or closed case, is a 409. (Vigil addition.)",
    params(("id" = String, Path, description = "The case `_id`.")),
    request_body = EscalateBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        (status = 409, description = "Already escalated, or not open / in progress.", body = ErrorBody,
            example = json!({"message": "case is already escalated", "errors": []})),
        BodyErrors,
        (status = 422, description = "`userId` missing or not an active analyst.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn escalate(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<EscalateBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let reason = problems.optional("reason", body.value.reason.as_deref(), 2000);
    let actor = actor(&tenant, &mut problems, body.value.user_id.as_deref());
    problems.finish()?;
    let case = store::escalate(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        reason.as_deref(),
        &actor,
    )
    .await?;
    Ok(fetched("Case escalated successfully", case))
}

/// `POST /api/v1/case-management/case/{id}/assign`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssignBody {
    /// The analyst who takes the case.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub assignee_id: Option<String>,
    /// Optional new due date (RFC 3339 or YYYY-MM-DD).
    pub due_date: Option<String>,
    /// The acting analyst (becomes `assignedBy`).
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/case/{id}/assign",
    tag = "case-management",
    summary = "Assign a case",
    description = "Sets `assignedTo` (the assignee) and `assignedBy` (the acting analyst), \
        optionally the due date; log \"Case assigned to First Last\". A closed case is a 409. \
        (Vigil addition.)",
    params(("id" = String, Path, description = "The case `_id`.")),
    request_body = AssignBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        (status = 409, description = "The case is closed.", body = ErrorBody,
            example = json!({"message": "case is closed; reopen it first", "errors": []})),
        BodyErrors,
        (status = 422, description = "`assigneeId` or `userId` missing or not an active analyst.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn assign(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<AssignBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let assignee = problems.required("assigneeId", body.value.assignee_id.as_deref(), MAX_SHORT);
    let due_at_ms = due(&mut problems, body.value.due_date.as_deref());
    let actor = actor(&tenant, &mut problems, body.value.user_id.as_deref());
    problems.finish()?;
    let case = store::assign(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        &assignee.unwrap_or_default(),
        due_at_ms,
        &actor,
    )
    .await?;
    Ok(fetched("Case assigned successfully", case))
}

/// `POST /api/v1/case-management/case/{id}/comments`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentBody {
    /// Required, at most 10,000 characters.
    #[schema(required = true, inline, value_type = NonBlank10000)]
    pub text: Option<String>,
    /// Analyst `_id`s to tag (each must be active).
    #[schema(max_items = 50)]
    pub tagged_users: Option<Vec<String>>,
    /// Attachment URLs (absolute http/https).
    #[schema(max_items = 50)]
    pub attachments: Option<Vec<String>>,
    /// The author.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/case/{id}/comments",
    tag = "case-management",
    summary = "Comment on a case",
    description = "Adds a comment by `userId` with tagged analysts and attachment URLs; log \
        \"Comment added\". Comments are never edited or deleted. A closed case is a 409. \
        (Vigil addition.)",
    params(("id" = String, Path, description = "The case `_id`.")),
    request_body = CommentBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        (status = 409, description = "The case is closed.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "`text` missing, an attachment is no URL, or a user is no active analyst.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "taggedUsers[0]", "problem": "no active analyst 'x' in this business"}]})),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn comment(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<CommentBody>,
) -> Result<Response, ApiError> {
    let body = body.value;
    let mut problems = Problems::default();
    let text = problems.required("text", body.text.as_deref(), MAX_TEXT);
    let tagged: Vec<String> = body
        .tagged_users
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, u)| problems.required(&format!("taggedUsers[{i}]"), Some(u), MAX_SHORT))
        .collect();
    let attachments: Vec<String> = body
        .attachments
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, a)| problems.url(&format!("attachments[{i}]"), a))
        .collect();
    if tagged.len() > 50 || attachments.len() > 50 {
        problems.push("body", "at most 50 tagged users and 50 attachments");
    }
    let actor = actor(&tenant, &mut problems, body.user_id.as_deref());
    problems.finish()?;
    let case = store::comment(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        &text.unwrap_or_default(),
        &tagged,
        &attachments,
        &actor,
    )
    .await?;
    Ok(fetched("Comment added successfully", case))
}

/// `POST /api/v1/case-management/case/{id}/tasks`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskBody {
    /// Required, at most 2,000 characters.
    #[schema(required = true, inline, value_type = NonBlank2000)]
    pub text: Option<String>,
    /// The acting analyst.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/case/{id}/tasks",
    tag = "case-management",
    summary = "Add a task to a case",
    description = "Adds an open task (`status: false`); log \"Task added: <text>\". A closed case \
        is a 409. (Vigil addition.)",
    params(("id" = String, Path, description = "The case `_id`.")),
    request_body = TaskBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case in this business.", body = ErrorBody),
        (status = 409, description = "The case is closed.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "`text` or `userId` missing or invalid.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn add_task(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<TaskBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let text = problems.required("text", body.value.text.as_deref(), 2000);
    let actor = actor(&tenant, &mut problems, body.value.user_id.as_deref());
    problems.finish()?;
    let case = store::add_task(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        &text.unwrap_or_default(),
        &actor,
    )
    .await?;
    Ok(fetched("Task added successfully", case))
}

/// A body naming only the acting analyst.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActorBody {
    /// The acting analyst.
    #[schema(required = true, inline, value_type = NonBlank256)]
    pub user_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/case/{id}/tasks/{taskId}/complete",
    tag = "case-management",
    summary = "Complete a case task",
    description = "Marks the task done (`status: true`); log \"Task completed: <text>\". \
        Completing it again is a 409. (Vigil addition.)",
    params(
        ("id" = String, Path, description = "The case `_id`."),
        ("taskId" = String, Path, description = "The task `_id`."),
    ),
    request_body = ActorBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The updated case.", body = CaseFetched),
        (status = 404, description = "No such case or task.", body = ErrorBody),
        (status = 409, description = "The task is already completed, or the case is closed.", body = ErrorBody,
            example = json!({"message": "task is already completed", "errors": []})),
        BodyErrors,
        (status = 422, description = "`userId` missing or not an active analyst.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn complete_task(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path((id, task_id)): Path<(String, String)>,
    body: JsonBody<ActorBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let actor = actor(&tenant, &mut problems, body.value.user_id.as_deref());
    problems.finish()?;
    let case = store::complete_task(
        app.store.pool(),
        tenant.id,
        &tenant.name,
        id.trim(),
        task_id.trim(),
        &actor,
    )
    .await?;
    Ok(fetched("Task completed successfully", case))
}

/// `POST /api/v1/case-management/analysts`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalystBody {
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 100,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "Ada"
    )]
    pub first_name: Option<String>,
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 100,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "Obi"
    )]
    pub last_name: Option<String>,
    #[schema(example = "ada.obi@acme-bank.ng")]
    pub email: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/case-management/analysts",
    tag = "case-management",
    summary = "Add an analyst to the business's directory",
    description = "Analysts are the users cases name (`assignedTo`, `assignedBy`, comment and \
        log `user`); every case action names the acting one as `userId`. (Vigil addition.)",
    request_body = AnalystBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 201, description = "Created.", body = AnalystFetched),
        BodyErrors,
        (status = 422, description = "A name is missing or the e-mail address is invalid.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn create_analyst(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<AnalystBody>,
) -> Result<Response, ApiError> {
    let mut problems = Problems::default();
    let first = problems.required("firstName", body.value.first_name.as_deref(), 100);
    let last = problems.required("lastName", body.value.last_name.as_deref(), 100);
    let email = body
        .value
        .email
        .as_deref()
        .filter(|e| !e.trim().is_empty())
        .and_then(|e| problems.email("email", e));
    problems.finish()?;
    let analyst = analysts::create(
        app.store.pool(),
        tenant.id,
        &first.unwrap_or_default(),
        &last.unwrap_or_default(),
        email.as_deref(),
        &Actor::key(&tenant.key_id, None),
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"message": "Analyst created successfully", "data": analyst})),
    )
        .into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/case-management/analysts",
    tag = "case-management",
    summary = "List the business's analysts",
    description = "Every analyst, active or not, by name. (Vigil addition.)",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The directory.", body = AnalystList),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn list_analysts(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Response, ApiError> {
    let analysts = analysts::list(app.store.pool(), tenant.id).await?;
    Ok(Json(json!({"message": "Analysts fetched successfully", "data": analysts})).into_response())
}

/// `PATCH /api/v1/case-management/analysts/{id}`
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AnalystPatch {
    /// `false` deactivates (the analyst can no longer act or be assigned; records keep the
    /// name), `true` reactivates.
    #[schema(required = true, nullable = false)]
    pub active: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/api/v1/case-management/analysts/{id}",
    tag = "case-management",
    summary = "Deactivate or reactivate an analyst",
    description = "Analysts are never deleted. (Vigil addition.)",
    params(("id" = String, Path, description = "The analyst `_id`.")),
    request_body = AnalystPatch,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The analyst.", body = AnalystFetched),
        (status = 404, description = "No such analyst in this business.", body = ErrorBody),
        BodyErrors,
        (status = 422, description = "`active` missing.", body = ErrorBody),
        AuthErrors,
        Unavailable,
    ),
)]
pub async fn update_analyst(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    Path(id): Path<String>,
    body: JsonBody<AnalystPatch>,
) -> Result<Response, ApiError> {
    let Some(active) = body.value.active else {
        return Err(ApiError::invalid(vec![FieldError::new(
            "active",
            "is required (true or false)",
        )]));
    };
    let analyst = analysts::set_active(
        app.store.pool(),
        tenant.id,
        id.trim(),
        active,
        &Actor::key(&tenant.key_id, None),
    )
    .await?
    .ok_or_else(|| {
        ApiError::field(
            StatusCode::NOT_FOUND,
            "Analyst not found",
            "id",
            "no such analyst",
        )
    })?;
    Ok(Json(json!({"message": "Analyst updated successfully", "data": analyst})).into_response())
}

// Documentation-only response bodies.

/// `{message, data}` with one case.
#[derive(utoipa::ToSchema)]
pub struct CaseFetched {
    #[schema(example = "Case fetched successfully")]
    pub message: String,
    pub data: CaseRecord,
}

/// A page of cases.
#[derive(utoipa::ToSchema)]
pub struct CaseList {
    #[schema(example = "Cases fetched successfully")]
    pub message: String,
    pub data: Vec<CaseRecord>,
    /// The cursor of the next page, `null` on the last.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// `{message, data}` with one analyst.
#[derive(utoipa::ToSchema)]
pub struct AnalystFetched {
    #[schema(example = "Analyst created successfully")]
    pub message: String,
    pub data: Analyst,
}

/// The analyst directory.
#[derive(utoipa::ToSchema)]
pub struct AnalystList {
    #[schema(example = "Analysts fetched successfully")]
    pub message: String,
    pub data: Vec<Analyst>,
}

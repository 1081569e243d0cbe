//! The instant screening endpoints (spec 4.3) and the list status endpoints.
//!
//! - `POST /api/v1/aml/sanction/instant`, `POST /api/v1/aml/pep/instant`: `{name, threshold,
//!   country?}` (plus Vigil's optional `birthDate`, `pageNumber`, `pageSize`) → `{message, count,
//!   pageNumber, data: [list records of §2.3]}` best first. The search runs on the blocking pool,
//!   against the index serving at that moment (one `arc-swap` load).
//! - `GET /api/v1/aml/lists`: which lists serve, their versions, counts and last refresh.
//! - `POST /api/v1/admin/lists/reload`: reload changed lists now (admin keys).

use axum::extract::State;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::auth::Tenant;
use super::error::{ApiError, ErrorBody};
use super::extract::JsonBody;
use super::AppState;
use crate::model::FieldError;
use crate::screening::entity::{EntityType, ListKind};
use crate::screening::index::{ScreenHit, ScreenQuery, ScreeningIndex};
use crate::screening::loaders::country::is_iso_alpha2;

/// Longest name accepted.
const MAX_NAME_CHARS: usize = 300;
/// Results per page unless `pageSize` says otherwise.
const DEFAULT_PAGE_SIZE: u32 = 25;
const MAX_PAGE_SIZE: u32 = 100;
/// Most matches counted per query.
const MAX_MATCHES: usize = 500;

/// `POST /api/v1/aml/{sanction,pep}/instant`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenBody {
    /// The name to screen (any script).
    #[schema(required = true, inline, value_type = crate::api::openapi::NonBlank300)]
    pub name: Option<String>,
    /// 0–100: the lowest `searchScore` returned (85 is typical).
    #[schema(required = true, nullable = false, minimum = 0.0, maximum = 100.0)]
    pub threshold: Option<f64>,
    /// Lower-case ISO 3166-1 alpha-2 code: leaves out entities tied only to other countries.
    #[schema(pattern = r"^\s*([a-z]{2})?\s*$")]
    pub country: Option<String>,
    /// Vigil addition: `YYYY` or `YYYY-MM-DD`; raises the score of entities born within a year of
    /// it and lowers the score of entities whose every listed birth year differs.
    #[schema(pattern = r"^\s*(\d{4}(-\d{2}-\d{2})?)?\s*$")]
    pub birth_date: Option<String>,
    /// Vigil addition: 1-based page of results (default 1).
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 4294967295_i64)]
    pub page_number: Option<u32>,
    /// Vigil addition: results per page (default 25, at most 100).
    #[schema(minimum = 1, maximum = 100)]
    pub page_size: Option<u32>,
}

pub(crate) struct Validated {
    pub(crate) name: String,
    pub(crate) threshold: f32,
    pub(crate) country: Option<String>,
    birth_year: Option<i32>,
    page: u32,
    page_size: u32,
}

pub(crate) fn validate(body: ScreenBody) -> Result<Validated, ApiError> {
    let mut errors = Vec::new();
    let name = body.name.unwrap_or_default();
    let trimmed = name.trim();
    if trimmed.is_empty() {
        errors.push(FieldError::new("name", "is required and must not be empty"));
    } else if trimmed.chars().count() > MAX_NAME_CHARS {
        errors.push(FieldError::new(
            "name",
            format!("must be at most {MAX_NAME_CHARS} characters"),
        ));
    } else if !trimmed.chars().any(char::is_alphanumeric) {
        errors.push(FieldError::new("name", "must contain letters or digits"));
    }
    let threshold = match body.threshold {
        None => {
            errors.push(FieldError::new("threshold", "is required (0-100)"));
            0.0
        }
        Some(t) if !(0.0..=100.0).contains(&t) || !t.is_finite() => {
            errors.push(FieldError::new("threshold", "must be between 0 and 100"));
            0.0
        }
        Some(t) => t as f32,
    };
    let country = match body.country.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(code) if is_iso_alpha2(code) => Some(code.to_owned()),
        Some(code) => {
            errors.push(FieldError::new(
                "country",
                format!("unknown country code '{code}' (lower-case ISO 3166-1 alpha-2, e.g. 'ng')"),
            ));
            None
        }
    };
    let birth_year = match body.birth_date.as_deref() {
        None | Some("") => None,
        Some(date) => match parse_birth_year(date) {
            Some(year) => Some(year),
            None => {
                errors.push(FieldError::new("birthDate", "must be YYYY or YYYY-MM-DD"));
                None
            }
        },
    };
    let page = body.page_number.unwrap_or(1);
    if page == 0 {
        errors.push(FieldError::new("pageNumber", "must be 1 or more"));
    }
    let page_size = body.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page_size == 0 || page_size > MAX_PAGE_SIZE {
        errors.push(FieldError::new(
            "pageSize",
            format!("must be between 1 and {MAX_PAGE_SIZE}"),
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    Ok(Validated {
        name: trimmed.to_owned(),
        threshold,
        country,
        birth_year,
        page,
        page_size,
    })
}

fn parse_birth_year(date: &str) -> Option<i32> {
    let year = date.get(..4)?;
    if date.len() == 4 {
        return year.parse().ok();
    }
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    year.parse().ok()
}

/// Maps an entity onto the §2.3 list record.
pub fn list_record(index: &ScreeningIndex, hit: &ScreenHit, loaded_at: Option<&str>) -> Value {
    let indexed = index.entity(hit.entity);
    let list = index.list_of(indexed);
    let entity = &indexed.entity;
    let positions: Vec<Value> = entity
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({"title": p.title, "startDate": p.start_date, "endDate": p.end_date,
                "_id": format!("{}:position:{i}", entity.id)})
        })
        .collect();
    let entity_type = match entity.entity_type {
        EntityType::Unknown => Value::Null,
        other => Value::from(other.as_str()),
    };
    let mut record = json!({
        "_id": entity.id,
        "type": list.kind.as_str(),
        "externalId": entity.external_id,
        "entityType": entity_type,
        "name": entity.name,
        "photo": Value::Null,
        "gender": entity.gender,
        "__v": 0,
        "addresses": entity.addresses,
        "aliases": entity.aliases.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        "countries": entity.countries,
        "sanctions": entity.sanctions,
        "politicalParty": entity.political_party,
        "tags": entity.tags,
        "birth_date": entity.birth_dates.first(),
        "createdAt": entity.listed_on.as_deref().or(loaded_at),
        "updatedAt": loaded_at,
        "dataset": [{"name": list.title, "url": list.url}],
        "positions": positions,
        "education": [],
        "searchScore": round1(hit.score),
        "confidenceScore": round3(hit.name_score / 100.0),
        "matchedName": hit.matched_name,
        "explanation": hit.explanation,
        "remarks": entity.remarks,
    });
    if list.kind == ListKind::Sanction {
        record["isDeleted"] = Value::Bool(false);
    }
    record
}

fn round1(value: f32) -> f64 {
    (f64::from(value) * 10.0).round() / 10.0
}

fn round3(value: f32) -> f64 {
    (f64::from(value) * 1000.0).round() / 1000.0
}

async fn instant(
    app: AppState,
    tenant: Tenant,
    kind: ListKind,
    body: ScreenBody,
) -> Result<Json<Value>, ApiError> {
    let query = validate(body)?;
    let page = query.page;
    let screener = app.screening.current();
    let status = app.screening.status();
    let (count, records) = tokio::task::spawn_blocking(move || {
        let index = screener.index();
        let hits = index.search(&ScreenQuery {
            name: &query.name,
            kind: Some(kind),
            tenant: Some(tenant.id),
            country: query.country.as_deref(),
            birth_year: query.birth_year,
            threshold: query.threshold,
            match_threshold: screener.thresholds().matched,
            limit: MAX_MATCHES,
        });
        // In usize and saturating: a page number near u32::MAX overflowed u32 (a panic in debug
        // builds, a wrapped start and the wrong page in release).
        let start =
            (query.page.saturating_sub(1) as usize).saturating_mul(query.page_size as usize);
        let records: Vec<Value> = hits
            .iter()
            .skip(start)
            .take(query.page_size as usize)
            .map(|hit| {
                let list = &index.list_of(index.entity(hit.entity)).name;
                let loaded_at = status
                    .lists
                    .iter()
                    .find(|l| &l.name == list)
                    .and_then(|l| l.loaded_at.as_deref());
                list_record(index, hit, loaded_at)
            })
            .collect();
        (hits.len(), records)
    })
    .await
    .map_err(ApiError::internal)?;
    let message = match kind {
        ListKind::Sanction => "Sanction screening completed",
        ListKind::Pep => "PEP screening completed",
    };
    Ok(Json(json!({
        "message": message,
        "count": count,
        "pageNumber": page,
        "data": records,
    })))
}

const SCREEN_NOTE: &str = "Screens a name (any script) against the loaded lists of this kind. \
    `threshold` (0-100) is the lowest `searchScore` returned; `country` (lower-case ISO alpha-2) \
    leaves out entities tied only to other countries. `count` is the number of matches, `data` \
    the requested page of list records (spec 2.3), best first. Vigil additions: `birthDate`, \
    `pageNumber`, `pageSize`, and `matchedName`/`remarks`/`explanation` on each record. \
    `explanation` says how the score came about: `parts` (query part, listed part, `similarity`, \
    `basis`: exact/initial/nickname/spelling/sound/edits/script/joined, `weight`, the `points` it \
    adds), `unmatchedQuery` and `unmatchedListed` parts with their weights, and `adjustments` \
    (`reason`: weakAlias, crossScriptUnsupported, birthYearMatch, birthYearMismatch, \
    countryMatch, commonName; `points`; `detail`).";

#[utoipa::path(
    post,
    path = "/api/v1/aml/sanction/instant",
    tag = "screening",
    summary = "Screen a name against the sanctions lists",
    description = SCREEN_NOTE,
    request_body = ScreenBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Matches, best first.", body = Object,
            example = json!({"message": "Sanction screening completed", "count": 1, "pageNumber": 1,
                "data": [{"_id": "ofac-sdn:35096", "type": "sanction", "externalId": "35096",
                    "entityType": "individual", "name": "PUTIN, Vladimir Vladimirovich",
                    "aliases": [], "countries": ["ru"], "sanctions": ["RUSSIA-EO14024"],
                    "birth_date": "1952-10-07", "dataset": [{"name": "OFAC Specially Designated Nationals",
                    "url": "https://sanctionssearch.ofac.treas.gov/"}], "searchScore": 100.0,
                    "confidenceScore": 1.0, "isDeleted": false}]})),
        crate::api::openapi::BodyErrors,
        (status = 422, description = "`name` empty, `threshold` missing or outside 0-100, unknown `country`.", body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [{"field": "country",
                "problem": "unknown country code 'xx' (lower-case ISO 3166-1 alpha-2, e.g. 'ng')"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn sanction_instant(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<ScreenBody>,
) -> Result<Json<Value>, ApiError> {
    instant(app, tenant, ListKind::Sanction, body.value).await
}

#[utoipa::path(
    post,
    path = "/api/v1/aml/pep/instant",
    tag = "screening",
    summary = "Screen a name against the PEP lists",
    description = SCREEN_NOTE,
    request_body = ScreenBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Matches, best first.", body = Object,
            example = json!({"message": "PEP screening completed", "count": 1, "pageNumber": 1,
                "data": [{"_id": "us-congress:Q170581", "type": "pep", "name": "Nancy Pelosi",
                    "positions": [{"title": "United States representative", "startDate": null,
                    "endDate": null, "_id": "us-congress:Q170581:position:0"}],
                    "searchScore": 100.0, "confidenceScore": 1.0}]})),
        crate::api::openapi::BodyErrors,
        (status = 422, description = "`name` empty, `threshold` missing or outside 0-100, unknown `country`.", body = ErrorBody),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn pep_instant(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<ScreenBody>,
) -> Result<Json<Value>, ApiError> {
    instant(app, tenant, ListKind::Pep, body.value).await
}

/// `GET /api/v1/aml/lists`: every configured list, the calling business's own watchlists
/// included and other businesses' left out.
#[utoipa::path(
    get,
    path = "/api/v1/aml/lists",
    tag = "screening",
    summary = "The screening lists, their versions and last refresh",
    description = "Every configured list (the caller's own watchlists included, other businesses' \
        left out): kind, format, source, publisher date, entity and name counts, version (SHA-256 \
        prefix of the serving bytes), when it loaded, the last attempt and why the newest version \
        was refused, if it was. (Vigil addition.)",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The lists.", body = Object),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn lists_status(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Json<Value> {
    let status = app.screening.status();
    let lists: Vec<_> = status
        .lists
        .iter()
        .filter(|l| l.business.is_none() || l.business.as_deref() == Some(tenant.name.as_str()))
        .collect();
    Json(json!({
        "message": "Screening lists fetched successfully",
        "data": {
            "ready": status.ready,
            "entities": status.entities,
            "names": status.names,
            "builtAt": status.built_at,
            "buildMillis": status.build_millis,
            "matchThreshold": status.match_threshold,
            "potentialThreshold": status.potential_threshold,
            "lists": lists,
        }
    }))
}

/// `POST /api/v1/admin/lists/reload`: admin keys only.
#[utoipa::path(
    post,
    path = "/api/v1/admin/lists/reload",
    tag = "admin",
    summary = "Reload changed screening lists now",
    description = "Re-reads every list whose bytes changed and swaps in a new index; a broken or \
        truncated list keeps its previous version serving and is reported. Admin keys only.",
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "The lists after the reload.", body = Object),
        (status = 403, description = "The key is not an admin key.", body = ErrorBody,
            example = json!({"message": "this endpoint needs an admin key", "errors": []})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store is unavailable (key lookup); retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn reload_lists(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
) -> Result<Json<Value>, ApiError> {
    if !tenant.admin {
        return Err(ApiError::forbidden("this endpoint needs an admin key"));
    }
    let manager = app.screening.clone();
    let status = tokio::task::spawn_blocking(move || manager.reload())
        .await
        .map_err(ApiError::internal)?;
    Ok(Json(
        json!({"message": "Screening lists reloaded", "data": &*status}),
    ))
}

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
use super::error::ApiError;
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
    pub name: Option<String>,
    /// 0–100: the lowest `searchScore` returned (85 is typical).
    pub threshold: Option<f64>,
    /// Lower-case ISO 3166-1 alpha-2 code: leaves out entities tied only to other countries.
    pub country: Option<String>,
    /// Vigil addition: `YYYY` or `YYYY-MM-DD`; raises the score of entities born within a year of
    /// it and lowers the score of entities whose every listed birth year differs.
    pub birth_date: Option<String>,
    /// Vigil addition: 1-based page of results (default 1).
    pub page_number: Option<u32>,
    /// Vigil addition: results per page (default 25, at most 100).
    pub page_size: Option<u32>,
}

struct Validated {
    name: String,
    threshold: f32,
    country: Option<String>,
    birth_year: Option<i32>,
    page: u32,
    page_size: u32,
}

fn validate(body: ScreenBody) -> Result<Validated, ApiError> {
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
            limit: MAX_MATCHES,
        });
        let start = ((query.page - 1) * query.page_size) as usize;
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

pub async fn sanction_instant(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<ScreenBody>,
) -> Result<Json<Value>, ApiError> {
    instant(app, tenant, ListKind::Sanction, body.value).await
}

pub async fn pep_instant(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<ScreenBody>,
) -> Result<Json<Value>, ApiError> {
    instant(app, tenant, ListKind::Pep, body.value).await
}

/// `GET /api/v1/aml/lists`: every configured list, the calling business's own watchlists
/// included and other businesses' left out.
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

//! EDD persistence: requests, their steps (copied from the pipeline at creation) and step
//! history, and the audit entries of every move, each one database transaction.

use serde_json::{json, Value};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::config::{PipelineConfig, StepKind};
use super::{
    EddError, HistoryEntry, RequestView, StepAction, StepView, COMPLETED, IN_PROGRESS, PENDING,
    REJECTED,
};
use crate::audit::{self, Actor, EntityType};
use crate::store::page::{after_cursor, Cursor};
use crate::store::{iso_time, new_id, now_ms, StoreError};

struct RequestRow {
    id: String,
    unique_id: String,
    pipeline: String,
    status: String,
    subject: Value,
    created_at_ms: i64,
    updated_at_ms: i64,
}

const COLUMNS: &str = "SELECT id, unique_id, pipeline, status, subject, created_at_ms, \
     updated_at_ms FROM edd_requests";

fn request_from_row(row: &AnyRow) -> Result<RequestRow, StoreError> {
    let subject: String = row.get(4);
    Ok(RequestRow {
        id: row.get(0),
        unique_id: row.get(1),
        pipeline: row.get(2),
        status: row.get(3),
        subject: serde_json::from_str(&subject)
            .map_err(|e| StoreError::Corrupt(format!("edd subject: {e}")))?,
        created_at_ms: row.get(5),
        updated_at_ms: row.get(6),
    })
}

async fn view(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    request: RequestRow,
) -> Result<RequestView, EddError> {
    let steps: Vec<StepView> = sqlx::query(
        "SELECT key, name, kind, status, note, user_id, updated_at_ms FROM edd_steps \
         WHERE business_id = $1 AND request_id = $2 ORDER BY position",
    )
    .bind(business_id)
    .bind(&request.id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|row| StepView {
        key: row.get(0),
        name: row.get(1),
        kind: row.get(2),
        status: row.get(3),
        note: row.get(4),
        user_id: row.get(5),
        updated_at: iso_time(row.get(6)),
    })
    .collect();
    let history = sqlx::query(
        "SELECT step_key, action, from_status, to_status, request_status, note, user_id, \
         actor_key, at_ms FROM edd_step_events WHERE business_id = $1 AND request_id = $2 \
         ORDER BY seq",
    )
    .bind(business_id)
    .bind(&request.id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|row| HistoryEntry {
        step: row.get(0),
        action: row.get(1),
        from_status: row.get(2),
        to_status: row.get(3),
        request_status: row.get(4),
        note: row.get(5),
        user_id: row.get(6),
        actor_key: row.get(7),
        at: iso_time(row.get(8)),
    })
    .collect();
    let finished = request.status == COMPLETED || request.status == REJECTED;
    let current_step = if finished {
        None
    } else {
        steps
            .iter()
            .find(|s| s.status == PENDING)
            .map(|s| s.key.clone())
    };
    Ok(RequestView {
        request_id: request.id,
        status: request.status,
        pipeline: request.pipeline,
        unique_id: request.unique_id,
        subject: request.subject,
        current_step,
        steps,
        history,
        created_at: iso_time(request.created_at_ms),
        updated_at: iso_time(request.updated_at_ms),
    })
}

fn audited(view: &RequestView) -> Value {
    let steps: serde_json::Map<String, Value> = view
        .steps
        .iter()
        .map(|s| {
            (
                s.key.clone(),
                json!({"status": s.status, "note": s.note, "userId": s.user_id}),
            )
        })
        .collect();
    json!({"status": view.status, "pipeline": view.pipeline, "uniqueId": view.unique_id,
        "subject": view.subject, "steps": steps})
}

async fn load(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    id: &str,
) -> Result<Option<RequestView>, EddError> {
    let sql = format!("{COLUMNS} WHERE business_id = $1 AND id = $2");
    let Some(row) = sqlx::query(&sql)
        .bind(business_id)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    let request = request_from_row(&row)?;
    Ok(Some(view(conn, business_id, request).await?))
}

/// Stores a new request (`pending`) with the pipeline's steps.
pub async fn create(
    pool: &sqlx::AnyPool,
    business_id: i64,
    pipeline: &PipelineConfig,
    unique_id: &str,
    subject: &Value,
    actor: &Actor,
) -> Result<RequestView, EddError> {
    let now = now_ms();
    let id = new_id();
    let mut tx = crate::store::begin_write(pool).await?;
    sqlx::query(
        "INSERT INTO edd_requests (id, business_id, unique_id, pipeline, status, subject, \
         version, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)",
    )
    .bind(&id)
    .bind(business_id)
    .bind(unique_id)
    .bind(&pipeline.slug)
    .bind(PENDING)
    .bind(subject.to_string())
    .bind(now)
    .execute(&mut *tx)
    .await?;
    for (position, step) in pipeline.steps.iter().enumerate() {
        sqlx::query(
            "INSERT INTO edd_steps (request_id, business_id, position, key, name, kind, status, \
             updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&id)
        .bind(business_id)
        .bind(position as i64)
        .bind(&step.key)
        .bind(&step.name)
        .bind(step.kind.as_str())
        .bind(PENDING)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    let created = load(&mut tx, business_id, &id)
        .await?
        .ok_or(EddError::NotFound)?;
    audit::record(
        &mut tx,
        business_id,
        EntityType::EddRequest,
        &id,
        "created",
        actor,
        now,
        &audit::created(&audited(&created)),
    )
    .await?;
    tx.commit().await?;
    Ok(created)
}

pub async fn fetch(
    pool: &sqlx::AnyPool,
    business_id: i64,
    id: &str,
) -> Result<Option<RequestView>, EddError> {
    let mut conn = pool.acquire().await?;
    load(&mut conn, business_id, id).await
}

/// List filters.
#[derive(Debug, Clone, Default)]
pub struct RequestFilter {
    pub status: Option<String>,
    pub unique_id: Option<String>,
    pub pipeline: Option<String>,
    pub limit: u32,
    pub cursor: Option<Cursor>,
}

/// A page of requests, newest first, and the next page's cursor.
pub async fn list(
    pool: &sqlx::AnyPool,
    business_id: i64,
    filter: &RequestFilter,
) -> Result<(Vec<RequestView>, Option<Cursor>), EddError> {
    let mut sql = format!("{COLUMNS} WHERE business_id = $1");
    let mut binds: Vec<&str> = Vec::new();
    let mut n = 2;
    for (column, value) in [
        ("status", &filter.status),
        ("unique_id", &filter.unique_id),
        ("pipeline", &filter.pipeline),
    ] {
        if let Some(value) = value {
            sql.push_str(&format!(" AND {column} = ${n}"));
            binds.push(value);
            n += 1;
        }
    }
    if filter.cursor.is_some() {
        after_cursor(&mut sql, n);
    }
    sql.push_str(&format!(
        " ORDER BY created_at_ms DESC, id DESC LIMIT {}",
        filter.limit + 1
    ));
    let mut query = sqlx::query(&sql).bind(business_id);
    for value in binds {
        query = query.bind(value);
    }
    if let Some(cursor) = &filter.cursor {
        query = query.bind(cursor.created_at_ms).bind(&cursor.id);
    }
    let mut conn = pool.acquire().await?;
    let rows = query.fetch_all(&mut *conn).await?;
    let mut requests = rows
        .iter()
        .map(request_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    let next = crate::store::page::finish_page(&mut requests, filter.limit as usize, |r| Cursor {
        created_at_ms: r.created_at_ms,
        id: r.id.clone(),
    });
    let mut views = Vec::with_capacity(requests.len());
    for request in requests {
        views.push(view(&mut conn, business_id, request).await?);
    }
    Ok((views, next))
}

/// Applies `action` to step `step_key` of request `id`.
#[allow(clippy::too_many_arguments)]
pub async fn act(
    pool: &sqlx::AnyPool,
    business_id: i64,
    id: &str,
    step_key: &str,
    action: StepAction,
    note: Option<&str>,
    actor: &Actor,
) -> Result<RequestView, EddError> {
    let now = now_ms();
    let mut tx = crate::store::begin_write(pool).await?;
    let touched = sqlx::query(
        "UPDATE edd_requests SET version = version + 1 WHERE business_id = $1 AND id = $2",
    )
    .bind(business_id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    if touched.rows_affected() == 0 {
        return Err(EddError::NotFound);
    }
    let before = load(&mut tx, business_id, id)
        .await?
        .ok_or(EddError::NotFound)?;
    if before.status == COMPLETED || before.status == REJECTED {
        return Err(EddError::Finished(before.status));
    }
    let Some(position) = before.steps.iter().position(|s| s.key == step_key) else {
        return Err(EddError::StepNotFound {
            step: step_key.to_owned(),
            known: before
                .steps
                .iter()
                .map(|s| s.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let step = &before.steps[position];
    let current = before.current_step.clone().unwrap_or_default();
    if step.key != current {
        return Err(EddError::NotCurrent {
            step: step.key.clone(),
            current,
        });
    }
    let kind = StepKind::parse(&step.kind).unwrap_or_default();
    match (kind, action) {
        (StepKind::Task, StepAction::Approve) => {
            return Err(EddError::WrongAction {
                action: action.as_str(),
                kind: kind.as_str(),
                step: step.key.clone(),
                allowed: "complete or fail",
            })
        }
        (StepKind::Approval, StepAction::Complete) => {
            return Err(EddError::WrongAction {
                action: action.as_str(),
                kind: kind.as_str(),
                step: step.key.clone(),
                allowed: "approve or fail",
            })
        }
        _ => {}
    }
    let last = position + 1 == before.steps.len();
    let request_status = match action {
        StepAction::Fail => REJECTED,
        _ if last => COMPLETED,
        _ => IN_PROGRESS,
    };
    sqlx::query(
        "UPDATE edd_steps SET status = $1, note = $2, user_id = $3, updated_at_ms = $4 \
         WHERE business_id = $5 AND request_id = $6 AND key = $7",
    )
    .bind(action.outcome())
    .bind(note)
    .bind(actor.user_id.as_deref())
    .bind(now)
    .bind(business_id)
    .bind(id)
    .bind(step_key)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE edd_requests SET status = $1, updated_at_ms = $2 WHERE business_id = $3 AND id = $4",
    )
    .bind(request_status)
    .bind(now)
    .bind(business_id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO edd_step_events (request_id, business_id, step_key, action, from_status, \
         to_status, request_status, note, user_id, actor_key, at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(id)
    .bind(business_id)
    .bind(step_key)
    .bind(action.as_str())
    .bind(&step.status)
    .bind(action.outcome())
    .bind(request_status)
    .bind(note)
    .bind(actor.user_id.as_deref())
    .bind(&actor.api_key)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let after = load(&mut tx, business_id, id)
        .await?
        .ok_or(EddError::NotFound)?;
    audit::record(
        &mut tx,
        business_id,
        EntityType::EddRequest,
        id,
        &format!("step-{}", action.as_str()),
        actor,
        now,
        &audit::diff(&audited(&before), &audited(&after)),
    )
    .await?;
    tx.commit().await?;
    Ok(after)
}

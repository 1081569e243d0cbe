//! Case persistence: reading cases into the spec's record, listing them, and every analyst
//! action as one database transaction (lock, check, change, log entry, audit entry, commit).
//!
//! Locking: an action's first statement bumps the case's `version`, which takes the row's write
//! lock (PostgreSQL) or the database's (SQLite) until commit, so two analysts acting on the same
//! case at once are serialised and the second sees the first's result before its checks run.

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use sqlx::any::AnyRow;
use sqlx::{Any, Row};

use super::analysts::{self, Directory};
use super::{CaseError, CaseRecord, CaseStatus, Comment, LogEntry, Priority, RecordRef, Task};
use crate::audit::{self, Actor, EntityType};
use crate::store::page::{after_cursor, Cursor};
use crate::store::{iso_time, new_id, now_ms, StoreError};

/// A case row (without its tasks, comments and log).
#[derive(Debug, Clone)]
pub struct CaseRow {
    pub id: String,
    pub module: String,
    pub record: Option<RecordRef>,
    pub subject_id: Option<String>,
    pub title: String,
    pub description: String,
    pub priority: String,
    pub status: CaseStatus,
    pub assigned_to: Option<String>,
    pub assigned_by: Option<String>,
    pub due_at_ms: Option<i64>,
    pub is_escalated: bool,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

const CASE_COLUMNS: &str = "SELECT id, module, record_id, record_type, record_name, subject_id, \
     title, description, priority, status, assigned_to, assigned_by, due_at_ms, is_escalated, \
     created_at_ms, updated_at_ms FROM cases";

fn case_from_row(row: &AnyRow) -> Result<CaseRow, StoreError> {
    let status: String = row.get(9);
    let status = CaseStatus::parse(&status)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown case status {status}")))?;
    let record_id: Option<String> = row.get(2);
    let escalated: i64 = row.get(13);
    Ok(CaseRow {
        id: row.get(0),
        module: row.get(1),
        record: record_id.map(|id| RecordRef {
            id,
            kind: row.get::<Option<String>, _>(3).unwrap_or_default(),
            name: row.get::<Option<String>, _>(4).unwrap_or_default(),
        }),
        subject_id: row.get(5),
        title: row.get(6),
        description: row.get(7),
        priority: row.get(8),
        status,
        assigned_to: row.get(10),
        assigned_by: row.get(11),
        due_at_ms: row.get(12),
        is_escalated: escalated != 0,
        created_at_ms: row.get(14),
        updated_at_ms: row.get(15),
    })
}

/// A case's tasks, comments, log and alerts, as stored.
#[derive(Debug, Default, Clone)]
struct Children {
    tasks: Vec<(String, String, bool)>,
    comments: Vec<StoredComment>,
    log: Vec<(String, String, String, String, i64)>,
    alerts: Vec<Value>,
}

#[derive(Debug, Clone)]
struct StoredComment {
    id: String,
    text: String,
    user_id: String,
    tagged: Vec<String>,
    attachments: Vec<String>,
    at_ms: i64,
}

fn placeholders(start: usize, count: usize) -> String {
    (start..start + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Loads the children of `ids` in four queries.
async fn children(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    ids: &[String],
) -> Result<HashMap<String, Children>, CaseError> {
    let mut out: HashMap<String, Children> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let list = placeholders(2, ids.len());
    let tasks_sql = format!(
        "SELECT case_id, id, text, done FROM case_tasks WHERE business_id = $1 \
         AND case_id IN ({list}) ORDER BY seq"
    );
    let mut query = sqlx::query(&tasks_sql).bind(business_id);
    for id in ids {
        query = query.bind(id);
    }
    for row in query.fetch_all(&mut *conn).await? {
        let done: i64 = row.get(3);
        out.entry(row.get(0))
            .or_default()
            .tasks
            .push((row.get(1), row.get(2), done != 0));
    }
    let comments_sql = format!(
        "SELECT case_id, id, text, user_id, tagged_users, attachments, created_at_ms \
         FROM case_comments WHERE business_id = $1 AND case_id IN ({list}) ORDER BY seq"
    );
    let mut query = sqlx::query(&comments_sql).bind(business_id);
    for id in ids {
        query = query.bind(id);
    }
    for row in query.fetch_all(&mut *conn).await? {
        let tagged: String = row.get(4);
        let attachments: String = row.get(5);
        out.entry(row.get(0))
            .or_default()
            .comments
            .push(StoredComment {
                id: row.get(1),
                text: row.get(2),
                user_id: row.get(3),
                tagged: serde_json::from_str(&tagged)
                    .map_err(|e| StoreError::Corrupt(format!("comment tagged users: {e}")))?,
                attachments: serde_json::from_str(&attachments)
                    .map_err(|e| StoreError::Corrupt(format!("comment attachments: {e}")))?,
                at_ms: row.get(6),
            });
    }
    let log_sql = format!(
        "SELECT case_id, id, status, message, user_id, created_at_ms FROM case_log \
         WHERE business_id = $1 AND case_id IN ({list}) ORDER BY seq"
    );
    let mut query = sqlx::query(&log_sql).bind(business_id);
    for id in ids {
        query = query.bind(id);
    }
    for row in query.fetch_all(&mut *conn).await? {
        out.entry(row.get(0)).or_default().log.push((
            row.get(1),
            row.get(2),
            row.get(3),
            row.get(4),
            row.get(5),
        ));
    }
    let alerts_sql = format!(
        "SELECT case_id, transaction_id, reference, action, risk_score, rules, created_at_ms \
         FROM case_alerts WHERE business_id = $1 AND case_id IN ({list}) ORDER BY seq"
    );
    let mut query = sqlx::query(&alerts_sql).bind(business_id);
    for id in ids {
        query = query.bind(id);
    }
    for row in query.fetch_all(&mut *conn).await? {
        let rules: String = row.get(5);
        let at: i64 = row.get(6);
        out.entry(row.get(0)).or_default().alerts.push(json!({
            "transactionId": row.get::<String, _>(1),
            "reference": row.get::<String, _>(2),
            "action": row.get::<String, _>(3),
            "riskScore": row.get::<String, _>(4),
            "rules": serde_json::from_str::<Value>(&rules).unwrap_or(Value::Null),
            "at": iso_time(at),
        }));
    }
    Ok(out)
}

fn render(row: &CaseRow, children: &Children, directory: &Directory, business: &str) -> CaseRecord {
    CaseRecord {
        id: row.id.clone(),
        business_profile: business.to_owned(),
        module: row.module.clone(),
        record: row.record.clone(),
        title: row.title.clone(),
        description: row.description.clone(),
        priority: row.priority.clone(),
        status: row.status.as_str().to_owned(),
        assigned_to: row.assigned_to.as_deref().map(|id| directory.user(id)),
        assigned_by: row.assigned_by.as_deref().map(|id| directory.user(id)),
        due_date: row.due_at_ms.map(iso_time),
        created_at: iso_time(row.created_at_ms),
        updated_at: iso_time(row.updated_at_ms),
        tasks: children
            .tasks
            .iter()
            .map(|(id, text, done)| Task {
                id: id.clone(),
                text: text.clone(),
                status: *done,
            })
            .collect(),
        comments: children
            .comments
            .iter()
            .map(|c| Comment {
                id: c.id.clone(),
                text: c.text.clone(),
                user: directory.user(&c.user_id),
                attachments: c.attachments.clone(),
                tagged_users: c.tagged.iter().map(|id| directory.user(id)).collect(),
                date: iso_time(c.at_ms),
            })
            .collect(),
        attachments: Vec::new(),
        is_escalated: row.is_escalated,
        log: children
            .log
            .iter()
            .map(|(id, status, message, user, at)| LogEntry {
                id: id.clone(),
                status: status.clone(),
                message: message.clone(),
                user: directory.user(user),
                date: iso_time(*at),
            })
            .collect(),
    }
}

/// The form of a case the audit trail diffs: its fields, tasks, comments and alerts keyed by id
/// (so a change names the one item it touched), without the log (itself a trail).
fn audited(row: &CaseRow, children: &Children) -> Value {
    let tasks: Map<String, Value> = children
        .tasks
        .iter()
        .map(|(id, text, done)| (id.clone(), json!({"text": text, "status": done})))
        .collect();
    let comments: Map<String, Value> = children
        .comments
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                json!({"text": c.text, "user": c.user_id, "taggedUsers": c.tagged,
                    "attachments": c.attachments}),
            )
        })
        .collect();
    let alerts: Map<String, Value> = children
        .alerts
        .iter()
        .map(|a| {
            (
                a["transactionId"].as_str().unwrap_or("").to_owned(),
                a.clone(),
            )
        })
        .collect();
    json!({
        "module": row.module, "record": row.record, "title": row.title,
        "description": row.description, "priority": row.priority,
        "status": row.status.as_str(), "assignedTo": row.assigned_to,
        "assignedBy": row.assigned_by, "dueDate": row.due_at_ms.map(iso_time),
        "isEscalated": row.is_escalated, "tasks": tasks, "comments": comments, "alerts": alerts,
    })
}

async fn case_row(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    id: &str,
) -> Result<Option<CaseRow>, CaseError> {
    let sql = format!("{CASE_COLUMNS} WHERE business_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(business_id)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.as_ref().map(case_from_row).transpose()?)
}

async fn load(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    id: &str,
) -> Result<Option<(CaseRow, Children)>, CaseError> {
    let Some(row) = case_row(conn, business_id, id).await? else {
        return Ok(None);
    };
    let mut children = children(conn, business_id, std::slice::from_ref(&row.id)).await?;
    let mine = children.remove(&row.id).unwrap_or_default();
    Ok(Some((row, mine)))
}

/// One of the business's cases.
pub async fn fetch(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
) -> Result<Option<CaseRecord>, CaseError> {
    let mut conn = pool.acquire().await?;
    let Some((row, children)) = load(&mut conn, business_id, id).await? else {
        return Ok(None);
    };
    let directory = analysts::directory(&mut conn, business_id).await?;
    Ok(Some(render(&row, &children, &directory, business)))
}

/// Who a list is restricted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssigneeFilter {
    Unassigned,
    Analyst(String),
}

/// List filters; all optional.
#[derive(Debug, Clone, Default)]
pub struct CaseFilter {
    pub status: Option<CaseStatus>,
    pub priority: Option<Priority>,
    pub assignee: Option<AssigneeFilter>,
    pub module: Option<String>,
    /// Created at or after (ms).
    pub from_ms: Option<i64>,
    /// Created at or before (ms).
    pub to_ms: Option<i64>,
    pub limit: u32,
    pub cursor: Option<Cursor>,
}

/// A page of the business's cases, newest first, and the cursor of the next page.
pub async fn list(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    filter: &CaseFilter,
) -> Result<(Vec<CaseRecord>, Option<Cursor>), CaseError> {
    let mut sql = format!("{CASE_COLUMNS} WHERE business_id = $1");
    let mut n = 2;
    let mut texts: Vec<String> = Vec::new();
    let mut numbers: Vec<(usize, i64)> = Vec::new();
    let mut push_text = |sql: &mut String, n: &mut usize, clause: &str, value: String| {
        sql.push_str(&clause.replace('?', &format!("${n}")));
        texts.push(value);
        *n += 1;
    };
    if let Some(status) = filter.status {
        push_text(&mut sql, &mut n, " AND status = ?", status.as_str().into());
    }
    if let Some(priority) = filter.priority {
        push_text(
            &mut sql,
            &mut n,
            " AND priority = ?",
            priority.as_str().into(),
        );
    }
    if let Some(module) = &filter.module {
        push_text(&mut sql, &mut n, " AND module = ?", module.clone());
    }
    match &filter.assignee {
        Some(AssigneeFilter::Unassigned) => sql.push_str(" AND assigned_to IS NULL"),
        Some(AssigneeFilter::Analyst(id)) => {
            push_text(&mut sql, &mut n, " AND assigned_to = ?", id.clone())
        }
        None => {}
    }
    // Text binds come first, in order; the numeric ones follow with their own placeholders.
    if let Some(from) = filter.from_ms {
        sql.push_str(&format!(" AND created_at_ms >= ${n}"));
        numbers.push((n, from));
        n += 1;
    }
    if let Some(to) = filter.to_ms {
        sql.push_str(&format!(" AND created_at_ms <= ${n}"));
        numbers.push((n, to));
        n += 1;
    }
    if filter.cursor.is_some() {
        after_cursor(&mut sql, n);
    }
    sql.push_str(&format!(
        " ORDER BY created_at_ms DESC, id DESC LIMIT {}",
        filter.limit + 1
    ));
    let mut query = sqlx::query(&sql).bind(business_id);
    for text in &texts {
        query = query.bind(text);
    }
    for (_, number) in &numbers {
        query = query.bind(*number);
    }
    if let Some(cursor) = &filter.cursor {
        query = query.bind(cursor.created_at_ms).bind(&cursor.id);
    }
    let mut conn = pool.acquire().await?;
    let rows = query.fetch_all(&mut *conn).await?;
    let mut cases = rows
        .iter()
        .map(case_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    let next = crate::store::page::finish_page(&mut cases, filter.limit as usize, |c| Cursor {
        created_at_ms: c.created_at_ms,
        id: c.id.clone(),
    });
    let ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    let mut kids = children(&mut conn, business_id, &ids).await?;
    let directory = analysts::directory(&mut conn, business_id).await?;
    let records = cases
        .iter()
        .map(|row| {
            let mine = kids.remove(&row.id).unwrap_or_default();
            render(row, &mine, &directory, business)
        })
        .collect();
    Ok((records, next))
}

/// Appends a case log entry.
#[allow(clippy::too_many_arguments)]
pub(super) async fn log_entry(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    case_id: &str,
    status: CaseStatus,
    message: &str,
    user_id: &str,
    at_ms: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO case_log (id, case_id, business_id, status, message, user_id, \
         created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(new_id())
    .bind(case_id)
    .bind(business_id)
    .bind(status.as_str())
    .bind(message)
    .bind(user_id)
    .bind(at_ms)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A manual case.
#[derive(Debug, Clone)]
pub struct NewCase {
    pub module: String,
    pub record: Option<RecordRef>,
    pub title: String,
    pub description: String,
    pub priority: Priority,
    pub assignee: Option<String>,
    pub due_at_ms: Option<i64>,
}

/// The acting analyst of an action (every case action names one).
fn acting(actor: &Actor) -> &str {
    actor.user_id.as_deref().unwrap_or(crate::audit::SYSTEM)
}

/// Creates a manual case (status open, log "Case created").
pub async fn create(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    new: NewCase,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let now = now_ms();
    let id = new_id();
    let mut tx = crate::store::begin_write(pool).await?;
    let directory = analysts::directory(&mut tx, business_id).await?;
    let user = directory.active("userId", acting(actor))?;
    if let Some(assignee) = &new.assignee {
        directory.active("assigneeId", assignee)?;
    }
    sqlx::query(
        "INSERT INTO cases (id, business_id, module, record_id, record_type, record_name, \
         subject_id, title, description, priority, status, assigned_to, assigned_by, due_at_ms, \
         is_escalated, version, created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9, 'open', $10, $11, $12, 0, 0, $13, $13)",
    )
    .bind(&id)
    .bind(business_id)
    .bind(&new.module)
    .bind(new.record.as_ref().map(|r| r.id.clone()))
    .bind(new.record.as_ref().map(|r| r.kind.clone()))
    .bind(new.record.as_ref().map(|r| r.name.clone()))
    .bind(&new.title)
    .bind(&new.description)
    .bind(new.priority.as_str())
    .bind(new.assignee.as_deref())
    .bind(new.assignee.as_ref().map(|_| user.id.clone()))
    .bind(new.due_at_ms)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    log_entry(
        &mut tx,
        business_id,
        &id,
        CaseStatus::Open,
        "Case created",
        &user.id,
        now,
    )
    .await?;
    let (row, children) = load(&mut tx, business_id, &id)
        .await?
        .ok_or(CaseError::NotFound)?;
    audit::record(
        &mut tx,
        business_id,
        EntityType::Case,
        &id,
        "created",
        actor,
        now,
        &audit::created(&audited(&row, &children)),
    )
    .await?;
    tx.commit().await?;
    Ok(render(&row, &children, &directory, business))
}

/// A case locked for one action.
struct Locked<'c> {
    tx: sqlx::Transaction<'c, Any>,
    business_id: i64,
    row: CaseRow,
    children: Children,
    directory: Directory,
    /// The acting analyst's id.
    user: String,
    now: i64,
}

async fn lock<'c>(
    pool: &'c sqlx::AnyPool,
    business_id: i64,
    id: &str,
    actor: &Actor,
) -> Result<Locked<'c>, CaseError> {
    let mut tx = crate::store::begin_write(pool).await?;
    let touched =
        sqlx::query("UPDATE cases SET version = version + 1 WHERE business_id = $1 AND id = $2")
            .bind(business_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    if touched.rows_affected() == 0 {
        return Err(CaseError::NotFound);
    }
    let (row, children) = load(&mut tx, business_id, id)
        .await?
        .ok_or(CaseError::NotFound)?;
    let directory = analysts::directory(&mut tx, business_id).await?;
    let user = directory.active("userId", acting(actor))?.id;
    Ok(Locked {
        tx,
        business_id,
        row,
        children,
        directory,
        user,
        now: now_ms(),
    })
}

impl Locked<'_> {
    fn refuse_closed(&self) -> Result<(), CaseError> {
        if self.row.status == CaseStatus::Closed {
            return Err(CaseError::Inactive(self.row.status.as_str()));
        }
        Ok(())
    }

    async fn log(&mut self, status: CaseStatus, message: &str) -> Result<(), CaseError> {
        log_entry(
            &mut self.tx,
            self.business_id,
            &self.row.id,
            status,
            message,
            &self.user,
            self.now,
        )
        .await?;
        Ok(())
    }

    /// Stamps `updated_at`, audits the difference, commits and renders the result.
    async fn finish(
        mut self,
        business: &str,
        action: &str,
        actor: &Actor,
    ) -> Result<CaseRecord, CaseError> {
        let business_id = self.business_id;
        sqlx::query("UPDATE cases SET updated_at_ms = $1 WHERE business_id = $2 AND id = $3")
            .bind(self.now)
            .bind(business_id)
            .bind(&self.row.id)
            .execute(&mut *self.tx)
            .await?;
        let before = audited(&self.row, &self.children);
        let (row, children) = load(&mut self.tx, business_id, &self.row.id)
            .await?
            .ok_or(CaseError::NotFound)?;
        let changes = audit::diff(&before, &audited(&row, &children));
        audit::record(
            &mut self.tx,
            business_id,
            EntityType::Case,
            &row.id,
            action,
            actor,
            self.now,
            &changes,
        )
        .await?;
        self.tx.commit().await?;
        Ok(render(&row, &children, &self.directory, business))
    }
}

/// Moves a case to `to` (log "Status updated to …").
pub async fn set_status(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    to: CaseStatus,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    let from = locked.row.status;
    if !from.allowed_next().contains(&to) {
        return Err(CaseError::InvalidTransition {
            from: from.as_str(),
            to: to.as_str(),
            allowed: from
                .allowed_next()
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    if to.is_active() {
        if let Some(subject) = locked.row.subject_id.clone() {
            let other: Option<String> = sqlx::query_scalar(
                "SELECT id FROM cases WHERE business_id = $1 AND module = $2 AND subject_id = $3 \
                 AND status IN ('open', 'in progress') AND id <> $4",
            )
            .bind(business_id)
            .bind(&locked.row.module)
            .bind(&subject)
            .bind(id)
            .fetch_optional(&mut *locked.tx)
            .await?;
            if let Some(other) = other {
                return Err(CaseError::OpenCaseExists(other));
            }
        }
    }
    sqlx::query("UPDATE cases SET status = $1 WHERE business_id = $2 AND id = $3")
        .bind(to.as_str())
        .bind(business_id)
        .bind(id)
        .execute(&mut *locked.tx)
        .await
        .map_err(|error| {
            // Another instance opened a case for the same user between the check and this write.
            if crate::store::is_unique_violation(&error) {
                CaseError::OpenCaseExists("opened concurrently".to_owned())
            } else {
                CaseError::from(error)
            }
        })?;
    locked
        .log(to, &format!("Status updated to {}", to.as_str()))
        .await?;
    locked.finish(business, "status-updated", actor).await
}

/// Flags an open or in-progress case as escalated (log "Case escalated").
pub async fn escalate(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    reason: Option<&str>,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    let status = locked.row.status;
    if !status.is_active() {
        return Err(CaseError::Inactive(status.as_str()));
    }
    if locked.row.is_escalated {
        return Err(CaseError::AlreadyEscalated);
    }
    sqlx::query("UPDATE cases SET is_escalated = 1 WHERE business_id = $1 AND id = $2")
        .bind(business_id)
        .bind(id)
        .execute(&mut *locked.tx)
        .await?;
    let message = match reason {
        Some(reason) => format!("Case escalated: {reason}"),
        None => "Case escalated".to_owned(),
    };
    locked.log(status, &message).await?;
    locked.finish(business, "escalated", actor).await
}

/// Assigns a case (log "Case assigned to First Last"), optionally setting its due date.
pub async fn assign(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    assignee: &str,
    due_at_ms: Option<i64>,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    locked.refuse_closed()?;
    let target = locked.directory.active("assigneeId", assignee)?;
    sqlx::query(
        "UPDATE cases SET assigned_to = $1, assigned_by = $2, \
         due_at_ms = COALESCE($3, due_at_ms) WHERE business_id = $4 AND id = $5",
    )
    .bind(&target.id)
    .bind(&locked.user)
    .bind(due_at_ms)
    .bind(business_id)
    .bind(id)
    .execute(&mut *locked.tx)
    .await?;
    let status = locked.row.status;
    locked
        .log(
            status,
            &format!(
                "Case assigned to {} {}",
                target.first_name, target.last_name
            ),
        )
        .await?;
    locked.finish(business, "assigned", actor).await
}

/// Adds a comment (log "Comment added").
#[allow(clippy::too_many_arguments)]
pub async fn comment(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    text: &str,
    tagged: &[String],
    attachments: &[String],
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    locked.refuse_closed()?;
    for (i, user) in tagged.iter().enumerate() {
        locked
            .directory
            .active(&format!("taggedUsers[{i}]"), user)?;
    }
    sqlx::query(
        "INSERT INTO case_comments (id, case_id, business_id, text, user_id, tagged_users, \
         attachments, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(new_id())
    .bind(id)
    .bind(business_id)
    .bind(text)
    .bind(&locked.user)
    .bind(serde_json::to_string(tagged).unwrap_or_else(|_| "[]".into()))
    .bind(serde_json::to_string(attachments).unwrap_or_else(|_| "[]".into()))
    .bind(locked.now)
    .execute(&mut *locked.tx)
    .await?;
    let status = locked.row.status;
    locked.log(status, "Comment added").await?;
    locked.finish(business, "commented", actor).await
}

/// Adds a task (log "Task added: …").
pub async fn add_task(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    text: &str,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    locked.refuse_closed()?;
    sqlx::query(
        "INSERT INTO case_tasks (id, case_id, business_id, text, done, created_by, \
         created_at_ms) VALUES ($1, $2, $3, $4, 0, $5, $6)",
    )
    .bind(new_id())
    .bind(id)
    .bind(business_id)
    .bind(text)
    .bind(&locked.user)
    .bind(locked.now)
    .execute(&mut *locked.tx)
    .await?;
    let status = locked.row.status;
    locked.log(status, &format!("Task added: {text}")).await?;
    locked.finish(business, "task-added", actor).await
}

/// Completes a task (log "Task completed: …").
pub async fn complete_task(
    pool: &sqlx::AnyPool,
    business_id: i64,
    business: &str,
    id: &str,
    task_id: &str,
    actor: &Actor,
) -> Result<CaseRecord, CaseError> {
    let mut locked = lock(pool, business_id, id, actor).await?;
    locked.refuse_closed()?;
    let Some((_, text, done)) = locked
        .children
        .tasks
        .iter()
        .find(|(task, _, _)| task == task_id)
        .cloned()
    else {
        return Err(CaseError::TaskNotFound);
    };
    if done {
        return Err(CaseError::TaskDone);
    }
    sqlx::query(
        "UPDATE case_tasks SET done = 1, completed_by = $1, completed_at_ms = $2 \
         WHERE business_id = $3 AND case_id = $4 AND id = $5",
    )
    .bind(&locked.user)
    .bind(locked.now)
    .bind(business_id)
    .bind(id)
    .bind(task_id)
    .execute(&mut *locked.tx)
    .await?;
    let status = locked.row.status;
    locked
        .log(status, &format!("Task completed: {text}"))
        .await?;
    locked.finish(business, "task-completed", actor).await
}

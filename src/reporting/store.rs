//! Reporting persistence: per-business client configuration, reports and their items. Every
//! write is one transaction, committed before it is answered; every query is scoped to the
//! business.

use serde::Serialize;
use sqlx::Row;

use super::client::ClientAuth;
use super::goaml::ReportingEntity;
use crate::store::{iso_time, new_id, now_ms, StoreError};

/// A business's reporting configuration as stored.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub client_url: String,
    pub auth: ClientAuth,
    pub entity: Option<ReportingEntity>,
    pub updated_at_ms: i64,
}

fn corrupt(what: &str) -> impl Fn(serde_json::Error) -> StoreError + '_ {
    move |e| StoreError::Corrupt(format!("{what}: {e}"))
}

pub async fn save_config(
    pool: &sqlx::AnyPool,
    business_id: i64,
    config: &ClientConfig,
) -> Result<(), StoreError> {
    let auth = serde_json::to_string(&config.auth).map_err(corrupt("reporting auth"))?;
    let entity = serde_json::to_string(&config.entity).map_err(corrupt("reporting entity"))?;
    sqlx::query(
        "INSERT INTO reporting_configs (business_id, client_url, auth, entity, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (business_id) DO UPDATE SET \
         client_url = excluded.client_url, auth = excluded.auth, entity = excluded.entity, \
         updated_at_ms = excluded.updated_at_ms",
    )
    .bind(business_id)
    .bind(&config.client_url)
    .bind(auth)
    .bind(entity)
    .bind(config.updated_at_ms)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn config(
    pool: &sqlx::AnyPool,
    business_id: i64,
) -> Result<Option<ClientConfig>, StoreError> {
    let row = sqlx::query(
        "SELECT client_url, auth, entity, updated_at_ms FROM reporting_configs WHERE business_id = $1",
    )
    .bind(business_id)
    .fetch_optional(pool)
    .await?;
    row.map(|row| {
        let auth: String = row.get(1);
        let entity: String = row.get(2);
        Ok(ClientConfig {
            client_url: row.get(0),
            auth: serde_json::from_str(&auth).map_err(corrupt("reporting auth"))?,
            entity: serde_json::from_str(&entity).map_err(corrupt("reporting entity"))?,
            updated_at_ms: row.get(3),
        })
    })
    .transpose()
}

/// Creates a report with its items (status `pending`); answers its id.
pub async fn create_report(
    pool: &sqlx::AnyPool,
    business_id: i64,
    report_type: &str,
    source: &str,
    ids: &[String],
    created_by: &str,
) -> Result<String, StoreError> {
    let id = new_id();
    let now = now_ms();
    let mut tx = crate::store::begin_write(pool).await?;
    sqlx::query(
        "INSERT INTO reports (id, business_id, report_type, source, status, total, created_by, \
         created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $7)",
    )
    .bind(&id)
    .bind(business_id)
    .bind(report_type)
    .bind(source)
    .bind(ids.len() as i64)
    .bind(created_by)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    for (position, transaction_id) in ids.iter().enumerate() {
        sqlx::query(
            "INSERT INTO report_items (report_id, business_id, position, transaction_id, status, \
             attempts, updated_at_ms) VALUES ($1, $2, $3, $4, 'pending', 0, $5)",
        )
        .bind(&id)
        .bind(business_id)
        .bind(position as i64)
        .bind(transaction_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(id)
}

pub async fn set_status(
    pool: &sqlx::AnyPool,
    report_id: &str,
    status: &str,
    error: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE reports SET status = $1, error = $2, updated_at_ms = $3 WHERE id = $4")
        .bind(status)
        .bind(error)
        .bind(now_ms())
        .bind(report_id)
        .execute(pool)
        .await?;
    Ok(())
}

/// An item's outcome: the record (as JSON) or the reason it failed.
pub type ItemOutcome = Result<String, String>;

/// Writes one batch's outcomes in one transaction.
pub async fn record_batch(
    pool: &sqlx::AnyPool,
    report_id: &str,
    outcomes: &[(String, ItemOutcome)],
    attempts: u32,
) -> Result<(), StoreError> {
    let now = now_ms();
    let mut tx = crate::store::begin_write(pool).await?;
    for (transaction_id, outcome) in outcomes {
        let (status, record, error) = match outcome {
            Ok(record) => ("fetched", Some(record.as_str()), None),
            Err(reason) => ("failed", None, Some(reason.as_str())),
        };
        sqlx::query(
            "UPDATE report_items SET status = $1, record = $2, error = $3, attempts = $4, \
             updated_at_ms = $5 WHERE report_id = $6 AND transaction_id = $7",
        )
        .bind(status)
        .bind(record)
        .bind(error)
        .bind(i64::from(attempts))
        .bind(now)
        .bind(report_id)
        .bind(transaction_id)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE reports SET updated_at_ms = $1 WHERE id = $2")
        .bind(now)
        .bind(report_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The IDs still to fetch, in file order.
pub async fn pending_ids(pool: &sqlx::AnyPool, report_id: &str) -> Result<Vec<String>, StoreError> {
    let rows = sqlx::query(
        "SELECT transaction_id FROM report_items WHERE report_id = $1 AND status = 'pending' \
         ORDER BY position",
    )
    .bind(report_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| r.get(0)).collect())
}

/// The fetched records, in file order.
pub async fn fetched(pool: &sqlx::AnyPool, report_id: &str) -> Result<Vec<String>, StoreError> {
    let rows = sqlx::query(
        "SELECT record FROM report_items WHERE report_id = $1 AND status = 'fetched' \
         ORDER BY position",
    )
    .bind(report_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| r.get(0)).collect())
}

pub async fn save_xml(pool: &sqlx::AnyPool, report_id: &str, xml: &str) -> Result<(), StoreError> {
    let now = now_ms();
    sqlx::query(
        "UPDATE reports SET status = 'built', xml = $1, error = NULL, updated_at_ms = $2, \
         built_at_ms = $2 WHERE id = $3",
    )
    .bind(xml)
    .bind(now)
    .bind(report_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Reports not finished (pending or fetching), oldest first: resumed at start.
pub async fn unfinished(pool: &sqlx::AnyPool) -> Result<Vec<(String, i64)>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, business_id FROM reports WHERE status IN ('pending', 'fetching') ORDER BY seq",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// One ID that could not be reported, and why.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemFailure {
    pub transaction_id: String,
    pub reason: String,
}

/// A report as `GET /api/v1/reporting/reports/{reportId}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportView {
    pub report_id: String,
    /// goAML report code: STR, SAR, CTR, …
    #[schema(example = "STR")]
    pub report_type: String,
    /// `upload` (a CSV file) or `rules` (transactions rules marked reportable).
    #[schema(example = "upload")]
    pub source: String,
    /// `pending`, `fetching`, `built` or `failed`.
    #[schema(example = "built")]
    pub status: String,
    /// IDs in the report request.
    pub total: i64,
    /// IDs whose records were fetched (and are in the XML once built).
    pub fetched: i64,
    /// IDs still to fetch.
    pub pending: i64,
    /// IDs that failed, each with its reason.
    pub failures: Vec<ItemFailure>,
    /// Why the report as a whole failed, if it did.
    pub error: Option<String>,
    /// Where the XML is served once built.
    pub xml_url: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub built_at: Option<String>,
}

const REPORT_COLUMNS: &str = "SELECT id, report_type, source, status, total, error, \
    created_at_ms, updated_at_ms, built_at_ms FROM reports";

async fn view_of(pool: &sqlx::AnyPool, row: sqlx::any::AnyRow) -> Result<ReportView, StoreError> {
    let id: String = row.get(0);
    let items = sqlx::query(
        "SELECT transaction_id, status, error FROM report_items WHERE report_id = $1 ORDER BY position",
    )
    .bind(&id)
    .fetch_all(pool)
    .await?;
    let mut fetched = 0;
    let mut pending = 0;
    let mut failures = Vec::new();
    for item in items {
        let status: String = item.get(1);
        match status.as_str() {
            "fetched" => fetched += 1,
            "pending" => pending += 1,
            _ => failures.push(ItemFailure {
                transaction_id: item.get(0),
                reason: item.get::<Option<String>, _>(2).unwrap_or_default(),
            }),
        }
    }
    let status: String = row.get(3);
    let built: Option<i64> = row.get(8);
    Ok(ReportView {
        xml_url: (status == "built").then(|| format!("/api/v1/reporting/reports/{id}/goaml.xml")),
        report_id: id,
        report_type: row.get(1),
        source: row.get(2),
        status,
        total: row.get(4),
        fetched,
        pending,
        failures,
        error: row.get(5),
        created_at: iso_time(row.get(6)),
        updated_at: iso_time(row.get(7)),
        built_at: built.map(iso_time),
    })
}

pub async fn report(
    pool: &sqlx::AnyPool,
    business_id: i64,
    report_id: &str,
) -> Result<Option<ReportView>, StoreError> {
    let sql = format!("{REPORT_COLUMNS} WHERE business_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(business_id)
        .bind(report_id)
        .fetch_optional(pool)
        .await?;
    match row {
        Some(row) => Ok(Some(view_of(pool, row).await?)),
        None => Ok(None),
    }
}

pub async fn reports(
    pool: &sqlx::AnyPool,
    business_id: i64,
    limit: i64,
) -> Result<Vec<ReportView>, StoreError> {
    let sql = format!("{REPORT_COLUMNS} WHERE business_id = $1 ORDER BY seq DESC LIMIT $2");
    let rows = sqlx::query(&sql)
        .bind(business_id)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(view_of(pool, row).await?);
    }
    Ok(out)
}

/// The report's XML and status (scoped to the business).
pub async fn xml(
    pool: &sqlx::AnyPool,
    business_id: i64,
    report_id: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    let row = sqlx::query("SELECT status, xml FROM reports WHERE business_id = $1 AND id = $2")
        .bind(business_id)
        .bind(report_id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// References of the business's decided transactions in `[from, to)` (event time) whose decision
/// has an active rule hit marked `reportable = code`, not yet in a `rules` report of that code;
/// oldest first, at most `limit + 1` (to tell whether more remain).
pub async fn reportable(
    pool: &sqlx::AnyPool,
    business_id: i64,
    code: &str,
    from_ms: i64,
    to_ms: i64,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let marker = format!("%\"reportable\":\"{code}\"%");
    let rows = sqlx::query(
        "SELECT t.reference, t.decision FROM transactions t WHERE t.business_id = $1 \
         AND t.status = 'decided' AND t.event_time_ms >= $2 AND t.event_time_ms < $3 \
         AND t.decision LIKE $4 AND NOT EXISTS (SELECT 1 FROM report_items i \
         JOIN reports r ON r.id = i.report_id WHERE r.business_id = $1 AND r.source = 'rules' \
         AND r.report_type = $5 AND i.transaction_id = t.reference) \
         ORDER BY t.event_time_ms, t.seq",
    )
    .bind(business_id)
    .bind(from_ms)
    .bind(to_ms)
    .bind(&marker)
    .bind(code)
    .fetch_all(pool)
    .await?;
    let mut out = Vec::new();
    for row in rows {
        let decision: Option<String> = row.get(1);
        let Some(decision) = decision else { continue };
        let decision: serde_json::Value =
            serde_json::from_str(&decision).map_err(corrupt("stored decision"))?;
        let marked = decision["rules"].as_array().is_some_and(|rules| {
            rules
                .iter()
                .any(|r| r["reportable"] == code && r["mode"] == "active")
        });
        if marked {
            out.push(row.get(0));
            if out.len() > limit {
                break;
            }
        }
    }
    Ok(out)
}

/// Business names by id (the reporting entity placeholder names the business).
pub async fn business_names(
    pool: &sqlx::AnyPool,
) -> Result<std::collections::HashMap<i64, String>, StoreError> {
    let rows = sqlx::query("SELECT id, name FROM businesses")
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

//! Asynchronous AML: sanction and adverse-media requests answered through the webhook, and
//! risk-monitoring checks that keep watching.
//!
//! Data flow:
//! - `POST /api/v1/aml/sanction` and `POST /api/v1/adverse-media` store a request record
//!   (`aml_requests`, status `pending`) and answer with it; the request processor
//!   ([`Aml::spawn`]) screens the name (the same index and matcher as the instant endpoints) or
//!   searches the adverse-media index, and in one database transaction marks the request
//!   `completed` with its result and puts the result in the webhook outbox. Requests still
//!   pending at start-up (a crash or stop in between) are processed again.
//! - `POST /api/v1/aml/risk-monitoring` checks the `callbackUrl` (SSRF), screens the name against
//!   the sanction and PEP lists and the adverse-media index, and in one transaction registers the
//!   check (`risk_checks`, with the hits it reported) and queues the spec 2.4 risk-monitoring
//!   result for the callback URL; then it answers `{checkId}`.
//! - The check stays registered. Whenever the screening lists are swapped (a reload), articles are
//!   ingested (API, or `vigil media import` seen through the index's generation), every active
//!   check runs again; a check that finds a hit it had not reported before queues the full result
//!   again (with `newResults` naming what is new) and records the hits as reported — the update is
//!   conditional on the reported set it read, so two instances never report the same hit twice.

pub mod api;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sqlx::Row;
use thiserror::Error;
use tokio::sync::{mpsc, Notify};

use crate::media::{search as media_search, MediaConfig, MediaError, MediaIndex};
use crate::screening::entity::ListKind;
use crate::screening::index::ScreenQuery;
use crate::screening::manager::ListsManager;
use crate::store::{iso_time, now_ms, Store, StoreError};
use crate::webhooks::{self, event, NewDelivery, Webhooks};

/// `[monitoring]`: how often risk-monitoring checks look for articles written by another process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MonitoringConfig {
    /// Seconds between looks at the adverse-media index for commits made by `vigil media import`
    /// (list reloads and API ingestion trigger re-checks at once).
    pub media_poll_secs: u64,
}

impl Default for MonitoringConfig {
    fn default() -> Self {
        MonitoringConfig {
            media_poll_secs: 30,
        }
    }
}

impl MonitoringConfig {
    pub fn problems(&self) -> Vec<(String, String)> {
        if self.media_poll_secs == 0 {
            vec![(
                "monitoring.media_poll_secs".to_owned(),
                "must be at least 1".to_owned(),
            )]
        } else {
            Vec::new()
        }
    }
}

#[derive(Debug, Error)]
pub enum AmlError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Media(#[from] MediaError),
    #[error("corrupt stored request: {0}")]
    Corrupt(String),
    #[error("background work failed: {0}")]
    Join(String),
}

impl From<sqlx::Error> for AmlError {
    fn from(error: sqlx::Error) -> Self {
        AmlError::Store(StoreError::Database(error))
    }
}

/// The request kinds of `aml_requests`.
pub const SANCTION: &str = "sanction";
pub const ADVERSE_MEDIA: &str = "adverse-media";

/// Parameters of a sanction request (stored as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SanctionParams {
    pub threshold: f32,
    pub country: Option<String>,
}

/// Parameters of an adverse-media request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MediaParams {
    pub limit: usize,
}

/// Parameters of a risk-monitoring check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckParams {
    pub threshold: f32,
    pub limit: usize,
}

/// Most list matches a sanction request or a check section reports.
pub const MAX_MATCHES: usize = 100;

/// The asynchronous AML service: what the handlers and the background tasks share.
pub struct Aml {
    pub store: Store,
    pub screening: Arc<ListsManager>,
    pub media: Arc<MediaIndex>,
    pub media_config: MediaConfig,
    pub config: MonitoringConfig,
    pub webhooks: Webhooks,
    requests: mpsc::UnboundedSender<String>,
    queue: std::sync::Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    ingested: Notify,
}

/// A stored async request.
#[derive(Debug, Clone)]
pub struct RequestRecord {
    pub id: String,
    pub business_id: i64,
    pub business: String,
    pub kind: String,
    pub query: String,
    pub params: String,
    pub status: String,
    pub result: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl RequestRecord {
    /// The spec 2.8 record (sanction requests carry no status there; Vigil adds it on reads).
    pub fn json(&self, with_status: bool, with_result: bool) -> Value {
        let mut record = json!({
            "id": self.id,
            "query": self.query,
            "businessProfile": self.business,
            "createdAt": iso_time(self.created_at_ms),
            "updatedAt": iso_time(self.updated_at_ms),
        });
        if with_status {
            record["status"] = Value::from(self.status.as_str());
        }
        if with_result {
            record["result"] = self
                .result
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
                .unwrap_or(Value::Null);
        }
        record
    }
}

/// A stored risk-monitoring check.
#[derive(Debug, Clone)]
pub struct CheckRecord {
    pub id: String,
    pub business_id: i64,
    pub name: String,
    pub params: CheckParams,
    pub callback_url: String,
    pub status: String,
    pub created_by: String,
    pub reported: BTreeSet<String>,
    pub reported_text: String,
    pub last_screened_at_ms: i64,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl CheckRecord {
    pub fn json(&self) -> Value {
        json!({
            "checkId": self.id,
            "name": self.name,
            "threshold": self.params.threshold,
            "limit": self.params.limit,
            "callbackUrl": self.callback_url,
            "status": self.status,
            "createdBy": self.created_by,
            "reported": self.reported,
            "lastScreenedAt": iso_time(self.last_screened_at_ms),
            "createdAt": iso_time(self.created_at_ms),
            "updatedAt": iso_time(self.updated_at_ms),
        })
    }
}

const REQUEST_COLUMNS: &str = "SELECT r.id, r.business_id, b.name, r.kind, r.query, r.params, \
    r.status, r.result, r.created_at_ms, r.updated_at_ms FROM aml_requests r \
    JOIN businesses b ON b.id = r.business_id";

fn request_from(row: sqlx::any::AnyRow) -> RequestRecord {
    RequestRecord {
        id: row.get(0),
        business_id: row.get(1),
        business: row.get(2),
        kind: row.get(3),
        query: row.get(4),
        params: row.get(5),
        status: row.get(6),
        result: row.get(7),
        created_at_ms: row.get(8),
        updated_at_ms: row.get(9),
    }
}

const CHECK_COLUMNS: &str = "SELECT id, business_id, name, params, callback_url, status, \
    created_by, reported, last_screened_at_ms, created_at_ms, updated_at_ms FROM risk_checks";

fn check_from(row: sqlx::any::AnyRow) -> Result<CheckRecord, AmlError> {
    let params: String = row.get(3);
    let reported_text: String = row.get(7);
    Ok(CheckRecord {
        id: row.get(0),
        business_id: row.get(1),
        name: row.get(2),
        params: serde_json::from_str(&params).map_err(|e| AmlError::Corrupt(e.to_string()))?,
        callback_url: row.get(4),
        status: row.get(5),
        created_by: row.get(6),
        reported: serde_json::from_str(&reported_text)
            .map_err(|e| AmlError::Corrupt(e.to_string()))?,
        reported_text,
        last_screened_at_ms: row.get(8),
        created_at_ms: row.get(9),
        updated_at_ms: row.get(10),
    })
}

/// A risk-monitoring result and the hits it contains.
pub struct CheckResult {
    pub body: Value,
    pub hits: BTreeSet<String>,
}

impl Aml {
    pub fn new(
        store: Store,
        screening: Arc<ListsManager>,
        media: Arc<MediaIndex>,
        media_config: MediaConfig,
        config: MonitoringConfig,
        webhooks: Webhooks,
    ) -> Arc<Aml> {
        let (requests, queue) = mpsc::unbounded_channel();
        Arc::new(Aml {
            store,
            screening,
            media,
            media_config,
            config,
            webhooks,
            requests,
            queue: std::sync::Mutex::new(Some(queue)),
            ingested: Notify::new(),
        })
    }

    // ---- requests ------------------------------------------------------------------------

    /// Stores a new pending request; answers it. The caller then calls [`Aml::submit`].
    pub async fn create_request(
        &self,
        business_id: i64,
        kind: &str,
        query: &str,
        params: &str,
    ) -> Result<RequestRecord, AmlError> {
        let id = crate::store::new_id();
        let now = now_ms();
        sqlx::query(
            "INSERT INTO aml_requests (id, business_id, kind, query, params, status, \
             created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6)",
        )
        .bind(&id)
        .bind(business_id)
        .bind(kind)
        .bind(query)
        .bind(params)
        .bind(now)
        .execute(self.store.pool())
        .await?;
        self.request(business_id, kind, &id)
            .await?
            .ok_or_else(|| AmlError::Corrupt(format!("request {id} vanished")))
    }

    /// Queues a stored request for processing.
    pub fn submit(&self, id: &str) {
        let _ = self.requests.send(id.to_owned());
    }

    /// One request of `business_id` and `kind`.
    pub async fn request(
        &self,
        business_id: i64,
        kind: &str,
        id: &str,
    ) -> Result<Option<RequestRecord>, AmlError> {
        let sql =
            format!("{REQUEST_COLUMNS} WHERE r.id = $1 AND r.business_id = $2 AND r.kind = $3");
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(business_id)
            .bind(kind)
            .fetch_optional(self.store.pool())
            .await?;
        Ok(row.map(request_from))
    }

    async fn process(&self, id: &str) -> Result<(), AmlError> {
        let sql = format!("{REQUEST_COLUMNS} WHERE r.id = $1");
        let Some(record) = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.store.pool())
            .await?
            .map(request_from)
        else {
            return Ok(());
        };
        if record.status != "pending" {
            return Ok(());
        }
        let (event, result) = match record.kind.as_str() {
            SANCTION => {
                let params: SanctionParams = serde_json::from_str(&record.params)
                    .map_err(|e| AmlError::Corrupt(e.to_string()))?;
                let now = iso_time(now_ms());
                let records = self
                    .screen(
                        record.business_id,
                        &record.query,
                        ListKind::Sanction,
                        params.threshold,
                        params.country.clone(),
                        MAX_MATCHES,
                    )
                    .await?;
                let mut section = list_section(
                    &record.id,
                    &iso_time(record.created_at_ms),
                    &now,
                    &record.business,
                    &record.query,
                    ListKind::Sanction,
                    records,
                );
                section["requestId"] = Value::from(record.id.as_str());
                section["threshold"] = Value::from(params.threshold);
                section["country"] = Value::from(params.country);
                (event::SANCTION, section)
            }
            ADVERSE_MEDIA => {
                let params: MediaParams = serde_json::from_str(&record.params)
                    .map_err(|e| AmlError::Corrupt(e.to_string()))?;
                let hits = self.search_media(&record.query, params.limit).await?;
                let mut result =
                    media_search::result_json(&record.id, &record.query, params.limit, &hits);
                result["type"] = Value::from("adverse media");
                (event::ADVERSE_MEDIA, result)
            }
            other => return Err(AmlError::Corrupt(format!("unknown request kind {other}"))),
        };
        let body = result.to_string();
        let now = now_ms();
        let mut tx = crate::store::begin_write(self.store.pool()).await?;
        let done = sqlx::query(
            "UPDATE aml_requests SET status = 'completed', result = $1, updated_at_ms = $2 \
             WHERE id = $3 AND status = 'pending'",
        )
        .bind(&body)
        .bind(now)
        .bind(&record.id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            webhooks::enqueue(
                &mut tx,
                &NewDelivery {
                    business_id: record.business_id,
                    event,
                    record_id: &record.id,
                    url: None,
                    body: &body,
                },
                now,
            )
            .await?;
        }
        tx.commit().await?;
        self.webhooks.wake();
        Ok(())
    }

    /// Screens `name` against the lists of `kind` as the instant endpoints do; §2.3 records.
    pub async fn screen(
        &self,
        tenant: i64,
        name: &str,
        kind: ListKind,
        threshold: f32,
        country: Option<String>,
        limit: usize,
    ) -> Result<Vec<Value>, AmlError> {
        let screener = self.screening.current();
        let status = self.screening.status();
        let name = name.to_owned();
        tokio::task::spawn_blocking(move || {
            let index = screener.index();
            let hits = index.search(&ScreenQuery {
                name: &name,
                kind: Some(kind),
                tenant: Some(tenant),
                country: country.as_deref(),
                birth_year: None,
                threshold,
                match_threshold: screener.thresholds().matched,
                limit,
            });
            hits.iter()
                .map(|hit| {
                    let list = &index.list_of(index.entity(hit.entity)).name;
                    let loaded_at = status
                        .lists
                        .iter()
                        .find(|l| &l.name == list)
                        .and_then(|l| l.loaded_at.as_deref());
                    crate::api::screening::list_record(index, hit, loaded_at)
                })
                .collect()
        })
        .await
        .map_err(|e| AmlError::Join(e.to_string()))
    }

    /// Searches the adverse-media index (blocking pool).
    pub async fn search_media(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<media_search::MediaHit>, AmlError> {
        let media = self.media.clone();
        let screener = self.screening.current();
        let query = query.to_owned();
        let threshold = self.media_config.name_threshold;
        let candidates = self.media_config.candidates;
        tokio::task::spawn_blocking(move || {
            media_search::search(
                &media,
                screener.index(),
                &query,
                limit,
                threshold,
                candidates,
            )
        })
        .await
        .map_err(|e| AmlError::Join(e.to_string()))?
        .map_err(AmlError::from)
    }

    // ---- articles --------------------------------------------------------------------------

    /// Adds articles to the index (committed before this returns) and wakes the re-checks.
    pub async fn ingest(&self, articles: Vec<crate::media::Article>) -> Result<usize, AmlError> {
        let media = self.media.clone();
        let written = tokio::task::spawn_blocking(move || media.add(&articles))
            .await
            .map_err(|e| AmlError::Join(e.to_string()))??;
        self.ingested.notify_one();
        Ok(written)
    }

    // ---- risk monitoring -------------------------------------------------------------------

    /// Runs one check: the spec 2.4 risk-monitoring result and the hits in it.
    pub async fn run_check(
        &self,
        check_id: &str,
        business_id: i64,
        created_by: &str,
        name: &str,
        params: &CheckParams,
        created_at_ms: i64,
    ) -> Result<CheckResult, AmlError> {
        let now = iso_time(now_ms());
        let created = iso_time(created_at_ms);
        let sanctions = self
            .screen(
                business_id,
                name,
                ListKind::Sanction,
                params.threshold,
                None,
                params.limit,
            )
            .await?;
        let peps = self
            .screen(
                business_id,
                name,
                ListKind::Pep,
                params.threshold,
                None,
                params.limit,
            )
            .await?;
        let articles = self.search_media(name, params.limit).await?;
        let mut hits = BTreeSet::new();
        for record in sanctions.iter().chain(&peps) {
            if let (Some(kind), Some(id)) = (record["type"].as_str(), record["_id"].as_str()) {
                hits.insert(format!("{kind}:{id}"));
            }
        }
        for article in &articles {
            hits.insert(format!("media:{}", article.id));
        }
        let body = json!({
            "checkId": check_id,
            "adverseMedia": media_search::result_json(check_id, name, params.limit, &articles),
            "pep": list_section(check_id, &created, &now, created_by, name, ListKind::Pep, peps),
            "sanction": list_section(check_id, &created, &now, created_by, name, ListKind::Sanction, sanctions),
        });
        Ok(CheckResult { body, hits })
    }

    /// Registers a check and queues its first result, in one transaction.
    pub async fn register_check(
        &self,
        business_id: i64,
        created_by: &str,
        name: &str,
        params: CheckParams,
        callback_url: &str,
    ) -> Result<String, AmlError> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let result = self
            .run_check(&id, business_id, created_by, name, &params, now)
            .await?;
        let mut body = result.body;
        body["newResults"] = json!(result.hits);
        let body = body.to_string();
        let reported =
            serde_json::to_string(&result.hits).map_err(|e| AmlError::Corrupt(e.to_string()))?;
        let params =
            serde_json::to_string(&params).map_err(|e| AmlError::Corrupt(e.to_string()))?;
        let mut tx = crate::store::begin_write(self.store.pool()).await?;
        sqlx::query(
            "INSERT INTO risk_checks (id, business_id, name, params, callback_url, status, \
             created_by, reported, last_screened_at_ms, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, 'active', $6, $7, $8, $8, $8)",
        )
        .bind(&id)
        .bind(business_id)
        .bind(name)
        .bind(&params)
        .bind(callback_url)
        .bind(created_by)
        .bind(&reported)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        webhooks::enqueue(
            &mut tx,
            &NewDelivery {
                business_id,
                event: event::RISK_MONITORING,
                record_id: &id,
                url: Some(callback_url),
                body: &body,
            },
            now,
        )
        .await?;
        tx.commit().await?;
        self.webhooks.wake();
        Ok(id)
    }

    pub async fn check(&self, business_id: i64, id: &str) -> Result<Option<CheckRecord>, AmlError> {
        let sql = format!("{CHECK_COLUMNS} WHERE id = $1 AND business_id = $2");
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(business_id)
            .fetch_optional(self.store.pool())
            .await?;
        row.map(check_from).transpose()
    }

    /// A business's checks, newest first, optionally only those of one status.
    pub async fn checks(
        &self,
        business_id: i64,
        status: Option<&str>,
        limit: u32,
        cursor: Option<&crate::store::page::Cursor>,
    ) -> Result<Vec<CheckRecord>, AmlError> {
        let mut sql = format!("{CHECK_COLUMNS} WHERE business_id = $1");
        let mut next = 2;
        if status.is_some() {
            sql.push_str(&format!(" AND status = ${next}"));
            next += 1;
        }
        if cursor.is_some() {
            next = crate::store::page::after_cursor(&mut sql, next);
        }
        sql.push_str(&format!(
            " ORDER BY created_at_ms DESC, id DESC LIMIT ${next}"
        ));
        let mut query = sqlx::query(&sql).bind(business_id);
        if let Some(status) = status {
            query = query.bind(status.to_owned());
        }
        if let Some(cursor) = cursor {
            query = query.bind(cursor.created_at_ms).bind(cursor.id.clone());
        }
        let rows = query
            .bind(i64::from(limit))
            .fetch_all(self.store.pool())
            .await?;
        rows.into_iter().map(check_from).collect()
    }

    /// Cancels an active check; false if it was already cancelled.
    pub async fn cancel_check(&self, business_id: i64, id: &str) -> Result<bool, AmlError> {
        let done = sqlx::query(
            "UPDATE risk_checks SET status = 'cancelled', updated_at_ms = $1 \
             WHERE id = $2 AND business_id = $3 AND status = 'active'",
        )
        .bind(now_ms())
        .bind(id)
        .bind(business_id)
        .execute(self.store.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Runs every active check again; queues a delivery for each that found something new.
    /// Answers how many checks re-delivered.
    pub async fn recheck_all(&self) -> Result<usize, AmlError> {
        let sql = format!("{CHECK_COLUMNS} WHERE status = 'active' ORDER BY created_at_ms");
        let rows = sqlx::query(&sql).fetch_all(self.store.pool()).await?;
        let mut redelivered = 0;
        for row in rows {
            let check = check_from(row)?;
            let result = self
                .run_check(
                    &check.id,
                    check.business_id,
                    &check.created_by,
                    &check.name,
                    &check.params,
                    check.created_at_ms,
                )
                .await?;
            let new: BTreeSet<String> = result.hits.difference(&check.reported).cloned().collect();
            let now = now_ms();
            if new.is_empty() {
                sqlx::query("UPDATE risk_checks SET last_screened_at_ms = $1 WHERE id = $2")
                    .bind(now)
                    .bind(&check.id)
                    .execute(self.store.pool())
                    .await?;
                continue;
            }
            let mut reported = check.reported.clone();
            reported.extend(new.iter().cloned());
            let reported =
                serde_json::to_string(&reported).map_err(|e| AmlError::Corrupt(e.to_string()))?;
            let mut body = result.body;
            body["newResults"] = json!(new);
            let body = body.to_string();
            let mut tx = crate::store::begin_write(self.store.pool()).await?;
            let done = sqlx::query(
                "UPDATE risk_checks SET reported = $1, last_screened_at_ms = $2, updated_at_ms = $2 \
                 WHERE id = $3 AND status = 'active' AND reported = $4",
            )
            .bind(&reported)
            .bind(now)
            .bind(&check.id)
            .bind(&check.reported_text)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 1 {
                webhooks::enqueue(
                    &mut tx,
                    &NewDelivery {
                        business_id: check.business_id,
                        event: event::RISK_MONITORING,
                        record_id: &check.id,
                        url: Some(&check.callback_url),
                        body: &body,
                    },
                    now,
                )
                .await?;
                redelivered += 1;
            }
            tx.commit().await?;
        }
        if redelivered > 0 {
            self.webhooks
                .metrics
                .monitoring_redeliveries
                .inc_by(redelivered as u64);
            self.webhooks.wake();
        }
        Ok(redelivered)
    }

    /// Starts the request processor and the re-check loop; both end when `stop` fires.
    pub fn spawn(
        self: &Arc<Self>,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = Vec::new();
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut queue) = queue {
            let aml = self.clone();
            let mut stop_requests = stop.clone();
            tasks.push(tokio::spawn(async move {
                // Requests left pending by a crash or stop are processed first.
                match sqlx::query(
                    "SELECT id FROM aml_requests WHERE status = 'pending' ORDER BY created_at_ms",
                )
                .fetch_all(aml.store.pool())
                .await
                {
                    Ok(rows) => {
                        for row in rows {
                            aml.submit(&row.get::<String, _>(0));
                        }
                    }
                    Err(error) => tracing::error!(%error, "cannot read pending AML requests"),
                }
                loop {
                    let id = tokio::select! {
                        id = queue.recv() => id,
                        _ = stop_requests.changed() => None,
                    };
                    let Some(id) = id else { return };
                    let mut delay = Duration::from_millis(100);
                    // Retried until it completes: a stored request is never dropped.
                    while let Err(error) = aml.process(&id).await {
                        tracing::error!(request = %id, %error, "AML request failed; retrying");
                        tokio::select! {
                            _ = tokio::time::sleep(delay) => {}
                            _ = stop_requests.changed() => return,
                        }
                        delay = (delay * 2).min(Duration::from_secs(30));
                    }
                }
            }));
        }
        let aml = self.clone();
        let mut stop_checks = stop;
        tasks.push(tokio::spawn(async move {
            let mut swaps = aml.screening.subscribe();
            swaps.borrow_and_update();
            let mut generation = aml.media.generation();
            let poll = Duration::from_secs(aml.config.media_poll_secs);
            let mut lists_alive = true;
            loop {
                tokio::select! {
                    changed = swaps.changed(), if lists_alive => {
                        if changed.is_err() {
                            // The manager is gone; keep watching articles only.
                            lists_alive = false;
                            continue;
                        }
                    }
                    _ = aml.ingested.notified() => {}
                    _ = tokio::time::sleep(poll) => {
                        let now = aml.media.generation();
                        if now == generation {
                            continue;
                        }
                    }
                    _ = stop_checks.changed() => return,
                }
                generation = aml.media.generation();
                if let Err(error) = aml.recheck_all().await {
                    tracing::error!(%error, "risk-monitoring re-check failed");
                }
            }
        }));
        tasks
    }
}

/// The pep or sanction block of the 2.4 risk-monitoring result.
pub fn list_section(
    check_id: &str,
    created: &str,
    screened: &str,
    created_by: &str,
    keyword: &str,
    kind: ListKind,
    results: Vec<Value>,
) -> Value {
    json!({
        "check_id": check_id,
        "check_creation_date": created,
        "last_screened_date": screened,
        "created_by": created_by,
        "results": results,
        "search_keyword": keyword,
        "type": kind.as_str(),
    })
}

//! Webhooks: the durable outbox of results and the worker that delivers them, signed.
//!
//! Data flow: whoever produces a result — the store writer completing an asynchronous transaction
//! decision (`sinks::store`), the AML request processor (`crate::monitoring`) finishing a sanction
//! or adverse-media request, a risk-monitoring check finding new hits — calls [`enqueue`] inside
//! the *same* database transaction that records the result, so a result is in the outbox
//! (`webhook_deliveries`) before anything about it is acknowledged, and survives any crash. The
//! delivery worker ([`spawn_worker`]) keeps up to `concurrency` attempts in flight, at most
//! `per_destination` of them to one URL (so one slow receiver cannot hold up the others), and
//! claims a delivery only when no older delivery of the same record is still pending (so one
//! record's results arrive in the order they were made). Each attempt posts the exact body through
//! the one outbound client ([`crate::outbound`]: address policy checked at resolution, no proxy,
//! no redirects) with `X-Vigil-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, t + "." +
//! body)>`, records the attempt, and either marks the delivery delivered (any 2xx) or schedules the
//! next attempt with exponential backoff and jitter until `retry_window_ms` (24 h) has passed,
//! after which it is dead-lettered. Deliveries and their
//! attempts are read and replayed through [`api`]. A delivery goes to its own `url` (a
//! risk-monitoring `callbackUrl`) or else to the business's webhook as configured at the moment of
//! the attempt, signed with the business's current secret; without a configured webhook it waits
//! (retrying) until one is configured or its window ends.
//!
//! Claiming is a conditional update of `next_attempt_at_ms` (a lease), so several instances on one
//! PostgreSQL database never attempt the same delivery at once. Delivery is at least once: a crash
//! between a receiver's 2xx and the commit that records it repeats that one delivery, which is why
//! every request carries `X-Vigil-Delivery` (the delivery id) for receivers to de-duplicate.

pub mod api;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use tokio::sync::Notify;

use crate::metrics::Metrics;
use crate::outbound::{self, AddressPolicy, ClientOptions, OutboundClient, OutboundError};
use crate::store::{now_ms, Store, StoreError};

/// `[webhooks]`: delivery timing. Milliseconds throughout so tests can run retries quickly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookConfig {
    /// Run the delivery worker in this instance.
    pub enabled: bool,
    /// How long one attempt may take (connect, send, answer) before it counts as failed.
    pub timeout_ms: u64,
    /// Delay before the first retry; doubles with every further attempt (with jitter).
    pub initial_backoff_ms: u64,
    /// The longest delay between two attempts.
    pub max_backoff_ms: u64,
    /// How long a delivery is retried before it is dead-lettered (24 h).
    pub retry_window_ms: u64,
    /// How often the worker looks for due deliveries when nothing wakes it.
    pub poll_interval_ms: u64,
    /// Deliveries attempted at once, in all.
    pub concurrency: usize,
    /// Deliveries attempted at once to one URL (never more than `concurrency`).
    pub per_destination: usize,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            enabled: true,
            timeout_ms: 10_000,
            initial_backoff_ms: 1_000,
            max_backoff_ms: 3_600_000,
            retry_window_ms: 86_400_000,
            poll_interval_ms: 1_000,
            concurrency: 64,
            per_destination: 16,
        }
    }
}

impl WebhookConfig {
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let mut check = |ok: bool, key: &str, problem: &str| {
            if !ok {
                problems.push((format!("webhooks.{key}"), problem.to_owned()));
            }
        };
        check(self.timeout_ms > 0, "timeout_ms", "must be positive");
        check(
            self.initial_backoff_ms > 0,
            "initial_backoff_ms",
            "must be positive",
        );
        check(
            self.max_backoff_ms >= self.initial_backoff_ms,
            "max_backoff_ms",
            "must be at least initial_backoff_ms",
        );
        check(
            self.retry_window_ms > 0,
            "retry_window_ms",
            "must be positive",
        );
        check(
            self.poll_interval_ms > 0,
            "poll_interval_ms",
            "must be positive",
        );
        check(
            (1..=256).contains(&self.concurrency),
            "concurrency",
            "must be between 1 and 256",
        );
        check(
            (1..=256).contains(&self.per_destination),
            "per_destination",
            "must be between 1 and 256",
        );
        problems
    }

    /// The delay before attempt `failed + 1`, after `failed` failed attempts: exponential, capped,
    /// with "equal jitter" (half fixed, half random) so receivers recovering from an outage are not
    /// hit by every sender at once.
    pub fn backoff(&self, failed: u32) -> Duration {
        let exp = self
            .initial_backoff_ms
            .saturating_mul(1u64 << failed.saturating_sub(1).min(40));
        let capped = exp.min(self.max_backoff_ms).max(1);
        let half = capped / 2;
        let jitter = rand::rng().random_range(0..=capped - half);
        Duration::from_millis(half + jitter)
    }
}

/// The kinds of result delivered (`X-Vigil-Event`).
pub mod event {
    pub const TRANSACTION: &str = "transaction-monitoring";
    pub const SANCTION: &str = "sanction";
    pub const ADVERSE_MEDIA: &str = "adverse-media";
    pub const RISK_MONITORING: &str = "risk-monitoring";
}

/// A result to deliver.
#[derive(Debug, Clone)]
pub struct NewDelivery<'a> {
    pub business_id: i64,
    pub event: &'a str,
    pub record_id: &'a str,
    /// `None`: the business's configured webhook.
    pub url: Option<&'a str>,
    pub body: &'a str,
}

/// Writes a delivery into the outbox inside the caller's transaction; answers its id.
pub async fn enqueue(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    delivery: &NewDelivery<'_>,
    now: i64,
) -> Result<String, StoreError> {
    let id = crate::store::new_id();
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, business_id, event, record_id, url, body, status, \
         attempts, next_attempt_at_ms, retry_from_ms, created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, $7, $7)",
    )
    .bind(&id)
    .bind(delivery.business_id)
    .bind(delivery.event)
    .bind(delivery.record_id)
    .bind(delivery.url)
    .bind(delivery.body)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// The businesses among `ids` that have a webhook configured (read inside `tx`).
pub async fn with_webhook(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    ids: &[i64],
) -> Result<std::collections::HashSet<i64>, StoreError> {
    let mut found = std::collections::HashSet::new();
    let mut unique: Vec<i64> = ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    for id in unique {
        let row = sqlx::query("SELECT 1 FROM webhook_configs WHERE business_id = $1")
            .bind(id)
            .fetch_optional(&mut **tx)
            .await?;
        if row.is_some() {
            found.insert(id);
        }
    }
    Ok(found)
}

/// The `X-Vigil-Signature` value for `body` sent at `timestamp` (Unix seconds).
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let stamp = timestamp.to_string();
    let mac = outbound::sign::hmac_sha256_hex(secret.as_bytes(), &[stamp.as_bytes(), b".", body]);
    format!("t={timestamp},v1={mac}")
}

/// Verifies a signature header as a receiver would: the HMAC must match (compared in constant
/// time) and `t` must be within `tolerance_secs` of `now` (replay protection).
pub fn verify_signature(
    secret: &str,
    header: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> bool {
    let mut timestamp = None;
    let mut v1 = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", sig)) => v1.push(sig.to_owned()),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else {
        return false;
    };
    if (now - timestamp).abs() > tolerance_secs {
        return false;
    }
    let stamp = timestamp.to_string();
    v1.iter().any(|sig| {
        outbound::sign::verify_hmac_sha256_hex(
            secret.as_bytes(),
            &[stamp.as_bytes(), b".", body],
            sig,
        )
    })
}

/// What the API and the worker share: the store, the timing, the client, the wake-up signal.
#[derive(Clone)]
pub struct Webhooks {
    pub store: Store,
    pub config: WebhookConfig,
    pub allow_private: bool,
    pub metrics: Arc<Metrics>,
    client: OutboundClient,
    /// Bounds the attempts that use the database at once (half the pool), so a burst of
    /// finishing deliveries never starves the decision writer of connections.
    store_permits: Arc<tokio::sync::Semaphore>,
    wake: Arc<Notify>,
}

impl Webhooks {
    pub fn new(
        store: Store,
        config: WebhookConfig,
        allow_private: bool,
        metrics: Arc<Metrics>,
    ) -> Result<Webhooks, OutboundError> {
        for outcome in ["delivered", "retried", "dead"] {
            metrics.webhook_deliveries.with_label_values(&[outcome]);
        }
        let client = OutboundClient::new(
            AddressPolicy { allow_private },
            ClientOptions::new(Duration::from_millis(config.timeout_ms), "vigil-webhooks/1"),
        )?;
        let permits = (store.pool().options().get_max_connections() as usize / 2).max(1);
        Ok(Webhooks {
            store,
            config,
            allow_private,
            metrics,
            client,
            store_permits: Arc::new(tokio::sync::Semaphore::new(permits)),
            wake: Arc::new(Notify::new()),
        })
    }

    /// Tells the worker new deliveries may be due (after the commit that enqueued them).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

/// One claimed delivery.
struct Due {
    id: String,
    business_id: i64,
    event: String,
    url: Option<String>,
    /// Where it goes now: its own URL or the business's webhook (`None`: none configured).
    destination: Option<String>,
    body: String,
    attempts: i64,
    retry_from_ms: i64,
}

/// What the worker has in flight: each attempt's destination URL by task id (so a task that
/// panicked frees its slot too), and the attempts per destination.
#[derive(Default)]
struct InFlight {
    by_task: HashMap<tokio::task::Id, String>,
    per_destination: HashMap<String, usize>,
}

impl InFlight {
    fn start(&mut self, task: tokio::task::Id, destination: String) {
        *self.per_destination.entry(destination.clone()).or_default() += 1;
        self.by_task.insert(task, destination);
    }

    fn finish(&mut self, task: tokio::task::Id) {
        let Some(destination) = self.by_task.remove(&task) else {
            return;
        };
        if let Some(count) = self.per_destination.get_mut(&destination) {
            *count -= 1;
            if *count == 0 {
                self.per_destination.remove(&destination);
            }
        }
    }

    fn total(&self) -> usize {
        self.by_task.len()
    }
}

/// Starts the delivery worker; it runs until `stop` fires, then waits for the attempts in flight
/// so their outcome is recorded before the service ends.
pub fn spawn_worker(
    hooks: Webhooks,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let poll = Duration::from_millis(hooks.config.poll_interval_ms);
        let mut in_flight = InFlight::default();
        let mut tasks: tokio::task::JoinSet<()> = tokio::task::JoinSet::new();
        let mut counted_at = Instant::now() - poll;
        loop {
            if *stop.borrow() {
                break;
            }
            let free = hooks.config.concurrency.saturating_sub(in_flight.total());
            let mut claimed = 0;
            if free > 0 {
                match claim(&hooks, free, &in_flight.per_destination).await {
                    Ok(due) => {
                        claimed = due.len();
                        for due in due {
                            let destination = due.destination.clone().unwrap_or_default();
                            let hooks = hooks.clone();
                            let task = tasks.spawn(async move {
                                if let Err(error) = attempt(&hooks, due).await {
                                    tracing::error!(%error, "recording a webhook attempt failed; the lease will expire and it is retried");
                                }
                            });
                            in_flight.start(task.id(), destination);
                        }
                    }
                    Err(error) => tracing::error!(%error, "claiming webhook deliveries failed"),
                }
            }
            if claimed > 0 && in_flight.total() < hooks.config.concurrency {
                // More may be due: claim again before waiting.
                continue;
            }
            if counted_at.elapsed() >= poll {
                refresh_pending(&hooks).await;
                counted_at = Instant::now();
            }
            tokio::select! {
                Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                    let id = match done {
                        Ok((id, ())) => id,
                        Err(error) => error.id(),
                    };
                    in_flight.finish(id);
                }
                _ = hooks.wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
                changed = stop.changed() => {
                    // A dropped sender stops the worker too.
                    if changed.is_err() {
                        break;
                    }
                }
            }
        }
        while tasks.join_next().await.is_some() {}
    })
}

async fn refresh_pending(hooks: &Webhooks) {
    if let Ok(row) = sqlx::query("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'")
        .fetch_one(hooks.store.pool())
        .await
    {
        hooks.metrics.webhook_pending.set(row.get::<i64, _>(0));
    }
}

/// Claims up to `limit` due deliveries: no more to one destination than its share left beside
/// the attempts already `in_flight` there, and none with an older delivery of the same record
/// still pending.
async fn claim(
    hooks: &Webhooks,
    limit: usize,
    in_flight: &HashMap<String, usize>,
) -> Result<Vec<Due>, StoreError> {
    let now = now_ms();
    let cap = hooks.config.per_destination.min(hooks.config.concurrency);
    let full: Vec<&String> = in_flight
        .iter()
        .filter(|(_, count)| **count >= cap)
        .map(|(destination, _)| destination)
        .collect();
    let mut sql = String::from(
        "SELECT d.id, d.business_id, d.event, d.url, d.body, d.attempts, d.retry_from_ms, \
         d.next_attempt_at_ms, COALESCE(d.url, c.url) \
         FROM webhook_deliveries d LEFT JOIN webhook_configs c ON c.business_id = d.business_id \
         WHERE d.status = 'pending' AND d.next_attempt_at_ms <= $1 \
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.status = 'pending' \
         AND o.business_id = d.business_id AND o.event = d.event AND o.record_id = d.record_id \
         AND (o.created_at_ms < d.created_at_ms \
         OR (o.created_at_ms = d.created_at_ms AND o.id < d.id)))",
    );
    for index in 0..full.len() {
        if index == 0 {
            sql.push_str(" AND COALESCE(d.url, c.url, '') NOT IN (");
        } else {
            sql.push_str(", ");
        }
        sql.push_str(&format!("${}", index + 3));
    }
    if !full.is_empty() {
        sql.push(')');
    }
    sql.push_str(" ORDER BY d.next_attempt_at_ms LIMIT $2");
    let mut query = sqlx::query(&sql)
        .bind(now)
        // More than the free slots: some may go to a destination that fills up on the way.
        .bind((limit * 4) as i64);
    for destination in full {
        query = query.bind(destination);
    }
    let rows = query.fetch_all(hooks.store.pool()).await?;
    // The lease: long enough for the attempt; another instance (or this one after a crash) takes
    // the delivery over only once it has expired.
    let lease_until = now + hooks.config.timeout_ms as i64 * 2 + 1_000;
    // Seeded with what is in flight, so a claim never takes a destination past its share.
    let mut taken: HashMap<String, usize> = in_flight.clone();
    let mut claimed = Vec::new();
    if rows.is_empty() {
        return Ok(claimed);
    }
    // All leases of one claim in one transaction: one commit instead of one per delivery.
    let mut tx = crate::store::begin_write(hooks.store.pool()).await?;
    for row in rows {
        if claimed.len() == limit {
            break;
        }
        let destination: Option<String> = row.get(8);
        let key = destination.clone().unwrap_or_default();
        if taken.get(&key).copied().unwrap_or(0) >= cap {
            continue;
        }
        let previous: i64 = row.get(7);
        let id: String = row.get(0);
        let done = sqlx::query(
            "UPDATE webhook_deliveries SET next_attempt_at_ms = $1 \
             WHERE id = $2 AND status = 'pending' AND next_attempt_at_ms = $3",
        )
        .bind(lease_until)
        .bind(&id)
        .bind(previous)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            *taken.entry(key).or_default() += 1;
            claimed.push(Due {
                id,
                business_id: row.get(1),
                event: row.get(2),
                url: row.get(3),
                destination,
                body: row.get(4),
                attempts: row.get(5),
                retry_from_ms: row.get(6),
            });
        }
    }
    tx.commit().await?;
    Ok(claimed)
}

/// The result of sending once.
struct Sent {
    url: String,
    status: Option<u16>,
    error: Option<String>,
}

async fn send(hooks: &Webhooks, due: &Due) -> Result<Sent, StoreError> {
    let config = {
        let _permit = hooks.store_permits.acquire().await;
        sqlx::query("SELECT url, secret FROM webhook_configs WHERE business_id = $1")
            .bind(due.business_id)
            .fetch_optional(hooks.store.pool())
            .await?
    };
    let (configured_url, secret) = match config {
        Some(row) => (Some(row.get::<String, _>(0)), Some(row.get::<String, _>(1))),
        None => (None, None),
    };
    let Some(url) = due.url.clone().or(configured_url) else {
        return Ok(Sent {
            url: String::new(),
            status: None,
            error: Some("no webhook is configured for this business".to_owned()),
        });
    };
    let failed = |error: String| Sent {
        url: url.clone(),
        status: None,
        error: Some(error),
    };
    let Some(secret) = secret else {
        return Ok(failed(
            "no signing secret: configure the business's webhook (PUT /api/v1/webhooks)".to_owned(),
        ));
    };
    let parsed = match outbound::policy::parse_url(&url) {
        Ok(parsed) => parsed,
        Err(error) => return Ok(failed(format!("url {error}"))),
    };
    let request = match hooks.client.request(reqwest::Method::POST, &parsed) {
        Ok(request) => request,
        Err(error) => return Ok(failed(error.to_string())),
    };
    let timestamp = now_ms() / 1000;
    let request = request
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("X-Vigil-Delivery", &due.id)
        .header("X-Vigil-Event", &due.event)
        .header("X-Vigil-Timestamp", timestamp.to_string())
        .header(
            "X-Vigil-Signature",
            signature(&secret, timestamp, due.body.as_bytes()),
        )
        .body(due.body.clone());
    match hooks.client.send(request).await {
        Ok(response) => {
            let status = response.status();
            // Read (and bound) the answer so the connection completes and can be reused; its
            // content is ignored.
            let _ = tokio::time::timeout(
                Duration::from_millis(hooks.config.timeout_ms),
                outbound::read_limited(response, 64 * 1024),
            )
            .await;
            Ok(Sent {
                url,
                status: Some(status.as_u16()),
                error: (!status.is_success()).then(|| {
                    if status.is_redirection() {
                        format!("answered {status}; redirects are not followed")
                    } else {
                        format!("answered {status}")
                    }
                }),
            })
        }
        Err(OutboundError::Timeout) => Ok(failed(format!(
            "timed out after {} ms",
            hooks.config.timeout_ms
        ))),
        Err(error) => Ok(failed(error.to_string())),
    }
}

async fn attempt(hooks: &Webhooks, due: Due) -> Result<(), StoreError> {
    let started = Instant::now();
    let sent = send(hooks, &due).await?;
    let duration_ms = started.elapsed().as_millis() as i64;
    let now = now_ms();
    let number = due.attempts + 1;
    let _permit = hooks.store_permits.acquire().await;
    let mut tx = crate::store::begin_write(hooks.store.pool()).await?;
    sqlx::query(
        "INSERT INTO webhook_attempts (delivery_id, attempt, url, at_ms, duration_ms, status_code, error) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&due.id)
    .bind(number)
    .bind(&sent.url)
    .bind(now)
    .bind(duration_ms)
    .bind(sent.status.map(i64::from))
    .bind(sent.error.as_deref())
    .execute(&mut *tx)
    .await?;
    let outcome = match &sent.error {
        None => {
            sqlx::query(
                "UPDATE webhook_deliveries SET status = 'delivered', attempts = $1, \
                 delivered_at_ms = $2, updated_at_ms = $2, last_error = NULL WHERE id = $3",
            )
            .bind(number)
            .bind(now)
            .bind(&due.id)
            .execute(&mut *tx)
            .await?;
            "delivered"
        }
        Some(error) => {
            let delay = hooks.config.backoff(number as u32).as_millis() as i64;
            let next = now + delay;
            let dead = next > due.retry_from_ms + hooks.config.retry_window_ms as i64;
            sqlx::query(
                "UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at_ms = $3, \
                 updated_at_ms = $4, last_error = $5 WHERE id = $6",
            )
            .bind(if dead { "dead" } else { "pending" })
            .bind(number)
            .bind(next)
            .bind(now)
            .bind(error)
            .bind(&due.id)
            .execute(&mut *tx)
            .await?;
            if dead {
                "dead"
            } else {
                "retried"
            }
        }
    };
    // Counted before the commit makes the outcome visible, so a reader who sees the delivery's
    // new status also sees it counted (a failed commit is retried and counted again).
    hooks
        .metrics
        .webhook_deliveries
        .with_label_values(&[outcome])
        .inc();
    tx.commit().await?;
    match outcome {
        "delivered" => tracing::debug!(delivery = %due.id, attempt = number, "webhook delivered"),
        "dead" => {
            tracing::warn!(delivery = %due.id, attempts = number, error = sent.error.as_deref().unwrap_or(""), "webhook delivery dead-lettered")
        }
        _ => {
            tracing::info!(delivery = %due.id, attempt = number, error = sent.error.as_deref().unwrap_or(""), "webhook delivery failed; will retry")
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_covers_the_timestamp_and_the_exact_body() {
        let header = signature("whsec_test", 1_767_225_600, br#"{"a":1}"#);
        assert!(header.starts_with("t=1767225600,v1="));
        assert!(verify_signature(
            "whsec_test",
            &header,
            br#"{"a":1}"#,
            1_767_225_630,
            300
        ));
        assert!(
            !verify_signature("whsec_test", &header, br#"{"a": 1}"#, 1_767_225_630, 300),
            "one changed byte of the body fails"
        );
        assert!(
            !verify_signature("other", &header, br#"{"a":1}"#, 1_767_225_630, 300),
            "another secret fails"
        );
        assert!(
            !verify_signature("whsec_test", &header, br#"{"a":1}"#, 1_767_226_000, 300),
            "an old timestamp is refused as a replay"
        );
        let forged = header.replace("t=1767225600", "t=1767225601");
        assert!(!verify_signature(
            "whsec_test",
            &forged,
            br#"{"a":1}"#,
            1_767_225_630,
            300
        ));
    }

    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body() {
        // The signed string is "<t>.<body>": check the header against the hmac crate directly.
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").expect("key");
        mac.update(b"0.what do ya want for nothing?");
        let expected = hex::encode(mac.finalize().into_bytes());
        assert_eq!(
            signature("Jefe", 0, b"what do ya want for nothing?"),
            format!("t=0,v1={expected}")
        );
    }

    #[test]
    fn backoff_grows_exponentially_within_jitter_and_is_capped() {
        let config = WebhookConfig {
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
            ..WebhookConfig::default()
        };
        for _ in 0..50 {
            let first = config.backoff(1).as_millis();
            assert!((500..=1_000).contains(&first), "{first}");
            let fourth = config.backoff(4).as_millis();
            assert!((4_000..=8_000).contains(&fourth), "{fourth}");
            let late = config.backoff(30).as_millis();
            assert!((30_000..=60_000).contains(&late), "{late}");
        }
    }

    #[test]
    fn bad_timings_are_named_by_key() {
        let config = WebhookConfig {
            max_backoff_ms: 1,
            concurrency: 0,
            per_destination: 0,
            ..WebhookConfig::default()
        };
        let keys: Vec<String> = config.problems().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "webhooks.max_backoff_ms",
                "webhooks.concurrency",
                "webhooks.per_destination"
            ]
        );
    }
}

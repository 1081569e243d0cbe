//! Webhooks: the durable outbox of results and the worker that delivers them, signed.
//!
//! Data flow: whoever produces a result — the store writer completing an asynchronous transaction
//! decision (`sinks::store`), the AML request processor (`crate::monitoring`) finishing a sanction
//! or adverse-media request, a risk-monitoring check finding new hits — calls [`enqueue`] inside
//! the *same* database transaction that records the result, so a result is in the outbox
//! (`webhook_deliveries`) before anything about it is acknowledged, and survives any crash. The
//! delivery worker ([`spawn_worker`]) claims due deliveries, resolves and SSRF-checks the
//! destination ([`ssrf`]), posts the exact body with `X-Vigil-Signature: t=<unix>,v1=<hex
//! HMAC-SHA256(secret, t + "." + body)>`, records the attempt, and either marks the delivery
//! delivered (any 2xx) or schedules the next attempt with exponential backoff and jitter until
//! `retry_window_ms` (24 h) has passed, after which it is dead-lettered. Deliveries and their
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
pub mod ssrf;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use sqlx::Row;
use tokio::sync::Notify;

use crate::metrics::Metrics;
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
    /// Deliveries attempted at once.
    pub concurrency: usize,
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
            concurrency: 8,
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
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
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
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    v1.iter().any(|sig| {
        hex::decode(sig)
            .map(|bytes| mac.clone().verify_slice(&bytes).is_ok())
            .unwrap_or(false)
    })
}

/// What the API and the worker share: the store, the timing, the wake-up signal.
#[derive(Clone)]
pub struct Webhooks {
    pub store: Store,
    pub config: WebhookConfig,
    pub allow_private: bool,
    pub metrics: Arc<Metrics>,
    wake: Arc<Notify>,
}

impl Webhooks {
    pub fn new(
        store: Store,
        config: WebhookConfig,
        allow_private: bool,
        metrics: Arc<Metrics>,
    ) -> Webhooks {
        for outcome in ["delivered", "retried", "dead"] {
            metrics.webhook_deliveries.with_label_values(&[outcome]);
        }
        Webhooks {
            store,
            config,
            allow_private,
            metrics,
            wake: Arc::new(Notify::new()),
        }
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
    body: String,
    attempts: i64,
    retry_from_ms: i64,
}

/// Starts the delivery worker; it runs until `stop` fires.
pub fn spawn_worker(
    hooks: Webhooks,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let poll = Duration::from_millis(hooks.config.poll_interval_ms);
        loop {
            if *stop.borrow() {
                return;
            }
            match run_once(&hooks).await {
                Ok(claimed) if claimed > 0 => continue,
                Ok(_) => {}
                Err(error) => tracing::error!(%error, "webhook delivery pass failed"),
            }
            refresh_pending(&hooks).await;
            tokio::select! {
                _ = hooks.wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => return,
            }
        }
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

/// Claims what is due and attempts it; answers how many were claimed.
async fn run_once(hooks: &Webhooks) -> Result<usize, StoreError> {
    let now = now_ms();
    let rows = sqlx::query(
        "SELECT id, business_id, event, url, body, attempts, retry_from_ms, next_attempt_at_ms \
         FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at_ms <= $1 \
         ORDER BY next_attempt_at_ms LIMIT $2",
    )
    .bind(now)
    .bind(hooks.config.concurrency as i64)
    .fetch_all(hooks.store.pool())
    .await?;
    // The lease: long enough for a resolution and the attempt; another instance (or this one
    // after a crash) takes the delivery over only once it has expired.
    let lease_until = now + hooks.config.timeout_ms as i64 * 2 + 1_000;
    let mut claimed = Vec::new();
    for row in rows {
        let previous: i64 = row.get(7);
        let id: String = row.get(0);
        let done = sqlx::query(
            "UPDATE webhook_deliveries SET next_attempt_at_ms = $1 \
             WHERE id = $2 AND status = 'pending' AND next_attempt_at_ms = $3",
        )
        .bind(lease_until)
        .bind(&id)
        .bind(previous)
        .execute(hooks.store.pool())
        .await?;
        if done.rows_affected() == 1 {
            claimed.push(Due {
                id,
                business_id: row.get(1),
                event: row.get(2),
                url: row.get(3),
                body: row.get(4),
                attempts: row.get(5),
                retry_from_ms: row.get(6),
            });
        }
    }
    let count = claimed.len();
    let mut tasks = tokio::task::JoinSet::new();
    for due in claimed {
        let hooks = hooks.clone();
        tasks.spawn(async move {
            if let Err(error) = attempt(&hooks, due).await {
                tracing::error!(%error, "recording a webhook attempt failed; the lease will expire and it is retried");
            }
        });
    }
    // A stop waits for attempts in flight: their outcome is recorded before the service ends.
    while tasks.join_next().await.is_some() {}
    Ok(count)
}

/// The result of sending once.
struct Sent {
    url: String,
    status: Option<u16>,
    error: Option<String>,
}

async fn send(hooks: &Webhooks, due: &Due) -> Result<Sent, StoreError> {
    let config = sqlx::query("SELECT url, secret FROM webhook_configs WHERE business_id = $1")
        .bind(due.business_id)
        .fetch_optional(hooks.store.pool())
        .await?;
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
    let checked = match ssrf::resolve_checked(&url, hooks.allow_private).await {
        Ok(checked) => checked,
        Err(error) => return Ok(failed(format!("url {error}"))),
    };
    let client = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_millis(hooks.config.timeout_ms))
        .resolve_to_addrs(&checked.host, &checked.addrs)
        .no_proxy()
        .build()
    {
        Ok(client) => client,
        Err(error) => return Ok(failed(format!("cannot build the HTTP client: {error}"))),
    };
    let timestamp = now_ms() / 1000;
    let mut request = client
        .post(checked.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::USER_AGENT, "vigil-webhooks/1")
        .header("X-Vigil-Delivery", &due.id)
        .header("X-Vigil-Event", &due.event)
        .header("X-Vigil-Timestamp", timestamp.to_string());
    if let Some(secret) = &secret {
        request = request.header(
            "X-Vigil-Signature",
            signature(secret, timestamp, due.body.as_bytes()),
        );
    } else {
        return Ok(failed(
            "no signing secret: configure the business's webhook (PUT /api/v1/webhooks)".to_owned(),
        ));
    }
    match request.body(due.body.clone()).send().await {
        Ok(response) => {
            let status = response.status();
            // Read (and bound) the answer so the connection completes; its content is ignored.
            let _ = tokio::time::timeout(
                Duration::from_millis(hooks.config.timeout_ms),
                response.bytes(),
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
        Err(error) if error.is_timeout() => Ok(failed(format!(
            "timed out after {} ms",
            hooks.config.timeout_ms
        ))),
        Err(error) => Ok(failed(format!("request failed: {}", without_url(&error)))),
    }
}

fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(url.as_str(), "the webhook url");
    }
    text.to_lowercase()
}

async fn attempt(hooks: &Webhooks, due: Due) -> Result<(), StoreError> {
    let started = Instant::now();
    let sent = send(hooks, &due).await?;
    let duration_ms = started.elapsed().as_millis() as i64;
    let now = now_ms();
    let number = due.attempts + 1;
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
            ..WebhookConfig::default()
        };
        let keys: Vec<String> = config.problems().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["webhooks.max_backoff_ms", "webhooks.concurrency"]);
    }
}

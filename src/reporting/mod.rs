//! FIU reporting in goAML (spec §2.10, §4.6, §8).
//!
//! What it owns: each business's client endpoint configuration ([`client`]: URL, API-key or HMAC
//! authentication, the outbound address policy), reports and their items ([`store`]), the background job that
//! fetches the records ([`ReportingService`]), and the goAML XML ([`goaml`]).
//!
//! Data flow: `PUT /api/v1/reporting/config` stores the client URL and auth. `POST
//! /api/v1/reporting/uploads?reportType=STR` takes a CSV of transaction IDs ([`upload`]), stores a
//! report and its items (`pending`) in one transaction, answers the `reportId`, and hands the
//! report to the job. Alternatively `POST /api/v1/reporting/reports` collects the transactions
//! whose decision carries a rule hit marked `reportable = "<code>"` (e.g. a CTR rule) — no CSV.
//! The job (`fetching`) takes the pending IDs in batches of at most `reporting.batch_size` (100)
//! and calls `GET {clientUrl}/api/v1/reporting/send-transaction?transactionId=a,b,…`, at most
//! `reporting.max_requests_per_second` (5) calls per second per business (a `governor` GCRA
//! limiter, burst 1: calls are spaced by at least 220 ms, 1/rate plus a 10 % margin), retrying a failed call with doubling
//! backoff up to `reporting.max_attempts`. Each batch's outcome is stored before the next call,
//! so a restart resumes where it stopped. Records are checked against the schema's constraints;
//! an ID the client does not answer, or whose record is invalid, fails with its reason. When no ID
//! is pending, the report is built from the fetched records (`built`, XML stored) or, with none,
//! `failed`.

pub mod api;
pub mod client;
pub mod codes;
pub mod config;
pub mod goaml;
pub mod store;
pub mod upload;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::outbound::{AddressPolicy, ClientOptions, OutboundClient, OutboundError};
use crate::store::{iso_time, now_ms, StoreError};
use config::ReportingConfig;
use goaml::{ReportHeader, ReportRecord, ReportingEntity};

/// The reporting job, its outbound client and its shared rate limiter.
pub struct ReportingService {
    pool: sqlx::AnyPool,
    pub config: ReportingConfig,
    pub allow_private: bool,
    client: OutboundClient,
    limiter: DefaultKeyedRateLimiter<i64>,
}

impl ReportingService {
    pub fn new(
        pool: sqlx::AnyPool,
        config: ReportingConfig,
        allow_private: bool,
    ) -> Result<Arc<Self>, OutboundError> {
        let client = OutboundClient::new(
            AddressPolicy { allow_private },
            ClientOptions::new(
                Duration::from_millis(config.request_timeout_ms),
                "vigil-reporting/1",
            ),
        )?;
        let per_second = config.max_requests_per_second.clamp(1, 5);
        // A 10 % margin over 1/rate: network jitter between Vigil and the client must never let
        // the client see more than the limit in one second.
        let period = Duration::from_nanos(1_100_000_000 / u64::from(per_second));
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::MIN);
        Ok(Arc::new(ReportingService {
            pool,
            config,
            allow_private,
            client,
            limiter: RateLimiter::keyed(quota),
        }))
    }

    /// Starts the job for a stored report.
    pub fn spawn(self: &Arc<Self>, report_id: String, business_id: i64, business: String) {
        let service = self.clone();
        tokio::spawn(async move {
            if let Err(error) = service.process(&report_id, business_id, &business).await {
                tracing::error!(report = %report_id, %error, "report job stopped; resumed at the next start");
            }
        });
    }

    /// Resumes the reports a previous run left unfinished.
    pub async fn resume(self: &Arc<Self>) -> Result<usize, StoreError> {
        let unfinished = store::unfinished(&self.pool).await?;
        let names = store::business_names(&self.pool).await?;
        let count = unfinished.len();
        for (report_id, business_id) in unfinished {
            let business = names.get(&business_id).cloned().unwrap_or_default();
            self.spawn(report_id, business_id, business);
        }
        Ok(count)
    }

    async fn process(
        &self,
        report_id: &str,
        business_id: i64,
        business: &str,
    ) -> Result<(), StoreError> {
        let Some(client) = store::config(&self.pool, business_id).await? else {
            store::set_status(
                &self.pool,
                report_id,
                "failed",
                Some("reporting is not configured"),
            )
            .await?;
            return Ok(());
        };
        store::set_status(&self.pool, report_id, "fetching", None).await?;
        let pending = store::pending_ids(&self.pool, report_id).await?;
        for batch in pending.chunks(self.config.batch_size.clamp(1, 100)) {
            let mut attempts = 0u32;
            let mut backoff = Duration::from_millis(self.config.retry_backoff_ms);
            let outcomes = loop {
                attempts += 1;
                self.limiter.until_key_ready(&business_id).await;
                let call =
                    client::fetch_batch(&self.client, &client.client_url, &client.auth, batch)
                        .await;
                match call {
                    Ok(records) => break match_records(batch, records),
                    Err(error) => {
                        tracing::warn!(report = %report_id, attempt = attempts, error = %error.message, "reporting call failed");
                        if !error.retryable || attempts >= self.config.max_attempts.max(1) {
                            let reason = format!(
                                "client endpoint failed after {attempts} attempt(s): {}",
                                error.message
                            );
                            break batch
                                .iter()
                                .map(|id| (id.clone(), Err(reason.clone())))
                                .collect();
                        }
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2)
                            .min(Duration::from_millis(self.config.max_retry_backoff_ms));
                    }
                }
            };
            store::record_batch(&self.pool, report_id, &outcomes, attempts).await?;
        }
        self.build(report_id, business_id, business, &client).await
    }

    async fn build(
        &self,
        report_id: &str,
        business_id: i64,
        business: &str,
        client: &store::ClientConfig,
    ) -> Result<(), StoreError> {
        let texts = store::fetched(&self.pool, report_id).await?;
        let mut records = Vec::with_capacity(texts.len());
        for text in texts {
            let record: ReportRecord = serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("stored record: {e}")))?;
            match goaml::check_record(&record) {
                Ok(checked) => records.push(checked),
                Err(problem) => {
                    return Err(StoreError::Corrupt(format!(
                        "stored record no longer checks: {problem}"
                    )))
                }
            }
        }
        if records.is_empty() {
            store::set_status(
                &self.pool,
                report_id,
                "failed",
                Some("no transaction record could be fetched"),
            )
            .await?;
            return Ok(());
        }
        let Some(view) = store::report(&self.pool, business_id, report_id).await? else {
            return Ok(());
        };
        let entity = client
            .entity
            .clone()
            .unwrap_or_else(|| ReportingEntity::placeholder(business));
        let reason = format!(
            "{} report generated by Vigil from {} of {} transactions ({})",
            view.report_type,
            records.len(),
            view.total,
            if view.source == "rules" {
                "marked reportable by rules"
            } else {
                "uploaded list"
            }
        );
        let header = ReportHeader {
            entity: &entity,
            report_code: &view.report_type,
            reference: report_id,
            report_date: &iso_time(now_ms()),
            reason: &reason,
        };
        match goaml::build(&header, &records) {
            Ok(xml) => store::save_xml(&self.pool, report_id, &xml).await,
            Err(problem) => {
                store::set_status(&self.pool, report_id, "failed", Some(&problem)).await
            }
        }
    }
}

/// Pairs a batch's IDs with the client's answer: each ID gets its checked record (as JSON) or
/// the reason it failed.
fn match_records(
    batch: &[String],
    records: Vec<Result<ReportRecord, (Option<String>, String)>>,
) -> Vec<(String, store::ItemOutcome)> {
    let mut found: std::collections::HashMap<String, store::ItemOutcome> =
        std::collections::HashMap::new();
    for record in records {
        match record {
            Ok(record) => {
                let Some(number) = record.transaction_number.clone() else {
                    continue;
                };
                let outcome = goaml::check_record(&record)
                    .map_err(|problem| format!("record is not reportable: {problem}"))
                    .and_then(|_| serde_json::to_string(&record).map_err(|e| e.to_string()));
                found.entry(number).or_insert(outcome);
            }
            Err((Some(number), problem)) => {
                found.entry(number).or_insert(Err(problem));
            }
            Err((None, _)) => {}
        }
    }
    batch
        .iter()
        .map(|id| {
            let outcome = found.remove(id).unwrap_or_else(|| {
                Err("the client endpoint did not return this transaction".to_owned())
            });
            (id.clone(), outcome)
        })
        .collect()
}

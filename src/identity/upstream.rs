//! The upstream HTTP provider adapter: `POST {base_url}/kyc/nin|bvn|cac` with the configured
//! credential headers, a time limit per attempt, retries with doubling backoff on timeouts,
//! connection errors and 5xx answers, and a circuit breaker that stops calling a provider that
//! keeps failing (open after `breaker_failures` failed lookups in a row, one trial lookup after
//! `breaker_reset_secs`). Answers are normalised into §2.7 ([`super::model::normalize`]); a 404
//! is "not found", never a failure.
//!
//! Calls go through Vigil's one outbound client ([`crate::outbound`]): the base URL's addresses are
//! checked against the address policy (`outbound.allow_private_upstreams` for private ranges) at
//! every connection, no proxy, no redirects, and an answer is read up to [`MAX_ANSWER_BYTES`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::UpstreamConfig;
use super::model::{normalize, LookupQuery};
use crate::outbound::{self, AddressPolicy, ClientOptions, OutboundClient, OutboundError};

/// Most bytes of one provider answer (one identity record is a few kilobytes).
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// What an upstream lookup came to.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamAnswer {
    Found(Value),
    NotFound,
}

#[derive(Debug, Default)]
struct Breaker {
    consecutive_failures: u32,
    open_until: Option<Instant>,
}

#[derive(Debug)]
pub struct UpstreamProvider {
    config: UpstreamConfig,
    client: OutboundClient,
    breaker: Mutex<Breaker>,
}

impl UpstreamProvider {
    pub fn new(config: UpstreamConfig, policy: AddressPolicy) -> Result<Self, String> {
        let client = OutboundClient::new(
            policy,
            ClientOptions::new(Duration::from_millis(config.timeout_ms), "vigil-identity/1"),
        )
        .map_err(|e| format!("cannot build the upstream client: {e}"))?;
        Ok(UpstreamProvider {
            config,
            client,
            breaker: Mutex::new(Breaker::default()),
        })
    }

    fn endpoint(&self, query: &LookupQuery) -> String {
        format!(
            "{}/kyc/{}",
            self.config.base_url.trim_end_matches('/'),
            query.kind().as_str()
        )
    }

    fn body(query: &LookupQuery) -> Value {
        query.audited()
    }

    /// Refuses at once while the circuit is open; lets one trial through when it half-opens.
    fn admit(&self) -> Result<(), String> {
        let mut breaker = self.breaker.lock().map_err(|_| "breaker lock poisoned")?;
        match breaker.open_until {
            Some(until) if Instant::now() < until => {
                Err("identity provider circuit is open after repeated failures".to_owned())
            }
            Some(_) => {
                // Half-open: this lookup is the trial; a failure opens the circuit again.
                breaker.open_until = None;
                breaker.consecutive_failures = self.config.breaker_failures.saturating_sub(1);
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn settle(&self, ok: bool) {
        if let Ok(mut breaker) = self.breaker.lock() {
            if ok {
                breaker.consecutive_failures = 0;
                breaker.open_until = None;
            } else {
                breaker.consecutive_failures += 1;
                if breaker.consecutive_failures >= self.config.breaker_failures {
                    breaker.open_until =
                        Some(Instant::now() + Duration::from_secs(self.config.breaker_reset_secs));
                    tracing::warn!(
                        failures = breaker.consecutive_failures,
                        "identity provider circuit opened"
                    );
                }
            }
        }
    }

    /// One lookup: attempts with retries; `Err` is a provider failure (after retries).
    pub async fn lookup(&self, query: &LookupQuery) -> Result<UpstreamAnswer, String> {
        self.admit()?;
        let mut backoff = Duration::from_millis(self.config.retry_backoff_ms);
        let mut last_error = String::new();
        for attempt in 0..=self.config.retries {
            if attempt > 0 {
                tokio::time::sleep(backoff).await;
                backoff = backoff.saturating_mul(2);
            }
            match self.attempt(query).await {
                Ok(answer) => {
                    self.settle(true);
                    return Ok(answer);
                }
                Err((retryable, error)) => {
                    tracing::warn!(attempt, kind = query.kind().as_str(), key = %query.masked_key(), %error, "identity provider attempt failed");
                    last_error = error;
                    if !retryable {
                        break;
                    }
                }
            }
        }
        self.settle(false);
        Err(last_error)
    }

    async fn attempt(&self, query: &LookupQuery) -> Result<UpstreamAnswer, (bool, String)> {
        let endpoint = outbound::policy::parse_url(&self.endpoint(query))
            .map_err(|e| (false, format!("identity.upstream.base_url {e}")))?;
        let refused = |error: OutboundError| {
            let retryable = error.is_retryable();
            match error {
                OutboundError::Refused(refused) => {
                    (retryable, format!("identity.upstream.base_url {refused}"))
                }
                other => (retryable, format!("identity provider unreachable: {other}")),
            }
        };
        let mut request = self
            .client
            .request(reqwest::Method::POST, &endpoint)
            .map_err(refused)?
            .json(&Self::body(query));
        let c = &self.config;
        if !c.api_key_header.is_empty() && !c.api_key.is_empty() {
            request = request.header(&c.api_key_header, &c.api_key);
        }
        if !c.api_secret_header.is_empty() && !c.api_secret.is_empty() {
            request = request.header(&c.api_secret_header, &c.api_secret);
        }
        let response = self.client.send(request).await.map_err(refused)?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(UpstreamAnswer::NotFound);
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err((true, format!("identity provider answered {status}")));
        }
        if !status.is_success() {
            return Err((
                false,
                format!("identity provider refused the lookup: {status}"),
            ));
        }
        let bytes = outbound::read_limited(response, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| (e.is_retryable(), format!("identity provider answer: {e}")))?;
        let body: Value = serde_json::from_slice(&bytes)
            .map_err(|e| (true, format!("identity provider answer is not JSON: {e}")))?;
        let data = normalize(query.kind(), &body).ok_or((
            false,
            "identity provider answer is not a JSON object".to_owned(),
        ))?;
        Ok(UpstreamAnswer::Found(data))
    }
}

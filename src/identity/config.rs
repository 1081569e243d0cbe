//! `[identity]`: which provider answers lookups, the cache, the CDD name match, and the upstream
//! HTTP provider's address, credentials, timeouts, retries and circuit breaker.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which provider answers lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// The registry in Vigil's own store (`vigil registry import`); the embedded default.
    Local,
    /// An upstream HTTP identity provider (`[identity.upstream]`).
    Upstream,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdentityConfig {
    pub provider: ProviderKind,
    /// Registry files (`nin.json`, `bvn.json`, `cac.json`, or `.csv`) loaded into the local
    /// registry at start for each kind that is still empty. Empty: load nothing.
    pub seed_dir: PathBuf,
    /// How long a found record is served from memory before the provider is asked again.
    pub cache_ttl_secs: u64,
    /// Most records the cache holds (least recently used are dropped first).
    pub cache_entries: usize,
    /// CDD verification: the least name score (0–100, the screening matcher) for a match.
    pub name_match_threshold: f32,
    pub upstream: UpstreamConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// The provider's base address; lookups go to `{base_url}/kyc/nin`, `/kyc/bvn`, `/kyc/cac`.
    pub base_url: String,
    /// Header names and values of the provider's credentials (empty: not sent).
    pub api_key_header: String,
    pub api_key: String,
    pub api_secret_header: String,
    pub api_secret: String,
    /// One attempt's time limit.
    pub timeout_ms: u64,
    /// Further attempts after a failed one (timeouts, connection errors, 5xx).
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub retry_backoff_ms: u64,
    /// Consecutive failed lookups that open the circuit.
    pub breaker_failures: u32,
    /// How long an open circuit refuses lookups before one trial goes through.
    pub breaker_reset_secs: u64,
}

impl Default for IdentityConfig {
    fn default() -> Self {
        IdentityConfig {
            provider: ProviderKind::Local,
            seed_dir: PathBuf::from("fixtures/identity"),
            cache_ttl_secs: 3600,
            cache_entries: 10_000,
            name_match_threshold: 85.0,
            upstream: UpstreamConfig::default(),
        }
    }
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        UpstreamConfig {
            base_url: String::new(),
            api_key_header: "apiKey".into(),
            api_key: String::new(),
            api_secret_header: "apiSecret".into(),
            api_secret: String::new(),
            timeout_ms: 5_000,
            retries: 2,
            retry_backoff_ms: 200,
            breaker_failures: 5,
            breaker_reset_secs: 30,
        }
    }
}

impl IdentityConfig {
    /// The first problem, as (key, problem).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let mut push = |key: &str, problem: &str| problems.push((key.into(), problem.into()));
        if self.cache_entries == 0 {
            push("identity.cache_entries", "must be at least 1");
        }
        if !(0.0..=100.0).contains(&self.name_match_threshold) {
            push("identity.name_match_threshold", "must be between 0 and 100");
        }
        if self.provider == ProviderKind::Upstream {
            match url::Url::parse(&self.upstream.base_url) {
                Ok(url) if matches!(url.scheme(), "http" | "https") => {}
                _ => push(
                    "identity.upstream.base_url",
                    "must be an http(s) URL when identity.provider is upstream",
                ),
            }
        }
        if self.upstream.timeout_ms == 0 {
            push("identity.upstream.timeout_ms", "must be positive");
        }
        if self.upstream.breaker_failures == 0 {
            push("identity.upstream.breaker_failures", "must be at least 1");
        }
        problems
    }
}

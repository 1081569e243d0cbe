//! `[reporting]`: limits of uploads and of the calls to the client's reporting endpoint.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportingConfig {
    /// Most transaction IDs one upload may carry (spec §8: 500).
    pub max_ids_per_upload: usize,
    /// Most IDs per call to the client endpoint (spec §8: 100).
    pub batch_size: usize,
    /// Most calls per second to one business's client endpoint (spec §8: 5).
    pub max_requests_per_second: u32,
    /// One call's time limit.
    pub request_timeout_ms: u64,
    /// Attempts per batch before its IDs are marked failed.
    pub max_attempts: u32,
    /// Wait before the first retry of a batch; doubled for each further one.
    pub retry_backoff_ms: u64,
    /// Longest wait between two attempts.
    pub max_retry_backoff_ms: u64,
}

impl Default for ReportingConfig {
    fn default() -> Self {
        ReportingConfig {
            max_ids_per_upload: 500,
            batch_size: 100,
            max_requests_per_second: 5,
            request_timeout_ms: 10_000,
            max_attempts: 5,
            retry_backoff_ms: 500,
            max_retry_backoff_ms: 8_000,
        }
    }
}

impl ReportingConfig {
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut push = |key: &str, problem: &str| out.push((key.to_owned(), problem.to_owned()));
        if !(1..=500).contains(&self.max_ids_per_upload) {
            push(
                "reporting.max_ids_per_upload",
                "must be between 1 and 500 (spec §8)",
            );
        }
        if !(1..=100).contains(&self.batch_size) {
            push(
                "reporting.batch_size",
                "must be between 1 and 100 (spec §8)",
            );
        }
        if !(1..=5).contains(&self.max_requests_per_second) {
            push(
                "reporting.max_requests_per_second",
                "must be between 1 and 5 (spec §8)",
            );
        }
        if self.request_timeout_ms == 0 {
            push("reporting.request_timeout_ms", "must be positive");
        }
        if self.max_attempts == 0 {
            push("reporting.max_attempts", "must be at least 1");
        }
        out
    }
}

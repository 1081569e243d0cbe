//! Prometheus metrics, in one registry owned by the service (not the global one, so tests and
//! several engines in one process do not collide).
//!
//! Every label combination used on a hot path is resolved once, where the path is set up (per
//! shard, per rule set, per HTTP route), and the handles are kept; events only increment them.

use std::sync::Arc;

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};

use crate::engine::evaluator::RuleObserver;
use crate::engine::rules::{Evaluation, RuleSet};
use crate::model::Action;

const LATENCY_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5,
];
const EVAL_BUCKETS: &[f64] = &[
    0.000_002, 0.000_005, 0.000_01, 0.000_02, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.005,
];

#[derive(Clone)]
pub struct Metrics {
    pub registry: Registry,
    pub http_requests: IntCounterVec,
    pub http_latency: HistogramVec,
    pub evaluations: IntCounterVec,
    pub eval_seconds: HistogramVec,
    pub queue_depth: IntGaugeVec,
    pub users_tracked: IntGaugeVec,
    pub decisions: IntCounterVec,
    pub duplicates: IntCounter,
    pub rule_hits: IntCounterVec,
    pub rule_errors: IntCounterVec,
    pub rules_reloads: IntCounterVec,
    pub rules_loaded: IntGauge,
    pub rules_reload_failing: IntGauge,
    pub store_batch_size: Histogram,
    pub store_commit_seconds: Histogram,
    pub store_errors: IntCounter,
    pub screening_list_entities: IntGaugeVec,
    pub screening_list_failing: IntGaugeVec,
    pub screening_reloads: IntCounterVec,
    pub screening_build_seconds: Histogram,
    /// Webhook deliveries waiting for their (next) attempt.
    pub webhook_pending: IntGauge,
    /// Webhook attempts by outcome: delivered, retried, dead.
    pub webhook_deliveries: IntCounterVec,
    /// Risk-monitoring re-checks that found new hits and queued a delivery.
    pub monitoring_redeliveries: IntCounter,
}

fn register<C: prometheus::core::Collector + Clone + 'static>(
    registry: &Registry,
    collector: C,
) -> C {
    registry
        .register(Box::new(collector.clone()))
        .expect("metric names are unique and valid");
    collector
}

/// The Kafka source's handles (labels resolved once).
pub struct KafkaMetrics {
    pub consumed: IntCounter,
    pub produced_decisions: IntCounter,
    pub produced_cases: IntCounter,
    pub produced_dead_letters: IntCounter,
    pub dead_letters: IntCounter,
    pub lag: IntGaugeVec,
    pub in_flight: IntGauge,
    pub paused_partitions: IntGauge,
    pub assigned_partitions: IntGauge,
    pub commits: IntCounter,
    pub rebalances: IntCounter,
    pub skipped_replays: IntCounter,
    pub changelog_records: IntCounter,
    pub restored_users: IntCounter,
    /// Input messages that came with account facts from the detection stage.
    pub account_facts: IntCounter,
}

impl KafkaMetrics {
    pub fn produced(&self, kind: crate::sinks::kafka::OutputKind) -> &IntCounter {
        use crate::sinks::kafka::OutputKind;
        match kind {
            OutputKind::Decision => &self.produced_decisions,
            OutputKind::Case => &self.produced_cases,
            OutputKind::DeadLetter => &self.produced_dead_letters,
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new_custom(Some("vigil".into()), None).expect("valid prefix");
        let r = &registry;
        Metrics {
            http_requests: register(
                r,
                IntCounterVec::new(
                    Opts::new(
                        "http_requests_total",
                        "HTTP requests by route and status class",
                    ),
                    &["route", "class"],
                )
                .expect("valid"),
            ),
            http_latency: register(
                r,
                HistogramVec::new(
                    HistogramOpts::new("http_request_seconds", "HTTP request latency by route")
                        .buckets(LATENCY_BUCKETS.to_vec()),
                    &["route"],
                )
                .expect("valid"),
            ),
            evaluations: register(
                r,
                IntCounterVec::new(
                    Opts::new("evaluations_total", "Transactions evaluated, by shard"),
                    &["shard"],
                )
                .expect("valid"),
            ),
            eval_seconds: register(
                r,
                HistogramVec::new(
                    HistogramOpts::new("evaluation_seconds", "Time to evaluate one transaction")
                        .buckets(EVAL_BUCKETS.to_vec()),
                    &["shard"],
                )
                .expect("valid"),
            ),
            queue_depth: register(
                r,
                IntGaugeVec::new(
                    Opts::new("shard_queue_depth", "Events waiting for a shard"),
                    &["shard"],
                )
                .expect("valid"),
            ),
            users_tracked: register(
                r,
                IntGaugeVec::new(
                    Opts::new("shard_users", "Users whose state a shard holds"),
                    &["shard"],
                )
                .expect("valid"),
            ),
            decisions: register(
                r,
                IntCounterVec::new(
                    Opts::new("decisions_total", "Decisions by action"),
                    &["action"],
                )
                .expect("valid"),
            ),
            duplicates: register(
                r,
                IntCounter::new(
                    "duplicate_submissions_total",
                    "Resubmitted references answered with the stored decision",
                )
                .expect("valid"),
            ),
            rule_hits: register(
                r,
                IntCounterVec::new(Opts::new("rule_hits_total", "Rule hits by rule"), &["rule"])
                    .expect("valid"),
            ),
            rule_errors: register(
                r,
                IntCounterVec::new(
                    Opts::new("rule_errors_total", "Rule evaluation errors by rule"),
                    &["rule"],
                )
                .expect("valid"),
            ),
            rules_reloads: register(
                r,
                IntCounterVec::new(
                    Opts::new("rules_reloads_total", "Rule pack reloads by result"),
                    &["result"],
                )
                .expect("valid"),
            ),
            rules_loaded: register(
                r,
                IntGauge::new("rules_loaded", "Rules in the active pack").expect("valid"),
            ),
            rules_reload_failing: register(
                r,
                IntGauge::new(
                    "rules_reload_failing",
                    "1 while the newest rule files failed to load and the previous pack serves",
                )
                .expect("valid"),
            ),
            screening_list_entities: register(
                r,
                IntGaugeVec::new(
                    Opts::new("screening_list_entities", "Entities of each loaded list"),
                    &["list"],
                )
                .expect("valid"),
            ),
            screening_list_failing: register(
                r,
                IntGaugeVec::new(
                    Opts::new(
                        "screening_list_failing",
                        "1 while the newest version of a list failed to load and the previous one serves",
                    ),
                    &["list"],
                )
                .expect("valid"),
            ),
            screening_reloads: register(
                r,
                IntCounterVec::new(
                    Opts::new("screening_reloads_total", "Screening index rebuilds by result"),
                    &["result"],
                )
                .expect("valid"),
            ),
            webhook_pending: register(
                r,
                IntGauge::new(
                    "webhook_deliveries_pending",
                    "Webhook deliveries waiting for their next attempt",
                )
                .expect("valid"),
            ),
            webhook_deliveries: register(
                r,
                IntCounterVec::new(
                    Opts::new(
                        "webhook_deliveries_total",
                        "Webhook delivery attempts by outcome (delivered, retried, dead)",
                    ),
                    &["result"],
                )
                .expect("valid"),
            ),
            monitoring_redeliveries: register(
                r,
                IntCounter::new(
                    "monitoring_redeliveries_total",
                    "Risk-monitoring re-checks that found new hits and queued a delivery",
                )
                .expect("valid"),
            ),
            screening_build_seconds: register(
                r,
                Histogram::with_opts(
                    HistogramOpts::new(
                        "screening_build_seconds",
                        "Time to load changed lists and build the screening index",
                    )
                    .buckets(vec![0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0]),
                )
                .expect("valid"),
            ),
            store_batch_size: register(
                r,
                Histogram::with_opts(
                    HistogramOpts::new("store_batch_size", "Records per group commit").buckets(
                        vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0],
                    ),
                )
                .expect("valid"),
            ),
            store_commit_seconds: register(
                r,
                Histogram::with_opts(
                    HistogramOpts::new("store_commit_seconds", "Time to commit one batch")
                        .buckets(LATENCY_BUCKETS.to_vec()),
                )
                .expect("valid"),
            ),
            store_errors: register(
                r,
                IntCounter::new("store_errors_total", "Failed store batches (retried)")
                    .expect("valid"),
            ),
            registry,
        }
    }

    /// Handles for one shard.
    pub fn shard(&self, shard: usize) -> ShardMetrics {
        let label = shard.to_string();
        ShardMetrics {
            evaluations: self.evaluations.with_label_values(&[&label]),
            eval_seconds: self.eval_seconds.with_label_values(&[&label]),
            queue_depth: self.queue_depth.with_label_values(&[&label]),
            users: self.users_tracked.with_label_values(&[&label]),
            decisions: Action::ALL.map(|a| self.decisions.with_label_values(&[a.as_str()])),
            duplicates: self.duplicates.clone(),
        }
    }

    /// Handles for one HTTP route.
    pub fn route(&self, route: &str) -> RouteMetrics {
        RouteMetrics {
            latency: self.http_latency.with_label_values(&[route]),
            classes: ["2xx", "3xx", "4xx", "5xx"]
                .map(|class| self.http_requests.with_label_values(&[route, class])),
        }
    }

    /// Registers the Kafka source's metrics (once per service) and resolves their labels.
    /// A counter registered on this registry (for components that own their metrics).
    pub fn counter(&self, name: &str, help: &str) -> IntCounter {
        register(
            &self.registry,
            IntCounter::new(name, help).expect("valid metric"),
        )
    }

    /// A gauge registered on this registry.
    pub fn gauge(&self, name: &str, help: &str) -> IntGauge {
        register(
            &self.registry,
            IntGauge::new(name, help).expect("valid metric"),
        )
    }

    pub fn kafka(&self, decisions: &str, cases: &str, dead_letter: &str) -> Arc<KafkaMetrics> {
        let r = &self.registry;
        let produced = register(
            r,
            IntCounterVec::new(
                Opts::new(
                    "kafka_produced_total",
                    "Output records acknowledged by the broker, per topic",
                ),
                &["topic"],
            )
            .expect("valid metric"),
        );
        let counter = |name: &str, help: &str| {
            register(r, IntCounter::new(name, help).expect("valid metric"))
        };
        let gauge =
            |name: &str, help: &str| register(r, IntGauge::new(name, help).expect("valid metric"));
        Arc::new(KafkaMetrics {
            consumed: counter("kafka_consumed_total", "Input messages taken from the input topic"),
            produced_decisions: produced.with_label_values(&[decisions]),
            produced_cases: produced.with_label_values(&[cases]),
            produced_dead_letters: produced.with_label_values(&[dead_letter]),
            dead_letters: counter(
                "kafka_dead_letters_total",
                "Input messages that could not be parsed or validated and went to the dead-letter topic",
            ),
            lag: register(
                r,
                IntGaugeVec::new(
                    Opts::new("kafka_consumer_lag", "Messages between the committed position and the end of each assigned input partition"),
                    &["partition"],
                )
                .expect("valid metric"),
            ),
            in_flight: gauge("kafka_in_flight", "Input messages taken whose outputs are not yet acknowledged"),
            paused_partitions: gauge("kafka_paused_partitions", "Input partitions paused for backpressure"),
            assigned_partitions: gauge("kafka_assigned_partitions", "Input partitions assigned to this instance"),
            commits: counter("kafka_commits_total", "Offset commits (each after its changelog write)"),
            rebalances: counter("kafka_rebalances_total", "Consumer-group rebalances seen"),
            skipped_replays: counter(
                "kafka_replayed_outputs_skipped_total",
                "Outputs not written again because the broker already held them (replay after a crash)",
            ),
            changelog_records: counter("kafka_changelog_records_total", "User states written to the changelog"),
            restored_users: counter("kafka_restored_users_total", "User states restored from the changelog"),
            account_facts: counter("kafka_account_facts_total", "Input messages that came with account facts from the detection stage"),
        })
    }

    /// Per-rule counters for a freshly compiled rule set.
    pub fn rule_counters(&self, rules: &RuleSet) -> Arc<RuleCounters> {
        Arc::new(RuleCounters {
            fingerprint: rules.fingerprint.clone(),
            hits: rules
                .rules
                .iter()
                .map(|r| self.rule_hits.with_label_values(&[&r.meta.id]))
                .collect(),
            errors: rules
                .rules
                .iter()
                .map(|r| self.rule_errors.with_label_values(&[&r.meta.id]))
                .collect(),
        })
    }

    pub fn render(&self) -> String {
        use prometheus::Encoder;
        let mut buffer = Vec::new();
        let encoder = prometheus::TextEncoder::new();
        if encoder
            .encode(&self.registry.gather(), &mut buffer)
            .is_err()
        {
            return String::new();
        }
        String::from_utf8(buffer).unwrap_or_default()
    }
}

#[derive(Clone)]
pub struct ShardMetrics {
    pub evaluations: IntCounter,
    pub eval_seconds: Histogram,
    pub queue_depth: IntGauge,
    pub users: IntGauge,
    pub decisions: [IntCounter; 3],
    pub duplicates: IntCounter,
}

#[derive(Clone)]
pub struct RouteMetrics {
    pub latency: Histogram,
    classes: [IntCounter; 4],
}

impl RouteMetrics {
    pub fn record(&self, status: u16, seconds: f64) {
        self.latency.observe(seconds);
        let class = match status {
            200..=299 => 0,
            300..=399 => 1,
            400..=499 => 2,
            _ => 3,
        };
        self.classes[class].inc();
    }
}

/// Hit and error counters for the rules of one rule set, by rule index.
pub struct RuleCounters {
    pub fingerprint: String,
    hits: Vec<IntCounter>,
    errors: Vec<IntCounter>,
}

impl RuleObserver for RuleCounters {
    fn observe(&self, rules: &RuleSet, evaluation: &Evaluation) {
        if rules.fingerprint != self.fingerprint {
            return;
        }
        for &index in &evaluation.hits {
            if let Some(counter) = self.hits.get(index) {
                counter.inc();
            }
        }
        for (index, _) in &evaluation.errors {
            if let Some(counter) = self.errors.get(*index) {
                counter.inc();
            }
        }
    }
}

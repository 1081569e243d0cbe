//! The `[kafka]` settings: which brokers and topics, how often offsets are committed, how much
//! may be in flight before the consumer pauses, and librdkafka properties passed through as is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KafkaConfig {
    /// `host:port[,host:port…]`; empty means no Kafka (HTTP intake only).
    pub brokers: String,
    /// The consumer group every instance of one deployment joins.
    pub group_id: String,
    pub client_id: String,
    /// 2.1 payloads, keyed by `anonymizedUserData.uniqueId`, tenant in the `vigil-tenant` header.
    pub input_topic: String,
    pub decisions_topic: String,
    pub cases_topic: String,
    pub dead_letter_topic: String,
    /// Compacted: the latest state of every streamed user, keyed `<businessId>/<uniqueId>`.
    pub changelog_topic: String,
    /// Compacted, one partition: rule-pack and list changes that every instance applies.
    pub control_topic: String,
    /// The header naming the tenant (business name) of an input message.
    pub tenant_header: String,
    /// How often finished input offsets are committed (after the changelog is written).
    pub commit_interval_ms: u64,
    /// Input messages taken but not yet finished (outputs acknowledged) beyond which the
    /// consumer pauses its partitions; it resumes below half.
    pub max_in_flight: usize,
    /// How long a start-up or rebalance read of a changelog or output partition may take.
    pub restore_timeout_ms: u64,
    /// How often every instance reloads the blacklists from the shared database, the safety net
    /// behind the control topic's announcements.
    pub control_resync_secs: u64,
    /// librdkafka properties for every client, e.g. `"security.protocol" = "SASL_SSL"`.
    pub properties: BTreeMap<String, String>,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            brokers: String::new(),
            group_id: "vigil".into(),
            client_id: "vigil".into(),
            input_topic: "vigil.transactions".into(),
            decisions_topic: "vigil.decisions".into(),
            cases_topic: "vigil.cases".into(),
            dead_letter_topic: "vigil.dead-letter".into(),
            changelog_topic: "vigil.state".into(),
            control_topic: "vigil.control".into(),
            tenant_header: "vigil-tenant".into(),
            commit_interval_ms: 1_000,
            max_in_flight: 20_000,
            restore_timeout_ms: 120_000,
            control_resync_secs: 60,
            properties: BTreeMap::new(),
        }
    }
}

impl KafkaConfig {
    pub fn enabled(&self) -> bool {
        !self.brokers.trim().is_empty()
    }

    /// The first problem with these settings, as (key, problem).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let mut problem = |key: &str, text: &str| {
            problems.push((format!("kafka.{key}"), text.to_owned()));
        };
        for (key, value) in [
            ("group_id", &self.group_id),
            ("client_id", &self.client_id),
            ("input_topic", &self.input_topic),
            ("decisions_topic", &self.decisions_topic),
            ("cases_topic", &self.cases_topic),
            ("dead_letter_topic", &self.dead_letter_topic),
            ("changelog_topic", &self.changelog_topic),
            ("control_topic", &self.control_topic),
            ("tenant_header", &self.tenant_header),
        ] {
            if value.trim().is_empty() {
                problem(key, "must not be empty");
            }
        }
        let outputs = [
            &self.decisions_topic,
            &self.cases_topic,
            &self.dead_letter_topic,
            &self.changelog_topic,
            &self.control_topic,
        ];
        if outputs.contains(&&self.input_topic) {
            problem("input_topic", "must differ from every output topic");
        }
        if self.commit_interval_ms < 10 {
            problem("commit_interval_ms", "must be at least 10");
        }
        if self.max_in_flight == 0 {
            problem("max_in_flight", "must be at least 1");
        }
        if self.restore_timeout_ms == 0 {
            problem("restore_timeout_ms", "must be positive");
        }
        if self.control_resync_secs == 0 {
            problem("control_resync_secs", "must be positive");
        }
        for key in self.properties.keys() {
            if matches!(
                key.as_str(),
                "enable.auto.commit" | "enable.idempotence" | "group.id" | "bootstrap.servers"
            ) {
                problem(
                    "properties",
                    "must not set enable.auto.commit, enable.idempotence, group.id or bootstrap.servers (Vigil sets them)",
                );
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_disabled() {
        let config = KafkaConfig::default();
        assert!(config.problems().is_empty());
        assert!(!config.enabled());
    }

    #[test]
    fn an_input_topic_equal_to_an_output_topic_is_refused() {
        let config = KafkaConfig {
            brokers: "127.0.0.1:9092".into(),
            decisions_topic: "vigil.transactions".into(),
            ..KafkaConfig::default()
        };
        assert_eq!(config.problems()[0].0, "kafka.input_topic");
    }

    #[test]
    fn properties_that_would_break_the_guarantees_are_refused() {
        let mut config = KafkaConfig::default();
        config
            .properties
            .insert("enable.auto.commit".into(), "true".into());
        assert_eq!(config.problems()[0].0, "kafka.properties");
    }
}

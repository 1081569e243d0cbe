//! `vigil kafka detect`: the account graph and its detectors as a stage in front of the input
//! topic, so that streamed payments are judged with account facts the way HTTP and replay ones
//! are.
//!
//! Why a stage: the input topic is keyed by user, so one payment's two accounts, and the accounts
//! of a cycle or a fan, sit on different partitions and instances. The cross-account detectors
//! need one ordered view of the tenant's payments; the stage gives it and the decisions stay with
//! the user's partition.
//!
//! Data flow: the stage reads the payments topic (keyed by tenant, so that one tenant's payments
//! are one partition, in order) in the consumer group `<group_id>-detect`. Per source partition
//! it keeps one [`AccountGraph`]; each valid payment is observed (exactly what
//! `engine::accounts::stage` does for HTTP and replay) and forwarded to the input topic keyed by
//! `uniqueId`, with the resulting [`GraphFacts`] as JSON in the header [`GRAPH_HEADER`]. The
//! input topic's consumers attach those facts to the transaction instead of computing any, so a
//! decision depends only on its message: the same across restarts, rebalances and any number of
//! instances. Messages that are not valid payments are forwarded without facts (the consumer
//! dead-letters them).
//!
//! State: when a partition is first seen, or a message is not the one after the last seen (the
//! partition moved here, or the stage restarted), its graph is rebuilt by reading the source
//! partition again from `restore_days` before that message's timestamp up to it, observing each
//! payment without forwarding. The graph then is what it would have been had this process read
//! the partition from there all along; history older than `restore_days` is forgotten, as the
//! HTTP path's restore forgets it.
//!
//! Forwarding, commits and re-forwarding after a crash are `repartition`'s: see
//! [`super::repartition`].

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{BorrowedMessage, Headers, Message};
use rdkafka::{Offset, TopicPartitionList};
use xxhash_rust::xxh3::xxh3_64;

use super::config::KafkaConfig;
use super::repartition::{forward, RepartitionReport};
use super::{client_config, KafkaSourceError};
use crate::engine::accounts::{AccountGraph, DetectorSettings, GraphFacts};
use crate::model::{parse_json, Transaction, TransactionPayload, ValidationClock};

/// The header carrying a payment's account facts from the stage to the input topic's consumers.
pub const GRAPH_HEADER: &str = "vigil-graph";
/// The largest facts header a consumer accepts.
pub const MAX_GRAPH_HEADER_BYTES: usize = 256 * 1024;
/// A rebuild gives up when the source yields nothing for this long.
const RESTORE_STALL: Duration = Duration::from_secs(60);

/// What a stage needs besides the Kafka settings.
#[derive(Debug, Clone, Copy)]
pub struct DetectionSettings {
    /// The pack's `[detectors]` section (read once at start: restart the stage after changing it).
    pub detectors: DetectorSettings,
    /// How far back a partition's graph is rebuilt, in days.
    pub restore_days: u32,
    pub max_future_skew_ms: i64,
}

/// One source partition's graph and the offset it expects next.
struct PartitionGraph {
    graph: AccountGraph,
    next: i64,
}

/// The stage's state: a graph per source partition.
pub struct Detection {
    config: KafkaConfig,
    from: String,
    settings: DetectionSettings,
    graphs: HashMap<i32, PartitionGraph>,
    scratch: Vec<u8>,
    restored: u64,
}

impl Detection {
    pub fn new(config: &KafkaConfig, from: &str, settings: DetectionSettings) -> Detection {
        Detection {
            config: config.clone(),
            from: from.to_owned(),
            settings,
            graphs: HashMap::new(),
            scratch: Vec::new(),
            restored: 0,
        }
    }

    /// Source messages read again to rebuild graphs so far.
    pub fn restored(&self) -> u64 {
        self.restored
    }

    /// The encoded facts of `message`, `None` when it is not a valid payment. Rebuilds the
    /// partition's graph first when `message` does not follow the last one seen.
    pub fn facts(
        &mut self,
        message: &BorrowedMessage<'_>,
    ) -> Result<Option<Vec<u8>>, KafkaSourceError> {
        let partition = message.partition();
        let offset = message.offset();
        if self.graphs.get(&partition).map(|g| g.next) != Some(offset) {
            let graph = self.rebuild(partition, offset, message.timestamp().to_millis())?;
            self.graphs.insert(
                partition,
                PartitionGraph {
                    graph,
                    next: offset,
                },
            );
        }
        let Some(state) = self.graphs.get_mut(&partition) else {
            return Ok(None);
        };
        state.next = offset + 1;
        let tenant = tenant_of(&self.config, message.headers());
        Ok(message_facts(
            &mut state.graph,
            &self.settings,
            &mut self.scratch,
            tenant,
            message.payload(),
        ))
    }

    /// The graph of `partition` as it stood before `offset`: the source read again from
    /// `restore_days` before `timestamp_ms`.
    fn rebuild(
        &mut self,
        partition: i32,
        offset: i64,
        timestamp_ms: Option<i64>,
    ) -> Result<AccountGraph, KafkaSourceError> {
        let mut graph = AccountGraph::default();
        let consumer: BaseConsumer = client_config(&self.config)
            .set(
                "group.id",
                format!("{}-detect-restore", self.config.group_id),
            )
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .create()?;
        let timeout = Duration::from_secs(10);
        let (low, _) = consumer.fetch_watermarks(&self.from, partition, timeout)?;
        let mut start = low;
        if let Some(timestamp) = timestamp_ms {
            let back = i64::from(self.settings.restore_days) * 86_400_000;
            let mut wanted = TopicPartitionList::new();
            wanted.add_partition_offset(
                &self.from,
                partition,
                Offset::Offset(timestamp.saturating_sub(back).max(0)),
            )?;
            // A broker that cannot look offsets up by time costs a longer read, not a failure.
            match consumer.offsets_for_times(wanted, timeout) {
                Ok(found) => {
                    if let Some(Offset::Offset(at)) = found
                        .find_partition(&self.from, partition)
                        .map(|e| e.offset())
                    {
                        start = at.max(low);
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, partition, "offsets by time unavailable; rebuilding from the start");
                }
            }
        }
        if start >= offset {
            return Ok(graph);
        }
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(&self.from, partition, Offset::Offset(start))?;
        consumer.assign(&list)?;
        let mut progress = Instant::now();
        let mut next = start;
        while next < offset {
            if progress.elapsed() > RESTORE_STALL {
                return Err(KafkaSourceError::Restore(format!(
                    "{}/{partition}: no message for {} s while rebuilding the account graph at offset {next} of {offset}",
                    self.from,
                    RESTORE_STALL.as_secs()
                )));
            }
            let Some(result) = consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            let message = result?;
            progress = Instant::now();
            next = message.offset() + 1;
            if message.offset() >= offset {
                break;
            }
            let tenant = tenant_of(&self.config, message.headers());
            if let Some((tenant, tx)) =
                payment(&self.settings, &mut self.scratch, tenant, message.payload())
            {
                graph.observe(tenant, &tx, &self.settings.detectors);
            }
            self.restored += 1;
        }
        tracing::info!(
            topic = %self.from,
            partition,
            from = start,
            to = offset,
            accounts = graph.account_count(),
            "account graph rebuilt"
        );
        Ok(graph)
    }
}

/// Runs the stage from `from` into the input topic until `stop` is set, or, with `exit_at_end`,
/// until every partition of `from` is read to the end it had when the run started.
pub fn run(
    config: &KafkaConfig,
    from: &str,
    exit_at_end: bool,
    stop: &AtomicBool,
    settings: DetectionSettings,
) -> Result<RepartitionReport, KafkaSourceError> {
    let mut detection = Detection::new(config, from, settings);
    forward(config, from, exit_at_end, stop, Some(&mut detection))
}

/// The graph's tenant key of a tenant name: the stage needs no database, only a key that is the
/// same for one name everywhere.
pub fn tenant_key(name: &str) -> i64 {
    xxh3_64(name.as_bytes()) as i64
}

/// What the stage does with one message of the tenant named `tenant`: observe the payment in
/// `graph` and encode the facts, or `None` when the message is not a valid payment.
pub fn message_facts(
    graph: &mut AccountGraph,
    settings: &DetectionSettings,
    scratch: &mut Vec<u8>,
    tenant: Option<&str>,
    payload: Option<&[u8]>,
) -> Option<Vec<u8>> {
    let (tenant, tx) = payment(settings, scratch, tenant, payload)?;
    let facts = graph.observe(tenant, &tx, &settings.detectors);
    Some(encode(&facts))
}

fn tenant_of<'a>(
    config: &KafkaConfig,
    headers: Option<&'a rdkafka::message::BorrowedHeaders>,
) -> Option<&'a str> {
    headers?
        .iter()
        .find(|h| h.key == config.tenant_header)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
}

/// A message as a payment: its tenant key and validated transaction.
fn payment(
    settings: &DetectionSettings,
    scratch: &mut Vec<u8>,
    tenant: Option<&str>,
    payload: Option<&[u8]>,
) -> Option<(i64, Transaction)> {
    let tenant = tenant?;
    let parsed = parse_json::<TransactionPayload>(payload?, scratch).ok()?;
    let clock = ValidationClock {
        now_ms: chrono::Utc::now().timestamp_millis(),
        max_future_skew_ms: settings.max_future_skew_ms,
    };
    let tx = parsed.validate(clock).ok()?;
    Some((tenant_key(tenant), tx))
}

/// The facts as the header carries them.
pub fn encode(facts: &GraphFacts) -> Vec<u8> {
    // Plain data of numbers and strings: serialising it cannot fail.
    serde_json::to_vec(facts).unwrap_or_default()
}

/// The facts a header carries; the error says what is wrong with it.
pub fn decode(header: &[u8]) -> Result<GraphFacts, String> {
    if header.len() > MAX_GRAPH_HEADER_BYTES {
        return Err(format!(
            "is {} bytes, more than the {MAX_GRAPH_HEADER_BYTES} allowed",
            header.len()
        ));
    }
    serde_json::from_slice(header).map_err(|e| format!("is not account facts: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::accounts::{Evidence, Leg, PartyFacts};
    use crate::model::decision::Detector;

    #[test]
    fn facts_survive_the_header_exactly() {
        let facts = GraphFacts {
            sender: PartyFacts {
                present: true,
                in_count: [1, 2, 3],
                in_sum: [0.1, 1e-7, 123_456_789.123],
                days_since_first_seen: -1.0,
                pass_through_7d: 0.987_654_321,
                ..PartyFacts::default()
            },
            new_pair: true,
            cycle_length: 4,
            evidence: vec![Evidence {
                detector: Detector::Cycle,
                account: "B".into(),
                accounts: vec!["A".into(), "C".into()],
                legs: vec![Leg {
                    reference: "r1".into(),
                    from: "A".into(),
                    to: "B".into(),
                    amount: 950.5,
                    at: 1_770_000_000,
                }],
                first_at: 1_770_000_000,
                last_at: 1_770_000_000,
            }],
            ..GraphFacts::default()
        };
        assert_eq!(decode(&encode(&facts)), Ok(facts));
        assert_eq!(
            decode(&encode(&GraphFacts::default())),
            Ok(GraphFacts::default())
        );
    }

    #[test]
    fn a_malformed_or_oversized_header_is_refused_with_the_reason() {
        assert!(decode(b"{")
            .unwrap_err()
            .starts_with("is not account facts"));
        assert!(decode(br#"{"cycleLength":"four"}"#)
            .unwrap_err()
            .starts_with("is not account facts"));
        assert!(decode(br#"{"surprise":1}"#).is_err(), "unknown fields");
        let big = vec![b' '; MAX_GRAPH_HEADER_BYTES + 1];
        assert!(decode(&big).unwrap_err().contains("more than"));
    }

    #[test]
    fn one_tenant_name_is_one_key() {
        assert_eq!(tenant_key("acme-bank"), tenant_key("acme-bank"));
        assert_ne!(tenant_key("acme-bank"), tenant_key("acme-bank2"));
    }
}

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
//! its validated `uniqueId`, with the resulting [`GraphFacts`] as JSON in the header
//! [`GRAPH_HEADER`]. The input topic's consumers attach those facts to the transaction instead of
//! computing any, so a decision depends only on its message, whichever instance takes it.
//! Messages that are not valid payments are forwarded without facts (the consumer dead-letters
//! them). The broker timestamp is the validation clock, so a message validates the same whenever
//! it is read.
//!
//! State: a partition's graph is rebuilt when there is none, when a message lies before the one
//! expected, or when after a rebalance it is not the one expected; the source partition is read
//! again from the restore span before that message's timestamp up to it, replaying each payment
//! ([`AccountGraph::replay`]). Within the span the graph is the uninterrupted one; counterparty
//! memory older than the span is forgotten, as on the HTTP path's restart.
//!
//! Forwarding, commits and re-forwarding after a crash are `repartition`'s: see
//! [`super::repartition`].

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{BorrowedMessage, Headers, Message as _};
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
/// Accounts and legs an oversized piece of evidence is cut to.
const EVIDENCE_ACCOUNTS_CUT: usize = 16;
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
    /// A rebalance happened since the last message: the partition may have been elsewhere.
    suspect: bool,
}

/// A payment as the stage forwards it: the user to key it by and its encoded facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub user: String,
    pub facts: Vec<u8>,
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

    /// After a rebalance: every graph must see the offset it expects next, or be rebuilt.
    pub fn rebalanced(&mut self) {
        for graph in self.graphs.values_mut() {
            graph.suspect = true;
        }
    }

    /// Drops the graphs of partitions not in `assigned`.
    pub fn retain_partitions(&mut self, assigned: &[i32]) {
        self.graphs.retain(|p, _| assigned.contains(p));
    }

    /// Source messages read again to rebuild graphs so far.
    pub fn restored(&self) -> u64 {
        self.restored
    }

    /// `message` observed, `None` when it is not a valid payment. Rebuilds the partition's graph
    /// first when there is none, when the message lies before the one expected (the partition
    /// was read again from an earlier commit), or when after a rebalance it is not the one
    /// expected (the partition was elsewhere meanwhile). A gap while the partition stayed here
    /// (transaction markers, compaction) is no reason to rebuild.
    pub fn facts(
        &mut self,
        message: &BorrowedMessage<'_>,
    ) -> Result<Option<Observed>, KafkaSourceError> {
        let partition = message.partition();
        let offset = message.offset();
        let timestamp = message.timestamp().to_millis();
        let current = self
            .graphs
            .get(&partition)
            .is_some_and(|g| offset == g.next || (offset > g.next && !g.suspect));
        if !current {
            let graph = self.rebuild(partition, offset, timestamp)?;
            self.graphs.insert(
                partition,
                PartitionGraph {
                    graph,
                    next: offset,
                    suspect: false,
                },
            );
        }
        let Some(state) = self.graphs.get_mut(&partition) else {
            return Ok(None);
        };
        state.next = offset + 1;
        state.suspect = false;
        let tenant = tenant_of(&self.config, message.headers());
        Ok(message_facts(
            &mut state.graph,
            &self.settings,
            &mut self.scratch,
            SourceMessage {
                tenant,
                payload: message.payload(),
                timestamp_ms: timestamp,
            },
        ))
    }

    /// The graph of `partition` as it stood before `offset`: the source read again from the
    /// restore span before `timestamp_ms`.
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
        match timestamp_ms {
            Some(timestamp) => {
                let back = i64::from(self.settings.restore_span_days()) * 86_400_000;
                let mut wanted = TopicPartitionList::new();
                wanted.add_partition_offset(
                    &self.from,
                    partition,
                    Offset::Offset(timestamp.saturating_sub(back).max(0)),
                )?;
                match consumer.offsets_for_times(wanted, timeout) {
                    Ok(found) => match found
                        .find_partition(&self.from, partition)
                        .map(|e| e.offset())
                    {
                        Some(Offset::Offset(at)) => start = at.max(low),
                        // No message that recent: nothing of the span lies before this one.
                        Some(Offset::End) => start = offset,
                        _ => {
                            tracing::warn!(partition, "no offset for the restore span; rebuilding from the start of the partition")
                        }
                    },
                    // A broker that cannot look offsets up by time costs a longer read.
                    Err(error) => {
                        tracing::warn!(%error, partition, "offsets by time unavailable; rebuilding from the start of the partition");
                    }
                }
            }
            None => {
                tracing::warn!(
                    partition,
                    "message without a timestamp; rebuilding from the start of the partition"
                );
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
            let read = SourceMessage {
                tenant: tenant_of(&self.config, message.headers()),
                payload: message.payload(),
                timestamp_ms: message.timestamp().to_millis(),
            };
            replay_message(&mut graph, &self.settings, &mut self.scratch, read);
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

impl DetectionSettings {
    /// Days a rebuild reads back: `restore_days`, and at least the detector window plus the
    /// allowed lateness.
    pub fn restore_span_days(&self) -> u32 {
        let needed = self.detectors.window_days + self.detectors.lateness_hours.div_ceil(24);
        self.restore_days.max(needed)
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

/// One source message as the stage reads it.
#[derive(Debug, Clone, Copy)]
pub struct SourceMessage<'a> {
    /// The tenant header's value.
    pub tenant: Option<&'a str>,
    pub payload: Option<&'a [u8]>,
    /// The broker's timestamp: the validation clock, so that a payment without a usable date
    /// gets the same event time whenever the message is read.
    pub timestamp_ms: Option<i64>,
}

/// What the stage does with one message: observe the payment in `graph` and encode the facts,
/// or `None` when the message is not a valid payment.
pub fn message_facts(
    graph: &mut AccountGraph,
    settings: &DetectionSettings,
    scratch: &mut Vec<u8>,
    message: SourceMessage<'_>,
) -> Option<Observed> {
    let (tenant, tx) = payment(settings, scratch, message)?;
    let facts = graph.observe(tenant, &tx, &settings.detectors);
    Some(Observed {
        user: tx.user_id.to_string(),
        facts: encode(&facts),
    })
}

/// What a rebuild does with one message: the graph changes as [`message_facts`] changes it.
pub fn replay_message(
    graph: &mut AccountGraph,
    settings: &DetectionSettings,
    scratch: &mut Vec<u8>,
    message: SourceMessage<'_>,
) {
    if let Some((tenant, tx)) = payment(settings, scratch, message) {
        graph.replay(tenant, &tx, &settings.detectors);
    }
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
    message: SourceMessage<'_>,
) -> Option<(i64, Transaction)> {
    let tenant = message.tenant?;
    let parsed = parse_json::<TransactionPayload>(message.payload?, scratch).ok()?;
    let clock = ValidationClock {
        now_ms: message
            .timestamp_ms
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis()),
        max_future_skew_ms: settings.max_future_skew_ms,
    };
    let tx = parsed.validate(clock).ok()?;
    Some((tenant_key(tenant), tx))
}

/// The facts as the header carries them, at most [`MAX_GRAPH_HEADER_BYTES`]: evidence that
/// would not fit is cut to its first accounts and legs, and dropped if that is not enough (the
/// counts the rules read always go).
pub fn encode(facts: &GraphFacts) -> Vec<u8> {
    // Plain data of finite numbers and strings: serialising it cannot fail.
    let encoded = serde_json::to_vec(facts).unwrap_or_default();
    if encoded.len() <= MAX_GRAPH_HEADER_BYTES {
        return encoded;
    }
    let mut smaller = facts.clone();
    for evidence in &mut smaller.evidence {
        evidence.accounts.truncate(EVIDENCE_ACCOUNTS_CUT);
        evidence.legs.truncate(EVIDENCE_ACCOUNTS_CUT);
    }
    let encoded = serde_json::to_vec(&smaller).unwrap_or_default();
    if encoded.len() <= MAX_GRAPH_HEADER_BYTES {
        return encoded;
    }
    smaller.evidence.clear();
    serde_json::to_vec(&smaller).unwrap_or_default()
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
        // A newer stage's extra fields do not stop an older consumer (rolling upgrades).
        assert_eq!(
            decode(br#"{"surprise":1,"cycleLength":3}"#).map(|f| f.cycle_length),
            Ok(3)
        );
        let big = vec![b' '; MAX_GRAPH_HEADER_BYTES + 1];
        assert!(decode(&big).unwrap_err().contains("more than"));
    }

    fn settings() -> DetectionSettings {
        DetectionSettings {
            detectors: crate::engine::accounts::DetectorSettings::default(),
            restore_days: 31,
            max_future_skew_ms: 300_000,
        }
    }

    /// Rings, fans and ordinary payments among 40 accounts over 20 days; some undated, one of
    /// an amount beyond f32's range. The broker timestamp of message i is `1_750_000_000_000 + i`.
    fn stream() -> Vec<(Vec<u8>, i64)> {
        let mut out = Vec::new();
        for i in 0..400u32 {
            let from = format!("A{}", (i * 7) % 40);
            let to = format!("A{}", (i * 13 + 1 + i / 50) % 40);
            if from == to {
                continue;
            }
            let mut data = serde_json::json!({
                "reference": format!("r{i}"),
                "amount": if i == 123 { 1e39 } else { 100.0 + f64::from(i % 17) * 10.0 },
                "type": if i % 5 == 0 { "credit" } else { "debit" },
                "transactionDate": format!("2025-05-{:02}T{:02}:00:00Z", 1 + i / 20, i % 24),
                "senderAccount": from,
                "receiverAccount": to,
            });
            if i % 9 == 0 {
                data.as_object_mut().map(|d| d.remove("transactionDate"));
            }
            let payload = serde_json::json!({
                "transactionData": data,
                "anonymizedUserData": {"uniqueId": format!("u-{from}")},
            });
            out.push((
                serde_json::to_vec(&payload).expect("json"),
                1_750_000_000_000 + i64::from(i),
            ));
        }
        out
    }

    #[test]
    fn a_graph_rebuilt_by_replay_gives_the_facts_an_uninterrupted_one_gives() {
        let settings = settings();
        let messages = stream();
        let facts_of =
            |graph: &mut AccountGraph, scratch: &mut Vec<u8>, (payload, at): &(Vec<u8>, i64)| {
                message_facts(
                    graph,
                    &settings,
                    scratch,
                    SourceMessage {
                        tenant: Some("acme-bank"),
                        payload: Some(payload),
                        timestamp_ms: Some(*at),
                    },
                )
            };
        let mut scratch = Vec::new();
        let mut whole = AccountGraph::default();
        let uninterrupted: Vec<Option<Observed>> = messages
            .iter()
            .map(|m| facts_of(&mut whole, &mut scratch, m))
            .collect();
        assert!(
            uninterrupted.iter().all(Option::is_some),
            "every message is a payment"
        );
        let decoded: Vec<GraphFacts> = uninterrupted
            .iter()
            .flatten()
            .map(|o| decode(&o.facts).expect("every header decodes, the huge amount too"))
            .collect();
        assert!(
            decoded.iter().any(|f| !f.evidence.is_empty()),
            "detectors fired"
        );
        assert!(decoded.iter().all(|f| f
            .sender
            .out_sum
            .iter()
            .chain(&f.receiver.in_sum)
            .all(|v| v.is_finite())));

        for split in [1, 97, 200, messages.len() - 1] {
            let mut rebuilt = AccountGraph::default();
            for (payload, at) in &messages[..split] {
                replay_message(
                    &mut rebuilt,
                    &settings,
                    &mut scratch,
                    SourceMessage {
                        tenant: Some("acme-bank"),
                        payload: Some(payload),
                        timestamp_ms: Some(*at),
                    },
                );
            }
            for (i, message) in messages.iter().enumerate().skip(split) {
                assert_eq!(
                    facts_of(&mut rebuilt, &mut scratch, message),
                    uninterrupted[i],
                    "message {i} after a rebuild at {split}"
                );
            }
        }
    }

    #[test]
    fn an_oversized_header_keeps_the_counts_and_cuts_the_evidence() {
        let leg = Leg {
            reference: "r".repeat(200).into(),
            from: "A".repeat(200).into(),
            to: "B".repeat(200).into(),
            amount: 1.0,
            at: 0,
        };
        let facts = GraphFacts {
            cycle_length: 7,
            evidence: vec![Evidence {
                detector: Detector::FanIn,
                account: "B".into(),
                accounts: (0..5_000).map(|i| format!("{i:0>100}").into()).collect(),
                legs: vec![leg; 32],
                first_at: 0,
                last_at: 0,
            }],
            ..GraphFacts::default()
        };
        let encoded = encode(&facts);
        assert!(encoded.len() <= MAX_GRAPH_HEADER_BYTES, "{}", encoded.len());
        let decoded = decode(&encoded).expect("decodes");
        assert_eq!(decoded.cycle_length, 7);
        assert_eq!(decoded.evidence[0].accounts.len(), EVIDENCE_ACCOUNTS_CUT);
    }

    #[test]
    fn the_restore_span_covers_the_detector_window_and_lateness() {
        let mut settings = settings();
        assert_eq!(settings.restore_span_days(), 31);
        settings.detectors.window_days = 60;
        settings.detectors.lateness_hours = 25;
        assert_eq!(settings.restore_span_days(), 62);
    }

    #[test]
    fn one_tenant_name_is_one_key() {
        assert_eq!(tenant_key("acme-bank"), tenant_key("acme-bank"));
        assert_ne!(tenant_key("acme-bank"), tenant_key("acme-bank2"));
    }
}

//! `vigil kafka repartition`: re-keys a topic whose producers key otherwise (by account, by
//! transaction, or not at all) into Vigil's input topic, keyed by `anonymizedUserData.uniqueId`.
//!
//! Data flow: a consumer in the group `<group_id>-repartition` reads the source topic; each
//! message is produced to the input topic with the user's `uniqueId` as its key and its headers
//! (the tenant header among them) and value unchanged, through an idempotent producer
//! (`acks=all`); a source offset is committed only after everything before it is acknowledged.
//! A message whose value has no `uniqueId` is forwarded with its original key: the source then
//! dead-letters it with the validation error, so nothing is dropped here. A crash replays from the
//! last commit, so a message can be forwarded twice; the engine recognises the repeated reference
//! (tenant + `transactionData.reference`) and answers the stored decision.
//!
//! `vigil kafka detect` ([`super::detect`]) is this loop with the account graph in it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use serde::Deserialize;

use super::config::KafkaConfig;
use super::detect::{Detection, GRAPH_HEADER};
use super::{client_config, partitions_of, topic_partitions, KafkaSourceError};

/// What a run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RepartitionReport {
    pub forwarded: u64,
    /// Forwarded with their original key because the value names no user.
    pub without_user: u64,
    /// (`detect`) Forwarded with account facts: every valid payment.
    pub with_facts: u64,
    /// (`detect`) Source messages read again to rebuild a partition's account graph.
    pub restored: u64,
}

#[derive(Deserialize)]
struct UserOnly<'a> {
    #[serde(rename = "anonymizedUserData", borrow)]
    user: Option<UserId<'a>>,
}

#[derive(Deserialize)]
struct UserId<'a> {
    #[serde(rename = "uniqueId", borrow)]
    unique_id: Option<std::borrow::Cow<'a, str>>,
}

/// The user a payload belongs to, if it names one.
pub fn user_of(payload: &[u8]) -> Option<String> {
    let parsed: UserOnly<'_> = serde_json::from_slice(payload).ok()?;
    let id = parsed.user?.unique_id?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_owned())
}

/// Re-keys `from` into the input topic until `stop` is set, or, with `exit_at_end`, until every
/// partition of `from` is read to the end it had when the run started.
pub fn run(
    config: &KafkaConfig,
    from: &str,
    exit_at_end: bool,
    stop: &AtomicBool,
) -> Result<RepartitionReport, KafkaSourceError> {
    forward(config, from, exit_at_end, stop, None)
}

/// The forwarding loop of `repartition` and, with a [`Detection`], of `detect` (group
/// `<group_id>-detect`; each valid payment gains its account facts). A `vigil-graph` header a
/// message came with is dropped either way: only the detection stage gives facts.
pub(crate) fn forward(
    config: &KafkaConfig,
    from: &str,
    exit_at_end: bool,
    stop: &AtomicBool,
    mut detection: Option<&mut Detection>,
) -> Result<RepartitionReport, KafkaSourceError> {
    if from == config.input_topic {
        return Err(KafkaSourceError::Admin(
            "the source topic must differ from the input topic".into(),
        ));
    }
    let role = if detection.is_some() {
        "detect"
    } else {
        "repartition"
    };
    let consumer: BaseConsumer<ForwardContext> = client_config(config)
        .set("group.id", format!("{}-{role}", config.group_id))
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        .create_with_context(ForwardContext::default())?;
    let producer: FutureProducer = client_config(config)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .create()?;
    let partitions = topic_partitions(&consumer, from)?;
    // Where "the end" is, for --exit-at-end, and where this group starts.
    let mut ends = HashMap::new();
    let mut positions: HashMap<i32, i64> = HashMap::new();
    let mut wanted = TopicPartitionList::new();
    for partition in &partitions {
        wanted.add_partition(from, *partition);
    }
    let committed = consumer.committed_offsets(wanted, Duration::from_secs(10))?;
    for partition in &partitions {
        let (low, high) = consumer.fetch_watermarks(from, *partition, Duration::from_secs(10))?;
        ends.insert(*partition, high);
        let start = match committed
            .find_partition(from, *partition)
            .map(|e| e.offset())
        {
            Some(Offset::Offset(offset)) => offset.max(low),
            _ => low,
        };
        positions.insert(*partition, start);
    }
    consumer.subscribe(&[from])?;

    let mut report = RepartitionReport::default();
    let mut pending: Vec<(i32, i64, DeliveryFuture)> = Vec::new();
    let mut last_flush = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(KafkaSourceError::Thread)?;
    loop {
        let finished = exit_at_end
            && ends
                .iter()
                .all(|(p, end)| positions.get(p).copied().unwrap_or(0) >= *end);
        if stop.load(Ordering::SeqCst) || finished {
            break;
        }
        if let Some(result) = consumer.poll(Duration::from_millis(100)) {
            let message = result?;
            let payload = message.payload().unwrap_or_default();
            let observed = match detection.as_deref_mut() {
                Some(detection) => {
                    if consumer.context().rebalanced.swap(false, Ordering::SeqCst) {
                        detection.rebalanced();
                    }
                    detection.facts(&message)?
                }
                None => None,
            };
            // The stage keys by the validated user id (the consumer's key check compares with
            // it); otherwise by the id as the payload names it.
            let (user, facts) = match observed {
                Some(observed) => (Some(observed.user), Some(observed.facts)),
                None => (user_of(payload), None),
            };
            if user.is_none() {
                report.without_user += 1;
            }
            let mut headers = OwnedHeaders::new();
            if let Some(found) = message.headers() {
                for header in found.iter() {
                    if header.key == GRAPH_HEADER {
                        continue; // facts are the detection stage's to give, not a producer's
                    }
                    headers = headers.insert(Header {
                        key: header.key,
                        value: header.value,
                    });
                }
            }
            if let Some(facts) = &facts {
                report.with_facts += 1;
                headers = headers.insert(Header {
                    key: GRAPH_HEADER,
                    value: Some(facts.as_slice()),
                });
            }
            let key = user.as_deref().map(str::as_bytes).or(message.key());
            let mut record = FutureRecord::<[u8], [u8]>::to(&config.input_topic)
                .payload(payload)
                .headers(headers);
            if let Some(key) = key {
                record = record.key(key);
            }
            let delivery = producer.send_result(record).map_err(|(error, _)| error)?;
            pending.push((message.partition(), message.offset(), delivery));
            report.forwarded += 1;
            positions.insert(message.partition(), message.offset() + 1);
        }
        if pending.len() >= 1_000 || last_flush.elapsed() >= Duration::from_millis(500) {
            flush(&consumer, from, &runtime, &mut pending)?;
            last_flush = Instant::now();
            if let Some(detection) = detection.as_deref_mut() {
                // Graphs of partitions another member now holds are dropped (rebuilt if the
                // partition comes back).
                let assigned = consumer.assignment()?;
                detection.retain_partitions(&partitions_of(&assigned, from));
            }
        }
    }
    flush(&consumer, from, &runtime, &mut pending)?;
    consumer.unsubscribe();
    if let Some(detection) = detection {
        report.restored = detection.restored();
    }
    Ok(report)
}

/// Notes rebalances for the detection stage (a partition may have been elsewhere meanwhile).
#[derive(Default)]
struct ForwardContext {
    rebalanced: AtomicBool,
}

impl ClientContext for ForwardContext {}

impl ConsumerContext for ForwardContext {
    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, _rebalance: &Rebalance<'_>) {
        self.rebalanced.store(true, Ordering::SeqCst);
    }
}

/// Waits for every forwarded message, then commits the source offsets after them.
fn flush(
    consumer: &BaseConsumer<ForwardContext>,
    from: &str,
    runtime: &tokio::runtime::Runtime,
    pending: &mut Vec<(i32, i64, DeliveryFuture)>,
) -> Result<(), KafkaSourceError> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut next: HashMap<i32, i64> = HashMap::new();
    for (partition, offset, delivery) in pending.drain(..) {
        match runtime.block_on(delivery) {
            Ok(Ok(_)) => {}
            Ok(Err((error, _))) => return Err(error.into()),
            Err(_) => return Err(KafkaSourceError::OutputFailed),
        }
        let entry = next.entry(partition).or_insert(offset + 1);
        *entry = (*entry).max(offset + 1);
    }
    let mut list = TopicPartitionList::new();
    for (partition, offset) in next {
        list.add_partition_offset(from, partition, Offset::Offset(offset))?;
    }
    consumer.commit(&list, CommitMode::Sync)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_is_read_from_anonymized_user_data_and_blank_ids_do_not_count() {
        assert_eq!(
            user_of(
                br#"{"transactionData":{"amount":1},"anonymizedUserData":{"uniqueId":" u-7 "}}"#
            ),
            Some("u-7".to_owned())
        );
        assert_eq!(
            user_of(br#"{"anonymizedUserData":{"uniqueId":"a\"b"}}"#),
            Some("a\"b".to_owned())
        );
        assert_eq!(
            user_of(br#"{"anonymizedUserData":{"uniqueId":"  "}}"#),
            None
        );
        assert_eq!(user_of(br#"{"anonymizedUserData":{"uniqueId":7}}"#), None);
        assert_eq!(user_of(br#"{"transactionData":{}}"#), None);
        assert_eq!(user_of(b"not json"), None);
    }
}

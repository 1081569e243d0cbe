//! The Kafka sink: the versioned JSON records Vigil writes to its output topics, and the
//! per-partition task that writes them in input order.
//!
//! For every input message of partition `p` the source hands this sink one [`Pending`] entry, in
//! offset order. The partition's task awaits the entry's durable decision (the store sink answers
//! once the decision is committed), turns it into a decision record and, if the decision is not
//! approved, a case record, and gives them to the idempotent producer for partition `p` of the
//! decisions and cases topics; a message that could not be parsed becomes a dead-letter record.
//! A second task awaits the broker's acknowledgements in the same order and advances the
//! partition's `acked` offset, which is what the source commits: an input offset is committed
//! only after every output it produced is acknowledged.
//!
//! Every record carries the header `vigil-source-offset` (its partition is the source partition),
//! and decision and case records carry `vigil-id` (the deterministic transaction id of tenant and
//! reference). After a crash the source reads the tail of each output partition, collects the
//! source offsets already written past the committed input offset, and gives them to the task as
//! [`Emitted`]: a record already written is not written again (effectively-once).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::engine::{Outcome, SinkError};
use crate::metrics::KafkaMetrics;
use crate::model::decision::{Reason, RuleHit};
use crate::model::{Action, Decision, FieldError};

pub const DECISION_SCHEMA: &str = "vigil.decision/1";
pub const CASE_SCHEMA: &str = "vigil.case/1";
pub const DEAD_LETTER_SCHEMA: &str = "vigil.dead-letter/1";

/// Header names on output records. Only what a reader needs without parsing the value: the
/// schema and the source partition are in the value (and the source partition is the record's own
/// partition), and every header costs bytes and broker work on every record.
pub mod header {
    pub const ID: &str = "vigil-id";
    pub const SOURCE_OFFSET: &str = "vigil-source-offset";
}

/// Where an output came from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcePosition {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// A record on the decisions topic (`vigil.decision/1`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord<'a> {
    pub schema: &'static str,
    pub business_id: i64,
    pub tenant: &'a str,
    pub reference: &'a str,
    pub transaction_id: &'a str,
    pub user_id: &'a str,
    pub source: &'a SourcePosition,
    /// The decision (spec §2.2); `null` for a tenant in `reporting-only` processing mode.
    pub decision: Option<&'a Decision>,
}

/// A record on the cases topic (`vigil.case/1`): a decision that is not approved.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRecord<'a> {
    pub schema: &'static str,
    pub business_id: i64,
    pub tenant: &'a str,
    pub reference: &'a str,
    pub transaction_id: &'a str,
    pub user_id: &'a str,
    pub source: &'a SourcePosition,
    pub action: Action,
    pub risk_score: &'a str,
    pub reason: &'a Reason,
    pub rules: &'a [RuleHit],
    pub transaction_date: &'a str,
    pub evaluated_at: &'a str,
}

/// A record on the dead-letter topic (`vigil.dead-letter/1`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterRecord {
    pub schema: &'static str,
    /// What was wrong, in one line.
    pub error: String,
    /// Field-level problems, as the HTTP API reports them.
    pub errors: Vec<FieldError>,
    pub source: SourcePosition,
    /// The tenant header as received, if any.
    pub tenant: Option<String>,
    /// The message key as received (UTF-8, lossy).
    pub key: Option<String>,
    /// The message value as received (UTF-8, lossy).
    pub payload: Option<String>,
}

/// Which output topic a record goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputKind {
    Decision,
    Case,
    DeadLetter,
}

/// Source offsets (of one input partition) whose outputs are already in each output topic.
#[derive(Debug, Default, Clone)]
pub struct Emitted {
    pub decisions: HashSet<i64>,
    pub cases: HashSet<i64>,
    pub dead_letters: HashSet<i64>,
}

impl Emitted {
    fn contains(&self, kind: OutputKind, offset: i64) -> bool {
        match kind {
            OutputKind::Decision => self.decisions.contains(&offset),
            OutputKind::Case => self.cases.contains(&offset),
            OutputKind::DeadLetter => self.dead_letters.contains(&offset),
        }
    }

    pub fn len(&self) -> usize {
        self.decisions.len() + self.cases.len() + self.dead_letters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The output topics' names.
#[derive(Debug, Clone)]
pub struct OutputTopics {
    pub input: String,
    pub decisions: String,
    pub cases: String,
    pub dead_letter: String,
}

impl OutputTopics {
    fn name(&self, kind: OutputKind) -> &str {
        match kind {
            OutputKind::Decision => &self.decisions,
            OutputKind::Case => &self.cases,
            OutputKind::DeadLetter => &self.dead_letter,
        }
    }
}

/// A tenant as the source resolved it from the message header.
#[derive(Debug, Clone)]
pub struct TenantRef {
    pub id: i64,
    pub name: Arc<str>,
    pub reporting_only: bool,
}

/// What one input message became.
pub enum PendingKind {
    /// Handed to the engine; the reply is the durable decision.
    Evaluated {
        tenant: TenantRef,
        user_id: String,
        reply: oneshot::Receiver<Result<Outcome, SinkError>>,
    },
    /// Could not be parsed or validated.
    DeadLetter(Box<DeadLetterRecord>),
}

pub struct Pending {
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub kind: PendingKind,
}

/// Shared between a partition's task and the source.
pub struct PartitionProgress {
    /// The next input offset not yet finished: every offset below has its outputs acknowledged.
    pub acked: AtomicI64,
    /// Set when an output could not be written; the source stops and the process exits so that a
    /// restart recovers from the committed offset (nothing is skipped).
    pub failed: AtomicBool,
}

impl PartitionProgress {
    pub fn new(start: i64) -> Arc<PartitionProgress> {
        Arc::new(PartitionProgress {
            acked: AtomicI64::new(start),
            failed: AtomicBool::new(false),
        })
    }

    pub fn acked(&self) -> i64 {
        self.acked.load(Ordering::SeqCst)
    }
}

/// Everything a partition task needs.
#[derive(Clone)]
pub struct OutputContext {
    pub producer: FutureProducer,
    pub topics: Arc<OutputTopics>,
    pub metrics: Arc<KafkaMetrics>,
}

/// One record ready for the producer.
struct Output {
    kind: OutputKind,
    key: Option<Vec<u8>>,
    id: Option<String>,
    value: Vec<u8>,
}

/// Starts the output task of input partition `partition`. Entries must be sent in offset order.
pub fn spawn_partition(
    context: OutputContext,
    partition: i32,
    emitted: Emitted,
    progress: Arc<PartitionProgress>,
) -> (mpsc::UnboundedSender<Pending>, tokio::task::JoinHandle<()>) {
    let (feed, entries) = mpsc::unbounded_channel();
    let task = tokio::spawn(run_partition(
        context, partition, emitted, progress, entries,
    ));
    (feed, task)
}

async fn run_partition(
    context: OutputContext,
    partition: i32,
    emitted: Emitted,
    progress: Arc<PartitionProgress>,
    mut entries: mpsc::UnboundedReceiver<Pending>,
) {
    // Acknowledgements are awaited in order by a second task so that producing never waits for
    // a round trip to the broker.
    let (acks, mut awaiting) = mpsc::channel::<(i64, Vec<(OutputKind, DeliveryFuture)>)>(65_536);
    let acker_progress = progress.clone();
    let metrics = context.metrics.clone();
    let topics = context.topics.clone();
    let acker = tokio::spawn(async move {
        while let Some((offset, deliveries)) = awaiting.recv().await {
            for (kind, delivery) in deliveries {
                match delivery.await {
                    Ok(Ok(_)) => metrics.produced(kind).inc(),
                    Ok(Err((error, _))) => {
                        tracing::error!(%error, topic = topics.name(kind), partition, source_offset = offset, "output not written; stopping so a restart resumes from the committed offset");
                        acker_progress.failed.store(true, Ordering::SeqCst);
                        return;
                    }
                    Err(_) => {
                        tracing::error!(
                            topic = topics.name(kind),
                            partition,
                            source_offset = offset,
                            "producer dropped an output; stopping"
                        );
                        acker_progress.failed.store(true, Ordering::SeqCst);
                        return;
                    }
                }
            }
            acker_progress.acked.store(offset + 1, Ordering::SeqCst);
        }
    });
    let source_topic = context.topics.input.clone();
    while let Some(pending) = entries.recv().await {
        if progress.failed.load(Ordering::SeqCst) {
            break;
        }
        let source = SourcePosition {
            topic: source_topic.clone(),
            partition,
            offset: pending.offset,
        };
        let outputs = match outputs_of(pending.kind, pending.key, &source).await {
            Ok(outputs) => outputs,
            Err(error) => {
                tracing::error!(%error, partition, source_offset = pending.offset, "no decision for an input message; stopping so a restart resumes from the committed offset");
                progress.failed.store(true, Ordering::SeqCst);
                break;
            }
        };
        let mut deliveries = Vec::with_capacity(outputs.len());
        for output in outputs {
            if emitted.contains(output.kind, pending.offset) {
                context.metrics.skipped_replays.inc();
                continue;
            }
            match send(&context, partition, pending.offset, &output).await {
                Ok(delivery) => deliveries.push((output.kind, delivery)),
                Err(error) => {
                    tracing::error!(%error, topic = context.topics.name(output.kind), partition, "output not queued; stopping");
                    progress.failed.store(true, Ordering::SeqCst);
                    break;
                }
            }
        }
        if progress.failed.load(Ordering::SeqCst)
            || acks.send((pending.offset, deliveries)).await.is_err()
        {
            break;
        }
    }
    drop(acks);
    let _ = acker.await;
}

/// Gives a record to the producer, waiting while its queue is full.
async fn send(
    context: &OutputContext,
    partition: i32,
    source_offset: i64,
    output: &Output,
) -> Result<DeliveryFuture, KafkaError> {
    let offset_text = source_offset.to_string();
    loop {
        let mut headers = OwnedHeaders::new_with_capacity(2).insert(Header {
            key: header::SOURCE_OFFSET,
            value: Some(offset_text.as_str()),
        });
        if let Some(id) = &output.id {
            headers = headers.insert(Header {
                key: header::ID,
                value: Some(id.as_str()),
            });
        }
        let mut record = FutureRecord::<[u8], [u8]>::to(context.topics.name(output.kind))
            .partition(partition)
            .payload(output.value.as_slice())
            .headers(headers);
        if let Some(key) = &output.key {
            record = record.key(key.as_slice());
        }
        match context.producer.send_result(record) {
            Ok(delivery) => return Ok(delivery),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Err((error, _)) => return Err(error),
        }
    }
}

/// The records an input message produces, once its decision is durable.
async fn outputs_of(
    kind: PendingKind,
    key: Option<Vec<u8>>,
    source: &SourcePosition,
) -> Result<Vec<Output>, String> {
    match kind {
        PendingKind::DeadLetter(record) => {
            let value = serde_json::to_vec(&*record).map_err(|e| e.to_string())?;
            Ok(vec![Output {
                kind: OutputKind::DeadLetter,
                key,
                id: None,
                value,
            }])
        }
        PendingKind::Evaluated {
            tenant,
            user_id,
            reply,
        } => {
            let outcome = reply
                .await
                .map_err(|_| "the engine stopped before deciding".to_owned())?
                .map_err(|e| e.to_string())?;
            let decision = match outcome {
                Outcome::Decided(decision) => decision,
                Outcome::Duplicate { transaction_id } => {
                    return Err(format!(
                        "transaction {transaction_id} has no stored decision yet (submitted asynchronously)"
                    ))
                }
            };
            decision_outputs(&tenant, &user_id, &decision, key, source)
        }
    }
}

fn decision_outputs(
    tenant: &TenantRef,
    user_id: &str,
    decision: &Decision,
    key: Option<Vec<u8>>,
    source: &SourcePosition,
) -> Result<Vec<Output>, String> {
    let key = key.or_else(|| Some(user_id.as_bytes().to_vec()));
    let record = DecisionRecord {
        schema: DECISION_SCHEMA,
        business_id: tenant.id,
        tenant: &tenant.name,
        reference: &decision.reference,
        transaction_id: &decision.transaction_id,
        user_id,
        source,
        decision: (!tenant.reporting_only).then_some(decision),
    };
    let mut outputs = vec![Output {
        kind: OutputKind::Decision,
        key: key.clone(),
        id: Some(decision.transaction_id.clone()),
        value: serde_json::to_vec(&record).map_err(|e| e.to_string())?,
    }];
    if decision.action() != Action::Approved {
        let case = CaseRecord {
            schema: CASE_SCHEMA,
            business_id: tenant.id,
            tenant: &tenant.name,
            reference: &decision.reference,
            transaction_id: &decision.transaction_id,
            user_id,
            source,
            action: decision.action(),
            risk_score: &decision.risk_score,
            reason: &decision.reason,
            rules: &decision.rules,
            transaction_date: &decision.transaction_date,
            evaluated_at: &decision.evaluated_at,
        };
        outputs.push(Output {
            kind: OutputKind::Case,
            key,
            id: Some(decision.transaction_id.clone()),
            value: serde_json::to_vec(&case).map_err(|e| e.to_string())?,
        });
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitted_offsets_are_looked_up_per_output_kind() {
        let mut emitted = Emitted::default();
        emitted.decisions.insert(7);
        emitted.dead_letters.insert(9);
        assert!(emitted.contains(OutputKind::Decision, 7));
        assert!(!emitted.contains(OutputKind::Case, 7));
        assert!(emitted.contains(OutputKind::DeadLetter, 9));
        assert_eq!(emitted.len(), 2);
    }
}

//! The Kafka source: a consumer-group member that feeds the input topic's partitions, in order,
//! to the same shard workers the HTTP intake uses.
//!
//! Data flow, per input message of partition `p` at offset `o`:
//! 1. The consumer thread (one OS thread, `vigil-kafka`) reads the tenant header, parses and
//!    validates the 2.1 payload and checks that the key is the user's `uniqueId`. A message that
//!    fails becomes a dead-letter entry; a good one goes to its shard as an [`EvaluateJob`] with
//!    [`Intake::Stream`]`(p)`.
//! 2. The shard evaluates; the store sink commits the decision (and opens the case) and answers.
//! 3. Partition `p`'s output task ([`crate::sinks::kafka`]) writes the decision, case and
//!    dead-letter records to partition `p` of the output topics, in input order, through an
//!    idempotent producer, and advances `p`'s acknowledged offset once the broker has them.
//! 4. Every `commit_interval_ms` the consumer thread collects the state of every user changed
//!    since the last commit from the shards, waits for the store to commit everything before it,
//!    writes the states to the compacted changelog (partition `p`, key `<businessId>/<uniqueId>`),
//!    and only then commits the acknowledged offsets.
//!
//! Rebalances (classic, eager protocol): before partitions are revoked, their in-flight messages
//! finish and the commit above runs; when a partition is assigned that this instance did not just
//! hold, its users' state is restored from the changelog, the tail of each output partition is
//! read for outputs already written past the committed offset (a replay after a crash), and
//! consumption resumes at the committed offset. Together these make outputs effectively-once:
//! none lost, none written twice, on brokers without transactions.
//!
//! Backpressure: when more than `max_in_flight` messages are taken but unfinished, the consumer
//! pauses its partitions and resumes below half; shard queues are bounded as for HTTP.

pub mod admin;
pub mod config;
pub mod control;
pub mod detect;
pub mod repartition;
pub mod restore;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Headers, Message};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::statistics::Statistics;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use self::config::KafkaConfig;
use self::restore::{changelog_key, parse_changelog_key, Reader};
use crate::engine::state::UserState;
use crate::engine::{Engine, EvaluateJob, Intake};
use crate::metrics::{KafkaMetrics, Metrics};
use crate::model::{parse_json, FieldError, ParseError, TransactionPayload, ValidationClock};
use crate::sinks::kafka::{
    spawn_partition, DeadLetterRecord, Emitted, OutputContext, OutputTopics, PartitionProgress,
    Pending, PendingKind, SourcePosition, TenantRef, DEAD_LETTER_SCHEMA,
};
use crate::sinks::store::StoreSink;
use crate::store::{ProcessingMode, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum KafkaSourceError {
    #[error("kafka: {0}")]
    Client(#[from] KafkaError),
    #[error("topic {0} does not exist; create it first (see the README's cluster section)")]
    MissingTopic(String),
    #[error("topic {topic} has {found} partitions but the input topic {input} has {needed}: output, changelog and input topics need the same partition count")]
    Partitions {
        topic: String,
        found: usize,
        input: String,
        needed: usize,
    },
    #[error("an output could not be written; stopped so that a restart resumes from the committed offsets")]
    OutputFailed,
    #[error("the engine stopped")]
    EngineClosed,
    #[error("restoring a partition failed: {0}")]
    Restore(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the consumer thread: {0}")]
    Thread(std::io::Error),
    #[error("{0}")]
    Admin(String),
}

/// What the source needs from the rest of the service.
#[derive(Clone)]
pub struct SourceDeps {
    pub engine: Arc<Engine>,
    pub writer: StoreSink,
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub runtime: Handle,
    pub max_future_skew_ms: i64,
}

/// A running source: stop it with [`KafkaSource::stop`]; [`KafkaSource::ended`] resolves if it
/// stops by itself (an output that cannot be written).
pub struct KafkaSource {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), KafkaSourceError>>>,
    ended: Option<oneshot::Receiver<()>>,
}

impl KafkaSource {
    /// Resolves when the consumer thread ends (take it once).
    pub fn ended(&mut self) -> Option<oneshot::Receiver<()>> {
        self.ended.take()
    }

    /// Finishes what is in flight, writes the changelog, commits, leaves the group.
    pub fn stop(mut self) -> Result<(), KafkaSourceError> {
        self.stop.store(true, Ordering::SeqCst);
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or(Err(KafkaSourceError::EngineClosed)),
            None => Ok(()),
        }
    }
}

/// The client settings every Vigil Kafka client shares.
pub fn client_config(config: &KafkaConfig) -> ClientConfig {
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", config.brokers.trim())
        .set("client.id", &config.client_id);
    for (key, value) in &config.properties {
        client.set(key, value);
    }
    client
}

/// The idempotent producer for outputs and the changelog.
pub fn output_producer(config: &KafkaConfig) -> Result<FutureProducer, KafkaError> {
    let mut client = client_config(config);
    client
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("max.in.flight.requests.per.connection", "1")
        .set("message.timeout.ms", "300000");
    client.create()
}

/// The partition ids of `topic`; an error names a topic that does not exist.
pub(crate) fn topic_partitions<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
) -> Result<Vec<i32>, KafkaSourceError> {
    let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    match metadata.topics().first() {
        Some(found) if found.error().is_none() && !found.partitions().is_empty() => {
            Ok(found.partitions().iter().map(|p| p.id()).collect())
        }
        _ => Err(KafkaSourceError::MissingTopic(topic.to_owned())),
    }
}

/// Partition counts of the topics, checked against the input topic.
fn check_topics(
    consumer: &BaseConsumer<SourceContext>,
    config: &KafkaConfig,
) -> Result<usize, KafkaSourceError> {
    let count = |topic: &str| topic_partitions(consumer, topic).map(|p| p.len());
    let needed = count(&config.input_topic)?;
    for topic in [
        &config.decisions_topic,
        &config.cases_topic,
        &config.dead_letter_topic,
        &config.changelog_topic,
    ] {
        let found = count(topic)?;
        if found < needed {
            return Err(KafkaSourceError::Partitions {
                topic: topic.clone(),
                found,
                input: config.input_topic.clone(),
                needed,
            });
        }
    }
    Ok(needed)
}

/// Joins the consumer group and starts the consumer thread.
pub fn start(config: KafkaConfig, deps: SourceDeps) -> Result<KafkaSource, KafkaSourceError> {
    let metrics = deps.metrics.kafka(
        &config.decisions_topic,
        &config.cases_topic,
        &config.dead_letter_topic,
    );
    let producer = output_producer(&config)?;
    let output = OutputContext {
        producer,
        topics: Arc::new(OutputTopics {
            input: config.input_topic.clone(),
            decisions: config.decisions_topic.clone(),
            cases: config.cases_topic.clone(),
            dead_letter: config.dead_letter_topic.clone(),
        }),
        metrics: metrics.clone(),
    };
    let shared = Arc::new(Shared {
        config: config.clone(),
        deps,
        output,
        metrics,
        base: client_config(&config),
        state: Mutex::new(PipelineState::default()),
    });
    let mut consumer_config = client_config(&config);
    consumer_config
        .set("group.id", &config.group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        .set("partition.assignment.strategy", "range,roundrobin");
    if !config.properties.contains_key("statistics.interval.ms") {
        consumer_config.set("statistics.interval.ms", "1000");
    }
    let consumer: BaseConsumer<SourceContext> =
        consumer_config.create_with_context(SourceContext {
            shared: shared.clone(),
        })?;
    let partitions = check_topics(&consumer, &config)?;
    consumer.subscribe(&[config.input_topic.as_str()])?;
    tracing::info!(brokers = %config.brokers, group = %config.group_id, topic = %config.input_topic, partitions, "kafka source joining the group");
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = stop.clone();
    let (ended_tx, ended) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("vigil-kafka".into())
        .spawn(move || {
            let result = run(consumer, shared, thread_stop);
            if let Err(error) = &result {
                tracing::error!(%error, "kafka source stopped");
            }
            let _ = ended_tx.send(());
            result
        })
        .map_err(KafkaSourceError::Thread)?;
    Ok(KafkaSource {
        stop,
        thread: Some(thread),
        ended: Some(ended),
    })
}

struct Shared {
    config: KafkaConfig,
    deps: SourceDeps,
    output: OutputContext,
    metrics: Arc<KafkaMetrics>,
    base: ClientConfig,
    state: Mutex<PipelineState>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, PipelineState> {
        // Only the consumer thread takes this lock (in its loop and in rebalance callbacks, which
        // run inside its poll), so it is never contended and never poisoned by another thread.
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// One assigned input partition.
struct PartitionPipe {
    feed: tokio::sync::mpsc::UnboundedSender<Pending>,
    task: tokio::task::JoinHandle<()>,
    progress: Arc<PartitionProgress>,
    /// The next offset to hand to the output task.
    next: i64,
    committed: i64,
}

#[derive(Default)]
struct PipelineState {
    partitions: HashMap<i32, PartitionPipe>,
    /// Partitions revoked in the current rebalance whose state is still in memory and current.
    revoked: HashSet<i32>,
    tenants: HashMap<String, TenantRef>,
    scratch: Vec<u8>,
    paused: bool,
    failed: bool,
}

struct SourceContext {
    shared: Arc<Shared>,
}

impl ClientContext for SourceContext {
    /// Consumer lag per assigned partition, from librdkafka's statistics (`statistics.interval.ms`):
    /// the high watermark of the last fetch minus the committed offset. Reading it from the
    /// statistics costs no broker request; asking the broker for watermarks on the consumer's own
    /// connection queued behind its long-poll fetches and stalled them on some brokers.
    fn stats(&self, statistics: Statistics) {
        let shared = &self.shared;
        let Some(topic) = statistics.topics.get(&shared.config.input_topic) else {
            return;
        };
        for partition in topic.partitions.values() {
            if partition.partition < 0 || !partition.desired || partition.consumer_lag < 0 {
                continue;
            }
            shared
                .metrics
                .lag
                .with_label_values(&[&partition.partition.to_string()])
                .set(partition.consumer_lag);
        }
    }
}

impl ConsumerContext for SourceContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        let shared = &self.shared;
        match rebalance {
            Rebalance::Revoke(list) => {
                shared.metrics.rebalances.inc();
                let partitions = partitions_of(list, &shared.config.input_topic);
                let lost = consumer.assignment_lost();
                let mut state = shared.state();
                if lost {
                    tracing::warn!(
                        ?partitions,
                        "assignment lost; in-flight outputs finish but nothing is committed"
                    );
                }
                drain(&mut state, &partitions);
                if !lost {
                    if let Err(error) = commit(consumer, shared, &mut state) {
                        tracing::error!(%error, "commit before revoke failed; the next owner replays from the last commit");
                    }
                }
                for partition in &partitions {
                    let _ = shared
                        .metrics
                        .lag
                        .remove_label_values(&[&partition.to_string()]);
                    if let Some(pipe) = state.partitions.remove(partition) {
                        drop(pipe.feed);
                        let _ = shared.deps.runtime.block_on(pipe.task);
                    }
                    if !lost {
                        state.revoked.insert(*partition);
                    }
                }
                state.paused = false;
                shared
                    .metrics
                    .assigned_partitions
                    .set(state.partitions.len() as i64);
            }
            Rebalance::Assign(_) | Rebalance::Error(_) => {}
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        let shared = &self.shared;
        match rebalance {
            Rebalance::Assign(list) => {
                let partitions = partitions_of(list, &shared.config.input_topic);
                let mut state = shared.state();
                if let Err(error) = assign(consumer, shared, &mut state, &partitions) {
                    tracing::error!(%error, "cannot take over assigned partitions; stopping");
                    state.failed = true;
                }
                shared
                    .metrics
                    .assigned_partitions
                    .set(state.partitions.len() as i64);
            }
            Rebalance::Error(error) => tracing::error!(%error, "rebalance error"),
            Rebalance::Revoke(_) => {}
        }
    }
}

pub(crate) fn partitions_of(list: &TopicPartitionList, topic: &str) -> Vec<i32> {
    list.elements_for_topic(topic)
        .iter()
        .map(|e| e.partition())
        .collect()
}

/// Waits until every message taken from `partitions` has its outputs acknowledged.
fn drain(state: &mut PipelineState, partitions: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    for partition in partitions {
        let Some(pipe) = state.partitions.get(partition) else {
            continue;
        };
        while pipe.progress.acked() < pipe.next
            && !pipe.progress.failed.load(Ordering::SeqCst)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Takes over newly assigned partitions: restores state, finds outputs already written, starts
/// their output tasks. Partitions this instance held until this rebalance keep their state.
fn assign(
    consumer: &BaseConsumer<SourceContext>,
    shared: &Shared,
    state: &mut PipelineState,
    partitions: &[i32],
) -> Result<(), KafkaSourceError> {
    let config = &shared.config;
    let engine = &shared.deps.engine;
    let stale: Vec<i32> = state
        .revoked
        .iter()
        .copied()
        .filter(|p| !partitions.contains(p))
        .collect();
    if !stale.is_empty() {
        let forgotten = engine
            .forget_partitions_blocking(&stale)
            .map_err(|_| KafkaSourceError::EngineClosed)?;
        tracing::info!(partitions = ?stale, users = forgotten, "partitions handed over; their users' state dropped");
    }
    let kept = std::mem::take(&mut state.revoked);
    let reader = Reader::new(
        &shared.base,
        Duration::from_millis(config.restore_timeout_ms),
    )?;
    let mut wanted = TopicPartitionList::new();
    for partition in partitions {
        wanted.add_partition(&config.input_topic, *partition);
    }
    let committed = consumer.committed_offsets(wanted, Duration::from_secs(30))?;
    for &partition in partitions {
        let started = Instant::now();
        let offset = committed
            .find_partition(&config.input_topic, partition)
            .map(|e| e.offset());
        let committed_offset = match offset {
            Some(Offset::Offset(offset)) => offset,
            _ => reader.watermarks(&config.input_topic, partition)?.0,
        };
        let mut restored = 0usize;
        if !kept.contains(&partition) {
            engine
                .forget_partitions_blocking(&[partition])
                .map_err(|_| KafkaSourceError::EngineClosed)?;
            for (key, value) in reader.latest_values(&config.changelog_topic, partition)? {
                let Some((tenant, user)) = parse_changelog_key(&key) else {
                    tracing::warn!(partition, "changelog record with a malformed key ignored");
                    continue;
                };
                let user_state = match value.as_deref().map(UserState::decode) {
                    None => None,
                    Some(Ok(user_state)) => Some(user_state),
                    Some(Err(error)) => {
                        tracing::error!(%error, tenant, user, "changelog state does not decode; user starts empty");
                        continue;
                    }
                };
                engine
                    .import_state_blocking(tenant, user, partition, user_state)
                    .map_err(|_| KafkaSourceError::EngineClosed)?;
                restored += 1;
            }
            shared.metrics.restored_users.inc_by(restored as u64);
        }
        let emitted = Emitted {
            decisions: reader.emitted_since(
                &config.decisions_topic,
                partition,
                committed_offset,
            )?,
            cases: reader.emitted_since(&config.cases_topic, partition, committed_offset)?,
            dead_letters: reader.emitted_since(
                &config.dead_letter_topic,
                partition,
                committed_offset,
            )?,
        };
        let replayed = emitted.len();
        let progress = PartitionProgress::new(committed_offset);
        let _guard = shared.deps.runtime.enter();
        let (feed, task) =
            spawn_partition(shared.output.clone(), partition, emitted, progress.clone());
        state.partitions.insert(
            partition,
            PartitionPipe {
                feed,
                task,
                progress,
                next: committed_offset,
                committed: committed_offset,
            },
        );
        tracing::info!(
            partition,
            committed = committed_offset,
            restored_users = restored,
            already_written = replayed,
            kept_state = kept.contains(&partition),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "partition assigned"
        );
    }
    engine
        .barrier_blocking()
        .map_err(|_| KafkaSourceError::EngineClosed)?;
    Ok(())
}

/// Writes the changelog for everything evaluated so far, then commits the offsets acknowledged
/// before it was collected.
fn commit(
    consumer: &BaseConsumer<SourceContext>,
    shared: &Shared,
    state: &mut PipelineState,
) -> Result<(), KafkaSourceError> {
    let config = &shared.config;
    let targets: Vec<(i32, i64)> = state
        .partitions
        .iter()
        .map(|(p, pipe)| (*p, pipe.progress.acked()))
        .collect();
    let records = shared
        .deps
        .engine
        .changelog_blocking()
        .map_err(|_| KafkaSourceError::EngineClosed)?;
    let runtime = &shared.deps.runtime;
    runtime
        .block_on(shared.deps.writer.barrier())
        .map_err(|_| KafkaSourceError::EngineClosed)?;
    if !records.is_empty() {
        let producer = &shared.output.producer;
        let mut deliveries = Vec::with_capacity(records.len());
        for record in &records {
            let key = changelog_key(record.tenant, &record.user);
            let mut pending = FutureRecord::to(&config.changelog_topic)
                .partition(record.partition)
                .key(key.as_bytes())
                .payload(record.state.as_slice());
            loop {
                match producer.send_result(pending) {
                    Ok(delivery) => {
                        deliveries.push(delivery);
                        break;
                    }
                    Err((
                        KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull),
                        back,
                    )) => {
                        pending = back;
                        producer.poll(Duration::from_millis(5));
                    }
                    Err((error, _)) => return Err(error.into()),
                }
            }
        }
        for delivery in deliveries {
            match runtime.block_on(delivery) {
                Ok(Ok(_)) => {}
                Ok(Err((error, _))) => return Err(error.into()),
                Err(_) => return Err(KafkaSourceError::OutputFailed),
            }
        }
        shared
            .metrics
            .changelog_records
            .inc_by(records.len() as u64);
    }
    let mut list = TopicPartitionList::new();
    for (partition, acked) in &targets {
        let Some(pipe) = state.partitions.get(partition) else {
            continue;
        };
        if *acked > pipe.committed {
            list.add_partition_offset(&config.input_topic, *partition, Offset::Offset(*acked))?;
        }
    }
    if list.count() > 0 {
        consumer.commit(&list, CommitMode::Sync)?;
        shared.metrics.commits.inc();
        for (partition, acked) in &targets {
            if let Some(pipe) = state.partitions.get_mut(partition) {
                pipe.committed = pipe.committed.max(*acked);
            }
        }
    }
    Ok(())
}

fn run(
    consumer: BaseConsumer<SourceContext>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
) -> Result<(), KafkaSourceError> {
    let interval = Duration::from_millis(shared.config.commit_interval_ms);
    let mut last_commit = Instant::now();
    let result = loop {
        if stop.load(Ordering::SeqCst) {
            break Ok(());
        }
        {
            let mut state = shared.state();
            if state.failed
                || state
                    .partitions
                    .values()
                    .any(|p| p.progress.failed.load(Ordering::SeqCst))
            {
                break Err(KafkaSourceError::OutputFailed);
            }
            backpressure(&consumer, &shared, &mut state);
            if last_commit.elapsed() >= interval {
                last_commit = Instant::now();
                if let Err(error) = commit(&consumer, &shared, &mut state) {
                    tracing::error!(%error, "offset commit failed; retrying at the next interval");
                }
            }
        }
        match consumer.poll(Duration::from_millis(50)) {
            None => {}
            Some(Err(error)) => {
                tracing::warn!(%error, "kafka consumer error");
            }
            Some(Ok(message)) => {
                let mut state = shared.state();
                if let Err(error) = handle(&shared, &mut state, &message) {
                    break Err(error);
                }
            }
        }
    };
    // Finish what was taken, write the changelog and commit, then leave the group.
    let mut state = shared.state();
    let partitions: Vec<i32> = state.partitions.keys().copied().collect();
    drain(&mut state, &partitions);
    if result.is_ok() {
        if let Err(error) = commit(&consumer, &shared, &mut state) {
            tracing::error!(%error, "final commit failed; the next owner replays from the last commit");
        }
    }
    for (_, pipe) in state.partitions.drain() {
        drop(pipe.feed);
        let _ = shared.deps.runtime.block_on(pipe.task);
    }
    drop(state);
    consumer.unsubscribe();
    tracing::info!("kafka source stopped");
    result
}

fn backpressure(
    consumer: &BaseConsumer<SourceContext>,
    shared: &Shared,
    state: &mut PipelineState,
) {
    let in_flight: i64 = state
        .partitions
        .values()
        .map(|p| (p.next - p.progress.acked()).max(0))
        .sum();
    shared.metrics.in_flight.set(in_flight);
    let limit = shared.config.max_in_flight as i64;
    let pause = !state.paused && in_flight > limit;
    let resume = state.paused && in_flight <= limit / 2;
    if !pause && !resume {
        return;
    }
    let mut list = TopicPartitionList::new();
    for partition in state.partitions.keys() {
        list.add_partition(&shared.config.input_topic, *partition);
    }
    let result = if pause {
        consumer.pause(&list)
    } else {
        consumer.resume(&list)
    };
    match result {
        Ok(()) => {
            state.paused = pause;
            shared
                .metrics
                .paused_partitions
                .set(if pause { list.count() as i64 } else { 0 });
        }
        Err(error) => tracing::warn!(%error, "cannot pause or resume partitions"),
    }
}

fn header_text<'a>(message: &'a BorrowedMessage<'_>, name: &str) -> Option<&'a str> {
    message
        .headers()?
        .iter()
        .find(|h| h.key == name)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
}

/// Resolves a tenant name, waiting out database errors (a message is never dead-lettered because
/// the database is briefly unreachable).
fn tenant(
    shared: &Shared,
    state: &mut PipelineState,
    name: &str,
) -> Result<Option<TenantRef>, KafkaSourceError> {
    if let Some(found) = state.tenants.get(name) {
        return Ok(Some(found.clone()));
    }
    let mut delay = Duration::from_millis(100);
    let business = loop {
        match shared
            .deps
            .runtime
            .block_on(shared.deps.store.business_by_name(name))
        {
            Ok(business) => break business,
            Err(error) => {
                tracing::error!(%error, tenant = name, "tenant lookup failed; retrying");
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_secs(5));
            }
        }
    };
    let Some(business) = business else {
        return Ok(None);
    };
    let found = TenantRef {
        id: business.id,
        name: Arc::from(name),
        reporting_only: business.mode == ProcessingMode::ReportingOnly,
    };
    state.tenants.insert(name.to_owned(), found.clone());
    Ok(Some(found))
}

/// Why an input message is dead-lettered.
struct Rejection {
    error: String,
    errors: Vec<FieldError>,
}

impl Rejection {
    fn field(error: &str, field: &str, problem: impl Into<String>) -> Rejection {
        Rejection {
            error: error.to_owned(),
            errors: vec![FieldError::new(field, problem)],
        }
    }
}

fn handle(
    shared: &Shared,
    state: &mut PipelineState,
    message: &BorrowedMessage<'_>,
) -> Result<(), KafkaSourceError> {
    shared.metrics.consumed.inc();
    let partition = message.partition();
    let offset = message.offset();
    let key = message.key().map(<[u8]>::to_vec);
    let tenant_name = header_text(message, &shared.config.tenant_header).map(str::to_owned);
    let kind = match evaluate(shared, state, message, tenant_name.as_deref(), partition)? {
        Ok(kind) => kind,
        Err(rejection) => {
            shared.metrics.dead_letters.inc();
            tracing::warn!(partition, offset, error = %rejection.error, "input message dead-lettered");
            PendingKind::DeadLetter(Box::new(DeadLetterRecord {
                schema: DEAD_LETTER_SCHEMA,
                error: rejection.error,
                errors: rejection.errors,
                source: SourcePosition {
                    topic: shared.config.input_topic.clone(),
                    partition,
                    offset,
                },
                tenant: tenant_name,
                key: key
                    .as_deref()
                    .map(|k| String::from_utf8_lossy(k).into_owned()),
                payload: message
                    .payload()
                    .map(|p| String::from_utf8_lossy(p).into_owned()),
            }))
        }
    };
    let Some(pipe) = state.partitions.get_mut(&partition) else {
        tracing::warn!(
            partition,
            offset,
            "message from a partition not assigned here; ignored"
        );
        return Ok(());
    };
    if pipe.feed.send(Pending { offset, key, kind }).is_err() {
        return Err(KafkaSourceError::OutputFailed);
    }
    pipe.next = offset + 1;
    Ok(())
}

/// Parses, validates and submits one message; the inner error is a dead-letter reason.
fn evaluate(
    shared: &Shared,
    state: &mut PipelineState,
    message: &BorrowedMessage<'_>,
    tenant_name: Option<&str>,
    partition: i32,
) -> Result<Result<PendingKind, Rejection>, KafkaSourceError> {
    let header_name = &shared.config.tenant_header;
    let Some(tenant_name) = tenant_name else {
        return Ok(Err(Rejection::field(
            "the message names no tenant",
            header_name,
            "header is required (the business name)",
        )));
    };
    let Some(tenant) = tenant(shared, state, tenant_name)? else {
        return Ok(Err(Rejection::field(
            "unknown tenant",
            header_name,
            format!("no business is named {tenant_name:?}"),
        )));
    };
    let Some(payload) = message.payload().filter(|p| !p.is_empty()) else {
        return Ok(Err(Rejection::field(
            "the message has no value",
            "body",
            "a JSON object is required",
        )));
    };
    let parsed = parse_json::<TransactionPayload>(payload, &mut state.scratch);
    let payload_value = match parsed {
        Ok(value) => value,
        Err(ParseError::Syntax(problem)) => {
            return Ok(Err(Rejection::field(
                "the message is not JSON",
                "body",
                problem,
            )))
        }
        Err(ParseError::Shape(field)) => {
            return Ok(Err(Rejection {
                error: "request validation failed".into(),
                errors: vec![field],
            }))
        }
    };
    let clock = ValidationClock {
        now_ms: chrono::Utc::now().timestamp_millis(),
        max_future_skew_ms: shared.deps.max_future_skew_ms,
    };
    let tx = match payload_value.validate(clock) {
        Ok(tx) => tx,
        Err(errors) => {
            return Ok(Err(Rejection {
                error: "request validation failed".into(),
                errors,
            }))
        }
    };
    if message.key() != Some(tx.user_id.as_bytes()) {
        return Ok(Err(Rejection::field(
            "the message key is not the user's uniqueId",
            "key",
            "must equal anonymizedUserData.uniqueId (re-key with `vigil kafka repartition`)",
        )));
    }
    // Account facts come from the detection stage (`vigil kafka detect`), never from this
    // process's graph, which sees only this instance's partitions.
    let graph = match message
        .headers()
        .and_then(|h| h.iter().find(|h| h.key == detect::GRAPH_HEADER))
    {
        None => None,
        Some(header) => match detect::decode(header.value.unwrap_or_default()) {
            Ok(facts) => {
                shared.metrics.account_facts.inc();
                Some(Box::new(facts))
            }
            Err(problem) => {
                return Ok(Err(Rejection::field(
                    "the account facts header is malformed",
                    detect::GRAPH_HEADER,
                    problem,
                )))
            }
        },
    };
    let user_id = tx.user_id.clone();
    let (reply, wait) = oneshot::channel();
    shared
        .deps
        .engine
        .submit_blocking(EvaluateJob {
            tenant: tenant.id,
            tx: Box::new(tx),
            raw: Bytes::copy_from_slice(payload),
            intake: Intake::Stream(partition),
            reply: Some(reply),
            graph,
        })
        .map_err(|_| KafkaSourceError::EngineClosed)?;
    Ok(Ok(PendingKind::Evaluated {
        tenant,
        user_id,
        reply: wait,
    }))
}

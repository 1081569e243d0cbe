//! The store sink: a group-commit writer that makes decisions durable before anyone is told.
//!
//! Shards (and the asynchronous intake) send [`WriteJob`]s over a bounded channel. The writer task
//! takes everything queued (up to `max_batch`), writes it in one database transaction (one
//! multi-row insert plus the updates), commits — with SQLite in WAL mode and `synchronous=FULL`,
//! one fsync for the whole batch — and only then answers each job. A batch that fails is retried
//! with backoff until it commits: a decision is never acknowledged before it is stored, and never
//! dropped. Callers that cannot wait (HTTP) time out on their own and answer 503.
//!
//! Jobs from one shard arrive in order, so a resubmitted reference (the shard answers "duplicate")
//! is looked up only after the batch holding the original has committed.
//!
//! Cases: every decision in the batch that is stored for the first time and is not approved
//! becomes an alert, and `cases::auto::open_or_append` opens or extends its case inside the same
//! database transaction — a decision is never answered before its case exists.
//!
//! Webhooks: every asynchronous decision completed here, of a business with a webhook configured,
//! is put in the webhook outbox (`webhooks::enqueue`) inside the same database transaction, so the
//! result is durable for delivery the moment the decision is; the delivery worker is woken after
//! the commit.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use crate::cases::auto::{open_or_append, Alert};
use crate::engine::{DecisionSink, Intake, Outcome, Reply, ShardOutput, SinkError};
use crate::metrics::Metrics;
use crate::model::{Decision, Transaction};
use crate::store::{DecisionColumns, Store, StoreError, TransactionRow};
use crate::webhooks::{self, NewDelivery, Webhooks};

/// Work for the writer.
pub enum WriteJob {
    /// An evaluated transaction (instant: insert; async: complete the pending row).
    Decided(ShardOutput),
    /// An asynchronous submission, stored before it is acknowledged. Answers whether it was new.
    Pending {
        tenant: i64,
        /// The transaction id the row is stored under (computed once, when the job is made).
        id: String,
        tx: Box<Transaction>,
        raw: Bytes,
        reply: oneshot::Sender<Result<bool, SinkError>>,
    },
    /// Answered once everything queued before it has been committed (the Kafka changelog waits
    /// for it, so a user's state never gets ahead of the stored decisions it reflects).
    Barrier(oneshot::Sender<()>),
}

/// The sink handed to the engine; cheap to clone.
#[derive(Clone)]
pub struct StoreSink {
    jobs: mpsc::Sender<WriteJob>,
}

impl DecisionSink for StoreSink {
    fn emit(&self, output: ShardOutput) {
        if let Err(mpsc::error::SendError(WriteJob::Decided(output))) =
            self.jobs.blocking_send(WriteJob::Decided(output))
        {
            if let Some(reply) = output.reply {
                let _ = reply.send(Err(SinkError::Closed));
            }
        }
    }
}

impl StoreSink {
    /// Stores an asynchronous submission as pending; Ok(false) if the reference was known.
    pub async fn store_pending(
        &self,
        tenant: i64,
        tx: Box<Transaction>,
        raw: Bytes,
    ) -> Result<bool, SinkError> {
        let (reply, wait) = oneshot::channel();
        self.jobs
            .send(WriteJob::Pending {
                tenant,
                id: crate::engine::transaction_id(tenant, &tx.reference, tx.event_time_ms),
                tx,
                raw,
                reply,
            })
            .await
            .map_err(|_| SinkError::Closed)?;
        wait.await.map_err(|_| SinkError::Closed)?
    }

    /// Waits until every job queued before this call has been committed.
    pub async fn barrier(&self) -> Result<(), SinkError> {
        let (reply, wait) = oneshot::channel();
        self.jobs
            .send(WriteJob::Barrier(reply))
            .await
            .map_err(|_| SinkError::Closed)?;
        wait.await.map_err(|_| SinkError::Closed)
    }
}

/// Starts the writer task; it ends when every sender is dropped and the queue is drained.
pub fn spawn_writer(
    store: Store,
    metrics: Arc<Metrics>,
    max_batch: usize,
    capacity: usize,
    outbox: Option<Webhooks>,
) -> (StoreSink, tokio::task::JoinHandle<()>) {
    let (jobs, queue) = mpsc::channel(capacity.max(1));
    let handle = tokio::spawn(run_writer(store, metrics, queue, max_batch.max(1), outbox));
    (StoreSink { jobs }, handle)
}

async fn run_writer(
    store: Store,
    metrics: Arc<Metrics>,
    mut queue: mpsc::Receiver<WriteJob>,
    max_batch: usize,
    outbox: Option<Webhooks>,
) {
    let mut batch = Vec::with_capacity(max_batch);
    loop {
        batch.clear();
        if queue.recv_many(&mut batch, max_batch).await == 0 {
            return;
        }
        let encoded = encode(&batch);
        let mut delay = Duration::from_millis(50);
        let inserted = loop {
            let started = Instant::now();
            match write_batch(&store, &batch, &encoded, outbox.is_some()).await {
                Ok((inserted, queued)) => {
                    if queued {
                        if let Some(outbox) = &outbox {
                            outbox.wake();
                        }
                    }
                    metrics.store_batch_size.observe(batch.len() as f64);
                    metrics
                        .store_commit_seconds
                        .observe(started.elapsed().as_secs_f64());
                    break inserted;
                }
                Err(error) => {
                    metrics.store_errors.inc();
                    tracing::error!(%error, records = batch.len(), retry_in_ms = delay.as_millis() as u64, "store batch failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                }
            }
        };
        answer(&store, std::mem::take(&mut batch), inserted).await;
    }
}

/// Decisions serialised once, outside the database transaction.
struct Encoded {
    decisions: Vec<Option<String>>,
    decided_at_ms: i64,
}

fn decision_of(job: &WriteJob) -> Option<&Arc<Decision>> {
    match job {
        WriteJob::Decided(ShardOutput {
            outcome: Outcome::Decided(decision),
            ..
        }) => Some(decision),
        _ => None,
    }
}

fn encode(batch: &[WriteJob]) -> Encoded {
    Encoded {
        decisions: batch
            .iter()
            .map(|job| decision_of(job).and_then(|d| serde_json::to_string(&**d).ok()))
            .collect(),
        decided_at_ms: crate::store::now_ms(),
    }
}

fn payload_text(raw: &Bytes) -> &str {
    std::str::from_utf8(raw).unwrap_or("{}")
}

async fn write_batch(
    store: &Store,
    batch: &[WriteJob],
    encoded: &Encoded,
    outbox: bool,
) -> Result<(Vec<String>, bool), StoreError> {
    let mut rows = Vec::with_capacity(batch.len());
    let mut completions = Vec::new();
    let mut results = Vec::new();
    let mut alerts = Vec::new();
    for (job, json) in batch.iter().zip(&encoded.decisions) {
        match job {
            WriteJob::Barrier(_) => {}
            WriteJob::Pending {
                tenant,
                tx,
                raw,
                id,
                ..
            } => {
                rows.push(row(*tenant, tx, raw, Intake::Async, None, id));
            }
            WriteJob::Decided(output) => {
                let (Outcome::Decided(decision), Some(json)) = (&output.outcome, json) else {
                    continue;
                };
                let columns = DecisionColumns {
                    action: decision.action().as_str(),
                    risk_score: decision.risk_score.parse().unwrap_or(0.0),
                    json,
                    decided_at_ms: encoded.decided_at_ms,
                };
                let id = decision.transaction_id.as_str();
                alerts.extend(Alert::from_decision_all(
                    output.tenant,
                    &output.tx,
                    decision,
                ));
                if output.intake == Intake::Async {
                    results.push((output.tenant, id, columns.json));
                    completions.push((output.tenant, output.tx.reference.as_str(), id, columns));
                } else {
                    rows.push(row(
                        output.tenant,
                        &output.tx,
                        &output.raw,
                        output.intake,
                        Some(columns),
                        id,
                    ));
                }
            }
        }
    }
    let mut tx = crate::store::begin_write(store.pool()).await?;
    let mut inserted = Vec::new();
    for chunk in rows.chunks(MAX_ROWS_PER_STATEMENT) {
        inserted.extend(Store::insert_transactions(&mut tx, chunk).await?);
    }
    let new_rows: std::collections::HashSet<&str> = inserted.iter().map(String::as_str).collect();
    // Decisions stored for the first time here: new instant rows and completed pending ones.
    let mut fresh = new_rows.clone();
    for (tenant, reference, id, columns) in &completions {
        if Store::complete_transaction(&mut tx, *tenant, reference, id, columns).await? {
            fresh.insert(id);
        }
    }
    // An instant decision whose reference was already stored as pending (an asynchronous
    // submission of the same reference not yet evaluated) completes that row.
    for row in rows.iter().filter(|r| !new_rows.contains(r.transaction_id)) {
        if let Some(columns) = &row.decision {
            let completed = Store::complete_transaction(
                &mut tx,
                row.business_id,
                row.reference,
                row.transaction_id,
                columns,
            )
            .await?;
            if completed {
                fresh.insert(row.transaction_id);
            }
        }
    }
    alerts.retain(|alert| fresh.contains(alert.transaction_id.as_str()));
    if !alerts.is_empty() {
        open_or_append(&mut tx, &alerts, encoded.decided_at_ms).await?;
    }
    let mut queued = false;
    results.retain(|(_, id, _)| fresh.contains(id));
    if outbox && !results.is_empty() {
        let tenants: Vec<i64> = results.iter().map(|(tenant, _, _)| *tenant).collect();
        let hooked = webhooks::with_webhook(&mut tx, &tenants).await?;
        for (tenant, id, json) in results.iter().filter(|(t, _, _)| hooked.contains(t)) {
            let body = format!(
                r#"{{"type":"transaction monitoring","message":"Transaction processed","data":{json}}}"#
            );
            let delivery = NewDelivery {
                business_id: *tenant,
                event: webhooks::event::TRANSACTION,
                record_id: id,
                url: None,
                body: &body,
            };
            webhooks::enqueue(&mut tx, &delivery, encoded.decided_at_ms).await?;
            queued = true;
        }
    }
    tx.commit().await?;
    Ok((inserted, queued))
}

/// Keeps a statement under SQLite's default limit of 32,766 bound parameters.
const MAX_ROWS_PER_STATEMENT: usize = 1_000;

fn row<'a>(
    tenant: i64,
    tx: &'a Transaction,
    raw: &'a Bytes,
    intake: Intake,
    decision: Option<DecisionColumns<'a>>,
    id: &'a str,
) -> TransactionRow<'a> {
    TransactionRow {
        business_id: tenant,
        transaction_id: id,
        reference: &tx.reference,
        user_id: &tx.user_id,
        intake: intake.as_str(),
        event_time_ms: tx.event_time_ms,
        received_at_ms: tx.received_at_ms,
        payload: payload_text(raw),
        decision,
    }
}

async fn answer(store: &Store, batch: Vec<WriteJob>, inserted: Vec<String>) {
    let inserted: std::collections::HashSet<String> = inserted.into_iter().collect();
    for job in batch {
        match job {
            WriteJob::Barrier(reply) => {
                let _ = reply.send(());
            }
            WriteJob::Pending { id, reply, .. } => {
                let _ = reply.send(Ok(inserted.contains(&id)));
            }
            WriteJob::Decided(output) => {
                let Some(reply) = output.reply else {
                    continue;
                };
                let result = match output.outcome {
                    Outcome::Decided(decision)
                        if output.intake == Intake::Async
                            || inserted.contains(&decision.transaction_id) =>
                    {
                        Ok(Outcome::Decided(decision))
                    }
                    // Not inserted (the reference was stored before) or a shard-side duplicate:
                    // answer with the decision stored for the reference (with the id stored
                    // then, even if this submission carries another date).
                    Outcome::Decided(_) | Outcome::Duplicate { .. } => {
                        stored_decision(store, output.tenant, &output.tx.reference).await
                    }
                };
                send(reply, result);
            }
        }
    }
}

fn send(reply: Reply, result: Result<Outcome, SinkError>) {
    let _ = reply.send(result);
}

async fn stored_decision(
    store: &Store,
    tenant: i64,
    reference: &str,
) -> Result<Outcome, SinkError> {
    let stored = store
        .transaction_by_reference(tenant, reference)
        .await
        .map_err(|e| SinkError::Store(e.to_string()))?;
    let Some(stored) = stored else {
        return Err(SinkError::Store(format!(
            "no transaction is stored with reference {reference}"
        )));
    };
    match stored.decision {
        Some(json) => serde_json::from_str::<Decision>(&json)
            .map(|d| Outcome::Decided(Arc::new(d)))
            .map_err(|e| SinkError::Store(format!("stored decision does not parse: {e}"))),
        None => Ok(Outcome::Duplicate {
            transaction_id: stored.transaction_id,
        }),
    }
}

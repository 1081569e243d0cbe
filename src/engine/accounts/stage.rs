//! The account stage: one thread that owns the [`AccountGraph`] and sits in front of the shards.
//!
//! Every transaction passes it in arrival order: the stage observes the payment (both accounts'
//! history, the detectors), attaches the [`GraphFacts`] to the job and forwards it to the shard
//! of its user, where the rules decide. Batches (replay), and the jobs that queued up while the
//! stage was busy, are split per shard in order and handed on as one message per shard. A flush
//! answers once everything sent before it has been forwarded, so a barrier on the shards that
//! follows it also covers the stage.
//!
//! Transactions from the Kafka source pass untouched: their facts, if any, were computed by the
//! detection stage in front of the input topic (`sources::kafka::detect`), which sees the
//! tenant's payments in one order; this process's graph sees only its own partitions.

use tokio::sync::{mpsc, oneshot};

use super::AccountGraph;
use crate::engine::router::shard_of;
use crate::engine::shard::ShardMsg;
use crate::engine::{EvaluateJob, Intake, SharedSnapshot};
use crate::model::Transaction;

pub enum StageMsg {
    Evaluate(EvaluateJob),
    /// Jobs in arrival order (any users).
    EvaluateBatch(Vec<EvaluateJob>),
    Restore {
        tenant: i64,
        tx: Box<Transaction>,
    },
    /// Answered (with the graph's account count and bytes) once everything before it is forwarded.
    Flush(oneshot::Sender<(usize, usize)>),
    /// A control message for one shard, kept in order with the events around it.
    Forward(usize, ShardMsg),
}

pub struct StageContext {
    pub snapshot: SharedSnapshot,
    pub shards: Vec<mpsc::Sender<ShardMsg>>,
}

/// Jobs the stage takes from its queue at once before handing them on: under load, one
/// hand-off (and one wake-up) per shard for whatever has queued, not one per job.
const DRAIN_MAX: usize = 64;

/// Runs the stage until every sender is dropped (then the shards' queues close behind it).
pub fn run(context: StageContext, mut queue: mpsc::Receiver<StageMsg>) {
    let mut graph = AccountGraph::default();
    let count = context.shards.len();
    let mut batches: Vec<Vec<EvaluateJob>> = (0..count).map(|_| Vec::new()).collect();
    // A message taken while draining that is not a job: handled next, in order.
    let mut carried: Option<StageMsg> = None;
    loop {
        let message = match carried.take() {
            Some(message) => message,
            None => match queue.blocking_recv() {
                Some(message) => message,
                None => return,
            },
        };
        match message {
            StageMsg::Evaluate(job) => {
                let mut next = Some(job);
                let mut taken = 0;
                while let Some(job) = next.take() {
                    place(&context, &mut graph, &mut batches, job);
                    taken += 1;
                    if taken == DRAIN_MAX {
                        break;
                    }
                    match queue.try_recv() {
                        Ok(StageMsg::Evaluate(more)) => next = Some(more),
                        Ok(other) => carried = Some(other),
                        Err(_) => {}
                    }
                }
                if !hand_on(&context, &mut batches) {
                    return;
                }
            }
            StageMsg::EvaluateBatch(jobs) => {
                for job in jobs {
                    place(&context, &mut graph, &mut batches, job);
                }
                if !hand_on(&context, &mut batches) {
                    return;
                }
            }
            StageMsg::Restore { tenant, tx } => {
                let settings = context.snapshot.load().rules.detectors;
                graph.restore(tenant, &tx, &settings);
                let shard = shard_of(tenant, &tx.user_id, count);
                if context.shards[shard]
                    .blocking_send(ShardMsg::Restore { tenant, tx })
                    .is_err()
                {
                    return;
                }
            }
            StageMsg::Forward(shard, message) => {
                if context.shards[shard].blocking_send(message).is_err() {
                    return;
                }
            }
            StageMsg::Flush(reply) => {
                let _ = reply.send((graph.account_count(), graph.memory_bytes()));
            }
        }
    }
}

/// Observes the job and adds it to its shard's batch.
fn place(
    context: &StageContext,
    graph: &mut AccountGraph,
    batches: &mut [Vec<EvaluateJob>],
    mut job: EvaluateJob,
) {
    observe(context, graph, &mut job);
    let shard = shard_of(job.tenant, &job.tx.user_id, batches.len());
    batches[shard].push(job);
}

/// Sends each shard its jobs, in order (false: the shards are gone).
fn hand_on(context: &StageContext, batches: &mut [Vec<EvaluateJob>]) -> bool {
    for (shard, batch) in batches.iter_mut().enumerate() {
        let message = match batch.len() {
            0 => continue,
            1 => match batch.pop() {
                Some(job) => ShardMsg::Evaluate(job),
                None => continue,
            },
            _ => ShardMsg::EvaluateBatch(std::mem::take(batch)),
        };
        if context.shards[shard].blocking_send(message).is_err() {
            return false;
        }
    }
    true
}

fn observe(context: &StageContext, graph: &mut AccountGraph, job: &mut EvaluateJob) {
    if let Intake::Stream(_) = job.intake {
        // A streamed decision depends only on its message (facts from the detection stage's
        // header), so it is the same across rebalances, restarts and instances.
        return;
    }
    let snapshot = context.snapshot.load();
    let settings: &super::DetectorSettings = &snapshot.rules.detectors;
    let facts = graph.observe(job.tenant, &job.tx, settings);
    job.graph = Some(Box::new(facts));
}

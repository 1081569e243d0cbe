//! One shard: an OS thread that owns an [`Evaluator`] and drains a bounded queue.
//!
//! Messages for one user always land on the same shard, in the order the router received them, so
//! per-user state needs no locks. Control messages (state restore, device registration, barriers)
//! travel on the same queue, which orders them with the events around them.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::evaluator::{Evaluator, Outcome};
use super::state::StateLimits;
use super::{DecisionSink, EvaluateJob, ShardOutput, SharedSnapshot};
use crate::metrics::ShardMetrics;
use crate::model::Transaction;

pub enum ShardMsg {
    Evaluate(EvaluateJob),
    /// Several jobs for this shard in order (offline replay hands them over in batches, so the
    /// queue is touched, and a sleeping shard woken, once per batch rather than per event).
    EvaluateBatch(Vec<EvaluateJob>),
    Restore {
        tenant: i64,
        tx: Box<Transaction>,
    },
    RestoreProfile {
        tenant: i64,
        user: String,
        first_ms: i64,
        last_ms: i64,
        count: u32,
    },
    RegisterDevice {
        tenant: i64,
        user: String,
        device: String,
    },
    /// Answered once everything queued before it has been handled.
    Barrier(oneshot::Sender<ShardStats>),
}

/// A shard's view of itself, answered to barriers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShardStats {
    pub users: usize,
    pub state_bytes: usize,
}

pub struct ShardContext {
    pub index: usize,
    pub snapshot: SharedSnapshot,
    pub sink: Arc<dyn DecisionSink>,
    pub metrics: ShardMetrics,
    pub limits: StateLimits,
}

/// Runs a shard until every sender is dropped.
pub fn run(context: ShardContext, mut queue: mpsc::Receiver<ShardMsg>) {
    let mut evaluator = Evaluator::new(context.limits);
    let mut handled: u64 = 0;
    while let Some(message) = queue.blocking_recv() {
        context.metrics.queue_depth.set(queue.len() as i64);
        match message {
            ShardMsg::Evaluate(job) => {
                evaluate(&context, &mut evaluator, job, &mut handled);
            }
            ShardMsg::EvaluateBatch(jobs) => {
                for job in jobs {
                    evaluate(&context, &mut evaluator, job, &mut handled);
                }
            }
            ShardMsg::Restore { tenant, tx } => evaluator.restore(tenant, &tx),
            ShardMsg::RestoreProfile {
                tenant,
                user,
                first_ms,
                last_ms,
                count,
            } => evaluator.restore_profile(tenant, &user, first_ms, last_ms, count),
            ShardMsg::RegisterDevice {
                tenant,
                user,
                device,
            } => evaluator.register_device(tenant, &user, &device),
            ShardMsg::Barrier(reply) => {
                context.metrics.users.set(evaluator.user_count() as i64);
                let _ = reply.send(ShardStats {
                    users: evaluator.user_count(),
                    state_bytes: evaluator.state_bytes(),
                });
            }
        }
    }
}

fn evaluate(
    context: &ShardContext,
    evaluator: &mut Evaluator,
    job: EvaluateJob,
    handled: &mut u64,
) {
    let started = Instant::now();
    let snapshot = context.snapshot.load();
    let observer = snapshot
        .rule_counters
        .as_deref()
        .map(|c| c as &dyn super::evaluator::RuleObserver);
    let (outcome, tx) = evaluator.evaluate(&snapshot, job.tenant, *job.tx, observer);
    drop(snapshot);
    match &outcome {
        Outcome::Decided(decision) => {
            context.metrics.decisions[decision.action().code() as usize].inc();
        }
        Outcome::Duplicate { .. } => context.metrics.duplicates.inc(),
    }
    context.metrics.evaluations.inc();
    context
        .metrics
        .eval_seconds
        .observe(started.elapsed().as_secs_f64());
    context.sink.emit(ShardOutput {
        tenant: job.tenant,
        tx: Box::new(tx),
        raw: job.raw,
        intake: job.intake,
        outcome,
        reply: job.reply,
    });
    *handled += 1;
    if *handled % 4096 == 0 {
        context.metrics.users.set(evaluator.user_count() as i64);
    }
}

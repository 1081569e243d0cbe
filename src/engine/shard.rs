//! One shard: an OS thread that owns an [`Evaluator`] and drains a bounded queue.
//!
//! Messages for one user always land on the same shard, in the order the router received them, so
//! per-user state needs no locks. Control messages (state restore, device registration, barriers)
//! travel on the same queue, which orders them with the events around them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::evaluator::{Evaluator, Outcome};
use super::state::{StateLimits, UserState};
use super::{DecisionSink, EvaluateJob, Intake, ShardOutput, SharedSnapshot};
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
    /// Answers the encoded state of every user a streamed event changed since the last call.
    Changelog(oneshot::Sender<Vec<StateRecord>>),
    /// Replaces a streamed user's state (from the changelog of the partition it belongs to).
    ImportState {
        tenant: i64,
        user: String,
        partition: i32,
        state: Option<Box<UserState>>,
    },
    /// Drops the state of every streamed user of these partitions; answers how many.
    ForgetPartitions(Vec<i32>, oneshot::Sender<usize>),
}

/// One user's state for the changelog, keyed by the input partition the user belongs to.
#[derive(Debug, Clone)]
pub struct StateRecord {
    pub partition: i32,
    pub tenant: i64,
    pub user: Box<str>,
    pub state: Vec<u8>,
}

/// Which input partition each streamed user belongs to, and who changed since the last changelog
/// flush. Only the Kafka source fills it; HTTP-only shards leave it empty.
#[derive(Default)]
struct StreamUsers {
    partition_of: HashMap<i64, HashMap<Box<str>, i32>>,
    dirty: HashMap<i64, HashSet<Box<str>>>,
}

impl StreamUsers {
    fn touched(&mut self, tenant: i64, user: &str, partition: i32) {
        let owners = self.partition_of.entry(tenant).or_default();
        match owners.get_mut(user) {
            Some(owner) => *owner = partition,
            None => {
                owners.insert(Box::from(user), partition);
            }
        }
        let dirty = self.dirty.entry(tenant).or_default();
        if !dirty.contains(user) {
            dirty.insert(Box::from(user));
        }
    }

    fn changelog(&mut self, evaluator: &Evaluator) -> Vec<StateRecord> {
        let mut records = Vec::new();
        for (tenant, users) in self.dirty.drain() {
            for user in users {
                let Some(&partition) = self
                    .partition_of
                    .get(&tenant)
                    .and_then(|owners| owners.get(&user))
                else {
                    continue;
                };
                match evaluator.export_user(tenant, &user) {
                    Some(Ok(state)) => records.push(StateRecord {
                        partition,
                        tenant,
                        user,
                        state,
                    }),
                    Some(Err(error)) => {
                        tracing::error!(%error, tenant, user = %user, "user state does not encode; not in the changelog")
                    }
                    None => {}
                }
            }
        }
        records
    }

    fn forget(&mut self, evaluator: &mut Evaluator, partitions: &[i32]) -> usize {
        let mut forgotten = 0;
        for (tenant, owners) in &mut self.partition_of {
            owners.retain(|user, partition| {
                if !partitions.contains(partition) {
                    return true;
                }
                evaluator.forget_user(*tenant, user);
                if let Some(dirty) = self.dirty.get_mut(tenant) {
                    dirty.remove(user);
                }
                forgotten += 1;
                false
            });
        }
        self.partition_of.retain(|_, owners| !owners.is_empty());
        forgotten
    }
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
    let mut streamed = StreamUsers::default();
    while let Some(message) = queue.blocking_recv() {
        context.metrics.queue_depth.set(queue.len() as i64);
        match message {
            ShardMsg::Evaluate(job) => {
                evaluate(&context, &mut evaluator, &mut streamed, job, &mut handled);
            }
            ShardMsg::EvaluateBatch(jobs) => {
                for job in jobs {
                    evaluate(&context, &mut evaluator, &mut streamed, job, &mut handled);
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
            ShardMsg::Changelog(reply) => {
                let _ = reply.send(streamed.changelog(&evaluator));
            }
            ShardMsg::ImportState {
                tenant,
                user,
                partition,
                state,
            } => {
                let known = state.is_some();
                evaluator.import_user(tenant, &user, state.map(|s| *s));
                if known {
                    streamed
                        .partition_of
                        .entry(tenant)
                        .or_default()
                        .insert(Box::from(user.as_str()), partition);
                }
            }
            ShardMsg::ForgetPartitions(partitions, reply) => {
                let _ = reply.send(streamed.forget(&mut evaluator, &partitions));
            }
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
    streamed: &mut StreamUsers,
    job: EvaluateJob,
    handled: &mut u64,
) {
    let started = Instant::now();
    let snapshot = context.snapshot.load();
    let observer = snapshot
        .rule_counters
        .as_deref()
        .map(|c| c as &dyn super::evaluator::RuleObserver);
    let (outcome, tx) = evaluator.evaluate(&snapshot, job.tenant, *job.tx, job.graph, observer);
    drop(snapshot);
    if let Intake::Stream(partition) = job.intake {
        streamed.touched(job.tenant, &tx.user_id, partition);
    }
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

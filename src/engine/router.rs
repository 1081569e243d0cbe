//! The router: starts the account stage and the shard threads; every message passes the stage
//! (which adds the account-graph facts to transactions) on its way to the shard that owns its user.
//!
//! The shard of (tenant, user) is `xxh3(tenant ‖ 0 ‖ user) mod N`: stable across processes and
//! restarts, so state rebuilt at start lands where new events for the same user will go. Queues are
//! bounded; an async sender waits for room (backpressure), it never grows memory.

use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::sync::{mpsc, oneshot};
use xxhash_rust::xxh3::Xxh3;

use super::accounts::stage::{self, StageContext, StageMsg};
use super::shard::{self, ShardContext, ShardMsg, ShardStats, StateRecord};
use super::state::{StateLimits, UserState};
use super::{DecisionSink, EvaluateJob, SharedSnapshot};
use crate::metrics::Metrics;
use crate::model::Transaction;

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("the engine is shut down")]
    Closed,
}

/// How many shards and how deep their queues.
#[derive(Debug, Clone, Copy)]
pub struct EngineOptions {
    pub shards: usize,
    pub queue_capacity: usize,
    pub limits: StateLimits,
}

pub struct Engine {
    /// The account stage, in front of every shard: all messages pass it, in order.
    stage: mpsc::Sender<StageMsg>,
    shards: usize,
    /// The shards' queues, for their depth only (messages go through the stage).
    shard_queues: Vec<mpsc::Sender<ShardMsg>>,
    threads: Vec<JoinHandle<()>>,
    snapshot: SharedSnapshot,
}

/// The shard index for a tenant's user.
pub fn shard_of(tenant: i64, user: &str, shards: usize) -> usize {
    // XXH3 of (tenant, 0, user). One-shot over a stack copy for the usual short ids (the same
    // digest as the streaming hasher, without setting up its state per event).
    let mut key = [0u8; 128];
    let hash = if user.len() + 9 <= key.len() {
        key[..8].copy_from_slice(&tenant.to_le_bytes());
        key[9..9 + user.len()].copy_from_slice(user.as_bytes());
        xxhash_rust::xxh3::xxh3_64(&key[..9 + user.len()])
    } else {
        let mut hasher = Xxh3::new();
        hasher.update(&tenant.to_le_bytes());
        hasher.update(&[0]);
        hasher.update(user.as_bytes());
        hasher.digest()
    };
    (hash % shards.max(1) as u64) as usize
}

impl Engine {
    pub fn start(
        options: EngineOptions,
        snapshot: SharedSnapshot,
        sink: Arc<dyn DecisionSink>,
        metrics: &Metrics,
    ) -> std::io::Result<Engine> {
        let shards = options.shards.max(1);
        let mut senders = Vec::with_capacity(shards);
        let mut threads = Vec::with_capacity(shards + 1);
        for index in 0..shards {
            let (sender, receiver) = mpsc::channel(options.queue_capacity.max(1));
            let context = ShardContext {
                index,
                snapshot: snapshot.clone(),
                sink: sink.clone(),
                metrics: metrics.shard(index),
                limits: options.limits,
            };
            let thread = std::thread::Builder::new()
                .name(format!("vigil-shard-{index}"))
                .spawn(move || shard::run(context, receiver))?;
            senders.push(sender);
            threads.push(thread);
        }
        let (stage, receiver) = mpsc::channel(options.queue_capacity.max(1));
        let shard_queues = senders.clone();
        let context = StageContext {
            snapshot: snapshot.clone(),
            shards: senders,
        };
        // The stage goes first in `threads`: joined first, it closes the shards' queues.
        threads.insert(
            0,
            std::thread::Builder::new()
                .name("vigil-accounts".into())
                .spawn(move || stage::run(context, receiver))?,
        );
        Ok(Engine {
            stage,
            shards,
            shard_queues,
            threads,
            snapshot,
        })
    }

    pub fn snapshot(&self) -> &SharedSnapshot {
        &self.snapshot
    }

    pub fn shard_count(&self) -> usize {
        self.shards
    }

    async fn send(&self, message: StageMsg) -> Result<(), EngineError> {
        self.stage
            .send(message)
            .await
            .map_err(|_| EngineError::Closed)
    }

    fn send_blocking(&self, message: StageMsg) -> Result<(), EngineError> {
        self.stage
            .blocking_send(message)
            .map_err(|_| EngineError::Closed)
    }

    fn forward(&self, tenant: i64, user: &str, message: ShardMsg) -> StageMsg {
        StageMsg::Forward(shard_of(tenant, user, self.shards), message)
    }

    /// Queues a transaction, waiting for room.
    pub async fn submit(&self, job: EvaluateJob) -> Result<(), EngineError> {
        self.send(StageMsg::Evaluate(job)).await
    }

    /// The shard that owns (tenant, user).
    pub fn shard_for(&self, tenant: i64, user: &str) -> usize {
        shard_of(tenant, user, self.shards)
    }

    /// Hands `jobs` (any users, in arrival order) over in one message; each user's jobs are
    /// evaluated in that order.
    pub fn submit_batch_blocking(&self, jobs: Vec<EvaluateJob>) -> Result<(), EngineError> {
        self.send_blocking(StageMsg::EvaluateBatch(jobs))
    }

    /// Queues a transaction from a thread outside the async runtime (replay, Kafka).
    pub fn submit_blocking(&self, job: EvaluateJob) -> Result<(), EngineError> {
        self.send_blocking(StageMsg::Evaluate(job))
    }

    /// Adds a stored transaction to its user's and its accounts' state without evaluating it.
    pub async fn restore(&self, tenant: i64, tx: Transaction) -> Result<(), EngineError> {
        self.send(StageMsg::Restore {
            tenant,
            tx: Box::new(tx),
        })
        .await
    }

    /// Seeds a user's long-term profile from history older than the replayed window.
    pub async fn restore_profile(
        &self,
        tenant: i64,
        user: String,
        first_ms: i64,
        last_ms: i64,
        count: u32,
    ) -> Result<(), EngineError> {
        let shard = shard_of(tenant, &user, self.shards);
        self.send(StageMsg::Forward(
            shard,
            ShardMsg::RestoreProfile {
                tenant,
                user,
                first_ms,
                last_ms,
                count,
            },
        ))
        .await
    }

    pub async fn register_device(
        &self,
        tenant: i64,
        user: &str,
        device: &str,
    ) -> Result<(), EngineError> {
        let message = self.forward(
            tenant,
            user,
            ShardMsg::RegisterDevice {
                tenant,
                user: user.to_owned(),
                device: device.to_owned(),
            },
        );
        self.send(message).await
    }

    /// Waits until every shard (and the account stage before them) has handled everything
    /// queued before this call.
    pub async fn barrier(&self) -> Result<Vec<ShardStats>, EngineError> {
        let mut waits = Vec::with_capacity(self.shards);
        for shard in 0..self.shards {
            let (reply, wait) = oneshot::channel();
            self.send(StageMsg::Forward(shard, ShardMsg::Barrier(reply)))
                .await?;
            waits.push(wait);
        }
        let mut stats = Vec::with_capacity(waits.len());
        for wait in waits {
            stats.push(wait.await.map_err(|_| EngineError::Closed)?);
        }
        Ok(stats)
    }

    /// The blocking form of [`Engine::barrier`], for threads outside the runtime.
    pub fn barrier_blocking(&self) -> Result<Vec<ShardStats>, EngineError> {
        let mut waits = Vec::with_capacity(self.shards);
        for shard in 0..self.shards {
            let (reply, wait) = oneshot::channel();
            self.send_blocking(StageMsg::Forward(shard, ShardMsg::Barrier(reply)))?;
            waits.push(wait);
        }
        waits
            .into_iter()
            .map(|wait| wait.blocking_recv().map_err(|_| EngineError::Closed))
            .collect()
    }

    /// Accounts the account stage holds and the bytes their state takes, once everything queued
    /// before this call has passed it.
    pub fn account_stats_blocking(&self) -> Result<(usize, usize), EngineError> {
        let (reply, wait) = oneshot::channel();
        self.send_blocking(StageMsg::Flush(reply))?;
        wait.blocking_recv().map_err(|_| EngineError::Closed)
    }

    /// Collects, from every shard, the state of each streamed user changed since the last call.
    /// Everything queued before this call has been evaluated (and handed to the sink) first.
    pub fn changelog_blocking(&self) -> Result<Vec<StateRecord>, EngineError> {
        let mut waits = Vec::with_capacity(self.shards);
        for shard in 0..self.shards {
            let (reply, wait) = oneshot::channel();
            self.send_blocking(StageMsg::Forward(shard, ShardMsg::Changelog(reply)))?;
            waits.push(wait);
        }
        let mut records = Vec::new();
        for wait in waits {
            records.extend(wait.blocking_recv().map_err(|_| EngineError::Closed)?);
        }
        Ok(records)
    }

    /// Replaces a streamed user's state with the one its partition's changelog holds.
    pub fn import_state_blocking(
        &self,
        tenant: i64,
        user: &str,
        partition: i32,
        state: Option<UserState>,
    ) -> Result<(), EngineError> {
        let message = self.forward(
            tenant,
            user,
            ShardMsg::ImportState {
                tenant,
                user: user.to_owned(),
                partition,
                state: state.map(Box::new),
            },
        );
        self.send_blocking(message)
    }

    /// Drops the state of the streamed users of `partitions` on every shard; answers how many.
    pub fn forget_partitions_blocking(&self, partitions: &[i32]) -> Result<usize, EngineError> {
        let mut waits = Vec::with_capacity(self.shards);
        for shard in 0..self.shards {
            let (reply, wait) = oneshot::channel();
            self.send_blocking(StageMsg::Forward(
                shard,
                ShardMsg::ForgetPartitions(partitions.to_vec(), reply),
            ))?;
            waits.push(wait);
        }
        let mut forgotten = 0;
        for wait in waits {
            forgotten += wait.blocking_recv().map_err(|_| EngineError::Closed)?;
        }
        Ok(forgotten)
    }

    /// Messages waiting per shard (behind the account stage).
    pub fn queue_depths(&self) -> Vec<usize> {
        self.shard_queues
            .iter()
            .map(|s| s.max_capacity() - s.capacity())
            .collect()
    }

    /// Messages waiting in front of the account stage.
    pub fn stage_depth(&self) -> usize {
        self.stage.max_capacity() - self.stage.capacity()
    }

    /// Stops accepting work, lets the stage and the shards drain their queues and joins them.
    pub fn shutdown(self) {
        drop(self.stage);
        drop(self.shard_queues);
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_is_stable_and_spreads_users() {
        assert_eq!(shard_of(1, "alice", 8), shard_of(1, "alice", 8));
        let mut counts = [0usize; 4];
        for i in 0..4000 {
            counts[shard_of(7, &format!("user-{i}"), 4)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    }

    #[test]
    fn the_one_shot_hash_routes_as_the_streaming_hash() {
        let streaming = |tenant: i64, user: &str| {
            let mut hasher = Xxh3::new();
            hasher.update(&tenant.to_le_bytes());
            hasher.update(&[0]);
            hasher.update(user.as_bytes());
            (hasher.digest() % 1_000_003) as usize
        };
        let long = "u".repeat(300);
        for (tenant, user) in [(1, "alice"), (-7, ""), (42, "C_366"), (3, long.as_str())] {
            assert_eq!(shard_of(tenant, user, 1_000_003), streaming(tenant, user));
        }
    }

    #[test]
    fn the_tenant_is_part_of_the_routing_key() {
        // If routing ignored the tenant, the same user id would land on the same shard in every
        // tenant; with it, a good share of ids route apart. (State maps are keyed by tenant too.)
        let apart = (0..1000)
            .filter(|i| {
                let user = format!("user-{i}");
                shard_of(1, &user, 64) != shard_of(2, &user, 64)
            })
            .count();
        assert!(apart > 900, "only {apart} of 1000 user ids route apart");
    }
}

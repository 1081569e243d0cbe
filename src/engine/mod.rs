//! The sharded evaluator.
//!
//! Sources (the HTTP intake, Kafka) hand validated transactions to the [`Engine`]. Each passes the
//! account stage ([`accounts`]: both accounts' history and the cross-account detectors) and the
//! router hashes (tenant, `uniqueId`) with a stable hash to one of N shard threads. Each shard owns
//! its users' state outright and evaluates events in arrival order against one [`Snapshot`] per
//! event (rules, lists, screener), taken from an arc-swap. Outputs go to a [`DecisionSink`]
//! (the store's group-commit writer in `serve`, a direct reply in `replay` and tests), which
//! answers the source once the decision is durable.

pub mod accounts;
pub mod evaluator;
pub mod lists;
pub mod router;
pub mod rules;
pub mod shard;
pub mod state;

use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use tokio::sync::oneshot;

use crate::metrics::RuleCounters;
use crate::model::Transaction;
use crate::screening::Screener;

pub use evaluator::{transaction_id, Evaluator, Outcome};
pub use lists::{ListKind, Lists};
pub use router::{Engine, EngineError};
pub use rules::RuleSet;

/// Everything an evaluation reads besides user state, swapped atomically as a whole.
#[derive(Clone)]
pub struct Snapshot {
    pub rules: Arc<RuleSet>,
    pub rule_counters: Option<Arc<RuleCounters>>,
    pub lists: Arc<Lists>,
    pub screener: Arc<dyn Screener>,
}

impl Snapshot {
    pub fn new(rules: Arc<RuleSet>, screener: Arc<dyn Screener>) -> Snapshot {
        Snapshot {
            rules,
            rule_counters: None,
            lists: Arc::new(Lists::default()),
            screener,
        }
    }
}

pub type SharedSnapshot = Arc<ArcSwap<Snapshot>>;

/// Where a transaction came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intake {
    /// `POST …/instant`: the caller waits for the durable decision.
    Instant,
    /// `POST /api/v1/transaction-monitoring`: already stored as pending; the decision completes it.
    Async,
    /// Offline replay and fixtures: nothing is stored. The number is the job's place in the
    /// input, so the replay can put decisions back in input order.
    Replay(u64),
    /// The Kafka source, with the input partition the event came from: stored like an instant
    /// decision, and the user's state follows that partition (changelog).
    Stream(i32),
}

impl Intake {
    pub fn as_str(self) -> &'static str {
        match self {
            Intake::Instant => "instant",
            Intake::Async => "async",
            Intake::Replay(_) => "replay",
            Intake::Stream(_) => "stream",
        }
    }
}

/// Why a decision could not be delivered to its caller.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SinkError {
    #[error("the decision could not be stored: {0}")]
    Store(String),
    #[error("the engine is shutting down")]
    Closed,
}

pub type Reply = oneshot::Sender<Result<Outcome, SinkError>>;

/// One transaction for a shard.
pub struct EvaluateJob {
    pub tenant: i64,
    pub tx: Box<Transaction>,
    /// The request body as received, stored verbatim for audit.
    pub raw: Bytes,
    pub intake: Intake,
    pub reply: Option<Reply>,
    /// The account stage's facts about the payment (filled in by the stage).
    pub graph: Option<Box<accounts::GraphFacts>>,
}

/// What a shard emits for every evaluated transaction.
pub struct ShardOutput {
    pub tenant: i64,
    pub tx: Box<Transaction>,
    pub raw: Bytes,
    pub intake: Intake,
    pub outcome: Outcome,
    pub reply: Option<Reply>,
}

/// Receives shard outputs. Called on shard threads: may block (that is the backpressure).
pub trait DecisionSink: Send + Sync {
    fn emit(&self, output: ShardOutput);
}

/// Answers callers at once and stores nothing (replay, fixtures, benchmarks).
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectSink;

impl DecisionSink for DirectSink {
    fn emit(&self, output: ShardOutput) {
        if let Some(reply) = output.reply {
            let _ = reply.send(Ok(output.outcome));
        }
    }
}

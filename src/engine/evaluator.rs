//! The single-threaded core of evaluation: one [`Evaluator`] owns the state of the users routed to
//! it and turns a validated transaction plus one engine [`Snapshot`] into a [`Decision`].
//!
//! Per event: detect a resubmitted reference (idempotency), aggregate the user's history as of the
//! transaction's time, look its parties up in the tenant's lists, screen names, run the rules,
//! combine the hits, then add the transaction to the user's state. Shards wrap an evaluator in an
//! OS thread; the fixture runner and `vigil replay` drive one directly.

use std::collections::HashMap;
use std::sync::Arc;

use rhai::Scope;
use uuid::Uuid;

use super::accounts::GraphFacts;
use super::rules::{RuleInput, RuleSet};
use super::state::{
    counterparty_hash, device_hash, reference_hash, seconds, Event, StateLimits, UserState,
};
use super::Snapshot;
use crate::model::decision::{format_time_ms, ActionBody};
use crate::model::{Decision, Transaction};

/// Namespace of the hash part of Vigil's transaction ids (the UUID v5 of tenant and reference).
const TRANSACTION_NAMESPACE: Uuid = Uuid::from_u128(0x6f0c_1d4e_9a2b_4c7d_8e5f_3a1b_2c9d_0e7f);

/// Vigil's id for a tenant's transaction: a UUID of version 8 whose first 48 bits are the
/// transaction's event time (`transactionDate`, Unix milliseconds) and whose other bits come from
/// the UUID v5 (SHA-1) of tenant and reference.
///
/// The same transaction (tenant, reference and event time) always maps to the same id, so a
/// replay of it is recognised everywhere; a reference resubmitted with another date is still the
/// same transaction to the store, which answers with the id it stored. Ids sort by event time, so
/// the store's unique index on them grows at its end, as the table does: a purely hashed id (v5)
/// put every insert on a random index page, which cost the group commit a page write (and a
/// checkpoint write) per transaction.
pub fn transaction_id(tenant: i64, reference: &str, event_time_ms: i64) -> String {
    let name = format!("{tenant}:{reference}");
    let mut bytes = *Uuid::new_v5(&TRANSACTION_NAMESPACE, name.as_bytes()).as_bytes();
    let millis = event_time_ms.clamp(0, (1 << 48) - 1) as u64;
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    Uuid::new_v8(bytes).to_string()
}

/// What evaluating one transaction produced.
#[derive(Debug, Clone)]
pub enum Outcome {
    Decided(Arc<Decision>),
    /// The reference was already evaluated for this tenant; state was not counted again.
    Duplicate {
        transaction_id: String,
    },
}

/// Per-rule counters resolved once per rule set (no label lookups per event).
pub trait RuleObserver: Send + Sync {
    fn observe(&self, rules: &RuleSet, evaluation: &super::rules::Evaluation);
}

pub struct Evaluator {
    users: HashMap<i64, HashMap<Box<str>, UserState>>,
    scope: Scope<'static>,
    scratch: Vec<u32>,
    recent: Vec<Event>,
    limits: StateLimits,
    clock: fn() -> i64,
    /// Check every evaluation against the Rhai interpreter (fixtures; see [`Self::checking_native`]).
    check_native: bool,
    native_checks: u64,
}

pub fn wall_clock_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The state of a tenant's user, created on first sight; the key is only allocated for a new user.
fn user_entry<'a>(
    users: &'a mut HashMap<i64, HashMap<Box<str>, UserState>>,
    tenant: i64,
    user: &str,
) -> &'a mut UserState {
    let users = users.entry(tenant).or_default();
    if !users.contains_key(user) {
        users.insert(Box::from(user), UserState::default());
    }
    match users.get_mut(user) {
        Some(state) => state,
        None => unreachable!("inserted above"),
    }
}

impl Evaluator {
    pub fn new(limits: StateLimits) -> Self {
        Evaluator {
            users: HashMap::new(),
            scope: Scope::new(),
            scratch: Vec::new(),
            recent: Vec::new(),
            limits,
            clock: wall_clock_ms,
            check_native: false,
            native_checks: 0,
        }
    }

    /// Also evaluates every transaction in the Rhai interpreter alone and records any
    /// disagreement with the native path as an error of the rule (the fixture runner uses this,
    /// so every pack is checked on its fixtures before it goes live).
    pub fn checking_native(mut self) -> Self {
        self.check_native = true;
        self
    }

    /// How many evaluations were checked against the interpreter.
    pub fn native_checks(&self) -> u64 {
        self.native_checks
    }

    /// Uses `clock` for `evaluatedAt` (fixtures and tests pin it).
    pub fn with_clock(mut self, clock: fn() -> i64) -> Self {
        self.clock = clock;
        self
    }

    fn user_mut(&mut self, tenant: i64, user: &str) -> &mut UserState {
        user_entry(&mut self.users, tenant, user)
    }

    pub fn user(&self, tenant: i64, user: &str) -> Option<&UserState> {
        self.users.get(&tenant).and_then(|users| users.get(user))
    }

    pub fn user_count(&self) -> usize {
        self.users.values().map(HashMap::len).sum()
    }

    /// Bytes held by user states and their map entries (approximate, for the memory benchmark).
    pub fn state_bytes(&self) -> usize {
        self.users
            .values()
            .flat_map(|users| users.iter())
            .map(|(key, state)| {
                state.memory_bytes() + key.len() + std::mem::size_of::<(Box<str>, UserState)>() + 8
            })
            .sum()
    }

    /// Adds a stored transaction to state without evaluating it (state rebuild at start).
    pub fn restore(&mut self, tenant: i64, tx: &Transaction) {
        let limits = self.limits;
        let state = self.user_mut(tenant, &tx.user_id);
        if state.has_reference(reference_hash(&tx.reference)) {
            return;
        }
        state.apply(tx, limits);
    }

    /// Seeds a user's long-term profile (see [`UserState::restore_profile`]).
    pub fn restore_profile(
        &mut self,
        tenant: i64,
        user: &str,
        first_ms: i64,
        last_ms: i64,
        count: u32,
    ) {
        self.user_mut(tenant, user)
            .restore_profile(first_ms, last_ms, count);
    }

    /// Remembers a registered device as known for the user.
    pub fn register_device(&mut self, tenant: i64, user: &str, device_id: &str) {
        self.user_mut(tenant, user)
            .remember_device(device_hash(device_id));
    }

    /// Evaluates `tx` against `snapshot` and records it in the user's state.
    pub fn evaluate(
        &mut self,
        snapshot: &Snapshot,
        tenant: i64,
        tx: Transaction,
        graph: Option<Box<GraphFacts>>,
        observer: Option<&dyn RuleObserver>,
    ) -> (Outcome, Transaction) {
        let id = transaction_id(tenant, &tx.reference, tx.event_time_ms);
        let reference = reference_hash(&tx.reference);
        let t = seconds(tx.event_time_ms);
        let limits = self.limits;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut recent = std::mem::take(&mut self.recent);
        let state = user_entry(&mut self.users, tenant, &tx.user_id);
        if state.has_reference(reference) {
            self.scratch = scratch;
            self.recent = recent;
            return (Outcome::Duplicate { transaction_id: id }, tx);
        }

        let counterparty = tx
            .counterparty_account()
            .map(counterparty_hash)
            .unwrap_or(0);
        let agg = state.aggregate(
            t,
            tx.amount,
            tx.direction,
            counterparty,
            tx.coordinates,
            &mut scratch,
        );
        recent.clear();
        recent.extend(state.recent_before(t).copied());
        let device_is_new = tx
            .device_id()
            .is_some_and(|device| !state.knows_device(device_hash(device)));
        let known_devices = state.known_device_count();
        let lists = snapshot.lists.tenant(tenant).facts(&tx);
        let screening = snapshot.screener.screen(tenant, &tx);

        let input = Arc::new(RuleInput {
            tx,
            agg,
            recent,
            device_is_new,
            known_devices,
            lists,
            screening: screening.facts,
            graph: graph.unwrap_or_default(),
        });
        let rules = &snapshot.rules;
        let mut evaluation = rules.evaluate(&input, &mut self.scope);
        if self.check_native {
            self.native_checks += 1;
            let disagreements = rules.disagreements(&evaluation, &input, &mut self.scope);
            evaluation.errors.extend(disagreements);
        }
        if let Some(observer) = observer {
            observer.observe(rules, &evaluation);
        }
        let mut verdict = rules.verdict(&evaluation);
        rules.attach_evidence(&evaluation, &mut verdict, &input.graph);
        let input = Arc::try_unwrap(input).unwrap_or_else(|shared| (*shared).clone());
        let tx = input.tx;
        self.recent = input.recent;
        self.scratch = scratch;

        let decision = Decision {
            transaction_id: id,
            reference: tx.reference.clone(),
            risk_score: verdict.risk_score(),
            action: ActionBody::from(verdict.action),
            rule_result: verdict.rule_result,
            reason: verdict.reason,
            screening: screening.outcome,
            rules: verdict.rules,
            screening_matches: screening.matches,
            rule_errors: verdict.rule_errors,
            ruleset_version: rules.fingerprint.clone(),
            transaction_date: format_time_ms(tx.event_time_ms),
            evaluated_at: format_time_ms((self.clock)()),
        };
        state.apply(&tx, limits);
        (Outcome::Decided(Arc::new(decision)), tx)
    }
}

/// Moving user state between instances (the Kafka changelog): a shard exports the users an
/// event changed and imports the state of a partition it is given.
impl Evaluator {
    /// The encoded state of a tenant's user, if the user is known.
    pub fn export_user(
        &self,
        tenant: i64,
        user: &str,
    ) -> Option<Result<Vec<u8>, super::state::StateCodecError>> {
        self.user(tenant, user).map(UserState::encode)
    }

    /// Replaces a user's state (`None` forgets the user).
    pub fn import_user(&mut self, tenant: i64, user: &str, state: Option<UserState>) {
        match state {
            Some(state) => *self.user_mut(tenant, user) = state,
            None => self.forget_user(tenant, user),
        }
    }

    pub fn forget_user(&mut self, tenant: i64, user: &str) {
        if let Some(users) = self.users.get_mut(&tenant) {
            users.remove(user);
            if users.is_empty() {
                self.users.remove(&tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_same_transaction_always_gets_the_same_id_and_other_transactions_other_ids() {
        let id = transaction_id(7, "TRX-1", 1_772_449_200_000);
        assert_eq!(id, transaction_id(7, "TRX-1", 1_772_449_200_000));
        assert_ne!(id, transaction_id(8, "TRX-1", 1_772_449_200_000));
        assert_ne!(id, transaction_id(7, "TRX-2", 1_772_449_200_000));
        assert_ne!(id, transaction_id(7, "TRX-1", 1_772_449_200_001));
    }

    #[test]
    fn ids_are_version_8_uuids_that_carry_the_event_time_in_their_first_48_bits() {
        let id = Uuid::parse_str(&transaction_id(7, "TRX-1", 1_772_449_200_000)).unwrap();
        assert_eq!(id.get_version_num(), 8);
        assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
        let mut millis = [0u8; 8];
        millis[2..].copy_from_slice(&id.as_bytes()[..6]);
        assert_eq!(u64::from_be_bytes(millis), 1_772_449_200_000);
    }

    #[test]
    fn event_times_outside_48_bits_of_milliseconds_are_clamped_not_wrapped() {
        let before_1970 = transaction_id(7, "TRX-1", -5);
        assert!(before_1970.starts_with("00000000-0000-8"), "{before_1970}");
        let far_future = transaction_id(7, "TRX-1", i64::MAX);
        assert!(far_future.starts_with("ffffffff-ffff-8"), "{far_future}");
    }

    proptest! {
        #[test]
        fn ids_sort_by_event_time_whatever_the_references(
            tenant_a in 0i64..1000,
            tenant_b in 0i64..1000,
            reference_a in "[ -~]{1,40}",
            reference_b in "[ -~]{1,40}",
            earlier in 0i64..4_000_000_000_000,
            gap in 1i64..1_000_000_000,
        ) {
            let first = transaction_id(tenant_a, &reference_a, earlier);
            let second = transaction_id(tenant_b, &reference_b, earlier + gap);
            prop_assert!(first < second, "{} !< {}", first, second);
        }
    }
}

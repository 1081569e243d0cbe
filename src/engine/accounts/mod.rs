//! Account-level state in both directions and the typology detectors that look across accounts.
//!
//! Every transaction is a payment from a sending account to a receiving account (the user's own
//! account and the counterparty's, whichever way the money went). [`AccountGraph::observe`]:
//! 1. reads both accounts' history as it stood before the payment ([`PartyFacts`]: counts, sums
//!    and distinct counterparties in and out over 24 h, 7 d and 30 d, first seen);
//! 2. records the payment as an out-edge of the sender and an in-edge of the receiver, and in
//!    both accounts' counterparty memory (first payment each way, how many, last seen);
//! 3. runs the detectors on the account state *after* the payment: fan-in and fan-out of
//!    first-time counterparties, money in-then-out, scatter-gather (one origin funding several
//!    accounts that all pay this one), layered flows (two senders both paying two receivers
//!    for the first time), and cycles (the payment closes a path of recent first-time payments
//!    back to its sender).
//!
//! The result, [`GraphFacts`], goes with the transaction to its user's shard, where the rules
//! read it (`sender.*`, `receiver.*`, `graph.*`) and decide; a hit of a rule that names a
//! detector carries that detector's [`Evidence`] (accounts, payments, amounts, times).
//!
//! Windows are in event time relative to the payment's own `transactionDate`: counts cover
//! `(t - w, t]` exactly (a payment dated after t is not counted), up to the per-account edge cap.
//! Memory is bounded: per account at most [`DetectorSettings::max_edges`] payments each way
//! within the window, and [`DetectorSettings::max_peers`] remembered counterparties (the least
//! recently seen is forgotten first). Accounts idle for longer than the peer memory
//! ([`PEER_MEMORY_DAYS`]) are dropped.

pub mod cycle;
pub mod stage;

use std::collections::VecDeque;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::engine::state::{seconds, DAY};
pub use crate::model::decision::Detector;
use crate::model::{Direction, Transaction};

/// How long an idle account's counterparty memory is kept (novelty is judged against it).
pub const PEER_MEMORY_DAYS: u32 = 400;
/// Detectors collect evidence only from this many members on (below, nothing can hit).
const EVIDENCE_FLOOR: u32 = 3;
/// Pass-through evidence is collected only for an out/in ratio inside this band.
const PASS_THROUGH_BAND: (f64, f64) = (0.5, 2.0);
/// At most this many payments are listed in one piece of evidence.
const EVIDENCE_LEGS: usize = 32;

/// The `[detectors]` section of `pack.toml`: windows and bounds of the account graph.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DetectorSettings {
    /// The detectors' window in days (fan, layering, cycles). Counts of 30 days need >= 30.
    pub window_days: u32,
    /// Longest cycle looked for, in payments (3..=10 is usual; 2 would be a mutual pair).
    pub max_cycle_length: usize,
    /// Edges one cycle search may expand before it gives up (bounds the cost of one payment).
    pub cycle_search_budget: usize,
    /// A cycle's largest payment may be at most this many times its smallest.
    pub cycle_max_amount_ratio: f64,
    /// Payments kept per account and direction within the window.
    pub max_edges: usize,
    /// Counterparties remembered per account.
    pub max_peers: usize,
    /// A payment counts as first-time for the cross-account detectors (scatter-gather, layered,
    /// cycles) only when its sender has been seen at least this many days: before that, every
    /// payment of an account is "new" and says nothing.
    pub novelty_history_days: u32,
    /// How late a payment may arrive, in hours: the structural detectors (fans, scatter-gather,
    /// layering, cycles) also use payments already received that are dated up to this much
    /// after the current one (a same-day payment processed out of order still closes a cycle).
    /// Counts (`sender.*`, `receiver.*` windows) never do.
    pub lateness_hours: u32,
    /// A chain passes only through accounts with at most this many payments (in and out) kept
    /// in the window: chains through busy accounts are what chance makes of their many
    /// counterparties.
    pub chain_max_payments: usize,
}

impl Default for DetectorSettings {
    fn default() -> Self {
        DetectorSettings {
            window_days: 30,
            max_cycle_length: 10,
            cycle_search_budget: 4_096,
            cycle_max_amount_ratio: 10.0,
            max_edges: 512,
            max_peers: 256,
            novelty_history_days: 0,
            lateness_hours: 24,
            chain_max_payments: 8,
        }
    }
}

impl DetectorSettings {
    /// What is wrong with the settings, if anything.
    pub fn problem(&self) -> Option<String> {
        if !(1..=90).contains(&self.window_days) {
            return Some("detectors.window_days must lie in 1..=90".into());
        }
        if !(3..=16).contains(&self.max_cycle_length) {
            return Some("detectors.max_cycle_length must lie in 3..=16".into());
        }
        if self.cycle_search_budget == 0 || self.max_edges < 8 || self.max_peers < 8 {
            return Some(
                "detectors.cycle_search_budget must be positive, max_edges and max_peers >= 8"
                    .into(),
            );
        }
        if self.lateness_hours > 24 * 7 {
            return Some("detectors.lateness_hours must lie in 0..=168".into());
        }
        if self.chain_max_payments < 2 {
            return Some(
                "detectors.chain_max_payments must be >= 2 (one payment in, one out)".into(),
            );
        }
        if self.cycle_max_amount_ratio.is_nan() || self.cycle_max_amount_ratio < 1.0 {
            return Some("detectors.cycle_max_amount_ratio must be >= 1".into());
        }
        None
    }

    fn window(&self) -> u32 {
        self.window_days * DAY
    }

    fn lateness(&self) -> u32 {
        self.lateness_hours * 3_600
    }
}

/// Window indices into [`PartyFacts`] arrays.
pub const W_24H: usize = 0;
pub const W_7D: usize = 1;
pub const W_30D: usize = 2;
const SPANS: [u32; 3] = [DAY, 7 * DAY, 30 * DAY];

/// One account's history as a rule sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PartyFacts {
    /// Whether the account is known at all (has an identifier in this payment).
    pub present: bool,
    // --- before this payment (like `agg`): history in (t - w, t] ---
    pub in_count: [u32; 3],
    pub in_sum: [f64; 3],
    pub out_count: [u32; 3],
    pub out_sum: [f64; 3],
    pub distinct_senders: [u32; 3],
    pub distinct_receivers: [u32; 3],
    /// Days since the account was first seen (-1: this payment is its first).
    pub days_since_first_seen: f64,
    // --- detectors, including this payment, over the detector window ---
    /// Counterparties that paid this account for the first time within the window and only once.
    pub fan_in: u32,
    /// Distinct UTC days those first payments arrived on.
    pub fan_in_days: u32,
    /// Counterparties this account paid for the first time within the window.
    pub fan_out: u32,
    pub fan_out_days: u32,
    /// Money out over money in within 7 days, this payment included (0: nothing came in).
    pub pass_through_7d: f64,
}

/// What the account graph knows about one transaction. It travels with the transaction: to its
/// shard in one process, and as a Kafka header from the detection stage to the input topic's
/// consumers (`sources::kafka::detect`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GraphFacts {
    pub sender: PartyFacts,
    pub receiver: PartyFacts,
    /// The sender never paid the receiver before (as far as the memory reaches).
    pub new_pair: bool,
    /// Payments in the cycle this payment closes (0: none).
    pub cycle_length: u32,
    /// Payments in the longest chain of first-time, one-off payments this payment is part of
    /// (money passed on from account to account, in any order within the window; 0: none).
    pub chain_length: u32,
    /// Accounts that paid the receiver once and were themselves funded by one common origin.
    pub scatter_gather: u32,
    /// Layered flow around this payment: senders and receivers of a block of first-time
    /// payments in which every sender paid at least two of the receivers.
    pub layered_senders: u32,
    pub layered_receivers: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

impl GraphFacts {
    /// The evidence a detector left for this transaction.
    pub fn evidence_of(&self, detector: Detector) -> Option<&Evidence> {
        self.evidence.iter().find(|e| e.detector == detector)
    }
}

/// One payment in a piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Leg {
    pub reference: Arc<str>,
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub amount: f64,
    /// Event time, seconds since the Unix epoch.
    pub at: i64,
}

/// What a detector saw: the account it is about, the accounts involved and the payments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    pub detector: Detector,
    /// The account the finding is about (the one an account-level case is opened on).
    pub account: Arc<str>,
    /// The other accounts involved (fan members, the cycle, the origin, the layers).
    pub accounts: Vec<Arc<str>>,
    pub legs: Vec<Leg>,
    /// Window the legs lie in, seconds since the Unix epoch.
    pub first_at: i64,
    pub last_at: i64,
}

#[derive(Debug, Clone)]
struct Edge {
    cp: u64,
    ts: u32,
    amount: f32,
    /// The first payment from sender to receiver (as far as memory reaches), by a sender with
    /// enough history for that to mean something.
    novel: bool,
    reference: Arc<str>,
}

/// A remembered counterparty: 24 bytes.
#[derive(Debug, Clone, Copy)]
struct Peer {
    cp: u64,
    /// First payment from this account to cp (0: never).
    first_out: u32,
    /// First payment from cp to this account (0: never).
    first_in: u32,
    sent: u16,
    received: u16,
    last: u32,
    /// Newest payment each way (0: none).
    last_out: u32,
    last_in: u32,
}

#[derive(Debug, Default)]
struct Node {
    id: Arc<str>,
    first_seen: u32,
    last_seen: u32,
    out_edges: VecDeque<Edge>,
    in_edges: VecDeque<Edge>,
    /// Sorted by `cp`.
    peers: Vec<Peer>,
}

impl Node {
    fn peer(&self, cp: u64) -> Option<&Peer> {
        self.peers
            .binary_search_by_key(&cp, |p| p.cp)
            .ok()
            .map(|i| &self.peers[i])
    }

    fn peer_mut(&mut self, cp: u64, max_peers: usize) -> &mut Peer {
        match self.peers.binary_search_by_key(&cp, |p| p.cp) {
            Ok(i) => &mut self.peers[i],
            Err(mut i) => {
                if self.peers.len() >= max_peers {
                    let stalest = (0..self.peers.len())
                        .min_by_key(|&j| self.peers[j].last)
                        .unwrap_or(0);
                    self.peers.remove(stalest);
                    if stalest < i {
                        i -= 1;
                    }
                }
                self.peers.insert(
                    i,
                    Peer {
                        cp,
                        first_out: 0,
                        first_in: 0,
                        sent: 0,
                        received: 0,
                        last: 0,
                        last_out: 0,
                        last_in: 0,
                    },
                );
                &mut self.peers[i]
            }
        }
    }

    fn prune(&mut self, horizon: u32) {
        while self.out_edges.front().is_some_and(|e| e.ts <= horizon) {
            self.out_edges.pop_front();
        }
        while self.in_edges.front().is_some_and(|e| e.ts <= horizon) {
            self.in_edges.pop_front();
        }
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Node>()
            + self.id.len()
            + (self.out_edges.capacity() + self.in_edges.capacity()) * std::mem::size_of::<Edge>()
            + self.peers.capacity() * std::mem::size_of::<Peer>()
    }

    /// Counterparties that paid this account for the first time in (from, to] and only once.
    fn one_off_senders(&self, from: u32, to: u32) -> impl Iterator<Item = &Peer> {
        self.peers
            .iter()
            .filter(move |p| one_off_sender(p, from, to))
    }

    /// Counterparties this account paid for the first time in (from, to].
    fn new_receivers(&self, from: u32, to: u32) -> impl Iterator<Item = &Peer> {
        self.peers.iter().filter(move |p| new_receiver(p, from, to))
    }
}

/// Whether `peer` paid the account for the first time in (from, to], and only once.
fn one_off_sender(peer: &Peer, from: u32, to: u32) -> bool {
    peer.received == 1 && peer.first_in > from && peer.first_in <= to
}

/// Whether the account paid `peer` for the first time in (from, to].
fn new_receiver(peer: &Peer, from: u32, to: u32) -> bool {
    peer.sent >= 1 && peer.first_out > from && peer.first_out <= to
}

/// A payment's amount as the graph keeps it: f32, with a valid amount beyond f32's range clamped,
/// never infinite (sums and ratios over it stay finite).
fn kept_amount(tx: &Transaction) -> f32 {
    (tx.amount as f32).min(f32::MAX)
}

/// Whether `node` paid `cp` exactly once (as far as memory reaches): a relationship that pays
/// again is an ordinary one.
fn one_off(node: &Node, cp: u64) -> bool {
    node.peer(cp).is_some_and(|p| p.sent == 1)
}

fn insert_sorted(edges: &mut VecDeque<Edge>, edge: Edge, cap: usize) {
    let at = edges.partition_point(|e| e.ts <= edge.ts);
    edges.insert(at, edge);
    while edges.len() > cap {
        edges.pop_front();
    }
}

/// The accounts of one payment: (sender, receiver).
pub fn payment_accounts(tx: &Transaction) -> Option<(&str, &str)> {
    let data = tx.data();
    let own = match tx.direction {
        Direction::Debit => data.sender_account.as_deref(),
        Direction::Credit => data.receiver_account.as_deref(),
    }
    .unwrap_or(tx.user_id.as_str());
    let other = tx.counterparty_account()?;
    let (sender, receiver) = match tx.direction {
        Direction::Debit => (own, other),
        Direction::Credit => (other, own),
    };
    (!sender.is_empty() && !receiver.is_empty() && sender != receiver).then_some((sender, receiver))
}

fn account_key(tenant: i64, account: &str) -> u64 {
    let mut key = [0u8; 96];
    if account.len() + 9 <= key.len() {
        key[..8].copy_from_slice(&tenant.to_le_bytes());
        key[9..9 + account.len()].copy_from_slice(account.as_bytes());
        return xxh3_64(&key[..9 + account.len()]);
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&tenant.to_le_bytes());
    hasher.update(&[0]);
    hasher.update(account.as_bytes());
    hasher.digest()
}

/// Counterparties whose distinct count needs a look at the kept payments, in and out: (cp, found).
type Scratch = (Vec<(u64, u32)>, Vec<(u64, u32)>);

/// The account graph of one partition: every account's recent payments both ways and its
/// counterparty memory. Owned by one thread; see the module documentation.
#[derive(Debug, Default)]
pub struct AccountGraph {
    nodes: FxHashMap<u64, Node>,
    /// Reused per payment (distinct counterparties).
    scratch: Scratch,
    newest: u32,
    observed: u64,
}

impl AccountGraph {
    pub fn account_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.values().map(Node::memory_bytes).sum::<usize>()
            + self.nodes.capacity() * (std::mem::size_of::<u64>() + 8)
    }

    /// Records a stored payment without detecting (state restore after a restart).
    pub fn restore(&mut self, tenant: i64, tx: &Transaction, settings: &DetectorSettings) {
        if let Some((sender, receiver)) = payment_accounts(tx) {
            let t = seconds(tx.event_time_ms);
            let (ks, kr) = (account_key(tenant, sender), account_key(tenant, receiver));
            self.record(ks, sender, kr, receiver, t, tx, settings);
        }
    }

    /// Facts about `tx` from both accounts' history and the detectors, then records it.
    pub fn observe(
        &mut self,
        tenant: i64,
        tx: &Transaction,
        settings: &DetectorSettings,
    ) -> GraphFacts {
        self.step(tenant, tx, settings, true)
    }

    /// Changes the graph exactly as [`AccountGraph::observe`] does, without working out the
    /// facts (the detectors only read the graph): a rebuild replays history this way.
    pub fn replay(&mut self, tenant: i64, tx: &Transaction, settings: &DetectorSettings) {
        self.step(tenant, tx, settings, false);
    }

    fn step(
        &mut self,
        tenant: i64,
        tx: &Transaction,
        settings: &DetectorSettings,
        with_facts: bool,
    ) -> GraphFacts {
        let Some((sender, receiver)) = payment_accounts(tx) else {
            return GraphFacts::default();
        };
        let t = seconds(tx.event_time_ms);
        let (ks, kr) = (account_key(tenant, sender), account_key(tenant, receiver));
        let resubmitted = self.nodes.get(&ks).is_some_and(|n| {
            n.out_edges
                .iter()
                .any(|e| e.cp == kr && *e.reference == *tx.reference)
        });
        if resubmitted {
            // The shard answers it as a duplicate; the graph must not count it twice.
            return GraphFacts::default();
        }
        let mut facts = GraphFacts::default();
        if with_facts {
            let mut scratch = std::mem::take(&mut self.scratch);
            facts.sender = self.history(ks, t, &mut scratch);
            facts.receiver = self.history(kr, t, &mut scratch);
            self.scratch = scratch;
            facts.new_pair = self
                .nodes
                .get(&ks)
                .and_then(|n| n.peer(kr))
                .is_none_or(|p| p.sent == 0);
        }
        self.record(ks, sender, kr, receiver, t, tx, settings);
        if with_facts {
            self.detect(ks, kr, t, tx, settings, &mut facts);
        }
        self.observed += 1;
        if self.observed % 65_536 == 0 {
            self.evict_idle();
        }
        facts
    }

    fn history(&self, key: u64, t: u32, scratch: &mut Scratch) -> PartyFacts {
        let mut facts = PartyFacts {
            present: true,
            days_since_first_seen: -1.0,
            ..PartyFacts::default()
        };
        let Some(node) = self.nodes.get(&key) else {
            return facts;
        };
        if node.first_seen <= t {
            facts.days_since_first_seen = f64::from(t - node.first_seen) / f64::from(DAY);
        }
        for (edges, count, sum) in [
            (&node.in_edges, &mut facts.in_count, &mut facts.in_sum),
            (&node.out_edges, &mut facts.out_count, &mut facts.out_sum),
        ] {
            for edge in edges.iter().take_while(|e| e.ts <= t) {
                let age = t - edge.ts;
                for (w, span) in SPANS.iter().enumerate() {
                    if age < *span {
                        count[w] += 1;
                        sum[w] += f64::from(edge.amount);
                    }
                }
            }
        }
        // Distinct counterparties by their newest payment each way dated at or before t: from
        // the counterparty memory (one pass for both ways), except for counterparties that also
        // have a payment dated after t (out of order), whose newest earlier payment is looked up
        // among the kept payments, newest first.
        let count = |cps: &mut [u32; 3], age: u32| {
            for (w, span) in SPANS.iter().enumerate() {
                if age < *span {
                    cps[w] += 1;
                }
            }
        };
        // Counterparties still to look up, sorted by cp as the memory is: (cp, found).
        let (later_in, later_out) = scratch;
        later_in.clear();
        later_out.clear();
        for peer in &node.peers {
            match peer.last_in {
                0 => {}
                last if last <= t => count(&mut facts.distinct_senders, t - last),
                _ => later_in.push((peer.cp, 0)),
            }
            match peer.last_out {
                0 => {}
                last if last <= t => count(&mut facts.distinct_receivers, t - last),
                _ => later_out.push((peer.cp, 0)),
            }
        }
        for (edges, cps, later) in [
            (&node.in_edges, &mut facts.distinct_senders, later_in),
            (&node.out_edges, &mut facts.distinct_receivers, later_out),
        ] {
            let mut open = later.len();
            if open == 0 {
                continue;
            }
            let before = edges.partition_point(|e| e.ts <= t);
            for edge in edges.range(..before).rev() {
                if let Ok(i) = later.binary_search_by_key(&edge.cp, |d| d.0) {
                    if later[i].1 == 0 {
                        later[i].1 = 1;
                        count(cps, t - edge.ts);
                        open -= 1;
                        if open == 0 {
                            break;
                        }
                    }
                }
            }
        }
        facts
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        ks: u64,
        sender: &str,
        kr: u64,
        receiver: &str,
        t: u32,
        tx: &Transaction,
        settings: &DetectorSettings,
    ) {
        self.newest = self.newest.max(t);
        let window = settings.window();
        let reference: Arc<str> = Arc::from(tx.reference.as_str());
        let amount = kept_amount(tx);
        let mut novel = false;
        for (key, id, outgoing) in [(ks, sender, true), (kr, receiver, false)] {
            let node = self.nodes.entry(key).or_insert_with(|| Node {
                id: Arc::from(id),
                first_seen: t,
                last_seen: t,
                ..Node::default()
            });
            node.first_seen = node.first_seen.min(t);
            node.last_seen = node.last_seen.max(t);
            node.prune(node.last_seen.saturating_sub(window));
            let cp = if outgoing { kr } else { ks };
            let known_for = t.saturating_sub(node.first_seen);
            let peer = node.peer_mut(cp, settings.max_peers);
            peer.last = peer.last.max(t);
            if outgoing {
                novel = peer.sent == 0 && known_for >= settings.novelty_history_days * DAY;
                if peer.sent == 0 || t < peer.first_out {
                    peer.first_out = t.max(1);
                }
                peer.sent = peer.sent.saturating_add(1);
                peer.last_out = peer.last_out.max(t);
            } else {
                if peer.received == 0 || t < peer.first_in {
                    peer.first_in = t.max(1);
                }
                peer.received = peer.received.saturating_add(1);
                peer.last_in = peer.last_in.max(t);
            }
            if t + window <= node.last_seen {
                continue; // older than the window: memory only
            }
            let edge = Edge {
                cp,
                ts: t,
                amount,
                novel,
                reference: reference.clone(),
            };
            let edges = if outgoing {
                &mut node.out_edges
            } else {
                &mut node.in_edges
            };
            insert_sorted(edges, edge, settings.max_edges);
        }
    }

    fn id(&self, key: u64) -> Arc<str> {
        self.nodes
            .get(&key)
            .map(|n| n.id.clone())
            .unwrap_or_else(|| Arc::from("?"))
    }

    fn detect(
        &self,
        ks: u64,
        kr: u64,
        t: u32,
        tx: &Transaction,
        settings: &DetectorSettings,
        facts: &mut GraphFacts,
    ) {
        let (Some(s), Some(r)) = (self.nodes.get(&ks), self.nodes.get(&kr)) else {
            return;
        };
        let from = t.saturating_sub(settings.window());
        // Structure counts payments already received up to `until` (allowed lateness).
        let until = t.saturating_add(settings.lateness());
        // Distinct days as a bitmask of days before `until` (the window is at most 90 days).
        let today = until / DAY;
        let day_bit = |first: u32| 1u128 << today.saturating_sub(first / DAY).min(127);
        // The payment being observed is already recorded; the party sums from `history` are not.
        let amount = f64::from(kept_amount(tx));

        // Fan-in at the receiver, fan-out at the sender; both fans of the sender for
        // gather-scatter: one pass over each party's counterparty memory.
        for (node, party, key) in [(r, &mut facts.receiver, kr), (s, &mut facts.sender, ks)] {
            let (mut fan_in, mut days_in, mut fan_out, mut days_out) = (0u32, 0u128, 0u32, 0u128);
            for peer in &node.peers {
                if one_off_sender(peer, from, until) {
                    fan_in += 1;
                    days_in |= day_bit(peer.first_in);
                }
                if new_receiver(peer, from, until) {
                    fan_out += 1;
                    days_out |= day_bit(peer.first_out);
                }
            }
            (party.fan_in, party.fan_in_days) = (fan_in, days_in.count_ones());
            (party.fan_out, party.fan_out_days) = (fan_out, days_out.count_ones());
            // Money in and out over the 7 days up to t (later-dated payments excluded): the
            // party's sums from before this payment, plus this payment.
            let money_in = party.in_sum[W_7D] + if key == kr { amount } else { 0.0 };
            let money_out = party.out_sum[W_7D] + if key == ks { amount } else { 0.0 };
            if money_in > 0.0 {
                party.pass_through_7d = money_out / money_in;
            }
        }
        if facts.receiver.fan_in >= EVIDENCE_FLOOR {
            let members: Vec<u64> = r.one_off_senders(from, until).map(|p| p.cp).collect();
            facts.evidence.push(self.fan_evidence(
                Detector::FanIn,
                kr,
                r,
                &members,
                true,
                from,
                until,
            ));
        }
        if facts.sender.fan_out >= EVIDENCE_FLOOR {
            let members: Vec<u64> = s.new_receivers(from, until).map(|p| p.cp).collect();
            facts.evidence.push(self.fan_evidence(
                Detector::FanOut,
                ks,
                s,
                &members,
                false,
                from,
                until,
            ));
        }
        if facts.sender.fan_in >= EVIDENCE_FLOOR && facts.sender.fan_out >= EVIDENCE_FLOOR {
            let ins: Vec<u64> = s.one_off_senders(from, until).map(|p| p.cp).collect();
            let outs: Vec<u64> = s.new_receivers(from, until).map(|p| p.cp).collect();
            let mut evidence =
                self.fan_evidence(Detector::GatherScatter, ks, s, &ins, true, from, until);
            let outgoing =
                self.fan_evidence(Detector::GatherScatter, ks, s, &outs, false, from, until);
            evidence.accounts.extend(outgoing.accounts);
            evidence.legs.extend(outgoing.legs);
            evidence.legs.truncate(EVIDENCE_LEGS);
            evidence.first_at = evidence.first_at.min(outgoing.first_at);
            evidence.last_at = evidence.last_at.max(outgoing.last_at);
            facts.evidence.push(evidence);
        }
        let ratio = facts.sender.pass_through_7d;
        if ratio >= PASS_THROUGH_BAND.0 && ratio <= PASS_THROUGH_BAND.1 {
            let recent = |e: &&Edge| e.ts <= t && t - e.ts < 7 * DAY;
            let legs: Vec<Leg> = s
                .in_edges
                .iter()
                .filter(recent)
                .take(EVIDENCE_LEGS) // in time order: evidence() keeps the earliest of both sides
                .map(|e| self.leg(e, (e.cp, ks)))
                .chain(
                    s.out_edges
                        .iter()
                        .filter(recent)
                        .take(EVIDENCE_LEGS)
                        .map(|e| self.leg(e, (ks, e.cp))),
                )
                .collect();
            facts
                .evidence
                .push(self.evidence(Detector::PassThrough, ks, Vec::new(), legs));
        }

        if !facts.new_pair {
            return;
        }
        self.scatter_gather(kr, r, from, until, facts);
        self.layered(ks, s, kr, r, from, until, facts);
        self.cycle(ks, kr, from, until, tx, settings, facts);
        self.chain(ks, kr, from, until, tx, settings, facts);
    }

    /// The payment being observed, as a leg of evidence.
    fn current_leg(&self, ks: u64, kr: u64, tx: &Transaction) -> Leg {
        Leg {
            reference: Arc::from(tx.reference.as_str()),
            from: self.id(ks),
            to: self.id(kr),
            amount: tx.amount,
            at: i64::from(seconds(tx.event_time_ms)),
        }
    }

    fn leg(&self, edge: &Edge, (from, to): (u64, u64)) -> Leg {
        Leg {
            reference: edge.reference.clone(),
            from: self.id(from),
            to: self.id(to),
            amount: f64::from(edge.amount),
            at: i64::from(edge.ts),
        }
    }

    fn evidence(
        &self,
        detector: Detector,
        account: u64,
        accounts: Vec<u64>,
        mut legs: Vec<Leg>,
    ) -> Evidence {
        legs.sort_by_key(|l| l.at);
        legs.truncate(EVIDENCE_LEGS);
        Evidence {
            detector,
            account: self.id(account),
            accounts: accounts.into_iter().map(|k| self.id(k)).collect(),
            first_at: legs.first().map_or(0, |l| l.at),
            last_at: legs.last().map_or(0, |l| l.at),
            legs,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fan_evidence(
        &self,
        detector: Detector,
        key: u64,
        node: &Node,
        // Sorted (as the counterparty memory they come from is).
        members: &[u64],
        incoming: bool,
        from: u32,
        until: u32,
    ) -> Evidence {
        let edges = if incoming {
            &node.in_edges
        } else {
            &node.out_edges
        };
        let legs = edges
            .iter()
            .filter(|e| e.ts > from && e.ts <= until && members.binary_search(&e.cp).is_ok())
            .take(EVIDENCE_LEGS) // edges are in time order: the earliest, as evidence() keeps
            .map(|e| self.leg(e, if incoming { (e.cp, key) } else { (key, e.cp) }))
            .collect();
        self.evidence(detector, key, members.to_vec(), legs)
    }

    /// Scatter-gather at the receiver: of the accounts that paid it once (first time, within
    /// the window), how many were funded, first time and within the window, by one common origin?
    fn scatter_gather(&self, kr: u64, r: &Node, from: u32, until: u32, facts: &mut GraphFacts) {
        let mut funders: FxHashMap<u64, Vec<(u64, &Edge)>> = FxHashMap::default();
        for peer in r.one_off_senders(from, until) {
            let Some(middle) = self.nodes.get(&peer.cp) else {
                continue;
            };
            for edge in middle.in_edges.iter() {
                let once = middle.peer(edge.cp).is_some_and(|p| p.received == 1);
                if edge.novel && once && edge.ts > from && edge.ts <= until && edge.cp != kr {
                    funders.entry(edge.cp).or_default().push((peer.cp, edge));
                }
            }
        }
        let Some((&origin, middles)) = funders.iter().max_by_key(|(k, v)| {
            (
                v.iter().map(|(m, _)| *m).collect::<FxHashSet<_>>().len(),
                **k,
            )
        }) else {
            return;
        };
        let distinct: FxHashSet<u64> = middles.iter().map(|(m, _)| *m).collect();
        facts.scatter_gather = distinct.len() as u32;
        if facts.scatter_gather < EVIDENCE_FLOOR {
            return;
        }
        let mut legs: Vec<Leg> = middles
            .iter()
            .map(|(m, e)| self.leg(e, (origin, *m)))
            .collect();
        for e in r.in_edges.iter() {
            if e.ts > from && e.ts <= until && distinct.contains(&e.cp) {
                legs.push(self.leg(e, (e.cp, kr)));
            }
        }
        let mut accounts = vec![origin];
        let mut sorted: Vec<u64> = distinct.into_iter().collect();
        sorted.sort_unstable();
        accounts.extend(sorted);
        facts
            .evidence
            .push(self.evidence(Detector::ScatterGather, kr, accounts, legs));
    }

    /// Layered flow around the first-time payment S -> R: other first-time senders of R that
    /// also paid, for the first time, one of the other accounts S paid for the first time.
    #[allow(clippy::too_many_arguments)]
    fn layered(
        &self,
        ks: u64,
        s: &Node,
        kr: u64,
        r: &Node,
        from: u32,
        until: u32,
        facts: &mut GraphFacts,
    ) {
        // A sorted list, not a hash set: built on every first-time payment, usually small.
        let mut mine: Vec<u64> = s
            .out_edges
            .iter()
            .filter(|e| e.novel && e.ts > from && e.ts <= until && e.cp != kr && one_off(s, e.cp))
            .map(|e| e.cp)
            .collect();
        mine.sort_unstable();
        mine.dedup();
        if mine.is_empty() {
            facts.layered_senders = 1;
            facts.layered_receivers = 1;
            return;
        }
        let mut senders = vec![ks];
        let mut receivers: FxHashSet<u64> = FxHashSet::default();
        let mut legs = Vec::new();
        let mut partners_seen: FxHashSet<u64> = FxHashSet::default();
        for edge in r.in_edges.iter() {
            let once = r.peer(edge.cp).is_some_and(|p| p.received == 1);
            if !edge.novel || !once || edge.ts <= from || edge.ts > until || edge.cp == ks {
                continue;
            }
            if !partners_seen.insert(edge.cp) {
                continue;
            }
            let Some(partner) = self.nodes.get(&edge.cp) else {
                continue;
            };
            let mut shared = false;
            for out in partner.out_edges.iter() {
                if out.novel
                    && out.ts > from
                    && out.ts <= until
                    && mine.binary_search(&out.cp).is_ok()
                    && one_off(partner, out.cp)
                {
                    shared = true;
                    receivers.insert(out.cp);
                    legs.push(self.leg(out, (edge.cp, out.cp)));
                }
            }
            if shared {
                senders.push(edge.cp);
                legs.push(self.leg(edge, (edge.cp, kr)));
            }
        }
        facts.layered_senders = senders.len() as u32;
        facts.layered_receivers = 1 + receivers.len() as u32;
        if senders.len() < 2 {
            return;
        }
        for out in s.out_edges.iter() {
            if out.novel
                && out.ts > from
                && out.ts <= until
                && (receivers.contains(&out.cp) || out.cp == kr)
            {
                legs.push(self.leg(out, (ks, out.cp)));
            }
        }
        let mut accounts = senders;
        let mut others: Vec<u64> = receivers.into_iter().collect();
        others.sort_unstable();
        accounts.push(kr);
        accounts.extend(others);
        facts
            .evidence
            .push(self.evidence(Detector::Layered, kr, accounts, legs));
    }

    /// Does S -> R close a cycle of first-time payments within the window?
    #[allow(clippy::too_many_arguments)]
    fn cycle(
        &self,
        ks: u64,
        kr: u64,
        from: u32,
        until: u32,
        tx: &Transaction,
        settings: &DetectorSettings,
        facts: &mut GraphFacts,
    ) {
        let found = cycle::shortest_path(
            kr,
            ks,
            settings.max_cycle_length - 1,
            settings.cycle_search_budget,
            |node, out| {
                if let Some(n) = self.nodes.get(&node) {
                    for e in n.out_edges.iter() {
                        // First-time payments that were not repeated since: a relationship
                        // that pays again is an ordinary one.
                        if e.novel
                            && e.ts > from
                            && e.ts <= until
                            && n.peer(e.cp).is_some_and(|p| p.sent == 1)
                        {
                            out.push((e.cp, e));
                        }
                    }
                }
            },
        );
        let cycle::Search::Found(path) = found else {
            return;
        };
        if path.len() + 1 < 3 {
            return;
        }
        let amount = tx.amount as f32;
        let (low, high) = path.iter().fold((amount, amount), |(lo, hi), s| {
            (lo.min(s.edge.amount), hi.max(s.edge.amount))
        });
        if low <= 0.0 || f64::from(high / low) > settings.cycle_max_amount_ratio {
            return;
        }
        facts.cycle_length = path.len() as u32 + 1;
        let mut legs: Vec<Leg> = path
            .iter()
            .map(|s| self.leg(s.edge, (s.from, s.to)))
            .collect();
        legs.push(self.current_leg(ks, kr, tx));
        let accounts: Vec<u64> = path.iter().map(|s| s.from).chain([ks]).collect();
        facts
            .evidence
            .push(self.evidence(Detector::Cycle, kr, accounts, legs));
    }

    /// The longest chain of first-time, one-off payments through S -> R: back from S along
    /// the payments that reached it, forward from R along the payments it made, each side at
    /// most `max_cycle_length - 1` payments and `cycle_search_budget` edges of work, through
    /// payments within `cycle_max_amount_ratio` of this one's amount.
    #[allow(clippy::too_many_arguments)]
    fn chain(
        &self,
        ks: u64,
        kr: u64,
        from: u32,
        until: u32,
        tx: &Transaction,
        settings: &DetectorSettings,
        facts: &mut GraphFacts,
    ) {
        // Payments of about this payment's size: the same money handed on.
        let amount = tx.amount as f32;
        let ratio = settings.cycle_max_amount_ratio as f32;
        let qualifies = |e: &Edge| {
            e.novel
                && e.ts > from
                && e.ts <= until
                && e.amount * ratio >= amount
                && e.amount <= amount * ratio
        };
        let side = settings.max_cycle_length - 1;
        let budget = settings.cycle_search_budget;
        let quiet = |n: &Node| n.in_edges.len() + n.out_edges.len() <= settings.chain_max_payments;
        let (back, _) = cycle::longest_path(ks, &[kr], side, budget, |node, out| {
            if let Some(n) = self.nodes.get(&node).filter(|n| quiet(n)) {
                for e in n.in_edges.iter() {
                    if qualifies(e) && n.peer(e.cp).is_some_and(|p| p.received == 1) {
                        out.push((e.cp, e));
                    }
                }
            }
        });
        let mut avoid: Vec<u64> = back.iter().map(|s| s.to).collect();
        avoid.push(ks);
        let (forth, _) = cycle::longest_path(kr, &avoid, side, budget, |node, out| {
            if let Some(n) = self.nodes.get(&node).filter(|n| quiet(n)) {
                for e in n.out_edges.iter() {
                    if qualifies(e) && n.peer(e.cp).is_some_and(|p| p.sent == 1) {
                        out.push((e.cp, e));
                    }
                }
            }
        });
        facts.chain_length = (back.len() + 1 + forth.len()) as u32;
        if facts.chain_length < EVIDENCE_FLOOR {
            return;
        }
        // Backward steps run S <- X1 <- X2 …: the money went X2 -> X1 -> S.
        let mut legs: Vec<Leg> = back
            .iter()
            .rev()
            .map(|s| self.leg(s.edge, (s.to, s.from)))
            .collect();
        legs.push(self.current_leg(ks, kr, tx));
        legs.extend(forth.iter().map(|s| self.leg(s.edge, (s.from, s.to))));
        let mut accounts: Vec<u64> = back.iter().rev().map(|s| s.to).collect();
        accounts.push(ks);
        accounts.push(kr);
        accounts.extend(forth.iter().map(|s| s.to));
        let origin = accounts[0];
        facts
            .evidence
            .push(self.evidence(Detector::Chain, origin, accounts, legs));
    }

    /// Drops accounts idle for longer than the counterparty memory.
    fn evict_idle(&mut self) {
        let horizon = self.newest.saturating_sub(PEER_MEMORY_DAYS * DAY);
        self.nodes.retain(|_, n| n.last_seen >= horizon);
    }
}

#[cfg(test)]
mod tests;

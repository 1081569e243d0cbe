//! Per-user state in event time, owned outright by one shard thread (no locks).
//!
//! Each user keeps:
//! - an exact, time-sorted ring of compact events (16 bytes each) covering the 24 hours before the
//!   newest event seen for the user (capped at [`StateLimits::max_recent_events`]);
//! - sparse daily buckets (count and sum per direction) for older events up to 31 days back;
//! - first-seen and last-active times, the last known location, and up to
//!   [`MAX_KNOWN_DEVICES`] device fingerprints.
//!
//! Windows are evaluated relative to the transaction's own `transactionDate` (t):
//! the 1 h and 24 h windows are exact over `(t - w, t]`; the 7 d and 30 d windows add the daily
//! buckets of every UTC day that overlaps the window (so the far edge may include up to one extra
//! day: conservative for monitoring). Out-of-order events are inserted at their time and count for
//! later evaluations like any other; an event older than the 24 h ring goes straight to its day
//! bucket; an event older than 31 days before the user's newest event only updates first-seen.
//! Events dated in the future are clamped to arrival time at validation (see
//! `model::transaction`).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::model::{Direction, Transaction};

pub const HOUR: u32 = 3_600;
pub const DAY: u32 = 86_400;
/// How many days of daily buckets a user keeps.
pub const BUCKET_DAYS: u32 = 31;
pub const MAX_KNOWN_DEVICES: usize = 16;

/// Bounds on one user's state.
#[derive(Debug, Clone, Copy)]
pub struct StateLimits {
    /// Beyond this many events in 24 h the oldest are folded into day buckets early.
    pub max_recent_events: usize,
}

impl Default for StateLimits {
    fn default() -> Self {
        StateLimits {
            max_recent_events: 512,
        }
    }
}

const CREDIT_BIT: u32 = 1 << 31;

/// One past transaction, compactly: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub amount: f64,
    /// Seconds since the Unix epoch (valid until 2106).
    pub ts: u32,
    /// Top bit: credit. Lower 31 bits: hash of the counterparty (0 = none).
    tag: u32,
}

impl Event {
    pub fn new(ts: u32, amount: f64, direction: Direction, counterparty: u32) -> Self {
        let mut tag = counterparty & !CREDIT_BIT;
        if direction == Direction::Credit {
            tag |= CREDIT_BIT;
        }
        Event { amount, ts, tag }
    }

    pub fn is_credit(&self) -> bool {
        self.tag & CREDIT_BIT != 0
    }

    pub fn counterparty(&self) -> u32 {
        self.tag & !CREDIT_BIT
    }
}

/// One UTC day of a user's older history: 24 bytes. Counts saturate at 65,535 a day (a user
/// beyond that is a system account and trips every velocity rule long before).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct DayBucket {
    debit_sum: f64,
    credit_sum: f64,
    /// Days since the Unix epoch (valid until 2149).
    day: u16,
    debit_count: u16,
    credit_count: u16,
}

impl DayBucket {
    fn add(&mut self, event: &Event) {
        if event.is_credit() {
            self.credit_count = self.credit_count.saturating_add(1);
            self.credit_sum += event.amount;
        } else {
            self.debit_count = self.debit_count.saturating_add(1);
            self.debit_sum += event.amount;
        }
    }

    fn day(&self) -> u32 {
        u32::from(self.day)
    }
}

/// Everything Vigil remembers about one user of one tenant.
///
/// Serialisable for the Kafka changelog ([`UserState::encode`]); field order is part of that
/// format, so a change here bumps [`STATE_FORMAT`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserState {
    recent: VecDeque<Event>,
    days: Vec<DayBucket>,
    /// Reference hashes of the events in `recent`, for idempotency (parallel to `recent`).
    references: VecDeque<u64>,
    first_seen: u32,
    last_active: u32,
    last_location: Option<(f32, f32, u32)>,
    devices: Vec<u64>,
    total_events: u32,
}

/// Version byte leading every encoded [`UserState`].
pub const STATE_FORMAT: u8 = 1;

/// Why an encoded user state could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum StateCodecError {
    #[error("empty state record")]
    Empty,
    #[error("unknown state format {0}")]
    Format(u8),
    #[error("state record does not decode: {0}")]
    Decode(#[from] postcard::Error),
}

impl UserState {
    /// The state as bytes: one format byte, then postcard (compact, varint-encoded).
    pub fn encode(&self) -> Result<Vec<u8>, StateCodecError> {
        Ok(postcard::to_extend(self, vec![STATE_FORMAT])?)
    }

    pub fn decode(bytes: &[u8]) -> Result<UserState, StateCodecError> {
        let (&format, body) = bytes.split_first().ok_or(StateCodecError::Empty)?;
        if format != STATE_FORMAT {
            return Err(StateCodecError::Format(format));
        }
        Ok(postcard::from_bytes(body)?)
    }
}

/// Window aggregates over a user's history *before* the transaction being evaluated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aggregates {
    pub debit_count: [u32; 4],
    pub debit_sum: [f64; 4],
    pub credit_count: [u32; 4],
    pub credit_sum: [f64; 4],
    pub distinct_counterparties_24h: u32,
    pub distinct_receivers_24h: u32,
    pub distinct_senders_24h: u32,
    /// Debits on the transaction's UTC calendar day before it.
    pub daily_debit_total: f64,
    /// Seconds since the previous transaction (-1: none).
    pub seconds_since_last: f64,
    /// Days between the user's last activity and this transaction (-1: none).
    pub days_since_last_active: f64,
    /// Days since the user was first seen (-1: never before).
    pub days_since_first_seen: f64,
    /// Distance to the previous located transaction in km (-1: unknown).
    pub distance_km: f64,
    /// Speed implied by that distance and the time between (-1: unknown).
    pub travel_speed_kmh: f64,
    /// Transactions seen for this user before this one (all time).
    pub history_count: u32,
    /// For a debit: the credit in the last 24 h whose amount is closest to this debit, as the
    /// ratio debit/credit (0: none) and its age in minutes (-1: none).
    pub closest_credit_ratio_24h: f64,
    pub closest_credit_age_minutes: f64,
    /// Whether the counterparty appears (in either direction) among the last 24 h of events.
    pub counterparty_seen_24h: bool,
}

/// Window indices into the aggregate arrays.
pub const W_1H: usize = 0;
pub const W_24H: usize = 1;
pub const W_7D: usize = 2;
pub const W_30D: usize = 3;
const WINDOW_SECONDS: [u32; 4] = [HOUR, DAY, 7 * DAY, 30 * DAY];

/// Hashes a counterparty identifier to the 31 bits kept per event (never 0 for a present value).
pub fn counterparty_hash(value: &str) -> u32 {
    let hash = (xxh3_64(value.as_bytes()) as u32) & !CREDIT_BIT;
    hash.max(1)
}

pub fn reference_hash(reference: &str) -> u64 {
    xxh3_64(reference.as_bytes())
}

pub fn device_hash(device_id: &str) -> u64 {
    xxh3_64(device_id.as_bytes())
}

pub fn seconds(ms: i64) -> u32 {
    (ms.max(0) / 1000).min(u32::MAX as i64) as u32
}

fn haversine_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lon1) = (a.0.to_radians(), a.1.to_radians());
    let (lat2, lon2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * 6_371.0 * h.sqrt().min(1.0).asin()
}

impl UserState {
    pub fn is_new(&self) -> bool {
        self.total_events == 0
    }

    pub fn knows_device(&self, hash: u64) -> bool {
        self.devices.contains(&hash)
    }

    pub fn known_device_count(&self) -> usize {
        self.devices.len()
    }

    /// Records a device as known for the user (device registration or a transaction).
    pub fn remember_device(&mut self, hash: u64) {
        if self.devices.contains(&hash) {
            return;
        }
        if self.devices.len() == MAX_KNOWN_DEVICES {
            self.devices.remove(0);
        }
        self.devices.push(hash);
    }

    /// Seeds the long-term profile (first seen, last active, count) from history older than the
    /// replayed window, so dormancy and account-history rules survive a restart.
    pub fn restore_profile(&mut self, first_ms: i64, last_ms: i64, count: u32) {
        let (first, last) = (seconds(first_ms), seconds(last_ms));
        if self.total_events == 0 || first < self.first_seen {
            self.first_seen = first;
        }
        self.last_active = self.last_active.max(last);
        self.total_events = self.total_events.saturating_add(count);
    }

    /// Whether a transaction with this reference is already in the 24 h ring.
    pub fn has_reference(&self, hash: u64) -> bool {
        self.references.contains(&hash)
    }

    /// The events of the ring, oldest first, at or before `t` (seconds).
    pub fn recent_before(&self, t: u32) -> impl Iterator<Item = &Event> {
        self.recent.iter().take_while(move |e| e.ts <= t)
    }

    /// Aggregates the history as seen at time `t` (seconds) for a transaction of `amount` in
    /// `direction` with `counterparty` (hash, 0 = none) at `location`.
    pub fn aggregate(
        &self,
        t: u32,
        amount: f64,
        direction: Direction,
        counterparty: u32,
        location: Option<(f64, f64)>,
        scratch: &mut Vec<u32>,
    ) -> Aggregates {
        let mut agg = Aggregates {
            seconds_since_last: -1.0,
            days_since_last_active: -1.0,
            days_since_first_seen: -1.0,
            distance_km: -1.0,
            travel_speed_kmh: -1.0,
            closest_credit_age_minutes: -1.0,
            history_count: self.total_events,
            ..Aggregates::default()
        };
        let today = t / DAY;
        scratch.clear();
        let mut receivers = 0u32;
        let mut senders = 0u32;
        let mut previous_ts: Option<u32> = None;
        let mut best_gap = f64::INFINITY;
        for event in self.recent_before(t) {
            let age = t - event.ts;
            previous_ts = Some(event.ts);
            for (w, span) in WINDOW_SECONDS.iter().enumerate() {
                if age < *span {
                    if event.is_credit() {
                        agg.credit_count[w] += 1;
                        agg.credit_sum[w] += event.amount;
                    } else {
                        agg.debit_count[w] += 1;
                        agg.debit_sum[w] += event.amount;
                    }
                }
            }
            if age < DAY {
                let cp = event.counterparty();
                if cp != 0 {
                    // Direction in the top bit keeps "paid X" and "paid by X" apart.
                    scratch.push(cp | (event.tag & CREDIT_BIT));
                    if cp == counterparty {
                        agg.counterparty_seen_24h = true;
                    }
                }
                if event.is_credit() && direction == Direction::Debit && event.amount > 0.0 {
                    let ratio = amount / event.amount;
                    let gap = (ratio - 1.0).abs();
                    if gap < best_gap {
                        best_gap = gap;
                        agg.closest_credit_ratio_24h = ratio;
                        agg.closest_credit_age_minutes = f64::from(age) / 60.0;
                    }
                }
            }
            if event.ts / DAY == today && !event.is_credit() {
                agg.daily_debit_total += event.amount;
            }
        }
        scratch.sort_unstable();
        scratch.dedup();
        for tagged in scratch.iter() {
            if tagged & CREDIT_BIT != 0 {
                senders += 1;
            } else {
                receivers += 1;
            }
        }
        scratch.iter_mut().for_each(|v| *v &= !CREDIT_BIT);
        scratch.sort_unstable();
        scratch.dedup();
        agg.distinct_counterparties_24h = scratch.len() as u32;
        agg.distinct_receivers_24h = receivers;
        agg.distinct_senders_24h = senders;

        for bucket in &self.days {
            let day_start = bucket.day() * DAY;
            if day_start > t {
                continue;
            }
            let day_end = day_start + DAY;
            for w in [W_7D, W_30D] {
                if day_end > t.saturating_sub(WINDOW_SECONDS[w]) {
                    agg.debit_count[w] += u32::from(bucket.debit_count);
                    agg.debit_sum[w] += bucket.debit_sum;
                    agg.credit_count[w] += u32::from(bucket.credit_count);
                    agg.credit_sum[w] += bucket.credit_sum;
                }
            }
            if bucket.day() == today {
                agg.daily_debit_total += bucket.debit_sum;
            }
        }

        if self.total_events > 0 {
            let last = previous_ts.unwrap_or(self.last_active.min(t));
            if last <= t {
                agg.seconds_since_last = f64::from(t - last);
            }
            let active = self.last_active.min(t);
            agg.days_since_last_active = f64::from(t - active) / f64::from(DAY);
            agg.days_since_first_seen =
                f64::from(t.saturating_sub(self.first_seen)) / f64::from(DAY);
        }
        if let (Some((lat, lon, at)), Some(here)) = (self.last_location, location) {
            if t >= at {
                let distance = haversine_km((f64::from(lat), f64::from(lon)), here);
                // A floor of one minute keeps near-simultaneous events from dividing by ~0.
                let hours = f64::from((t - at).max(60)) / 3_600.0;
                agg.distance_km = distance;
                agg.travel_speed_kmh = distance / hours;
            }
        }
        agg
    }

    /// Adds a transaction to the user's history.
    pub fn apply(&mut self, tx: &Transaction, limits: StateLimits) {
        let t = seconds(tx.event_time_ms);
        let counterparty = tx
            .counterparty_account()
            .map(counterparty_hash)
            .unwrap_or(0);
        let event = Event::new(t, tx.amount, tx.direction, counterparty);
        self.apply_event(event, reference_hash(&tx.reference), limits);
        if let Some((lat, lon)) = tx.coordinates {
            let newer = self.last_location.is_none_or(|(_, _, at)| t >= at);
            if newer {
                self.last_location = Some((lat as f32, lon as f32, t));
            }
        }
        if let Some(device) = tx.device_id() {
            self.remember_device(device_hash(device));
        }
    }

    fn apply_event(&mut self, event: Event, reference: u64, limits: StateLimits) {
        let t = event.ts;
        if self.total_events == 0 || t < self.first_seen {
            self.first_seen = t;
        }
        self.total_events = self.total_events.saturating_add(1);
        let newest = self.last_active.max(t);
        self.last_active = newest;
        let horizon = newest.saturating_sub(DAY);
        if t < horizon {
            self.add_to_bucket(&event, newest);
        } else {
            let at = self.recent.partition_point(|e| e.ts <= t);
            self.recent.insert(at, event);
            self.references.insert(at, reference);
        }
        while let Some(front) = self.recent.front().copied() {
            let over_cap = self.recent.len() > limits.max_recent_events;
            if front.ts >= horizon && !over_cap {
                break;
            }
            self.recent.pop_front();
            self.references.pop_front();
            self.add_to_bucket(&front, newest);
        }
        // Give back ring capacity a burst left behind (amortised: only when mostly empty).
        if self.recent.capacity() > 16 && self.recent.len() * 4 < self.recent.capacity() {
            self.recent.shrink_to(self.recent.len() * 2);
            self.references.shrink_to(self.references.len() * 2);
        }
        let oldest_day = (newest / DAY).saturating_sub(BUCKET_DAYS);
        self.days.retain(|b| b.day() >= oldest_day);
    }

    fn add_to_bucket(&mut self, event: &Event, newest: u32) {
        let day = event.ts / DAY;
        if day < (newest / DAY).saturating_sub(BUCKET_DAYS) {
            return;
        }
        let Ok(day16) = u16::try_from(day) else {
            return;
        };
        match self.days.binary_search_by_key(&day16, |b| b.day) {
            Ok(i) => self.days[i].add(event),
            Err(i) => {
                let mut bucket = DayBucket {
                    day: day16,
                    ..DayBucket::default()
                };
                bucket.add(event);
                // At most one new bucket a day per user: grow exactly instead of doubling.
                self.days.reserve_exact(1);
                self.days.insert(i, bucket);
            }
        }
    }

    /// Heap and inline bytes this state occupies (for the memory benchmark and metrics).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.recent.capacity() * std::mem::size_of::<Event>()
            + self.references.capacity() * std::mem::size_of::<u64>()
            + self.days.capacity() * std::mem::size_of::<DayBucket>()
            + self.devices.capacity() * std::mem::size_of::<u64>()
    }

    /// Releases spare capacity (used after bulk restores).
    pub fn shrink(&mut self) {
        self.recent.shrink_to_fit();
        self.references.shrink_to_fit();
        self.days.shrink_to_fit();
        self.devices.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T0: u32 = 1_700_000_000;
    const LIMITS: StateLimits = StateLimits {
        max_recent_events: 512,
    };

    fn add(state: &mut UserState, ts: u32, amount: f64, direction: Direction, cp: &str) {
        let event = Event::new(ts, amount, direction, counterparty_hash(cp));
        state.apply_event(event, u64::from(ts) ^ amount.to_bits(), LIMITS);
    }

    fn agg_at(state: &UserState, t: u32) -> Aggregates {
        state.aggregate(t, 100.0, Direction::Debit, 0, None, &mut Vec::new())
    }

    #[test]
    fn an_encoded_state_decodes_to_the_same_state() {
        let mut state = UserState::default();
        add(&mut state, 1_000_000, 25.5, Direction::Debit, "acct-1");
        add(&mut state, 1_000_100, 7.0, Direction::Credit, "acct-2");
        add(
            &mut state,
            1_000_000 - 3 * DAY,
            99.0,
            Direction::Debit,
            "acct-3",
        );
        state.remember_device(device_hash("phone"));
        state.last_location = Some((6.5, 3.4, 1_000_100));
        let bytes = state.encode().expect("encodes");
        assert_eq!(bytes[0], STATE_FORMAT);
        assert_eq!(UserState::decode(&bytes).expect("decodes"), state);
        assert!(matches!(
            UserState::decode(&[9, 1, 2]),
            Err(StateCodecError::Format(9))
        ));
        assert!(matches!(
            UserState::decode(&[]),
            Err(StateCodecError::Empty)
        ));
        assert!(UserState::decode(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn windows_count_only_what_lies_inside_them() {
        let mut state = UserState::default();
        add(&mut state, T0 - 30 * 60, 10.0, Direction::Debit, "a");
        add(&mut state, T0 - 2 * 3600, 20.0, Direction::Debit, "b");
        add(&mut state, T0 - 2 * 86_400, 40.0, Direction::Credit, "c");
        add(&mut state, T0 - 10 * 86_400, 80.0, Direction::Debit, "d");
        let agg = agg_at(&state, T0);
        assert_eq!(agg.debit_count[W_1H], 1);
        assert_eq!(agg.debit_sum[W_1H], 10.0);
        assert_eq!(agg.debit_count[W_24H], 2);
        assert_eq!(agg.debit_sum[W_24H], 30.0);
        assert_eq!(agg.credit_count[W_7D], 1);
        assert_eq!(agg.debit_count[W_7D], 2);
        assert_eq!(agg.debit_count[W_30D], 3);
        assert_eq!(agg.debit_sum[W_30D], 110.0);
        assert_eq!(agg.history_count, 4);
    }

    #[test]
    fn an_event_exactly_one_hour_old_is_outside_the_hour() {
        let mut state = UserState::default();
        add(&mut state, T0 - 3600, 10.0, Direction::Debit, "a");
        let agg = agg_at(&state, T0);
        assert_eq!(agg.debit_count[W_1H], 0);
        assert_eq!(agg.debit_count[W_24H], 1);
    }

    #[test]
    fn out_of_order_events_are_seen_by_later_evaluations_but_not_by_earlier_ones() {
        let mut state = UserState::default();
        add(&mut state, T0, 10.0, Direction::Debit, "a");
        add(&mut state, T0 - 600, 5.0, Direction::Debit, "b");
        assert_eq!(agg_at(&state, T0 + 1).debit_count[W_1H], 2);
        // Evaluated as of T0 - 300, the event at T0 lies in its future.
        assert_eq!(agg_at(&state, T0 - 300).debit_count[W_1H], 1);
    }

    #[test]
    fn distinct_counterparties_are_split_by_direction() {
        let mut state = UserState::default();
        for (i, cp) in ["x", "y", "x", "z"].iter().enumerate() {
            add(&mut state, T0 - 100 + i as u32, 1.0, Direction::Debit, cp);
        }
        add(&mut state, T0 - 50, 1.0, Direction::Credit, "x");
        let agg = agg_at(&state, T0);
        assert_eq!(agg.distinct_receivers_24h, 3);
        assert_eq!(agg.distinct_senders_24h, 1);
        assert_eq!(agg.distinct_counterparties_24h, 3);
    }

    #[test]
    fn the_daily_total_covers_the_utc_day_only() {
        let day_start = (T0 / DAY) * DAY;
        let mut state = UserState::default();
        add(&mut state, day_start - 10, 500.0, Direction::Debit, "a");
        add(&mut state, day_start + 10, 70.0, Direction::Debit, "a");
        add(&mut state, day_start + 20, 30.0, Direction::Credit, "a");
        let agg = agg_at(&state, day_start + 3600);
        assert_eq!(agg.daily_debit_total, 70.0);
    }

    #[test]
    fn the_closest_credit_is_found_for_pass_through() {
        let mut state = UserState::default();
        add(&mut state, T0 - 7200, 5_000.0, Direction::Credit, "a");
        add(&mut state, T0 - 600, 1_000.0, Direction::Credit, "b");
        let agg = state.aggregate(T0, 4_900.0, Direction::Debit, 0, None, &mut Vec::new());
        assert!((agg.closest_credit_ratio_24h - 0.98).abs() < 1e-9);
        assert_eq!(agg.closest_credit_age_minutes, 120.0);
    }

    #[test]
    fn travel_speed_uses_the_previous_location() {
        let state = UserState {
            last_location: Some((6.5244, 3.3792, T0 - 3600)), // Lagos
            total_events: 1,
            last_active: T0 - 3600,
            ..UserState::default()
        };
        let london = (51.5072, -0.1276);
        let agg = state.aggregate(T0, 1.0, Direction::Debit, 0, Some(london), &mut Vec::new());
        assert!(
            agg.distance_km > 4_900.0 && agg.distance_km < 5_100.0,
            "{}",
            agg.distance_km
        );
        assert!(agg.travel_speed_kmh > 4_900.0);
    }

    #[test]
    fn old_buckets_expire_and_the_ring_is_capped() {
        let limits = StateLimits {
            max_recent_events: 8,
        };
        let mut state = UserState::default();
        for i in 0..20u32 {
            state.apply_event(
                Event::new(T0 + i, 1.0, Direction::Debit, 1),
                u64::from(i),
                limits,
            );
        }
        assert_eq!(state.recent.len(), 8);
        let agg = agg_at(&state, T0 + 30);
        // Folded events still count in the day-granular windows.
        assert_eq!(agg.debit_count[W_30D], 20);
        state.apply_event(
            Event::new(T0 + 40 * DAY, 1.0, Direction::Debit, 1),
            99,
            limits,
        );
        assert!(state
            .days
            .iter()
            .all(|b| b.day() >= (T0 + 40 * DAY) / DAY - BUCKET_DAYS));
    }

    #[test]
    fn dormancy_is_measured_from_last_activity() {
        let mut state = UserState::default();
        add(&mut state, T0, 1.0, Direction::Debit, "a");
        let agg = agg_at(&state, T0 + 200 * DAY);
        assert_eq!(agg.days_since_last_active, 200.0);
        assert_eq!(agg.days_since_first_seen, 200.0);
    }

    proptest! {
        #[test]
        fn window_counts_match_a_brute_force_count(
            offsets in proptest::collection::vec((0u32..(3 * DAY), 1u32..1000, any::<bool>()), 1..60)
        ) {
            let mut state = UserState::default();
            let mut events = Vec::new();
            for (offset, amount, credit) in &offsets {
                let ts = T0 + offset;
                let direction = if *credit { Direction::Credit } else { Direction::Debit };
                add(&mut state, ts, f64::from(*amount), direction, "cp");
                events.push((ts, *credit));
            }
            let t = T0 + 3 * DAY;
            let agg = agg_at(&state, t);
            for (w, span) in [(W_1H, HOUR), (W_24H, DAY)] {
                let expected = events.iter().filter(|(ts, credit)| !credit && t - ts < span).count();
                prop_assert_eq!(agg.debit_count[w] as usize, expected);
            }
            let all_debits = events.iter().filter(|(_, credit)| !credit).count();
            prop_assert_eq!(agg.debit_count[W_30D] as usize, all_debits);
        }
    }
}

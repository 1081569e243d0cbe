//! What a rule sees: [`RuleInput`] (the transaction, the user's aggregates, lists, device and
//! screening facts), exposed to Rhai as read-only views with named properties.
//!
//! Each view (`tx`, `user`, `agg`, `limits`, `device`, `location`, `counterparty`, `lists`,
//! `screening`) wraps the same `Arc<RuleInput>`, so putting them in scope costs nine reference
//! count increments per event and no copying. Properties are plain getters resolved by Rhai's
//! function cache; strings are only materialised when a rule reads them. The property list is the
//! rule authors' reference and is documented in `rules/README.md`.

use std::sync::Arc;

use rhai::{Engine, ImmutableString, INT};

use crate::engine::state::{Aggregates, Event, W_1H, W_24H, W_30D, W_7D};
use crate::model::transaction::parse_datetime_ms;
use crate::model::{Direction, Transaction};

/// Blacklist membership of the transaction's parties, looked up once per event.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListFacts {
    pub user: bool,
    pub sender_account: bool,
    pub receiver_account: bool,
    pub device: bool,
    pub vas_receiver: bool,
}

/// Screening results of the transaction's parties ("clear", "potential match", "match").
#[derive(Debug, Clone)]
pub struct ScreeningFacts {
    pub sender_sanction: ImmutableString,
    pub sender_pep: ImmutableString,
    pub receiver_sanction: ImmutableString,
    pub receiver_pep: ImmutableString,
}

impl Default for ScreeningFacts {
    fn default() -> Self {
        let clear = ImmutableString::from("clear");
        ScreeningFacts {
            sender_sanction: clear.clone(),
            sender_pep: clear.clone(),
            receiver_sanction: clear.clone(),
            receiver_pep: clear,
        }
    }
}

/// Everything one evaluation needs, built once per event by the shard.
#[derive(Debug, Clone)]
pub struct RuleInput {
    pub tx: Transaction,
    pub agg: Aggregates,
    /// The user's events of the last 24 h before this transaction, oldest first.
    pub recent: Vec<Event>,
    pub device_is_new: bool,
    pub known_devices: usize,
    pub lists: ListFacts,
    pub screening: ScreeningFacts,
}

impl RuleInput {
    fn seconds(&self) -> i64 {
        self.tx.event_time_ms.div_euclid(1000)
    }
}

macro_rules! view {
    ($name:ident) => {
        #[derive(Clone)]
        pub struct $name(pub Arc<RuleInput>);
    };
}

view!(TxView);
view!(UserView);
view!(AggView);
view!(LimitsView);
view!(DeviceView);
view!(LocationView);
view!(CounterpartyView);
view!(ListsView);
view!(ScreeningView);

/// The scope variable names, in the order the shard pushes them.
pub const SCOPE_NAMES: [&str; 9] = [
    "tx",
    "user",
    "agg",
    "limits",
    "device",
    "location",
    "counterparty",
    "lists",
    "screening",
];

fn text(value: Option<&str>) -> ImmutableString {
    value.map(ImmutableString::from).unwrap_or_default()
}

fn flag(value: Option<bool>) -> bool {
    value.unwrap_or(false)
}

macro_rules! getters {
    ($engine:expr, $view:ty, { $($prop:literal => |$input:ident| $body:expr),* $(,)? }) => {
        $(
            $engine.register_get($prop, |view: &mut $view| {
                let $input: &RuleInput = &view.0;
                $body
            });
        )*
    };
}

/// Registers the view types and their properties on a rule engine.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<TxView>("Transaction");
    engine.register_type_with_name::<UserView>("User");
    engine.register_type_with_name::<AggView>("Aggregates");
    engine.register_type_with_name::<LimitsView>("Limits");
    engine.register_type_with_name::<DeviceView>("Device");
    engine.register_type_with_name::<LocationView>("Location");
    engine.register_type_with_name::<CounterpartyView>("Counterparty");
    engine.register_type_with_name::<ListsView>("Lists");
    engine.register_type_with_name::<ScreeningView>("Screening");

    getters!(engine, TxView, {
        "amount" => |i| i.tx.amount,
        "reference" => |i| ImmutableString::from(i.tx.reference.as_str()),
        "type" => |i| text(i.tx.data().kind.as_deref()),
        "is_debit" => |i| i.tx.direction == Direction::Debit,
        "is_credit" => |i| i.tx.direction == Direction::Credit,
        "channel" => |i| text(i.tx.data().channel.as_deref()),
        "currency" => |i| text(i.tx.data().currency.as_deref()),
        "narration" => |i| text(i.tx.data().narration.as_deref()),
        "sender_account" => |i| text(i.tx.data().sender_account.as_deref()),
        "receiver_account" => |i| text(i.tx.data().receiver_account.as_deref()),
        "vas_receiver" => |i| text(i.tx.data().vas_receiver.as_deref()),
        "has_balance" => |i| i.tx.data().balance_before.is_some(),
        "balance_before" => |i| i.tx.data().balance_before.unwrap_or(0.0),
        "is_external" => |i| flag(i.tx.data().is_external_payment),
        "is_cheque" => |i| flag(i.tx.data().is_cheque),
        "is_refund" => |i| flag(i.tx.data().refund),
        "is_internal_account" => |i| flag(i.tx.data().is_internal_account),
        "is_staff_account" => |i| flag(i.tx.data().is_staff_account),
        "is_dormant_account" => |i| flag(i.tx.data().is_dormant_account),
        "succeeded" => |i| i.tx.data().status.unwrap_or(true),
        "scheme" => |i| text(i.tx.data().transaction_scheme.as_deref()),
        "usd_amount" => |i| i.tx.data().usd_exchange_rate.map(|r| i.tx.amount * r).unwrap_or(-1.0),
        "hour" => |i| i.seconds().rem_euclid(86_400) / 3_600,
        "weekday" => |i| (i.seconds().div_euclid(86_400) + 3).rem_euclid(7), // 0 = Monday
        "timestamp" => |i| i.seconds(),
        "future_dated" => |i| i.tx.future_dated,
        "is_new_beneficiary" => |i| flag(i.tx.payload.beneficiary.as_ref().and_then(|b| b.is_new_beneficiary)),
        "is_registered_beneficiary" => |i| flag(i.tx.payload.beneficiary.as_ref().and_then(|b| b.is_registered_beneficiary)),
        "ip_address" => |i| text(i.tx.payload.ip_address.as_deref()),
        "card_pan" => |i| text(i.tx.payload.third_party_user_data.as_ref().and_then(|t| t.card_pan.as_deref())),
    });

    getters!(engine, UserView, {
        "id" => |i| ImmutableString::from(i.tx.user_id.as_str()),
        "account_type" => |i| text(i.tx.user().account_type.as_deref()),
        "business_category" => |i| text(i.tx.user().business_category.as_deref()),
        "country" => |i| text(i.tx.user().country.as_deref()),
        "state" => |i| text(i.tx.user().state.as_deref()),
        "city" => |i| text(i.tx.user().city.as_deref()),
        "occupation" => |i| text(i.tx.user().occupation.as_deref()),
        "age" => |i| i.tx.user().age.unwrap_or(-1.0),
        "is_banned" => |i| flag(i.tx.user().is_banned),
        "is_identity_verified" => |i| flag(i.tx.user().is_identity_verified),
        "is_phone_verified" => |i| flag(i.tx.user().is_phone_number_verified),
        "is_pep" => |i| flag(i.tx.user().pep_status),
        "account_age_days" => |i| match i.tx.date_joined_ms {
            Some(joined) => (i.tx.event_time_ms - joined) as f64 / 86_400_000.0,
            None => -1.0,
        },
        "dob_age_years" => |i| i.tx.user().dob.as_deref().and_then(parse_datetime_ms)
            .map(|dob| (i.tx.event_time_ms - dob) as f64 / (365.25 * 86_400_000.0)).unwrap_or(-1.0),
        "is_new" => |i| i.agg.history_count == 0,
    });

    getters!(engine, AggView, {
        "debit_count_1h" => |i| INT::from(i.agg.debit_count[W_1H]),
        "debit_count_24h" => |i| INT::from(i.agg.debit_count[W_24H]),
        "debit_count_7d" => |i| INT::from(i.agg.debit_count[W_7D]),
        "debit_count_30d" => |i| INT::from(i.agg.debit_count[W_30D]),
        "debit_sum_1h" => |i| i.agg.debit_sum[W_1H],
        "debit_sum_24h" => |i| i.agg.debit_sum[W_24H],
        "debit_sum_7d" => |i| i.agg.debit_sum[W_7D],
        "debit_sum_30d" => |i| i.agg.debit_sum[W_30D],
        "credit_count_1h" => |i| INT::from(i.agg.credit_count[W_1H]),
        "credit_count_24h" => |i| INT::from(i.agg.credit_count[W_24H]),
        "credit_count_7d" => |i| INT::from(i.agg.credit_count[W_7D]),
        "credit_count_30d" => |i| INT::from(i.agg.credit_count[W_30D]),
        "credit_sum_1h" => |i| i.agg.credit_sum[W_1H],
        "credit_sum_24h" => |i| i.agg.credit_sum[W_24H],
        "credit_sum_7d" => |i| i.agg.credit_sum[W_7D],
        "credit_sum_30d" => |i| i.agg.credit_sum[W_30D],
        "distinct_counterparties_24h" => |i| INT::from(i.agg.distinct_counterparties_24h),
        "distinct_receivers_24h" => |i| INT::from(i.agg.distinct_receivers_24h),
        "distinct_senders_24h" => |i| INT::from(i.agg.distinct_senders_24h),
        "daily_debit_total" => |i| i.agg.daily_debit_total,
        "seconds_since_last" => |i| i.agg.seconds_since_last,
        "days_since_last_active" => |i| i.agg.days_since_last_active,
        "days_since_first_seen" => |i| i.agg.days_since_first_seen,
        "distance_km" => |i| i.agg.distance_km,
        "travel_speed_kmh" => |i| i.agg.travel_speed_kmh,
        "history_count" => |i| INT::from(i.agg.history_count),
        "closest_credit_ratio_24h" => |i| i.agg.closest_credit_ratio_24h,
        "closest_credit_age_minutes" => |i| i.agg.closest_credit_age_minutes,
        "counterparty_seen_24h" => |i| i.agg.counterparty_seen_24h,
    });
    engine.register_fn(
        "count_debits_between",
        |view: &mut AggView, low: f64, high: f64, hours: INT| -> INT {
            count_recent(&view.0, hours, |e| {
                !e.is_credit() && e.amount >= low && e.amount < high
            })
        },
    );
    engine.register_fn(
        "count_debits_between",
        |view: &mut AggView, low: INT, high: INT, hours: INT| -> INT {
            let (low, high) = (low as f64, high as f64);
            count_recent(&view.0, hours, |e| {
                !e.is_credit() && e.amount >= low && e.amount < high
            })
        },
    );
    engine.register_fn(
        "debits_today",
        |view: &mut AggView, utc_offset_hours: INT| -> f64 {
            debits_today(&view.0, utc_offset_hours)
        },
    );
    engine.register_fn(
        "closest_credit_ratio_within",
        |view: &mut AggView, minutes: INT| -> f64 { closest_credit_ratio(&view.0, minutes) },
    );
    engine.register_fn(
        "count_debits_within",
        |view: &mut AggView, minutes: INT| -> INT {
            count_recent_seconds(&view.0, minutes.saturating_mul(60), |e| !e.is_credit())
        },
    );
    engine.register_fn(
        "count_credits_within",
        |view: &mut AggView, minutes: INT| -> INT {
            count_recent_seconds(&view.0, minutes.saturating_mul(60), |e| e.is_credit())
        },
    );
    engine.register_fn(
        "sum_debits_within",
        |view: &mut AggView, minutes: INT| -> f64 {
            sum_recent_seconds(&view.0, minutes.saturating_mul(60), |e| !e.is_credit())
        },
    );
    engine.register_fn(
        "sum_credits_within",
        |view: &mut AggView, minutes: INT| -> f64 {
            sum_recent_seconds(&view.0, minutes.saturating_mul(60), |e| e.is_credit())
        },
    );

    getters!(engine, LimitsView, {
        "has_daily" => |i| limit(i, |l| l.daily_limit).is_some(),
        "has_overdraft" => |i| limit(i, |l| l.overdraft_limit).is_some(),
        "has_individual" => |i| limit(i, |l| l.individual_transaction_limit).is_some(),
        "daily" => |i| limit(i, |l| l.daily_limit).unwrap_or(0.0),
        "overdraft" => |i| limit(i, |l| l.overdraft_limit).unwrap_or(0.0),
        "individual" => |i| limit(i, |l| l.individual_transaction_limit).unwrap_or(0.0),
    });

    getters!(engine, DeviceView, {
        "present" => |i| i.tx.device_id().is_some(),
        "id" => |i| text(i.tx.device_id()),
        "is_new" => |i| i.device_is_new,
        "is_known" => |i| i.tx.device_id().is_some() && !i.device_is_new,
        "known_count" => |i| i.known_devices as INT,
        "os_name" => |i| text(i.tx.payload.device.as_ref().and_then(|d| d.os_name.as_deref())),
        "manufacturer" => |i| text(i.tx.payload.device.as_ref().and_then(|d| d.manufacturer.as_deref())),
    });

    getters!(engine, LocationView, {
        "present" => |i| i.tx.coordinates.is_some(),
        "latitude" => |i| i.tx.coordinates.map(|c| c.0).unwrap_or(0.0),
        "longitude" => |i| i.tx.coordinates.map(|c| c.1).unwrap_or(0.0),
        "country" => |i| text(i.tx.payload.location.as_ref().and_then(|l| l.country.as_deref())),
    });

    getters!(engine, CounterpartyView, {
        "account" => |i| text(i.tx.counterparty_account()),
        "name" => |i| text(i.tx.payload.counterparty_data.as_ref().and_then(|c| c.name.as_deref())),
        "country" => |i| text(i.tx.payload.counterparty_data.as_ref().and_then(|c| c.country.as_deref())),
        "bank_country" => |i| text(i.tx.payload.counterparty_data.as_ref().and_then(|c| c.bank_country.as_deref())),
        "bank_code" => |i| text(i.tx.payload.counterparty_data.as_ref().and_then(|c| c.bank_code.as_deref())),
        "account_type" => |i| text(i.tx.payload.counterparty_data.as_ref().and_then(|c| c.account_type.as_deref())),
    });

    getters!(engine, ListsView, {
        "user" => |i| i.lists.user,
        "sender_account" => |i| i.lists.sender_account,
        "receiver_account" => |i| i.lists.receiver_account,
        "account" => |i| i.lists.sender_account || i.lists.receiver_account,
        "device" => |i| i.lists.device,
        "vas_receiver" => |i| i.lists.vas_receiver,
    });

    getters!(engine, ScreeningView, {
        "sender_sanction" => |i| i.screening.sender_sanction.clone(),
        "sender_pep" => |i| i.screening.sender_pep.clone(),
        "receiver_sanction" => |i| i.screening.receiver_sanction.clone(),
        "receiver_pep" => |i| i.screening.receiver_pep.clone(),
    });
}

fn limit(
    input: &RuleInput,
    pick: impl Fn(&crate::model::transaction::Limits) -> Option<f64>,
) -> Option<f64> {
    input.tx.payload.limits.as_ref().and_then(pick)
}

/// Debits earlier on the transaction's local calendar day (UTC offset in hours), from the 24 h ring.
fn debits_today(input: &RuleInput, utc_offset_hours: INT) -> f64 {
    let offset = utc_offset_hours.clamp(-14, 14) * 3_600;
    let local_day = |seconds: i64| (seconds + offset).div_euclid(86_400);
    let today = local_day(input.seconds());
    input
        .recent
        .iter()
        .filter(|e| !e.is_credit() && local_day(i64::from(e.ts)) == today)
        .map(|e| e.amount)
        .sum()
}

/// For a debit: this amount divided by the amount of the credit within `minutes` whose amount is
/// closest to it (0 when there is none, or for a credit).
fn closest_credit_ratio(input: &RuleInput, minutes: INT) -> f64 {
    if input.tx.direction != Direction::Debit {
        return 0.0;
    }
    let now = input.seconds();
    let span = minutes.saturating_mul(60);
    let amount = input.tx.amount;
    input
        .recent
        .iter()
        .filter(|e| e.is_credit() && e.amount > 0.0 && now - i64::from(e.ts) < span)
        .map(|e| amount / e.amount)
        .min_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()))
        .unwrap_or(0.0)
}

fn count_recent(input: &RuleInput, hours: INT, keep: impl Fn(&Event) -> bool) -> INT {
    count_recent_seconds(input, hours.saturating_mul(3_600), keep)
}

fn count_recent_seconds(input: &RuleInput, span: INT, keep: impl Fn(&Event) -> bool) -> INT {
    let now = input.seconds();
    input
        .recent
        .iter()
        .filter(|e| now - i64::from(e.ts) < span && keep(e))
        .count() as INT
}

fn sum_recent_seconds(input: &RuleInput, span: INT, keep: impl Fn(&Event) -> bool) -> f64 {
    let now = input.seconds();
    input
        .recent
        .iter()
        .filter(|e| now - i64::from(e.ts) < span && keep(e))
        .map(|e| e.amount)
        .sum()
}

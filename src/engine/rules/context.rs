//! What a rule sees: [`RuleInput`] (the transaction, the user's aggregates, lists, device and
//! screening facts), exposed to Rhai as read-only views with named properties.
//!
//! Each view (`tx`, `user`, `agg`, `limits`, `device`, `location`, `counterparty`, `lists`,
//! `screening`) wraps the same `Arc<RuleInput>`, so putting them in scope costs nine reference
//! count increments per event and no copying. Every property is one entry of a table of typed
//! getters ([`View::properties`]); Rhai's property getters and the native rule path
//! ([`super::native`]) both read through that table, so they see the same values. Strings are only
//! materialised for Rhai when a rule reads them. The property list is the rule authors' reference
//! and is documented in `rules/README.md`.

use std::collections::HashSet;
use std::sync::Arc;

use rhai::{Engine, ImmutableString, FLOAT, INT};

use crate::engine::accounts::{GraphFacts, W_24H as GW_24H, W_30D as GW_30D, W_7D as GW_7D};
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
    /// Both accounts' history and the detectors' findings (the account stage).
    pub graph: Box<GraphFacts>,
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
view!(SenderView);
view!(ReceiverView);
view!(GraphView);

/// The scope variable names, in the order the shard pushes them.
pub const SCOPE_NAMES: [&str; 12] = [
    "tx",
    "user",
    "agg",
    "limits",
    "device",
    "location",
    "counterparty",
    "lists",
    "screening",
    "sender",
    "receiver",
    "graph",
];

fn text(value: Option<&str>) -> &str {
    value.unwrap_or("")
}

fn flag(value: Option<bool>) -> bool {
    value.unwrap_or(false)
}

/// How one property of a view is read. The same table serves Rhai's property getters and the
/// native (compiled) rule path, so both read exactly the same value.
#[derive(Clone, Copy)]
pub enum Getter {
    Bool(fn(&RuleInput) -> bool),
    Int(fn(&RuleInput) -> INT),
    Float(fn(&RuleInput) -> FLOAT),
    Str(for<'a> fn(&'a RuleInput) -> &'a str),
    /// A string the input already holds as a Rhai string (no copy for the interpreter).
    Shared(for<'a> fn(&'a RuleInput) -> &'a ImmutableString),
}

/// The views a rule sees, by scope variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Tx,
    User,
    Agg,
    Limits,
    Device,
    Location,
    Counterparty,
    Lists,
    Screening,
    Sender,
    Receiver,
    Graph,
}

impl View {
    /// The view bound to a scope variable name.
    pub fn named(name: &str) -> Option<View> {
        Some(match name {
            "tx" => View::Tx,
            "user" => View::User,
            "agg" => View::Agg,
            "limits" => View::Limits,
            "device" => View::Device,
            "location" => View::Location,
            "counterparty" => View::Counterparty,
            "lists" => View::Lists,
            "screening" => View::Screening,
            "sender" => View::Sender,
            "receiver" => View::Receiver,
            "graph" => View::Graph,
            _ => return None,
        })
    }

    /// The view's properties.
    pub fn properties(self) -> &'static [(&'static str, Getter)] {
        match self {
            View::Tx => TX_PROPERTIES,
            View::User => USER_PROPERTIES,
            View::Agg => AGG_PROPERTIES,
            View::Limits => LIMITS_PROPERTIES,
            View::Device => DEVICE_PROPERTIES,
            View::Location => LOCATION_PROPERTIES,
            View::Counterparty => COUNTERPARTY_PROPERTIES,
            View::Lists => LISTS_PROPERTIES,
            View::Screening => SCREENING_PROPERTIES,
            View::Sender => SENDER_PROPERTIES,
            View::Receiver => RECEIVER_PROPERTIES,
            View::Graph => GRAPH_PROPERTIES,
        }
    }

    /// The getter of property `name`, if the view has one.
    pub fn property(self, name: &str) -> Option<Getter> {
        self.properties()
            .iter()
            .find(|(prop, _)| *prop == name)
            .map(|(_, getter)| *getter)
    }
}

static TX_PROPERTIES: &[(&str, Getter)] = &[
    ("amount", Getter::Float(|i| i.tx.amount)),
    ("reference", Getter::Str(|i| i.tx.reference.as_str())),
    ("type", Getter::Str(|i| text(i.tx.data().kind.as_deref()))),
    (
        "is_debit",
        Getter::Bool(|i| i.tx.direction == Direction::Debit),
    ),
    (
        "is_credit",
        Getter::Bool(|i| i.tx.direction == Direction::Credit),
    ),
    (
        "channel",
        Getter::Str(|i| text(i.tx.data().channel.as_deref())),
    ),
    (
        "currency",
        Getter::Str(|i| text(i.tx.data().currency.as_deref())),
    ),
    (
        "narration",
        Getter::Str(|i| text(i.tx.data().narration.as_deref())),
    ),
    (
        "sender_account",
        Getter::Str(|i| text(i.tx.data().sender_account.as_deref())),
    ),
    (
        "receiver_account",
        Getter::Str(|i| text(i.tx.data().receiver_account.as_deref())),
    ),
    (
        "vas_receiver",
        Getter::Str(|i| text(i.tx.data().vas_receiver.as_deref())),
    ),
    (
        "has_balance",
        Getter::Bool(|i| i.tx.data().balance_before.is_some()),
    ),
    (
        "balance_before",
        Getter::Float(|i| i.tx.data().balance_before.unwrap_or(0.0)),
    ),
    (
        "is_external",
        Getter::Bool(|i| flag(i.tx.data().is_external_payment)),
    ),
    ("is_cheque", Getter::Bool(|i| flag(i.tx.data().is_cheque))),
    ("is_refund", Getter::Bool(|i| flag(i.tx.data().refund))),
    (
        "is_internal_account",
        Getter::Bool(|i| flag(i.tx.data().is_internal_account)),
    ),
    (
        "is_staff_account",
        Getter::Bool(|i| flag(i.tx.data().is_staff_account)),
    ),
    (
        "is_dormant_account",
        Getter::Bool(|i| flag(i.tx.data().is_dormant_account)),
    ),
    (
        "succeeded",
        Getter::Bool(|i| i.tx.data().status.unwrap_or(true)),
    ),
    (
        "scheme",
        Getter::Str(|i| text(i.tx.data().transaction_scheme.as_deref())),
    ),
    (
        "usd_amount",
        Getter::Float(|i| {
            i.tx.data()
                .usd_exchange_rate
                .map(|r| i.tx.amount * r)
                .unwrap_or(-1.0)
        }),
    ),
    (
        "hour",
        Getter::Int(|i| i.seconds().rem_euclid(86_400) / 3_600),
    ),
    // 0 = Monday
    (
        "weekday",
        Getter::Int(|i| (i.seconds().div_euclid(86_400) + 3).rem_euclid(7)),
    ),
    ("timestamp", Getter::Int(|i| i.seconds())),
    ("future_dated", Getter::Bool(|i| i.tx.future_dated)),
    (
        "is_new_beneficiary",
        Getter::Bool(|i| {
            flag(
                i.tx.payload
                    .beneficiary
                    .as_ref()
                    .and_then(|b| b.is_new_beneficiary),
            )
        }),
    ),
    (
        "is_registered_beneficiary",
        Getter::Bool(|i| {
            flag(
                i.tx.payload
                    .beneficiary
                    .as_ref()
                    .and_then(|b| b.is_registered_beneficiary),
            )
        }),
    ),
    (
        "ip_address",
        Getter::Str(|i| text(i.tx.payload.ip_address.as_deref())),
    ),
    (
        "card_pan",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .third_party_user_data
                    .as_ref()
                    .and_then(|t| t.card_pan.as_deref()),
            )
        }),
    ),
];

static USER_PROPERTIES: &[(&str, Getter)] = &[
    ("id", Getter::Str(|i| i.tx.user_id.as_str())),
    (
        "account_type",
        Getter::Str(|i| text(i.tx.user().account_type.as_deref())),
    ),
    (
        "business_category",
        Getter::Str(|i| text(i.tx.user().business_category.as_deref())),
    ),
    (
        "country",
        Getter::Str(|i| text(i.tx.user().country.as_deref())),
    ),
    ("state", Getter::Str(|i| text(i.tx.user().state.as_deref()))),
    ("city", Getter::Str(|i| text(i.tx.user().city.as_deref()))),
    (
        "occupation",
        Getter::Str(|i| text(i.tx.user().occupation.as_deref())),
    ),
    ("age", Getter::Float(|i| i.tx.user().age.unwrap_or(-1.0))),
    ("is_banned", Getter::Bool(|i| flag(i.tx.user().is_banned))),
    (
        "is_identity_verified",
        Getter::Bool(|i| flag(i.tx.user().is_identity_verified)),
    ),
    (
        "is_phone_verified",
        Getter::Bool(|i| flag(i.tx.user().is_phone_number_verified)),
    ),
    ("is_pep", Getter::Bool(|i| flag(i.tx.user().pep_status))),
    (
        "account_age_days",
        Getter::Float(|i| match i.tx.date_joined_ms {
            Some(joined) => (i.tx.event_time_ms - joined) as f64 / 86_400_000.0,
            None => -1.0,
        }),
    ),
    (
        "dob_age_years",
        Getter::Float(|i| {
            i.tx.user()
                .dob
                .as_deref()
                .and_then(parse_datetime_ms)
                .map(|dob| (i.tx.event_time_ms - dob) as f64 / (365.25 * 86_400_000.0))
                .unwrap_or(-1.0)
        }),
    ),
    ("is_new", Getter::Bool(|i| i.agg.history_count == 0)),
];

static AGG_PROPERTIES: &[(&str, Getter)] = &[
    (
        "debit_count_1h",
        Getter::Int(|i| INT::from(i.agg.debit_count[W_1H])),
    ),
    (
        "debit_count_24h",
        Getter::Int(|i| INT::from(i.agg.debit_count[W_24H])),
    ),
    (
        "debit_count_7d",
        Getter::Int(|i| INT::from(i.agg.debit_count[W_7D])),
    ),
    (
        "debit_count_30d",
        Getter::Int(|i| INT::from(i.agg.debit_count[W_30D])),
    ),
    ("debit_sum_1h", Getter::Float(|i| i.agg.debit_sum[W_1H])),
    ("debit_sum_24h", Getter::Float(|i| i.agg.debit_sum[W_24H])),
    ("debit_sum_7d", Getter::Float(|i| i.agg.debit_sum[W_7D])),
    ("debit_sum_30d", Getter::Float(|i| i.agg.debit_sum[W_30D])),
    (
        "credit_count_1h",
        Getter::Int(|i| INT::from(i.agg.credit_count[W_1H])),
    ),
    (
        "credit_count_24h",
        Getter::Int(|i| INT::from(i.agg.credit_count[W_24H])),
    ),
    (
        "credit_count_7d",
        Getter::Int(|i| INT::from(i.agg.credit_count[W_7D])),
    ),
    (
        "credit_count_30d",
        Getter::Int(|i| INT::from(i.agg.credit_count[W_30D])),
    ),
    ("credit_sum_1h", Getter::Float(|i| i.agg.credit_sum[W_1H])),
    ("credit_sum_24h", Getter::Float(|i| i.agg.credit_sum[W_24H])),
    ("credit_sum_7d", Getter::Float(|i| i.agg.credit_sum[W_7D])),
    ("credit_sum_30d", Getter::Float(|i| i.agg.credit_sum[W_30D])),
    (
        "distinct_counterparties_24h",
        Getter::Int(|i| INT::from(i.agg.distinct_counterparties_24h)),
    ),
    (
        "distinct_receivers_24h",
        Getter::Int(|i| INT::from(i.agg.distinct_receivers_24h)),
    ),
    (
        "distinct_senders_24h",
        Getter::Int(|i| INT::from(i.agg.distinct_senders_24h)),
    ),
    (
        "daily_debit_total",
        Getter::Float(|i| i.agg.daily_debit_total),
    ),
    (
        "seconds_since_last",
        Getter::Float(|i| i.agg.seconds_since_last),
    ),
    (
        "days_since_last_active",
        Getter::Float(|i| i.agg.days_since_last_active),
    ),
    (
        "days_since_first_seen",
        Getter::Float(|i| i.agg.days_since_first_seen),
    ),
    ("distance_km", Getter::Float(|i| i.agg.distance_km)),
    (
        "travel_speed_kmh",
        Getter::Float(|i| i.agg.travel_speed_kmh),
    ),
    (
        "history_count",
        Getter::Int(|i| INT::from(i.agg.history_count)),
    ),
    (
        "closest_credit_ratio_24h",
        Getter::Float(|i| i.agg.closest_credit_ratio_24h),
    ),
    (
        "closest_credit_age_minutes",
        Getter::Float(|i| i.agg.closest_credit_age_minutes),
    ),
    (
        "counterparty_seen_24h",
        Getter::Bool(|i| i.agg.counterparty_seen_24h),
    ),
];

static LIMITS_PROPERTIES: &[(&str, Getter)] = &[
    (
        "has_daily",
        Getter::Bool(|i| limit(i, |l| l.daily_limit).is_some()),
    ),
    (
        "has_overdraft",
        Getter::Bool(|i| limit(i, |l| l.overdraft_limit).is_some()),
    ),
    (
        "has_individual",
        Getter::Bool(|i| limit(i, |l| l.individual_transaction_limit).is_some()),
    ),
    (
        "daily",
        Getter::Float(|i| limit(i, |l| l.daily_limit).unwrap_or(0.0)),
    ),
    (
        "overdraft",
        Getter::Float(|i| limit(i, |l| l.overdraft_limit).unwrap_or(0.0)),
    ),
    (
        "individual",
        Getter::Float(|i| limit(i, |l| l.individual_transaction_limit).unwrap_or(0.0)),
    ),
];

static DEVICE_PROPERTIES: &[(&str, Getter)] = &[
    ("present", Getter::Bool(|i| i.tx.device_id().is_some())),
    ("id", Getter::Str(|i| text(i.tx.device_id()))),
    ("is_new", Getter::Bool(|i| i.device_is_new)),
    (
        "is_known",
        Getter::Bool(|i| i.tx.device_id().is_some() && !i.device_is_new),
    ),
    ("known_count", Getter::Int(|i| i.known_devices as INT)),
    (
        "os_name",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .device
                    .as_ref()
                    .and_then(|d| d.os_name.as_deref()),
            )
        }),
    ),
    (
        "manufacturer",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .device
                    .as_ref()
                    .and_then(|d| d.manufacturer.as_deref()),
            )
        }),
    ),
];

static LOCATION_PROPERTIES: &[(&str, Getter)] = &[
    ("present", Getter::Bool(|i| i.tx.coordinates.is_some())),
    (
        "latitude",
        Getter::Float(|i| i.tx.coordinates.map(|c| c.0).unwrap_or(0.0)),
    ),
    (
        "longitude",
        Getter::Float(|i| i.tx.coordinates.map(|c| c.1).unwrap_or(0.0)),
    ),
    (
        "country",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .location
                    .as_ref()
                    .and_then(|l| l.country.as_deref()),
            )
        }),
    ),
];

static COUNTERPARTY_PROPERTIES: &[(&str, Getter)] = &[
    (
        "account",
        Getter::Str(|i| text(i.tx.counterparty_account())),
    ),
    (
        "name",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.name.as_deref()),
            )
        }),
    ),
    (
        "country",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.country.as_deref()),
            )
        }),
    ),
    (
        "bank_country",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.bank_country.as_deref()),
            )
        }),
    ),
    (
        "bank_code",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.bank_code.as_deref()),
            )
        }),
    ),
    (
        "account_type",
        Getter::Str(|i| {
            text(
                i.tx.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.account_type.as_deref()),
            )
        }),
    ),
];

static LISTS_PROPERTIES: &[(&str, Getter)] = &[
    ("user", Getter::Bool(|i| i.lists.user)),
    ("sender_account", Getter::Bool(|i| i.lists.sender_account)),
    (
        "receiver_account",
        Getter::Bool(|i| i.lists.receiver_account),
    ),
    (
        "account",
        Getter::Bool(|i| i.lists.sender_account || i.lists.receiver_account),
    ),
    ("device", Getter::Bool(|i| i.lists.device)),
    ("vas_receiver", Getter::Bool(|i| i.lists.vas_receiver)),
];

static SCREENING_PROPERTIES: &[(&str, Getter)] = &[
    (
        "sender_sanction",
        Getter::Shared(|i| &i.screening.sender_sanction),
    ),
    ("sender_pep", Getter::Shared(|i| &i.screening.sender_pep)),
    (
        "receiver_sanction",
        Getter::Shared(|i| &i.screening.receiver_sanction),
    ),
    (
        "receiver_pep",
        Getter::Shared(|i| &i.screening.receiver_pep),
    ),
];

/// The properties of one account of the payment (`sender` or `receiver`), from the account stage.
macro_rules! party_properties {
    ($name:ident, $party:ident) => {
        static $name: &[(&str, Getter)] = &[
            (
                "is_known",
                Getter::Bool(|i| i.graph.$party.days_since_first_seen >= 0.0),
            ),
            (
                "days_since_first_seen",
                Getter::Float(|i| i.graph.$party.days_since_first_seen),
            ),
            (
                "in_count_24h",
                Getter::Int(|i| INT::from(i.graph.$party.in_count[GW_24H])),
            ),
            (
                "in_count_7d",
                Getter::Int(|i| INT::from(i.graph.$party.in_count[GW_7D])),
            ),
            (
                "in_count_30d",
                Getter::Int(|i| INT::from(i.graph.$party.in_count[GW_30D])),
            ),
            (
                "in_sum_24h",
                Getter::Float(|i| i.graph.$party.in_sum[GW_24H]),
            ),
            ("in_sum_7d", Getter::Float(|i| i.graph.$party.in_sum[GW_7D])),
            (
                "in_sum_30d",
                Getter::Float(|i| i.graph.$party.in_sum[GW_30D]),
            ),
            (
                "out_count_24h",
                Getter::Int(|i| INT::from(i.graph.$party.out_count[GW_24H])),
            ),
            (
                "out_count_7d",
                Getter::Int(|i| INT::from(i.graph.$party.out_count[GW_7D])),
            ),
            (
                "out_count_30d",
                Getter::Int(|i| INT::from(i.graph.$party.out_count[GW_30D])),
            ),
            (
                "out_sum_24h",
                Getter::Float(|i| i.graph.$party.out_sum[GW_24H]),
            ),
            (
                "out_sum_7d",
                Getter::Float(|i| i.graph.$party.out_sum[GW_7D]),
            ),
            (
                "out_sum_30d",
                Getter::Float(|i| i.graph.$party.out_sum[GW_30D]),
            ),
            (
                "distinct_senders_24h",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_senders[GW_24H])),
            ),
            (
                "distinct_senders_7d",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_senders[GW_7D])),
            ),
            (
                "distinct_senders_30d",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_senders[GW_30D])),
            ),
            (
                "distinct_receivers_24h",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_receivers[GW_24H])),
            ),
            (
                "distinct_receivers_7d",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_receivers[GW_7D])),
            ),
            (
                "distinct_receivers_30d",
                Getter::Int(|i| INT::from(i.graph.$party.distinct_receivers[GW_30D])),
            ),
            (
                "fan_in_30d",
                Getter::Int(|i| INT::from(i.graph.$party.fan_in)),
            ),
            (
                "fan_in_days",
                Getter::Int(|i| INT::from(i.graph.$party.fan_in_days)),
            ),
            (
                "fan_out_30d",
                Getter::Int(|i| INT::from(i.graph.$party.fan_out)),
            ),
            (
                "fan_out_days",
                Getter::Int(|i| INT::from(i.graph.$party.fan_out_days)),
            ),
            (
                "pass_through_7d",
                Getter::Float(|i| i.graph.$party.pass_through_7d),
            ),
        ];
    };
}

party_properties!(SENDER_PROPERTIES, sender);
party_properties!(RECEIVER_PROPERTIES, receiver);

static GRAPH_PROPERTIES: &[(&str, Getter)] = &[
    ("new_pair", Getter::Bool(|i| i.graph.new_pair)),
    ("cycle", Getter::Bool(|i| i.graph.cycle_length > 0)),
    (
        "cycle_length",
        Getter::Int(|i| INT::from(i.graph.cycle_length)),
    ),
    (
        "chain_length",
        Getter::Int(|i| INT::from(i.graph.chain_length)),
    ),
    (
        "scatter_gather",
        Getter::Int(|i| INT::from(i.graph.scatter_gather)),
    ),
    (
        "layered_senders",
        Getter::Int(|i| INT::from(i.graph.layered_senders)),
    ),
    (
        "layered_receivers",
        Getter::Int(|i| INT::from(i.graph.layered_receivers)),
    ),
];

/// A view type Rhai sees: every view wraps the same input.
trait ViewType: Clone + Send + Sync + 'static {
    const VIEW: View;
    fn input(&self) -> &RuleInput;
}

macro_rules! view_type {
    ($($name:ident => $view:expr),* $(,)?) => {
        $(
            impl ViewType for $name {
                const VIEW: View = $view;
                fn input(&self) -> &RuleInput {
                    &self.0
                }
            }
        )*
    };
}

view_type!(
    TxView => View::Tx,
    UserView => View::User,
    AggView => View::Agg,
    LimitsView => View::Limits,
    DeviceView => View::Device,
    LocationView => View::Location,
    CounterpartyView => View::Counterparty,
    ListsView => View::Lists,
    ScreeningView => View::Screening,
    SenderView => View::Sender,
    ReceiverView => View::Receiver,
    GraphView => View::Graph,
);

fn register_view<V: ViewType>(engine: &mut Engine, type_name: &str) {
    engine.register_type_with_name::<V>(type_name);
    for (name, getter) in V::VIEW.properties() {
        match *getter {
            Getter::Bool(get) => {
                engine.register_get(name, move |view: &mut V| get(view.input()));
            }
            Getter::Int(get) => {
                engine.register_get(name, move |view: &mut V| get(view.input()));
            }
            Getter::Float(get) => {
                engine.register_get(name, move |view: &mut V| get(view.input()));
            }
            Getter::Str(get) => {
                engine.register_get(name, move |view: &mut V| {
                    ImmutableString::from(get(view.input()))
                });
            }
            Getter::Shared(get) => {
                engine.register_get(name, move |view: &mut V| get(view.input()).clone());
            }
        }
    }
}

/// Registers the view types and their properties on a rule engine.
pub fn register(engine: &mut Engine) {
    register_view::<TxView>(engine, "Transaction");
    register_view::<UserView>(engine, "User");
    register_view::<AggView>(engine, "Aggregates");
    register_view::<LimitsView>(engine, "Limits");
    register_view::<DeviceView>(engine, "Device");
    register_view::<LocationView>(engine, "Location");
    register_view::<CounterpartyView>(engine, "Counterparty");
    register_view::<ListsView>(engine, "Lists");
    register_view::<ScreeningView>(engine, "Screening");
    register_view::<SenderView>(engine, "SendingAccount");
    register_view::<ReceiverView>(engine, "ReceivingAccount");
    register_view::<GraphView>(engine, "AccountGraph");

    engine.register_fn(
        "count_debits_between",
        |view: &mut AggView, low: f64, high: f64, hours: INT| -> INT {
            count_debits_between(&view.0, low, high, hours)
        },
    );
    engine.register_fn(
        "count_debits_between",
        |view: &mut AggView, low: INT, high: INT, hours: INT| -> INT {
            count_debits_between(&view.0, low as f64, high as f64, hours)
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
        |view: &mut AggView, minutes: INT| -> INT { count_debits_within(&view.0, minutes) },
    );
    engine.register_fn(
        "count_credits_within",
        |view: &mut AggView, minutes: INT| -> INT { count_credits_within(&view.0, minutes) },
    );
    engine.register_fn(
        "sum_debits_within",
        |view: &mut AggView, minutes: INT| -> f64 { sum_debits_within(&view.0, minutes) },
    );
    engine.register_fn(
        "sum_credits_within",
        |view: &mut AggView, minutes: INT| -> f64 { sum_credits_within(&view.0, minutes) },
    );
}

/// `in_set`: the value, trimmed, is a member (members are stored upper-case).
pub fn set_contains(members: &HashSet<String>, value: &str) -> bool {
    let value = value.trim();
    // Most values already are upper-case ASCII (country codes): no allocation for them.
    if !value.bytes().any(|b| b.is_ascii_lowercase()) && value.is_ascii() {
        members.contains(value)
    } else {
        members.contains(&value.to_uppercase())
    }
}

/// Debits in `[low, high)` within the last `hours` (the `count_debits_between` method).
pub fn count_debits_between(input: &RuleInput, low: f64, high: f64, hours: INT) -> INT {
    count_recent(input, hours, |e| {
        !e.is_credit() && e.amount >= low && e.amount < high
    })
}

pub fn count_debits_within(input: &RuleInput, minutes: INT) -> INT {
    count_recent_seconds(input, minutes.saturating_mul(60), |e| !e.is_credit())
}

pub fn count_credits_within(input: &RuleInput, minutes: INT) -> INT {
    count_recent_seconds(input, minutes.saturating_mul(60), |e| e.is_credit())
}

pub fn sum_debits_within(input: &RuleInput, minutes: INT) -> f64 {
    sum_recent_seconds(input, minutes.saturating_mul(60), |e| !e.is_credit())
}

pub fn sum_credits_within(input: &RuleInput, minutes: INT) -> f64 {
    sum_recent_seconds(input, minutes.saturating_mul(60), |e| e.is_credit())
}

fn limit(
    input: &RuleInput,
    pick: impl Fn(&crate::model::transaction::Limits) -> Option<f64>,
) -> Option<f64> {
    input.tx.payload.limits.as_ref().and_then(pick)
}

/// Debits earlier on the transaction's local calendar day (UTC offset in hours), from the 24 h ring.
pub fn debits_today(input: &RuleInput, utc_offset_hours: INT) -> f64 {
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
pub fn closest_credit_ratio(input: &RuleInput, minutes: INT) -> f64 {
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

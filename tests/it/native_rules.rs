//! Differential tests of native rule evaluation (rules translated to Rust closures) against the
//! Rhai interpreter: the same hits and the same errors, for every rule of the default pack and a
//! pack of edge cases, over the fixtures and over random inputs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use rhai::Scope;
use vigil::engine::rules::{
    fixtures, ListFacts, RuleInput, RuleSet, SandboxLimits, ScreeningFacts,
};
use vigil::engine::state::{Aggregates, Event};
use vigil::model::transaction::{
    AnonymizedUserData, Beneficiary, CounterpartyData, Device, Limits, Location, TransactionData,
};
use vigil::model::{Direction, Transaction, TransactionPayload};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn default_pack() -> RuleSet {
    RuleSet::load(&root().join("rules"), SandboxLimits::default()).expect("default pack loads")
}

#[test]
fn every_rule_of_the_default_pack_runs_natively() {
    let pack = default_pack();
    let interpreted: Vec<String> = pack
        .rules
        .iter()
        .filter(|r| !r.is_native())
        .map(|r| format!("{}: {:?}", r.meta.id, r.interpreted_because))
        .collect();
    assert!(interpreted.is_empty(), "interpreted: {interpreted:?}");
}

#[test]
fn the_fixtures_agree_natively_and_interpreted() {
    // The fixture runner checks every evaluation against the interpreter and reports a
    // disagreement as a failure of the rule.
    let rules = Arc::new(default_pack());
    let files = fixtures::load_dir(&root().join("fixtures/rules")).expect("fixtures load");
    let report = fixtures::run(&rules, &files);
    assert!(report.passed(), "{}", report.summary());
    assert!(report.native_checks > 0);
    assert_eq!(report.native_checks, report.evaluations);
}

const EDGE_MANIFEST: &str = r#"
[pack]
name = "edges"
version = "1"
[decision]
review = 0.5
reject = 0.8
[params]
big = 9223372036854775807
small = -9223372036854775807
ratio = 0.1
threshold = 1000.0
name = "NG"
flag = true
[sets]
risky = ["kp", "IR", "Iran", "Côte d'Ivoire"]
"#;

/// Rules that exercise Rhai's edge semantics: checked INT arithmetic, INT/FLOAT mixing, FLOAT
/// comparisons with epsilon, strings, sets, shadowing, and constructs left to the interpreter.
const EDGE_RULES: &[(&str, &str)] = &[
    ("E01", "agg.debit_count_1h + BIG > 0"),
    ("E02", "agg.debit_count_1h * BIG * 2 > 0"),
    ("E03", "agg.debit_count_24h / agg.credit_count_24h >= 1"),
    ("E04", "agg.debit_count_24h % agg.credit_count_1h == 0"),
    ("E05", "-(agg.history_count + SMALL - 1) > 0"),
    ("E06", "tx.amount == tx.amount + 0.0000000000000001"),
    ("E07", "tx.amount / agg.debit_count_1h > THRESHOLD"),
    ("E08", "tx.amount % 100.0 == 0.0 && tx.amount >= THRESHOLD"),
    ("E09", "agg.debit_sum_24h + tx.amount * RATIO >= limits.daily"),
    ("E10", "agg.debit_count_7d > agg.debit_sum_7d / 1000.0"),
    ("E11", "agg.travel_speed_kmh != agg.distance_km"),
    ("E12", "agg.seconds_since_last <= 0.0 || agg.seconds_since_last >= 3600"),
    ("E13", "in_set(\"risky\", user.country) || in_set(\"risky\", counterparty.country)"),
    ("E14", "user.country == NAME && tx.narration != \"\""),
    ("E15", "screening.sender_sanction == \"match\" || screening.receiver_pep != \"clear\""),
    ("E16", "let x = agg.debit_count_1h + 1; let x = x * 2.5; x > 10.0 && x < 1e6"),
    ("E17", "let t = if agg.counterparty_seen_24h { 0 } else { 1 }; agg.distinct_receivers_24h + t >= 3"),
    ("E18", "let h = (tx.hour + 1 + 24) % 24; if h < 6 { tx.is_debit } else { !tx.is_credit && FLAG }"),
    ("E19", "agg.count_debits_between(0.5 * THRESHOLD, THRESHOLD, 24) + agg.count_debits_within(60) > 2"),
    ("E20", "agg.count_debits_between(100, 1000, 48) >= 1 || agg.sum_credits_within(30) > 0.0"),
    ("E21", "agg.debits_today(1) + tx.amount > limits.daily || agg.closest_credit_ratio_within(60) >= 0.9"),
    ("E22", "agg.count_credits_within(agg.debit_count_1h) > 0 || agg.sum_debits_within(90) > 1.0"),
    ("E23", "user.account_age_days >= 0.0 && user.account_age_days < 30.0 && user.dob_age_years < 25.0"),
    ("E24", "(tx.has_balance == limits.has_overdraft) != device.is_new"),
    ("E25", "tx.weekday >= 5 && tx.timestamp > 0 && device.known_count < 3 && location.latitude > -90.0"),
    // Left to the interpreter: a loop, a string binding, a non-bool result, a type mix.
    ("E26", "let n = 0; for e in 0..3 { n += e; } n == 3"),
    ("E27", "let s = user.country; s == \"NG\""),
    ("E28", "agg.debit_count_1h"),
    ("E29", "let v = if tx.is_debit { 1 } else { 2.0 }; v > 1"),
    ("E30", "tx.reference == 5"),
    ("E31", "in_set(\"missing\", user.country)"),
    ("E32", "tx.amount > 1.0 && agg.debit_count_1h"),
    ("E33", "user.is_banned || lists.account || lists.user || lists.device || lists.vas_receiver"),
    ("E34", "tx.usd_amount > 100.0 && tx.scheme == \"NIP\" && tx.channel != \"card\""),
];

fn edge_pack(limits: SandboxLimits) -> RuleSet {
    let sources: Vec<(PathBuf, String)> = EDGE_RULES
        .iter()
        .map(|(id, condition)| {
            (
                PathBuf::from(format!("{id}.rhai")),
                format!(
                    "//! id = \"{id}\"\n//! name = \"{id}\"\n//! description = \"{id}\"\n//! severity = \"low\"\n//! score = 0.1\n{condition}\n"
                ),
            )
        })
        .collect();
    RuleSet::compile(Path::new("pack.toml"), EDGE_MANIFEST, &sources, limits)
        .expect("edge pack compiles")
}

#[test]
fn the_edge_pack_translates_what_it_can() {
    let pack = edge_pack(SandboxLimits::default());
    let interpreted: Vec<&str> = pack
        .rules
        .iter()
        .filter(|r| !r.is_native())
        .map(|r| r.meta.id.as_str())
        .collect();
    assert_eq!(
        interpreted,
        ["E26", "E27", "E28", "E29", "E30", "E31", "E32"]
    );
}

#[test]
fn a_tight_operation_limit_keeps_rules_in_the_interpreter() {
    let limits = SandboxLimits {
        max_operations: 20,
        ..SandboxLimits::default()
    };
    let pack = edge_pack(limits);
    assert!(pack.rules.iter().all(|r| !r.is_native()));
}

fn text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        Just(Some("NG".to_owned())),
        Just(Some(" kp ".to_owned())),
        Just(Some("Iran".to_owned())),
        Just(Some("ir".to_owned())),
        Just(Some("côte d'ivoire".to_owned())),
        Just(Some("NIP".to_owned())),
        Just(Some("x".repeat(20_000))),
        "[a-zA-Z ]{0,12}".prop_map(Some),
    ]
}

fn amount() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(1000.0),
        Just(1000.0000000000001),
        Just(100_000.0),
        Just(f64::MAX),
        Just(1e-300),
        Just(-1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        0.0..10_000_000.0f64,
    ]
}

fn count() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(1), Just(u32::MAX), 0u32..50]
}

fn screening_status() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("clear".to_owned()),
        Just("match".to_owned()),
        Just("potential match".to_owned()),
    ]
}

prop_compose! {
    fn aggregates()(
        counts in proptest::collection::vec(count(), 12),
        sums in proptest::collection::vec(amount(), 14),
        seen in any::<bool>(),
        history in count(),
    ) -> Aggregates {
        Aggregates {
            debit_count: [counts[0], counts[1], counts[2], counts[3]],
            debit_sum: [sums[0], sums[1], sums[2], sums[3]],
            credit_count: [counts[4], counts[5], counts[6], counts[7]],
            credit_sum: [sums[4], sums[5], sums[6], sums[7]],
            distinct_counterparties_24h: counts[8],
            distinct_receivers_24h: counts[9],
            distinct_senders_24h: counts[10],
            daily_debit_total: sums[8],
            seconds_since_last: sums[9],
            days_since_last_active: sums[10],
            days_since_first_seen: sums[11],
            distance_km: sums[12],
            travel_speed_kmh: sums[13],
            history_count: history,
            closest_credit_ratio_24h: sums[0] / 1000.0,
            closest_credit_age_minutes: sums[1] / 60.0,
            counterparty_seen_24h: seen,
        }
    }
}

prop_compose! {
    fn transaction()(
        amount in prop_oneof![Just(0.0), Just(1_000_000.0), Just(4_600_000.0), 0.0..10_000_000.0f64],
        credit in any::<bool>(),
        time_s in 0i64..4_000_000_000,
        joined_days in proptest::option::of(-10i64..400),
        strings in proptest::collection::vec(text(), 8),
        limits in proptest::option::of((proptest::option::of(amount()), proptest::option::of(amount()), proptest::option::of(amount()))),
        balance in proptest::option::of(amount()),
        flags in proptest::collection::vec(proptest::option::of(any::<bool>()), 6),
        coordinates in proptest::option::of((-90.0..90.0f64, -180.0..180.0f64)),
        usd in proptest::option::of(0.0001..2.0f64),
    ) -> Transaction {
        let data = TransactionData {
            reference: Some("r".into()),
            amount: Some(amount),
            kind: Some(if credit { "credit" } else { "debit" }.into()),
            narration: strings[0].as_deref().map(Into::into),
            channel: strings[1].as_deref().map(Into::into),
            transaction_scheme: strings[2].as_deref().map(Into::into),
            balance_before: balance,
            is_dormant_account: flags[0],
            is_external_payment: flags[1],
            usd_exchange_rate: usd,
            ..TransactionData::default()
        };
        let user = AnonymizedUserData {
            unique_id: Some("u".into()),
            country: strings[3].as_deref().map(Into::into),
            is_banned: flags[2],
            dob: Some("1990-05-01".into()),
            ..AnonymizedUserData::default()
        };
        let payload = TransactionPayload {
            transaction_data: Some(data),
            anonymized_user_data: Some(user),
            counterparty_data: Some(CounterpartyData {
                country: strings[4].as_deref().map(Into::into),
                bank_country: strings[5].as_deref().map(Into::into),
                ..CounterpartyData::default()
            }),
            location: Some(Location {
                country: strings[6].as_deref().map(Into::into),
                ..Location::default()
            }),
            device: strings[7].as_deref().map(|id| Device {
                device_id: Some(id.into()),
                ..Device::default()
            }),
            limits: limits.map(|(daily, overdraft, individual)| Limits {
                daily_limit: daily,
                overdraft_limit: overdraft,
                individual_transaction_limit: individual,
            }),
            beneficiary: Some(Beneficiary {
                is_new_beneficiary: flags[3],
                is_registered_beneficiary: flags[4],
            }),
            ..TransactionPayload::default()
        };
        let event_time_ms = time_s * 1000;
        Transaction {
            payload,
            reference: "r".into(),
            user_id: "u".into(),
            amount,
            direction: if credit { Direction::Credit } else { Direction::Debit },
            event_time_ms,
            received_at_ms: event_time_ms,
            future_dated: flags[5].unwrap_or(false),
            coordinates,
            date_joined_ms: joined_days.map(|d| event_time_ms - d * 86_400_000),
        }
    }
}

prop_compose! {
    fn rule_input()(
        tx in transaction(),
        agg in aggregates(),
        recent in proptest::collection::vec((0u32..200_000, amount(), any::<bool>(), 0u32..5), 0..40),
        device_is_new in any::<bool>(),
        known_devices in 0usize..4,
        lists in proptest::collection::vec(any::<bool>(), 5),
        screening in proptest::collection::vec(screening_status(), 4),
    ) -> Arc<RuleInput> {
        let now = (tx.event_time_ms / 1000).clamp(0, u32::MAX as i64) as u32;
        let mut recent: Vec<Event> = recent
            .into_iter()
            .map(|(age, amount, credit, cp)| {
                let direction = if credit { Direction::Credit } else { Direction::Debit };
                Event::new(now.saturating_sub(age), amount, direction, cp)
            })
            .collect();
        recent.sort_by_key(|e| e.ts);
        Arc::new(RuleInput {
            tx,
            agg,
            recent,
            device_is_new,
            known_devices,
            lists: ListFacts {
                user: lists[0],
                sender_account: lists[1],
                receiver_account: lists[2],
                device: lists[3],
                vas_receiver: lists[4],
            },
            screening: ScreeningFacts {
                sender_sanction: screening[0].as_str().into(),
                sender_pep: screening[1].as_str().into(),
                receiver_sanction: screening[2].as_str().into(),
                receiver_pep: screening[3].as_str().into(),
            },
            graph: Box::default(),
        })
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_default_pack_agrees_on_random_inputs(input in rule_input()) {
        static PACK: std::sync::LazyLock<RuleSet> = std::sync::LazyLock::new(default_pack);
        let mut scope = Scope::new();
        let native = PACK.evaluate(&input, &mut scope);
        let interpreted = PACK.evaluate_interpreted(&input, &mut scope);
        prop_assert_eq!(native, interpreted);
    }

    #[test]
    fn the_edge_pack_agrees_on_random_inputs(input in rule_input()) {
        static PACK: std::sync::LazyLock<RuleSet> =
            std::sync::LazyLock::new(|| edge_pack(SandboxLimits::default()));
        let mut scope = Scope::new();
        let native = PACK.evaluate(&input, &mut scope);
        let interpreted = PACK.evaluate_interpreted(&input, &mut scope);
        prop_assert_eq!(native, interpreted);
    }
}

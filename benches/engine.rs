//! Criterion benchmarks of the engine's hot path:
//! - `parse/full_payload`: parse (simd-json's tape, decoded directly) + validation of a full §2.1
//!   payload (both shapes' fields); beside it `parse/simd_json_tape` (the tape alone: the floor),
//!   `parse/simd_json_value_tree`, `parse/simd_json_only` (serde over the tape, the old path) and
//!   `parse/serde_json_only`;
//! - `rule/<id>`: one rule of the default pack evaluated alone (as the engine runs it: native);
//! - `pack/default`: the whole default pack against one input (native rules);
//! - `pack/interpreted`: the same with every rule in the Rhai interpreter;
//! - `evaluate/with_history`: the full per-event path of a shard (idempotency check, window
//!   aggregation over a user with history, lists, rules, verdict, state update).
//!
//! Run: `cargo bench --bench engine`.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rhai::Scope;
use vigil::engine::rules::{ListFacts, RuleInput, RuleSet, SandboxLimits, ScreeningFacts};
use vigil::engine::state::{Aggregates, StateLimits};
use vigil::engine::{Evaluator, Lists, Snapshot};
use vigil::model::{parse_json, Transaction, TransactionPayload, ValidationClock};

use vigil::screening::NoScreening;

const FULL_PAYLOAD: &str = r#"{
  "transactionData": {"reference": "REF-000123456789", "amount": 250000.75, "isExternalPayment": true,
    "type": "debit", "channel": "card payment", "transactionDate": "2026-03-02T10:15:30.123Z",
    "status": true, "currency": "NGN", "receiverAccount": "0123456789", "senderAccount": "9876543210",
    "balanceBefore": 1250000.0, "email": "ada@example.com", "narration": "Payment for goods and services",
    "refund": false, "isCheque": false, "vasReceiver": "08031234567", "isInternalAccount": false,
    "isStaffAccount": false, "sessionId": "000015230302101530123456789012", "isDormantAccount": false,
    "accountCurrency": "NGN", "accountCurrencyBalanceBefore": 1250000.0, "signatory": "single",
    "transactionScheme": "NIP", "exchangeRate": 1.0, "usdExchangeRate": 0.00065},
  "anonymizedUserData": {"uniqueId": "CUST-000042", "isBanned": false, "isIdentityVerified": true,
    "email": "ada@example.com", "accountType": "individual", "businessCategory": "retail",
    "isPhoneNumberVerified": true, "dateJoined": "2023-06-01T09:00:00Z", "age": 34, "state": "Lagos",
    "city": "Ikeja", "country": "NG", "identityNumber": 12345678901, "phone": "+2348031234567",
    "occupation": "trader", "bankCode": "058", "bankName": "GTBank", "name": "Ada Obi", "dob": "1991-04-12",
    "sow": "business income", "iban": "", "sortCode": "", "bankCountry": "NG", "pepStatus": false},
  "device": {"deviceId": "device-abc-123", "manufacturer": "Tecno", "name": "Ada's phone",
    "osName": "Android", "osVersion": "13"},
  "location": {"latitude": "6.6018", "longitude": "3.3515", "country": "NG"},
  "thirdPartyUserData": {"uniqueId": "tp-1", "cardPan": "539983******1234", "email": "ada@example.com"},
  "limits": {"dailyLimit": 5000000, "overdraftLimit": 0, "individualTransactionLimit": 1000000},
  "screeningData": {"senderName": "Ada Obi", "receiverName": "Chidi Okafor"},
  "beneficiary": {"isRegisteredBeneficiary": true, "isNewBeneficiary": false},
  "counterpartyData": {"country": "NG", "bankCode": "044", "name": "Chidi Okafor", "bankName": "Access",
    "accountNumber": "0123456789", "accountType": "savings", "iban": "", "sortCode": "", "bankCountry": "NG",
    "identityNumber": 10987654321, "email": "chidi@example.com"},
  "ipAddress": "102.89.34.12"
}"#;

const CLOCK: ValidationClock = ValidationClock {
    now_ms: 1_780_000_000_000,
    max_future_skew_ms: 300_000,
};

fn transaction(reference: &str, minute: i64) -> Transaction {
    let mut scratch = Vec::new();
    let mut payload: TransactionPayload =
        parse_json(FULL_PAYLOAD.as_bytes(), &mut scratch).expect("payload parses");
    if let Some(data) = payload.transaction_data.as_mut() {
        data.reference = Some(reference.into());
        data.amount = Some(1_000.0 + minute as f64);
    }
    let mut tx = payload.validate(CLOCK).expect("payload is valid");
    tx.event_time_ms += minute * 60_000;
    tx
}

fn pack() -> Arc<RuleSet> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    Arc::new(RuleSet::load(&dir, SandboxLimits::default()).expect("default pack loads"))
}

fn input() -> Arc<RuleInput> {
    Arc::new(RuleInput {
        tx: transaction("bench-input", 0),
        agg: Aggregates {
            debit_count: [2, 5, 12, 40],
            debit_sum: [5_000.0, 20_000.0, 80_000.0, 300_000.0],
            credit_count: [0, 1, 3, 8],
            credit_sum: [0.0, 50_000.0, 150_000.0, 400_000.0],
            distinct_counterparties_24h: 4,
            distinct_receivers_24h: 3,
            distinct_senders_24h: 1,
            daily_debit_total: 20_000.0,
            seconds_since_last: 900.0,
            days_since_last_active: 0.01,
            days_since_first_seen: 400.0,
            distance_km: 3.0,
            travel_speed_kmh: 12.0,
            history_count: 300,
            closest_credit_ratio_24h: 5.0,
            closest_credit_age_minutes: 300.0,
            counterparty_seen_24h: true,
        },
        recent: Vec::new(),
        device_is_new: false,
        known_devices: 2,
        lists: ListFacts::default(),
        screening: ScreeningFacts::default(),
        graph: Box::default(),
    })
}

fn bench_parse(c: &mut Criterion) {
    let mut scratch = Vec::with_capacity(4096);
    c.bench_function("parse/serde_json_only", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<TransactionPayload>(black_box(FULL_PAYLOAD.as_bytes()))
                    .expect("parses"),
            )
        })
    });
    // The floor of any simd-json decoding: stage 1 and the tape, with reused buffers, nothing
    // decoded from it.
    let mut buffers = simd_json::Buffers::new(4096);
    c.bench_function("parse/simd_json_tape", |b| {
        b.iter(|| {
            scratch.clear();
            scratch.extend_from_slice(FULL_PAYLOAD.as_bytes());
            black_box(
                simd_json::to_tape_with_buffers(&mut scratch, &mut buffers)
                    .map(|tape| tape.0.len())
                    .expect("parses"),
            )
        })
    });
    c.bench_function("parse/simd_json_value_tree", |b| {
        b.iter(|| {
            scratch.clear();
            scratch.extend_from_slice(FULL_PAYLOAD.as_bytes());
            black_box(
                simd_json::to_borrowed_value(&mut scratch)
                    .map(|v| std::mem::size_of_val(&v))
                    .expect("parses"),
            )
        })
    });
    c.bench_function("parse/simd_json_only", |b| {
        b.iter(|| {
            scratch.clear();
            scratch.extend_from_slice(FULL_PAYLOAD.as_bytes());
            black_box(
                simd_json::serde::from_slice::<TransactionPayload>(&mut scratch).expect("parses"),
            )
        })
    });
    c.bench_function("parse/full_payload", |b| {
        b.iter(|| {
            let payload: TransactionPayload =
                parse_json(black_box(FULL_PAYLOAD.as_bytes()), &mut scratch).expect("parses");
            black_box(payload.validate(CLOCK).expect("valid"))
        })
    });
}

fn bench_rules(c: &mut Criterion) {
    let rules = pack();
    let input = input();
    let mut scope = Scope::new();
    let manifest_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/pack.toml");
    let manifest = std::fs::read_to_string(&manifest_path).expect("pack.toml");
    let mut group = c.benchmark_group("rule");
    group.measurement_time(Duration::from_secs(1));
    group.warm_up_time(Duration::from_millis(300));
    for rule in &rules.rules {
        let source = std::fs::read_to_string(&rule.file).expect("rule source");
        let single = RuleSet::compile(
            &manifest_path,
            &manifest,
            &[(rule.file.clone(), source)],
            SandboxLimits::default(),
        )
        .expect("compiles alone");
        group.bench_function(&rule.meta.id, |b| {
            b.iter(|| black_box(single.evaluate(black_box(&input), &mut scope)))
        });
    }
    group.finish();
    c.bench_function("pack/default", |b| {
        b.iter(|| {
            let evaluation = rules.evaluate(black_box(&input), &mut scope);
            black_box(rules.verdict(&evaluation))
        })
    });
    // The same pack with every rule in the Rhai interpreter (the path before native rules).
    c.bench_function("pack/interpreted", |b| {
        b.iter(|| {
            let evaluation = rules.evaluate_interpreted(black_box(&input), &mut scope);
            black_box(rules.verdict(&evaluation))
        })
    });
}

fn bench_evaluate(c: &mut Criterion) {
    let snapshot = Snapshot {
        rules: pack(),
        rule_counters: None,
        lists: Arc::new(Lists::default()),
        screener: Arc::new(NoScreening),
    };
    // 2,000 users, one transaction every 30 minutes each: in steady state every user carries
    // 48 events in its 24 h ring and a month of day buckets (a busy retail customer). The
    // history is built inside the benchmark closure, so a filtered run that skips this benchmark
    // (or a profile of another one) does not pay for it.
    const USERS: usize = 2_000;
    let mut evaluator = Evaluator::new(StateLimits::default());
    let template = transaction("bench", 0);
    let mut clock = vec![0i64; USERS];
    let mut n = 0usize;
    let mut next = move || {
        let user = n % USERS;
        n += 1;
        clock[user] += 30;
        let mut tx = template.clone();
        tx.user_id = format!("user-{user}");
        tx.reference = format!("bench-{n}");
        tx.event_time_ms = template.event_time_ms + clock[user] * 60_000;
        tx
    };
    let mut warm = false;
    c.bench_function("evaluate/with_history", |b| {
        if !warm {
            for _ in 0..USERS * 60 {
                let _ = evaluator.evaluate(&snapshot, 1, next(), None, None);
            }
            warm = true;
        }
        b.iter_batched(
            &mut next,
            |tx| black_box(evaluator.evaluate(&snapshot, 1, tx, None, None)),
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench_parse, bench_rules, bench_evaluate);
criterion_main!(benches);

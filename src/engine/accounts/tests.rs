//! Unit tests of the account graph. The detector fixtures (sequences of payments, expected hits
//! and near misses) run through the rules: `fixtures/rules/TM-028…TM-035`.

use super::*;
use crate::model::{TransactionPayload, ValidationClock};
use proptest::prelude::*;

const DAY_MS: i64 = 86_400_000;
const T0_MS: i64 = 1_771_000_000_000;

fn payment(reference: &str, at_ms: i64, from: &str, to: &str, amount: f64) -> Transaction {
    let payload: TransactionPayload = serde_json::from_value(serde_json::json!({
        "transactionData": {
            "reference": reference, "amount": amount, "type": "debit",
            "transactionDate": crate::model::decision::format_time_ms(at_ms),
            "senderAccount": from, "receiverAccount": to
        },
        "anonymizedUserData": {"uniqueId": format!("u-{from}")}
    }))
    .expect("payload");
    payload
        .validate(ValidationClock {
            now_ms: T0_MS + 400 * DAY_MS,
            max_future_skew_ms: 0,
        })
        .expect("valid")
}

#[test]
fn velocity_counts_are_exact_both_ways_and_exclude_later_payments() {
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    // Debtor D pays three creditors within a day; creditor C is paid by two debtors.
    let n = |i: i64| format!("r{i}");
    graph.observe(1, &payment(&n(1), T0_MS, "D", "C", 10.0), &settings);
    graph.observe(
        1,
        &payment(&n(2), T0_MS + 3_600_000, "D", "X", 20.0),
        &settings,
    );
    graph.observe(
        1,
        &payment(&n(3), T0_MS + 7_200_000, "E", "C", 30.0),
        &settings,
    );
    // A payment dated later than the one evaluated below arrives first (out of order).
    graph.observe(
        1,
        &payment(&n(4), T0_MS + 30 * 3_600_000, "D", "Y", 40.0),
        &settings,
    );
    // Another tenant's identical account ids are other accounts.
    graph.observe(2, &payment(&n(5), T0_MS, "D", "C", 99.0), &settings);
    let facts = graph.observe(
        1,
        &payment(&n(6), T0_MS + 23 * 3_600_000, "D", "C", 50.0),
        &settings,
    );
    assert_eq!(
        facts.sender.out_count[W_24H], 2,
        "D's two payments of the last 24 h"
    );
    assert_eq!(facts.sender.out_sum[W_24H], 30.0);
    assert_eq!(facts.sender.distinct_receivers[W_24H], 2);
    assert_eq!(facts.receiver.in_count[W_24H], 2, "C was paid by D and E");
    assert_eq!(facts.receiver.distinct_senders[W_24H], 2);
    assert!(!facts.new_pair, "D paid C before");
    // 24 h later, the first payments left the 24 h window but not the 7-day one.
    let later = graph.observe(
        1,
        &payment(&n(7), T0_MS + 48 * 3_600_000, "D", "Z", 1.0),
        &settings,
    );
    assert_eq!(
        later.sender.out_count[W_24H], 1,
        "only the payment dated +30 h"
    );
    assert_eq!(later.sender.out_count[W_7D], 4);
    assert!(later.new_pair);
}

#[test]
fn a_resubmitted_payment_is_not_counted_twice() {
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    graph.observe(1, &payment("same", T0_MS, "A", "B", 5.0), &settings);
    let again = graph.observe(1, &payment("same", T0_MS, "A", "B", 5.0), &settings);
    assert_eq!(again, GraphFacts::default());
    let next = graph.observe(1, &payment("next", T0_MS + 1000, "A", "B", 5.0), &settings);
    assert_eq!(next.sender.out_count[W_24H], 1);
}

#[test]
fn a_chain_is_found_from_its_middle_with_its_accounts_in_money_order() {
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    // A -> B -> C and D -> E are known; C -> D links them into A -> B -> C -> D -> E.
    graph.observe(1, &payment("c1", T0_MS, "A", "B", 500.0), &settings);
    graph.observe(
        1,
        &payment("c2", T0_MS + DAY_MS, "B", "C", 480.0),
        &settings,
    );
    graph.observe(
        1,
        &payment("c4", T0_MS + 2 * DAY_MS, "D", "E", 450.0),
        &settings,
    );
    let facts = graph.observe(
        1,
        &payment("c3", T0_MS + 3 * DAY_MS, "C", "D", 470.0),
        &settings,
    );
    assert_eq!(facts.chain_length, 4);
    let evidence = facts.evidence_of(Detector::Chain).expect("evidence");
    assert_eq!(&*evidence.account, "A", "the chain's origin");
    let accounts: Vec<&str> = evidence.accounts.iter().map(|a| &**a).collect();
    assert_eq!(accounts, ["A", "B", "C", "D", "E"]);
    let legs: Vec<(&str, &str)> = evidence.legs.iter().map(|l| (&*l.from, &*l.to)).collect();
    assert_eq!(
        legs,
        [("A", "B"), ("B", "C"), ("D", "E"), ("C", "D")],
        "legs in time order, like all evidence"
    );

    // A busy account breaks a chain: Y has more payments than chain_max_payments.
    let mut busy = AccountGraph::default();
    for i in 0..settings.chain_max_payments {
        busy.observe(
            1,
            &payment(
                &format!("y{i}"),
                T0_MS + i as i64,
                "Y",
                &format!("Z{i}"),
                500.0,
            ),
            &settings,
        );
    }
    busy.observe(
        1,
        &payment("x1", T0_MS + DAY_MS, "X", "Y", 500.0),
        &settings,
    );
    let through = busy.observe(
        1,
        &payment("x2", T0_MS + 2 * DAY_MS, "W", "X", 500.0),
        &settings,
    );
    assert_eq!(
        through.chain_length, 2,
        "W -> X -> Y stops at busy Y's door (else it would go on to a Z)"
    );
}

#[test]
fn a_payment_received_out_of_order_within_the_lateness_still_closes_a_cycle() {
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    graph.observe(1, &payment("o1", T0_MS, "A", "B", 100.0), &settings);
    // Dated 10 h after the closing payment, but received before it.
    graph.observe(
        1,
        &payment("o2", T0_MS + DAY_MS + 36_000_000, "B", "C", 100.0),
        &settings,
    );
    let facts = graph.observe(
        1,
        &payment("o3", T0_MS + DAY_MS, "C", "A", 100.0),
        &settings,
    );
    assert_eq!(facts.cycle_length, 3);
    let strict = DetectorSettings {
        lateness_hours: 0,
        ..settings
    };
    let mut graph = AccountGraph::default();
    graph.observe(1, &payment("o1", T0_MS, "A", "B", 100.0), &strict);
    graph.observe(
        1,
        &payment("o2", T0_MS + DAY_MS + 36_000_000, "B", "C", 100.0),
        &strict,
    );
    let facts = graph.observe(1, &payment("o3", T0_MS + DAY_MS, "C", "A", 100.0), &strict);
    assert_eq!(
        facts.cycle_length, 0,
        "without lateness the later-dated payment is not used"
    );
}

#[test]
fn a_cycle_carries_its_accounts_and_payments_as_evidence() {
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    graph.observe(1, &payment("p1", T0_MS, "A", "B", 100.0), &settings);
    graph.observe(1, &payment("p2", T0_MS + DAY_MS, "B", "C", 95.0), &settings);
    let facts = graph.observe(
        1,
        &payment("p3", T0_MS + 2 * DAY_MS, "C", "A", 90.0),
        &settings,
    );
    assert_eq!(facts.cycle_length, 3);
    let evidence = facts.evidence_of(Detector::Cycle).expect("evidence");
    assert_eq!(&*evidence.account, "A");
    let refs: Vec<&str> = evidence.legs.iter().map(|l| &*l.reference).collect();
    assert_eq!(refs, ["p1", "p2", "p3"]);
    assert_eq!(evidence.first_at, T0_MS / 1000);
    assert_eq!(evidence.last_at, T0_MS / 1000 + 2 * 86_400);
}

#[test]
fn memory_per_typical_account_stays_under_a_kibibyte() {
    // A typical account: a handful of counterparties, a few payments a month each way.
    let settings = DetectorSettings::default();
    let mut graph = AccountGraph::default();
    let accounts = 200;
    for i in 0..accounts {
        for k in 0..4 {
            let to = (i + k + 1) % accounts;
            let reference = format!("m{i}-{k}");
            let at = T0_MS + (k as i64) * 7 * DAY_MS + i as i64;
            graph.observe(
                1,
                &payment(
                    &reference,
                    at,
                    &format!("ACC{i}"),
                    &format!("ACC{to}"),
                    10.0,
                ),
                &settings,
            );
        }
    }
    let per_account = graph.memory_bytes() / graph.account_count();
    assert!(per_account <= 1024, "{per_account} bytes per account");
}

proptest! {
    /// The 24 h and 7 d counts, the distinct counterparties and the 7-day pass-through ratio of
    /// both parties equal a brute-force count over the payments dated at or before t, whatever
    /// order the payments arrived in.
    #[test]
    fn counts_match_a_brute_force_count(
        payments in proptest::collection::vec((0i64..(10 * DAY_MS), 0usize..4, 0usize..4, 1u32..1000), 1..40),
        at in 0i64..(10 * DAY_MS),
    ) {
        let settings = DetectorSettings::default();
        let mut graph = AccountGraph::default();
        let names = ["A", "B", "C", "D"];
        let mut kept = Vec::new();
        for (i, (offset, from, to, amount)) in payments.iter().enumerate() {
            if from == to {
                continue;
            }
            graph.observe(1, &payment(&format!("x{i}"), T0_MS + offset, names[*from], names[*to], f64::from(*amount)), &settings);
            kept.push((T0_MS + offset, *from, *to, f64::from(*amount)));
        }
        let t = T0_MS + at;
        let facts = graph.observe(1, &payment("probe", t, "A", "B", 1.0), &settings);
        // Money out over money in within the 7 days up to t, the probe (1.0 from A to B) included.
        let week = |ts: i64| ts / 1000 <= t / 1000 && t / 1000 - ts / 1000 < 7 * DAY_MS / 1000;
        let money = |account: usize, outgoing: bool| -> f64 {
            kept.iter()
                .filter(|(ts, f, r, _)| week(*ts) && if outgoing { *f == account } else { *r == account })
                .map(|(_, _, _, amount)| amount)
                .sum()
        };
        let ratio = |money_in: f64, money_out: f64| if money_in > 0.0 { money_out / money_in } else { 0.0 };
        prop_assert!((facts.sender.pass_through_7d - ratio(money(0, false), money(0, true) + 1.0)).abs() < 1e-9);
        prop_assert!((facts.receiver.pass_through_7d - ratio(money(1, false) + 1.0, money(1, true))).abs() < 1e-9);
        for (w, span) in [(W_24H, DAY_MS), (W_7D, 7 * DAY_MS)] {
            let inside = |ts: i64| ts / 1000 <= t / 1000 && t / 1000 - ts / 1000 < span / 1000;
            let out = kept.iter().filter(|(ts, f, _, _)| *f == 0 && inside(*ts)).count();
            let into = kept.iter().filter(|(ts, _, r, _)| *r == 1 && inside(*ts)).count();
            prop_assert_eq!(facts.sender.out_count[w] as usize, out);
            prop_assert_eq!(facts.receiver.in_count[w] as usize, into);
            let receivers: std::collections::BTreeSet<usize> =
                kept.iter().filter(|(ts, f, _, _)| *f == 0 && inside(*ts)).map(|(_, _, r, _)| *r).collect();
            let senders: std::collections::BTreeSet<usize> =
                kept.iter().filter(|(ts, _, r, _)| *r == 1 && inside(*ts)).map(|(_, f, _, _)| *f).collect();
            prop_assert_eq!(facts.sender.distinct_receivers[w] as usize, receivers.len());
            prop_assert_eq!(facts.receiver.distinct_senders[w] as usize, senders.len());
        }
    }
}

/// The stage takes up to a drain's worth of queued jobs at once: with more than several drains'
/// worth already queued (and a flush behind them), every job reaches a shard, in order, before
/// the flush is answered.
#[test]
fn every_job_queued_behind_the_stage_reaches_its_shard_in_order() {
    use crate::engine::shard::ShardMsg;
    use crate::engine::{EvaluateJob, Intake, Snapshot};
    use stage::{StageContext, StageMsg};
    let rules = crate::engine::rules::RuleSet::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules")
            .as_path(),
        crate::engine::rules::SandboxLimits::default(),
    )
    .expect("the default pack");
    let snapshot = Snapshot::new(Arc::new(rules), Arc::new(crate::screening::NoScreening));
    let jobs = 1_000;
    let (queue, receiver) = tokio::sync::mpsc::channel(jobs + 1);
    for i in 0..jobs {
        let tx = payment(
            &format!("q{i}"),
            T0_MS + i as i64 * 1_000,
            &format!("S{}", i % 37),
            &format!("R{}", i % 101),
            10.0,
        );
        let job = EvaluateJob {
            tenant: 1,
            tx: Box::new(tx),
            raw: bytes::Bytes::new(),
            intake: Intake::Instant,
            reply: None,
            graph: None,
        };
        assert!(queue.try_send(StageMsg::Evaluate(job)).is_ok());
    }
    let (flushed, flush) = tokio::sync::oneshot::channel();
    assert!(queue.try_send(StageMsg::Flush(flushed)).is_ok());
    drop(queue);
    let (shard_queues, mut shards): (Vec<_>, Vec<_>) = (0..2)
        .map(|_| tokio::sync::mpsc::channel::<ShardMsg>(jobs))
        .unzip();
    // Everything is queued before the stage starts: it drains from its first message on.
    stage::run(
        StageContext {
            snapshot: Arc::new(arc_swap::ArcSwap::from_pointee(snapshot)),
            shards: shard_queues,
        },
        receiver,
    );
    assert!(flush.blocking_recv().is_ok(), "the flush was answered");
    let mut references = Vec::new();
    for shard in &mut shards {
        let mut last = None;
        while let Ok(message) = shard.try_recv() {
            let batch = match message {
                ShardMsg::Evaluate(job) => vec![job],
                ShardMsg::EvaluateBatch(jobs) => jobs,
                _ => Vec::new(),
            };
            for job in batch {
                assert!(job.graph.is_some(), "observed by the stage");
                let seq: usize = job.tx.reference[1..].parse().expect("q<seq>");
                assert!(last < Some(seq), "in order within a shard");
                last = Some(seq);
                references.push(seq);
            }
        }
    }
    references.sort_unstable();
    assert_eq!(references, (0..jobs).collect::<Vec<_>>(), "every job, once");
}

//! Webhook outbox drain rate against slow receivers (issue 19): how fast the delivery worker
//! empties a backlog when every receiver takes `--delay-ms` (50) to answer, and whether a slow
//! receiver holds up another business's deliveries.
//!
//! The run: an SQLite store in a temporary directory; receivers on loopback (axum) that sleep
//! `--delay-ms` before answering 200; `--deliveries` (2,000) results enqueued for business A, whose
//! webhook is the slow receiver, and `--other` (200) for business B, whose webhook is a second
//! receiver with the same delay. Then the real worker (`vigil::webhooks::spawn_worker`, the one
//! `vigil serve` runs) drains the outbox, once per `--settings` entry (`concurrency/per_destination`),
//! and the run prints, per setting: deliveries per second over the whole backlog, and the time
//! until B's last delivery (B's share must not wait behind A's backlog).
//!
//! ```text
//! cargo bench --bench webhook_drain -- [--deliveries N] [--other N] [--delay-ms MS]
//!     [--settings 1/1,8/8,64/16]
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::post;
use sqlx::Row;
use vigil::metrics::Metrics;
use vigil::store::{now_ms, Store};
use vigil::webhooks::{self, NewDelivery, WebhookConfig, Webhooks};

struct Args {
    deliveries: usize,
    other: usize,
    delay_ms: u64,
    settings: Vec<(usize, usize)>,
}

fn args() -> Args {
    let mut args = Args {
        deliveries: 2_000,
        other: 200,
        delay_ms: 50,
        settings: vec![(1, 1), (8, 8), (64, 16)],
    };
    let mut raw = std::env::args().skip(1);
    while let Some(flag) = raw.next() {
        let mut value = || raw.next().unwrap_or_default();
        match flag.as_str() {
            "--deliveries" => args.deliveries = value().parse().expect("--deliveries N"),
            "--other" => args.other = value().parse().expect("--other N"),
            "--delay-ms" => args.delay_ms = value().parse().expect("--delay-ms MS"),
            "--settings" => {
                args.settings = value()
                    .split(',')
                    .map(|pair| {
                        let (c, p) = pair.split_once('/').expect("concurrency/per_destination");
                        (c.parse().expect("number"), p.parse().expect("number"))
                    })
                    .collect()
            }
            // cargo bench passes --bench; anything else is a mistake worth seeing.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// A receiver that answers 200 after `delay`, to any number of requests at once.
async fn slow_receiver(delay: Duration) -> String {
    let app = axum::Router::new().route(
        "/hook",
        post(move || async move {
            tokio::time::sleep(delay).await;
            "ok"
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

async fn delivered(store: &Store, business_id: i64) -> i64 {
    sqlx::query(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE business_id = $1 AND status = 'delivered'",
    )
    .bind(business_id)
    .fetch_one(store.pool())
    .await
    .expect("count")
    .get(0)
}

async fn run(
    args: &Args,
    concurrency: usize,
    per_destination: usize,
) -> BTreeMap<&'static str, f64> {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("vigil.db").display()
    );
    let store = Store::connect(&url, 8).await.expect("store");
    let delay = Duration::from_millis(args.delay_ms);
    let mut businesses = Vec::new();
    for (name, count) in [("A", args.deliveries), ("B", args.other)] {
        let business = store.ensure_business(name).await.expect("business");
        let receiver = slow_receiver(delay).await;
        sqlx::query(
            "INSERT INTO webhook_configs (business_id, url, secret, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, 'whsec_bench_0123456789abcdef', 0, 0)",
        )
        .bind(business.id)
        .bind(&receiver)
        .execute(store.pool())
        .await
        .expect("config");
        let mut tx = store.pool().begin().await.expect("tx");
        for index in 0..count {
            webhooks::enqueue(
                &mut tx,
                &NewDelivery {
                    business_id: business.id,
                    event: webhooks::event::TRANSACTION,
                    record_id: &format!("{name}-{index}"),
                    url: None,
                    body: r#"{"transactionId":"bench","action":"APPROVED"}"#,
                },
                now_ms(),
            )
            .await
            .expect("enqueue");
        }
        tx.commit().await.expect("commit");
        businesses.push((business.id, count as i64));
    }
    let config = WebhookConfig {
        concurrency,
        per_destination,
        poll_interval_ms: 50,
        ..WebhookConfig::default()
    };
    let hooks =
        Webhooks::new(store.clone(), config, true, Arc::new(Metrics::new())).expect("client");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let worker = webhooks::spawn_worker(hooks, stopped);
    let total: i64 = businesses.iter().map(|(_, n)| n).sum();
    let (b_id, b_count) = businesses[1];
    let mut b_done = None;
    loop {
        let b = delivered(&store, b_id).await;
        if b_done.is_none() && b >= b_count {
            b_done = Some(started.elapsed());
        }
        let all = delivered(&store, businesses[0].0).await + b;
        if all >= total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    let _ = stop.send(true);
    let _ = worker.await;
    let mut figures = BTreeMap::new();
    figures.insert("deliveries_per_s", total as f64 / elapsed.as_secs_f64());
    figures.insert("drain_s", elapsed.as_secs_f64());
    figures.insert(
        "other_business_done_s",
        b_done.unwrap_or(elapsed).as_secs_f64(),
    );
    figures
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "webhook drain: {} deliveries to business A and {} to business B, each receiver answering after {} ms",
        args.deliveries, args.other, args.delay_ms
    );
    println!(
        "{:>12} {:>16} {:>18} {:>10} {:>22}",
        "concurrency", "per_destination", "deliveries/s", "drain s", "B's last delivered s"
    );
    for &(concurrency, per_destination) in &args.settings {
        let figures = runtime.block_on(run(&args, concurrency, per_destination));
        println!(
            "{:>12} {:>16} {:>18.1} {:>10.2} {:>22.2}",
            concurrency,
            per_destination,
            figures["deliveries_per_s"],
            figures["drain_s"],
            figures["other_business_done_s"]
        );
    }
}

//! Criterion benchmark of the detection stage (`vigil kafka detect`) without the broker: what
//! the stage does per message — parse and validate the payload, observe it in the tenant's
//! account graph (history of both accounts, every detector), encode the facts header — over the
//! first 50,000 payloads of the AMLSim dev set, in order, into a fresh graph. One stage thread
//! serves one source partition, i.e. one tenant: the throughput is the payments per second one
//! tenant can stream before the stage is the limit (the broker's own limits come on top; see
//! `scripts/kafka-bench.sh`).
//!
//! The payloads: `VIGIL_AMLSIM_PAYLOADS`, else the dev set under /work/shared; without them the
//! benchmark stops with that message.
//!
//! Run: `cargo bench --bench detect_stage`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use vigil::engine::accounts::{AccountGraph, DetectorSettings};
use vigil::sources::kafka::detect::{message_facts, DetectionSettings, SourceMessage};

const AMLSIM_PAYLOADS: &str =
    "/work/shared/data/transactions/amlsim_dev10K_seed7/payloads.jsonl.gz";
const MESSAGES: usize = 50_000;

fn payloads() -> Vec<Vec<u8>> {
    let path = std::env::var_os("VIGIL_AMLSIM_PAYLOADS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(AMLSIM_PAYLOADS));
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (set VIGIL_AMLSIM_PAYLOADS to an AMLSim payloads.jsonl.gz)",
            path.display()
        )
    });
    BufReader::new(flate2::read::MultiGzDecoder::new(file))
        .split(b'\n')
        .map(|line| line.expect("read payloads"))
        .filter(|line| !line.trim_ascii().is_empty())
        .take(MESSAGES)
        .collect()
}

fn bench_stage(c: &mut Criterion) {
    let payloads = payloads();
    let settings = DetectionSettings {
        detectors: DetectorSettings::default(),
        restore_days: 31,
        max_future_skew_ms: 300_000,
    };
    let mut group = c.benchmark_group("detect");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(payloads.len() as u64));
    group.bench_function("stage_amlsim_50k", |b| {
        let mut scratch = Vec::with_capacity(4096);
        b.iter_batched(
            AccountGraph::default,
            |mut graph| {
                let mut bytes = 0usize;
                for payload in &payloads {
                    let message = SourceMessage {
                        tenant: Some("acme-bank"),
                        payload: Some(payload),
                        timestamp_ms: None,
                    };
                    let observed = message_facts(&mut graph, &settings, &mut scratch, message);
                    bytes += observed.map_or(0, |o| o.facts.len());
                }
                (graph, bytes)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, bench_stage);
criterion_main!(benches);

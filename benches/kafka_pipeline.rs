//! End-to-end Kafka benchmark (issue 4, "Performance"): produces N AMLSim transactions to a fresh
//! input topic and measures throughput and latency from produce time to the arrival of the output
//! record, for two pipelines on the same broker in the same run:
//!
//! - `passthrough`: an in-process consumer group that produces every input message unchanged (same
//!   key, headers, partition) to an output topic with Vigil's own idempotent `acks=all` output
//!   producer settings, committing offsets after delivery: the broker round-trips without
//!   evaluation, i.e. the ceiling the broker allows;
//! - `vigil`: `vigil serve` (a child process, release build) with a generated config naming fresh
//!   topics and an SQLite store in a temporary directory; the output is the decisions topic.
//!
//! Latency is the arrival time of an output record minus the send time of its input message
//! (both taken in this process): pass-through records carry the `bench-sent-ns` header through,
//! decisions are joined on their partition (the input's) and `vigil-source-offset` with the
//! input's delivery reports. Throughput is N / (last arrival − first send). By default every message is produced
//! as fast as the producer takes it (a burst: throughput is the pipeline's ceiling, and latency
//! includes the time a message waits behind the burst); `--rate R` paces the producer at R
//! messages per second, which measures latency at a sustained load below the ceiling.
//!
//! Needs a Kafka-protocol broker: `VIGIL_BENCH_KAFKA_BROKERS` (or `--brokers HOST:PORT`);
//! `scripts/kafka-bench.sh` starts tansu when none is given. Without one it exits non-zero.
//!
//! ```text
//! cargo bench --bench kafka_pipeline -- [--messages N] [--partitions P] [--modes passthrough,vigil]
//!     [--vigil target/release/vigil] [--payloads FILE.jsonl.gz] [--rate MSG_PER_S] [--json]
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, StreamConsumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Value};
use vigil::sources::kafka::config::KafkaConfig;

const BROKERS_ENV: &str = "VIGIL_BENCH_KAFKA_BROKERS";
const TENANT: &str = "bench-bank";
const SENT_HEADER: &str = "bench-sent-ns";
const SOURCE_OFFSET: &str = "vigil-source-offset";

struct Args {
    brokers: String,
    messages: usize,
    partitions: i32,
    modes: Vec<String>,
    vigil: PathBuf,
    payloads: PathBuf,
    json: bool,
    timeout: Duration,
    /// Messages per second to produce at; `None` produces as fast as the producer takes them.
    rate: Option<f64>,
}

fn usage_exit(problem: &str) -> ! {
    eprintln!("kafka_pipeline: {problem}");
    eprintln!(
        "usage: kafka_pipeline [--brokers HOST:PORT] [--messages N] [--partitions P] \
         [--modes passthrough,vigil] [--vigil PATH] [--payloads FILE.jsonl.gz] [--timeout-secs S] [--rate MSG_PER_S] [--json]\n\
         The broker comes from --brokers or {BROKERS_ENV}; scripts/kafka-bench.sh starts one."
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let mut args = Args {
        brokers: std::env::var(BROKERS_ENV).unwrap_or_default(),
        messages: 20_000,
        partitions: 4,
        modes: vec!["passthrough".into(), "vigil".into()],
        vigil: std::env::var_os("VIGIL_BENCH_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| target.join("release/vigil")),
        payloads: std::env::var_os("VIGIL_BENCH_PAYLOADS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                root.join("../shared/data/transactions/amlsim_dev10K_seed7/payloads.jsonl.gz")
            }),
        json: false,
        timeout: Duration::from_secs(300),
        rate: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .unwrap_or_else(|| usage_exit(&format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--brokers" => args.brokers = value("--brokers"),
            "--messages" | "-n" => {
                args.messages = value("--messages")
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--messages takes a number"))
            }
            "--partitions" => {
                args.partitions = value("--partitions")
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--partitions takes a number"))
            }
            "--modes" => {
                args.modes = value("--modes")
                    .split(',')
                    .map(|m| m.trim().to_owned())
                    .collect()
            }
            "--vigil" => args.vigil = value("--vigil").into(),
            "--payloads" => args.payloads = value("--payloads").into(),
            "--timeout-secs" => {
                args.timeout = Duration::from_secs(
                    value("--timeout-secs")
                        .parse()
                        .unwrap_or_else(|_| usage_exit("--timeout-secs takes a number")),
                )
            }
            "--rate" => {
                let rate: f64 = value("--rate")
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--rate takes messages per second"));
                args.rate = (rate > 0.0).then_some(rate);
            }
            "--json" => args.json = true,
            // cargo bench passes --bench; nothing else is expected.
            "--bench" => {}
            other => usage_exit(&format!("unknown argument {other}")),
        }
    }
    if args.brokers.trim().is_empty() {
        usage_exit(&format!(
            "no broker: set {BROKERS_ENV}=host:port or pass --brokers (scripts/kafka-bench.sh starts tansu)"
        ));
    }
    if args.messages == 0 || args.partitions < 1 {
        usage_exit("--messages and --partitions must be positive");
    }
    for mode in &args.modes {
        if mode != "passthrough" && mode != "vigil" {
            usage_exit(&format!("unknown mode {mode}"));
        }
    }
    args
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as u64
}

/// One input message: key (the user), value (a 2.1 payload).
struct Input {
    key: String,
    value: Vec<u8>,
}

/// N payloads from the AMLSim file, cycled if N is larger; references of later cycles get a
/// suffix so every message is a new transaction (not a duplicate answered from the store).
fn load_payloads(path: &Path, n: usize) -> anyhow::Result<Vec<Input>> {
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot open payloads {}: {e}", path.display()))?;
    let lines: Vec<String> = BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .take(n)
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(!lines.is_empty(), "{} holds no payloads", path.display());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut payload: Value = serde_json::from_str(&lines[i % lines.len()])?;
        let key = payload["anonymizedUserData"]["uniqueId"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("payload without anonymizedUserData.uniqueId"))?
            .to_owned();
        let cycle = i / lines.len();
        if cycle > 0 {
            if let Some(reference) = payload["transactionData"]["reference"].as_str() {
                payload["transactionData"]["reference"] = json!(format!("{reference}-r{cycle}"));
            }
        }
        out.push(Input {
            key,
            value: serde_json::to_vec(&payload)?,
        });
    }
    Ok(out)
}

fn kafka_config(brokers: &str, mode: &str) -> KafkaConfig {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let name = |what: &str| format!("bench-{mode}-{}-{what}", &run[..8]);
    KafkaConfig {
        brokers: brokers.to_owned(),
        group_id: name("group"),
        client_id: format!("vigil-bench-{mode}"),
        input_topic: name("transactions"),
        decisions_topic: name("decisions"),
        cases_topic: name("cases"),
        dead_letter_topic: name("dead-letter"),
        changelog_topic: name("state"),
        control_topic: name("control"),
        ..KafkaConfig::default()
    }
}

/// What one mode measured.
struct Outcome {
    mode: String,
    messages: usize,
    received: usize,
    dead_letters: usize,
    produce_secs: f64,
    elapsed_secs: f64,
    throughput: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    /// Records `vigil serve` wrote besides decisions: case events and changelog states.
    extra_records: Option<(f64, f64)>,
}

impl Outcome {
    fn json(&self) -> Value {
        json!({
            "mode": self.mode,
            "messages": self.messages,
            "received": self.received,
            "dead_letters": self.dead_letters,
            "produce_seconds": self.produce_secs,
            "elapsed_seconds": self.elapsed_secs,
            "throughput_per_second": self.throughput,
            "latency_ms": {"p50": self.p50_ms, "p95": self.p95_ms, "p99": self.p99_ms, "max": self.max_ms},
            "case_records": self.extra_records.map(|e| e.0),
            "changelog_records": self.extra_records.map(|e| e.1),
        })
    }
}

/// An output record as seen by the collector: arrival time and how to find its send time.
struct Arrival {
    at_ns: u64,
    sent_ns: Option<u64>,
    source: Option<(i32, i64)>,
    dead_letter: bool,
}

fn header(message: &impl Message, name: &str) -> Option<String> {
    let headers = message.headers()?;
    headers
        .iter()
        .find(|h| h.key == name)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
        .map(str::to_owned)
}

/// Reads every partition of `topics` from the beginning until `expected` records arrived (or the
/// timeout), on its own thread.
fn collect(
    brokers: String,
    topics: Vec<(String, bool)>,
    partitions: i32,
    expected: usize,
    timeout: Duration,
) -> std::thread::JoinHandle<anyhow::Result<Vec<Arrival>>> {
    std::thread::spawn(move || {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .set(
                "group.id",
                format!("bench-collector-{}", uuid::Uuid::new_v4()),
            )
            .set("enable.auto.commit", "false")
            .set("fetch.wait.max.ms", "10")
            .create()?;
        let mut assignment = TopicPartitionList::new();
        for (topic, _) in &topics {
            for p in 0..partitions {
                assignment.add_partition_offset(topic, p, Offset::Beginning)?;
            }
        }
        consumer.assign(&assignment)?;
        let mut arrivals = Vec::with_capacity(expected);
        let deadline = Instant::now() + timeout;
        while arrivals.len() < expected {
            anyhow::ensure!(
                Instant::now() < deadline,
                "only {} of {expected} output records within {timeout:?}",
                arrivals.len()
            );
            let Some(result) = consumer.poll(Duration::from_millis(100)) else {
                continue;
            };
            // librdkafka reports transient connection states (AllBrokersDown while it reconnects)
            // as errors; the deadline bounds a broker that stays away.
            let message = match result {
                Ok(message) => message,
                Err(e) => {
                    eprintln!("kafka_pipeline: collector: {e} (continuing)");
                    continue;
                }
            };
            let at_ns = now_ns();
            let dead_letter = topics
                .iter()
                .any(|(topic, dead)| *dead && topic == message.topic());
            // Outputs of input partition p are in partition p.
            let source = header(&message, SOURCE_OFFSET)
                .and_then(|o| o.parse().ok())
                .map(|offset| (message.partition(), offset));
            arrivals.push(Arrival {
                at_ns,
                sent_ns: header(&message, SENT_HEADER).and_then(|s| s.parse().ok()),
                source,
                dead_letter,
            });
        }
        Ok(arrivals)
    })
}

fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e6
}

/// Produces every input, as fast as the producer takes them or paced at `rate` messages per
/// second; returns (partition, offset) → send time, the first send and the last delivery report.
async fn produce_all(
    config: &KafkaConfig,
    inputs: &[Input],
    rate: Option<f64>,
) -> anyhow::Result<(HashMap<(i32, i64), u64>, u64, u64)> {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &config.brokers)
        .set("client.id", "vigil-bench-producer")
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("queue.buffering.max.messages", "1000000")
        .set("message.timeout.ms", "300000")
        .create()?;
    let mut pending: Vec<(u64, DeliveryFuture)> = Vec::with_capacity(inputs.len());
    let first_send = now_ns();
    let started = tokio::time::Instant::now();
    for (i, input) in inputs.iter().enumerate() {
        if let Some(rate) = rate {
            let due = started + Duration::from_secs_f64(i as f64 / rate);
            if due > tokio::time::Instant::now() {
                tokio::time::sleep_until(due).await;
            }
        }
        loop {
            let sent = now_ns();
            let headers = OwnedHeaders::new()
                .insert(Header {
                    key: config.tenant_header.as_str(),
                    value: Some(TENANT),
                })
                .insert(Header {
                    key: SENT_HEADER,
                    value: Some(&sent.to_string()),
                });
            let record = FutureRecord::<str, [u8]>::to(&config.input_topic)
                .key(input.key.as_str())
                .payload(input.value.as_slice())
                .headers(headers);
            match producer.send_result(record) {
                Ok(delivery) => {
                    pending.push((sent, delivery));
                    break;
                }
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err((e, _)) => return Err(e.into()),
            }
        }
    }
    let mut sent_at = HashMap::with_capacity(pending.len());
    for (sent, delivery) in pending {
        let delivered = delivery
            .await
            .map_err(|_| anyhow::anyhow!("producer dropped a delivery"))?
            .map_err(|(e, _)| e)?;
        sent_at.insert((delivered.partition, delivered.offset), sent);
    }
    Ok((sent_at, first_send, now_ns()))
}

/// The pass-through pipeline: consume, produce unchanged to the same partition of `output`,
/// commit input offsets once the copies are acknowledged.
fn start_passthrough(
    config: &KafkaConfig,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<Arc<StreamConsumer>> {
    let consumer: StreamConsumer = vigil::sources::kafka::client_config(config)
        .set("group.id", &config.group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[&config.input_topic])?;
    let consumer = Arc::new(consumer);
    // The same producer settings as Vigil's outputs (idempotent, acks=all).
    let producer = vigil::sources::kafka::output_producer(config)?;
    let acked: Arc<Mutex<BTreeMap<i32, i64>>> = Arc::default();
    let commit_every = Duration::from_millis(config.commit_interval_ms);
    {
        let (consumer, acked, stop, topic) = (
            consumer.clone(),
            acked.clone(),
            stop.clone(),
            config.input_topic.clone(),
        );
        tokio::spawn(async move {
            let mut committed: BTreeMap<i32, i64> = BTreeMap::new();
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(commit_every).await;
                let now = acked.lock().expect("acked").clone();
                let mut list = TopicPartitionList::new();
                for (&partition, &offset) in &now {
                    if committed.get(&partition) != Some(&offset) {
                        let _ = list.add_partition_offset(
                            &topic,
                            partition,
                            Offset::Offset(offset + 1),
                        );
                    }
                }
                if list.count() > 0 && consumer.commit(&list, CommitMode::Async).is_ok() {
                    committed = now;
                }
            }
        });
    }
    let output = config.decisions_topic.clone();
    let handle = consumer.clone();
    tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            let received = tokio::time::timeout(Duration::from_millis(200), consumer.recv()).await;
            // Copied out of the borrowed message at once: nothing borrowed lives across an await.
            let (partition, offset, headers, key, payload) = match received {
                Err(_) => continue,
                Ok(Err(e)) => {
                    eprintln!("passthrough: consume error {e}");
                    continue;
                }
                Ok(Ok(message)) => (
                    message.partition(),
                    message.offset(),
                    message.headers().map(|h| h.detach()),
                    message.key().map(<[u8]>::to_vec),
                    message.payload().map(<[u8]>::to_vec),
                ),
            };
            let delivery = loop {
                let mut record = FutureRecord::<[u8], [u8]>::to(&output).partition(partition);
                if let Some(key) = &key {
                    record = record.key(key.as_slice());
                }
                if let Some(payload) = &payload {
                    record = record.payload(payload.as_slice());
                }
                if let Some(headers) = &headers {
                    record = record.headers(headers.clone());
                }
                match producer.send_result(record) {
                    Ok(delivery) => break delivery,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    Err((e, _)) => {
                        eprintln!("passthrough: produce error {e}");
                        return;
                    }
                }
            };
            let acked = acked.clone();
            tokio::spawn(async move {
                if let Ok(Ok(_)) = delivery.await {
                    let mut acked = acked.lock().expect("acked");
                    let entry = acked.entry(partition).or_insert(offset);
                    *entry = (*entry).max(offset);
                }
            });
        }
    });
    Ok(handle)
}

/// Waits until the pass-through group holds every input partition.
async fn wait_passthrough_assigned(
    consumer: &StreamConsumer,
    partitions: i32,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    while consumer.assignment()?.count() < partitions as usize {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the pass-through group held no {partitions} partitions within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// One `vigil serve` child process.
struct Instance {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Instance {
    async fn metric(&self, name: &str) -> Option<f64> {
        let body = reqwest::get(format!("http://127.0.0.1:{}/metrics", self.port))
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        body.lines()
            .filter(|line| line.starts_with(name) && !line.starts_with('#'))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .reduce(|a, b| a + b)
    }

    async fn wait_assigned(&mut self, partitions: f64) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!(
                    "vigil exited with {status}: {}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if self.metric("vigil_kafka_assigned_partitions").await == Some(partitions) {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "vigil held no {partitions} partitions within 120 s; log: {}",
                self.log.display()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_vigil(args: &Args, config: &KafkaConfig, dir: &Path) -> anyhow::Result<Instance> {
    anyhow::ensure!(
        args.vigil.is_file(),
        "no vigil binary at {} (cargo build --release, or --vigil PATH / VIGIL_BENCH_BIN)",
        args.vigil.display()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut vigil_config = vigil::config::Config::load(None, &BTreeMap::new())?;
    vigil_config.data_dir = dir.join("data");
    std::fs::create_dir_all(&vigil_config.data_dir)?;
    let database_url = format!("sqlite://{}?mode=rwc", dir.join("data/vigil.db").display());
    vigil_config.database_url = database_url.clone();
    vigil_config.rules_dir = root.join("rules");
    vigil_config.fixtures_dir = root.join("fixtures/rules");
    vigil_config.screening.lists_dir = root.join("lists");
    vigil_config.kafka = config.clone();
    // The tenant must exist before its messages arrive (else they are dead-lettered).
    let store = vigil::store::Store::connect(&database_url, 1).await?;
    store.ensure_business(TENANT).await?;
    drop(store);
    let path = dir.join("vigil.toml");
    std::fs::write(&path, toml::to_string(&vigil_config)?)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let log = dir.join("vigil.log");
    let mut command = Command::new(&args.vigil);
    // Every VIGIL_* variable is a setting to `vigil serve` (unknown ones are refused): the
    // benchmark's own (VIGIL_BENCH_*) and a broker from the environment stay out of its way.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("VIGIL_") {
            command.env_remove(name);
        }
    }
    let child = command
        .arg("--config")
        .arg(&path)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .spawn()?;
    let mut instance = Instance { child, port, log };
    instance.wait_assigned(f64::from(args.partitions)).await?;
    Ok(instance)
}

async fn run_mode(args: &Args, mode: &str, inputs: &[Input]) -> anyhow::Result<Outcome> {
    let config = kafka_config(&args.brokers, mode);
    vigil::sources::kafka::admin::create_topics(&config, args.partitions, 1).await?;
    let dir = tempfile::tempdir()?;
    let stop = Arc::new(AtomicBool::new(false));
    let instance = if mode == "passthrough" {
        let consumer = start_passthrough(&config, stop.clone())?;
        wait_passthrough_assigned(&consumer, args.partitions).await?;
        None
    } else {
        Some(start_vigil(args, &config, dir.path()).await?)
    };
    let mut topics = vec![(config.decisions_topic.clone(), false)];
    if mode == "vigil" {
        topics.push((config.dead_letter_topic.clone(), true));
    }
    let collector = collect(
        args.brokers.clone(),
        topics,
        args.partitions,
        inputs.len(),
        args.timeout,
    );
    // Let the collector's assignment settle before the first send.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (sent_at, first_send, last_ack) = produce_all(&config, inputs, args.rate).await?;
    let arrivals = tokio::task::spawn_blocking(move || collector.join())
        .await?
        .map_err(|_| anyhow::anyhow!("collector panicked"))??;
    stop.store(true, Ordering::Relaxed);
    let extra_records = match &instance {
        Some(instance) => Some((
            instance
                .metric(&format!(
                    "vigil_kafka_produced_total{{topic=\"{}\"}}",
                    config.cases_topic
                ))
                .await
                .unwrap_or(0.0),
            instance
                .metric("vigil_kafka_changelog_records_total")
                .await
                .unwrap_or(0.0),
        )),
        None => None,
    };
    drop(instance);

    let mut latencies = Vec::with_capacity(arrivals.len());
    let mut last_arrival = first_send;
    let mut dead_letters = 0;
    for arrival in &arrivals {
        dead_letters += usize::from(arrival.dead_letter);
        last_arrival = last_arrival.max(arrival.at_ns);
        let sent = arrival
            .sent_ns
            .or_else(|| arrival.source.and_then(|s| sent_at.get(&s).copied()));
        if let Some(sent) = sent {
            latencies.push(arrival.at_ns.saturating_sub(sent));
        }
    }
    latencies.sort_unstable();
    let elapsed = (last_arrival - first_send) as f64 / 1e9;
    Ok(Outcome {
        mode: mode.to_owned(),
        messages: inputs.len(),
        received: arrivals.len(),
        dead_letters,
        produce_secs: (last_ack - first_send) as f64 / 1e9,
        elapsed_secs: elapsed,
        throughput: inputs.len() as f64 / elapsed,
        p50_ms: percentile(&latencies, 0.50),
        p95_ms: percentile(&latencies, 0.95),
        p99_ms: percentile(&latencies, 0.99),
        max_ms: latencies.last().map_or(f64::NAN, |&l| l as f64 / 1e6),
        extra_records,
    })
}

fn main() {
    let args = parse_args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result: anyhow::Result<Vec<Outcome>> = runtime.block_on(async {
        let inputs = load_payloads(&args.payloads, args.messages)?;
        let mut outcomes = Vec::new();
        for mode in &args.modes {
            eprintln!(
                "kafka_pipeline: {mode}: {} messages, {} partitions, broker {}",
                args.messages, args.partitions, args.brokers
            );
            outcomes.push(run_mode(&args, mode, &inputs).await?);
        }
        Ok(outcomes)
    });
    let outcomes = match result {
        Ok(outcomes) => outcomes,
        Err(e) => {
            eprintln!("kafka_pipeline: {e:#}");
            std::process::exit(1);
        }
    };
    let throughput = |mode: &str| {
        outcomes
            .iter()
            .find(|o| o.mode == mode)
            .map(|o| o.throughput)
    };
    let ratio = throughput("vigil")
        .zip(throughput("passthrough"))
        .map(|(v, p)| v / p);
    if args.json {
        let report = json!({
            "brokers": args.brokers,
            "messages": args.messages,
            "partitions": args.partitions,
            "rate_per_second": args.rate,
            "modes": outcomes.iter().map(Outcome::json).collect::<Vec<_>>(),
            "vigil_over_passthrough": ratio,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        return;
    }
    match args.rate {
        Some(rate) => println!("offered load: {rate:.0} messages/s (paced)"),
        None => println!("offered load: a burst (as fast as the producer takes them)"),
    }
    println!(
        "{:<12} {:>8} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "mode",
        "sent",
        "outputs",
        "dead",
        "elapsed s",
        "msg/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms"
    );
    for o in &outcomes {
        println!(
            "{:<12} {:>8} {:>8} {:>6} {:>10.2} {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            o.mode,
            o.messages,
            o.received,
            o.dead_letters,
            o.elapsed_secs,
            o.throughput,
            o.p50_ms,
            o.p95_ms,
            o.p99_ms,
            o.max_ms
        );
    }
    for o in &outcomes {
        if let Some((cases, changelog)) = o.extra_records {
            println!(
                "{}: also wrote {cases:.0} case events and {changelog:.0} changelog states",
                o.mode
            );
        }
    }
    if let Some(ratio) = ratio {
        println!(
            "vigil / passthrough throughput: {:.1} % (target ≥ 80 %)",
            ratio * 100.0
        );
    }
}

//! The Kafka source against a real broker: the end-to-end flow, the dead-letter path, a SIGKILL
//! mid-stream and a restart, and a second instance joining the group.
//!
//! The broker comes from `VIGIL_TEST_KAFKA_BROKERS` (scripts/test.sh installs and starts tansu
//! on loopback); without it these tests fail, they never skip. Each test uses its own topics and
//! consumer group, and runs `vigil serve` as a child process so it can be killed for real.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Value};
use vigil::sources::kafka::config::KafkaConfig;

const BROKERS_ENV: &str = "VIGIL_TEST_KAFKA_BROKERS";
const PARTITIONS: i32 = 4;
const TENANT: &str = "acme-bank";
/// The consumers' `session.timeout.ms` (librdkafka's default, set explicitly so the crash test can
/// wait it out): how long the broker keeps a member that stopped heartbeating.
const SESSION_TIMEOUT: Duration = Duration::from_secs(45);

fn brokers() -> String {
    std::env::var(BROKERS_ENV).unwrap_or_else(|_| {
        panic!(
            "{BROKERS_ENV} is not set: these tests need a Kafka-protocol broker. Run scripts/test.sh \
             (it builds and starts tansu on loopback), or set {BROKERS_ENV}=host:port"
        )
    })
}

/// Topic and group names of one test.
fn kafka_config(test: &str) -> KafkaConfig {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let name = |what: &str| format!("t-{test}-{}-{what}", &run[..8]);
    KafkaConfig {
        brokers: brokers(),
        group_id: name("group"),
        client_id: format!("vigil-test-{test}"),
        input_topic: name("transactions"),
        decisions_topic: name("decisions"),
        cases_topic: name("cases"),
        dead_letter_topic: name("dead-letter"),
        changelog_topic: name("state"),
        control_topic: name("control"),
        commit_interval_ms: 200,
        // A 90 s rebalance timeout instead of librdkafka's 300 s bounds how long a rebalance
        // can wait for a member; the session timeout is the one the crash test waits out.
        properties: [
            ("max.poll.interval.ms".to_owned(), "90000".to_owned()),
            (
                "session.timeout.ms".to_owned(),
                SESSION_TIMEOUT.as_millis().to_string(),
            ),
        ]
        .into(),
        ..KafkaConfig::default()
    }
}

async fn create_topics(config: &KafkaConfig) {
    let created = vigil::sources::kafka::admin::create_topics(config, PARTITIONS, 1)
        .await
        .expect("create test topics");
    assert_eq!(created.len(), 6, "{created:?}");
}

/// One `vigil serve` child process.
struct Instance {
    child: Child,
    port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The configurations of two instances sharing a database and topics, each in its own folder.
fn two_configs(dir: &Path, database_url: &str, kafka: &KafkaConfig) -> (PathBuf, PathBuf) {
    let config = |name: &str| {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).expect("dir");
        write_config(&folder, database_url, kafka)
    };
    (config("a"), config("b"))
}

fn write_config(dir: &Path, database_url: &str, kafka: &KafkaConfig) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        crate::common::config_for(dir, &root.join("rules"), &root.join("fixtures/rules"));
    config.database_url = database_url.to_owned();
    config.kafka = kafka.clone();
    let path = dir.join(format!("vigil-{}.toml", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, toml::to_string(&config).expect("config as toml")).expect("config file");
    path
}

impl Instance {
    fn start(config: &Path) -> Instance {
        let port = free_port();
        // Appended, so a restarted instance's log follows the killed one's.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(config.with_extension("log"))
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_vigil"))
            .arg("--config")
            .arg(config)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env_remove("VIGIL_KAFKA_BROKERS")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start vigil serve");
        Instance { child, port }
    }

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

    /// Waits until the instance serves and holds `partitions` partitions (or any, if `None`).
    async fn wait_assigned(&mut self, partitions: Option<f64>, log: &Path) {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "vigil exited with {status}: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
            let assigned = self.metric("vigil_kafka_assigned_partitions").await;
            match (assigned, partitions) {
                (Some(n), Some(want)) if n == want => return,
                (Some(n), None) if n > 0.0 => return,
                _ => {}
            }
            assert!(
                Instant::now() < deadline,
                "no partitions assigned in 180 s: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Starts a second member of `first`'s group and waits until the two share the partitions.
    async fn join(first: &mut Instance, first_config: &Path, config: &Path) -> Instance {
        let mut second = Instance::start(config);
        second
            .wait_assigned(None, &config.with_extension("log"))
            .await;
        let taken = second
            .metric("vigil_kafka_assigned_partitions")
            .await
            .unwrap_or(0.0);
        first
            .wait_assigned(
                Some(f64::from(PARTITIONS) - taken),
                &first_config.with_extension("log"),
            )
            .await;
        second
    }

    /// Waits until the instance holds every partition (it is alone in its group).
    async fn wait_all_assigned(&mut self, config: &Path) {
        self.wait_assigned(Some(f64::from(PARTITIONS)), &config.with_extension("log"))
            .await;
    }

    fn kill(mut self) {
        // SIGKILL: no drain, no commit, no changelog flush.
        self.child.kill().expect("kill -9");
        let _ = self.child.wait();
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("wait for vigil")
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn ensure_tenant(database_url: &str) {
    let store = vigil::store::Store::connect(database_url, 1)
        .await
        .expect("open the store");
    store.ensure_business(TENANT).await.expect("tenant");
}

/// A stream of transactions for `users` users, several per user within hours, some large, so
/// velocity, limit and amount rules fire and decisions depend on per-user state.
fn transactions(prefix: &str, users: usize, per_user: usize) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for round in 0..per_user {
        for u in 0..users {
            let user = format!("{prefix}-user-{u}");
            let reference = format!("{prefix}-{u}-{round}");
            let amount = match (u + round) % 7 {
                0 => 9_950_000.0,
                1 => 5_000.0,
                2 => 120_000.0,
                3 => 2_000_000.0,
                _ => 15_000.0 + (u * 37 + round * 11) as f64,
            };
            let minute = round * 7 + u % 5;
            let date = format!("2025-03-10T{:02}:{:02}:00Z", 8 + minute / 60, minute % 60);
            let mut payload = crate::common::tx(&reference, &user, amount, &date);
            payload["transactionData"]["receiverAccount"] =
                json!(format!("rcv-{}", (u + round) % 13));
            // Limits make decisions depend on state: the daily limit is breached by the sum of
            // the day's debits, the individual limit by the largest amounts alone.
            payload["limits"] =
                json!({"dailyLimit": 3_000_000.0, "individualTransactionLimit": 2_500_000.0});
            out.push((user, payload));
        }
    }
    out
}

async fn produce(config: &KafkaConfig, messages: &[(Option<String>, Option<String>, Vec<u8>)]) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &config.brokers)
        .set("linger.ms", "5")
        .create()
        .expect("test producer");
    let mut deliveries = Vec::new();
    for (key, tenant, value) in messages {
        let mut headers = OwnedHeaders::new();
        if let Some(tenant) = tenant {
            headers = headers.insert(Header {
                key: "vigil-tenant",
                value: Some(tenant.as_str()),
            });
        }
        let mut record = FutureRecord::<str, [u8]>::to(&config.input_topic)
            .payload(value.as_slice())
            .headers(headers);
        if let Some(key) = key {
            // Partitioned like every producer keyed by user: by the key.
            record = record.key(key.as_str());
        }
        deliveries.push(
            producer
                .send_result(record)
                .map_err(|(e, _)| e)
                .expect("queued"),
        );
    }
    for delivery in deliveries {
        delivery.await.expect("delivered").expect("acknowledged");
    }
}

async fn produce_transactions(config: &KafkaConfig, txs: &[(String, Value)]) {
    let messages: Vec<_> = txs
        .iter()
        .map(|(user, payload)| {
            (
                Some(user.clone()),
                Some(TENANT.to_owned()),
                serde_json::to_vec(payload).expect("json"),
            )
        })
        .collect();
    produce(config, &messages).await;
}

/// A record read back from an output topic.
#[derive(Debug, Clone)]
struct Record {
    partition: i32,
    key: Option<String>,
    headers: HashMap<String, String>,
    value: Value,
}

fn end_offsets(config: &KafkaConfig, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &config.brokers)
        .create()
        .expect("consumer");
    (0..PARTITIONS)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Duration::from_secs(30))
                .map(|(_, high)| high)
                .unwrap_or(0)
        })
        .sum()
}

/// Waits until `topic` holds at least `count` records.
async fn wait_for_records(config: &KafkaConfig, topic: &str, count: i64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let cloned = config.clone();
        let name = topic.to_owned();
        let have = tokio::task::spawn_blocking(move || end_offsets(&cloned, &name))
            .await
            .expect("watermarks");
        if have >= count {
            return;
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> = std::fs::read_dir(std::env::temp_dir())
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.path().is_dir())
                .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter(|text| text.contains(&config.input_topic))
                .collect();
            panic!(
                "{topic} holds {have} records, expected {count}; vigil logs:\n{}",
                logs.join("\n----\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every record of `topic`, read from the start of each partition to its end.
fn read_all(config: &KafkaConfig, topic: &str) -> Vec<Record> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &config.brokers)
        .set("group.id", "vigil-test-reader")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut records = Vec::new();
    for partition in 0..PARTITIONS {
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, Duration::from_secs(30))
            .expect("watermarks");
        if high <= low {
            continue;
        }
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(topic, partition, Offset::Offset(low))
            .expect("offset");
        consumer.assign(&list).expect("assign");
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut next = low;
        while next < high {
            assert!(
                Instant::now() < deadline,
                "reading {topic}/{partition} timed out"
            );
            let Some(message) = consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            let message = message.expect("message");
            next = message.offset() + 1;
            let headers = message
                .headers()
                .map(|h| {
                    h.iter()
                        .map(|h| {
                            (
                                h.key.to_owned(),
                                String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            records.push(Record {
                partition,
                key: message
                    .key()
                    .map(|k| String::from_utf8_lossy(k).into_owned()),
                headers,
                value: serde_json::from_slice(message.payload().unwrap_or_default())
                    .expect("records are JSON"),
            });
        }
    }
    records
}

/// What a decision says, without its timestamps: (action, riskScore, sorted rule ids).
type Verdict = (String, String, Vec<String>);

fn verdicts(decisions: &[Record]) -> BTreeMap<String, Verdict> {
    let mut out = BTreeMap::new();
    for record in decisions {
        let decision = &record.value["decision"];
        let mut rules: Vec<String> = decision["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect();
        rules.sort();
        let verdict = (
            decision["action"]["result"]
                .as_str()
                .expect("action")
                .to_owned(),
            decision["riskScore"].as_str().expect("score").to_owned(),
            rules,
        );
        let reference = record.value["reference"]
            .as_str()
            .expect("reference")
            .to_owned();
        assert!(
            out.insert(reference.clone(), verdict).is_none(),
            "reference {reference} has more than one decision"
        );
    }
    out
}

async fn read(config: &KafkaConfig, topic: &str) -> Vec<Record> {
    let config = config.clone();
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || read_all(&config, &topic))
        .await
        .expect("read")
}

/// One test's topics, an SQLite store with the tenant, and a config naming both.
struct Single {
    dir: tempfile::TempDir,
    kafka: KafkaConfig,
    database_url: String,
    config: PathBuf,
}

async fn single(test: &str) -> Single {
    let dir = tempfile::tempdir().expect("tempdir");
    let kafka = kafka_config(test);
    create_topics(&kafka).await;
    let database_url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("vigil.db").display()
    );
    ensure_tenant(&database_url).await;
    let config = write_config(dir.path(), &database_url, &kafka);
    Single {
        dir,
        kafka,
        database_url,
        config,
    }
}

/// Runs `txs` through one instance that is never interrupted: the reference decisions.
async fn single_instance_verdicts(txs: &[(String, Value)]) -> BTreeMap<String, Verdict> {
    let Single {
        dir: _dir,
        kafka,
        config,
        ..
    } = single("reference").await;
    let mut instance = Instance::start(&config);
    instance.wait_all_assigned(&config).await;
    produce_transactions(&kafka, txs).await;
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        txs.len() as i64,
        Duration::from_secs(120),
    )
    .await;
    let status = instance.terminate();
    assert!(status.success(), "vigil stopped with {status}");
    verdicts(&read(&kafka, &kafka.decisions_topic).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_transactions_get_one_decision_each_and_a_case_event_when_not_approved() {
    let Single {
        dir: _dir,
        kafka,
        database_url,
        config,
    } = single("e2e").await;
    let mut instance = Instance::start(&config);
    instance.wait_all_assigned(&config).await;

    let txs = transactions("e2e", 40, 6);
    produce_transactions(&kafka, &txs).await;
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        txs.len() as i64,
        Duration::from_secs(120),
    )
    .await;
    let status = instance.terminate();
    assert!(status.success(), "graceful stop: {status}");

    let decisions = read(&kafka, &kafka.decisions_topic).await;
    let verdicts = verdicts(&decisions);
    assert_eq!(verdicts.len(), txs.len(), "one decision per input");
    for record in &decisions {
        assert_eq!(record.value["schema"], "vigil.decision/1");
        assert_eq!(record.value["tenant"], TENANT);
        let user = record.value["userId"].as_str().expect("userId");
        assert_eq!(record.key.as_deref(), Some(user), "keyed by user");
        assert_eq!(
            record
                .headers
                .keys()
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>(),
            ["vigil-id", "vigil-source-offset"].into_iter().collect(),
            "only the headers a reader needs without parsing the value"
        );
        assert_eq!(
            record.headers["vigil-source-offset"],
            record.value["source"]["offset"].to_string()
        );
        assert_eq!(
            record.headers["vigil-id"],
            record.value["transactionId"].as_str().expect("id")
        );
        assert_eq!(record.value["source"]["partition"], record.partition);
    }
    let not_approved: Vec<&String> = verdicts
        .iter()
        .filter(|(_, v)| v.0 != "approved")
        .map(|(r, _)| r)
        .collect();
    assert!(!not_approved.is_empty(), "the stream triggers rules");
    assert!(not_approved.len() < verdicts.len(), "and approves some");
    let cases = read(&kafka, &kafka.cases_topic).await;
    let mut case_refs: Vec<&str> = cases
        .iter()
        .map(|c| c.value["reference"].as_str().expect("reference"))
        .collect();
    case_refs.sort();
    let mut expected: Vec<&str> = not_approved.iter().map(|s| s.as_str()).collect();
    expected.sort();
    assert_eq!(
        case_refs, expected,
        "one case event per decision that is not approved"
    );
    assert!(cases.iter().all(|c| c.value["schema"] == "vigil.case/1"));

    // The decisions are stored too: the same transaction read back through the store.
    let store = vigil::store::Store::connect(&database_url, 1)
        .await
        .expect("store");
    let tenant = store
        .business_by_name(TENANT)
        .await
        .expect("query")
        .expect("tenant");
    let first = &decisions[0].value;
    let stored = store
        .transaction(tenant.id, first["transactionId"].as_str().expect("id"))
        .await
        .expect("query")
        .expect("stored");
    assert_eq!(stored.intake, "stream");
    let stored_decision: Value =
        serde_json::from_str(stored.decision.as_deref().expect("decided")).expect("json");
    assert_eq!(stored_decision, first["decision"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_messages_go_to_the_dead_letter_topic_and_do_not_block_their_partition() {
    let Single {
        dir: _dir,
        kafka,
        config,
        ..
    } = single("dlq").await;
    let mut instance = Instance::start(&config);
    instance.wait_all_assigned(&config).await;

    let user = "dlq-user".to_owned();
    let good = |reference: &str| {
        serde_json::to_vec(&crate::common::tx(
            reference,
            &user,
            1500.0,
            "2025-03-10T10:00:00Z",
        ))
        .expect("json")
    };
    let mut negative = crate::common::tx("dlq-negative", &user, 10.0, "2025-03-10T10:00:00Z");
    negative["transactionData"]["amount"] = json!(-5);
    let tenant = Some(TENANT.to_owned());
    let key = Some(user.clone());
    // All keyed by the same user, so all on one partition, in this order.
    let messages = vec![
        (key.clone(), tenant.clone(), b"{not json".to_vec()),
        (key.clone(), None, good("dlq-no-tenant")),
        (
            key.clone(),
            Some("nobody".to_owned()),
            good("dlq-unknown-tenant"),
        ),
        (
            key.clone(),
            tenant.clone(),
            serde_json::to_vec(&negative).expect("json"),
        ),
        (key.clone(), tenant.clone(), good("dlq-good")),
    ];
    produce(&kafka, &messages).await;
    // The wrong key lands on whatever partition it hashes to.
    produce(
        &kafka,
        &[(
            Some("someone-else".into()),
            tenant.clone(),
            good("dlq-wrong-key"),
        )],
    )
    .await;

    wait_for_records(&kafka, &kafka.dead_letter_topic, 5, Duration::from_secs(60)).await;
    wait_for_records(&kafka, &kafka.decisions_topic, 1, Duration::from_secs(60)).await;
    let status = instance.terminate();
    assert!(status.success(), "graceful stop: {status}");

    let dead = read(&kafka, &kafka.dead_letter_topic).await;
    assert_eq!(dead.len(), 5, "{dead:#?}");
    let by_error: HashMap<&str, &Record> = dead
        .iter()
        .map(|r| (r.value["error"].as_str().expect("error"), r))
        .collect();
    assert!(by_error.contains_key("the message is not JSON"));
    assert!(by_error.contains_key("the message names no tenant"));
    assert!(by_error.contains_key("unknown tenant"));
    assert!(by_error.contains_key("the message key is not the user's uniqueId"));
    let invalid = by_error["request validation failed"];
    assert_eq!(
        invalid.value["errors"][0]["field"],
        "transactionData.amount"
    );
    for record in &dead {
        assert_eq!(record.value["schema"], "vigil.dead-letter/1");
        let offset = record.value["source"]["offset"]
            .as_i64()
            .expect("source offset");
        assert_eq!(record.headers["vigil-source-offset"], offset.to_string());
        assert_eq!(record.value["source"]["topic"], kafka.input_topic.as_str());
        assert!(
            record.value["payload"].is_string(),
            "the original payload travels along"
        );
    }
    let decisions = read(&kafka, &kafka.decisions_topic).await;
    assert_eq!(decisions.len(), 1);
    assert_eq!(
        decisions[0].value["reference"], "dlq-good",
        "the good message behind the bad ones is decided"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_stream_restarts_without_losing_or_repeating_a_decision() {
    let txs = transactions("crash", 150, 20);
    let reference = single_instance_verdicts(&txs).await;

    let Single {
        dir: _dir,
        kafka,
        config,
        ..
    } = single("crash").await;
    let started = Instant::now();
    let phase = |what: &str| {
        eprintln!(
            "crash test: {what} at {:.1} s",
            started.elapsed().as_secs_f64()
        )
    };
    produce_transactions(&kafka, &txs).await;
    phase("produced");

    let mut first = Instance::start(&config);
    first.wait_all_assigned(&config).await;
    phase("first instance assigned");
    let total = txs.len() as i64;
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        total / 4,
        Duration::from_secs(120),
    )
    .await;
    first.kill();
    phase("first instance killed");
    let written = end_offsets(&kafka, &kafka.decisions_topic);
    assert!(
        written < total,
        "killed mid-stream ({written} of {total} written)"
    );
    // The restart waits until the broker has expired the killed member, as an operator's restart
    // after a crash usually does. Restarting sooner is also correct on Kafka, but tansu 0.6.0 has a
    // race there: when the dead leader's session expires between the new member's JoinGroup and
    // its SyncGroup, tansu completes the group with the follower's empty assignment, and the new
    // member then holds no partitions until the next rebalance.
    tokio::time::sleep(SESSION_TIMEOUT + Duration::from_secs(5)).await;

    let mut second = Instance::start(&config);
    second.wait_all_assigned(&config).await;
    phase("restarted instance assigned");
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        total,
        Duration::from_secs(180),
    )
    .await;
    phase("all decisions written");
    // Let anything that would be a duplicate arrive before counting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let status = second.terminate();
    assert!(status.success(), "graceful stop: {status}");

    let decisions = read(&kafka, &kafka.decisions_topic).await;
    assert_eq!(
        decisions.len() as i64,
        total,
        "exactly one decision per input"
    );
    let after_crash = verdicts(&decisions);
    assert_eq!(after_crash.len(), txs.len());
    assert_eq!(
        after_crash, reference,
        "the same decisions as an uninterrupted run"
    );
    let cases = read(&kafka, &kafka.cases_topic).await;
    let not_approved = reference.values().filter(|v| v.0 != "approved").count();
    assert_eq!(
        cases.len(),
        not_approved,
        "exactly one case event per decision not approved"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_takes_over_partitions_and_decisions_match_a_single_instance() {
    let txs = transactions("pair", 120, 16);
    let reference = single_instance_verdicts(&txs).await;

    // Both instances share one database, as a deployment does (PostgreSQL).
    let database = crate::common::TestDatabase::create().await;
    ensure_tenant(&database.url).await;
    let kafka = kafka_config("pair");
    create_topics(&kafka).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (config_a, config_b) = two_configs(dir.path(), &database.url, &kafka);

    let mut a = Instance::start(&config_a);
    a.wait_assigned(Some(PARTITIONS as f64), &config_a.with_extension("log"))
        .await;
    let half = txs.len() / 2;
    produce_transactions(&kafka, &txs[..half]).await;
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        half as i64,
        Duration::from_secs(120),
    )
    .await;

    let b = Instance::join(&mut a, &config_a, &config_b).await;
    produce_transactions(&kafka, &txs[half..]).await;
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        txs.len() as i64,
        Duration::from_secs(120),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let consumed_b = b.metric("vigil_kafka_consumed_total").await.unwrap_or(0.0);
    assert!(consumed_b > 0.0, "the second instance took part");
    let restored_b = b
        .metric("vigil_kafka_restored_users_total")
        .await
        .unwrap_or(0.0);
    assert!(
        restored_b > 0.0,
        "the second instance restored its users' state from the changelog"
    );
    assert!(a.terminate().success());
    assert!(b.terminate().success());

    let decisions = read(&kafka, &kafka.decisions_topic).await;
    assert_eq!(decisions.len(), txs.len(), "exactly one decision per input");
    assert_eq!(
        verdicts(&decisions),
        reference,
        "the same decisions as one instance alone"
    );
}

/// POSTs (or DELETEs) on one instance's HTTP API with an issued key.
async fn call(
    instance: &Instance,
    key: &(String, String),
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .request(
            method,
            format!(
                "http://127.0.0.1:{}/api/v1/transaction-monitoring{path}",
                instance.port
            ),
        )
        .header("apiKey", &key.0)
        .header("apiSecret", &key.1);
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Asks `instance` for an instant decision and answers the triggered rule ids.
async fn instant_rules(
    instance: &Instance,
    key: &(String, String),
    reference: &str,
) -> Vec<String> {
    let payload = crate::common::tx(reference, "ctl-user", 1_500.0, "2025-03-10T10:00:00Z");
    let (status, body) = call(
        instance,
        key,
        reqwest::Method::POST,
        "/instant",
        Some(&payload),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    crate::common::rule_ids(&body)
}

/// Polls until `check` holds, for at most `within`.
async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blacklist_and_rule_changes_on_one_instance_reach_the_other() {
    let database = crate::common::TestDatabase::create().await;
    ensure_tenant(&database.url).await;
    let store = vigil::store::Store::connect(&database.url, 1)
        .await
        .expect("store");
    let issued = vigil::api::auth::issue_key(&store, TENANT, true)
        .await
        .expect("key");
    let key = (issued.api_key, issued.api_secret);
    let kafka = kafka_config("control");
    create_topics(&kafka).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut configs = Vec::new();
    for name in ["a", "b"] {
        let own = dir.path().join(name);
        // Each instance has its own copy of the rule pack, as separately deployed pods do.
        let rules = own.join("rules");
        std::fs::create_dir_all(&rules).expect("dir");
        for entry in std::fs::read_dir(root.join("rules")).expect("rules") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), rules.join(entry.file_name())).expect("copy rule");
        }
        let mut config = crate::common::config_for(&own, &rules, &root.join("fixtures/rules"));
        config.database_url = database.url.clone();
        config.kafka = kafka.clone();
        let path = own.join("vigil.toml");
        std::fs::write(&path, toml::to_string(&config).expect("toml")).expect("config");
        configs.push((path, rules));
    }
    let mut a = Instance::start(&configs[0].0);
    a.wait_assigned(None, &configs[0].0.with_extension("log"))
        .await;
    let mut b = Instance::start(&configs[1].0);
    b.wait_assigned(None, &configs[1].0.with_extension("log"))
        .await;
    assert!(!instant_rules(&b, &key, "ctl-0")
        .await
        .contains(&"TM-017".to_owned()));

    // A blacklist entry added through A decides B's next transaction.
    let (status, body) = call(
        &a,
        &key,
        reqwest::Method::POST,
        "/blacklist-user",
        Some(&json!({"userId": "ctl-user"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut n = 0;
    eventually(
        Duration::from_secs(10),
        "B sees A's blacklist entry",
        || {
            n += 1;
            let reference = format!("ctl-add-{n}");
            let (b, key) = (&b, &key);
            async move {
                instant_rules(b, key, &reference)
                    .await
                    .contains(&"TM-017".to_owned())
            }
        },
    )
    .await;

    // Removed through A: B stops flagging the user.
    let (status, body) = call(
        &a,
        &key,
        reqwest::Method::DELETE,
        "/blacklist-user/ctl-user",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually(Duration::from_secs(10), "B sees the removal", || {
        n += 1;
        let reference = format!("ctl-remove-{n}");
        let (b, key) = (&b, &key);
        async move {
            !instant_rules(b, key, &reference)
                .await
                .contains(&"TM-017".to_owned())
        }
    })
    .await;
    assert!(
        b.metric("vigil_kafka_control_applied_total")
            .await
            .unwrap_or(0.0)
            >= 2.0
    );

    // A rule pack changed only on A: B reloads when A announces it, and says its own pack
    // differs; once B gets the same files, it is back in sync.
    let extra = "//! id = \"CTL-1\"\n//! name = \"Control test rule\"\n//! description = \"Fires on one test reference.\"\n//! severity = \"low\"\n//! score = 0.01\ntx.reference == \"ctl-rule\"\n";
    std::fs::write(configs[0].1.join("CTL-1.rhai"), extra).expect("rule on a");
    eventually(
        Duration::from_secs(15),
        "B flags its pack as out of sync",
        || {
            let b = &b;
            async move { b.metric("vigil_kafka_rules_out_of_sync").await == Some(1.0) }
        },
    )
    .await;
    std::fs::write(configs[1].1.join("CTL-1.rhai"), extra).expect("rule on b");
    eventually(
        Duration::from_secs(15),
        "B back in sync with the same files",
        || {
            let b = &b;
            async move { b.metric("vigil_kafka_rules_out_of_sync").await == Some(0.0) }
        },
    )
    .await;
    assert!(instant_rules(&b, &key, "ctl-rule")
        .await
        .contains(&"CTL-1".to_owned()));
    assert!(a.terminate().success());
    assert!(b.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repartition_rekeys_a_topic_by_unique_id_and_resumes_after_its_commit() {
    let kafka = kafka_config("rekey");
    create_topics(&kafka).await;
    let raw = create_source_topic(&kafka, "raw").await;

    // Keyed by reference, as a core-banking outbox might key them, plus one naming no user.
    let txs = transactions("rekey", 4, 3);
    let mut messages: Vec<_> = txs
        .iter()
        .map(|(_, payload)| {
            (
                Some(
                    payload["transactionData"]["reference"]
                        .as_str()
                        .expect("ref")
                        .to_owned(),
                ),
                Some(TENANT.to_owned()),
                serde_json::to_vec(payload).expect("json"),
            )
        })
        .collect();
    messages.push((
        Some("no-user".to_owned()),
        Some(TENANT.to_owned()),
        br#"{"transactionData":{"reference":"x"}}"#.to_vec(),
    ));
    let mut to_raw = kafka.clone();
    to_raw.input_topic = raw.clone();
    produce(&to_raw, &messages).await;
    // A producer's own account facts are not passed on: only the detection stage gives them.
    let forged = FutureRecord::to(&raw)
        .key("forged")
        .payload(messages[0].2.as_slice())
        .headers(
            OwnedHeaders::new()
                .insert(Header {
                    key: "vigil-tenant",
                    value: Some(TENANT),
                })
                .insert(Header {
                    key: "vigil-graph",
                    value: Some(r#"{"cycleLength":9}"#),
                }),
        );
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &kafka.brokers)
        .create()
        .expect("producer");
    producer
        .send(forged, Duration::from_secs(30))
        .await
        .expect("delivered");

    let dir = tempfile::tempdir().expect("tempdir");
    let database_url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("vigil.db").display()
    );
    let config = write_config(dir.path(), &database_url, &kafka);
    let first = forward_to_end(&config, "repartition", &raw).await;
    assert!(
        first.contains("forwarded 14 messages") && first.contains("1 without a uniqueId"),
        "{first}"
    );
    let forwarded = read(&kafka, &kafka.input_topic).await;
    assert_eq!(forwarded.len(), 14);
    for record in &forwarded {
        assert_eq!(record.headers["vigil-tenant"], TENANT, "headers kept");
        assert!(
            !record.headers.contains_key("vigil-graph"),
            "a source's facts header is dropped"
        );
        match record.value["anonymizedUserData"]["uniqueId"].as_str() {
            Some(user) => assert_eq!(record.key.as_deref(), Some(user), "keyed by uniqueId"),
            None => assert_eq!(record.key.as_deref(), Some("no-user"), "original key kept"),
        }
    }
    // Every message of one user is on one partition.
    let mut partition_of: HashMap<String, i32> = HashMap::new();
    for record in forwarded
        .iter()
        .filter(|r| r.key.as_deref() != Some("no-user"))
    {
        let user = record.key.clone().expect("key");
        assert_eq!(
            *partition_of.entry(user).or_insert(record.partition),
            record.partition
        );
    }
    // A second run starts after the first one's commit: nothing is forwarded twice.
    let second = forward_to_end(&config, "repartition", &raw).await;
    assert!(second.contains("forwarded 0 messages"), "{second}");
    assert_eq!(read(&kafka, &kafka.input_topic).await.len(), 14);
}

/// Payloads with the user each belongs to.
type Payments = Vec<(String, Value)>;

/// Rings of first-time payments (3 to 5 accounts) whose every payment belongs to another user, so
/// the payments of one ring sit on different input partitions: only the detection stage sees the
/// cycle. Returns the payments without their closing ones, and the closing ones.
fn rings(prefix: &str, count: usize) -> (Payments, Payments) {
    let (mut open, mut closing) = (Vec::new(), Vec::new());
    for ring in 0..count {
        let length = 3 + ring % 3;
        let accounts: Vec<String> = (0..length)
            .map(|i| format!("{prefix}-r{ring}-a{i}"))
            .collect();
        for hop in 0..length {
            let (from, to) = (&accounts[hop], &accounts[(hop + 1) % length]);
            let user = format!("u-{from}");
            let date = format!("2025-03-{:02}T10:{:02}:00Z", 1 + hop * 2, ring % 60);
            let reference = format!("{prefix}-ring{ring}-hop{hop}");
            let amount = 100_000.0 - 2_000.0 * hop as f64;
            let mut payload = crate::common::tx(&reference, &user, amount, &date);
            payload["transactionData"]["senderAccount"] = json!(from);
            payload["transactionData"]["receiverAccount"] = json!(to);
            if hop + 1 == length {
                closing.push((user, payload));
            } else {
                open.push((user, payload));
            }
        }
    }
    (open, closing)
}

/// Produces `txs` to `topic` keyed by tenant, as the detection stage's source expects.
async fn produce_payments(config: &KafkaConfig, topic: &str, txs: &[(String, Value)]) {
    let mut to_topic = config.clone();
    to_topic.input_topic = topic.to_owned();
    let messages: Vec<_> = txs
        .iter()
        .map(|(_, payload)| {
            (
                Some(TENANT.to_owned()),
                Some(TENANT.to_owned()),
                serde_json::to_vec(payload).expect("json"),
            )
        })
        .collect();
    produce(&to_topic, &messages).await;
}

/// Runs `vigil kafka COMMAND --from TOPIC --exit-at-end` (repartition, detect) and returns what
/// it printed.
async fn forward_to_end(config: &Path, command: &str, topic: &str) -> String {
    let (config, command, topic) = (config.to_owned(), command.to_owned(), topic.to_owned());
    tokio::task::spawn_blocking(move || {
        let output = Command::new(env!("CARGO_BIN_EXE_vigil"))
            .arg("--config")
            .arg(&config)
            .args(["kafka", &command, "--from", &topic, "--exit-at-end"])
            .env_remove("VIGIL_KAFKA_BROKERS")
            .output()
            .expect("run vigil kafka");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    })
    .await
    .expect("forward")
}

/// A source topic of 2 partitions, `<input topic>-<suffix>`, next to a test's topics.
async fn create_source_topic(kafka: &KafkaConfig, suffix: &str) -> String {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    let topic = format!("{}-{suffix}", kafka.input_topic);
    let admin: AdminClient<rdkafka::client::DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &kafka.brokers)
        .create()
        .expect("admin");
    let created = admin
        .create_topics(
            &[NewTopic::new(&topic, 2, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .expect("create source topic");
    assert!(created.iter().all(|r| r.is_ok()), "{created:?}");
    topic
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detection_stage_gives_streamed_payments_account_facts_that_a_restart_and_a_second_instance_keep(
) {
    let (open, closing) = rings("ring", 9);
    let ordinary = transactions("graph", 24, 4);
    let (early, late) = ordinary.split_at(ordinary.len() / 2);
    let first: Vec<_> = open.iter().chain(early).cloned().collect();
    let second: Vec<_> = closing.iter().chain(late).cloned().collect();
    let total = (first.len() + second.len()) as i64;

    // Reference: one stage run over everything, one instance.
    let reference = {
        let Single {
            dir: _dir,
            kafka,
            config,
            ..
        } = single("graph-one").await;
        let payments = create_source_topic(&kafka, "payments").await;
        produce_payments(&kafka, &payments, &first).await;
        produce_payments(&kafka, &payments, &second).await;
        let printed = forward_to_end(&config, "detect", &payments).await;
        assert!(
            printed.contains(&format!("forwarded {total} messages"))
                && printed.contains(&format!("({total} with account facts")),
            "{printed}"
        );
        let mut instance = Instance::start(&config);
        instance.wait_all_assigned(&config).await;
        wait_for_records(
            &kafka,
            &kafka.decisions_topic,
            total,
            Duration::from_secs(120),
        )
        .await;
        assert_eq!(
            instance.metric("vigil_kafka_account_facts_total").await,
            Some(total as f64),
            "every message came with account facts"
        );
        assert!(instance.terminate().success());
        let decisions = read(&kafka, &kafka.decisions_topic).await;
        // The closing payments' cycles, with the ring as evidence.
        for (_, payload) in &closing {
            let reference = payload["transactionData"]["reference"]
                .as_str()
                .expect("ref");
            let decision = decisions
                .iter()
                .find(|r| r.value["reference"] == reference)
                .expect("a decision per closing payment");
            let cycle = decision.value["decision"]["rules"]
                .as_array()
                .expect("rules")
                .iter()
                .find(|r| r["id"] == "TM-033")
                .unwrap_or_else(|| panic!("{reference} closes a cycle: {}", decision.value));
            assert_eq!(cycle["evidence"]["detector"], "cycle", "{cycle}");
            let legs = cycle["evidence"]["legs"].as_array().expect("legs");
            assert!(
                legs.iter().any(|l| l["reference"] == reference) && legs.len() >= 3,
                "{cycle}"
            );
        }
        verdicts(&decisions)
    };

    // The same payments with the stage stopped half-way (the second run rebuilds the graph
    // from the topic) and two instances sharing the input partitions and one database.
    let database = crate::common::TestDatabase::create().await;
    ensure_tenant(&database.url).await;
    let kafka = kafka_config("graph-two");
    create_topics(&kafka).await;
    let payments = create_source_topic(&kafka, "payments").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (config_a, config_b) = two_configs(dir.path(), &database.url, &kafka);
    let mut a = Instance::start(&config_a);
    a.wait_assigned(Some(PARTITIONS as f64), &config_a.with_extension("log"))
        .await;
    let b = Instance::join(&mut a, &config_a, &config_b).await;

    produce_payments(&kafka, &payments, &first).await;
    let printed = forward_to_end(&config_a, "detect", &payments).await;
    assert!(
        printed.contains(&format!("forwarded {} messages", first.len())),
        "{printed}"
    );
    produce_payments(&kafka, &payments, &second).await;
    let printed = forward_to_end(&config_b, "detect", &payments).await;
    assert!(
        printed.contains(&format!(
            "forwarded {} messages to {} ({} with account facts; {} source messages read again",
            second.len(),
            kafka.input_topic,
            second.len(),
            first.len()
        )),
        "the restarted stage rebuilt its graph from the topic: {printed}"
    );
    wait_for_records(
        &kafka,
        &kafka.decisions_topic,
        total,
        Duration::from_secs(120),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let facts_a = a
        .metric("vigil_kafka_account_facts_total")
        .await
        .unwrap_or(0.0);
    let facts_b = b
        .metric("vigil_kafka_account_facts_total")
        .await
        .unwrap_or(0.0);
    assert!(facts_a > 0.0 && facts_b > 0.0, "both instances took part");
    assert!(a.terminate().success());
    assert!(b.terminate().success());

    let decisions = read(&kafka, &kafka.decisions_topic).await;
    assert_eq!(
        decisions.len() as i64,
        total,
        "exactly one decision per input"
    );
    assert_eq!(
        verdicts(&decisions),
        reference,
        "the same decisions as one stage run and one instance"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_account_facts_header_is_dead_lettered_naming_the_header() {
    let Single {
        dir: _dir,
        kafka,
        config,
        ..
    } = single("badfacts").await;
    let mut instance = Instance::start(&config);
    instance.wait_all_assigned(&config).await;
    let payload = crate::common::tx(
        "badfacts-1",
        "badfacts-user",
        5_000.0,
        "2025-03-10T10:00:00Z",
    );
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &kafka.brokers)
        .create()
        .expect("producer");
    let value = serde_json::to_vec(&payload).expect("json");
    let headers = OwnedHeaders::new()
        .insert(Header {
            key: "vigil-tenant",
            value: Some(TENANT),
        })
        .insert(Header {
            key: "vigil-graph",
            value: Some(r#"{"cycleLength":"many"}"#),
        });
    producer
        .send(
            FutureRecord::to(&kafka.input_topic)
                .key("badfacts-user")
                .payload(value.as_slice())
                .headers(headers),
            Duration::from_secs(30),
        )
        .await
        .expect("delivered");
    wait_for_records(&kafka, &kafka.dead_letter_topic, 1, Duration::from_secs(60)).await;
    assert!(instance.terminate().success());
    let dead = read(&kafka, &kafka.dead_letter_topic).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(
        dead[0].value["error"], "the account facts header is malformed",
        "{}",
        dead[0].value
    );
    assert_eq!(dead[0].value["errors"][0]["field"], "vigil-graph");
    assert!(read(&kafka, &kafka.decisions_topic).await.is_empty());
}

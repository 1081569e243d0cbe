//! The control topic: blacklist, device and rule-pack changes made on one instance reach every
//! other instance of the cluster, so all of them decide alike.
//!
//! Data flow:
//! 1. An API call adds or removes a blacklist entry, or registers a device. The store commits it,
//!    the local engine is updated, and [`ControlBus::publish`] writes a `vigil.control/1` record
//!    to the control topic through an idempotent producer (`acks=all`) and waits for the broker.
//! 2. Every instance runs a control reader (thread `vigil-control`): a consumer outside the group,
//!    assigned every partition of the control topic from its end when it starts. It skips its
//!    own records and applies the others: list changes to its engine snapshot, devices to the
//!    shard owning the user.
//! 3. A rule pack that an instance loads by its own trigger (file watch, SIGHUP, admin endpoint)
//!    announces its fingerprint. The others reload from their own `rules/`. If a pack still
//!    differs afterwards, `vigil_kafka_rules_out_of_sync` is 1 and an error is logged: packs are
//!    deployed as files (image or ConfigMap), and this says when they were not deployed alike.
//!
//! Safety net: the reader reloads every blacklist from the shared database when it starts (which
//! covers changes made before it was assigned) and every `control_resync_secs`, so a change whose
//! announcement was lost still arrives. A resync is skipped if a list changed while it read,
//! so it never undoes a newer change.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::{IntCounter, IntGauge};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use serde::{Deserialize, Serialize};
use tokio::runtime::Handle;

use super::config::KafkaConfig;
use super::{client_config, output_producer, topic_partitions, KafkaSourceError};
use crate::engine::rules::reload::RulesManager;
use crate::engine::{Engine, ListKind, Lists, SharedSnapshot, Snapshot};
use crate::metrics::Metrics;
use crate::store::Store;

pub const CONTROL_SCHEMA: &str = "vigil.control/1";

/// One change, as it travels on the control topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum ControlEvent {
    ListAdded {
        business_id: i64,
        list: ListKind,
        value: String,
    },
    ListRemoved {
        business_id: i64,
        list: ListKind,
        value: String,
    },
    Device {
        business_id: i64,
        user_id: String,
        device_id: String,
    },
    RulesLoaded {
        fingerprint: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlRecord {
    pub schema: String,
    /// The instance that made the change (it has applied it already).
    pub origin: String,
    pub event: ControlEvent,
}

impl ControlEvent {
    /// Records are keyed by what they change, so a compacted topic keeps the latest of each.
    fn key(&self) -> String {
        match self {
            ControlEvent::ListAdded {
                business_id,
                list,
                value,
            }
            | ControlEvent::ListRemoved {
                business_id,
                list,
                value,
            } => format!("list/{business_id}/{}/{value}", list.as_str()),
            ControlEvent::Device {
                business_id,
                user_id,
                device_id,
            } => format!("device/{business_id}/{user_id}/{device_id}"),
            ControlEvent::RulesLoaded { .. } => "rules".to_owned(),
        }
    }
}

struct ControlMetrics {
    published: IntCounter,
    publish_failures: IntCounter,
    applied: IntCounter,
    resyncs: IntCounter,
    rules_out_of_sync: IntGauge,
}

impl ControlMetrics {
    fn new(metrics: &Metrics) -> ControlMetrics {
        ControlMetrics {
            published: metrics.counter(
                "kafka_control_published_total",
                "Changes announced on the control topic",
            ),
            publish_failures: metrics.counter(
                "kafka_control_publish_failures_total",
                "Changes whose announcement the broker did not acknowledge (the periodic list resync still carries them)",
            ),
            applied: metrics.counter(
                "kafka_control_applied_total",
                "Changes made on other instances applied here",
            ),
            resyncs: metrics.counter(
                "kafka_control_list_resyncs_total",
                "Full reloads of the blacklists from the shared database",
            ),
            rules_out_of_sync: metrics.gauge(
                "kafka_rules_out_of_sync",
                "1 while this instance's rule pack differs from the one another instance last loaded",
            ),
        }
    }
}

/// Announces changes; shared by the API handlers.
pub struct ControlBus {
    producer: FutureProducer,
    topic: String,
    origin: String,
    /// Bumped by every list change applied here (local or remote), so a resync that read the
    /// database before a change does not overwrite it.
    list_generation: AtomicU64,
    metrics: ControlMetrics,
    runtime: Handle,
}

impl ControlBus {
    /// Notes a list change this instance applied to its snapshot.
    pub fn list_changed(&self) {
        self.list_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Announces a change already stored and applied here; waits for the broker (at most 10 s).
    /// A failure is logged and counted, never returned: the change is durable, and the periodic
    /// list resync carries it to the other instances.
    pub async fn publish(&self, event: ControlEvent) {
        let key = event.key();
        let record = ControlRecord {
            schema: CONTROL_SCHEMA.to_owned(),
            origin: self.origin.clone(),
            event,
        };
        let payload = match serde_json::to_vec(&record) {
            Ok(payload) => payload,
            Err(error) => {
                tracing::error!(%error, "control record does not serialise");
                return;
            }
        };
        let sent = self
            .producer
            .send(
                FutureRecord::to(&self.topic)
                    .key(key.as_bytes())
                    .payload(payload.as_slice()),
                Duration::from_secs(10),
            )
            .await;
        match sent {
            Ok(_) => self.metrics.published.inc(),
            Err((error, _)) => {
                self.metrics.publish_failures.inc();
                tracing::error!(%error, key, "control record not acknowledged; other instances get the change at the next resync");
            }
        }
    }

    /// The same, from a thread outside the runtime (the rule-reload hook).
    fn publish_blocking(&self, event: ControlEvent) {
        self.runtime.block_on(self.publish(event));
    }
}

/// What the control reader applies changes to.
pub struct ControlDeps {
    pub engine: Arc<Engine>,
    pub snapshot: SharedSnapshot,
    pub rules: Arc<RulesManager>,
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub runtime: Handle,
}

/// The running reader; dropping it stops the thread.
pub struct ControlReader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for ControlReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the bus and the reader (blocking: creates clients and assigns the topic).
pub fn start(
    config: &KafkaConfig,
    deps: ControlDeps,
) -> Result<(Arc<ControlBus>, ControlReader), KafkaSourceError> {
    let origin = format!("{}/{}", config.client_id, uuid::Uuid::new_v4().simple());
    let bus = Arc::new(ControlBus {
        producer: output_producer(config)?,
        topic: config.control_topic.clone(),
        origin: origin.clone(),
        list_generation: AtomicU64::new(0),
        metrics: ControlMetrics::new(&deps.metrics),
        runtime: deps.runtime.clone(),
    });
    let announcer = bus.clone();
    deps.rules.on_loaded(Box::new(move |fingerprint| {
        announcer.metrics.rules_out_of_sync.set(0);
        announcer.publish_blocking(ControlEvent::RulesLoaded {
            fingerprint: fingerprint.to_owned(),
        });
    }));

    // Assigned, never subscribed: the group id is only a name librdkafka needs; nothing joins
    // or commits under it.
    let consumer: BaseConsumer = client_config(config)
        .set("group.id", "vigil-control-reader")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .create()?;
    let partitions = topic_partitions(&consumer, &config.control_topic)?;
    let mut list = TopicPartitionList::new();
    for partition in &partitions {
        list.add_partition_offset(&config.control_topic, *partition, Offset::End)?;
    }
    consumer.assign(&list)?;

    let stop = Arc::new(AtomicBool::new(false));
    let resync_every = Duration::from_secs(config.control_resync_secs);
    let reader_bus = bus.clone();
    let reader_stop = stop.clone();
    let thread = std::thread::Builder::new()
        .name("vigil-control".into())
        .spawn(move || read(consumer, deps, reader_bus, reader_stop, resync_every))
        .map_err(KafkaSourceError::Thread)?;
    tracing::info!(topic = %config.control_topic, %origin, "control reader started");
    Ok((
        bus,
        ControlReader {
            stop,
            thread: Some(thread),
        },
    ))
}

fn read(
    consumer: BaseConsumer,
    deps: ControlDeps,
    bus: Arc<ControlBus>,
    stop: Arc<AtomicBool>,
    resync_every: Duration,
) {
    // The first resync covers changes made between this instance's start-up read and the
    // moment the reader was positioned at the end of the topic.
    let mut last_resync: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        if last_resync.is_none_or(|at| at.elapsed() >= resync_every) {
            last_resync = Some(Instant::now());
            resync_lists(&deps, &bus);
        }
        let Some(result) = consumer.poll(Duration::from_millis(100)) else {
            continue;
        };
        let message = match result {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, "control topic read error");
                continue;
            }
        };
        let record: ControlRecord = match message.payload().map(serde_json::from_slice) {
            Some(Ok(record)) => record,
            Some(Err(error)) => {
                tracing::warn!(%error, offset = message.offset(), "control record ignored: not a vigil.control/1 record");
                continue;
            }
            None => continue,
        };
        if record.origin == bus.origin || record.schema != CONTROL_SCHEMA {
            continue;
        }
        apply(&deps, &bus, record.event);
        bus.metrics.applied.inc();
    }
}

fn apply(deps: &ControlDeps, bus: &ControlBus, event: ControlEvent) {
    match event {
        ControlEvent::ListAdded {
            business_id,
            list,
            value,
        } => {
            bus.list_changed();
            deps.snapshot.rcu(|current| Snapshot {
                lists: Arc::new(current.lists.with_added(business_id, list, &value)),
                ..Snapshot::clone(current)
            });
        }
        ControlEvent::ListRemoved {
            business_id,
            list,
            value,
        } => {
            bus.list_changed();
            deps.snapshot.rcu(|current| Snapshot {
                lists: Arc::new(current.lists.with_removed(business_id, list, &value)),
                ..Snapshot::clone(current)
            });
        }
        ControlEvent::Device {
            business_id,
            user_id,
            device_id,
        } => {
            let registered = deps.runtime.block_on(deps.engine.register_device(
                business_id,
                &user_id,
                &device_id,
            ));
            if registered.is_err() {
                tracing::warn!("engine stopped; device from the control topic not applied");
            }
        }
        ControlEvent::RulesLoaded { fingerprint } => {
            if deps.rules.status().active == fingerprint {
                bus.metrics.rules_out_of_sync.set(0);
                return;
            }
            let outcome = deps.rules.reload_quietly();
            let active = deps.rules.status().active.clone();
            if active == fingerprint {
                bus.metrics.rules_out_of_sync.set(0);
                tracing::info!(pack = %fingerprint, "rule pack reloaded as another instance did");
            } else {
                bus.metrics.rules_out_of_sync.set(1);
                tracing::error!(
                    announced = %fingerprint,
                    active = %active,
                    error = outcome.err().unwrap_or_default(),
                    "another instance loaded a different rule pack; deploy the same rules/ to every instance"
                );
            }
        }
    }
}

/// Replaces the blacklists with the database's, unless a list changed meanwhile.
fn resync_lists(deps: &ControlDeps, bus: &ControlBus) {
    let before = bus.list_generation.load(Ordering::SeqCst);
    let entries = match deps.runtime.block_on(deps.store.all_list_entries()) {
        Ok(entries) => entries,
        Err(error) => {
            tracing::warn!(%error, "blacklist resync skipped: the database is unavailable");
            return;
        }
    };
    let lists = Arc::new(Lists::from_entries(entries));
    let mut applied = false;
    deps.snapshot.rcu(|current| {
        // Checked inside the update so a change applied concurrently wins.
        applied = bus.list_generation.load(Ordering::SeqCst) == before;
        if applied {
            Snapshot {
                lists: lists.clone(),
                ..Snapshot::clone(current)
            }
        } else {
            Snapshot::clone(current)
        }
    });
    if applied {
        bus.metrics.resyncs.inc();
    }
}

/// The device and list events for the API handlers.
pub fn list_event(added: bool, business_id: i64, list: ListKind, value: &str) -> ControlEvent {
    if added {
        ControlEvent::ListAdded {
            business_id,
            list,
            value: value.to_owned(),
        }
    } else {
        ControlEvent::ListRemoved {
            business_id,
            list,
            value: value.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_records_round_trip_as_versioned_json_with_camel_case_fields() {
        let record = ControlRecord {
            schema: CONTROL_SCHEMA.into(),
            origin: "vigil/abc".into(),
            event: ControlEvent::ListAdded {
                business_id: 7,
                list: ListKind::VasReceiver,
                value: "08012345678".into(),
            },
        };
        let text = serde_json::to_string(&record).expect("json");
        assert_eq!(
            text,
            r#"{"schema":"vigil.control/1","origin":"vigil/abc","event":{"kind":"list-added","businessId":7,"list":"vas-receiver","value":"08012345678"}}"#
        );
        let back: ControlRecord = serde_json::from_str(&text).expect("parse");
        assert_eq!(back.event, record.event);
    }

    #[test]
    fn keys_name_what_changed_so_compaction_keeps_the_latest_of_each() {
        let added = list_event(true, 1, ListKind::User, "u-1");
        let removed = list_event(false, 1, ListKind::User, "u-1");
        assert_eq!(added.key(), removed.key());
        assert_ne!(
            added.key(),
            list_event(true, 2, ListKind::User, "u-1").key()
        );
        assert_eq!(
            ControlEvent::RulesLoaded {
                fingerprint: "x".into()
            }
            .key(),
            "rules"
        );
    }
}

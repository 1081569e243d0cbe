//! `vigil serve`: wires the store, rule pack, engine, writer and API together and runs them until
//! SIGINT/SIGTERM.
//!
//! Start-up order matters for correctness: the store is migrated; the rule pack must load and pass
//! its fixtures; lists and devices are loaded; the writer and shards start; state is rebuilt from
//! stored decisions (long-term profiles first, then the last `restore_days` of transactions in
//! arrival order); only then are pending asynchronous submissions re-evaluated and the listener
//! opened. Shutdown stops accepting requests, drains the shards into the writer and waits for the
//! writer's last commit.

use std::net::SocketAddr;
use std::sync::Arc;

use arc_swap::ArcSwap;
use thiserror::Error;
use tokio::net::TcpListener;

use crate::api::{self, auth::KeyCache, AppServices, AppState};
use crate::config::Settings;
use crate::engine::router::EngineOptions;
use crate::engine::rules::reload::{load_checked, RulesManager};
use crate::engine::rules::RuleError;
use crate::engine::state::StateLimits;
use crate::engine::{Engine, EvaluateJob, Intake, Lists, Snapshot};
use crate::metrics::Metrics;
use crate::model::{Transaction, TransactionPayload, ValidationClock};
use crate::screening::config::ScreeningConfig;
use crate::screening::manager::ListsManager;
use crate::screening::NoScreening;
use crate::sinks::store::spawn_writer;
use crate::store::{Store, StoreError, StoredTransaction};

#[derive(Debug, Error)]
pub enum ServeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("rule pack does not load: {0}")]
    Rules(#[from] RuleError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start shard threads: {0}")]
    Threads(std::io::Error),
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
    #[error("engine stopped during start-up")]
    EngineClosed,
    #[error(transparent)]
    Media(#[from] crate::media::MediaError),
    #[error(transparent)]
    Kafka(#[from] crate::sources::kafka::KafkaSourceError),
    #[error("outbound HTTP client: {0}")]
    Outbound(#[from] crate::outbound::OutboundError),
}

/// A running service, for tests: its address and a way to stop it.
pub struct Running {
    pub addr: SocketAddr,
    shutdown: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

impl Running {
    /// Stops the service gracefully and waits for the last commit.
    pub async fn stop(self) -> Result<(), ServeError> {
        let _ = self.shutdown.send(());
        self.task
            .await
            .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))?
    }
}

/// Rebuilds a stored transaction as the engine saw it.
pub fn restore_transaction(stored: &StoredTransaction, skew_ms: i64) -> Option<Transaction> {
    let payload: TransactionPayload = serde_json::from_str(&stored.payload).ok()?;
    let clock = ValidationClock {
        now_ms: stored.received_at_ms,
        max_future_skew_ms: skew_ms,
    };
    let mut tx = payload.validate(clock).ok()?;
    tx.event_time_ms = stored.event_time_ms;
    tx.received_at_ms = stored.received_at_ms;
    Some(tx)
}

async fn bind(settings: &Settings) -> Result<TcpListener, ServeError> {
    TcpListener::bind(settings.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: settings.listen,
            source,
        })
}

/// Starts the service on `settings.listen` and runs until [`Running::stop`].
pub async fn start(settings: Settings) -> Result<Running, ServeError> {
    let listener = bind(&settings).await?;
    let addr = listener.local_addr()?;
    let (shutdown, signal) = tokio::sync::oneshot::channel();
    let app = build(settings).await?;
    let task = tokio::spawn(run(app, listener, async move {
        let _ = signal.await;
    }));
    Ok(Running {
        addr,
        shutdown,
        task,
    })
}

/// Runs the service until SIGINT or SIGTERM.
pub async fn serve(settings: Settings) -> Result<(), ServeError> {
    let listener = bind(&settings).await?;
    let app = build(settings).await?;
    tracing::info!(addr = %listener.local_addr()?, "vigil listening");
    run(app, listener, shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}

struct Built {
    state: AppState,
    writer_task: tokio::task::JoinHandle<()>,
    /// Stops the webhook worker and the asynchronous AML tasks.
    background_stop: tokio::sync::watch::Sender<bool>,
    background: Vec<tokio::task::JoinHandle<()>>,
    _watchers: (
        Option<notify::RecommendedWatcher>,
        Option<notify::RecommendedWatcher>,
    ),
    /// The Kafka source, when brokers are configured.
    kafka: Option<crate::sources::kafka::KafkaSource>,
    /// The control-topic reader, when brokers are configured.
    control_reader: Option<crate::sources::kafka::control::ControlReader>,
}

async fn build(settings: Settings) -> Result<Built, ServeError> {
    let config = &settings.config;
    let store = Store::connect(&settings.database_url, config.store.pool_size).await?;
    let metrics = Arc::new(Metrics::new());

    let rules_dir = config.rules_dir.clone();
    let fixtures_dir = config.fixtures_dir.clone();
    let limits = config.sandbox;
    let rules =
        tokio::task::spawn_blocking(move || load_checked(&rules_dir, &fixtures_dir, limits))
            .await
            .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))??;
    let lists = Lists::from_entries(store.all_list_entries().await?);
    let snapshot = Snapshot {
        rule_counters: Some(metrics.rule_counters(&rules)),
        rules,
        lists: Arc::new(lists),
        screener: Arc::new(NoScreening),
    };
    let snapshot = Arc::new(ArcSwap::from_pointee(snapshot));
    let screening = start_screening(&store, &settings, snapshot.clone(), metrics.clone()).await?;

    let webhooks = crate::webhooks::Webhooks::new(
        store.clone(),
        config.webhooks.clone(),
        config.allow_private_callbacks,
        metrics.clone(),
    )?;
    let (writer, writer_task) = spawn_writer(
        store.clone(),
        metrics.clone(),
        config.store.max_batch,
        config.engine.queue_capacity,
        Some(webhooks.clone()),
    );
    let options = EngineOptions {
        shards: settings.shards,
        queue_capacity: config.engine.queue_capacity,
        limits: StateLimits {
            max_recent_events: config.engine.max_recent_events,
        },
    };
    let engine = Engine::start(
        options,
        snapshot.clone(),
        Arc::new(writer.clone()),
        &metrics,
    )
    .map_err(ServeError::Threads)?;
    let engine = Arc::new(engine);
    rebuild_state(&store, &engine, &settings).await?;
    let kafka = if config.kafka.enabled() {
        let deps = crate::sources::kafka::SourceDeps {
            engine: engine.clone(),
            writer: writer.clone(),
            store: store.clone(),
            metrics: metrics.clone(),
            runtime: tokio::runtime::Handle::current(),
            max_future_skew_ms: config.engine.max_future_skew_secs as i64 * 1000,
        };
        let kafka_config = config.kafka.clone();
        let source =
            tokio::task::spawn_blocking(move || crate::sources::kafka::start(kafka_config, deps))
                .await
                .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))??;
        Some(source)
    } else {
        None
    };

    let keys = KeyCache::load(store.clone()).await?;
    keys.spawn_refresh();
    let rules = RulesManager::new(
        config.rules_dir.clone(),
        config.fixtures_dir.clone(),
        config.sandbox,
        snapshot,
        metrics.clone(),
    );
    let watcher = match rules.watch() {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, "cannot watch rule files; reload with SIGHUP or the admin endpoint");
            None
        }
    };
    // With Kafka: list, device and rule changes travel between instances on the control topic.
    let (control, control_reader) = if config.kafka.enabled() {
        let deps = crate::sources::kafka::control::ControlDeps {
            engine: engine.clone(),
            snapshot: engine.snapshot().clone(),
            rules: rules.clone(),
            store: store.clone(),
            metrics: metrics.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        let kafka_config = config.kafka.clone();
        let (bus, reader) = tokio::task::spawn_blocking(move || {
            crate::sources::kafka::control::start(&kafka_config, deps)
        })
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))??;
        (Some(bus), Some(reader))
    } else {
        (None, None)
    };
    spawn_sighup_reload(rules.clone(), screening.clone());
    let lists_watcher = if config.screening.enabled {
        match screening.watch() {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(%error, "cannot watch list files; reload with SIGHUP or the admin endpoint");
                None
            }
        }
    } else {
        None
    };
    if config.screening.enabled {
        screening.spawn_downloads(crate::outbound::AddressPolicy {
            allow_private: config.outbound.allow_private_upstreams,
        });
    }

    let (identity, reporting) = start_identity_and_reporting(&store, &settings).await?;
    // Asynchronous AML: the adverse-media index, the request processor and risk-monitoring
    // re-checks, and the webhook delivery worker.
    let media_dir = config.media.dir(&config.data_dir);
    let media = tokio::task::spawn_blocking(move || crate::media::MediaIndex::open(&media_dir))
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))??;
    let aml = crate::monitoring::Aml::new(
        store.clone(),
        screening.clone(),
        Arc::new(media),
        config.media.clone(),
        config.monitoring.clone(),
        webhooks.clone(),
    );
    let (background_stop, stop) = tokio::sync::watch::channel(false);
    let mut background = aml.spawn(stop.clone());
    if config.webhooks.enabled {
        background.push(crate::webhooks::spawn_worker(webhooks.clone(), stop));
    }

    let state = AppState::new(AppServices {
        settings: Arc::new(settings),
        store,
        engine,
        writer,
        keys,
        rules,
        screening,
        metrics,
        identity,
        reporting,
        webhooks,
        aml,
        control,
    });
    Ok(Built {
        state,
        writer_task,
        background_stop,
        background,
        _watchers: (watcher, lists_watcher),
        kafka,
        control_reader,
    })
}

/// Identity lookups: seeds an empty local registry from `identity.seed_dir` (the sample registry
/// of a fresh install) and builds the provider. Reporting: builds the job and resumes the reports
/// a previous run left unfinished.
async fn start_identity_and_reporting(
    store: &Store,
    settings: &Settings,
) -> Result<
    (
        Arc<crate::identity::IdentityService>,
        Arc<crate::reporting::ReportingService>,
    ),
    ServeError,
> {
    let config = &settings.config;
    let seed_dir = config.identity.seed_dir.clone();
    match crate::identity::registry::seed(store.pool(), &seed_dir).await {
        Ok(loaded) => {
            for (kind, count) in loaded {
                tracing::info!(kind = kind.as_str(), count, dir = %seed_dir.display(), "sample identity registry loaded");
            }
        }
        Err(error) => {
            tracing::warn!(%error, dir = %seed_dir.display(), "identity registry seed not loaded")
        }
    }
    let identity = crate::identity::IdentityService::new(
        store.pool().clone(),
        config.identity.clone(),
        crate::outbound::AddressPolicy {
            allow_private: config.outbound.allow_private_upstreams,
        },
    )
    .map_err(|e| ServeError::Io(std::io::Error::other(e)))?;
    let reporting = crate::reporting::ReportingService::new(
        store.pool().clone(),
        config.reporting.clone(),
        config.allow_private_callbacks,
    )?;
    let resumed = reporting.resume().await?;
    if resumed > 0 {
        tracing::info!(resumed, "unfinished reports resumed");
    }
    Ok((Arc::new(identity), reporting))
}

fn spawn_sighup_reload(rules: Arc<RulesManager>, screening: Arc<ListsManager>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hangup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            return;
        };
        while hangup.recv().await.is_some() {
            let rules = rules.clone();
            let _ = tokio::task::spawn_blocking(move || rules.reload()).await;
            let screening = screening.clone();
            let _ = tokio::task::spawn_blocking(move || screening.reload()).await;
        }
    });
    #[cfg(not(unix))]
    let _ = (rules, screening);
}

/// Loads the screening lists (off the async threads) and puts their screener into the engine
/// snapshot before any transaction is evaluated. With screening disabled, no list loads and the
/// snapshot keeps [`NoScreening`].
async fn start_screening(
    store: &Store,
    settings: &Settings,
    snapshot: crate::engine::SharedSnapshot,
    metrics: Arc<Metrics>,
) -> Result<Arc<ListsManager>, ServeError> {
    let config = settings.config.screening.clone();
    let mut tenants = std::collections::HashMap::new();
    for source in &config.lists {
        if let Some(business) = &source.business {
            let record = store.ensure_business(business).await?;
            tenants.insert(business.clone(), record.id);
        }
    }
    let data_dir = settings.config.data_dir.clone();
    let enabled = config.enabled;
    let manager = tokio::task::spawn_blocking(move || {
        let snapshot = enabled.then_some(snapshot);
        let config = if enabled {
            config
        } else {
            ScreeningConfig {
                lists: Vec::new(),
                ..config
            }
        };
        if enabled {
            ListsManager::start(config, &data_dir, &tenants, snapshot, Some(metrics))
        } else {
            ListsManager::disabled(config)
        }
    })
    .await
    .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))?;
    let status = manager.status();
    for list in status.lists.iter().filter(|l| l.last_error.is_some()) {
        tracing::error!(list = %list.name, error = list.last_error.as_deref().unwrap_or(""), "screening list failed to load");
    }
    Ok(manager)
}

/// Replays stored history into the shards, then re-queues pending submissions.
async fn rebuild_state(
    store: &Store,
    engine: &Engine,
    settings: &Settings,
) -> Result<(), ServeError> {
    let config = &settings.config;
    let skew_ms = config.engine.max_future_skew_secs as i64 * 1000;
    let cutoff = crate::store::now_ms() - i64::from(config.engine.restore_days) * 86_400_000;
    let closed = |_| ServeError::EngineClosed;
    for (tenant, customer, device) in store.all_devices().await? {
        engine
            .register_device(tenant, &customer, &device)
            .await
            .map_err(closed)?;
    }
    let profiles = store.user_profiles_before(cutoff).await?;
    for (tenant, user, first, last, count) in profiles {
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        engine
            .restore_profile(tenant, user, first, last, count)
            .await
            .map_err(closed)?;
    }
    let mut restored = 0usize;
    for stored in store.decided_since(cutoff).await? {
        let Some(tx) = restore_transaction(&stored, skew_ms) else {
            tracing::warn!(transaction_id = %stored.transaction_id, "stored transaction no longer parses; not restored");
            continue;
        };
        engine
            .restore(stored.business_id, tx)
            .await
            .map_err(closed)?;
        restored += 1;
    }
    engine.barrier().await.map_err(closed)?;
    let pending = store.pending().await?;
    let resumed = pending.len();
    for stored in pending {
        let Some(tx) = restore_transaction(&stored, skew_ms) else {
            tracing::error!(transaction_id = %stored.transaction_id, "pending transaction does not parse; left pending");
            continue;
        };
        engine
            .submit(EvaluateJob {
                tenant: stored.business_id,
                tx: Box::new(tx),
                raw: bytes::Bytes::from(stored.payload.into_bytes()),
                intake: Intake::Async,
                reply: None,
                graph: None,
            })
            .await
            .map_err(closed)?;
    }
    tracing::info!(restored, resumed_pending = resumed, "state rebuilt");
    Ok(())
}

async fn run(
    built: Built,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let Built {
        state,
        writer_task,
        background_stop,
        background,
        _watchers,
        mut kafka,
        control_reader,
    } = built;
    let engine = state.engine.clone();
    let router = api::router(state);
    let kafka_ended = kafka.as_mut().and_then(|k| k.ended());
    let shutdown = async move {
        match kafka_ended {
            Some(ended) => {
                tokio::select! {
                    _ = shutdown => {},
                    _ = ended => tracing::error!("kafka source ended; shutting down"),
                }
            }
            None => shutdown.await,
        }
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await?;
    // The Kafka source finishes what it took, writes its changelog and commits before the
    // engine drains.
    let kafka_result = match kafka {
        Some(source) => tokio::task::spawn_blocking(move || source.stop())
            .await
            .map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))?,
        None => Ok(()),
    };
    // The control reader holds the engine too; it stops before the engine drains.
    if let Some(reader) = control_reader {
        let _ = tokio::task::spawn_blocking(move || drop(reader)).await;
    }
    // The router (and its state) is gone: the engine is ours alone once the last request task
    // has dropped its handle, which it does right after answering.
    match sole_owner(engine, ENGINE_RELEASE_WAIT).await {
        Ok(engine) => {
            let _ = tokio::task::spawn_blocking(move || engine.shutdown()).await;
        }
        Err(holders) => tracing::warn!(
            holders,
            "engine still referenced at shutdown; not drained (its queues still finish when the last handle drops)"
        ),
    }
    let _ = writer_task.await;
    // Webhook attempts in flight finish and are recorded; what is left stays in the outbox.
    let _ = background_stop.send(true);
    for task in background {
        let _ = task.await;
    }
    kafka_result?;
    Ok(())
}

/// How long shutdown waits for request tasks to drop their handles on the engine.
const ENGINE_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits until `shared` has no other strong reference and returns it, or gives up after `wait`
/// with the number of other references still held.
async fn sole_owner<T>(mut shared: Arc<T>, wait: std::time::Duration) -> Result<T, usize> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match Arc::try_unwrap(shared) {
            Ok(value) => return Ok(value),
            Err(still_shared) => shared = still_shared,
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Arc::strong_count(&shared) - 1);
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn shutdown_waits_for_a_lingering_handle_before_taking_the_engine() {
        let shared = Arc::new(String::from("engine"));
        let lingering = shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(lingering);
        });
        let owned = sole_owner(shared, Duration::from_secs(5)).await;
        assert_eq!(owned.as_deref(), Ok("engine"));
    }

    #[tokio::test]
    async fn shutdown_gives_up_on_a_handle_that_is_never_dropped_and_counts_it() {
        let shared = Arc::new(1u8);
        let _held = shared.clone();
        let _also_held = shared.clone();
        let owned = sole_owner(shared, Duration::from_millis(30)).await;
        assert_eq!(owned, Err(2));
    }
}

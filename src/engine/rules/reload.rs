//! Hot reload of the rule pack.
//!
//! [`RulesManager::reload`] loads `rules/`, compiles it, runs the fixtures against the new set,
//! and only if all of that succeeds swaps it into the engine snapshot (one atomic store: events
//! already running finish on the old set, the next event sees the new one). Otherwise the old set
//! keeps serving and the error (with file and line) is kept for `/readyz` and counted in metrics.
//! Triggers: a file watcher on the rule and fixture directories (debounced, live within a
//! second), SIGHUP, and the admin endpoint.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use super::{fixtures, RuleError, RuleSet, SandboxLimits};
use crate::engine::{SharedSnapshot, Snapshot};
use crate::metrics::Metrics;

/// What `/readyz` and the admin endpoint report about rules.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesStatus {
    pub active: String,
    pub rules: usize,
    pub loaded_at: String,
    pub last_error: Option<String>,
    pub last_attempt_at: String,
}

/// Told the fingerprint of a newly loaded pack.
pub type LoadedHook = Box<dyn Fn(&str) + Send + Sync>;

pub struct RulesManager {
    rules_dir: PathBuf,
    fixtures_dir: PathBuf,
    limits: SandboxLimits,
    snapshot: SharedSnapshot,
    metrics: Arc<Metrics>,
    status: ArcSwap<RulesStatus>,
    /// Serialises reloads (watcher, signal and endpoint may fire together).
    reloading: std::sync::Mutex<()>,
    /// Told the fingerprint of every pack this instance loads by its own trigger (watcher, SIGHUP,
    /// admin endpoint), not of reloads a peer asked for: the Kafka control topic announces it.
    on_loaded: std::sync::OnceLock<LoadedHook>,
}

/// Loads and checks a pack: compile, then fixtures (when the fixture directory exists).
pub fn load_checked(
    rules_dir: &Path,
    fixtures_dir: &Path,
    limits: SandboxLimits,
) -> Result<Arc<RuleSet>, RuleError> {
    let rules = Arc::new(RuleSet::load(rules_dir, limits)?);
    if fixtures_dir.is_dir() {
        let files = fixtures::load_dir(fixtures_dir)?;
        let report = fixtures::run(&rules, &files);
        if !report.failures.is_empty() {
            return Err(RuleError::Fixtures(report.summary()));
        }
    }
    Ok(rules)
}

fn now_text() -> String {
    crate::model::decision::format_time_ms(chrono::Utc::now().timestamp_millis())
}

impl RulesManager {
    /// Wraps an already loaded set (the one the engine started with).
    pub fn new(
        rules_dir: PathBuf,
        fixtures_dir: PathBuf,
        limits: SandboxLimits,
        snapshot: SharedSnapshot,
        metrics: Arc<Metrics>,
    ) -> Arc<RulesManager> {
        let current = snapshot.load();
        metrics.rules_loaded.set(current.rules.rules.len() as i64);
        let status = RulesStatus {
            active: current.rules.fingerprint.clone(),
            rules: current.rules.rules.len(),
            loaded_at: now_text(),
            last_error: None,
            last_attempt_at: now_text(),
        };
        drop(current);
        Arc::new(RulesManager {
            rules_dir,
            fixtures_dir,
            limits,
            snapshot,
            metrics,
            status: ArcSwap::from_pointee(status),
            reloading: std::sync::Mutex::new(()),
            on_loaded: std::sync::OnceLock::new(),
        })
    }

    pub fn status(&self) -> Arc<RulesStatus> {
        self.status.load_full()
    }

    /// Sets what is told of every pack loaded by this instance's own triggers (once).
    pub fn on_loaded(&self, hook: LoadedHook) {
        let _ = self.on_loaded.set(hook);
    }

    /// Reloads now (blocking: compiles and runs fixtures on the calling thread) and announces the
    /// new pack's fingerprint.
    pub fn reload(&self) -> Result<Arc<RulesStatus>, String> {
        let status = self.reload_quietly()?;
        if let Some(hook) = self.on_loaded.get() {
            hook(&status.active);
        }
        Ok(status)
    }

    /// Reloads without announcing: for a reload another instance asked for (announcing it would
    /// echo between two instances whose files differ).
    pub fn reload_quietly(&self) -> Result<Arc<RulesStatus>, String> {
        let _guard = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let attempt = now_text();
        match load_checked(&self.rules_dir, &self.fixtures_dir, self.limits) {
            Ok(rules) => {
                let counters = self.metrics.rule_counters(&rules);
                let count = rules.rules.len();
                let fingerprint = rules.fingerprint.clone();
                self.snapshot.rcu(|current| Snapshot {
                    rules: rules.clone(),
                    rule_counters: Some(counters.clone()),
                    ..Snapshot::clone(current)
                });
                self.metrics.rules_loaded.set(count as i64);
                self.metrics.rules_reload_failing.set(0);
                self.metrics.rules_reloads.with_label_values(&["ok"]).inc();
                tracing::info!(rules = count, pack = %fingerprint, "rule pack loaded");
                let status = Arc::new(RulesStatus {
                    active: fingerprint,
                    rules: count,
                    loaded_at: attempt.clone(),
                    last_error: None,
                    last_attempt_at: attempt,
                });
                self.status.store(status.clone());
                Ok(status)
            }
            Err(error) => {
                let message = error.to_string();
                self.metrics.rules_reload_failing.set(1);
                self.metrics
                    .rules_reloads
                    .with_label_values(&["error"])
                    .inc();
                tracing::error!(error = %message, "rule pack rejected; previous pack keeps serving");
                let previous = self.status.load();
                self.status.store(Arc::new(RulesStatus {
                    last_error: Some(message.clone()),
                    last_attempt_at: attempt,
                    ..RulesStatus::clone(&previous)
                }));
                Err(message)
            }
        }
    }

    /// Watches the rule and fixture directories and reloads after changes settle.
    /// The returned watcher must be kept alive.
    pub fn watch(self: &Arc<Self>) -> notify::Result<notify::RecommendedWatcher> {
        let (changes, receiver) = std::sync::mpsc::channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event {
                    if !event.kind.is_access() {
                        let _ = changes.send(());
                    }
                }
            })?;
        watcher.watch(&self.rules_dir, RecursiveMode::NonRecursive)?;
        if self.fixtures_dir.is_dir() {
            watcher.watch(&self.fixtures_dir, RecursiveMode::NonRecursive)?;
        }
        let manager = self.clone();
        std::thread::Builder::new()
            .name("vigil-rules-watch".into())
            .spawn(move || {
                while receiver.recv().is_ok() {
                    // Debounce: editors write several events per save.
                    while receiver.recv_timeout(Duration::from_millis(150)).is_ok() {}
                    let _ = manager.reload();
                }
            })
            .map_err(|e| notify::Error::generic(&e.to_string()))?;
        Ok(watcher)
    }
}

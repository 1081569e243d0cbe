//! Loading, refreshing and swapping the screening lists.
//!
//! [`ListsManager::reload`] reads every configured list whose bytes changed (SHA-256 of the file),
//! parses it with its loader, checks it (not empty, not shrunk below `min_retained_share` of the
//! version it replaces), builds a new [`ScreeningIndex`] over all lists and swaps a new
//! [`ListScreener`] into the engine snapshot and into `current` in one step each. A list that
//! fails keeps its previous version serving; the failure is logged, counted in
//! `vigil_screening_list_failing{list}` and reported on `/readyz` and `GET /api/v1/aml/lists`.
//! Triggers: start, a file watcher on the lists' directories, SIGHUP, the admin endpoint, and a
//! schedule that downloads lists configured with a `url` (a download replaces the cached file
//! only after it parsed).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use notify::{RecursiveMode, Watcher};
use serde::Serialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::config::{ListSource, ScreeningConfig};
use super::entity::{ListEntity, LoadedSource};
use super::index::{IndexedList, ListInput, ScreeningIndex};
use super::loaders::{self, LoadError, SourceBytes};
use crate::outbound::{self, AddressPolicy, ClientOptions, OutboundClient, OutboundError};

/// Most bytes of one list download.
pub const MAX_DOWNLOAD_BYTES: usize = 1 << 30;

/// The client list downloads go through: Vigil's outbound client with `policy`, 120 s a download,
/// up to 5 redirects (each hop passes the policy).
pub fn download_client(policy: AddressPolicy) -> Result<OutboundClient, OutboundError> {
    OutboundClient::new(
        policy,
        // Publishers serve lists through CDNs and https upgrades: a few redirects, each checked.
        ClientOptions::new(Duration::from_secs(120), "vigil-lists/1").with_redirects(5),
    )
}
use super::ListScreener;
use crate::engine::{SharedSnapshot, Snapshot};
use crate::metrics::Metrics;

#[derive(Debug, Error)]
pub enum ListError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Load(#[from] LoadError),
    #[error("refused as truncated: {entities} entities where the previous version had {previous}")]
    Shrunk { entities: usize, previous: usize },
    #[error("business {0} does not exist")]
    UnknownBusiness(String),
    #[error("download failed: {0}")]
    Download(String),
    #[error("lists failed to load: {0}")]
    Failed(String),
}

/// One list as `/readyz` and `GET /api/v1/aml/lists` show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListStatus {
    pub name: String,
    pub title: String,
    pub kind: &'static str,
    pub format: String,
    /// The file (or URL) the list is read from.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub business: Option<String>,
    /// The publisher's date for the serving version, when the file carries one.
    pub published: Option<String>,
    pub entities: usize,
    pub names: usize,
    /// SHA-256 of the serving version's bytes (first 16 hex digits).
    pub version: Option<String>,
    pub loaded_at: Option<String>,
    pub last_attempt_at: Option<String>,
    /// Why the newest version is not serving (the previous one is, if any).
    pub last_error: Option<String>,
}

/// The screening state as a whole.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreeningStatus {
    /// Every configured list serves some version.
    pub ready: bool,
    pub entities: usize,
    pub names: usize,
    pub built_at: Option<String>,
    pub build_millis: u64,
    pub match_threshold: f32,
    pub potential_threshold: f32,
    pub lists: Vec<ListStatus>,
}

/// A list version that loaded.
struct Serving {
    entities: Vec<Arc<ListEntity>>,
    published: Option<String>,
    digest: String,
    loaded_at: String,
}

struct ListSlot {
    source: ListSource,
    tenant: Option<i64>,
    serving: Option<Serving>,
    last_attempt_at: Option<String>,
    last_error: Option<String>,
    /// Why the last download of a `url` list failed (cleared by the next good one); the
    /// previous copy keeps serving meanwhile.
    download_error: Option<String>,
}

pub struct ListsManager {
    config: ScreeningConfig,
    downloads_dir: PathBuf,
    snapshot: Option<SharedSnapshot>,
    metrics: Option<Arc<Metrics>>,
    current: ArcSwap<ListScreener>,
    status: ArcSwap<ScreeningStatus>,
    /// Serialises reloads (watcher, signal, schedule and endpoint may fire together).
    slots: Mutex<Vec<ListSlot>>,
    /// Counts index swaps, for those who act on a list change (risk monitoring re-checks).
    swaps: tokio::sync::watch::Sender<u64>,
}

fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn read(path: &Path) -> Result<Vec<u8>, ListError> {
    std::fs::read(path).map_err(|source| ListError::Read {
        path: path.to_path_buf(),
        source,
    })
}

impl ListsManager {
    /// Loads every list and builds the first index. `tenants` resolves `business` names of
    /// watchlists to tenant ids; `data_dir` holds downloaded lists.
    pub fn start(
        config: ScreeningConfig,
        data_dir: &Path,
        tenants: &HashMap<String, i64>,
        snapshot: Option<SharedSnapshot>,
        metrics: Option<Arc<Metrics>>,
    ) -> Arc<ListsManager> {
        let slots = config
            .sources()
            .into_iter()
            .map(|source| {
                let tenant = source
                    .business
                    .as_ref()
                    .and_then(|b| tenants.get(b).copied());
                let unknown = source.business.is_some() && tenant.is_none();
                ListSlot {
                    last_error: unknown.then(|| {
                        ListError::UnknownBusiness(source.business.clone().unwrap_or_default())
                            .to_string()
                    }),
                    source,
                    tenant,
                    serving: None,
                    last_attempt_at: None,
                    download_error: None,
                }
            })
            .collect();
        let thresholds = config.thresholds();
        let empty = ListScreener::new(
            Arc::new(ScreeningIndex::default()),
            thresholds,
            config.cache_entries,
        );
        let manager = Arc::new(ListsManager {
            downloads_dir: data_dir.join("lists"),
            snapshot,
            metrics,
            current: ArcSwap::from_pointee(empty),
            status: ArcSwap::from_pointee(ScreeningStatus {
                ready: false,
                entities: 0,
                names: 0,
                built_at: None,
                build_millis: 0,
                match_threshold: config.match_threshold,
                potential_threshold: config.potential_threshold,
                lists: Vec::new(),
            }),
            slots: Mutex::new(slots),
            swaps: tokio::sync::watch::Sender::new(0),
            config,
        });
        manager.reload();
        manager
    }

    /// Loads every configured list once (no engine, no metrics) for the command line and tests;
    /// an error names every list that failed.
    pub fn load_all(
        config: ScreeningConfig,
        data_dir: &Path,
    ) -> Result<Arc<ListsManager>, ListError> {
        let manager = ListsManager::start(config, data_dir, &HashMap::new(), None, None);
        let status = manager.status();
        let failures: Vec<String> = status
            .lists
            .iter()
            .filter_map(|l| l.last_error.as_ref().map(|e| format!("{}: {e}", l.name)))
            .collect();
        if !failures.is_empty() {
            return Err(ListError::Failed(failures.join("; ")));
        }
        Ok(manager)
    }

    /// A manager with no lists (screening disabled): an empty index, never reloaded.
    pub fn disabled(config: ScreeningConfig) -> Arc<ListsManager> {
        let thresholds = config.thresholds();
        Arc::new(ListsManager {
            downloads_dir: PathBuf::new(),
            snapshot: None,
            metrics: None,
            current: ArcSwap::from_pointee(ListScreener::new(
                Arc::new(ScreeningIndex::default()),
                thresholds,
                1,
            )),
            status: ArcSwap::from_pointee(ScreeningStatus {
                ready: true,
                entities: 0,
                names: 0,
                built_at: None,
                build_millis: 0,
                match_threshold: config.match_threshold,
                potential_threshold: config.potential_threshold,
                lists: Vec::new(),
            }),
            slots: Mutex::new(Vec::new()),
            swaps: tokio::sync::watch::Sender::new(0),
            config,
        })
    }

    /// The screener serving now.
    pub fn current(&self) -> Arc<ListScreener> {
        self.current.load_full()
    }

    /// Changes every time a new index starts serving (a list was added, changed or removed).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.swaps.subscribe()
    }

    pub fn status(&self) -> Arc<ScreeningStatus> {
        self.status.load_full()
    }

    pub fn config(&self) -> &ScreeningConfig {
        &self.config
    }

    /// The file a list is read from: the last good download for URL lists (falling back to
    /// `path` before the first download), else `path`.
    fn primary_path(&self, source: &ListSource) -> Option<PathBuf> {
        if source.url.is_some() {
            let downloaded = self.downloads_dir.join(format!("{}.download", source.name));
            if downloaded.is_file() {
                return Some(downloaded);
            }
        }
        source.path.as_deref().map(|p| self.config.resolve(p))
    }

    /// Reads and parses one list's current bytes; `None` when they did not change.
    fn load_source(
        &self,
        source: &ListSource,
        previous_digest: Option<&str>,
    ) -> Result<Option<(LoadedSource, String)>, ListError> {
        let Some(primary_path) = self.primary_path(source) else {
            return Err(ListError::Download("not downloaded yet".to_owned()));
        };
        let primary = read(&primary_path)?;
        let companion = |path: &Option<PathBuf>| -> Result<Option<Vec<u8>>, ListError> {
            path.as_deref()
                .map(|p| read(&self.config.resolve(p)))
                .transpose()
        };
        let alt = companion(&source.alt)?;
        let add = companion(&source.add)?;
        let comments = companion(&source.comments)?;
        let mut hasher = Sha256::new();
        for part in [
            Some(&primary),
            alt.as_ref(),
            add.as_ref(),
            comments.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let digest = hex::encode(&hasher.finalize()[..8]);
        if previous_digest == Some(digest.as_str()) {
            return Ok(None);
        }
        let loaded = loaders::load(
            source.format,
            &SourceBytes {
                primary: &primary,
                alt: alt.as_deref(),
                add: add.as_deref(),
                comments: comments.as_deref(),
            },
        )?;
        Ok(Some((loaded, digest)))
    }

    /// Re-reads changed lists and, if anything changed, builds and swaps a new index. Blocking.
    pub fn reload(&self) -> Arc<ScreeningStatus> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let attempt = now_text();
        let mut changed = false;
        for slot in slots.iter_mut() {
            if slot.source.business.is_some() && slot.tenant.is_none() {
                continue;
            }
            slot.last_attempt_at = Some(attempt.clone());
            let previous_digest = slot.serving.as_ref().map(|s| s.digest.as_str());
            let result = self
                .load_source(&slot.source, previous_digest)
                .and_then(|loaded| {
                    let Some((loaded, digest)) = loaded else {
                        return Ok(None);
                    };
                    if let Some(previous) = &slot.serving {
                        let needed = (previous.entities.len() as f32
                            * self.config.min_retained_share)
                            .floor() as usize;
                        if loaded.entities.len() < needed {
                            return Err(ListError::Shrunk {
                                entities: loaded.entities.len(),
                                previous: previous.entities.len(),
                            });
                        }
                    }
                    Ok(Some((loaded, digest)))
                });
            let failing = match result {
                Ok(None) => {
                    slot.last_error = None;
                    false
                }
                Ok(Some((loaded, digest))) => {
                    let name = &slot.source.name;
                    let entities: Vec<Arc<ListEntity>> = loaded
                        .entities
                        .into_iter()
                        .map(|mut entity| {
                            entity.id = format!("{name}:{}", entity.external_id);
                            Arc::new(entity)
                        })
                        .collect();
                    tracing::info!(list = %name, entities = entities.len(), version = %digest, "list loaded");
                    slot.serving = Some(Serving {
                        entities,
                        published: loaded.published,
                        digest,
                        loaded_at: attempt.clone(),
                    });
                    slot.last_error = None;
                    changed = true;
                    false
                }
                Err(error) => {
                    let message = error.to_string();
                    tracing::error!(list = %slot.source.name, error = %message, "list rejected; previous version keeps serving");
                    slot.last_error = Some(message);
                    true
                }
            };
            if let Some(metrics) = &self.metrics {
                metrics
                    .screening_list_failing
                    .with_label_values(&[&slot.source.name])
                    .set(i64::from(failing));
            }
        }

        let mut built_at = self.status.load().built_at.clone();
        let mut build_millis = self.status.load().build_millis;
        if changed || built_at.is_none() {
            let inputs = slots
                .iter()
                .filter_map(|slot| {
                    let serving = slot.serving.as_ref()?;
                    Some(ListInput {
                        list: IndexedList {
                            name: slot.source.name.clone(),
                            kind: slot.source.kind,
                            tenant: slot.tenant,
                            url: slot.source.source_url.clone().or(slot.source.url.clone()),
                            title: slot
                                .source
                                .title
                                .clone()
                                .unwrap_or_else(|| slot.source.name.clone()),
                        },
                        entities: serving.entities.clone(),
                    })
                })
                .collect();
            let index = Arc::new(ScreeningIndex::build(inputs));
            let screener = Arc::new(ListScreener::new(
                index,
                self.config.thresholds(),
                self.config.cache_entries,
            ));
            self.current.store(screener.clone());
            self.swaps.send_modify(|swaps| *swaps += 1);
            if let Some(snapshot) = &self.snapshot {
                snapshot.rcu(|current| Snapshot {
                    screener: screener.clone(),
                    ..Snapshot::clone(current)
                });
            }
            built_at = Some(attempt.clone());
            build_millis = started.elapsed().as_millis() as u64;
            if let Some(metrics) = &self.metrics {
                metrics.screening_reloads.with_label_values(&["ok"]).inc();
                metrics
                    .screening_build_seconds
                    .observe(started.elapsed().as_secs_f64());
            }
            tracing::info!(
                entities = screener.index().entity_count(),
                names = screener.index().name_count(),
                millis = build_millis,
                "screening index built"
            );
        }

        let index = self.current.load();
        let counts = index.index().counts_per_list();
        let list_positions: HashMap<&str, usize> = index
            .index()
            .lists()
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.as_str(), i))
            .collect();
        let lists: Vec<ListStatus> = slots
            .iter()
            .map(|slot| {
                let (entities, names) = list_positions
                    .get(slot.source.name.as_str())
                    .map(|i| counts[*i])
                    .unwrap_or((0, 0));
                if let Some(metrics) = &self.metrics {
                    metrics
                        .screening_list_entities
                        .with_label_values(&[&slot.source.name])
                        .set(entities as i64);
                }
                ListStatus {
                    name: slot.source.name.clone(),
                    title: slot
                        .source
                        .title
                        .clone()
                        .unwrap_or_else(|| slot.source.name.clone()),
                    kind: slot.source.kind.as_str(),
                    format: format!("{:?}", slot.source.format),
                    source: slot
                        .source
                        .url
                        .clone()
                        .or_else(|| {
                            self.primary_path(&slot.source)
                                .map(|p| p.display().to_string())
                        })
                        .unwrap_or_default(),
                    business: slot.source.business.clone(),
                    published: slot.serving.as_ref().and_then(|s| s.published.clone()),
                    entities,
                    names,
                    version: slot.serving.as_ref().map(|s| s.digest.clone()),
                    loaded_at: slot.serving.as_ref().map(|s| s.loaded_at.clone()),
                    last_attempt_at: slot.last_attempt_at.clone(),
                    // Why the last download failed says more than "not downloaded yet".
                    last_error: slot
                        .download_error
                        .clone()
                        .or_else(|| slot.last_error.clone()),
                }
            })
            .collect();
        let status = Arc::new(ScreeningStatus {
            ready: slots.iter().all(|slot| slot.serving.is_some()),
            entities: index.index().entity_count(),
            names: index.index().name_count(),
            built_at,
            build_millis,
            match_threshold: self.config.match_threshold,
            potential_threshold: self.config.potential_threshold,
            lists,
        });
        self.status.store(status.clone());
        status
    }

    /// Watches the directories of every list file and reloads after changes settle. The returned
    /// watcher must be kept alive.
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
        let mut dirs: Vec<PathBuf> = Vec::new();
        {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            for slot in slots.iter() {
                let source = &slot.source;
                let paths = [&source.path, &source.alt, &source.add, &source.comments];
                for path in paths.into_iter().flatten() {
                    let resolved = self.config.resolve(path);
                    if let Some(dir) = resolved.parent() {
                        if dir.is_dir() && !dirs.iter().any(|d| d == dir) {
                            dirs.push(dir.to_path_buf());
                        }
                    }
                }
            }
        }
        if self.downloads_dir.is_dir() {
            dirs.push(self.downloads_dir.clone());
        }
        for dir in &dirs {
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        let manager = self.clone();
        std::thread::Builder::new()
            .name("vigil-lists-watch".into())
            .spawn(move || {
                while receiver.recv().is_ok() {
                    // Debounce: a list copy writes many events.
                    while receiver.recv_timeout(Duration::from_millis(500)).is_ok() {}
                    manager.reload();
                }
            })
            .map_err(|e| notify::Error::generic(&e.to_string()))?;
        Ok(watcher)
    }

    /// Downloads every list configured with a `url` now and then every
    /// `refresh_interval_secs`; a download that parses replaces the cached file, then the lists
    /// reload. Downloads follow the outbound address `policy` (operator-given URLs).
    pub fn spawn_downloads(
        self: &Arc<Self>,
        policy: AddressPolicy,
    ) -> Option<tokio::task::JoinHandle<()>> {
        if !self.config.sources().iter().any(|s| s.url.is_some()) {
            return None;
        }
        let manager = self.clone();
        Some(tokio::spawn(async move {
            let client = match download_client(policy) {
                Ok(client) => client,
                Err(error) => {
                    tracing::error!(%error, "cannot build the list download client");
                    return;
                }
            };
            let interval = Duration::from_secs(manager.config.refresh_interval_secs.max(60));
            loop {
                manager.download_round(&client).await;
                tokio::time::sleep(interval).await;
            }
        }))
    }

    /// Downloads every list configured with a `url` once; when any download parsed, the lists
    /// reload (off the async threads). A failed download leaves the previous copy serving and
    /// shows its error in the list's status, log and `vigil_screening_list_failing`. Returns
    /// the status after the round.
    pub async fn download_round(self: &Arc<Self>, client: &OutboundClient) -> Arc<ScreeningStatus> {
        let sources: Vec<ListSource> = self
            .config
            .sources()
            .into_iter()
            .filter(|s| s.url.is_some())
            .collect();
        let mut any = false;
        for source in &sources {
            let result = self.download(client, source).await;
            let error = match &result {
                Ok(()) => None,
                Err(error) => {
                    tracing::error!(list = %source.name, %error, "list download failed; previous version keeps serving");
                    if let Some(metrics) = &self.metrics {
                        metrics
                            .screening_list_failing
                            .with_label_values(&[&source.name])
                            .set(1);
                    }
                    Some(format!("download failed: {error}"))
                }
            };
            any |= result.is_ok();
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(slot) = slots.iter_mut().find(|s| s.source.name == source.name) {
                slot.download_error = error;
            }
        }
        if !any {
            return self.refresh_status();
        }
        let reloading = self.clone();
        match tokio::task::spawn_blocking(move || reloading.reload()).await {
            Ok(status) => status,
            Err(_) => self.status(),
        }
    }

    /// The status rebuilt from the slots without reloading anything.
    fn refresh_status(&self) -> Arc<ScreeningStatus> {
        let mut status = ScreeningStatus::clone(&self.status());
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        for list in &mut status.lists {
            if let Some(slot) = slots.iter().find(|s| s.source.name == list.name) {
                list.last_error = slot
                    .download_error
                    .clone()
                    .or_else(|| slot.last_error.clone());
            }
        }
        let status = Arc::new(status);
        self.status.store(status.clone());
        status
    }

    async fn download(
        &self,
        client: &OutboundClient,
        source: &ListSource,
    ) -> Result<(), ListError> {
        let Some(url) = &source.url else {
            return Ok(());
        };
        let url = outbound::policy::parse_url(url)
            .map_err(|e| ListError::Download(format!("url {e}")))?;
        let request = client
            .request(reqwest::Method::GET, &url)
            .map_err(|e| ListError::Download(e.to_string()))?;
        let response = client
            .send(request)
            .await
            .map_err(|e| ListError::Download(e.to_string()))?;
        if !response.status().is_success() {
            return Err(ListError::Download(format!(
                "answered {}",
                response.status()
            )));
        }
        let bytes = outbound::read_limited(response, MAX_DOWNLOAD_BYTES)
            .await
            .map_err(|e| ListError::Download(e.to_string()))?;
        let format = source.format;
        let body = bytes.clone();
        tokio::task::spawn_blocking(move || {
            loaders::load(
                format,
                &SourceBytes {
                    primary: &body,
                    alt: None,
                    add: None,
                    comments: None,
                },
            )
        })
        .await
        .map_err(|e| ListError::Download(e.to_string()))??;
        tokio::fs::create_dir_all(&self.downloads_dir)
            .await
            .map_err(|e| ListError::Download(e.to_string()))?;
        let target = self.downloads_dir.join(format!("{}.download", source.name));
        let partial = self.downloads_dir.join(format!("{}.partial", source.name));
        tokio::fs::write(&partial, &bytes)
            .await
            .map_err(|e| ListError::Download(e.to_string()))?;
        tokio::fs::rename(&partial, &target)
            .await
            .map_err(|e| ListError::Download(e.to_string()))?;
        Ok(())
    }
}

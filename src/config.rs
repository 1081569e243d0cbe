//! Configuration: a serde type read from TOML and `VIGIL_*` environment variables, validated and
//! then built into [`Settings`], the resolved form the service runs on.
//!
//! Precedence, lowest first: built-in defaults, the config file, environment variables, CLI flags.
//! Environment variables map onto keys by prefix and `__` for nesting: `VIGIL_LISTEN` sets
//! `listen`, `VIGIL_ENGINE__SHARDS` sets `engine.shards`. The environment is passed in as a map,
//! never read from globals here, so loading is testable.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cdd::config::CddConfig;
use crate::edd::config::EddConfig;
use crate::engine::rules::SandboxLimits;
use crate::identity::config::IdentityConfig;
use crate::reporting::config::ReportingConfig;
use crate::screening::config::ScreeningConfig;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config: {0}")]
    Parse(String),
    #[error("invalid setting {key}: {problem}")]
    Invalid { key: String, problem: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP API listens on.
    pub listen: String,
    /// Directory for the embedded database and other local state.
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; empty means SQLite at `<data_dir>/vigil.db`.
    pub database_url: String,
    /// The rule pack directory.
    pub rules_dir: PathBuf,
    /// Rule fixtures run before a reloaded pack goes live (skipped if the directory is missing).
    pub fixtures_dir: PathBuf,
    pub engine: EngineConfig,
    pub http: HttpConfig,
    pub store: StoreConfig,
    pub sandbox: SandboxLimits,
    pub log: LogConfig,
    pub screening: ScreeningConfig,
    /// CDD customers: the risk model.
    pub cdd: CddConfig,
    /// EDD requests: the pipelines.
    pub edd: EddConfig,
    /// Identity and registry lookups (NIN, BVN, CAC).
    pub identity: IdentityConfig,
    /// FIU reporting: uploads and calls to the client's reporting endpoint.
    pub reporting: ReportingConfig,
    /// Allow callback and client URLs on loopback and private addresses (never link-local or
    /// metadata addresses). Off by default; tests and single-host setups turn it on.
    pub allow_private_callbacks: bool,
    /// The address policy of the URLs this file gives (identity upstream, list downloads).
    pub outbound: crate::outbound::OutboundConfig,
    /// Webhook delivery: timeouts, backoff, retry window.
    pub webhooks: crate::webhooks::WebhookConfig,
    /// The adverse-media index and search.
    pub media: crate::media::MediaConfig,
    /// Risk-monitoring re-checks.
    pub monitoring: crate::monitoring::MonitoringConfig,
    /// Streaming intake and outputs on Kafka (off unless brokers are set).
    pub kafka: crate::sources::kafka::config::KafkaConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Shard threads; 0 means one per core.
    pub shards: usize,
    pub queue_capacity: usize,
    /// Events per user kept exactly in the 24 h ring before older ones fold into day buckets.
    pub max_recent_events: usize,
    /// How far `transactionDate` may be ahead of the server clock before it is clamped.
    pub max_future_skew_secs: u64,
    /// Days of stored transactions replayed into state at start (covers the 30 d window).
    pub restore_days: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    pub max_body_bytes: usize,
    /// How long a request waits for its durable decision before answering 503.
    pub request_timeout_ms: u64,
    /// Serve `POST /bench/bare` (parse and validate a payload, answer a constant) so load tests
    /// can measure the HTTP ceiling in the same process. Off in production.
    pub bare_endpoint: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// Most records one group commit holds.
    pub max_batch: usize,
    pub pool_size: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    pub format: LogFormat,
    /// A tracing filter such as `info` or `vigil=debug,info`.
    pub level: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("data"),
            database_url: String::new(),
            rules_dir: PathBuf::from("rules"),
            fixtures_dir: PathBuf::from("fixtures/rules"),
            engine: EngineConfig::default(),
            http: HttpConfig::default(),
            store: StoreConfig::default(),
            sandbox: SandboxLimits::default(),
            log: LogConfig::default(),
            screening: ScreeningConfig::default(),
            cdd: CddConfig::default(),
            edd: EddConfig::default(),
            identity: IdentityConfig::default(),
            reporting: ReportingConfig::default(),
            allow_private_callbacks: false,
            outbound: crate::outbound::OutboundConfig::default(),
            webhooks: crate::webhooks::WebhookConfig::default(),
            media: crate::media::MediaConfig::default(),
            monitoring: crate::monitoring::MonitoringConfig::default(),
            kafka: crate::sources::kafka::config::KafkaConfig::default(),
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            shards: 0,
            queue_capacity: 4096,
            max_recent_events: 512,
            max_future_skew_secs: 300,
            restore_days: 31,
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            max_body_bytes: 1024 * 1024,
            request_timeout_ms: 5_000,
            bare_endpoint: false,
        }
    }
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            max_batch: 512,
            pool_size: 8,
        }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Text,
            level: "info".into(),
        }
    }
}

const ENV_PREFIX: &str = "VIGIL_";

/// Environment variables that are not config keys (read by other parts, e.g. CLI flags).
/// `VIGIL_TEST_DATABASE_URL` and `VIGIL_TEST_KAFKA_BROKERS` are the test suite's PostgreSQL server
/// and broker, `VIGIL_TANSU_DIR` where it keeps the broker (`scripts/test.sh`).
const ENV_NOT_CONFIG: &[&str] = &[
    "VIGIL_CONFIG",
    "VIGIL_KAFKA_BROKERS",
    "VIGIL_TEST_DATABASE_URL",
    "VIGIL_TEST_KAFKA_BROKERS",
    "VIGIL_TANSU_DIR",
];

/// Prefixes Kubernetes injects for a Service named `vigil` (`VIGIL_SERVICE_HOST`,
/// `VIGIL_PORT_8080_TCP`, …); they are not Vigil settings and are ignored.
const ENV_SERVICE_LINKS: &[&str] = &["VIGIL_SERVICE_", "VIGIL_PORT"];

impl Config {
    /// Loads defaults, then `file` (if any), then the `VIGIL_*` entries of `env`.
    pub fn load(
        file: Option<&Path>,
        env: &BTreeMap<String, String>,
    ) -> Result<Config, ConfigError> {
        let mut table = match file {
            None => toml::Table::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                text.parse::<toml::Table>()
                    .map_err(|e| ConfigError::Parse(format!("{}: {e}", path.display())))?
            }
        };
        for (name, value) in env {
            let Some(key) = name.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            if ENV_NOT_CONFIG.contains(&name.as_str())
                || ENV_SERVICE_LINKS.iter().any(|p| name.starts_with(p))
            {
                continue;
            }
            let path: Vec<String> = key.split("__").map(str::to_lowercase).collect();
            set_path(&mut table, &path, env_value(value));
        }
        // The risk model merges onto the built-in one, key by key (see `cdd::config`).
        if let Some(user) = table.remove("cdd") {
            let mut merged = toml::Value::try_from(CddConfig::default())
                .map_err(|e| ConfigError::Parse(e.to_string()))?;
            deep_merge(&mut merged, user);
            table.insert("cdd".to_owned(), merged);
        }
        let config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    ConfigError::Parse(e.to_string().trim().replace('\n', " "))
                })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, problem: &str| ConfigError::Invalid {
            key: key.into(),
            problem: problem.into(),
        };
        self.listen
            .parse::<SocketAddr>()
            .map_err(|_| invalid("listen", "must be an address such as 127.0.0.1:8080"))?;
        if self.engine.queue_capacity == 0 {
            return Err(invalid("engine.queue_capacity", "must be at least 1"));
        }
        if self.engine.max_recent_events < 8 {
            return Err(invalid("engine.max_recent_events", "must be at least 8"));
        }
        if self.http.max_body_bytes < 1024 {
            return Err(invalid("http.max_body_bytes", "must be at least 1024"));
        }
        if self.http.request_timeout_ms == 0 {
            return Err(invalid("http.request_timeout_ms", "must be positive"));
        }
        if self.store.max_batch == 0 || self.store.max_batch > 2000 {
            return Err(invalid("store.max_batch", "must be between 1 and 2000"));
        }
        if self.store.pool_size == 0 {
            return Err(invalid("store.pool_size", "must be at least 1"));
        }
        let url = &self.database_url;
        if !url.is_empty() && !url.starts_with("sqlite:") && !url.starts_with("postgres") {
            return Err(invalid(
                "database_url",
                "must start with sqlite: or postgres://",
            ));
        }
        if let Some((key, problem)) = self
            .screening
            .problems()
            .into_iter()
            .chain(self.cdd.risk.problems())
            .chain(self.edd.problems())
            .chain(self.identity.problems())
            .chain(self.reporting.problems())
            .chain(self.webhooks.problems())
            .chain(self.media.problems())
            .chain(self.monitoring.problems())
            .chain(self.kafka.problems())
            .chain(self.operator_url_problems())
            .next()
        {
            return Err(ConfigError::Invalid { key, problem });
        }
        Ok(())
    }

    /// The URLs this file gives, against the outbound address policy: a literal address is judged
    /// here, a host name at every connection (by the outbound client's resolver).
    fn operator_url_problems(&self) -> Vec<(String, String)> {
        let allow_private = self.outbound.allow_private_upstreams;
        let mut urls = Vec::new();
        if self.identity.provider == crate::identity::config::ProviderKind::Upstream {
            urls.push((
                "identity.upstream.base_url".to_owned(),
                self.identity.upstream.base_url.as_str(),
            ));
        }
        for (index, list) in self.screening.lists.iter().enumerate() {
            if let Some(url) = &list.url {
                urls.push((format!("screening.lists[{index}].url"), url.as_str()));
            }
        }
        urls.into_iter()
            .filter_map(|(key, raw)| {
                let problem = crate::outbound::policy::parse_url(raw)
                    .and_then(|url| crate::outbound::policy::check_url(&url, allow_private));
                problem.err().map(|error| (key, error.to_string()))
            })
            .collect()
    }

    /// Resolves the configuration into the runtime settings.
    pub fn build(self) -> Result<Settings, ConfigError> {
        self.validate()?;
        let listen = self.listen.parse().map_err(|_| ConfigError::Invalid {
            key: "listen".into(),
            problem: "must be an address".into(),
        })?;
        let database_url = if self.database_url.is_empty() {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("vigil.db").display()
            )
        } else {
            self.database_url.clone()
        };
        let shards = if self.engine.shards == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            self.engine.shards
        };
        Ok(Settings {
            listen,
            database_url,
            shards,
            config: self,
        })
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub database_url: String,
    pub shards: usize,
    pub config: Config,
}

fn env_value(raw: &str) -> toml::Value {
    let trimmed = raw.trim();
    if let Ok(i) = trimmed.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = trimmed.parse::<f64>() {
        if trimmed.contains('.') || trimmed.contains('e') {
            return toml::Value::Float(f);
        }
    }
    match trimmed {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(raw.to_owned()),
    }
}

/// Merges `over` onto `base`: tables key by key, anything else replaced.
fn deep_merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(base), toml::Value::Table(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

fn set_path(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = table;
    for key in parents {
        let entry = current
            .entry(key.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        current = next;
    }
    current.insert(last.clone(), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_run_as_is() {
        let settings = Config::load(None, &BTreeMap::new())
            .expect("defaults load")
            .build()
            .expect("defaults build");
        assert_eq!(settings.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(settings.database_url, "sqlite://data/vigil.db?mode=rwc");
        assert!(settings.shards >= 1);
    }

    #[test]
    fn environment_overrides_file_and_nests_with_double_underscores() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("vigil.toml");
        std::fs::write(&file, "listen = \"0.0.0.0:9000\"\n[engine]\nshards = 3\n").expect("write");
        let config = Config::load(
            Some(&file),
            &env(&[
                ("VIGIL_ENGINE__SHARDS", "5"),
                ("VIGIL_DATA_DIR", "/var/lib/vigil"),
                ("VIGIL_CONFIG", "ignored"),
                ("VIGIL_TEST_DATABASE_URL", "postgres://ignored"),
                ("VIGIL_SERVICE_HOST", "10.0.0.1"),
                ("VIGIL_PORT_8080_TCP_ADDR", "10.0.0.1"),
                ("VIGIL_PORT", "tcp://10.0.0.1:8080"),
                ("OTHER", "x"),
            ]),
        )
        .expect("loads");
        assert_eq!(config.listen, "0.0.0.0:9000");
        assert_eq!(config.engine.shards, 5);
        assert_eq!(config.data_dir, PathBuf::from("/var/lib/vigil"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let error = Config::load(None, &env(&[("VIGIL_LISTN", "x")])).expect_err("unknown key");
        assert!(error.to_string().contains("listn"), "{error}");
        let error = Config::load(None, &env(&[("VIGIL_LISTEN", "nowhere")])).expect_err("bad addr");
        assert!(matches!(error, ConfigError::Invalid { ref key, .. } if key == "listen"));
        let error =
            Config::load(None, &env(&[("VIGIL_DATABASE_URL", "mysql://x")])).expect_err("bad url");
        assert!(matches!(error, ConfigError::Invalid { ref key, .. } if key == "database_url"));
    }

    #[test]
    fn the_example_config_in_deploy_parses_and_validates() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/vigil.example.toml");
        let config = Config::load(Some(&path), &BTreeMap::new()).expect("example parses");
        assert!(config.screening.enabled);
        config.build().expect("example validates");
    }

    #[test]
    fn the_example_config_carries_the_built_in_risk_model_and_pipelines() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/vigil.example.toml");
        let config = Config::load(Some(&path), &BTreeMap::new()).expect("example parses");
        assert_eq!(config.cdd, CddConfig::default());
        assert_eq!(config.edd, EddConfig::default());
    }

    #[test]
    fn workflow_settings_are_validated_and_overridable_from_the_environment() {
        let error = Config::load(None, &env(&[("VIGIL_CDD__RISK__MEDIUM_FROM", "90")]))
            .expect_err("medium above high");
        assert!(
            error.to_string().contains("cdd.risk.medium_from"),
            "{error}"
        );
        let config = Config::load(None, &env(&[("VIGIL_CDD__RISK__SANCTIONS__WEIGHT", "40")]))
            .expect("loads");
        assert_eq!(config.cdd.risk.sanctions.weight, 40.0);
        assert_eq!(
            config.cdd.risk.sanctions.values.get("match"),
            Some(&100.0),
            "an env override of one key keeps the rest of the built-in factor"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("vigil.toml");
        std::fs::write(
            &file,
            "[[edd.pipelines]]\nslug = \"express\"\nsteps = [{ key = \"approve\", name = \"Approve\", kind = \"approval\" }]\n",
        )
        .expect("write");
        let config = Config::load(Some(&file), &BTreeMap::new()).expect("loads");
        assert_eq!(config.edd.slugs(), ["express"]);
        std::fs::write(
            &file,
            "[[edd.pipelines]]\nslug = \"Bad Slug\"\nsteps = []\n",
        )
        .expect("write");
        let error = Config::load(Some(&file), &BTreeMap::new()).expect_err("bad slug");
        assert!(error.to_string().contains("edd.pipelines[0]"), "{error}");
    }

    #[test]
    fn the_example_config_carries_the_identity_and_reporting_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/vigil.example.toml");
        let config = Config::load(Some(&path), &BTreeMap::new()).expect("example parses");
        assert_eq!(config.identity, IdentityConfig::default());
        assert_eq!(config.reporting, ReportingConfig::default());
        assert!(!config.allow_private_callbacks);
        let config =
            Config::load(None, &env(&[("VIGIL_ALLOW_PRIVATE_CALLBACKS", "true")])).expect("loads");
        assert!(config.allow_private_callbacks);
        let error = Config::load(None, &env(&[("VIGIL_REPORTING__BATCH_SIZE", "101")]))
            .expect_err("over the spec's batch size");
        assert!(
            error.to_string().contains("reporting.batch_size"),
            "{error}"
        );
        let error = Config::load(None, &env(&[("VIGIL_IDENTITY__PROVIDER", "upstream")]))
            .expect_err("upstream without a base URL");
        assert!(
            error.to_string().contains("identity.upstream.base_url"),
            "{error}"
        );
    }

    #[test]
    fn the_example_config_carries_the_async_aml_defaults_and_they_are_validated() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/vigil.example.toml");
        let config = Config::load(Some(&path), &BTreeMap::new()).expect("example parses");
        assert!(!config.allow_private_callbacks);
        assert_eq!(config.webhooks, crate::webhooks::WebhookConfig::default());
        assert_eq!(config.media, crate::media::MediaConfig::default());
        assert_eq!(
            config.monitoring,
            crate::monitoring::MonitoringConfig::default()
        );
        let error = Config::load(None, &env(&[("VIGIL_WEBHOOKS__TIMEOUT_MS", "0")]))
            .expect_err("a zero timeout is refused");
        assert!(error.to_string().contains("webhooks.timeout_ms"), "{error}");
        let error = Config::load(None, &env(&[("VIGIL_MEDIA__NAME_THRESHOLD", "20.5")]))
            .expect_err("a name threshold below 50 is refused");
        assert!(
            error.to_string().contains("media.name_threshold"),
            "{error}"
        );
    }

    #[test]
    fn screening_thresholds_are_validated() {
        let env: BTreeMap<String, String> = [(
            "VIGIL_SCREENING__POTENTIAL_THRESHOLD".to_owned(),
            "95".to_owned(),
        )]
        .into();
        let error = Config::load(None, &env).expect_err("potential above match is refused");
        assert!(
            error.to_string().contains("screening.potential_threshold"),
            "{error}"
        );
    }
}

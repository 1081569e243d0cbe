//! Shared helpers for the integration tests: a real `vigil serve` on a free loopback port over a
//! temporary SQLite store or a fresh PostgreSQL database, a small rule pack the tests control,
//! and an authenticated client.
//!
//! PostgreSQL: `VIGIL_TEST_DATABASE_URL` names a server and a database the tests may connect to
//! and create databases from (`scripts/test.sh` starts one on loopback and sets it). Each test
//! gets its own database, created for it and dropped afterwards, so tests are independent and
//! run in parallel. A PostgreSQL test without the variable fails; it never skips.

pub mod receiver;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use vigil::config::Config;
use vigil::server::Running;
use vigil::store::Store;

pub const TEST_PACK: &str = r#"
[pack]
name = "test-pack"
version = "1"

[decision]
review = 0.5
reject = 0.9

[params]
big = 10000.0
"#;

/// Rules whose behaviour the tests rely on, independent of the default pack's tuning.
pub const TEST_RULES: &[(&str, &str)] = &[
    (
        "T-SANCTION.rhai",
        "//! id = \"T-SANCTION\"\n//! name = \"Sanctioned party\"\n//! description = \"sender or receiver matches a sanctions list\"\n//! severity = \"critical\"\n//! score = 1.0\n//! action = \"reject\"\n//! priority = 100\n\nscreening.sender_sanction == \"match\" || screening.receiver_sanction == \"match\"\n",
    ),
    (
        "T-PEP.rhai",
        "//! id = \"T-PEP\"\n//! name = \"PEP party\"\n//! description = \"sender or receiver is a politically exposed person\"\n//! severity = \"high\"\n//! score = 0.5\n\nscreening.sender_pep != \"clear\" || screening.receiver_pep != \"clear\"\n",
    ),
    (
        "T-BIG.rhai",
        "//! id = \"T-BIG\"\n//! name = \"Big amount\"\n//! description = \"amount above 10,000\"\n//! severity = \"medium\"\n//! score = 0.6\n\ntx.amount > BIG\n",
    ),
    (
        "T-VELOCITY.rhai",
        "//! id = \"T-VELOCITY\"\n//! name = \"Third debit in 24h\"\n//! description = \"two or more debits in the previous 24 hours\"\n//! severity = \"low\"\n//! score = 0.2\n\ntx.is_debit && agg.debit_count_24h >= 2\n",
    ),
    (
        "T-BLACKLIST.rhai",
        "//! id = \"T-BLACKLIST\"\n//! name = \"Blacklisted party\"\n//! description = \"user, account, device or VAS receiver is blacklisted\"\n//! severity = \"critical\"\n//! score = 1.0\n//! action = \"reject\"\n//! priority = 100\n\nlists.user || lists.account || lists.device || lists.vas_receiver\n",
    ),
    (
        "T-NEW-DEVICE.rhai",
        "//! id = \"T-NEW-DEVICE\"\n//! name = \"Unknown device\"\n//! description = \"device not seen before for this user\"\n//! severity = \"low\"\n//! score = 0.1\n\ndevice.is_new\n",
    ),
];

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub running: Option<Running>,
    pub base: String,
    pub client: reqwest::Client,
    /// The database the service runs on.
    pub database: String,
    /// The PostgreSQL database made for this test, if any (dropped with the harness).
    pub pg: Option<TestDatabase>,
    /// Applied to the configuration at start and at every restart.
    pub tweak: Option<fn(&mut Config)>,
}

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub const TEST_DATABASE_ENV: &str = "VIGIL_TEST_DATABASE_URL";

/// A PostgreSQL database created for one test; dropped (with its connections) on drop.
pub struct TestDatabase {
    pub url: String,
    admin: String,
    name: String,
}

impl TestDatabase {
    /// Creates a uniquely named database on the server of `VIGIL_TEST_DATABASE_URL`.
    pub async fn create() -> TestDatabase {
        let admin = std::env::var(TEST_DATABASE_ENV).unwrap_or_else(|_| {
            panic!(
                "{TEST_DATABASE_ENV} is not set: this test needs PostgreSQL. Run scripts/test.sh \
                 (it starts a server on loopback), or set {TEST_DATABASE_ENV}=postgres://user@host:port/db"
            )
        });
        sqlx::any::install_default_drivers();
        let name = format!("vigil_t_{}", uuid::Uuid::new_v4().simple());
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {TEST_DATABASE_ENV} ({admin}): {e}"));
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .expect("create the test database");
        let _ = sqlx::Connection::close(conn).await;
        let mut url = url::Url::parse(&admin).expect("VIGIL_TEST_DATABASE_URL is a URL");
        url.set_path(&name);
        TestDatabase {
            url: url.to_string(),
            admin,
            name,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // A runtime of its own: drop may run inside (or after) the test's runtime.
        let _ = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                if let Ok(mut conn) =
                    <sqlx::AnyConnection as sqlx::Connection>::connect(&admin).await
                {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

/// A database URL for `backend`: a SQLite file in `dir`, or a fresh PostgreSQL database.
pub async fn database_for(backend: Backend, dir: &Path) -> (String, Option<TestDatabase>) {
    match backend {
        Backend::Sqlite => (
            format!("sqlite://{}?mode=rwc", dir.join("data/vigil.db").display()),
            None,
        ),
        Backend::Postgres => {
            let db = TestDatabase::create().await;
            (db.url.clone(), Some(db))
        }
    }
}

/// Runs each named `async fn name(backend: Backend)` as two tests, `sqlite::name` and
/// `postgres::name`.
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Sqlite).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Postgres).await;
                }
            )+
        }
    };
}

pub fn write_test_pack(dir: &Path) {
    std::fs::create_dir_all(dir).expect("rules dir");
    std::fs::write(dir.join("pack.toml"), TEST_PACK).expect("pack");
    for (name, source) in TEST_RULES {
        std::fs::write(dir.join(name), source).expect("rule");
    }
}

/// A small sanctions watchlist and PEP list in the custom CSV format, so API tests screen
/// against lists they control (the bundled lists have their own tests).
pub const TEST_SANCTIONS_CSV: &str = "id,name,type,aliases,countries,birth_date,remarks
S1,Ivan Petrovich Sidorov,individual,Иван Сидоров;Ivan Sydorov,ru,1961-04-02,test entry
S2,Golden Crescent Trading LLC,entity,Golden Crescent General Trading,ae,,test entry
";
pub const TEST_PEPS_CSV: &str = "id,name,type,aliases,countries,birth_date,remarks
P1,Amina Bello Yusuf,individual,,ng,1970,test minister
";

pub fn write_test_lists(dir: &Path) {
    std::fs::create_dir_all(dir).expect("lists dir");
    std::fs::write(dir.join("sanctions.csv"), TEST_SANCTIONS_CSV).expect("sanctions list");
    std::fs::write(dir.join("peps.csv"), TEST_PEPS_CSV).expect("pep list");
}

pub fn test_list_sources() -> Vec<vigil::screening::config::ListSource> {
    use vigil::screening::config::ListSource;
    use vigil::screening::entity::ListKind;
    use vigil::screening::loaders::ListFormat;
    let list = |name: &str, kind: ListKind, file: &str| ListSource {
        name: name.to_owned(),
        title: None,
        kind,
        format: ListFormat::CustomCsv,
        path: Some(PathBuf::from(file)),
        alt: None,
        add: None,
        comments: None,
        url: None,
        source_url: None,
        business: None,
    };
    vec![
        list("test-sanctions", ListKind::Sanction, "sanctions.csv"),
        list("test-peps", ListKind::Pep, "peps.csv"),
    ]
}

pub fn config_for(dir: &Path, rules: &Path, fixtures: &Path) -> Config {
    let mut config = Config::load(None, &BTreeMap::new()).expect("defaults");
    config.listen = "127.0.0.1:0".into();
    config.data_dir = dir.join("data");
    config.rules_dir = rules.to_path_buf();
    config.fixtures_dir = fixtures.to_path_buf();
    config.engine.shards = 2;
    write_test_lists(&dir.join("lists"));
    config.screening.lists_dir = dir.join("lists");
    config.screening.lists = test_list_sources();
    config
}

impl Harness {
    /// Starts a service with the test rule pack in a fresh directory.
    pub async fn start() -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        write_test_pack(&dir.path().join("rules"));
        let config = config_for(
            dir.path(),
            &dir.path().join("rules"),
            &dir.path().join("no-fixtures"),
        );
        Harness::start_with(dir, config).await
    }

    /// Starts a service with the test rule pack on `backend`.
    pub async fn start_on(backend: Backend) -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        write_test_pack(&dir.path().join("rules"));
        let config = config_for(
            dir.path(),
            &dir.path().join("rules"),
            &dir.path().join("no-fixtures"),
        );
        Harness::start_with_on(backend, dir, config).await
    }

    /// Starts a service on `backend` with `tweak` applied to its configuration (also on restart).
    pub async fn start_on_with(backend: Backend, tweak: fn(&mut Config)) -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        write_test_pack(&dir.path().join("rules"));
        let mut config = config_for(
            dir.path(),
            &dir.path().join("rules"),
            &dir.path().join("no-fixtures"),
        );
        let (url, pg) = database_for(backend, dir.path()).await;
        if pg.is_some() {
            config.database_url = url;
            config.store.pool_size = 4;
        }
        tweak(&mut config);
        let mut harness = Harness::start_with(dir, config).await;
        harness.pg = pg;
        harness.tweak = Some(tweak);
        harness
    }

    /// Starts a service on `backend` with a configuration made for `dir` (its own rule pack).
    pub async fn start_with_on(
        backend: Backend,
        dir: tempfile::TempDir,
        mut config: Config,
    ) -> Harness {
        let (url, pg) = database_for(backend, dir.path()).await;
        if pg.is_some() {
            config.database_url = url;
            config.store.pool_size = 4;
        }
        let mut harness = Harness::start_with(dir, config).await;
        harness.pg = pg;
        harness
    }

    pub async fn start_with(dir: tempfile::TempDir, config: Config) -> Harness {
        let settings = config.build().expect("settings");
        let database = settings.database_url.clone();
        let running = vigil::server::start(settings)
            .await
            .expect("service starts");
        let base = format!("http://{}", running.addr);
        Harness {
            dir,
            running: Some(running),
            base,
            client: reqwest::Client::new(),
            database,
            pg: None,
            tweak: None,
        }
    }

    pub fn rules_dir(&self) -> PathBuf {
        self.dir.path().join("rules")
    }

    pub fn database_url(&self) -> String {
        self.database.clone()
    }

    /// Issues a key through the store, as `vigil keys create` does (a second connection).
    pub async fn key(&self, business: &str, admin: bool) -> (String, String) {
        let store = Store::connect(&self.database_url(), 1)
            .await
            .expect("store");
        let key = vigil::api::auth::issue_key(&store, business, admin)
            .await
            .expect("key");
        (key.api_key, key.api_secret)
    }

    pub async fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await.expect("clean shutdown");
        }
    }

    /// Restarts on the same data directory and database.
    pub async fn restart(&mut self) {
        self.stop().await;
        let mut config = config_for(
            self.dir.path(),
            &self.dir.path().join("rules"),
            &self.dir.path().join("no-fixtures"),
        );
        if self.pg.is_some() {
            config.database_url = self.database.clone();
            config.store.pool_size = 4;
        }
        if let Some(tweak) = self.tweak {
            tweak(&mut config);
        }
        let settings = config.build().expect("settings");
        let running = vigil::server::start(settings)
            .await
            .expect("service restarts");
        self.base = format!("http://{}", running.addr);
        self.running = Some(running);
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends an authenticated request; answers the status and the JSON body (Null if none).
    pub async fn send(
        &self,
        key: &(String, String),
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .header("apiKey", &key.0)
            .header("apiSecret", &key.1);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, key: &(String, String), path: &str, body: &Value) -> (u16, Value) {
        self.send(key, reqwest::Method::POST, path, Some(body))
            .await
    }

    pub async fn put(&self, key: &(String, String), path: &str, body: &Value) -> (u16, Value) {
        self.send(key, reqwest::Method::PUT, path, Some(body)).await
    }

    pub async fn get(&self, key: &(String, String), path: &str) -> (u16, Value) {
        self.send(key, reqwest::Method::GET, path, None).await
    }

    pub async fn delete(&self, key: &(String, String), path: &str) -> (u16, Value) {
        self.send(key, reqwest::Method::DELETE, path, None).await
    }

    pub async fn patch(&self, key: &(String, String), path: &str, body: &Value) -> (u16, Value) {
        self.send(key, reqwest::Method::PATCH, path, Some(body))
            .await
    }

    /// Sends a request with a raw `Authorization` header (the EDD endpoints).
    pub async fn send_authorized(
        &self,
        authorization: Option<&str>,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self.client.request(method, self.url(path));
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Adds an analyst to `key`'s business; answers their `_id`.
    pub async fn analyst(&self, key: &(String, String), first: &str, last: &str) -> String {
        let (status, body) = self
            .post(
                key,
                "/api/v1/case-management/analysts",
                &json!({"firstName": first, "lastName": last,
                    "email": format!("{}.{}@acme-bank.ng", first.to_lowercase(), last.to_lowercase())}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["data"]["_id"].as_str().expect("analyst id").to_owned()
    }

    /// The business's cases (first page, newest first).
    pub async fn cases(&self, key: &(String, String), query: &str) -> Vec<Value> {
        let (status, body) = self
            .get(key, &format!("/api/v1/case-management/cases{query}"))
            .await;
        assert_eq!(status, 200, "{body}");
        body["data"].as_array().cloned().unwrap_or_default()
    }

    pub async fn instant(&self, key: &(String, String), tx: &Value) -> (u16, Value) {
        self.post(key, "/api/v1/transaction-monitoring/instant", tx)
            .await
    }
}

/// A valid first-shape payload.
pub fn tx(reference: &str, user: &str, amount: f64, date: &str) -> Value {
    json!({
        "transactionData": {
            "reference": reference,
            "amount": amount,
            "type": "debit",
            "channel": "card payment",
            "currency": "NGN",
            "transactionDate": date,
            "senderAccount": format!("acct-{user}"),
            "receiverAccount": "0123456789",
            "isExternalPayment": true,
            "status": true
        },
        "anonymizedUserData": {
            "uniqueId": user,
            "accountType": "individual",
            "dateJoined": "2024-01-01T00:00:00Z",
            "country": "NG"
        },
        "screeningData": {"senderName": "Ada Obi", "receiverName": "Chidi Okafor"}
    })
}

pub fn rule_ids(decision: &Value) -> Vec<String> {
    decision["data"]["rules"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .filter_map(|r| r["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

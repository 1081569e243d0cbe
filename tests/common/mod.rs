//! Shared helpers for the integration tests: a real `vigil serve` on a free loopback port over a
//! temporary SQLite store, a small rule pack the tests control, and an authenticated client.

#![allow(dead_code)]

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

    pub async fn start_with(dir: tempfile::TempDir, config: Config) -> Harness {
        let settings = config.build().expect("settings");
        let running = vigil::server::start(settings)
            .await
            .expect("service starts");
        let base = format!("http://{}", running.addr);
        Harness {
            dir,
            running: Some(running),
            base,
            client: reqwest::Client::new(),
        }
    }

    pub fn rules_dir(&self) -> PathBuf {
        self.dir.path().join("rules")
    }

    pub fn database_url(&self) -> String {
        format!(
            "sqlite://{}?mode=rwc",
            self.dir.path().join("data/vigil.db").display()
        )
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

    /// Restarts on the same data directory.
    pub async fn restart(&mut self) {
        self.stop().await;
        let config = config_for(
            self.dir.path(),
            &self.dir.path().join("rules"),
            &self.dir.path().join("no-fixtures"),
        );
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

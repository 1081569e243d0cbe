//! One address policy on every outbound path: each address form that must never be called (and
//! each private one, without the setting that allows it) is refused when it is configured and
//! again when a call is made, on every entry point — webhooks, risk-monitoring callbacks, FIU
//! reporting, the identity upstream and list downloads — so the copies can never disagree again.

use std::time::Duration;

use serde_json::{json, Value};
use vigil::config::Config;
use vigil::outbound::{AddressPolicy, ClientOptions, OutboundClient};

use crate::common::{Backend, Harness};

/// Refused on every path in every mode: metadata, link-local, reserved, documentation,
/// benchmarking and unspecified addresses, also in their IPv4-mapped, -compatible,
/// -translated, NAT64, 6to4, Teredo and numeric forms.
const ALWAYS_REFUSED: &[&str] = &[
    "http://169.254.169.254/latest/meta-data",
    "http://2852039166/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[::a9fe:a9fe]/",
    "http://[::ffff:0:a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://[fe80::1]/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://240.0.0.1/",
    "http://[::ffff:240.0.0.1]/",
    "http://[64:ff9b::f000:1]/",
    "http://[2002:f000:1::1]/",
    "http://192.0.2.1/",
    "http://198.18.0.1/",
    "http://[2001:db8::1]/",
    "http://[3fff:0fff::1]/",
    "http://168.63.129.16/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[64:ff9b:1::a9fe:a9fe]/",
    "http://224.0.0.1/",
];

/// Loopback and private addresses: refused unless the deployment allows private addresses.
const PRIVATE: &[&str] = &[
    "http://127.0.0.1:9/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[::1]/",
    "http://[fd12:3456::1]/",
    // A name that resolves to loopback: checked by resolving it.
    "http://localhost:9/",
];

/// The addresses refused under `allow_private`.
fn refused(allow_private: bool) -> Vec<&'static str> {
    let mut all = ALWAYS_REFUSED.to_vec();
    if !allow_private {
        all.extend_from_slice(PRIVATE);
    }
    all
}

fn allow_private(config: &mut Config) {
    config.allow_private_callbacks = true;
}

fn public_only(config: &mut Config) {
    config.allow_private_callbacks = false;
    config.webhooks.poll_interval_ms = 20;
}

fn private_allowed_fast(config: &mut Config) {
    config.allow_private_callbacks = true;
    config.webhooks.poll_interval_ms = 20;
}

/// Each client-facing configuration of an address, with the field its refusal must name.
async fn configure_everywhere(harness: &Harness, key: &(String, String), url: &str) {
    let attempts: [(&str, &str, Value, &str); 3] = [
        (
            "PUT",
            "/api/v1/webhooks",
            json!({"url": url, "secret": "whsec_test_0123456789abcdef"}),
            "url",
        ),
        (
            "POST",
            "/api/v1/aml/risk-monitoring",
            json!({"name": "Ivan Petrov", "threshold": 80, "limit": 5, "callbackUrl": url}),
            "callbackUrl",
        ),
        (
            "PUT",
            "/api/v1/reporting/config",
            json!({"clientUrl": url, "auth": {"type": "hmac", "secret": "s3cret-s3cret-s3cret"},
                "reportingEntity": {"rentityId": 1042, "rentityBranch": "Head office",
                    "reportingUserCode": "CCO-0001", "currencyCode": "NGN",
                    "address": "12 Marina Road", "city": "Lagos", "countryCode": "NG"}}),
            "clientUrl",
        ),
    ];
    for (method, path, body, field) in attempts {
        let (status, answer) = if method == "PUT" {
            harness.put(key, path, &body).await
        } else {
            harness.post(key, path, &body).await
        };
        assert_eq!(status, 422, "{method} {path} with {url}: {answer}");
        let errors = answer["errors"].as_array().cloned().unwrap_or_default();
        assert!(
            errors.iter().any(|e| e["field"] == field
                && e["problem"].as_str().is_some_and(|p| p.contains("refused"))),
            "{method} {path} with {url} must name {field} as refused: {answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refused_address_is_refused_when_a_client_configures_it() {
    for (tweak, private) in [
        (allow_private as fn(&mut Config), true),
        (public_only as fn(&mut Config), false),
    ] {
        let mut harness = Harness::start_on_with(Backend::Sqlite, tweak).await;
        let key = harness.key("Acme Bank", false).await;
        for url in refused(private) {
            configure_everywhere(&harness, &key, url).await;
        }
        harness.stop().await;
    }
}

#[test]
fn every_refused_address_is_refused_in_the_config_file() {
    for allow_private_upstreams in [true, false] {
        for url in refused(allow_private_upstreams) {
            let mut config = Config::default();
            config.outbound.allow_private_upstreams = allow_private_upstreams;
            config.identity.provider = vigil::identity::config::ProviderKind::Upstream;
            config.identity.upstream.base_url = url.to_owned();
            match config.build() {
                Err(vigil::config::ConfigError::Invalid { key, problem }) => {
                    assert_eq!(key, "identity.upstream.base_url", "{url}");
                    assert!(problem.contains("refused"), "{url}: {problem}");
                }
                other => {
                    // A name is judged when it is resolved, at each connection (tested below).
                    assert!(
                        url.contains("localhost"),
                        "{url} was accepted: {:?}",
                        other.is_ok()
                    );
                }
            }
            let mut config = Config::default();
            config.outbound.allow_private_upstreams = allow_private_upstreams;
            let mut list = crate::common::test_list_sources().remove(0);
            list.path = None;
            list.url = Some(url.to_owned());
            config.screening.lists = vec![list];
            match config.build() {
                Err(vigil::config::ConfigError::Invalid { key, problem }) => {
                    assert_eq!(key, "screening.lists[0].url", "{url}");
                    assert!(problem.contains("refused"), "{url}: {problem}");
                }
                other => assert!(
                    url.contains("localhost"),
                    "{url} was accepted: {:?}",
                    other.is_ok()
                ),
            }
        }
    }
    // And what is allowed stays allowed.
    let mut config = Config::default();
    config.identity.provider = vigil::identity::config::ProviderKind::Upstream;
    config.identity.upstream.base_url = "https://identity.example.ng/v1".into();
    assert!(config.clone().build().is_ok());
    config.identity.upstream.base_url = "http://10.0.0.7:8080".into();
    assert!(config.clone().build().is_err(), "private needs the setting");
    config.outbound.allow_private_upstreams = true;
    assert!(config.build().is_ok());
}

fn client(allow_private: bool) -> OutboundClient {
    OutboundClient::new(
        AddressPolicy { allow_private },
        ClientOptions::new(Duration::from_secs(2), "vigil-test/1"),
    )
    .expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refused_address_is_refused_at_call_time_by_reporting_identity_and_list_downloads() {
    use vigil::identity::model::{LookupKind, LookupQuery};
    use vigil::identity::upstream::UpstreamProvider;
    use vigil::reporting::client::{fetch_batch, ClientAuth};

    for allow_private in [true, false] {
        let client = client(allow_private);
        for url in refused(allow_private) {
            // FIU reporting: a stored clientUrl that the policy now refuses.
            let auth = ClientAuth::Hmac {
                secret: "s3cret-s3cret-s3cret".into(),
            };
            let error = fetch_batch(&client, url, &auth, &["TX-1".to_owned()])
                .await
                .expect_err("refused");
            assert!(
                error.message.contains("refused"),
                "reporting {url}: {}",
                error.message
            );
            assert!(
                !error.retryable,
                "reporting {url}: a refusal is not retried"
            );

            // The identity upstream.
            let config = vigil::identity::config::UpstreamConfig {
                base_url: url.trim_end_matches('/').to_owned(),
                retries: 0,
                ..Default::default()
            };
            let provider =
                UpstreamProvider::new(config, AddressPolicy { allow_private }).expect("provider");
            let error = provider
                .lookup(&LookupQuery::Person {
                    kind: LookupKind::Nin,
                    id_number: "12345678901".into(),
                })
                .await
                .expect_err("refused");
            assert!(error.contains("refused"), "identity {url}: {error}");

            // A list download.
            let dir = tempfile::tempdir().expect("dir");
            let mut list = crate::common::test_list_sources().remove(0);
            list.path = None;
            list.url = Some(url.to_owned());
            let config = vigil::screening::config::ScreeningConfig {
                lists_dir: dir.path().join("lists"),
                lists: vec![list],
                ..Default::default()
            };
            let manager = vigil::screening::manager::ListsManager::start(
                config,
                &dir.path().join("data"),
                &Default::default(),
                None,
                None,
            );
            let status = manager.download_round(&client).await;
            let error = status.lists[0].last_error.clone().unwrap_or_default();
            assert!(error.contains("refused"), "list download {url}: {error}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refused_address_is_refused_at_call_time_by_webhook_and_callback_delivery() {
    for (tweak, private) in [
        (private_allowed_fast as fn(&mut Config), true),
        (public_only as fn(&mut Config), false),
    ] {
        let mut harness = Harness::start_on_with(Backend::Sqlite, tweak).await;
        let key = harness.key("Acme Bank", false).await;
        // Deliveries whose URL was stored before the policy refused it (an older version, or a
        // name that resolves elsewhere now): written straight into the outbox.
        let store = vigil::store::Store::connect(&harness.database_url(), 2)
            .await
            .expect("store");
        let business = store
            .business_by_name("Acme Bank")
            .await
            .expect("read")
            .expect("business");
        sqlx::query(
            "INSERT INTO webhook_configs (business_id, url, secret, created_at_ms, updated_at_ms) \
             VALUES ($1, 'https://hooks.example.com/vigil', 'whsec_test_0123456789abcdef', 0, 0)",
        )
        .bind(business.id)
        .execute(store.pool())
        .await
        .expect("webhook config");
        let urls = refused(private);
        let mut tx = store.pool().begin().await.expect("tx");
        for (index, url) in urls.iter().enumerate() {
            vigil::webhooks::enqueue(
                &mut tx,
                &vigil::webhooks::NewDelivery {
                    business_id: business.id,
                    event: vigil::webhooks::event::RISK_MONITORING,
                    record_id: &format!("check-{index}"),
                    url: Some(url),
                    body: "{}",
                },
                vigil::store::now_ms(),
            )
            .await
            .expect("enqueue");
        }
        tx.commit().await.expect("commit");

        let mut attempted = Vec::new();
        for _ in 0..3_000 {
            let (status, body) = harness
                .get(&key, "/api/v1/webhooks/deliveries?limit=100")
                .await;
            assert_eq!(status, 200, "{body}");
            attempted = body["data"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|d| d["attempts"].as_array().is_some_and(|a| !a.is_empty()))
                .collect();
            if attempted.len() == urls.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(attempted.len(), urls.len(), "every delivery was attempted");
        for delivery in attempted {
            let attempt = &delivery["attempts"][0];
            let error = attempt["error"].as_str().unwrap_or_default();
            assert!(error.contains("refused"), "{}: {error}", delivery["url"]);
            assert_eq!(attempt["statusCode"], Value::Null, "nothing answered");
        }
        harness.stop().await;
    }
}

/// No outbound client may be built outside `src/outbound/`: a second one would have its own
/// policy (or none), which is how the reporting client's weaker copy came about.
#[test]
fn no_code_outside_the_outbound_module_builds_an_http_client() {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                if !path.ends_with("outbound") {
                    walk(&path, found);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source");
                for needle in [
                    "reqwest::Client",
                    "reqwest::ClientBuilder",
                    "reqwest::blocking",
                    "reqwest::get(",
                    "use reqwest::{",
                    "hyper_util::client",
                ] {
                    if text.contains(needle) {
                        found.push(format!("{} ({needle})", path.display()));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(
        found.is_empty(),
        "HTTP clients built outside src/outbound: {found:?}"
    );
}

const PROXY_CHILD: &str = "VIGIL_TEST_PROXY_CHILD";

/// With `HTTP_PROXY` and `ALL_PROXY` pointing at a dead proxy, an outbound call still goes
/// straight to the checked address (a proxy would resolve the host itself, out of the policy's
/// reach). Environment variables are per process, so the calls run in a child copy of this test
/// binary with the proxy set; the child also shows the proxy is in force for an ordinary client.
#[test]
fn outbound_calls_never_go_through_a_proxy() {
    if std::env::var_os(PROXY_CHILD).is_some() {
        return proxy_child();
    }
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "outbound::outbound_calls_never_go_through_a_proxy",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROXY_CHILD, "1")
        .env("HTTP_PROXY", "http://127.0.0.1:1")
        .env("http_proxy", "http://127.0.0.1:1")
        .env("ALL_PROXY", "http://127.0.0.1:1")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .expect("child runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran the check: {text}");
    assert!(
        text.contains("proxy child: direct ok, proxied refused"),
        "{text}"
    );
}

fn proxy_child() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/x", listener.local_addr().expect("addr"));
        let app = axum::Router::new().route("/x", axum::routing::get(|| async { "ok" }));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        // An ordinary client takes the proxy from the environment and fails on it.
        let ordinary = reqwest::Client::new().get(&url).send().await;
        assert!(
            ordinary.is_err() || ordinary.is_ok_and(|r| !r.status().is_success()),
            "the dead proxy is in force for an ordinary client"
        );
        let client = client(true);
        let parsed = url::Url::parse(&url).expect("url");
        let response = client
            .send(
                client
                    .request(reqwest::Method::GET, &parsed)
                    .expect("allowed"),
            )
            .await
            .expect("the outbound client connects directly");
        assert_eq!(response.status(), 200);
        println!("proxy child: direct ok, proxied refused");
    });
}

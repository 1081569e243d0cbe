//! Asynchronous AML end to end, on SQLite and PostgreSQL: sanction and adverse-media requests
//! answered with the spec 2.8 record and delivered to the webhook, risk-monitoring checks that
//! post to their callbackUrl and post again when a list refresh or new articles bring a hit they
//! had not reported, article ingestion, validation, and tenant isolation. Plus the
//! `vigil media import` command on the shipped fixtures (JSON lines and RSS).

use std::process::Command;

use crate::common::receiver::{Received, Receiver};
use crate::common::{Backend, Harness};
use serde_json::{json, Value};
use vigil::config::Config;

on_both_backends!(
    an_async_sanction_request_answers_the_spec_record_and_delivers_its_matches,
    an_adverse_media_request_goes_from_pending_to_completed_and_delivers_the_2_4_result,
    a_risk_monitoring_check_reports_again_only_when_lists_or_articles_bring_new_hits,
    requests_and_checks_are_validated_and_invisible_to_other_businesses,
    a_request_left_pending_by_a_stop_is_completed_and_delivered_after_the_restart,
);

const SECRET: &str = "whsec_test_0123456789abcdef";
const CREATED: &str = "Request created successfully. Result will be sent to your webhook";

fn fast(config: &mut Config) {
    config.allow_private_callbacks = true;
    config.webhooks.timeout_ms = 500;
    config.webhooks.initial_backoff_ms = 20;
    config.webhooks.max_backoff_ms = 80;
    config.webhooks.poll_interval_ms = 20;
}

async fn with_webhook(harness: &Harness, business: &str, receiver: &Receiver) -> (String, String) {
    let key = harness.key(business, false).await;
    let (status, body) = harness
        .put(
            &key,
            "/api/v1/webhooks",
            &json!({"url": receiver.url("/hooks"), "secret": SECRET}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    key
}

/// The fixture articles as the JSON array the API takes.
fn fixture_articles() -> Value {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/adverse-media/articles.jsonl"),
    )
    .expect("fixtures");
    Value::Array(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("a fixture line"))
            .collect(),
    )
}

async fn ingest(harness: &Harness, admin: &(String, String), articles: &Value) {
    let (status, body) = harness
        .post(admin, "/api/v1/adverse-media/articles", articles)
        .await;
    assert_eq!(status, 200, "{body}");
}

fn results_named(section: &Value) -> Vec<String> {
    section["results"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn titles(result: &Value) -> Vec<String> {
    result["result"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["title"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn an_async_sanction_request_answers_the_spec_record_and_delivers_its_matches(
    backend: Backend,
) {
    let harness = Harness::start_on_with(backend, fast).await;
    let receiver = Receiver::start(SECRET).await;
    let key = with_webhook(&harness, "Acme Bank", &receiver).await;

    let (status, body) = harness
        .post(
            &key,
            "/api/v1/aml/sanction",
            &json!({"name": "Ivan Sidorov", "threshold": 80}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], CREATED);
    let record = &body["data"];
    let id = record["id"].as_str().expect("id").to_owned();
    assert_eq!(record["query"], "Ivan Sidorov");
    assert_eq!(record["businessProfile"], "Acme Bank");
    assert!(record["createdAt"].is_string() && record["updatedAt"].is_string());
    assert!(
        record.get("status").is_none(),
        "2.8: the sanction record has no status"
    );

    let received = receiver
        .wait_until("the sanction result", |r| {
            r.iter().any(|r| r.event == "sanction")
        })
        .await;
    let delivery = received
        .iter()
        .find(|r| r.event == "sanction")
        .expect("delivery");
    assert!(delivery.signature_valid);
    let payload = delivery.json();
    assert_eq!(payload["type"], "sanction");
    assert_eq!(payload["requestId"], id.as_str());
    assert_eq!(payload["search_keyword"], "Ivan Sidorov");
    assert_eq!(results_named(&payload), ["Ivan Petrovich Sidorov"]);
    assert_eq!(
        payload["results"][0]["isDeleted"], false,
        "a §2.3 sanction record"
    );

    let (status, body) = harness
        .get(&key, &format!("/api/v1/aml/sanction/{id}"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "completed");
    assert_eq!(
        body["data"]["result"], payload,
        "the stored result is what was sent"
    );
}

async fn an_adverse_media_request_goes_from_pending_to_completed_and_delivers_the_2_4_result(
    backend: Backend,
) {
    let harness = Harness::start_on_with(backend, fast).await;
    let receiver = Receiver::start(SECRET).await;
    let key = with_webhook(&harness, "Acme Bank", &receiver).await;
    let admin = harness.key("Vigil Operators", true).await;

    let (status, body) = harness
        .post(&key, "/api/v1/adverse-media/articles", &fixture_articles())
        .await;
    assert_eq!(
        status, 403,
        "a client key may not write the shared index: {body}"
    );
    let (status, body) = harness
        .post(
            &admin,
            "/api/v1/adverse-media/articles",
            &json!([{"title": "ok", "link": "https://fixtures.vigil.invalid/ok"},
                    {"title": "no link", "published": "last week"}]),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(fields, ["[1].link", "[1].published"]);
    ingest(&harness, &admin, &fixture_articles()).await;

    let (status, body) = harness
        .post(
            &key,
            "/api/v1/adverse-media",
            &json!({"q": "Ivan Petrovich Sidorov", "limit": 5}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], CREATED);
    assert_eq!(body["data"]["status"], "pending");
    assert_eq!(body["data"]["query"], "Ivan Petrovich Sidorov");
    let id = body["data"]["id"].as_str().expect("id").to_owned();

    let received = receiver
        .wait_until("the adverse-media result", |r| {
            r.iter().any(|r| r.event == "adverse-media")
        })
        .await;
    let delivery: &Received = received
        .iter()
        .find(|r| r.event == "adverse-media")
        .expect("delivery");
    assert!(delivery.signature_valid);
    let payload = delivery.json();
    assert_eq!(payload["type"], "adverse media");
    assert_eq!(payload["info"]["id"], id.as_str());
    assert_eq!(payload["info"]["query"], "Ivan Petrovich Sidorov");
    assert_eq!(payload["info"]["limit"], 5);
    assert_eq!(payload["info"]["count"], 2, "{payload:#}");
    let found = titles(&payload);
    assert!(
        found.contains(&"Sidorov convicted of sanctions evasion".to_owned())
            && found.contains(
                &"Businessman Ivan Sidorov arrested in money laundering probe".to_owned()
            ),
        "{found:?}"
    );
    for entry in payload["result"].as_array().expect("result") {
        let confidence = entry["keyword"]["confidenceScore"]
            .as_f64()
            .expect("confidence");
        assert!(confidence > 0.5 && confidence <= 1.0, "{entry}");
        let keywords = entry["adverseInformation"].as_array().expect("keywords");
        assert!(!keywords.is_empty());
        assert!(keywords
            .iter()
            .all(|k| k["keyword"].is_string() && k["score"].is_number()));
        assert!(entry["link"]
            .as_str()
            .unwrap_or_default()
            .starts_with("https://"));
    }
    let first = payload["result"][0]["keyword"]["confidenceScore"].as_f64();
    let second = payload["result"][1]["keyword"]["confidenceScore"].as_f64();
    assert!(first >= second, "strongest first: {payload:#}");
    assert!(
        !found
            .iter()
            .any(|t| t.contains("chess") || t.contains("conference")),
        "a look-alike name and a neutral article are left out: {found:?}"
    );

    let (status, body) = harness
        .get(&key, &format!("/api/v1/adverse-media/{id}"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "completed");
    assert_eq!(body["data"]["result"]["info"]["count"], 2);
}

/// Deliveries received for one check, in order.
fn check_deliveries(received: &[Received], check: &str) -> Vec<Value> {
    received
        .iter()
        .filter(|r| r.path == "/risk" && r.answered == 200)
        .map(Received::json)
        .filter(|p| p["checkId"] == check)
        .collect()
}

async fn a_risk_monitoring_check_reports_again_only_when_lists_or_articles_bring_new_hits(
    backend: Backend,
) {
    let harness = Harness::start_on_with(backend, fast).await;
    let receiver = Receiver::start(SECRET).await;
    let key = with_webhook(&harness, "Acme Bank", &receiver).await;
    let admin = harness.key("Vigil Operators", true).await;

    let (status, body) = harness
        .post(
            &key,
            "/api/v1/aml/risk-monitoring",
            &json!({"name": "Ivan Petrovich Sidorov", "threshold": 80, "limit": 10,
                "callbackUrl": receiver.url("/risk")}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], CREATED);
    let check = body["data"]["checkId"]
        .as_str()
        .expect("checkId")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&check).is_ok(), "2.8: a UUID");

    let received = receiver
        .wait_until("the first risk result", |r| {
            !check_deliveries(r, &check).is_empty()
        })
        .await;
    let first = &check_deliveries(&received, &check)[0];
    assert!(received.iter().all(|r| r.signature_valid));
    assert_eq!(first["sanction"]["type"], "sanction");
    assert_eq!(first["pep"]["type"], "pep");
    assert_eq!(first["sanction"]["check_id"], check.as_str());
    assert_eq!(first["sanction"]["created_by"], "Acme Bank");
    assert_eq!(
        first["sanction"]["search_keyword"],
        "Ivan Petrovich Sidorov"
    );
    assert!(first["sanction"]["check_creation_date"].is_string());
    assert!(first["pep"]["last_screened_date"].is_string());
    assert_eq!(
        results_named(&first["sanction"]),
        ["Ivan Petrovich Sidorov"]
    );
    assert!(results_named(&first["pep"]).is_empty());
    assert_eq!(first["adverseMedia"]["info"]["count"], 0);
    assert!(
        first["adverseMedia"].get("type").is_none(),
        "2.4: no type inside risk results"
    );

    // New articles naming him: reported again, with the articles as what is new.
    ingest(&harness, &admin, &fixture_articles()).await;
    let received = receiver
        .wait_until("a second risk result after new articles", |r| {
            check_deliveries(r, &check).len() >= 2
        })
        .await;
    let second = &check_deliveries(&received, &check)[1];
    assert_eq!(second["adverseMedia"]["info"]["count"], 2, "{second:#}");
    let new: Vec<&str> = second["newResults"]
        .as_array()
        .expect("newResults")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(new.len(), 2, "{new:?}");
    assert!(new.iter().all(|n| n.starts_with("media:")), "{new:?}");

    // A list refresh that adds him as a PEP: reported again.
    let peps = harness.dir.path().join("lists/peps.csv");
    let mut text = std::fs::read_to_string(&peps).expect("peps");
    text.push_str("P2,Ivan Petrovich Sidorov,individual,,ru,1961,test deputy\n");
    std::fs::write(&peps, text).expect("write peps");
    let (status, body) = harness
        .post(&admin, "/api/v1/admin/lists/reload", &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let received = receiver
        .wait_until("a third risk result after the list refresh", |r| {
            check_deliveries(r, &check).len() >= 3
        })
        .await;
    let third = &check_deliveries(&received, &check)[2];
    assert_eq!(results_named(&third["pep"]), ["Ivan Petrovich Sidorov"]);
    let new: Vec<&str> = third["newResults"]
        .as_array()
        .expect("newResults")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(new.len(), 1);
    assert!(new[0].starts_with("pep:"), "{new:?}");

    // Listed and cancelled; a cancelled check reports nothing more.
    let (status, body) = harness.get(&key, "/api/v1/aml/risk-monitoring").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"][0]["checkId"], check.as_str());
    assert_eq!(body["data"][0]["status"], "active");
    assert_eq!(
        body["data"][0]["reported"].as_array().map(Vec::len),
        Some(4)
    );
    let (status, body) = harness
        .post(
            &key,
            "/api/v1/aml/risk-monitoring",
            &json!({"name": "Amina Bello Yusuf", "threshold": 80, "limit": 10,
                "callbackUrl": receiver.url("/risk")}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let witness = body["data"]["checkId"]
        .as_str()
        .expect("checkId")
        .to_owned();
    receiver
        .wait_until("the witness check's first result", |r| {
            !check_deliveries(r, &witness).is_empty()
        })
        .await;
    let (status, body) = harness
        .delete(&key, &format!("/api/v1/aml/risk-monitoring/{check}"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "Risk-monitoring check cancelled");
    assert_eq!(body["data"]["status"], "cancelled");
    let (status, _) = harness
        .delete(&key, &format!("/api/v1/aml/risk-monitoring/{check}"))
        .await;
    assert_eq!(status, 409);
    ingest(
        &harness,
        &admin,
        &json!([{"title": "Sidorov and Yusuf named in bribery indictment",
            "link": "https://fixtures.vigil.invalid/news/2026/01/indictment",
            "published": "2026-01-05",
            "text": "Prosecutors named Ivan Petrovich Sidorov and Amina Bello Yusuf in a bribery indictment."}]),
    )
    .await;
    // The same re-check pass reports to the witness; the cancelled check stays at three.
    let received = receiver
        .wait_until("the witness check's second result", |r| {
            check_deliveries(r, &witness).len() >= 2
        })
        .await;
    assert_eq!(check_deliveries(&received, &check).len(), 3);
    let (status, body) = harness
        .get(&key, "/api/v1/aml/risk-monitoring?status=active")
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"].as_array().map(Vec::len), Some(1), "{body}");
    let (status, body) = harness
        .get(
            &key,
            &format!("/api/v1/webhooks/deliveries?recordId={check}"),
        )
        .await;
    assert_eq!(status, 200);
    let deliveries = body["data"].as_array().expect("deliveries");
    assert_eq!(deliveries.len(), 3, "{body}");
    assert!(deliveries
        .iter()
        .all(|d| d["url"] == receiver.url("/risk").as_str() && d["event"] == "risk-monitoring"));
}

async fn requests_and_checks_are_validated_and_invisible_to_other_businesses(backend: Backend) {
    let harness = Harness::start_on_with(backend, fast).await;
    let receiver = Receiver::start(SECRET).await;
    let acme = with_webhook(&harness, "Acme Bank", &receiver).await;
    let other = harness.key("Other Bank", false).await;

    for (path, body, field) in [
        ("/api/v1/aml/sanction", json!({"name": "Ivan"}), "threshold"),
        ("/api/v1/adverse-media", json!({"q": "Ivan"}), "limit"),
        (
            "/api/v1/adverse-media",
            json!({"q": "Ivan", "limit": 1.5}),
            "limit",
        ),
        ("/api/v1/adverse-media", json!({"q": " ", "limit": 3}), "q"),
        (
            "/api/v1/aml/risk-monitoring",
            json!({"name": "Ivan", "threshold": 80, "limit": 5, "callbackUrl": "http://169.254.169.254/"}),
            "callbackUrl",
        ),
        (
            "/api/v1/aml/risk-monitoring",
            json!({"name": "Ivan", "threshold": 180, "limit": 5, "callbackUrl": receiver.url("/r")}),
            "threshold",
        ),
    ] {
        let (status, answer) = harness.post(&acme, path, &body).await;
        assert_eq!(status, 422, "{path} {body}: {answer}");
        assert_eq!(answer["errors"][0]["field"], field, "{answer}");
    }

    let (_, body) = harness
        .post(
            &acme,
            "/api/v1/aml/sanction",
            &json!({"name": "Ivan Sidorov", "threshold": 80}),
        )
        .await;
    let sanction = body["data"]["id"].as_str().expect("id").to_owned();
    let (_, body) = harness
        .post(
            &acme,
            "/api/v1/adverse-media",
            &json!({"q": "Ivan Sidorov", "limit": 3}),
        )
        .await;
    let media = body["data"]["id"].as_str().expect("id").to_owned();
    let (_, body) = harness
        .post(
            &acme,
            "/api/v1/aml/risk-monitoring",
            &json!({"name": "Ivan Sidorov", "threshold": 80, "limit": 3, "callbackUrl": receiver.url("/risk")}),
        )
        .await;
    let check = body["data"]["checkId"]
        .as_str()
        .expect("checkId")
        .to_owned();

    for path in [
        format!("/api/v1/aml/sanction/{sanction}"),
        format!("/api/v1/adverse-media/{media}"),
        format!("/api/v1/aml/risk-monitoring/{check}"),
        format!("/api/v1/adverse-media/{sanction}"),
    ] {
        let (status, _) = harness.get(&other, &path).await;
        assert_eq!(status, 404, "{path}");
    }
    let (status, _) = harness
        .delete(&other, &format!("/api/v1/aml/risk-monitoring/{check}"))
        .await;
    assert_eq!(status, 404);
    let (status, body) = harness.get(&other, "/api/v1/aml/risk-monitoring").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"], json!([]));
    let (status, body) = harness
        .get(&acme, &format!("/api/v1/aml/risk-monitoring/{check}"))
        .await;
    assert_eq!(status, 200, "the owner sees it: {body}");
    assert_eq!(body["data"]["callbackUrl"], receiver.url("/risk").as_str());
}

#[test]
fn media_import_reads_json_lines_and_rss_and_the_search_finds_adverse_coverage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vigil = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vigil"));
        command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("VIGIL_DATA_DIR", dir.path());
        command
    };
    let output = vigil()
        .args([
            "media",
            "import",
            "fixtures/adverse-media/articles.jsonl",
            "fixtures/adverse-media/feed.xml",
        ])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("articles.jsonl: 10 articles"), "{stdout}");
    assert!(stdout.contains("feed.xml: 2 articles"), "{stdout}");
    assert!(stdout.contains("the index holds 12 articles"), "{stdout}");
    // Importing again replaces by link: still 12.
    let output = vigil()
        .args(["media", "import", "fixtures/adverse-media/feed.xml"])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&output.stdout).contains("the index holds 12 articles"));
    let output = vigil()
        .args(["media", "search", "Musa Abdullahi Garba"])
        .output()
        .expect("runs");
    assert!(output.status.success());
    let result: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let found = titles(&result);
    assert_eq!(found.len(), 2, "{result:#}");
    assert_eq!(
        found[0], "Currency dealer Musa Garba charged with terrorism financing",
        "newest first among equally strong: {result:#}"
    );
    let keywords: Vec<&str> = result["result"][0]["adverseInformation"]
        .as_array()
        .expect("keywords")
        .iter()
        .filter_map(|k| k["keyword"].as_str())
        .collect();
    assert!(keywords.contains(&"terrorism financing"), "{keywords:?}");
    let output = vigil()
        .args(["media", "import", "Cargo.toml"])
        .output()
        .expect("runs");
    assert!(
        !output.status.success(),
        "a file that is not articles is refused"
    );
}

async fn a_request_left_pending_by_a_stop_is_completed_and_delivered_after_the_restart(
    backend: Backend,
) {
    let mut harness = Harness::start_on_with(backend, fast).await;
    let receiver = Receiver::start(SECRET).await;
    let key = with_webhook(&harness, "Acme Bank", &receiver).await;
    harness.stop().await;
    // What a crash between the answer and the processing leaves: a stored, pending request.
    let store = vigil::store::Store::connect(&harness.database_url(), 1)
        .await
        .expect("store");
    let business = store
        .business_by_name("Acme Bank")
        .await
        .expect("query")
        .expect("business");
    sqlx::query(
        "INSERT INTO aml_requests (id, business_id, kind, query, params, status, created_at_ms, \
         updated_at_ms) VALUES ('req-left-pending', $1, 'sanction', 'Ivan Sidorov', \
         '{\"threshold\":80.0,\"country\":null}', 'pending', 1, 1)",
    )
    .bind(business.id)
    .execute(store.pool())
    .await
    .expect("insert");
    drop(store);

    harness.restart().await;
    let received = receiver
        .wait_until("the resumed request's result", |r| {
            r.iter().any(|r| r.event == "sanction")
        })
        .await;
    let payload = received
        .iter()
        .find(|r| r.event == "sanction")
        .expect("delivery")
        .json();
    assert_eq!(payload["requestId"], "req-left-pending");
    assert_eq!(results_named(&payload), ["Ivan Petrovich Sidorov"]);
    let (status, body) = harness
        .get(&key, "/api/v1/aml/sanction/req-left-pending")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "completed");
}

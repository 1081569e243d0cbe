//! FIU reporting end to end against a fake client endpoint (spec §4.6): 500 uploaded IDs fetched
//! in five calls of at most 100 IDs, spaced by the rate limiter, a retried failure, per-ID
//! failures, a goAML report valid against the schema (xmllint), upload refusals, tenancy, the
//! client URL checks, and reports from transactions a rule marked reportable.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{config_for, database_for, tx, write_test_pack, Backend, Harness};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use vigil::config::Config;

on_both_backends!(
    an_upload_of_500_ids_is_fetched_in_five_rate_limited_batches_with_a_retry_and_built_into_a_valid_goaml_report,
    ids_the_client_does_not_answer_or_answers_badly_fail_with_their_reason_and_bad_uploads_are_refused,
    transactions_a_rule_marks_reportable_become_a_report_without_a_csv,
);

const SECRET: &str = "s3cret-s3cret-s3cret";

#[derive(Default)]
struct Fake {
    /// (arrival, IDs asked, answered status).
    calls: Mutex<Vec<(Instant, Vec<String>, u16)>>,
    /// 1-based call numbers answered with HTTP 500.
    fail_calls: Mutex<HashSet<usize>>,
    /// IDs the client does not return.
    missing: Mutex<HashSet<String>>,
    /// IDs returned with a country goAML does not know.
    invalid: Mutex<HashSet<String>>,
    bad_signatures: Mutex<usize>,
}

fn record(id: &str, bad_country: bool) -> Value {
    json!({"transactionNumber": id, "transactionDate": "2026-03-02T10:15:30Z",
        "transactionMode": "C", "type": "TRANS", "amount": 6500000.0,
        "narration": format!("Cash deposit {id}"),
        "sender": {"country": if bad_country { "Nigeria" } else { "NG" }, "fundsCode": "K",
            "account": {"institutionName": "Acme Bank", "institutionCode": 58, "accountNumber": "0012345678"}},
        "receiver": {"country": "NG", "fundsCode": "A",
            "account": {"institutionName": "Acme Bank", "institutionCode": 58, "accountNumber": "0098765432"}}})
}

async fn send_transaction(
    State(fake): State<Arc<Fake>>,
    headers: HeaderMap,
    uri: Uri,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
    let arrived = Instant::now();
    let timestamp: i64 = headers
        .get("X-Vigil-Timestamp")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_default();
    let path_and_query = uri.path_and_query().map(|p| p.as_str()).unwrap_or_default();
    let expected = vigil::reporting::client::signature(SECRET, timestamp, path_and_query);
    if headers
        .get("X-Vigil-Signature")
        .and_then(|v| v.to_str().ok())
        != Some(expected.as_str())
    {
        *fake.bad_signatures.lock().expect("lock") += 1;
    }
    let ids: Vec<String> = query
        .get("transactionId")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let mut calls = fake.calls.lock().expect("lock");
    let number = calls.len() + 1;
    if fake.fail_calls.lock().expect("lock").contains(&number) {
        calls.push((arrived, ids, 500));
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"message": "injected failure"})),
        );
    }
    calls.push((arrived, ids.clone(), 200));
    let missing = fake.missing.lock().expect("lock").clone();
    let invalid = fake.invalid.lock().expect("lock").clone();
    let data: Vec<Value> = ids
        .iter()
        .filter(|id| !missing.contains(*id))
        .map(|id| record(id, invalid.contains(id)))
        .collect();
    (StatusCode::OK, Json(json!({"data": data})))
}

async fn fake_client() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let app = Router::new()
        .route("/api/v1/reporting/send-transaction", get(send_transaction))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, fake)
}

const CTR_RULE: &str = "//! id = \"T-CTR\"\n//! name = \"Cash at or above the CTR threshold\"\n//! description = \"cash transaction of 5,000,000 or more\"\n//! severity = \"low\"\n//! score = 0.0\n//! reportable = \"CTR\"\n\ntx.amount >= 5000000.0\n";

async fn start(backend: Backend, tweak: impl FnOnce(&mut Config)) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("rules");
    write_test_pack(&rules);
    std::fs::write(rules.join("T-CTR.rhai"), CTR_RULE).expect("ctr rule");
    let mut config = config_for(dir.path(), &rules, &dir.path().join("no-fixtures"));
    let (url, pg) = database_for(backend, dir.path()).await;
    if pg.is_some() {
        config.database_url = url;
        config.store.pool_size = 4;
    }
    config.allow_private_callbacks = true;
    config.reporting.retry_backoff_ms = 300;
    tweak(&mut config);
    let mut harness = Harness::start_with(dir, config).await;
    harness.pg = pg;
    harness
}

async fn configure(h: &Harness, key: &(String, String), url: &str) {
    let (status, body) = h
        .put(key, "/api/v1/reporting/config", &json!({"clientUrl": url, "auth": {"type": "hmac", "secret": SECRET},
            "reportingEntity": {"rentityId": 1042, "rentityBranch": "Head office", "reportingUserCode": "CCO-0001",
                "currencyCode": "NGN", "address": "12 Marina Road", "city": "Lagos", "countryCode": "NG"}}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"]["auth"]["secret"], "********",
        "secrets are never shown"
    );
}

async fn upload(
    h: &Harness,
    key: &(String, String),
    query: &str,
    content_type: &str,
    csv: String,
) -> (u16, Value) {
    let response = h
        .client
        .post(h.url(&format!("/api/v1/reporting/uploads{query}")))
        .header("apiKey", &key.0)
        .header("apiSecret", &key.1)
        .header("Content-Type", content_type)
        .body(csv)
        .send()
        .await
        .expect("upload");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Polls the report until it is built or failed.
async fn finished(h: &Harness, key: &(String, String), report: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = h
            .get(key, &format!("/api/v1/reporting/reports/{report}"))
            .await;
        assert_eq!(status, 200, "{body}");
        let state = body["data"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if state == "built" || state == "failed" {
            return body["data"].clone();
        }
        assert!(Instant::now() < deadline, "report still {state}: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn xml_of(h: &Harness, key: &(String, String), report: &str) -> (u16, String) {
    let response = h
        .client
        .get(h.url(&format!("/api/v1/reporting/reports/{report}/goaml.xml")))
        .header("apiKey", &key.0)
        .header("apiSecret", &key.1)
        .send()
        .await
        .expect("xml");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

fn xmllint(xml: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.xml");
    std::fs::write(&path, xml).expect("write");
    let schema = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/goaml/goAMLSchema.xsd"
    );
    let output = std::process::Command::new("xmllint")
        .args(["--noout", "--schema", schema])
        .arg(&path)
        .output()
        .expect(
            "xmllint must be installed (Debian package libxml2-utils; scripts/test.sh installs it)",
        );
    assert!(
        output.status.success(),
        "the report does not validate: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

async fn an_upload_of_500_ids_is_fetched_in_five_rate_limited_batches_with_a_retry_and_built_into_a_valid_goaml_report(
    backend: Backend,
) {
    let (client_url, fake) = fake_client().await;
    fake.fail_calls.lock().expect("lock").insert(2);
    let mut h = start(backend, |_| {}).await;
    let key = h.key("Acme Bank", false).await;
    let other = h.key("Other Bank", false).await;
    configure(&h, &key, &client_url).await;
    let ids: Vec<String> = (1..=500).map(|i| format!("TX-{i:04}")).collect();
    let csv = format!("transactionId\n{}\n", ids.join("\n"));
    let (status, body) = upload(&h, &key, "?reportType=STR", "text/csv", csv).await;
    assert_eq!(status, 202, "{body}");
    assert!(body["message"].is_string());
    assert_eq!(body["data"]["status"], "pending");
    let report = body["data"]["reportId"]
        .as_str()
        .expect("reportId")
        .to_owned();

    let view = finished(&h, &key, &report).await;
    assert_eq!(view["status"], "built", "{view}");
    assert_eq!(view["fetched"], 500);
    assert_eq!(view["failures"], json!([]));
    assert_eq!(view["reportType"], "STR");

    let calls = fake.calls.lock().expect("lock").clone();
    assert_eq!(calls.len(), 6, "five batches and one retry");
    assert!(calls
        .iter()
        .all(|(_, ids, _)| !ids.is_empty() && ids.len() <= 100));
    let answered: Vec<&(Instant, Vec<String>, u16)> = calls.iter().filter(|c| c.2 == 200).collect();
    assert_eq!(answered.len(), 5, "five calls of at most 100 IDs answered");
    let fetched: Vec<String> = answered.iter().flat_map(|c| c.1.clone()).collect();
    assert_eq!(fetched, ids, "every ID once, in file order");
    assert_eq!(calls[1].2, 500, "the injected failure");
    assert_eq!(
        calls[2].1, calls[1].1,
        "the failed batch is retried with the same IDs"
    );
    // The limiter's correctness: calls to one client are sent at least 1/5 s apart (220 ms with
    // the limiter's margin), so no second holds more than five; the retry waits for its backoff
    // too. The fake server sees arrival times, not send times: on a loaded machine one call's
    // arrival can lag its send (79 ms was seen in CI, with the whole suite on two cores), which
    // shortens the gap after it. The checks allow 100 ms of such lag; with the limiter removed
    // the calls arrived 39-71 ms apart and all six within one second, so they still fail.
    let jitter = Duration::from_millis(100);
    let gaps: Vec<Duration> = calls
        .windows(2)
        .map(|pair| pair[1].0.duration_since(pair[0].0))
        .collect();
    for gap in &gaps {
        assert!(
            *gap + jitter >= Duration::from_millis(200),
            "calls {gap:?} apart (all gaps: {gaps:?})"
        );
    }
    for (i, call) in calls.iter().enumerate() {
        let within = calls[i..]
            .iter()
            .filter(|c| c.0.duration_since(call.0) + jitter < Duration::from_secs(1))
            .count();
        assert!(within <= 5, "{within} calls within one second");
    }
    assert!(
        calls[2].0.duration_since(calls[1].0) + jitter >= Duration::from_millis(300),
        "backoff (all gaps: {gaps:?})"
    );
    assert_eq!(
        *fake.bad_signatures.lock().expect("lock"),
        0,
        "every call is signed"
    );

    let (status, xml) = xml_of(&h, &key, &report).await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(xml.matches("<transaction>").count(), 500);
    assert!(xml.contains("<report_code>STR</report_code>"));
    assert!(xml.contains("<rentity_id>1042</rentity_id>"));
    xmllint(&xml);

    // Another business sees neither the report nor its XML.
    let (status, _) = h
        .get(&other, &format!("/api/v1/reporting/reports/{report}"))
        .await;
    assert_eq!(status, 404);
    let (status, _) = xml_of(&h, &other, &report).await;
    assert_eq!(status, 404);
    let (_, theirs) = h.get(&other, "/api/v1/reporting/reports").await;
    assert_eq!(theirs["data"], json!([]));
    let (_, mine) = h.get(&key, "/api/v1/reporting/reports").await;
    assert_eq!(mine["data"][0]["reportId"], report.as_str());
    h.stop().await;
}

async fn ids_the_client_does_not_answer_or_answers_badly_fail_with_their_reason_and_bad_uploads_are_refused(
    backend: Backend,
) {
    let (client_url, fake) = fake_client().await;
    fake.missing.lock().expect("lock").insert("TX-2".into());
    fake.invalid.lock().expect("lock").insert("TX-3".into());
    let mut h = start(backend, |config| config.reporting.max_attempts = 2).await;
    let key = h.key("Acme Bank", false).await;

    let (status, body) = upload(&h, &key, "?reportType=STR", "text/csv", "TX-1\n".into()).await;
    assert_eq!(status, 409, "not configured yet: {body}");
    configure(&h, &key, &client_url).await;

    let many: String = (0..501).map(|i| format!("TX-{i}\n")).collect();
    for (query, content_type, csv, expected, problem) in [
        ("?reportType=STR", "text/csv", many, 422, "the file has 501 transaction IDs; at most 500 per upload"),
        ("?reportType=STR", "text/csv", "TX-1\nTX-2\nTX-1\n".to_owned(), 422, "transaction ID 'TX-1' appears more than once (rows 1 and 3)"),
        ("?reportType=STR", "text/csv", "TX-1,TX-2\n".to_owned(), 422, "row 1 has 2 values; one transaction ID per row"),
        ("?reportType=STR", "text/csv", "\n".to_owned(), 422, "the file has no transaction IDs"),
        ("?reportType=XYZ", "text/csv", "TX-1\n".to_owned(), 422, "must be a goAML report code: STR, SAR, CTR, AIF, ECTR, ICR, IRD, IRF, M, PEP, STRM or TFR"),
        ("", "text/csv", "TX-1\n".to_owned(), 422, "is required"),
        ("?reportType=STR", "application/json", "[\"TX-1\"]".to_owned(), 415, "must be text/csv"),
    ] {
        let (status, body) = upload(&h, &key, query, content_type, csv).await;
        assert_eq!(status, expected, "{body}");
        assert_eq!(body["errors"][0]["problem"], problem, "{body}");
    }

    let (status, body) = upload(
        &h,
        &key,
        "?reportType=sar",
        "text/csv",
        "id\r\nTX-1\r\nTX-2\r\nTX-3\r\n".into(),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let report = body["data"]["reportId"].as_str().expect("id").to_owned();
    let view = finished(&h, &key, &report).await;
    assert_eq!(view["status"], "built", "{view}");
    assert_eq!(view["reportType"], "SAR");
    assert_eq!(view["fetched"], 1);
    let failures = view["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 2, "{view}");
    assert_eq!(failures[0]["transactionId"], "TX-2");
    assert_eq!(
        failures[0]["reason"],
        "the client endpoint did not return this transaction"
    );
    assert_eq!(failures[1]["transactionId"], "TX-3");
    assert!(
        failures[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("sender.country")),
        "{view}"
    );
    let (status, xml) = xml_of(&h, &key, &report).await;
    assert_eq!(status, 200);
    assert_eq!(xml.matches("<transaction>").count(), 1);
    xmllint(&xml);

    // A client that keeps failing: the report fails with every ID's reason.
    fake.fail_calls.lock().expect("lock").extend(1..100);
    let (status, body) = upload(&h, &key, "?reportType=STR", "text/csv", "TX-9\n".into()).await;
    assert_eq!(status, 202);
    let report = body["data"]["reportId"].as_str().expect("id").to_owned();
    let view = finished(&h, &key, &report).await;
    assert_eq!(view["status"], "failed", "{view}");
    assert_eq!(view["error"], "no transaction record could be fetched");
    assert!(
        view["failures"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("after 2 attempt(s): client endpoint answered HTTP 500")),
        "{view}"
    );
    let (status, body) = xml_of(&h, &key, &report).await;
    assert_eq!(status, 409, "{body}");
    h.stop().await;
}

async fn transactions_a_rule_marks_reportable_become_a_report_without_a_csv(backend: Backend) {
    let (client_url, fake) = fake_client().await;
    let mut h = start(backend, |_| {}).await;
    let key = h.key("Acme Bank", false).await;
    configure(&h, &key, &client_url).await;
    for (reference, amount) in [
        ("CASH-1", 6_000_000.0),
        ("CASH-2", 100.0),
        ("CASH-3", 5_000_000.0),
    ] {
        let (status, decision) = h
            .instant(
                &key,
                &tx(reference, "CUST-7", amount, "2026-03-02T10:00:00Z"),
            )
            .await;
        assert_eq!(status, 200, "{decision}");
        let marked = decision["data"]["rules"].as_array().is_some_and(|r| {
            r.iter()
                .any(|r| r["id"] == "T-CTR" && r["reportable"] == "CTR")
        });
        assert_eq!(marked, amount >= 5_000_000.0, "{decision}");
    }
    let request = json!({"reportType": "CTR", "from": "2026-03-01", "to": "2026-03-03"});
    let (status, body) = h.post(&key, "/api/v1/reporting/reports", &request).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["data"]["transactions"], 2);
    let report = body["data"]["reportId"].as_str().expect("id").to_owned();
    let view = finished(&h, &key, &report).await;
    assert_eq!(view["status"], "built", "{view}");
    assert_eq!(view["source"], "rules");
    let asked: Vec<String> = fake
        .calls
        .lock()
        .expect("lock")
        .iter()
        .flat_map(|c| c.1.clone())
        .collect();
    assert_eq!(asked, ["CASH-1", "CASH-3"]);
    let (_, xml) = xml_of(&h, &key, &report).await;
    assert!(xml.contains("<report_code>CTR</report_code>"));
    xmllint(&xml);

    let (status, body) = h.post(&key, "/api/v1/reporting/reports", &request).await;
    assert_eq!(status, 404, "already reported: {body}");
    let (status, body) = h
        .post(
            &key,
            "/api/v1/reporting/reports",
            &json!({"reportType": "STR", "from": "2026-03-01", "to": "2026-03-03"}),
        )
        .await;
    assert_eq!(status, 404, "no rule marks STR: {body}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_urls_on_metadata_or_private_addresses_are_refused_unless_private_ones_are_allowed()
{
    let mut h = start(Backend::Sqlite, |config| {
        config.allow_private_callbacks = false
    })
    .await;
    let key = h.key("Acme Bank", false).await;
    let auth = json!({"type": "api-key", "header": "x-api-key", "value": "k"});
    for (url, problem) in [
        ("http://169.254.169.254/latest/meta-data", "cloud metadata"),
        ("http://127.0.0.1:9000", "loopback"),
        ("http://localhost:9000", "loopback"),
        ("http://10.0.0.5", "private"),
        ("ftp://reports.example.com", "http or https"),
    ] {
        let (status, body) = h
            .put(
                &key,
                "/api/v1/reporting/config",
                &json!({"clientUrl": url, "auth": auth}),
            )
            .await;
        assert_eq!(status, 422, "{url}: {body}");
        assert_eq!(body["errors"][0]["field"], "clientUrl");
        assert!(
            body["errors"][0]["problem"]
                .as_str()
                .is_some_and(|p| p.contains(problem)),
            "{url}: {body}"
        );
    }
    let (status, body) = h
        .put(&key, "/api/v1/reporting/config", &json!({"clientUrl": "http://10.0.0.5", "auth": {"type": "hmac", "secret": "x"}, "extra": 1}))
        .await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(fields, ["extra", "clientUrl", "auth.secret"], "{body}");
    let (status, _) = h.get(&key, "/api/v1/reporting/config").await;
    assert_eq!(status, 404, "nothing was saved");
    h.stop().await;
}

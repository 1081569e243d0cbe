//! Identity and registry lookups end to end: the spec's messages and §2.7 shapes from the sample
//! registry on both paths, validation, the lookup audit and its tenancy, CDD verifications on
//! the lookups (SQLite and PostgreSQL), the upstream provider adapter against a fake provider,
//! and `vigil registry import`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{config_for, database_for, write_test_pack, Backend, Harness};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use vigil::config::Config;

on_both_backends!(
    nin_bvn_and_cac_lookups_answer_the_sample_registry_with_the_spec_messages_on_every_listed_path,
    lookups_are_validated_unknown_numbers_are_404_and_every_lookup_is_audited_for_its_tenant_only,
    cdd_verifications_run_on_the_lookups_and_move_to_verified_or_failed_with_the_reason,
);

async fn start(backend: Backend, tweak: impl FnOnce(&mut Config)) -> Harness {
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
    harness
}

async fn nin_bvn_and_cac_lookups_answer_the_sample_registry_with_the_spec_messages_on_every_listed_path(
    backend: Backend,
) {
    let mut h = start(backend, |_| {}).await;
    let key = h.key("Acme Bank", false).await;
    for path in ["/kyc/nin", "/api/v1/kyc/nin"] {
        let (status, body) = h
            .post(&key, path, &json!({"idNumber": "12345678901"}))
            .await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(body["message"], "NIN lookup successful");
        let data = body["data"].as_object().expect("data");
        assert_eq!(
            data.len(),
            vigil::identity::model::NIN_FIELDS.len(),
            "exactly §2.7's fields"
        );
        assert_eq!(body["data"]["idNumber"], "12345678901");
        assert_eq!(body["data"]["firstName"], "Ada");
        assert_eq!(body["data"]["dateOfBirth"], "1988-04-17");
        assert!(body["data"]["photo"]
            .as_str()
            .is_some_and(|p| !p.is_empty()));
    }
    for path in ["/kyc/bvn", "/api/v1/kyc/bvn"] {
        let (status, body) = h
            .post(&key, path, &json!({"idNumber": "22212345679"}))
            .await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(body["message"], "BVN lookup successful");
        assert_eq!(
            body["data"].as_object().expect("data").len(),
            vigil::identity::model::BVN_FIELDS.len()
        );
        assert_eq!(body["data"]["lastName"], "Okafor");
        assert_eq!(body["data"]["linkedNin"], "12345678902");
    }
    let (status, body) = h
        .post(
            &key,
            "/kyc/cac",
            &json!({"rcNumber": "RC1234567", "companyName": "Zenith Harvest Foods Ltd", "companyType": "RC"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "CAC lookup successful");
    assert_eq!(body["data"]["businessName"], "ZENITH HARVEST FOODS LIMITED");
    assert_eq!(body["data"]["affiliates"], 2);
    assert_eq!(body["data"]["affiliatesData"][0]["surname"], "Obi");
    assert_eq!(body["nameMatch"]["matches"], true, "{body}");
    let (status, body) = h
        .post(
            &key,
            "/kyc/cac",
            &json!({"rcNumber": "2345678", "companyName": "Lagos Steel Works", "companyType": "bn"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["businessName"], "ADA OBI STORES");
    assert_eq!(
        body["nameMatch"]["matches"], false,
        "a different name is reported: {body}"
    );
    h.stop().await;
}

async fn lookups_are_validated_unknown_numbers_are_404_and_every_lookup_is_audited_for_its_tenant_only(
    backend: Backend,
) {
    let mut h = start(backend, |_| {}).await;
    let acme = h.key("Acme Bank", false).await;
    let other = h.key("Other Bank", false).await;
    for (path, body, field, problem) in [
        (
            "/kyc/nin",
            json!({"idNumber": "1234"}),
            "idNumber",
            "a NIN is exactly 11 digits",
        ),
        ("/kyc/bvn", json!({}), "idNumber", "is required"),
        (
            "/kyc/bvn",
            json!({"idNumber": "2221234567a"}),
            "idNumber",
            "a BVN is exactly 11 digits",
        ),
        (
            "/kyc/cac",
            json!({"rcNumber": "RC1", "companyName": "X", "companyType": "LLC"}),
            "companyType",
            "must be one of BN, RC, IT",
        ),
        (
            "/kyc/cac",
            json!({"rcNumber": "RC1", "companyType": "RC"}),
            "companyName",
            "is required",
        ),
    ] {
        let (status, answer) = h.post(&acme, path, &body).await;
        assert_eq!(status, 422, "{path} {body}: {answer}");
        assert_eq!(answer["errors"][0]["field"], field, "{answer}");
        assert_eq!(answer["errors"][0]["problem"], problem, "{answer}");
    }
    let (status, answer) = h
        .post(&acme, "/kyc/nin", &json!({"idNumber": "99999999999"}))
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["message"], "NIN not found");
    let (status, answer) = h
        .post(
            &acme,
            "/kyc/cac",
            &json!({"rcNumber": "1234567", "companyName": "Zenith", "companyType": "BN"}),
        )
        .await;
    assert_eq!(
        status, 404,
        "an RC number is not a BN registration: {answer}"
    );

    // The same NIN twice: the second answer comes from the cache; both are audited.
    for _ in 0..2 {
        let (status, _) = h
            .post(&acme, "/kyc/nin", &json!({"idNumber": "12345678903"}))
            .await;
        assert_eq!(status, 200);
    }
    let (status, audit) = h.get(&acme, "/api/v1/kyc/lookups?kind=nin").await;
    assert_eq!(status, 200, "{audit}");
    let rows = audit["data"].as_array().expect("rows");
    assert_eq!(rows.len(), 3, "two found, one not found: {audit}");
    assert_eq!(rows[0]["query"], json!({"idNumber": "12345678903"}));
    assert_eq!(rows[0]["cached"], true);
    assert_eq!(rows[1]["cached"], false);
    assert_eq!(rows[2]["outcome"], "not-found");
    assert!(rows
        .iter()
        .all(|r| r["actorKey"] == vigil::store::key_id(&acme.0).as_str() && r["purpose"] == "api"));
    assert!(
        !audit.to_string().contains("photo"),
        "no record is kept in the audit"
    );
    let (_, everything) = h.get(&acme, "/api/v1/kyc/lookups").await;
    assert_eq!(everything["data"].as_array().map(Vec::len), Some(4));

    let (status, theirs) = h.get(&other, "/api/v1/kyc/lookups").await;
    assert_eq!(status, 200);
    assert_eq!(
        theirs["data"],
        json!([]),
        "another tenant sees none of them"
    );
    let (status, bad) = h.get(&acme, "/api/v1/kyc/lookups?kind=passport").await;
    assert_eq!(status, 422, "{bad}");
    h.stop().await;
}

fn customer(unique_id: &str, bvn: &str, nin: &str, dob: &str) -> Value {
    json!({"uniqueId": unique_id, "type": "individual", "firstName": "Ada", "lastName": "Obi",
        "dob": dob, "bvnNumber": bvn, "ninNumber": nin, "nationality": "NG",
        "occupation": "teacher", "sourceOfFunds": "salary", "channel": "mobile"})
}

fn entry<'a>(view: &'a Value, key: &str) -> &'a Value {
    view["verifications"]["id"]
        .as_array()
        .and_then(|v| v.iter().find(|e| e["key"] == key))
        .unwrap_or_else(|| panic!("no {key} entry in {view}"))
}

async fn cdd_verifications_run_on_the_lookups_and_move_to_verified_or_failed_with_the_reason(
    backend: Backend,
) {
    let mut h = start(backend, |_| {}).await;
    let key = h.key("Acme Bank", false).await;
    let (status, created) = h
        .post(
            &key,
            "/cdd/customers",
            &customer("CUST-OK", "22212345678", "12345678901", "1988-04-17"),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let (_, fetched) = h.get(&key, "/cdd/customers/CUST-OK").await;
    let view = &fetched["data"];
    for id in ["bvn", "nin"] {
        let e = entry(view, id);
        assert_eq!(e["status"], "Verified", "{e}");
        assert!(e["lastRunAt"].is_string());
        assert!(
            e["reason"]
                .as_str()
                .is_some_and(|r| r.contains("date of birth matches")),
            "{e}"
        );
    }
    assert_eq!(view["customer"]["cddVerificationStatus"], "Verified");

    // Wrong date of birth for the BVN, an unknown NIN.
    let (status, _) = h
        .post(
            &key,
            "/cdd/customers",
            &customer("CUST-BAD", "22212345678", "99999999999", "1990-01-01"),
        )
        .await;
    assert_eq!(status, 201);
    let (_, fetched) = h.get(&key, "/cdd/customers/CUST-BAD").await;
    let view = &fetched["data"];
    let bvn = entry(view, "bvn");
    assert_eq!(bvn["status"], "Failed");
    assert!(
        bvn["reason"]
            .as_str()
            .is_some_and(|r| r.contains("date of birth does not match")),
        "{bvn}"
    );
    let nin = entry(view, "nin");
    assert_eq!(nin["status"], "Failed");
    assert_eq!(nin["reason"], "NIN not found in the registry");
    assert_eq!(view["customer"]["cddVerificationStatus"], "Failed");

    // Fixing the number starts the check over, and it runs at once.
    let (status, updated) = h
        .patch(
            &key,
            "/cdd/customers/CUST-BAD",
            &json!({"ninNumber": "12345678901", "dob": "1988-04-17", "bvnNumber": "22212345678"}),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(
        entry(&updated["data"], "nin")["status"],
        "Verified",
        "{updated}"
    );
    assert_eq!(
        entry(&updated["data"], "bvn")["status"],
        "Failed",
        "an unchanged number is not checked again"
    );
    let (_, trail) = h
        .get(
            &key,
            &format!(
                "/api/v1/audit/cdd-customer/{}",
                view["customer"]["_id"].as_str().expect("id")
            ),
        )
        .await;
    let actions: Vec<&str> = trail["data"]
        .as_array()
        .expect("trail")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert!(actions.contains(&"verified"), "{actions:?}");
    let (_, lookups) = h.get(&key, "/api/v1/kyc/lookups").await;
    assert!(lookups["data"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|r| r["purpose"] == "cdd-verification"));
    h.stop().await;
}

#[derive(Default)]
struct FakeProvider {
    calls: AtomicUsize,
    fail_next: AtomicUsize,
    headers: Mutex<Vec<(String, String)>>,
}

async fn fake_nin(
    State(fake): State<Arc<FakeProvider>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    fake.calls.fetch_add(1, Ordering::SeqCst);
    if let (Some(k), Some(s)) = (
        headers.get("x-provider-key"),
        headers.get("x-provider-secret"),
    ) {
        fake.headers.lock().expect("lock").push((
            k.to_str().unwrap_or_default().to_owned(),
            s.to_str().unwrap_or_default().to_owned(),
        ));
    }
    if fake.fail_next.load(Ordering::SeqCst) > 0 {
        fake.fail_next.fetch_sub(1, Ordering::SeqCst);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": "busy"})),
        );
    }
    match body["idNumber"].as_str() {
        Some("10000000001") => (
            StatusCode::OK,
            Json(
                json!({"status": true, "data": {"nin": "10000000001", "first_name": "Bola",
                "surname": "Tinubu-Ade", "birthdate": "02-03-1970", "height": 180, "residence_state": "Lagos"}}),
            ),
        ),
        Some("10000000500") => (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({}))),
        _ => (StatusCode::NOT_FOUND, Json(json!({"message": "not found"}))),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_provider_is_normalised_retried_and_circuit_broken() {
    let fake = Arc::new(FakeProvider::default());
    let app = Router::new()
        .route("/kyc/nin", post(fake_nin))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let upstream = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let mut h = start(Backend::Sqlite, |config| {
        config.identity.provider = vigil::identity::config::ProviderKind::Upstream;
        config.identity.upstream.base_url = upstream.clone();
        // The fake provider listens on loopback.
        config.outbound.allow_private_upstreams = true;
        config.identity.upstream.api_key_header = "x-provider-key".into();
        config.identity.upstream.api_key = "pk-1".into();
        config.identity.upstream.api_secret_header = "x-provider-secret".into();
        config.identity.upstream.api_secret = "ps-1".into();
        config.identity.upstream.retries = 1;
        config.identity.upstream.retry_backoff_ms = 10;
        config.identity.upstream.breaker_failures = 2;
        config.identity.upstream.breaker_reset_secs = 60;
    })
    .await;
    let key = h.key("Acme Bank", false).await;

    // One 503, then the answer: retried, normalised into §2.7.
    fake.fail_next.store(1, Ordering::SeqCst);
    let (status, body) = h
        .post(&key, "/kyc/nin", &json!({"idNumber": "10000000001"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.calls.load(Ordering::SeqCst), 2, "one retry");
    assert_eq!(body["data"]["idNumber"], "10000000001");
    assert_eq!(body["data"]["lastName"], "Tinubu-Ade");
    assert_eq!(body["data"]["dateOfBirth"], "1970-03-02");
    assert_eq!(body["data"]["height"], "180");
    assert_eq!(body["data"]["residenceState"], "Lagos");
    assert!(fake
        .headers
        .lock()
        .expect("lock")
        .iter()
        .all(|(k, s)| k == "pk-1" && s == "ps-1"));

    // Cached: the provider is not called again.
    let (status, _) = h
        .post(&key, "/kyc/nin", &json!({"idNumber": "10000000001"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(fake.calls.load(Ordering::SeqCst), 2);

    // A 404 is "not found", not a failure.
    let (status, body) = h
        .post(&key, "/kyc/nin", &json!({"idNumber": "10000000404"}))
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(fake.calls.load(Ordering::SeqCst), 3);

    // Two failed lookups (each with its retry) open the circuit; the third is refused at once.
    for expected_calls in [5, 7] {
        let (status, body) = h
            .post(&key, "/kyc/nin", &json!({"idNumber": "10000000500"}))
            .await;
        assert_eq!(status, 503, "{body}");
        assert_eq!(
            body["message"],
            "identity provider is unavailable, retry later"
        );
        assert_eq!(fake.calls.load(Ordering::SeqCst), expected_calls);
    }
    let (status, _) = h
        .post(&key, "/kyc/nin", &json!({"idNumber": "10000000002"}))
        .await;
    assert_eq!(status, 503);
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        7,
        "the open circuit does not call"
    );
    let (_, audit) = h.get(&key, "/api/v1/kyc/lookups").await;
    let outcomes: Vec<&str> = audit["data"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["outcome"].as_str())
        .collect();
    assert_eq!(
        outcomes,
        [
            "unavailable",
            "unavailable",
            "unavailable",
            "not-found",
            "found",
            "found"
        ]
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_import_loads_csv_and_json_all_or_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("bvn.csv");
    std::fs::write(
        &csv,
        "id_number,first_name,last_name,date_of_birth\n30000000001,Kemi,Ade,17/04/1990\n30000000002,Tunde,Ola,1985-01-02\n",
    )
    .expect("write");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_vigil"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .output()
            .expect("runs")
    };
    let output = run(&["registry", "import", "bvn", csv.to_str().expect("path")]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("imported 2 BVN records"));

    let bad = dir.path().join("nin.json");
    std::fs::write(
        &bad,
        r#"[{"idNumber": "30000000009", "firstName": "A"}, {"idNumber": "12"}]"#,
    )
    .expect("write");
    let output = run(&["registry", "import", "nin", bad.to_str().expect("path")]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("record 2: idNumber '12' is not 11 digits"));
    let output = run(&[
        "registry",
        "import",
        "passport",
        bad.to_str().expect("path"),
    ]);
    assert!(!output.status.success());

    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("data/vigil.db").display()
    );
    let store = vigil::store::Store::connect(&url, 1).await.expect("store");
    let registry = vigil::identity::registry::LocalRegistry::new(store.pool().clone());
    use vigil::identity::model::LookupKind;
    let record = registry
        .get(LookupKind::Bvn, "30000000001")
        .await
        .expect("query")
        .expect("imported");
    assert_eq!(record["dateOfBirth"], "1990-04-17");
    assert_eq!(record["lastName"], "Ade");
    assert_eq!(
        registry
            .get(LookupKind::Nin, "30000000009")
            .await
            .expect("query"),
        None,
        "nothing from a bad file"
    );
}

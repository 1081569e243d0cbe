//! EDD requests end to end, on SQLite and on PostgreSQL: the single `Authorization` header, the
//! §2.9 answer, validation, configured pipelines, and step moves with their history and audit.

use crate::common::{Backend, Harness};
use reqwest::Method;
use serde_json::{json, Value};

const EDD: &str = "/api/v1/edd/requests";

on_both_backends!(
    a_request_with_the_authorization_header_answers_the_spec_record,
    required_fields_emails_dates_and_pipelines_are_enforced,
    steps_move_a_request_to_completed_or_rejected_and_every_move_is_kept,
);

fn request(unique_id: &str, pipeline: &str) -> Value {
    json!({"firstName": "Ada", "lastName": "Obi", "dob": "1985-07-14", "uniqueId": unique_id,
        "pipelineSlug": pipeline, "accountOfficer": "officer@acme-bank.ng",
        "middleName": "Nkem", "bvnNumber": "22212345678", "phone": "+2348030000000",
        "nationality": "NG", "email": "ada@example.com"})
}

fn pair(key: &(String, String)) -> String {
    format!("{}:{}", key.0, key.1)
}

async fn a_request_with_the_authorization_header_answers_the_spec_record(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let (status, created) = h
        .send_authorized(
            Some(&pair(&key)),
            Method::POST,
            EDD,
            Some(&request("CUST-1", "standard")),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["success"], true);
    assert_eq!(created["message"], "EDD request created successfully");
    let data = &created["data"];
    let mut fields: Vec<&String> = data.as_object().expect("data").keys().collect();
    fields.sort();
    assert_eq!(fields, ["createdAt", "pipeline", "requestId", "status"]);
    assert_eq!(data["status"], "pending");
    assert_eq!(data["pipeline"], "standard");
    assert!(
        chrono::DateTime::parse_from_rfc3339(data["createdAt"].as_str().expect("createdAt"))
            .is_ok()
    );

    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(pair(&key));
    for header in [format!("Bearer {}", pair(&key)), format!("Basic {basic}")] {
        let (status, body) = h
            .send_authorized(
                Some(&header),
                Method::POST,
                EDD,
                Some(&request("CUST-2", "standard")),
            )
            .await;
        assert_eq!(status, 200, "{header}: {body}");
    }
    // The apiKey/apiSecret pair of the other endpoints works too.
    let (status, _) = h.post(&key, EDD, &request("CUST-3", "pep")).await;
    assert_eq!(status, 200);
    // Spec part 5's form: the key alone, bare or after Bearer (the key is a secret: only its
    // digest is stored).
    for header in [key.0.clone(), format!("Bearer {}", key.0)] {
        let (status, body) = h
            .send_authorized(
                Some(&header),
                Method::POST,
                EDD,
                Some(&request("CUST-5", "standard")),
            )
            .await;
        assert_eq!(status, 200, "the key alone: {body}");
    }

    // Another key of the same business, revoked: refused in every form.
    let other = h.key("acme", false).await;
    let store = vigil::store::Store::connect(&h.database_url(), 2)
        .await
        .expect("store");
    assert!(store.revoke_key(&other.0).await.expect("revoke"));
    let mut wrong_key = key.0.clone();
    wrong_key.pop();
    wrong_key.push(if key.0.ends_with('0') { '1' } else { '0' });
    for header in [
        None,
        Some(wrong_key.clone()),
        Some(format!("Bearer {wrong_key}")),
        // The key's id (what lists and audit records show) is not the key.
        Some(vigil::store::key_id(&key.0)),
        Some(format!("{}:vs_wrong", key.0)),
        Some("Digest x".into()),
        Some("Bearer".into()),
    ] {
        let (status, body) = h
            .send_authorized(
                header.as_deref(),
                Method::POST,
                EDD,
                Some(&request("CUST-4", "standard")),
            )
            .await;
        assert_eq!(status, 401, "{header:?}: {body}");
        assert_eq!(body["success"], false);
        assert_eq!(body["errors"][0]["field"], "Authorization");
    }
    // A revoked key stops working within one refresh of the key cache, in either form.
    let mut refused = false;
    for _ in 0..100 {
        let (status, _) = h
            .send_authorized(
                Some(&other.0),
                Method::GET,
                &format!("{EDD}?uniqueId=CUST-1"),
                None,
            )
            .await;
        if status == 401 {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(refused, "a revoked key is refused");
    let (status, _) = h
        .send_authorized(
            Some(&pair(&other)),
            Method::GET,
            &format!("{EDD}?uniqueId=CUST-1"),
            None,
        )
        .await;
    assert_eq!(status, 401);
    // A present Authorization header is the credential: a wrong, empty or unreadable one is
    // refused even when a valid apiKey/apiSecret pair rides along.
    let wrong_pair = format!("{}:vs_wrong", key.0);
    let unreadable = reqwest::header::HeaderValue::from_bytes(b"\xff\xfe").expect("opaque bytes");
    for value in [
        reqwest::header::HeaderValue::from_static(""),
        reqwest::header::HeaderValue::from_static("   "),
        reqwest::header::HeaderValue::from_static("Digest x"),
        reqwest::header::HeaderValue::from_str(&wrong_pair).expect("ascii"),
        unreadable,
    ] {
        let response = h
            .client
            .get(h.url(&format!("{EDD}?uniqueId=CUST-1")))
            .header("apiKey", &key.0)
            .header("apiSecret", &key.1)
            .header("Authorization", value.clone())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("json");
        assert_eq!(status, 401, "{value:?}: {body}");
        assert_eq!(body["errors"][0]["field"], "Authorization");
    }
    let (status, listed) = h
        .send_authorized(
            Some(&pair(&key)),
            Method::GET,
            &format!("{EDD}?uniqueId=CUST-1"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["data"][0]["requestId"], data["requestId"]);
    h.stop().await;
}

async fn required_fields_emails_dates_and_pipelines_are_enforced(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let auth = pair(&key);
    let (status, body) = h
        .send_authorized(Some(&auth), Method::POST, EDD, Some(&json!({})))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["success"], false);
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "firstName",
            "lastName",
            "dob",
            "uniqueId",
            "pipelineSlug",
            "accountOfficer"
        ]
    );
    for (field, value, problem) in [
        (
            "accountOfficer",
            json!("officer-at-acme"),
            "must be a valid e-mail address",
        ),
        ("email", json!("ada@"), "must be a valid e-mail address"),
        (
            "dob",
            json!("1985-02-30"),
            "must be a valid date (YYYY-MM-DD)",
        ),
        ("dob", json!("2999-01-01"), "must not be in the future"),
        (
            "pipelineSlug",
            json!("express"),
            "unknown pipeline 'express' (known: standard, pep)",
        ),
        ("firstName", json!(7), ""),
    ] {
        let mut body = request("CUST-1", "standard");
        body[field] = value;
        let (status, error) = h
            .send_authorized(Some(&auth), Method::POST, EDD, Some(&body))
            .await;
        assert_eq!(status, 422, "{field}: {error}");
        assert_eq!(error["errors"][0]["field"], field, "{error}");
        if !problem.is_empty() {
            assert_eq!(error["errors"][0]["problem"], problem, "{error}");
        }
    }
    let (status, malformed) = h
        .client
        .post(h.url(EDD))
        .header("Authorization", &auth)
        .header("content-type", "application/json")
        .body("{\"firstName\":")
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .expect("request");
    assert_eq!(status, 400);
    let malformed: Value = malformed.json().await.expect("json");
    assert_eq!(malformed["success"], false);
    h.stop().await;
}

async fn steps_move_a_request_to_completed_or_rejected_and_every_move_is_kept(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let ada = h.analyst(&key, "Ada", "Obi").await;
    let auth = pair(&key);
    let (_, created) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            EDD,
            Some(&request("CUST-1", "standard")),
        )
        .await;
    let id = created["data"]["requestId"]
        .as_str()
        .expect("requestId")
        .to_owned();
    let step = |s: &str| format!("{EDD}/{id}/steps/{s}");
    let act = |action: &str, note: &str| json!({"action": action, "note": note, "userId": ada});

    let (status, fetched) = h
        .send_authorized(Some(&auth), Method::GET, &format!("{EDD}/{id}"), None)
        .await;
    assert_eq!(status, 200, "{fetched}");
    assert_eq!(fetched["data"]["currentStep"], "identity-verification");
    assert_eq!(
        fetched["data"]["subject"]["accountOfficer"],
        "officer@acme-bank.ng"
    );
    let steps: Vec<&str> = fetched["data"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["key"].as_str())
        .collect();
    assert_eq!(
        steps,
        [
            "identity-verification",
            "screening",
            "source-of-funds",
            "account-officer-approval"
        ]
    );

    let (status, early) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            &step("source-of-funds"),
            Some(&act("complete", "")),
        )
        .await;
    assert_eq!(status, 409, "{early}");
    assert_eq!(
        early["message"],
        "step 'source-of-funds' is not the current step (current: 'identity-verification')"
    );
    let (status, wrong) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            &step("identity-verification"),
            Some(&act("approve", "")),
        )
        .await;
    assert_eq!(status, 422, "{wrong}");
    assert_eq!(wrong["errors"][0]["field"], "action");
    let (status, _) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            &step("no-such-step"),
            Some(&act("complete", "")),
        )
        .await;
    assert_eq!(status, 404);

    let mut statuses = Vec::new();
    for (s, action) in [
        ("identity-verification", "complete"),
        ("screening", "complete"),
        ("source-of-funds", "complete"),
        ("account-officer-approval", "approve"),
    ] {
        let (status, moved) = h
            .send_authorized(
                Some(&auth),
                Method::POST,
                &step(s),
                Some(&act(action, &format!("{s} done"))),
            )
            .await;
        assert_eq!(status, 200, "{s}: {moved}");
        assert_eq!(moved["message"], "EDD step updated successfully");
        statuses.push(moved["data"]["status"].as_str().unwrap_or("").to_owned());
    }
    assert_eq!(
        statuses,
        ["in progress", "in progress", "in progress", "completed"]
    );
    let (status, finished) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            &step("screening"),
            Some(&act("fail", "")),
        )
        .await;
    assert_eq!(status, 409, "{finished}");

    let (_, fetched) = h
        .send_authorized(Some(&auth), Method::GET, &format!("{EDD}/{id}"), None)
        .await;
    let data = &fetched["data"];
    assert_eq!(data["status"], "completed");
    assert_eq!(data["currentStep"], Value::Null);
    let history = data["history"].as_array().expect("history");
    assert_eq!(history.len(), 4);
    assert_eq!(history[0]["step"], "identity-verification");
    assert_eq!(history[0]["fromStatus"], "pending");
    assert_eq!(history[0]["toStatus"], "completed");
    assert_eq!(history[0]["requestStatus"], "in progress");
    assert_eq!(history[0]["userId"], ada.as_str());
    assert_eq!(history[3]["toStatus"], "approved");
    assert_eq!(data["steps"][2]["note"], "source-of-funds done");

    let (status, trail) = h
        .get(&key, &format!("/api/v1/audit/edd-request/{id}"))
        .await;
    assert_eq!(status, 200, "{trail}");
    let actions: Vec<&str> = trail["data"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(
        actions,
        [
            "created",
            "step-complete",
            "step-complete",
            "step-complete",
            "step-approve"
        ]
    );
    assert_eq!(
        trail["data"][4]["changes"]["status"],
        json!({"from": "in progress", "to": "completed"})
    );

    // A failed step rejects the request.
    let (_, second) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            EDD,
            Some(&request("CUST-2", "standard")),
        )
        .await;
    let second = second["data"]["requestId"]
        .as_str()
        .expect("requestId")
        .to_owned();
    let (status, rejected) = h
        .send_authorized(
            Some(&auth),
            Method::POST,
            &format!("{EDD}/{second}/steps/identity-verification"),
            Some(&json!({"action": "fail", "note": "documents forged"})),
        )
        .await;
    assert_eq!(status, 200, "{rejected}");
    assert_eq!(rejected["data"]["status"], "rejected");
    assert_eq!(rejected["data"]["steps"][0]["status"], "failed");
    let (status, listed) = h
        .send_authorized(
            Some(&auth),
            Method::GET,
            &format!("{EDD}?status=rejected"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1));
    h.stop().await;
}

//! End-to-end tests of the monitoring API against a real service on loopback.

use std::time::{Duration, Instant};

use crate::common::{rule_ids, tx, Harness};
use serde_json::{json, Value};

const TM: &str = "/api/v1/transaction-monitoring";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instant_answers_the_spec_shape_and_explains_every_decision() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let (status, body) = h
        .instant(&key, &tx("r-1", "u-1", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "Transaction processed");
    let data = &body["data"];
    let id = data["transactionId"].as_str().expect("transactionId");
    assert_eq!(id.len(), 36);
    let score = data["riskScore"].as_str().expect("riskScore is a string");
    assert_eq!(score, "0.60");
    assert_eq!(data["action"], json!({"result": "review", "code": 1}));
    assert_eq!(data["reason"]["rule"]["id"], "T-BIG");
    assert_eq!(data["reason"]["code"], "T-BIG");
    assert_eq!(data["reason"]["severity"], "medium");
    assert_eq!(data["reason"]["message"], "amount above 10,000");
    assert_eq!(data["ruleResult"], "1 rule triggered: Big amount");
    assert_eq!(
        data["screening"],
        json!({"sender": {"pep": "clear", "sanction": "clear"}, "receiver": {"pep": "clear", "sanction": "clear"}})
    );
    assert_eq!(data["rules"][0]["score"], 0.6);
    assert_eq!(data["rules"][0]["mode"], "active");

    let (status, body) = h
        .instant(&key, &tx("r-2", "u-2", 50.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["riskScore"], "0.00");
    assert_eq!(
        body["data"]["action"],
        json!({"result": "approved", "code": 0})
    );
    assert_eq!(body["data"]["ruleResult"], "no rule triggered");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_request_shape_is_accepted_on_the_same_path() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let body = json!({
        "transactionData": {
            "reference": "shape-2", "amount": 15000.5, "transactionDate": "2026-03-02T10:00:00Z",
            "accountCurrency": "NGN", "accountCurrencyBalanceBefore": 20000, "signatory": "single",
            "transactionScheme": "NIP", "exchangeRate": 1, "usdExchangeRate": 0.00065,
            "senderAccount": "111", "receiverAccount": "222"
        },
        "anonymizedUserData": {
            "uniqueId": "cust-9", "identityNumber": 12345678901u64, "phone": "+2348000000000",
            "occupation": "trader", "bankCode": "058", "bankName": "GTB", "name": "Ada Obi",
            "dob": "1990-01-01", "sow": "salary", "iban": "", "sortCode": "", "bankCountry": "NG",
            "pepStatus": false
        },
        "counterpartyData": {"country": "NG", "bankCode": "044", "name": "Chidi", "accountNumber": "222",
            "identityNumber": 98765432109u64, "email": "c@example.com"},
        "ipAddress": "102.89.1.1"
    });
    let (status, response) = h.instant(&key, &body).await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(rule_ids(&response), ["T-BIG"]);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_demands_a_valid_key_pair() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let body = tx("auth-1", "u", 1.0, "2026-03-02T10:00:00Z");
    let url = h.url(&format!("{TM}/instant"));
    let cases: Vec<(Option<&str>, Option<&str>)> = vec![
        (None, None),
        (Some(&key.0), None),
        (None, Some(&key.1)),
        (Some(&key.0), Some("vs_wrong")),
        (Some("vk_unknown"), Some(&key.1)),
    ];
    for (api_key, secret) in cases {
        let mut request = h.client.post(&url).json(&body);
        if let Some(k) = api_key {
            request = request.header("apiKey", k);
        }
        if let Some(s) = secret {
            request = request.header("apiSecret", s);
        }
        let response = request.send().await.expect("request");
        assert_eq!(response.status().as_u16(), 401);
        let json: Value = response.json().await.expect("json body");
        assert!(json["message"]
            .as_str()
            .is_some_and(|m| m.contains("apiKey")));
    }
    for path in [
        format!("{TM}/blacklist-user"),
        format!("{TM}/customers/device"),
        "/api/v1/admin/rules/reload".to_owned(),
    ] {
        let response = h
            .client
            .post(h.url(&path))
            .json(&json!({}))
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 401, "{path}");
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_4xx_naming_the_field_and_never_a_500() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let url = h.url(&format!("{TM}/instant"));
    let send = |body: Vec<u8>, content_type: &'static str| {
        h.client
            .post(&url)
            .header("apiKey", &key.0)
            .header("apiSecret", &key.1)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let cases: Vec<(Vec<u8>, &str, u16, &str)> = vec![
        (b"{\"transactionData\": ".to_vec(), "application/json", 400, "body"),
        (b"".to_vec(), "application/json", 400, "body"),
        (b"[1,2]".to_vec(), "application/json", 422, "body"),
        (b"{}".to_vec(), "application/json", 422, "transactionData"),
        (br#"{"transactionData":{"reference":"x","amount":1}}"#.to_vec(), "application/json", 422, "anonymizedUserData"),
        (br#"{"transactionData":{"reference":"x","amount":"12"},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.amount"),
        (br#"{"transactionData":{"reference":"x","amount":-3},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.amount"),
        (br#"{"transactionData":{"reference":"x","amount":1e400},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.amount"),
        (br#"{"transactionData":{"reference":"x","amount":3,"amount":4},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.amount"),
        (br#"{"transactionData":{"reference":"x","amount":3},"anonymizedUserData":{"uniqueId":"u"},"note":1,"note":2}"#.to_vec(), "application/json", 422, "note"),
        ("{\"transactionData\":{\"reference\":\"x\",\"amount\":3},\"anonymizedUserData\":{\"uniqueId\":\"\u{feff}\"}}".as_bytes().to_vec(), "application/json", 422, "anonymizedUserData.uniqueId"),
        (br#"{"transactionData":{"reference":"\u202e\u200b","amount":3},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.reference"),
        (br#"{"transactionData":{"reference":"x","amount":3},"anonymizedUserData":{"uniqueId":"a\u0000b"}}"#.to_vec(), "application/json", 422, "anonymizedUserData.uniqueId"),
        (br#"{"transactionData":{"reference":"x","amount":3,"transactionDate":"tomorrow"},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.transactionDate"),
        (br#"{"transactionData":{"amount":3},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.reference"),
        (br#"{"transactionData":{"reference":"x","amount":3,"status":"yes"},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "application/json", 422, "transactionData.status"),
        // A section sent as an array is not read field by field in declaration order.
        (br#"{"transactionData":{"reference":"x","amount":3},"anonymizedUserData":["u"]}"#.to_vec(), "application/json", 422, "anonymizedUserData"),
        (br#"{"transactionData":{"reference":"x","amount":3},"anonymizedUserData":{"uniqueId":"u"},"screeningData":["Ada Obi","Chidi Eze"]}"#.to_vec(), "application/json", 422, "screeningData"),
        (br#"{"transactionData":{"reference":"x","amount":3},"anonymizedUserData":{"uniqueId":"u"}}"#.to_vec(), "text/plain", 415, "Content-Type"),
        (vec![b' '; 2 * 1024 * 1024], "application/json", 413, "body"),
    ];
    for (body, content_type, expected, field) in cases {
        let response = send(body, content_type).await.expect("request");
        let status = response.status().as_u16();
        let json: Value = response.json().await.expect("every error is JSON");
        assert!((400..500).contains(&status), "status {status}: {json}");
        if expected != 0 {
            assert_eq!(status, expected, "{json}");
            assert_eq!(json["errors"][0]["field"], field, "{json}");
        }
        assert!(json["message"].is_string());
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_keys_invisible_ids_and_undecodable_path_parameters_get_json_errors_everywhere() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let send = |method: reqwest::Method, path: String, body: &'static str| {
        let mut request = h
            .client
            .request(method, h.url(&path))
            .header("apiKey", &key.0)
            .header("apiSecret", &key.1);
        if !body.is_empty() {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        request.send()
    };
    // One rule for a key given twice, on every kind of body: typed ones and the ones read as
    // plain JSON values (blacklist entries, the reporting configuration, identity lookups).
    for path in [
        format!("{TM}/instant"),
        format!("{TM}/blacklist-user"),
        "/api/v1/reporting/config".to_owned(),
        "/api/v1/kyc/nin".to_owned(),
        "/api/v1/case-management/analysts".to_owned(),
        "/api/v1/webhooks".to_owned(),
    ] {
        let method = if path.ends_with("config") || path.ends_with("webhooks") {
            reqwest::Method::PUT
        } else {
            reqwest::Method::POST
        };
        let response = send(method, path.clone(), r#"{"userId":"a","userId":"b"}"#)
            .await
            .expect("request");
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(status, 422, "{path}: {body}");
        assert_eq!(body["errors"][0]["field"], "userId", "{path}: {body}");
        assert_eq!(
            body["errors"][0]["problem"],
            vigil::model::DUPLICATE_KEY,
            "{path}: {body}"
        );
    }
    // Identifiers of nothing visible, or with control characters, are refused by name.
    for (path, body, field) in [
        (
            format!("{TM}/blacklist-user"),
            r#"{"userId":"\u202e\u200b"}"#,
            "userId",
        ),
        (
            format!("{TM}/blacklist-user"),
            r#"{"userId":"\u0000"}"#,
            "userId",
        ),
        (
            format!("{TM}/blacklist-account"),
            r#"{"accountNumber":"12\u0000"}"#,
            "accountNumber",
        ),
        (
            "/api/v1/case-management/analysts".to_owned(),
            r#"{"firstName":"\u202e\u200b","lastName":"Obi","email":"ada@bank.ng"}"#,
            "firstName",
        ),
        (
            "/api/v1/case-management/analysts".to_owned(),
            r#"{"firstName":"Ada","lastName":"O\u0000bi","email":"ada@bank.ng"}"#,
            "lastName",
        ),
    ] {
        let response = send(reqwest::Method::POST, path.clone(), body)
            .await
            .expect("request");
        let status = response.status().as_u16();
        let answer: Value = response.json().await.expect("JSON");
        assert_eq!(status, 422, "{path} {body}: {answer}");
        assert_eq!(answer["errors"][0]["field"], field, "{answer}");
    }
    // 256 Cyrillic characters are 512 bytes and still a valid id.
    let cyrillic = "Ж".repeat(256);
    let (status, body) = h
        .post(
            &key,
            &format!("{TM}/blacklist-user"),
            &json!({"userId": cyrillic}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // A path parameter that is not UTF-8 once percent-decoded: JSON naming the parameter.
    for (path, field) in [
        ("/cdd/customers/%FF", "uniqueId"),
        ("/api/v1/case-management/case/%FF", "id"),
        ("/api/v1/webhooks/deliveries/%C3%28", "id"),
        ("/api/v1/transaction-monitoring/%FF", "transactionId"),
        ("/api/v1/audit/case/%FF", "entityId"),
    ] {
        let response = send(reqwest::Method::GET, path.to_owned(), "")
            .await
            .expect("request");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body: Value = response.json().await.expect("a JSON error");
        assert_eq!(status, 400, "{path}: {body}");
        assert!(
            content_type.starts_with("application/json"),
            "{path}: {content_type}"
        );
        assert_eq!(body["errors"][0]["field"], field, "{path}: {body}");
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resubmitting_a_reference_returns_the_same_decision_and_counts_once() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let first = tx("dup-1", "u-dup", 100.0, "2026-03-02T10:00:00Z");
    let (_, a) = h.instant(&key, &first).await;
    let (status, again) = h.instant(&key, &first).await;
    assert_eq!(status, 200);
    assert_eq!(a["data"]["transactionId"], again["data"]["transactionId"]);
    assert_eq!(a["data"], again["data"]);
    // The same reference with another date (the id's time part differs) is still the same
    // transaction: the stored decision, with the stored id, comes back.
    let (status, other_date) = h
        .instant(&key, &tx("dup-1", "u-dup", 100.0, "2026-03-02T10:01:00Z"))
        .await;
    assert_eq!(status, 200, "{other_date}");
    assert_eq!(a["data"], other_date["data"]);
    // Only one prior debit is counted, so the velocity rule (two prior debits) stays quiet.
    let (_, second) = h
        .instant(&key, &tx("dup-2", "u-dup", 100.0, "2026-03-02T10:05:00Z"))
        .await;
    assert!(
        !rule_ids(&second).contains(&"T-VELOCITY".to_owned()),
        "{second}"
    );
    let (_, third) = h
        .instant(&key, &tx("dup-3", "u-dup", 100.0, "2026-03-02T10:10:00Z"))
        .await;
    assert!(
        rule_ids(&third).contains(&"T-VELOCITY".to_owned()),
        "{third}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_never_see_or_influence_each_other() {
    let mut h = Harness::start().await;
    let acme = h.key("acme", false).await;
    let globex = h.key("globex", false).await;
    let (status, body) = h
        .post(
            &acme,
            &format!("{TM}/blacklist-user"),
            &json!({"userId": "shared-user"}),
        )
        .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (200, Some("User blacklisted"))
    );
    let (_, at_acme) = h
        .instant(
            &acme,
            &tx("t-1", "shared-user", 5.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert_eq!(at_acme["data"]["action"]["result"], "rejected");
    let (_, at_globex) = h
        .instant(
            &globex,
            &tx("t-1", "shared-user", 5.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert_eq!(at_globex["data"]["action"]["result"], "approved");
    assert_ne!(
        at_acme["data"]["transactionId"],
        at_globex["data"]["transactionId"]
    );
    // Velocity state is per tenant too.
    for i in 2..=3 {
        h.instant(
            &acme,
            &tx(
                &format!("t-{i}"),
                "shared-user",
                5.0,
                "2026-03-02T10:01:00Z",
            ),
        )
        .await;
    }
    let (_, globex_next) = h
        .instant(
            &globex,
            &tx("t-2", "shared-user", 5.0, "2026-03-02T10:02:00Z"),
        )
        .await;
    assert!(!rule_ids(&globex_next).contains(&"T-VELOCITY".to_owned()));
    // One tenant cannot read another's decisions.
    let id = at_acme["data"]["transactionId"].as_str().expect("id");
    let (status, _) = h.get(&globex, &format!("{TM}/{id}")).await;
    assert_eq!(status, 404);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blacklists_add_and_remove_with_the_spec_texts_and_rules_see_them() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let lists = [
        (
            "blacklist-user",
            "userId",
            "bad-user",
            "User blacklisted",
            "User removed from blacklist",
        ),
        (
            "blacklist-vas-receiver",
            "receiver",
            "08030000000",
            "VAS receiver blacklisted",
            "VAS receiver removed from blacklist",
        ),
        (
            "blacklist-account",
            "accountNumber",
            "9999999999",
            "Account blacklisted",
            "Account removed from blacklist",
        ),
        (
            "blacklist-device",
            "deviceId",
            "dev-evil",
            "Device blacklisted",
            "Device removed from blacklist",
        ),
    ];
    for (path, field, value, added, removed) in lists {
        let (status, body) = h
            .post(&key, &format!("{TM}/{path}"), &json!({ field: value }))
            .await;
        assert_eq!(
            (status, body["message"].as_str()),
            (200, Some(added)),
            "{path}"
        );
        let (status, listed) = h.get(&key, &format!("{TM}/{path}")).await;
        assert_eq!(status, 200);
        assert_eq!(listed["data"][0]["value"], value);
        let mut payload = tx(&format!("{path}-1"), "someone", 5.0, "2026-03-02T10:00:00Z");
        match field {
            "userId" => payload["anonymizedUserData"]["uniqueId"] = json!(value),
            "receiver" => payload["transactionData"]["vasReceiver"] = json!(value),
            "accountNumber" => payload["transactionData"]["receiverAccount"] = json!(value),
            _ => payload["device"] = json!({"deviceId": value}),
        }
        let (_, decision) = h.instant(&key, &payload).await;
        assert_eq!(
            decision["data"]["action"]["result"], "rejected",
            "{path}: {decision}"
        );
        assert_eq!(decision["data"]["reason"]["rule"]["id"], "T-BLACKLIST");

        let (status, body) = h.delete(&key, &format!("{TM}/{path}/{value}")).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (200, Some(removed)),
            "{path}"
        );
        let (status, body) = h.delete(&key, &format!("{TM}/{path}/{value}")).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body["message"]
            .as_str()
            .is_some_and(|m| m.contains("not blacklisted")));
        payload["transactionData"]["reference"] = json!(format!("{path}-2"));
        let (_, decision) = h.instant(&key, &payload).await;
        assert_ne!(
            decision["data"]["action"]["result"], "rejected",
            "{path}: {decision}"
        );
    }
    let (status, body) = h
        .post(&key, &format!("{TM}/blacklist-user"), &json!({"userId": 5}))
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["field"], "userId");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_device_is_known_to_the_rules() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let device = json!({"customerId": "u-dev", "device": {"deviceId": "phone-1", "manufacturer": "Tecno",
        "model": "Spark 10", "name": "Ada's phone", "osName": "Android", "osVersion": "13"}});
    let (status, body) = h
        .post(&key, &format!("{TM}/customers/device"), &device)
        .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (200, Some("Device saved successfully"))
    );
    let mut known = tx("d-1", "u-dev", 5.0, "2026-03-02T10:00:00Z");
    known["device"] = json!({"deviceId": "phone-1"});
    let (_, decision) = h.instant(&key, &known).await;
    assert!(
        !rule_ids(&decision).contains(&"T-NEW-DEVICE".to_owned()),
        "{decision}"
    );
    let mut unknown = tx("d-2", "u-dev", 5.0, "2026-03-02T10:01:00Z");
    unknown["device"] = json!({"deviceId": "phone-2"});
    let (_, decision) = h.instant(&key, &unknown).await;
    assert!(
        rule_ids(&decision).contains(&"T-NEW-DEVICE".to_owned()),
        "{decision}"
    );

    let (status, body) = h
        .post(
            &key,
            &format!("{TM}/customers/device"),
            &json!({"customerId": "x"}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["field"], "device");
    let (status, body) = h
        .post(
            &key,
            &format!("{TM}/customers/device"),
            &json!({"device": {}}),
        )
        .await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(fields, ["customerId", "device.deviceId"]);
    h.stop().await;
}

async fn wait_for_decision(h: &Harness, key: &(String, String), id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = h.get(key, &format!("{TM}/{id}")).await;
        if status == 200 && body["data"]["status"] == "decided" {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "no decision for {id}: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asynchronous_submission_is_acknowledged_then_decided_and_stored() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let (status, body) = h
        .post(
            &key,
            TM,
            &tx("async-1", "u-a", 20_000.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"message": "Transaction submitted"}));
    let stored = wait_for_decision(&h, &key, "async-1").await;
    assert_eq!(stored["message"], "Transaction fetched successfully");
    assert_eq!(stored["data"]["reference"], "async-1");
    assert_eq!(stored["data"]["intake"], "async");
    assert_eq!(stored["data"]["reason"]["rule"]["id"], "T-BIG");
    // By Vigil's id as well as by reference.
    let id = stored["data"]["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let (status, by_id) = h.get(&key, &format!("{TM}/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(by_id["data"]["transactionId"], id.as_str());
    // Resubmitting is acknowledged again without a second evaluation.
    let (status, _) = h
        .post(
            &key,
            TM,
            &tx("async-1", "u-a", 20_000.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = h.get(&key, &format!("{TM}/nothing-here")).await;
    assert_eq!(status, 404);
    assert_eq!(body["errors"][0]["field"], "transactionId");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reporting_only_tenants_get_null_data_and_their_transactions_are_recorded() {
    let mut h = Harness::start().await;
    let key = h.key("quiet-bank", false).await;
    let (status, body) = h
        .put(
            &key,
            "/api/v1/settings",
            &json!({"processingMode": "reporting-only"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = h
        .instant(&key, &tx("ro-1", "u-ro", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"message": "Transaction processed", "data": null})
    );
    let (status, stored) = h.get(&key, &format!("{TM}/ro-1")).await;
    assert_eq!(status, 200);
    assert_eq!(stored["data"]["action"]["result"], "review");
    let (status, body) = h
        .put(
            &key,
            "/api/v1/settings",
            &json!({"processingMode": "sometimes"}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["field"], "processingMode");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_and_pending_work_survive_a_restart() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    for (i, minute) in [(1, "00"), (2, "05")] {
        let (status, _) = h
            .instant(
                &key,
                &tx(
                    &format!("rs-{i}"),
                    "u-rs",
                    10.0,
                    &format!("2026-03-02T10:{minute}:00Z"),
                ),
            )
            .await;
        assert_eq!(status, 200);
    }
    h.stop().await;
    // A submission accepted but not evaluated before the process went away.
    let store = vigil::store::Store::connect(&h.database_url(), 1)
        .await
        .expect("store");
    let business = store
        .business_by_name("acme")
        .await
        .expect("query")
        .expect("acme");
    let payload = tx("rs-pending", "u-other", 20_000.0, "2026-03-02T11:00:00Z").to_string();
    sqlx::query(
        "INSERT INTO transactions (business_id, transaction_id, reference, user_id, intake, status, \
         event_time_ms, received_at_ms, payload) VALUES ($1, $2, $3, $4, 'async', 'pending', $5, $6, $7)",
    )
    .bind(business.id)
    // An id of the scheme before ids carried the event time (a UUID v5 of tenant and reference),
    // as a row left pending by that version has: the row completes by its reference.
    .bind("0b7f5a52-8d8e-5a39-9a0b-5f3a2f6f2c11")
    .bind("rs-pending")
    .bind("u-other")
    .bind(1_772_449_200_000i64)
    .bind(vigil::store::now_ms())
    .bind(&payload)
    .execute(store.pool())
    .await
    .expect("insert pending");
    store.pool().close().await;

    h.restart().await;
    let (_, third) = h
        .instant(&key, &tx("rs-3", "u-rs", 10.0, "2026-03-02T10:10:00Z"))
        .await;
    assert!(
        rule_ids(&third).contains(&"T-VELOCITY".to_owned()),
        "state was not rebuilt: {third}"
    );
    // The replayed history also still answers resubmissions without counting them again.
    let (_, again) = h
        .instant(&key, &tx("rs-1", "u-rs", 10.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(again["data"]["reference"], "rs-1");
    assert!(rule_ids(&again).is_empty());
    let recovered = wait_for_decision(&h, &key, "rs-pending").await;
    assert_eq!(recovered["data"]["reason"]["rule"]["id"], "T-BIG");
    assert_eq!(
        recovered["data"]["transactionId"],
        vigil::engine::transaction_id(business.id, "rs-pending", 1_772_449_200_000),
        "the completed row takes the decision's id: {recovered}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_changes_go_live_without_a_restart_and_broken_rules_never_replace_good_ones() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let admin = h.key("operator", true).await;
    let new_rule = "//! id = \"T-NEW\"\n//! name = \"Lucky number\"\n//! description = \"amount is 777\"\n//! severity = \"high\"\n//! score = 0.7\n\ntx.amount == 777.0\n";
    std::fs::write(h.rules_dir().join("T-NEW.rhai"), new_rule).expect("write rule");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut n = 0;
    let reached = loop {
        n += 1;
        let (_, decision) = h
            .instant(
                &key,
                &tx(
                    &format!("hot-{n}"),
                    &format!("u-{n}"),
                    777.0,
                    "2026-03-02T10:00:00Z",
                ),
            )
            .await;
        if rule_ids(&decision).contains(&"T-NEW".to_owned()) {
            break Instant::now();
        }
        assert!(Instant::now() < deadline, "new rule never went live");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(reached <= deadline);

    std::fs::write(h.rules_dir().join("T-BROKEN.rhai"), "//! id = \"T-BROKEN\"\n//! name = \"b\"\n//! description = \"b\"\n//! severity = \"low\"\n//! score = 0.1\n\ntx.amount > * 2.0\nfalse\n").expect("write");
    let deadline = Instant::now() + Duration::from_secs(5);
    let ready = loop {
        let ready: Value = h
            .client
            .get(h.url("/readyz"))
            .send()
            .await
            .expect("readyz")
            .json()
            .await
            .expect("json");
        if ready["status"] == "degraded" {
            break ready;
        }
        assert!(
            Instant::now() < deadline,
            "broken rule not reported: {ready}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let error = ready["rules"]["lastError"].as_str().expect("error text");
    assert!(error.contains("T-BROKEN.rhai:7"), "{error}");
    // The previous pack still serves.
    let (_, decision) = h
        .instant(
            &key,
            &tx("after-broken", "u-x", 777.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert!(rule_ids(&decision).contains(&"T-NEW".to_owned()));
    let metrics = h
        .client
        .get(h.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("vigil_rules_reload_failing 1"),
        "{metrics}"
    );

    // The admin endpoint reloads on demand and reports the same error; client keys may not.
    let (status, _) = h.post(&key, "/api/v1/admin/rules/reload", &json!({})).await;
    assert_eq!(status, 403);
    let (status, body) = h
        .post(&admin, "/api/v1/admin/rules/reload", &json!({}))
        .await;
    assert_eq!(status, 422);
    assert!(body["errors"][0]["problem"]
        .as_str()
        .is_some_and(|p| p.contains("T-BROKEN.rhai:7")));
    std::fs::remove_file(h.rules_dir().join("T-BROKEN.rhai")).expect("remove");
    let (status, body) = h
        .post(&admin, "/api/v1/admin/rules/reload", &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["rules"], 7);
    let (status, body) = h.get(&admin, "/api/v1/admin/rules").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["rules"].as_array().map(Vec::len), Some(7));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_metrics_are_served() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    h.instant(&key, &tx("m-1", "u-m", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    let health: Value = h
        .client
        .get(h.url("/healthz"))
        .send()
        .await
        .expect("healthz")
        .json()
        .await
        .expect("json");
    assert_eq!(health["status"], "ok");
    let ready = h.client.get(h.url("/readyz")).send().await.expect("readyz");
    assert_eq!(ready.status().as_u16(), 200);
    let ready: Value = ready.json().await.expect("json");
    let metrics = h
        .client
        .get(h.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for needle in [
        "vigil_rule_hits_total{rule=\"T-BIG\"} 1",
        "vigil_decisions_total{action=\"review\"} 1",
        "vigil_http_request_seconds_bucket{route=\"/api/v1/transaction-monitoring/instant\"",
        "vigil_shard_queue_depth{shard=\"0\"}",
        "vigil_evaluation_seconds_count",
    ] {
        assert!(metrics.contains(needle), "missing {needle}");
    }
    let openapi: Value = h
        .client
        .get(h.url("/openapi.json"))
        .send()
        .await
        .expect("openapi")
        .json()
        .await
        .expect("json");
    assert_eq!(
        openapi["openapi"].as_str().map(|v| v.starts_with("3.1")),
        Some(true)
    );
    // The readiness answer is what the document says it is (its screening part was documented
    // as a string).
    assert_eq!(
        openapi["paths"]["/readyz"]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["$ref"],
        "#/components/schemas/Readiness"
    );
    conforms(&ready, "Readiness", &openapi);
    let response = h
        .client
        .get(h.url("/no/such/path"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 404);
    h.stop().await;
}

/// Checks `value` against the document's schema `name` with a JSON Schema 2020-12 validator (the
/// schemas of an OpenAPI 3.1 document are JSON Schema). Properties the document does not list
/// are refused too, so a field added to an answer without its documentation fails.
fn conforms(value: &Value, name: &str, document: &Value) {
    let mut components = document["components"].clone();
    if let Some(schemas) = components["schemas"].as_object_mut() {
        for schema in schemas.values_mut() {
            if schema.get("properties").is_some() {
                schema["unevaluatedProperties"] = Value::Bool(false);
            }
        }
    }
    let schema = json!({"$ref": format!("#/components/schemas/{name}"), "components": components});
    let validator = jsonschema::draft202012::new(&schema).expect("the document's schemas compile");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}");
}

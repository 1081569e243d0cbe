//! Case management end to end, on SQLite and on PostgreSQL: automatic cases from decisions, the
//! spec's case record on both addresses, analyst actions and their log, listing and paging.

use std::time::{Duration, Instant};

use crate::common::{tx, Backend, Harness};
use serde_json::{json, Value};

const TM: &str = "/api/v1/transaction-monitoring";
const CM: &str = "/api/v1/case-management";

on_both_backends!(
    non_approved_decisions_open_one_case_per_user_and_later_alerts_join_it,
    asynchronous_decisions_open_cases_too,
    the_case_endpoint_answers_exactly_the_spec_fields_on_both_addresses,
    analysts_work_a_case_through_every_status_and_invalid_moves_are_refused,
    manual_cases_are_created_listed_filtered_and_paged,
    a_finding_that_shares_an_account_with_an_open_case_of_its_typology_joins_it,
    a_payment_with_findings_of_two_typologies_is_an_alert_of_both_cases,
);

fn log_messages(case: &Value) -> Vec<String> {
    case["log"]
        .as_array()
        .map(|log| {
            log.iter()
                .filter_map(|e| e["message"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn non_approved_decisions_open_one_case_per_user_and_later_alerts_join_it(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let (_, first) = h
        .instant(&key, &tx("big-1", "u-1", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(first["data"]["action"]["result"], "review", "{first}");
    let (_, approved) = h
        .instant(&key, &tx("small-1", "u-9", 50.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(approved["data"]["action"]["result"], "approved");

    let cases = h.cases(&key, "").await;
    assert_eq!(
        cases.len(),
        1,
        "only the non-approved decision opens a case: {cases:?}"
    );
    let case = &cases[0];
    assert_eq!(case["module"], "transaction-monitoring");
    assert_eq!(
        case["record"],
        json!({"id": first["data"]["transactionId"], "type": "transaction", "name": "big-1"})
    );
    assert_eq!(case["title"], "Big amount");
    assert_eq!(
        case["priority"], "medium",
        "priority follows the rule's severity"
    );
    assert_eq!(case["status"], "open");
    assert_eq!(case["businessProfile"], "acme");
    let description = case["description"].as_str().expect("description");
    assert!(
        description.contains("big-1") && description.contains("Big amount"),
        "{description}"
    );
    assert_eq!(log_messages(case), ["Case created"]);
    assert_eq!(case["log"][0]["user"]["_id"], "system");
    assert_eq!(case["log"][0]["status"], "open");

    // A second alert for the same user joins the open case, and a sanctioned receiver (a
    // critical rule) raises its priority.
    let mut sanctioned = tx("sanctioned-1", "u-1", 100.0, "2026-03-02T10:05:00Z");
    sanctioned["screeningData"]["receiverName"] = json!("Ivan Petrovich Sidorov");
    let (_, second) = h.instant(&key, &sanctioned).await;
    assert_eq!(second["data"]["action"]["result"], "rejected", "{second}");
    let cases = h.cases(&key, "").await;
    assert_eq!(cases.len(), 1, "{cases:?}");
    let case = &cases[0];
    assert_eq!(case["priority"], "critical");
    let log = log_messages(case);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log[1].starts_with("Alert added: transaction sanctioned-1 (rejected"),
        "{log:?}"
    );
    assert_eq!(
        case["record"]["name"], "big-1",
        "the record stays the first alert"
    );

    // Resubmitting a reference never alerts twice.
    h.instant(&key, &sanctioned).await;
    let cases = h.cases(&key, "").await;
    assert_eq!(log_messages(&cases[0]).len(), 2);

    // Another user gets a case of their own.
    h.instant(&key, &tx("big-2", "u-2", 30_000.0, "2026-03-02T10:00:00Z"))
        .await;
    let cases = h.cases(&key, "").await;
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0]["record"]["name"], "big-2", "newest first");

    // The automatic case's audit trail names Vigil as the actor.
    let id = cases[1]["_id"].as_str().expect("id");
    let (status, trail) = h.get(&key, &format!("/api/v1/audit/case/{id}")).await;
    assert_eq!(status, 200, "{trail}");
    let actions: Vec<&str> = trail["data"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions, ["created", "alert-added"]);
    assert_eq!(trail["data"][0]["actorKey"], "system");
    assert_eq!(
        trail["data"][1]["changes"]["priority"],
        json!({"from": "medium", "to": "critical"})
    );
    h.stop().await;
}

async fn asynchronous_decisions_open_cases_too(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let (status, body) = h
        .post(
            &key,
            TM,
            &tx("async-big", "u-a", 50_000.0, "2026-03-02T10:00:00Z"),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let cases = loop {
        let cases = h.cases(&key, "").await;
        if !cases.is_empty() {
            break cases;
        }
        assert!(
            Instant::now() < deadline,
            "no case for the asynchronous decision"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(cases[0]["record"]["name"], "async-big");
    let (status, stored) = h.get(&key, &format!("{TM}/async-big")).await;
    assert_eq!(status, 200);
    assert_eq!(
        stored["data"]["status"], "decided",
        "the case commits with the decision"
    );
    // The transaction store survives a restart on this backend, cases included.
    h.restart().await;
    let (status, again) = h.get(&key, &format!("{TM}/async-big")).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["data"]["action"], stored["data"]["action"]);
    assert_eq!(h.cases(&key, "").await.len(), 1);
    h.stop().await;
}

/// The fields of spec §2.5 and of its nested objects.
const CASE_FIELDS: &[&str] = &[
    "_id",
    "businessProfile",
    "module",
    "record",
    "title",
    "description",
    "priority",
    "status",
    "assignedTo",
    "assignedBy",
    "dueDate",
    "createdAt",
    "updatedAt",
    "tasks",
    "comments",
    "attachments",
    "isEscalated",
    "log",
];

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

fn sorted(fields: &[&str]) -> Vec<String> {
    let mut fields: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
    fields.sort();
    fields
}

async fn the_case_endpoint_answers_exactly_the_spec_fields_on_both_addresses(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let ada = h.analyst(&key, "Ada", "Obi").await;
    let bayo = h.analyst(&key, "Bayo", "Ade").await;
    h.instant(&key, &tx("big-1", "u-1", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    let id = h.cases(&key, "").await[0]["_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let case_path = format!("{CM}/case/{id}");
    h.post(
        &key,
        &format!("{case_path}/assign"),
        &json!({"assigneeId": bayo, "userId": ada, "dueDate": "2026-03-09"}),
    )
    .await;
    h.post(
        &key,
        &format!("{case_path}/tasks"),
        &json!({"text": "Call the customer", "userId": ada}),
    )
    .await;
    h.post(
        &key,
        &format!("{case_path}/comments"),
        &json!({"text": "Looks like salary", "userId": bayo,
        "taggedUsers": [ada], "attachments": ["https://files.example.com/statement.pdf"]}),
    )
    .await;

    let (status, versioned) = h.get(&key, &case_path).await;
    assert_eq!(status, 200, "{versioned}");
    assert_eq!(versioned["message"], "Case fetched successfully");
    let (status, plain) = h.get(&key, &format!("/case-management/case/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(plain, versioned, "both addresses answer the same");

    let case = &versioned["data"];
    assert_eq!(keys(case), sorted(CASE_FIELDS));
    assert_eq!(keys(&case["record"]), sorted(&["id", "type", "name"]));
    let user = sorted(&["_id", "firstName", "lastName"]);
    assert_eq!(keys(&case["assignedTo"]), user);
    assert_eq!(keys(&case["assignedBy"]), user);
    assert_eq!(case["assignedTo"]["firstName"], "Bayo");
    assert_eq!(case["assignedBy"]["firstName"], "Ada");
    assert!(case["dueDate"]
        .as_str()
        .is_some_and(|d| d.starts_with("2026-03-09T23:59:59")));
    assert_eq!(keys(&case["tasks"][0]), sorted(&["_id", "text", "status"]));
    assert_eq!(case["tasks"][0]["status"], false);
    let comment = &case["comments"][0];
    assert_eq!(
        keys(comment),
        sorted(&["_id", "text", "user", "attachments", "taggedUsers", "date"])
    );
    assert_eq!(keys(&comment["user"]), user);
    assert_eq!(comment["taggedUsers"][0]["_id"], ada.as_str());
    assert_eq!(
        comment["attachments"][0],
        "https://files.example.com/statement.pdf"
    );
    assert_eq!(
        keys(&case["log"][0]),
        sorted(&["_id", "status", "message", "user", "date"])
    );
    assert_eq!(case["attachments"], json!([]));
    assert_eq!(case["isEscalated"], false);
    for field in ["createdAt", "updatedAt"] {
        let text = case[field].as_str().expect("time");
        assert!(
            chrono::DateTime::parse_from_rfc3339(text).is_ok(),
            "{field}: {text}"
        );
    }

    let (status, missing) = h.get(&key, &format!("{CM}/case/no-such-case")).await;
    assert_eq!(status, 404);
    assert_eq!(missing["message"], "Case not found");
    h.stop().await;
}

async fn analysts_work_a_case_through_every_status_and_invalid_moves_are_refused(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let ada = h.analyst(&key, "Ada", "Obi").await;
    let bayo = h.analyst(&key, "Bayo", "Ade").await;
    h.instant(&key, &tx("big-1", "u-1", 20_000.0, "2026-03-02T10:00:00Z"))
        .await;
    let id = h.cases(&key, "").await[0]["_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let path = format!("{CM}/case/{id}");
    let status_to = |status: &'static str, user: String| json!({"status": status, "userId": user});

    let (status, refused) = h
        .patch(
            &key,
            &format!("{path}/status"),
            &status_to("closed", ada.clone()),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(
        refused["message"],
        "cannot move a case from open to closed (allowed next: in progress)"
    );
    let (status, unknown) = h
        .patch(
            &key,
            &format!("{path}/status"),
            &json!({"status": "in progress", "userId": "nobody"}),
        )
        .await;
    assert_eq!(status, 422, "{unknown}");
    assert_eq!(unknown["errors"][0]["field"], "userId");
    let (status, bad) = h
        .patch(
            &key,
            &format!("{path}/status"),
            &json!({"status": "done", "userId": ada}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(bad["errors"][0]["field"], "status");

    let (status, moved) = h
        .patch(
            &key,
            &format!("{path}/status"),
            &status_to("in progress", ada.clone()),
        )
        .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["message"], "Case status updated successfully");
    assert_eq!(moved["data"]["status"], "in progress");
    let last = moved["data"]["log"]
        .as_array()
        .and_then(|l| l.last())
        .cloned()
        .expect("log");
    assert_eq!(last["message"], "Status updated to in progress");
    assert_eq!(last["status"], "in progress");
    assert_eq!(last["user"]["firstName"], "Ada");

    let (status, escalated) = h
        .post(
            &key,
            &format!("{path}/escalate"),
            &json!({"reason": "large cash", "userId": ada}),
        )
        .await;
    assert_eq!(status, 200, "{escalated}");
    assert_eq!(escalated["data"]["isEscalated"], true);
    let (status, _) = h
        .post(&key, &format!("{path}/escalate"), &json!({"userId": ada}))
        .await;
    assert_eq!(status, 409, "escalating twice is refused");

    let (status, assigned) = h
        .post(
            &key,
            &format!("{path}/assign"),
            &json!({"assigneeId": bayo, "userId": ada}),
        )
        .await;
    assert_eq!(status, 200, "{assigned}");
    assert!(log_messages(&assigned["data"]).contains(&"Case assigned to Bayo Ade".to_owned()));

    let (status, bad_tag) = h
        .post(
            &key,
            &format!("{path}/comments"),
            &json!({"text": "see", "userId": bayo, "taggedUsers": ["ghost"]}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(bad_tag["errors"][0]["field"], "taggedUsers[0]");
    let (status, bad_url) = h
        .post(
            &key,
            &format!("{path}/comments"),
            &json!({"text": "see", "userId": bayo, "attachments": ["not a url"]}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(bad_url["errors"][0]["field"], "attachments[0]");

    let (_, with_task) = h
        .post(
            &key,
            &format!("{path}/tasks"),
            &json!({"text": "Request payslips", "userId": bayo}),
        )
        .await;
    let task = with_task["data"]["tasks"][0]["_id"]
        .as_str()
        .expect("task")
        .to_owned();
    let complete = format!("{path}/tasks/{task}/complete");
    let (status, done) = h.post(&key, &complete, &json!({"userId": bayo})).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["tasks"][0]["status"], true);
    let (status, _) = h.post(&key, &complete, &json!({"userId": bayo})).await;
    assert_eq!(status, 409, "completing twice is refused");
    let (status, _) = h
        .post(
            &key,
            &format!("{path}/tasks/nope/complete"),
            &json!({"userId": bayo}),
        )
        .await;
    assert_eq!(status, 404);

    for next in ["resolved", "closed"] {
        let (status, body) = h
            .patch(
                &key,
                &format!("{path}/status"),
                &status_to(next, bayo.clone()),
            )
            .await;
        assert_eq!(status, 200, "{next}: {body}");
        assert_eq!(body["data"]["status"], next);
    }
    let (status, closed) = h
        .post(
            &key,
            &format!("{path}/comments"),
            &json!({"text": "late", "userId": bayo}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(closed["message"], "case is closed; reopen it first");

    // A closed automatic case no longer collects alerts: the next one opens a new case.
    h.instant(&key, &tx("big-2", "u-1", 20_000.0, "2026-03-02T11:00:00Z"))
        .await;
    assert_eq!(h.cases(&key, "?status=open").await.len(), 1);
    // So reopening the old one would make two open cases for the user.
    let (status, conflict) = h
        .patch(
            &key,
            &format!("{path}/status"),
            &status_to("open", ada.clone()),
        )
        .await;
    assert_eq!(status, 409, "{conflict}");
    assert!(conflict["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("another case is open for this user")));

    let (status, trail) = h.get(&key, &format!("/api/v1/audit/case/{id}")).await;
    assert_eq!(status, 200);
    let entries = trail["data"].as_array().expect("entries");
    let actions: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(
        actions,
        [
            "created",
            "status-updated",
            "escalated",
            "assigned",
            "task-added",
            "task-completed",
            "status-updated",
            "status-updated"
        ]
    );
    assert_eq!(
        entries[1]["changes"]["status"],
        json!({"from": "open", "to": "in progress"})
    );
    assert_eq!(entries[1]["actorUser"], ada.as_str());
    // The key's id, never the key itself (the key is a credential).
    assert_eq!(
        entries[1]["actorKey"],
        vigil::store::key_id(&key.0).as_str()
    );
    assert!(!serde_json::to_string(&entries)
        .expect("json")
        .contains(&key.0));
    assert!(entries[5]["changes"].as_object().is_some_and(|c| c
        .keys()
        .any(|k| k.starts_with("tasks.") && k.ends_with(".status"))));
    h.stop().await;
}

async fn manual_cases_are_created_listed_filtered_and_paged(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let ada = h.analyst(&key, "Ada", "Obi").await;
    let (status, missing) = h
        .post(
            &key,
            &format!("{CM}/cases"),
            &json!({"priority": "urgent", "userId": ada}),
        )
        .await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = missing["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(fields, ["title", "priority"]);

    for (i, priority) in ["low", "high", "high", "critical", "high"]
        .iter()
        .enumerate()
    {
        let mut body = json!({"title": format!("Manual {i}"), "description": "tip-off",
            "priority": priority, "userId": ada,
            "record": {"id": format!("CUST-{i}"), "type": "customer", "name": "Ada"}});
        if i == 1 {
            body["assigneeId"] = json!(ada);
        }
        let (status, created) = h.post(&key, &format!("{CM}/cases"), &body).await;
        assert_eq!(status, 201, "{created}");
        assert_eq!(created["message"], "Case created successfully");
        assert_eq!(created["data"]["module"], "case-management");
        assert_eq!(created["data"]["log"][0]["message"], "Case created");
        assert_eq!(created["data"]["log"][0]["user"]["_id"], ada.as_str());
    }

    assert_eq!(h.cases(&key, "?priority=high").await.len(), 3);
    let mine = h.cases(&key, &format!("?assignee={ada}")).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["title"], "Manual 1");
    assert_eq!(h.cases(&key, "?assignee=unassigned").await.len(), 4);
    assert_eq!(
        h.cases(&key, "?module=transaction-monitoring").await.len(),
        0
    );
    assert_eq!(h.cases(&key, "?status=in%20progress").await.len(), 0);
    assert_eq!(h.cases(&key, "?from=2999-01-01").await.len(), 0);
    assert_eq!(
        h.cases(&key, "?to=2999-01-01&from=2000-01-01").await.len(),
        5
    );

    // Pages of two, newest first, until `next` is null.
    let mut titles = Vec::new();
    let mut query = "?limit=2".to_owned();
    loop {
        let (status, page) = h.get(&key, &format!("{CM}/cases{query}")).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["message"], "Cases fetched successfully");
        let data = page["data"].as_array().expect("data");
        assert!(data.len() <= 2);
        titles.extend(
            data.iter()
                .filter_map(|c| c["title"].as_str().map(str::to_owned)),
        );
        match page["next"].as_str() {
            Some(next) => query = format!("?limit=2&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(
        titles,
        ["Manual 4", "Manual 3", "Manual 2", "Manual 1", "Manual 0"]
    );

    for (query, field) in [
        ("?status=done", "status"),
        ("?priority=urgent", "priority"),
        ("?from=yesterday", "from"),
        ("?limit=0", "limit"),
        ("?cursor=zz", "cursor"),
        ("?stauts=open", "stauts"),
    ] {
        let (status, body) = h.get(&key, &format!("{CM}/cases{query}")).await;
        assert_eq!(status, 422, "{query}: {body}");
        assert_eq!(body["errors"][0]["field"], field, "{query}");
    }
    h.stop().await;
}

/// A pack with two detector rules: fan-in of first-time, one-off senders (3 on 3 days) and
/// fan-out to 3 first-time receivers.
fn write_fan_in_pack(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("rules dir");
    std::fs::write(
        dir.join("pack.toml"),
        "[pack]\nname = \"fan-in\"\nversion = \"1\"\n\n[decision]\nreview = 0.5\nreject = 0.9\n",
    )
    .expect("pack");
    std::fs::write(
        dir.join("F-1.rhai"),
        "//! id = \"F-1\"\n//! name = \"Fan-in\"\n//! description = \"Fan-in.\"\n\
         //! severity = \"high\"\n//! score = 0.6\n//! detector = \"fan_in\"\n\
         graph.new_pair && receiver.fan_in_30d >= 3 && receiver.fan_in_days >= 3\n",
    )
    .expect("rule");
    std::fs::write(
        dir.join("F-2.rhai"),
        "//! id = \"F-2\"\n//! name = \"Fan-out\"\n//! description = \"Fan-out.\"\n\
         //! severity = \"high\"\n//! score = 0.6\n//! detector = \"fan_out\"\n\
         graph.new_pair && sender.fan_out_30d >= 3\n",
    )
    .expect("rule");
}

/// A harness on `backend` whose pack holds only the fan-in and fan-out rules of
/// [`write_fan_in_pack`].
async fn fan_in_harness(backend: Backend) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    write_fan_in_pack(&dir.path().join("rules"));
    let config = crate::common::config_for(
        dir.path(),
        &dir.path().join("rules"),
        &dir.path().join("no-fixtures"),
    );
    Harness::start_with_on(backend, dir, config).await
}

fn payment(reference: &str, from: &str, to: &str, date: &str) -> Value {
    let mut body = tx(reference, &format!("u-{from}"), 500.0, date);
    body["transactionData"]["senderAccount"] = json!(from);
    body["transactionData"]["receiverAccount"] = json!(to);
    body
}

/// Detector findings open one case per (account, typology), carrying the evidence; later
/// findings about the same account join it, whoever the paying customer is.
#[tokio::test]
async fn a_typology_finding_opens_one_case_per_account_and_typology_with_its_evidence() {
    let h = fan_in_harness(Backend::Sqlite).await;
    let key = h.key("acme", false).await;
    let mut decisions = Vec::new();
    for (i, day) in ["01", "03", "05", "07"].iter().enumerate() {
        let (status, decision) = h
            .instant(
                &key,
                &payment(
                    &format!("fan-{i}"),
                    &format!("S{i}"),
                    "MULE",
                    &format!("2026-03-{day}T10:00:00Z"),
                ),
            )
            .await;
        assert_eq!(status, 200, "{decision}");
        decisions.push(decision);
    }
    assert_eq!(
        decisions[1]["data"]["action"]["result"], "approved",
        "two senders: no fan"
    );
    let third = &decisions[2]["data"];
    assert_eq!(third["action"]["result"], "review", "{third}");
    let hit = &third["rules"][0];
    assert_eq!(hit["detector"], "fan_in");
    assert_eq!(hit["evidence"]["account"], "MULE");
    let legs: Vec<&str> = hit["evidence"]["legs"]
        .as_array()
        .expect("legs")
        .iter()
        .filter_map(|l| l["reference"].as_str())
        .collect();
    assert_eq!(legs, ["fan-0", "fan-1", "fan-2"]);
    assert_eq!(decisions[3]["data"]["action"]["result"], "review");

    let cases = h.cases(&key, "").await;
    assert_eq!(cases.len(), 1, "one case for (MULE, fan_in): {cases:?}");
    let case = &cases[0];
    assert_eq!(
        case["record"],
        json!({"id": "MULE", "type": "account", "name": "MULE · fan_in"})
    );
    assert_eq!(case["title"], "fan-in on account MULE");
    let log = log_messages(case);
    assert!(
        log.iter().any(|m| m.contains("fan-3")),
        "the fourth payment joined the case: {log:?}"
    );

    // The same account fans out: a second typology is a second case on the account.
    for i in 0..3 {
        let (status, decision) = h
            .instant(
                &key,
                &payment(
                    &format!("out-{i}"),
                    "MULE",
                    &format!("R{i}"),
                    "2026-03-08T10:00:00Z",
                ),
            )
            .await;
        assert_eq!(status, 200, "{decision}");
    }
    let mut records: Vec<String> = h
        .cases(&key, "")
        .await
        .iter()
        .filter_map(|c| c["record"]["name"].as_str().map(str::to_owned))
        .collect();
    records.sort();
    assert_eq!(records, ["MULE · fan_in", "MULE · fan_out"]);
}

/// A payment that adds to a fan-in at its receiver and a fan-out at its sender contributes to
/// both open cases: each logs it as an alert added.
async fn a_payment_with_findings_of_two_typologies_is_an_alert_of_both_cases(backend: Backend) {
    let h = fan_in_harness(backend).await;
    let key = h.key("acme", false).await;
    // HUB is paid by A, B and C (a fan-in case); S pays R0, R1 and R2 (a fan-out case); then S
    // pays HUB: HUB's fourth one-off sender and S's fourth new receiver.
    let payments = [
        ("a-hub", "A", "HUB", "01"),
        ("b-hub", "B", "HUB", "02"),
        ("c-hub", "C", "HUB", "03"),
        ("s-r0", "S", "R0", "04"),
        ("s-r1", "S", "R1", "05"),
        ("s-r2", "S", "R2", "06"),
        ("s-hub", "S", "HUB", "07"),
    ];
    let mut last = Value::Null;
    for (reference, from, to, day) in payments {
        let (status, decision) = h
            .instant(
                &key,
                &payment(reference, from, to, &format!("2026-03-{day}T10:00:00Z")),
            )
            .await;
        assert_eq!(status, 200, "{decision}");
        last = decision;
    }
    let mut detectors: Vec<&str> = last["data"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["detector"].as_str())
        .collect();
    detectors.sort();
    assert_eq!(detectors, ["fan_in", "fan_out"], "{last}");

    let cases = h.cases(&key, "").await;
    let mut names: Vec<&str> = cases
        .iter()
        .filter_map(|c| c["record"]["name"].as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["HUB · fan_in", "S · fan_out"], "{cases:?}");
    for case in &cases {
        let log = log_messages(case);
        assert!(
            log.iter()
                .any(|m| m.starts_with("Alert added: transaction s-hub")),
            "{}: {log:?}",
            case["record"]["name"]
        );
    }
}

/// One network, one case: a finding that names an account of an open case of its typology joins
/// that case instead of opening another; a finding about unrelated accounts opens its own.
async fn a_finding_that_shares_an_account_with_an_open_case_of_its_typology_joins_it(
    backend: Backend,
) {
    let h = fan_in_harness(backend).await;
    let key = h.key("acme", false).await;
    // HUB1 collects from A, B, C; HUB2 from A (again), D, E; HUB3 from F, G, H.
    let fans = [
        ("HUB1", ["A", "B", "C"], ["01", "03", "05"]),
        ("HUB2", ["A", "D", "E"], ["06", "08", "10"]),
        ("HUB3", ["F", "G", "H"], ["11", "13", "15"]),
    ];
    for (hub, senders, days) in fans {
        for (sender, day) in senders.iter().zip(days) {
            let (status, decision) = h
                .instant(
                    &key,
                    &payment(
                        &format!("{hub}-{sender}"),
                        sender,
                        hub,
                        &format!("2026-03-{day}T10:00:00Z"),
                    ),
                )
                .await;
            assert_eq!(status, 200, "{decision}");
        }
    }
    let cases = h.cases(&key, "").await;
    let mut records: Vec<String> = cases
        .iter()
        .filter_map(|c| c["record"]["name"].as_str().map(str::to_owned))
        .collect();
    records.sort();
    assert_eq!(
        records,
        ["HUB1 · fan_in", "HUB3 · fan_in"],
        "HUB2's fan shares A with HUB1's: {cases:?}"
    );
    let first = cases
        .iter()
        .find(|c| c["record"]["id"] == "HUB1")
        .expect("HUB1's case");
    let log = log_messages(first);
    assert!(
        log.iter().any(|m| m.contains("HUB2-E")),
        "HUB2's finding joined HUB1's case: {log:?}"
    );
    let third = cases
        .iter()
        .find(|c| c["record"]["id"] == "HUB3")
        .expect("HUB3's case");
    assert!(
        !log_messages(third).iter().any(|m| m.contains("HUB2")),
        "unrelated fans stay apart"
    );
}

//! One business never reads or changes another's cases, CDD customers, EDD requests, analysts or
//! audit trails — on SQLite and on PostgreSQL.

use crate::common::{tx, Backend, Harness};
use reqwest::Method;
use serde_json::json;

const CM: &str = "/api/v1/case-management";
const EDD: &str = "/api/v1/edd/requests";

on_both_backends!(one_business_never_reads_or_changes_another_businesss_records);

async fn one_business_never_reads_or_changes_another_businesss_records(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let acme = h.key("acme", false).await;
    let globex = h.key("globex", false).await;
    let acme_analyst = h.analyst(&acme, "Ada", "Obi").await;
    let globex_analyst = h.analyst(&globex, "Gil", "Bates").await;

    // Acme's records: an automatic case, a manual case, a customer, an EDD request.
    h.instant(
        &acme,
        &tx("big-1", "shared-user", 20_000.0, "2026-03-02T10:00:00Z"),
    )
    .await;
    let auto_case = h.cases(&acme, "").await[0]["_id"]
        .as_str()
        .expect("case")
        .to_owned();
    let (status, manual) = h
        .post(
            &acme,
            &format!("{CM}/cases"),
            &json!({"title": "Acme only", "userId": acme_analyst}),
        )
        .await;
    assert_eq!(status, 201, "{manual}");
    let manual_case = manual["data"]["_id"].as_str().expect("case").to_owned();
    let (status, _) = h
        .post(
            &acme,
            "/cdd/customers",
            &json!({"uniqueId": "CUST-A", "type": "individual",
            "firstName": "Ada", "lastName": "Obi", "accountNumber": "0011223344"}),
        )
        .await;
    assert_eq!(status, 201);
    let acme_auth = format!("{}:{}", acme.0, acme.1);
    let globex_auth = format!("{}:{}", globex.0, globex.1);
    let (_, edd) = h
        .send_authorized(Some(&acme_auth), Method::POST, EDD, Some(&json!({"firstName": "Ada",
            "lastName": "Obi", "dob": "1985-07-14", "uniqueId": "CUST-A", "pipelineSlug": "standard",
            "accountOfficer": "officer@acme-bank.ng"})))
        .await;
    let request = edd["data"]["requestId"]
        .as_str()
        .expect("request")
        .to_owned();

    // Globex sees none of it.
    assert!(h.cases(&globex, "").await.is_empty());
    for case in [&auto_case, &manual_case] {
        for path in [
            format!("{CM}/case/{case}"),
            format!("/case-management/case/{case}"),
        ] {
            let (status, _) = h.get(&globex, &path).await;
            assert_eq!(status, 404, "{path}");
        }
        let (status, _) = h
            .patch(
                &globex,
                &format!("{CM}/case/{case}/status"),
                &json!({"status": "in progress", "userId": globex_analyst}),
            )
            .await;
        assert_eq!(status, 404);
        for (suffix, body) in [
            ("escalate", json!({"userId": globex_analyst})),
            (
                "assign",
                json!({"assigneeId": globex_analyst, "userId": globex_analyst}),
            ),
            ("comments", json!({"text": "hi", "userId": globex_analyst})),
            ("tasks", json!({"text": "hi", "userId": globex_analyst})),
        ] {
            let (status, body) = h
                .post(&globex, &format!("{CM}/case/{case}/{suffix}"), &body)
                .await;
            assert_eq!(status, 404, "{suffix}: {body}");
        }
        let (status, _) = h.get(&globex, &format!("/api/v1/audit/case/{case}")).await;
        assert_eq!(status, 404);
    }
    for key in ["CUST-A", "0011223344"] {
        let (status, _) = h.get(&globex, &format!("/cdd/customers/{key}")).await;
        assert_eq!(status, 404, "{key}");
        let (status, _) = h
            .patch(
                &globex,
                &format!("/cdd/customers/{key}"),
                &json!({"cddStatus": "approved"}),
            )
            .await;
        assert_eq!(status, 404, "{key}");
        let (status, _) = h
            .get(&globex, &format!("/api/v1/audit/cdd-customer/{key}"))
            .await;
        assert_eq!(status, 404);
    }
    let (status, _) = h
        .send_authorized(
            Some(&globex_auth),
            Method::GET,
            &format!("{EDD}/{request}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = h
        .send_authorized(
            Some(&globex_auth),
            Method::POST,
            &format!("{EDD}/{request}/steps/identity-verification"),
            Some(&json!({"action": "complete"})),
        )
        .await;
    assert_eq!(status, 404);
    let (_, listed) = h
        .send_authorized(Some(&globex_auth), Method::GET, EDD, None)
        .await;
    assert_eq!(listed["data"], json!([]));
    let (status, _) = h
        .get(&globex, &format!("/api/v1/audit/edd-request/{request}"))
        .await;
    assert_eq!(status, 404);
    let (status, _) = h
        .get(&globex, &format!("/api/v1/audit/analyst/{acme_analyst}"))
        .await;
    assert_eq!(status, 404);
    let (_, analysts) = h.get(&globex, &format!("{CM}/analysts")).await;
    assert_eq!(analysts["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(analysts["data"][0]["_id"], globex_analyst.as_str());

    // Acme cannot name Globex's analyst either.
    let (status, body) = h
        .post(
            &acme,
            &format!("{CM}/case/{manual_case}/assign"),
            &json!({"assigneeId": globex_analyst, "userId": acme_analyst}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["field"], "assigneeId");
    // The same user at Globex opens Globex's own case, not Acme's.
    h.instant(
        &globex,
        &tx("big-1", "shared-user", 20_000.0, "2026-03-02T10:00:00Z"),
    )
    .await;
    assert_eq!(h.cases(&globex, "").await.len(), 1);
    let acme_cases = h.cases(&acme, "").await;
    assert_eq!(acme_cases.len(), 2);
    let auto = acme_cases
        .iter()
        .find(|c| c["_id"] == auto_case.as_str())
        .expect("acme's automatic case");
    assert_eq!(
        auto["log"].as_array().map(Vec::len),
        Some(1),
        "untouched by globex"
    );

    // Acme's records are all still as they were.
    let (status, _) = h.get(&acme, "/cdd/customers/CUST-A").await;
    assert_eq!(status, 200);
    let (_, edd) = h
        .send_authorized(
            Some(&acme_auth),
            Method::GET,
            &format!("{EDD}/{request}"),
            None,
        )
        .await;
    assert_eq!(edd["data"]["status"], "pending");
    h.stop().await;
}

//! CDD customers end to end, on SQLite and on PostgreSQL: the spec's create and fetch shapes,
//! validation, uniqueness, risk rating from profile and screening, and re-rating on update.

use crate::common::{Backend, Harness};
use serde_json::{json, Value};

on_both_backends!(
    creating_and_fetching_a_customer_answers_the_spec_shapes,
    unique_ids_are_unique_per_business_and_bad_fields_are_named,
    screening_and_declared_exposure_drive_the_risk_tier,
    updating_a_customer_rates_it_again_and_restarts_changed_verifications,
);

fn individual(unique_id: &str) -> Value {
    json!({
        "uniqueId": unique_id, "type": "individual", "firstName": "Ada", "lastName": "Obi",
        "middleName": "Nkem", "dob": "1988-04-17", "gender": "female", "phone": "+2348030000000",
        "channel": "branch", "address": "1 Marina, Lagos", "bvnNumber": "22212345678",
        "ninNumber": "12345678901", "accountNumber": "0123456789", "accountType": "savings",
        "purposeOfAccount": "salary", "nationality": "NG", "country": "ng",
        "occupation": "teacher", "sourceOfFunds": "salary", "maritalStatus": "single",
        "photo": "https://files.example.com/ada.jpg",
        "politicalAffiliation": false, "politicalPosition": false,
        "politicalAffiliationRelationship": null, "politicalPositionDescription": null
    })
}

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

fn entry<'a>(customer: &'a Value, group: &str, key: &str) -> &'a Value {
    customer["verifications"][group]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["key"] == key))
        .unwrap_or(&Value::Null)
}

async fn creating_and_fetching_a_customer_answers_the_spec_shapes(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let (status, created) = h.post(&key, "/cdd/customers", &individual("CUST-1")).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["message"], "CDD customer created successfully");
    let data = &created["data"];
    assert_eq!(
        keys(data),
        sorted(&[
            "_id",
            "uniqueId",
            "type",
            "firstName",
            "lastName",
            "channel",
            "status",
            "kycLevel",
            "createdAt"
        ])
    );
    assert_eq!(data["status"], "active");
    assert_eq!(
        data["kycLevel"], "tier 2",
        "identity numbers but no proof of address"
    );
    assert_eq!(data["type"], "individual");

    let (status, fetched) = h.get(&key, "/cdd/customers/CUST-1").await;
    assert_eq!(status, 200, "{fetched}");
    assert_eq!(fetched["message"], "Cdd customer fetched successfully");
    let view = &fetched["data"];
    for field in ["customer", "verifications", "runningCdd", "analysis"] {
        assert!(view.get(field).is_some(), "{field} missing");
    }
    let customer = &view["customer"];
    for field in [
        "_id",
        "name",
        "uniqueId",
        "type",
        "status",
        "channel",
        "cddStatus",
        "riskTier",
        "overallRiskRating",
        "cddVerificationStatus",
        "createdAt",
    ] {
        assert!(customer.get(field).is_some(), "customer.{field} missing");
    }
    assert_eq!(customer["_id"], data["_id"]);
    assert_eq!(customer["name"], "Ada Nkem Obi");
    assert_eq!(customer["cddStatus"], "pending review");
    // The BVN and NIN are those of the sample registry's Ada Obi, born the same day: the checks
    // run on the identity lookups at creation.
    assert_eq!(customer["cddVerificationStatus"], "Verified");
    let rating = &customer["overallRiskRating"];
    assert_eq!(keys(rating), sorted(&["riskLevel", "riskScore", "user"]));
    let score = rating["riskScore"].as_f64().expect("riskScore is a number");
    assert!((0.0..=100.0).contains(&score));
    assert_eq!(rating["riskLevel"], "low", "{}", view["analysis"]);
    assert_eq!(customer["riskTier"], "low");
    assert_eq!(keys(&rating["user"]), sorted(&["firstName", "lastName"]));
    assert_eq!(keys(&view["verifications"]), sorted(&["id", "others"]));
    for id in ["bvn", "nin"] {
        let e = entry(view, "id", id);
        assert_eq!(
            keys(e),
            sorted(&["key", "name", "status", "requestId", "lastRunAt", "reason"])
        );
        assert_eq!(e["status"], "Verified", "{e}");
        assert!(e["lastRunAt"].is_string(), "{e}");
    }
    assert_eq!(
        entry(view, "others", "sanction-screening")["status"],
        "Clear"
    );
    assert_eq!(entry(view, "others", "pep-screening")["status"], "Clear");
    assert_eq!(view["runningCdd"], Value::Null);
    let analysis = view["analysis"].as_str().expect("analysis");
    assert!(analysis.starts_with("Risk score"), "{analysis}");
    assert!(
        analysis.contains("Sanctions screening: clear"),
        "{analysis}"
    );

    // By account number too.
    let (status, by_account) = h.get(&key, "/cdd/customers/0123456789").await;
    assert_eq!(status, 200);
    assert_eq!(by_account["data"]["customer"]["uniqueId"], "CUST-1");
    let (status, missing) = h.get(&key, "/cdd/customers/NOPE").await;
    assert_eq!(status, 404, "{missing}");

    // Corporate.
    let (status, corporate) = h
        .post(
            &key,
            "/cdd/customers",
            &json!({"uniqueId": "CORP-1", "type": "corporate",
            "businessName": "Lagos Bakeries Ltd", "country": "Nigeria", "industry": "food"}),
        )
        .await;
    assert_eq!(status, 201, "{corporate}");
    let (_, fetched) = h.get(&key, "/cdd/customers/CORP-1").await;
    assert_eq!(fetched["data"]["customer"]["name"], "Lagos Bakeries Ltd");
    assert_eq!(
        fetched["data"]["customer"]["cddVerificationStatus"],
        "Not Started"
    );
    h.stop().await;
}

async fn unique_ids_are_unique_per_business_and_bad_fields_are_named(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let acme = h.key("acme", false).await;
    let globex = h.key("globex", false).await;
    let (status, _) = h.post(&acme, "/cdd/customers", &individual("CUST-1")).await;
    assert_eq!(status, 201);
    let (status, duplicate) = h.post(&acme, "/cdd/customers", &individual("CUST-1")).await;
    assert_eq!(status, 409, "{duplicate}");
    assert_eq!(duplicate["errors"][0]["field"], "uniqueId");
    let (status, _) = h
        .post(&globex, "/cdd/customers", &individual("CUST-1"))
        .await;
    assert_eq!(status, 201, "another business may use the same uniqueId");

    let cases: Vec<(Value, &str)> = vec![
        (json!({"type": "individual"}), "uniqueId"),
        (json!({"uniqueId": "X"}), "type"),
        (json!({"uniqueId": "X", "type": "trust"}), "type"),
        (
            json!({"uniqueId": "X", "type": "corporate"}),
            "businessName",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "dob": "17/04/1988"}),
            "dob",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "dob": "2999-01-01"}),
            "dob",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "photo": "ada.jpg"}),
            "photo",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "proofOfAddress": "ftp://x.example.com/a"}),
            "proofOfAddress",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "bvnNumber": "123"}),
            "bvnNumber",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "politicalPosition": "yes"}),
            "politicalPosition",
        ),
        (
            json!({"uniqueId": "X", "type": "individual", "country": "Narnia"}),
            "country",
        ),
        (json!({"uniqueId": 42, "type": "individual"}), "uniqueId"),
    ];
    for (body, field) in cases {
        let (status, error) = h.post(&acme, "/cdd/customers", &body).await;
        assert_eq!(status, 422, "{body}: {error}");
        assert_eq!(error["errors"][0]["field"], field, "{body}: {error}");
    }
    let (status, _) = h.get(&acme, "/cdd/customers/X").await;
    assert_eq!(status, 404, "nothing invalid was stored");
    h.stop().await;
}

async fn screening_and_declared_exposure_drive_the_risk_tier(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    // The test PEP list holds Amina Bello Yusuf; the sanctions list Golden Crescent Trading LLC.
    let mut pep = individual("PEP-1");
    pep["firstName"] = json!("Amina");
    pep["middleName"] = json!("Bello");
    pep["lastName"] = json!("Yusuf");
    pep["dob"] = json!("1970-05-05");
    let (status, body) = h.post(&key, "/cdd/customers", &pep).await;
    assert_eq!(status, 201, "{body}");
    let (_, fetched) = h.get(&key, "/cdd/customers/PEP-1").await;
    let view = &fetched["data"];
    assert_eq!(
        entry(view, "others", "pep-screening")["status"],
        "Match",
        "{view}"
    );
    assert_eq!(view["customer"]["riskTier"], "high", "{}", view["analysis"]);
    let analysis = view["analysis"].as_str().expect("analysis");
    assert!(
        analysis.contains("PEP screening found a match"),
        "{analysis}"
    );
    assert!(analysis.contains("Amina Bello Yusuf"), "{analysis}");

    let (status, body) = h
        .post(
            &key,
            "/cdd/customers",
            &json!({"uniqueId": "CORP-S", "type": "corporate",
            "businessName": "Golden Crescent Trading LLC", "country": "ae"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (_, fetched) = h.get(&key, "/cdd/customers/CORP-S").await;
    let view = &fetched["data"];
    assert_eq!(
        entry(view, "others", "sanction-screening")["status"],
        "Match"
    );
    assert_eq!(view["customer"]["riskTier"], "high");
    assert_eq!(
        view["screening"]["sanction"]["best"]["list"],
        "test-sanctions"
    );

    let mut declared = individual("POL-1");
    declared["politicalPosition"] = json!(true);
    declared["politicalPositionDescription"] = json!("local government chairman");
    h.post(&key, "/cdd/customers", &declared).await;
    let (_, fetched) = h.get(&key, "/cdd/customers/POL-1").await;
    let view = &fetched["data"];
    assert_eq!(view["customer"]["riskTier"], "high");
    assert!(view["analysis"]
        .as_str()
        .is_some_and(|a| a.contains("declares a political position")));
    let factors = view["riskFactors"].as_array().expect("riskFactors");
    let exposure = factors
        .iter()
        .find(|f| f["factor"] == "political_exposure")
        .expect("exposure factor");
    assert_eq!(exposure["value"], "position");

    let (_, plain) = h.get(&key, "/cdd/customers/CUST-X").await;
    assert_eq!(plain["data"], Value::Null, "never created");
    h.stop().await;
}

async fn updating_a_customer_rates_it_again_and_restarts_changed_verifications(backend: Backend) {
    let mut h = Harness::start_on(backend).await;
    let key = h.key("acme", false).await;
    let ada = h.analyst(&key, "Ada", "Obi").await;
    h.post(&key, "/cdd/customers", &individual("CUST-1")).await;
    let (_, before) = h.get(&key, "/cdd/customers/CUST-1").await;
    let before = &before["data"];
    let old_bvn = entry(before, "id", "bvn")["requestId"].clone();
    let old_nin = entry(before, "id", "nin")["requestId"].clone();

    let (status, updated) = h
        .patch(
            &key,
            "/cdd/customers/CUST-1",
            &json!({"occupation": "bureau de change operator",
            "nationality": "IR", "country": "Iran", "purposeOfAccount": "international remittance",
            "sourceOfFunds": "cash", "bvnNumber": "22299999999", "userId": ada}),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["message"], "Cdd customer updated successfully");
    let after = &updated["data"];
    let old_score = before["customer"]["overallRiskRating"]["riskScore"]
        .as_f64()
        .expect("score");
    let new_score = after["customer"]["overallRiskRating"]["riskScore"]
        .as_f64()
        .expect("score");
    assert!(new_score > old_score + 10.0, "{old_score} -> {new_score}");
    assert_ne!(after["customer"]["riskTier"], "low");
    assert_eq!(after["customer"]["cddStatus"], "pending review");
    assert!(after["analysis"]
        .as_str()
        .is_some_and(|a| a.contains("bureau de change")));
    let bvn = entry(after, "id", "bvn");
    assert_eq!(
        bvn["status"], "Failed",
        "a changed number is checked again at once (this one is in no registry)"
    );
    assert_eq!(bvn["reason"], "BVN not found in the registry");
    assert_ne!(bvn["requestId"], old_bvn, "a changed number starts over");
    assert_eq!(
        entry(after, "id", "nin")["requestId"],
        old_nin,
        "an unchanged one keeps its request"
    );

    let (status, approved) = h
        .patch(
            &key,
            "/cdd/customers/CUST-1",
            &json!({"cddStatus": "approved", "ninNumber": null}),
        )
        .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["data"]["customer"]["cddStatus"], "approved");
    assert_eq!(entry(&approved["data"], "id", "nin")["status"], "Withdrawn");

    for (body, field) in [
        (json!({"type": "corporate"}), "type"),
        (json!({"uniqueId": "CUST-2"}), "uniqueId"),
        (json!({"occupaton": "typo"}), "occupaton"),
        (json!({"cddStatus": "done"}), "cddStatus"),
        (json!({"dob": "tomorrow"}), "dob"),
        (json!({"userId": "ghost"}), "userId"),
    ] {
        let (status, error) = h.patch(&key, "/cdd/customers/CUST-1", &body).await;
        assert_eq!(status, 422, "{body}: {error}");
        assert_eq!(error["errors"][0]["field"], field, "{body}: {error}");
    }
    let (status, _) = h.patch(&key, "/cdd/customers/NOPE", &json!({})).await;
    assert_eq!(status, 404);

    let (status, trail) = h.get(&key, "/api/v1/audit/cdd-customer/CUST-1").await;
    assert_eq!(status, 200, "{trail}");
    let entries = trail["data"].as_array().expect("entries");
    // created, verified (BVN and NIN), updated, verified (the changed BVN), updated.
    let actions: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(
        actions,
        ["created", "verified", "updated", "verified", "updated"],
        "{trail}"
    );
    assert_eq!(entries[2]["actorUser"], ada.as_str());
    assert_eq!(
        entries[2]["changes"]["profile.occupation"],
        json!({"from": "teacher", "to": "bureau de change operator"})
    );
    assert_eq!(
        entries[3]["changes"]["verifications.bvn.status"],
        json!({"from": "Awaiting Confirmation", "to": "Failed"})
    );
    assert_eq!(
        entries[4]["changes"]["cddStatus"],
        json!({"from": "pending review", "to": "approved"})
    );
    h.stop().await;
}

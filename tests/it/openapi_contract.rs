//! The OpenAPI document and the service agree on what a valid request is: every request in the
//! refused table gets a 4xx naming the field from the service *and* fails the document's schema
//! for it (the request body's schema, or the operation's query and path parameters, checked with
//! a JSON Schema 2020-12 validator); every request in the accepted table passes both. A client
//! generated from `/openapi.json` then neither sends what Vigil refuses nor refuses to send what
//! Vigil takes. The refused cases are what schemathesis (`scripts/fuzz-api.sh 300 all`) reported
//! as "schema-valid request rejected".

use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::common::Harness;

/// The schema validator for `schema`, resolving `$ref`s into the document's components.
fn validator(schema: &Value, document: &Value) -> jsonschema::Validator {
    let root = json!({"allOf": [schema], "components": document["components"]});
    jsonschema::draft202012::new(&root).expect("the document's schemas compile")
}

/// The operation `method template` of the document.
fn operation<'a>(document: &'a Value, method: &Method, template: &str) -> &'a Value {
    let operation = &document["paths"][template][method.as_str().to_lowercase()];
    assert!(
        operation.is_object(),
        "{method} {template} is not documented"
    );
    operation
}

/// Whether the document's parameters of `operation` accept `values` (every query parameter; a
/// path parameter only when the case names it).
fn parameters_accept(operation: &Value, document: &Value, values: &[(String, String)]) -> bool {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let name = parameter["name"].as_str().expect("parameter name");
        properties.insert(name.to_owned(), parameter["schema"].clone());
        if parameter["required"] == true && parameter["in"] == "query" {
            required.push(Value::from(name));
        }
    }
    let schema = json!({"type": "object", "properties": properties, "required": required});
    // Typed as the parameter's schema types it: an integer parameter is checked as a number.
    let instance: Map<String, Value> = values
        .iter()
        .map(|(name, value)| {
            let kind = &properties.get(name).map(|s| s["type"].clone());
            let typed = match kind {
                Some(Value::String(t)) if t == "integer" || t == "number" => value
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::from(value.as_str())),
                _ => Value::from(value.as_str()),
            };
            (name.clone(), typed)
        })
        .collect();
    validator(&schema, document).is_valid(&Value::Object(instance))
}

fn body_accepted(operation: &Value, document: &Value, body: &Value) -> bool {
    let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "no JSON request body documented");
    validator(schema, document).is_valid(body)
}

/// One request: method, concrete path (with its query), the documented path template, path
/// parameters by name, and the JSON body if any.
struct Request {
    method: Method,
    path: String,
    template: &'static str,
    path_params: Vec<(&'static str, String)>,
    body: Option<Value>,
}

fn request(method: Method, path: impl Into<String>, template: &'static str) -> Request {
    Request {
        method,
        path: path.into(),
        template,
        path_params: Vec::new(),
        body: None,
    }
}

impl Request {
    fn body(mut self, body: Value) -> Request {
        self.body = Some(body);
        self
    }

    fn path_param(mut self, name: &'static str, value: &str) -> Request {
        self.path_params.push((name, value.to_owned()));
        self
    }

    /// Whether the document accepts this request (parameters and body).
    fn documented_as_valid(&self, document: &Value) -> bool {
        let operation = operation(document, &self.method, self.template);
        let mut values: Vec<(String, String)> = self
            .path_params
            .iter()
            .map(|(name, value)| (name.to_string(), value.clone()))
            .collect();
        if let Some((_, query)) = self.path.split_once('?') {
            values.extend(
                url::form_urlencoded::parse(query.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned())),
            );
        }
        let parameters = parameters_accept(operation, document, &values);
        let body = self
            .body
            .as_ref()
            .is_none_or(|body| body_accepted(operation, document, body));
        parameters && body
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_refuses_what_validation_refuses_and_accepts_what_it_accepts() {
    let mut h = Harness::start().await;
    let key = h.key("acme", true).await;
    let document: Value = h
        .client
        .get(h.url("/openapi.json"))
        .send()
        .await
        .expect("openapi")
        .json()
        .await
        .expect("json");
    let analyst = h.analyst(&key, "Ada", "Obi").await;
    let (status, case) = h
        .post(
            &key,
            "/api/v1/case-management/cases",
            &json!({"title": "Manual review", "userId": analyst}),
        )
        .await;
    assert_eq!(status, 201, "{case}");
    let case_id = case["data"]["_id"].as_str().expect("case id").to_owned();
    let case_path = |tail: &str| format!("/api/v1/case-management/case/{case_id}{tail}");

    let accepted = vec![
        request(Method::POST, "/api/v1/case-management/analysts", "/api/v1/case-management/analysts")
            .body(json!({"firstName": "Chidi", "lastName": "Eze", "email": ""})),
        request(Method::POST, case_path("/comments"), "/api/v1/case-management/case/{id}/comments")
            .body(json!({"text": "Looked at it", "userId": analyst, "taggedUsers": [], "attachments": []})),
        request(Method::PATCH, case_path("/status"), "/api/v1/case-management/case/{id}/status")
            .body(json!({"status": "in progress", "userId": analyst})),
        request(Method::GET, "/api/v1/case-management/cases?status=&priority=high&limit=100", "/api/v1/case-management/cases"),
        request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85, "country": "", "birthDate": "1985", "pageNumber": 1, "pageSize": 100})),
        request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85, "pageNumber": 2_147_483_648_u64})),
        // JSON Schema's integer is any number without a fraction: 2.0 is one.
        request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85.0, "pageNumber": 2.0, "pageSize": 10.0})),
        request(Method::POST, "/api/v1/adverse-media", "/api/v1/adverse-media")
            .body(json!({"q": "Ada Obi", "limit": 10})),
        request(Method::POST, "/api/v1/edd/requests", "/api/v1/edd/requests").body(json!({
            "firstName": "Ada", "lastName": "Obi", "dob": "1985-07-14", "uniqueId": "CUST-1",
            "pipelineSlug": "standard", "accountOfficer": "officer@acme-bank.ng"})),
        request(Method::GET, "/api/v1/edd/requests?status=pending&limit=1", "/api/v1/edd/requests"),
        request(Method::POST, "/cdd/customers", "/cdd/customers")
            .body(json!({"uniqueId": "CUST-9", "type": "Individual", "firstName": "Ada", "lastName": "Obi"})),
        request(Method::GET, "/api/v1/kyc/lookups?kind=NIN&limit=500", "/api/v1/kyc/lookups"),
        request(Method::GET, "/api/v1/webhooks/deliveries?status=&event=sanction&limit=1", "/api/v1/webhooks/deliveries"),
        request(Method::GET, "/api/v1/aml/risk-monitoring?status=active&limit=100", "/api/v1/aml/risk-monitoring"),
        request(Method::GET, format!("/api/v1/audit/case/{case_id}"), "/api/v1/audit/{entityType}/{entityId}")
            .path_param("entityType", "case")
            .path_param("entityId", &case_id),
        request(Method::POST, "/api/v1/transaction-monitoring/blacklist-device", "/api/v1/transaction-monitoring/blacklist-device")
            .body(json!({"deviceId": " device-1 "})),
        // 256 characters of two bytes each: the limit counts characters, not bytes.
        request(Method::POST, "/api/v1/transaction-monitoring/blacklist-user", "/api/v1/transaction-monitoring/blacklist-user")
            .body(json!({"userId": "é".repeat(256)})),
        request(Method::POST, "/api/v1/transaction-monitoring/customers/device", "/api/v1/transaction-monitoring/customers/device")
            .body(json!({"customerId": "ü".repeat(256), "device": {"deviceId": "ß".repeat(256)}})),
        // Company types and registration numbers in any case, with separators.
        request(Method::POST, "/kyc/cac", "/kyc/cac")
            .body(json!({"rcNumber": "rc-1234567", "companyName": "Zenith Harvest Foods Ltd", "companyType": " rc "})),
    ];
    let refused = vec![
        (request(Method::GET, "/api/v1/aml/risk-monitoring?limit=0", "/api/v1/aml/risk-monitoring"), "limit"),
        (request(Method::GET, "/api/v1/aml/risk-monitoring?status=paused", "/api/v1/aml/risk-monitoring"), "status"),
        (request(Method::GET, "/api/v1/audit/0/x", "/api/v1/audit/{entityType}/{entityId}")
            .path_param("entityType", "0").path_param("entityId", "x"), "entityType"),
        (request(Method::GET, "/api/v1/case-management/cases?priority=urgent", "/api/v1/case-management/cases"), "priority"),
        (request(Method::GET, "/api/v1/case-management/cases?limit=101", "/api/v1/case-management/cases"), "limit"),
        (request(Method::GET, "/api/v1/edd/requests?limit=0", "/api/v1/edd/requests"), "limit"),
        (request(Method::GET, "/api/v1/kyc/lookups?limit=-9223372036854775808", "/api/v1/kyc/lookups"), "limit"),
        (request(Method::GET, "/api/v1/kyc/lookups?kind=passport", "/api/v1/kyc/lookups"), "kind"),
        (request(Method::GET, "/api/v1/webhooks/deliveries?limit=0", "/api/v1/webhooks/deliveries"), "limit"),
        (request(Method::GET, "/api/v1/webhooks/deliveries?event=payment", "/api/v1/webhooks/deliveries"), "event"),
        (request(Method::PATCH, format!("/api/v1/case-management/analysts/{analyst}"), "/api/v1/case-management/analysts/{id}")
            .body(json!({"active": null})), "active"),
        (request(Method::PATCH, case_path("/status"), "/api/v1/case-management/case/{id}/status")
            .body(json!({"status": "in progress", "userId": null})), "userId"),
        (request(Method::PATCH, case_path("/status"), "/api/v1/case-management/case/{id}/status")
            .body(json!({"status": "done", "userId": analyst})), "status"),
        (request(Method::POST, "/api/v1/adverse-media", "/api/v1/adverse-media")
            .body(json!({"q": "Ada Obi", "limit": 0})), "limit"),
        (request(Method::POST, "/api/v1/adverse-media", "/api/v1/adverse-media")
            .body(json!({"q": null, "limit": 5})), "q"),
        (request(Method::POST, "/api/v1/aml/pep/instant", "/api/v1/aml/pep/instant")
            .body(json!({"name": "", "threshold": 85})), "name"),
        (request(Method::POST, "/api/v1/aml/sanction", "/api/v1/aml/sanction")
            .body(json!({"name": "Ada Obi", "threshold": null})), "threshold"),
        (request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85, "pageNumber": 0})), "pageNumber"),
        (request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85, "pageNumber": 4_294_967_296_u64})), "pageNumber"),
        (request(Method::POST, "/api/v1/aml/sanction/instant", "/api/v1/aml/sanction/instant")
            .body(json!({"name": "Ada Obi", "threshold": 85, "pageSize": 101})), "pageSize"),
        (request(Method::POST, "/api/v1/aml/risk-monitoring", "/api/v1/aml/risk-monitoring")
            .body(json!({"name": "Ada Obi", "threshold": 85, "limit": 10, "callbackUrl": ""})), "callbackUrl"),
        (request(Method::POST, "/api/v1/case-management/analysts", "/api/v1/case-management/analysts")
            .body(json!({"firstName": "Ada", "lastName": null})), "lastName"),
        (request(Method::POST, case_path("/assign"), "/api/v1/case-management/case/{id}/assign")
            .body(json!({"assigneeId": "", "userId": analyst})), "assigneeId"),
        (request(Method::POST, case_path("/comments"), "/api/v1/case-management/case/{id}/comments")
            .body(json!({"text": "  ", "userId": analyst})), "text"),
        (request(Method::POST, case_path("/escalate"), "/api/v1/case-management/case/{id}/escalate")
            .body(json!({"reason": ""})), "userId"),
        (request(Method::POST, case_path("/tasks"), "/api/v1/case-management/case/{id}/tasks")
            .body(json!({"text": "", "userId": analyst})), "text"),
        (request(Method::POST, "/api/v1/case-management/cases", "/api/v1/case-management/cases")
            .body(json!({"title": "", "userId": analyst})), "title"),
        (request(Method::POST, "/api/v1/edd/requests", "/api/v1/edd/requests")
            .body(json!({"uniqueId": "CUST-42"})), "firstName"),
        (request(Method::POST, "/api/v1/reporting/reports", "/api/v1/reporting/reports")
            .body(json!({"from": "2026-03-01", "reportType": null})), "reportType"),
        (request(Method::POST, "/api/v1/transaction-monitoring/blacklist-account", "/api/v1/transaction-monitoring/blacklist-account")
            .body(json!({"accountNumber": "\n"})), "accountNumber"),
        (request(Method::POST, "/api/v1/transaction-monitoring/customers/device", "/api/v1/transaction-monitoring/customers/device")
            .body(json!({"customerId": "user-1", "device": {"deviceId": "\t"}})), "device.deviceId"),
        (request(Method::POST, "/cdd/customers", "/cdd/customers")
            .body(json!({"uniqueId": null, "type": "individual"})), "uniqueId"),
        (request(Method::POST, "/kyc/cac", "/kyc/cac")
            .body(json!({"rcNumber": " ", "companyName": "Zenith Harvest Foods Limited", "companyType": "RC"})), "rcNumber"),
        (request(Method::PUT, "/api/v1/webhooks", "/api/v1/webhooks")
            .body(json!({"url": null, "secret": "0123456789abcdef"})), "url"),
        (request(Method::PUT, "/api/v1/webhooks", "/api/v1/webhooks")
            .body(json!({"url": "https://hooks.example.com/vigil", "secret": "short"})), "secret"),
        (request(Method::POST, "/kyc/cac", "/kyc/cac")
            .body(json!({"rcNumber": "RC1234567", "companyName": "Zenith Harvest Foods Ltd", "companyType": "LLC"})), "companyType"),
        (request(Method::POST, "/kyc/cac", "/kyc/cac")
            .body(json!({"rcNumber": "RC12345X", "companyName": "Zenith Harvest Foods Ltd", "companyType": "RC"})), "rcNumber"),
        (request(Method::POST, "/api/v1/reporting/reports", "/api/v1/reporting/reports")
            .body(json!({"reportType": "XYZ"})), "reportType"),
        // Blank to both the service and the document: U+FEFF (ECMAScript's whitespace) and U+0085
        // (Rust's).
        (request(Method::POST, "/api/v1/transaction-monitoring/blacklist-user", "/api/v1/transaction-monitoring/blacklist-user")
            .body(json!({"userId": "\u{feff}"})), "userId"),
        (request(Method::POST, "/api/v1/case-management/analysts", "/api/v1/case-management/analysts")
            .body(json!({"firstName": "\u{85}", "lastName": "Obi"})), "firstName"),
        // maxLength counts the text as sent, padding included.
        (request(Method::POST, "/api/v1/case-management/cases", "/api/v1/case-management/cases")
            .body(json!({"title": format!("Review{}", " ".repeat(195)), "userId": analyst})), "title"),
        (request(Method::POST, "/api/v1/transaction-monitoring/blacklist-user", "/api/v1/transaction-monitoring/blacklist-user")
            .body(json!({"userId": "é".repeat(257)})), "userId"),
    ];

    for request in &accepted {
        let (status, answer) = h
            .send(
                &key,
                request.method.clone(),
                &request.path,
                request.body.as_ref(),
            )
            .await;
        assert!(
            (200..300).contains(&status),
            "{} {}: {status} {answer}",
            request.method,
            request.path
        );
        assert!(
            request.documented_as_valid(&document),
            "{} {} is accepted but the document refuses it: {:?}",
            request.method,
            request.path,
            request.body
        );
    }
    // A page far past the results is empty (its start once overflowed u32 and wrapped).
    let (status, far) = h
        .post(
            &key,
            "/api/v1/aml/sanction/instant",
            &json!({"name": "Ivan Sidorov", "threshold": 0, "pageNumber": 2_147_483_649_u64, "pageSize": 2}),
        )
        .await;
    assert_eq!(status, 200, "{far}");
    assert_eq!(far["data"], json!([]), "{far}");
    for (request, field) in &refused {
        let (status, answer) = h
            .send(
                &key,
                request.method.clone(),
                &request.path,
                request.body.as_ref(),
            )
            .await;
        assert!(
            (400..500).contains(&status),
            "{} {}: {status} {answer}",
            request.method,
            request.path
        );
        let named = answer["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|error| error["field"] == *field);
        assert!(
            named,
            "{} {}: {answer} does not name {field}",
            request.method, request.path
        );
        assert!(
            !request.documented_as_valid(&document),
            "{} {} is refused ({field}) but the document accepts it: {:?}",
            request.method,
            request.path,
            request.body
        );
    }
    h.stop().await;
}

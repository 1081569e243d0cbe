//! Screening over HTTP against a real server with the harness's small lists: the instant
//! sanction and PEP endpoints, screening inside transactions, list status, and list refreshes
//! (a broken file keeps the old index serving; a good one replaces it and drops cached results).

use crate::common::{tx, Harness, TEST_SANCTIONS_CSV};
use serde_json::{json, Value};

async fn sanction(h: &Harness, key: &(String, String), body: Value) -> (u16, Value) {
    h.post(key, "/api/v1/aml/sanction/instant", &body).await
}

fn ids(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .map(|records| {
            records
                .iter()
                .filter_map(|r| r["_id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instant_sanction_screening_finds_reordered_and_other_script_names_with_the_spec_record() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;

    let (status, body) =
        sanction(&h, &key, json!({"name": "SIDOROV, Ivan", "threshold": 85})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "Sanction screening completed");
    assert_eq!(body["count"], 1);
    assert_eq!(body["pageNumber"], 1);
    let record = &body["data"][0];
    assert_eq!(record["_id"], "test-sanctions:S1");
    assert_eq!(record["type"], "sanction");
    assert_eq!(record["externalId"], "S1");
    assert_eq!(record["entityType"], "individual");
    assert_eq!(record["name"], "Ivan Petrovich Sidorov");
    assert_eq!(record["countries"], json!(["ru"]));
    assert_eq!(record["birth_date"], "1961-04-02");
    assert_eq!(record["isDeleted"], false);
    assert_eq!(record["__v"], 0);
    assert!(record["aliases"].as_array().is_some_and(|a| a.len() == 2));
    assert!(record["dataset"][0]["name"].is_string());
    for field in [
        "addresses",
        "sanctions",
        "politicalParty",
        "tags",
        "positions",
        "education",
    ] {
        assert!(record[field].is_array(), "{field} is an array: {record}");
    }
    let score = record["searchScore"].as_f64().expect("searchScore");
    assert!((85.0..=100.0).contains(&score), "{score}");
    let confidence = record["confidenceScore"].as_f64().expect("confidenceScore");
    assert!((0.0..=1.0).contains(&confidence));

    // The Cyrillic spelling finds the same entity.
    let (status, body) = sanction(
        &h,
        &key,
        json!({"name": "Иван Петрович Сидоров", "threshold": 80}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body), ["test-sanctions:S1"]);

    // A different person sharing the first name does not.
    let (_, body) = sanction(&h, &key, json!({"name": "Ivan Petrenko", "threshold": 80})).await;
    assert_eq!(body["count"], 0, "{body}");
    assert_eq!(body["data"], json!([]));

    // Company forms are canonical: "L.L.C." and "Limited Liability Company" are the same form.
    let (_, body) = sanction(
        &h,
        &key,
        json!({"name": "Golden Crescent Trading Limited Liability Company", "threshold": 85}),
    )
    .await;
    assert_eq!(ids(&body), ["test-sanctions:S2"]);

    // PEPs are not sanctions and the other way round.
    let (_, body) = sanction(
        &h,
        &key,
        json!({"name": "Amina Bello Yusuf", "threshold": 80}),
    )
    .await;
    assert_eq!(body["count"], 0, "{body}");
    let (status, body) = h
        .post(
            &key,
            "/api/v1/aml/pep/instant",
            &json!({"name": "Amina Yusuf", "threshold": 75}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "PEP screening completed");
    assert_eq!(ids(&body), ["test-peps:P1"]);
    assert_eq!(body["data"][0]["type"], "pep");
    assert!(body["data"][0].get("isDeleted").is_none());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn country_filters_and_boosts_birth_dates_adjust_and_bad_input_names_the_field() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let name = "Ivan Sidorov";
    let (_, body) = sanction(
        &h,
        &key,
        json!({"name": name, "threshold": 70, "country": "ru"}),
    )
    .await;
    assert_eq!(ids(&body), ["test-sanctions:S1"]);
    let (_, body) = sanction(
        &h,
        &key,
        json!({"name": name, "threshold": 70, "country": "ng"}),
    )
    .await;
    assert_eq!(
        body["count"], 0,
        "an entity tied only to ru is left out for ng: {body}"
    );

    // An initial leaves room below 100 for the birth year to move the score either way.
    let partial = "I. Sidorov";
    let (_, plain) = sanction(&h, &key, json!({"name": partial, "threshold": 0})).await;
    let (_, born) = sanction(
        &h,
        &key,
        json!({"name": partial, "threshold": 0, "birthDate": "1961"}),
    )
    .await;
    let (_, other) = sanction(
        &h,
        &key,
        json!({"name": partial, "threshold": 0, "birthDate": "1990-01-01"}),
    )
    .await;
    let score = |b: &Value| b["data"][0]["searchScore"].as_f64().unwrap_or(-1.0);
    assert!(score(&born) > score(&plain), "{born} vs {plain}");
    assert!(score(&other) < score(&plain), "{other} vs {plain}");
    // A listed country equal to the caller's corroborates the match.
    let (_, located) = sanction(
        &h,
        &key,
        json!({"name": partial, "threshold": 0, "country": "ru"}),
    )
    .await;
    assert!(score(&located) > score(&plain), "{located} vs {plain}");

    for (body, field) in [
        (json!({"name": "", "threshold": 80}), "name"),
        (json!({"name": "   ", "threshold": 80}), "name"),
        (json!({"threshold": 80}), "name"),
        (json!({"name": "Ivan"}), "threshold"),
        (json!({"name": "Ivan", "threshold": 101}), "threshold"),
        (json!({"name": "Ivan", "threshold": -1}), "threshold"),
        (
            json!({"name": "Ivan", "threshold": 80, "country": "xx"}),
            "country",
        ),
        (
            json!({"name": "Ivan", "threshold": 80, "country": "Nigeria"}),
            "country",
        ),
        (
            json!({"name": "Ivan", "threshold": 80, "birthDate": "May 1961"}),
            "birthDate",
        ),
        (
            json!({"name": "Ivan", "threshold": 80, "pageSize": 0}),
            "pageSize",
        ),
    ] {
        let (status, answer) = sanction(&h, &key, body.clone()).await;
        assert_eq!(status, 422, "{body} → {answer}");
        assert_eq!(answer["errors"][0]["field"], field, "{body} → {answer}");
    }
    let (status, answer) = sanction(&h, &key, json!({"name": "Ivan", "threshold": "high"})).await;
    assert!((400..500).contains(&status), "{answer}");
    assert!(
        answer["errors"][0]["field"]
            .as_str()
            .is_some_and(|f| f.contains("threshold")),
        "{answer}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_screen_both_parties_and_rules_act_on_the_result() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;

    let mut payment = tx("s-1", "u-1", 100.0, "2026-03-02T10:00:00Z");
    payment["screeningData"] =
        json!({"senderName": "Ada Obi", "receiverName": "Sidorov Ivan Petrovich"});
    let (status, body) = h.instant(&key, &payment).await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["screening"]["receiver"]["sanction"], "match", "{body}");
    assert_eq!(data["screening"]["sender"]["sanction"], "clear");
    assert_eq!(data["action"]["result"], "rejected");
    assert_eq!(data["reason"]["rule"]["id"], "T-SANCTION");
    let found = &data["screeningMatches"][0];
    assert_eq!(found["party"], "receiver");
    assert_eq!(found["entityId"], "test-sanctions:S1");
    assert_eq!(found["status"], "match");
    assert!(found["score"].as_f64().is_some_and(|s| s >= 90.0));
    // The match explains itself: every part of the listed name aligned, and no adjustment.
    let explanation = &found["explanation"];
    assert_eq!(
        explanation["parts"].as_array().map(Vec::len),
        Some(3),
        "{body}"
    );
    assert_eq!(explanation["adjustments"], json!([]), "{body}");

    // Every part of "Amina Bello Yusuf" is a common name and nothing corroborates the PEP hit:
    // a potential match at most, and the explanation says why.
    let mut payment = tx("s-2", "u-2", 100.0, "2026-03-02T10:00:00Z");
    payment["screeningData"] =
        json!({"senderName": "Amina Bello Yusuf", "receiverName": "Chidi Okafor"});
    let (_, body) = h.instant(&key, &payment).await;
    assert_eq!(
        body["data"]["screening"]["sender"]["pep"], "potential match",
        "{body}"
    );
    assert_eq!(
        body["data"]["screeningMatches"][0]["explanation"]["adjustments"][0]["reason"],
        "commonName",
        "{body}"
    );
    assert_eq!(body["data"]["action"]["result"], "review");
    assert!(crate::common::rule_ids(&body).contains(&"T-PEP".to_owned()));

    // Ordinary names stay clear and explain nothing.
    let (_, body) = h
        .instant(&key, &tx("s-3", "u-3", 100.0, "2026-03-02T10:00:00Z"))
        .await;
    assert_eq!(body["data"]["screening"]["receiver"]["sanction"], "clear");
    assert!(body["data"].get("screeningMatches").is_none(), "{body}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_list_keeps_the_old_index_and_a_good_one_replaces_it_and_drops_cached_results() {
    let mut h = Harness::start().await;
    let key = h.key("acme", false).await;
    let admin = h.key("ops", true).await;
    let list_file = h.dir.path().join("lists").join("sanctions.csv");

    let (status, body) = h.get(&key, "/api/v1/aml/lists").await;
    assert_eq!(status, 200, "{body}");
    let lists = body["data"]["lists"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0]["name"], "test-sanctions");
    assert_eq!(lists[0]["entities"], 2);
    assert!(lists[0]["version"].is_string() && lists[0]["loadedAt"].is_string());

    // Screened once as clear: the result is cached for the next payment of the same name.
    let newcomer = "Hassan Farouk Mansour";
    let mut payment = tx("c-1", "u-1", 100.0, "2026-03-02T10:00:00Z");
    payment["screeningData"] = json!({"senderName": "Ada Obi", "receiverName": newcomer});
    let (_, body) = h.instant(&key, &payment).await;
    assert_eq!(body["data"]["screening"]["receiver"]["sanction"], "clear");

    // A truncated file (cut in the middle of its second row) is refused.
    std::fs::write(
        &list_file,
        "id,name,type\nS1,Ivan Petrovich Sidorov,individual\nS2,Golden",
    )
    .expect("write");
    let (status, body) = h
        .post(&admin, "/api/v1/admin/lists/reload", &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let (_, body) = h.get(&key, "/api/v1/aml/lists").await;
    assert!(body["data"]["lists"][0]["lastError"].is_string(), "{body}");
    assert_eq!(
        body["data"]["lists"][0]["entities"], 2,
        "the old version keeps serving"
    );
    let (_, ready) = h.get(&key, "/readyz").await;
    assert_eq!(ready["status"], "degraded", "{ready}");
    let (_, body) = sanction(&h, &key, json!({"name": "Ivan Sidorov", "threshold": 85})).await;
    assert_eq!(ids(&body), ["test-sanctions:S1"]);

    // The fixed file with a new designation goes live and the cached "clear" is gone.
    let fixed = format!("{TEST_SANCTIONS_CSV}S3,{newcomer},individual,,eg,,new designation\n");
    std::fs::write(&list_file, fixed).expect("write");
    let (status, body) = h
        .post(&admin, "/api/v1/admin/lists/reload", &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"]["lists"][0]["lastError"].is_null(), "{body}");
    assert_eq!(body["data"]["lists"][0]["entities"], 3);
    let mut payment = tx("c-2", "u-1", 100.0, "2026-03-02T10:05:00Z");
    payment["screeningData"] = json!({"senderName": "Ada Obi", "receiverName": newcomer});
    let (_, body) = h.instant(&key, &payment).await;
    assert_eq!(
        body["data"]["screening"]["receiver"]["sanction"], "match",
        "{body}"
    );
    let (_, ready) = h.get(&key, "/readyz").await;
    assert_eq!(ready["status"], "ready", "{ready}");

    // Only admin keys reload.
    let (status, _) = h.post(&key, "/api/v1/admin/lists/reload", &json!({})).await;
    assert_eq!(status, 403);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_business_watchlist_is_seen_only_by_that_business() {
    let dir = tempfile::tempdir().expect("tempdir");
    crate::common::write_test_pack(&dir.path().join("rules"));
    let mut config = crate::common::config_for(
        dir.path(),
        &dir.path().join("rules"),
        &dir.path().join("no-fixtures"),
    );
    std::fs::write(
        dir.path().join("lists").join("acme-watchlist.csv"),
        "id,name,type\nW1,Bartholomew Quince,individual\n",
    )
    .expect("watchlist");
    let mut watchlist = crate::common::test_list_sources().remove(0);
    watchlist.name = "acme-internal".into();
    watchlist.path = Some("acme-watchlist.csv".into());
    watchlist.business = Some("acme".into());
    config.screening.lists.push(watchlist);
    let mut h = Harness::start_with(dir, config).await;
    let acme = h.key("acme", false).await;
    let globex = h.key("globex", false).await;

    let body = json!({"name": "Bartholomew Quince", "threshold": 85});
    let (_, found) = sanction(&h, &acme, body.clone()).await;
    assert_eq!(ids(&found), ["acme-internal:W1"]);
    let (_, hidden) = sanction(&h, &globex, body).await;
    assert_eq!(hidden["count"], 0, "{hidden}");
    let (_, lists) = h.get(&globex, "/api/v1/aml/lists").await;
    assert_eq!(
        lists["data"]["lists"].as_array().map(Vec::len),
        Some(2),
        "{lists}"
    );
    h.stop().await;
}

/// A list configured by URL: the first download loads it, a later download that does not parse
/// leaves the good copy serving and shows why, and a good one replaces it.
#[tokio::test]
async fn a_list_downloaded_from_its_url_loads_and_a_broken_download_keeps_the_old_copy() {
    use std::sync::{Arc, Mutex};
    use vigil::screening::config::{ListSource, ScreeningConfig};
    use vigil::screening::entity::ListKind;
    use vigil::screening::index::ScreenQuery;
    use vigil::screening::loaders::ListFormat;
    use vigil::screening::manager::ListsManager;

    let served: Arc<Mutex<(u16, String)>> = Arc::new(Mutex::new((200, TEST_SANCTIONS_CSV.into())));
    let state = served.clone();
    let app = axum::Router::new().route(
        "/list.csv",
        axum::routing::get(move || {
            let state = state.clone();
            async move {
                let (status, body) = state.lock().expect("state").clone();
                (
                    axum::http::StatusCode::from_u16(status).expect("status"),
                    body,
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().expect("tempdir");
    let config = ScreeningConfig {
        lists_dir: dir.path().join("lists"),
        lists: vec![ListSource {
            name: "remote".into(),
            title: None,
            kind: ListKind::Sanction,
            format: ListFormat::CustomCsv,
            path: None,
            alt: None,
            add: None,
            comments: None,
            url: Some(format!("http://{address}/list.csv")),
            source_url: None,
            business: None,
        }],
        ..ScreeningConfig::default()
    };
    let manager = ListsManager::start(
        config,
        &dir.path().join("data"),
        &Default::default(),
        None,
        None,
    );
    assert!(!manager.status().ready, "nothing downloaded yet");
    let finds = |manager: &ListsManager, name: &str| {
        manager
            .current()
            .index()
            .search(&ScreenQuery {
                name,
                kind: None,
                tenant: None,
                country: None,
                birth_year: None,
                threshold: 85.0,
                match_threshold: 90.0,
                limit: 5,
            })
            .len()
    };
    let client = vigil::screening::manager::download_client(vigil::outbound::AddressPolicy {
        allow_private: true,
    })
    .expect("client");

    let status = manager.download_round(&client).await;
    assert!(status.ready, "{status:?}");
    assert_eq!(status.lists[0].entities, 2);
    assert!(status.lists[0].last_error.is_none(), "{status:?}");
    assert_eq!(finds(&manager, "Ivan Sidorov"), 1);
    let first_version = status.lists[0].version.clone();

    // Truncated mid-row (an odd number of quotes): refused, the first copy keeps serving.
    *served.lock().expect("state") = (200, "id,name,type\nS9,\"Broken".into());
    let status = manager.download_round(&client).await;
    let error = status.lists[0].last_error.clone().unwrap_or_default();
    assert!(error.starts_with("download failed"), "{status:?}");
    assert_eq!(status.lists[0].version, first_version);
    assert_eq!(finds(&manager, "Ivan Sidorov"), 1);

    // A server error is refused the same way.
    *served.lock().expect("state") = (503, String::new());
    let status = manager.download_round(&client).await;
    assert!(status.lists[0].last_error.is_some(), "{status:?}");
    assert_eq!(finds(&manager, "Ivan Sidorov"), 1);

    // A good new version replaces it and clears the error.
    *served.lock().expect("state") = (
        200,
        "id,name,type\nS7,Boris Ivanovich Volkov,individual\n".into(),
    );
    let status = manager.download_round(&client).await;
    assert!(status.lists[0].last_error.is_none(), "{status:?}");
    assert_ne!(status.lists[0].version, first_version);
    assert_eq!(finds(&manager, "Boris Volkov"), 1);
    assert_eq!(finds(&manager, "Ivan Sidorov"), 0);
}

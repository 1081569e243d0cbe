//! The storage layer on both databases: the engine-core tables (businesses, keys, transactions
//! with decisions, lists, devices) round-trip on SQLite and PostgreSQL, and the workflow tables
//! refuse deletes while the audit trail refuses any change. A write transaction that reads before
//! it writes is not refused when another connection commits in between.

use crate::common::{database_for, Backend};
use vigil::engine::ListKind;
use vigil::store::{DecisionColumns, DeviceRecord, ProcessingMode, Store, TransactionRow};

on_both_backends!(
    the_engine_core_store_round_trips,
    records_are_never_deleted_and_the_audit_trail_is_append_only,
    a_write_transaction_that_reads_first_is_not_refused_when_another_connection_commits_meanwhile,
    keys_stored_whole_by_an_earlier_version_keep_working_and_their_records_show_only_the_id,
    case_alerts_of_an_earlier_version_are_kept_and_a_transaction_can_be_an_alert_of_two_cases,
);

async fn connect(
    backend: Backend,
) -> (
    Store,
    tempfile::TempDir,
    Option<crate::common::TestDatabase>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, pg) = database_for(backend, dir.path()).await;
    let store = Store::connect(&url, 2)
        .await
        .expect("connects and migrates");
    (store, dir, pg)
}

fn row<'a>(
    id: &'a str,
    reference: &'a str,
    decision: Option<DecisionColumns<'a>>,
    business: i64,
) -> TransactionRow<'a> {
    TransactionRow {
        business_id: business,
        transaction_id: id,
        reference,
        user_id: "u-1",
        intake: if decision.is_some() {
            "instant"
        } else {
            "async"
        },
        event_time_ms: 1_772_445_600_000,
        received_at_ms: vigil::store::now_ms(),
        payload: "{\"transactionData\":{}}",
        decision,
    }
}

async fn the_engine_core_store_round_trips(backend: Backend) {
    let (store, _dir, _pg) = connect(backend).await;
    store.ping().await.expect("ping");
    let acme = store.ensure_business("acme").await.expect("business");
    assert_eq!(
        store.ensure_business("acme").await.expect("again").id,
        acme.id
    );
    store
        .set_processing_mode(acme.id, ProcessingMode::ReportingOnly)
        .await
        .expect("mode");
    let acme = store
        .business_by_name("acme")
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(acme.mode, ProcessingMode::ReportingOnly);

    store
        .insert_key(acme.id, "vk_1", "digest", "client")
        .await
        .expect("key");
    let key = store.find_key("vk_1").await.expect("find").expect("exists");
    assert_eq!(key.business.name, "acme");
    assert!(!key.revoked);
    assert!(store.revoke_key("vk_1").await.expect("revoke"));
    assert!(!store.revoke_key("vk_1").await.expect("revoke again"));
    assert!(
        store
            .find_key("vk_1")
            .await
            .expect("find")
            .expect("exists")
            .revoked
    );

    let decision = DecisionColumns {
        action: "review",
        risk_score: 0.6,
        json: "{\"transactionId\":\"t-1\"}",
        decided_at_ms: vigil::store::now_ms(),
    };
    let mut conn = store.pool().acquire().await.expect("conn");
    let inserted = Store::insert_transactions(
        &mut conn,
        &[
            row("t-1", "r-1", Some(decision.clone()), acme.id),
            row("t-2", "r-2", None, acme.id),
        ],
    )
    .await
    .expect("insert");
    assert_eq!(inserted.len(), 2);
    let again = Store::insert_transactions(
        &mut conn,
        &[row("t-1", "r-1", Some(decision.clone()), acme.id)],
    )
    .await
    .expect("insert again");
    assert!(
        again.is_empty(),
        "a known transaction is not inserted twice"
    );
    assert_eq!(store.pending().await.expect("pending").len(), 1);
    assert!(
        Store::complete_transaction(&mut conn, acme.id, "r-2", "t-2", &decision)
            .await
            .expect("complete")
    );
    assert!(
        !Store::complete_transaction(&mut conn, acme.id, "r-2", "t-2", &decision)
            .await
            .expect("complete again")
    );
    drop(conn);
    assert!(store.pending().await.expect("pending").is_empty());
    let stored = store
        .transaction_by_reference(acme.id, "r-1")
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.transaction_id, "t-1");
    assert_eq!(stored.status, "decided");
    assert_eq!(stored.decision.as_deref(), Some(decision.json));
    assert!(store
        .transaction(acme.id + 1, "t-1")
        .await
        .expect("read")
        .is_none());
    assert_eq!(store.decided_since(0).await.expect("since").len(), 2);
    let profiles = store
        .user_profiles_before(vigil::store::now_ms() + 1_000)
        .await
        .expect("profiles");
    assert_eq!(profiles.len(), 1);
    assert_eq!(profiles[0].4, 2);

    assert!(store
        .add_list_entry(acme.id, ListKind::User, "bad", "vk")
        .await
        .expect("add"));
    assert!(!store
        .add_list_entry(acme.id, ListKind::User, "bad", "vk")
        .await
        .expect("add again"));
    assert_eq!(
        store
            .list_entries(acme.id, ListKind::User)
            .await
            .expect("list")
            .len(),
        1
    );
    assert!(store
        .remove_list_entry(acme.id, ListKind::User, "bad", "vk")
        .await
        .expect("remove"));
    assert!(store.all_list_entries().await.expect("all").is_empty());

    let device = DeviceRecord {
        customer_id: "u-1".into(),
        device_id: "d-1".into(),
        model: Some("Spark 10".into()),
        ..DeviceRecord::default()
    };
    store.upsert_device(acme.id, &device).await.expect("device");
    store
        .upsert_device(acme.id, &device)
        .await
        .expect("device again");
    assert_eq!(store.all_devices().await.expect("devices").len(), 1);
}

async fn records_are_never_deleted_and_the_audit_trail_is_append_only(backend: Backend) {
    let (store, _dir, _pg) = connect(backend).await;
    let acme = store.ensure_business("acme").await.expect("business");
    let actor = vigil::audit::Actor::key("vk_test", None);
    let analyst = vigil::cases::analysts::create(store.pool(), acme.id, "Ada", "Obi", None, &actor)
        .await
        .expect("analyst");
    let case = vigil::cases::store::create(
        store.pool(),
        acme.id,
        "acme",
        vigil::cases::store::NewCase {
            module: "case-management".into(),
            record: None,
            title: "t".into(),
            description: String::new(),
            priority: vigil::cases::Priority::Low,
            assignee: None,
            due_at_ms: None,
        },
        &vigil::audit::Actor::key("vk_test", Some(&analyst.id)),
    )
    .await
    .expect("case");
    let trail = vigil::audit::trail(
        store.pool(),
        acme.id,
        vigil::audit::EntityType::Case,
        &case.id,
    )
    .await
    .expect("trail");
    assert_eq!(trail.len(), 1);
    assert_eq!(trail[0].action, "created");
    assert_eq!(trail[0].changes["title"]["to"], "t");

    for sql in [
        "DELETE FROM cases",
        "DELETE FROM case_log",
        "DELETE FROM analysts",
        "DELETE FROM audit_log",
        "UPDATE audit_log SET action = 'forged'",
        "UPDATE case_log SET message = 'forged'",
    ] {
        let refused = sqlx::query(sql).execute(store.pool()).await;
        assert!(refused.is_err(), "{sql} must be refused");
    }
    let still = vigil::cases::store::fetch(store.pool(), acme.id, "acme", &case.id)
        .await
        .expect("fetch")
        .expect("still there");
    assert_eq!(still.log[0].message, "Case created");
    let trail = vigil::audit::trail(
        store.pool(),
        acme.id,
        vigil::audit::EntityType::Case,
        &case.id,
    )
    .await
    .expect("trail");
    assert_eq!(trail[0].action, "created");
}

/// The workflows read a record and then update it in one transaction (an analyst deactivated, a
/// case created after reading the analyst directory) while the group writer commits decisions
/// every few milliseconds. On SQLite a deferred `BEGIN` made such a write fail at once with
/// "database is locked" whenever another connection had committed since the read; every write
/// transaction now begins with `store::begin_write`.
async fn a_write_transaction_that_reads_first_is_not_refused_when_another_connection_commits_meanwhile(
    backend: Backend,
) {
    let (store, _dir, _pg) = connect(backend).await;
    let mut tx = vigil::store::begin_write(store.pool())
        .await
        .expect("begins");
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM businesses")
        .fetch_one(&mut *tx)
        .await
        .expect("reads");
    // Another connection writes while this transaction sits between its read and its write.
    let other = store.clone();
    let meanwhile = tokio::spawn(async move { other.ensure_business("meanwhile").await });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    sqlx::query(
        "INSERT INTO businesses (name, processing_mode, created_at_ms) VALUES ($1, $2, $3)",
    )
    .bind("after-the-read")
    .bind(ProcessingMode::Realtime.as_str())
    .bind(vigil::store::now_ms())
    .execute(&mut *tx)
    .await
    .expect("the write after the read is not refused");
    tx.commit().await.expect("commits");
    meanwhile
        .await
        .expect("joins")
        .expect("the other connection's write is not refused either");
    let after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM businesses")
        .fetch_one(store.pool())
        .await
        .expect("counts");
    assert_eq!(after, before + 2);
}

/// A database as an earlier version left it (migrations 0001-0005): a key stored whole, and
/// records that named it. Opening it with this version gives the key its digest, keeps only its
/// id, and cuts every record that named the key to the id.
async fn keys_stored_whole_by_an_earlier_version_keep_working_and_their_records_show_only_the_id(
    backend: Backend,
) {
    use sqlx::Row;
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, _pg, pool) = migrated_before(backend, dir.path(), "0006").await;
    let whole = "vk_0123456789abcdef0123456789abcdef";
    let secret = "vs_secret";
    sqlx::query("INSERT INTO businesses (name, processing_mode, created_at_ms) VALUES ('acme', 'realtime', 0)")
        .execute(&pool)
        .await
        .expect("business");
    sqlx::query(
        "INSERT INTO api_keys (api_key, business_id, secret_digest, role, created_at_ms) \
         VALUES ($1, (SELECT id FROM businesses WHERE name = 'acme'), $2, 'client', 0)",
    )
    .bind(whole)
    .bind(vigil::store::sha256_hex(secret))
    .execute(&pool)
    .await
    .expect("legacy key");
    sqlx::query(
        "INSERT INTO audit_log (business_id, entity_type, entity_id, action, actor_key, at_ms, changes) \
         VALUES ((SELECT id FROM businesses WHERE name = 'acme'), 'case', 'C-1', 'create', $1, 0, '{}')",
    )
    .bind(whole)
    .execute(&pool)
    .await
    .expect("audit row");
    sqlx::query(
        "INSERT INTO list_entries (business_id, kind, value, created_at_ms, created_by) \
         VALUES ((SELECT id FROM businesses WHERE name = 'acme'), 'user', 'u-1', 0, $1)",
    )
    .bind(whole)
    .execute(&pool)
    .await
    .expect("list entry");
    pool.close().await;

    let store = Store::connect(&url, 2).await.expect("opens and migrates");
    let found = store
        .find_key(whole)
        .await
        .expect("read")
        .expect("found by digest");
    assert_eq!(found.key_id, "vk_01234567");
    assert_eq!(found.key_digest, vigil::store::sha256_hex(whole));
    assert_eq!(found.secret_digest, vigil::store::sha256_hex(secret));
    let listed = store.keys().await.expect("keys");
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].key_only_allowed);
    assert_eq!(listed[0].key_id, "vk_01234567");
    assert!(
        store.find_key("vk_01234567").await.expect("read").is_none(),
        "the id is no key"
    );
    let stored: Vec<String> = sqlx::query("SELECT api_key FROM api_keys")
        .fetch_all(store.pool())
        .await
        .expect("keys")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(stored, ["vk_01234567"], "the whole key is stored nowhere");
    let actor: String = sqlx::query("SELECT actor_key FROM audit_log")
        .fetch_one(store.pool())
        .await
        .expect("audit")
        .get(0);
    assert_eq!(actor, "vk_01234567");
    let created_by: String = sqlx::query("SELECT created_by FROM list_entries")
        .fetch_one(store.pool())
        .await
        .expect("list")
        .get(0);
    assert_eq!(created_by, "vk_01234567");
    // It was shown whole before, so it authenticates only with its secret, never alone.
    assert!(!found.key_only_allowed);
    let keys = vigil::api::auth::KeyCache::load(store.clone())
        .await
        .expect("keys");
    use vigil::api::auth::Credential;
    assert!(keys
        .check(&Credential::Pair {
            key: whole.to_owned(),
            secret: secret.to_owned()
        })
        .await
        .expect("check")
        .is_some());
    assert!(keys
        .check(&Credential::Key(whole.to_owned()))
        .await
        .expect("check")
        .is_none());
    let issued = vigil::api::auth::issue_key(&store, "acme", false)
        .await
        .expect("new key");
    assert!(
        keys.check(&Credential::Key(issued.api_key.clone()))
            .await
            .expect("check")
            .is_some(),
        "a key issued as a secret authenticates alone"
    );
    // The audit trail is append-only again after the one redaction.
    assert!(sqlx::query("UPDATE audit_log SET actor_key = 'x'")
        .execute(store.pool())
        .await
        .is_err());
    // Opening again changes nothing; revoking by id works.
    drop(store);
    let store = Store::connect(&url, 2).await.expect("opens again");
    assert!(store.find_key(whole).await.expect("read").is_some());
    assert!(store.revoke_key("vk_01234567").await.expect("revoke"));
    assert!(
        store
            .find_key(whole)
            .await
            .expect("read")
            .expect("still stored")
            .revoked
    );
}

/// A database as an earlier version left it (migrations 0001-0007), where an alert was unique
/// per transaction. Opening it with this version keeps its alerts, links one transaction to a
/// second case (a finding of another typology), still refuses the same link twice and still
/// refuses deletes.
async fn case_alerts_of_an_earlier_version_are_kept_and_a_transaction_can_be_an_alert_of_two_cases(
    backend: Backend,
) {
    use sqlx::Row;
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, _pg, pool) = migrated_before(backend, dir.path(), "0008").await;
    sqlx::query("INSERT INTO businesses (name, processing_mode, created_at_ms) VALUES ('acme', 'realtime', 0)")
        .execute(&pool)
        .await
        .expect("business");
    let case = |id: &'static str, name: &'static str| {
        sqlx::query(
            "INSERT INTO cases (id, business_id, module, record_id, record_type, record_name, \
             subject_id, title, description, priority, status, created_at_ms, updated_at_ms) \
             VALUES ($1, (SELECT id FROM businesses WHERE name = 'acme'), 'transaction-monitoring', \
             'HUB', 'account', $2, $2, 't', 'd', 'high', 'open', 0, 0)",
        )
        .bind(id)
        .bind(name)
    };
    let alert = |case_id: &'static str| {
        sqlx::query(
            "INSERT INTO case_alerts (business_id, case_id, transaction_id, reference, action, \
             risk_score, rules, created_at_ms) VALUES ((SELECT id FROM businesses WHERE name = \
             'acme'), $1, 'tx-1', 'ref-1', 'review', '0.6', '[]', 0)",
        )
        .bind(case_id)
    };
    case("C-1", "HUB · fan_in")
        .execute(&pool)
        .await
        .expect("case");
    alert("C-1").execute(&pool).await.expect("alert");
    pool.close().await;

    let store = Store::connect(&url, 2).await.expect("opens and migrates");
    let kept: Vec<(String, i64)> = sqlx::query("SELECT case_id, seq FROM case_alerts ORDER BY seq")
        .fetch_all(store.pool())
        .await
        .expect("alerts")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(kept, [("C-1".to_owned(), 1)], "the earlier alert is kept");
    case("C-2", "HUB · gather_scatter")
        .execute(store.pool())
        .await
        .expect("second case");
    alert("C-2")
        .execute(store.pool())
        .await
        .expect("the same transaction is an alert of a second case");
    assert!(
        alert("C-2").execute(store.pool()).await.is_err(),
        "but not twice of the same case"
    );
    let seqs: Vec<i64> = sqlx::query("SELECT seq FROM case_alerts ORDER BY seq")
        .fetch_all(store.pool())
        .await
        .expect("alerts")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(seqs, [1, 2], "numbering goes on after the kept rows");
    assert!(
        sqlx::query("DELETE FROM case_alerts")
            .execute(store.pool())
            .await
            .is_err(),
        "alerts are still never deleted"
    );
}

/// A database as an earlier version left it: every migration numbered before `first_missing`
/// applied (the test then opens it with this version, which applies the rest). Returns its URL,
/// the PostgreSQL database to keep alive, and a one-connection pool on it.
async fn migrated_before(
    backend: Backend,
    dir: &std::path::Path,
    first_missing: &str,
) -> (String, Option<crate::common::TestDatabase>, sqlx::AnyPool) {
    let (url, pg) = database_for(backend, dir).await;
    std::fs::create_dir_all(dir.join("data")).expect("data dir");
    let earlier = dir.join("migrations");
    std::fs::create_dir_all(&earlier).expect("dir");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(match backend {
        Backend::Sqlite => "src/store/migrations/sqlite",
        Backend::Postgres => "src/store/migrations/postgres",
    });
    for entry in std::fs::read_dir(&source).expect("migrations") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if name.as_str() < first_missing {
            std::fs::copy(&path, earlier.join(&name)).expect("copy");
        }
    }
    sqlx::any::install_default_drivers();
    let pool = sqlx::any::AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .expect("connect");
    sqlx::migrate::Migrator::new(earlier.as_path())
        .await
        .expect("earlier migrations")
        .run(&pool)
        .await
        .unwrap_or_else(|e| panic!("migrated up to {first_missing}: {e}"));
    (url, pg, pool)
}

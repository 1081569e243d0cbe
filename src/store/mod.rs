//! The store: one storage layer over SQLite (embedded default) and PostgreSQL (several instances),
//! through sqlx's `AnyPool` with versioned migrations per backend.
//!
//! It owns tenants (businesses) and their API keys, transactions with their decisions, lists and
//! devices. SQL is written once with `$n` placeholders, which both backends accept. SQLite runs in
//! WAL mode with `synchronous=FULL`: a commit is on disk before it returns. Every transaction that
//! writes begins with [`begin_write`] (`BEGIN IMMEDIATE` on SQLite), so one that reads first is
//! never refused for a commit made meanwhile. Transactions reach the store through the
//! group-commit writer in `sinks::store`; everything else writes directly.
//!
//! The compliance workflows (`cases`, `cdd`, `edd`, `audit`) keep their SQL in their own modules
//! and share this pool, the helpers below ([`new_id`], [`iso_time`]) and [`page`] for cursor
//! pagination. Their migrations (`0002_workflows.sql`) refuse deletes on every workflow table and
//! updates on the append-only ones, in both backends.

pub mod page;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Row};
use thiserror::Error;

use crate::engine::lists::ListKind;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("src/store/migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator =
    sqlx::migrate!("src/store/migrations/postgres");

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("unsupported database url (use sqlite: or postgres://)")]
    UnsupportedUrl,
    #[error("corrupt stored record: {0}")]
    Corrupt(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// How a tenant's transactions are answered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessingMode {
    /// Decisions are returned to the caller.
    Realtime,
    /// Transactions are evaluated and recorded, the instant endpoint answers `data: null`.
    ReportingOnly,
}

impl ProcessingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessingMode::Realtime => "realtime",
            ProcessingMode::ReportingOnly => "reporting-only",
        }
    }
}

impl FromStr for ProcessingMode {
    type Err = String;
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "realtime" => Ok(ProcessingMode::Realtime),
            "reporting-only" => Ok(ProcessingMode::ReportingOnly),
            other => Err(format!(
                "unknown processing mode '{other}' (realtime or reporting-only)"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Business {
    pub id: i64,
    pub name: String,
    pub mode: ProcessingMode,
}

/// An API key as stored: its id (the key's first [`KEY_ID_LEN`] characters), the digest of the
/// whole key it is found by, and the digest of its secret. Neither the key nor the secret is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub key_id: String,
    pub key_digest: String,
    /// Whether the key alone may authenticate (EDD): keys issued as secrets, not those issued
    /// before keys were secret (they were shown whole; they need their secret until rotated).
    pub key_only_allowed: bool,
    pub business: Business,
    pub secret_digest: String,
    pub role: String,
    pub created_at_ms: i64,
    pub revoked: bool,
}

/// A stored list entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListEntry {
    /// The blacklisted user id, receiver, account number or device id.
    pub value: String,
    /// When the entry was added, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// The id of the API key that added it (its first characters, never the key).
    pub created_by: String,
}

/// A device registered for a customer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceRecord {
    pub customer_id: String,
    pub device_id: String,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub name: Option<String>,
    pub os_name: Option<String>,
    pub os_version: Option<String>,
}

/// One transaction row for the writer.
#[derive(Debug, Clone)]
pub struct TransactionRow<'a> {
    pub business_id: i64,
    pub transaction_id: &'a str,
    pub reference: &'a str,
    pub user_id: &'a str,
    pub intake: &'a str,
    pub event_time_ms: i64,
    pub received_at_ms: i64,
    pub payload: &'a str,
    /// None while pending (asynchronous intake before evaluation).
    pub decision: Option<DecisionColumns<'a>>,
}

#[derive(Debug, Clone)]
pub struct DecisionColumns<'a> {
    pub action: &'a str,
    pub risk_score: f64,
    pub json: &'a str,
    pub decided_at_ms: i64,
}

/// A stored transaction as read back.
#[derive(Debug, Clone)]
pub struct StoredTransaction {
    pub business_id: i64,
    pub transaction_id: String,
    pub reference: String,
    pub status: String,
    pub intake: String,
    pub event_time_ms: i64,
    pub received_at_ms: i64,
    pub payload: String,
    pub decision: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

/// Begins a transaction that will write.
///
/// SQLite gets `BEGIN IMMEDIATE`: the write lock is taken at the start, waiting up to
/// `busy_timeout` while another connection writes. A deferred `BEGIN` takes it only at the first
/// write, and if another connection committed after this transaction's first read, SQLite refuses
/// that write at once with "database is locked" instead of waiting — which the group writer,
/// committing every few milliseconds under load, made happen to analysts' updates (a read of the
/// record, then its update). PostgreSQL gets a plain `BEGIN`: it does not refuse such writes, and
/// the workflows lock the rows they change.
pub async fn begin_write(
    pool: &AnyPool,
) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    if pool.connect_options().database_url.scheme() == "sqlite" {
        pool.begin_with("BEGIN IMMEDIATE").await
    } else {
        pool.begin().await
    }
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A new record id: a UUID v7 (time-ordered), as text.
/// How many of a key's first characters are its id (`vk_` and 8 hex digits): what lists, logs
/// and audit records show in place of the key.
pub const KEY_ID_LEN: usize = 11;

/// A key's id: its first [`KEY_ID_LEN`] characters.
pub fn key_id(api_key: &str) -> String {
    api_key.chars().take(KEY_ID_LEN).collect()
}

/// The SHA-256 digest of `text`, lower-case hex (how keys and secrets are stored).
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Milliseconds since the epoch as an RFC 3339 UTC time with milliseconds (`…T10:15:30.123Z`).
pub fn iso_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether a database error is a unique-constraint violation (both backends).
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && path != ":memory:").then_some(path)
}

impl Store {
    /// Connects, creating the SQLite file and its directory if needed, and migrates.
    pub async fn connect(url: &str, pool_size: u32) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        if let Some(file) = sqlite_file(url) {
            if let Some(dir) = Path::new(file)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                    path: dir.display().to_string(),
                    source,
                })?;
            }
        }
        let mut options = AnyPoolOptions::new()
            .max_connections(pool_size)
            .acquire_timeout(Duration::from_secs(30));
        if backend == Backend::Sqlite {
            options = options.after_connect(|conn, _meta| {
                Box::pin(async move {
                    for pragma in [
                        "PRAGMA journal_mode = WAL",
                        "PRAGMA synchronous = FULL",
                        "PRAGMA busy_timeout = 10000",
                        "PRAGMA foreign_keys = ON",
                        // Statement journals (a multi-row insert inside a transaction needs one)
                        // in memory instead of a temporary file: no durability involved, and
                        // the file's writes were a tenth of a commit's cost.
                        "PRAGMA temp_store = MEMORY",
                    ] {
                        sqlx::query(pragma).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            });
        }
        let pool = options.connect(url).await?;
        match backend {
            Backend::Sqlite => SQLITE_MIGRATIONS.run(&pool).await?,
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&pool).await?,
        }
        let store = Store { pool, backend };
        store.secure_legacy_keys().await?;
        Ok(store)
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    // ---- businesses -------------------------------------------------------------------------

    /// Finds a business by name, creating it on first use.
    pub async fn ensure_business(&self, name: &str) -> Result<Business, StoreError> {
        sqlx::query(
            "INSERT INTO businesses (name, processing_mode, created_at_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(ProcessingMode::Realtime.as_str())
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        self.business_by_name(name)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("business {name} vanished")))
    }

    pub async fn business_by_name(&self, name: &str) -> Result<Option<Business>, StoreError> {
        let row = sqlx::query("SELECT id, name, processing_mode FROM businesses WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| business_from(row.get(0), row.get(1), row.get::<String, _>(2)))
            .transpose()
    }

    pub async fn set_processing_mode(
        &self,
        business_id: i64,
        mode: ProcessingMode,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE businesses SET processing_mode = $1 WHERE id = $2")
            .bind(mode.as_str())
            .bind(business_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    // ---- API keys ---------------------------------------------------------------------------

    /// Stores a key by its id and digest; false when the id is taken (the caller draws again).
    pub async fn insert_key(
        &self,
        business_id: i64,
        api_key: &str,
        secret_digest: &str,
        role: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO api_keys (api_key, key_digest, business_id, secret_digest, role, \
             created_at_ms, key_only_allowed) VALUES ($1, $2, $3, $4, $5, $6, 1) \
             ON CONFLICT (api_key) DO NOTHING",
        )
        .bind(key_id(api_key))
        .bind(sha256_hex(api_key))
        .bind(business_id)
        .bind(secret_digest)
        .bind(role)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    const KEY_COLUMNS: &'static str =
        "SELECT k.api_key, k.key_digest, k.secret_digest, k.role, k.created_at_ms, \
         k.revoked_at_ms, b.id, b.name, b.processing_mode, k.key_only_allowed \
         FROM api_keys k JOIN businesses b ON b.id = k.business_id";

    /// The key whose whole text is `api_key` (found by its digest).
    pub async fn find_key(&self, api_key: &str) -> Result<Option<KeyRecord>, StoreError> {
        let sql = format!("{} WHERE k.key_digest = $1", Self::KEY_COLUMNS);
        let row = sqlx::query(&sql)
            .bind(sha256_hex(api_key))
            .fetch_optional(&self.pool)
            .await?;
        row.map(key_from_row).transpose()
    }

    pub async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        let sql = format!(
            "{} WHERE k.key_digest IS NOT NULL ORDER BY k.created_at_ms",
            Self::KEY_COLUMNS
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.into_iter().map(key_from_row).collect()
    }

    /// Revokes a key given whole or by its id; false if no such active key.
    pub async fn revoke_key(&self, key_or_id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at_ms = $1 \
             WHERE (api_key = $2 OR key_digest = $3) AND revoked_at_ms IS NULL",
        )
        .bind(now_ms())
        .bind(key_or_id)
        .bind(sha256_hex(key_or_id))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Keys stored whole by earlier versions: each gets its digest and keeps only its id (the
    /// migration already cut the records that named it). Runs when the store opens; idempotent.
    async fn secure_legacy_keys(&self) -> Result<(), StoreError> {
        let rows = sqlx::query("SELECT api_key FROM api_keys WHERE key_digest IS NULL")
            .fetch_all(&self.pool)
            .await?;
        for row in rows {
            let whole: String = row.get(0);
            let digest = sha256_hex(&whole);
            // The id is the key's first characters; in the unlikely case another key already
            // has that id, one more character each time.
            let mut length = KEY_ID_LEN;
            loop {
                let id: String = whole.chars().take(length).collect();
                let done = sqlx::query(
                    "UPDATE api_keys SET api_key = $1, key_digest = $2 WHERE api_key = $3 \
                     AND NOT EXISTS (SELECT 1 FROM api_keys o WHERE o.api_key = $1 AND o.api_key <> $3)",
                )
                .bind(&id)
                .bind(&digest)
                .bind(&whole)
                .execute(&self.pool)
                .await?;
                if done.rows_affected() == 1 || length >= whole.chars().count() {
                    break;
                }
                length += 1;
            }
        }
        Ok(())
    }

    // ---- lists ------------------------------------------------------------------------------

    /// Adds a list entry and audits it; false if it was already listed.
    pub async fn add_list_entry(
        &self,
        business_id: i64,
        kind: ListKind,
        value: &str,
        actor: &str,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = begin_write(&self.pool).await?;
        let done = sqlx::query(
            "INSERT INTO list_entries (business_id, kind, value, created_at_ms, created_by) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (business_id, kind, value) DO NOTHING",
        )
        .bind(business_id)
        .bind(kind.as_str())
        .bind(value)
        .bind(now)
        .bind(actor)
        .execute(&mut *tx)
        .await?;
        let added = done.rows_affected() > 0;
        if added {
            audit_list(&mut tx, business_id, kind, value, "add", actor, now).await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    /// Removes a list entry and audits it; false if it was not listed.
    pub async fn remove_list_entry(
        &self,
        business_id: i64,
        kind: ListKind,
        value: &str,
        actor: &str,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = begin_write(&self.pool).await?;
        let done = sqlx::query(
            "DELETE FROM list_entries WHERE business_id = $1 AND kind = $2 AND value = $3",
        )
        .bind(business_id)
        .bind(kind.as_str())
        .bind(value)
        .execute(&mut *tx)
        .await?;
        let removed = done.rows_affected() > 0;
        if removed {
            audit_list(&mut tx, business_id, kind, value, "remove", actor, now).await?;
        }
        tx.commit().await?;
        Ok(removed)
    }

    pub async fn all_list_entries(&self) -> Result<Vec<(i64, ListKind, String)>, StoreError> {
        let rows = sqlx::query("SELECT business_id, kind, value FROM list_entries")
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|row| {
                let kind: String = row.get(1);
                let kind = ListKind::parse(&kind)
                    .ok_or_else(|| StoreError::Corrupt(format!("unknown list kind {kind}")))?;
                Ok((row.get(0), kind, row.get(2)))
            })
            .collect()
    }

    pub async fn list_entries(
        &self,
        business_id: i64,
        kind: ListKind,
    ) -> Result<Vec<ListEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT value, created_at_ms, created_by FROM list_entries \
             WHERE business_id = $1 AND kind = $2 ORDER BY value",
        )
        .bind(business_id)
        .bind(kind.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| ListEntry {
                value: row.get(0),
                created_at_ms: row.get(1),
                created_by: row.get(2),
            })
            .collect())
    }

    // ---- devices ----------------------------------------------------------------------------

    pub async fn upsert_device(
        &self,
        business_id: i64,
        device: &DeviceRecord,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO devices (business_id, customer_id, device_id, manufacturer, model, name, \
             os_name, os_version, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (business_id, customer_id, device_id) DO UPDATE SET \
             manufacturer = excluded.manufacturer, model = excluded.model, name = excluded.name, \
             os_name = excluded.os_name, os_version = excluded.os_version, \
             updated_at_ms = excluded.updated_at_ms",
        )
        .bind(business_id)
        .bind(&device.customer_id)
        .bind(&device.device_id)
        .bind(device.manufacturer.as_deref())
        .bind(device.model.as_deref())
        .bind(device.name.as_deref())
        .bind(device.os_name.as_deref())
        .bind(device.os_version.as_deref())
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every registered device as (business, customer, device), for the state rebuild.
    pub async fn all_devices(&self) -> Result<Vec<(i64, String, String)>, StoreError> {
        let rows = sqlx::query("SELECT business_id, customer_id, device_id FROM devices")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect())
    }

    // ---- transactions -----------------------------------------------------------------------

    /// Inserts rows in one statement inside `tx`; returns the ids that were new.
    pub async fn insert_transactions(
        conn: &mut sqlx::AnyConnection,
        rows: &[TransactionRow<'_>],
    ) -> Result<Vec<String>, StoreError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        const COLUMNS: usize = 13;
        // SQLite gets anonymous `?` placeholders here: sqlx looks up every numbered parameter's
        // name, which SQLite finds by a linear scan, so `$1`…`$13000` cost O(n²) to bind (half of
        // the writer's CPU at 1,000 rows per statement). PostgreSQL needs `$n`.
        let anonymous = conn.backend_name().eq_ignore_ascii_case("sqlite");
        let mut sql = String::with_capacity(256 + rows.len() * 80);
        sql.push_str(
            "INSERT INTO transactions (business_id, transaction_id, reference, user_id, intake, \
             status, event_time_ms, received_at_ms, payload, action, risk_score, decision, \
             decided_at_ms) VALUES ",
        );
        let mut n = 0;
        for (i, _) in rows.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            sql.push('(');
            for c in 0..COLUMNS {
                if c > 0 {
                    sql.push(',');
                }
                if anonymous {
                    sql.push('?');
                    continue;
                }
                n += 1;
                sql.push('$');
                sql.push_str(&n.to_string());
            }
            sql.push(')');
        }
        sql.push_str(" ON CONFLICT DO NOTHING RETURNING transaction_id");
        let mut query = sqlx::query(&sql);
        for row in rows {
            let (status, action, score, json, decided) = match &row.decision {
                Some(d) => (
                    "decided",
                    Some(d.action),
                    Some(d.risk_score),
                    Some(d.json),
                    Some(d.decided_at_ms),
                ),
                None => ("pending", None, None, None, None),
            };
            query = query
                .bind(row.business_id)
                .bind(row.transaction_id)
                .bind(row.reference)
                .bind(row.user_id)
                .bind(row.intake)
                .bind(status)
                .bind(row.event_time_ms)
                .bind(row.received_at_ms)
                .bind(row.payload)
                .bind(action)
                .bind(score)
                .bind(json)
                .bind(decided);
        }
        let inserted = query.fetch_all(&mut *conn).await?;
        Ok(inserted.into_iter().map(|row| row.get(0)).collect())
    }

    /// Completes a tenant's pending transaction, found by its reference (the idempotency key),
    /// with its decision; the row takes the decision's transaction id. Ok(false) if no pending
    /// transaction has this reference.
    ///
    /// By reference, not by id: a row stored as pending by an earlier version, whose ids were
    /// derived differently, still completes. Nobody was given the pending row's id (the
    /// asynchronous intake answers "Transaction submitted" without one), so the row can take the
    /// decision's.
    pub async fn complete_transaction(
        conn: &mut sqlx::AnyConnection,
        business_id: i64,
        reference: &str,
        transaction_id: &str,
        decision: &DecisionColumns<'_>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE transactions SET transaction_id = $1, status = 'decided', action = $2, \
             risk_score = $3, decision = $4, decided_at_ms = $5 \
             WHERE business_id = $6 AND reference = $7 AND status = 'pending'",
        )
        .bind(transaction_id)
        .bind(decision.action)
        .bind(decision.risk_score)
        .bind(decision.json)
        .bind(decision.decided_at_ms)
        .bind(business_id)
        .bind(reference)
        .execute(&mut *conn)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    const TX_COLUMNS: &'static str =
        "SELECT business_id, transaction_id, reference, status, intake, \
         event_time_ms, received_at_ms, payload, decision FROM transactions";

    pub async fn transaction(
        &self,
        business_id: i64,
        transaction_id: &str,
    ) -> Result<Option<StoredTransaction>, StoreError> {
        self.transaction_where("transaction_id", business_id, transaction_id)
            .await
    }

    pub async fn transaction_by_reference(
        &self,
        business_id: i64,
        reference: &str,
    ) -> Result<Option<StoredTransaction>, StoreError> {
        self.transaction_where("reference", business_id, reference)
            .await
    }

    /// One of a tenant's transactions by a unique column (`column` is ours, never input).
    async fn transaction_where(
        &self,
        column: &'static str,
        business_id: i64,
        value: &str,
    ) -> Result<Option<StoredTransaction>, StoreError> {
        let sql = format!(
            "{} WHERE business_id = $1 AND {column} = $2",
            Self::TX_COLUMNS
        );
        let row = sqlx::query(&sql)
            .bind(business_id)
            .bind(value)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(stored_from_row))
    }

    /// Decided transactions received since `since_ms`, in arrival order (state rebuild).
    pub async fn decided_since(&self, since_ms: i64) -> Result<Vec<StoredTransaction>, StoreError> {
        let sql = format!(
            "{} WHERE status = 'decided' AND received_at_ms >= $1 ORDER BY seq",
            Self::TX_COLUMNS
        );
        let rows = sqlx::query(&sql)
            .bind(since_ms)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(stored_from_row).collect())
    }

    /// Transactions accepted asynchronously and not yet decided, in arrival order.
    pub async fn pending(&self) -> Result<Vec<StoredTransaction>, StoreError> {
        let sql = format!("{} WHERE status = 'pending' ORDER BY seq", Self::TX_COLUMNS);
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(stored_from_row).collect())
    }

    /// Per user: first and last event time and count of decided transactions received before
    /// `before_ms` (the history older than the replayed window).
    pub async fn user_profiles_before(
        &self,
        before_ms: i64,
    ) -> Result<Vec<(i64, String, i64, i64, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT business_id, user_id, MIN(event_time_ms), MAX(event_time_ms), COUNT(*) \
             FROM transactions WHERE status = 'decided' AND received_at_ms < $1 \
             GROUP BY business_id, user_id",
        )
        .bind(before_ms)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4)))
            .collect())
    }
}

async fn audit_list(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    business_id: i64,
    kind: ListKind,
    value: &str,
    operation: &str,
    actor: &str,
    at_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO list_audit (business_id, kind, value, operation, actor, at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(business_id)
    .bind(kind.as_str())
    .bind(value)
    .bind(operation)
    .bind(actor)
    .bind(at_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn business_from(id: i64, name: String, mode: String) -> Result<Business, StoreError> {
    let mode = mode.parse().map_err(StoreError::Corrupt)?;
    Ok(Business { id, name, mode })
}

fn key_from_row(row: sqlx::any::AnyRow) -> Result<KeyRecord, StoreError> {
    let revoked: Option<i64> = row.get(5);
    Ok(KeyRecord {
        key_id: row.get(0),
        key_digest: row.get::<Option<String>, _>(1).unwrap_or_default(),
        key_only_allowed: row.get::<i64, _>(9) != 0,
        secret_digest: row.get(2),
        role: row.get(3),
        created_at_ms: row.get(4),
        revoked: revoked.is_some(),
        business: business_from(row.get(6), row.get(7), row.get(8))?,
    })
}

fn stored_from_row(row: sqlx::any::AnyRow) -> StoredTransaction {
    StoredTransaction {
        business_id: row.get(0),
        transaction_id: row.get(1),
        reference: row.get(2),
        status: row.get(3),
        intake: row.get(4),
        event_time_ms: row.get(5),
        received_at_ms: row.get(6),
        payload: row.get(7),
        decision: row.get(8),
    }
}

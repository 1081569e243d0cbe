//! Identity and registry lookups (spec §2.7, the `/kyc` rows of §4.4): NIN, BVN and CAC.
//!
//! Vigil is a gateway here. It owns the lookup endpoints ([`api`]), the input checks and the
//! §2.7 shape ([`model`]), a cache, the audit of every lookup, and the CDD verifications that run
//! on lookups ([`verify`]); the data comes from a provider:
//!
//! - [`registry::LocalRegistry`], the embedded default: records in Vigil's own store, imported
//!   from JSON/CSV with `vigil registry import nin|bvn|cac FILE`; at start the sample registry in
//!   `fixtures/identity/` (`identity.seed_dir`) is loaded into an empty registry, so a new
//!   install's first lookup answers;
//! - [`upstream::UpstreamProvider`], an HTTP adapter for a real provider (timeouts, retries,
//!   circuit breaker), whose answers are normalised into §2.7.
//!
//! Data flow of one lookup: handler validates → [`IdentityService::lookup`] answers from the TTL
//! cache (found records only, shared by tenants: registry data is the same for all) or asks the
//! provider → writes one `identity_lookups` row (tenant, API key, time, what was asked, outcome,
//! provider, cached or not) and commits it → only then answers. Logs carry identity numbers
//! masked (`123*****901`) and never a photo; the audit rows never hold the returned record.

pub mod api;
pub mod config;
pub mod model;
pub mod registry;
pub mod upstream;
pub mod verify;

use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lru::LruCache;
use serde::Serialize;
use serde_json::Value;
use sqlx::Row;
use thiserror::Error;

use crate::store::{iso_time, new_id, now_ms, StoreError};
use config::{IdentityConfig, ProviderKind};
use model::{LookupKind, LookupQuery};
use registry::LocalRegistry;
use upstream::{UpstreamAnswer, UpstreamProvider};

#[derive(Debug, Error)]
pub enum IdentityError {
    #[error("{} not found", .0.label())]
    NotFound(LookupKind),
    #[error("identity provider is unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for IdentityError {
    fn from(error: sqlx::Error) -> Self {
        IdentityError::Store(StoreError::Database(error))
    }
}

enum Provider {
    Local(LocalRegistry),
    Upstream(Box<UpstreamProvider>),
}

impl Provider {
    fn name(&self) -> &'static str {
        match self {
            Provider::Local(_) => "local",
            Provider::Upstream(_) => "upstream",
        }
    }
}

/// A found record and how it was found.
#[derive(Debug, Clone)]
pub struct Found {
    pub data: Value,
    pub cached: bool,
    pub provider: &'static str,
}

/// One row of the lookup audit, as `GET /api/v1/kyc/lookups` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LookupAudit {
    pub id: String,
    /// `nin`, `bvn` or `cac`.
    #[schema(example = "nin")]
    pub kind: String,
    /// What was asked: `{idNumber}` or `{rcNumber, companyName, companyType}`.
    #[schema(value_type = Object)]
    pub query: Value,
    /// `found`, `not-found` or `unavailable`.
    #[schema(example = "found")]
    pub outcome: String,
    /// `local` or `upstream`.
    pub provider: String,
    /// Whether the answer came from the cache.
    pub cached: bool,
    /// `api` for the lookup endpoints, `cdd-verification` for a CDD check.
    pub purpose: String,
    /// The id of the API key that asked (its first characters; never the key).
    pub actor_key: String,
    /// RFC 3339.
    pub at: String,
}

type CacheKey = (LookupKind, String);

pub struct IdentityService {
    provider: Provider,
    cache: Mutex<LruCache<CacheKey, (Instant, Value)>>,
    ttl: Duration,
    pool: sqlx::AnyPool,
    pub config: IdentityConfig,
}

impl IdentityService {
    /// `upstream_policy`: the outbound address policy of the upstream provider's URL.
    pub fn new(
        pool: sqlx::AnyPool,
        config: IdentityConfig,
        upstream_policy: crate::outbound::AddressPolicy,
    ) -> Result<IdentityService, String> {
        let provider = match config.provider {
            ProviderKind::Local => Provider::Local(LocalRegistry::new(pool.clone())),
            ProviderKind::Upstream => Provider::Upstream(Box::new(UpstreamProvider::new(
                config.upstream.clone(),
                upstream_policy,
            )?)),
        };
        let entries = NonZeroUsize::new(config.cache_entries).unwrap_or(NonZeroUsize::MIN);
        Ok(IdentityService {
            provider,
            cache: Mutex::new(LruCache::new(entries)),
            ttl: Duration::from_secs(config.cache_ttl_secs),
            pool,
            config,
        })
    }

    fn cached(&self, key: &CacheKey) -> Option<Value> {
        let mut cache = self.cache.lock().ok()?;
        match cache.get(key) {
            Some((at, value)) if at.elapsed() < self.ttl => Some(value.clone()),
            Some(_) => {
                cache.pop(key);
                None
            }
            None => None,
        }
    }

    fn remember(&self, key: CacheKey, value: &Value) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut cache) = self.cache.lock() {
            cache.put(key, (Instant::now(), value.clone()));
        }
    }

    async fn ask(&self, query: &LookupQuery) -> Result<Option<Value>, IdentityError> {
        match &self.provider {
            Provider::Local(registry) => Ok(registry.get(query.kind(), &query.key()).await?),
            Provider::Upstream(upstream) => match upstream.lookup(query).await {
                Ok(UpstreamAnswer::Found(data)) => Ok(Some(data)),
                Ok(UpstreamAnswer::NotFound) => Ok(None),
                Err(error) => Err(IdentityError::Unavailable(error)),
            },
        }
    }

    /// Looks `query` up for `tenant`, audits the lookup (committed before this returns), and
    /// answers the §2.7 data.
    pub async fn lookup(
        &self,
        tenant: i64,
        actor_key: &str,
        purpose: &str,
        query: &LookupQuery,
    ) -> Result<Found, IdentityError> {
        let key = (query.kind(), query.key());
        let (result, cached) = match self.cached(&key) {
            Some(data) => (Ok(Some(data)), true),
            None => (self.ask(query).await, false),
        };
        let outcome = match &result {
            Ok(Some(_)) => "found",
            Ok(None) => "not-found",
            Err(IdentityError::Unavailable(_)) => "unavailable",
            Err(_) => "error",
        };
        tracing::info!(
            tenant,
            kind = query.kind().as_str(),
            key = %query.masked_key(),
            outcome,
            cached,
            provider = self.provider.name(),
            purpose,
            "identity lookup"
        );
        if outcome != "error" {
            self.audit(tenant, actor_key, purpose, query, outcome, cached)
                .await?;
        }
        let data = result?.ok_or(IdentityError::NotFound(query.kind()))?;
        if !cached {
            self.remember(key, &data);
        }
        Ok(Found {
            data,
            cached,
            provider: self.provider.name(),
        })
    }

    async fn audit(
        &self,
        tenant: i64,
        actor_key: &str,
        purpose: &str,
        query: &LookupQuery,
        outcome: &str,
        cached: bool,
    ) -> Result<(), IdentityError> {
        sqlx::query(
            "INSERT INTO identity_lookups (id, business_id, kind, query_key, query, outcome, \
             provider, cached, purpose, actor_key, at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(new_id())
        .bind(tenant)
        .bind(query.kind().as_str())
        .bind(query.key())
        .bind(query.audited().to_string())
        .bind(outcome)
        .bind(self.provider.name())
        .bind(i64::from(cached))
        .bind(purpose)
        .bind(actor_key)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The tenant's lookups, newest first.
    pub async fn lookups(
        &self,
        tenant: i64,
        kind: Option<LookupKind>,
        limit: i64,
    ) -> Result<Vec<LookupAudit>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, kind, query, outcome, provider, cached, purpose, actor_key, at_ms \
             FROM identity_lookups WHERE business_id = $1 AND ($2 = '' OR kind = $2) \
             ORDER BY seq DESC LIMIT $3",
        )
        .bind(tenant)
        .bind(kind.map_or("", LookupKind::as_str))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                let query: String = row.get(2);
                let cached: i64 = row.get(5);
                Ok(LookupAudit {
                    id: row.get(0),
                    kind: row.get(1),
                    query: serde_json::from_str(&query)
                        .map_err(|e| StoreError::Corrupt(format!("lookup query: {e}")))?,
                    outcome: row.get(3),
                    provider: row.get(4),
                    cached: cached != 0,
                    purpose: row.get(6),
                    actor_key: row.get(7),
                    at: iso_time(row.get(8)),
                })
            })
            .collect()
    }
}

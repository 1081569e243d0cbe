//! API keys: issuing them, and checking the `apiKey`/`apiSecret` headers of every request.
//!
//! The EDD endpoints take the single `Authorization` header of spec part 5 instead
//! ([`require_authorization`]). Vigil reads the spec's `<API_KEY>` there as the same key pair,
//! `<apiKey>:<apiSecret>` — bare, after `Bearer`, or as HTTP Basic credentials (`curl -u
//! key:secret`) — because the key alone is no secret (`vigil keys list` prints it and the store
//! keeps it in clear); only the secret proves the caller.
//!
//! A key pair is random (`vk_…` key, `vs_…` secret, 128 and 256 bits); only the SHA-256 digest of
//! the secret is stored, and it is compared in constant time. Keys are cached in memory
//! (refreshed from the store every [`REFRESH`]); a key the cache does not know is looked up in the
//! store at once, so a key created by `vigil keys create` while the service runs works on its
//! first request, and a revoked key stops working within one refresh.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use crate::store::{Business, KeyRecord, ProcessingMode, Store, StoreError};

pub const REFRESH: Duration = Duration::from_secs(2);

/// The authenticated caller, put in request extensions by [`require_key`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub id: i64,
    pub name: String,
    pub mode: ProcessingMode,
    pub api_key: String,
    pub admin: bool,
}

/// A newly issued key pair; the secret is shown once and never stored.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedKey {
    pub api_key: String,
    pub api_secret: String,
    pub business: String,
    pub role: String,
}

pub fn secret_digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    hex::encode(buffer)
}

/// Creates a key pair for `business` (created if new) and stores its digest.
pub async fn issue_key(
    store: &Store,
    business: &str,
    admin: bool,
) -> Result<IssuedKey, StoreError> {
    let business = store.ensure_business(business).await?;
    let api_key = format!("vk_{}", random_hex(16));
    let api_secret = format!("vs_{}", random_hex(32));
    let role = if admin { "admin" } else { "client" };
    store
        .insert_key(business.id, &api_key, &secret_digest(&api_secret), role)
        .await?;
    Ok(IssuedKey {
        api_key,
        api_secret,
        business: business.name,
        role: role.to_owned(),
    })
}

#[derive(Debug, Clone)]
struct CachedKey {
    digest: [u8; 32],
    tenant: Tenant,
}

fn cached(record: &KeyRecord) -> Option<CachedKey> {
    if record.revoked {
        return None;
    }
    let mut digest = [0u8; 32];
    hex::decode_to_slice(&record.secret_digest, &mut digest).ok()?;
    Some(CachedKey {
        digest,
        tenant: tenant_of(&record.api_key, &record.business, &record.role),
    })
}

fn tenant_of(api_key: &str, business: &Business, role: &str) -> Tenant {
    Tenant {
        id: business.id,
        name: business.name.clone(),
        mode: business.mode,
        api_key: api_key.to_owned(),
        admin: role == "admin",
    }
}

/// The in-memory key table.
pub struct KeyCache {
    store: Store,
    keys: ArcSwap<HashMap<String, CachedKey>>,
}

impl KeyCache {
    pub async fn load(store: Store) -> Result<Arc<KeyCache>, StoreError> {
        let cache = Arc::new(KeyCache {
            store,
            keys: ArcSwap::from_pointee(HashMap::new()),
        });
        cache.refresh().await?;
        Ok(cache)
    }

    pub async fn refresh(&self) -> Result<(), StoreError> {
        let records = self.store.keys().await?;
        let keys = records
            .iter()
            .filter_map(|r| cached(r).map(|c| (r.api_key.clone(), c)))
            .collect();
        self.keys.store(Arc::new(keys));
        Ok(())
    }

    /// Refreshes the table every [`REFRESH`] until the process ends.
    pub fn spawn_refresh(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let cache = self.clone();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(REFRESH);
            loop {
                ticker.tick().await;
                if let Err(error) = cache.refresh().await {
                    tracing::warn!(%error, "api key refresh failed");
                }
            }
        })
    }

    /// Checks a key pair; `Ok(None)` for a missing, unknown, revoked or mismatching pair.
    pub async fn verify(
        &self,
        api_key: &str,
        api_secret: &str,
    ) -> Result<Option<Tenant>, StoreError> {
        let presented: [u8; 32] = Sha256::digest(api_secret.as_bytes()).into();
        if let Some(entry) = self.keys.load().get(api_key) {
            let matches: bool = entry.digest.ct_eq(&presented).into();
            return Ok(matches.then(|| entry.tenant.clone()));
        }
        // Not cached: a key created since the last refresh.
        let Some(record) = self.store.find_key(api_key).await? else {
            return Ok(None);
        };
        let Some(entry) = cached(&record) else {
            return Ok(None);
        };
        let matches: bool = entry.digest.ct_eq(&presented).into();
        if !matches {
            return Ok(None);
        }
        let tenant = entry.tenant.clone();
        self.keys.rcu(|keys| {
            let mut next = HashMap::clone(keys);
            next.insert(api_key.to_owned(), entry.clone());
            next
        });
        Ok(Some(tenant))
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The key pair in an `Authorization` value: `<key>:<secret>`, `Bearer <key>:<secret>` or
/// `Basic base64(<key>:<secret>)`.
pub fn parse_authorization(value: &str) -> Option<(String, String)> {
    use base64::Engine;
    let value = value.trim();
    let pair = match value.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("basic") => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(rest.trim())
                .ok()?;
            String::from_utf8(bytes).ok()?
        }
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim().to_owned(),
        Some(_) => return None,
        None => value.to_owned(),
    };
    let (key, secret) = pair.split_once(':')?;
    let (key, secret) = (key.trim(), secret.trim());
    (!key.is_empty() && !secret.is_empty()).then(|| (key.to_owned(), secret.to_owned()))
}

/// Middleware for the EDD endpoints: demands the key pair in the `Authorization` header (or,
/// as a convenience, the `apiKey`/`apiSecret` pair the other endpoints use).
///
/// An `Authorization` header that is present is the credential, whatever else the request
/// carries: an empty, unreadable or wrong one is refused, never passed over for the other pair.
pub async fn require_authorization(
    State(keys): State<Arc<KeyCache>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let headers = request.headers();
    let pair = match headers.get(axum::http::header::AUTHORIZATION) {
        Some(value) => value.to_str().ok().and_then(parse_authorization),
        None => match (header(headers, "apikey"), header(headers, "apisecret")) {
            (Some(key), Some(secret)) => Some((key.to_owned(), secret.to_owned())),
            _ => None,
        },
    };
    let unauthorized = || {
        ApiError::field(
            axum::http::StatusCode::UNAUTHORIZED,
            "missing or invalid Authorization header",
            "Authorization",
            "expected <apiKey>:<apiSecret> (bare, after Bearer, or as Basic credentials)",
        )
    };
    let Some((api_key, api_secret)) = pair else {
        return Err(unauthorized());
    };
    let Some(tenant) = keys.verify(&api_key, &api_secret).await? else {
        return Err(unauthorized());
    };
    request.extensions_mut().insert(tenant);
    Ok(next.run(request).await)
}

/// Middleware: demands a valid `apiKey` + `apiSecret` pair and records the tenant.
pub async fn require_key(
    State(keys): State<Arc<KeyCache>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let headers = request.headers();
    let (Some(api_key), Some(api_secret)) =
        (header(headers, "apikey"), header(headers, "apisecret"))
    else {
        return Err(ApiError::unauthorized());
    };
    let Some(tenant) = keys.verify(api_key, api_secret).await? else {
        return Err(ApiError::unauthorized());
    };
    request.extensions_mut().insert(tenant);
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_header_takes_the_pair_bare_as_bearer_or_as_basic() {
        let pair = Some(("vk_1".to_owned(), "vs_2".to_owned()));
        assert_eq!(parse_authorization("vk_1:vs_2"), pair);
        assert_eq!(parse_authorization("Bearer vk_1:vs_2"), pair);
        assert_eq!(parse_authorization("bearer  vk_1:vs_2 "), pair);
        // base64("vk_1:vs_2")
        assert_eq!(parse_authorization("Basic dmtfMTp2c18y"), pair);
        assert_eq!(
            parse_authorization("vk_1"),
            None,
            "the key alone is not enough"
        );
        assert_eq!(parse_authorization("Bearer vk_1"), None);
        assert_eq!(parse_authorization("Digest vk_1:vs_2"), None);
        assert_eq!(parse_authorization("Basic !!!"), None);
        assert_eq!(parse_authorization(":vs_2"), None);
    }
}

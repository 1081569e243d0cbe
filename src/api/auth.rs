//! API keys: issuing them, and checking the credentials of every request.
//!
//! Most endpoints take the `apiKey`/`apiSecret` header pair ([`require_key`]). The EDD endpoints
//! take the single `Authorization` header of spec part 5, carrying `<API_KEY>`
//! ([`require_authorization`]): the key alone, bare or after `Bearer`, as the spec's clients send
//! it; the pair `<apiKey>:<apiSecret>` (bare, `Bearer` or HTTP Basic) and the header pair work there
//! too.
//!
//! The key alone can be the credential because the key is a secret too: a key pair is random
//! (`vk_…` key, `vs_…` secret, 128 and 256 bits), and the store keeps only SHA-256 digests of
//! both. A key is found by its digest; what lists, logs and audit records show in its place is
//! its id, the first [`crate::store::KEY_ID_LEN`] characters (`vk_1a2b3c4d`), which cannot be used
//! to call. Keys issued before keys were secrets (stored whole, shown in listings and audit
//! records) authenticate only with their secret: rotate them to use the key alone. Secrets are
//! compared in constant time. Keys are cached in memory (refreshed from the store every
//! [`REFRESH`]); a key the cache does not know is looked up in the store at once, so a key created
//! by `vigil keys create` while the service runs works on its first request, and a revoked key
//! stops working within one refresh.

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
    /// The key's id (never the key): what audit records name as the actor.
    pub key_id: String,
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
    crate::store::sha256_hex(secret)
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
    let role = if admin { "admin" } else { "client" };
    // Ids are the key's first characters (32 random bits): draw again in the rare case of a clash.
    loop {
        let api_key = format!("vk_{}", random_hex(16));
        let api_secret = format!("vs_{}", random_hex(32));
        if store
            .insert_key(business.id, &api_key, &secret_digest(&api_secret), role)
            .await?
        {
            return Ok(IssuedKey {
                api_key,
                api_secret,
                business: business.name,
                role: role.to_owned(),
            });
        }
    }
}

#[derive(Debug, Clone)]
struct CachedKey {
    digest: [u8; 32],
    /// Whether the key alone authenticates (see [`KeyRecord::key_only_allowed`]).
    key_only_allowed: bool,
    tenant: Tenant,
}

fn cached(record: &KeyRecord) -> Option<([u8; 32], CachedKey)> {
    if record.revoked {
        return None;
    }
    let mut key_digest = [0u8; 32];
    hex::decode_to_slice(&record.key_digest, &mut key_digest).ok()?;
    let mut digest = [0u8; 32];
    hex::decode_to_slice(&record.secret_digest, &mut digest).ok()?;
    Some((
        key_digest,
        CachedKey {
            digest,
            key_only_allowed: record.key_only_allowed,
            tenant: tenant_of(&record.key_id, &record.business, &record.role),
        },
    ))
}

fn tenant_of(key_id: &str, business: &Business, role: &str) -> Tenant {
    Tenant {
        id: business.id,
        name: business.name.clone(),
        mode: business.mode,
        key_id: key_id.to_owned(),
        admin: role == "admin",
    }
}

/// The in-memory key table, by the digest of the whole key.
pub struct KeyCache {
    store: Store,
    keys: ArcSwap<HashMap<[u8; 32], CachedKey>>,
}

/// What a request presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// `apiKey` with `apiSecret`: both must match.
    Pair { key: String, secret: String },
    /// The key alone (spec part 5's `Authorization: <API_KEY>`, EDD only).
    Key(String),
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
        let keys = records.iter().filter_map(cached).collect();
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
        self.check_key(api_key, Some(api_secret)).await
    }

    /// Checks a credential; `Ok(None)` for an unknown or revoked key or a mismatching secret.
    pub async fn check(&self, credential: &Credential) -> Result<Option<Tenant>, StoreError> {
        match credential {
            Credential::Pair { key, secret } => self.check_key(key, Some(secret)).await,
            Credential::Key(key) => self.check_key(key, None).await,
        }
    }

    /// The key, with its secret or (`None`) alone.
    async fn check_key(
        &self,
        api_key: &str,
        secret: Option<&str>,
    ) -> Result<Option<Tenant>, StoreError> {
        let key_digest: [u8; 32] = Sha256::digest(api_key.as_bytes()).into();
        if let Some(entry) = self.keys.load().get(&key_digest) {
            return Ok(entry.admits(secret).then(|| entry.tenant.clone()));
        }
        // Not cached: a key created since the last refresh.
        let Some(record) = self.store.find_key(api_key).await? else {
            return Ok(None);
        };
        let Some((digest, entry)) = cached(&record) else {
            return Ok(None);
        };
        let admitted = entry.admits(secret);
        let tenant = entry.tenant.clone();
        self.keys.rcu(|keys| {
            let mut next = HashMap::clone(keys);
            next.insert(digest, entry.clone());
            next
        });
        Ok(admitted.then_some(tenant))
    }
}

impl CachedKey {
    /// Whether `secret` (or the key alone, `None`) proves the caller.
    fn admits(&self, secret: Option<&str>) -> bool {
        match secret {
            Some(secret) => {
                let presented: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
                self.digest.ct_eq(&presented).into()
            }
            // A key issued before keys were secrets was shown whole: it needs its secret.
            None => self.key_only_allowed,
        }
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The credential in an `Authorization` value: `<key>`, `<key>:<secret>`, either after
/// `Bearer`, or `Basic base64(<key>:<secret>)` (an empty password: the key alone).
pub fn parse_authorization(value: &str) -> Option<Credential> {
    use base64::Engine;
    let value = value.trim();
    if value.eq_ignore_ascii_case("bearer") || value.eq_ignore_ascii_case("basic") {
        return None;
    }
    let text = match value.split_once(' ') {
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
    match text.split_once(':') {
        Some((key, secret)) => {
            let (key, secret) = (key.trim(), secret.trim());
            if key.is_empty() {
                None
            } else if secret.is_empty() {
                Some(Credential::Key(key.to_owned()))
            } else {
                Some(Credential::Pair {
                    key: key.to_owned(),
                    secret: secret.to_owned(),
                })
            }
        }
        None => {
            let key = text.trim();
            (!key.is_empty()).then(|| Credential::Key(key.to_owned()))
        }
    }
}

/// Middleware for the EDD endpoints: demands the credential in the `Authorization` header — the
/// key alone as spec part 5 has it, or the key pair — or, as a convenience, the
/// `apiKey`/`apiSecret` pair the other endpoints use.
///
/// An `Authorization` header that is present is the credential, whatever else the request
/// carries: an empty, unreadable or wrong one is refused, never passed over for the other pair.
pub async fn require_authorization(
    State(keys): State<Arc<KeyCache>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let headers = request.headers();
    let credential = match headers.get(axum::http::header::AUTHORIZATION) {
        Some(value) => value.to_str().ok().and_then(parse_authorization),
        None => match (header(headers, "apikey"), header(headers, "apisecret")) {
            (Some(key), Some(secret)) => Some(Credential::Pair {
                key: key.to_owned(),
                secret: secret.to_owned(),
            }),
            _ => None,
        },
    };
    let unauthorized = || {
        ApiError::field(
            axum::http::StatusCode::UNAUTHORIZED,
            "missing or invalid Authorization header",
            "Authorization",
            "expected <apiKey> or <apiKey>:<apiSecret> (bare, after Bearer, or as Basic credentials)",
        )
    };
    let Some(credential) = credential else {
        return Err(unauthorized());
    };
    let Some(tenant) = keys.check(&credential).await? else {
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
    fn the_authorization_header_takes_the_key_or_the_pair_bare_as_bearer_or_as_basic() {
        let pair = Some(Credential::Pair {
            key: "vk_1".to_owned(),
            secret: "vs_2".to_owned(),
        });
        let key = Some(Credential::Key("vk_1".to_owned()));
        assert_eq!(parse_authorization("vk_1:vs_2"), pair);
        assert_eq!(parse_authorization("Bearer vk_1:vs_2"), pair);
        assert_eq!(parse_authorization("bearer  vk_1:vs_2 "), pair);
        // base64("vk_1:vs_2")
        assert_eq!(parse_authorization("Basic dmtfMTp2c18y"), pair);
        assert_eq!(
            parse_authorization("vk_1"),
            key,
            "the spec's form: the key alone"
        );
        assert_eq!(parse_authorization("Bearer vk_1"), key);
        // base64("vk_1:"): a user name without a password
        assert_eq!(parse_authorization("Basic dmtfMTo="), key);
        assert_eq!(parse_authorization("Digest vk_1:vs_2"), None);
        assert_eq!(parse_authorization("Basic !!!"), None);
        assert_eq!(parse_authorization(":vs_2"), None);
        assert_eq!(parse_authorization("Bearer "), None);
        assert_eq!(parse_authorization(""), None);
    }
}

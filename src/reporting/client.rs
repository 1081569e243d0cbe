//! The client's reporting endpoint (spec §4.6): its address and authentication per business,
//! the address checks that keep Vigil from being pointed at internal services (SSRF), request
//! signing, and one call for one batch of IDs.
//!
//! Address checks: http(s) only, no credentials in the URL; link-local addresses (which include
//! cloud metadata services at 169.254.169.254), unspecified, multicast and broadcast addresses
//! and well-known metadata host names are always refused; loopback and private ranges (10/8,
//! 172.16/12, 192.168/16, 100.64/10, fc00::/7) are refused unless `allow_private_callbacks` is
//! set. Host names are resolved and every address checked, at configuration and again at each
//! call, and the call connects to the address that was checked (no second resolution), and
//! follows no redirects.
//!
//! Authentication (spec §5 leaves it open): an API-key header (`{"type": "api-key", "header":
//! "x-api-key", "value": "…"}`), or an HMAC-SHA256 signature (`{"type": "hmac", "secret":
//! "…"}`) sent as `X-Vigil-Timestamp: <unix seconds>` and `X-Vigil-Signature: sha256=<hex of
//! HMAC(secret, "<timestamp>.GET.<path>?<query>")>`.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::goaml::ReportRecord;
use crate::model::FieldError;

pub const SIGNATURE_HEADER: &str = "X-Vigil-Signature";
pub const TIMESTAMP_HEADER: &str = "X-Vigil-Timestamp";
pub const SEND_TRANSACTION_PATH: &str = "/api/v1/reporting/send-transaction";

/// How Vigil authenticates to the client endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ClientAuth {
    ApiKey { header: String, value: String },
    Hmac { secret: String },
}

impl ClientAuth {
    /// Validates the `auth` object of the config request.
    pub fn parse(value: &Value) -> Result<ClientAuth, Vec<FieldError>> {
        let kind = value.get("type").and_then(Value::as_str);
        let text = |field: &str| value.get(field).and_then(Value::as_str).map(str::trim);
        let allowed: &[&str] = match kind {
            Some("api-key") => &["type", "header", "value"],
            Some("hmac") => &["type", "secret"],
            _ => {
                return Err(vec![FieldError::new(
                    "auth.type",
                    "must be api-key or hmac",
                )])
            }
        };
        let mut errors: Vec<FieldError> = value
            .as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| !allowed.contains(&k.as_str()))
                    .map(|k| FieldError::new(format!("auth.{k}"), "unknown field"))
                    .collect()
            })
            .unwrap_or_default();
        let auth = if kind == Some("api-key") {
            let header = text("header").unwrap_or("");
            let secret = text("value").unwrap_or("");
            if header.is_empty()
                || header.len() > 64
                || !header
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                errors.push(FieldError::new(
                    "auth.header",
                    "must be a header name (letters, digits, - and _)",
                ));
            }
            if secret.is_empty() || secret.len() > 512 || secret.chars().any(char::is_control) {
                errors.push(FieldError::new(
                    "auth.value",
                    "must be 1-512 characters without control characters",
                ));
            }
            ClientAuth::ApiKey {
                header: header.to_owned(),
                value: secret.to_owned(),
            }
        } else {
            let secret = text("secret").unwrap_or("");
            if secret.len() < 16 || secret.len() > 512 {
                errors.push(FieldError::new("auth.secret", "must be 16-512 characters"));
            }
            ClientAuth::Hmac {
                secret: secret.to_owned(),
            }
        };
        if errors.is_empty() {
            Ok(auth)
        } else {
            Err(errors)
        }
    }

    /// The form the API shows: secrets masked.
    pub fn masked(&self) -> Value {
        match self {
            ClientAuth::ApiKey { header, .. } => {
                serde_json::json!({"type": "api-key", "header": header, "value": "********"})
            }
            ClientAuth::Hmac { .. } => serde_json::json!({"type": "hmac", "secret": "********"}),
        }
    }
}

/// HMAC-SHA256 (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// The signature header value for a request to `path_and_query` at `timestamp`.
pub fn signature(secret: &str, timestamp: i64, path_and_query: &str) -> String {
    let message = format!("{timestamp}.GET.{path_and_query}");
    format!(
        "sha256={}",
        hex::encode(hmac_sha256(secret.as_bytes(), message.as_bytes()))
    )
}

/// Why an address may not be called; `None` when it may.
pub fn ip_problem(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_link_local() {
                return Some("is link-local (cloud metadata services live there)");
            }
            if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || o[0] == 0 {
                return Some("is not a unicast address");
            }
            let private = v4.is_loopback()
                || v4.is_private()
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0);
            (private && !allow_private)
                .then_some("is loopback or private (set allow_private_callbacks to allow it)")
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            if (s[0] & 0xffc0) == 0xfe80 {
                return Some("is link-local (cloud metadata services live there)");
            }
            if v6.is_unspecified() || v6.is_multicast() {
                return Some("is not a unicast address");
            }
            let private = v6.is_loopback() || (s[0] & 0xfe00) == 0xfc00;
            (private && !allow_private)
                .then_some("is loopback or private (set allow_private_callbacks to allow it)")
        }
    }
}

const METADATA_HOSTS: &[&str] = &["metadata.google.internal", "metadata", "instance-data"];

/// Checks a client URL's form (no resolution).
pub fn check_url(raw: &str, allow_private: bool) -> Result<url::Url, String> {
    let url = url::Url::parse(raw.trim()).map_err(|e| format!("is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https URL".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials (use auth)".to_owned());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".to_owned());
    }
    match url.host() {
        None => return Err("has no host".to_owned()),
        Some(url::Host::Ipv4(ip)) => {
            if let Some(problem) = ip_problem(IpAddr::V4(ip), allow_private) {
                return Err(format!("host {ip} {problem}"));
            }
        }
        Some(url::Host::Ipv6(ip)) => {
            if let Some(problem) = ip_problem(IpAddr::V6(ip), allow_private) {
                return Err(format!("host {ip} {problem}"));
            }
        }
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if METADATA_HOSTS.contains(&name.as_str()) {
                return Err(format!("host {name} is a metadata service"));
            }
            if (name == "localhost" || name.ends_with(".localhost")) && !allow_private {
                return Err(format!(
                    "host {name} is loopback (set allow_private_callbacks to allow it)"
                ));
            }
        }
    }
    Ok(url)
}

/// Resolves the URL's host and checks every address; answers the address to connect to.
pub async fn resolve(url: &url::Url, allow_private: bool) -> Result<SocketAddr, String> {
    let host = url.host_str().ok_or("has no host")?;
    let port = url.port_or_known_default().ok_or("has no port")?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("host {host} does not resolve ({e})"))?
        .collect();
    let first = *addrs.first().ok_or(format!("host {host} has no address"))?;
    for addr in &addrs {
        if let Some(problem) = ip_problem(addr.ip(), allow_private) {
            return Err(format!(
                "host {host} resolves to {} which {problem}",
                addr.ip()
            ));
        }
    }
    Ok(first)
}

/// A failed call: whether trying again may help, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub retryable: bool,
    pub message: String,
}

fn fail(retryable: bool, message: impl Into<String>) -> CallError {
    CallError {
        retryable,
        message: message.into(),
    }
}

/// One call for one batch: the records the client answered, each parsed (or the problem).
pub async fn fetch_batch(
    client_url: &str,
    auth: &ClientAuth,
    ids: &[String],
    timeout: Duration,
    allow_private: bool,
) -> Result<Vec<Result<ReportRecord, (Option<String>, String)>>, CallError> {
    let base =
        check_url(client_url, allow_private).map_err(|e| fail(false, format!("clientUrl {e}")))?;
    let addr = resolve(&base, allow_private)
        .await
        .map_err(|e| fail(true, format!("clientUrl {e}")))?;
    let mut url = base.clone();
    let path = format!(
        "{}{SEND_TRANSACTION_PATH}",
        base.path().trim_end_matches('/')
    );
    url.set_path(&path);
    url.query_pairs_mut()
        .append_pair("transactionId", &ids.join(","));
    let host = base.host_str().unwrap_or_default().to_owned();
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .resolve(&host, addr)
        .build()
        .map_err(|e| fail(false, format!("cannot build the HTTP client: {e}")))?;
    let mut request = client.get(url.clone()).header("Accept", "application/json");
    match auth {
        ClientAuth::ApiKey { header, value } => request = request.header(header.as_str(), value),
        ClientAuth::Hmac { secret } => {
            let timestamp = chrono::Utc::now().timestamp();
            let path_and_query = match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_owned(),
            };
            request = request
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(
                    SIGNATURE_HEADER,
                    signature(secret, timestamp, &path_and_query),
                );
        }
    }
    let response = request
        .send()
        .await
        .map_err(|e| fail(true, format!("client endpoint unreachable: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        let retryable = status.is_server_error()
            || status == reqwest::StatusCode::TOO_MANY_REQUESTS
            || status == reqwest::StatusCode::REQUEST_TIMEOUT;
        return Err(fail(
            retryable,
            format!("client endpoint answered HTTP {}", status.as_u16()),
        ));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| fail(true, format!("client endpoint answer is not JSON: {e}")))?;
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| fail(true, "client endpoint answer has no data array"))?;
    Ok(data
        .iter()
        .map(|item| {
            let number = item
                .get("transactionNumber")
                .and_then(Value::as_str)
                .map(str::to_owned);
            serde_json::from_value::<ReportRecord>(item.clone())
                .map_err(|e| (number, format!("record does not match §2.10: {e}")))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn metadata_and_link_local_addresses_are_always_refused_and_private_ones_by_default() {
        for url in [
            "http://169.254.169.254/latest",
            "http://[fe80::1]/",
            "http://metadata.google.internal/",
            "http://0.0.0.0/",
        ] {
            assert!(check_url(url, true).is_err(), "{url} must be refused");
        }
        for url in [
            "http://127.0.0.1:9000",
            "http://10.1.2.3",
            "http://localhost:8080",
            "http://[::1]/",
            "http://[::ffff:192.168.1.1]/",
        ] {
            assert!(check_url(url, false).is_err(), "{url} is private");
            assert!(
                check_url(url, true).is_ok(),
                "{url} is allowed with the switch"
            );
        }
        assert!(check_url("https://reports.acme-bank.ng", false).is_ok());
        assert!(check_url("ftp://example.com", true).is_err());
        assert!(check_url("https://user:pw@example.com", true).is_err());
    }

    #[test]
    fn auth_is_validated_and_shown_masked() {
        let auth = ClientAuth::parse(
            &serde_json::json!({"type": "api-key", "header": "x-api-key", "value": "k1"}),
        )
        .expect("valid");
        assert_eq!(auth.masked()["value"], "********");
        let errors = ClientAuth::parse(&serde_json::json!({"type": "hmac", "secret": "short"}))
            .expect_err("short secret");
        assert_eq!(errors[0].field, "auth.secret");
        let errors =
            ClientAuth::parse(&serde_json::json!({"type": "basic"})).expect_err("unknown type");
        assert_eq!(errors[0].field, "auth.type");
    }
}

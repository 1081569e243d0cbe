//! The client's reporting endpoint (spec §4.6): its address and authentication per business,
//! request signing, and one call for one batch of IDs.
//!
//! Addresses follow Vigil's one outbound policy ([`crate::outbound`]), the same as webhooks and
//! callbacks: http(s) only, no credentials, query or fragment in the URL; link-local, metadata,
//! reserved, documentation and benchmarking addresses (in any IPv4-mapped, -compatible, NAT64 or
//! 6to4 form) always refused; loopback and private ranges refused unless
//! `allow_private_callbacks` is set. The host is resolved and every address checked when the
//! configuration is stored ([`check_configured`]) and again at each call, by the outbound client's
//! resolver, which connects only to the addresses it checked; no proxy, no redirects.
//!
//! Authentication (spec §5 leaves it open): an API-key header (`{"type": "api-key", "header":
//! "x-api-key", "value": "…"}`), or an HMAC-SHA256 signature (`{"type": "hmac", "secret":
//! "…"}`) sent as `X-Vigil-Timestamp: <unix seconds>` and `X-Vigil-Signature: sha256=<hex of
//! HMAC(secret, "<timestamp>.GET.<path>?<query>")>`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::goaml::ReportRecord;
use crate::model::FieldError;
use crate::outbound::{self, policy, OutboundClient, OutboundError};

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

/// The signature header value for a request to `path_and_query` at `timestamp`.
pub fn signature(secret: &str, timestamp: i64, path_and_query: &str) -> String {
    let message = format!("{timestamp}.GET.{path_and_query}");
    format!(
        "sha256={}",
        outbound::sign::hmac_sha256_hex(secret.as_bytes(), &[message.as_bytes()])
    )
}

/// Checks a client URL's form: the outbound policy's (http(s), no credentials, a host, a literal
/// address's class) and no query or fragment (Vigil adds its own query).
pub fn check_url(raw: &str, allow_private: bool) -> Result<url::Url, String> {
    let url = policy::parse_url(raw).map_err(|e| e.to_string())?;
    policy::check_url(&url, allow_private).map_err(|e| e.to_string())?;
    without_query(url)
}

/// The configuration-time check: the form, then every address the host resolves to.
pub async fn check_configured(raw: &str, allow_private: bool) -> Result<url::Url, String> {
    let checked = policy::resolve_checked(raw, allow_private)
        .await
        .map_err(|e| e.to_string())?;
    without_query(checked.url)
}

fn without_query(url: url::Url) -> Result<url::Url, String> {
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".to_owned());
    }
    Ok(url)
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

/// Most bytes of one answer (100 records of §2.10 are far less).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// One call for one batch: the records the client answered, each parsed (or the problem).
pub async fn fetch_batch(
    client: &OutboundClient,
    client_url: &str,
    auth: &ClientAuth,
    ids: &[String],
) -> Result<Vec<Result<ReportRecord, (Option<String>, String)>>, CallError> {
    let base = check_url(client_url, client.policy().allow_private)
        .map_err(|e| fail(false, format!("clientUrl {e}")))?;
    let mut url = base.clone();
    let path = format!(
        "{}{SEND_TRANSACTION_PATH}",
        base.path().trim_end_matches('/')
    );
    url.set_path(&path);
    url.query_pairs_mut()
        .append_pair("transactionId", &ids.join(","));
    let called = |error: OutboundError| {
        let retryable = error.is_retryable();
        match error {
            OutboundError::Refused(refused) => fail(retryable, format!("clientUrl {refused}")),
            other => fail(retryable, format!("client endpoint unreachable: {other}")),
        }
    };
    let mut request = client
        .request(reqwest::Method::GET, &url)
        .map_err(called)?
        .header("Accept", "application/json");
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
    let response = client.send(request).await.map_err(called)?;
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
    let bytes = outbound::read_limited(response, MAX_ANSWER_BYTES)
        .await
        .map_err(|e| fail(e.is_retryable(), format!("client endpoint answer: {e}")))?;
    let body: Value = serde_json::from_slice(&bytes)
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
    fn the_signature_is_hmac_sha256_of_timestamp_method_and_path() {
        // RFC 4231 test case 2's key and the message this signature signs.
        let header = signature("Jefe", 7, "/p?q=1");
        assert_eq!(
            header,
            format!(
                "sha256={}",
                outbound::sign::hmac_sha256_hex(b"Jefe", &[b"7.GET./p?q=1"])
            )
        );
        assert_eq!(header.len(), "sha256=".len() + 64);
    }

    #[test]
    fn metadata_and_link_local_addresses_are_always_refused_and_private_ones_by_default() {
        for url in [
            "http://169.254.169.254/latest",
            "http://[fe80::1]/",
            "http://0.0.0.0/",
            "http://[64:ff9b::a9fe:a9fe]/",
        ] {
            assert!(check_url(url, true).is_err(), "{url} must be refused");
        }
        for url in [
            "http://127.0.0.1:9000",
            "http://10.1.2.3",
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
        assert!(check_url("https://reports.acme-bank.ng/?a=1", false).is_err());
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

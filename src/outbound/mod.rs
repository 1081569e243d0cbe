//! Outbound HTTP: the one way Vigil calls an address a client or an operator gave.
//!
//! Every such call — webhook and risk-monitoring callback deliveries ([`crate::webhooks`]), the FIU
//! reporting fetch ([`crate::reporting`]), the identity upstream ([`crate::identity`]) and list
//! downloads ([`crate::screening`]) — goes through an [`OutboundClient`]. Data flow of one call:
//! the URL is parsed and checked ([`policy::parse_url`]: http(s), no credentials, a host; a
//! literal address is classified at once), then the request goes out on a client that
//!
//! - resolves host names with [`policy`]'s resolver, which classifies *every* address a name
//!   resolves to and hands the connection exactly those (so a DNS answer cannot change between
//!   check and connect: the check is the resolution);
//! - uses no proxy (a proxy would resolve the host itself, out of the policy's reach), follows no
//!   redirects (list downloads follow a few, each hop checked the same way), and bounds connect
//!   and whole-request time;
//! - reads answers through [`read_limited`], so an enormous answer is cut off, not buffered.
//!
//! Signatures of what is sent are HMAC-SHA256 from the `hmac` crate ([`sign`]).
//!
//! Which addresses are refused is [`policy`]'s one table; whether loopback and private ranges are
//! allowed is the caller's [`AddressPolicy`]: client-given addresses follow
//! `allow_private_callbacks`, operator-given ones `outbound.allow_private_upstreams`.

pub mod policy;
pub mod sign;

use std::error::Error as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use policy::{resolve_checked, CheckedUrl, SsrfError};

/// `[outbound]`: the address policy of the URLs an operator configures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutboundConfig {
    /// Allow the identity upstream and list download URLs of this file on loopback and private
    /// addresses (an internal gateway or mirror). Link-local, metadata and reserved addresses
    /// stay refused. Off by default. Client-given URLs (webhooks, callbacks, the reporting
    /// `clientUrl`) follow `allow_private_callbacks` instead.
    pub allow_private_upstreams: bool,
}

/// Whether loopback and private ranges may be called (never link-local, metadata or reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressPolicy {
    pub allow_private: bool,
}

/// Why an outbound call failed. The messages never carry the URL (it may hold a token).
#[derive(Debug, Error)]
pub enum OutboundError {
    #[error("url {0}")]
    Refused(#[from] SsrfError),
    #[error("timed out")]
    Timeout,
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("answer larger than {0} bytes")]
    TooLarge(usize),
    #[error("request failed: {0}")]
    Request(String),
    #[error("cannot build the HTTP client: {0}")]
    Build(String),
}

impl OutboundError {
    /// Whether trying again later may help (a refused address or an oversized answer will not).
    pub fn is_retryable(&self) -> bool {
        match self {
            OutboundError::Refused(SsrfError::Unresolved(_)) => true,
            OutboundError::Refused(_) | OutboundError::TooLarge(_) | OutboundError::Build(_) => {
                false
            }
            OutboundError::Timeout | OutboundError::Connect(_) | OutboundError::Request(_) => true,
        }
    }

    fn from_reqwest(error: reqwest::Error) -> OutboundError {
        // A refusal by the resolver travels inside reqwest's connect error.
        let mut source = error.source();
        while let Some(inner) = source {
            if let Some(refused) = inner.downcast_ref::<SsrfError>() {
                return OutboundError::Refused(refused.clone());
            }
            source = inner.source();
        }
        if error.is_timeout() {
            return OutboundError::Timeout;
        }
        let connect = error.is_connect();
        let text = describe(error);
        if connect {
            OutboundError::Connect(text)
        } else {
            OutboundError::Request(text)
        }
    }
}

/// reqwest's message without the URL (it may carry a token), with its causes, lower-cased.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text.to_lowercase()
}

/// The resolver of every outbound client: resolves, then classifies every address.
struct CheckingResolver {
    policy: AddressPolicy,
}

impl reqwest::dns::Resolve for CheckingResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let allow_private = self.policy.allow_private;
        Box::pin(async move {
            let addrs = policy::resolve_host(&host, 0, allow_private).await?;
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// How one client behaves.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The whole request (connect, send, answer headers) unless a request sets its own.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub user_agent: &'static str,
    /// Redirects followed (0: none, an answer like any other). Each hop's URL passes the same
    /// policy: its form and a literal address here, a name at its resolution.
    pub redirects: usize,
}

impl ClientOptions {
    pub fn new(timeout: Duration, user_agent: &'static str) -> ClientOptions {
        ClientOptions {
            timeout,
            connect_timeout: timeout.min(Duration::from_secs(10)),
            user_agent,
            redirects: 0,
        }
    }

    /// Follows up to `redirects` hops (for downloads from operator-given URLs behind a CDN).
    pub fn with_redirects(mut self, redirects: usize) -> ClientOptions {
        self.redirects = redirects;
        self
    }
}

/// The redirect policy: none, or up to `limit` hops each of which passes the address policy.
fn redirect_policy(limit: usize, policy: AddressPolicy) -> reqwest::redirect::Policy {
    if limit == 0 {
        return reqwest::redirect::Policy::none();
    }
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > limit {
            return attempt.error(format!("more than {limit} redirects"));
        }
        match policy::check_url(attempt.url(), policy.allow_private) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        }
    })
}

/// An HTTP client bound to an address policy. Cheap to clone (one connection pool).
#[derive(Clone)]
pub struct OutboundClient {
    client: reqwest::Client,
    policy: AddressPolicy,
}

impl std::fmt::Debug for OutboundClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundClient")
            .field("policy", &self.policy)
            .finish()
    }
}

impl OutboundClient {
    pub fn new(policy: AddressPolicy, options: ClientOptions) -> Result<Self, OutboundError> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirect_policy(options.redirects, policy))
            .timeout(options.timeout)
            .connect_timeout(options.connect_timeout)
            .user_agent(options.user_agent)
            .dns_resolver(Arc::new(CheckingResolver { policy }))
            .build()
            .map_err(|e| OutboundError::Build(e.to_string()))?;
        Ok(OutboundClient { client, policy })
    }

    pub fn policy(&self) -> AddressPolicy {
        self.policy
    }

    /// Checks `url` (scheme, credentials, host, a literal address's class) and starts a
    /// request to it. Names are checked when the connection resolves them.
    pub fn request(
        &self,
        method: reqwest::Method,
        url: &url::Url,
    ) -> Result<reqwest::RequestBuilder, OutboundError> {
        policy::check_url(url, self.policy.allow_private)?;
        Ok(self.client.request(method, url.clone()))
    }

    /// Sends a request made by [`Self::request`].
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, OutboundError> {
        request.send().await.map_err(OutboundError::from_reqwest)
    }
}

/// Reads an answer's body, refusing one larger than `max_bytes` without buffering the rest.
pub async fn read_limited(
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Bytes, OutboundError> {
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes as u64)
    {
        return Err(OutboundError::TooLarge(max_bytes));
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(OutboundError::from_reqwest)?
    {
        if body.len() + chunk.len() > max_bytes {
            return Err(OutboundError::TooLarge(max_bytes));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(allow_private: bool) -> OutboundClient {
        OutboundClient::new(
            AddressPolicy { allow_private },
            ClientOptions::new(Duration::from_secs(2), "vigil-test/1"),
        )
        .expect("client")
    }

    #[tokio::test]
    async fn a_literal_refused_address_fails_before_any_connection() {
        let url = url::Url::parse("http://[64:ff9b::a9fe:a9fe]/x").expect("url");
        let error = client(true)
            .request(reqwest::Method::GET, &url)
            .expect_err("refused");
        assert!(
            matches!(
                error,
                OutboundError::Refused(SsrfError::Refused(_, "cloud metadata"))
            ),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_refused_address_is_refused_by_the_resolver() {
        let url = url::Url::parse("http://localhost:9/x").expect("url");
        let client = client(false);
        let request = client
            .request(reqwest::Method::GET, &url)
            .expect("a name passes the literal check");
        let error = client.send(request).await.expect_err("refused");
        assert!(
            matches!(
                error,
                OutboundError::Refused(SsrfError::Refused(_, "loopback"))
            ),
            "{error}"
        );
        assert!(!error.is_retryable());
    }

    /// A one-request HTTP server on loopback that reads the request and writes `answer`;
    /// answers its port.
    async fn serve_once(answer: Vec<u8>) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            if let Ok((mut socket, _)) = listener.accept().await {
                let mut buffer = [0u8; 1024];
                let _ = socket.read(&mut buffer).await;
                let _ = socket.write_all(&answer).await;
            }
        });
        port
    }

    #[tokio::test]
    async fn an_allowed_name_connects_to_the_address_it_resolved_to() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_vec(),
        )
        .await;
        let url = url::Url::parse(&format!("http://localhost:{port}/x")).expect("url");
        let client = client(true);
        let request = client.request(reqwest::Method::GET, &url).expect("allowed");
        let response = client.send(request).await.expect("answered");
        assert_eq!(response.status(), 200);
        assert_eq!(&read_limited(response, 10).await.expect("body")[..], b"ok");
    }

    #[tokio::test]
    async fn redirects_are_answers_unless_followed_and_a_followed_hop_passes_the_policy() {
        let to_metadata = b"HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/latest\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec();
        let port = serve_once(to_metadata.clone()).await;
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/list")).expect("url");
        let plain = client(true);
        let response = plain
            .send(plain.request(reqwest::Method::GET, &url).expect("allowed"))
            .await
            .expect("answered");
        assert_eq!(response.status(), 302, "not followed");

        let port = serve_once(to_metadata).await;
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/list")).expect("url");
        let following = OutboundClient::new(
            AddressPolicy {
                allow_private: true,
            },
            ClientOptions::new(Duration::from_secs(2), "vigil-test/1").with_redirects(3),
        )
        .expect("client");
        let error = following
            .send(
                following
                    .request(reqwest::Method::GET, &url)
                    .expect("allowed"),
            )
            .await
            .expect_err("the hop is refused");
        assert!(
            matches!(
                error,
                OutboundError::Refused(SsrfError::Refused(_, "cloud metadata"))
            ),
            "{error}"
        );

        let ok = serve_once(
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_vec(),
        )
        .await;
        let hop = serve_once(
            format!(
                "HTTP/1.1 301 Moved\r\nlocation: http://127.0.0.1:{ok}/list\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            .into_bytes(),
        )
        .await;
        let url = url::Url::parse(&format!("http://127.0.0.1:{hop}/list")).expect("url");
        let response = following
            .send(
                following
                    .request(reqwest::Method::GET, &url)
                    .expect("allowed"),
            )
            .await
            .expect("followed");
        assert_eq!(response.status(), 200);
    }

    #[tokio::test]
    async fn an_answer_over_the_limit_is_refused() {
        // Chunked, so no content-length gives the size away up front: 64 chunks of 1 KiB.
        let mut answer = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..64 {
            answer.extend_from_slice(b"400\r\n");
            answer.extend_from_slice(&[b'x'; 1024]);
            answer.extend_from_slice(b"\r\n");
        }
        answer.extend_from_slice(b"0\r\n\r\n");
        let port = serve_once(answer).await;
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/big")).expect("url");
        let client = client(true);
        let response = client
            .send(client.request(reqwest::Method::GET, &url).expect("allowed"))
            .await
            .expect("answered");
        let error = read_limited(response, 16 * 1024)
            .await
            .expect_err("too large");
        assert!(matches!(error, OutboundError::TooLarge(16384)), "{error}");
    }
}

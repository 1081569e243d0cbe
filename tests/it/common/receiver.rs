//! A webhook receiver for the tests: an axum server on loopback that verifies every delivery's
//! signature and answers what the test scripted — a status code, or silence past Vigil's timeout —
//! then 200 once the script is used up.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;

/// What the receiver answers to one request.
#[derive(Debug, Clone, Copy)]
pub enum Reply {
    Status(u16),
    /// Answers nothing for this long (then 200, which Vigil no longer waits for).
    Hang(Duration),
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub delivery: String,
    pub event: String,
    /// Whether the `x-vigil-signature` header verified against the receiver's secret.
    pub signature_valid: bool,
    pub body: Bytes,
    /// What the receiver answered (200 for a success).
    pub answered: u16,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Inner {
    secret: Mutex<String>,
    script: Mutex<VecDeque<Reply>>,
    /// When set, every request gets this after the script is used up (instead of 200).
    fallback: Mutex<Option<Reply>>,
    received: Mutex<Vec<Received>>,
}

pub struct Receiver {
    pub base: String,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let signature = header("x-vigil-signature");
    let secret = inner.secret.lock().expect("lock").clone();
    let now = chrono::Utc::now().timestamp();
    let signature_valid = vigil::webhooks::verify_signature(&secret, &signature, &body, now, 300);
    let reply = {
        let next = inner.script.lock().expect("lock").pop_front();
        next.or(*inner.fallback.lock().expect("lock"))
            .unwrap_or(Reply::Status(200))
    };
    let answered = match reply {
        Reply::Status(code) => code,
        Reply::Hang(_) => 0,
    };
    inner.received.lock().expect("lock").push(Received {
        path: uri.path().to_owned(),
        delivery: header("x-vigil-delivery"),
        event: header("x-vigil-event"),
        signature_valid,
        body,
        answered,
    });
    match reply {
        Reply::Status(code) => StatusCode::from_u16(code).expect("a status code"),
        Reply::Hang(duration) => {
            tokio::time::sleep(duration).await;
            StatusCode::OK
        }
    }
}

impl Receiver {
    /// Starts a receiver on a free loopback port that verifies signatures made with `secret`.
    pub async fn start(secret: &str) -> Receiver {
        let inner = Arc::new(Inner::default());
        *inner.secret.lock().expect("lock") = secret.to_owned();
        let app = axum::Router::new()
            .route("/{*path}", post(handle))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { base, inner, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Answers these, in order, to the next requests.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().expect("lock").extend(replies);
    }

    /// Answers `reply` to every request once the script is used up (`None`: 200).
    pub fn always(&self, reply: Option<Reply>) {
        *self.inner.fallback.lock().expect("lock") = reply;
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().expect("lock").clone()
    }

    /// Waits until `done` holds for what was received (a 60 s safety net, not a timing claim).
    pub async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        for _ in 0..6_000 {
            let received = self.received();
            if done(&received) {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the receiver never saw {what}: {:#?}", self.received());
    }
}

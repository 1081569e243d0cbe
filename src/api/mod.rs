//! The HTTP API: one axum router serving every endpoint on one port.
//!
//! Authenticated routes (spec part 5: `apiKey` + `apiSecret`) sit behind [`auth::require_key`];
//! `/healthz`, `/readyz`, `/metrics` and `/openapi.json` are open for probes and scrapers. Each
//! route records its latency and status class with metric handles resolved when the router is
//! built. Handlers for transactions live in `sources::http`; lists and devices in [`lists`];
//! operator endpoints in [`admin`]; cases, CDD customers, EDD requests and the audit trail in
//! their own modules (`crate::cases::api`, `crate::cdd::api`, `crate::edd::api`,
//! `crate::audit::api`). The EDD routes take the single `Authorization` header of spec part 5
//! ([`auth::require_authorization`]) and add `success: false` to their error bodies.

pub mod admin;
pub mod auth;
pub mod error;
pub mod extract;
pub mod fields;
pub mod lists;
pub mod openapi;
pub mod screening;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, MethodRouter};
use axum::{Json, Router};

use crate::cases::api as cases;
use crate::cdd::api as cdd;
use crate::config::Settings;
use crate::edd::api as edd;
use crate::engine::rules::reload::RulesManager;
use crate::engine::Engine;
use crate::metrics::Metrics;
use crate::screening::manager::ListsManager;
use crate::sinks::store::StoreSink;
use crate::sources::http as intake;
use crate::store::Store;

/// Everything handlers share, behind one `Arc`: axum clones the state for every extractor and
/// middleware of every request, and one reference count is cheaper than one per service.
#[derive(Clone)]
pub struct AppState(Arc<AppServices>);

impl AppState {
    pub fn new(services: AppServices) -> Self {
        AppState(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = AppServices;

    fn deref(&self) -> &AppServices {
        &self.0
    }
}

/// The services themselves (see [`AppState`]).
pub struct AppServices {
    pub settings: Arc<Settings>,
    pub store: Store,
    pub engine: Arc<Engine>,
    pub writer: StoreSink,
    pub keys: Arc<auth::KeyCache>,
    pub rules: Arc<RulesManager>,
    pub screening: Arc<ListsManager>,
    pub metrics: Arc<Metrics>,
    /// Identity and registry lookups (issue 7).
    pub identity: Arc<crate::identity::IdentityService>,
    /// FIU reporting (issue 7).
    pub reporting: Arc<crate::reporting::ReportingService>,
    /// Webhook configuration and the outbox's wake-up.
    pub webhooks: crate::webhooks::Webhooks,
    /// Asynchronous AML: requests, risk-monitoring checks, the adverse-media index.
    pub aml: Arc<crate::monitoring::Aml>,
    /// With Kafka: announces list, device and rule changes to the other instances.
    pub control: Option<Arc<crate::sources::kafka::control::ControlBus>>,
}

fn observed(
    metrics: &Metrics,
    route: &str,
    handler: MethodRouter<AppState>,
) -> MethodRouter<AppState> {
    let route_metrics = metrics.route(route);
    handler.layer(middleware::from_fn(move |request: Request, next: Next| {
        let route_metrics = route_metrics.clone();
        async move {
            let started = Instant::now();
            let response = next.run(request).await;
            route_metrics.record(response.status().as_u16(), started.elapsed().as_secs_f64());
            response
        }
    }))
}

/// Builds the router for `state`.
pub fn router(state: AppState) -> Router {
    let m = state.metrics.clone();
    let tm = "/api/v1/transaction-monitoring";
    let mut authed = Router::new();
    let routes: Vec<(String, MethodRouter<AppState>)> = vec![
        (format!("{tm}/instant"), post(intake::instant)),
        (tm.to_owned(), post(intake::submit)),
        (format!("{tm}/{{transactionId}}"), get(intake::fetch)),
        (format!("{tm}/customers/device"), post(lists::save_device)),
        (
            format!("{tm}/blacklist-user"),
            post(lists::add_user).get(lists::list_users),
        ),
        (
            format!("{tm}/blacklist-user/{{userId}}"),
            axum::routing::delete(lists::remove_user),
        ),
        (
            format!("{tm}/blacklist-vas-receiver"),
            post(lists::add_vas_receiver).get(lists::list_vas_receivers),
        ),
        (
            format!("{tm}/blacklist-vas-receiver/{{receiver}}"),
            axum::routing::delete(lists::remove_vas_receiver),
        ),
        (
            format!("{tm}/blacklist-account"),
            post(lists::add_account).get(lists::list_accounts),
        ),
        (
            format!("{tm}/blacklist-account/{{accountNumber}}"),
            axum::routing::delete(lists::remove_account),
        ),
        (
            format!("{tm}/blacklist-device"),
            post(lists::add_device).get(lists::list_devices),
        ),
        (
            format!("{tm}/blacklist-device/{{deviceId}}"),
            axum::routing::delete(lists::remove_device),
        ),
        (
            "/api/v1/settings".to_owned(),
            get(admin::get_settings).put(admin::put_settings),
        ),
        ("/api/v1/admin/rules".to_owned(), get(admin::rules_status)),
        (
            "/api/v1/admin/rules/reload".to_owned(),
            post(admin::reload_rules),
        ),
        (
            "/api/v1/aml/sanction/instant".to_owned(),
            post(screening::sanction_instant),
        ),
        (
            "/api/v1/aml/pep/instant".to_owned(),
            post(screening::pep_instant),
        ),
        ("/api/v1/aml/lists".to_owned(), get(screening::lists_status)),
        (
            "/api/v1/admin/lists/reload".to_owned(),
            post(screening::reload_lists),
        ),
        (
            "/case-management/case/{id}".to_owned(),
            get(cases::fetch_unversioned),
        ),
        (
            "/api/v1/case-management/case/{id}".to_owned(),
            get(cases::fetch),
        ),
        (
            "/api/v1/case-management/cases".to_owned(),
            get(cases::list).post(cases::create),
        ),
        (
            "/api/v1/case-management/case/{id}/status".to_owned(),
            patch(cases::set_status),
        ),
        (
            "/api/v1/case-management/case/{id}/escalate".to_owned(),
            post(cases::escalate),
        ),
        (
            "/api/v1/case-management/case/{id}/assign".to_owned(),
            post(cases::assign),
        ),
        (
            "/api/v1/case-management/case/{id}/comments".to_owned(),
            post(cases::comment),
        ),
        (
            "/api/v1/case-management/case/{id}/tasks".to_owned(),
            post(cases::add_task),
        ),
        (
            "/api/v1/case-management/case/{id}/tasks/{taskId}/complete".to_owned(),
            post(cases::complete_task),
        ),
        (
            "/api/v1/case-management/analysts".to_owned(),
            get(cases::list_analysts).post(cases::create_analyst),
        ),
        (
            "/api/v1/case-management/analysts/{id}".to_owned(),
            patch(cases::update_analyst),
        ),
        ("/cdd/customers".to_owned(), post(cdd::create)),
        (
            "/cdd/customers/{uniqueId}".to_owned(),
            get(cdd::fetch).patch(cdd::update),
        ),
        (
            "/api/v1/audit/{entityType}/{entityId}".to_owned(),
            get(crate::audit::api::fetch),
        ),
    ];
    let routes = routes.into_iter().chain(identity_and_reporting_routes());
    // Asynchronous AML and webhooks (issue 6).
    let routes = routes.into_iter().chain(async_aml_routes());
    for (path, handler) in routes {
        authed = authed.route(&path, observed(&m, &path, handler));
    }
    let authed = authed.route_layer(middleware::from_fn_with_state(
        state.keys.clone(),
        auth::require_key,
    ));

    // EDD (spec part 5): the single Authorization header; error bodies carry success: false.
    let mut edd_routes = Router::new();
    let edd_list: Vec<(&str, MethodRouter<AppState>)> = vec![
        ("/api/v1/edd/requests", post(edd::create).get(edd::list)),
        ("/api/v1/edd/requests/{requestId}", get(edd::fetch)),
        (
            "/api/v1/edd/requests/{requestId}/steps/{stepKey}",
            post(edd::act),
        ),
    ];
    for (path, handler) in edd_list {
        edd_routes = edd_routes.route(path, observed(&m, path, handler));
    }
    let edd_routes = edd_routes
        .route_layer(middleware::from_fn_with_state(
            state.keys.clone(),
            auth::require_authorization,
        ))
        .route_layer(middleware::from_fn(edd::success_flag));

    let mut open = Router::new();
    if state.settings.config.http.bare_endpoint {
        open = open.route("/bench/bare", observed(&m, "/bench/bare", post(bare)));
    }
    open.route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi::serve))
        .merge(authed)
        .merge(edd_routes)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(
            state.settings.config.http.max_body_bytes,
        ))
        .with_state(state)
}

/// Identity lookups (spec §4.4 `/kyc` rows) and FIU reporting (issue 7).
fn identity_and_reporting_routes() -> Vec<(String, MethodRouter<AppState>)> {
    use crate::identity::api as kyc;
    use crate::reporting::api as reports;
    vec![
        ("/kyc/nin".to_owned(), post(kyc::nin)),
        ("/api/v1/kyc/nin".to_owned(), post(kyc::nin_v1)),
        ("/kyc/bvn".to_owned(), post(kyc::bvn)),
        ("/api/v1/kyc/bvn".to_owned(), post(kyc::bvn_v1)),
        ("/kyc/cac".to_owned(), post(kyc::cac)),
        ("/api/v1/kyc/lookups".to_owned(), get(kyc::lookups)),
        (
            "/api/v1/reporting/config".to_owned(),
            get(reports::get_config).put(reports::put_config),
        ),
        (
            "/api/v1/reporting/uploads".to_owned(),
            post(reports::upload),
        ),
        (
            "/api/v1/reporting/reports".to_owned(),
            get(reports::list).post(reports::from_rules),
        ),
        (
            "/api/v1/reporting/reports/{reportId}".to_owned(),
            get(reports::fetch),
        ),
        (
            "/api/v1/reporting/reports/{reportId}/goaml.xml".to_owned(),
            get(reports::xml),
        ),
    ]
}

/// Webhooks, asynchronous sanction and adverse-media requests, adverse-media articles and
/// risk-monitoring checks.
fn async_aml_routes() -> Vec<(String, MethodRouter<AppState>)> {
    use crate::monitoring::api as aml;
    use crate::webhooks::api as hooks;
    vec![
        (
            "/api/v1/webhooks".to_owned(),
            get(hooks::get_webhook).put(hooks::put_webhook),
        ),
        (
            "/api/v1/webhooks/deliveries".to_owned(),
            get(hooks::list_deliveries),
        ),
        (
            "/api/v1/webhooks/deliveries/{id}".to_owned(),
            get(hooks::get_delivery),
        ),
        (
            "/api/v1/webhooks/deliveries/{id}/replay".to_owned(),
            post(hooks::replay_delivery),
        ),
        (
            "/api/v1/aml/sanction".to_owned(),
            post(aml::sanction_request),
        ),
        (
            "/api/v1/aml/sanction/{id}".to_owned(),
            get(aml::sanction_fetch),
        ),
        (
            "/api/v1/adverse-media".to_owned(),
            post(aml::adverse_media_request),
        ),
        (
            "/api/v1/adverse-media/{id}".to_owned(),
            get(aml::adverse_media_fetch),
        ),
        (
            "/api/v1/adverse-media/articles".to_owned(),
            post(aml::ingest_articles),
        ),
        (
            "/api/v1/aml/risk-monitoring".to_owned(),
            post(aml::risk_register).get(aml::risk_list),
        ),
        (
            "/api/v1/aml/risk-monitoring/{checkId}".to_owned(),
            get(aml::risk_fetch).delete(aml::risk_cancel),
        ),
    ]
}

async fn not_found() -> error::ApiError {
    error::ApiError::not_found("no such endpoint")
}

/// The load test's baseline: the same body parsing and validation as the instant endpoint, then a
/// constant answer (no auth, no engine, no store).
async fn bare(
    State(app): State<AppState>,
    body: extract::JsonBody<crate::model::TransactionPayload>,
) -> Result<Response, error::ApiError> {
    let clock = crate::model::ValidationClock {
        now_ms: chrono::Utc::now().timestamp_millis(),
        max_future_skew_ms: app.settings.config.engine.max_future_skew_secs as i64 * 1000,
    };
    body.value
        .validate(clock)
        .map_err(error::ApiError::invalid)?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        r#"{"message":"Transaction processed","data":null}"#,
    )
        .into_response())
}

/// `GET /healthz`
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Liveness probe",
    responses((status = 200, description = "The process is up.", body = openapi::Health,
        example = json!({"status": "ok"}))),
)]
async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

/// Ready when the store answers and a rule pack is loaded. A rejected reload leaves the service
/// ready (the previous pack serves) but reports `degraded` with the error.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    summary = "Readiness probe",
    description = "Ready when the store answers and a rule pack is loaded. A rejected rule reload \
        leaves the service ready (the previous pack serves) but reports `degraded` with the error.",
    responses(
        (status = 200, description = "Ready (or degraded: the last rule reload was rejected and the previous pack serves).",
            body = openapi::Readiness),
        (status = 503, description = "The store does not answer; `status` is `unavailable`.", body = openapi::Readiness),
    ),
)]
async fn readyz(State(app): State<AppState>) -> Response {
    let store_ok = app.store.ping().await.is_ok();
    let rules = app.rules.status();
    let screener = app.engine.snapshot().load().screener.describe();
    let lists = app.screening.status();
    let screening_enabled = app.settings.config.screening.enabled;
    let lists_failing = lists.lists.iter().any(|l| l.last_error.is_some());
    // A configured list that never loaded means parties go unscreened against it: not ready.
    let lists_missing = screening_enabled && !lists.ready;
    let status = match (
        store_ok,
        lists_missing,
        rules.last_error.is_some() || lists_failing,
    ) {
        (false, _, _) | (_, true, _) => "unavailable",
        (true, false, true) => "degraded",
        (true, false, false) => "ready",
    };
    let screening = serde_json::json!({
        "enabled": screening_enabled,
        "screener": screener,
        "ready": lists.ready,
        "builtAt": lists.built_at,
        "lists": lists.lists.iter().map(|l| serde_json::json!({
            "name": l.name, "entities": l.entities, "published": l.published,
            "version": l.version, "loadedAt": l.loaded_at, "lastError": l.last_error,
        })).collect::<Vec<_>>(),
    });
    let body = serde_json::json!({
        "status": status,
        "store": if store_ok { "ok" } else { "unreachable" },
        "rules": &*rules,
        "screening": screening,
        "shards": app.engine.shard_count(),
        "queueDepths": app.engine.queue_depths(),
    });
    let code = if store_ok && !lists_missing {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

/// `GET /metrics`
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    summary = "Prometheus metrics",
    responses((status = 200, description = "Metrics in the Prometheus text exposition format 0.0.4.",
        body = String, content_type = "text/plain; version=0.0.4")),
)]
async fn metrics(State(app): State<AppState>) -> Response {
    for (shard, depth) in app.engine.queue_depths().into_iter().enumerate() {
        app.metrics
            .queue_depth
            .with_label_values(&[&shard.to_string()])
            .set(depth as i64);
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        app.metrics.render(),
    )
        .into_response()
}

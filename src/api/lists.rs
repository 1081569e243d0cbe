//! Devices and blacklists (spec §4.1): every change is stored (with an audit row) before the
//! engine's list snapshot is swapped and the caller is answered, so rules see it from the next
//! event on and it survives restarts.

use crate::api::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Extension;
use serde::Deserialize;

use super::auth::Tenant;
use super::error::{ApiError, ErrorBody};
use super::extract::JsonBody;
use super::openapi::{BlacklistEntries, MessageBody};
use super::AppState;
use crate::engine::{ListKind, Snapshot};
use crate::model::{identifier, trim_text, FieldError, TextProblem};
use crate::sources::http::message;
use crate::store::DeviceRecord;

/// The texts each list answers with, and the body field that names the entry.
struct ListTexts {
    kind: ListKind,
    field: &'static str,
    added: &'static str,
    removed: &'static str,
    missing: &'static str,
}

const USER: ListTexts = ListTexts {
    kind: ListKind::User,
    field: "userId",
    added: "User blacklisted",
    removed: "User removed from blacklist",
    missing: "User is not blacklisted",
};
const VAS_RECEIVER: ListTexts = ListTexts {
    kind: ListKind::VasReceiver,
    field: "receiver",
    added: "VAS receiver blacklisted",
    removed: "VAS receiver removed from blacklist",
    missing: "VAS receiver is not blacklisted",
};
const ACCOUNT: ListTexts = ListTexts {
    kind: ListKind::Account,
    field: "accountNumber",
    added: "Account blacklisted",
    removed: "Account removed from blacklist",
    missing: "Account is not blacklisted",
};
const DEVICE: ListTexts = ListTexts {
    kind: ListKind::Device,
    field: "deviceId",
    added: "Device blacklisted",
    removed: "Device removed from blacklist",
    missing: "Device is not blacklisted",
};

const MAX_VALUE_LEN: usize = 256;

/// A value as lists keep it: at most [`MAX_VALUE_LEN`] characters as sent, trimmed, with no
/// control character and at least one visible one ([`identifier`]).
fn listed_value(value: Option<&str>) -> Result<&str, TextProblem> {
    identifier(value.unwrap_or(""), MAX_VALUE_LEN)
}

fn required_text(body: &serde_json::Value, field: &str) -> Result<String, ApiError> {
    let problem = match body.get(field) {
        None | Some(serde_json::Value::Null) => "is required".to_owned(),
        Some(serde_json::Value::String(s)) => match listed_value(Some(s)) {
            Ok(value) => return Ok(value.to_owned()),
            Err(TextProblem::Missing) => "must not be empty".to_owned(),
            Err(problem) => problem.to_string(),
        },
        Some(_) => "must be a string".to_owned(),
    };
    Err(ApiError::invalid(vec![FieldError::new(field, problem)]))
}

async fn add(
    app: &AppState,
    tenant: &Tenant,
    texts: &ListTexts,
    value: &str,
) -> Result<Response, ApiError> {
    app.store
        .add_list_entry(tenant.id, texts.kind, value, &tenant.key_id)
        .await?;
    if let Some(control) = &app.control {
        control.list_changed();
    }
    app.engine.snapshot().rcu(|current| Snapshot {
        lists: std::sync::Arc::new(current.lists.with_added(tenant.id, texts.kind, value)),
        ..Snapshot::clone(current)
    });
    announce(app, true, tenant.id, texts.kind, value).await;
    Ok(message(StatusCode::OK, texts.added))
}

async fn remove(
    app: &AppState,
    tenant: &Tenant,
    texts: &ListTexts,
    value: &str,
) -> Result<Response, ApiError> {
    let removed = app
        .store
        .remove_list_entry(tenant.id, texts.kind, value, &tenant.key_id)
        .await?;
    if !removed {
        return Err(ApiError::field(
            StatusCode::NOT_FOUND,
            texts.missing,
            texts.field,
            "not on the blacklist",
        ));
    }
    if let Some(control) = &app.control {
        control.list_changed();
    }
    app.engine.snapshot().rcu(|current| Snapshot {
        lists: std::sync::Arc::new(current.lists.with_removed(tenant.id, texts.kind, value)),
        ..Snapshot::clone(current)
    });
    announce(app, false, tenant.id, texts.kind, value).await;
    Ok(message(StatusCode::OK, texts.removed))
}

/// With Kafka, tells the other instances (the change is stored and applied here already).
async fn announce(app: &AppState, added: bool, tenant: i64, kind: ListKind, value: &str) {
    if let Some(control) = &app.control {
        control
            .publish(crate::sources::kafka::control::list_event(
                added, tenant, kind, value,
            ))
            .await;
    }
}

async fn list(app: &AppState, tenant: &Tenant, texts: &ListTexts) -> Result<Response, ApiError> {
    let entries = app.store.list_entries(tenant.id, texts.kind).await?;
    Ok(axum::response::IntoResponse::into_response(axum::Json(
        serde_json::json!({"message": "Blacklist fetched successfully", "count": entries.len(), "data": entries}),
    )))
}

/// The add, remove and list handlers of one list, with their OpenAPI operations.
///
/// Literals are taken as `tt` so the `#[utoipa::path]` attributes see plain tokens.
macro_rules! list_handlers {
    (
        texts: $texts:ident,
        body: $body:ident,
        path: $path:tt,
        entry_path: $entry_path:tt,
        param: $param:tt,
        what: $what:tt,
        one: $one:tt,
        handlers: ($add:ident, $remove:ident, $list:ident) $(,)?
    ) => {
        #[utoipa::path(
            post,
            path = $path,
            tag = "blacklists",
            summary = concat!("Blacklist ", $one),
            description = concat!(
                "Adds the ", $what, " to the tenant's blacklist (stored, with an audit row, before ",
                "rules see it from the next transaction on). The value is trimmed; adding an entry ",
                "already listed succeeds again."
            ),
            request_body = $body,
            security(("apiKey" = [], "apiSecret" = [])),
            responses(
                (status = 200, description = "Blacklisted.", body = MessageBody,
                    example = json!({"message": $texts.added})),
                crate::api::openapi::BodyErrors,
                (status = 422, description = concat!("`", $param, "` is missing, empty, not a string or over 256 characters."),
                    body = ErrorBody,
                    example = json!({"message": "request validation failed",
                        "errors": [{"field": $param, "problem": "is required"}]})),
                crate::api::openapi::AuthErrors,
                (status = 503, description = "The store is unavailable; retry later.", body = ErrorBody,
                    example = json!({"message": "storage is unavailable, retry later", "errors": []})),
            ),
        )]
        pub async fn $add(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
            body: JsonBody<serde_json::Value>,
        ) -> Result<Response, ApiError> {
            let value = required_text(&body.value, $texts.field)?;
            add(&app, &tenant, &$texts, &value).await
        }

        #[utoipa::path(
            delete,
            path = $entry_path,
            tag = "blacklists",
            summary = concat!("Remove ", $one, " from the blacklist"),
            params(
                ($param = String, Path, description = concat!("The blacklisted ", $what, " (trimmed)."))
            ),
            security(("apiKey" = [], "apiSecret" = [])),
            responses(
                (status = 200, description = "Removed. (The spec does not show this body.)", body = MessageBody,
                    example = json!({"message": $texts.removed})),
                (status = 404, description = "Not on the tenant's blacklist.", body = ErrorBody,
                    example = json!({"message": $texts.missing,
                        "errors": [{"field": $param, "problem": "not on the blacklist"}]})),
                crate::api::openapi::AuthErrors,
                (status = 503, description = "The store is unavailable; retry later.", body = ErrorBody,
                    example = json!({"message": "storage is unavailable, retry later", "errors": []})),
            ),
        )]
        pub async fn $remove(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
            Path(value): Path<String>,
        ) -> Result<Response, ApiError> {
            remove(&app, &tenant, &$texts, trim_text(&value)).await
        }

        #[utoipa::path(
            get,
            path = $path,
            tag = "blacklists",
            summary = concat!("List the blacklisted ", $what, " entries"),
            description = "The tenant's entries of this blacklist. (Vigil addition; not in the spec.)",
            security(("apiKey" = [], "apiSecret" = [])),
            responses(
                (status = 200, description = "The entries.", body = BlacklistEntries),
                crate::api::openapi::AuthErrors,
                (status = 503, description = "The store is unavailable; retry later.", body = ErrorBody,
                    example = json!({"message": "storage is unavailable, retry later", "errors": []})),
            ),
        )]
        pub async fn $list(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
        ) -> Result<Response, ApiError> {
            list(&app, &tenant, &$texts).await
        }
    };
}

list_handlers! {
    texts: USER,
    body: BlacklistUserBody,
    path: "/api/v1/transaction-monitoring/blacklist-user",
    entry_path: "/api/v1/transaction-monitoring/blacklist-user/{userId}",
    param: "userId",
    what: "user",
    one: "a user",
    handlers: (add_user, remove_user, list_users),
}
list_handlers! {
    texts: VAS_RECEIVER,
    body: BlacklistVasReceiverBody,
    path: "/api/v1/transaction-monitoring/blacklist-vas-receiver",
    entry_path: "/api/v1/transaction-monitoring/blacklist-vas-receiver/{receiver}",
    param: "receiver",
    what: "VAS receiver",
    one: "a VAS receiver",
    handlers: (add_vas_receiver, remove_vas_receiver, list_vas_receivers),
}
list_handlers! {
    texts: ACCOUNT,
    body: BlacklistAccountBody,
    path: "/api/v1/transaction-monitoring/blacklist-account",
    entry_path: "/api/v1/transaction-monitoring/blacklist-account/{accountNumber}",
    param: "accountNumber",
    what: "account",
    one: "an account",
    handlers: (add_account, remove_account, list_accounts),
}
list_handlers! {
    texts: DEVICE,
    body: BlacklistDeviceBody,
    path: "/api/v1/transaction-monitoring/blacklist-device",
    entry_path: "/api/v1/transaction-monitoring/blacklist-device/{deviceId}",
    param: "deviceId",
    what: "device",
    one: "a device",
    handlers: (add_device, remove_device, list_devices),
}

// The blacklist POST bodies are read as `serde_json::Value` (see `required_text`); these types
// only document them.

/// `POST …/blacklist-user` (spec §4.1).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlacklistUserBody {
    /// The user's `anonymizedUserData.uniqueId`; trimmed, 1-256 characters.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "user-8841"
    )]
    pub user_id: String,
}

/// `POST …/blacklist-vas-receiver` (spec §4.1).
#[derive(utoipa::ToSchema)]
pub struct BlacklistVasReceiverBody {
    /// The value-added-service receiver, as sent in `transactionData.vasReceiver`; trimmed, 1-256
    /// characters.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "08031234567"
    )]
    pub receiver: String,
}

/// `POST …/blacklist-account` (Vigil addition).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlacklistAccountBody {
    /// The counterparty account number; trimmed, 1-256 characters.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "0123456789"
    )]
    pub account_number: String,
}

/// `POST …/blacklist-device` (Vigil addition).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlacklistDeviceBody {
    /// The device id, as sent in `device.deviceId`; trimmed, 1-256 characters.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "a1b2c3d4-device"
    )]
    pub device_id: String,
}

/// `POST …/customers/device` (spec §4.1): `device` and `customerId` are required.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceBody {
    #[schema(value_type = DeviceFields)]
    pub device: Option<DeviceFields>,
    /// The customer's id (their `anonymizedUserData.uniqueId`); trimmed, 1-256 characters.
    #[schema(value_type = String, min_length = 1, max_length = 256, pattern = r"[^\s\u0085\uFEFF]", example = "user-8841")]
    pub customer_id: Option<String>,
}

/// The device; `deviceId` is required.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceFields {
    /// Trimmed, 1-256 characters.
    #[schema(value_type = String, min_length = 1, max_length = 256, pattern = r"[^\s\u0085\uFEFF]", example = "a1b2c3d4-device")]
    pub device_id: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub name: Option<String>,
    pub os_name: Option<String>,
    pub os_version: Option<String>,
}

/// `POST /api/v1/transaction-monitoring/customers/device`
#[utoipa::path(
    post,
    path = "/api/v1/transaction-monitoring/customers/device",
    tag = "devices",
    summary = "Save a customer's device",
    description = "Stores (or updates) the device for the customer; rules see it from the next \
        transaction on.",
    request_body = DeviceBody,
    security(("apiKey" = [], "apiSecret" = [])),
    responses(
        (status = 200, description = "Saved.", body = MessageBody,
            example = json!({"message": "Device saved successfully"})),
        crate::api::openapi::BodyErrors,
        (status = 422, description = "`customerId`, `device` or `device.deviceId` is missing, empty or over 256 characters, or a field has the wrong type.",
            body = ErrorBody,
            example = json!({"message": "request validation failed", "errors": [
                {"field": "device.deviceId", "problem": "is required"}]})),
        crate::api::openapi::AuthErrors,
        (status = 503, description = "The store or the engine is unavailable; retry later.", body = ErrorBody,
            example = json!({"message": "storage is unavailable, retry later", "errors": []})),
    ),
)]
pub async fn save_device(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<DeviceBody>,
) -> Result<Response, ApiError> {
    let mut errors = Vec::new();
    let customer_id = match listed_value(body.value.customer_id.as_deref()) {
        Ok(id) => Some(id),
        Err(problem) => {
            errors.push(FieldError::new("customerId", problem.to_string()));
            None
        }
    };
    let device = body.value.device.as_ref();
    if device.is_none() {
        errors.push(FieldError::new("device", "is required"));
    }
    let device_id = match device.map(|d| listed_value(d.device_id.as_deref())) {
        Some(Ok(id)) => Some(id),
        Some(Err(problem)) => {
            errors.push(FieldError::new("device.deviceId", problem.to_string()));
            None
        }
        None => None,
    };
    let (Some(customer_id), Some(device), Some(device_id)) = (customer_id, device, device_id)
    else {
        return Err(ApiError::invalid(errors));
    };
    let record = DeviceRecord {
        customer_id: customer_id.to_owned(),
        device_id: device_id.to_owned(),
        manufacturer: device.manufacturer.clone(),
        model: device.model.clone(),
        name: device.name.clone(),
        os_name: device.os_name.clone(),
        os_version: device.os_version.clone(),
    };
    app.store.upsert_device(tenant.id, &record).await?;
    app.engine
        .register_device(tenant.id, customer_id, device_id)
        .await
        .map_err(|_| ApiError::unavailable("the engine is shutting down"))?;
    if let Some(control) = &app.control {
        control
            .publish(crate::sources::kafka::control::ControlEvent::Device {
                business_id: tenant.id,
                user_id: customer_id.to_owned(),
                device_id: device_id.to_owned(),
            })
            .await;
    }
    Ok(message(StatusCode::OK, "Device saved successfully"))
}

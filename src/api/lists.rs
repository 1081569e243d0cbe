//! Devices and blacklists (spec §4.1): every change is stored (with an audit row) before the
//! engine's list snapshot is swapped and the caller is answered, so rules see it from the next
//! event on and it survives restarts.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Extension;
use serde::Deserialize;

use super::auth::Tenant;
use super::error::ApiError;
use super::extract::JsonBody;
use super::AppState;
use crate::engine::{ListKind, Snapshot};
use crate::model::FieldError;
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

fn required_text(body: &serde_json::Value, field: &str) -> Result<String, ApiError> {
    let problem = match body.get(field) {
        None | Some(serde_json::Value::Null) => "is required",
        Some(serde_json::Value::String(s)) if s.trim().is_empty() => "must not be empty",
        Some(serde_json::Value::String(s)) if s.len() > MAX_VALUE_LEN => {
            "must be at most 256 characters"
        }
        Some(serde_json::Value::String(s)) => return Ok(s.trim().to_owned()),
        Some(_) => "must be a string",
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
        .add_list_entry(tenant.id, texts.kind, value, &tenant.api_key)
        .await?;
    app.engine.snapshot().rcu(|current| Snapshot {
        lists: std::sync::Arc::new(current.lists.with_added(tenant.id, texts.kind, value)),
        ..Snapshot::clone(current)
    });
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
        .remove_list_entry(tenant.id, texts.kind, value, &tenant.api_key)
        .await?;
    if !removed {
        return Err(ApiError::field(
            StatusCode::NOT_FOUND,
            texts.missing,
            texts.field,
            "not on the blacklist",
        ));
    }
    app.engine.snapshot().rcu(|current| Snapshot {
        lists: std::sync::Arc::new(current.lists.with_removed(tenant.id, texts.kind, value)),
        ..Snapshot::clone(current)
    });
    Ok(message(StatusCode::OK, texts.removed))
}

async fn list(app: &AppState, tenant: &Tenant, texts: &ListTexts) -> Result<Response, ApiError> {
    let entries = app.store.list_entries(tenant.id, texts.kind).await?;
    Ok(axum::response::IntoResponse::into_response(axum::Json(
        serde_json::json!({"message": "Blacklist fetched successfully", "count": entries.len(), "data": entries}),
    )))
}

macro_rules! list_handlers {
    ($texts:ident, $add:ident, $remove:ident, $list:ident) => {
        pub async fn $add(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
            body: JsonBody<serde_json::Value>,
        ) -> Result<Response, ApiError> {
            let value = required_text(&body.value, $texts.field)?;
            add(&app, &tenant, &$texts, &value).await
        }

        pub async fn $remove(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
            Path(value): Path<String>,
        ) -> Result<Response, ApiError> {
            remove(&app, &tenant, &$texts, value.trim()).await
        }

        pub async fn $list(
            State(app): State<AppState>,
            Extension(tenant): Extension<Tenant>,
        ) -> Result<Response, ApiError> {
            list(&app, &tenant, &$texts).await
        }
    };
}

list_handlers!(USER, add_user, remove_user, list_users);
list_handlers!(
    VAS_RECEIVER,
    add_vas_receiver,
    remove_vas_receiver,
    list_vas_receivers
);
list_handlers!(ACCOUNT, add_account, remove_account, list_accounts);
list_handlers!(DEVICE, add_device, remove_device, list_devices);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceBody {
    pub device: Option<DeviceFields>,
    pub customer_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceFields {
    pub device_id: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub name: Option<String>,
    pub os_name: Option<String>,
    pub os_version: Option<String>,
}

/// `POST /api/v1/transaction-monitoring/customers/device`
pub async fn save_device(
    State(app): State<AppState>,
    Extension(tenant): Extension<Tenant>,
    body: JsonBody<DeviceBody>,
) -> Result<Response, ApiError> {
    let mut errors = Vec::new();
    let customer_id = body
        .value
        .customer_id
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty() && c.len() <= MAX_VALUE_LEN);
    if customer_id.is_none() {
        errors.push(FieldError::new(
            "customerId",
            "is required (at most 256 characters)",
        ));
    }
    let device = body.value.device.as_ref();
    if device.is_none() {
        errors.push(FieldError::new("device", "is required"));
    }
    let device_id = device
        .and_then(|d| d.device_id.as_deref())
        .map(str::trim)
        .filter(|d| !d.is_empty() && d.len() <= MAX_VALUE_LEN);
    if device.is_some() && device_id.is_none() {
        errors.push(FieldError::new(
            "device.deviceId",
            "is required (at most 256 characters)",
        ));
    }
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
    Ok(message(StatusCode::OK, "Device saved successfully"))
}

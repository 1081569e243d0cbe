//! The audit trail of the compliance workflows: who changed which case, CDD customer, EDD request
//! or analyst, when, and what changed.
//!
//! Every workflow write (in `cases`, `cdd`, `edd`) calls [`record`] inside the same database
//! transaction as the change itself, so a change and its audit row commit together or not at all.
//! `changes` is a JSON diff of the record's public form before and after (`{"path": {"from": …,
//! "to": …}}`, made by [`diff`]); a creation diffs against nothing. The table is append-only:
//! triggers in both backends refuse any `UPDATE` or `DELETE` on it. [`trail`] reads one record's
//! entries back, oldest first, always scoped to the tenant.

pub mod api;

use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::Row;

use crate::store::{iso_time, StoreError};

/// The kinds of records the trail covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityType {
    Case,
    CddCustomer,
    EddRequest,
    Analyst,
}

impl EntityType {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Case => "case",
            EntityType::CddCustomer => "cdd-customer",
            EntityType::EddRequest => "edd-request",
            EntityType::Analyst => "analyst",
        }
    }

    pub fn parse(value: &str) -> Option<EntityType> {
        match value {
            "case" => Some(EntityType::Case),
            "cdd-customer" => Some(EntityType::CddCustomer),
            "edd-request" => Some(EntityType::EddRequest),
            "analyst" => Some(EntityType::Analyst),
            _ => None,
        }
    }

    pub const NAMES: &'static str = "case, cdd-customer, edd-request, analyst";
}

/// Who made a change: the id of the API key that called, and the analyst named in the request, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub api_key: String,
    pub user_id: Option<String>,
}

/// The id Vigil itself acts under (automatic cases, risk ratings).
pub const SYSTEM: &str = "system";

impl Actor {
    pub fn system() -> Actor {
        Actor {
            api_key: SYSTEM.to_owned(),
            user_id: Some(SYSTEM.to_owned()),
        }
    }

    pub fn key(api_key: &str, user_id: Option<&str>) -> Actor {
        Actor {
            api_key: api_key.to_owned(),
            user_id: user_id.map(str::to_owned),
        }
    }
}

/// One entry of the trail, as `GET /api/v1/audit/{entityType}/{entityId}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the tenant's trail (increasing).
    pub seq: i64,
    #[schema(example = "case")]
    pub entity_type: String,
    pub entity_id: String,
    /// What happened: `created`, `status-updated`, `assigned`, `alert-added`, `rated`, …
    #[schema(example = "status-updated")]
    pub action: String,
    /// The id of the API key that made the change (its first characters, never the key; `system` for Vigil's own changes).
    pub actor_key: String,
    /// The analyst named in the request (`userId`), if any.
    pub actor_user: Option<String>,
    /// RFC 3339.
    pub at: String,
    /// `{"field.path": {"from": old, "to": new}}`.
    #[schema(value_type = Object)]
    pub changes: Value,
}

/// Appends one entry in the caller's transaction.
#[allow(clippy::too_many_arguments)]
pub async fn record(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    entity: EntityType,
    entity_id: &str,
    action: &str,
    actor: &Actor,
    at_ms: i64,
    changes: &Value,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO audit_log (business_id, entity_type, entity_id, action, actor_key, \
         actor_user, at_ms, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(business_id)
    .bind(entity.as_str())
    .bind(entity_id)
    .bind(action)
    .bind(&actor.api_key)
    .bind(actor.user_id.as_deref())
    .bind(at_ms)
    .bind(changes.to_string())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One record's trail, oldest first.
pub async fn trail(
    pool: &sqlx::AnyPool,
    business_id: i64,
    entity: EntityType,
    entity_id: &str,
) -> Result<Vec<AuditEntry>, StoreError> {
    let rows = sqlx::query(
        "SELECT seq, entity_type, entity_id, action, actor_key, actor_user, at_ms, changes \
         FROM audit_log WHERE business_id = $1 AND entity_type = $2 AND entity_id = $3 \
         ORDER BY seq",
    )
    .bind(business_id)
    .bind(entity.as_str())
    .bind(entity_id)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|row| {
            let changes: String = row.get(7);
            Ok(AuditEntry {
                seq: row.get(0),
                entity_type: row.get(1),
                entity_id: row.get(2),
                action: row.get(3),
                actor_key: row.get(4),
                actor_user: row.get(5),
                at: iso_time(row.get(6)),
                changes: serde_json::from_str(&changes)
                    .map_err(|e| StoreError::Corrupt(format!("audit changes: {e}")))?,
            })
        })
        .collect()
}

/// The difference between two JSON values as `{"path": {"from": …, "to": …}}`. Objects are
/// compared key by key (paths joined with `.`); anything else, arrays included, as a whole.
pub fn diff(before: &Value, after: &Value) -> Value {
    let mut changes = Map::new();
    diff_into(&mut changes, String::new(), before, after);
    Value::Object(changes)
}

/// The diff of a newly created record: every field from `null`.
pub fn created(after: &Value) -> Value {
    diff(&Value::Object(Map::new()), after)
}

fn diff_into(changes: &mut Map<String, Value>, path: String, before: &Value, after: &Value) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => {
            let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                diff_into(
                    changes,
                    child,
                    old.get(key).unwrap_or(&Value::Null),
                    new.get(key).unwrap_or(&Value::Null),
                );
            }
        }
        (Value::Object(_), _) | (_, Value::Object(_)) if !path.is_empty() => {
            changes.insert(path, serde_json::json!({"from": before, "to": after}));
        }
        _ => {
            let key = if path.is_empty() {
                "value".to_owned()
            } else {
                path
            };
            changes.insert(key, serde_json::json!({"from": before, "to": after}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_names_each_changed_leaf_by_its_path_and_skips_equal_ones() {
        let before = json!({"status": "open", "assignedTo": null, "record": {"id": "t1", "name": "a"}, "tags": [1]});
        let after = json!({"status": "in progress", "assignedTo": {"_id": "an-1"}, "record": {"id": "t1", "name": "b"}, "tags": [1, 2]});
        let changes = diff(&before, &after);
        assert_eq!(
            changes,
            json!({
                "status": {"from": "open", "to": "in progress"},
                "assignedTo": {"from": null, "to": {"_id": "an-1"}},
                "record.name": {"from": "a", "to": "b"},
                "tags": {"from": [1], "to": [1, 2]},
            })
        );
        assert_eq!(diff(&after, &after), json!({}));
    }

    #[test]
    fn a_creation_lists_every_field_from_null() {
        let changes = created(&json!({"title": "t", "priority": "high"}));
        assert_eq!(
            changes,
            json!({"title": {"from": null, "to": "t"}, "priority": {"from": null, "to": "high"}})
        );
    }

    #[test]
    fn entity_type_names_round_trip() {
        for entity in [
            EntityType::Case,
            EntityType::CddCustomer,
            EntityType::EddRequest,
            EntityType::Analyst,
        ] {
            assert_eq!(EntityType::parse(entity.as_str()), Some(entity));
            assert!(EntityType::NAMES.contains(entity.as_str()));
        }
        assert_eq!(EntityType::parse("transaction"), None);
    }
}

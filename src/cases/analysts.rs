//! The analyst directory: the people of one business who work cases. Cases name them in
//! `assignedTo`, `assignedBy`, comments, tagged users and log entries; every case action names
//! the acting analyst (`userId`), who must be active in the caller's business. Analysts are never
//! deleted — one who leaves is deactivated, and old records still show their name.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::Row;

use super::{CaseError, UserRef};
use crate::audit::{self, Actor, EntityType};
use crate::store::{iso_time, new_id, now_ms, StoreError};

/// An analyst as the directory endpoints show them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Analyst {
    #[serde(rename = "_id")]
    pub id: String,
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub active: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl Analyst {
    fn audited(&self) -> serde_json::Value {
        serde_json::json!({"firstName": self.first_name, "lastName": self.last_name,
            "email": self.email, "active": self.active})
    }
}

const COLUMNS: &str =
    "SELECT id, first_name, last_name, email, active, created_at_ms, updated_at_ms FROM analysts";

fn from_row(row: &sqlx::any::AnyRow) -> Analyst {
    let active: i64 = row.get(4);
    Analyst {
        id: row.get(0),
        first_name: row.get(1),
        last_name: row.get(2),
        email: row.get(3),
        active: active != 0,
        created_at: iso_time(row.get(5)),
        updated_at: iso_time(row.get(6)),
    }
}

/// Adds an analyst (active) and audits it.
pub async fn create(
    pool: &sqlx::AnyPool,
    business_id: i64,
    first_name: &str,
    last_name: &str,
    email: Option<&str>,
    actor: &Actor,
) -> Result<Analyst, StoreError> {
    let now = now_ms();
    let id = new_id();
    let mut tx = crate::store::begin_write(pool).await?;
    sqlx::query(
        "INSERT INTO analysts (business_id, id, first_name, last_name, email, active, \
         created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, 1, $6, $6)",
    )
    .bind(business_id)
    .bind(&id)
    .bind(first_name)
    .bind(last_name)
    .bind(email)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let analyst = Analyst {
        id,
        first_name: first_name.to_owned(),
        last_name: last_name.to_owned(),
        email: email.map(str::to_owned),
        active: true,
        created_at: iso_time(now),
        updated_at: iso_time(now),
    };
    audit::record(
        &mut tx,
        business_id,
        EntityType::Analyst,
        &analyst.id,
        "created",
        actor,
        now,
        &audit::created(&analyst.audited()),
    )
    .await?;
    tx.commit().await?;
    Ok(analyst)
}

/// Activates or deactivates an analyst; `None` if the business has no such analyst.
pub async fn set_active(
    pool: &sqlx::AnyPool,
    business_id: i64,
    id: &str,
    active: bool,
    actor: &Actor,
) -> Result<Option<Analyst>, StoreError> {
    let now = now_ms();
    let mut tx = crate::store::begin_write(pool).await?;
    let sql = format!("{COLUMNS} WHERE business_id = $1 AND id = $2");
    let Some(row) = sqlx::query(&sql)
        .bind(business_id)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(None);
    };
    let before = from_row(&row);
    sqlx::query(
        "UPDATE analysts SET active = $1, updated_at_ms = $2 WHERE business_id = $3 AND id = $4",
    )
    .bind(i64::from(active))
    .bind(now)
    .bind(business_id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    let after = Analyst {
        active,
        updated_at: iso_time(now),
        ..before.clone()
    };
    let changes = audit::diff(&before.audited(), &after.audited());
    if changes.as_object().is_some_and(|c| !c.is_empty()) {
        audit::record(
            &mut tx,
            business_id,
            EntityType::Analyst,
            id,
            if active { "activated" } else { "deactivated" },
            actor,
            now,
            &changes,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Some(after))
}

/// Every analyst of the business, by name.
pub async fn list(pool: &sqlx::AnyPool, business_id: i64) -> Result<Vec<Analyst>, StoreError> {
    let sql = format!("{COLUMNS} WHERE business_id = $1 ORDER BY last_name, first_name, id");
    let rows = sqlx::query(&sql).bind(business_id).fetch_all(pool).await?;
    Ok(rows.iter().map(from_row).collect())
}

/// The business's analysts (active or not) by id, for rendering records.
pub async fn directory(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
) -> Result<Directory, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, first_name, last_name, active FROM analysts WHERE business_id = $1",
    )
    .bind(business_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Directory {
        users: rows
            .into_iter()
            .map(|row| {
                let active: i64 = row.get(3);
                let user = UserRef {
                    id: row.get(0),
                    first_name: row.get(1),
                    last_name: row.get(2),
                };
                (user.id.clone(), (user, active != 0))
            })
            .collect(),
    })
}

/// A business's analysts, resolved once per request.
#[derive(Debug, Default, Clone)]
pub struct Directory {
    users: HashMap<String, (UserRef, bool)>,
}

impl Directory {
    /// The user for an id as records show it: Vigil itself, a known analyst, or the bare id.
    pub fn user(&self, id: &str) -> UserRef {
        if id == crate::audit::SYSTEM {
            return UserRef::system();
        }
        self.users
            .get(id)
            .map(|(user, _)| user.clone())
            .unwrap_or_else(|| UserRef::unknown(id))
    }

    /// The active analyst `id`, or an error naming the request field.
    pub fn active(&self, field: &str, id: &str) -> Result<UserRef, CaseError> {
        match self.users.get(id) {
            Some((user, true)) => Ok(user.clone()),
            _ => Err(CaseError::UnknownAnalyst {
                field: field.to_owned(),
                id: id.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_resolves_the_system_user_known_analysts_and_refuses_inactive_ones() {
        let mut directory = Directory::default();
        let ada = UserRef {
            id: "a1".into(),
            first_name: "Ada".into(),
            last_name: "Obi".into(),
        };
        let gone = UserRef {
            id: "a2".into(),
            first_name: "Bayo".into(),
            last_name: "Ade".into(),
        };
        directory.users.insert("a1".into(), (ada.clone(), true));
        directory.users.insert("a2".into(), (gone.clone(), false));
        assert_eq!(directory.user("system"), UserRef::system());
        assert_eq!(directory.user("a2"), gone);
        assert_eq!(directory.user("zz").id, "zz");
        assert_eq!(directory.active("userId", "a1").expect("active"), ada);
        assert!(matches!(
            directory.active("assigneeId", "a2"),
            Err(CaseError::UnknownAnalyst { ref field, .. }) if field == "assigneeId"
        ));
    }
}

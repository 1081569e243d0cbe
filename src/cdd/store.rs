//! CDD persistence: customers, their verification entries, and the audit entries of every
//! change, each change one database transaction.

use serde_json::{json, Value};
use sqlx::any::AnyRow;
use sqlx::{Any, Row};

use super::profile::CustomerInput;
use super::risk::{CustomerScreening, FactorResult, Rating};
use super::{
    screening_status, CddError, CustomerCreated, CustomerSummary, CustomerView, OverallRiskRating,
    RaterName, VerificationEntry, Verifications, AWAITING, WITHDRAWN,
};
use crate::audit::{self, Actor, EntityType};
use crate::store::{iso_time, new_id, now_ms, StoreError};

/// A customer as stored.
#[derive(Debug, Clone)]
pub struct StoredCustomer {
    pub id: String,
    pub unique_id: String,
    pub kind: String,
    pub name: String,
    pub status: String,
    pub cdd_status: String,
    pub kyc_level: String,
    pub risk_score: f64,
    pub risk_level: String,
    pub risk_tier: String,
    pub rating: Value,
    pub analysis: String,
    pub profile: Value,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// (group, entry).
    pub verifications: Vec<(String, VerificationEntry)>,
}

const COLUMNS: &str = "SELECT id, unique_id, type, name, status, cdd_status, kyc_level, \
     risk_score, risk_level, risk_tier, rating, analysis, profile, created_at_ms, updated_at_ms \
     FROM cdd_customers";

fn from_row(row: &AnyRow) -> Result<StoredCustomer, StoreError> {
    let parse = |text: String, what: &str| {
        serde_json::from_str::<Value>(&text)
            .map_err(|e| StoreError::Corrupt(format!("customer {what}: {e}")))
    };
    Ok(StoredCustomer {
        id: row.get(0),
        unique_id: row.get(1),
        kind: row.get(2),
        name: row.get(3),
        status: row.get(4),
        cdd_status: row.get(5),
        kyc_level: row.get(6),
        risk_score: row.get(7),
        risk_level: row.get(8),
        risk_tier: row.get(9),
        rating: parse(row.get(10), "rating")?,
        analysis: row.get(11),
        profile: parse(row.get(12), "profile")?,
        created_at_ms: row.get(13),
        updated_at_ms: row.get(14),
        verifications: Vec::new(),
    })
}

impl StoredCustomer {
    pub fn input(&self) -> Result<CustomerInput, StoreError> {
        serde_json::from_value(self.profile.clone())
            .map_err(|e| StoreError::Corrupt(format!("customer profile: {e}")))
    }

    fn verifications(&self) -> Verifications {
        let mut out = Verifications::default();
        for (group, entry) in &self.verifications {
            if group == "id" {
                out.id.push(entry.clone());
            } else {
                out.others.push(entry.clone());
            }
        }
        out
    }

    /// The spec's fetch shape plus Vigil's additions.
    pub fn view(&self) -> CustomerView {
        let verifications = self.verifications();
        let factors: Vec<FactorResult> = self.rating["factors"]
            .as_array()
            .map(|factors| {
                factors
                    .iter()
                    .filter_map(|f| {
                        Some(FactorResult {
                            factor: f["factor"].as_str()?.to_owned(),
                            label: f["label"].as_str()?.to_owned(),
                            value: f["value"].as_str().map(str::to_owned),
                            matched: f["matched"].as_str().map(str::to_owned),
                            risk: f["risk"].as_f64()?,
                            weight: f["weight"].as_f64()?,
                            contribution: f["contribution"].as_f64()?,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let screening: CustomerScreening = serde_json::from_value(self.rating["screening"].clone())
            .unwrap_or_else(|_| CustomerScreening {
                name: None,
                sanction: super::risk::ScreeningCheck::not_run(),
                pep: super::risk::ScreeningCheck::not_run(),
                note: None,
            });
        CustomerView {
            customer: CustomerSummary {
                id: self.id.clone(),
                name: self.name.clone(),
                unique_id: self.unique_id.clone(),
                kind: self.kind.clone(),
                status: self.status.clone(),
                channel: self.profile["channel"].as_str().map(str::to_owned),
                cdd_status: self.cdd_status.clone(),
                risk_tier: self.risk_tier.clone(),
                overall_risk_rating: OverallRiskRating {
                    risk_level: self.risk_level.clone(),
                    risk_score: self.risk_score,
                    user: RaterName {
                        first_name: "Vigil".to_owned(),
                        last_name: "Risk Model".to_owned(),
                    },
                },
                cdd_verification_status: verifications.overall().to_owned(),
                created_at: iso_time(self.created_at_ms),
            },
            verifications,
            running_cdd: None,
            analysis: self.analysis.clone(),
            risk_factors: factors,
            screening,
            profile: self.profile.clone(),
            updated_at: iso_time(self.updated_at_ms),
        }
    }

    pub fn created(&self) -> CustomerCreated {
        let text = |key: &str| self.profile[key].as_str().map(str::to_owned);
        CustomerCreated {
            id: self.id.clone(),
            unique_id: self.unique_id.clone(),
            kind: self.kind.clone(),
            first_name: text("firstName"),
            last_name: text("lastName"),
            channel: text("channel"),
            status: self.status.clone(),
            kyc_level: self.kyc_level.clone(),
            created_at: iso_time(self.created_at_ms),
        }
    }

    /// The form the audit trail diffs.
    fn audited(&self) -> Value {
        let verifications: serde_json::Map<String, Value> = self
            .verifications
            .iter()
            .map(|(_, v)| {
                (
                    v.key.clone(),
                    json!({"status": v.status, "requestId": v.request_id}),
                )
            })
            .collect();
        json!({
            "uniqueId": self.unique_id, "type": self.kind, "name": self.name,
            "status": self.status, "cddStatus": self.cdd_status, "kycLevel": self.kyc_level,
            "riskScore": self.risk_score, "riskLevel": self.risk_level,
            "riskTier": self.risk_tier, "profile": self.profile,
            "verifications": verifications,
        })
    }
}

async fn verifications_of(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    customer_id: &str,
) -> Result<Vec<(String, VerificationEntry)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT grp, key, name, status, request_id, last_run_at_ms, reason FROM cdd_verifications \
         WHERE business_id = $1 AND customer_id = $2 ORDER BY seq",
    )
    .bind(business_id)
    .bind(customer_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let last: Option<i64> = row.get(5);
            (
                row.get(0),
                VerificationEntry {
                    key: row.get(1),
                    name: row.get(2),
                    status: row.get(3),
                    request_id: row.get(4),
                    last_run_at: last.map(iso_time),
                    reason: row.get(6),
                },
            )
        })
        .collect())
}

/// Finds a customer by uniqueId, else by account number (the oldest such customer).
pub async fn find(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    key: &str,
) -> Result<Option<StoredCustomer>, CddError> {
    let sql = format!("{COLUMNS} WHERE business_id = $1 AND unique_id = $2");
    let mut row = sqlx::query(&sql)
        .bind(business_id)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await?;
    if row.is_none() {
        let sql = format!(
            "{COLUMNS} WHERE business_id = $1 AND account_number = $2 ORDER BY seq LIMIT 1"
        );
        row = sqlx::query(&sql)
            .bind(business_id)
            .bind(key)
            .fetch_optional(&mut *conn)
            .await?;
    }
    let Some(row) = row else {
        return Ok(None);
    };
    let mut customer = from_row(&row)?;
    customer.verifications = verifications_of(conn, business_id, &customer.id).await?;
    Ok(Some(customer))
}

pub async fn fetch(
    pool: &sqlx::AnyPool,
    business_id: i64,
    key: &str,
) -> Result<Option<StoredCustomer>, CddError> {
    let mut conn = pool.acquire().await?;
    find(&mut conn, business_id, key).await
}

/// The verification entries to write for `new` (after `old`, if updating): new identity
/// documents start "Awaiting Confirmation", a changed number starts over, a removed one is
/// "Withdrawn", and the two screening entries record this run.
fn plan_verifications(
    old: Option<(&CustomerInput, &[(String, VerificationEntry)])>,
    new: &CustomerInput,
    screening: &CustomerScreening,
    now: i64,
) -> Vec<(String, VerificationEntry, Option<i64>)> {
    let mut plan = Vec::new();
    let old_subjects = old
        .map(|(input, _)| input.verification_subjects())
        .unwrap_or_default();
    let existing = old.map(|(_, v)| v).unwrap_or(&[]);
    let subjects = new.verification_subjects();
    for (group, key, name, value) in &subjects {
        let current = existing.iter().find(|(_, e)| e.key == *key);
        let unchanged = old_subjects
            .iter()
            .any(|(_, k, _, v)| k == key && v == value);
        match current {
            Some((_, entry)) if unchanged && entry.status != WITHDRAWN => {}
            _ => plan.push((
                (*group).to_owned(),
                VerificationEntry {
                    key: (*key).to_owned(),
                    name: (*name).to_owned(),
                    status: AWAITING.to_owned(),
                    request_id: new_id(),
                    last_run_at: None,
                    reason: None,
                },
                None,
            )),
        }
    }
    for (group, entry) in existing {
        let still = subjects.iter().any(|(_, k, _, _)| *k == entry.key);
        let screening_entry = entry.key.ends_with("-screening");
        if !still && !screening_entry && entry.status != WITHDRAWN {
            plan.push((
                group.clone(),
                VerificationEntry {
                    status: WITHDRAWN.to_owned(),
                    ..entry.clone()
                },
                None,
            ));
        }
    }
    for (key, name, check) in [
        (
            "sanction-screening",
            "Sanctions screening",
            &screening.sanction,
        ),
        ("pep-screening", "PEP screening", &screening.pep),
    ] {
        let status = screening_status(check);
        plan.push((
            "others".to_owned(),
            VerificationEntry {
                key: key.to_owned(),
                name: name.to_owned(),
                status: status.to_owned(),
                request_id: new_id(),
                last_run_at: (status != "Not Run").then(|| iso_time(now)),
                reason: None,
            },
            (status != "Not Run").then_some(now),
        ));
    }
    plan
}

async fn write_verifications(
    conn: &mut sqlx::AnyConnection,
    business_id: i64,
    customer_id: &str,
    plan: &[(String, VerificationEntry, Option<i64>)],
    now: i64,
) -> Result<(), sqlx::Error> {
    for (group, entry, last_run) in plan {
        sqlx::query(
            "INSERT INTO cdd_verifications (customer_id, business_id, grp, key, name, status, \
             request_id, last_run_at_ms, created_at_ms, updated_at_ms, reason) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10) \
             ON CONFLICT (customer_id, key) DO UPDATE SET grp = excluded.grp, \
             name = excluded.name, status = excluded.status, request_id = excluded.request_id, \
             reason = excluded.reason, \
             last_run_at_ms = COALESCE(excluded.last_run_at_ms, cdd_verifications.last_run_at_ms), \
             updated_at_ms = excluded.updated_at_ms",
        )
        .bind(customer_id)
        .bind(business_id)
        .bind(group)
        .bind(&entry.key)
        .bind(&entry.name)
        .bind(&entry.status)
        .bind(&entry.request_id)
        .bind(*last_run)
        .bind(now)
        .bind(entry.reason.as_deref())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

fn rating_json(rating: &Rating, screening: &CustomerScreening) -> Value {
    json!({"factors": rating.factors, "floors": rating.floors, "screening": screening})
}

/// Stores a new customer; `Duplicate` if the business has its uniqueId already.
pub async fn create(
    pool: &sqlx::AnyPool,
    business_id: i64,
    input: &CustomerInput,
    screening: &CustomerScreening,
    rating: &Rating,
    actor: &Actor,
) -> Result<StoredCustomer, CddError> {
    let now = now_ms();
    let id = new_id();
    let unique_id = input.unique_id.clone().unwrap_or_default();
    let mut tx = crate::store::begin_write(pool).await?;
    let inserted = sqlx::query(
        "INSERT INTO cdd_customers (id, business_id, unique_id, type, account_number, name, \
         status, cdd_status, kyc_level, risk_score, risk_level, risk_tier, rated_by, rated_at_ms, \
         rating, analysis, profile, version, created_at_ms, updated_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, 'active', 'pending review', $7, $8, $9, $10, $11, $12, \
         $13, $14, $15, 0, $12, $12) ON CONFLICT (business_id, unique_id) DO NOTHING",
    )
    .bind(&id)
    .bind(business_id)
    .bind(&unique_id)
    .bind(input.kind.as_deref().unwrap_or("individual"))
    .bind(input.account_number.as_deref())
    .bind(input.display_name())
    .bind(input.kyc_level())
    .bind(rating.score)
    .bind(rating.level.as_str())
    .bind(rating.tier.as_str())
    .bind(crate::audit::SYSTEM)
    .bind(now)
    .bind(rating_json(rating, screening).to_string())
    .bind(&rating.analysis)
    .bind(input.to_stored().to_string())
    .execute(&mut *tx)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(CddError::Duplicate(unique_id));
    }
    let plan = plan_verifications(None, input, screening, now);
    write_verifications(&mut tx, business_id, &id, &plan, now).await?;
    let customer = find(&mut tx, business_id, &unique_id)
        .await?
        .ok_or(CddError::NotFound)?;
    audit::record(
        &mut tx,
        business_id,
        EntityType::CddCustomer,
        &customer.id,
        "created",
        actor,
        now,
        &audit::created(&customer.audited()),
    )
    .await?;
    tx.commit().await?;
    Ok(customer)
}

/// A customer locked for an update: the row's version was bumped in `tx`.
pub struct LockedCustomer<'c> {
    pub tx: sqlx::Transaction<'c, Any>,
    pub customer: StoredCustomer,
}

/// Finds and locks a customer by uniqueId or account number.
pub async fn lock<'c>(
    pool: &'c sqlx::AnyPool,
    business_id: i64,
    key: &str,
) -> Result<LockedCustomer<'c>, CddError> {
    let found = fetch(pool, business_id, key)
        .await?
        .ok_or(CddError::NotFound)?;
    let mut tx = crate::store::begin_write(pool).await?;
    sqlx::query(
        "UPDATE cdd_customers SET version = version + 1 WHERE business_id = $1 AND id = $2",
    )
    .bind(business_id)
    .bind(&found.id)
    .execute(&mut *tx)
    .await?;
    let customer = find(&mut tx, business_id, &found.unique_id)
        .await?
        .ok_or(CddError::NotFound)?;
    Ok(LockedCustomer { tx, customer })
}

/// What an update writes.
pub struct Update<'a> {
    pub input: &'a CustomerInput,
    pub screening: &'a CustomerScreening,
    pub rating: &'a Rating,
    pub status: Option<String>,
    pub cdd_status: Option<String>,
}

impl LockedCustomer<'_> {
    /// Writes the update, its verification changes and its audit entry, and commits.
    pub async fn update(
        mut self,
        business_id: i64,
        update: Update<'_>,
        actor: &Actor,
    ) -> Result<StoredCustomer, CddError> {
        let now = now_ms();
        let before = self.customer.clone();
        let old_input = before.input()?;
        let tier = update.rating.tier.as_str();
        // A re-rating that moves the tier needs a new review, unless this request decides.
        let cdd_status = match update.cdd_status {
            Some(status) => status,
            None if tier != before.risk_tier => "pending review".to_owned(),
            None => before.cdd_status.clone(),
        };
        let status = update.status.unwrap_or_else(|| before.status.clone());
        sqlx::query(
            "UPDATE cdd_customers SET account_number = $1, name = $2, status = $3, \
             cdd_status = $4, kyc_level = $5, risk_score = $6, risk_level = $7, risk_tier = $8, \
             rated_by = $9, rated_at_ms = $10, rating = $11, analysis = $12, profile = $13, \
             updated_at_ms = $10 WHERE business_id = $14 AND id = $15",
        )
        .bind(update.input.account_number.as_deref())
        .bind(update.input.display_name())
        .bind(&status)
        .bind(&cdd_status)
        .bind(update.input.kyc_level())
        .bind(update.rating.score)
        .bind(update.rating.level.as_str())
        .bind(tier)
        .bind(crate::audit::SYSTEM)
        .bind(now)
        .bind(rating_json(update.rating, update.screening).to_string())
        .bind(&update.rating.analysis)
        .bind(update.input.to_stored().to_string())
        .bind(business_id)
        .bind(&before.id)
        .execute(&mut *self.tx)
        .await?;
        let plan = plan_verifications(
            Some((&old_input, &before.verifications)),
            update.input,
            update.screening,
            now,
        );
        write_verifications(&mut self.tx, business_id, &before.id, &plan, now).await?;
        let after = find(&mut self.tx, business_id, &before.unique_id)
            .await?
            .ok_or(CddError::NotFound)?;
        let mut changes = audit::diff(&before.audited(), &after.audited());
        // Screening entries get a new request id every run; only a status change is news.
        if let Some(map) = changes.as_object_mut() {
            map.retain(|key, change| {
                !(key.ends_with("-screening.requestId") && change["from"] != Value::Null)
            });
        }
        audit::record(
            &mut self.tx,
            business_id,
            EntityType::CddCustomer,
            &after.id,
            "updated",
            actor,
            now,
            &changes,
        )
        .await?;
        self.tx.commit().await?;
        Ok(after)
    }
}

/// The outcome of one identity check, for [`record_checks`].
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// `bvn` or `nin`.
    pub key: String,
    /// The entry's `requestId` when the check started: a result for an entry that has since
    /// started over (a changed number) is dropped.
    pub request_id: String,
    pub status: String,
    pub reason: String,
}

/// Writes identity-check results onto a customer's verification entries, with one audit entry
/// (`verified`), in one transaction; answers the customer afterwards.
pub async fn record_checks(
    pool: &sqlx::AnyPool,
    business_id: i64,
    customer_key: &str,
    results: &[CheckResult],
    actor: &Actor,
) -> Result<StoredCustomer, CddError> {
    let mut locked = lock(pool, business_id, customer_key).await?;
    let now = now_ms();
    let before = locked.customer.clone();
    for result in results {
        sqlx::query(
            "UPDATE cdd_verifications SET status = $1, reason = $2, last_run_at_ms = $3, \
             updated_at_ms = $3 WHERE business_id = $4 AND customer_id = $5 AND key = $6 \
             AND request_id = $7",
        )
        .bind(&result.status)
        .bind(&result.reason)
        .bind(now)
        .bind(business_id)
        .bind(&before.id)
        .bind(&result.key)
        .bind(&result.request_id)
        .execute(&mut *locked.tx)
        .await?;
    }
    let after = find(&mut locked.tx, business_id, &before.unique_id)
        .await?
        .ok_or(CddError::NotFound)?;
    let mut changes = audit::diff(&before.audited(), &after.audited());
    if let Some(map) = changes.as_object_mut() {
        for result in results {
            map.insert(
                format!("verifications.{}.reason", result.key),
                json!({"from": null, "to": result.reason}),
            );
        }
    }
    audit::record(
        &mut locked.tx,
        business_id,
        EntityType::CddCustomer,
        &after.id,
        "verified",
        actor,
        now,
        &changes,
    )
    .await?;
    locked.tx.commit().await?;
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdd::risk::ScreeningCheck;

    fn screening() -> CustomerScreening {
        CustomerScreening {
            name: Some("Ada Obi".into()),
            sanction: ScreeningCheck {
                status: "clear".into(),
                best: None,
            },
            pep: ScreeningCheck::not_run(),
            note: None,
        }
    }

    #[test]
    fn a_changed_identity_number_starts_over_and_a_removed_one_is_withdrawn() {
        let old = CustomerInput {
            unique_id: Some("c".into()),
            kind: Some("individual".into()),
            bvn_number: Some("22212345678".into()),
            nin_number: Some("12345678901".into()),
            ..CustomerInput::default()
        };
        let first = plan_verifications(None, &old, &screening(), 1);
        let existing: Vec<(String, VerificationEntry)> = first
            .iter()
            .map(|(g, e, _)| (g.clone(), e.clone()))
            .collect();
        assert!(existing
            .iter()
            .any(|(g, e)| g == "id" && e.key == "bvn" && e.status == AWAITING));
        let sanction = existing
            .iter()
            .find(|(_, e)| e.key == "sanction-screening")
            .expect("screening entry");
        assert_eq!(sanction.1.status, "Clear");
        let pep = existing
            .iter()
            .find(|(_, e)| e.key == "pep-screening")
            .expect("pep entry");
        assert_eq!(pep.1.status, "Not Run");
        assert_eq!(pep.1.last_run_at, None);

        let new = CustomerInput {
            bvn_number: Some("22299999999".into()),
            nin_number: None,
            ..old.clone()
        };
        let plan = plan_verifications(Some((&old, &existing)), &new, &screening(), 2);
        let bvn = plan
            .iter()
            .find(|(_, e, _)| e.key == "bvn")
            .expect("bvn replanned");
        assert_eq!(bvn.1.status, AWAITING);
        assert_ne!(
            bvn.1.request_id,
            existing
                .iter()
                .find(|(_, e)| e.key == "bvn")
                .map(|(_, e)| e.request_id.clone())
                .unwrap_or_default()
        );
        let nin = plan
            .iter()
            .find(|(_, e, _)| e.key == "nin")
            .expect("nin withdrawn");
        assert_eq!(nin.1.status, WITHDRAWN);

        let same = plan_verifications(Some((&old, &existing)), &old, &screening(), 3);
        assert!(
            !same
                .iter()
                .any(|(_, e, _)| e.key == "bvn" || e.key == "nin"),
            "unchanged numbers keep their entries"
        );
    }
}

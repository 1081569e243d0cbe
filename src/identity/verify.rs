//! CDD verifications on identity lookups: a customer's BVN and NIN entries that are "Awaiting
//! Confirmation" are looked up (audited with purpose `cdd-verification`), and the registry's
//! name and date of birth are compared with the customer's — names with the screening matcher's
//! pair score (`ScreeningIndex::score_pair`, 0–100, order- and spelling-tolerant) against
//! `identity.name_match_threshold`, dates exactly. The entry becomes "Verified" or "Failed" with
//! the reason; an unavailable provider leaves it waiting (with the reason) for the next update.
//! `cddVerificationStatus` follows from the entries.

use serde_json::Value;

use super::model::{LookupKind, LookupQuery};
use super::{IdentityError, IdentityService};
use crate::audit::Actor;
use crate::cdd::store::{self, CheckResult, StoredCustomer};
use crate::cdd::{CddError, AWAITING};
use crate::screening::index::ScreeningIndex;

pub const VERIFIED: &str = "Verified";
pub const FAILED: &str = "Failed";

/// The name of a §2.7 person record: first, middle, last.
fn record_name(data: &Value) -> String {
    ["firstName", "middleName", "lastName"]
        .iter()
        .filter_map(|f| data[*f].as_str())
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compares a customer with a registry record; answers (status, reason).
pub fn compare(
    index: &ScreeningIndex,
    threshold: f32,
    kind: LookupKind,
    customer_name: &str,
    customer_dob: Option<&str>,
    data: &Value,
) -> (&'static str, String) {
    let label = kind.label();
    let registry_name = record_name(data);
    if customer_name.trim().is_empty() || registry_name.is_empty() {
        return (
            FAILED,
            format!("no name to compare with the {label} record"),
        );
    }
    // A customer who gave no middle name is compared with the record's first and last name too.
    let short_name = ["firstName", "lastName"]
        .iter()
        .filter_map(|f| data[*f].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let score = index
        .score_pair(customer_name, &registry_name)
        .max(index.score_pair(customer_name, &short_name));
    let score = (f64::from(score) * 10.0).round() / 10.0;
    if score < f64::from(threshold) {
        return (
            FAILED,
            format!(
                "name does not match the {label} record (score {score:.1} of 100, below {threshold})"
            ),
        );
    }
    let registry_dob = data["dateOfBirth"].as_str();
    let dob = match (customer_dob, registry_dob) {
        (Some(given), Some(listed)) if given != listed => {
            return (
                FAILED,
                format!("date of birth does not match the {label} record (score {score:.1} for the name)"),
            );
        }
        (Some(_), Some(_)) => "date of birth matches",
        (None, _) => "no date of birth given to compare",
        (Some(_), None) => "the record has no date of birth to compare",
    };
    (
        VERIFIED,
        format!("name matches the {label} record (score {score:.1} of 100); {dob}"),
    )
}

/// Runs the customer's waiting BVN and NIN checks; answers the customer as it is afterwards
/// (unchanged when nothing waited).
pub async fn run_pending(
    identity: &IdentityService,
    index: &ScreeningIndex,
    pool: &sqlx::AnyPool,
    tenant: i64,
    actor: &Actor,
    customer: StoredCustomer,
) -> Result<StoredCustomer, CddError> {
    let Ok(input) = customer.input() else {
        return Ok(customer);
    };
    let name = [&input.first_name, &input.middle_name, &input.last_name]
        .iter()
        .filter_map(|p| p.as_deref())
        .collect::<Vec<_>>()
        .join(" ");
    let mut results = Vec::new();
    for (_, entry) in &customer.verifications {
        let (kind, number) = match entry.key.as_str() {
            "bvn" => (LookupKind::Bvn, input.bvn_number.as_deref()),
            "nin" => (LookupKind::Nin, input.nin_number.as_deref()),
            _ => continue,
        };
        let Some(number) = number else { continue };
        if entry.status != AWAITING {
            continue;
        }
        let query = LookupQuery::Person {
            kind,
            id_number: number.to_owned(),
        };
        let (status, reason) = match identity
            .lookup(tenant, &actor.api_key, "cdd-verification", &query)
            .await
        {
            Ok(found) => {
                let (status, reason) = compare(
                    index,
                    identity.config.name_match_threshold,
                    kind,
                    &name,
                    input.dob.as_deref(),
                    &found.data,
                );
                (status.to_owned(), reason)
            }
            Err(IdentityError::NotFound(_)) => (
                FAILED.to_owned(),
                format!("{} not found in the registry", kind.label()),
            ),
            Err(IdentityError::Unavailable(problem)) => (
                AWAITING.to_owned(),
                format!(
                    "identity provider unavailable ({problem}); checked again on the next update"
                ),
            ),
            Err(IdentityError::Store(error)) => return Err(CddError::Store(error)),
        };
        results.push(CheckResult {
            key: entry.key.clone(),
            request_id: entry.request_id.clone(),
            status,
            reason,
        });
    }
    if results.is_empty() {
        return Ok(customer);
    }
    store::record_checks(pool, tenant, &customer.unique_id, &results, actor).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index() -> ScreeningIndex {
        ScreeningIndex::build(Vec::new())
    }

    #[test]
    fn a_matching_name_and_birth_date_verify_and_a_different_birth_date_fails() {
        let record = json!({"firstName": "Ada", "middleName": "Ngozi", "lastName": "Obi",
            "dateOfBirth": "1988-04-17"});
        let (status, reason) = compare(
            &index(),
            85.0,
            LookupKind::Bvn,
            "Ada Obi",
            Some("1988-04-17"),
            &record,
        );
        assert_eq!(status, VERIFIED, "{reason}");
        assert!(reason.contains("date of birth matches"), "{reason}");
        let (status, reason) = compare(
            &index(),
            85.0,
            LookupKind::Bvn,
            "OBI Ada",
            Some("1990-01-01"),
            &record,
        );
        assert_eq!(status, FAILED);
        assert!(reason.contains("date of birth does not match"), "{reason}");
        let (status, reason) = compare(
            &index(),
            85.0,
            LookupKind::Nin,
            "Chidi Okafor",
            None,
            &record,
        );
        assert_eq!(status, FAILED);
        assert!(
            reason.contains("name does not match the NIN record"),
            "{reason}"
        );
    }
}

//! CDD customers (spec §2.6, §4.4): creating individual and corporate customers, rating their
//! risk, tracking their verifications, and reading them back in the spec's fetch shape.
//!
//! Data flow: `POST /cdd/customers` ([`api`]) parses a [`profile::CustomerInput`], validates it,
//! screens the customer's name against the loaded sanctions and PEP lists ([`screen`], the same
//! index the transaction screening uses), rates the result with the configured weighted factor
//! table ([`risk`], `[cdd.risk]` in the config), derives the verification entries (BVN, NIN and
//! other identity documents start as "Awaiting Confirmation"; the two screenings are entries
//! too), and stores customer, verifications and an audit entry in one transaction ([`store`]).
//! `PATCH /cdd/customers/{uniqueId}` merges changed fields, screens and rates again, resets the
//! verification of a changed identity number, and audits the diff; `GET` renders the stored
//! customer. BVN and NIN verifications then run against the identity lookups
//! (`crate::identity::verify`): name and date of birth compared, the entry moving to "Verified" or
//! "Failed" with the reason.
//!
//! Every query carries the tenant's `business_id`; `uniqueId` is unique per business.

pub mod api;
pub mod config;
pub mod profile;
pub mod risk;
pub mod store;

use serde::Serialize;
use thiserror::Error;

use crate::model::FieldError;
use crate::screening::entity::ListKind;
use crate::screening::index::ScreenQuery;
use crate::screening::ListScreener;
use crate::store::StoreError;
use profile::CustomerInput;
use risk::{CustomerScreening, ScreenedEntity, ScreeningCheck};

/// Why a CDD operation was refused.
#[derive(Debug, Error)]
pub enum CddError {
    #[error("cdd customer not found")]
    NotFound,
    #[error("a cdd customer with uniqueId '{0}' already exists")]
    Duplicate(String),
    #[error("request validation failed")]
    Invalid(Vec<FieldError>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for CddError {
    fn from(error: sqlx::Error) -> Self {
        CddError::Store(StoreError::Database(error))
    }
}

/// Customer `status` values: `active` at creation; `inactive`; `closed` (archived — records are
/// never deleted).
pub const STATUSES: &[&str] = &["active", "inactive", "closed"];
/// `cddStatus` values: `pending review` at creation and whenever a re-rating changes the tier;
/// `approved` or `rejected` when an analyst decides.
pub const CDD_STATUSES: &[&str] = &["pending review", "approved", "rejected"];

/// Verification statuses: identity checks start `Awaiting Confirmation` (then `Verified` or
/// `Failed` once run); a document removed from the profile is `Withdrawn`; the screening entries
/// are `Clear`, `Potential Match`, `Match` or `Not Run`.
pub const AWAITING: &str = "Awaiting Confirmation";
pub const WITHDRAWN: &str = "Withdrawn";

/// Screens the customer's name against every loaded list (sanctions and PEP), from the
/// potential-match threshold. Runs the index search: call it off the async threads.
pub fn screen(
    screener: &ListScreener,
    enabled: bool,
    tenant: i64,
    profile: &CustomerInput,
) -> CustomerScreening {
    let name = profile.screening_name();
    let Some(query_name) = name.clone().filter(|_| enabled) else {
        return CustomerScreening {
            name,
            sanction: ScreeningCheck::not_run(),
            pep: ScreeningCheck::not_run(),
            note: Some(if enabled {
                "No name to screen: sanctions and PEP factors count as unknown".to_owned()
            } else {
                "Screening is disabled in this deployment: sanctions and PEP factors count as \
                 unknown"
                    .to_owned()
            }),
        };
    };
    let thresholds = screener.thresholds();
    let index = screener.index();
    let hits = index.search(&ScreenQuery {
        name: &query_name,
        kind: None,
        tenant: Some(tenant),
        country: None,
        birth_year: if profile.is_corporate() {
            None
        } else {
            profile.birth_year()
        },
        threshold: thresholds.potential,
        match_threshold: thresholds.matched,
        limit: 10,
    });
    let best = |kind: ListKind| {
        let hit = hits
            .iter()
            .filter(|h| index.list_of(index.entity(h.entity)).kind == kind)
            .max_by(|a, b| a.score.total_cmp(&b.score));
        match hit {
            None => ScreeningCheck {
                status: "clear".to_owned(),
                best: None,
            },
            Some(hit) => {
                let entity = index.entity(hit.entity);
                ScreeningCheck {
                    status: thresholds.status(hit.score).to_owned(),
                    best: Some(ScreenedEntity {
                        entity_id: entity.entity.id.clone(),
                        name: entity.entity.name.clone(),
                        matched_name: hit.matched_name.clone(),
                        list: index.list_of(entity).name.clone(),
                        score: (f64::from(hit.score) * 10.0).round() / 10.0,
                        explanation: Some((*hit.explanation).clone()),
                    }),
                }
            }
        }
    };
    CustomerScreening {
        name,
        sanction: best(ListKind::Sanction),
        pep: best(ListKind::Pep),
        note: None,
    }
}

/// The status of a screening verification entry.
pub fn screening_status(check: &ScreeningCheck) -> &'static str {
    match check.status.as_str() {
        "match" => "Match",
        "potential match" => "Potential Match",
        "clear" => "Clear",
        _ => "Not Run",
    }
}

/// One verification entry (spec §2.6 `verifications.id` / `.others`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationEntry {
    #[schema(example = "bvn")]
    pub key: String,
    #[schema(example = "BVN verification")]
    pub name: String,
    #[schema(example = "Awaiting Confirmation")]
    pub status: String,
    pub request_id: String,
    /// RFC 3339; `null` until the check has run.
    pub last_run_at: Option<String>,
    /// Why a BVN or NIN check came out as it did (Vigil addition; absent until it ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "name matches the BVN record (score 100.0 of 100); date of birth matches")]
    pub reason: Option<String>,
}

/// `verifications`: identity documents in `id`, everything else in `others`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Verifications {
    pub id: Vec<VerificationEntry>,
    pub others: Vec<VerificationEntry>,
}

impl Verifications {
    /// `cddVerificationStatus`: `Awaiting Confirmation` while any identity check waits,
    /// `Failed` if one failed, `Verified` when all passed, `Not Started` with none.
    pub fn overall(&self) -> &'static str {
        let checks: Vec<&VerificationEntry> = self
            .id
            .iter()
            .chain(self.others.iter().filter(|v| v.key == "proof-of-address"))
            .filter(|v| v.status != WITHDRAWN)
            .collect();
        if checks.iter().any(|v| v.status == AWAITING) {
            AWAITING
        } else if checks.iter().any(|v| v.status == "Failed") {
            "Failed"
        } else if checks.is_empty() {
            "Not Started"
        } else {
            "Verified"
        }
    }
}

/// `overallRiskRating.user`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RaterName {
    pub first_name: String,
    pub last_name: String,
}

/// `overallRiskRating`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverallRiskRating {
    /// The score's band: low, medium or high.
    #[schema(example = "medium")]
    pub risk_level: String,
    /// 0–100, a whole number.
    #[schema(example = 42)]
    pub risk_score: f64,
    /// Who rated: Vigil's risk model.
    pub user: RaterName,
}

/// `customer` of the fetch response (spec §2.6).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerSummary {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub unique_id: String,
    #[serde(rename = "type")]
    #[schema(example = "individual")]
    pub kind: String,
    #[schema(example = "active")]
    pub status: String,
    pub channel: Option<String>,
    #[schema(example = "pending review")]
    pub cdd_status: String,
    /// The tier the institution acts on: the score's band, raised by the model's floors.
    #[schema(example = "medium")]
    pub risk_tier: String,
    pub overall_risk_rating: OverallRiskRating,
    #[schema(example = "Awaiting Confirmation")]
    pub cdd_verification_status: String,
    pub created_at: String,
}

/// The fetch response's `data` (spec §2.6), plus Vigil's `riskFactors`, `screening`, `profile`
/// and `updatedAt`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerView {
    pub customer: CustomerSummary,
    pub verifications: Verifications,
    /// A CDD run in progress; always `null` (identity lookups are not wired yet).
    #[schema(value_type = Option<Object>)]
    pub running_cdd: Option<serde_json::Value>,
    /// The rating in plain words.
    pub analysis: String,
    /// Vigil addition: each factor's value, risk, weight and contribution.
    pub risk_factors: Vec<risk::FactorResult>,
    /// Vigil addition: the sanctions and PEP screening of the customer's name.
    pub screening: CustomerScreening,
    /// Vigil addition: the stored profile fields.
    #[schema(value_type = Object)]
    pub profile: serde_json::Value,
    /// Vigil addition: RFC 3339.
    pub updated_at: String,
}

/// The create response's `data` (spec §2.6).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerCreated {
    #[serde(rename = "_id")]
    pub id: String,
    pub unique_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub channel: Option<String>,
    #[schema(example = "active")]
    pub status: String,
    /// `tier 1`, `tier 2` or `tier 3` from the identity data given (see the README).
    #[schema(example = "tier 2")]
    pub kyc_level: String,
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, status: &str) -> VerificationEntry {
        VerificationEntry {
            key: key.into(),
            name: key.into(),
            status: status.into(),
            request_id: "r".into(),
            last_run_at: None,
            reason: None,
        }
    }

    #[test]
    fn the_overall_verification_status_waits_for_any_identity_check() {
        let mut v = Verifications::default();
        assert_eq!(v.overall(), "Not Started");
        v.others.push(entry("sanction-screening", "Clear"));
        assert_eq!(v.overall(), "Not Started", "screening entries do not count");
        v.id.push(entry("bvn", AWAITING));
        v.id.push(entry("nin", "Verified"));
        assert_eq!(v.overall(), AWAITING);
        v.id[0].status = "Verified".into();
        assert_eq!(v.overall(), "Verified");
        v.id[1].status = "Failed".into();
        assert_eq!(v.overall(), "Failed");
        v.id[1].status = WITHDRAWN.into();
        assert_eq!(v.overall(), "Verified");
    }
}

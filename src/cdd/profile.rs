//! The CDD customer profile (spec §2.6 create request): its fields, their validation, and what
//! Vigil derives from it — the display name, the KYC level, the verification entries and the
//! risk model's inputs.

use serde::{Deserialize, Serialize};

use super::risk::RiskInputs;
use crate::api::fields::Problems;
use crate::model::FieldError;
use crate::screening::loaders::country::country_code;

/// Longest value of any profile field.
pub const MAX_FIELD: usize = 1000;

/// `POST /cdd/customers` (spec §2.6): the common fields, the individual fields, and Vigil's
/// additions (`country`, `email`, `rcNumber`, `industry`). Unknown fields are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerInput {
    /// Required; unique per business.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 256,
        pattern = r"[^\s\u0085\uFEFF]",
        example = "CUST-42"
    )]
    pub unique_id: Option<String>,
    /// Required: `individual` or `corporate`.
    #[serde(rename = "type")]
    #[schema(
        required = true,
        nullable = false,
        pattern = r"^\s*([Ii][Nn][Dd][Ii][Vv][Ii][Dd][Uu][Aa][Ll]|[Cc][Oo][Rr][Pp][Oo][Rr][Aa][Tt][Ee])\s*$",
        example = "individual"
    )]
    pub kind: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// Required for corporate customers.
    pub business_name: Option<String>,
    pub group_id: Option<String>,
    pub group_name: Option<String>,
    pub channel: Option<String>,
    pub title: Option<String>,
    pub middle_name: Option<String>,
    /// YYYY-MM-DD, not in the future.
    #[schema(example = "1988-04-17")]
    pub dob: Option<String>,
    pub gender: Option<String>,
    /// An absolute http(s) URL.
    pub photo: Option<String>,
    pub phone: Option<String>,
    pub address: Option<String>,
    /// 11 digits.
    pub bvn_number: Option<String>,
    /// 11 digits.
    pub nin_number: Option<String>,
    pub passport_number: Option<String>,
    pub drivers_license_number: Option<String>,
    pub voters_card_number: Option<String>,
    /// `GET /cdd/customers/{uniqueId}` also finds the customer by this.
    pub account_number: Option<String>,
    pub account_type: Option<String>,
    pub purpose_of_account: Option<String>,
    pub proof_of_address_type: Option<String>,
    /// An absolute http(s) URL.
    pub proof_of_address: Option<String>,
    pub mothers_maiden_name: Option<String>,
    /// ISO country code or English country name (rated as a country).
    pub nationality: Option<String>,
    pub religion: Option<String>,
    pub state_of_origin: Option<String>,
    pub lga_of_origin: Option<String>,
    pub occupation: Option<String>,
    pub marital_status: Option<String>,
    pub source_of_funds: Option<String>,
    pub political_affiliation: Option<bool>,
    pub political_position: Option<bool>,
    pub political_affiliation_relationship: Option<String>,
    pub political_position_description: Option<String>,
    /// Vigil addition: country of residence or incorporation (ISO code or English name).
    pub country: Option<String>,
    /// Vigil addition.
    pub email: Option<String>,
    /// Vigil addition: corporate registry (CAC) number.
    pub rc_number: Option<String>,
    /// Vigil addition: a corporate customer's industry (rated like an occupation).
    pub industry: Option<String>,
}

fn digits(problems: &mut Problems, field: &str, value: &Option<String>) {
    if let Some(v) = value {
        if v.len() != 11 || !v.bytes().all(|b| b.is_ascii_digit()) {
            problems.push(field, "must be 11 digits");
        }
    }
}

impl CustomerInput {
    /// Trims every text field (blank becomes absent) and checks the fields; every problem is
    /// named by field. `type` is lower-cased.
    pub fn validate(mut self) -> Result<CustomerInput, Vec<FieldError>> {
        let mut problems = Problems::default();
        macro_rules! texts {
            ($($field:ident: $name:literal),* $(,)?) => {
                $( self.$field = problems.optional($name, self.$field.as_deref(), MAX_FIELD); )*
            };
        }
        texts!(
            first_name: "firstName", last_name: "lastName", business_name: "businessName",
            group_id: "groupId", group_name: "groupName", channel: "channel", title: "title",
            middle_name: "middleName", dob: "dob", gender: "gender", photo: "photo",
            phone: "phone", address: "address", bvn_number: "bvnNumber",
            nin_number: "ninNumber", passport_number: "passportNumber",
            drivers_license_number: "driversLicenseNumber",
            voters_card_number: "votersCardNumber", account_number: "accountNumber",
            account_type: "accountType", purpose_of_account: "purposeOfAccount",
            proof_of_address_type: "proofOfAddressType", proof_of_address: "proofOfAddress",
            mothers_maiden_name: "mothersMaidenName", nationality: "nationality",
            religion: "religion", state_of_origin: "stateOfOrigin", lga_of_origin: "lgaOfOrigin",
            occupation: "occupation", marital_status: "maritalStatus",
            source_of_funds: "sourceOfFunds",
            political_affiliation_relationship: "politicalAffiliationRelationship",
            political_position_description: "politicalPositionDescription",
            country: "country", email: "email", rc_number: "rcNumber", industry: "industry",
        );
        self.unique_id = problems.required("uniqueId", self.unique_id.as_deref(), 256);
        match problems
            .required("type", self.kind.as_deref(), 32)
            .map(|t| t.to_lowercase())
        {
            Some(kind) if kind == "individual" || kind == "corporate" => self.kind = Some(kind),
            Some(_) => problems.push("type", "must be individual or corporate"),
            None => {}
        }
        if self.kind.as_deref() == Some("corporate") && self.business_name.is_none() {
            problems.push("businessName", "is required for a corporate customer");
        }
        if let Some(dob) = &self.dob {
            problems.birth_date("dob", dob);
        }
        for (field, value) in [
            ("photo", &self.photo),
            ("proofOfAddress", &self.proof_of_address),
        ] {
            if let Some(url) = value {
                problems.url(field, url);
            }
        }
        if let Some(email) = &self.email {
            problems.email("email", email);
        }
        digits(&mut problems, "bvnNumber", &self.bvn_number);
        digits(&mut problems, "ninNumber", &self.nin_number);
        if let Some(country) = &self.country {
            if country_code(country).is_none() {
                problems.push(
                    "country",
                    "must be an ISO 3166-1 country code or an English country name",
                );
            }
        }
        if problems.0.is_empty() {
            Ok(self)
        } else {
            Err(problems.0)
        }
    }

    pub fn is_corporate(&self) -> bool {
        self.kind.as_deref() == Some("corporate")
    }

    /// The display name: the business name for corporates, else title, first, middle and last
    /// names; the uniqueId when no name is given.
    pub fn display_name(&self) -> String {
        if self.is_corporate() {
            if let Some(name) = &self.business_name {
                return name.clone();
            }
        }
        let name = [&self.first_name, &self.middle_name, &self.last_name]
            .iter()
            .filter_map(|p| p.as_deref())
            .collect::<Vec<_>>()
            .join(" ");
        if !name.is_empty() {
            return name;
        }
        self.business_name
            .clone()
            .or_else(|| self.unique_id.clone())
            .unwrap_or_default()
    }

    /// The name to screen, if the customer has one.
    pub fn screening_name(&self) -> Option<String> {
        if self.is_corporate() {
            return self.business_name.clone();
        }
        let name = [&self.first_name, &self.middle_name, &self.last_name]
            .iter()
            .filter_map(|p| p.as_deref())
            .collect::<Vec<_>>()
            .join(" ");
        (!name.is_empty()).then_some(name)
    }

    pub fn birth_year(&self) -> Option<i32> {
        self.dob.as_deref()?.get(..4)?.parse().ok()
    }

    /// KYC level from what the profile holds: `tier 3` with an identity number (BVN or NIN),
    /// an address and a proof of address; `tier 2` with an identity number; else `tier 1`.
    pub fn kyc_level(&self) -> &'static str {
        let identity = self.bvn_number.is_some() || self.nin_number.is_some();
        match (
            identity,
            self.address.is_some() && self.proof_of_address.is_some(),
        ) {
            (true, true) => "tier 3",
            (true, false) => "tier 2",
            _ => "tier 1",
        }
    }

    /// The identity documents to verify: (group, key, name, the value verified).
    pub fn verification_subjects(&self) -> Vec<(&'static str, &'static str, &'static str, String)> {
        let candidates = [
            ("id", "bvn", "BVN verification", &self.bvn_number),
            ("id", "nin", "NIN verification", &self.nin_number),
            (
                "id",
                "passport",
                "International passport",
                &self.passport_number,
            ),
            (
                "id",
                "drivers-license",
                "Driver's licence",
                &self.drivers_license_number,
            ),
            (
                "id",
                "voters-card",
                "Voter's card",
                &self.voters_card_number,
            ),
            ("id", "cac", "CAC registry lookup", &self.rc_number),
            (
                "others",
                "proof-of-address",
                "Proof of address",
                &self.proof_of_address,
            ),
        ];
        candidates
            .into_iter()
            .filter_map(|(group, key, name, value)| {
                value.as_ref().map(|v| (group, key, name, v.clone()))
            })
            .collect()
    }

    pub fn risk_inputs(&self) -> RiskInputs {
        RiskInputs {
            customer_type: self.kind.clone(),
            country: self.country.clone(),
            nationality: self.nationality.clone(),
            occupation: self.occupation.clone().or_else(|| self.industry.clone()),
            channel: self.channel.clone(),
            source_of_funds: self.source_of_funds.clone(),
            account_type: self.account_type.clone(),
            purpose: self.purpose_of_account.clone(),
            political_position: self.political_position,
            political_affiliation: self.political_affiliation,
        }
    }

    /// The stored form: the given fields only.
    pub fn to_stored(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.retain(|_, v| !v.is_null());
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn individual() -> CustomerInput {
        CustomerInput {
            unique_id: Some(" CUST-1 ".into()),
            kind: Some("Individual".into()),
            first_name: Some("Ada".into()),
            last_name: Some("Obi".into()),
            ..CustomerInput::default()
        }
    }

    #[test]
    fn a_minimal_individual_validates_trimmed_and_lower_cased() {
        let valid = individual().validate().expect("valid");
        assert_eq!(valid.unique_id.as_deref(), Some("CUST-1"));
        assert_eq!(valid.kind.as_deref(), Some("individual"));
        assert_eq!(valid.display_name(), "Ada Obi");
        assert_eq!(valid.kyc_level(), "tier 1");
        assert_eq!(valid.to_stored()["firstName"], "Ada");
        assert!(valid.to_stored().get("bvnNumber").is_none());
    }

    #[test]
    fn every_bad_field_is_named() {
        let input = CustomerInput {
            unique_id: Some("  ".into()),
            kind: Some("trust".into()),
            dob: Some("1990-13-01".into()),
            photo: Some("file:///etc/passwd".into()),
            proof_of_address: Some("nope".into()),
            bvn_number: Some("1234".into()),
            nin_number: Some("1234567890a".into()),
            email: Some("ada@".into()),
            country: Some("Atlantis".into()),
            ..CustomerInput::default()
        };
        let errors = input.validate().expect_err("invalid");
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        for field in [
            "uniqueId",
            "type",
            "dob",
            "photo",
            "proofOfAddress",
            "bvnNumber",
            "ninNumber",
            "email",
            "country",
        ] {
            assert!(fields.contains(&field), "{field} missing from {fields:?}");
        }
    }

    #[test]
    fn a_corporate_customer_needs_a_business_name_and_is_named_by_it() {
        let input = CustomerInput {
            unique_id: Some("CORP-1".into()),
            kind: Some("corporate".into()),
            ..CustomerInput::default()
        };
        let errors = input.clone().validate().expect_err("no business name");
        assert_eq!(errors[0].field, "businessName");
        let valid = CustomerInput {
            business_name: Some("Golden Crescent Trading LLC".into()),
            ..input
        }
        .validate()
        .expect("valid");
        assert_eq!(valid.display_name(), "Golden Crescent Trading LLC");
        assert_eq!(
            valid.screening_name().as_deref(),
            Some("Golden Crescent Trading LLC")
        );
    }

    #[test]
    fn identity_numbers_make_verification_entries_and_raise_the_kyc_level() {
        let valid = CustomerInput {
            bvn_number: Some("22212345678".into()),
            nin_number: Some("12345678901".into()),
            address: Some("1 Marina, Lagos".into()),
            proof_of_address: Some("https://files.example.com/poa.pdf".into()),
            ..individual()
        }
        .validate()
        .expect("valid");
        assert_eq!(valid.kyc_level(), "tier 3");
        let keys: Vec<&str> = valid
            .verification_subjects()
            .iter()
            .map(|(_, key, _, _)| *key)
            .collect();
        assert_eq!(keys, ["bvn", "nin", "proof-of-address"]);
    }
}

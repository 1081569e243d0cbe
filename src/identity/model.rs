//! The lookup results of spec §2.7 and the normalisation every provider's answer goes through.
//!
//! Providers answer in their own shapes (snake_case or camelCase keys, numbers where strings are
//! expected, `surname` for `lastName`, dates as `17-04-1988`, a `data` envelope or none).
//! [`normalize`] turns any such JSON object into exactly the §2.7 fields: keys are camel-cased,
//! known aliases folded, scalars turned into strings, dates into `YYYY-MM-DD` where they parse,
//! and fields §2.7 does not name dropped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{is_blank_char, trim_text, FieldError};

/// Which registry a lookup asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LookupKind {
    Nin,
    Bvn,
    Cac,
}

impl LookupKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LookupKind::Nin => "nin",
            LookupKind::Bvn => "bvn",
            LookupKind::Cac => "cac",
        }
    }

    pub fn parse(value: &str) -> Option<LookupKind> {
        match value.to_ascii_lowercase().as_str() {
            "nin" => Some(LookupKind::Nin),
            "bvn" => Some(LookupKind::Bvn),
            "cac" => Some(LookupKind::Cac),
            _ => None,
        }
    }

    /// The upper-case label used in messages (`NIN`, `BVN`, `CAC`).
    pub fn label(self) -> &'static str {
        match self {
            LookupKind::Nin => "NIN",
            LookupKind::Bvn => "BVN",
            LookupKind::Cac => "CAC",
        }
    }

    /// The §2.7 fields of this kind's data, in the spec's order.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            LookupKind::Nin => NIN_FIELDS,
            LookupKind::Bvn => BVN_FIELDS,
            LookupKind::Cac => CAC_FIELDS,
        }
    }
}

pub const NIN_FIELDS: &[&str] = &[
    "idNumber",
    "firstName",
    "lastName",
    "middleName",
    "dateOfBirth",
    "gender",
    "phoneNumber",
    "address",
    "photo",
    "nationality",
    "title",
    "maritalStatus",
    "height",
    "employmentStatus",
    "educationLevel",
    "profession",
    "religion",
    "spokenLanguage",
    "virtualNin",
    "preferredFirstName",
    "preferredMiddleName",
    "preferredSurname",
    "birthCountry",
    "birthState",
    "birthLga",
    "residenceState",
    "residenceLga",
    "residenceTown",
    "residenceStatus",
    "originState",
    "originLga",
    "originPlace",
    "nokFirstName",
    "nokMiddleName",
    "nokSurname",
    "nokAddress",
    "nokLga",
    "nokState",
    "nokTown",
    "nokPostcode",
];

pub const BVN_FIELDS: &[&str] = &[
    "idNumber",
    "firstName",
    "lastName",
    "middleName",
    "dateOfBirth",
    "gender",
    "phoneNumber",
    "phoneNumber2",
    "nationality",
    "address",
    "photo",
    "email",
    "registrationDate",
    "enrollmentBank",
    "enrollmentBranch",
    "levelOfAccount",
    "lgaOfOrigin",
    "lgaOfResidence",
    "stateOfOrigin",
    "stateOfResidence",
    "maritalStatus",
    "nameOnCard",
    "title",
    "watchListed",
    "linkedNin",
];

pub const CAC_FIELDS: &[&str] = &[
    "registrationNumber",
    "businessName",
    "status",
    "classification",
    "registrationDate",
    "headOfficeAddress",
    "branchAddress",
    "state",
    "city",
    "lga",
    "companyEmail",
    "entityType",
    "statusMore",
    "affiliates",
    "affiliatesData",
];

const AFFILIATE_FIELDS: &[&str] = &[
    "surname",
    "firstname",
    "othername",
    "gender",
    "email",
    "phoneNumber",
    "dateOfBirth",
    "dateOfAppointment",
    "nationality",
    "address",
    "occupation",
    "affiliateType",
    "idType",
];

/// Fields holding dates (normalised to `YYYY-MM-DD` when they parse).
const DATE_FIELDS: &[&str] = &["dateOfBirth", "registrationDate", "dateOfAppointment"];

/// Other spellings providers use, folded onto the §2.7 name (after camel-casing).
fn alias(kind: LookupKind, key: &str) -> &str {
    match (kind, key) {
        (LookupKind::Nin, "nin") | (LookupKind::Bvn, "bvn") => "idNumber",
        (_, "id") | (_, "number") => "idNumber",
        (_, "surname") | (_, "lastname") if kind != LookupKind::Cac => "lastName",
        (_, "firstname") | (_, "givenName") if kind != LookupKind::Cac => "firstName",
        (_, "middlename") | (_, "othername") | (_, "otherNames") if kind != LookupKind::Cac => {
            "middleName"
        }
        (_, "birthdate") | (_, "dob") | (_, "birthDate") => "dateOfBirth",
        (_, "phone") | (_, "telephoneno") | (_, "mobile") => "phoneNumber",
        (_, "image") | (_, "photoBase64") => "photo",
        (_, "residenceAddress") if kind == LookupKind::Nin => "address",
        (LookupKind::Cac, "rcNumber") | (LookupKind::Cac, "rcNo") => "registrationNumber",
        (LookupKind::Cac, "companyName") | (LookupKind::Cac, "name") => "businessName",
        (LookupKind::Cac, "companyType") | (LookupKind::Cac, "type") => "classification",
        (LookupKind::Cac, "email") => "companyEmail",
        (LookupKind::Cac, "address") => "headOfficeAddress",
        (LookupKind::Cac, "directors") | (LookupKind::Cac, "affiliatesList") => "affiliatesData",
        _ => key,
    }
}

/// `snake_case` / `kebab-case` / `PascalCase` → `camelCase`.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for (i, c) in key.chars().enumerate() {
        if c == '_' || c == '-' || c == ' ' {
            upper = !out.is_empty();
            continue;
        }
        if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else if i == 0 {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A scalar as a string; `null` and empty strings stay `null`.
fn text(value: &Value) -> Value {
    match value {
        Value::String(s) if s.trim().is_empty() => Value::Null,
        Value::String(s) => Value::String(s.trim().to_owned()),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        _ => Value::Null,
    }
}

/// A date in a provider's format as `YYYY-MM-DD`; anything unparsable is kept as given.
pub fn normalize_date(value: &str) -> String {
    let value = value.trim();
    let head = value.get(..10).unwrap_or(value);
    for format in ["%Y-%m-%d", "%d-%m-%Y", "%d/%m/%Y", "%Y/%m/%d", "%d-%b-%Y"] {
        if let Ok(date) = chrono::NaiveDate::parse_from_str(head, format) {
            return date.format("%Y-%m-%d").to_string();
        }
        if let Ok(date) = chrono::NaiveDate::parse_from_str(value, format) {
            return date.format("%Y-%m-%d").to_string();
        }
    }
    value.to_owned()
}

fn normalize_fields(kind: LookupKind, fields: &[&str], object: &Map<String, Value>) -> Value {
    let mut folded: Map<String, Value> = Map::new();
    for (key, value) in object {
        let key = camel(key);
        let key = alias(kind, &key).to_owned();
        // The first spelling found wins; an exact §2.7 name beats an alias.
        if fields.contains(&key.as_str())
            && (!folded.contains_key(&key) || object.contains_key(&key))
        {
            folded.insert(key, value.clone());
        }
    }
    let mut out = Map::new();
    for field in fields {
        let raw = folded.get(*field).unwrap_or(&Value::Null);
        let value = match *field {
            "affiliates" => match raw {
                Value::Number(n) => n.as_u64().map_or(Value::Null, Value::from),
                Value::String(s) => s.trim().parse::<u64>().map_or(Value::Null, Value::from),
                _ => Value::Null,
            },
            "affiliatesData" => Value::Array(
                raw.as_array()
                    .map(|list| {
                        list.iter()
                            .filter_map(Value::as_object)
                            .map(normalize_affiliate)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            field if DATE_FIELDS.contains(&field) => match text(raw) {
                Value::String(s) => Value::String(normalize_date(&s)),
                other => other,
            },
            _ => text(raw),
        };
        out.insert((*field).to_owned(), value);
    }
    if kind == LookupKind::Cac {
        let count = out["affiliatesData"].as_array().map_or(0, Vec::len);
        if out["affiliates"].is_null() {
            out.insert("affiliates".to_owned(), Value::from(count));
        }
    }
    Value::Object(out)
}

fn normalize_affiliate(object: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    let lowered: Map<String, Value> = object
        .iter()
        .map(|(k, v)| {
            let key = camel(k);
            let key = match key.as_str() {
                "lastName" => "surname".to_owned(),
                "firstName" => "firstname".to_owned(),
                "middleName" | "otherName" => "othername".to_owned(),
                "phone" => "phoneNumber".to_owned(),
                _ => key,
            };
            (key, v.clone())
        })
        .collect();
    for field in AFFILIATE_FIELDS {
        let raw = lowered.get(*field).unwrap_or(&Value::Null);
        let value = match (DATE_FIELDS.contains(field), text(raw)) {
            (true, Value::String(s)) => Value::String(normalize_date(&s)),
            (_, other) => other,
        };
        out.insert((*field).to_owned(), value);
    }
    Value::Object(out)
}

/// Normalises a provider's answer (with or without a `data` envelope) into §2.7 data of `kind`.
/// `None` when it is not an object.
pub fn normalize(kind: LookupKind, answer: &Value) -> Option<Value> {
    let object = match answer.get("data") {
        Some(Value::Object(inner)) => inner,
        _ => answer.as_object()?,
    };
    Some(normalize_fields(kind, kind.fields(), object))
}

/// The record with `photo` removed: what may appear in logs and audit rows.
pub fn without_photo(record: &Value) -> Value {
    let mut copy = record.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("photo");
    }
    copy
}

/// `12345678901` → `123*****901`: the form identity numbers take in logs.
pub fn mask(number: &str) -> String {
    let chars: Vec<char> = number.chars().collect();
    if chars.len() <= 6 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 3..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 6))
}

/// A CAC company type (spec §4.4).
pub const COMPANY_TYPES: &[&str] = &["BN", "RC", "IT"];

/// What a lookup asks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LookupQuery {
    /// NIN or BVN: the 11-digit number.
    Person { kind: LookupKind, id_number: String },
    /// CAC: the registration number (digits, prefix removed), the name given, and the type.
    Company {
        rc_number: String,
        company_name: String,
        company_type: String,
    },
}

impl LookupQuery {
    pub fn kind(&self) -> LookupKind {
        match self {
            LookupQuery::Person { kind, .. } => *kind,
            LookupQuery::Company { .. } => LookupKind::Cac,
        }
    }

    /// The registry key: the number, or `TYPE-digits` for a company.
    pub fn key(&self) -> String {
        match self {
            LookupQuery::Person { id_number, .. } => id_number.clone(),
            LookupQuery::Company {
                rc_number,
                company_type,
                ..
            } => company_key(company_type, rc_number),
        }
    }

    /// The key as it may appear in logs.
    pub fn masked_key(&self) -> String {
        match self {
            LookupQuery::Person { id_number, .. } => mask(id_number),
            // Company registration numbers are public registry data.
            LookupQuery::Company { .. } => self.key(),
        }
    }

    /// What was asked, as the audit stores it.
    pub fn audited(&self) -> Value {
        match self {
            LookupQuery::Person { id_number, .. } => serde_json::json!({"idNumber": id_number}),
            LookupQuery::Company {
                rc_number,
                company_name,
                company_type,
            } => serde_json::json!({"rcNumber": rc_number, "companyName": company_name,
                "companyType": company_type}),
        }
    }
}

/// The registry key of a company: `RC-1234567`.
pub fn company_key(company_type: &str, rc_number: &str) -> String {
    format!("{company_type}-{rc_number}")
}

/// `RC 1234567`, `rc1234567`, `1234567` → `1234567` (the type prefix and separators removed).
pub fn clean_rc_number(value: &str) -> String {
    let upper: String = value
        .to_ascii_uppercase()
        .chars()
        .filter(|c| !is_blank_char(*c) && *c != '-' && *c != '/')
        .collect();
    let stripped = COMPANY_TYPES
        .iter()
        .find_map(|t| upper.strip_prefix(t))
        .unwrap_or(&upper);
    stripped.to_owned()
}

fn required_text(body: &Value, field: &str, errors: &mut Vec<FieldError>) -> Option<String> {
    match body.get(field) {
        None | Some(Value::Null) => {
            errors.push(FieldError::new(field, "is required"));
            None
        }
        Some(Value::String(s)) if trim_text(s).is_empty() => {
            errors.push(FieldError::new(field, "must not be empty"));
            None
        }
        Some(Value::String(s)) => Some(trim_text(s).to_owned()),
        Some(_) => {
            errors.push(FieldError::new(field, "must be a string"));
            None
        }
    }
}

/// Validates a NIN or BVN lookup body: `idNumber`, exactly 11 digits.
pub fn person_query(kind: LookupKind, body: &Value) -> Result<LookupQuery, Vec<FieldError>> {
    let mut errors = Vec::new();
    if !body.is_object() {
        return Err(vec![FieldError::new("body", "expected a JSON object")]);
    }
    let id = required_text(body, "idNumber", &mut errors);
    if let Some(id) = &id {
        if !is_eleven_digits(id) {
            errors.push(FieldError::new(
                "idNumber",
                format!("a {} is exactly 11 digits", kind.label()),
            ));
        }
    }
    match id {
        Some(id_number) if errors.is_empty() => Ok(LookupQuery::Person { kind, id_number }),
        _ => Err(errors),
    }
}

pub fn is_eleven_digits(value: &str) -> bool {
    value.len() == 11 && value.bytes().all(|b| b.is_ascii_digit())
}

/// Validates a CAC lookup body: `rcNumber`, `companyName`, `companyType` ∈ BN, RC, IT.
pub fn company_query(body: &Value) -> Result<LookupQuery, Vec<FieldError>> {
    if !body.is_object() {
        return Err(vec![FieldError::new("body", "expected a JSON object")]);
    }
    let mut errors = Vec::new();
    let rc = required_text(body, "rcNumber", &mut errors);
    let name = required_text(body, "companyName", &mut errors);
    let kind = required_text(body, "companyType", &mut errors);
    let rc = rc.map(|rc| clean_rc_number(&rc));
    if let Some(rc) = &rc {
        if rc.is_empty() || rc.len() > 20 || !rc.bytes().all(|b| b.is_ascii_digit()) {
            errors.push(FieldError::new(
                "rcNumber",
                "must be a registration number: digits, optionally after BN, RC or IT",
            ));
        }
    }
    if let Some(name) = &name {
        if name.chars().count() > 300 {
            errors.push(FieldError::new(
                "companyName",
                "must be at most 300 characters",
            ));
        }
    }
    let kind = kind.map(|k| k.to_ascii_uppercase());
    if let Some(kind) = &kind {
        if !COMPANY_TYPES.contains(&kind.as_str()) {
            errors.push(FieldError::new("companyType", "must be one of BN, RC, IT"));
        }
    }
    match (rc, name, kind) {
        (Some(rc_number), Some(company_name), Some(company_type)) if errors.is_empty() => {
            Ok(LookupQuery::Company {
                rc_number,
                company_name,
                company_type,
            })
        }
        _ => Err(errors),
    }
}

// Documentation-only schemas of §2.7 (the handlers serve the normalised JSON).

/// NIN data (spec §2.7). Every field but `idNumber` is nullable.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = NinData)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct NinDataDoc {
    #[schema(example = "12345678901")]
    id_number: String,
    #[schema(example = "Ada")]
    first_name: Option<String>,
    #[schema(example = "Obi")]
    last_name: Option<String>,
    middle_name: Option<String>,
    /// YYYY-MM-DD.
    #[schema(example = "1988-04-17")]
    date_of_birth: Option<String>,
    gender: Option<String>,
    phone_number: Option<String>,
    address: Option<String>,
    /// A base64 image; never logged.
    photo: Option<String>,
    nationality: Option<String>,
    title: Option<String>,
    marital_status: Option<String>,
    height: Option<String>,
    employment_status: Option<String>,
    education_level: Option<String>,
    profession: Option<String>,
    religion: Option<String>,
    spoken_language: Option<String>,
    virtual_nin: Option<String>,
    preferred_first_name: Option<String>,
    preferred_middle_name: Option<String>,
    preferred_surname: Option<String>,
    birth_country: Option<String>,
    birth_state: Option<String>,
    birth_lga: Option<String>,
    residence_state: Option<String>,
    residence_lga: Option<String>,
    residence_town: Option<String>,
    residence_status: Option<String>,
    origin_state: Option<String>,
    origin_lga: Option<String>,
    origin_place: Option<String>,
    nok_first_name: Option<String>,
    nok_middle_name: Option<String>,
    nok_surname: Option<String>,
    nok_address: Option<String>,
    nok_lga: Option<String>,
    nok_state: Option<String>,
    nok_town: Option<String>,
    nok_postcode: Option<String>,
}

/// BVN data (spec §2.7). Every field but `idNumber` is nullable.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = BvnData)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct BvnDataDoc {
    #[schema(example = "22212345678")]
    id_number: String,
    first_name: Option<String>,
    last_name: Option<String>,
    middle_name: Option<String>,
    date_of_birth: Option<String>,
    gender: Option<String>,
    phone_number: Option<String>,
    phone_number2: Option<String>,
    nationality: Option<String>,
    address: Option<String>,
    /// A base64 image; never logged.
    photo: Option<String>,
    email: Option<String>,
    registration_date: Option<String>,
    enrollment_bank: Option<String>,
    enrollment_branch: Option<String>,
    level_of_account: Option<String>,
    lga_of_origin: Option<String>,
    lga_of_residence: Option<String>,
    state_of_origin: Option<String>,
    state_of_residence: Option<String>,
    marital_status: Option<String>,
    name_on_card: Option<String>,
    title: Option<String>,
    watch_listed: Option<String>,
    linked_nin: Option<String>,
}

/// One affiliate (director, shareholder, proprietor) of a registered company.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CompanyAffiliate)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct AffiliateDoc {
    surname: Option<String>,
    firstname: Option<String>,
    othername: Option<String>,
    gender: Option<String>,
    email: Option<String>,
    phone_number: Option<String>,
    date_of_birth: Option<String>,
    date_of_appointment: Option<String>,
    nationality: Option<String>,
    address: Option<String>,
    occupation: Option<String>,
    affiliate_type: Option<String>,
    id_type: Option<String>,
}

/// Company registry data (spec §2.7).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CompanyData)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct CompanyDataDoc {
    #[schema(example = "1234567")]
    registration_number: Option<String>,
    #[schema(example = "Zenith Harvest Foods Limited")]
    business_name: Option<String>,
    status: Option<String>,
    classification: Option<String>,
    registration_date: Option<String>,
    head_office_address: Option<String>,
    branch_address: Option<String>,
    state: Option<String>,
    city: Option<String>,
    lga: Option<String>,
    company_email: Option<String>,
    entity_type: Option<String>,
    status_more: Option<String>,
    /// How many affiliates the registry lists.
    affiliates: Option<u64>,
    affiliates_data: Vec<AffiliateDoc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_provider_answer_in_snake_case_with_aliases_becomes_exactly_the_spec_fields() {
        let answer = json!({"data": {"nin": 12345678901u64, "first_name": "Ada", "surname": "Obi",
            "birthdate": "17-04-1988", "height": 170, "photo": "iVBOR", "unknown_field": "x"}});
        let data = normalize(LookupKind::Nin, &answer).expect("object");
        let map = data.as_object().expect("object");
        assert_eq!(map.len(), NIN_FIELDS.len());
        assert_eq!(data["idNumber"], "12345678901");
        assert_eq!(data["firstName"], "Ada");
        assert_eq!(data["lastName"], "Obi");
        assert_eq!(data["dateOfBirth"], "1988-04-17");
        assert_eq!(data["height"], "170");
        assert_eq!(data["nokPostcode"], Value::Null);
        assert!(map.get("unknownField").is_none());
    }

    #[test]
    fn company_answers_count_their_affiliates_and_fold_director_names() {
        let answer = json!({"rc_number": "RC 1234567", "company_name": "Zenith Ltd",
            "directors": [{"last_name": "Obi", "first_name": "Ada", "date_of_birth": "1980/01/02"}]});
        let data = normalize(LookupKind::Cac, &answer).expect("object");
        assert_eq!(data["registrationNumber"], "RC 1234567");
        assert_eq!(data["businessName"], "Zenith Ltd");
        assert_eq!(data["affiliates"], 1);
        assert_eq!(data["affiliatesData"][0]["surname"], "Obi");
        assert_eq!(data["affiliatesData"][0]["firstname"], "Ada");
        assert_eq!(data["affiliatesData"][0]["dateOfBirth"], "1980-01-02");
    }

    #[test]
    fn identity_numbers_are_masked_and_validated_as_eleven_digits() {
        assert_eq!(mask("12345678901"), "123*****901");
        assert_eq!(mask("1234"), "****");
        let ok = person_query(LookupKind::Nin, &json!({"idNumber": " 12345678901 "}));
        assert_eq!(
            ok,
            Ok(LookupQuery::Person {
                kind: LookupKind::Nin,
                id_number: "12345678901".into()
            })
        );
        let short = person_query(LookupKind::Bvn, &json!({"idNumber": "1234"})).expect_err("short");
        assert_eq!(short[0].field, "idNumber");
        assert!(short[0].problem.contains("11 digits"), "{:?}", short);
        let missing = person_query(LookupKind::Bvn, &json!({})).expect_err("missing");
        assert_eq!(missing[0].problem, "is required");
        let number = person_query(LookupKind::Bvn, &json!({"idNumber": 22212345678u64}))
            .expect_err("a number is not a string");
        assert_eq!(number[0].problem, "must be a string");
    }

    #[test]
    fn cac_queries_need_all_three_fields_and_a_known_company_type() {
        let errors = company_query(&json!({"rcNumber": "RC123", "companyType": "LLC"}))
            .expect_err("invalid");
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["companyName", "companyType"]);
        let ok = company_query(&json!({"rcNumber": "rc 1234567", "companyName": "Zenith",
            "companyType": "rc"}))
        .expect("valid");
        assert_eq!(ok.key(), "RC-1234567");
    }
}

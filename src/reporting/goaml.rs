//! The goAML XML report (UNODC schema 5.0.1, `fixtures/goaml/goAMLSchema.xsd`) built from the
//! reporting transaction records of spec §2.10, written with quick-xml's writer (never by string
//! concatenation, so every value is escaped).
//!
//! Mapping (see `../shared/data/goaml/README.md`): transactionNumber → `transactionnumber`;
//! transactionDate → `date_transaction` (UTC, no offset); transactionMode → `transmode_code`;
//! amount → `amount_local`; narration → `transaction_description`; sender/receiver → `t_from` /
//! `t_to` with `from_funds_code`/`to_funds_code`, `from_account`/`to_account` (institution name,
//! institution code, account number) and `from_country`/`to_country`. §2.10's `type` has no goAML
//! element in 5.0.1 and is not written. [`check_record`] refuses a record whose values the schema
//! would refuse, naming the field, so one bad record fails that transaction, not the report.

use std::io::Cursor;

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use serde::{Deserialize, Serialize};

use super::codes::{COUNTRY_CODES, CURRENCY_CODES, FUNDS_CODES, REPORT_CODES, TRANSMODE_CODES};

/// One side of a §2.10 record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Party {
    pub country: Option<String>,
    pub funds_code: Option<String>,
    pub account: Option<PartyAccount>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PartyAccount {
    pub institution_name: Option<String>,
    /// A number in the spec; a string is accepted too.
    #[schema(value_type = Option<f64>)]
    pub institution_code: Option<serde_json::Value>,
    pub account_number: Option<String>,
}

/// A reporting transaction record (spec §2.10), as the client endpoint answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportRecord {
    pub transaction_number: Option<String>,
    pub transaction_date: Option<String>,
    #[schema(example = "C")]
    pub transaction_mode: Option<String>,
    #[serde(rename = "type")]
    #[schema(example = "TRANS")]
    pub kind: Option<String>,
    pub amount: Option<f64>,
    pub narration: Option<String>,
    pub sender: Option<Party>,
    pub receiver: Option<Party>,
}

/// The reporting entity's header fields (per business, `PUT /api/v1/reporting/config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportingEntity {
    /// The FIU's id of the reporting entity (≥ 1).
    #[schema(example = 1042)]
    pub rentity_id: i64,
    /// The branch reporting (1–255 characters).
    #[schema(example = "Head office")]
    pub rentity_branch: String,
    /// The goAML user code of the person reporting (4–50 characters).
    #[schema(example = "CCO-0001")]
    pub reporting_user_code: String,
    /// ISO 4217 code of the local currency.
    #[schema(example = "NGN")]
    pub currency_code: String,
    /// The entity's address.
    #[schema(example = "12 Marina Road")]
    pub address: String,
    #[schema(example = "Lagos")]
    pub city: String,
    /// ISO 3166-1 alpha-2.
    #[schema(example = "NG")]
    pub country_code: String,
}

impl ReportingEntity {
    /// Placeholders that validate, for a business that has not described itself yet.
    pub fn placeholder(business: &str) -> ReportingEntity {
        ReportingEntity {
            rentity_id: 1,
            rentity_branch: business.chars().take(255).collect(),
            reporting_user_code: "VIGIL".to_owned(),
            currency_code: "NGN".to_owned(),
            address: "not configured".to_owned(),
            city: "not configured".to_owned(),
            country_code: "NG".to_owned(),
        }
    }

    /// Problems as (field, problem).
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut push = |field: &str, problem: &str| {
            out.push((format!("reportingEntity.{field}"), problem.to_owned()))
        };
        if self.rentity_id < 1 || self.rentity_id > i64::from(i32::MAX) {
            push("rentityId", "must be a positive 32-bit integer");
        }
        let len = |s: &str| s.trim().chars().count();
        if !(1..=255).contains(&len(&self.rentity_branch)) {
            push("rentityBranch", "must be 1-255 characters");
        }
        if !(4..=50).contains(&len(&self.reporting_user_code)) {
            push("reportingUserCode", "must be 4-50 characters");
        }
        if !CURRENCY_CODES.contains(&self.currency_code.as_str()) || self.currency_code == "-" {
            push("currencyCode", "must be a goAML currency code such as NGN");
        }
        if !(1..=100).contains(&len(&self.address)) {
            push("address", "must be 1-100 characters");
        }
        if !(1..=255).contains(&len(&self.city)) {
            push("city", "must be 1-255 characters");
        }
        if !COUNTRY_CODES.contains(&self.country_code.as_str()) || self.country_code == "-" {
            push(
                "countryCode",
                "must be an ISO 3166-1 alpha-2 code in upper case",
            );
        }
        out
    }
}

pub fn is_report_code(code: &str) -> bool {
    code != "-" && REPORT_CODES.contains(&code)
}

/// `2026-03-02T10:15:30Z`, `2026-03-02T11:15:30+01:00`, `2026-03-02 10:15:30`, `2026-03-02` →
/// `2026-03-02T10:15:30` (UTC).
pub fn goaml_time(value: &str) -> Option<String> {
    let value = value.trim();
    let utc = if let Ok(t) = chrono::DateTime::parse_from_rfc3339(value) {
        t.naive_utc()
    } else if let Ok(t) = chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S%.f") {
        t
    } else if let Ok(t) = chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%d %H:%M:%S%.f") {
        t
    } else {
        chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
            .ok()?
            .and_hms_opt(0, 0, 0)?
    };
    if utc.format("%Y").to_string().as_str() < "1753" {
        return None;
    }
    Some(utc.format("%Y-%m-%dT%H:%M:%S").to_string())
}

/// A record checked against what the schema accepts; each value ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedRecord {
    pub number: String,
    pub date: String,
    pub mode: String,
    pub amount: String,
    pub description: String,
    pub from: CheckedParty,
    pub to: CheckedParty,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckedParty {
    pub country: String,
    pub funds_code: String,
    pub institution_name: String,
    pub institution_code: String,
    pub account: String,
}

fn text_between(
    value: Option<&str>,
    field: &str,
    min: usize,
    max: usize,
) -> Result<String, String> {
    let value = value.map(str::trim).unwrap_or_default();
    let n = value.chars().count();
    if n < min {
        return Err(format!("{field} is required"));
    }
    if n > max {
        return Err(format!("{field} is longer than {max} characters"));
    }
    Ok(value.to_owned())
}

fn check_party(party: Option<&Party>, side: &str) -> Result<CheckedParty, String> {
    let party = party.ok_or(format!("{side} is required"))?;
    let country = party
        .country
        .as_deref()
        .map(|c| c.trim().to_ascii_uppercase())
        .unwrap_or_default();
    if country == "-" || !COUNTRY_CODES.contains(&country.as_str()) {
        return Err(format!(
            "{side}.country '{country}' is not an ISO 3166-1 alpha-2 code goAML knows"
        ));
    }
    let funds = party
        .funds_code
        .as_deref()
        .map(|c| c.trim().to_ascii_uppercase())
        .unwrap_or_default();
    if !FUNDS_CODES.contains(&funds.as_str()) {
        return Err(format!(
            "{side}.fundsCode '{funds}' is not a goAML funds code"
        ));
    }
    let account = party
        .account
        .as_ref()
        .ok_or(format!("{side}.account is required"))?;
    let institution_code = match &account.institution_code {
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(serde_json::Value::String(s)) => s.trim().to_owned(),
        _ => String::new(),
    };
    let institution_code = text_between(
        Some(&institution_code),
        &format!("{side}.account.institutionCode"),
        1,
        50,
    )?;
    Ok(CheckedParty {
        country,
        funds_code: funds,
        institution_name: text_between(
            account.institution_name.as_deref(),
            &format!("{side}.account.institutionName"),
            1,
            255,
        )?,
        institution_code,
        account: text_between(
            account.account_number.as_deref(),
            &format!("{side}.account.accountNumber"),
            1,
            50,
        )?,
    })
}

/// Checks a record; the problem names the §2.10 field.
pub fn check_record(record: &ReportRecord) -> Result<CheckedRecord, String> {
    let number = text_between(
        record.transaction_number.as_deref(),
        "transactionNumber",
        1,
        100,
    )?;
    let date = record
        .transaction_date
        .as_deref()
        .and_then(goaml_time)
        .ok_or("transactionDate is missing or not a date-time")?;
    let mode = record
        .transaction_mode
        .as_deref()
        .map(|m| m.trim().to_ascii_uppercase())
        .unwrap_or_default();
    if !TRANSMODE_CODES.contains(&mode.as_str()) {
        return Err(format!(
            "transactionMode '{mode}' is not a goAML conduction code"
        ));
    }
    let amount = record.amount.ok_or("amount is required")?;
    if !amount.is_finite() || amount.abs() >= 7.9e15 {
        return Err("amount is out of range".to_owned());
    }
    let description = record.narration.as_deref().unwrap_or_default().trim();
    if description.chars().count() > 4000 {
        return Err("narration is longer than 4000 characters".to_owned());
    }
    Ok(CheckedRecord {
        number,
        date,
        mode,
        amount: format!("{amount:.2}"),
        description: description.to_owned(),
        from: check_party(record.sender.as_ref(), "sender")?,
        to: check_party(record.receiver.as_ref(), "receiver")?,
    })
}

/// What the report's header says.
#[derive(Debug, Clone)]
pub struct ReportHeader<'a> {
    pub entity: &'a ReportingEntity,
    pub report_code: &'a str,
    /// Vigil's report id, written as `entity_reference`.
    pub reference: &'a str,
    /// RFC 3339 or goAML time of the report.
    pub report_date: &'a str,
    pub reason: &'a str,
}

type XmlWriter = Writer<Cursor<Vec<u8>>>;

fn element(writer: &mut XmlWriter, name: &str, value: &str) -> Result<(), quick_xml::Error> {
    writer.write_event(Event::Start(BytesStart::new(name)))?;
    writer.write_event(Event::Text(BytesText::new(value)))?;
    writer.write_event(Event::End(BytesEnd::new(name)))?;
    Ok(())
}

fn open(writer: &mut XmlWriter, name: &str) -> Result<(), quick_xml::Error> {
    writer.write_event(Event::Start(BytesStart::new(name)))?;
    Ok(())
}

fn close(writer: &mut XmlWriter, name: &str) -> Result<(), quick_xml::Error> {
    writer.write_event(Event::End(BytesEnd::new(name)))?;
    Ok(())
}

fn party(writer: &mut XmlWriter, side: &str, party: &CheckedParty) -> Result<(), quick_xml::Error> {
    let wrapper = if side == "from" { "t_from" } else { "t_to" };
    open(writer, wrapper)?;
    element(writer, &format!("{side}_funds_code"), &party.funds_code)?;
    let account = format!("{side}_account");
    open(writer, &account)?;
    element(writer, "institution_name", &party.institution_name)?;
    element(writer, "institution_code", &party.institution_code)?;
    element(writer, "account", &party.account)?;
    close(writer, &account)?;
    element(writer, &format!("{side}_country"), &party.country)?;
    close(writer, wrapper)?;
    Ok(())
}

/// Writes the report. `records` must not be empty (goAML needs one transaction at least).
pub fn build(header: &ReportHeader<'_>, records: &[CheckedRecord]) -> Result<String, String> {
    if records.is_empty() {
        return Err("a goAML report needs at least one transaction".to_owned());
    }
    let report_date = goaml_time(header.report_date).ok_or("report date is not a date-time")?;
    let write = || -> Result<Vec<u8>, quick_xml::Error> {
        let mut writer = Writer::new_with_indent(Cursor::new(Vec::new()), b' ', 2);
        writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        open(&mut writer, "report")?;
        let e = header.entity;
        element(&mut writer, "rentity_id", &e.rentity_id.to_string())?;
        element(&mut writer, "rentity_branch", e.rentity_branch.trim())?;
        element(&mut writer, "submission_code", "E")?;
        element(&mut writer, "report_code", header.report_code)?;
        element(&mut writer, "entity_reference", header.reference)?;
        element(&mut writer, "report_date", &report_date)?;
        element(&mut writer, "currency_code_local", &e.currency_code)?;
        element(
            &mut writer,
            "reporting_user_code",
            e.reporting_user_code.trim(),
        )?;
        open(&mut writer, "location")?;
        element(&mut writer, "address_type", "-")?;
        element(&mut writer, "address", e.address.trim())?;
        element(&mut writer, "city", e.city.trim())?;
        element(&mut writer, "country_code", &e.country_code)?;
        close(&mut writer, "location")?;
        element(&mut writer, "reason", header.reason)?;
        for record in records {
            open(&mut writer, "transaction")?;
            element(&mut writer, "transactionnumber", &record.number)?;
            element(&mut writer, "transaction_location", "")?;
            element(&mut writer, "transaction_description", &record.description)?;
            element(&mut writer, "date_transaction", &record.date)?;
            element(&mut writer, "transmode_code", &record.mode)?;
            element(&mut writer, "amount_local", &record.amount)?;
            party(&mut writer, "from", &record.from)?;
            party(&mut writer, "to", &record.to)?;
            close(&mut writer, "transaction")?;
        }
        open(&mut writer, "report_indicators")?;
        element(&mut writer, "indicator", "-")?;
        close(&mut writer, "report_indicators")?;
        close(&mut writer, "report")?;
        Ok(writer.into_inner().into_inner())
    };
    let bytes = write().map_err(|e| format!("cannot write the report: {e}"))?;
    String::from_utf8(bytes).map_err(|e| format!("report is not UTF-8: {e}"))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::io::Write;

    pub fn record(number: &str) -> ReportRecord {
        serde_json::from_value(serde_json::json!({
            "transactionNumber": number, "transactionDate": "2026-03-02T10:15:30Z",
            "transactionMode": "C", "type": "TRANS", "amount": 1250000.5,
            "narration": "Cash deposit <branch & counter>",
            "sender": {"country": "NG", "fundsCode": "K", "account": {"institutionName": "Acme Bank",
                "institutionCode": 58, "accountNumber": "0012345678"}},
            "receiver": {"country": "gh", "fundsCode": "A", "account": {"institutionName": "Volta Bank",
                "institutionCode": "GH-01", "accountNumber": "998877"}}}))
        .expect("record parses")
    }

    /// Validates `xml` against the bundled goAML schema with xmllint. Panics (never skips) when
    /// xmllint is missing: `scripts/test.sh` installs it.
    pub fn xmllint(xml: &str) -> Result<(), String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("report.xml");
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(xml.as_bytes()))
            .expect("write report");
        let schema = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/goaml/goAMLSchema.xsd"
        );
        let output = std::process::Command::new("xmllint")
            .args(["--noout", "--schema", schema])
            .arg(&path)
            .output()
            .expect("xmllint must be installed (Debian package libxml2-utils; scripts/test.sh installs it)");
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }

    #[test]
    fn a_report_built_from_spec_records_validates_against_the_goaml_schema() {
        let entity = ReportingEntity::placeholder("Acme & Sons Bank");
        let records: Vec<CheckedRecord> = ["TX-1", "TX-2"]
            .iter()
            .map(|n| check_record(&record(n)).expect("valid record"))
            .collect();
        let xml = build(
            &ReportHeader {
                entity: &entity,
                report_code: "STR",
                reference: "0195f3a2-7c1e",
                report_date: "2026-03-03T08:00:00Z",
                reason: "Suspicious cash deposits",
            },
            &records,
        )
        .expect("builds");
        assert!(xml.contains("<transactionnumber>TX-2</transactionnumber>"));
        assert!(
            xml.contains("&lt;branch &amp; counter&gt;"),
            "values are escaped"
        );
        assert!(xml.contains("<to_country>GH</to_country>"));
        xmllint(&xml).expect("schema-valid");
    }

    #[test]
    fn records_the_schema_would_refuse_are_refused_with_the_field_named() {
        let mut bad = record("TX-3");
        bad.transaction_mode = Some("ZZ".into());
        assert!(check_record(&bad)
            .expect_err("mode")
            .contains("transactionMode"));
        let mut bad = record("TX-4");
        bad.sender.as_mut().expect("sender").country = Some("Nigeria".into());
        assert!(check_record(&bad)
            .expect_err("country")
            .contains("sender.country"));
        let mut bad = record("TX-5");
        bad.transaction_date = Some("yesterday".into());
        assert!(check_record(&bad)
            .expect_err("date")
            .contains("transactionDate"));
        assert_eq!(
            goaml_time("2026-03-02T11:15:30+01:00").as_deref(),
            Some("2026-03-02T10:15:30")
        );
    }
}

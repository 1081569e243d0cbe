//! The transaction submission payload of spec §2.1 and its validation.
//!
//! Both request shapes the spec lists are accepted on the same path: every field of either shape
//! is optional at the serde level and unknown fields are ignored, so a client on either shape (or a
//! newer one) parses. [`TransactionPayload::validate`] then enforces what the engine relies on and
//! turns the payload into a [`Transaction`]: the parsed payload plus the normalised facts the
//! engine uses on the hot path (direction, event time, coordinates).

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{FieldError, StringOrNumber, Text};

/// Longest accepted `transactionData.reference` and `anonymizedUserData.uniqueId`.
pub const MAX_ID_LEN: usize = 256;

/// The transaction submission payload of spec §2.1. Both listed request shapes are accepted on the
/// same path; unknown fields are ignored. Vigil requires `transactionData.reference`,
/// `transactionData.amount` and `anonymizedUserData.uniqueId` on top of the spec's two required
/// sections; every other field is optional.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionPayload {
    /// Required (spec §2.1).
    #[schema(value_type = TransactionData, required = true)]
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub transaction_data: Option<TransactionData>,
    /// Required (spec §2.1).
    #[schema(value_type = AnonymizedUserData, required = true)]
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub anonymized_user_data: Option<AnonymizedUserData>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub device: Option<Device>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub location: Option<Location>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub third_party_user_data: Option<ThirdPartyUserData>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub limits: Option<Limits>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub screening_data: Option<ScreeningData>,
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub beneficiary: Option<Beneficiary>,
    /// Listed in the second request shape only.
    #[serde(default, deserialize_with = "super::object_or_null")]
    pub counterparty_data: Option<CounterpartyData>,
    /// IPv4 (as the spec lists) or IPv6; an empty string is treated as absent.
    #[schema(value_type = Option<String>, example = "203.0.113.7")]
    pub ip_address: Option<Text>,
}

/// `transactionData`. `reference` and `amount` are required by Vigil; the fields from
/// `accountCurrency` on are those of the spec's second request shape.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionData {
    /// The client's unique reference; idempotency key of a submission. Required by Vigil
    /// (1-256 characters after trimming).
    #[schema(value_type = String, min_length = 1, max_length = 256, example = "TRX-2024-000123")]
    pub reference: Option<Text>,
    /// Required by Vigil: a finite number, at least 0.
    #[schema(value_type = f64, minimum = 0.0, example = 25000.0)]
    pub amount: Option<f64>,
    pub is_external_payment: Option<bool>,
    /// The spec lists `debit`. Vigil treats `credit`, `deposit`, `inflow`, `incoming`, `cash_in`
    /// and `cash-in` (any case) as inflows; every other value, and a missing type, counts as an
    /// outflow (debit).
    #[serde(rename = "type")]
    #[schema(value_type = Option<String>, example = "debit")]
    pub kind: Option<Text>,
    /// The spec lists `card payment`.
    #[schema(value_type = Option<String>, example = "card payment")]
    pub channel: Option<Text>,
    /// ISO 8601 event time: RFC 3339, a date-time without offset (taken as UTC) or a plain date.
    /// When absent the arrival time is used; a date further in the future than the configured skew
    /// (`engine.max_future_skew_secs`, default 300 s) is clamped to the arrival time.
    #[schema(value_type = Option<String>, example = "2024-05-01T13:45:00Z")]
    pub transaction_date: Option<Text>,
    pub status: Option<bool>,
    #[schema(value_type = Option<String>, example = "NGN")]
    pub currency: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub receiver_account: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub sender_account: Option<Text>,
    /// Must be finite when present.
    pub balance_before: Option<f64>,
    #[schema(value_type = Option<String>, format = Email)]
    pub email: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub narration: Option<Text>,
    pub refund: Option<bool>,
    pub is_cheque: Option<bool>,
    #[schema(value_type = Option<String>)]
    pub vas_receiver: Option<Text>,
    pub is_internal_account: Option<bool>,
    pub is_staff_account: Option<bool>,
    #[schema(value_type = Option<String>)]
    pub session_id: Option<Text>,
    pub is_dormant_account: Option<bool>,
    #[schema(value_type = Option<String>)]
    pub account_currency: Option<Text>,
    /// Must be finite when present.
    pub account_currency_balance_before: Option<f64>,
    #[schema(value_type = Option<String>)]
    pub signatory: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub transaction_scheme: Option<Text>,
    /// Must be a positive finite number when present.
    #[schema(exclusive_minimum = 0.0)]
    pub exchange_rate: Option<f64>,
    /// Must be a positive finite number when present.
    #[schema(exclusive_minimum = 0.0)]
    pub usd_exchange_rate: Option<f64>,
}

/// `anonymizedUserData`. `uniqueId` is required by Vigil; the fields from `identityNumber` on are
/// those of the spec's second request shape.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnonymizedUserData {
    /// The monitored user's id. Required by Vigil (1-256 characters after trimming).
    #[schema(value_type = String, min_length = 1, max_length = 256, example = "user-8841")]
    pub unique_id: Option<Text>,
    pub is_banned: Option<bool>,
    pub is_identity_verified: Option<bool>,
    #[schema(value_type = Option<String>, format = Email)]
    pub email: Option<Text>,
    /// The spec lists `individual`.
    #[schema(value_type = Option<String>, example = "individual")]
    pub account_type: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub business_category: Option<Text>,
    pub is_phone_number_verified: Option<bool>,
    /// ISO 8601 date-time or date.
    #[schema(value_type = Option<String>, example = "2021-03-14T09:00:00Z")]
    pub date_joined: Option<Text>,
    /// Between 0 and 150 when present.
    #[schema(minimum = 0.0, maximum = 150.0)]
    pub age: Option<f64>,
    #[schema(value_type = Option<String>)]
    pub state: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub city: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub country: Option<Text>,
    /// The spec lists a number; strings are accepted too.
    pub identity_number: Option<StringOrNumber>,
    #[schema(value_type = Option<String>)]
    pub phone: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub occupation: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_code: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub dob: Option<Text>,
    /// Source of wealth.
    #[schema(value_type = Option<String>)]
    pub sow: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub iban: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub sort_code: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_country: Option<Text>,
    pub pep_status: Option<bool>,
}

/// `counterpartyData` (second request shape).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CounterpartyData {
    #[schema(value_type = Option<String>)]
    pub country: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_code: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub account_number: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub account_type: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub iban: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub sort_code: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub bank_country: Option<Text>,
    /// The spec lists a number; strings are accepted too.
    pub identity_number: Option<StringOrNumber>,
    #[schema(value_type = Option<String>, format = Email)]
    pub email: Option<Text>,
}

/// `device`: the device the transaction was made from.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    #[schema(value_type = Option<String>)]
    pub device_id: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub manufacturer: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub model: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub os_name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub os_version: Option<Text>,
}

/// `location`. Coordinates are used only when both are present and in range; an empty string
/// counts as absent.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// Degrees, -90 to 90; the spec lists a string, numbers are accepted too.
    pub latitude: Option<StringOrNumber>,
    /// Degrees, -180 to 180; the spec lists a string, numbers are accepted too.
    pub longitude: Option<StringOrNumber>,
    #[schema(value_type = Option<String>)]
    pub country: Option<Text>,
}

/// `thirdPartyUserData`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThirdPartyUserData {
    #[schema(value_type = Option<String>)]
    pub unique_id: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub card_pan: Option<Text>,
    #[schema(value_type = Option<String>, format = Email)]
    pub email: Option<Text>,
}

/// `limits`: the client's limits for rule evaluation; each a finite number, at least 0.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[schema(minimum = 0.0)]
    pub daily_limit: Option<f64>,
    #[schema(minimum = 0.0)]
    pub overdraft_limit: Option<f64>,
    #[schema(minimum = 0.0)]
    pub individual_transaction_limit: Option<f64>,
}

/// `screeningData`: the names screened against sanction and PEP lists.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreeningData {
    #[schema(value_type = Option<String>)]
    pub sender_name: Option<Text>,
    #[schema(value_type = Option<String>)]
    pub receiver_name: Option<Text>,
}

/// `beneficiary`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Beneficiary {
    pub is_registered_beneficiary: Option<bool>,
    pub is_new_beneficiary: Option<bool>,
}

/// Money moving out of (debit) or into (credit) the monitored user's account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Debit,
    Credit,
}

impl Direction {
    /// Maps `transactionData.type` to a direction. The spec lists only `debit`; clients send
    /// `credit`, `transfer`, `payment`, `withdrawal`, `deposit` and more. Inflows are credits and
    /// everything else (including a missing type) is an outflow: the instant check is asked
    /// about money leaving an account.
    pub fn from_type(kind: Option<&str>) -> Direction {
        let Some(kind) = kind else {
            return Direction::Debit;
        };
        let kind = kind.trim();
        const INFLOWS: [&str; 6] = [
            "credit", "deposit", "inflow", "incoming", "cash_in", "cash-in",
        ];
        if INFLOWS
            .iter()
            .any(|inflow| kind.eq_ignore_ascii_case(inflow))
        {
            Direction::Credit
        } else {
            Direction::Debit
        }
    }
}

/// A validated transaction: the payload as sent plus the facts the engine derives once.
#[derive(Debug, Clone)]
pub struct Transaction {
    pub payload: TransactionPayload,
    pub reference: String,
    pub user_id: String,
    pub amount: f64,
    pub direction: Direction,
    /// Event time in milliseconds since the Unix epoch (`transactionDate`, or arrival time).
    pub event_time_ms: i64,
    /// Arrival time at Vigil in milliseconds since the Unix epoch.
    pub received_at_ms: i64,
    /// `transactionDate` lay beyond the allowed clock skew and was clamped to arrival time.
    pub future_dated: bool,
    pub coordinates: Option<(f64, f64)>,
    /// `dateJoined` in milliseconds since the Unix epoch.
    pub date_joined_ms: Option<i64>,
}

impl Transaction {
    pub fn data(&self) -> &TransactionData {
        // validate() guarantees presence; the default keeps this total.
        static EMPTY: LazyLock<TransactionData> = LazyLock::new(TransactionData::default);
        self.payload.transaction_data.as_ref().unwrap_or(&EMPTY)
    }

    pub fn user(&self) -> &AnonymizedUserData {
        static EMPTY: LazyLock<AnonymizedUserData> = LazyLock::new(AnonymizedUserData::default);
        self.payload.anonymized_user_data.as_ref().unwrap_or(&EMPTY)
    }

    /// The account on the other side of the transaction.
    pub fn counterparty_account(&self) -> Option<&str> {
        let data = self.data();
        let account = match self.direction {
            Direction::Debit => data.receiver_account.as_deref(),
            Direction::Credit => data.sender_account.as_deref(),
        };
        account
            .or_else(|| {
                self.payload
                    .counterparty_data
                    .as_ref()
                    .and_then(|c| c.account_number.as_deref())
            })
            .or(data.vas_receiver.as_deref())
    }

    pub fn device_id(&self) -> Option<&str> {
        self.payload
            .device
            .as_ref()
            .and_then(|d| d.device_id.as_deref())
            .filter(|id| !id.is_empty())
    }
}

/// Clock facts validation needs, passed in so validation is a pure function.
#[derive(Debug, Clone, Copy)]
pub struct ValidationClock {
    pub now_ms: i64,
    /// How far `transactionDate` may lie ahead of `now_ms` before it is clamped.
    pub max_future_skew_ms: i64,
}

impl TransactionPayload {
    /// Checks the payload and derives the engine's facts; every problem is reported with its field.
    pub fn validate(self, clock: ValidationClock) -> Result<Transaction, Vec<FieldError>> {
        let mut errors = Vec::new();
        let Some(data) = self.transaction_data.as_ref() else {
            errors.push(FieldError::new("transactionData", "is required"));
            if self.anonymized_user_data.is_none() {
                errors.push(FieldError::new("anonymizedUserData", "is required"));
            }
            return Err(errors);
        };
        let Some(user) = self.anonymized_user_data.as_ref() else {
            errors.push(FieldError::new("anonymizedUserData", "is required"));
            return Err(errors);
        };

        let reference = required_id(
            data.reference.as_deref(),
            "transactionData.reference",
            &mut errors,
        );
        let user_id = required_id(
            user.unique_id.as_deref(),
            "anonymizedUserData.uniqueId",
            &mut errors,
        );
        let amount = match data.amount {
            None => {
                errors.push(FieldError::new("transactionData.amount", "is required"));
                0.0
            }
            Some(amount) => {
                check_non_negative(amount, "transactionData.amount", &mut errors);
                amount
            }
        };
        check_finite(
            data.balance_before,
            "transactionData.balanceBefore",
            &mut errors,
        );
        check_finite(
            data.account_currency_balance_before,
            "transactionData.accountCurrencyBalanceBefore",
            &mut errors,
        );
        for (value, field) in [
            (data.exchange_rate, "transactionData.exchangeRate"),
            (data.usd_exchange_rate, "transactionData.usdExchangeRate"),
        ] {
            if let Some(rate) = value {
                if !rate.is_finite() || rate <= 0.0 {
                    errors.push(FieldError::new(field, "must be a positive finite number"));
                }
            }
        }
        if let Some(limits) = self.limits.as_ref() {
            for (value, field) in [
                (limits.daily_limit, "limits.dailyLimit"),
                (limits.overdraft_limit, "limits.overdraftLimit"),
                (
                    limits.individual_transaction_limit,
                    "limits.individualTransactionLimit",
                ),
            ] {
                if let Some(value) = value {
                    check_non_negative(value, field, &mut errors);
                }
            }
        }
        if let Some(age) = user.age {
            if !age.is_finite() || !(0.0..=150.0).contains(&age) {
                errors.push(FieldError::new(
                    "anonymizedUserData.age",
                    "must be a number between 0 and 150",
                ));
            }
        }

        let mut event_time_ms = clock.now_ms;
        let mut future_dated = false;
        if let Some(date) = data.transaction_date.as_deref() {
            match parse_datetime_ms(date) {
                Some(ms) if ms > clock.now_ms + clock.max_future_skew_ms => {
                    future_dated = true;
                }
                Some(ms) => event_time_ms = ms,
                None => errors.push(FieldError::new(
                    "transactionData.transactionDate",
                    "must be an ISO 8601 date-time such as 2024-05-01T13:45:00Z",
                )),
            }
        }
        let date_joined_ms = match user.date_joined.as_deref() {
            None => None,
            Some(date) => {
                let parsed = parse_datetime_ms(date);
                if parsed.is_none() {
                    errors.push(FieldError::new(
                        "anonymizedUserData.dateJoined",
                        "must be an ISO 8601 date-time or date",
                    ));
                }
                parsed
            }
        };

        let coordinates = match self.location.as_ref() {
            None => None,
            Some(location) => parse_coordinates(location, &mut errors),
        };
        if let Some(ip) = self.ip_address.as_deref() {
            if !ip.is_empty() && ip.parse::<std::net::IpAddr>().is_err() {
                errors.push(FieldError::new("ipAddress", "must be an IP address"));
            }
        }

        if !errors.is_empty() {
            return Err(errors);
        }
        let direction = Direction::from_type(data.kind.as_deref());
        Ok(Transaction {
            reference,
            user_id,
            amount,
            direction,
            event_time_ms,
            received_at_ms: clock.now_ms,
            future_dated,
            coordinates,
            date_joined_ms,
            payload: self,
        })
    }
}

fn required_id(value: Option<&str>, field: &str, errors: &mut Vec<FieldError>) -> String {
    match super::identifier(value.unwrap_or(""), MAX_ID_LEN) {
        Ok(id) => id.to_owned(),
        Err(problem) => {
            errors.push(FieldError::new(field, problem.to_string()));
            String::new()
        }
    }
}

fn check_non_negative(value: f64, field: &str, errors: &mut Vec<FieldError>) {
    if !value.is_finite() {
        errors.push(FieldError::new(field, "must be a finite number"));
    } else if value < 0.0 {
        errors.push(FieldError::new(field, "must not be negative"));
    }
}

fn check_finite(value: Option<f64>, field: &str, errors: &mut Vec<FieldError>) {
    if let Some(value) = value {
        if !value.is_finite() {
            errors.push(FieldError::new(field, "must be a finite number"));
        }
    }
}

fn parse_coordinates(location: &Location, errors: &mut Vec<FieldError>) -> Option<(f64, f64)> {
    let latitude = coordinate(
        location.latitude.as_ref(),
        "location.latitude",
        90.0,
        errors,
    );
    let longitude = coordinate(
        location.longitude.as_ref(),
        "location.longitude",
        180.0,
        errors,
    );
    match (latitude, longitude) {
        (Some(lat), Some(lon)) => Some((lat, lon)),
        _ => None,
    }
}

fn coordinate(
    value: Option<&StringOrNumber>,
    field: &str,
    bound: f64,
    errors: &mut Vec<FieldError>,
) -> Option<f64> {
    let value = value?;
    let parsed = match value {
        StringOrNumber::Number(n) => Some(*n),
        StringOrNumber::String(s) if s.trim().is_empty() => return None,
        StringOrNumber::String(s) => s.trim().parse::<f64>().ok(),
    };
    match parsed {
        Some(v) if v.is_finite() && v.abs() <= bound => Some(v),
        _ => {
            errors.push(FieldError::new(
                field,
                format!("must be a number between -{bound} and {bound}"),
            ));
            None
        }
    }
}

/// Parses RFC 3339 date-times, date-times without an offset (taken as UTC) and plain dates.
pub fn parse_datetime_ms(value: &str) -> Option<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    let value = value.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Some(dt.timestamp_millis());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(value, format) {
            return Some(dt.and_utc().timestamp_millis());
        }
    }
    if let Ok(dt) = DateTime::parse_from_str(value, "%Y-%m-%d %H:%M:%S%.f%#z") {
        return Some(dt.timestamp_millis());
    }
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOCK: ValidationClock = ValidationClock {
        now_ms: 1_700_000_000_000,
        max_future_skew_ms: 300_000,
    };

    fn payload(json: &str) -> TransactionPayload {
        serde_json::from_str(json).expect("test payload parses")
    }

    fn problems(json: &str) -> Vec<String> {
        payload(json)
            .validate(CLOCK)
            .expect_err("payload should be refused")
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn missing_sections_are_named() {
        assert_eq!(problems("{}"), ["transactionData", "anonymizedUserData"]);
        assert_eq!(
            problems(r#"{"transactionData":{"reference":"r","amount":1}}"#),
            ["anonymizedUserData"]
        );
    }

    #[test]
    fn negative_amount_and_bad_date_are_refused_with_their_fields() {
        let fields = problems(
            r#"{"transactionData":{"reference":"r","amount":-5,"transactionDate":"yesterday"},
                "anonymizedUserData":{"uniqueId":"u"}}"#,
        );
        assert_eq!(
            fields,
            ["transactionData.amount", "transactionData.transactionDate"]
        );
    }

    #[test]
    fn out_of_range_coordinates_are_refused() {
        let fields = problems(
            r#"{"transactionData":{"reference":"r","amount":5},"anonymizedUserData":{"uniqueId":"u"},
                "location":{"latitude":"91","longitude":"abc"}}"#,
        );
        assert_eq!(fields, ["location.latitude", "location.longitude"]);
    }

    #[test]
    fn future_dates_beyond_the_skew_are_clamped_to_arrival() {
        let tx = payload(
            r#"{"transactionData":{"reference":"r","amount":5,"transactionDate":"2999-01-01T00:00:00Z"},
                "anonymizedUserData":{"uniqueId":"u"}}"#,
        )
        .validate(CLOCK)
        .expect("valid");
        assert!(tx.future_dated);
        assert_eq!(tx.event_time_ms, CLOCK.now_ms);
    }

    #[test]
    fn dates_parse_in_the_forms_clients_send() {
        assert_eq!(
            parse_datetime_ms("2017-01-01T15:16:01Z"),
            Some(1_483_283_761_000)
        );
        assert_eq!(
            parse_datetime_ms("2017-01-01T16:16:01+01:00"),
            Some(1_483_283_761_000)
        );
        assert_eq!(
            parse_datetime_ms("2017-01-01T15:16:01.000"),
            Some(1_483_283_761_000)
        );
        assert_eq!(parse_datetime_ms("2017-01-01"), Some(1_483_228_800_000));
        assert_eq!(parse_datetime_ms("01/01/2017"), None);
    }

    #[test]
    fn transaction_types_map_to_directions() {
        assert_eq!(Direction::from_type(Some("credit")), Direction::Credit);
        assert_eq!(Direction::from_type(Some("CREDIT")), Direction::Credit);
        assert_eq!(Direction::from_type(Some("transfer")), Direction::Debit);
        assert_eq!(Direction::from_type(None), Direction::Debit);
    }
}

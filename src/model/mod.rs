//! Wire types shared by every part of Vigil: the transaction payload (spec §2.1), the decision
//! (§2.2), field-level validation errors, and the JSON parsing that produces them.
//!
//! Data flows in as bytes, through [`parse_json`] (simd-json, with the failing field's path kept),
//! into a payload type, whose `validate` turns it into the engine's input. A transaction payload
//! is read straight off simd-json's tape by [`tape`], with serde as the fallback that decides
//! everything the fast path does not take. Decisions flow back out
//! through [`decision`].

pub mod decision;
mod tape;
pub mod transaction;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use decision::{
    Action, Decision, Reason, RuleHit, RuleRef, ScreeningMatch, ScreeningOutcome, Severity,
};
pub use transaction::{Direction, Transaction, TransactionPayload, ValidationClock};

/// Payload text: strings of up to 24 bytes (ids, account numbers, dates, codes) are stored inline,
/// without a heap allocation.
pub type Text = compact_str::CompactString;

/// Whitespace as both Rust (`char::is_whitespace`, Unicode's White_Space) and the OpenAPI
/// document's patterns (ECMAScript's `\s`) count it: they differ only in U+0085 (Rust's) and
/// U+FEFF (ECMAScript's), so text is blank to the service exactly when it is to the document.
pub fn is_blank_char(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

/// `text` without leading and trailing [`is_blank_char`]s.
pub fn trim_text(text: &str) -> &str {
    text.trim_matches(is_blank_char)
}

/// One problem with one field of a request, as reported in a 4xx body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FieldError {
    /// The field's path in the request, e.g. `transactionData.amount`, or `body`, a header name,
    /// a path parameter.
    #[schema(example = "transactionData.amount")]
    pub field: String,
    #[schema(example = "must not be negative")]
    pub problem: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// A JSON value that clients send either as a string or as a number (identity numbers,
/// coordinates).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum StringOrNumber {
    #[schema(value_type = String)]
    String(Text),
    Number(f64),
}

impl StringOrNumber {
    pub fn as_text(&self) -> String {
        match self {
            StringOrNumber::String(s) => s.to_string(),
            StringOrNumber::Number(n) => format!("{n}"),
        }
    }
}

/// A payload section (`transactionData`, `device`, …): an object, or `null` for absent.
///
/// serde's derive also fills a struct from an array, field by field in declaration order, so
/// `"screeningData": ["Ada Obi", "Chidi Eze"]` would have been read as sender and receiver names.
/// A section sent as anything but an object is refused with the section's name instead.
pub(crate) fn object_or_null<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Section<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Section<T> {
        type Value = Option<T>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("an object")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D2: serde::Deserializer<'de>>(
            self,
            deserializer: D2,
        ) -> Result<Self::Value, D2::Error> {
            deserializer.deserialize_any(self)
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }

    deserializer.deserialize_option(Section(std::marker::PhantomData))
}

/// Why a request body could not be turned into the expected type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The body is not JSON at all (HTTP 400).
    Syntax(String),
    /// The body is JSON but a field has the wrong type or shape (HTTP 422).
    Shape(FieldError),
}

thread_local! {
    /// simd-json's working buffers (aligned input copy, structural indexes, string buffer, stage-2
    /// stack), kept per thread so a parse does not allocate and free them every time.
    static PARSE_BUFFERS: std::cell::RefCell<simd_json::Buffers> =
        std::cell::RefCell::new(simd_json::Buffers::new(4096));
}

/// Parses a JSON body with simd-json, keeping the path of the field that failed.
///
/// simd-json parses in place, so the body is copied into `scratch` first; callers on the hot
/// path pass a reusable buffer. simd-json's own buffers are reused per thread. A
/// [`TransactionPayload`] is decoded from the tape directly (see [`tape`]); anything else, and any
/// payload that decoder leaves alone, goes through serde.
pub fn parse_json<T: DeserializeOwned + 'static>(
    body: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<T, ParseError> {
    scratch.clear();
    scratch.extend_from_slice(body);
    // Fast path without path tracking; only a failing body is parsed again to name the field.
    let fast = PARSE_BUFFERS.with(|buffers| match buffers.try_borrow_mut() {
        Ok(mut buffers) => simd_json::to_tape_with_buffers(scratch, &mut buffers)
            .and_then(|tape| from_tape::<T>(tape)),
        // Re-entered on this thread (not expected): parse with fresh buffers.
        Err(_) => simd_json::to_tape(scratch).and_then(|tape| from_tape::<T>(tape)),
    });
    if let Ok(value) = fast {
        return Ok(value);
    }
    scratch.clear();
    scratch.extend_from_slice(body);
    let mut tape = match simd_json::to_tape(scratch) {
        Ok(tape) => tape,
        Err(error) => return Err(ParseError::Syntax(syntax_message(&error))),
    };
    whole_numbers_as_integers(&mut tape.0);
    let mut deserializer = simd_json::Deserializer::from_tape(tape);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => Ok(value),
        Err(error) => {
            let path = error.path().to_string();
            let inner = error.into_inner();
            // A top-level array reaches serde as a sequence; report it as the body being wrong.
            if path == "." || path.is_empty() || path.starts_with('[') {
                return Err(ParseError::Shape(FieldError::new(
                    "body",
                    "expected a JSON object",
                )));
            }
            Err(ParseError::Shape(FieldError::new(
                path,
                shape_message(&inner),
            )))
        }
    }
}

/// The value of a parsed tape: the payload decoder for a transaction payload (a type test, the
/// stable stand-in for specialisation), serde for everything else and as its fallback.
fn from_tape<T: DeserializeOwned + 'static>(mut tape: simd_json::Tape<'_>) -> simd_json::Result<T> {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<TransactionPayload>() {
        if let Some(payload) = tape::decode_payload(&tape.0) {
            let mut slot = Some(payload);
            let any: &mut dyn std::any::Any = &mut slot;
            if let Some(value) = any.downcast_mut::<Option<T>>().and_then(Option::take) {
                return Ok(value);
            }
        }
    }
    whole_numbers_as_integers(&mut tape.0);
    tape.deserialize::<T>()
}

/// JSON has one number type, and JSON Schema's `integer` is any number without a fractional
/// part, so `10.0` is a valid page size (Python's `json.dumps` writes whole floats that way).
/// Integer fields take such numbers: whole floats within ±2⁵³ (where every integer is exact)
/// become integers on the tape; fields of type `f64` take integers as they always did.
fn whole_numbers_as_integers(nodes: &mut [simd_json::Node<'_>]) {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    for node in nodes {
        if let simd_json::Node::Static(simd_json::StaticNode::F64(number)) = *node {
            if number.fract() == 0.0 && number.abs() <= EXACT {
                *node = simd_json::Node::Static(simd_json::StaticNode::I64(number as i64));
            }
        }
    }
}

fn syntax_message(error: &simd_json::Error) -> String {
    format!("body is not valid JSON (at byte {})", error.index())
}

fn shape_message(error: &simd_json::Error) -> String {
    use simd_json::ErrorType;
    match error.error() {
        ErrorType::ExpectedFloat | ErrorType::ExpectedNumber => "expected a number".to_owned(),
        ErrorType::ExpectedInteger | ErrorType::ExpectedSigned | ErrorType::ExpectedUnsigned => {
            "expected a whole number".to_owned()
        }
        ErrorType::ExpectedString => "expected a string".to_owned(),
        ErrorType::ExpectedBoolean | ErrorType::ExpectedTrue | ErrorType::ExpectedFalse => {
            "expected true or false".to_owned()
        }
        ErrorType::ExpectedMap => "expected an object".to_owned(),
        ErrorType::ExpectedArray => "expected an array".to_owned(),
        ErrorType::ExpectedNull => "expected null".to_owned(),
        ErrorType::ExpectedEnum => "expected one of the allowed values".to_owned(),
        ErrorType::Serde(message) => {
            let message = message.split(" at character").next().unwrap_or(message);
            message
                .replace("expected f64", "expected a number")
                .replace("expected a boolean", "expected true or false")
                .to_lowercase()
        }
        other => format!("{other:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_sent_as_anything_but_an_object_or_null_is_refused_by_name() {
        let sections = [
            "transactionData",
            "anonymizedUserData",
            "device",
            "location",
            "thirdPartyUserData",
            "limits",
            "screeningData",
            "beneficiary",
            "counterpartyData",
        ];
        for section in sections {
            for wrong in [
                r#"["Ada Obi", "Chidi Eze"]"#,
                "[]",
                r#""text""#,
                "7",
                "true",
            ] {
                let mut body = serde_json::json!({
                    "transactionData": {"reference": "r", "amount": 1},
                    "anonymizedUserData": {"uniqueId": "u"},
                });
                body[section] = serde_json::from_str(wrong).expect("json");
                let text = body.to_string();
                let error = parse_json::<TransactionPayload>(text.as_bytes(), &mut Vec::new())
                    .expect_err(&text);
                let ParseError::Shape(field) = error else {
                    panic!("{text}: {error:?}");
                };
                assert_eq!(field.field, section, "{text}");
                assert!(
                    field.problem.contains("expected an object"),
                    "{text}: {field:?}"
                );
            }
            let mut body = serde_json::json!({
                "transactionData": {"reference": "r", "amount": 1},
                "anonymizedUserData": {"uniqueId": "u"},
            });
            body[section] = serde_json::Value::Null;
            parse_json::<TransactionPayload>(body.to_string().as_bytes(), &mut Vec::new())
                .expect("null stands for an absent section");
        }
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        page_size: Option<u32>,
        offset: Option<i64>,
        threshold: Option<f64>,
        name: Option<String>,
    }

    #[test]
    fn whole_numbers_written_as_floats_fill_integer_fields_and_fractions_are_refused_by_name() {
        let page: Page = parse_json(
            br#"{"pageSize": 10.0, "offset": -3.0, "threshold": 85.0}"#,
            &mut Vec::new(),
        )
        .expect("whole floats are integers");
        assert_eq!(page.page_size, Some(10));
        assert_eq!(page.offset, Some(-3));
        assert_eq!(page.threshold, Some(85.0));
        assert_eq!(page.name, None);
        for (body, field) in [
            (r#"{"pageSize": 10.5}"#, "pageSize"),
            (r#"{"pageSize": 1e300}"#, "pageSize"),
            (r#"{"pageSize": -1.0}"#, "pageSize"),
            // The path-tracking parse that names the field sees the same numbers.
            (r#"{"pageSize": 10.0, "name": 7}"#, "name"),
        ] {
            let error = parse_json::<Page>(body.as_bytes(), &mut Vec::new()).expect_err(body);
            let ParseError::Shape(problem) = error else {
                panic!("{body}: {error:?}");
            };
            assert_eq!(problem.field, field, "{body}: {problem:?}");
        }
    }

    #[test]
    fn an_integer_beyond_64_bits_is_valid_json_not_a_malformed_body() {
        let body = br#"{"transactionData":{"reference":"r","amount":12601495403592886517760,"extra":{"n":-12601495403592886517760}},"anonymizedUserData":{"uniqueId":"u"}}"#;
        let payload = parse_json::<TransactionPayload>(body, &mut Vec::new()).expect("parses");
        let amount = payload
            .transaction_data
            .and_then(|data| data.amount)
            .expect("amount");
        assert!(
            (amount - 1.260_149_540_359_288_7e22).abs() < 1e7,
            "{amount}"
        );
    }

    #[test]
    fn a_negative_integer_just_below_i64_min_is_valid_json_not_a_malformed_body() {
        // simd-json 0.15 refused -2^63-1 … -2^64+1 (simd-lite/simd-json#447) even with
        // big-int-as-float; found by schemathesis as a 400 for a schema-valid settings body.
        for number in [
            "-9223372036854775809",
            "-10000000000000000000",
            "-18446744073709551615",
            "-18446744073709551616",
        ] {
            let extra = format!(
                r#"{{"transactionData":{{"reference":"r","amount":3,"extra":[{number}]}},"anonymizedUserData":{{"uniqueId":"u"}}}}"#
            );
            let payload = parse_json::<TransactionPayload>(extra.as_bytes(), &mut Vec::new())
                .unwrap_or_else(|error| panic!("{number} in an ignored field: {error:?}"));
            assert_eq!(payload.transaction_data.and_then(|d| d.amount), Some(3.0));

            let any = format!(r#"{{"n":{number}}}"#);
            let value = parse_json::<serde_json::Value>(any.as_bytes(), &mut Vec::new())
                .unwrap_or_else(|error| panic!("{number} as a value: {error:?}"));
            let parsed = value["n"].as_f64().expect("a number");
            let expected: f64 = number.parse().expect("a float");
            assert!(
                (parsed - expected).abs() <= expected.abs() * 1e-15,
                "{parsed} {number}"
            );
        }
    }

    #[test]
    fn wrong_types_name_the_nested_field() {
        let mut scratch = Vec::new();
        let body = br#"{"transactionData":{"reference":"r","amount":"lots"},"anonymizedUserData":{"uniqueId":"u"}}"#;
        let error = parse_json::<TransactionPayload>(body, &mut scratch).expect_err("wrong type");
        match error {
            ParseError::Shape(field) => {
                assert_eq!(field.field, "transactionData.amount");
                assert!(
                    field.problem.contains("expected a number"),
                    "{}",
                    field.problem
                );
            }
            other => panic!("expected a shape error, got {other:?}"),
        }
    }

    #[test]
    fn broken_json_is_a_syntax_error() {
        let mut scratch = Vec::new();
        let error = parse_json::<TransactionPayload>(b"{\"transactionData\": ", &mut scratch)
            .expect_err("broken json");
        assert!(matches!(error, ParseError::Syntax(_)));
    }

    #[test]
    fn a_non_object_body_is_a_shape_error_on_the_body() {
        let mut scratch = Vec::new();
        let error = parse_json::<TransactionPayload>(b"[1,2]", &mut scratch).expect_err("array");
        assert!(
            matches!(error, ParseError::Shape(FieldError { ref field, .. }) if field == "body"),
            "{error:?}"
        );
    }

    #[test]
    fn both_request_shapes_parse() {
        let mut scratch = Vec::new();
        let second_shape =
            br#"{"transactionData":{"reference":"r","amount":10,"accountCurrency":"NGN",
            "exchangeRate":1.0,"usdExchangeRate":0.0012,"signatory":"x","transactionScheme":"NIP"},
            "anonymizedUserData":{"uniqueId":"u","identityNumber":12345678901,"pepStatus":false},
            "counterpartyData":{"name":"Ada","accountNumber":"0123","identityNumber":"A1"}}"#;
        let payload: TransactionPayload = parse_json(second_shape, &mut scratch).expect("parses");
        let data = payload.transaction_data.expect("data");
        assert_eq!(data.account_currency.as_deref(), Some("NGN"));
        assert_eq!(data.usd_exchange_rate, Some(0.0012));
    }
}

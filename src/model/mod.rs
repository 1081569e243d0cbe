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

/// Characters that show nothing: whitespace, control characters (Unicode's Cc), format
/// characters (Cf: zero-width spaces and joiners, bidirectional controls, the byte-order mark,
/// soft hyphen, tags) and the other default-ignorable code points (variation selectors, the
/// combining grapheme joiner, Hangul fillers, Mongolian free variation selectors).
pub fn is_invisible_char(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory};
    if c.is_whitespace() || c.is_control() {
        return true;
    }
    if get_general_category(c) == GeneralCategory::Format {
        return true;
    }
    matches!(c,
        '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FFA0}' | '\u{E0100}'..='\u{E01EF}')
}

/// Why a text is refused as an identifier or a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextProblem {
    /// Absent, empty or only blank characters.
    Missing,
    /// More than the limit, counted in characters as sent.
    TooLong(usize),
    /// Holds a control character (NUL, escape, line breaks, …).
    Control,
    /// Holds only characters that show nothing (zero-width, bidirectional controls, …).
    Invisible,
}

impl std::fmt::Display for TextProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextProblem::Missing => f.write_str("is required"),
            TextProblem::TooLong(max) => write!(f, "must be at most {max} characters"),
            TextProblem::Control => f.write_str("must not contain control characters"),
            TextProblem::Invisible => f.write_str("must contain a visible character"),
        }
    }
}

/// An identifier or name as sent: at most `max` characters (as sent), no control character,
/// at least one visible one; answered trimmed of [`is_blank_char`]s.
pub fn identifier(raw: &str, max: usize) -> Result<&str, TextProblem> {
    let text = trim_text(raw);
    if text.is_empty() {
        return Err(TextProblem::Missing);
    }
    if raw.chars().count() > max {
        return Err(TextProblem::TooLong(max));
    }
    if text.chars().any(char::is_control) {
        return Err(TextProblem::Control);
    }
    if text.chars().all(is_invisible_char) {
        return Err(TextProblem::Invisible);
    }
    Ok(text)
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
            .ok()
            .and_then(|tape| from_tape::<T>(tape)),
        // Re-entered on this thread (not expected): parse with fresh buffers.
        Err(_) => simd_json::to_tape(scratch)
            .ok()
            .and_then(|tape| from_tape::<T>(tape)),
    });
    if let Some(value) = fast {
        return Ok(value);
    }
    scratch.clear();
    scratch.extend_from_slice(body);
    let mut tape = match simd_json::to_tape(scratch) {
        Ok(tape) => tape,
        Err(error) => {
            return Err(match number_out_of_range(body) {
                Some(field) => ParseError::Shape(field),
                None => ParseError::Syntax(syntax_message(&error)),
            })
        }
    };
    if let Some(field) = duplicate_key(&tape.0) {
        return Err(ParseError::Shape(FieldError::new(field, DUPLICATE_KEY)));
    }
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

/// The problem of a key given twice in one object: refused on every endpoint (JSON leaves it
/// undefined, and parsers disagree on which one wins).
pub const DUPLICATE_KEY: &str = "is given more than once (duplicate JSON key)";

/// The value of a parsed tape: the payload decoder for a transaction payload (a type test, the
/// stable stand-in for specialisation), serde for everything else and as its fallback. `None`
/// when serde refuses it or a key repeats: the caller parses again to name the field.
fn from_tape<T: DeserializeOwned + 'static>(mut tape: simd_json::Tape<'_>) -> Option<T> {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<TransactionPayload>() {
        if let Some((payload, saw_unknown_key)) = tape::decode_payload(&tape.0) {
            // Known keys the decoder checked itself; unknown ones only when there were any.
            if saw_unknown_key && duplicate_key(&tape.0).is_some() {
                return None;
            }
            let mut slot = Some(payload);
            let any: &mut dyn std::any::Any = &mut slot;
            if let Some(value) = any.downcast_mut::<Option<T>>().and_then(Option::take) {
                return Some(value);
            }
        }
    }
    if duplicate_key(&tape.0).is_some() {
        return None;
    }
    whole_numbers_as_integers(&mut tape.0);
    tape.deserialize::<T>().ok()
}

/// The path (as serde_path_to_error writes it: `a.b[2].c`) of the first key that appears twice
/// in one object of the tape.
fn duplicate_key(nodes: &[simd_json::Node<'_>]) -> Option<String> {
    let mut path = Vec::new();
    duplicate_in(nodes, 0, &mut path).err()
}

/// One step of a path: an object key or an array index.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn path_text(path: &[Step<'_>]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// Walks the value at `position`; `Ok` is the position after it, `Err` a repeated key's path.
fn duplicate_in<'a>(
    nodes: &'a [simd_json::Node<'a>],
    position: usize,
    path: &mut Vec<Step<'a>>,
) -> Result<usize, String> {
    use simd_json::Node;
    match nodes.get(position) {
        Some(Node::Object { len, .. }) => {
            let mut next = position + 1;
            // Few keys: compare in place; many: a set (a body of 100,000 keys must not take
            // quadratic time).
            let mut seen: Vec<&str> = Vec::new();
            let mut many: Option<std::collections::HashSet<&str>> = None;
            for _ in 0..*len {
                let Some(Node::String(key)) = nodes.get(next) else {
                    return Ok(nodes.len());
                };
                let key: &'a str = key;
                let repeated = match &mut many {
                    Some(set) => !set.insert(key),
                    None if seen.contains(&key) => true,
                    None => {
                        seen.push(key);
                        if seen.len() > 32 {
                            many = Some(seen.drain(..).collect());
                        }
                        false
                    }
                };
                path.push(Step::Key(key));
                if repeated {
                    return Err(path_text(path));
                }
                next = duplicate_in(nodes, next + 1, path)?;
                path.pop();
            }
            Ok(next)
        }
        Some(Node::Array { len, .. }) => {
            let mut next = position + 1;
            for index in 0..*len {
                path.push(Step::Index(index));
                next = duplicate_in(nodes, next, path)?;
                path.pop();
            }
            Ok(next)
        }
        Some(_) => Ok(position + 1),
        None => Ok(nodes.len()),
    }
}

/// A body that is valid JSON but for a number beyond the range of a double (`1e309`): the field
/// that holds it, found by serde_json, which names the path where simd-json gives only a byte.
fn number_out_of_range(body: &[u8]) -> Option<FieldError> {
    // Valid JSON apart from the range: skipping values does not compute numbers.
    serde_json::from_slice::<serde::de::IgnoredAny>(body).ok()?;
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let error =
        serde_path_to_error::deserialize::<_, serde_json::Value>(&mut deserializer).err()?;
    if !error.inner().to_string().starts_with("number out of range") {
        return None;
    }
    let path = error.path().to_string();
    let field = if path.is_empty() || path == "." {
        "body".to_owned()
    } else {
        path
    };
    Some(FieldError::new(field, "is a number out of range"))
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

    fn shape(error: ParseError) -> FieldError {
        match error {
            ParseError::Shape(field) => field,
            other => panic!("expected a field error, got {other:?}"),
        }
    }

    #[test]
    fn a_repeated_key_is_refused_by_its_path_whatever_the_target_type() {
        let mut scratch = Vec::new();
        let cases: [(&[u8], &str); 5] = [
            (
                br#"{"transactionData":{"reference":"r","amount":1,"amount":2}}"#,
                "transactionData.amount",
            ),
            // Unknown keys too: the fast decoder skips them, the check does not.
            (
                br#"{"transactionData":{"reference":"r","note":1,"note":2}}"#,
                "transactionData.note",
            ),
            (br#"{"extra":1,"transactionData":null,"extra":2}"#, "extra"),
            (
                br#"{"transactionData":{"reference":"r","list":[{"a":1},{"b":1,"b":2}]}}"#,
                "transactionData.list[1].b",
            ),
            (
                br#"{"screeningData":{"senderName":"Ada","senderName":"Obi"}}"#,
                "screeningData.senderName",
            ),
        ];
        for (body, path) in cases {
            let error =
                shape(parse_json::<TransactionPayload>(body, &mut scratch).expect_err("dup"));
            assert_eq!(error.field, path, "{}", String::from_utf8_lossy(body));
            assert_eq!(error.problem, DUPLICATE_KEY);
            let error =
                shape(parse_json::<serde_json::Value>(body, &mut scratch).expect_err("dup"));
            assert_eq!(error.field, path, "as a JSON value too");
        }
        // The same key in two different objects is no repeat.
        let body =
            br#"{"transactionData":{"reference":"r"},"anonymizedUserData":{"reference":"r"}}"#;
        assert!(parse_json::<serde_json::Value>(body, &mut scratch).is_ok());
        assert!(parse_json::<TransactionPayload>(body, &mut scratch).is_ok());
    }

    #[test]
    fn a_repeated_key_among_many_is_found_without_quadratic_work() {
        let mut body = String::from("{");
        for i in 0..5_000 {
            body.push_str(&format!("\"k{i}\":{i},"));
        }
        body.push_str("\"k17\":0}");
        let error = shape(
            parse_json::<serde_json::Value>(body.as_bytes(), &mut Vec::new()).expect_err("dup"),
        );
        assert_eq!(error.field, "k17");
    }

    #[test]
    fn a_number_beyond_a_double_names_its_field() {
        let mut scratch = Vec::new();
        let error = shape(
            parse_json::<TransactionPayload>(
                br#"{"transactionData":{"reference":"r","amount":1e309}}"#,
                &mut scratch,
            )
            .expect_err("out of range"),
        );
        assert_eq!(error.field, "transactionData.amount");
        assert_eq!(error.problem, "is a number out of range");
        let error = shape(
            parse_json::<serde_json::Value>(br#"{"pageSize":-1e400}"#, &mut scratch)
                .expect_err("out of range"),
        );
        assert_eq!(error.field, "pageSize");
        // Broken JSON stays a syntax error.
        assert!(matches!(
            parse_json::<serde_json::Value>(br#"{"a":1e309"#, &mut scratch),
            Err(ParseError::Syntax(_))
        ));
    }

    #[test]
    fn identifiers_are_counted_in_characters_trimmed_and_must_show_something() {
        let cyrillic: String = "Ж".repeat(256);
        assert_eq!(identifier(&cyrillic, 256), Ok(cyrillic.as_str()));
        let longer = "Ж".repeat(257);
        assert_eq!(identifier(&longer, 256), Err(TextProblem::TooLong(256)));
        assert_eq!(identifier("\u{feff}", 256), Err(TextProblem::Missing));
        assert_eq!(identifier(" \u{85} ", 256), Err(TextProblem::Missing));
        assert_eq!(
            identifier("\u{202e}\u{200b}", 256),
            Err(TextProblem::Invisible)
        );
        assert_eq!(
            identifier("\u{2060}\u{fe0f}", 256),
            Err(TextProblem::Invisible)
        );
        assert_eq!(identifier("ab\u{0}c", 256), Err(TextProblem::Control));
        assert_eq!(identifier("\u{0}", 256), Err(TextProblem::Control));
        assert_eq!(identifier(" user-1\u{feff}", 256), Ok("user-1"));
        assert_eq!(identifier("Ада\u{200d}", 256), Ok("Ада\u{200d}"));
    }

    #[test]
    fn reference_and_unique_id_follow_the_identifier_rules() {
        let clock = ValidationClock {
            now_ms: 1_767_225_600_000,
            max_future_skew_ms: 300_000,
        };
        let body = |reference: &str, unique: &str| {
            serde_json::json!({
                "transactionData": {"reference": reference, "amount": 5},
                "anonymizedUserData": {"uniqueId": unique}
            })
            .to_string()
        };
        let problems = |text: String| -> Vec<(String, String)> {
            let payload: TransactionPayload =
                parse_json(text.as_bytes(), &mut Vec::new()).expect("parses");
            match payload.validate(clock) {
                Ok(_) => Vec::new(),
                Err(errors) => errors.into_iter().map(|e| (e.field, e.problem)).collect(),
            }
        };
        assert!(problems(body(&"Ж".repeat(129), &"Ж".repeat(256))).is_empty());
        assert_eq!(
            problems(body("r", "\u{feff}")),
            [(
                "anonymizedUserData.uniqueId".to_owned(),
                "is required".to_owned()
            )]
        );
        assert_eq!(
            problems(body("\u{202e}\u{200b}", "u")),
            [(
                "transactionData.reference".to_owned(),
                "must contain a visible character".to_owned()
            )]
        );
        assert_eq!(
            problems(body(&"Ж".repeat(257), "u")),
            [(
                "transactionData.reference".to_owned(),
                "must be at most 256 characters".to_owned()
            )]
        );
    }
}

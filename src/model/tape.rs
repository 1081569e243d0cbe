//! The fast path of payload parsing: a [`TransactionPayload`] read straight off simd-json's tape.
//!
//! [`super::parse_json`] has simd-json build its tape (the validated, unescaped token stream of the
//! body) and, for a transaction payload, hands it here first. This decoder walks the tape once and
//! fills the payload's fields without going through serde's visitor machinery, which on a full
//! §2.1 payload cost more than building the tape itself.
//!
//! It accepts exactly what serde accepts, or gives up: any node it does not expect (a wrong type,
//! a duplicate key, a section sent as an array) makes it answer `None`, and the caller then
//! deserializes the same tape with serde, which either produces the value or the error that names
//! the field. A payload decoded here is therefore always the one serde would have produced; the
//! property test below holds the two to that on random payloads.

use simd_json::{Node, StaticNode};

use super::transaction::{
    AnonymizedUserData, Beneficiary, CounterpartyData, Device, Limits, Location, ScreeningData,
    ThirdPartyUserData, TransactionData, TransactionPayload,
};
use super::{StringOrNumber, Text};

thread_local! {
    /// Whether the decode in progress on this thread skipped a key it does not know (such keys
    /// are not checked for repeats here; the caller checks the whole tape then).
    static SAW_UNKNOWN_KEY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Decodes a whole tape into a payload, or `None` if serde must decide; with the payload,
/// whether any key was skipped as unknown.
pub(crate) fn decode_payload(nodes: &[Node<'_>]) -> Option<(TransactionPayload, bool)> {
    SAW_UNKNOWN_KEY.set(false);
    let mut position = 0;
    let payload = TransactionPayload::decode_object(nodes, &mut position)?;
    (position == nodes.len()).then(|| (payload, SAW_UNKNOWN_KEY.get()))
}

/// A field value read from the node at `position`, which then points past the value.
trait FromTape: Sized {
    fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self>;
}

/// The value at `position` is `null`: consumed, and the field is absent.
fn take_null(nodes: &[Node<'_>], position: &mut usize) -> bool {
    if matches!(nodes.get(*position), Some(Node::Static(StaticNode::Null))) {
        *position += 1;
        return true;
    }
    false
}

/// The position after the value at `position` (nested objects and arrays skipped whole).
fn skip_value(nodes: &[Node<'_>], position: usize) -> Option<usize> {
    match nodes.get(position)? {
        Node::Object { count, .. } | Node::Array { count, .. } => Some(position + count + 1),
        _ => Some(position + 1),
    }
}

impl FromTape for Option<Text> {
    fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
        if take_null(nodes, position) {
            return Some(None);
        }
        let Node::String(text) = nodes.get(*position)? else {
            return None;
        };
        *position += 1;
        Some(Some(Text::from(*text)))
    }
}

/// As simd-json's serde `deserialize_f64`: any JSON number, integers converted.
fn number(node: &Node<'_>) -> Option<f64> {
    match node {
        Node::Static(StaticNode::F64(value)) => Some(*value),
        Node::Static(StaticNode::I64(value)) => Some(*value as f64),
        Node::Static(StaticNode::U64(value)) => Some(*value as f64),
        _ => None,
    }
}

impl FromTape for Option<f64> {
    fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
        if take_null(nodes, position) {
            return Some(None);
        }
        let value = number(nodes.get(*position)?)?;
        *position += 1;
        Some(Some(value))
    }
}

impl FromTape for Option<bool> {
    fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
        if take_null(nodes, position) {
            return Some(None);
        }
        let Node::Static(StaticNode::Bool(value)) = nodes.get(*position)? else {
            return None;
        };
        *position += 1;
        Some(Some(*value))
    }
}

/// As serde's untagged enum: a string first, then a number.
impl FromTape for Option<StringOrNumber> {
    fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
        if take_null(nodes, position) {
            return Some(None);
        }
        let node = nodes.get(*position)?;
        let value = match node {
            Node::String(text) => StringOrNumber::String(Text::from(*text)),
            other => StringOrNumber::Number(number(other)?),
        };
        *position += 1;
        Some(Some(value))
    }
}

/// For each payload struct: the JSON key of every field (as serde's `rename_all = "camelCase"`
/// and renames spell it), decoded from an object node. Unknown keys are skipped, as serde does; a
/// key seen twice is left to serde, which refuses it.
macro_rules! tape_struct {
    ($name:ident { $($key:literal => $field:ident),+ $(,)? }) => {
        impl $name {
            /// `position` is at the object's header; afterwards it is past the object.
            fn decode_object(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
                let Node::Object { len, .. } = nodes.get(*position)? else {
                    return None;
                };
                *position += 1;
                #[derive(Default)]
                struct Seen {
                    $($field: bool),+
                }
                let mut seen = Seen::default();
                let mut value = $name::default();
                for _ in 0..*len {
                    let Node::String(key) = nodes.get(*position)? else {
                        return None;
                    };
                    *position += 1;
                    match *key {
                        $($key => {
                            if std::mem::replace(&mut seen.$field, true) {
                                return None;
                            }
                            value.$field = FromTape::from_tape(nodes, position)?;
                        })+
                        _ => {
                            SAW_UNKNOWN_KEY.set(true);
                            *position = skip_value(nodes, *position)?
                        }
                    }
                }
                Some(value)
            }
        }

        impl FromTape for Option<$name> {
            fn from_tape(nodes: &[Node<'_>], position: &mut usize) -> Option<Self> {
                if take_null(nodes, position) {
                    return Some(None);
                }
                $name::decode_object(nodes, position).map(Some)
            }
        }
    };
}

tape_struct!(TransactionPayload {
    "transactionData" => transaction_data,
    "anonymizedUserData" => anonymized_user_data,
    "device" => device,
    "location" => location,
    "thirdPartyUserData" => third_party_user_data,
    "limits" => limits,
    "screeningData" => screening_data,
    "beneficiary" => beneficiary,
    "counterpartyData" => counterparty_data,
    "ipAddress" => ip_address,
});

tape_struct!(TransactionData {
    "reference" => reference,
    "amount" => amount,
    "isExternalPayment" => is_external_payment,
    "type" => kind,
    "channel" => channel,
    "transactionDate" => transaction_date,
    "status" => status,
    "currency" => currency,
    "receiverAccount" => receiver_account,
    "senderAccount" => sender_account,
    "balanceBefore" => balance_before,
    "email" => email,
    "narration" => narration,
    "refund" => refund,
    "isCheque" => is_cheque,
    "vasReceiver" => vas_receiver,
    "isInternalAccount" => is_internal_account,
    "isStaffAccount" => is_staff_account,
    "sessionId" => session_id,
    "isDormantAccount" => is_dormant_account,
    "accountCurrency" => account_currency,
    "accountCurrencyBalanceBefore" => account_currency_balance_before,
    "signatory" => signatory,
    "transactionScheme" => transaction_scheme,
    "exchangeRate" => exchange_rate,
    "usdExchangeRate" => usd_exchange_rate,
});

tape_struct!(AnonymizedUserData {
    "uniqueId" => unique_id,
    "isBanned" => is_banned,
    "isIdentityVerified" => is_identity_verified,
    "email" => email,
    "accountType" => account_type,
    "businessCategory" => business_category,
    "isPhoneNumberVerified" => is_phone_number_verified,
    "dateJoined" => date_joined,
    "age" => age,
    "state" => state,
    "city" => city,
    "country" => country,
    "identityNumber" => identity_number,
    "phone" => phone,
    "occupation" => occupation,
    "bankCode" => bank_code,
    "bankName" => bank_name,
    "name" => name,
    "dob" => dob,
    "sow" => sow,
    "iban" => iban,
    "sortCode" => sort_code,
    "bankCountry" => bank_country,
    "pepStatus" => pep_status,
});

tape_struct!(CounterpartyData {
    "country" => country,
    "bankCode" => bank_code,
    "name" => name,
    "bankName" => bank_name,
    "accountNumber" => account_number,
    "accountType" => account_type,
    "iban" => iban,
    "sortCode" => sort_code,
    "bankCountry" => bank_country,
    "identityNumber" => identity_number,
    "email" => email,
});

tape_struct!(Device {
    "deviceId" => device_id,
    "manufacturer" => manufacturer,
    "model" => model,
    "name" => name,
    "osName" => os_name,
    "osVersion" => os_version,
});

tape_struct!(Location {
    "latitude" => latitude,
    "longitude" => longitude,
    "country" => country,
});

tape_struct!(ThirdPartyUserData {
    "uniqueId" => unique_id,
    "cardPan" => card_pan,
    "email" => email,
});

tape_struct!(Limits {
    "dailyLimit" => daily_limit,
    "overdraftLimit" => overdraft_limit,
    "individualTransactionLimit" => individual_transaction_limit,
});

tape_struct!(ScreeningData {
    "senderName" => sender_name,
    "receiverName" => receiver_name,
});

tape_struct!(Beneficiary {
    "isRegisteredBeneficiary" => is_registered_beneficiary,
    "isNewBeneficiary" => is_new_beneficiary,
});

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::*;

    /// What serde makes of `body`, as JSON (Err if serde refuses it).
    fn by_serde(body: &[u8]) -> Result<Value, String> {
        let mut bytes = body.to_vec();
        simd_json::serde::from_slice::<TransactionPayload>(&mut bytes)
            .map(|payload| serde_json::to_value(payload).expect("serializes"))
            .map_err(|error| error.to_string())
    }

    /// What the tape decoder makes of `body`: Err if the JSON itself is invalid, Ok(None) if it
    /// leaves the body to serde.
    fn by_tape(body: &[u8]) -> Result<Option<Value>, String> {
        let mut bytes = body.to_vec();
        let tape = simd_json::to_tape(&mut bytes).map_err(|error| error.to_string())?;
        Ok(decode_payload(&tape.0).map(|(payload, _)| serde_json::to_value(payload).expect("ok")))
    }

    /// Every key of every section, as serde spells them (from serializing a payload with every
    /// section present), so a misspelt key in the tables above fails the tests.
    fn serde_keys() -> Vec<(String, Vec<String>)> {
        let sections = TransactionPayload {
            transaction_data: Some(Default::default()),
            anonymized_user_data: Some(Default::default()),
            device: Some(Default::default()),
            location: Some(Default::default()),
            third_party_user_data: Some(Default::default()),
            limits: Some(Default::default()),
            screening_data: Some(Default::default()),
            beneficiary: Some(Default::default()),
            counterparty_data: Some(Default::default()),
            ip_address: None,
        };
        let Value::Object(top) = serde_json::to_value(sections).expect("serializes") else {
            panic!("payload serializes to an object");
        };
        top.into_iter()
            .map(|(key, value)| {
                let fields = match value {
                    Value::Object(fields) => fields.keys().cloned().collect(),
                    _ => Vec::new(),
                };
                (key, fields)
            })
            .collect()
    }

    /// A value of the field's own type, found by asking serde which of a string, a number and a
    /// bool it takes there (it takes exactly one; strings or numbers both for the few
    /// string-or-number fields, where the string is tried first).
    fn typed_value(section: &str, field: &str, seed: usize) -> Value {
        let candidates = [
            json!(format!("{section}-{field}-{seed}")),
            json!(seed as f64 + 0.5),
            json!(seed % 2 == 0),
        ];
        candidates
            .into_iter()
            .find(|candidate| {
                let mut probe = Map::new();
                probe.insert(field.to_owned(), candidate.clone());
                let probe = json!({ section: probe });
                by_serde(probe.to_string().as_bytes())
                    .is_ok_and(|value| value[section][field] != Value::Null)
            })
            .expect("serde accepts one of a string, a number, a bool")
    }

    #[test]
    fn a_payload_with_every_field_set_decodes_as_serde_decodes_it() {
        let mut body = Map::new();
        for (index, (section, fields)) in serde_keys().into_iter().enumerate() {
            if fields.is_empty() {
                body.insert(section, json!(format!("value-{index}")));
                continue;
            }
            let mut object = Map::new();
            for (field_index, field) in fields.into_iter().enumerate() {
                let accepted = typed_value(&section, &field, field_index);
                object.insert(field, accepted);
            }
            body.insert(section, Value::Object(object));
        }
        let body = Value::Object(body).to_string();
        let from_tape = by_tape(body.as_bytes())
            .expect("valid json")
            .expect("the tape decoder takes a well-formed payload");
        assert_eq!(
            from_tape,
            by_serde(body.as_bytes()).expect("serde takes it")
        );
        // Nothing came out empty: every field the body set is set in the result.
        for (section, fields) in serde_keys() {
            for field in fields {
                assert_ne!(
                    from_tape[&section][&field],
                    Value::Null,
                    "{section}.{field}"
                );
            }
        }
    }

    #[test]
    fn whatever_serde_refuses_is_left_to_serde() {
        for body in [
            r#"[]"#,
            r#""text""#,
            r#"{"transactionData": [1, 2]}"#,
            r#"{"transactionData": {"amount": "12"}}"#,
            r#"{"transactionData": {"status": 1}}"#,
            r#"{"transactionData": {"reference": 7}}"#,
            r#"{"location": {"latitude": true}}"#,
            r#"{"device": {"deviceId": "a", "deviceId": "b"}}"#,
            r#"{"device": {"deviceId": null, "deviceId": "b"}}"#,
            r#"{"device": null, "device": {}}"#,
        ] {
            assert_eq!(by_tape(body.as_bytes()), Ok(None), "{body}");
            assert!(by_serde(body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn unknown_keys_and_nulls_are_taken_as_serde_takes_them() {
        let body = r#"{"extra": {"deep": [1, {"x": [2, 3]}], "more": null},
            "transactionData": {"reference": "r\u00e9f\n", "amount": 12, "future": [true],
                "channel": null},
            "anonymizedUserData": {"uniqueId": "u", "identityNumber": 12345678901},
            "location": {"latitude": "6.5", "longitude": -3},
            "limits": null, "ipAddress": null, "tail": 1}"#;
        let from_tape = by_tape(body.as_bytes()).expect("valid").expect("decoded");
        assert_eq!(
            from_tape,
            by_serde(body.as_bytes()).expect("serde takes it")
        );
        assert_eq!(from_tape["transactionData"]["reference"], json!("réf\n"));
        assert_eq!(from_tape["transactionData"]["amount"], json!(12.0));
        assert_eq!(from_tape["location"]["longitude"], json!(-3.0));
    }

    /// A JSON value of any type, nested a little.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e12f64..1e12).prop_map(Value::from),
            "[a-zA-Z0-9 é\"\\\\]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::vec(("[a-z]{1,6}", inner), 0..3)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    /// A payload-like body: known sections and keys (sometimes unknown ones, sometimes a key
    /// twice) with values of random types; and whether a known section was sent as an array
    /// (which serde reads as the struct's fields in order, and the tape decoder leaves to it).
    fn any_body() -> impl Strategy<Value = (String, bool)> {
        let keys = serde_keys();
        let sections = keys.len();
        // One well-typed value per known field, and its type's other values by seed.
        let typed: Vec<Vec<Value>> = keys
            .iter()
            .map(|(section, fields)| {
                fields
                    .iter()
                    .map(|field| typed_value(section, field, 0))
                    .collect()
            })
            .collect();
        prop::collection::vec(
            (
                0..sections + 1,
                prop::collection::vec(
                    (
                        0usize..40,
                        any_value(),
                        prop::bool::weighted(0.9),
                        any::<u32>(),
                    ),
                    0..12,
                ),
                any::<bool>(),
                any_value(),
            ),
            0..10,
        )
        .prop_map(move |parts| {
            let mut body = String::from("{");
            let mut array_section = false;
            for (index, (section, fields, as_object, raw)) in parts.into_iter().enumerate() {
                if index > 0 {
                    body.push(',');
                }
                let (name, known) = match keys.get(section) {
                    Some((name, known)) => (name.clone(), known.clone()),
                    None => ("unknownSection".to_owned(), Vec::new()),
                };
                body.push_str(&Value::from(name).to_string());
                body.push(':');
                if !as_object || known.is_empty() {
                    array_section |= raw.is_array() && section < keys.len();
                    body.push_str(&raw.to_string());
                    continue;
                }
                body.push('{');
                for (field_index, (field, value, well_typed, seed)) in
                    fields.into_iter().enumerate()
                {
                    if field_index > 0 {
                        body.push(',');
                    }
                    let key = known
                        .get(field)
                        .cloned()
                        .unwrap_or_else(|| format!("other{field}"));
                    // Mostly a value of the field's own type, so that many bodies decode whole.
                    let value = match typed[section].get(field) {
                        Some(Value::String(_)) if well_typed => Value::from(format!("s{seed}")),
                        Some(Value::Number(_)) if well_typed => Value::from(f64::from(seed) / 8.0),
                        Some(Value::Bool(_)) if well_typed => Value::from(seed % 2 == 0),
                        _ => value,
                    };
                    body.push_str(&Value::from(key).to_string());
                    body.push(':');
                    body.push_str(&value.to_string());
                }
                body.push('}');
            }
            body.push('}');
            (body, array_section)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_tape_decoder_agrees_with_serde_or_leaves_the_body_to_it(
            (body, array_section) in any_body()
        ) {
            let serde = by_serde(body.as_bytes());
            match by_tape(body.as_bytes()) {
                Ok(Some(from_tape)) => prop_assert_eq!(Ok(from_tape), serde, "{}", body),
                // Left to serde only where serde refuses it (wrong types, duplicate keys) or
                // reads a section from an array.
                Ok(None) => prop_assert!(serde.is_err() || array_section, "{}", body),
                Err(_) => prop_assert!(serde.is_err(), "{}", body),
            }
        }
    }
}

//! Field checks shared by the workflow endpoints (cases, CDD, EDD): required and optional text,
//! dates, e-mail addresses, URLs, and query strings. Each check reports a [`FieldError`] naming
//! the field, so handlers collect every problem of a request and answer one 422.

use std::collections::BTreeMap;

use chrono::{NaiveDate, TimeZone, Utc};

use super::error::ApiError;
use crate::model::{is_invisible_char, trim_text, FieldError, TextProblem};

/// Longest free text accepted in one field (titles, names, comments are shorter by caller's
/// choice; descriptions and comments may be long).
pub const MAX_TEXT: usize = 10_000;
/// Longest identifier or short field.
pub const MAX_SHORT: usize = 256;

/// The document's pattern of non-blank text: one character that is whitespace neither to the
/// service ([`crate::model::is_blank_char`]) nor to ECMAScript's `\s` (the `#[schema(pattern = …)]`
/// attributes spell the same literal).
pub const NON_BLANK_PATTERN: &str = r"[^\s\u0085\uFEFF]";

/// Collects field problems; `finish` answers 422 if there were any.
#[derive(Debug, Default)]
pub struct Problems(pub Vec<FieldError>);

impl Problems {
    pub fn push(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldError::new(field, problem));
    }

    pub fn finish(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(self.0))
        }
    }

    /// A required, non-blank text of at most `max` characters as sent (as the document's
    /// `maxLength` counts), trimmed.
    pub fn required(&mut self, field: &str, value: Option<&str>, max: usize) -> Option<String> {
        let Some(raw) = value else {
            self.push(field, "is required");
            return None;
        };
        if trim_text(raw).is_empty() {
            self.push(field, "must not be empty");
            return None;
        }
        self.at_most(field, raw, max)
    }

    /// An optional text: `None` when absent or blank, else at most `max` characters as sent,
    /// trimmed.
    pub fn optional(&mut self, field: &str, value: Option<&str>, max: usize) -> Option<String> {
        let raw = value.filter(|raw| !trim_text(raw).is_empty())?;
        self.at_most(field, raw, max)
    }

    /// At most `max` characters as sent; no control character but tab and line breaks (text may
    /// run over lines; NUL and escapes may not); at least one visible character.
    fn at_most(&mut self, field: &str, raw: &str, max: usize) -> Option<String> {
        if raw.chars().count() > max {
            self.push(field, format!("must be at most {max} characters"));
            return None;
        }
        let text = trim_text(raw);
        if text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        {
            self.push(field, TextProblem::Control.to_string());
            return None;
        }
        if text.chars().all(is_invisible_char) {
            self.push(field, TextProblem::Invisible.to_string());
            return None;
        }
        Some(text.to_owned())
    }

    /// A calendar date `YYYY-MM-DD` between 1900-01-01 and today.
    pub fn birth_date(&mut self, field: &str, value: &str) -> Option<NaiveDate> {
        match NaiveDate::parse_from_str(value.trim(), "%Y-%m-%d") {
            Ok(date) if date > Utc::now().date_naive() => {
                self.push(field, "must not be in the future");
                None
            }
            Ok(date) if date < NaiveDate::from_ymd_opt(1900, 1, 1).unwrap_or(date) => {
                self.push(field, "must be on or after 1900-01-01");
                None
            }
            Ok(date) => Some(date),
            Err(_) => {
                self.push(field, "must be a valid date (YYYY-MM-DD)");
                None
            }
        }
    }

    /// An e-mail address (RFC 5321/5322 syntax, checked by the `email_address` crate, with a
    /// domain that has a dot: `officer@bank` is refused as a typo).
    pub fn email(&mut self, field: &str, value: &str) -> Option<String> {
        let value = value.trim();
        if is_email(value) {
            Some(value.to_owned())
        } else {
            self.push(field, "must be a valid e-mail address");
            None
        }
    }

    /// An absolute `http` or `https` URL.
    pub fn url(&mut self, field: &str, value: &str) -> Option<String> {
        let value = value.trim();
        match url::Url::parse(value) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                Some(value.to_owned())
            }
            _ => {
                self.push(field, "must be an absolute http or https URL");
                None
            }
        }
    }
}

pub fn is_email(value: &str) -> bool {
    use std::str::FromStr;
    match email_address::EmailAddress::from_str(value) {
        Ok(address) => {
            let domain = address.domain();
            // A display name ("Ada <a@b.c>") parses too; only bare addresses are accepted.
            address.email() == value && domain.contains('.') && !domain.starts_with('[')
        }
        Err(_) => false,
    }
}

/// A time given as RFC 3339 or as a date (`YYYY-MM-DD`, UTC; the end of that day when
/// `end_of_day`), in milliseconds since the epoch.
pub fn parse_time(value: &str, end_of_day: bool) -> Option<i64> {
    let value = value.trim();
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(value) {
        return Some(time.timestamp_millis());
    }
    let date = NaiveDate::parse_from_str(value, "%Y-%m-%d").ok()?;
    let time = if end_of_day {
        date.and_hms_milli_opt(23, 59, 59, 999)?
    } else {
        date.and_hms_opt(0, 0, 0)?
    };
    Some(Utc.from_utc_datetime(&time).timestamp_millis())
}

/// Parses a query string into its parameters; a parameter not in `known`, or given twice, is a
/// 422 naming it.
pub fn query_params(
    raw: Option<&str>,
    known: &[&str],
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut params = BTreeMap::new();
    let mut problems = Problems::default();
    for (key, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        if !known.contains(&key.as_ref()) {
            problems.push(
                key.as_ref(),
                format!("unknown query parameter (known: {})", known.join(", ")),
            );
        } else if params
            .insert(key.to_string(), value.trim().to_owned())
            .is_some()
        {
            problems.push(key.as_ref(), "given more than once");
        }
    }
    problems.finish()?;
    Ok(params)
}

/// `limit` (1–100, default 25) and `cursor` (a `next` token) of a list request.
pub fn page_params(
    params: &BTreeMap<String, String>,
    problems: &mut Problems,
) -> (u32, Option<crate::store::page::Cursor>) {
    use crate::store::page::{Cursor, DEFAULT_LIMIT, MAX_LIMIT};
    let limit = match params.get("limit") {
        None => DEFAULT_LIMIT,
        Some(text) => match text.parse::<u32>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                problems.push(
                    "limit",
                    format!("must be a whole number from 1 to {MAX_LIMIT}"),
                );
                DEFAULT_LIMIT
            }
        },
    };
    let cursor = match params.get("cursor").filter(|c| !c.is_empty()) {
        None => None,
        Some(token) => match Cursor::decode(token) {
            Some(cursor) => Some(cursor),
            None => {
                problems.push("cursor", "is not a cursor this list returned as next");
                None
            }
        },
    };
    (limit, cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_mail_addresses_need_a_local_part_and_a_dotted_domain() {
        assert!(is_email("officer@acme-bank.ng"));
        assert!(is_email("first.last+edd@example.co.uk"));
        for bad in [
            "officer",
            "officer@",
            "@acme.ng",
            "officer@acme",
            "Ada <ada@acme.ng>",
            "a b@acme.ng",
            "",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
    }

    #[test]
    fn dates_and_times_parse_and_a_plain_date_spans_its_day() {
        let start = parse_time("2026-03-02", false).expect("date");
        let end = parse_time("2026-03-02", true).expect("date");
        assert_eq!(end - start, 86_400_000 - 1);
        assert_eq!(
            parse_time("2026-03-02T00:00:00Z", false).expect("time"),
            start
        );
        assert_eq!(parse_time("02/03/2026", false), None);
        let mut problems = Problems::default();
        assert!(problems.birth_date("dob", "1990-02-30").is_none());
        assert!(problems.birth_date("dob", "2999-01-01").is_none());
        assert!(problems.birth_date("dob", "1985-07-14").is_some());
        assert_eq!(problems.0.len(), 2);
        assert_eq!(problems.0[0].field, "dob");
    }

    #[test]
    fn urls_must_be_absolute_http_or_https() {
        let mut problems = Problems::default();
        assert!(problems
            .url("photo", "https://cdn.example.com/a.png")
            .is_some());
        assert!(problems.url("photo", "ftp://example.com/a.png").is_none());
        assert!(problems.url("photo", "not a url").is_none());
        assert!(problems.url("photo", "/relative/a.png").is_none());
        assert_eq!(problems.0.len(), 3);
    }

    #[test]
    fn unknown_or_repeated_query_parameters_are_named() {
        let error = query_params(Some("status=open&stauts=x"), &["status"]).expect_err("typo");
        assert_eq!(error.errors[0].field, "stauts");
        let error =
            query_params(Some("status=open&status=closed"), &["status"]).expect_err("twice");
        assert_eq!(error.errors[0].problem, "given more than once");
        let params = query_params(Some("status=in%20progress"), &["status"]).expect("parses");
        assert_eq!(params["status"], "in progress");
    }
}

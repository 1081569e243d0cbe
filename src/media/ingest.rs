//! Reading articles: a JSON array (the API), JSON lines, and RSS / Atom / JSON Feed files (the
//! `vigil media import` command), into validated [`Article`]s.

use serde::Deserialize;

use super::MediaError;
use crate::model::FieldError;

/// Longest accepted title and text, in characters (longer texts are cut, titles refused).
const MAX_TITLE_CHARS: usize = 1_000;
const MAX_TEXT_CHARS: usize = 200_000;

/// An article as ingested.
#[derive(Debug, Clone, PartialEq)]
pub struct Article {
    pub title: String,
    pub link: String,
    /// Milliseconds since the epoch; `None` when the source gives no date.
    pub published_ms: Option<i64>,
    pub text: String,
}

impl Article {
    /// A stable id: the SHA-256 of the link (re-ingesting a link replaces its article).
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(self.link.as_bytes())[..16])
    }
}

/// One article as sent (the accepted spellings of each field).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArticleInput {
    pub title: Option<String>,
    #[serde(alias = "url")]
    pub link: Option<String>,
    #[serde(
        alias = "publishedAt",
        alias = "published_date",
        alias = "publishedDate",
        alias = "date",
        alias = "pubDate"
    )]
    pub published: Option<String>,
    #[serde(alias = "content", alias = "body", alias = "description")]
    pub text: Option<String>,
}

/// Parses a date-time (RFC 3339, without offset as UTC), an RFC 2822 date (RSS) or a plain date.
pub fn parse_date(value: &str) -> Option<i64> {
    let value = value.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(value) {
        return Some(t.timestamp_millis());
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc2822(value) {
        return Some(t.timestamp_millis());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S"] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(value, format) {
            return Some(t.and_utc().timestamp_millis());
        }
    }
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
}

/// Validates one input; `at` names its position (`[3]`, `line 4`) in errors.
pub fn validate(input: ArticleInput, at: &str) -> Result<Article, Vec<FieldError>> {
    let mut errors = Vec::new();
    let title = input.title.unwrap_or_default().trim().to_owned();
    if title.is_empty() {
        errors.push(FieldError::new(
            format!("{at}.title"),
            "is required and must not be empty",
        ));
    } else if title.chars().count() > MAX_TITLE_CHARS {
        errors.push(FieldError::new(
            format!("{at}.title"),
            format!("must be at most {MAX_TITLE_CHARS} characters"),
        ));
    }
    let link = input.link.unwrap_or_default().trim().to_owned();
    match url::Url::parse(&link) {
        Ok(url) if url.scheme() == "http" || url.scheme() == "https" => {}
        _ => errors.push(FieldError::new(
            format!("{at}.link"),
            "is required and must be an http or https URL",
        )),
    }
    let published_ms = match input.published.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(date) => match parse_date(date) {
            Some(ms) => Some(ms),
            None => {
                errors.push(FieldError::new(
                    format!("{at}.published"),
                    "must be a date-time (RFC 3339 or RFC 2822) or a date (YYYY-MM-DD)",
                ));
                None
            }
        },
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut text = strip_html(input.text.as_deref().unwrap_or_default());
    if text.chars().count() > MAX_TEXT_CHARS {
        text = text.chars().take(MAX_TEXT_CHARS).collect();
    }
    Ok(Article {
        title: strip_html(&title),
        link,
        published_ms,
        text,
    })
}

/// Removes markup (feeds often carry HTML) and decodes the common entities.
pub fn strip_html(text: &str) -> String {
    if !text.contains('<') && !text.contains('&') {
        return text.trim().to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&nbsp;", " ")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a file of articles: a feed (RSS, Atom, JSON Feed) when it starts with `<` or is a JSON
/// Feed, a JSON array, or JSON lines.
pub fn parse_file(bytes: &[u8]) -> Result<Vec<Article>, MediaError> {
    let text = String::from_utf8_lossy(bytes);
    let start = text.trim_start();
    if start.starts_with('<') {
        return parse_feed(bytes);
    }
    if start.starts_with('[') {
        let inputs: Vec<ArticleInput> =
            serde_json::from_str(start).map_err(|e| MediaError::Format(e.to_string()))?;
        return inputs
            .into_iter()
            .enumerate()
            .map(|(i, input)| validate(input, &format!("[{i}]")).map_err(MediaError::from_fields))
            .collect();
    }
    if start.starts_with('{') && start.contains("\"version\"") && start.contains("jsonfeed") {
        return parse_feed(bytes);
    }
    let mut articles = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let input: ArticleInput = serde_json::from_str(line)
            .map_err(|e| MediaError::Format(format!("line {}: {e}", i + 1)))?;
        articles
            .push(validate(input, &format!("line {}", i + 1)).map_err(MediaError::from_fields)?);
    }
    Ok(articles)
}

/// Reads an RSS, Atom or JSON Feed document. Entries without a link are skipped (they cannot be
/// cited).
pub fn parse_feed(bytes: &[u8]) -> Result<Vec<Article>, MediaError> {
    let feed = feed_rs::parser::parse(bytes).map_err(|e| MediaError::Format(e.to_string()))?;
    let mut articles = Vec::new();
    for (i, entry) in feed.entries.into_iter().enumerate() {
        let Some(link) = entry.links.first().map(|l| l.href.clone()) else {
            continue;
        };
        let text = entry
            .content
            .and_then(|c| c.body)
            .or_else(|| entry.summary.map(|s| s.content))
            .unwrap_or_default();
        let input = ArticleInput {
            title: entry.title.map(|t| t.content),
            link: Some(link),
            published: entry.published.or(entry.updated).map(|d| d.to_rfc3339()),
            text: Some(text),
        };
        articles
            .push(validate(input, &format!("entry {}", i + 1)).map_err(MediaError::from_fields)?);
    }
    Ok(articles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_with_any_accepted_date_form_parse() {
        let file = concat!(
            r#"{"title":"A","link":"https://news.example/a","published":"2025-03-01T10:00:00Z","text":"x"}"#,
            "\n\n",
            r#"{"title":"B","url":"https://news.example/b","date":"2025-03-02","content":"<p>y &amp; z</p>"}"#,
            "\n"
        );
        let articles = parse_file(file.as_bytes()).expect("parses");
        assert_eq!(articles.len(), 2);
        assert_eq!(articles[0].published_ms, Some(1_740_823_200_000));
        assert_eq!(articles[1].text, "y & z");
        assert_ne!(articles[0].id(), articles[1].id());
    }

    #[test]
    fn an_article_without_a_link_or_with_a_bad_date_is_refused_naming_the_field() {
        let errors = validate(
            ArticleInput {
                title: Some("t".into()),
                link: Some("ftp://x".into()),
                published: Some("yesterday".into()),
                text: None,
            },
            "[0]",
        )
        .expect_err("refused");
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["[0].link", "[0].published"]);
    }

    #[test]
    fn rss_and_atom_feeds_parse_into_articles() {
        let rss = r#"<?xml version="1.0"?><rss version="2.0"><channel><title>N</title>
            <item><title>Trader arrested</title><link>https://news.example/r1</link>
            <pubDate>Tue, 04 Mar 2025 09:30:00 GMT</pubDate>
            <description>&lt;b&gt;Police&lt;/b&gt; arrested a trader.</description></item>
            <item><title>No link</title></item></channel></rss>"#;
        let articles = parse_file(rss.as_bytes()).expect("rss");
        assert_eq!(articles.len(), 1);
        assert_eq!(articles[0].title, "Trader arrested");
        assert_eq!(articles[0].text, "Police arrested a trader.");
        assert_eq!(articles[0].published_ms, Some(1_741_080_600_000));
        let atom = r#"<?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>N</title><id>urn:n</id>
            <updated>2025-03-05T00:00:00Z</updated>
            <entry><title>Bribery probe</title><id>urn:1</id>
            <link href="https://news.example/a1"/><updated>2025-03-05T08:00:00Z</updated>
            <summary>An official is accused of bribery.</summary></entry></feed>"#;
        let articles = parse_file(atom.as_bytes()).expect("atom");
        assert_eq!(articles.len(), 1);
        assert_eq!(articles[0].link, "https://news.example/a1");
        assert_eq!(articles[0].text, "An official is accused of bribery.");
    }
}

//! Scoring articles for one name: is the person or company named, and how adverse is what is
//! said near the mentions. Produces the adverse-media result of spec 2.4.
//!
//! 1. Candidates: tantivy's best articles for the name's tokens (exact or one edit away).
//! 2. Mentions: the article (title, then text) is split into words and sentences; windows of one
//!    token fewer to one more than the name, around words that resemble a name token
//!    (Jaro-Winkler ≥ 0.85), are scored against the query with the screening matcher
//!    (`ScreeningIndex::score_pair`: same normaliser, token weights, reorderings, initials,
//!    transliteration). The best window is the article's name score; windows at or above
//!    `name_threshold` are mentions. Once the full name is found, later words equal to one of its
//!    longer tokens ("Mr Sidorov") count as mentions too.
//! 3. Keywords: every occurrence of an adverse keyword is weighted by the keyword's severity and
//!    its distance to the nearest mention — same sentence 1.0, within 25 words 0.75, within 60
//!    words 0.5, elsewhere 0.3 — and by 0.4 when the sentence also clears the person ("acquitted",
//!    "cleared", "not guilty", …). A keyword's score is `1 − Π(1 − wᵢ)` over its occurrences.
//! 4. The article's confidence is `name score / 100 × (1 − Π(1 − keyword score))`. Articles that
//!    name the person but carry no adverse keyword are not adverse media and are left out.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{latin, MediaError, MediaIndex, StoredArticle};
use crate::screening::index::ScreeningIndex;
use crate::screening::jaro::jaro_winkler;
use crate::screening::normalize::normalize;

/// An adverse keyword: how it is reported, what it looks like (word sequences; `*` ends a
/// prefix), and how severe it is (0-1).
struct Keyword {
    name: &'static str,
    patterns: &'static [&'static [&'static str]],
    weight: f64,
}

const KEYWORDS: &[Keyword] = &[
    Keyword {
        name: "money laundering",
        patterns: &[&["money", "launder*"], &["launder*"]],
        weight: 1.0,
    },
    Keyword {
        name: "terrorism financing",
        patterns: &[
            &["terror*", "financ*"],
            &["financ*", "of", "terror*"],
            &["terror*", "fund*"],
        ],
        weight: 1.0,
    },
    Keyword {
        name: "sanctions evasion",
        patterns: &[
            &["sanction*", "evasion"],
            &["evad*", "sanctions"],
            &["evad*", "us", "sanctions"],
            &["sanctions", "violation*"],
            &["violat*", "sanctions"],
            &["sanctions", "bust*"],
        ],
        weight: 1.0,
    },
    Keyword {
        name: "fraud",
        patterns: &[&["fraud*"], &["defraud*"]],
        weight: 0.95,
    },
    Keyword {
        name: "bribery",
        patterns: &[&["brib*"]],
        weight: 0.95,
    },
    Keyword {
        name: "embezzlement",
        patterns: &[&["embezzl*"], &["misappropriat*"]],
        weight: 0.95,
    },
    Keyword {
        name: "corruption",
        patterns: &[&["corrupt*"]],
        weight: 0.9,
    },
    Keyword {
        name: "conviction",
        patterns: &[
            &["convicted"],
            &["conviction*"],
            &["found", "guilty"],
            &["pleaded", "guilty"],
            &["pled", "guilty"],
        ],
        weight: 0.9,
    },
    Keyword {
        name: "ponzi scheme",
        patterns: &[&["ponzi"], &["pyramid", "scheme*"]],
        weight: 0.9,
    },
    Keyword {
        name: "tax evasion",
        patterns: &[&["tax", "evasion"], &["evad*", "tax*"], &["tax", "fraud"]],
        weight: 0.85,
    },
    Keyword {
        name: "indictment",
        patterns: &[&["indict*"]],
        weight: 0.85,
    },
    Keyword {
        name: "trafficking",
        patterns: &[&["traffick*"]],
        weight: 0.85,
    },
    Keyword {
        name: "extortion",
        patterns: &[&["extort*"]],
        weight: 0.85,
    },
    Keyword {
        name: "kickbacks",
        patterns: &[&["kickback*"]],
        weight: 0.85,
    },
    Keyword {
        name: "insider trading",
        patterns: &[&["insider", "trading"], &["insider", "dealing"]],
        weight: 0.85,
    },
    Keyword {
        name: "arrest",
        patterns: &[&["arrest*"], &["detained"]],
        weight: 0.8,
    },
    Keyword {
        name: "prison sentence",
        patterns: &[&["sentenced"], &["jailed"], &["imprison*"]],
        weight: 0.8,
    },
    Keyword {
        name: "smuggling",
        patterns: &[&["smuggl*"]],
        weight: 0.8,
    },
    Keyword {
        name: "criminal charges",
        patterns: &[&["charged", "with"], &["criminal", "charges"]],
        weight: 0.7,
    },
    Keyword {
        name: "scam",
        patterns: &[&["scam*"], &["swindl*"]],
        weight: 0.7,
    },
    Keyword {
        name: "forgery",
        patterns: &[&["forgery"], &["forged"], &["counterfeit*"]],
        weight: 0.7,
    },
    Keyword {
        name: "investigation",
        patterns: &[&["investigat*"], &["probe"], &["probed"]],
        weight: 0.5,
    },
];

/// Words that clear rather than accuse when they share the keyword's sentence.
const MITIGATING: &[&[&str]] = &[
    &["acquit*"],
    &["cleared"],
    &["exonerat*"],
    &["not", "guilty"],
    &["overturn*"],
    &["charges", "dropped"],
    &["dismissed"],
];

/// One word of an article.
struct Word {
    /// As written.
    raw: String,
    /// Transliterated and lower-cased.
    lower: String,
    sentence: u32,
}

fn words_of(title: &str, text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut sentence = 0u32;
    for part in [title, text] {
        let mut current = String::new();
        let mut chars = part.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_alphanumeric() || (c == '\'' && !current.is_empty()) {
                current.push(c);
                continue;
            }
            if !current.is_empty() {
                push_word(&mut words, std::mem::take(&mut current), sentence);
            }
            let ends = matches!(c, '!' | '?' | '\n' | ';')
                || (c == '.' && chars.peek().is_none_or(|n| n.is_whitespace()));
            if ends {
                sentence += 1;
            }
        }
        if !current.is_empty() {
            push_word(&mut words, current, sentence);
        }
        sentence += 1;
    }
    words
}

fn push_word(words: &mut Vec<Word>, raw: String, sentence: u32) {
    let lower: String = latin(&raw)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if !lower.is_empty() {
        words.push(Word {
            raw,
            lower,
            sentence,
        });
    }
}

fn stem_matches(stem: &str, word: &str) -> bool {
    match stem.strip_suffix('*') {
        Some(prefix) => word.starts_with(prefix),
        None => word == stem,
    }
}

fn pattern_at(words: &[Word], at: usize, pattern: &[&str]) -> bool {
    pattern.iter().enumerate().all(|(k, stem)| {
        words
            .get(at + k)
            .is_some_and(|w| w.sentence == words[at].sentence && stem_matches(stem, &w.lower))
    })
}

/// A keyword's score in one article.
#[derive(Debug, Clone, PartialEq)]
pub struct KeywordScore {
    pub keyword: &'static str,
    pub score: f64,
}

/// One article found for a name.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaHit {
    pub id: String,
    pub title: String,
    pub link: String,
    pub published_ms: Option<i64>,
    /// 0-1.
    pub confidence: f64,
    /// 0-100, the screening matcher's scale.
    pub name_score: f32,
    pub matched_name: String,
    /// Strongest first.
    pub keywords: Vec<KeywordScore>,
}

/// The matcher to score names with: the lists' index (its token weights), or — when no list is
/// loaded (screening disabled) — an index without names, which weighs every token alike.
fn matcher(index: &ScreeningIndex) -> &ScreeningIndex {
    static UNIFORM: std::sync::OnceLock<ScreeningIndex> = std::sync::OnceLock::new();
    if index.name_count() > 0 {
        index
    } else {
        UNIFORM.get_or_init(|| ScreeningIndex::build(Vec::new()))
    }
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Scores one article for `query`; `None` if it does not name them or says nothing adverse.
pub fn score_article(
    screening: &ScreeningIndex,
    query: &str,
    article: &StoredArticle,
    name_threshold: f32,
) -> Option<MediaHit> {
    let screening = matcher(screening);
    let query_tokens: Vec<String> = normalize(query)
        .into_iter()
        .map(|t| t.text.to_string())
        .collect();
    if query_tokens.is_empty() {
        return None;
    }
    let n = query_tokens.len();
    let words = words_of(&article.title, &article.text);
    let resembles = |word: &str| {
        query_tokens
            .iter()
            .any(|t| t == word || (word.len() >= 3 && jaro_winkler(word, t) >= 0.85))
    };
    let mut windows: HashSet<(usize, usize)> = HashSet::new();
    let lengths = n.saturating_sub(1).max(1)..=n + 1;
    for (i, word) in words.iter().enumerate() {
        if windows.len() >= 400 {
            break;
        }
        if !resembles(&word.lower) {
            continue;
        }
        for len in lengths.clone() {
            for start in i.saturating_sub(len - 1)..=i {
                let end = start + len;
                if end > words.len() || words[start].sentence != words[end - 1].sentence {
                    continue;
                }
                windows.insert((start, len));
            }
        }
    }
    let mut best = (0.0f32, String::new());
    let mut mentions: Vec<usize> = Vec::new();
    let mut windows: Vec<(usize, usize)> = windows.into_iter().collect();
    windows.sort_unstable();
    for (start, len) in windows {
        let text = words[start..start + len]
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let score = screening.score_pair(query, &text);
        if score >= name_threshold {
            mentions.extend(start..start + len);
        }
        if score > best.0 {
            best = (score, text);
        }
    }
    if best.0 < name_threshold {
        return None;
    }
    let long_tokens: Vec<&String> = query_tokens.iter().filter(|t| t.len() >= 4).collect();
    for (i, word) in words.iter().enumerate() {
        if long_tokens
            .iter()
            .any(|t| **t == word.lower || jaro_winkler(&word.lower, t) >= 0.95)
        {
            mentions.push(i);
        }
    }
    mentions.sort_unstable();
    mentions.dedup();
    let mention_sentences: HashSet<u32> = mentions.iter().map(|&i| words[i].sentence).collect();
    let mitigated: HashSet<u32> = (0..words.len())
        .filter(|&i| MITIGATING.iter().any(|p| pattern_at(&words, i, p)))
        .map(|i| words[i].sentence)
        .collect();
    let mut keywords = Vec::new();
    for keyword in KEYWORDS {
        let mut clear = 1.0f64;
        let mut found = false;
        for i in 0..words.len() {
            if !keyword.patterns.iter().any(|p| pattern_at(&words, i, p)) {
                continue;
            }
            found = true;
            let proximity = if mention_sentences.contains(&words[i].sentence) {
                1.0
            } else {
                let distance = mentions
                    .iter()
                    .map(|&m| m.abs_diff(i))
                    .min()
                    .unwrap_or(usize::MAX);
                match distance {
                    0..=25 => 0.75,
                    26..=60 => 0.5,
                    _ => 0.3,
                }
            };
            let mitigation = if mitigated.contains(&words[i].sentence) {
                0.4
            } else {
                1.0
            };
            clear *= 1.0 - keyword.weight * proximity * mitigation;
        }
        if found {
            keywords.push(KeywordScore {
                keyword: keyword.name,
                score: round3(1.0 - clear),
            });
        }
    }
    if keywords.is_empty() {
        return None;
    }
    keywords.sort_by(|a, b| b.score.total_cmp(&a.score));
    let adverse = 1.0 - keywords.iter().map(|k| 1.0 - k.score).product::<f64>();
    Some(MediaHit {
        id: article.id.clone(),
        title: article.title.clone(),
        link: article.link.clone(),
        published_ms: article.published_ms,
        confidence: round3(f64::from(best.0) / 100.0 * adverse),
        name_score: (best.0 * 10.0).round() / 10.0,
        matched_name: best.1,
        keywords,
    })
}

/// Searches the index for adverse coverage of `query`: at most `limit` articles, strongest first,
/// newest first among equal confidences. Blocking.
pub fn search(
    media: &MediaIndex,
    screening: &ScreeningIndex,
    query: &str,
    limit: usize,
    name_threshold: f32,
    candidates: usize,
) -> Result<Vec<MediaHit>, MediaError> {
    let mut tokens: Vec<String> = normalize(query)
        .into_iter()
        .map(|t| t.text.to_string())
        .collect();
    tokens.extend(media.tokens(query));
    tokens.sort();
    tokens.dedup();
    let mut hits: Vec<MediaHit> = media
        .candidates(&tokens, candidates)?
        .iter()
        .filter_map(|article| score_article(screening, query, article, name_threshold))
        .collect();
    hits.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(b.published_ms.cmp(&a.published_ms))
            .then(a.id.cmp(&b.id))
    });
    hits.truncate(limit);
    Ok(hits)
}

/// One result entry of spec 2.4 (plus Vigil's `id`, `published`, `nameScore`, `matchedName`).
pub fn hit_json(hit: &MediaHit) -> Value {
    json!({
        "title": hit.title,
        "link": hit.link,
        "keyword": {"confidenceScore": hit.confidence},
        "adverseInformation": hit.keywords.iter()
            .map(|k| json!({"keyword": k.keyword, "score": k.score}))
            .collect::<Vec<_>>(),
        "id": hit.id,
        "published": hit.published_ms.map(crate::store::iso_time),
        "nameScore": hit.name_score,
        "matchedName": hit.matched_name,
    })
}

/// The adverse-media result of spec 2.4: `info` and `result`.
pub fn result_json(id: &str, query: &str, limit: usize, hits: &[MediaHit]) -> Value {
    json!({
        "info": {"id": id, "query": query, "count": hits.len(), "limit": limit},
        "result": hits.iter().map(hit_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article(title: &str, text: &str) -> StoredArticle {
        StoredArticle {
            id: "a".into(),
            title: title.into(),
            link: "https://news.example/a".into(),
            published_ms: Some(0),
            text: text.into(),
        }
    }

    #[test]
    fn an_article_naming_the_person_near_an_adverse_keyword_scores_high() {
        let index = ScreeningIndex::default();
        let hit = score_article(
            &index,
            "Ivan Sidorov",
            &article(
                "Businessman held",
                "Police said on Monday that Ivan Sidorov was arrested over a money laundering scheme. \
                 Mr Sidorov denies wrongdoing.",
            ),
            85.0,
        )
        .expect("a hit");
        assert!(hit.name_score >= 95.0, "{hit:?}");
        let names: Vec<&str> = hit.keywords.iter().map(|k| k.keyword).collect();
        assert!(
            names.contains(&"money laundering") && names.contains(&"arrest"),
            "{names:?}"
        );
        assert!(hit.confidence > 0.9, "{hit:?}");
    }

    #[test]
    fn a_substring_or_a_different_person_is_not_a_mention() {
        let index = ScreeningIndex::default();
        let other = article(
            "Fraud trial",
            "Olga Petrova, a colleague of Ivan's, was convicted of fraud in a Moscow court.",
        );
        assert_eq!(score_article(&index, "Ivan Sidorov", &other, 85.0), None);
        let embedded = article(
            "Fraud",
            "TheIvanSidorovFoundation was named in a fraud case.",
        );
        assert_eq!(score_article(&index, "Ivan Sidorov", &embedded, 85.0), None);
    }

    #[test]
    fn an_article_without_adverse_keywords_is_left_out() {
        let index = ScreeningIndex::default();
        let neutral = article(
            "Charity gala",
            "Ivan Sidorov opened the new children's hospital wing on Friday.",
        );
        assert_eq!(score_article(&index, "Ivan Sidorov", &neutral, 85.0), None);
    }

    #[test]
    fn keywords_far_from_the_mention_or_cleared_weigh_less() {
        let index = ScreeningIndex::default();
        let near = score_article(
            &index,
            "Amina Yusuf",
            &article("Minister charged", "Amina Yusuf was charged with bribery."),
            85.0,
        )
        .expect("near");
        let filler = "The weather was mild and the markets were calm that week. ".repeat(12);
        let far = score_article(
            &index,
            "Amina Yusuf",
            &article(
                "Ministry news",
                &format!("Amina Yusuf spoke at a summit. {filler} Separately, a clerk faced bribery claims."),
            ),
            85.0,
        )
        .expect("far");
        let cleared = score_article(
            &index,
            "Amina Yusuf",
            &article("Court", "Amina Yusuf was acquitted of bribery."),
            85.0,
        )
        .expect("cleared");
        let bribery = |hit: &MediaHit| {
            hit.keywords
                .iter()
                .find(|k| k.keyword == "bribery")
                .map(|k| k.score)
                .unwrap_or(0.0)
        };
        assert!(bribery(&near) > bribery(&far), "{near:?} {far:?}");
        assert!(bribery(&near) > bribery(&cleared), "{near:?} {cleared:?}");
    }

    #[test]
    fn names_in_another_order_or_script_are_found() {
        let index = ScreeningIndex::default();
        let hit = score_article(
            &index,
            "Иван Сидоров",
            &article(
                "Arrest",
                "SIDOROV, Ivan was detained on suspicion of fraud.",
            ),
            85.0,
        );
        assert!(hit.is_some());
    }
}

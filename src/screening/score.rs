//! Token-level name scoring.
//!
//! Two names match when their tokens align: every query token is paired with at most one listed
//! token (and two adjacent tokens on one side may pair with one joined token on the other,
//! "Abdul Rahman" / "Abdulrahman"), pairs are chosen greedily by weighted similarity, and the
//! score is the weighted share of both names the pairs cover:
//!
//! ```text
//!            Σ sim(q, c) · (w_q + w_c)                    over aligned pairs
//! score = ───────────────────────────────────────────────
//!          Σ w_q  +  Σ w_c (aligned)  +  α · Σ w_c (unaligned)
//! ```
//!
//! Weights are inverse document frequencies over every listed name, so a rare surname counts
//! more than "Mohammed", "Bank" or "Trading", and legal forms count almost nothing. Every query
//! token counts in full (a query naming someone the list entry does not is weaker evidence);
//! unaligned listed tokens count at `α` = [`UNMATCHED_LISTED_WEIGHT`] because lists often carry
//! fuller names than callers type ("Saddam Hussein" vs "Saddam Hussein al-Tikriti").
//!
//! Token similarity is Jaro-Winkler, raised to a floor when the tokens share a phonetic key
//! (Double Metaphone) or a consonant skeleton, with both guarded so short tokens cannot ride on
//! coarse keys; anything below [`TOKEN_MATCH_FLOOR`] does not align at all. A single-letter
//! initial aligns with a name that starts with it at [`INITIAL_SIMILARITY`].

use compact_str::CompactString;

/// Token similarities below this do not align.
pub const TOKEN_MATCH_FLOOR: f32 = 0.80;
/// Jaro-Winkler alone (no shared phonetic key or skeleton) must reach this to align:
/// "kovaleva"/"kosakova" (0.87) and "fadi"/"hadi" are different names.
const JARO_WINKLER_ONLY_FLOOR: f32 = 0.88;
/// Similarity of an initial ("J") with a full name starting with it ("John").
pub const INITIAL_SIMILARITY: f32 = 0.80;
/// Similarity of two spellings that fold to the same form ("Ameer" / "Amir").
const FOLDED_SIMILARITY: f32 = 0.93;
/// Similarity of a nickname and its formal name ("Bill" / "William").
const NICKNAME_SIMILARITY: f32 = 0.90;
/// How much an unaligned token of the listed name counts against the score.
pub const UNMATCHED_LISTED_WEIGHT: f32 = 0.35;
/// Similarity given to tokens with the same phonetic key or consonant skeleton.
const KEY_MATCH_SIMILARITY: f32 = 0.90;
/// Similarity of a vowelless (Arabic-script) token whose skeleton equals the other's.
const ABJAD_SKELETON_SIMILARITY: f32 = 0.92;
/// Joined-token similarity needed to align two tokens with one.
const JOIN_FLOOR: f32 = 0.92;

/// A token with everything similarity needs, computed once (at build for listed tokens, once
/// per query for query tokens).
#[derive(Debug, Clone, Default)]
pub struct TokenFeatures {
    pub text: CompactString,
    pub skeleton: CompactString,
    /// The token's only consonant when its skeleton is empty for having just one.
    pub single_consonant: CompactString,
    /// Spelling-folded form ([`super::normalize::fold`]).
    pub folded: CompactString,
    /// Whether the token takes part in a nickname pair (as the formal name or a diminutive).
    pub nickname_of: Option<()>,
    pub phonetic: CompactString,
    pub abjad: bool,
}

impl TokenFeatures {
    pub fn new(text: &str, abjad: bool, phonetic: CompactString) -> TokenFeatures {
        let skeleton = super::normalize::skeleton(text);
        let single_consonant = if skeleton.is_empty() {
            super::normalize::raw_skeleton(text)
        } else {
            CompactString::default()
        };
        TokenFeatures {
            text: CompactString::new(text),
            skeleton,
            single_consonant,
            folded: super::normalize::fold(text),
            nickname_of: super::normalize::in_nickname_table(text).then_some(()),
            phonetic,
            abjad,
        }
    }

    pub fn is_initial(&self) -> bool {
        self.text.len() == 1
    }
}

/// Similarity of two tokens in [0, 1]; 0 when below [`TOKEN_MATCH_FLOOR`].
pub fn token_similarity(a: &TokenFeatures, b: &TokenFeatures) -> f32 {
    if a.text == b.text {
        return 1.0;
    }
    if a.is_initial() || b.is_initial() {
        let (initial, full) = if a.is_initial() { (a, b) } else { (b, a) };
        if full.text.len() > 1 && full.text.as_bytes()[0] == initial.text.as_bytes()[0] {
            return INITIAL_SIMILARITY;
        }
        return 0.0;
    }
    if a.abjad || b.abjad {
        return abjad_similarity(a, b);
    }
    if (a.nickname_of.is_some() || b.nickname_of.is_some())
        && super::normalize::are_nicknames(&a.text, &b.text)
    {
        return NICKNAME_SIMILARITY;
    }
    if a.folded == b.folded {
        return FOLDED_SIMILARITY;
    }
    let mut jw = super::jaro::jaro_winkler(&a.text, &b.text) as f32;
    let shortest = a.text.len().min(b.text.len());
    let longest = a.text.len().max(b.text.len());
    if longest - shortest >= 3 {
        // Jaro-Winkler rewards a shared prefix: "vladimir" is not "vladimirovich", nor
        // "mohammad" "mohammadbagher". Damp by the length ratio when lengths differ by 3+.
        jw *= (shortest as f32 / longest as f32).sqrt().sqrt();
    }
    if shortest <= 3 {
        // "ali"/"ala", "lee"/"le": short tokens must be nearly identical.
        return if jw >= 0.92 { jw } else { 0.0 };
    }
    let same_skeleton = a.skeleton.len() >= 3 && a.skeleton == b.skeleton;
    let same_phonetic = shortest >= 5 && a.phonetic.len() >= 3 && a.phonetic == b.phonetic;
    if jw >= 0.70 && (same_skeleton || same_phonetic) {
        return jw.max(KEY_MATCH_SIMILARITY);
    }
    if jw < JARO_WINKLER_ONLY_FLOOR {
        0.0
    } else {
        jw
    }
}

/// Vowelless tokens compare by consonant skeleton only.
fn abjad_similarity(a: &TokenFeatures, b: &TokenFeatures) -> f32 {
    let (sa, sb) = (abjad_key(a), abjad_key(b));
    if sa.is_empty() || sb.is_empty() {
        return 0.0;
    }
    if sa == sb {
        // A one-consonant skeleton ("ayed" / "عايد") is weak evidence.
        return if sa.len() == 1 {
            TOKEN_MATCH_FLOOR + 0.05
        } else {
            ABJAD_SKELETON_SIMILARITY
        };
    }
    let (a, b) = (sa, sb);
    if a.len() < 2 || b.len() < 2 {
        return 0.0;
    }
    let jw = super::jaro::jaro_winkler(a, b) as f32;
    if a.len().min(b.len()) >= 4 && jw >= 0.90 {
        return TOKEN_MATCH_FLOOR + 0.02;
    }
    0.0
}

/// The skeleton used against vowelless tokens: the usual one, or for tokens with a single
/// consonant ("ayed", "aouadi"), that consonant.
fn abjad_key(token: &TokenFeatures) -> &str {
    if !token.skeleton.is_empty() {
        return &token.skeleton;
    }
    &token.single_consonant
}

/// One side of a comparison: tokens with their weights.
pub struct Side<'a> {
    pub tokens: &'a [&'a TokenFeatures],
    pub weights: &'a [f32],
}

/// How two names aligned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NameScore {
    /// In [0, 1].
    pub score: f32,
    /// Query tokens aligned with something.
    pub aligned_query_tokens: u32,
}

/// At most this many tokens per side take part in alignment (longer names are truncated).
pub const MAX_TOKENS: usize = 16;

struct Edge {
    query_mask: u32,
    listed_mask: u32,
    sim: f32,
    gain: f32,
    query_weight: f32,
    listed_weight: f32,
}

/// Scores a query name against a listed name (see the module documentation).
pub fn score_names(query: &Side<'_>, listed: &Side<'_>) -> NameScore {
    score_names_with(query, listed, |i, j| {
        token_similarity(query.tokens[i], listed.tokens[j])
    })
}

/// [`score_names`] with token similarities from `similarity(query index, listed index)`, so a
/// caller that already knows them (the index, from candidate generation) does not recompute.
pub fn score_names_with(
    query: &Side<'_>,
    listed: &Side<'_>,
    similarity: impl Fn(usize, usize) -> f32,
) -> NameScore {
    let nq = query.tokens.len().min(MAX_TOKENS);
    let nl = listed.tokens.len().min(MAX_TOKENS);
    if nq == 0 || nl == 0 {
        return NameScore {
            score: 0.0,
            aligned_query_tokens: 0,
        };
    }
    let mut edges: Vec<Edge> = Vec::with_capacity(nq * 2);
    for i in 0..nq {
        for j in 0..nl {
            let sim = similarity(i, j);
            if sim > 0.0 {
                push_edge(
                    &mut edges,
                    1 << i,
                    1 << j,
                    sim,
                    query.weights[i],
                    listed.weights[j],
                );
            }
        }
    }
    // Two adjacent tokens on one side against one joined token on the other.
    for i in 0..nq.saturating_sub(1) {
        for j in 0..nl {
            if let Some(sim) =
                joined_similarity(query.tokens[i], query.tokens[i + 1], listed.tokens[j])
            {
                let wq = query.weights[i] + query.weights[i + 1];
                push_edge(&mut edges, 0b11 << i, 1 << j, sim, wq, listed.weights[j]);
            }
        }
    }
    for j in 0..nl.saturating_sub(1) {
        for i in 0..nq {
            if let Some(sim) =
                joined_similarity(listed.tokens[j], listed.tokens[j + 1], query.tokens[i])
            {
                let wl = listed.weights[j] + listed.weights[j + 1];
                push_edge(&mut edges, 1 << i, 0b11 << j, sim, query.weights[i], wl);
            }
        }
    }
    edges.sort_unstable_by(|a, b| b.gain.total_cmp(&a.gain));

    let mut used_query = 0u32;
    let mut used_listed = 0u32;
    let mut numerator = 0.0f32;
    let mut aligned_listed_weight = 0.0f32;
    for edge in &edges {
        if edge.query_mask & used_query != 0 || edge.listed_mask & used_listed != 0 {
            continue;
        }
        used_query |= edge.query_mask;
        used_listed |= edge.listed_mask;
        numerator += edge.sim * (edge.query_weight + edge.listed_weight);
        aligned_listed_weight += edge.listed_weight;
    }
    let query_weight: f32 = query.weights[..nq].iter().sum();
    let listed_weight: f32 = listed.weights[..nl].iter().sum();
    let unaligned_listed = (listed_weight - aligned_listed_weight).max(0.0);
    let denominator =
        query_weight + aligned_listed_weight + UNMATCHED_LISTED_WEIGHT * unaligned_listed;
    let score = if denominator > 0.0 {
        (numerator / denominator).clamp(0.0, 1.0)
    } else {
        0.0
    };
    NameScore {
        score,
        aligned_query_tokens: used_query.count_ones(),
    }
}

fn push_edge(edges: &mut Vec<Edge>, qm: u32, lm: u32, sim: f32, wq: f32, wl: f32) {
    edges.push(Edge {
        query_mask: qm,
        listed_mask: lm,
        sim,
        gain: sim * (wq + wl),
        query_weight: wq,
        listed_weight: wl,
    });
}

/// Similarity of `first + second` joined against `whole`, when close enough to align.
fn joined_similarity(
    first: &TokenFeatures,
    second: &TokenFeatures,
    whole: &TokenFeatures,
) -> Option<f32> {
    if first.abjad || second.abjad || whole.abjad {
        // "عبد الله" (two tokens) against "Abdullah": compare joined skeletons.
        let (a, b, w) = (abjad_key(first), abjad_key(second), abjad_key(whole));
        let joins = a.len() + b.len() >= 3
            && w.len() == a.len() + b.len()
            && w.starts_with(a)
            && w.ends_with(b);
        return joins.then_some(ABJAD_SKELETON_SIMILARITY);
    }
    let joined_len = first.text.len() + second.text.len();
    // Joining must explain the whole token, not a prefix of it ("jong" + "un" is not "jong").
    if whole.text.len().abs_diff(joined_len) > 1 {
        return None;
    }
    if !whole.text.starts_with(&first.text[..1]) {
        return None;
    }
    let mut joined = CompactString::with_capacity(joined_len);
    joined.push_str(&first.text);
    joined.push_str(&second.text);
    if joined == whole.text {
        return Some(1.0);
    }
    let sim = super::jaro::jaro_winkler(&joined, &whole.text) as f32;
    (sim >= JOIN_FLOOR).then_some(sim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rphonetic::Encoder;

    fn features(name: &str) -> Vec<TokenFeatures> {
        let encoder = super::super::normalize::phonetic_encoder();
        super::super::normalize::normalize(name)
            .into_iter()
            .map(|t| {
                let phonetic = CompactString::new(encoder.encode(&t.text));
                TokenFeatures::new(&t.text, t.abjad, phonetic)
            })
            .collect()
    }

    fn score(a: &str, b: &str) -> f32 {
        let fa = features(a);
        let fb = features(b);
        let ra: Vec<&TokenFeatures> = fa.iter().collect();
        let rb: Vec<&TokenFeatures> = fb.iter().collect();
        let wa = vec![1.0; ra.len()];
        let wb = vec![1.0; rb.len()];
        score_names(
            &Side {
                tokens: &ra,
                weights: &wa,
            },
            &Side {
                tokens: &rb,
                weights: &wb,
            },
        )
        .score
    }

    #[test]
    fn identical_and_reordered_names_score_one() {
        assert_eq!(score("Vladimir Putin", "PUTIN, Vladimir"), 1.0);
    }

    #[test]
    fn shared_first_name_with_a_different_surname_stays_low() {
        assert!(score("George Bush", "George Habbash") < 0.6);
        assert!(score("Vladimir Putin", "Vladimir Petrov") < 0.6);
    }

    #[test]
    fn romanisation_variants_score_high() {
        assert!(score("Muammar Qaddafi", "Moammar Gadhafi") > 0.85);
        assert!(score("Usama bin Laden", "Osama bin Ladin") > 0.85);
        assert!(score("Mohammed Hussein", "Muhammad Husayn") > 0.85);
    }

    #[test]
    fn joined_and_split_tokens_align() {
        assert!(score("Abdul Rahman", "Abdulrahman") > 0.95);
        assert_eq!(score("Kim Jong Un", "Kim Jong-un"), 1.0);
        assert!(score("Alqaida", "Al Qaida") > 0.95);
    }

    #[test]
    fn arabic_script_matches_its_romanisation() {
        assert!(score("صدام حسين التكريتي", "Saddam Hussein al-Tikriti") > 0.85);
    }

    #[test]
    fn unaligned_listed_tokens_cost_less_than_unaligned_query_tokens() {
        let listed_longer = score("John Smith", "John William Smith");
        let query_longer = score("John William Smith", "John Smith");
        assert!(listed_longer > query_longer);
        assert!(listed_longer > 0.85);
    }

    #[test]
    fn initials_align_weakly() {
        let initial = score("J Smith", "John Smith");
        assert!(initial > 0.8 && initial < 1.0);
        assert!(score("K Smith", "John Smith") < 0.6);
    }

    #[test]
    fn similarity_is_symmetric_for_random_token_pairs() {
        use proptest::prelude::*;
        proptest!(|(a in "[a-z]{1,10}", b in "[a-z]{1,10}")| {
            let fa = features(&a);
            let fb = features(&b);
            if let (Some(x), Some(y)) = (fa.first(), fb.first()) {
                let ab = token_similarity(x, y);
                let ba = token_similarity(y, x);
                prop_assert!((ab - ba).abs() < 1e-6);
                prop_assert!((0.0..=1.0).contains(&ab));
            }
        });
    }
}

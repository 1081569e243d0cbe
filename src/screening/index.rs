//! The in-memory screening index: every name of every loaded list, normalised and indexed so a
//! query never scans the whole list.
//!
//! Build (off the hot path, by the list manager): names are normalised into tokens; each distinct
//! token gets a vocabulary entry with its weight (inverse document frequency over all names), its
//! consonant skeleton and Double Metaphone key; postings map each token to the names holding it,
//! character trigrams map to vocabulary tokens, and adjacent token pairs are indexed joined.
//!
//! Query: the query name is normalised the same way; each query token expands to vocabulary
//! tokens that are equal, share its skeleton or phonetic key, or share enough trigrams (fuzzy);
//! the postings of those tokens accumulate a per-name upper bound of the final score; only the
//! best candidates are fully scored by [`super::score::score_names`], grouped per entity, and
//! filtered by list kind, tenant, country and threshold. Scratch space is thread-local, so a
//! query takes no lock and allocates little.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use compact_str::CompactString;
use rphonetic::Encoder;

use super::entity::{ListEntity, ListKind, NameQuality};
use super::normalize::{normalize, NormToken, TokenKind};
use super::score::{
    explain_names, score_names, score_names_with, Alignment, Side, TokenFeatures, MAX_TOKENS,
    TOKEN_MATCH_FLOOR, UNMATCHED_LISTED_WEIGHT,
};
use crate::model::decision::{MatchExplanation, PartMatch, ScoreAdjustment, UnmatchedPart};

/// Weight of a canonical legal-form token (`ltd`, `llc`, …).
const LEGAL_FORM_WEIGHT: f32 = 0.3;
/// Weight of an initial as a share of the rarest token's weight.
const INITIAL_WEIGHT_SHARE: f32 = 0.4;
/// Weak aliases (UN "low quality", OFAC "weak a.k.a.") score at most this share.
const WEAK_ALIAS_FACTOR: f32 = 0.90;
/// A query without original-script (abjad) tokens that matches a listed name written in Arabic
/// or Hebrew script compares only consonant skeletons, and short vowelless names share a
/// skeleton with many unrelated Latin names ("Wesley Ward" and «رودي سليــوة», ROODI SLEWA).
/// Such a match counts only as far as the same entity's own Latin-script names support it: when
/// the query scores below this (0–1) against every one of them, the cross-script name scores
/// [`UNSUPPORTED_CROSS_SCRIPT_FACTOR`] of its points.
const CROSS_SCRIPT_SUPPORT_FLOOR: f32 = 0.6;
const UNSUPPORTED_CROSS_SCRIPT_FACTOR: f32 = 0.75;
/// Candidates fully scored per query, best upper bound first.
const MAX_FULLY_SCORED: usize = 64;
/// A vocabulary token in more names than this is common: it adds to candidates, never creates
/// them (unless it is the query's rarest token).
const COMMON_POSTINGS: u32 = 1_000;
/// Trigrams in more vocabulary tokens than this are not used to find fuzzy matches.
const FREQUENT_TRIGRAM: usize = 1_500;
/// Fuzzy expansions kept per query token.
const MAX_EXPANSIONS: usize = 48;
/// A birth year the caller gives that agrees (±1) with the entity's raises the score by this;
/// one that disagrees with every listed birth year lowers it by [`BIRTH_YEAR_MISMATCH`].
const BIRTH_YEAR_MATCH: f32 = 5.0;
const BIRTH_YEAR_MISMATCH: f32 = 15.0;
/// Points added when the caller's country is one of the entity's countries.
const COUNTRY_MATCH: f32 = 3.0;
/// Width of the band below the match threshold that common names are compressed into.
const COMMON_NAME_BAND: f32 = 10.0;

/// A loaded list as the index knows it.
#[derive(Debug, Clone)]
pub struct IndexedList {
    pub name: String,
    pub kind: ListKind,
    /// `Some(tenant)` for a business's own watchlist: only that tenant's queries see it.
    pub tenant: Option<i64>,
    /// The publisher's page or download URL, shown as the record's `dataset.url`.
    pub url: Option<String>,
    /// Display name for `dataset.name`.
    pub title: String,
}

/// One entity in the index.
#[derive(Debug)]
pub struct IndexedEntity {
    pub list: u16,
    pub entity: Arc<ListEntity>,
    birth_years: Box<[i32]>,
}

#[derive(Debug)]
struct IndexedName {
    entity: u32,
    tokens: Box<[u32]>,
    weak: bool,
    total_weight: f32,
}

#[derive(Debug)]
struct VocabToken {
    features: TokenFeatures,
    weight: f32,
    /// Range into `ScreeningIndex::postings`.
    postings_start: u32,
    postings_len: u32,
}

/// What a caller asks.
#[derive(Debug, Clone, Copy)]
pub struct ScreenQuery<'a> {
    pub name: &'a str,
    /// Only lists of this kind; `None` searches all.
    pub kind: Option<ListKind>,
    /// The asking tenant: its own watchlists are searched besides the shared lists.
    pub tenant: Option<i64>,
    /// Lower-case ISO alpha-2: entities with known countries none of which is this one are
    /// left out (entities without country information stay in), and entities listing it gain
    /// a few points.
    pub country: Option<&'a str>,
    pub birth_year: Option<i32>,
    /// 0–100.
    pub threshold: f32,
    /// The match threshold (0–100): a common full name with no corroborating birth year or
    /// country stays below it (see [`common_name_ceiling`]).
    pub match_threshold: f32,
    pub limit: usize,
}

/// One matching entity.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenHit {
    pub entity: u32,
    /// Final score, 0–100 (name score adjusted by name quality and birth year).
    pub score: f32,
    /// Name similarity alone, 0–100.
    pub name_score: f32,
    /// The listed name that matched best.
    pub matched_name: String,
    /// How the score came about.
    pub explanation: Box<MatchExplanation>,
}

/// What scoring one listed name found, kept to explain a hit.
#[derive(Debug, Clone, Copy)]
struct Scored {
    name_id: u32,
    score: f32,
    /// Name similarity before any adjustment, 0–100.
    raw_points: f32,
    weak: bool,
    cross_script_unsupported: bool,
    /// Whether the birth year given agrees with a listed one (`None`: nothing to compare).
    birth_year_match: Option<bool>,
    /// Whether the country given is one of the entity's.
    country_match: bool,
    /// Points added or removed by the birth year and the country.
    birth_year: f32,
    country: f32,
    /// Points removed because the name is common and nothing corroborates it.
    common_name: f32,
}

/// The index over every loaded list.
#[derive(Debug, Default)]
pub struct ScreeningIndex {
    lists: Vec<IndexedList>,
    entities: Vec<IndexedEntity>,
    /// In entity order: an entity's names are adjacent.
    names: Vec<IndexedName>,
    /// Original text of every indexed name, parallel to `names`.
    name_texts: Vec<Box<str>>,
    vocab: Vec<VocabToken>,
    by_text: HashMap<CompactString, u32>,
    postings: Vec<u32>,
    trigrams: HashMap<u32, Vec<u32>>,
    by_skeleton: HashMap<CompactString, Vec<u32>>,
    by_phonetic: HashMap<CompactString, Vec<u32>>,
    by_folded: HashMap<CompactString, Vec<u32>>,
    /// Adjacent listed tokens joined ("abdul" + "rahman") → names.
    joined: HashMap<CompactString, Vec<u32>>,
    /// Weight of a query token the lists never use.
    unknown_weight: f32,
    /// The expansion of every vocabulary token (what [`ScreeningIndex::expand`] returns for it
    /// as a query token), computed at build time: `expansion_pairs[expansion_offsets[id]..
    /// expansion_offsets[id + 1]]`. A query token the lists use skips expansion at query time.
    expansion_offsets: Vec<u32>,
    expansion_pairs: Vec<(u32, f32)>,
    /// Distinguishes this index from every other in the process, so a thread's cache of
    /// query-token expansions (see [`Scratch::expansions`]) never serves another index.
    identity: IndexIdentity,
}

/// A number no other index in the process has: every index, built or default, takes a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexIdentity(u64);

impl Default for IndexIdentity {
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        IndexIdentity(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Query tokens the lists do not use whose expansions a thread keeps, most recently used first.
/// Customer names repeat their tokens far more often than whole names repeat: a name seen for
/// the first time is mostly made of tokens seen before.
const CACHED_EXPANSIONS_PER_THREAD: usize = 16_384;

/// Build input: a list and its entities.
pub struct ListInput {
    pub list: IndexedList,
    pub entities: Vec<Arc<ListEntity>>,
}

fn phonetic_key(encoder: &rphonetic::DoubleMetaphone, token: &str) -> CompactString {
    if token.len() < 3 || token.bytes().any(|b| b.is_ascii_digit()) {
        return CompactString::default();
    }
    CompactString::new(encoder.encode(token))
}

fn trigram_keys(token: &str, mut each: impl FnMut(u32)) {
    let bytes = token.as_bytes();
    let padded_len = bytes.len() + 2;
    let at = |i: usize| -> u32 {
        if i == 0 || i == padded_len - 1 {
            u32::from(b'$')
        } else {
            u32::from(bytes[i - 1])
        }
    };
    if padded_len < 3 {
        return;
    }
    for i in 0..padded_len - 2 {
        each(at(i) << 16 | at(i + 1) << 8 | at(i + 2));
    }
}

fn birth_year(date: &str) -> Option<i32> {
    date.get(..4)?.parse().ok()
}

impl ScreeningIndex {
    /// Builds the index over the given lists.
    pub fn build(inputs: Vec<ListInput>) -> ScreeningIndex {
        let encoder = super::normalize::phonetic_encoder();
        let mut index = ScreeningIndex::default();
        let mut token_names: Vec<Vec<u32>> = Vec::new();
        let mut pending_names: Vec<(u32, Vec<NormToken>, bool, Box<str>)> = Vec::new();

        for input in inputs {
            let list_id = index.lists.len() as u16;
            index.lists.push(input.list);
            for entity in input.entities {
                let entity_id = index.entities.len() as u32;
                let mut seen: Vec<Vec<CompactString>> = Vec::new();
                for (name, quality) in entity.names() {
                    let tokens = normalize(name);
                    if tokens.is_empty() {
                        continue;
                    }
                    // The same token set twice (case or punctuation variants) indexes once.
                    let mut key: Vec<CompactString> =
                        tokens.iter().map(|t| t.text.clone()).collect();
                    key.sort_unstable();
                    if seen.contains(&key) {
                        continue;
                    }
                    seen.push(key);
                    pending_names.push((
                        entity_id,
                        tokens,
                        quality == NameQuality::Weak,
                        name.into(),
                    ));
                }
                let birth_years = entity
                    .birth_dates
                    .iter()
                    .filter_map(|d| birth_year(d))
                    .collect();
                index.entities.push(IndexedEntity {
                    list: list_id,
                    entity,
                    birth_years,
                });
            }
        }

        // Vocabulary and document frequencies.
        let mut kinds: Vec<TokenKind> = Vec::new();
        for (name_id, (_, tokens, _, _)) in pending_names.iter().enumerate() {
            for token in tokens.iter().take(MAX_TOKENS) {
                let id = match index.by_text.get(&token.text) {
                    Some(id) => *id,
                    None => {
                        let id = index.vocab.len() as u32;
                        index.by_text.insert(token.text.clone(), id);
                        index.vocab.push(VocabToken {
                            features: TokenFeatures::new(
                                &token.text,
                                token.abjad,
                                phonetic_key(&encoder, &token.text),
                            ),
                            weight: 0.0,
                            postings_start: 0,
                            postings_len: 0,
                        });
                        token_names.push(Vec::new());
                        kinds.push(token.kind);
                        id
                    }
                };
                let postings = &mut token_names[id as usize];
                if postings.last() != Some(&(name_id as u32)) {
                    postings.push(name_id as u32);
                }
            }
        }
        let total_names = pending_names.len().max(1) as f32;
        let mut max_weight = 1.0f32;
        for (id, token) in index.vocab.iter_mut().enumerate() {
            let df = token_names[id].len() as f32;
            token.weight = if kinds[id] == TokenKind::LegalForm {
                LEGAL_FORM_WEIGHT
            } else {
                ((total_names + 1.0) / (df + 0.5)).ln().max(0.5)
            };
            max_weight = max_weight.max(token.weight);
        }
        index.unknown_weight = max_weight;

        // Flattened postings, trigram, skeleton and phonetic maps.
        for (id, names) in token_names.into_iter().enumerate() {
            let token = &mut index.vocab[id];
            token.postings_start = index.postings.len() as u32;
            token.postings_len = names.len() as u32;
            index.postings.extend_from_slice(&names);
            let features = &token.features;
            if !features.abjad {
                trigram_keys(&features.text, |key| {
                    let list = index.trigrams.entry(key).or_default();
                    if list.last() != Some(&(id as u32)) {
                        list.push(id as u32);
                    }
                });
            }
            if !features.skeleton.is_empty() {
                index
                    .by_skeleton
                    .entry(features.skeleton.clone())
                    .or_default()
                    .push(id as u32);
            }
            if !features.phonetic.is_empty() {
                index
                    .by_phonetic
                    .entry(features.phonetic.clone())
                    .or_default()
                    .push(id as u32);
            }
            if !features.abjad && features.folded != features.text {
                index
                    .by_folded
                    .entry(features.folded.clone())
                    .or_default()
                    .push(id as u32);
            }
        }

        for (name_id, (entity, tokens, weak, text)) in pending_names.into_iter().enumerate() {
            let ids: Box<[u32]> = tokens
                .iter()
                .take(MAX_TOKENS)
                .filter_map(|t| index.by_text.get(&t.text).copied())
                .collect();
            for pair in tokens.windows(2) {
                if pair[0].abjad || pair[1].abjad {
                    continue;
                }
                let mut joined = pair[0].text.clone();
                joined.push_str(&pair[1].text);
                let list = index.joined.entry(joined).or_default();
                if list.last() != Some(&(name_id as u32)) {
                    list.push(name_id as u32);
                }
            }
            let total_weight = ids.iter().map(|id| index.vocab[*id as usize].weight).sum();
            index.names.push(IndexedName {
                entity,
                tokens: ids,
                weak,
                total_weight,
            });
            index.name_texts.push(text);
        }
        debug_assert!(
            index.names.windows(2).all(|w| w[0].entity <= w[1].entity),
            "names are indexed in entity order (latin_support relies on it)"
        );
        index.trigrams.shrink_to_fit();
        index.precompute_expansions();
        index
    }

    /// Expands every vocabulary token once, on all cores (each thread with its own scratch).
    fn precompute_expansions(&mut self) {
        let vocab = self.vocab.len();
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8);
        let chunk = vocab.div_ceil(threads).max(1);
        let index = &*self;
        let parts: Vec<Vec<Vec<(u32, f32)>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..vocab)
                .step_by(chunk)
                .map(|start| {
                    scope.spawn(move || {
                        let mut scratch = Scratch::default();
                        scratch.reset(index.names.len(), vocab);
                        (start..(start + chunk).min(vocab))
                            .map(|id| {
                                let features = &index.vocab[id].features;
                                index.expand(features, TokenKind::Name, &mut scratch)
                            })
                            .collect()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().unwrap_or_default())
                .collect()
        });
        let mut offsets = Vec::with_capacity(vocab + 1);
        let mut pairs = Vec::new();
        offsets.push(0u32);
        for expansion in parts.into_iter().flatten() {
            pairs.extend_from_slice(&expansion);
            offsets.push(pairs.len() as u32);
        }
        // A worker that panicked leaves its part empty: then nothing is memoized and every
        // query token is expanded at query time, as before.
        if offsets.len() != vocab + 1 {
            offsets.clear();
            pairs.clear();
        }
        pairs.shrink_to_fit();
        self.expansion_offsets = offsets;
        self.expansion_pairs = pairs;
    }

    /// Checks every `step`-th vocabulary token: its precomputed expansion must equal what query
    /// time computes for the same text from scratch. Returns the tokens that differ (for tests).
    #[doc(hidden)]
    pub fn memoized_expansion_mismatches(&self, step: usize) -> Vec<String> {
        let encoder = super::normalize::phonetic_encoder();
        let mut scratch = Scratch::default();
        scratch.reset(self.names.len(), self.vocab.len());
        let mut wrong = Vec::new();
        for vocab in self.vocab.iter().step_by(step.max(1)) {
            let text = &vocab.features.text;
            let fresh =
                TokenFeatures::new(text, vocab.features.abjad, phonetic_key(&encoder, text));
            let Some(memoized) = self.memoized_expansion(&fresh, TokenKind::Name) else {
                if !fresh.is_initial() {
                    wrong.push(format!("{text}: not memoized"));
                }
                continue;
            };
            if memoized
                != self
                    .expand(&fresh, TokenKind::Name, &mut scratch)
                    .as_slice()
            {
                wrong.push(text.to_string());
            }
        }
        wrong
    }

    /// The precomputed expansion of a query token the lists use, when it is the same token
    /// (same text, same script class) as the listed one.
    fn memoized_expansion(&self, token: &TokenFeatures, kind: TokenKind) -> Option<&[(u32, f32)]> {
        if kind != TokenKind::Name || token.is_initial() || self.expansion_offsets.is_empty() {
            return None;
        }
        let id = *self.by_text.get(&token.text)? as usize;
        if self.vocab[id].features.abjad != token.abjad {
            return None;
        }
        let start = self.expansion_offsets[id] as usize;
        let end = self.expansion_offsets[id + 1] as usize;
        Some(&self.expansion_pairs[start..end])
    }

    /// The expansion of a query token the lists do not use, from the calling thread's cache when
    /// this index expanded the same token (same text, same script class) on this thread before.
    /// Expansion depends on nothing but the token's text, script class and kind, and the index.
    fn cached_expansion(
        &self,
        token: &TokenFeatures,
        kind: TokenKind,
        scratch: &mut Scratch,
    ) -> Vec<(u32, f32)> {
        if kind != TokenKind::Name || token.is_initial() {
            return self.expand(token, kind, scratch);
        }
        if scratch.expansions.identity != Some(self.identity) {
            scratch.expansions.identity = Some(self.identity);
            scratch.expansions.entries.clear();
        }
        if let Some((abjad, known)) = scratch.expansions.entries.get(&token.text) {
            if *abjad == token.abjad {
                return known.to_vec();
            }
        }
        let expansion = self.expand(token, kind, scratch);
        scratch.expansions.entries.put(
            token.text.clone(),
            (token.abjad, expansion.clone().into_boxed_slice()),
        );
        expansion
    }

    /// For each token: its expansion computed from scratch, then through the thread's cache twice
    /// (a miss, then a hit), must be the same. Returns the tokens where they differ (for tests).
    #[doc(hidden)]
    pub fn cached_expansion_mismatches(&self, tokens: &[&str]) -> Vec<String> {
        let encoder = super::normalize::phonetic_encoder();
        let mut wrong = Vec::new();
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            scratch.reset(self.names.len(), self.vocab.len());
            for text in tokens {
                let token = TokenFeatures::new(text, false, phonetic_key(&encoder, text));
                let fresh = self.expand(&token, TokenKind::Name, &mut scratch);
                let first = self.cached_expansion(&token, TokenKind::Name, &mut scratch);
                let second = self.cached_expansion(&token, TokenKind::Name, &mut scratch);
                if first != fresh || second != fresh {
                    wrong.push(text.to_string());
                }
            }
        });
        wrong
    }

    pub fn lists(&self) -> &[IndexedList] {
        &self.lists
    }

    pub fn entity(&self, id: u32) -> &IndexedEntity {
        &self.entities[id as usize]
    }

    pub fn list_of(&self, entity: &IndexedEntity) -> &IndexedList {
        &self.lists[entity.list as usize]
    }

    /// Every indexed name as published.
    pub fn name_texts(&self) -> impl Iterator<Item = &str> {
        self.name_texts.iter().map(|t| &**t)
    }

    pub fn entity_count(&self) -> usize {
        self.entities.len()
    }

    pub fn name_count(&self) -> usize {
        self.names.len()
    }

    /// Entities and names per list, in list order.
    pub fn counts_per_list(&self) -> Vec<(usize, usize)> {
        let mut counts = vec![(0usize, 0usize); self.lists.len()];
        for entity in &self.entities {
            counts[entity.list as usize].0 += 1;
        }
        for name in &self.names {
            counts[self.entities[name.entity as usize].list as usize].1 += 1;
        }
        counts
    }

    /// Finds the entities whose names match the query, best first.
    pub fn search(&self, query: &ScreenQuery<'_>) -> Vec<ScreenHit> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            self.search_with(query, &mut scratch)
        })
    }

    fn search_with(&self, query: &ScreenQuery<'_>, scratch: &mut Scratch) -> Vec<ScreenHit> {
        let normalized = normalize(query.name);
        if normalized.is_empty() || self.names.is_empty() {
            return Vec::new();
        }
        let encoder = super::normalize::phonetic_encoder();
        let query_tokens: Vec<TokenFeatures> = normalized
            .iter()
            .take(MAX_TOKENS)
            .map(|t| TokenFeatures::new(&t.text, t.abjad, phonetic_key(&encoder, &t.text)))
            .collect();
        scratch.reset(self.names.len(), self.vocab.len());

        // Expand every query token, then accumulate per-name upper bounds, rarest token first.
        let mut query_weights: Vec<f32> = Vec::with_capacity(query_tokens.len());
        let mut known_similarities: Vec<Vec<(u32, f32)>> = Vec::with_capacity(query_tokens.len());
        for (position, token) in query_tokens.iter().enumerate() {
            let kind = normalized[position].kind;
            let mut expansions = match self.memoized_expansion(token, kind) {
                Some(known) => known.to_vec(),
                None => self.cached_expansion(token, kind, scratch),
            };
            let weight = self.query_token_weight(token, normalized[position].kind, &expansions);
            query_weights.push(weight);
            expansions.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
            known_similarities.push(expansions);
        }
        let mut order: Vec<usize> = (0..query_tokens.len()).collect();
        order.sort_by(|a, b| query_weights[*b].total_cmp(&query_weights[*a]));
        let rarest_weight = order.first().map_or(0.0, |p| query_weights[*p]);
        for (rank, &position) in order.iter().enumerate() {
            let weight = query_weights[position];
            let expansions = &known_similarities[position];
            // A common token ("mohammed", "trading") cannot lift a name that misses every rarer
            // query token to the threshold: it only adds to names already found.
            let common = rank > 0
                && weight * 1.5 <= rarest_weight
                && expansions
                    .iter()
                    .take(MAX_EXPANSIONS)
                    .any(|(id, _)| self.vocab[*id as usize].postings_len > COMMON_POSTINGS);
            if common {
                let mut sorted: Vec<(u32, f32)> =
                    expansions.iter().take(MAX_EXPANSIONS).copied().collect();
                sorted.sort_unstable_by_key(|(id, _)| *id);
                for i in 0..scratch.touched.len() {
                    let name_id = scratch.touched[i];
                    let name = &self.names[name_id as usize];
                    for token in name.tokens.iter() {
                        if let Ok(at) = sorted.binary_search_by_key(token, |(id, _)| *id) {
                            let sim = sorted[at].1;
                            let vocab = &self.vocab[*token as usize];
                            scratch.offer(name_id, sim * weight, sim * vocab.weight);
                        }
                    }
                }
            } else {
                for (vocab_id, sim) in expansions.iter().take(MAX_EXPANSIONS) {
                    let vocab = &self.vocab[*vocab_id as usize];
                    let gain = sim * weight;
                    let listed_gain = sim * vocab.weight;
                    let start = vocab.postings_start as usize;
                    for name in &self.postings[start..start + vocab.postings_len as usize] {
                        scratch.offer(*name, gain, listed_gain);
                    }
                }
            }
            // The query token may be two listed tokens joined ("abdulrahman").
            if let Some(names) = self.joined.get(&query_tokens[position].text) {
                for name in names {
                    scratch.offer(*name, weight, weight);
                }
            }
            scratch.commit_position();
        }
        for known in &mut known_similarities {
            known.sort_unstable_by_key(|(id, _)| *id);
        }
        // Two adjacent query tokens may be one listed token ("abdul rahman" / "abdulrahman").
        for (position, pair) in query_tokens.windows(2).enumerate() {
            let mut joined = pair[0].text.clone();
            joined.push_str(&pair[1].text);
            if let Some(id) = self.by_text.get(&joined) {
                let vocab = &self.vocab[*id as usize];
                let gain = query_weights[position] + query_weights[position + 1];
                let start = vocab.postings_start as usize;
                for name in &self.postings[start..start + vocab.postings_len as usize] {
                    scratch.offer(*name, gain, vocab.weight);
                }
                scratch.commit_position();
            }
        }

        let query_weight: f32 = query_weights.iter().sum();
        let floor = (query.threshold / 100.0).min(1.0) * 0.92;
        let mut candidates: Vec<(f32, u32)> = Vec::new();
        for &name_id in &scratch.touched {
            let name = &self.names[name_id as usize];
            let gains = scratch.gains[name_id as usize];
            let accumulated_query = gains.acc_query;
            let accumulated_listed = gains.acc_listed.min(name.total_weight);
            let unaligned = (name.total_weight - accumulated_listed).max(0.0);
            let bound = (accumulated_query + accumulated_listed)
                / (query_weight + accumulated_listed + UNMATCHED_LISTED_WEIGHT * unaligned)
                    .max(f32::EPSILON);
            if bound < floor {
                continue;
            }
            if !self.visible(name.entity, query) {
                continue;
            }
            candidates.push((bound, name_id));
        }
        candidates.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        candidates.truncate(MAX_FULLY_SCORED);

        let query_refs: Vec<&TokenFeatures> = query_tokens.iter().collect();
        let latin_query = !query_refs.iter().any(|t| t.abjad);
        let query_side = Side {
            tokens: &query_refs,
            weights: &query_weights,
        };
        let mut listed_refs: Vec<&TokenFeatures> = Vec::with_capacity(MAX_TOKENS);
        let mut listed_weights: Vec<f32> = Vec::with_capacity(MAX_TOKENS);
        let mut best: Vec<(u32, Scored)> = Vec::new();
        for (_, name_id) in candidates {
            let name = &self.names[name_id as usize];
            self.listed_side(name, &mut listed_refs, &mut listed_weights);
            // Similarities computed during expansion are reused; a pair expansion did not find is
            // below the floor, except for initials and vowelless tokens, computed here.
            let listed_ids = &name.tokens;
            let name_score = score_names_with(
                &query_side,
                &Side {
                    tokens: &listed_refs,
                    weights: &listed_weights,
                },
                |i, j| {
                    let query_token = query_refs[i];
                    if query_token.is_initial() || query_token.abjad {
                        return super::score::token_similarity(query_token, listed_refs[j]);
                    }
                    let known = &known_similarities[i];
                    match known.binary_search_by_key(&listed_ids[j], |(id, _)| *id) {
                        Ok(at) => known[at].1,
                        Err(_) if listed_refs[j].is_initial() || listed_refs[j].abjad => {
                            super::score::token_similarity(query_token, listed_refs[j])
                        }
                        Err(_) => 0.0,
                    }
                },
            );
            let raw_points = name_score.score * 100.0;
            let mut name_points = raw_points;
            if name.weak {
                name_points *= WEAK_ALIAS_FACTOR;
            }
            // (Only where the name could still reach the threshold with every bonus.)
            let cross_script_unsupported = latin_query
                && name_points + BIRTH_YEAR_MATCH + COUNTRY_MATCH >= query.threshold
                && listed_refs.iter().any(|t| t.abjad)
                && self
                    .latin_support(name.entity, &query_side)
                    .is_some_and(|support| support < CROSS_SCRIPT_SUPPORT_FLOOR);
            if cross_script_unsupported {
                name_points *= UNSUPPORTED_CROSS_SCRIPT_FACTOR;
            }
            let entity = &self.entities[name.entity as usize];
            let after_birth =
                adjust_for_birth_year(name_points, query.birth_year, &entity.birth_years);
            let after_country =
                adjust_for_country(after_birth, query.country, &entity.entity.countries);
            let birth_year_match = query.birth_year.and_then(|asked| {
                (!entity.birth_years.is_empty())
                    .then(|| entity.birth_years.iter().any(|y| (y - asked).abs() <= 1))
            });
            let country_match = query
                .country
                .is_some_and(|asked| entity.entity.countries.iter().any(|c| c == asked));
            let corroborated = birth_year_match == Some(true) || country_match;
            let score = if name_score.common && !corroborated {
                common_name_ceiling(after_country, query.match_threshold)
            } else {
                after_country
            };
            if score < query.threshold {
                continue;
            }
            let scored = Scored {
                name_id,
                score,
                raw_points,
                weak: name.weak,
                cross_script_unsupported,
                birth_year_match,
                country_match,
                birth_year: after_birth - name_points,
                country: after_country - after_birth,
                common_name: score - after_country,
            };
            match best.iter_mut().find(|(entity, _)| *entity == name.entity) {
                Some((_, kept)) if kept.score >= score => {}
                Some((_, kept)) => *kept = scored,
                None => best.push((name.entity, scored)),
            }
        }
        best.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then_with(|| a.0.cmp(&b.0)));
        best.truncate(query.limit);
        best.into_iter()
            .map(|(entity, scored)| self.hit(entity, &scored, query.name, &query_side))
            .collect()
    }

    /// A hit with its explanation (the alignment is computed again, with every pair recorded).
    fn hit(&self, entity: u32, scored: &Scored, asked: &str, query: &Side<'_>) -> ScreenHit {
        let name = &self.names[scored.name_id as usize];
        let mut tokens: Vec<&TokenFeatures> = Vec::with_capacity(MAX_TOKENS);
        let mut weights: Vec<f32> = Vec::with_capacity(MAX_TOKENS);
        self.listed_side(name, &mut tokens, &mut weights);
        let listed = Side {
            tokens: &tokens,
            weights: &weights,
        };
        let mut alignment = Alignment::default();
        let explained = explain_names(query, &listed, &mut alignment);
        let matched_name = self.name_texts[scored.name_id as usize].to_string();
        let explanation = explanation(
            asked,
            &matched_name,
            query,
            &listed,
            &alignment,
            explained.score,
            scored,
        );
        let mut name_points = scored.raw_points;
        if scored.weak {
            name_points *= WEAK_ALIAS_FACTOR;
        }
        if scored.cross_script_unsupported {
            name_points *= UNSUPPORTED_CROSS_SCRIPT_FACTOR;
        }
        ScreenHit {
            entity,
            score: scored.score,
            name_score: name_points,
            matched_name,
            explanation: Box::new(explanation),
        }
    }

    /// Fills `tokens` and `weights` with a listed name's vocabulary tokens and their weights.
    fn listed_side<'s>(
        &'s self,
        name: &IndexedName,
        tokens: &mut Vec<&'s TokenFeatures>,
        weights: &mut Vec<f32>,
    ) {
        tokens.clear();
        weights.clear();
        for id in name.tokens.iter() {
            let vocab = &self.vocab[*id as usize];
            tokens.push(&vocab.features);
            weights.push(vocab.weight);
        }
    }

    /// The best score (0–1) of the query against the entity's names written without abjad
    /// tokens (its publishers' Latin-script forms); `None` when it has none.
    fn latin_support(&self, entity: u32, query: &Side<'_>) -> Option<f32> {
        // Names are indexed entity by entity, in entity order.
        let from = self.names.partition_point(|n| n.entity < entity);
        let until = self.names.partition_point(|n| n.entity <= entity);
        let mut best: Option<f32> = None;
        let mut tokens: Vec<&TokenFeatures> = Vec::with_capacity(MAX_TOKENS);
        let mut weights: Vec<f32> = Vec::with_capacity(MAX_TOKENS);
        for name in &self.names[from..until] {
            self.listed_side(name, &mut tokens, &mut weights);
            if tokens.is_empty() || tokens.iter().any(|t| t.abjad) {
                continue;
            }
            let listed = Side {
                tokens: &tokens,
                weights: &weights,
            };
            let score = score_names(query, &listed).score;
            best = Some(best.map_or(score, |b: f32| b.max(score)));
        }
        best
    }

    /// Scores two names against each other (0–100) with this index's token weights; tokens the
    /// lists never use weigh as the rarest.
    pub fn score_pair(&self, a: &str, b: &str) -> f32 {
        let encoder = super::normalize::phonetic_encoder();
        let side = |name: &str| -> (Vec<TokenFeatures>, Vec<f32>) {
            let tokens = normalize(name);
            let features: Vec<TokenFeatures> = tokens
                .iter()
                .take(MAX_TOKENS)
                .map(|t| TokenFeatures::new(&t.text, t.abjad, phonetic_key(&encoder, &t.text)))
                .collect();
            let weights = tokens
                .iter()
                .take(MAX_TOKENS)
                .map(|t| match t.kind {
                    TokenKind::LegalForm => LEGAL_FORM_WEIGHT,
                    TokenKind::Name if t.text.len() == 1 => {
                        self.unknown_weight * INITIAL_WEIGHT_SHARE
                    }
                    TokenKind::Name => self
                        .by_text
                        .get(&t.text)
                        .map(|id| self.vocab[*id as usize].weight)
                        .unwrap_or(self.unknown_weight),
                })
                .collect();
            (features, weights)
        };
        let (fa, wa) = side(a);
        let (fb, wb) = side(b);
        let ra: Vec<&TokenFeatures> = fa.iter().collect();
        let rb: Vec<&TokenFeatures> = fb.iter().collect();
        let forward = score_names(
            &Side {
                tokens: &ra,
                weights: &wa,
            },
            &Side {
                tokens: &rb,
                weights: &wb,
            },
        );
        let backward = score_names(
            &Side {
                tokens: &rb,
                weights: &wb,
            },
            &Side {
                tokens: &ra,
                weights: &wa,
            },
        );
        forward.score.max(backward.score) * 100.0
    }

    fn visible(&self, entity_id: u32, query: &ScreenQuery<'_>) -> bool {
        let entity = &self.entities[entity_id as usize];
        let list = &self.lists[entity.list as usize];
        if query.kind.is_some_and(|kind| kind != list.kind) {
            return false;
        }
        if list.tenant.is_some() && list.tenant != query.tenant {
            return false;
        }
        if let Some(country) = query.country {
            let countries = &entity.entity.countries;
            if !countries.is_empty() && !countries.iter().any(|c| c == country) {
                return false;
            }
        }
        true
    }

    fn query_token_weight(
        &self,
        token: &TokenFeatures,
        kind: TokenKind,
        expansions: &[(u32, f32)],
    ) -> f32 {
        if kind == TokenKind::LegalForm {
            return LEGAL_FORM_WEIGHT;
        }
        if token.is_initial() {
            // An initial says less than a name but must still cost when it matches nothing.
            return self.unknown_weight * INITIAL_WEIGHT_SHARE;
        }
        if let Some(id) = self.by_text.get(&token.text) {
            return self.vocab[*id as usize].weight;
        }
        // An unknown spelling weighs what the listed token it most resembles weighs.
        expansions
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|(_, sim)| *sim >= 0.88)
            .map(|(id, _)| self.vocab[*id as usize].weight)
            .unwrap_or(self.unknown_weight)
    }

    /// Vocabulary tokens similar enough to `token` to align with it, with their similarity.
    fn expand(
        &self,
        token: &TokenFeatures,
        kind: TokenKind,
        scratch: &mut Scratch,
    ) -> Vec<(u32, f32)> {
        let mut out: Vec<(u32, f32)> = Vec::new();
        let exhaustive = kind != TokenKind::LegalForm && !token.is_initial();
        // Vocabulary tokens sharing enough trigrams, found first (they need the counters).
        let fuzzy = if exhaustive && !token.abjad && token.text.len() >= 4 {
            self.trigram_neighbours(token, scratch)
        } else {
            Vec::new()
        };
        // Each vocabulary token is compared once per expansion: `seen` carries this expansion's
        // stamp for the tokens already compared.
        let stamp = scratch.next_stamp();
        let seen = &mut scratch.seen;
        let mut consider = |id: u32, out: &mut Vec<(u32, f32)>| {
            let mark = &mut seen[id as usize];
            if *mark == stamp {
                return;
            }
            *mark = stamp;
            let sim = super::score::token_similarity(token, &self.vocab[id as usize].features);
            if sim >= TOKEN_MATCH_FLOOR {
                out.push((id, sim));
            }
        };
        if let Some(id) = self.by_text.get(&token.text) {
            consider(*id, &mut out);
        }
        if !exhaustive {
            return out;
        }
        if token.nickname_of.is_some() {
            for partner in super::normalize::nickname_partners(&token.text) {
                if let Some(id) = self.by_text.get(partner) {
                    consider(*id, &mut out);
                }
            }
        }
        if let Some(id) = self.by_text.get(&token.folded) {
            consider(*id, &mut out);
        }
        if let Some(ids) = self.by_folded.get(&token.folded) {
            for id in ids.iter().take(64) {
                consider(*id, &mut out);
            }
        }
        if let Some(ids) = self.by_skeleton.get(&token.skeleton) {
            for id in ids.iter().take(256) {
                consider(*id, &mut out);
            }
        }
        if !token.phonetic.is_empty() {
            if let Some(ids) = self.by_phonetic.get(&token.phonetic) {
                for id in ids.iter().take(256) {
                    consider(*id, &mut out);
                }
            }
        }
        for id in fuzzy {
            consider(id, &mut out);
        }
        out
    }
}

impl ScreeningIndex {
    /// Vocabulary tokens sharing at least 40 % of `token`'s trigrams (frequent trigrams aside)
    /// and of a comparable length.
    fn trigram_neighbours(&self, token: &TokenFeatures, scratch: &mut Scratch) -> Vec<u32> {
        let mut total = 0u16;
        let mut skipped = 0u16;
        trigram_keys(&token.text, |key| {
            total += 1;
            if let Some(ids) = self.trigrams.get(&key) {
                // A trigram shared by thousands of tokens ("$al", "ov$") narrows nothing.
                if ids.len() > FREQUENT_TRIGRAM {
                    skipped += 1;
                    return;
                }
                for id in ids {
                    scratch.count_trigram(*id);
                }
            }
        });
        let needed = ((f32::from(total) * 0.4).ceil() as u16)
            .saturating_sub(skipped)
            .max(2);
        let length = token.text.len();
        let mut fuzzy: Vec<u32> = Vec::new();
        for &id in &scratch.trigram_touched {
            if scratch.trigram_counts[id as usize] >= needed {
                let other = self.vocab[id as usize].features.text.len();
                if other.abs_diff(length) <= (length / 2).max(3) {
                    fuzzy.push(id);
                }
            }
        }
        scratch.clear_trigrams();
        fuzzy
    }
}

/// A listed country equal to the caller's corroborates the match. (An entity whose known
/// countries all differ never gets here: the country filters, see [`ScreenQuery::country`].)
fn adjust_for_country<S: AsRef<str>>(points: f32, asked: Option<&str>, listed: &[S]) -> f32 {
    match asked {
        Some(country) if listed.iter().any(|c| c.as_ref() == country) => {
            (points + COUNTRY_MATCH).min(100.0)
        }
        _ => points,
    }
}

/// Scores above `match_threshold − COMMON_NAME_BAND` are compressed into the band below the
/// match threshold, keeping their order: 100 becomes `match_threshold − 0.5`. A common full name
/// ("David Scott", "Wang Wei") with no birth year or country to corroborate it is a potential
/// match at most: many people carry it.
pub fn common_name_ceiling(points: f32, match_threshold: f32) -> f32 {
    if match_threshold > 100.0 {
        // No score reaches it: nothing to keep below.
        return points;
    }
    let low = (match_threshold - COMMON_NAME_BAND).max(0.0);
    let top = (match_threshold - 0.5).max(low);
    if points <= low || low >= 100.0 {
        return points;
    }
    low + (points - low) * (top - low) / (100.0 - low)
}

/// The explanation of one hit, from the recorded alignment and the adjustments applied.
fn explanation(
    asked: &str,
    matched_name: &str,
    query: &Side<'_>,
    listed: &Side<'_>,
    alignment: &Alignment,
    name_score: f32,
    scored: &Scored,
) -> MatchExplanation {
    let round = |v: f32, places: i32| {
        let scale = 10f32.powi(places);
        (v * scale).round() / scale
    };
    let texts = |side: &Side<'_>, mask: u32| -> String {
        let mut out = String::new();
        for (i, token) in side.tokens.iter().enumerate().take(MAX_TOKENS) {
            if mask & (1 << i) != 0 {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&token.text);
            }
        }
        out
    };
    let nq = query.tokens.len().min(MAX_TOKENS);
    let nl = listed.tokens.len().min(MAX_TOKENS);
    let mut used_query = 0u32;
    let mut used_listed = 0u32;
    let mut aligned_listed = 0.0f32;
    for pair in &alignment.pairs {
        used_query |= pair.query_mask;
        used_listed |= pair.listed_mask;
        aligned_listed += pair.listed_weight;
    }
    let query_weight: f32 = query.weights[..nq].iter().sum();
    let listed_weight: f32 = listed.weights[..nl].iter().sum();
    let denominator = query_weight
        + aligned_listed
        + UNMATCHED_LISTED_WEIGHT * (listed_weight - aligned_listed).max(0.0);
    let mut parts: Vec<PartMatch> = alignment
        .pairs
        .iter()
        .map(|pair| PartMatch {
            query: texts(query, pair.query_mask),
            listed: texts(listed, pair.listed_mask),
            similarity: round(pair.similarity, 3),
            basis: pair.basis.as_str().to_owned(),
            weight: round(pair.query_weight + pair.listed_weight, 2),
            points: if denominator > 0.0 {
                round(
                    100.0 * pair.similarity * (pair.query_weight + pair.listed_weight)
                        / denominator,
                    1,
                )
            } else {
                0.0
            },
        })
        .collect();
    parts.sort_by(|a, b| b.points.total_cmp(&a.points));
    let unmatched = |side: &Side<'_>, n: usize, used: u32| -> Vec<UnmatchedPart> {
        (0..n)
            .filter(|i| used & (1 << i) == 0)
            .map(|i| UnmatchedPart {
                part: side.tokens[i].text.to_string(),
                weight: round(side.weights[i], 2),
            })
            .collect()
    };
    let mut adjustments = Vec::new();
    let mut points = scored.raw_points;
    if scored.weak {
        let after = points * WEAK_ALIAS_FACTOR;
        adjustments.push(ScoreAdjustment {
            reason: "weakAlias".into(),
            points: round(after - points, 1),
            detail: "the publisher marks this alias as weak or low quality".into(),
        });
        points = after;
    }
    if scored.cross_script_unsupported {
        let after = points * UNSUPPORTED_CROSS_SCRIPT_FACTOR;
        adjustments.push(ScoreAdjustment {
            reason: "crossScriptUnsupported".into(),
            points: round(after - points, 1),
            detail: "matched only through an original-script name, which none of the entity's \
                     Latin-script names supports"
                .into(),
        });
    }
    if scored.birth_year_match == Some(true) {
        adjustments.push(ScoreAdjustment {
            reason: "birthYearMatch".into(),
            points: round(scored.birth_year, 1),
            detail: "the birth year given is within a year of a listed birth date".into(),
        });
    } else if scored.birth_year_match == Some(false) {
        adjustments.push(ScoreAdjustment {
            reason: "birthYearMismatch".into(),
            points: round(scored.birth_year, 1),
            detail: "the birth year given is more than a year from every listed birth date".into(),
        });
    }
    if scored.country_match {
        adjustments.push(ScoreAdjustment {
            reason: "countryMatch".into(),
            points: round(scored.country, 1),
            detail: "the country given is one of the entity's countries".into(),
        });
    }
    if scored.common_name < 0.0 {
        adjustments.push(ScoreAdjustment {
            reason: "commonName".into(),
            points: round(scored.common_name, 1),
            detail: "every matched part is a common name and no birth year or country \
                     corroborates it: a potential match at most"
                .into(),
        });
    }
    MatchExplanation {
        query: asked.to_owned(),
        matched_name: matched_name.to_owned(),
        name_score: round(name_score * 100.0, 1),
        parts,
        unmatched_query: unmatched(query, nq, used_query),
        unmatched_listed: unmatched(listed, nl, used_listed),
        adjustments,
        score: round(scored.score, 1),
    }
}

fn adjust_for_birth_year(points: f32, asked: Option<i32>, listed: &[i32]) -> f32 {
    let Some(asked) = asked else {
        return points;
    };
    if listed.is_empty() {
        return points;
    }
    if listed.iter().any(|year| (year - asked).abs() <= 1) {
        (points + BIRTH_YEAR_MATCH).min(100.0)
    } else {
        (points - BIRTH_YEAR_MISMATCH).max(0.0)
    }
}

/// Per-thread query scratch space, sized to the index it last served.
#[derive(Default)]
struct Scratch {
    /// Per name, the four gains side by side: one cache line per posting visited.
    gains: Vec<Gains>,
    touched: Vec<u32>,
    position_touched: Vec<u32>,
    trigram_counts: Vec<u16>,
    trigram_touched: Vec<u32>,
    /// Per vocabulary token, the stamp of the last expansion that compared it.
    seen: Vec<u32>,
    stamp: u32,
    /// Expansions of query tokens the lists do not use, for one index.
    expansions: ExpansionCache,
}

/// A thread's expansions of query tokens the lists do not use: token text → (script class,
/// expansion), for the index whose identity it carries.
struct ExpansionCache {
    /// `None` until the thread first expands a token.
    identity: Option<IndexIdentity>,
    entries: lru::LruCache<CompactString, CachedExpansion>,
}

/// A cached expansion: the token's script class (abjad or not) and what it expands to.
type CachedExpansion = (bool, Box<[(u32, f32)]>);

impl Default for ExpansionCache {
    fn default() -> Self {
        ExpansionCache {
            identity: None,
            entries: lru::LruCache::new(
                NonZeroUsize::new(CACHED_EXPANSIONS_PER_THREAD).unwrap_or(NonZeroUsize::MIN),
            ),
        }
    }
}

/// What a name has gathered so far: accumulated over committed query positions, and the best
/// offer of the current position.
#[derive(Debug, Default, Clone, Copy)]
struct Gains {
    acc_query: f32,
    acc_listed: f32,
    best_query: f32,
    best_listed: f32,
}

impl Scratch {
    fn reset(&mut self, names: usize, vocab: usize) {
        for id in self.touched.drain(..) {
            self.gains[id as usize] = Gains::default();
        }
        if self.gains.len() != names {
            self.gains = vec![Gains::default(); names];
        }
        if self.trigram_counts.len() != vocab {
            self.trigram_counts = vec![0; vocab];
            self.seen = vec![0; vocab];
            self.stamp = 0;
        }
        self.position_touched.clear();
        self.trigram_touched.clear();
    }

    /// The best (query, listed) gain of one query position for a name.
    fn offer(&mut self, name: u32, query_gain: f32, listed_gain: f32) {
        let gains = &mut self.gains[name as usize];
        if gains.best_query == 0.0 {
            self.position_touched.push(name);
            if gains.acc_query == 0.0 {
                self.touched.push(name);
            }
        }
        if query_gain > gains.best_query {
            gains.best_query = query_gain;
            gains.best_listed = listed_gain;
        }
    }

    fn commit_position(&mut self) {
        for name in self.position_touched.drain(..) {
            let gains = &mut self.gains[name as usize];
            gains.acc_query += gains.best_query;
            gains.acc_listed += gains.best_listed;
            gains.best_query = 0.0;
            gains.best_listed = 0.0;
        }
    }

    /// A stamp no vocabulary token carries yet (the marks are wiped when the counter wraps).
    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }

    fn count_trigram(&mut self, id: u32) {
        let count = &mut self.trigram_counts[id as usize];
        if *count == 0 {
            self.trigram_touched.push(id);
        }
        *count = count.saturating_add(1);
    }

    fn clear_trigrams(&mut self) {
        for id in self.trigram_touched.drain(..) {
            self.trigram_counts[id as usize] = 0;
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Brute force: Jaro-Winkler of the whole normalised query against every name, given already
/// normalised (tokens joined by spaces). The baseline the benchmark compares the index with; not
/// used to answer queries.
pub fn brute_force_best(names: &[String], query: &str) -> Option<(usize, f64)> {
    let joined: String = normalize(query)
        .iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut best: Option<(usize, f64)> = None;
    for (id, candidate) in names.iter().enumerate() {
        let sim = super::jaro::jaro_winkler(&joined, candidate);
        if best.is_none_or(|(_, b)| sim > b) {
            best = Some((id, sim));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(names: &[&str]) -> ScreeningIndex {
        let entities = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                Arc::new(ListEntity {
                    id: format!("test:{i}"),
                    external_id: i.to_string(),
                    name: name.to_string(),
                    ..ListEntity::default()
                })
            })
            .collect();
        ScreeningIndex::build(vec![ListInput {
            list: IndexedList {
                name: "test".into(),
                kind: ListKind::Sanction,
                tenant: None,
                url: None,
                title: "Test".into(),
            },
            entities,
        }])
    }

    #[test]
    fn cached_expansions_of_unlisted_tokens_equal_fresh_expansions() {
        let index = index_of(&[
            "Jonathan Smithers",
            "Jon Smith",
            "Ivan Petrov",
            "Johan Schmidt",
        ]);
        let wrong = index.cached_expansion_mismatches(&["jonn", "smyth", "petrof", "ivann", "zed"]);
        assert!(wrong.is_empty(), "cached expansions differ for {wrong:?}");
    }

    #[test]
    fn a_new_index_never_reads_expansions_cached_for_another() {
        // The same query token expands to different vocabulary ids in the two indexes: a cache
        // that ignored which index filled it would answer the second from the first.
        let first = index_of(&["Jon Smith", "Ivan Petrov"]);
        let second = index_of(&["Ivan Petrov", "Ivana Petrova", "Jon Smith"]);
        assert!(first
            .cached_expansion_mismatches(&["jonn", "petrof"])
            .is_empty());
        let wrong = second.cached_expansion_mismatches(&["jonn", "petrof"]);
        assert!(wrong.is_empty(), "stale expansions for {wrong:?}");
    }

    /// A Latin query matched only through an Arabic-script name keeps its score when the entity
    /// has no Latin-script name to check it against, and keeps 75 % of it when the entity's
    /// Latin name does not support it.
    #[test]
    fn a_cross_script_match_counts_only_as_far_as_the_latin_names_support_it() {
        let arabic = "رودي سليوة";
        let entity = |id: usize, name: &str, aliases: &[&str]| {
            Arc::new(ListEntity {
                id: format!("test:{id}"),
                external_id: id.to_string(),
                name: name.to_owned(),
                aliases: aliases
                    .iter()
                    .map(|a| super::super::entity::Alias::strong(*a))
                    .collect(),
                ..ListEntity::default()
            })
        };
        let index = ScreeningIndex::build(vec![ListInput {
            list: IndexedList {
                name: "test".into(),
                kind: ListKind::Sanction,
                tenant: None,
                url: None,
                title: "Test".into(),
            },
            entities: vec![entity(0, arabic, &[]), entity(1, "ROODI SLEWA", &[arabic])],
        }]);
        let raw = index.score_pair("Wesley Ward", arabic);
        assert!(raw >= 80.0, "the skeletons collapse: {raw}");
        let hits = index.search(&ScreenQuery {
            name: "Wesley Ward",
            kind: None,
            tenant: None,
            country: None,
            birth_year: None,
            threshold: 1.0,
            // "Wesley Ward" is a common name: no ceiling here, this test is about the script.
            match_threshold: 101.0,
            limit: 10,
        });
        let score_of = |entity: u32| hits.iter().find(|h| h.entity == entity).map(|h| h.score);
        assert_eq!(
            score_of(0),
            Some(raw),
            "no Latin name: nothing to check against"
        );
        let unsupported = score_of(1).expect("still a hit below the threshold");
        assert!(
            (unsupported - raw * UNSUPPORTED_CROSS_SCRIPT_FACTOR).abs() < 1e-3,
            "{unsupported} against {raw}"
        );
    }

    #[test]
    fn searching_twice_with_unlisted_tokens_finds_the_same_hits() {
        let index = index_of(&["Jonathan Smithers", "Jon Smith", "Ivan Petrov"]);
        let query = ScreenQuery {
            name: "Jonn Smyth",
            kind: None,
            tenant: None,
            country: None,
            birth_year: None,
            threshold: 50.0,
            match_threshold: 90.0,
            limit: 10,
        };
        let first = index.search(&query);
        assert!(
            !first.is_empty(),
            "a near spelling of a listed name must match"
        );
        assert_eq!(index.search(&query), first);
    }
    fn query(name: &str, birth_year: Option<i32>) -> ScreenQuery<'_> {
        ScreenQuery {
            name,
            kind: None,
            tenant: None,
            country: None,
            birth_year,
            threshold: 1.0,
            match_threshold: 90.0,
            limit: 10,
        }
    }

    /// "David Scott" is a common full name: exact, it is a potential match, not a match, until a
    /// birth year corroborates it; an uncommon name matched exactly stays at 100.
    #[test]
    fn a_common_full_name_without_corroboration_stays_below_the_match_threshold() {
        let index = ScreeningIndex::build(vec![ListInput {
            list: IndexedList {
                name: "test".into(),
                kind: ListKind::Sanction,
                tenant: None,
                url: None,
                title: "Test".into(),
            },
            entities: vec![
                Arc::new(ListEntity {
                    id: "test:0".into(),
                    name: "David Scott".into(),
                    birth_dates: vec!["1961-03-04".into()],
                    ..ListEntity::default()
                }),
                Arc::new(ListEntity {
                    id: "test:1".into(),
                    name: "Qusay Tikriti".into(),
                    ..ListEntity::default()
                }),
            ],
        }]);
        let common = index.search(&query("David Scott", None));
        assert_eq!(common.len(), 1);
        let score = common[0].score;
        assert!((80.0..90.0).contains(&score), "{score}");
        assert_eq!(score, common_name_ceiling(100.0, 90.0));
        let reasons: Vec<&str> = common[0]
            .explanation
            .adjustments
            .iter()
            .map(|a| a.reason.as_str())
            .collect();
        assert_eq!(reasons, ["commonName"]);

        let corroborated = index.search(&query("David Scott", Some(1961)));
        assert_eq!(corroborated[0].score, 100.0, "{corroborated:?}");
        let rare = index.search(&query("Qusay Tikriti", None));
        assert_eq!(rare[0].score, 100.0);
        assert!(rare[0].explanation.adjustments.is_empty());
    }

    #[test]
    fn the_ceiling_keeps_order_and_leaves_lower_scores_alone() {
        assert_eq!(common_name_ceiling(75.0, 90.0), 75.0);
        assert_eq!(common_name_ceiling(80.0, 90.0), 80.0);
        assert!(common_name_ceiling(95.0, 90.0) < common_name_ceiling(100.0, 90.0));
        assert!(common_name_ceiling(100.0, 90.0) < 90.0);
        assert!(common_name_ceiling(100.0, 85.0) < 85.0);
    }

    /// The explanation accounts for the score: the parts' points add up to the name score, and
    /// every part of both names is either aligned or listed as unmatched.
    #[test]
    fn an_explanation_accounts_for_every_part_and_every_point() {
        let index = index_of(&["ROBERTO ORELLANA, Jose", "Vladimir Vladimirovich Putin"]);
        for (asked, parts) in [("Joseph Roberts", 3), ("Putin Vladimir", 3), ("V Putin", 3)] {
            let hits = index.search(&query(asked, None));
            let hit = hits.first().unwrap_or_else(|| panic!("{asked}: no hit"));
            let e = &hit.explanation;
            let points: f32 = e.parts.iter().map(|p| p.points).sum();
            assert!(
                (points - e.name_score).abs() <= 0.1 * e.parts.len() as f32,
                "{asked}: {points} against {}",
                e.name_score
            );
            let listed_parts: usize = e
                .parts
                .iter()
                .map(|p| p.listed.split(' ').count())
                .sum::<usize>()
                + e.unmatched_listed.len();
            assert_eq!(listed_parts, parts, "{asked}: {e:?}");
            assert!((e.score - hit.score).abs() < 0.05, "{asked}: {e:?}");
        }
        let hits = index.search(&query("Joseph Roberts", None));
        let e = &hits[0].explanation;
        assert_eq!(e.unmatched_listed.len(), 1, "{e:?}");
        assert_eq!(e.unmatched_listed[0].part, "orellana");
    }
}

//! Name screening against sanctions and PEP lists: loaders, normalisation, the fuzzy index, and
//! the screener the engine and the API share.
//!
//! Data flow: [`manager::ListsManager`] reads each configured list (`loaders/`, into
//! [`entity::ListEntity`] values), builds a [`index::ScreeningIndex`] off the hot path and swaps a
//! new [`ListScreener`] into the engine snapshot and its own `ArcSwap`. The engine calls
//! [`Screener::screen`] once per evaluation on the shard thread; the instant endpoints
//! (`api/screening.rs`) and `vigil screen eval` (`eval.rs`) search the same index.
//! [`NoScreening`] remains for engines built without lists (tests, `vigil replay --no-screening`).

pub mod config;
pub mod entity;
pub mod eval;
pub mod index;
pub mod jaro;
pub mod loaders;
pub mod manager;
pub mod normalize;
pub mod score;

use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::engine::rules::ScreeningFacts;
use crate::model::{ScreeningMatch, ScreeningOutcome, Transaction};
use entity::ListKind;
use index::{ScreenHit, ScreenQuery, ScreeningIndex};

/// What screening a transaction produced.
#[derive(Debug, Clone, Default)]
pub struct ScreeningResult {
    pub outcome: ScreeningOutcome,
    pub facts: ScreeningFacts,
    pub matches: Vec<ScreeningMatch>,
}

/// Screens the sender and receiver names of a transaction.
pub trait Screener: Send + Sync + std::fmt::Debug {
    fn screen(&self, tenant: i64, tx: &Transaction) -> ScreeningResult;

    /// A short description for `/readyz`.
    fn describe(&self) -> String;
}

/// Screens nothing: every party is "clear".
#[derive(Debug, Default, Clone, Copy)]
pub struct NoScreening;

impl Screener for NoScreening {
    fn screen(&self, _tenant: i64, _tx: &Transaction) -> ScreeningResult {
        ScreeningResult::default()
    }

    fn describe(&self) -> String {
        "no sanctions or PEP lists loaded".to_owned()
    }
}

/// "clear", "potential match" or "match" for a score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub potential: f32,
    pub matched: f32,
}

impl Thresholds {
    pub fn status(&self, score: f32) -> &'static str {
        if score >= self.matched {
            "match"
        } else if score >= self.potential {
            "potential match"
        } else {
            "clear"
        }
    }
}

static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// The screener over one built index. Immutable: a list change builds a new one.
#[derive(Debug)]
pub struct ListScreener {
    index: Arc<ScreeningIndex>,
    thresholds: Thresholds,
    /// Identifies this index in the per-thread caches; a new index never reuses an old entry.
    generation: u64,
    cache_entries_per_thread: NonZeroUsize,
}

/// Cached hits for one name, per (tenant, name).
type CachedHits = Arc<[ScreenHit]>;

struct ThreadCache {
    generation: u64,
    entries: lru::LruCache<(i64, Box<str>), CachedHits>,
}

thread_local! {
    static CACHE: RefCell<Option<ThreadCache>> = const { RefCell::new(None) };
}

impl ListScreener {
    pub fn new(index: Arc<ScreeningIndex>, thresholds: Thresholds, cache_entries: usize) -> Self {
        ListScreener {
            index,
            thresholds,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            cache_entries_per_thread: NonZeroUsize::new(cache_entries.max(1))
                .unwrap_or(NonZeroUsize::MIN),
        }
    }

    pub fn index(&self) -> &Arc<ScreeningIndex> {
        &self.index
    }

    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// Searches one party name (all list kinds, from the potential-match threshold), through the
    /// calling thread's cache.
    fn party_hits(&self, tenant: i64, name: &str) -> CachedHits {
        let name = name.trim();
        if name.is_empty() {
            return Arc::from(Vec::new());
        }
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let fresh = cache
                .as_ref()
                .is_none_or(|c| c.generation != self.generation);
            if fresh {
                *cache = Some(ThreadCache {
                    generation: self.generation,
                    entries: lru::LruCache::new(self.cache_entries_per_thread),
                });
            }
            let Some(cache) = cache.as_mut() else {
                return Arc::from(Vec::new());
            };
            if let Some(hits) = cache.entries.get(&(tenant, Box::from(name))) {
                return hits.clone();
            }
            let hits: CachedHits = Arc::from(self.index.search(&ScreenQuery {
                name,
                kind: None,
                tenant: Some(tenant),
                country: None,
                birth_year: None,
                threshold: self.thresholds.potential,
                match_threshold: self.thresholds.matched,
                limit: 10,
            }));
            cache.entries.put((tenant, Box::from(name)), hits.clone());
            hits
        })
    }

    fn screen_party(
        &self,
        tenant: i64,
        party: &'static str,
        name: Option<&str>,
        matches: &mut Vec<ScreeningMatch>,
    ) -> (f32, f32) {
        let Some(name) = name else {
            return (0.0, 0.0);
        };
        let hits = self.party_hits(tenant, name);
        let mut best = (0.0f32, 0.0f32);
        for hit in hits.iter() {
            let entity = self.index.entity(hit.entity);
            let list = self.index.list_of(entity);
            match list.kind {
                ListKind::Sanction => best.0 = best.0.max(hit.score),
                ListKind::Pep => best.1 = best.1.max(hit.score),
            }
            matches.push(ScreeningMatch {
                party: party.to_owned(),
                list_kind: list.kind.as_str().to_owned(),
                list: list.name.clone(),
                entity_id: entity.entity.id.clone(),
                name: entity.entity.name.clone(),
                matched_name: hit.matched_name.clone(),
                score: (hit.score * 10.0).round() / 10.0,
                status: self.thresholds.status(hit.score).to_owned(),
                explanation: Some((*hit.explanation).clone()),
            });
        }
        best
    }
}

impl Screener for ListScreener {
    fn screen(&self, tenant: i64, tx: &Transaction) -> ScreeningResult {
        let data = tx.payload.screening_data.as_ref();
        let sender_name = data.and_then(|d| d.sender_name.as_deref());
        let receiver_name = data.and_then(|d| d.receiver_name.as_deref());
        if sender_name.is_none() && receiver_name.is_none() {
            return ScreeningResult::default();
        }
        let mut matches = Vec::new();
        let (sender_sanction, sender_pep) =
            self.screen_party(tenant, "sender", sender_name, &mut matches);
        let (receiver_sanction, receiver_pep) =
            self.screen_party(tenant, "receiver", receiver_name, &mut matches);
        let t = self.thresholds;
        let mut outcome = ScreeningOutcome::default();
        outcome.sender.sanction = t.status(sender_sanction).to_owned();
        outcome.sender.pep = t.status(sender_pep).to_owned();
        outcome.receiver.sanction = t.status(receiver_sanction).to_owned();
        outcome.receiver.pep = t.status(receiver_pep).to_owned();
        let facts = ScreeningFacts {
            sender_sanction: t.status(sender_sanction).into(),
            sender_pep: t.status(sender_pep).into(),
            receiver_sanction: t.status(receiver_sanction).into(),
            receiver_pep: t.status(receiver_pep).into(),
        };
        ScreeningResult {
            outcome,
            facts,
            matches,
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} lists, {} entities, {} names",
            self.index.lists().len(),
            self.index.entity_count(),
            self.index.name_count()
        )
    }
}

//! Adverse media: Vigil's own index of news articles and the search that finds adverse coverage of
//! a person or company.
//!
//! Data flow: articles arrive through `POST /api/v1/adverse-media/articles` (a JSON array) or
//! `vigil media import FILE` (JSON lines, a JSON array, RSS, Atom or JSON Feed; [`ingest`]), are
//! validated, and written to a tantivy full-text index under `<data_dir>/media` ([`MediaIndex`]);
//! a write commits (fsync) before it is answered. Articles are public news, shared by every
//! business. A search ([`search`]) asks tantivy for candidate articles sharing (or nearly sharing)
//! a token with the name, then re-reads each candidate: the name must actually be *named* — a
//! window of the text scored against the query by the screening matcher (`ScreeningIndex::
//! score_pair`, with the same normaliser), not a substring test — and adverse keywords (fraud,
//! money laundering, bribery, corruption, terrorism financing, sanctions evasion, arrest,
//! conviction, …) are scored by their distance to the mentions. Each article gets a confidence and
//! a score per keyword; results come strongest first, newest first among equals.
//!
//! The index is opened by the service for reading; each ingestion takes tantivy's writer lock only
//! for its own commit, so `vigil media import` can add articles while the service runs (the
//! service's reader picks the commit up, and risk monitoring re-checks on it).

pub mod ingest;
pub mod search;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, INDEXED, STORED,
    STRING,
};
use tantivy::tokenizer::{AsciiFoldingFilter, LowerCaser, SimpleTokenizer, TextAnalyzer};
use tantivy::{doc, Index, IndexReader, ReloadPolicy, TantivyDocument, Term};
use thiserror::Error;

use crate::model::FieldError;
pub use ingest::Article;

/// `[media]`: the adverse-media index and search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MediaConfig {
    /// Where the index lives; empty means `<data_dir>/media`.
    pub index_dir: PathBuf,
    /// The lowest name score (0-100, the screening matcher's scale) at which an article counts as
    /// naming the person or company.
    pub name_threshold: f32,
    /// Most articles one `POST /api/v1/adverse-media/articles` takes.
    pub max_articles_per_request: usize,
    /// Candidate articles re-read per search (tantivy's best by BM25).
    pub candidates: usize,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            index_dir: PathBuf::new(),
            name_threshold: 85.0,
            max_articles_per_request: 1_000,
            candidates: 200,
        }
    }
}

impl MediaConfig {
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if !(50.0..=100.0).contains(&self.name_threshold) {
            problems.push((
                "media.name_threshold".to_owned(),
                "must be between 50 and 100".to_owned(),
            ));
        }
        if self.max_articles_per_request == 0 {
            problems.push((
                "media.max_articles_per_request".to_owned(),
                "must be at least 1".to_owned(),
            ));
        }
        if !(10..=10_000).contains(&self.candidates) {
            problems.push((
                "media.candidates".to_owned(),
                "must be between 10 and 10000".to_owned(),
            ));
        }
        problems
    }

    /// The index directory for a data directory.
    pub fn dir(&self, data_dir: &Path) -> PathBuf {
        if self.index_dir.as_os_str().is_empty() {
            data_dir.join("media")
        } else {
            self.index_dir.clone()
        }
    }
}

#[derive(Debug, Error)]
pub enum MediaError {
    #[error("adverse-media index error: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("cannot open the adverse-media index directory {path}: {problem}")]
    Dir { path: String, problem: String },
    #[error("the adverse-media index is being written by another process; retry")]
    Locked,
    #[error("unreadable articles: {0}")]
    Format(String),
    #[error("invalid article: {}", .0.iter().map(|e| format!("{} {}", e.field, e.problem)).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<FieldError>),
}

impl MediaError {
    pub fn from_fields(errors: Vec<FieldError>) -> MediaError {
        MediaError::Invalid(errors)
    }
}

const ANALYZER: &str = "vigil_folded";

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    title: Field,
    link: Field,
    published: Field,
    text: Field,
    search: Field,
}

/// A stored article as read back.
#[derive(Debug, Clone)]
pub struct StoredArticle {
    pub id: String,
    pub title: String,
    pub link: String,
    pub published_ms: Option<i64>,
    pub text: String,
}

/// The tantivy index of articles.
pub struct MediaIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Serialises this process's writers (tantivy allows one per index).
    writing: Mutex<()>,
}

impl std::fmt::Debug for MediaIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaIndex").finish_non_exhaustive()
    }
}

/// Transliterates to Latin (any script), as the screening normaliser does first.
pub fn latin(text: &str) -> String {
    any_ascii::any_ascii(text)
}

impl MediaIndex {
    /// Opens the index in `dir`, creating it on first use.
    pub fn open(dir: &Path) -> Result<MediaIndex, MediaError> {
        std::fs::create_dir_all(dir).map_err(|e| MediaError::Dir {
            path: dir.display().to_string(),
            problem: e.to_string(),
        })?;
        let mut builder = Schema::builder();
        let folded = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let fields = Fields {
            id: builder.add_text_field("id", STRING | STORED),
            title: builder.add_text_field("title", STORED),
            link: builder.add_text_field("link", STORED),
            published: builder.add_i64_field("published", INDEXED | STORED | FAST),
            text: builder.add_text_field("text", STORED),
            search: builder.add_text_field("search", folded),
        };
        let schema = builder.build();
        let directory =
            tantivy::directory::MmapDirectory::open(dir).map_err(|e| MediaError::Dir {
                path: dir.display().to_string(),
                problem: e.to_string(),
            })?;
        let index = Index::open_or_create(directory, schema)?;
        index.tokenizers().register(
            ANALYZER,
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .build(),
        );
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .try_into()?;
        Ok(MediaIndex {
            index,
            reader,
            fields,
            writing: Mutex::new(()),
        })
    }

    /// Adds (or replaces, by link) articles and commits; answers how many were written. Blocking.
    pub fn add(&self, articles: &[Article]) -> Result<usize, MediaError> {
        let _guard = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let mut writer: tantivy::IndexWriter =
            match self.index.writer_with_num_threads(1, 20_000_000) {
                Ok(writer) => writer,
                Err(tantivy::TantivyError::LockFailure(..)) => return Err(MediaError::Locked),
                Err(error) => return Err(error.into()),
            };
        let f = self.fields;
        for article in articles {
            let id = article.id();
            writer.delete_term(Term::from_field_text(f.id, &id));
            let mut document = doc!(
                f.id => id,
                f.title => article.title.clone(),
                f.link => article.link.clone(),
                f.text => article.text.clone(),
                f.search => latin(&format!("{}\n{}", article.title, article.text)),
            );
            if let Some(ms) = article.published_ms {
                document.add_i64(f.published, ms);
            }
            writer.add_document(document)?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        Ok(articles.len())
    }

    /// Articles in the index now.
    pub fn count(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// A value that changes whenever a commit (from this process or another) becomes visible.
    pub fn generation(&self) -> u64 {
        let _ = self.reader.reload();
        let searcher = self.reader.searcher();
        searcher
            .segment_readers()
            .iter()
            .map(|s| u64::from(s.max_doc()) ^ u64::from(s.num_docs()) << 32)
            .fold(searcher.num_docs(), |acc, v| {
                acc.wrapping_mul(31).wrapping_add(v)
            })
    }

    /// The best `limit` candidate articles for a name: any indexed token equal to one of `tokens`
    /// or (for tokens of 5 or more letters) one edit away.
    pub fn candidates(
        &self,
        tokens: &[String],
        limit: usize,
    ) -> Result<Vec<StoredArticle>, MediaError> {
        let field = self.fields.search;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for token in tokens {
            let term = Term::from_field_text(field, token);
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs)),
            ));
            if token.chars().count() >= 5 {
                clauses.push((Occur::Should, Box::new(FuzzyTermQuery::new(term, 1, true))));
            }
        }
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit.max(1)))?;
        let mut articles = Vec::with_capacity(top.len());
        for (_score, address) in top {
            let document: TantivyDocument = searcher.doc(address)?;
            let text = |field: Field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            articles.push(StoredArticle {
                id: text(self.fields.id),
                title: text(self.fields.title),
                link: text(self.fields.link),
                published_ms: document
                    .get_first(self.fields.published)
                    .and_then(|v| v.as_i64()),
                text: text(self.fields.text),
            });
        }
        Ok(articles)
    }

    /// The index's search tokens for `text` (the same analyzer the index uses).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut analyzer = match self.index.tokenizers().get(ANALYZER) {
            Some(analyzer) => analyzer,
            None => return Vec::new(),
        };
        let latin = latin(text);
        let mut stream = analyzer.token_stream(&latin);
        let mut tokens = Vec::new();
        while stream.advance() {
            tokens.push(stream.token().text.clone());
        }
        tokens
    }
}

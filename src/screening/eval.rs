//! Screening quality evaluation: precision, recall and F1 over labelled cases, at one threshold
//! and swept over many. `vigil screen eval FILE.jsonl` and the test suite both run this.
//!
//! Each line of a case file is one of:
//! - `{"kind":"query","query":"…","lists":"sanction"|"pep","expect":["ofac-sdn:123",…],
//!   "category":"…","country":"ir"?}`: a search; it is a true positive when any expected entity
//!   is returned at or above the threshold, a false negative otherwise; with `expect: []` any
//!   result at or above the threshold is a false positive.
//! - `{"kind":"pair","a":"…","b":"…","match":true|false,"category":"…"}`: two names scored
//!   directly against each other with the index's token weights.
//!
//! Query-level counting is what an analyst experiences: one alert to review per query that
//! returns anything. The report also gives the mean number of entities returned per query.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::entity::ListKind;
use super::index::{ScreenQuery, ScreeningIndex};

#[derive(Debug, Error)]
pub enum EvalError {
    #[error("line {line}: {message}")]
    Parse { line: usize, message: String },
    #[error("no cases in the file")]
    Empty,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum EvalCase {
    Query {
        query: String,
        #[serde(default)]
        lists: Option<ListKind>,
        #[serde(default)]
        expect: Vec<String>,
        #[serde(default)]
        category: String,
        #[serde(default)]
        country: Option<String>,
        #[serde(default)]
        source: Option<String>,
    },
    Pair {
        a: String,
        b: String,
        #[serde(rename = "match")]
        is_match: bool,
        #[serde(default)]
        category: String,
        #[serde(default)]
        source: Option<String>,
    },
}

pub fn parse_cases(text: &str) -> Result<Vec<EvalCase>, EvalError> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let case: EvalCase = serde_json::from_str(line).map_err(|e| EvalError::Parse {
            line: i + 1,
            message: e.to_string(),
        })?;
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(EvalError::Empty);
    }
    Ok(cases)
}

/// Confusion counts.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Counts {
    pub tp: u32,
    pub fp: u32,
    pub tn: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
}

impl Counts {
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    fn add(&mut self, other: &Counts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.tn += other.tn;
        self.fn_ += other.fn_;
    }

    fn record(&mut self, expected: bool, predicted: bool) {
        match (expected, predicted) {
            (true, true) => self.tp += 1,
            (true, false) => self.fn_ += 1,
            (false, true) => self.fp += 1,
            (false, false) => self.tn += 1,
        }
    }
}

fn ratio(a: u32, b: u32) -> f64 {
    if b == 0 {
        0.0
    } else {
        f64::from(a) / f64::from(b)
    }
}

/// Figures at one threshold.
#[derive(Debug, Clone, Serialize)]
pub struct ThresholdReport {
    pub threshold: f32,
    pub queries: Counts,
    pub pairs: Counts,
    pub all: Counts,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Mean entities returned per query at this threshold.
    pub mean_hits_per_query: f64,
}

/// The evaluation at the chosen threshold plus the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub cases: usize,
    pub threshold: ThresholdReport,
    /// Counts per category at the chosen threshold.
    pub categories: BTreeMap<String, Counts>,
    pub sweep: Vec<ThresholdReport>,
    /// Up to 20 misses at the chosen threshold, to look at.
    pub misses: Vec<String>,
}

/// The default sweep.
pub const SWEEP: &[f32] = &[
    60.0, 65.0, 70.0, 75.0, 80.0, 82.5, 85.0, 87.5, 90.0, 92.5, 95.0, 97.5, 100.0,
];

struct Scored<'a> {
    case: &'a EvalCase,
    /// For queries: (best score of an expected entity, every returned score); for pairs: the
    /// pair's score.
    expected_best: f32,
    scores: Vec<f32>,
}

/// Runs the cases at `threshold` and over `sweep`; `match_threshold` is the deployment's
/// (common names without corroboration stay below it).
pub fn evaluate(
    index: &ScreeningIndex,
    cases: &[EvalCase],
    threshold: f32,
    match_threshold: f32,
    sweep: &[f32],
) -> EvalReport {
    let floor = sweep.iter().copied().fold(threshold, f32::min);
    let scored: Vec<Scored<'_>> = cases
        .iter()
        .map(|case| match case {
            EvalCase::Query {
                query,
                lists,
                expect,
                country,
                ..
            } => {
                let hits = index.search(&ScreenQuery {
                    name: query,
                    kind: *lists,
                    tenant: None,
                    country: country.as_deref(),
                    birth_year: None,
                    threshold: floor,
                    match_threshold,
                    limit: 50,
                });
                let expected_best = hits
                    .iter()
                    .filter(|hit| expect.contains(&index.entity(hit.entity).entity.id))
                    .map(|hit| hit.score)
                    .fold(-1.0, f32::max);
                Scored {
                    case,
                    expected_best,
                    scores: hits.iter().map(|h| h.score).collect(),
                }
            }
            EvalCase::Pair { a, b, .. } => Scored {
                case,
                expected_best: index.score_pair(a, b),
                scores: Vec::new(),
            },
        })
        .collect();

    let at = |t: f32,
              categories: Option<&mut BTreeMap<String, Counts>>,
              misses: Option<&mut Vec<String>>| {
        let mut queries = Counts::default();
        let mut pairs = Counts::default();
        let mut hits_total = 0usize;
        let mut query_count = 0usize;
        let mut per_category: BTreeMap<String, Counts> = BTreeMap::new();
        let mut missed: Vec<String> = Vec::new();
        for s in &scored {
            let mut one = Counts::default();
            match s.case {
                EvalCase::Query {
                    expect,
                    category,
                    query,
                    ..
                } => {
                    query_count += 1;
                    let returned = s.scores.iter().filter(|x| **x >= t).count();
                    hits_total += returned;
                    let positive = !expect.is_empty();
                    let predicted = if positive {
                        s.expected_best >= t
                    } else {
                        returned > 0
                    };
                    one.record(positive, predicted);
                    queries.add(&one);
                    if positive != predicted {
                        missed.push(format!(
                            "{category}: {query:?} expected {expect:?}, best expected score {:.1}, {returned} returned",
                            s.expected_best.max(0.0)
                        ));
                    }
                    per_category.entry(category.clone()).or_default().add(&one);
                }
                EvalCase::Pair {
                    a,
                    b,
                    is_match,
                    category,
                    ..
                } => {
                    one.record(*is_match, s.expected_best >= t);
                    pairs.add(&one);
                    if *is_match != (s.expected_best >= t) {
                        missed.push(format!(
                            "{category}: pair {a:?} / {b:?} match={is_match}, score {:.1}",
                            s.expected_best
                        ));
                    }
                    per_category.entry(category.clone()).or_default().add(&one);
                }
            }
        }
        if let Some(categories) = categories {
            *categories = per_category;
        }
        if let Some(misses) = misses {
            *misses = missed;
        }
        let mut all = queries;
        all.add(&pairs);
        ThresholdReport {
            threshold: t,
            queries,
            pairs,
            all,
            precision: all.precision(),
            recall: all.recall(),
            f1: all.f1(),
            mean_hits_per_query: if query_count == 0 {
                0.0
            } else {
                hits_total as f64 / query_count as f64
            },
        }
    };

    let mut categories = BTreeMap::new();
    let mut misses = Vec::new();
    let chosen = at(threshold, Some(&mut categories), Some(&mut misses));
    misses.truncate(20);
    EvalReport {
        cases: cases.len(),
        threshold: chosen,
        categories,
        sweep: sweep.iter().map(|t| at(*t, None, None)).collect(),
        misses,
    }
}

impl EvalReport {
    /// The human-readable report `vigil screen eval` prints.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let t = &self.threshold;
        let _ = writeln!(
            out,
            "{} cases at threshold {:.1}: precision {:.3}  recall {:.3}  F1 {:.3}  (queries tp {} fp {} tn {} fn {}; pairs tp {} fp {} tn {} fn {}; {:.2} hits/query)",
            self.cases, t.threshold, t.precision, t.recall, t.f1,
            t.queries.tp, t.queries.fp, t.queries.tn, t.queries.fn_,
            t.pairs.tp, t.pairs.fp, t.pairs.tn, t.pairs.fn_, t.mean_hits_per_query
        );
        let _ = writeln!(out, "\nper category at {:.1}:", t.threshold);
        let _ = writeln!(
            out,
            "  {:<40} {:>6} {:>6} {:>6} {:>6} {:>9}",
            "category", "tp", "fp", "tn", "fn", "accuracy"
        );
        for (name, c) in &self.categories {
            let total = c.tp + c.fp + c.tn + c.fn_;
            let _ = writeln!(
                out,
                "  {:<40} {:>6} {:>6} {:>6} {:>6} {:>9.3}",
                name,
                c.tp,
                c.fp,
                c.tn,
                c.fn_,
                ratio(c.tp + c.tn, total)
            );
        }
        let _ = writeln!(out, "\nsweep:");
        let _ = writeln!(
            out,
            "  {:>9} {:>9} {:>9} {:>9} {:>10}",
            "threshold", "precision", "recall", "F1", "hits/query"
        );
        for s in &self.sweep {
            let _ = writeln!(
                out,
                "  {:>9.1} {:>9.3} {:>9.3} {:>9.3} {:>10.2}",
                s.threshold, s.precision, s.recall, s.f1, s.mean_hits_per_query
            );
        }
        if !self.misses.is_empty() {
            let _ = writeln!(out, "\nfirst misses:");
            for miss in &self.misses {
                let _ = writeln!(out, "  {miss}");
            }
        }
        out
    }
}

/// The `*.jsonl` case files of a directory, sorted.
pub fn case_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Fixture mode: every case must come out right at `threshold`. Returns one line per failure.
pub fn check_cases(
    index: &ScreeningIndex,
    cases: &[EvalCase],
    threshold: f32,
    match_threshold: f32,
) -> Vec<String> {
    let report = evaluate(index, cases, threshold, match_threshold, &[]);
    let t = &report.threshold;
    if t.all.fp + t.all.fn_ == 0 {
        return Vec::new();
    }
    let mut failures = Vec::new();
    for case in cases {
        let one = evaluate(
            index,
            std::slice::from_ref(case),
            threshold,
            match_threshold,
            &[],
        );
        failures.extend(one.misses);
    }
    failures
}

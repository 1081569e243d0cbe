//! Rules: loading a rule pack from `rules/`, compiling it once into sandboxed Rhai ASTs, evaluating
//! it against a [`RuleInput`], and combining the hits into a decision.
//!
//! A pack is a directory with `pack.toml` (name, version, decision thresholds, constants and named
//! sets) and one `*.rhai` file per rule. A rule file opens with `//!` lines holding its metadata as
//! TOML (`id`, `name`, `description`, `severity`, `score`, `mode`, optional `action` and
//! `priority`); the rest of the file is the condition, a Rhai expression that evaluates to a bool.
//! Errors carry the file and line. A compiled [`RuleSet`] is immutable: the reload manager builds a
//! new one, tests it against the fixtures, and swaps it in whole (see [`reload`]).

pub mod context;
pub mod fixtures;
pub mod native;
pub mod reload;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhai::{Dynamic, Engine, OptimizationLevel, Scope, AST};
use serde::Deserialize;
use thiserror::Error;

use crate::engine::accounts::{Detector, DetectorSettings, GraphFacts};
use crate::model::decision::{format_risk_score, RuleErrorReport, RuleMode};
use crate::model::{Action, Reason, RuleHit, RuleRef, Severity};

pub use context::{ListFacts, RuleInput, ScreeningFacts};

#[derive(Debug, Error)]
pub enum RuleError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: invalid metadata: {message}")]
    Metadata { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}")]
    Compile {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Pack { path: PathBuf, message: String },
    #[error("duplicate rule id {id} in {first} and {second}")]
    DuplicateId {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("fixtures failed: {0}")]
    Fixtures(String),
}

/// Sandbox limits for rule scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxLimits {
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_expr_depth: usize,
    pub max_string_size: usize,
    pub max_array_size: usize,
    pub max_map_size: usize,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            max_operations: 50_000,
            max_call_levels: 16,
            max_expr_depth: 64,
            max_string_size: 16 * 1024,
            max_array_size: 10_000,
            max_map_size: 1_000,
        }
    }
}

/// `action` in a rule's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionOverride {
    Approve,
    Review,
    Reject,
}

impl ActionOverride {
    pub fn action(self) -> Action {
        match self {
            ActionOverride::Approve => Action::Approved,
            ActionOverride::Review => Action::Review,
            ActionOverride::Reject => Action::Rejected,
        }
    }
}

/// The metadata block of a rule file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleMeta {
    pub id: String,
    pub name: String,
    pub description: String,
    pub severity: Severity,
    pub score: f64,
    #[serde(default = "default_mode")]
    pub mode: RuleMode,
    pub action: Option<ActionOverride>,
    #[serde(default)]
    pub priority: u32,
    #[serde(default)]
    pub tags: Vec<String>,
    /// A goAML report code (e.g. `CTR`): a hit marks the transaction reportable, recorded with
    /// the decision, and `POST /api/v1/reporting/reports` turns such transactions into a report.
    #[serde(default)]
    pub reportable: Option<String>,
    /// The account-graph detector the rule reads (`fan_in`, `cycle`, …): a hit carries that
    /// detector's evidence (accounts, payments, amounts, times) and opens an account-level case.
    #[serde(default)]
    pub detector: Option<Detector>,
}

fn default_mode() -> RuleMode {
    RuleMode::Active
}

/// `pack.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    pub pack: PackInfo,
    pub decision: Thresholds,
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub sets: BTreeMap<String, Vec<String>>,
    /// Windows and bounds of the account graph's detectors.
    #[serde(default)]
    pub detectors: DetectorSettings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackInfo {
    pub name: String,
    pub version: String,
}

/// Risk-score thresholds: at or above `reject` rejects, at or above `review` reviews.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    pub review: f64,
    pub reject: f64,
}

impl Thresholds {
    pub fn action_for(&self, score: f64) -> Action {
        if score >= self.reject {
            Action::Rejected
        } else if score >= self.review {
            Action::Review
        } else {
            Action::Approved
        }
    }
}

/// One compiled rule.
pub struct CompiledRule {
    pub meta: RuleMeta,
    pub file: PathBuf,
    ast: AST,
    /// The condition as native closures, when it lies in the translated subset.
    native: Option<native::NativeRule>,
    /// Why the rule runs in the interpreter (None when it runs natively).
    pub interpreted_because: Option<String>,
}

impl CompiledRule {
    /// Whether the rule runs as native code (see [`native`]).
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }
}

/// A compiled, immutable rule pack.
pub struct RuleSet {
    engine: Engine,
    pub rules: Vec<CompiledRule>,
    pub name: String,
    pub version: String,
    /// Pack version plus a digest of the sources, so any edit shows in decisions.
    pub fingerprint: String,
    pub thresholds: Thresholds,
    /// Windows and bounds of the account graph's detectors (`[detectors]`).
    pub detectors: DetectorSettings,
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field("fingerprint", &self.fingerprint)
            .field("rules", &self.rules.len())
            .finish()
    }
}

/// What evaluating a rule set against one input produced.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Evaluation {
    /// Indices into `RuleSet::rules` of the rules that triggered.
    pub hits: Vec<usize>,
    pub errors: Vec<(usize, String)>,
}

/// The combined verdict of a set of hits.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub score: f64,
    pub action: Action,
    pub rule_result: String,
    pub reason: Reason,
    pub rules: Vec<RuleHit>,
    pub rule_errors: Vec<RuleErrorReport>,
}

fn rule_engine(limits: SandboxLimits, sets: Arc<HashMap<String, HashSet<String>>>) -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(limits.max_operations);
    engine.set_max_call_levels(limits.max_call_levels);
    engine.set_max_expr_depths(limits.max_expr_depth, limits.max_expr_depth);
    engine.set_max_string_size(limits.max_string_size);
    engine.set_max_array_size(limits.max_array_size);
    engine.set_max_map_size(limits.max_map_size);
    engine.set_max_modules(0);
    engine.set_module_resolver(rhai::module_resolvers::DummyModuleResolver::new());
    engine.disable_symbol("eval");
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});
    engine.set_strict_variables(true);
    engine.set_optimization_level(OptimizationLevel::Full);
    context::register(&mut engine);
    engine.register_fn(
        "in_set",
        move |set: &str, value: &str| -> Result<bool, Box<rhai::EvalAltResult>> {
            match sets.get(set) {
                Some(members) => Ok(context::set_contains(members, value)),
                None => {
                    Err(format!("unknown set '{set}' (define it under [sets] in pack.toml)").into())
                }
            }
        },
    );
    engine
}

fn param_value(value: &toml::Value) -> Option<Dynamic> {
    match value {
        toml::Value::Integer(i) => Some(Dynamic::from(*i)),
        toml::Value::Float(f) => Some(Dynamic::from(*f)),
        toml::Value::Boolean(b) => Some(Dynamic::from(*b)),
        toml::Value::String(s) => Some(Dynamic::from(s.clone())),
        _ => None,
    }
}

/// Splits a rule file into its `//!` metadata block and the condition.
fn split_rule_source(source: &str) -> (String, String) {
    let mut meta = String::new();
    let mut body = String::new();
    let mut in_header = true;
    for line in source.lines() {
        if in_header {
            if let Some(rest) = line.trim_start().strip_prefix("//!") {
                meta.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                meta.push('\n');
                // Keep line numbers: the header line becomes an empty line of the body.
                body.push('\n');
                continue;
            }
            in_header = false;
        }
        body.push_str(line);
        body.push('\n');
    }
    (meta, body)
}

/// The manifest text with `overrides` applied (see [`RuleSet::load_with_params`]).
fn overridden(
    manifest_path: &Path,
    text: &str,
    overrides: &BTreeMap<String, toml::Value>,
) -> Result<String, RuleError> {
    let problem = |message: String| RuleError::Pack {
        path: manifest_path.to_path_buf(),
        message,
    };
    let mut table: toml::Table = toml::from_str(text).map_err(|e| problem(e.to_string()))?;
    for (name, value) in overrides {
        if let Some(setting) = name.strip_prefix("detectors.") {
            let detectors = table
                .entry("detectors")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let Some(detectors) = detectors.as_table_mut() {
                detectors.insert(setting.to_owned(), value.clone());
            }
            continue;
        }
        let slot = table
            .get_mut("params")
            .and_then(toml::Value::as_table_mut)
            .and_then(|params| params.get_mut(name))
            .ok_or_else(|| problem(format!("param {name} is not in the pack")))?;
        *slot = value.clone();
    }
    toml::to_string(&table).map_err(|e| problem(e.to_string()))
}

impl RuleSet {
    /// Loads and compiles the pack in `dir`.
    pub fn load(dir: &Path, limits: SandboxLimits) -> Result<RuleSet, RuleError> {
        RuleSet::load_with_params(dir, limits, &BTreeMap::new())
    }

    /// Loads the pack in `dir` with some of its `[params]` (or, as `detectors.NAME`, its
    /// `[detectors]` settings) replaced: a threshold sweep. Every overridden param must exist in
    /// the pack.
    pub fn load_with_params(
        dir: &Path,
        limits: SandboxLimits,
        overrides: &BTreeMap<String, toml::Value>,
    ) -> Result<RuleSet, RuleError> {
        let manifest_path = dir.join("pack.toml");
        let manifest_text =
            std::fs::read_to_string(&manifest_path).map_err(|source| RuleError::Read {
                path: manifest_path.clone(),
                source,
            })?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|source| RuleError::Read {
                path: dir.to_path_buf(),
                source,
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "rhai"))
            .collect();
        files.sort();
        let mut sources = Vec::with_capacity(files.len());
        for path in files {
            let source = std::fs::read_to_string(&path).map_err(|source| RuleError::Read {
                path: path.clone(),
                source,
            })?;
            sources.push((path, source));
        }
        let manifest_text = if overrides.is_empty() {
            manifest_text
        } else {
            overridden(&manifest_path, &manifest_text, overrides)?
        };
        RuleSet::compile(&manifest_path, &manifest_text, &sources, limits)
    }

    /// Adds to each hit of a rule that names a detector that detector's evidence.
    pub fn attach_evidence(
        &self,
        evaluation: &Evaluation,
        verdict: &mut Verdict,
        graph: &GraphFacts,
    ) {
        for (hit, &index) in verdict.rules.iter_mut().zip(&evaluation.hits) {
            if let Some(detector) = self.rules[index].meta.detector {
                hit.detector = Some(detector);
                hit.evidence = graph
                    .evidence_of(detector)
                    .and_then(|e| serde_json::to_value(e).ok());
            }
        }
    }

    /// Compiles a pack from its manifest text and rule sources (file name, text).
    pub fn compile(
        manifest_path: &Path,
        manifest_text: &str,
        sources: &[(PathBuf, String)],
        limits: SandboxLimits,
    ) -> Result<RuleSet, RuleError> {
        let manifest: PackManifest =
            toml::from_str(manifest_text).map_err(|e| RuleError::Pack {
                path: manifest_path.to_path_buf(),
                message: e.to_string(),
            })?;
        let thresholds = manifest.decision;
        if let Some(message) = manifest.detectors.problem() {
            return Err(RuleError::Pack {
                path: manifest_path.to_path_buf(),
                message,
            });
        }
        let valid_threshold = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
        if !valid_threshold(thresholds.review)
            || !valid_threshold(thresholds.reject)
            || thresholds.review > thresholds.reject
        {
            return Err(RuleError::Pack {
                path: manifest_path.to_path_buf(),
                message: "decision thresholds must lie in [0, 1] with review <= reject".into(),
            });
        }
        let sets: HashMap<String, HashSet<String>> = manifest
            .sets
            .iter()
            .map(|(name, members)| {
                let members = members.iter().map(|m| m.trim().to_uppercase()).collect();
                (name.clone(), members)
            })
            .collect();
        let sets = Arc::new(sets);
        let engine = rule_engine(limits, sets.clone());

        let mut scope = Scope::new();
        let mut constants = HashMap::new();
        for (name, value) in &manifest.params {
            let Some(value) = param_value(value) else {
                return Err(RuleError::Pack {
                    path: manifest_path.to_path_buf(),
                    message: format!("param {name} must be a number, bool or string"),
                });
            };
            constants.insert(name.to_uppercase(), value.clone());
            scope.push_constant_dynamic(name.to_uppercase(), value);
        }
        let native_context = native::Context {
            constants: &constants,
            sets: &sets,
            max_operations: limits.max_operations,
            max_string_size: limits.max_string_size,
        };
        for name in context::SCOPE_NAMES {
            scope.push_dynamic(name, Dynamic::UNIT);
        }

        let mut digest = xxhash_rust::xxh3::Xxh3::new();
        digest.update(manifest_text.as_bytes());
        let mut rules = Vec::with_capacity(sources.len());
        let mut seen: HashMap<String, PathBuf> = HashMap::new();
        for (path, source) in sources {
            digest.update(path.to_string_lossy().as_bytes());
            digest.update(source.as_bytes());
            let (meta_text, body) = split_rule_source(source);
            let meta: RuleMeta = toml::from_str(&meta_text).map_err(|e| RuleError::Metadata {
                path: path.clone(),
                message: e.to_string().trim().replace('\n', " "),
            })?;
            if !(meta.score.is_finite() && (0.0..=1.0).contains(&meta.score)) {
                return Err(RuleError::Metadata {
                    path: path.clone(),
                    message: "score must lie in [0, 1]".into(),
                });
            }
            if meta.action.is_some() && meta.priority == 0 {
                return Err(RuleError::Metadata {
                    path: path.clone(),
                    message: "a rule with an action override needs a priority of 1 or more".into(),
                });
            }
            if let Some(code) = &meta.reportable {
                if !crate::reporting::goaml::is_report_code(code) {
                    return Err(RuleError::Metadata {
                        path: path.clone(),
                        message: format!(
                            "reportable '{code}' is not a goAML report code (CTR, STR, SAR, …)"
                        ),
                    });
                }
            }
            if let Some(first) = seen.insert(meta.id.clone(), path.clone()) {
                return Err(RuleError::DuplicateId {
                    id: meta.id,
                    first,
                    second: path.clone(),
                });
            }
            let ast = engine
                .compile_with_scope(&scope, &body)
                .map_err(|e| RuleError::Compile {
                    path: path.clone(),
                    line: e.1.line().unwrap_or(0),
                    message: e.0.to_string(),
                })?;
            let (native, interpreted_because) = match native::translate(&ast, &native_context) {
                Ok(native) => (Some(native), None),
                Err(why) => (None, Some(why.to_string())),
            };
            rules.push(CompiledRule {
                meta,
                file: path.clone(),
                ast,
                native,
                interpreted_because,
            });
        }
        rules.sort_by(|a, b| a.meta.id.cmp(&b.meta.id));
        let fingerprint = format!(
            "{}@{}+{:08x}",
            manifest.pack.name,
            manifest.pack.version,
            digest.digest() as u32
        );
        Ok(RuleSet {
            engine,
            rules,
            name: manifest.pack.name,
            version: manifest.pack.version,
            fingerprint,
            thresholds,
            detectors: manifest.detectors,
        })
    }

    pub fn rule_index(&self, id: &str) -> Option<usize> {
        self.rules.iter().position(|r| r.meta.id == id)
    }

    /// Evaluates every rule against `input`, reusing `scope` (cleared here). Rules translated to
    /// native code run without Rhai; the others (and a native rule that meets an error, so the
    /// error reads exactly as Rhai words it) run in the interpreter. The views are scope
    /// constants, so no rule can change what the rules after it see; each rule runs in its own
    /// sandboxed evaluation, so an error is pinned to its rule and the others still count.
    pub fn evaluate(&self, input: &Arc<RuleInput>, scope: &mut Scope<'static>) -> Evaluation {
        self.evaluate_with(input, scope, true)
    }

    /// Evaluates every rule in the Rhai interpreter, native translations unused (the reference
    /// the native path is checked against).
    pub fn evaluate_interpreted(
        &self,
        input: &Arc<RuleInput>,
        scope: &mut Scope<'static>,
    ) -> Evaluation {
        self.evaluate_with(input, scope, false)
    }

    fn evaluate_with(
        &self,
        input: &Arc<RuleInput>,
        scope: &mut Scope<'static>,
        use_native: bool,
    ) -> Evaluation {
        let mut evaluation = Evaluation::default();
        let mut base = None;
        for (index, rule) in self.rules.iter().enumerate() {
            if let (true, Some(native)) = (use_native, &rule.native) {
                match native.evaluate(input) {
                    Ok(true) => {
                        evaluation.hits.push(index);
                        continue;
                    }
                    Ok(false) => continue,
                    Err(native::Fault) => {}
                }
            }
            let base = *base.get_or_insert_with(|| Self::push_views(input, scope));
            self.interpret(index, scope, base, &mut evaluation);
        }
        if base.is_some() {
            scope.clear();
        }
        evaluation
    }

    /// Compares an evaluation with the interpreter's for the same input and returns, per rule,
    /// how they differ (empty when they agree). The fixture runner records any difference as an
    /// error of the rule, so a pack whose native translation disagrees with Rhai never goes live.
    pub fn disagreements(
        &self,
        evaluation: &Evaluation,
        input: &Arc<RuleInput>,
        scope: &mut Scope<'static>,
    ) -> Vec<(usize, String)> {
        let reference = self.evaluate_interpreted(input, scope);
        if &reference == evaluation {
            return Vec::new();
        }
        let outcome = |e: &Evaluation, index: usize| -> String {
            if let Some((_, error)) = e.errors.iter().find(|(i, _)| *i == index) {
                format!("error {error:?}")
            } else if e.hits.contains(&index) {
                "hit".to_owned()
            } else {
                "no hit".to_owned()
            }
        };
        (0..self.rules.len())
            .filter_map(|index| {
                let (native, rhai) = (outcome(evaluation, index), outcome(&reference, index));
                (native != rhai).then(|| {
                    (
                        index,
                        format!(
                            "native evaluation disagrees with Rhai: native {native}, Rhai {rhai}"
                        ),
                    )
                })
            })
            .collect()
    }

    /// Puts the views in a cleared `scope`; returns the scope length to rewind to.
    fn push_views(input: &Arc<RuleInput>, scope: &mut Scope<'static>) -> usize {
        use context::*;
        scope.clear();
        scope.push_constant("tx", TxView(input.clone()));
        scope.push_constant("user", UserView(input.clone()));
        scope.push_constant("agg", AggView(input.clone()));
        scope.push_constant("limits", LimitsView(input.clone()));
        scope.push_constant("device", DeviceView(input.clone()));
        scope.push_constant("location", LocationView(input.clone()));
        scope.push_constant("counterparty", CounterpartyView(input.clone()));
        scope.push_constant("lists", ListsView(input.clone()));
        scope.push_constant("screening", ScreeningView(input.clone()));
        scope.push_constant("sender", SenderView(input.clone()));
        scope.push_constant("receiver", ReceiverView(input.clone()));
        scope.push_constant("graph", GraphView(input.clone()));
        scope.len()
    }

    fn interpret(
        &self,
        index: usize,
        scope: &mut Scope<'static>,
        base: usize,
        evaluation: &mut Evaluation,
    ) {
        let rule = &self.rules[index];
        scope.rewind(base);
        match self.engine.eval_ast_with_scope::<Dynamic>(scope, &rule.ast) {
            Ok(value) => match value.as_bool() {
                Ok(true) => evaluation.hits.push(index),
                Ok(false) => {}
                Err(type_name) => evaluation.errors.push((
                    index,
                    format!("condition returned {type_name}, expected true or false"),
                )),
            },
            Err(error) => evaluation.errors.push((index, error.to_string())),
        }
    }

    /// Combines hits into a score, an action and the decisive rule (see README "decision model").
    pub fn verdict(&self, evaluation: &Evaluation) -> Verdict {
        let mut not_approved = 1.0f64;
        let mut decisive_override: Option<(u32, Action, usize)> = None;
        let mut strongest: Option<usize> = None;
        let mut rules = Vec::with_capacity(evaluation.hits.len());
        for &index in &evaluation.hits {
            let meta = &self.rules[index].meta;
            rules.push(RuleHit {
                id: meta.id.clone(),
                name: meta.name.clone(),
                score: meta.score,
                severity: meta.severity,
                mode: meta.mode,
                action: meta.action.map(ActionOverride::action),
                reportable: meta.reportable.clone(),
                detector: None,
                evidence: None,
            });
            if meta.mode != RuleMode::Active {
                continue;
            }
            not_approved *= 1.0 - meta.score;
            if let Some(action) = meta.action {
                let candidate = (meta.priority, action.action(), index);
                let better = match decisive_override {
                    None => true,
                    Some((priority, current, _)) => {
                        (meta.priority, action.action()) > (priority, current)
                    }
                };
                if better {
                    decisive_override = Some(candidate);
                }
            }
            let stronger = match strongest {
                None => true,
                Some(best) => {
                    let best = &self.rules[best].meta;
                    (meta.score, meta.severity) > (best.score, best.severity)
                }
            };
            if stronger {
                strongest = Some(index);
            }
        }
        let score = (1.0 - not_approved).clamp(0.0, 1.0);
        // Round once so the action agrees with the score the client sees.
        let score = (score * 100.0).round() / 100.0;
        let (action, decisive) = match decisive_override {
            Some((_, action, index)) => (action, Some(index)),
            None => (self.thresholds.action_for(score), strongest),
        };
        let active: Vec<&RuleHit> = rules
            .iter()
            .filter(|r| r.mode == RuleMode::Active)
            .collect();
        let rule_result = match active.len() {
            0 => "no rule triggered".to_owned(),
            1 => format!("1 rule triggered: {}", active[0].name),
            n => format!(
                "{n} rules triggered: {}",
                active
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        let reason = match decisive {
            Some(index) => {
                let meta = &self.rules[index].meta;
                Reason {
                    code: meta.id.clone(),
                    message: meta.description.clone(),
                    severity: meta.severity,
                    rule: RuleRef {
                        id: meta.id.clone(),
                        name: meta.name.clone(),
                    },
                }
            }
            None => Reason {
                code: "none".to_owned(),
                message: "no rule triggered".to_owned(),
                severity: Severity::Low,
                rule: RuleRef {
                    id: String::new(),
                    name: String::new(),
                },
            },
        };
        let rule_errors = evaluation
            .errors
            .iter()
            .map(|(index, error)| RuleErrorReport {
                id: self.rules[*index].meta.id.clone(),
                error: error.clone(),
            })
            .collect();
        Verdict {
            score,
            action,
            rule_result,
            reason,
            rules,
            rule_errors,
        }
    }
}

impl Verdict {
    pub fn risk_score(&self) -> String {
        format_risk_score(self.score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::state::Aggregates;
    use crate::model::{TransactionPayload, ValidationClock};

    const MANIFEST: &str = r#"
[pack]
name = "test"
version = "1"
[decision]
review = 0.5
reject = 0.8
[params]
big = 1000.0
[sets]
risky = ["kp", "IR"]
"#;

    fn rule(id: &str, extra_meta: &str, condition: &str) -> (PathBuf, String) {
        (
            PathBuf::from(format!("{id}.rhai")),
            format!(
                "//! id = \"{id}\"\n//! name = \"{id} name\"\n//! description = \"{id} fired\"\n//! severity = \"high\"\n{extra_meta}\n{condition}\n"
            ),
        )
    }

    fn compile(rules: &[(PathBuf, String)]) -> Result<RuleSet, RuleError> {
        RuleSet::compile(
            Path::new("pack.toml"),
            MANIFEST,
            rules,
            SandboxLimits::default(),
        )
    }

    fn input(amount: f64, country: &str) -> Arc<RuleInput> {
        let payload: TransactionPayload = serde_json::from_value(serde_json::json!({
            "transactionData": {"reference": "r1", "amount": amount},
            "anonymizedUserData": {"uniqueId": "u1", "country": country},
        }))
        .expect("payload");
        let tx = payload
            .validate(ValidationClock {
                now_ms: 1_700_000_000_000,
                max_future_skew_ms: 0,
            })
            .expect("valid");
        Arc::new(RuleInput {
            tx,
            agg: Aggregates::default(),
            recent: Vec::new(),
            device_is_new: false,
            known_devices: 0,
            lists: ListFacts::default(),
            screening: ScreeningFacts::default(),
            graph: Box::default(),
        })
    }

    #[test]
    fn a_sweep_replaces_params_and_detector_settings_and_refuses_unknown_names() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(
            dir.path().join("pack.toml"),
            "[pack]\nname = \"p\"\nversion = \"1\"\n[decision]\nreview = 0.5\nreject = 0.9\n\
             [params]\nbig = 100.0\n",
        )
        .expect("pack");
        std::fs::write(
            dir.path().join("A.rhai"),
            "//! id = \"A\"\n//! name = \"A\"\n//! description = \"A\"\n\
             //! severity = \"high\"\n//! score = 0.6\ntx.amount > BIG\n",
        )
        .expect("rule");
        let limits = SandboxLimits::default();
        let mut scope = Scope::new();
        let hits = |set: &RuleSet, scope: &mut Scope<'static>| {
            set.evaluate(&input(150.0, "ng"), scope).hits.len()
        };
        let plain = RuleSet::load(dir.path(), limits).expect("loads");
        assert_eq!(hits(&plain, &mut scope), 1);
        assert_eq!(plain.detectors, DetectorSettings::default());

        let mut overrides = BTreeMap::new();
        overrides.insert("big".to_owned(), toml::Value::Float(200.0));
        overrides.insert("detectors.window_days".to_owned(), toml::Value::Integer(14));
        let swept = RuleSet::load_with_params(dir.path(), limits, &overrides).expect("loads");
        assert_eq!(hits(&swept, &mut scope), 0, "BIG is 200 now");
        assert_eq!(swept.detectors.window_days, 14);

        let unknown = BTreeMap::from([("huge".to_owned(), toml::Value::Float(1.0))]);
        let error = RuleSet::load_with_params(dir.path(), limits, &unknown).expect_err("refused");
        assert!(
            error.to_string().contains("param huge is not in the pack"),
            "{error}"
        );
        let invalid =
            BTreeMap::from([("detectors.window_days".to_owned(), toml::Value::Integer(0))]);
        let error = RuleSet::load_with_params(dir.path(), limits, &invalid).expect_err("refused");
        assert!(error.to_string().contains("window_days"), "{error}");
    }

    #[test]
    fn rules_see_params_sets_and_properties() {
        let set = compile(&[
            rule("A", "//! score = 0.6", "tx.amount > BIG"),
            rule("B", "//! score = 0.3", "in_set(\"risky\", user.country)"),
        ])
        .expect("compiles");
        let mut scope = Scope::new();
        let evaluation = set.evaluate(&input(1500.0, "ir"), &mut scope);
        assert_eq!(evaluation.hits, vec![0, 1]);
        assert!(evaluation.errors.is_empty());
        let verdict = set.verdict(&evaluation);
        // 1 - (0.4 * 0.7) = 0.72
        assert_eq!(verdict.risk_score(), "0.72");
        assert_eq!(verdict.action, Action::Review);
        assert_eq!(verdict.reason.rule.id, "A");
        assert_eq!(verdict.rule_result, "2 rules triggered: A name; B name");
    }

    #[test]
    fn higher_priority_overrides_win_and_allow_lists_can_approve() {
        let set = compile(&[
            rule("A", "//! score = 0.9", "true"),
            rule(
                "ALLOW",
                "//! score = 0.0\n//! action = \"approve\"\n//! priority = 10",
                "true",
            ),
            rule(
                "SANCTION",
                "//! score = 1.0\n//! action = \"reject\"\n//! priority = 100",
                "tx.amount > 5000.0",
            ),
        ])
        .expect("compiles");
        let mut scope = Scope::new();
        let verdict = set.verdict(&set.evaluate(&input(10.0, "ng"), &mut scope));
        assert_eq!(verdict.action, Action::Approved);
        assert_eq!(verdict.reason.rule.id, "ALLOW");
        let verdict = set.verdict(&set.evaluate(&input(10_000.0, "ng"), &mut scope));
        assert_eq!(verdict.action, Action::Rejected);
        assert_eq!(verdict.reason.rule.id, "SANCTION");
    }

    #[test]
    fn shadow_rules_are_recorded_but_do_not_decide() {
        let set = compile(&[rule("S", "//! score = 1.0\n//! mode = \"shadow\"", "true")])
            .expect("compiles");
        let mut scope = Scope::new();
        let verdict = set.verdict(&set.evaluate(&input(10.0, "ng"), &mut scope));
        assert_eq!(verdict.action, Action::Approved);
        assert_eq!(verdict.risk_score(), "0.00");
        assert_eq!(verdict.rules.len(), 1);
        assert_eq!(verdict.rules[0].mode, RuleMode::Shadow);
        assert_eq!(verdict.rule_result, "no rule triggered");
    }

    #[test]
    fn compile_errors_name_file_and_line() {
        let error = compile(&[rule("BAD", "//! score = 0.5", "\n\ntx.amount >")])
            .expect_err("must not compile");
        let text = error.to_string();
        assert!(text.starts_with("BAD.rhai:"), "{text}");
        assert!(
            matches!(error, RuleError::Compile { line, .. } if line >= 7),
            "{text}"
        );
    }

    #[test]
    fn undefined_variables_are_compile_errors() {
        let error = compile(&[rule("TYPO", "//! score = 0.5", "txn.amount > 1.0")])
            .expect_err("strict variables");
        assert!(matches!(error, RuleError::Compile { .. }), "{error}");
    }

    #[test]
    fn runaway_scripts_hit_the_sandbox_and_only_fail_their_rule() {
        let set = compile(&[
            rule(
                "LOOP",
                "//! score = 0.5",
                "let x = 0; loop { x += 1; } x > 0",
            ),
            rule("OK", "//! score = 0.5", "tx.amount > 1.0"),
        ])
        .expect("compiles");
        let mut scope = Scope::new();
        let evaluation = set.evaluate(&input(10.0, "ng"), &mut scope);
        assert_eq!(evaluation.hits, vec![1]);
        assert_eq!(evaluation.errors.len(), 1);
        assert_eq!(evaluation.errors[0].0, 0);
    }

    #[test]
    fn rules_cannot_change_what_later_rules_see() {
        let set = compile(&[
            rule("A", "//! score = 0.1", "tx = 5; true"),
            rule("B", "//! score = 0.1", "tx.amount > 1.0"),
        ])
        .expect("compiles");
        let mut scope = Scope::new();
        let evaluation = set.evaluate(&input(10.0, "ng"), &mut scope);
        assert_eq!(evaluation.hits, vec![1]);
        assert_eq!(evaluation.errors.len(), 1);
        assert_eq!(evaluation.errors[0].0, 0);
    }

    #[test]
    fn non_boolean_conditions_are_rule_errors() {
        let set = compile(&[rule("NUM", "//! score = 0.5", "tx.amount")]).expect("compiles");
        let mut scope = Scope::new();
        let evaluation = set.evaluate(&input(10.0, "ng"), &mut scope);
        assert!(evaluation.hits.is_empty());
        assert!(evaluation.errors[0].1.contains("expected true or false"));
    }

    #[test]
    fn bad_metadata_and_duplicates_are_refused() {
        assert!(matches!(
            compile(&[rule("X", "//! score = 2.0", "true")]),
            Err(RuleError::Metadata { .. })
        ));
        assert!(matches!(
            compile(&[
                rule("X", "//! score = 0.1", "true"),
                rule("X", "//! score = 0.1", "true")
            ]),
            Err(RuleError::DuplicateId { .. })
        ));
        assert!(matches!(
            compile(&[rule(
                "X",
                "//! score = 0.1\n//! action = \"reject\"",
                "true"
            )]),
            Err(RuleError::Metadata { .. })
        ));
    }
}

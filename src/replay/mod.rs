//! `vigil replay`: runs a file of §2.1 payloads (JSON lines, optionally gzipped) through the same
//! engine `serve` uses — router, shards, rules, and name screening against the configured lists
//! (as `serve` loads them) — without storing anything, and reports per-rule hits, the decision mix
//! and throughput. Given labels (CSV with a `reference` column and a boolean label column, e.g.
//! AMLSim's `labels.csv.gz`), it also reports precision and recall per rule and for the decision
//! (anything not approved counts as flagged). Given AMLSim's alert files it scores alerts
//! ([`alerts`]): recall per typology, decoys apart, the review load, each rule's contribution.
//! `--out` writes every decision as a JSON line (reference, accounts, screened names, action,
//! score, the rules that hit and the screening matches).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde::Serialize;
use thiserror::Error;

pub mod alerts;

use crate::engine::router::EngineOptions;
use crate::engine::rules::{RuleError, RuleSet, SandboxLimits};
use crate::engine::state::StateLimits;
use crate::engine::{DecisionSink, Engine, EvaluateJob, Intake, Outcome, ShardOutput, Snapshot};
use crate::metrics::Metrics;
use crate::model::{parse_json, Action, Direction, TransactionPayload, ValidationClock};
use crate::screening::config::ScreeningConfig;
use crate::screening::manager::ListsManager;
use crate::screening::{NoScreening, Screener};
use alerts::{AlertFiles, AlertReport, AlertScore, Alerts, Flag};

#[derive(Debug, Error)]
pub enum ReplayError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Rules(#[from] RuleError),
    #[error("labels file {path}: {problem}")]
    Labels { path: PathBuf, problem: String },
    #[error("cannot start shards: {0}")]
    Threads(std::io::Error),
    #[error("the engine stopped during replay")]
    Engine,
    #[error("screening lists: {0}")]
    Screening(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub file: PathBuf,
    pub labels: Option<PathBuf>,
    pub label_column: String,
    pub rules_dir: PathBuf,
    pub sandbox: SandboxLimits,
    pub shards: usize,
    pub limit: Option<usize>,
    /// Screen names as serving does, against these lists (`None`: no screening).
    pub screening: Option<ScreeningSetup>,
    /// Write every decision here as JSON lines.
    pub out: Option<PathBuf>,
    /// Score alerts (AMLSim's alert files).
    pub alerts: Option<AlertFiles>,
    /// Pack params replaced for this run (`--set`, a sweep).
    pub params: BTreeMap<String, toml::Value>,
}

/// The lists replay screens against: the configuration's, loaded as `serve` loads them.
#[derive(Debug, Clone)]
pub struct ScreeningSetup {
    pub config: ScreeningConfig,
    pub data_dir: PathBuf,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RuleStats {
    pub hits: u64,
    pub true_positives: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayReport {
    pub events: u64,
    pub invalid: u64,
    pub duplicates: u64,
    pub seconds: f64,
    pub events_per_second: f64,
    pub actions: BTreeMap<String, u64>,
    pub rules: BTreeMap<String, RuleStats>,
    pub labelled_positive: Option<u64>,
    pub flagged: RuleStats,
    pub invalid_samples: Vec<String>,
    /// What screening ran: the entities of the lists loaded, or `off`.
    pub screening: String,
    /// Alert-level scoring, when alert files were given.
    pub alerts: Option<AlertReport>,
}

/// What the collector needs from each decision.
struct Observed {
    /// The job's place in the input (decisions come back from the shards in any order).
    seq: u64,
    reference: String,
    action: Option<Action>,
    rules: Vec<String>,
    event_time_ms: i64,
    account: String,
    counterparty_account: Option<String>,
    /// What the decision brings to cases: its findings, else its transaction case.
    cases: Vec<crate::cases::auto::CaseKey>,
    /// The JSON line for `--out`, when asked for.
    line: Option<String>,
}

struct ChannelSink {
    sender: mpsc::SyncSender<Observed>,
    write_out: bool,
}

/// The customer's own account (the sender of a debit, the receiver of a credit), else the
/// customer id.
fn own_account(tx: &crate::model::Transaction) -> String {
    let data = tx.data();
    let own = match tx.direction {
        Direction::Debit => data.sender_account.as_deref(),
        Direction::Credit => data.receiver_account.as_deref(),
    };
    own.filter(|a| !a.is_empty())
        .unwrap_or(tx.user_id.as_str())
        .to_owned()
}

impl DecisionSink for ChannelSink {
    fn emit(&self, output: ShardOutput) {
        let tx = &output.tx;
        let case = own_account(tx);
        let counterparty = tx.counterparty_account().map(str::to_owned);
        let seq = match output.intake {
            Intake::Replay(seq) => seq,
            _ => 0,
        };
        let observed = match output.outcome {
            Outcome::Decided(decision) => {
                let line = self.write_out.then(|| {
                    let names = tx.payload.screening_data.as_ref();
                    serde_json::json!({
                        "reference": tx.reference,
                        "transactionDate": decision.transaction_date,
                        "account": case,
                        "counterpartyAccount": counterparty,
                        "senderName": names.and_then(|n| n.sender_name.as_deref()),
                        "receiverName": names.and_then(|n| n.receiver_name.as_deref()),
                        "action": decision.action().as_str(),
                        "riskScore": decision.risk_score,
                        "rules": decision.rules,
                        "screening": decision.screening,
                        "screeningMatches": decision.screening_matches,
                    })
                    .to_string()
                });
                let cases = if decision.action() == Action::Approved {
                    Vec::new()
                } else {
                    crate::cases::auto::case_keys(&case, &decision)
                };
                Observed {
                    seq,
                    reference: tx.reference.clone(),
                    action: Some(decision.action()),
                    rules: decision.rules.iter().map(|r| r.id.clone()).collect(),
                    event_time_ms: tx.event_time_ms,
                    account: case,
                    counterparty_account: counterparty,
                    cases,
                    line,
                }
            }
            Outcome::Duplicate { .. } => Observed {
                seq,
                reference: tx.reference.clone(),
                action: None,
                rules: Vec::new(),
                event_time_ms: tx.event_time_ms,
                account: case,
                counterparty_account: counterparty,
                cases: Vec::new(),
                line: None,
            },
        };
        let _ = self.sender.send(observed);
    }
}

/// A time as the alert files and payloads write it.
fn parse_time_ms(text: &str) -> Option<i64> {
    crate::model::transaction::parse_datetime_ms(text)
}

fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, ReplayError> {
    let file = std::fs::File::open(path).map_err(|source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let reader: Box<dyn Read + Send> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, reader)))
}

fn truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "t" | "y"
    )
}

/// A CSV file (gzip allowed) with a header row, read by the `csv` crate: the header's names
/// and the rows. The labels and the alert files are read through it.
struct CsvTable {
    path: PathBuf,
    names: Vec<String>,
    rows: Vec<csv::StringRecord>,
}

impl CsvTable {
    fn read(path: &Path) -> Result<CsvTable, ReplayError> {
        let problem = |problem: String| ReplayError::Labels {
            path: path.to_path_buf(),
            problem,
        };
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(open(path)?);
        let names: Vec<String> = reader
            .headers()
            .map_err(|e| problem(e.to_string()))?
            .iter()
            .map(str::to_owned)
            .collect();
        if names.iter().all(String::is_empty) {
            return Err(problem("empty file".into()));
        }
        let rows = reader
            .records()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| problem(e.to_string()))?;
        Ok(CsvTable {
            path: path.to_path_buf(),
            names,
            rows,
        })
    }

    /// The index of column `name` (any case).
    fn column(&self, name: &str) -> Result<usize, ReplayError> {
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| ReplayError::Labels {
                path: self.path.clone(),
                problem: format!("no {name} column"),
            })
    }
}

/// Reads `reference → label` from a CSV with a header row.
pub fn load_labels(path: &Path, column: &str) -> Result<HashMap<String, bool>, ReplayError> {
    let table = CsvTable::read(path)?;
    let reference = table.column("reference")?;
    let label = table.column(column)?;
    Ok(table
        .rows
        .iter()
        .filter_map(|row| Some((row.get(reference)?.to_owned(), truthy(row.get(label)?))))
        .collect())
}

fn ratio(numerator: u64, denominator: u64) -> Option<f64> {
    (denominator > 0).then(|| numerator as f64 / denominator as f64)
}

/// Why a `--set` or `--sweep` argument does not parse.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct ParamError(String);

fn param_value(text: &str) -> Result<toml::Value, ParamError> {
    let table: toml::Table = toml::from_str(&format!("v = {}", text.trim())).map_err(|_| {
        ParamError(format!(
            "{text:?} is not a TOML value (write floats as 2.0)"
        ))
    })?;
    table
        .get("v")
        .cloned()
        .ok_or_else(|| ParamError(format!("{text:?} is not a value")))
}

/// `NAME=VALUE` (a TOML value: `5`, `2.5`, `true`, `"text"`).
pub fn parse_assignment(text: &str) -> Result<(String, toml::Value), ParamError> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| ParamError("expected NAME=VALUE".into()))?;
    Ok((name.trim().to_owned(), param_value(value)?))
}

/// `NAME=V1,V2,...`.
pub fn parse_sweep(text: &str) -> Result<(String, Vec<toml::Value>), ParamError> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| ParamError("expected NAME=V1,V2,...".into()))?;
    let values = values
        .split(',')
        .map(param_value)
        .collect::<Result<Vec<_>, _>>()?;
    if values.is_empty() {
        return Err(ParamError("no values to sweep".into()));
    }
    Ok((name.trim().to_owned(), values))
}

/// One run of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRun {
    pub param: String,
    pub value: String,
    pub report: ReplayReport,
}

/// Replays once per value of one pack param (the rest of the options as given).
pub fn sweep(
    options: &ReplayOptions,
    name: &str,
    values: &[toml::Value],
) -> Result<Vec<SweepRun>, ReplayError> {
    let mut runs = Vec::with_capacity(values.len());
    for value in values {
        let mut run_options = options.clone();
        run_options.out = None;
        run_options.params.insert(name.to_owned(), value.clone());
        runs.push(SweepRun {
            param: name.to_owned(),
            value: value.to_string(),
            report: run(&run_options)?,
        });
    }
    Ok(runs)
}

/// The sweep as a table: per value, the review load and each typology's alert recall.
pub fn render_sweep(runs: &[SweepRun]) -> String {
    let mut typologies: Vec<String> = runs
        .iter()
        .filter_map(|r| r.report.alerts.as_ref())
        .flat_map(|a| {
            a.typologies
                .iter()
                .filter(|(_, s)| s.alerts > 0)
                .map(|(t, _)| t.clone())
        })
        .collect();
    typologies.sort();
    typologies.dedup();
    let mut out = format!(
        "{:<28} {:>8} {:>8} {:>7}",
        runs.first().map_or("param", |r| r.param.as_str()),
        "tx %",
        "acct %",
        "cases"
    );
    for typology in &typologies {
        out.push_str(&format!(
            " {:>9}",
            typology.chars().take(9).collect::<String>()
        ));
    }
    out.push('\n');
    for run in runs {
        let Some(alerts) = &run.report.alerts else {
            continue;
        };
        let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.2}", v * 100.0));
        out.push_str(&format!(
            "{:<28} {:>8} {:>8} {:>7}",
            run.value,
            pct(alerts.transactions_flagged_share),
            pct(alerts.accounts_flagged_share),
            alerts.cases
        ));
        for typology in &typologies {
            let recall = alerts.typologies.get(typology).and_then(|s| s.recall);
            out.push_str(&format!(" {:>9}", pct(recall)));
        }
        out.push('\n');
    }
    out
}

/// Runs the replay and returns its report.
pub fn run(options: &ReplayOptions) -> Result<ReplayReport, ReplayError> {
    let labels = match &options.labels {
        Some(path) => Some(load_labels(path, &options.label_column)?),
        None => None,
    };
    let alerts = match &options.alerts {
        Some(files) => Some(Alerts::load(files)?),
        None => None,
    };
    let rules = Arc::new(RuleSet::load_with_params(
        &options.rules_dir,
        options.sandbox,
        &options.params,
    )?);
    let metrics = Metrics::new();
    // Screening as serving loads it: every configured list, or refuse to run (a replay that
    // silently skipped a list would not be what serving does).
    let (screener, screening): (Arc<dyn Screener>, String) = match &options.screening {
        Some(setup) if setup.config.enabled => {
            let manager = ListsManager::load_all(setup.config.clone(), &setup.data_dir)
                .map_err(|e| ReplayError::Screening(e.to_string()))?;
            let status = manager.status();
            (
                manager.current(),
                format!(
                    "{} lists, {} entities, {} names",
                    status.lists.len(),
                    status.entities,
                    status.names
                ),
            )
        }
        _ => (Arc::new(NoScreening), "off".to_owned()),
    };
    let out = match &options.out {
        Some(path) => Some((
            path.clone(),
            std::fs::File::create(path).map_err(|source| ReplayError::Write {
                path: path.clone(),
                source,
            })?,
        )),
        None => None,
    };
    let snapshot = Snapshot {
        rule_counters: None,
        lists: Default::default(),
        screener,
        rules,
    };
    let snapshot = Arc::new(ArcSwap::from_pointee(snapshot));
    let (sender, receiver) = mpsc::sync_channel::<Observed>(65_536);
    // Jobs go to the engine in small batches, in file order (the account stage splits them per
    // shard).
    const BATCH: usize = 256;
    const QUEUED_BATCHES: usize = 16;
    let engine = Engine::start(
        EngineOptions {
            shards: options.shards.max(1),
            // In messages, and each message is a batch of `BATCH` jobs: a few batches in flight
            // keep the shards busy. A deep queue let the reader run the whole file ahead of the
            // engine, holding every parsed transaction at once (≈ 300 MB on the dev set, and
            // page faults on fresh memory were a tenth of the replay's CPU).
            queue_capacity: QUEUED_BATCHES,
            limits: StateLimits::default(),
        },
        snapshot,
        Arc::new(ChannelSink {
            sender,
            write_out: out.is_some(),
        }),
        &metrics,
    )
    .map_err(ReplayError::Threads)?;

    let collector = std::thread::spawn(move || collect(receiver, labels, alerts, out));

    let started = Instant::now();
    let mut reader = open(&options.file)?;
    let mut line = Vec::with_capacity(4096);
    let mut scratch = Vec::with_capacity(4096);
    let mut invalid = 0u64;
    let mut invalid_samples = Vec::new();
    let mut submitted = 0usize;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let mut batch: Vec<EvaluateJob> = Vec::with_capacity(BATCH);
    loop {
        if options.limit.is_some_and(|limit| submitted >= limit) {
            break;
        }
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| ReplayError::Read {
                path: options.file.clone(),
                source,
            })?;
        if read == 0 {
            break;
        }
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let clock = ValidationClock {
            now_ms,
            max_future_skew_ms: 300_000,
        };
        let parsed = parse_json::<TransactionPayload>(trimmed, &mut scratch)
            .map_err(|e| format!("{e:?}"))
            .and_then(|p| p.validate(clock).map_err(|e| format!("{e:?}")));
        match parsed {
            Ok(tx) => {
                batch.push(EvaluateJob {
                    tenant: 1,
                    tx: Box::new(tx),
                    raw: bytes::Bytes::new(),
                    intake: Intake::Replay(submitted as u64),
                    reply: None,
                    graph: None,
                });
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    engine
                        .submit_batch_blocking(full)
                        .map_err(|_| ReplayError::Engine)?;
                }
                submitted += 1;
            }
            Err(problem) => {
                invalid += 1;
                if invalid_samples.len() < 5 {
                    invalid_samples.push(problem);
                }
            }
        }
    }
    if !batch.is_empty() {
        engine
            .submit_batch_blocking(batch)
            .map_err(|_| ReplayError::Engine)?;
    }
    engine.barrier_blocking().map_err(|_| ReplayError::Engine)?;
    engine.shutdown();
    let mut report = collector.join().map_err(|_| ReplayError::Engine)??;
    report.screening = screening;
    let elapsed = started.elapsed().max(Duration::from_nanos(1));
    report.invalid = invalid;
    report.invalid_samples = invalid_samples;
    report.seconds = elapsed.as_secs_f64();
    report.events_per_second = report.events as f64 / report.seconds;
    Ok(report)
}

fn collect(
    receiver: mpsc::Receiver<Observed>,
    labels: Option<HashMap<String, bool>>,
    alerts: Option<Alerts>,
    out: Option<(PathBuf, std::fs::File)>,
) -> Result<ReplayReport, ReplayError> {
    use std::io::Write;
    let mut report = ReplayReport::default();
    let mut true_positives: HashMap<String, u64> = HashMap::new();
    let mut flagged_true = 0u64;
    let mut scoring = alerts.as_ref().map(AlertScore::new);
    let (out_path, mut writer) = match out {
        Some((path, file)) => (Some(path), Some(std::io::BufWriter::new(file))),
        None => (None, None),
    };
    let write_error = |source| ReplayError::Write {
        path: out_path.clone().unwrap_or_default(),
        source,
    };
    // Decisions are scored in input order (cases join in the order findings arrive), whatever
    // order the shards finish them in.
    let mut next = 0u64;
    let mut waiting: BTreeMap<u64, Observed> = BTreeMap::new();
    // Polled rather than blocking: with the collector parked on the channel, every decision a
    // shard sends was a futex wake-up (4 % of the replay's CPU in `perf`).
    let polled = std::iter::from_fn(|| loop {
        match receiver.try_recv() {
            Ok(observed) => return Some(observed),
            Err(mpsc::TryRecvError::Empty) => std::thread::sleep(Duration::from_micros(200)),
            Err(mpsc::TryRecvError::Disconnected) => return None,
        }
    });
    let in_order = polled
        .map(Some)
        .chain(std::iter::once(None))
        .flat_map(|observed| {
            let Some(observed) = observed else {
                // The end: whatever still waits (a gap would be a job without a decision).
                return std::mem::take(&mut waiting).into_values().collect();
            };
            waiting.insert(observed.seq, observed);
            let mut ready = Vec::new();
            while let Some(observed) = waiting.remove(&next) {
                ready.push(observed);
                next += 1;
            }
            ready
        });
    for observed in in_order {
        let Some(action) = observed.action else {
            report.duplicates += 1;
            continue;
        };
        if let (Some(writer), Some(line)) = (writer.as_mut(), &observed.line) {
            writer.write_all(line.as_bytes()).map_err(write_error)?;
            writer.write_all(b"\n").map_err(write_error)?;
        }
        report.events += 1;
        *report
            .actions
            .entry(action.as_str().to_owned())
            .or_default() += 1;
        let positive = labels
            .as_ref()
            .and_then(|l| l.get(&observed.reference).copied())
            .unwrap_or(false);
        if let Some(scoring) = scoring.as_mut() {
            scoring.observe(&Flag {
                reference: &observed.reference,
                event_time_ms: observed.event_time_ms,
                account: &observed.account,
                cases: &observed.cases,
                counterparty_account: observed.counterparty_account.as_deref(),
                flagged: action != Action::Approved,
                rules: &observed.rules,
            });
        }
        for rule in observed.rules {
            if positive {
                *true_positives.entry(rule.clone()).or_default() += 1;
            }
            report.rules.entry(rule).or_default().hits += 1;
        }
        if action != Action::Approved {
            report.flagged.hits += 1;
            if positive {
                flagged_true += 1;
            }
        }
    }
    if let Some(mut writer) = writer {
        writer.flush().map_err(write_error)?;
    }
    if let Some(labels) = labels {
        let positives = labels.values().filter(|v| **v).count() as u64;
        report.labelled_positive = Some(positives);
        for (rule, stats) in report.rules.iter_mut() {
            stats.true_positives = true_positives.get(rule).copied().unwrap_or(0);
            stats.precision = ratio(stats.true_positives, stats.hits);
            stats.recall = ratio(stats.true_positives, positives);
        }
        report.flagged.true_positives = flagged_true;
        report.flagged.precision = ratio(flagged_true, report.flagged.hits);
        report.flagged.recall = ratio(flagged_true, positives);
    }
    report.alerts = scoring.map(AlertScore::report);
    Ok(report)
}

impl ReplayReport {
    /// The human-readable report `vigil replay` prints.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let pct = |v: Option<f64>| {
            v.map(|v| format!("{:6.2}%", v * 100.0))
                .unwrap_or_else(|| "      -".into())
        };
        out.push_str(&format!(
            "events {}  invalid {}  duplicates {}  elapsed {:.2}s  {:.0} events/s\n",
            self.events, self.invalid, self.duplicates, self.seconds, self.events_per_second
        ));
        out.push_str(&format!("screening: {}\n", self.screening));
        out.push_str("decisions:");
        for (action, count) in &self.actions {
            let share = *count as f64 * 100.0 / self.events.max(1) as f64;
            out.push_str(&format!("  {action} {count} ({share:.2}%)"));
        }
        out.push('\n');
        if let Some(positives) = self.labelled_positive {
            out.push_str(&format!("labelled positives: {positives}\n"));
        }
        out.push_str(&format!(
            "{:<10} {:>10} {:>10} {:>9} {:>9}\n",
            "rule", "hits", "true+", "precision", "recall"
        ));
        for (rule, stats) in &self.rules {
            out.push_str(&format!(
                "{:<10} {:>10} {:>10} {:>9} {:>9}\n",
                rule,
                stats.hits,
                stats.true_positives,
                pct(stats.precision),
                pct(stats.recall)
            ));
        }
        out.push_str(&format!(
            "{:<10} {:>10} {:>10} {:>9} {:>9}\n",
            "FLAGGED",
            self.flagged.hits,
            self.flagged.true_positives,
            pct(self.flagged.precision),
            pct(self.flagged.recall)
        ));
        if let Some(alerts) = &self.alerts {
            out.push_str(&alerts.render());
        }
        for sample in &self.invalid_samples {
            out.push_str(&format!("invalid: {sample}\n"));
        }
        out
    }
}

//! The `vigil` binary: parses the command line, loads configuration and calls into the library.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use vigil::config::{Config, LogFormat, Settings};

/// mimalloc instead of glibc's allocator: buffers are allocated on one thread and freed on
/// another (HTTP worker, shard, store writer). Replay ran about 15 % faster with it, at about
/// 14 % more resident memory (the README's performance section has the runs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "vigil",
    version,
    about = "Transaction monitoring and AML compliance engine"
)]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// TOML config file (every setting can also come from VIGIL_* environment variables).
    #[arg(long, global = true, env = "VIGIL_CONFIG")]
    config: Option<PathBuf>,
    /// Directory for the embedded database.
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service.
    Serve {
        /// Address to listen on (default 127.0.0.1:8080).
        #[arg(long)]
        listen: Option<String>,
        /// Kafka brokers (`host:port[,…]`): join the consumer group on the input topic
        /// (overrides `kafka.brokers`).
        #[arg(long, env = "VIGIL_KAFKA_BROKERS")]
        kafka_brokers: Option<String>,
    },
    /// Manage API keys.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Kafka administration: create the topics a deployment needs.
    Kafka {
        #[command(subcommand)]
        command: KafkaCommand,
    },
    /// Manage businesses (tenants).
    Business {
        #[command(subcommand)]
        command: BusinessCommand,
    },
    /// Check the rule pack.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Screen names against the configured sanctions and PEP lists.
    Screen {
        #[command(subcommand)]
        command: ScreenCommand,
    },
    /// The local identity registry (NIN, BVN, CAC) the lookups answer from.
    Registry {
        #[command(subcommand)]
        command: RegistryCommand,
    },
    /// Manage the adverse-media index.
    Media {
        #[command(subcommand)]
        command: MediaCommand,
    },
    /// Run a file of transactions (JSON lines, .gz allowed) through the engine offline.
    Replay {
        file: PathBuf,
        /// CSV with `reference` and a label column, for precision and recall.
        #[arg(long)]
        labels: Option<PathBuf>,
        #[arg(long, default_value = "is_sar")]
        label_column: String,
        /// Shard threads (default: one per core).
        #[arg(long)]
        shards: Option<usize>,
        /// Stop after this many transactions.
        #[arg(long)]
        limit: Option<usize>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Leave name screening out (by default replay screens against the configured lists,
        /// as serving does).
        #[arg(long)]
        no_screening: bool,
        /// Write every decision to this file as JSON lines.
        #[arg(long, value_name = "FILE.jsonl")]
        out: Option<PathBuf>,
        /// AMLSim's alert_transactions.csv(.gz): score alerts per typology (needs --labels with
        /// a tran_id column to map its transactions onto references).
        #[arg(long, value_name = "FILE", requires = "labels")]
        alert_transactions: Option<PathBuf>,
        /// AMLSim's alert_accounts.csv(.gz): an alert is also found by a flag on a member account.
        #[arg(long, value_name = "FILE", requires = "alert_transactions")]
        alert_accounts: Option<PathBuf>,
        /// How the payloads write an AMLSim account id (`{}` is the id).
        #[arg(long, default_value = "A{}")]
        account_format: String,
        /// Replace a pack param for this run (`NAME=VALUE`, repeatable), e.g. a shadow threshold.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Run once per value of a pack param and print, per run, the review load and the
        /// per-typology recall (`NAME=V1,V2,...`; needs the alert files).
        #[arg(long, value_name = "NAME=V1,V2,...", requires = "alert_transactions")]
        sweep: Option<String>,
    },
}

#[derive(Subcommand)]
enum MediaCommand {
    /// Add articles from files: JSON lines or a JSON array (title, link, published, text), or
    /// RSS / Atom / JSON Feed. Works while the service runs; its risk-monitoring checks re-run.
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Search the index for adverse coverage of a name (token weights uniform: no lists loaded).
    Search {
        name: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create an API key pair for a business (created if new); the secret is printed once.
    Create {
        #[arg(long)]
        business: String,
        /// May call the admin endpoints (rule reload).
        #[arg(long)]
        admin: bool,
        #[arg(long)]
        json: bool,
    },
    /// List keys by id (the key's first characters; keys and secrets are never stored).
    List,
    /// Revoke a key, given whole or by its id.
    Revoke {
        #[arg(value_name = "KEY_OR_ID")]
        api_key: String,
    },
}

#[derive(Subcommand)]
enum RegistryCommand {
    /// Import records from a JSON (array or lines) or CSV file; all or nothing.
    Import {
        /// nin, bvn or cac.
        kind: String,
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum KafkaCommand {
    /// Create the input, output, changelog and control topics (existing ones are left as they
    /// are): outputs and changelog get the input's partition count, changelog and control are
    /// compacted, control has one partition.
    Topics {
        /// Kafka brokers (overrides `kafka.brokers`).
        #[arg(long, env = "VIGIL_KAFKA_BROKERS")]
        kafka_brokers: Option<String>,
        #[arg(long, default_value_t = 6)]
        partitions: i32,
        #[arg(long, default_value_t = 1)]
        replication: i32,
    },
    /// Re-key a topic whose producers key otherwise into the input topic, keyed by
    /// `anonymizedUserData.uniqueId` (headers and values unchanged). Runs until stopped.
    Repartition(ForwardArgs),
    /// The detection stage: read a payments topic keyed by tenant, run the account graph and
    /// its detectors on each tenant's payments in order, and forward each payment to the input
    /// topic keyed by `uniqueId` with its account facts (header `vigil-graph`). Runs until
    /// stopped.
    Detect(ForwardArgs),
}

/// What `kafka repartition` and `kafka detect` read and when they stop.
#[derive(clap::Args)]
struct ForwardArgs {
    /// The topic to read (repartition: keyed any way; detect: keyed by tenant).
    #[arg(long)]
    from: String,
    /// Kafka brokers (overrides `kafka.brokers`).
    #[arg(long, env = "VIGIL_KAFKA_BROKERS")]
    kafka_brokers: Option<String>,
    /// Stop once the topic is read to the end it had at the start (a one-off migration).
    #[arg(long)]
    exit_at_end: bool,
}

#[derive(Subcommand)]
enum BusinessCommand {
    /// Set how a business's transactions are answered: realtime or reporting-only.
    Mode { business: String, mode: String },
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Compile the pack and run its fixtures.
    Test {
        #[arg(long)]
        rules: Option<PathBuf>,
        #[arg(long)]
        fixtures: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ScreenCommand {
    /// Precision, recall and F1 over labelled cases (JSON lines), at a threshold and swept.
    Eval {
        file: PathBuf,
        /// 0-100 (default: the configured match threshold).
        #[arg(long)]
        threshold: Option<f32>,
        #[arg(long)]
        json: bool,
        /// Exit non-zero when F1 at the threshold is below this.
        #[arg(long)]
        min_f1: Option<f64>,
    },
    /// Run screening fixtures: every case must come out right at the threshold.
    Test {
        /// Case files (JSON lines); default: every *.jsonl in fixtures/screening/cases.
        files: Vec<PathBuf>,
        /// 0-100 (default: the configured potential-match threshold, where alerts start).
        #[arg(long)]
        threshold: Option<f32>,
    },
    /// Screen one name and print the matches.
    Query {
        name: String,
        /// sanction or pep (default: both).
        #[arg(long)]
        kind: Option<String>,
        #[arg(long, default_value_t = 80.0)]
        threshold: f32,
        /// Lower-case ISO alpha-2 country filter.
        #[arg(long)]
        country: Option<String>,
        /// The person's birth year, as a CDD profile would give it.
        #[arg(long)]
        birth_year: Option<i32>,
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Print each hit's explanation (matched parts, weights, adjustments) as JSON.
        #[arg(long)]
        explain: bool,
    },
}

fn settings(common: &Common, listen: Option<String>) -> anyhow::Result<Settings> {
    serve_settings(common, listen, None)
}

fn serve_settings(
    common: &Common,
    listen: Option<String>,
    kafka_brokers: Option<String>,
) -> anyhow::Result<Settings> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let mut config =
        Config::load(common.config.as_deref(), &env).context("loading configuration")?;
    if let Some(dir) = &common.data_dir {
        config.data_dir = dir.clone();
    }
    if let Some(listen) = listen {
        config.listen = listen;
    }
    if let Some(brokers) = kafka_brokers.filter(|b| !b.trim().is_empty()) {
        config.kafka.brokers = brokers;
    }
    config.build().context("validating configuration")
}

fn init_tracing(settings: &Settings) {
    let filter = tracing_subscriber::EnvFilter::try_new(&settings.config.log.level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match settings.config.log.format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

/// `vigil kafka repartition` and, with `detect`, `vigil kafka detect`.
async fn forward(common: &Common, args: ForwardArgs, detect: bool) -> anyhow::Result<()> {
    let ForwardArgs {
        from,
        kafka_brokers,
        exit_at_end,
    } = args;
    let settings = serve_settings(common, None, kafka_brokers)?;
    let kafka = settings.config.kafka.clone();
    if !kafka.enabled() {
        bail!("no Kafka brokers: pass --kafka-brokers or set kafka.brokers");
    }
    let detection = if detect {
        let rules_dir = &settings.config.rules_dir;
        let pack = vigil::engine::rules::RuleSet::load(rules_dir, settings.config.sandbox)
            .with_context(|| format!("loading rules from {}", rules_dir.display()))?;
        Some(vigil::sources::kafka::detect::DetectionSettings {
            detectors: pack.detectors,
            restore_days: settings.config.engine.restore_days,
            max_future_skew_ms: settings.config.engine.max_future_skew_secs as i64 * 1000,
        })
    } else {
        None
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signalled = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        signalled.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let input = kafka.input_topic.clone();
    let report = tokio::task::spawn_blocking(move || match detection {
        Some(settings) => {
            vigil::sources::kafka::detect::run(&kafka, &from, exit_at_end, &stop, settings)
        }
        None => vigil::sources::kafka::repartition::run(&kafka, &from, exit_at_end, &stop),
    })
    .await
    .context("forwarding thread")?
    .context("forwarding")?;
    if detect {
        println!(
            "forwarded {} messages to {input} ({} with account facts; {} source messages read again to rebuild account graphs; {} without a uniqueId)",
            report.forwarded, report.with_facts, report.restored, report.without_user
        );
    } else {
        println!(
            "forwarded {} messages to {input} ({} without a uniqueId, forwarded with their key for the source to dead-letter)",
            report.forwarded, report.without_user
        );
    }
    Ok(())
}

async fn open_store(settings: &Settings) -> anyhow::Result<vigil::store::Store> {
    vigil::store::Store::connect(&settings.database_url, 2)
        .await
        .with_context(|| format!("opening the store at {}", settings.database_url))
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve {
            listen,
            kafka_brokers,
        } => {
            let settings = serve_settings(&cli.common, listen, kafka_brokers)?;
            init_tracing(&settings);
            vigil::server::serve(settings).await.context("serving")?;
        }
        Command::Keys { command } => {
            let settings = settings(&cli.common, None)?;
            let store = open_store(&settings).await?;
            match command {
                KeysCommand::Create {
                    business,
                    admin,
                    json,
                } => {
                    if business.trim().is_empty() {
                        bail!("--business must not be empty");
                    }
                    let key = vigil::api::auth::issue_key(&store, business.trim(), admin)
                        .await
                        .context("creating the key")?;
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"apiKey": key.api_key, "apiSecret": key.api_secret})
                        );
                    } else {
                        println!("business:  {}", key.business);
                        println!("role:      {}", key.role);
                        println!("apiKey:    {}", key.api_key);
                        println!("apiSecret: {}", key.api_secret);
                        println!(
                            "(key and secret are shown once; only their digests are stored, and the key's id {} names it from now on)",
                            vigil::store::key_id(&key.api_key)
                        );
                    }
                }
                KeysCommand::List => {
                    for key in store.keys().await.context("listing keys")? {
                        let state = if key.revoked { "revoked" } else { "active" };
                        println!(
                            "{}  {}  {}  {}",
                            key.key_id, key.business.name, key.role, state
                        );
                    }
                }
                KeysCommand::Revoke { api_key } => {
                    if !store
                        .revoke_key(&api_key)
                        .await
                        .context("revoking the key")?
                    {
                        bail!("no active key {}", vigil::store::key_id(&api_key));
                    }
                    println!("revoked {}", vigil::store::key_id(&api_key));
                }
            }
        }
        Command::Kafka {
            command:
                KafkaCommand::Topics {
                    kafka_brokers,
                    partitions,
                    replication,
                },
        } => {
            let settings = serve_settings(&cli.common, None, kafka_brokers)?;
            let kafka = &settings.config.kafka;
            if !kafka.enabled() {
                bail!("no Kafka brokers: pass --kafka-brokers or set kafka.brokers");
            }
            let outcomes =
                vigil::sources::kafka::admin::create_topics(kafka, partitions, replication)
                    .await
                    .context("creating topics")?;
            for (topic, outcome) in outcomes {
                println!("{topic}: {outcome:?}");
            }
        }
        Command::Kafka {
            command: KafkaCommand::Repartition(args),
        } => forward(&cli.common, args, false).await?,
        Command::Kafka {
            command: KafkaCommand::Detect(args),
        } => forward(&cli.common, args, true).await?,
        Command::Business { command } => {
            let settings = settings(&cli.common, None)?;
            let store = open_store(&settings).await?;
            match command {
                BusinessCommand::Mode { business, mode } => {
                    let mode: vigil::store::ProcessingMode =
                        mode.parse().map_err(anyhow::Error::msg)?;
                    let Some(found) = store.business_by_name(&business).await? else {
                        bail!("no business named {business}");
                    };
                    store.set_processing_mode(found.id, mode).await?;
                    println!("{business}: {}", mode.as_str());
                }
            }
        }
        Command::Registry { command } => {
            let settings = settings(&cli.common, None)?;
            let store = open_store(&settings).await?;
            match command {
                RegistryCommand::Import { kind, file } => {
                    let Some(kind) = vigil::identity::model::LookupKind::parse(&kind) else {
                        bail!("unknown registry {kind} (nin, bvn or cac)");
                    };
                    let count = vigil::identity::registry::import_file(store.pool(), kind, &file)
                        .await
                        .with_context(|| format!("importing {}", file.display()))?;
                    println!(
                        "imported {count} {} records from {}",
                        kind.label(),
                        file.display()
                    );
                }
            }
        }
        Command::Media { command } => {
            let settings = settings(&cli.common, None)?;
            let media_config = settings.config.media.clone();
            let dir = media_config.dir(&settings.config.data_dir);
            let index = vigil::media::MediaIndex::open(&dir)
                .with_context(|| format!("opening the adverse-media index in {}", dir.display()))?;
            match command {
                MediaCommand::Import { files } => {
                    for file in files {
                        let bytes = std::fs::read(&file)
                            .with_context(|| format!("reading {}", file.display()))?;
                        let articles = vigil::media::ingest::parse_file(&bytes)
                            .with_context(|| format!("reading articles from {}", file.display()))?;
                        let written = index
                            .add(&articles)
                            .with_context(|| format!("indexing {}", file.display()))?;
                        println!("{}: {written} articles", file.display());
                    }
                    println!("the index holds {} articles", index.count());
                }
                MediaCommand::Search { name, limit } => {
                    let hits = vigil::media::search::search(
                        &index,
                        &vigil::screening::index::ScreeningIndex::default(),
                        &name,
                        limit,
                        media_config.name_threshold,
                        media_config.candidates,
                    )?;
                    let result = vigil::media::search::result_json("cli", &name, limit, &hits);
                    println!("{}", serde_json::to_string_pretty(&result)?);
                }
            }
        }
        Command::Rules { command } => match command {
            RulesCommand::Test { rules, fixtures } => {
                let settings = settings(&cli.common, None)?;
                let rules_dir = rules.unwrap_or(settings.config.rules_dir.clone());
                let fixtures_dir = fixtures.unwrap_or(settings.config.fixtures_dir.clone());
                let set = vigil::engine::rules::RuleSet::load(&rules_dir, settings.config.sandbox)
                    .with_context(|| format!("loading rules from {}", rules_dir.display()))?;
                let files = vigil::engine::rules::fixtures::load_dir(&fixtures_dir)
                    .with_context(|| format!("loading fixtures from {}", fixtures_dir.display()))?;
                println!("{} rules ({})", set.rules.len(), set.fingerprint);
                let report = vigil::engine::rules::fixtures::run(&std::sync::Arc::new(set), &files);
                println!("{}", report.summary());
                if !report.passed() {
                    return Ok(ExitCode::FAILURE);
                }
                println!("all fixtures passed");
            }
        },
        Command::Screen { command } => {
            let settings = settings(&cli.common, None)?;
            let config = settings.config.screening.clone();
            let data_dir = settings.config.data_dir.clone();
            let manager = tokio::task::spawn_blocking(move || {
                vigil::screening::manager::ListsManager::load_all(config, &data_dir)
            })
            .await
            .context("list loading thread")?
            .context("loading screening lists")?;
            let index = manager.current().index().clone();
            let match_threshold = settings.config.screening.match_threshold;
            let potential_threshold = settings.config.screening.potential_threshold;
            match command {
                ScreenCommand::Eval {
                    file,
                    threshold,
                    json,
                    min_f1,
                } => {
                    let text = std::fs::read_to_string(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    let cases = vigil::screening::eval::parse_cases(&text)
                        .with_context(|| format!("parsing {}", file.display()))?;
                    let threshold = threshold.unwrap_or(match_threshold);
                    let report = vigil::screening::eval::evaluate(
                        &index,
                        &cases,
                        threshold,
                        match_threshold,
                        vigil::screening::eval::SWEEP,
                    );
                    if json {
                        println!("{}", serde_json::to_string_pretty(&report)?);
                    } else {
                        print!("{}", report.render());
                    }
                    if min_f1.is_some_and(|min| report.threshold.f1 < min) {
                        return Ok(ExitCode::FAILURE);
                    }
                }
                ScreenCommand::Test { files, threshold } => {
                    let files = if files.is_empty() {
                        vigil::screening::eval::case_files(std::path::Path::new(
                            "fixtures/screening/cases",
                        ))
                        .context("listing fixtures/screening/cases")?
                    } else {
                        files
                    };
                    let threshold = threshold.unwrap_or(potential_threshold);
                    let mut failed = 0usize;
                    let mut total = 0usize;
                    for file in &files {
                        let text = std::fs::read_to_string(file)
                            .with_context(|| format!("reading {}", file.display()))?;
                        let cases = vigil::screening::eval::parse_cases(&text)
                            .with_context(|| format!("parsing {}", file.display()))?;
                        let failures = vigil::screening::eval::check_cases(
                            &index,
                            &cases,
                            threshold,
                            match_threshold,
                        );
                        total += cases.len();
                        failed += failures.len();
                        for failure in failures {
                            println!("FAIL {}: {failure}", file.display());
                        }
                    }
                    println!(
                        "{} screening cases in {} files at threshold {threshold}: {} passed, {failed} failed",
                        total,
                        files.len(),
                        total - failed
                    );
                    if failed > 0 {
                        return Ok(ExitCode::FAILURE);
                    }
                }
                ScreenCommand::Query {
                    name,
                    kind,
                    threshold,
                    country,
                    birth_year,
                    limit,
                    explain,
                } => {
                    let kind = match kind.as_deref() {
                        None => None,
                        Some("sanction") => Some(vigil::screening::entity::ListKind::Sanction),
                        Some("pep") => Some(vigil::screening::entity::ListKind::Pep),
                        Some(other) => bail!("unknown list kind {other} (sanction or pep)"),
                    };
                    let hits = index.search(&vigil::screening::index::ScreenQuery {
                        name: &name,
                        kind,
                        tenant: None,
                        country: country.as_deref(),
                        birth_year,
                        threshold,
                        match_threshold,
                        limit,
                    });
                    for hit in &hits {
                        let entity = index.entity(hit.entity);
                        println!(
                            "{:>5.1}  {:<24} {}  (matched {:?})",
                            hit.score, entity.entity.id, entity.entity.name, hit.matched_name
                        );
                        if explain {
                            println!("{}", serde_json::to_string_pretty(&hit.explanation)?);
                        }
                    }
                    if hits.is_empty() {
                        println!("no match at or above {threshold}");
                    }
                }
            }
        }
        Command::Replay {
            file,
            labels,
            label_column,
            shards,
            limit,
            json,
            no_screening,
            out,
            alert_transactions,
            alert_accounts,
            account_format,
            set,
            sweep,
        } => {
            let settings = settings(&cli.common, None)?;
            let mut params = std::collections::BTreeMap::new();
            for assignment in &set {
                let (name, value) = vigil::replay::parse_assignment(assignment)
                    .with_context(|| format!("--set {assignment}"))?;
                params.insert(name, value);
            }
            let alerts = match (alert_transactions, &labels) {
                (Some(transactions), Some(references)) => Some(vigil::replay::alerts::AlertFiles {
                    transactions,
                    accounts: alert_accounts,
                    references: references.clone(),
                    account_format,
                }),
                _ => None,
            };
            let options = vigil::replay::ReplayOptions {
                file,
                labels,
                label_column,
                rules_dir: settings.config.rules_dir.clone(),
                sandbox: settings.config.sandbox,
                shards: shards.unwrap_or(settings.shards),
                limit,
                screening: (!no_screening).then(|| vigil::replay::ScreeningSetup {
                    config: settings.config.screening.clone(),
                    data_dir: settings.config.data_dir.clone(),
                }),
                out,
                alerts,
                params,
            };
            if let Some(sweep) = sweep {
                let (name, values) = vigil::replay::parse_sweep(&sweep)
                    .with_context(|| format!("--sweep {sweep}"))?;
                let runs = tokio::task::spawn_blocking(move || {
                    vigil::replay::sweep(&options, &name, &values)
                })
                .await
                .context("replay thread")?
                .context("replaying")?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&runs)?);
                } else {
                    print!("{}", vigil::replay::render_sweep(&runs));
                }
                return Ok(ExitCode::SUCCESS);
            }
            // The replay drives shard queues with blocking sends: keep it off the async workers.
            let report = tokio::task::spawn_blocking(move || vigil::replay::run(&options))
                .await
                .context("replay thread")?
                .context("replaying")?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.render());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

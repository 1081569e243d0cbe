//! Memory per active user of the engine's per-user state.
//!
//! Three scenarios, each run in a fresh child process of this binary so that one scenario's heap
//! does not hide or inflate another's:
//! - `amlsim`: every payload of the AMLSim replay (`payloads.jsonl.gz`, ~374k transactions,
//!   ~12k users) through one [`Evaluator`];
//! - `retail`: 100,000 users with 20 transactions each over the last 30 days, 3 of them in the
//!   last 24 h;
//! - `busy`: 10,000 users with 200 transactions each over the last 30 days (about 7 a day).
//!
//! Transactions go the production way: a JSON payload parsed with `parse_json`, validated, then
//! `Evaluator::evaluate` against the default rule pack. Each scenario reports the engine's own
//! accounting (`state_bytes() / users`) and the growth of the process's resident set per user
//! (`/proc/self/statm`, resident pages × page size) between just before the first transaction and
//! after the last. RSS includes the user map's spare capacity and the allocator's overhead and
//! fragmentation: that is the number to size a deployment by. The product target is at most
//! 1 KiB per active user.
//!
//! Run: `cargo bench --bench state_memory` (all scenarios, a few minutes) or name scenarios:
//! `cargo bench --bench state_memory -- retail busy`. `VIGIL_AMLSIM_PAYLOADS` overrides the path
//! of the AMLSim file; if it is missing, that scenario is skipped.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, SecondsFormat};
use vigil::engine::accounts::AccountGraph;
use vigil::engine::rules::{RuleSet, SandboxLimits};
use vigil::engine::state::StateLimits;
use vigil::engine::{Evaluator, Lists, Outcome, Snapshot};
use vigil::model::{parse_json, TransactionPayload, ValidationClock};
use vigil::screening::NoScreening;

const AMLSIM_PAYLOADS: &str =
    "/work/shared/data/transactions/amlsim_dev10K_seed7/payloads.jsonl.gz";
/// The product's stated budget per active user.
const TARGET_BYTES_PER_USER: f64 = 1024.0;
/// Set in a child process to the scenario it runs.
const SCENARIO_ENV: &str = "VIGIL_STATE_MEMORY_SCENARIO";
/// Prefix of the machine-readable result line a child prints for its parent.
const RESULT_PREFIX: &str = "@@result\t";
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Amlsim,
    Retail,
    Busy,
}

impl Scenario {
    const ALL: [Scenario; 3] = [Scenario::Amlsim, Scenario::Retail, Scenario::Busy];

    fn name(self) -> &'static str {
        match self {
            Scenario::Amlsim => "amlsim",
            Scenario::Retail => "retail",
            Scenario::Busy => "busy",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Scenario::Amlsim => "(a) AMLSim replay (amlsim_dev10K_seed7, every payload)",
            Scenario::Retail => {
                "(b) active retail users: 100,000 x 20 tx over 30 days (3 in the last 24 h)"
            }
            Scenario::Busy => "(c) busy users: 10,000 x 200 tx over 30 days (~7 a day)",
        }
    }

    fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What one scenario measured.
struct Measurement {
    users: usize,
    transactions: u64,
    invalid: u64,
    duplicates: u64,
    state_bytes: usize,
    /// Accounts the account stage holds and their bytes (both sides of every payment).
    accounts: usize,
    account_bytes: usize,
    rss_before: u64,
    rss_after: u64,
    seconds: f64,
}

impl Measurement {
    fn state_per_user(&self) -> f64 {
        self.state_bytes as f64 / self.users.max(1) as f64
    }

    fn rss_per_user(&self) -> f64 {
        self.rss_after.saturating_sub(self.rss_before) as f64 / self.users.max(1) as f64
    }
}

fn main() {
    if let Ok(name) = std::env::var(SCENARIO_ENV) {
        let scenario = Scenario::from_name(&name)
            .unwrap_or_else(|| panic!("{SCENARIO_ENV}={name} is not a scenario"));
        child(scenario);
        return;
    }
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) this is a measurement,
    // not a test: say so and stop instead of replaying millions of events in a debug build.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("state_memory: a measurement; run it with `cargo bench --bench state_memory`");
        return;
    }
    // Any other argument selects scenarios by name.
    let selected: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let exe = std::env::current_exe().expect("path of this benchmark");
    println!("per-user engine state: memory per active user (target <= {TARGET_BYTES_PER_USER} B)");
    println!("page size {} B\n", page_size());
    let mut rows: Vec<(Scenario, String)> = Vec::new();
    let mut failed = false;
    for scenario in Scenario::ALL {
        if !selected.is_empty() && !selected.iter().any(|s| s == scenario.name()) {
            continue;
        }
        let output = Command::new(&exe)
            .env(SCENARIO_ENV, scenario.name())
            .stderr(Stdio::inherit())
            .output()
            .expect("run the scenario in a child process");
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            match line.strip_prefix(RESULT_PREFIX) {
                Some(row) => rows.push((scenario, row.to_owned())),
                None => println!("{line}"),
            }
        }
        if !output.status.success() {
            println!("{}: FAILED ({})\n", scenario.name(), output.status);
            failed = true;
        }
    }
    if !rows.is_empty() {
        println!(
            "{:<8} {:>9} {:>11} {:>14} {:>13}  target",
            "scenario", "users", "tx", "state B/user", "RSS B/user"
        );
        for (scenario, row) in &rows {
            println!("{:<8} {row}", scenario.name());
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// Runs one scenario in this (child) process and prints its block and result line.
fn child(scenario: Scenario) {
    println!("{}", scenario.title());
    let measured = match scenario {
        Scenario::Amlsim => {
            let path = std::env::var_os("VIGIL_AMLSIM_PAYLOADS")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(AMLSIM_PAYLOADS));
            if !path.is_file() {
                println!("  skipped: {} is missing\n", path.display());
                return;
            }
            amlsim(&path)
        }
        Scenario::Retail => synthetic(&Population::RETAIL),
        Scenario::Busy => synthetic(&Population::BUSY),
    };
    report(&measured);
    let verdict = |bytes: f64| {
        if bytes <= TARGET_BYTES_PER_USER {
            "meets"
        } else {
            "MISSES"
        }
    };
    println!(
        "{RESULT_PREFIX}{:>9} {:>11} {:>14.0} {:>13.0}  state {}, RSS {}",
        measured.users,
        measured.transactions,
        measured.state_per_user(),
        measured.rss_per_user(),
        verdict(measured.state_per_user()),
        verdict(measured.rss_per_user()),
    );
}

fn report(m: &Measurement) {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let judge = |bytes: f64| {
        if bytes <= TARGET_BYTES_PER_USER {
            "meets the 1 KiB target"
        } else {
            "MISSES the 1 KiB target"
        }
    };
    println!("  users                 {:>12}", m.users);
    println!(
        "  transactions          {:>12}   ({} invalid, {} duplicates, {:.1} s, {:.0} tx/s)",
        m.transactions,
        m.invalid,
        m.duplicates,
        m.seconds,
        m.transactions as f64 / m.seconds.max(1e-9)
    );
    println!(
        "  state_bytes / user    {:>12.0} B  {}",
        m.state_per_user(),
        judge(m.state_per_user())
    );
    let per_account = m.account_bytes as f64 / m.accounts.max(1) as f64;
    println!(
        "  account state         {:>12.0} B per account ({} accounts)  {}",
        per_account,
        m.accounts,
        judge(per_account)
    );
    println!(
        "  RSS growth / user     {:>12.0} B  {}   (RSS {:.1} MiB -> {:.1} MiB)",
        m.rss_per_user(),
        judge(m.rss_per_user()),
        mib(m.rss_before),
        mib(m.rss_after)
    );
    println!();
}

// --- measuring --------------------------------------------------------------------------------

fn page_size() -> u64 {
    // No libc in this crate's dependencies: ask getconf, fall back to the common 4 KiB.
    Command::new("getconf")
        .arg("PAGESIZE")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(4096)
}

/// Resident set size of this process in bytes (`/proc/self/statm`: resident pages × page size).
fn rss_bytes(page_size: u64) -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .expect("resident pages in /proc/self/statm");
    pages * page_size
}

/// Parses, validates and evaluates payloads through one evaluator, as a shard does.
struct Feeder {
    snapshot: Snapshot,
    evaluator: Evaluator,
    graph: AccountGraph,
    clock: ValidationClock,
    scratch: Vec<u8>,
    transactions: u64,
    invalid: u64,
    duplicates: u64,
}

impl Feeder {
    fn new(now_ms: i64) -> Feeder {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
        let rules = RuleSet::load(&dir, SandboxLimits::default()).expect("default pack loads");
        let snapshot = Snapshot {
            rules: Arc::new(rules),
            rule_counters: None,
            lists: Arc::new(Lists::default()),
            screener: Arc::new(NoScreening),
        };
        Feeder {
            snapshot,
            evaluator: Evaluator::new(StateLimits::default()),
            graph: AccountGraph::default(),
            clock: ValidationClock {
                now_ms,
                max_future_skew_ms: 300_000,
            },
            scratch: Vec::with_capacity(4096),
            transactions: 0,
            invalid: 0,
            duplicates: 0,
        }
    }

    /// Evaluates one payload on a throwaway evaluator, so lazily built parts of the rule engine
    /// and the parse buffers exist before the baseline is taken.
    fn warm_up(&mut self, payload: &[u8]) {
        let tx = parse_json::<TransactionPayload>(payload, &mut self.scratch)
            .expect("warm-up payload parses")
            .validate(self.clock)
            .expect("warm-up payload is valid");
        let mut throwaway = Evaluator::new(StateLimits::default());
        let _ = throwaway.evaluate(&self.snapshot, 0, tx, None, None);
    }

    fn feed(&mut self, payload: &[u8]) {
        let parsed = parse_json::<TransactionPayload>(payload, &mut self.scratch)
            .ok()
            .and_then(|p| p.validate(self.clock).ok());
        let Some(tx) = parsed else {
            self.invalid += 1;
            return;
        };
        let facts = self.graph.observe(1, &tx, &self.snapshot.rules.detectors);
        let (outcome, _tx) =
            self.evaluator
                .evaluate(&self.snapshot, 1, tx, Some(Box::new(facts)), None);
        match outcome {
            Outcome::Decided(_) => self.transactions += 1,
            Outcome::Duplicate { .. } => self.duplicates += 1,
        }
    }

    fn finish(self, rss_before: u64, rss_after: u64, started: Instant) -> Measurement {
        Measurement {
            users: self.evaluator.user_count(),
            transactions: self.transactions,
            invalid: self.invalid,
            duplicates: self.duplicates,
            state_bytes: self.evaluator.state_bytes(),
            accounts: self.graph.account_count(),
            account_bytes: self.graph.memory_bytes(),
            rss_before,
            rss_after,
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

// --- (a) AMLSim -------------------------------------------------------------------------------

fn amlsim(path: &Path) -> Measurement {
    let page = page_size();
    let file = std::fs::File::open(path).expect("open the AMLSim payloads");
    let mut reader = BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(file));
    let mut feeder = Feeder::new(chrono::Utc::now().timestamp_millis());
    // The first line fills the read buffer and the inflater's window before the baseline.
    let mut line = Vec::with_capacity(4096);
    reader.read_until(b'\n', &mut line).expect("read payloads");
    feeder.warm_up(line.trim_ascii());

    let rss_before = rss_bytes(page);
    let started = Instant::now();
    loop {
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty() {
            feeder.feed(trimmed);
        }
        line.clear();
        if reader.read_until(b'\n', &mut line).expect("read payloads") == 0 {
            break;
        }
    }
    let rss_after = rss_bytes(page);
    feeder.finish(rss_before, rss_after, started)
}

// --- (b), (c) synthetic populations -----------------------------------------------------------

/// A synthetic population: `users` users with `per_user` transactions each in the 30 days before
/// now, `in_last_day` of them in the last 24 h, the rest spread over the 29 days before.
struct Population {
    prefix: &'static str,
    users: u64,
    per_user: u32,
    in_last_day: u32,
    /// Accounts a user pays or is paid by (a retail customer's handful of regular parties).
    counterparties: u64,
    seed: u64,
}

impl Population {
    const RETAIL: Population = Population {
        prefix: "RTL",
        users: 100_000,
        per_user: 20,
        in_last_day: 3,
        counterparties: 8,
        seed: 0x5eed_0001,
    };
    const BUSY: Population = Population {
        prefix: "BSY",
        users: 10_000,
        per_user: 200,
        in_last_day: 7,
        counterparties: 40,
        seed: 0x5eed_0002,
    };
}

/// SplitMix64: small, fast and deterministic; every value is derived from (user, index) so the
/// generator holds no per-user data that would count as state.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut rng = Rng(seed);
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const CITIES: [(&str, &str, f64, f64); 6] = [
    ("Lagos", "Ikeja", 6.6018, 3.3515),
    ("Lagos", "Lekki", 6.4698, 3.5852),
    ("FCT", "Abuja", 9.0765, 7.3986),
    ("Rivers", "Port Harcourt", 4.8156, 7.0498),
    ("Kano", "Kano", 12.0022, 8.5920),
    ("Oyo", "Ibadan", 7.3775, 3.9470),
];
const BANKS: [&str; 8] = ["044", "058", "011", "033", "057", "232", "214", "999"];
const MANUFACTURERS: [&str; 5] = ["Tecno", "Infinix", "Samsung", "itel", "Apple"];
const FIRST_NAMES: [&str; 10] = [
    "Ada", "Chidi", "Tunde", "Ngozi", "Emeka", "Aisha", "Bola", "Ifeoma", "Musa", "Yetunde",
];
const LAST_NAMES: [&str; 10] = [
    "Obi", "Okafor", "Adeyemi", "Bello", "Eze", "Ibrahim", "Nwosu", "Balogun", "Okeke", "Yusuf",
];
const DEBIT_CHANNELS: [&str; 4] = ["transfer", "card payment", "pos", "ussd"];
const CREDIT_CHANNELS: [&str; 2] = ["transfer", "deposit"];

fn iso(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .expect("timestamp in range")
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A 10-digit NUBAN-like account number.
fn account(rng: &mut Rng) -> u64 {
    1_000_000_000 + rng.below(9_000_000_000)
}

/// Writes the `k`-th payload of `user` into `out`.
fn payload(population: &Population, now_ms: i64, user: u64, k: u32, out: &mut String) {
    // The user's fixed profile.
    let mut profile = Rng::new(population.seed ^ user.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let (state, city, home_lat, home_lon) = CITIES[profile.below(CITIES.len() as u64) as usize];
    let own_account = account(&mut profile);
    let devices = 1 + profile.below(3);
    let device_seed = profile.next();
    let manufacturer = profile.pick(&MANUFACTURERS);
    let counterparty_seed = profile.next();
    let joined_ms = now_ms - (60 + profile.below(5 * 365) as i64) * DAY_MS;
    let balance = 20_000.0 + profile.unit() * 2_000_000.0;

    // This transaction: its time slot keeps each user's transactions in order, and the caller
    // interleaves users so the stream is near-chronological overall.
    let mut rng = Rng::new(profile.next() ^ (u64::from(k) << 32) ^ u64::from(k));
    let older = population.per_user - population.in_last_day;
    let (start, span, slot) = if k < older {
        (now_ms - 30 * DAY_MS, 29 * DAY_MS, k)
    } else {
        (now_ms - DAY_MS, DAY_MS - 60_000, k - older)
    };
    let slots = if k < older {
        older
    } else {
        population.in_last_day
    };
    let width = span / i64::from(slots);
    let at = start + i64::from(slot) * width + (rng.unit() * width as f64) as i64;

    let credit = rng.unit() < 0.3;
    // Mostly a few regular parties, sometimes someone new.
    let party = if rng.unit() < 0.85 {
        rng.below(population.counterparties)
    } else {
        1_000 + rng.below(1_000_000)
    };
    let mut party_rng = Rng::new(counterparty_seed ^ party);
    let party_account = account(&mut party_rng);
    let party_bank = party_rng.pick(&BANKS);
    let party_name = format!(
        "{} {}",
        party_rng.pick(&FIRST_NAMES),
        party_rng.pick(&LAST_NAMES)
    );
    // Log-uniform between NGN 500 and NGN 500,000.
    let amount = (500.0 * 1_000f64.powf(rng.unit()) * 100.0).round() / 100.0;
    let (kind, channel, sender, receiver, narration) = if credit {
        let channel = rng.pick(&CREDIT_CHANNELS);
        (
            "credit",
            channel,
            party_account,
            own_account,
            "Transfer received",
        )
    } else {
        let channel = rng.pick(&DEBIT_CHANNELS);
        (
            "debit",
            channel,
            own_account,
            party_account,
            "Payment for goods",
        )
    };
    let device = rng.below(devices);
    let device_id = format!("dev-{:016x}", device_seed.wrapping_add(device));
    let lat = home_lat + (rng.unit() - 0.5) * 0.1;
    let lon = home_lon + (rng.unit() - 0.5) * 0.1;
    let ip = format!(
        "102.89.{}.{}",
        profile.below(256),
        1 + (device_seed.wrapping_add(device) % 254)
    );

    out.clear();
    write!(
        out,
        concat!(
            r#"{{"transactionData":{{"reference":"{prefix}-{user}-{k}","amount":{amount:.2},"#,
            r#""type":"{kind}","channel":"{channel}","transactionDate":"{date}","status":true,"#,
            r#""currency":"NGN","senderAccount":"{sender}","receiverAccount":"{receiver}","#,
            r#""balanceBefore":{balance:.2},"narration":"{narration}","isExternalPayment":true}},"#,
            r#""anonymizedUserData":{{"uniqueId":"{prefix}-CUST-{user:07}","#,
            r#""accountType":"individual","isIdentityVerified":true,"country":"NG","#,
            r#""state":"{state}","city":"{city}","dateJoined":"{joined}"}},"#,
            r#""device":{{"deviceId":"{device_id}","manufacturer":"{manufacturer}","#,
            r#""osName":"Android","osVersion":"13"}},"#,
            r#""location":{{"latitude":"{lat:.6}","longitude":"{lon:.6}","country":"NG"}},"#,
            r#""counterpartyData":{{"accountNumber":"{party_account}","bankCode":"{party_bank}","#,
            r#""name":"{party_name}","country":"NG"}},"#,
            r#""ipAddress":"{ip}"}}"#
        ),
        prefix = population.prefix,
        user = user,
        k = k,
        amount = amount,
        kind = kind,
        channel = channel,
        date = iso(at),
        sender = sender,
        receiver = receiver,
        balance = balance,
        narration = narration,
        state = state,
        city = city,
        joined = iso(joined_ms),
        device_id = device_id,
        manufacturer = manufacturer,
        lat = lat,
        lon = lon,
        party_account = party_account,
        party_bank = party_bank,
        party_name = party_name,
        ip = ip,
    )
    .expect("write to a String");
}

fn synthetic(population: &Population) -> Measurement {
    let page = page_size();
    let now_ms = chrono::Utc::now().timestamp_millis();
    let mut feeder = Feeder::new(now_ms);
    let mut buffer = String::with_capacity(2048);
    payload(population, now_ms, u64::MAX, 0, &mut buffer);
    feeder.warm_up(buffer.as_bytes());

    let rss_before = rss_bytes(page);
    let started = Instant::now();
    // Round k sends every user's k-th transaction: users interleave as in a live stream.
    for k in 0..population.per_user {
        for user in 0..population.users {
            payload(population, now_ms, user, k, &mut buffer);
            feeder.feed(buffer.as_bytes());
        }
    }
    let rss_after = rss_bytes(page);
    feeder.finish(rss_before, rss_after, started)
}

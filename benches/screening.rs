//! Screening speed and memory over every bundled list (`lists/`).
//!
//! Run: `cargo bench --bench screening`. Two parts:
//! 1. A one-thread latency run printed first: index build time, resident memory the index added
//!    (`/proc/self/statm` before and after the build), then every query of a fixed mix timed one
//!    by one: queries per second, p50, p99 and max; and the same for the brute-force baseline
//!    (Jaro-Winkler of the whole normalised name against every indexed name, pre-normalised)
//!    over a sample, with the ratio of the two means.
//! 2. Criterion groups `screening/build`, `screening/query/<kind>` and
//!    `screening/brute_force`.
//!
//! The query mix is derived from the lists themselves, deterministically: a third exact names,
//! a third names with one typo, a third names nobody is listed under.
//! Targets (issue 3): ≥ 10,000 queries/s on one thread with p99 ≤ 1 ms, build ≤ 2 s, index
//! ≤ 200 MB resident.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use vigil::screening::config::ScreeningConfig;
use vigil::screening::index::{brute_force_best, ScreenQuery, ScreeningIndex};
use vigil::screening::manager::ListsManager;
use vigil::screening::normalize::normalize;

fn lists_config() -> ScreeningConfig {
    ScreeningConfig {
        lists_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lists"),
        ..ScreeningConfig::default()
    }
}

fn load() -> Arc<ScreeningIndex> {
    let data_dir = std::env::temp_dir();
    let manager = ListsManager::load_all(lists_config(), &data_dir).expect("bundled lists load");
    manager.current().index().clone()
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// A deterministic query mix: exact listed names, one-typo names, and unlisted names.
fn query_mix(index: &ScreeningIndex, count: usize) -> Vec<String> {
    let unlisted_first = [
        "James",
        "Maria",
        "Chinedu",
        "Oluwaseun",
        "Aisha",
        "Wei",
        "Priya",
        "Carlos",
        "Olga",
        "Emeka",
        "Fatima",
        "John",
        "Ngozi",
        "Tunde",
        "Elena",
        "Rahul",
    ];
    let unlisted_last = [
        "Okafor",
        "Adeyemi",
        "Smithson",
        "Garcia",
        "Ivanova",
        "Zhang",
        "Patel",
        "Thompson",
        "Nwosu",
        "Balogun",
        "Kowalski",
        "Haddad",
        "Mensah",
        "Okonkwo",
        "Lindqvist",
        "Moreau",
    ];
    let entities = index.entity_count().max(1);
    let mut out = Vec::with_capacity(count);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    while out.len() < count {
        let pick = next();
        match out.len() % 3 {
            0 => {
                let entity = index.entity((pick % entities as u64) as u32);
                out.push(entity.entity.name.clone());
            }
            1 => {
                let entity = index.entity((pick % entities as u64) as u32);
                let mut chars: Vec<char> = entity.entity.name.chars().collect();
                if chars.len() > 4 {
                    let at = 1 + (next() as usize % (chars.len() - 2));
                    chars[at] = if chars[at] == 'e' { 'a' } else { 'e' };
                }
                out.push(chars.into_iter().collect());
            }
            _ => {
                let first = unlisted_first[(pick % 16) as usize];
                let last = unlisted_last[(next() % 16) as usize];
                out.push(format!("{first} {last}"));
            }
        }
    }
    out
}

fn query(index: &ScreeningIndex, name: &str) -> usize {
    index
        .search(&ScreenQuery {
            name,
            kind: None,
            tenant: None,
            country: None,
            birth_year: None,
            threshold: 80.0,
            match_threshold: 90.0,
            limit: 10,
        })
        .len()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn latency_report() {
    let before = resident_bytes();
    let started = Instant::now();
    let index = load();
    let build = started.elapsed();
    let after = resident_bytes();
    println!(
        "screening: {} lists, {} entities, {} names; load + build {:.2} s; resident +{:.1} MB",
        index.lists().len(),
        index.entity_count(),
        index.name_count(),
        build.as_secs_f64(),
        (after.saturating_sub(before)) as f64 / 1e6
    );
    // VIGIL_PROFILE_QUERIES=N: only N queries of the mix and no brute-force run, for profiling
    // under callgrind (`valgrind --tool=callgrind --toggle-collect='*ScreeningIndex::search*'`).
    let profile_queries = std::env::var("VIGIL_PROFILE_QUERIES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let queries = query_mix(&index, profile_queries.unwrap_or(30_000));
    for q in queries.iter().take(300) {
        query(&index, q);
    }
    let mut times = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    let run = Instant::now();
    for q in &queries {
        let t = Instant::now();
        found += query(&index, q);
        times.push(t.elapsed());
    }
    let total = run.elapsed();
    times.sort_unstable();
    let mean_index = total.as_secs_f64() / queries.len() as f64;
    println!(
        "screening: index, one thread: {} queries, {:.0} queries/s, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs, {} hits",
        queries.len(),
        queries.len() as f64 / total.as_secs_f64(),
        percentile(&times, 0.50).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
        times.last().map_or(0.0, |d| d.as_secs_f64() * 1e6),
        found
    );

    if profile_queries.is_some() {
        let mut slowest: Vec<(Duration, &String)> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                query(&index, q);
                (t.elapsed(), q)
            })
            .collect();
        slowest.sort_by_key(|entry| std::cmp::Reverse(entry.0));
        for (time, q) in slowest.iter().take(25) {
            println!("slow: {:.0} µs  {q}", time.as_secs_f64() * 1e6);
        }
        let kinds = ["exact", "typo", "unlisted"];
        for (k, kind) in kinds.iter().enumerate() {
            let total: Duration = queries
                .iter()
                .skip(k)
                .step_by(3)
                .map(|q| {
                    let t = Instant::now();
                    query(&index, q);
                    t.elapsed()
                })
                .sum();
            println!(
                "{kind}: {:.1} µs mean",
                total.as_secs_f64() * 1e6 / (queries.len() / 3) as f64
            );
        }
        std::process::exit(0);
    }
    let names: Vec<String> = brute_force_names(&index);
    let sample = &queries[..200];
    let run = Instant::now();
    for q in sample {
        std::hint::black_box(brute_force_best(&names, q));
    }
    let mean_brute = run.elapsed().as_secs_f64() / sample.len() as f64;
    println!(
        "screening: brute-force Jaro-Winkler over {} names: {:.0} queries/s ({:.0} µs each); index is {:.0}x faster",
        names.len(),
        1.0 / mean_brute,
        mean_brute * 1e6,
        mean_brute / mean_index
    );
}

fn brute_force_names(index: &ScreeningIndex) -> Vec<String> {
    index
        .name_texts()
        .map(|text| {
            normalize(text)
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn bench_screening(c: &mut Criterion) {
    latency_report();
    let mut group = c.benchmark_group("screening");
    group.sample_size(10);
    group.bench_function("build", |b| b.iter(load));
    group.finish();

    let index = load();
    let queries = query_mix(&index, 3_000);
    let mut group = c.benchmark_group("screening/query");
    for (kind, offset) in [("exact", 0usize), ("typo", 1), ("unlisted", 2)] {
        let picked: Vec<&String> = queries.iter().skip(offset).step_by(3).collect();
        let mut i = 0usize;
        group.bench_function(kind, |b| {
            b.iter(|| {
                i = (i + 1) % picked.len();
                query(&index, picked[i])
            })
        });
    }
    group.finish();

    let names = brute_force_names(&index);
    let mut group = c.benchmark_group("screening");
    group.sample_size(10);
    let mut i = 0usize;
    group.bench_function("brute_force", |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            brute_force_best(&names, &queries[i])
        })
    });
    group.finish();
}

criterion_group!(benches, bench_screening);
criterion_main!(benches);

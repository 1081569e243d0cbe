#!/usr/bin/env bash
# The Kafka end-to-end benchmark (README, "Performance"): N AMLSim transactions through a
# pass-through pipeline (consume and produce, no evaluation) and through `vigil serve`, on the same
# broker in the same run; prints throughput, latency percentiles and the ratio.
#
#   scripts/kafka-bench.sh [N] [extra benches/kafka_pipeline.rs arguments, e.g. --json]
#
# With VIGIL_BENCH_KAFKA_BROKERS (or VIGIL_KAFKA_BROKERS) set, that broker is used. Without it this
# starts tansu 0.6.0 as scripts/test.sh does (scripts/tansu.sh: built once, SQLite engine in a
# temporary directory, the missing header index added) and stops it on exit. Topics are created
# fresh (uniquely named) for every mode.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-20000}"
shift || true

# shellcheck source=scripts/tansu.sh
. scripts/tansu.sh
trap stop_tansu EXIT

start_kafka() {
  if [ -z "${VIGIL_BENCH_KAFKA_BROKERS:-}" ] && [ -n "${VIGIL_KAFKA_BROKERS:-}" ]; then
    export VIGIL_BENCH_KAFKA_BROKERS="$VIGIL_KAFKA_BROKERS"
  fi
  if [ -n "${VIGIL_BENCH_KAFKA_BROKERS:-}" ]; then
    echo "== Kafka: using $VIGIL_BENCH_KAFKA_BROKERS"
    return
  fi
  start_tansu vigil-kafka-bench
  export VIGIL_BENCH_KAFKA_BROKERS="$TANSU_BROKERS"
}

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
echo "== building vigil and the benchmark (release)"
# Built together so that one feature resolution serves both (built apart, each rebuilds the other).
cargo build --locked --release --bin vigil --bench kafka_pipeline
TARGET="${CARGO_TARGET_DIR:-target}"
export VIGIL_BENCH_BIN="${VIGIL_BENCH_BIN:-$TARGET/release/vigil}"

start_kafka
echo "== $N transactions: pass-through, then vigil serve"
cargo bench --locked --bench kafka_pipeline -- --messages "$N" "$@"

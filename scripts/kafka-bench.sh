#!/usr/bin/env bash
# The Kafka end-to-end benchmark (README, "Performance"): N AMLSim transactions through a
# pass-through pipeline (consume and produce, no evaluation) and through `vigil serve`, on the same
# broker in the same run; prints throughput, latency percentiles and the ratio.
#
#   scripts/kafka-bench.sh [N] [extra benches/kafka_pipeline.rs arguments, e.g. --json]
#
# With VIGIL_BENCH_KAFKA_BROKERS (or VIGIL_KAFKA_BROKERS) set, that broker is used. Without it this
# starts tansu 0.6.0 (built once into $VIGIL_TANSU_DIR, default ~/.cache/vigil/tansu, like
# scripts/test.sh) on a free loopback port with its SQLite engine in a temporary directory, and
# stops it on exit. Topics are created fresh (uniquely named) for every mode.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-20000}"
shift || true

KAFKA_DIR=""
KAFKA_PID=""
cleanup() {
  if [ -n "$KAFKA_PID" ]; then kill "$KAFKA_PID" >/dev/null 2>&1 || true; wait "$KAFKA_PID" 2>/dev/null || true; fi
  if [ -n "$KAFKA_DIR" ]; then rm -rf "$KAFKA_DIR"; fi
}
trap cleanup EXIT

# A free loopback port: one nothing answers on.
free_port() {
  local port
  for port in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
}

start_kafka() {
  if [ -z "${VIGIL_BENCH_KAFKA_BROKERS:-}" ] && [ -n "${VIGIL_KAFKA_BROKERS:-}" ]; then
    export VIGIL_BENCH_KAFKA_BROKERS="$VIGIL_KAFKA_BROKERS"
  fi
  if [ -n "${VIGIL_BENCH_KAFKA_BROKERS:-}" ]; then
    echo "== Kafka: using $VIGIL_BENCH_KAFKA_BROKERS"
    return
  fi
  local root="${VIGIL_TANSU_DIR:-$HOME/.cache/vigil/tansu}"
  if [ ! -x "$root/bin/tansu" ]; then
    echo "== Kafka: building tansu 0.6.0 into $root (once; 13-22 minutes)"
    cargo install tansu --version 0.6.0 --locked --features libsql --root "$root" --quiet
  fi
  KAFKA_DIR="$(mktemp -d /tmp/vigil-kafka-bench.XXXXXX)"
  local port
  port="$(free_port)"
  (cd "$KAFKA_DIR" && exec "$root/bin/tansu" broker \
    --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine 'sqlite://tansu.db?maintenance_interval=5s' >"$KAFKA_DIR/broker.log" 2>&1) &
  KAFKA_PID=$!
  local tries=0
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$KAFKA_PID" 2>/dev/null; then
      echo "tansu did not start:"; cat "$KAFKA_DIR/broker.log"; exit 1
    fi
    sleep 0.2
  done
  export VIGIL_BENCH_KAFKA_BROKERS="127.0.0.1:$port"
  echo "== Kafka: tansu 0.6.0 on 127.0.0.1:$port (temporary, SQLite storage)"
}

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
echo "== building vigil and the benchmark (release)"
cargo build --locked --release --bin vigil
TARGET="${CARGO_TARGET_DIR:-target}"
export VIGIL_BENCH_BIN="${VIGIL_BENCH_BIN:-$TARGET/release/vigil}"

start_kafka
echo "== $N transactions: pass-through, then vigil serve"
cargo bench --locked --bench kafka_pipeline -- --messages "$N" "$@"

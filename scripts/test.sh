#!/usr/bin/env bash
# The test command (README): installs what the tests need and runs every test.
#
# Needs the Rust toolchain, and PostgreSQL for the storage and workflow tests, which run against
# both embedded SQLite and PostgreSQL. With VIGIL_TEST_DATABASE_URL set, that server is used (each
# test creates and drops its own database on it, so the URL's user needs CREATEDB). Without it,
# this script installs Debian's postgresql package if no server binaries are present, starts a
# throw-away server on a free loopback port in a temporary directory (as the `postgres` user when
# run as root: initdb refuses root), and stops and removes it on exit. Formatting and lints are
# checked first so a failing style check fails fast.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/tansu.sh
. scripts/tansu.sh

PG_DIR=""
LOG="$(mktemp)"
cleanup() {
  stop_tansu
  if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  if [ -n "$PG_DIR" ]; then rm -rf "$PG_DIR"; fi
  rm -f "$LOG"
}
trap cleanup EXIT

# Runs a PostgreSQL server binary as the server's owner (root may not run one).
pg_as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  if [ -n "${VIGIL_TEST_DATABASE_URL:-}" ]; then
    echo "== PostgreSQL: using VIGIL_TEST_DATABASE_URL"
    return
  fi
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "== PostgreSQL: installing Debian's postgresql package"
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  PG_DIR="$(mktemp -d /tmp/vigil-pg.XXXXXX)"
  if [ "$(id -u)" = 0 ]; then chown postgres "$PG_DIR"; fi
  local port
  port="$(free_port)"
  pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U vigil -A trust --no-sync -E UTF8 >/dev/null
  # Throw-away test server: durability settings off for speed (Vigil's own durability is its
  # commit protocol, which the tests exercise the same way).
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $port -k $PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null
  pg_as "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U vigil vigil
  export VIGIL_TEST_DATABASE_URL="postgres://vigil@127.0.0.1:$port/vigil"
  echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (temporary)"
}

# The Kafka tests need a real Kafka-protocol broker. Without VIGIL_TEST_KAFKA_BROKERS, this builds
# tansu 0.6.0 once into $VIGIL_TANSU_DIR (default ~/.cache/vigil/tansu; 13-22 minutes on 2 cores,
# skipped when the binary is there), starts it on a free loopback port with its SQLite storage
# engine in a temporary directory, and stops it on exit (scripts/tansu.sh). The tests create their
# own topics.
start_kafka() {
  if [ -n "${VIGIL_TEST_KAFKA_BROKERS:-}" ]; then
    echo "== Kafka: using VIGIL_TEST_KAFKA_BROKERS"
    return
  fi
  start_tansu vigil-kafka
  export VIGIL_TEST_KAFKA_BROKERS="$TANSU_BROKERS"
}

# One clean build: incremental artefacts only cost disk here.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

echo "== toolchain: $(cargo --version)"
if rustup component list --installed 2>/dev/null | grep -q rustfmt; then
  cargo fmt --all -- --check
else
  echo "rustfmt not installed; skipping format check"
fi
if rustup component list --installed 2>/dev/null | grep -q clippy; then
  cargo clippy --all-targets --locked -- -D warnings
else
  echo "clippy not installed; skipping lint check"
fi

# xmllint validates every generated goAML report against the schema (the tests fail without it).
install_xmllint() {
  if command -v xmllint >/dev/null 2>&1; then return; fi
  echo "== installing Debian's libxml2-utils (xmllint, for goAML schema validation)"
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libxml2-utils >/dev/null
}

start_postgres
install_xmllint
start_kafka

echo "== unit and integration tests (SQLite, PostgreSQL and Kafka)"
cargo test --locked 2>&1 | tee "$LOG"

echo "== benchmarks compile (they run with cargo bench, never as tests)"
cargo build --locked --benches

echo "== rule pack fixtures through the CLI"
cargo run --locked --quiet -- rules test

echo "== screening fixtures through the CLI (bundled lists)"
cargo run --locked --quiet -- screen test

# One closing line for the whole run (cargo's last summary is the doc-test one).
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$LOG"

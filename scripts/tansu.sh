# Sourced by scripts/test.sh and scripts/kafka-bench.sh: builds tansu 0.6.0 (Apache-2.0, a
# Kafka-compatible broker in Rust) once and starts it on a free loopback port with its SQLite
# storage engine in a temporary directory.
#
#   start_tansu DIR_PREFIX   sets TANSU_DIR, TANSU_PID and TANSU_BROKERS (host:port)
#   stop_tansu               stops it and removes its directory (call from an EXIT trap)
#   free_port                prints a loopback port nothing answers on (test.sh's PostgreSQL too)
#
# tansu 0.6.0's SQLite schema has no index on header (topition, offset_id): every fetched record
# looks up its headers with a scan of the whole header table, so each fetch slows down with every
# record ever written with headers (Vigil's inputs and outputs all carry headers). After a few
# thousand messages fetches took seconds, and one took over 60 s and timed out. start_tansu adds
# that index once the broker has created its schema; SQLite re-plans tansu's statements on the
# schema change, and nothing else about the broker changes.

TANSU_DIR=""
TANSU_PID=""
TANSU_BROKERS=""

free_port() {
  local port
  for port in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
}

tansu_sql() {
  local db="$1" sql="$2"
  if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 "$db" "$sql"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute(sys.argv[2]); c.commit()' "$db" "$sql"
  else
    echo "neither sqlite3 nor python3 is installed: cannot add the header index to tansu's database" >&2
    return 1
  fi
}

start_tansu() {
  local prefix="$1"
  local root="${VIGIL_TANSU_DIR:-$HOME/.cache/vigil/tansu}"
  if [ ! -x "$root/bin/tansu" ]; then
    echo "== Kafka: building tansu 0.6.0 into $root (once; 13-22 minutes)"
    cargo install tansu --version 0.6.0 --locked --features libsql --root "$root" --quiet
  fi
  TANSU_DIR="$(mktemp -d "/tmp/$prefix.XXXXXX")"
  local port
  port="$(free_port)"
  (cd "$TANSU_DIR" && exec "$root/bin/tansu" broker \
    --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine 'sqlite://tansu.db?maintenance_interval=5s' >"$TANSU_DIR/broker.log" 2>&1) &
  TANSU_PID=$!
  local tries=0
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$TANSU_PID" 2>/dev/null; then
      echo "tansu did not start:"; cat "$TANSU_DIR/broker.log"; return 1
    fi
    sleep 0.2
  done
  # The schema exists once the broker listens (it applies its DDL first).
  tansu_sql "$TANSU_DIR/tansu.db" \
    "create index if not exists header_topition_offset on header (topition, offset_id)"
  TANSU_BROKERS="127.0.0.1:$port"
  echo "== Kafka: tansu 0.6.0 on $TANSU_BROKERS (temporary, SQLite storage, header index added)"
}

stop_tansu() {
  if [ -n "$TANSU_PID" ]; then
    kill "$TANSU_PID" >/dev/null 2>&1 || true
    wait "$TANSU_PID" 2>/dev/null || true
  fi
  if [ -n "$TANSU_DIR" ]; then rm -rf "$TANSU_DIR"; fi
}

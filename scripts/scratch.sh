# Sourced by the scripts that drive a scratch `vigil serve` on loopback (load.sh, fuzz-api.sh),
# from the repository root with PORT set: builds the release binary ($BIN), makes a temporary
# directory ($WORK) that is removed on exit with the server ($SERVER) stopped, and defines
# create_key and wait_ready. BIN_UNDER_TEST=PATH runs that binary instead, unbuilt (alternating A/B runs
# of two builds).
if [ -n "${BIN_UNDER_TEST:-}" ]; then
  BIN="$BIN_UNDER_TEST"
else
  cargo build --release --locked --quiet
  BIN=target/release/vigil
fi
WORK="$(mktemp -d)"
trap 'kill "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# create_key BUSINESS [--admin]: a key for BUSINESS in $WORK/data; sets API_KEY and API_SECRET.
create_key() {
  local json
  json="$("$BIN" keys create --business "$1" --json --data-dir "$WORK/data" "${@:2}")"
  API_KEY="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["apiKey"])' "$json")"
  API_SECRET="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["apiSecret"])' "$json")"
}

# wait_ready: returns once the service on $PORT answers /readyz; exits after 60 s without.
wait_ready() {
  for _ in $(seq 1 600); do
    curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "service did not become ready" >&2
  exit 1
}

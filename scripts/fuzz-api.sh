#!/usr/bin/env bash
# Fuzzes every documented endpoint with schemathesis, driven by Vigil's own /openapi.json.
#
#   scripts/fuzz-api.sh [MAX_SECONDS] [CHECKS]
#
# Builds the release binary, starts `vigil serve` on loopback with a scratch data directory and an
# admin key, and runs schemathesis (installed from PyPI if missing) with that key's headers for at
# most MAX_SECONDS (default 300). CHECKS defaults to `not_a_server_error`: any 5xx answer is a
# failure. `all` adds schemathesis's conformance checks, several of which report where Vigil's
# validation is stricter than the document says (a 422 for a schema-valid body) rather than bugs.
# Exits with schemathesis's status. Traffic goes only to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_SECONDS="${1:-300}"
CHECKS="${2:-not_a_server_error}"
PORT="${VIGIL_FUZZ_PORT:-18282}"

if ! command -v schemathesis >/dev/null; then
  python3 -m pip install --quiet schemathesis
fi
# shellcheck source=scripts/scratch.sh
source scripts/scratch.sh
create_key fuzz --admin
VIGIL_LOG__LEVEL=warn "$BIN" serve --data-dir "$WORK/data" --listen "127.0.0.1:$PORT" \
  > "$WORK/server.log" 2>&1 &
SERVER=$!
wait_ready

status=0
# In the scratch directory: schemathesis keeps a run cache in its working directory.
(cd "$WORK" && schemathesis run "http://127.0.0.1:$PORT/openapi.json" \
  -H "apiKey: $API_KEY" -H "apiSecret: $API_SECRET" \
  --checks "$CHECKS" --workers 2 --max-time "$MAX_SECONDS") || status=$?
echo "server errors logged:"
grep -E "ERROR" "$WORK/server.log" | tail -20 || echo "  none"
exit "$status"

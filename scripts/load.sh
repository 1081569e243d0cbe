#!/usr/bin/env bash
# Load test of the instant endpoint against a bare endpoint in the same process and run, and of
# the instant endpoint with screening (every bundled list) against the same without screening.
#
#   scripts/load.sh [DURATION_SECONDS] [CONNECTIONS]
#
# Builds the release binary, starts `vigil serve` on loopback with a scratch data directory and
# the bare endpoint enabled (POST /bench/bare: same parsing and validation, constant answer, no
# auth, engine or store), then drives both with wrk (one thread, unique references over 10,000
# users, transaction dates moving on a second every 1,000 requests as a live feed's do). Each user
# has its own sender name (10,000 names) and pays one of 40,000 receiver names, so the screening
# cache sees realistic misses. Then the service restarts with screening disabled
# and the instant endpoint runs again. Prints requests/s, latency percentiles, the CPU wrk and
# Vigil used in each run (together well under two cores' worth means the run was bound by latency,
# not CPU), the instant/bare ratio and the screening-on/screening-off ratio.
# Traffic goes only to 127.0.0.1; every wrk run is bounded by DURATION. BIN_UNDER_TEST=PATH runs a
# given binary instead of building one (alternating runs of two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${1:-15}"
CONNECTIONS="${2:-32}"
PORT="${VIGIL_LOAD_PORT:-18181}"

if ! command -v wrk >/dev/null; then
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
# shellcheck source=scripts/scratch.sh
source scripts/scratch.sh
create_key load-test

# The unscreened run gets its own copy of the (still empty) store, so neither run replays the
# other's transactions at start.
cp -r "$WORK/data" "$WORK/data-unscreened"

start_server() {
  local data="$1"
  shift
  env "$@" VIGIL_HTTP__BARE_ENDPOINT=true VIGIL_LOG__LEVEL=warn \
    "$BIN" serve --data-dir "$data" --listen "127.0.0.1:$PORT" &
  SERVER=$!
  wait_ready
}
stop_server() {
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
}
start_server "$WORK/data" VIGIL_SCREENING__ENABLED=true

cat > "$WORK/post.lua" <<LUA
-- One string.format per request over names built at start: an earlier version ran seven gsub
-- calls over the whole body per request, which took wrk most of a core and capped the bare
-- endpoint near 10k req/s (the generator, not Vigil, was the ceiling).
local counter = 0
local thread_id = 0
local date_second = -1
local date_text = ""
local template = [[{"transactionData":{"reference":"load-%s-%d","amount":%d,"type":"debit","channel":"card payment","transactionDate":"%s","status":true,"currency":"NGN","receiverAccount":"0123456789","senderAccount":"acct-u%d","balanceBefore":1250000.0,"narration":"payment for goods","isExternalPayment":true,"sessionId":"000015230302101530123456789012"},"anonymizedUserData":{"uniqueId":"u%d","isIdentityVerified":true,"accountType":"individual","dateJoined":"2023-06-01T09:00:00Z","country":"NG","state":"Lagos","city":"Ikeja"},"device":{"deviceId":"device-u%d","manufacturer":"Tecno","name":"phone","osName":"Android","osVersion":"13"},"location":{"latitude":"6.6018","longitude":"3.3515","country":"NG"},"limits":{"dailyLimit":5000000,"overdraftLimit":0,"individualTransactionLimit":1000000},"screeningData":{"senderName":"%s","receiverName":"%s"},"beneficiary":{"isRegisteredBeneficiary":true,"isNewBeneficiary":false},"ipAddress":"102.89.34.12"}]]
local first = {"Ada","Chidi","Emeka","Ngozi","Tunde","Aisha","Bola","Ifeanyi","Kemi","Musa","Yusuf","Halima","Oluwaseun","Chiamaka","Ibrahim","Fatima","Segun","Nneka","Adebayo","Zainab","John","Mary","Peter","Grace","David","Esther","Samuel","Ruth","Daniel","Joy","Michael","Blessing","James","Patience","Paul","Mercy","Joseph","Faith","Emmanuel","Comfort"}
local last = {"Obi","Okafor","Adeyemi","Balogun","Nwosu","Okonkwo","Eze","Bello","Abubakar","Ogunleye","Adewale","Nnamdi","Danjuma","Olawale","Uche","Ibekwe","Lawal","Afolabi","Chukwu","Garba","Akinola","Ojo","Umar","Onyeka","Babatunde","Ekwueme","Salami","Oyelaran","Mohammed","Ahmed","Smith","Johnson","Williams","Brown","Jones","Miller","Davis","Wilson","Anderson","Taylor","Thomas","Moore","Martin","Jackson","White","Harris","Clark","Lewis","Young","Walker"}
local names = {}
for n = 0, 49999 do
  names[n] = first[(n % #first) + 1] .. " " .. last[(math.floor(n / #first) % #last) + 1] .. " " .. last[(math.floor(n / 7) % #last) + 1]
end
local headers = {["Content-Type"] = "application/json", ["apiKey"] = "$API_KEY", ["apiSecret"] = "$API_SECRET"}
function setup(thread)
  thread:set("id", os.time() .. math.random(1000000))
end
function init(args)
  thread_id = id
end
request = function()
  counter = counter + 1
  local user = counter % 10000
  -- Transaction time moves on a second every 1,000 requests from 2026-03-02 10:00:00 UTC, as a
  -- live feed's dates do (a constant date would make every transaction of a run simultaneous).
  local second = math.floor(counter / 1000)
  if second ~= date_second then
    date_second = second
    date_text = os.date("!%Y-%m-%dT%H:%M:%SZ", 1772445600 + second)
  end
  local body = string.format(template, thread_id, counter, 1000 + (counter % 500) * 37, date_text, user, user, user,
    names[user], names[10000 + (counter * 7919) % 40000])
  return wrk.format("POST", nil, headers, body)
end
LUA

# CPU seconds (user + system) the service has used so far, from /proc (fields 14 and 15, in
# clock ticks).
TICKS="$(getconf CLK_TCK)"
service_cpu() { awk -v ticks="$TICKS" '{print ($14 + $15) / ticks}' "/proc/$SERVER/stat"; }
run() {
  local name="$1" path="$2" before after
  echo "== $name: POST $path (${DURATION}s, $CONNECTIONS connections, 1 wrk thread)"
  before="$(service_cpu)"
  # bash's time keyword: wrk's own CPU, to show whether the load generator was the ceiling.
  { TIMEFORMAT="wrk: %U s user + %S s system CPU in %R s"; time wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/post.lua" "http://127.0.0.1:$PORT$path" | tee "$WORK/$name.txt"; } 2>&1
  after="$(service_cpu)"
  python3 -c "import sys; print('vigil: %.1f%% of one core' % (100*(float(sys.argv[2])-float(sys.argv[1]))/float(sys.argv[3])))" "$before" "$after" "$DURATION"
}
run bare /bench/bare
run instant /api/v1/transaction-monitoring/instant
stop_server
start_server "$WORK/data-unscreened" VIGIL_SCREENING__ENABLED=false
run unscreened /api/v1/transaction-monitoring/instant
stop_server

rps() { awk '/Requests\/sec/ {print $2}' "$WORK/$1.txt"; }
non2xx() { awk '/Non-2xx/ {print $5}' "$WORK/$1.txt"; }
echo "== summary"
echo "bare:    $(rps bare) req/s"
echo "instant: $(rps instant) req/s (non-2xx: $(non2xx instant | tr -d '\n'))"
python3 -c "import sys; print('instant/bare: %.1f%%' % (100*float(sys.argv[1])/float(sys.argv[2])))" "$(rps instant)" "$(rps bare)"
grep -E "^\s+99%" "$WORK/instant.txt" | sed 's/^/instant p99: /'
echo "instant without screening: $(rps unscreened) req/s"
python3 -c "import sys; print('screening on/off: %.1f%%' % (100*float(sys.argv[1])/float(sys.argv[2])))" "$(rps instant)" "$(rps unscreened)"

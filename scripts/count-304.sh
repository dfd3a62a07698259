#!/usr/bin/env bash
# Instructions loyalty-server spends on one GET /v1/catalog answered 304, counted by callgrind (this VM has no
# hardware counters, and CPU time per request swings ±15 % with the neighbours' load): a server of its own on a
# fresh data directory, one shopper, 200 keep-alive requests to warm it, then the count over REQUESTS more.
# Usage: scripts/count-304.sh [SERVER-BINARY] (default: the release build's). Needs valgrind and python3.
set -euo pipefail
server=${1:-$(swift build -c release --static-swift-stdlib --show-bin-path)/loyalty-server}
requests=${REQUESTS:-1000}
port=${PORT:-18304}
command -v valgrind >/dev/null || { echo "count-304: install valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
chmod 711 "$work"  # as root, the embedded PostgreSQL runs as postgres and must reach its directory
# The server stops its PostgreSQL when told to; the directory goes once both are gone.
cleanup() {
  local pid; pid=$(cat "$work/pid" 2>/dev/null) || true
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
( valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p" \
    "$server" --listen "127.0.0.1:$port" --data-dir "$work/data" --no-rate-limits >"$work/server.log" 2>&1 &
  echo $! >"$work/pid" )
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.5; done
requests_of() {
  python3 - "$port" "$1" "$work/token" <<'PY'
import http.client, json, sys
port, count, token_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port)
try:
    token = open(token_file).read()
except FileNotFoundError:
    connection.request("POST", "/v1/accounts")
    token = json.loads(connection.getresponse().read())["device_token"]
    open(token_file, "w").write(token)
headers = {"Authorization": "Bearer " + token}
connection.request("GET", "/v1/catalog", headers=headers)
response = connection.getresponse()
cursor = json.loads(response.read())["cursor"]
headers["If-None-Match"] = response.getheader("ETag")
for _ in range(count):
    # As `loyalty sync` asks: the cursor and the ETag of the copy it holds.
    connection.request("GET", "/v1/catalog?since=" + cursor, headers=headers)
    response = connection.getresponse(); response.read()
    assert response.status == 304, response.status
PY
}
requests_of 200
callgrind_control -z "$(cat "$work/pid")" >/dev/null 2>&1
requests_of "$requests"
callgrind_control -d "$(cat "$work/pid")" >/dev/null 2>&1
sleep 1
profile=$(ls "$work"/callgrind.*.1)
total=$(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
memset=$(callgrind_annotate --threshold=100 "$profile" 2>/dev/null | awk '/memset/ { gsub(",", "", $1); sum += $1 } END { print sum + 0 }')
cp "$profile" /tmp/count-304.callgrind
echo "$((total / requests)) instructions per 304, $((memset / requests)) of them memset (callgrind counts its bytes one" \
  "by one); where: callgrind_annotate --inclusive=yes /tmp/count-304.callgrind"

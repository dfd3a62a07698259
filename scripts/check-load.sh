#!/usr/bin/env bash
# make check, load part: wrk (scripts/check-load.lua) on loopback against a release loyalty-server with its own
# embedded PostgreSQL: 20 retailers x 10 offers (per-shopper limit 2, total limit 150) and 500 shopper accounts
# prepared first. wrk holds a fixed number of connections (closed loop: each sends its next request when the
# answer arrives), so the rate is set by the connection count: 5-second steps at 1, 2, 4, ... 64 connections find
# the highest rate whose p99 stays under 50 ms, then that load runs for CHECK_LOAD_SECONDS (default 60; once
# more at half the connections if its p99 went over).
# Afterwards the database must show: no limit exceeded, offers' counters equal to their rows, and exactly one
# row for every 201. Last line: "load <req/s> <p50 ms> <p99 ms> <5xx> <connections> <redemptions> <verdict>".
set -euo pipefail
source "$(dirname "$0")/check-lib.sh"
bin=$1
seconds=${CHECK_LOAD_SECONDS:-60}
target_p99=50
work=$(scratch_dir)
trap 'stop_server; [ -n "${CHECK_KEEP:-}" ] || rm -rf "$work"' EXIT
port=$(free_port)
base="http://127.0.0.1:$port"
export LOYALTY_ADMIN_TOKEN="check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
start_server "$bin" "$work/server" "$port"
python3 "$check_root/scripts/provision.py" "$base" "$LOYALTY_ADMIN_TOKEN" --retailers 20 --offers 10 \
  --devices 500 --per-shopper-limit 2 --total-limit 150 >"$work/credentials.json"
python3 -c '
import json, sys
credentials = json.load(open(sys.argv[1]))
for token in credentials["devices"]: print("device", token)
for retailer in credentials["retailers"]:
    for offer in retailer["offers"]: print("offer", offer["id"])
' "$work/credentials.json" >"$work/credentials.txt"
export CHECK_LOAD_CREDENTIALS="$work/credentials.txt"
mkdir "$work/redeemed"

redeemed_total=0 server_errors=0 in_flight=0
run() {  # run CONNECTIONS SECONDS: sets rate p50 p99 s5 errors; adds to redeemed_total and server_errors
  local out
  export CHECK_LOAD_REDEEMED="$work/redeemed/run-$1-$2"
  out=$(wrk -t"$(( $1 < 2 ? $1 : 2 ))" -c"$1" -d"$2"s --timeout 5s -s "$check_root/scripts/check-load.lua" "$base" 2>&1)
  echo "$out" >>"$work/wrk.log"
  read -r p50 p99 <<<"$(echo "$out" | sed -n 's/^latency p50=\([0-9.]*\) p99=\([0-9.]*\).*/\1 \2/p')"
  rate=$(echo "$out" | sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p')
  s5=$(echo "$out" | sed -n 's/.* 5xx=\([0-9]*\).*/\1/p')
  errors=$(echo "$out" | sed -n 's/.* errors=\([0-9]*\).*/\1/p')
  [ -n "$rate" ] && [ -n "$p99" ] || { echo "$out" >&2; exit 1; }
  redeemed_total=$((redeemed_total + $(echo "$out" | sed -n 's/.* redeemed=\([0-9]*\).*/\1/p')))
  server_errors=$((server_errors + s5))
  in_flight=$((in_flight + $1))
}
under_target() { python3 -c "import sys; sys.exit(0 if $1 < $target_p99 else 1)"; }

best_connections=1 best_rate=0
printf '%-12s %10s %9s %9s %6s\n' connections 'req/s' 'p50 ms' 'p99 ms' 5xx
for connections in 1 2 4 8 16 32 64; do
  run "$connections" 5
  printf '%-12s %10s %9s %9s %6s\n' "$connections" "$rate" "$p50" "$p99" "$s5"
  # No early stop: on a shared machine one noisy step must not end the search.
  under_target "$p99" || continue
  if python3 -c "import sys; sys.exit(0 if $rate > $best_rate else 1)"; then best_connections=$connections best_rate=$rate; fi
done

# A 5-second step can miss what a minute brings (checkpoints, fsync stalls, neighbours on a shared machine):
# if the long run's p99 is over the target, it is run once more at half the connections.
for attempt in 1 2; do
  echo "main run: $best_connections connections for $seconds s"
  run "$best_connections" "$seconds"
  printf '%-12s %10s %9s %9s %6s   socket errors and timeouts: %s\n' "$best_connections" "$rate" "$p50" "$p99" \
    "$s5" "$errors"
  under_target "$p99" || [ "$best_connections" -eq 1 ] && break
  best_connections=$((best_connections / 2))
done

# The database after the load. A run ends with up to one request in flight per connection, which the server
# may complete after wrk stopped listening: rows may exceed the 201s seen by at most the sum of connections
# over the runs. Every 201 must have its row, by id.
cat "$work"/redeemed/run-* >"$work/redeemed.txt"
answered=$(wc -l <"$work/redeemed.txt")
rows=$(server_psql "$work/server" "SELECT count(*) FROM redemptions")
missing=$( (echo "CREATE TEMP TABLE answered (id uuid); COPY answered FROM STDIN;"; cat "$work/redeemed.txt"; echo '\.'
  echo "SELECT count(*) FROM answered a WHERE NOT EXISTS (SELECT 1 FROM redemptions r WHERE r.id = a.id);") |
  server_psql_stdin "$work/server")
over_shopper=$(server_psql "$work/server" "SELECT count(*) FROM (SELECT r.offer_id, r.account_id, count(*) AS n,
  min(o.per_shopper_limit) AS l FROM redemptions r JOIN offers o ON o.id = r.offer_id
  GROUP BY r.offer_id, r.account_id) g WHERE n > l")
over_total=$(server_psql "$work/server" "SELECT count(*) FROM offers o WHERE o.total_limit IS NOT NULL AND
  (SELECT count(*) FROM redemptions r WHERE r.offer_id = o.id) > o.total_limit")
counter_drift=$(server_psql "$work/server" "SELECT count(*) FROM offers o WHERE
  coalesce((SELECT t.redeemed_count FROM redemption_totals t WHERE t.offer_id = o.id), 0) <>
  (SELECT count(*) FROM redemptions r WHERE r.offer_id = o.id)")
echo "database: $rows redemption rows; $answered answered 201, of which $missing have no row;" \
  "pairs over the per-shopper limit: $over_shopper; offers over the total limit: $over_total;" \
  "offers whose counter differs from their rows: $counter_drift"

verdict=pass
if [ "$server_errors" -ne 0 ] || [ "$missing" -ne 0 ] || [ "$answered" -ne "$redeemed_total" ] \
  || [ "$rows" -lt "$answered" ] || [ "$rows" -gt $((answered + in_flight)) ] || [ "$over_shopper" -ne 0 ] \
  || [ "$over_total" -ne 0 ] || [ "$counter_drift" -ne 0 ] \
  || [ "$errors" -ne 0 ] || ! under_target "$p99"; then
  verdict=fail
fi
echo "load $rate $p50 $p99 $server_errors $best_connections $rows $verdict"
[ "$verdict" = pass ]

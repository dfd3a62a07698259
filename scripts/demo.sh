#!/usr/bin/env bash
# make demo: Matey's department store, end to end. A retailer registers and attaches three offers,
# and makes the sushi bar's beacon secure; a shopper's walk faked at home shows no sushi offer, and a
# seen push without a visit is refused; a shopper with two devices walks past the beacons; each offer
# shows once, one at a time, only when near; one is redeemed and its code accepted at a till, once;
# the second device is shown none of them again. Leaves nothing running.
set -euo pipefail
bin="$1"
work=$(mktemp -d)
chmod 711 "$work"  # as root, the embedded PostgreSQL runs as `postgres` and must reach its directory
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
uuid=8F0C1DDC-11E5-4A07-8910-425941B072F9
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export LOYALTY_SERVER="http://127.0.0.1:$port"
export LOYALTY_ADMIN_TOKEN="demo-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
retailer() { LOYALTY_HOME="$work/matey" "$bin/loyalty" "$@"; }
phone() { LOYALTY_HOME="$work/phone" "$bin/loyalty" "$@"; }
tablet() { LOYALTY_HOME="$work/tablet" "$bin/loyalty" "$@"; }
till() { LOYALTY_HOME="$work/till" LOYALTY_TILL_KEY="$till_key" "$bin/loyalty" till "$@"; }

say "Starting loyalty-server on $LOYALTY_SERVER (its own PostgreSQL cluster under $work)"
"$bin/loyalty-server" --listen "127.0.0.1:$port" --data-dir "$work/server" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 200); do
  grep -q "http://" "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.1
done

say "Matey's registers with its own beacon UUID and attaches three offers"
retailer retailer register --name "Matey's" --uuid "$uuid"
retailer retailer offer set 1 1 --title "30% off sushi at The Japanese Kitchen" --category food
retailer retailer offer set 1 2 --title "Buy one get one free at Tucci's Pizza" --category food
retailer retailer offer set 2 1 --title "50% off all ladies' clothing" --category clothing
retailer retailer offers

say "Matey's makes the sushi bar's beacon secure: a new identity every 17 minutes, which only the service resolves"
retailer retailer beacon secure 1 1 --form ibeacon --output "$work/sushi-beacon.json"
echo "(the beacon itself: \`loyalty beacon advertise --secure sushi-beacon.json\` on a Linux machine at the sushi bar)"

say "A shopper creates an account on a phone and links a tablet to it"
phone account create
code=$(phone account link --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["code"])')
echo "link code: $code"
tablet account link "$code" --name tablet

say "The walk: far from everything, then near the sushi bar, the pizza counter and ladies' clothing in turn"
"$bin/loyalty" beacon simulate --write "$work/walk.btsnoop" --secure "$work/sushi-beacon.json" \
  --walk "secure@0=15,8=1,16=1,24=15,70=15" \
  --walk "$uuid:1:2@0=20,24=20,32=1.2,40=1.2,48=20,70=20" \
  --walk "$uuid:2:1@0=25,48=25,56=0.8,64=0.8,70=25"

cat > "$work/narrate.py" <<'PY'
import json, sys
start = None
shown = 0
for line in sys.stdin:
    e = json.loads(line)
    if start is None and "t" in e:
        start = e["t"]
    t = e.get("t", start or 0) - (start or 0)
    if e["event"] in ("enter", "exit"):
        print("%5.1fs  %s the Matey's region" % (t, "entered" if e["event"] == "enter" else "left"))
    elif e["event"] == "offer":
        o = e["offer"]
        colour = "blue" if o.get("category") == "food" else "red"
        shown += 1
        print("%5.1fs  OFFER (on %s) from %s, beacon %d/%d: %s" % (t, colour, o["retailer"], o["major"], o["minor"], o["title"]))
print("        %d offer(s) shown" % shown)
PY

cat > "$work/seen.py" <<'PY'
# POST /v1/seen with the device's own token, as a script of the shopper's would: the offer on beacon 1:1 "seen" now.
import datetime, json, os, sys, urllib.error, urllib.request
home, server, offers = sys.argv[1], sys.argv[2], sys.argv[3]
device = next(os.path.join(d, f) for d, _, fs in os.walk(home) for f in fs if f == "device.json")
token = json.load(open(device))["device_token"]
offer = next(o for o in map(json.loads, open(offers)) if o.get("major") == 1 and o.get("minor") == 1)
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
request = urllib.request.Request(
    server + "/v1/seen", method="POST", data=json.dumps({"items": [{"offer_id": offer["id"], "seen_at": now}]}).encode(),
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
try:
    answer = urllib.request.urlopen(request)
    print("HTTP %d %s" % (answer.status, answer.read().decode()))
except urllib.error.HTTPError as error:
    print("HTTP %d %s" % (error.code, error.read().decode()))
PY

say "At home, the shopper tries to get the sushi offer without going there"
phone sync
echo "a walk past the sushi beacon's UUID, major and minor, as the catalog gives them:"
"$bin/loyalty" beacon simulate --write "$work/home.btsnoop" --walk "$uuid:1:1@0=1,10=1" >/dev/null
phone scan --replay "$work/home.btsnoop" --json | python3 "$work/narrate.py"
echo "a capture made at the sushi bar an hour ago (its identities of then), replayed now:"
"$bin/loyalty" beacon simulate --write "$work/earlier.btsnoop" --secure "$work/sushi-beacon.json" \
  --walk "secure@0=1,10=1" --at "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null
phone scan --replay "$work/earlier.btsnoop" --json | python3 "$work/narrate.py"
echo "telling the service it saw the sushi offer (POST /v1/seen):"
phone offers --json > "$work/offers.jsonl"
python3 "$work/seen.py" "$work/phone" "$LOYALTY_SERVER" "$work/offers.jsonl"

say "The phone walks through the store, past the sushi bar's beacon of now"
phone scan --replay "$work/walk.btsnoop" --json | tee "$work/phone.jsonl" | python3 "$work/narrate.py"

say "At the till the shopper redeems the sushi offer"
phone redeem "$uuid:1:1" | tee "$work/redeemed.txt"
till_code=$(awk '/show code/ { print $3 }' "$work/redeemed.txt")

say "The cashier's till (its own key, made by Matey's) accepts the code once"
till_key=$(retailer retailer till-key create --name "till 1" --json \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["till_key"])')
till accept "$till_code"
echo "the same code again:"
till accept "$till_code" || true

say "The tablet syncs (it learns what the phone has seen) and takes the same walk"
phone sync >/dev/null
tablet sync
tablet scan --replay "$work/walk.btsnoop" --json | python3 "$work/narrate.py"

say "Matey's looks at its figures"
retailer retailer stats

say "Done: the server and its PostgreSQL stop now"

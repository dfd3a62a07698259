#!/usr/bin/env bash
# make demo: a shopper walks through Matey's department store past its three beacons.
set -euo pipefail
bin="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
uuid=8F0C1DDC-11E5-4A07-8910-425941B072F9

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say "Matey's has three beacons: food (major 1) minor 1 (The Japanese Kitchen), minor 2 (Tucci's Pizza), and women's clothing (major 2) minor 1."
say "Recording a walk past them: far, then near each beacon in turn (our own encoder writes the BTSnoop file)."
"$bin/loyalty" beacon simulate --write "$work/walk.btsnoop" \
  --walk "$uuid:1:1@0=15,8=1,14=1,22=15,60=15" \
  --walk "$uuid:1:2@0=20,20=20,28=1.2,34=1.2,42=20,60=20" \
  --walk "$uuid:2:1@0=25,40=25,48=0.8,54=0.8,60=25"

say "Replaying it: region events and, once a second, every beacon in range with its proximity."
cat > "$work/narrate.py" <<'PY'
import json, sys
start, last = None, {}
for line in sys.stdin:
    e = json.loads(line)
    if start is None:
        start = e.get("t", 0)
    t = e.get("t", start) - start
    if e["event"] in ("enter", "exit"):
        print("%5.1fs  %s region %s" % (t, e["event"], e["region"]))
    elif e["event"] == "range":
        for b in e["beacons"]:
            key = (b["major"], b["minor"])
            if last.get(key) != b["proximity"]:
                last[key] = b["proximity"]
                d = b["distance_m"]
                print("%5.1fs  beacon major %d minor %d is %s%s" % (t, b["major"], b["minor"], b["proximity"], "" if d is None else " (~%.1f m)" % d))
    elif e["event"] == "summary":
        print("done: %d beacon adverts replayed" % e["beacon_frames"])
PY
"$bin/loyalty" scan --replay "$work/walk.btsnoop" --json | python3 "$work/narrate.py"

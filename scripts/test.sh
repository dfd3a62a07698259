#!/usr/bin/env bash
# `swift test` with a deadline (TEST_MINUTES, default 30; a whole run takes about 5 here): a test that hangs ends
# the run, naming the tests that had started and not ended, instead of holding CI until its own limit.
# Arguments go to swift test.
set -uo pipefail
minutes=${TEST_MINUTES:-30}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
exec > >(tee "$log") 2>&1
swift test --skip-build "$@" &
runner=$!
deadline=$((SECONDS + minutes * 60))
while kill -0 "$runner" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 2; done
if ! kill -0 "$runner" 2>/dev/null; then
  wait "$runner"
  exit
fi
# The runner and everything under it: each test program runs in a process group of its own, so the tree is
# gathered first, then stopped together.
descendants() { for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done; }
kill -KILL "$runner" $(descendants "$runner") 2>/dev/null
wait "$runner"
echo
echo "make test: stopped after $minutes minutes; these tests had started and not ended:"
comm -23 <(grep -oE '◇ Test [^ ]+\(' "$log" | sed 's/^◇ Test //' | sort -u) \
         <(grep -oE '[✔✘] Test [^ ]+\(' "$log" | sed -E 's/^[✔✘] Test //' | sort -u) | sed 's/($/()/; s/^/  /'
exit 124

#!/usr/bin/env bash
# make check: proves the system holds, with bounded times, and prints a summary table (part, figure, verdict).
#   fuzz    libFuzzer on the HCI event, AD structure, BTSnoop, request-body and PROXY header parsers (FUZZ_SECONDS each, 60)
#   api     schemathesis on every operation of openapi.yaml against a live server (CHECK_API_EXAMPLES, 50)
#   faults  PostgreSQL stopped, server and client SIGKILLed, network cut with packets dropped (scripts/check-faults.py)
#   load    wrk mixed load at the highest rate with p99 under 50 ms (CHECK_LOAD_SECONDS, 60), then the database
#   pgbouncer  the server test suite and the two-instance test with every pool behind PgBouncer (transaction pooling)
#   radio   the live radio in a guest kernel (LiveRadioTests with LOYALTY_LIVE_RADIO=full: beside bluetoothd too)
#   cluster two instances on a Patroni cluster under a Jepsen-style workload: the primary SIGKILLed, then SIGSTOPped
#           and continued; what an asynchronous standby loses (ClusterFailoverTests with LOYALTY_CLUSTER_CHECK=full);
#           the catalog check's listeners through a SIGKILL failover, no stale 304 after a write (CatalogCheckFailoverTests)
# CHECK_PARTS="fuzz api faults load pgbouncer radio cluster" chooses parts. Logs: .build/check/<part>.log. Exit 1 if any verdict fails.
# A part that ran less than it names fails: a fuzzer without executions, fewer fault rows than scenarios, a live
# check that never reached the guest (the radio part runs with CI set, so such a test fails instead of returning).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
parts=${CHECK_PARTS:-"fuzz api faults load pgbouncer radio cluster"}
logs="$root/.build/check"
mkdir -p "$logs"
swift build -c release --static-swift-stdlib --product loyalty-server >/dev/null && swift build -c release --static-swift-stdlib --product loyalty >/dev/null \
  || { echo "release build failed" >&2; exit 1; }
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
rows=()
row() { rows+=("$1"$'\t'"$2"$'\t'"$3"); }

for part in $parts; do
  echo "== $part (log: $logs/$part.log)"
  started=$SECONDS
  case $part in
    fuzz)
      scripts/fuzz.sh 2>&1 | tee "$logs/fuzz.log"
      status=${PIPESTATUS[0]}
      # Every target must have run: a line with executions and no crash. fuzz.sh's status covers the rest
      # (a fuzzer that exited with an error, a build that failed before any target ran).
      for target in ${FUZZ_TARGETS:-hci-event advertising-data btsnoop request-body proxy-header}; do
        read -r _ runs rate crashes _ <<<"$(grep -E "^$target " "$logs/fuzz.log" | tail -1)"
        verdict=pass
        [ "${runs:-0}" -gt 0 ] && [ "${crashes:-1}" -eq 0 ] || verdict=fail
        row "fuzz $target" "${runs:-0} executions (${rate:-0}/s), ${crashes:-?} crashes" "$verdict"
      done
      [ "$status" -ne 0 ] && row "fuzz" "scripts/fuzz.sh exited $status" fail
      ;;
    api)
      scripts/check-api.sh "$bin" 2>&1 | tee "$logs/api.log"
      status=${PIPESTATUS[0]}
      read -r _ operations cases failures errors <<<"$(grep '^api ' "$logs/api.log" | tail -1)"
      verdict=pass
      [ "$status" -ne 0 ] || [ "${operations:-0}" = 0 ] || [ "${cases:-0}" = 0 ] && verdict=fail
      row "api (schemathesis)" "${operations:-0} operations, ${cases:-0} test cases, ${failures:-?} failures, ${errors:-?} 5xx" "$verdict"
      ;;
    faults)
      python3 scripts/check-faults.py "$bin" 2>&1 | tee "$logs/faults.log"
      status=${PIPESTATUS[0]}
      while read -r _ name figure verdict; do
        row "fault $name" "${figure//_/ }" "$verdict"
      done < <(grep '^fault ' "$logs/faults.log")
      # A row for each scenario the script announced, and its status: one that died before or during its
      # loop leaves fewer rows, or none.
      expected=$(sed -n 's/^scenarios: //p' "$logs/faults.log" | wc -w)
      ran=$(grep -c '^fault ' "$logs/faults.log")
      if [ "$status" -ne 0 ] || [ "$expected" -eq 0 ] || [ "$ran" -ne "$expected" ]; then
        row "faults" "$ran of $expected scenarios reported; scripts/check-faults.py exited $status" fail
      fi
      ;;
    load)
      scripts/check-load.sh "$bin" 2>&1 | tee "$logs/load.log"
      status=${PIPESTATUS[0]}
      read -r _ rate p50 p99 errors connections redemptions verdict <<<"$(grep '^load ' "$logs/load.log" | tail -1)"
      [ "$status" -ne 0 ] || [ "${redemptions:-0}" = 0 ] && verdict=fail
      row "load (wrk, ${CHECK_LOAD_SECONDS:-60} s)" \
        "${rate:-?} req/s at $connections connections, p50 $p50 ms, p99 $p99 ms, $errors 5xx, $redemptions redemptions checked" \
        "${verdict:-fail}"
      ;;
    pgbouncer)
      if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
        sudo=$([ "$(id -u)" = 0 ] || echo sudo)
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq pgbouncer
      fi
      { swift build --build-tests && LOYALTY_TEST_PGBOUNCER=1 swift test --skip-build \
          --filter 'LoyaltyServerTests|ClusterTests.TwoInstanceTests'; } 2>&1 | tee "$logs/pgbouncer.log"
      status=${PIPESTATUS[0]}
      tests=$(grep -oE 'Test run with [0-9]+ tests' "$logs/pgbouncer.log" | tail -1 | grep -oE '[0-9]+')
      failing=$(grep -cE '^✘ Test .*(failed|recorded an issue)' "$logs/pgbouncer.log")
      verdict=pass
      [ "$status" -ne 0 ] || [ "${tests:-0}" = 0 ] && verdict=fail
      row "pgbouncer (server tests)" \
        "${tests:-0} tests with the pool behind $(/usr/sbin/pgbouncer --version 2>/dev/null | head -1) (transaction pooling), $failing issues" \
        "$verdict"
      ;;
    radio)
      make -s test-deps
      radio_suites='LiveRadioTests'
      # CI set: a guest that cannot boot fails each test instead of letting it return early.
      { swift build --build-tests && LOYALTY_LIVE_RADIO=full CI=true swift test --skip-build --filter "$radio_suites"; } 2>&1 \
        | tee "$logs/radio.log"
      status=${PIPESTATUS[0]}
      # Live checks are the test functions that reached a guest ("live check ran: NAME"), against every
      # function of the suites.
      expected=$(swift test list --skip-build 2>/dev/null | grep -cE "\.($radio_suites)/")
      ran=$(sed -n 's/^live check ran: //p' "$logs/radio.log" | sort -u | wc -l)
      failing=$(grep -cE '^✘ Test .*(failed|recorded an issue)' "$logs/radio.log")
      verdict=pass
      [ "$status" -ne 0 ] || [ "$expected" -eq 0 ] || [ "$ran" -ne "$expected" ] && verdict=fail
      row "radio (guest kernel)" "$ran of $expected live checks ran through the kernel's Bluetooth stack, $failing issues" "$verdict"
      ;;
    cluster)
      { swift build --build-tests && LOYALTY_CLUSTER_CHECK=full swift test --skip-build \
          --filter 'ClusterFailoverTests|CatalogCheckFailoverTests'; } 2>&1 \
        | tee "$logs/cluster.log"
      status=${PIPESTATUS[0]}
      # One line per run: "cluster NAME figures...".
      runs=0
      while read -r _ name figure; do
        runs=$((runs + 1))
        case $name in
          sigkill) test=sigkilledPrimaryLosesNoAcknowledgedOperation ;;
          sigstop) test=sigstoppedPrimaryLosesNoAcknowledgedOperation ;;
          throughput) test=throughputOfOneAndTwoInstances ;;
          etcd-gone) test=etcdGoneLeavesThePrimaryWriting ;;
          catalog-check) test=listenersFollowTheNewPrimaryAndNoStale304FollowsAWrite ;;
          *) test=asynchronousStandbyLosesAcknowledgedCommits ;;
        esac
        verdict=pass
        grep -qE "^✘ Test ${test}\(\)" "$logs/cluster.log" && verdict=fail
        row "cluster $name" "${figure%%: acknowledged *}" "$verdict"
      done < <(grep '^cluster ' "$logs/cluster.log")
      if [ "$status" -ne 0 ] || [ "$runs" -lt 7 ]; then
        row "cluster" "$runs of 7 runs reported; the tests exited $status" fail
      fi
      ;;
    *) echo "unknown part '$part'" >&2; exit 64 ;;
  esac
  echo "   ($((SECONDS - started)) s)"
done

echo
printf '%-26s  %-84s  %s\n' part figure verdict
printf '%-26s  %-84s  %s\n' ---- ------ -------
failed=0
for entry in "${rows[@]}"; do
  IFS=$'\t' read -r part figure verdict <<<"$entry"
  printf '%-26s  %-84s  %s\n' "$part" "$figure" "$verdict"
  [ "$verdict" = pass ] || failed=1
done
exit $failed

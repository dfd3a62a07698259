#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets of Fuzz/ (ASan + coverage, release with testability) and runs each
# for FUZZ_SECONDS, seeded from Tests/Fixtures. Prints one line per target: executions, crashes, corpus.
# Harnesses are -Onone so a failed precondition prints its message. A crash leaves its input in
# .build/fuzz/crashes/<target>/ and makes this script exit 1; kept crashes live in Fuzz/regressions/<target>/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"hci-event advertising-data btsnoop request-body proxy-header"}
fixtures="$root/Tests/Fixtures"
build="$root/.build/fuzz"
# Coverage for libFuzzer and ASan, but not libFuzzer's main: the build also links the package's build tools
# (embed-migrations), which keep their own. The harnesses' link adds libFuzzer.
flags=(-Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
  -Xswiftc -enable-testing)

# Instrumented module objects, in their own scratch directory so the ordinary build is untouched.
for module in Beacons LoyaltyServer; do
  swift build -c release --scratch-path "$build/spm" --target "$module" "${flags[@]}" >"$build-$module.log" 2>&1 \
    || { cat "$build-$module.log"; exit 1; }
done
products="$build/spm/release"
# A module's objects are its current sources' (SwiftPM's list): a renamed file's old object stays behind.
objects() {
  for module in "$@"; do
    while read -r source; do
      [ -n "$source" ] && echo "$products/$module.build/$(basename "$source").o"
    done <"$products/$module.build/sources"
  done
}

link() {  # link TARGET SOURCE MODULES... [-l libraries]
  local name=$1 source=$2; shift 2
  local modules=() libraries=()
  for item in "$@"; do [[ $item == -l* ]] && libraries+=("$item") || modules+=("$item"); done
  swiftc -sanitize=fuzzer,address -parse-as-library -Onone -I "$products/Modules" \
    -I "$root/Sources/CMicroHTTPD" -I "$root/Sources/CLibPQ" -I "$root/Sources/CCrypto" -I "$root/Sources/CZlib" -Xcc -I/usr/include/postgresql \
    "$source" $(objects "${modules[@]}") "${libraries[@]}" -o "$build/$name-fuzzer" 2>"$build/$name-link.log" \
    || { cat "$build/$name-link.log"; exit 1; }
}
link hci-event "$root/Fuzz/HCIEventFuzzer.swift" SystemCalls Beacons
link advertising-data "$root/Fuzz/AdvertisingDataFuzzer.swift" SystemCalls Beacons
link btsnoop "$root/Fuzz/BTSnoopFuzzer.swift" SystemCalls Beacons
link request-body "$root/Fuzz/RequestBodyFuzzer.swift" Arguments CivilCalendar Digest Geofencing JSONCoding LoyaltyAPI \
  Compression HTTPServer Postgres SystemCalls LoyaltyServer -lpq -lmicrohttpd -lcrypto -lz
link proxy-header "$root/Fuzz/ProxyProtocolHeaderFuzzer.swift" SystemCalls Compression HTTPServer -lmicrohttpd -lz

rm -rf "$build/seeds" && python3 "$root/Fuzz/seeds.py" "$fixtures" "$build/seeds"
failed=0
printf '%-18s %12s %10s %8s %8s\n' target executions exec/s crashes corpus
for target in $targets; do
  corpus="$build/corpus/$target" crashes="$build/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  max_len=4096
  [ "$target" = btsnoop ] && max_len=65536
  log="$build/$target.log"
  set +e
  "$build/$target-fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" "$build/seeds/$target" $(ls -d "$root/Fuzz/regressions/$target" 2>/dev/null) >"$log" 2>&1
  status=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  found=$(ls "$crashes" | wc -l)
  printf '%-18s %12s %10s %8s %8s\n' "$target" "${runs:-0}" "${rate:-0}" "$found" "$(ls "$corpus" | wc -l)"
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    failed=1
    grep -m3 -E 'ERROR|Fatal error|Precondition failed|==[0-9]+==' "$log" | sed 's/^/    /' || true
  fi
done
exit $failed

#!/usr/bin/env bash
# make check, API part: schemathesis against openapi.yaml on a live loyalty-server with its own embedded
# PostgreSQL. Every operation, every check, auth filled in per security scheme, CHECK_API_EXAMPLES examples
# per operation. Prints "api <operations> <test cases> <failures> <5xx>" last; exits 1 on any failure.
set -euo pipefail
source "$(dirname "$0")/check-lib.sh"
bin=$1
examples=${CHECK_API_EXAMPLES:-50}
# The version `make check` pins (SCHEMATHESIS_VERSION): each release adds checks.
installed=$(python3 -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null || true)
if [ "$installed" != "${SCHEMATHESIS_VERSION:?run through make check, which pins schemathesis}" ]; then
  python3 -m pip install -q "schemathesis==$SCHEMATHESIS_VERSION" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "schemathesis==$SCHEMATHESIS_VERSION"
fi
work=$(scratch_dir)
trap 'stop_server; rm -rf "$work"' EXIT
port=$(free_port)
base="http://127.0.0.1:$port"
export LOYALTY_ADMIN_TOKEN="check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
start_server "$bin" "$work/server" "$port"

# Credentials made beforehand: one retailer key for the retailer operations and another for rotateKey (which
# invalidates the key it is called with); a device of a second account for revokeDevice, so that the stateful
# phase, which revokes the ids GET /v1/devices lists, cannot revoke the token the rest of the run uses; a third
# account for deleteAccount, which ends its token.
python3 "$check_root/scripts/provision.py" "$base" "$LOYALTY_ADMIN_TOKEN" --retailers 2 --offers 3 --devices 3 \
  >"$work/credentials.json"
retailer_key=$(json_field retailers.0.key <"$work/credentials.json")
rotated_key=$(json_field retailers.1.key <"$work/credentials.json")
device_token=$(json_field devices.0 <"$work/credentials.json")
revoking_token=$(json_field devices.1 <"$work/credentials.json")
deleting_token=$(json_field devices.2 <"$work/credentials.json")

cat >"$work/schemathesis.toml" <<TOML
[auth.openapi.operatorToken]
bearer = "$LOYALTY_ADMIN_TOKEN"
[auth.openapi.retailerKey]
bearer = "$retailer_key"
[auth.openapi.deviceToken]
bearer = "$device_token"

[[operations]]
include-operation-id = "rotateKey"
headers = { Authorization = "Bearer $rotated_key" }

# Devices the run links join the first account, which this token cannot see: 404, as documented ("or not
# the caller's"), which ensure_resource_availability would count as a created resource gone missing.
[[operations]]
include-operation-id = "revokeDevice"
headers = { Authorization = "Bearer $revoking_token" }
checks.ensure_resource_availability.enabled = false

# The first delete ends the account and its token: every later call is the documented 401.
[[operations]]
include-operation-id = "deleteAccount"
headers = { Authorization = "Bearer $deleting_token" }
checks.ensure_resource_availability.enabled = false
checks.positive_data_acceptance.expected-statuses = ["2xx", "401"]

# The pattern cannot bound a sighting cursor's major and minor to 0..65535: out of range is 422, as documented.
[[operations]]
include-operation-id = "exportSightings"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "422"]

# A cursor is opaque: the schema can say what it looks like, not that this server issued it, so a
# well-formed one it never issued answers 400 (bad_request) and one from a past generation 410.
# radius_km needs near (422 naming radius_km): OpenAPI 3.0 cannot say that one parameter needs another.
[[operations]]
include-operation-id = "catalog"
checks.positive_data_acceptance.expected-statuses = ["2xx", "304", "400", "401", "403", "404", "410", "422"]
[[operations]]
include-operation-id = "listSeen"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "410"]

# JSON Schema cannot say "ends_at after starts_at", nor that a date-time with its offset applied must fall
# in 1970..9999 (the range the server stores; a sighting's heard_at too): such bodies are schema-valid and
# answered 422, as documented.
[[operations]]
include-operation-id = "putOffer"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]
[[operations]]
include-operation-id = "addSeen"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]

# A CSV's rules (a header naming major, minor and title; a row per offer) are not JSON Schema's: a body the
# schema allows, the empty one first, is refused 422 with its problems listed by line, as documented.
[[operations]]
include-operation-id = "importOffers"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]

# A range that starts and ends at the same minute is empty (422), which a pattern cannot say; a key exchange's
# first EID and service key are checked against the service's own derivation (422 naming the field).
[[operations]]
include-operation-id = "putPreferences"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]
[[operations]]
include-operation-id = "registerBeacon"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

[[operations]]
include-operation-id = "resolveSightings"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Redeeming an offer its retailer removed (the fuzzer deletes offers too) answers 410 offer_unavailable.
[[operations]]
include-operation-id = "redeem"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "410"]
TOML

# One worker: with two, hypothesis's threads race in ast.parse, whose recursion counter Python 3.11 shares
# between threads (CPython gh-106905): a spurious "AST constructor recursion depth mismatch" then fails an
# operation now and then, as a runtime error of the run and not of the server.
set +e
(cd "$work" && schemathesis --config-file "$work/schemathesis.toml" run "$check_root/openapi.yaml" --url "$base" \
  --checks all --max-examples "$examples" --workers 1 --no-color --seed "${CHECK_API_SEED:-1}" \
  --report ndjson --report-dir "$work/report") >"$work/schemathesis.out" 2>&1
status=$?
set -e
grep -v '^$' "$work/schemathesis.out" | sed -n '/ERRORS\|FAILURES/,$p' | head -200
server_errors=$(grep -c '"status_code": *5[0-9][0-9]' "$work"/report/*.ndjson 2>/dev/null || true)
operations=$(sed -n 's/^ *Tested: *//p' "$work/schemathesis.out" | tail -1)
cases=$(sed -n 's/^ *\([0-9]*\) generated.*/\1/p' "$work/schemathesis.out" | tail -1)
failures=$(sed -n 's/.* found \([0-9]*\) unique failure.*/\1/p' "$work/schemathesis.out" | tail -1)
echo "api ${operations:-0} ${cases:-0} ${failures:-0} ${server_errors:-0}"
exit $status

# Shared by the scripts/check-*.sh parts of `make check`: sourced, not run.
# A loyalty-server with its own embedded PostgreSQL in a scratch directory, and psql on that PostgreSQL.

check_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
server_pid=""

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# scratch_dir: a directory the embedded PostgreSQL (run as `postgres` when we are root) can reach.
scratch_dir() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/loyalty-check.XXXXXX")
  chmod 711 "$dir"
  echo "$dir"
}

# start_server BIN_DIR DATA_DIR PORT: runs loyalty-server in the background, waits until it listens.
start_server() {
  local bin=$1 data=$2 port=$3
  # No rate limits: the load and API checks' clients all come from 127.0.0.1.
  "$bin/loyalty-server" --listen "127.0.0.1:$port" --data-dir "$data" --no-rate-limits >>"$data.out" 2>>"$data.log" &
  server_pid=$!
  for _ in $(seq 1 300); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$server_pid" 2>/dev/null || { tail -20 "$data.log" >&2; return 1; }
    sleep 0.1
  done
  echo "loyalty-server did not start on port $port" >&2
  return 1
}

# stop_server: SIGTERM (graceful: it stops its PostgreSQL too) and wait.
stop_server() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}

# json_field PATH < JSON: the value at a dotted path such as retailers.0.key.
json_field() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value[int(key)] if key.isdigit() else value[key]
print(value)' "$1"
}

# The embedded PostgreSQL of a server started with DATA_DIR, as its owner (`postgres` when we are root).
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_bin=/usr/lib/postgresql/15/bin
server_psql() {  # server_psql DATA_DIR SQL
  as_postgres "$pg_bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$1/pg/run" -U postgres -d postgres -c "$2"
}
server_psql_stdin() {  # server_psql_stdin DATA_DIR < SQL
  as_postgres "$pg_bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$1/pg/run" -U postgres -d postgres
}

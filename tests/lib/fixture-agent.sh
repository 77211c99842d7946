# SPDX-License-Identifier: Apache-2.0
# An agent on a fixture with traffic, for the tests and pictures that need
# a live one without a testbed (sourced, bash):
#   . tests/lib/fixture-agent.sh
#   fixture_agent_start PATHWISE FIXTURES_DIR TMPDIR [SERVE_ARGS...]
# copies the tcp2-6.12 fixture to TMPDIR/sys and starts
#   - a writer that advances its two paths' block stat files with the clock:
#     nvme0c0n1 at 400 read + 100 write IOPS of 1-2 ms, nvme0c1n1 at 200 +
#     50 of 10-20 ms, so scoring marks nvme0c1n1 degraded;
#   - `pathwise serve --bpf=off --interval=500ms --path.sysfs=TMPDIR/sys` on a
#     free 127.0.0.1 port with SERVE_ARGS, waiting until /healthz answers
#     (curl with FIXTURE_CURL_ARGS, e.g. credentials).
# Sets FIXTURE_PORT and FIXTURE_URL (http://127.0.0.1:PORT/) and appends the
# two processes to the caller's `pids` array, which the caller kills on
# exit. Returns 1 with the reason on stderr when serve does not come up.
# Needs root (--path.sysfs binds the tree over /sys), curl, python3.

fixture_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

fixture_agent_start() {
  local pw=$1 fix=$2 tmp=$3
  shift 3
  cp -a "$fix/tcp2-6.12/sys" "$tmp/sys" || { echo "fixture copy failed" >&2; return 1; }
  local ctl=$tmp/sys/devices/virtual/nvme-fabrics/ctl
  # The writer sets each path's stat (reads, read ms, writes, write ms) from
  # the time elapsed since it started, about 10 times a second, atomically
  # (rename), so the agent never reads half a file and the rates hold
  # however slowly a loaded host runs the loop.
  (
    stat() { # FILE READS READ_MS WRITES WRITE_MS
      printf '%8d 0 %8d %8d %8d 0 %8d %8d 0 %8d %8d 0 0 0 0 0 0\n' \
        "$2" $(($2 * 8)) "$3" "$4" $(($4 * 8)) "$5" $(($2 + $4)) $(($3 + $5)) >"$1.tmp"
      mv -f "$1.tmp" "$1"
    }
    start=${EPOCHREALTIME/./}
    while :; do
      ms=$(((${EPOCHREALTIME/./} - start) / 1000))
      # per second: 400 reads of 1 ms, 100 writes of 2 ms; 200 of 10 ms, 50 of 20 ms
      stat "$ctl/nvme0/nvme0c0n1/stat" $((ms * 400 / 1000)) $((ms * 400 / 1000)) \
        $((ms * 100 / 1000)) $((ms * 200 / 1000))
      stat "$ctl/nvme1/nvme0c1n1/stat" $((ms * 200 / 1000)) $((ms * 2000 / 1000)) \
        $((ms * 50 / 1000)) $((ms * 1000 / 1000))
      sleep 0.1
    done
  ) &
  pids+=($!)
  local p pid _
  FIXTURE_PORT=""
  for _ in $(seq 1 10); do
    p=$(fixture_free_port)
    "$pw" serve --web.listen-address="127.0.0.1:$p" --interval=500ms --bpf=off \
      --path.sysfs="$tmp/sys" "$@" 2>"$tmp/serve.err" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 50); do
      curl -fs ${FIXTURE_CURL_ARGS:-} "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 &&
        { FIXTURE_PORT=$p; break; }
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n $FIXTURE_PORT ]] && break
  done
  [[ -n $FIXTURE_PORT ]] || { echo "serve did not come up: $(cat "$tmp/serve.err")" >&2; return 1; }
  FIXTURE_URL=http://127.0.0.1:$FIXTURE_PORT/
}

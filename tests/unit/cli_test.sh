#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end checks of the pathwise binary (label `unit`; needs root for
# --path.sysfs, curl and promtool).
#   cli_test.sh PATHWISE FIXTURES_DIR GOLDEN_DIR
set -uo pipefail
PW=$1
FIX=$2
GOLDEN=$3
failures=0
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

for tool in promtool curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (scripts/setup-deps)" >&2; exit 1; }
done

# expect_usage PATTERN ARGS...: exit 2, exactly one line on stderr matching
# PATTERN, nothing on stdout.
expect_usage() {
  local pat=$1 rc=0
  shift
  "$PW" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc != 2 || $lines != 1 || -s $tmp/out ]] || ! grep -qE -e "$pat" "$tmp/err"; then
    fail "pathwise $* -> rc=$rc, $lines stderr lines (want 2, 1):"
    cat "$tmp/err" >&2
  else
    ok "pathwise $* -> 2: $(cat "$tmp/err")"
  fi
}

expect_usage '^pathwise: unknown flag --bogus' --bogus
expect_usage '^pathwise: unknown flag --bogus' snapshot --bogus=1
expect_usage 'invalid value "abc" for --interval' --interval=abc
expect_usage 'for --interval: must be positive' serve --interval=0s
expect_usage 'invalid value "maybe" for --bpf' --bpf=maybe
expect_usage 'for --duration: must not be negative' snapshot --duration=-1s
expect_usage 'snapshot wants prometheus or json' snapshot --format=xml
expect_usage 'topology wants text or json' topology --format=prometheus
expect_usage 'does not apply to .pathwise topology.' topology --duration=1s
expect_usage 'does not apply to .pathwise serve.' serve --format=json
expect_usage 'unknown command "frobnicate"' frobnicate
expect_usage 'unexpected argument "extra"' snapshot extra
expect_usage '--web.listen-address needs a value' --web.listen-address
expect_usage 'for --log.level' --log.level=loud
expect_usage 'for --ewma-shift: want 0 to 16' --ewma-shift=17
expect_usage 'invalid value "x" for --ewma-shift' snapshot --ewma-shift=x
expect_usage 'for --degraded-ratio: must be a number above 1' --degraded-ratio=1
expect_usage 'for --degraded-ratio: must be a number above 1' --degraded-ratio=nan
expect_usage 'for --degraded-windows: must be >= 1' --degraded-windows=0
expect_usage 'for --idle-windows: must be >= 1' snapshot --idle-windows=-3
expect_usage 'for --recover-windows: must be >= 1' --recover-windows=0
expect_usage 'for --reseed-ratio: want 0 \(off\) or above 1' --reseed-ratio=0.5
expect_usage 'does not apply to .pathwise topology.' topology --ewma-shift=2
expect_usage 'lab: --scenario FILE is required' lab
expect_usage "lab: --policies: unknown policy 'fastest'" lab --scenario=x --policies=fastest
expect_usage 'lab: flag --interval does not apply to .pathwise lab.' lab --scenario=x --interval=1s
expect_usage "^pathwise: unknown flag --bogus \(see 'pathwise serve --help'\)$" --bogus
expect_usage "^pathwise: unknown flag --intervall: did you mean --interval\? \(see 'pathwise snapshot --help'\)$" snapshot --intervall=1s
expect_usage "unknown flag --sysfs-rot: did you mean --path.sysfs\?" topology --sysfs-rot=/x
expect_usage 'unknown command "snapshto": did you mean snapshot\?' snapshto
# Flag names take - and _ alike, and errors name the flag as typed.
expect_usage 'invalid value "x" for --ewma-shift' --ewma_shift=x
expect_usage '^pathwise: flag --probe_interval does not apply' topology --probe_interval=1s
expect_usage 'unexpected argument "topology"' serve topology
expect_usage 'invalid value "maybe" for --bpf-stats' --bpf-stats=maybe
expect_usage '^pathwise: invalid value "abc" for --web.listen-address: ' --web.listen-address=abc
expect_usage '^pathwise: invalid value ":99999" for --web.listen-address: ' serve --web.listen-address=:99999
expect_usage 'for --web.listen-address: bad IPv4 address "999.1.1.1"' --web.listen-address=999.1.1.1:9877

# --version / --help
out=$("$PW" --version) && [[ $out =~ ^pathwise\ [0-9]+\.[0-9]+\.[0-9]+\ \(revision\ .+\)$ ]] \
  && ok "--version: $out" || fail "--version printed '$out'"
# The binary's help: one line per command, no command's flags.
"$PW" --help >"$tmp/help" && (($(wc -l <"$tmp/help") <= 35)) \
  && grep -q '^  snapshot  ' "$tmp/help" && grep -q 'pathwise COMMAND --help' "$tmp/help" \
  && ! grep -q -- '--web.listen-address' "$tmp/help" \
  && ok "--help: $(wc -l <"$tmp/help") lines" || { fail "--help"; cat "$tmp/help" >&2; }
"$PW" help | cmp -s - "$tmp/help" && ok "help" || fail "help differs from --help"
"$PW" serve --help >"$tmp/help" && grep -q -- '--web.listen-address' "$tmp/help" \
  && grep -q -- '--path.sysfs' "$tmp/help" && grep -q -- '--log.format' "$tmp/help" \
  && ! grep -q -- 'listen_address' "$tmp/help" \
  && ok "serve --help" || fail "serve --help"
"$PW" help serve | cmp -s - "$tmp/help" && ok "help serve" || fail "help serve differs from serve --help"
expect_usage 'unknown command "bogus"' help bogus
# A command's help: its own flags only.
"$PW" snapshot --help >"$tmp/help" && grep -q -- '--duration' "$tmp/help" \
  && ! grep -q -- '--web.listen-address' "$tmp/help" \
  && ok "snapshot --help" || fail "snapshot --help"
"$PW" lab --help >"$tmp/help" && grep -q -- '--scenario FILE' "$tmp/help" \
  && ok "lab --help" || fail "lab --help"

# snapshot on every captured fixture and on an empty sysfs: valid exposition.
mkdir -p "$tmp/empty"
# Fixture trees are NAME/sys (tests/fixtures/sysfs/capture.sh).
name_of() { basename "${1%/sys}"; }
for root in "$FIX/tcp2-6.12/sys" "$FIX/pcie2-6.1/sys" "$tmp/empty"; do
  name=$(name_of "$root")
  if [[ ! -d $root ]]; then fail "fixture $root missing"; continue; fi
  if ! "$PW" snapshot --duration=0s --path.sysfs="$root" >"$tmp/$name.prom" 2>"$tmp/$name.err"; then
    fail "snapshot on $name failed: $(cat "$tmp/$name.err")"; continue
  fi
  if promtool check metrics <"$tmp/$name.prom" >"$tmp/promtool.out" 2>&1; then
    ok "promtool check metrics: snapshot of $name"
  else
    fail "promtool on snapshot of $name:"; cat "$tmp/promtool.out" >&2
  fi
  grep -q '^pathwise_collector_success{collector="nvme_topology"} 1$' "$tmp/$name.prom" \
    || fail "$name: nvme_topology collector did not succeed"
done
if [[ -s $tmp/empty.prom ]]; then
  extra=$(grep -v '^#' "$tmp/empty.prom" | grep -Ev '^pathwise_(build_info|collector_duration_seconds|collector_success|sampler_info|topology_changes_total)[{ ]|^pathwise_(multipath_)?subsystems 0$')
  [[ -z $extra ]] && ok "empty sysfs: only build and self metrics" || fail "empty sysfs exported: $extra"
fi
for root in "$FIX/tcp2-6.12/sys" "$FIX/pcie2-6.1/sys"; do
  [[ -d $root ]] || continue
  name=$(name_of "$root")
  grep -c '^pathwise_path_info{' "$tmp/$name.prom" | grep -qx 2 \
    && ok "$name: 2 paths" || fail "$name: want 2 pathwise_path_info series"
  grep -c '^pathwise_controller_state{.*state="live"} 1$' "$tmp/$name.prom" | grep -qx 2 \
    && ok "$name: 2 live controllers" || fail "$name: want 2 live controllers"
  "$PW" snapshot --duration=0s --format=json --path.sysfs="$root" | jq -e '.subsystems | length == 1' >/dev/null \
    && ok "$name: snapshot --format=json" || fail "$name: snapshot --format=json"
  "$PW" topology --format=json --path.sysfs="$root" | jq -e '.subsystems[0].heads[0].paths | length == 2' >/dev/null \
    && ok "$name: topology --format=json" || fail "$name: topology --format=json"
  "$PW" topology --path.sysfs="$root" >"$tmp/topo.txt" && [[ $(grep -c ' |  +- ' "$tmp/topo.txt") == 2 ]] \
    && ok "$name: topology text shows 2 paths" || { fail "$name: topology text"; cat "$tmp/topo.txt" >&2; }
done

# The former flag names still work, each with one deprecation warning (a
# logfmt line); the new names log none.
root="$FIX/tcp2-6.12/sys"
if [[ -d $root ]]; then
  rc=0
  "$PW" snapshot --duration=0s --bpf=off --sysfs_root="$root" --log_level=info \
    >"$tmp/alias.prom" 2>"$tmp/alias.err" || rc=$?
  if [[ $rc == 0 ]] && grep -q '^pathwise_path_info{' "$tmp/alias.prom" \
     && [[ $(grep -c '^ts=[^ ]*Z level=warn msg="flag --sysfs_root is deprecated, use --path.sysfs"$' "$tmp/alias.err") == 1 ]] \
     && [[ $(grep -c 'msg="flag --log_level is deprecated, use --log.level"$' "$tmp/alias.err") == 1 ]]; then
    ok "--sysfs_root and --log_level still parse, one warning each"
  else
    fail "former flag names -> rc=$rc:"; cat "$tmp/alias.err" >&2
  fi
  "$PW" snapshot --duration=0s --bpf=off --path.sysfs="$root" --log.level=info \
    >/dev/null 2>"$tmp/new.err"
  grep -q deprecated "$tmp/new.err" && fail "new names warned: $(cat "$tmp/new.err")" \
    || ok "new names: no deprecation warning"
  # --log.format=json: every stderr line one JSON object.
  "$PW" snapshot --duration=0s --bpf=off --path.sysfs="$root" --log.level=debug \
    --log.format=json --sysfs_root="$root" >/dev/null 2>"$tmp/json.err"
  if [[ -s $tmp/json.err ]] \
     && jq -e -s 'all(.[]; (.ts | test("^[0-9-]+T[0-9:.]+Z$")) and (.level | type == "string") and (.msg | type == "string"))' \
        "$tmp/json.err" >/dev/null \
     && [[ $(jq -s length "$tmp/json.err") == $(wc -l <"$tmp/json.err") ]]; then
    ok "--log.format=json: $(wc -l <"$tmp/json.err") lines, each a JSON object"
  else
    fail "--log.format=json:"; cat "$tmp/json.err" >&2
  fi
fi

# Bytes that are not UTF-8 in sysfs strings (a serial and model copied from
# Identify data, an address) and in an error quoting one (an unknown
# controller state): the exposition stays promtool-clean and the JSON
# documents valid, with U+FFFD for each bad sequence.
if [[ -d $FIX/tcp2-6.12/sys ]]; then
  raw="$tmp/rawbytes"
  cp -a "$FIX/tcp2-6.12" "$raw"
  printf 'SN\xff\xfe42\n' >"$raw/sys/devices/virtual/nvme-subsystem/nvme-subsys0/serial"
  printf 'Model \xc3\n' >"$raw/sys/devices/virtual/nvme-subsystem/nvme-subsys0/model"
  printf 'live\xff\n' >"$raw/sys/devices/virtual/nvme-fabrics/ctl/nvme0/state"
  utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }
  R=$'\xef\xbf\xbd'  # U+FFFD
  if "$PW" snapshot --duration=0s --bpf=off --path.sysfs="$raw/sys" >"$tmp/raw.prom" 2>"$tmp/raw.err"; then
    promtool check metrics <"$tmp/raw.prom" >"$tmp/promtool.out" 2>&1 && utf8 "$tmp/raw.prom" \
      && grep -qF "serial=\"SN$R$R""42\"" "$tmp/raw.prom" \
      && grep -qx 'pathwise_invalid_utf8_label_values 2' "$tmp/raw.prom" \
      && grep -q '^pathwise_collector_success{collector="nvme_topology"} 0$' "$tmp/raw.prom" \
      && ok "raw bytes in sysfs: promtool-clean exposition, 2 label values repaired" \
      || { fail "raw bytes in sysfs: exposition"; cat "$tmp/promtool.out" >&2; grep -a -e serial -e invalid_utf8 -e collector_success "$tmp/raw.prom" >&2; }
  else
    fail "snapshot on raw bytes failed: $(cat "$tmp/raw.err")"
  fi
  for cmd in "snapshot --duration=0s --bpf=off" "topology"; do
    rc=0
    # shellcheck disable=SC2086
    "$PW" $cmd --format=json --path.sysfs="$raw/sys" >"$tmp/raw.json" 2>"$tmp/raw.err" || rc=$?
    if [[ $rc == 0 ]] && utf8 "$tmp/raw.json" \
       && jq -e '.subsystems[0].serial == "SN\ufffd\ufffd42"' "$tmp/raw.json" >/dev/null; then
      ok "raw bytes in sysfs: $cmd --format=json valid"
    else
      fail "raw bytes in sysfs: $cmd --format=json -> rc=$rc: $(cat "$tmp/raw.err")"
    fi
  done
  jq -e '.collectors[0].error | test("unknown controller state \"live\ufffd\"")' \
    < <("$PW" snapshot --duration=0s --bpf=off --format=json --path.sysfs="$raw/sys" 2>/dev/null) >/dev/null \
    && ok "raw bytes in a collector error: valid JSON" || fail "raw bytes in a collector error"
fi

# The golden files are valid expositions too.
for g in "$GOLDEN"/*.prom; do
  if promtool check metrics <"$g" >"$tmp/promtool.out" 2>&1; then
    ok "promtool check metrics: golden $(basename "$g")"
  else
    fail "promtool on golden $g:"; cat "$tmp/promtool.out" >&2
  fi
done

# serve: routes, then the same port again -> "address already in use".
root="$FIX/tcp2-6.12/sys"
[[ -d $root ]] || root="$tmp/empty"
port=""
for _ in $(seq 1 20); do
  p=$((20000 + RANDOM % 40000))
  "$PW" serve --web.listen-address="127.0.0.1:$p" --interval=200ms --path.sysfs="$root" 2>"$tmp/serve.err" &
  pid=$!
  pids+=("$pid")
  alive=0
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && { port=$p; break; }
    kill -0 "$pid" 2>/dev/null || { alive=0; break; }
    alive=1
    sleep 0.1
  done
  # Started but never healthy: that is a failure, not a busy port.
  [[ -n $port || $alive == 1 ]] && break
done
if [[ -z $port ]]; then
  fail "serve never became healthy: $(cat "$tmp/serve.err")"
else
  ok "serve healthy on 127.0.0.1:$port"
  code() { curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$port$1"; }
  [[ $(code /metrics) == 200 ]] && promtool check metrics <"$tmp/body" >/dev/null 2>&1 \
    && ok "GET /metrics 200 and promtool-clean" || fail "GET /metrics"
  [[ $(code /api/v1/topology) == 200 ]] && jq -e '.subsystems' "$tmp/body" >/dev/null \
    && ok "GET /api/v1/topology" || fail "GET /api/v1/topology"
  [[ $(code /) == 200 ]] && grep -q 'href="/metrics"' "$tmp/body" && ok "GET /" || fail "GET /"
  [[ $(code /nope) == 404 ]] && ok "GET /nope 404" || fail "GET /nope"

  # SIGHUP (a reload request, or a closed terminal) is logged and ignored.
  kill -HUP "$pid"
  for _ in $(seq 1 20); do grep -q 'SIGHUP' "$tmp/serve.err" && break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null && [[ $(code /healthz) == 200 ]] &&
     grep -q 'received SIGHUP: ignored' "$tmp/serve.err"; then
    ok "SIGHUP -> logged, still serving"
    grep -vE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=(debug|info|warn|error) msg="' \
      "$tmp/serve.err" >"$tmp/notlogfmt" && { fail "serve log lines not logfmt:"; cat "$tmp/notlogfmt" >&2; } \
      || ok "serve logs logfmt, RFC 3339 UTC timestamps"
  else
    fail "SIGHUP: $(tail -2 "$tmp/serve.err")"
  fi

  rc=0
  "$PW" serve --web.listen-address="127.0.0.1:$port" --path.sysfs="$tmp/empty" >"$tmp/out2" 2>"$tmp/err2" || rc=$?
  if [[ $rc == 1 && $(wc -l <"$tmp/err2") == 1 ]] &&
     grep -qx "pathwise: cannot listen on 127.0.0.1:$port: address already in use" "$tmp/err2"; then
    ok "port in use -> rc 1: $(cat "$tmp/err2")"
  else
    fail "port in use -> rc=$rc:"; cat "$tmp/err2" >&2
  fi

  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [[ $rc == 0 ]] && ok "SIGTERM -> clean exit 0" || fail "SIGTERM -> rc=$rc"
fi

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all CLI checks passed"

#!/usr/bin/env bash
# pathwise serve in the guest answers /metrics and /healthz on a port
# forwarded to the host's 127.0.0.1. Args: PATHWISE_BINARY [testbed options]
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
pw=$1
shift
sig=$(mktemp -d)
trap 'touch "$sig/done"; rm -rf "$sig"' EXIT
port=
for ((try = 0; try < 50; try++)); do
  p=$((20000 + RANDOM % 20000))
  ss -Hltn "sport = :$p" | grep -q . || { port=$p; break; }
done
[[ -n $port ]] || { echo "FAIL: no free port" >&2; exit 1; }
"$here/testbed" run "$@" --share "$sig" --forward "$port:9877" \
  "$here/cases/agent_serve_guest.sh" "$pw" &
tb=$!
fail() {
  echo "FAIL: $*" >&2
  touch "$sig/done"
  wait "$tb"
  exit 1
}
ok=0
for ((i = 0; i < 1200; i++)); do
  kill -0 "$tb" 2>/dev/null || fail "testbed exited before serving"
  if curl -sf --max-time 2 -o "$sig/healthz" "http://127.0.0.1:$port/healthz"; then ok=1; break; fi
  sleep 0.25
done
((ok)) || fail "no /healthz 200 from the guest"
echo "ok: /healthz 200 from the host"
curl -sf --max-time 5 -o "$sig/metrics" "http://127.0.0.1:$port/metrics" || fail "/metrics"
grep -q '^pathwise_path_info{' "$sig/metrics" || fail "/metrics has no pathwise_path_info"
n=$(grep -c '^pathwise_path_info{' "$sig/metrics")
[[ $n == 2 ]] || fail "/metrics has $n paths, expected 2"
promtool check metrics <"$sig/metrics" || fail "promtool check metrics"
echo "ok: /metrics from the host: $n paths, promtool clean"
touch "$sig/done"
wait "$tb"
rc=$?
[[ $rc == 0 ]] || { echo "FAIL: guest exited $rc" >&2; exit 1; }
echo "ok: guest stopped"

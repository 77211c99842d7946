#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pathwise serve in the guest (cases/agent_serve_guest.sh: eBPF sampler,
# round-robin fio load, a netem delay on path 1) answers /metrics and
# /healthz on a port forwarded to the host's 127.0.0.1, and its live page at
# / passes tests/web/live-page-agent.mjs in the host's chromium: both paths
# in the tree, latency (p99 from the eBPF histograms) and IOPS charts with
# plausible points, the delayed path marked degraded. The page's screenshot
# is OUT_DIR/live-page.png.
# One boot for all of it.
#   agent_serve_test.sh PATHWISE_BINARY NODE_WORKDIR OUT_DIR [testbed options]
# NODE_WORKDIR: where tests/web/node-run.sh installs puppeteer-core.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
pw=$1 node_dir=$2 out=$3
shift 3
for t in curl node npm promtool; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is missing (scripts/setup-deps)" >&2; exit 1; }
done
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || { echo "FAIL: chromium is missing (scripts/setup-deps)" >&2; exit 1; }
sig=$(mktemp -d)
trap 'touch "$sig/done"; rm -rf "$sig"' EXIT
mkdir -p "$out"
rm -f "$out/live-page.png"
port=
for ((try = 0; try < 50; try++)); do
  p=$((20000 + RANDOM % 20000))
  ss -Hltn "sport = :$p" | grep -q . || { port=$p; break; }
done
[[ -n $port ]] || { echo "FAIL: no free port" >&2; exit 1; }
tb_args=("$@")
"$here/testbed" run "$@" --out "$out" --share "$sig" --forward "$port:9877" \
  "$here/cases/agent_serve_guest.sh" "$pw" &
tb=$!
# A guest kernel panic (testbed exit 126) is not a failed check: run the
# whole test once more, in a new boot, and say so.
again_after_panic() { # testbed's exit status, its options
  [[ $1 == 126 && -z ${PW_SERVE_AGAIN:-} ]] || return 0
  shift
  echo "agent_serve_test: the guest kernel panicked; running the test once more" >&2
  touch "$sig/done"
  rm -rf "$sig"
  PW_SERVE_AGAIN=1 exec "$0" "$pw" "$node_dir" "$out" "$@"
}
fail() {
  echo "FAIL: $*" >&2
  touch "$sig/done"
  wait "$tb"
  again_after_panic $? "${tb_args[@]}"
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

# The live page, once the guest has the load and the delay in place.
for ((i = 0; i < 600; i++)); do
  [[ -s $sig/ready ]] && break
  kill -0 "$tb" 2>/dev/null || fail "testbed exited before the load ran"
  sleep 0.25
done
[[ -s $sig/ready ]] || fail "the guest never wrote $sig/ready"
read -r healthy delayed delay_ms rate_iops <"$sig/ready"
echo "guest: healthy $healthy, delayed $delayed (+$delay_ms ms), fio at $rate_iops IOPS"
"$here/../web/node-run.sh" "$node_dir" live-page-agent.mjs "http://127.0.0.1:$port/" \
  "$out/live-page.png" "$delay_ms" "$rate_iops" "$healthy" "$delayed" ||
  fail "the live page in chromium"

touch "$sig/done"
wait "$tb"
rc=$?
again_after_panic "$rc" "${tb_args[@]}"
[[ $rc == 0 ]] || { echo "FAIL: guest exited $rc" >&2; exit 1; }
echo "ok: guest stopped"

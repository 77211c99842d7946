#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The live page at / in a real browser (label unit_root: the agent binds a
# captured sysfs tree over /sys, which needs root). An agent serves the
# tcp2-6.12 fixture (a copy, whose two paths' block stat files a writer
# advances with the clock: nvme0c0n1 at 400 read + 100 write IOPS of
# 1-2 ms, nvme0c1n1 at 200 + 50 of 10-20 ms, so scoring marks it degraded: tests/lib/fixture-agent.sh)
# behind --web.config.file basic auth; live-page.mjs drives Debian's
# chromium through puppeteer-core against it and saves a screenshot.
# ~20 s (npm ci the first time). Needs root, chromium, node/npm, htpasswd,
# curl, python3.
#   live_page_test.sh PATHWISE FIXTURES_DIR NODE_WORKDIR SCREENSHOT
set -uo pipefail
PW=$1
FIX=$2
WORK=$3
SHOT=$4
here=$(dirname "$(readlink -f "$0")")
die() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (--path.sysfs)"
for t in htpasswd curl python3 node npm; do
  command -v "$t" >/dev/null || die "$t is missing (scripts/setup-deps)"
done
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || die "chromium is missing (scripts/setup-deps)"

tmp=$(mktemp -d /tmp/pathwise-live.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

hash=$(htpasswd -nbBC 10 oncall 'n1ght' | cut -d: -f2-)
printf 'basic_auth_users:\n  oncall: %s\n' "'$hash'" >"$tmp/web.yml"
# The fixture, its writer and the agent (tests/lib/fixture-agent.sh).
. "$here/../lib/fixture-agent.sh"
FIXTURE_CURL_ARGS="-u oncall:n1ght" fixture_agent_start "$PW" "$FIX" "$tmp" \
  --web.config.file="$tmp/web.yml" || die "fixture agent"
url=$FIXTURE_URL
code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
[[ $code == 401 ]] || die "/ without credentials: HTTP $code, want 401"
echo "ok: / without credentials: 401"

"$here/node-run.sh" "$WORK" live-page.mjs "$url" oncall n1ght "$SHOT"

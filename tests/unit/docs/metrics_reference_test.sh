#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/metrics-reference.md against the code (label unit):
#   1. pathwise_metrics_reference renders every source's families through
#      the exporter and joins them with its table of sources; it fails by
#      itself when a family has no row there or a row no family;
#   2. its output must equal the committed page, byte for byte;
#   3. every family name spelled whole in the exposition's sources appears
#      on the page (a family the generator's snapshots do not populate would
#      otherwise be missing from both the rendering and the table).
#   metrics_reference_test.sh GENERATOR SOURCE_DIR
set -uo pipefail
GEN=$1
SRC=$2
page=$SRC/docs/metrics-reference.md
regen="ninja -C build pathwise_metrics_reference && build/pathwise_metrics_reference > docs/metrics-reference.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$GEN" >"$tmp/reference.md" || fail "pathwise_metrics_reference failed (above)"
[[ -s $tmp/reference.md ]] || fail "pathwise_metrics_reference wrote nothing"
echo "ok: the generator rendered $(grep -c '^| `pathwise_' "$tmp/reference.md") families, each with a source"
[[ -f $page ]] || fail "$page is missing; create it with: $regen"
if ! diff -u "$page" "$tmp/reference.md" >"$tmp/diff"; then
  cat "$tmp/diff" >&2
  fail "docs/metrics-reference.md differs from the code (diff above: - page, + code); regenerate with: $regen"
fi
echo "ok: docs/metrics-reference.md is what the code renders"

missing=()
while read -r name; do
  grep -q "^| \`$name\` |" "$page" || missing+=("$name")
done < <(grep -ohE '"pathwise_[a-z0-9_]+[a-z0-9]"' \
  "$SRC"/exporters/prometheus_*.cc "$SRC"/exporters/http_routes.cc \
  "$SRC"/exporters/prometheus_families.cc "$SRC"/datapath/exposition.cc |
  tr -d '"' | sort -u)
((${#missing[@]} == 0)) ||
  fail "families in the code but not on the page (populate them in agent/metrics_reference_main.cc): ${missing[*]}"
echo "ok: every family name spelled in the exposition's sources is on the page"

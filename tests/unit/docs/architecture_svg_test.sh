#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/images/architecture.svg is what Graphviz renders from
# docs/architecture.dot (label unit; ~1 s): renders the .dot (failing on any
# error or warning of dot) and compares it with the committed SVG.
#   architecture_svg_test.sh SOURCE_DIR
set -uo pipefail
SRC=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v dot >/dev/null || fail "dot is missing (graphviz: scripts/setup-deps)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dot -Tsvg "$SRC/docs/architecture.dot" -o "$tmp/architecture.svg" 2>"$tmp/dot.err" ||
  fail "dot failed on docs/architecture.dot: $(cat "$tmp/dot.err")"
[[ ! -s $tmp/dot.err ]] || fail "dot warned on docs/architecture.dot: $(cat "$tmp/dot.err")"
echo "ok: docs/architecture.dot renders without a warning"
if ! diff -u "$SRC/docs/images/architecture.svg" "$tmp/architecture.svg" >"$tmp/diff"; then
  head -40 "$tmp/diff" >&2
  fail "docs/images/architecture.svg is not what docs/architecture.dot renders; regenerate with: scripts/make-pictures --only architecture"
fi
echo "ok: docs/images/architecture.svg is what docs/architecture.dot renders"

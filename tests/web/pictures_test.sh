#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The docs' pictures can be made (label unit_root: the agent binds a
# captured sysfs tree over /sys, which needs root): scripts/make-pictures
# into OUT_DIR, then each picture checked to be what it claims: an SVG that
# xmllint parses, PNGs at least as large as their subject. live-page.png is
# unit.live_page's (the same test, tests/web/live_page_test.sh, that
# make-pictures runs for it), so it is not made twice here. ~60 s.
#   pictures_test.sh BUILD_DIR OUT_DIR
set -uo pipefail
BUILD=$1
OUT=$2
here=$(dirname "$(readlink -f "$0")")
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xmllint >/dev/null || fail "xmllint is missing (scripts/setup-deps)"
rm -rf "$OUT"
"$here/../../scripts/make-pictures" --build "$BUILD" --out "$OUT" \
  --only architecture --only top --only dashboard-panel || fail "make-pictures failed (above)"
xmllint --noout "$OUT/architecture.svg" || fail "architecture.svg is not well-formed"
grep -q '<title>pathwise</title>' "$OUT/architecture.svg" || fail "architecture.svg: not the pathwise graph"
echo "ok: architecture.svg"
# png FILE MIN_WIDTH MIN_HEIGHT: a PNG (signature, IHDR) at least that large.
png() {
  python3 - "$@" <<'PY'
import struct, sys
f, w_min, h_min = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    b = open(f, 'rb').read(24)
except OSError as e:
    sys.exit(f"{f}: {e}")
if b[:8] != b'\x89PNG\r\n\x1a\n' or b[12:16] != b'IHDR':
    sys.exit(f"{f}: not a PNG")
w, h = struct.unpack('>II', b[16:24])
if w < w_min or h < h_min:
    sys.exit(f"{f}: {w}x{h}, want at least {w_min}x{h_min}")
print(f"ok: {f.rsplit('/', 1)[-1]} {w}x{h}")
PY
}
# top: 120x14 cells of a 14 px monospace font; the panel: a 900x320 chart.
png "$OUT/top.png" 900 200 || fail "top.png"
png "$OUT/dashboard-panel.png" 900 320 || fail "dashboard-panel.png"

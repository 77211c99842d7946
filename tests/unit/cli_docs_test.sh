#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated flag references against the binary (label `unit`):
#   cli_docs_test.sh PATHWISE SOURCE_DIR
# - docs/flags.md as committed is what `pathwise help --markdown` writes;
# - the man page (`pathwise help --man`) is clean for groff -ww and
#   mandoc -Tlint, and for every command lists exactly the flags
#   `pathwise COMMAND --help` lists (--help itself is in the page's
#   DESCRIPTION once);
# - the files users run (deploy/, docs/, the README, scripts, demo/,
#   bench/ and the testbed) use no former flag name.
set -uo pipefail
PW=$1
SRC=$2
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
for tool in groff mandoc; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (scripts/setup-deps)" >&2; exit 1; }
done

# 1. docs/flags.md is generated, never edited.
if ! "$PW" help --markdown >"$tmp/flags.md"; then
  fail "pathwise help --markdown failed"
elif diff -u "$SRC/docs/flags.md" "$tmp/flags.md" >"$tmp/flags.diff"; then
  ok "docs/flags.md is what pathwise help --markdown writes"
else
  fail "docs/flags.md differs from the binary's flags; regenerate it:"
  echo "  build/pathwise help --markdown > docs/flags.md" >&2
  head -40 "$tmp/flags.diff" >&2
fi

# 2. The man page: no warnings from either formatter.
"$PW" help --man >"$tmp/pathwise.1" || fail "pathwise help --man failed"
groff -man -Tutf8 -ww -z "$tmp/pathwise.1" 2>"$tmp/groff.err"
[[ -s $tmp/groff.err ]] && { fail "groff warnings:"; cat "$tmp/groff.err" >&2; } || ok "groff -ww: no warnings"
if mandoc -Tlint -W warning "$tmp/pathwise.1" >"$tmp/lint" 2>&1; then
  ok "mandoc -Tlint: clean"
else
  fail "mandoc -Tlint:"; cat "$tmp/lint" >&2
fi

# 3. Each command's flags: `--help` and the man page's section agree.
# Rendered, so the flags are the ones a reader sees.
MANWIDTH=300 groff -man -Tascii -rLL=300n -P-cbou "$tmp/pathwise.1" 2>/dev/null >"$tmp/man.txt"
commands=$(sed -nE 's/^PATHWISE ([A-Z]+)$/\1/p' "$tmp/man.txt" | tr 'A-Z' 'a-z')
[[ $(wc -w <<<"$commands") -ge 7 ]] || fail "man page lists commands: '$commands'"
for cmd in $commands; do
  upper=${cmd^^}
  awk -v h="PATHWISE $upper" '$0 == h {on=1; next} /^[A-Z]/ {on=0}
    on && /^       --/ {sub(/^ +/, ""); sub(/[= ].*/, ""); print}' "$tmp/man.txt" |
    sort -u >"$tmp/man.$cmd"
  "$PW" "$cmd" --help >"$tmp/help.$cmd" 2>&1 || { fail "pathwise $cmd --help failed"; continue; }
  grep -oE '^ +(-[a-z], ?)?--[a-z0-9.-]+' "$tmp/help.$cmd" | sed -E 's/^ +(-[a-z], ?)?//' |
    grep -vx -- '--help' | sort -u >"$tmp/cli.$cmd"
  if [[ ! -s $tmp/cli.$cmd ]]; then
    fail "pathwise $cmd --help lists no flags"
  elif diff "$tmp/cli.$cmd" "$tmp/man.$cmd" >"$tmp/d.$cmd"; then
    ok "$cmd: --help and man page agree on $(wc -l <"$tmp/cli.$cmd") flags"
  else
    fail "$cmd: --help (<) and man page (>) disagree:"; cat "$tmp/d.$cmd" >&2
  fi
done

# 4. No former flag name where users copy from, except on a line that says
# it is one. A test that proves an alias still parses lives under
# tests/unit, which is not searched. systemd's own --log-level (beside its
# --log-target) is not ours.
cd "$SRC" || exit 1
former='--(listen[_-]address|sysfs[_-]root|log[_-]level)([^a-z_-]|$)'
if grep -rnE -- "$former" README.md docs deploy demo scripts bench/*.sh \
     tests/testbed tests/deploy tests/web tests/bpf 2>/dev/null \
     | grep -viE 'former|deprecat|--log-target' >"$tmp/former"; then
  fail "former flag names in use (run scripts/flags-rename on these files):"
  cat "$tmp/former" >&2
else
  ok "no former flag names in deploy/, docs/, README, scripts, demo/, bench/, tests"
fi

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all flag reference checks passed"

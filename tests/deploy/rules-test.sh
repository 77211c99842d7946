#!/usr/bin/env bash
# promtool on the shipped rules: check rules, the unit tests (promtool test
# rules), and the `for:` override (deploy/prometheus/override-for.sh) whose
# copy must still pass `check rules` and differ only in `for:` lines (all of
# them, or with --alert only the named alerts').
set -euo pipefail
root=$(dirname "$(readlink -f "$0")")/../..
cd "$root/deploy/prometheus"
promtool check rules pathwise-rules.yml
promtool test rules tests/*.test.yml
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
./override-for.sh 5s > "$tmp/rules.yml"
promtool check rules "$tmp/rules.yml"
changed=$(diff pathwise-rules.yml "$tmp/rules.yml" | grep '^>' || true)
if [[ -z $changed ]] || grep -qv '^>[[:space:]]*for: 5s$' <<<"$changed"; then
  echo "override-for.sh changed something other than for: lines:"; echo "$changed"; exit 1
fi
n_for=$(grep -c '^[[:space:]]*for:' pathwise-rules.yml)
[[ $(wc -l <<<"$changed") -eq $n_for ]] || { echo "override missed a for: line"; exit 1; }
if ./override-for.sh bogus >/dev/null 2>&1; then echo "override accepted a bad duration"; exit 1; fi
# --alert: only the named alerts' for: lines change (what the e2e case uses).
./override-for.sh --alert PathwisePathDegraded --alert PathwiseSinglePathLeft 5s > "$tmp/some.yml"
promtool check rules "$tmp/some.yml"
changed=$(diff pathwise-rules.yml "$tmp/some.yml" | grep '^[<>]' || true)
want=$(printf '%s\n' '<         for: 1m' '<         for: 30s' '>         for: 5s' '>         for: 5s')
[[ $(sort <<<"$changed") == "$(sort <<<"$want")" ]] || { echo "override-for.sh --alert changed:"; echo "$changed"; exit 1; }
for name in PathwisePathDegraded PathwiseSinglePathLeft; do
  awk -v a="$name" '$0 ~ "alert: " a "$" { f = 1 } f && /for:/ { print; exit }' "$tmp/some.yml" | grep -q 'for: 5s$' ||
    { echo "override-for.sh --alert $name did not set its for:"; exit 1; }
done
if ./override-for.sh --alert NoSuchAlert 5s >/dev/null 2>&1; then echo "override accepted an unknown alert"; exit 1; fi
echo "rules: check, unit tests and for: override ok"

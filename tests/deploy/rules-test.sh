#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# promtool on the shipped rules: check rules, the unit tests (promtool test
# rules), and the `for:` override (deploy/prometheus/override-for.sh) whose
# copy must still pass `check rules` and differ only in `for:` lines (all of
# them, or with --alert only the named alerts'), and the fleet thresholds'
# override (override-threshold.sh): its copy changes only the named
# records' expr and passes tests/override/*.test.yml, which fail on the
# shipped thresholds.
set -euo pipefail
root=$(dirname "$(readlink -f "$0")")/../..
cd "$root/deploy/prometheus"
promtool check rules pathwise-rules.yml
promtool test rules tests/*.test.yml
# The fleet cases are generated; a hand edit would be lost at the next run.
if command -v python3 >/dev/null; then tests/gen-fleet-tests.py --check; else echo "python3 missing: fleet cases not checked for staleness"; fi
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
# Fleet thresholds: override-threshold.sh, then the cases written for the
# overridden values; the same cases must fail on the shipped file.
th=(pathwise_target_port_degraded_hosts:min_ratio=0.75 pathwise_target_port_degraded_hosts:min_count=3
  fleet:pathwise_host_degraded_paths:min_ratio=0.75 pathwise_host_degraded_target_ports:min_count=3)
mkdir "$tmp/th"
./override-threshold.sh "${th[@]}" > "$tmp/th/rules.yml"
promtool check rules "$tmp/th/rules.yml"
changed=$(diff pathwise-rules.yml "$tmp/th/rules.yml" | grep '^>' || true)
want=$(printf '%s\n' '>         expr: vector(0.75)' '>         expr: vector(3)' '>         expr: vector(0.75)' '>         expr: vector(3)')
[[ $changed == "$want" ]] || { echo "override-threshold.sh changed:"; echo "$changed"; exit 1; }
cp tests/override/*.test.yml "$tmp/th/"
promtool test rules "$tmp/th/"*.test.yml
cp pathwise-rules.yml "$tmp/th/rules.yml"
if promtool test rules "$tmp/th/"*.test.yml >/dev/null 2>&1; then
  echo "the override cases pass on the shipped thresholds: they test nothing"; exit 1
fi
for bad in nosuch:min_count=3 pathwise_target_port_degraded_hosts:min_count=x PathwisePathDegraded=1; do
  if ./override-threshold.sh "$bad" >/dev/null 2>&1; then echo "override-threshold.sh accepted $bad"; exit 1; fi
done
echo "rules: check, unit tests, for: and threshold overrides ok"

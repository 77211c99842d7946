#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Alertmanager inhibit example (deploy/alertmanager/inhibit-example.yml):
# `amtool check-config`, then Debian's Alertmanager running it, given a
# target-side and a host-side alert and per-path alerts with the labels the
# rules give them; exactly the per-path alerts of the degraded port's hosts
# to that port, and those of the degraded host, must be muted.
# Exit 77 (skipped) without amtool and prometheus-alertmanager
# (scripts/setup-deps installs them). About 2 s.
set -euo pipefail
root=$(dirname "$(readlink -f "$0")")/../..
cfg=$root/deploy/alertmanager/inhibit-example.yml
am=$(command -v prometheus-alertmanager || command -v alertmanager || true)
if ! command -v amtool >/dev/null || [[ -z $am ]]; then
  echo "amtool or alertmanager missing (Debian: prometheus-alertmanager): skipped"
  exit 77
fi
amtool check-config "$cfg"

tmp=$(mktemp -d)
am_pid=
trap 'kill $am_pid 2>/dev/null; wait $am_pid 2>/dev/null; rm -rf "$tmp"' EXIT
# A port nobody answers on (tests run in parallel): try a few at random.
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && continue
  "$am" --config.file="$cfg" --storage.path="$tmp" --web.listen-address="127.0.0.1:$port" \
    --cluster.listen-address= >"$tmp/am.log" 2>&1 &
  am_pid=$!
  url=http://127.0.0.1:$port
  for _ in $(seq 100); do
    curl -sf -o /dev/null "$url/-/ready" && break 2
    kill -0 $am_pid 2>/dev/null || break
    sleep 0.1
  done
  kill $am_pid 2>/dev/null; wait $am_pid 2>/dev/null; am_pid=
done
[[ -n $am_pid ]] || { cat "$tmp/am.log"; echo "alertmanager did not start"; exit 1; }

nqn=nqn.2026-11.io.pathwise:fleet a=traddr=10.0.0.1,trsvcid=4420 b=traddr=10.0.1.1,trsvcid=4420
# name|labels (JSON object without alertname); names starting with "muted-"
# must be inhibited, the others not. Per-path labels as the rules give them
# (job, instance, subsystem, head, path, controller, nqn, address).
pp() { printf '{"job":"pathwise","instance":"%s","subsystem":"nvme-subsys0","head":"nvme0n1","path":"%s","controller":"%s","nqn":"%s","address":"%s","severity":"warning"}' "$@"; }
cases=(
  "source-port|PathwiseTargetPortDegraded|{\"nqn\":\"$nqn\",\"address\":\"$a\",\"severity\":\"warning\"}"
  "source-host|PathwiseHostPathsDegraded|{\"job\":\"pathwise\",\"instance\":\"node-h:9877\",\"severity\":\"warning\"}"
  "muted-degraded-a|PathwisePathDegraded|$(pp node-a:9877 nvme0c0n1 nvme0 "$nqn" "$a")"
  "muted-failed-a|PathwisePathFailed|$(pp node-b:9877 nvme0c0n1 nvme0 "$nqn" "$a")"
  "muted-failovers-a|PathwisePathFailovers|$(pp node-c:9877 nvme1c0n1 nvme1 "$nqn" "$a")"
  "muted-host|PathwisePathDegraded|$(pp node-h:9877 nvme0c1n1 nvme1 "$nqn" "$b")"
  "other-port|PathwisePathDegraded|$(pp node-a:9877 nvme0c1n1 nvme1 "$nqn" "$b")"
  "other-nqn|PathwisePathDegraded|$(pp node-d:9877 nvme1c0n1 nvme1 nqn.other "$a")"
  "other-host-job|PathwisePathDegraded|$(pp node-h:9877 nvme2c0n1 nvme2 "$nqn" "$b" | sed 's/"job":"pathwise"/"job":"other"/')"
  "no-port|PathwisePathFailed|{\"job\":\"pathwise\",\"instance\":\"node-e:9877\",\"path\":\"nvme0c0n1\",\"severity\":\"warning\"}"
  "consequence|PathwiseSinglePathLeft|$(pp node-a:9877 nvme0c1n1 nvme1 "$nqn" "$b")"
)
body=$(for c in "${cases[@]}"; do
  IFS='|' read -r id name labels <<<"$c"
  jq -c --arg id "$id" --arg n "$name" '{labels: (. + {alertname: $n, case: $id})}' <<<"$labels"
done | jq -s -c .)
curl -sf -XPOST -H 'Content-Type: application/json' "$url/api/v2/alerts" -d "$body" >/dev/null

# The inhibitor sees the source alerts asynchronously: poll until the state
# is what the cases say, or fail after 10 s with the last answer.
want=$(printf '%s\n' "${cases[@]}" | cut -d'|' -f1 | awk '{ print $0 " " (/^muted-/ ? "suppressed" : "active") }' | sort)
for _ in $(seq 100); do
  got=$(curl -sf "$url/api/v2/alerts" | jq -r '.[] | "\(.labels.case) \(.status.state)"' | sort)
  [[ $got == "$want" ]] && break
  sleep 0.1
done
if [[ $got != "$want" ]]; then
  echo "inhibition differs from the example's intent:"; diff <(echo "$want") <(echo "$got") || true
  exit 1
fi
echo "$got"
echo "alertmanager: inhibit example valid; it mutes exactly the explained per-path alerts"

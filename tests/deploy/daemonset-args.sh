#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints what a rendered pathwise DaemonSet gives one of its containers, one
# item per line, for tests that run the agent the way the DaemonSet does:
#   daemonset-args.sh [--args|--caps|--containers] [--container NAME] [KUSTOMIZATION_DIR|RENDERED.yaml]
# --args (default): the container's args; --caps: its capabilities.add
# (none for a privileged container); --containers: every DaemonSet
# container, as DAEMONSET/CONTAINER. NAME defaults to pathwise, the agent.
# The manifests are those of KUSTOMIZATION_DIR (default deploy/kubernetes,
# the base) rendered by the real kustomize, `kubectl kustomize`, or a file
# it rendered. Read with yq (Debian's: jq over YAML). A container that is not
# there is an error, never an empty list.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
mode=--args container=pathwise src=$here/../../deploy/kubernetes
while (($#)); do
  case $1 in
    --args | --caps | --containers) mode=$1 ;;
    --container) container=$2; shift ;;
    -*) echo "usage: $0 [--args|--caps|--containers] [--container NAME] [DIR|FILE]" >&2; exit 2 ;;
    *) src=$1 ;;
  esac
  shift
done
for t in yq kubectl; do
  command -v $t >/dev/null || { echo "daemonset-args: $t missing (scripts/setup-deps installs yq; kubectl comes with the machine image)" >&2; exit 1; }
done
if [[ -d $src ]]; then
  manifests=$(kubectl kustomize "$src") || { echo "daemonset-args: kubectl kustomize $src failed" >&2; exit 1; }
else
  manifests=$(cat "$src")
fi
case $mode in
  --containers)
    out=$(yq -r 'select(.kind == "DaemonSet") | .metadata.name as $d | .spec.template.spec.containers[] | "\($d)/\(.name)"' <<<"$manifests") ;;
  *)
    sel='select(.kind == "DaemonSet") | .spec.template.spec.containers[] | select(.name == $c)'
    n=$(yq -s --arg c "$container" "[.[] | $sel] | length" <<<"$manifests")
    [[ $n == 1 ]] || { echo "daemonset-args: $n DaemonSet containers named '$container' in $src" >&2; exit 1; }
    if [[ $mode == --args ]]; then
      out=$(yq -r --arg c "$container" "$sel | .args[]" <<<"$manifests")
    else
      out=$(yq -r --arg c "$container" "$sel | .securityContext.capabilities.add // [] | .[]" <<<"$manifests")
    fi ;;
esac
[[ -n $out || $mode == --caps ]] || { echo "daemonset-args: nothing for $mode in $src" >&2; exit 1; }
[[ -z $out ]] || printf '%s\n' "$out"

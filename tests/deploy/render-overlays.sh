#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders deploy/kubernetes (as base) and every overlay under
# deploy/kubernetes/overlays with the real kustomize (`kubectl kustomize`)
# into OUTDIR, and writes what each DaemonSet container runs:
#   render-overlays.sh OUTDIR
#   OUTDIR/NAME.yaml                 the rendered manifests
#   OUTDIR/NAME/CONTAINER.args       its args, one a line
#   OUTDIR/NAME/CONTAINER.caps       its capabilities.add (empty: none)
# The testbed cases read these in the guest, which then needs neither
# kubectl nor a YAML parser (tests/testbed/cases/deploy_overlays.sh).
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
k=$here/../../deploy/kubernetes
out=${1:?usage: $0 OUTDIR}
rm -rf "$out"
mkdir -p "$out"
dirs=("base=$k")
for d in "$k"/overlays/*/; do d=${d%/}; dirs+=("${d##*/}=$d"); done
for nd in "${dirs[@]}"; do
  name=${nd%%=*} dir=${nd#*=}
  kubectl kustomize "$dir" >"$out/$name.yaml" || { echo "render-overlays: kubectl kustomize $dir failed" >&2; exit 1; }
  mkdir -p "$out/$name"
  mapfile -t cs < <("$here/daemonset-args.sh" --containers "$out/$name.yaml")
  ((${#cs[@]} > 0)) || { echo "render-overlays: no DaemonSet in $dir" >&2; exit 1; }
  for dc in "${cs[@]}"; do
    c=${dc#*/}
    "$here/daemonset-args.sh" --args --container "$c" "$out/$name.yaml" >"$out/$name/$c.args"
    "$here/daemonset-args.sh" --caps --container "$c" "$out/$name.yaml" >"$out/$name/$c.caps"
    echo "$name: $dc: $(paste -sd' ' "$out/$name/$c.args")"
  done
done

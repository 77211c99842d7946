#!/usr/bin/env bash
# Prints what deploy/kubernetes/base/daemonset.yaml gives the pathwise container,
# one item per line, for tests that run the agent the way the DaemonSet does:
#   daemonset-args.sh [--args|--caps] [DAEMONSET_YAML]
# --args (default): the container's args; --caps: capabilities.add.
# A small awk reader of the file's own layout (block list of args, flow list
# of capabilities), so it works without node; validate.mjs checks that it
# agrees with a real YAML parse of the rendered manifests.
set -euo pipefail
mode=${1:---args}
file=${2:-$(dirname "$(readlink -f "$0")")/../../deploy/kubernetes/base/daemonset.yaml}
case $mode in
  --args)
    awk '
      /^[[:space:]]*args:[[:space:]]*$/ { inargs = 1; match($0, /^[[:space:]]*/); ind = RLENGTH; next }
      inargs {
        if ($0 ~ /^[[:space:]]*#/ || $0 ~ /^[[:space:]]*$/) next
        match($0, /^[[:space:]]*/)
        if (RLENGTH < ind || $0 !~ /^[[:space:]]*- /) { exit }
        sub(/^[[:space:]]*- /, ""); gsub(/^["'\'']|["'\'']$/, ""); print
      }' "$file" ;;
  --caps)
    sed -nE 's/^[[:space:]]*add:[[:space:]]*\[([^]]*)\].*/\1/p' "$file" | tr ',' '\n' | tr -d ' ' | grep . ;;
  *) echo "usage: $0 [--args|--caps] [FILE]" >&2; exit 2 ;;
esac

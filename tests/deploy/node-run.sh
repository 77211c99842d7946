#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one of tests/deploy's Node scripts with its npm dependencies:
#   tests/deploy/node-run.sh WORKDIR SCRIPT.mjs [ARGS...]   (or --test FILE.mjs)
# WORKDIR also gets dashboards/'s generator (as WORKDIR/dashboards/): it
# imports Grafana's foundation SDK, so it runs there, next to node_modules
# (dashboards/generate.sh).
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
work=$1
dash=$here/../../dashboards
mkdir -p "$work/dashboards/lib"
cp -f "$dash/generate.mjs" "$work/dashboards/"
cp -f "$dash"/lib/*.mjs "$dash/lib/tsconfig.json" "$work/dashboards/lib/"
exec "$here/../lib/node-run.sh" "$here" "$@"

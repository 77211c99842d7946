#!/usr/bin/env bash
# Dashboards: JSON and field checks plus query extraction (check-dashboards.mjs),
# then every extracted panel query parsed by promtool as a recording rule.
#   tests/deploy/dashboards-test.sh NODE_WORKDIR OUT_DIR
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
"$here/node-run.sh" "$1" check-dashboards.mjs "$here/../.." "$2"
promtool check rules "$2/dashboard-queries.rules.yml"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Dashboards: the generator type-checked (tsc), JSON and field checks plus
# query extraction (check-dashboards.mjs), then every extracted panel query
# parsed by promtool as a recording rule.
#   tests/deploy/dashboards-test.sh NODE_WORKDIR OUT_DIR
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
# The generator's types first: every builder call against the foundation
# SDK's declarations (tsc --checkJs, dashboards/lib/tsconfig.json; ~2 s).
"$here/node-run.sh" "$1" node_modules/typescript/bin/tsc -p dashboards/lib/tsconfig.json
"$here/node-run.sh" "$1" check-dashboards.mjs "$here/../.." "$2"
promtool check rules "$2/dashboard-queries.rules.yml"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rewrites dashboards/*.json from generate.mjs, or with --check exits 1 if
# one is stale. generate.mjs needs tests/deploy's npm dependencies (Grafana's
# foundation SDK), which tests/deploy/node-run.sh installs with `npm ci` into
# PATHWISE_NODE_DIR (default build/tests/deploy/node, the one ctest uses).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
exec "$root/tests/deploy/node-run.sh" "${PATHWISE_NODE_DIR:-$root/build/tests/deploy/node}" \
  dashboards/generate.mjs --dir "$root/dashboards" "$@"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one of tests/web's Node scripts with its npm dependencies (uPlot,
# puppeteer-core):
#   tests/web/node-run.sh WORKDIR SCRIPT.mjs [ARGS...]   (or --test FILE.mjs)
here=$(dirname "$(readlink -f "$0")")
exec "$here/../lib/node-run.sh" "$here" "$@"

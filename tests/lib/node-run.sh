#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a Node script of a test folder with that folder's npm dependencies:
#   tests/lib/node-run.sh SRCDIR WORKDIR SCRIPT.mjs [ARGS...]   (or --test FILE.mjs...)
# WORKDIR (in the build tree) gets SRCDIR's package.json, package-lock.json
# and *.mjs; `npm ci` runs there when the lockfile changed since the last
# install, so the source tree gets no node_modules. puppeteer-core
# downloads no browser: the tests drive Debian's chromium. Needs node >= 18
# and npm (scripts/setup-deps installs them). The folders' own node-run.sh
# call this after copying anything else their scripts import.
set -euo pipefail
src=$1 work=$2
shift 2
mkdir -p "$work"
cp -f "$src"/package.json "$src"/package-lock.json "$src"/*.mjs "$work/"
# A folder's .npmrc (npm settings its install needs) goes along.
if [[ -f $src/.npmrc ]]; then cp -f "$src/.npmrc" "$work/"; else rm -f "$work/.npmrc"; fi
stamp=$work/node_modules/.pathwise-lock.sha256
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  # Serialise concurrent installs (ctest -j) on the same work directory.
  exec 9>"$work/.npm-ci.lock"
  flock 9
  if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    (cd "$work" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
  exec 9>&-
fi
cd "$work"
if [[ $1 == --test ]]; then
  shift
  exec node --test "$@"
fi
script=$1
shift
exec node "$script" "$@"

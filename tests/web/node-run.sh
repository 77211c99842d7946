#!/usr/bin/env bash
# Runs one of tests/web's Node scripts with its npm dependencies (uPlot,
# puppeteer-core), as tests/deploy/node-run.sh does for its own:
#   tests/web/node-run.sh WORKDIR SCRIPT.mjs [ARGS...]   (or --test FILE.mjs)
# `npm ci` runs in WORKDIR (build tree) when the lockfile changed since the
# last install. puppeteer-core downloads no browser: the tests drive
# Debian's chromium.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
work=$1; shift
mkdir -p "$work"
cp -f "$here"/package.json "$here"/package-lock.json "$here"/*.mjs "$work/"
stamp=$work/node_modules/.pathwise-lock.sha256
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  exec 9>"$work/.npm-ci.lock"
  flock 9
  if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    (cd "$work" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
  exec 9>&-
fi
cd "$work"
if [[ $1 == --test ]]; then
  shift
  exec node --test "$@"
fi
script=$1; shift
exec node "$script" "$@"

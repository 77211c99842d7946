#!/usr/bin/env bash
# Runs one of tests/deploy's Node scripts with its npm dependencies.
#   tests/deploy/node-run.sh WORKDIR SCRIPT.mjs [ARGS...]   (or --test FILE.mjs)
# WORKDIR (in the build tree) gets package.json, package-lock.json, the
# scripts and dashboards/'s generator (as WORKDIR/dashboards/); `npm ci` runs there when the lockfile changed since the last
# install, so the source tree gets no node_modules. Needs node >= 18 and npm
# (scripts/setup-deps installs them).
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
work=$1; shift
mkdir -p "$work"
for f in package.json package-lock.json "$here"/*.mjs; do
  cp -f "$here/$(basename "$f")" "$work/"
done
# The dashboards' generator imports Grafana's foundation SDK: it runs from
# here, next to node_modules (dashboards/generate.sh).
dash=$here/../../dashboards
mkdir -p "$work/dashboards/lib"
cp -f "$dash/generate.mjs" "$work/dashboards/"
cp -f "$dash"/lib/*.mjs "$dash/lib/tsconfig.json" "$work/dashboards/lib/"
stamp=$work/node_modules/.pathwise-lock.sha256
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  # Serialise concurrent installs (ctest -j) on the same work directory.
  exec 9>"$work/.npm-ci.lock"
  flock 9
  if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
  exec 9>&-
fi
cd "$work"
if [[ $1 == --test ]]; then
  exec node --test "$2"
fi
script=$1; shift
exec node "$script" "$@"

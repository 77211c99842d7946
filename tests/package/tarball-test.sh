#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The release tarball (scripts/release-tarball, its own build directory):
# - its name carries the version; it unpacks to pathwise-VERSION-linux-amd64/
#   with bin/pathwise, the units (ExecStart /usr/local/bin/pathwise, where
#   its README puts it), rules, dashboards, docs and licences;
# - the binary needs none of the libraries linked statically (DT_NEEDED),
#   and fewer shared libraries than the build tree's binary; its `ldd` (the
#   ones that remain) is printed and shipped in DYNAMIC-LIBS.txt;
#   NOTICE.static names each static library's Debian package, and each
#   package's copyright file is there;
# - the binary runs: --version, `lab` on a shipped scenario, `snapshot` and
#   `serve` (/metrics over HTTP) on a captured sysfs tree.
# Args: SOURCE_DIR RELEASE_BUILD_DIR VERSION DYNAMIC_BINARY FIXTURE_SYS
set -euo pipefail
src=$(readlink -f "$1") build=$2 version=$3 dynbin=$4 fix=$5
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
# The build's output goes to a log, shown only if it fails, so that a
# failure below is what this test prints first.
mkdir -p "$build"
tarball=$("$src/scripts/release-tarball" "$build" "$build/release" 2>"$build/release-tarball.log" | tail -1) ||
  { tail -50 "$build/release-tarball.log"; fail "scripts/release-tarball (log: $build/release-tarball.log)"; }
name=pathwise-$version-linux-amd64
[[ $(basename "$tarball") == "$name.tar.gz" ]] || fail "tarball name $(basename "$tarball")"
t=$(mktemp -d)
agent=""
trap '[[ -n $agent ]] && kill $agent 2>/dev/null; rm -rf "$t"' EXIT
tar -xzf "$tarball" -C "$t"
r=$t/$name
for f in bin/pathwise lib/systemd/system/pathwise.service lib/systemd/system/pathwise-datapath.service \
         share/pathwise/prometheus/pathwise-rules.yml share/pathwise/dashboards/pathwise-overview.json \
         share/pathwise/scenarios/symmetric.scn share/doc/pathwise/LICENSE share/doc/pathwise/NOTICE \
         share/doc/pathwise/NOTICE.static share/doc/pathwise/DYNAMIC-LIBS.txt share/man/man1/pathwise.1; do
  [[ -e $r/$f ]] || fail "the tarball lacks $f"
done
grep -q '^ExecStart=/usr/local/bin/pathwise ' "$r/lib/systemd/system/pathwise.service" ||
  fail "unit ExecStart: $(grep ^ExecStart "$r/lib/systemd/system/pathwise.service")"
ok "$(basename "$tarball"): $(du -k "$tarball" | cut -f1) KiB, $(find "$r" -type f | wc -l) files"

bin=$r/bin/pathwise
needed=$(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
static_sonames='^lib(bpf|elf|nvme|uring|absl_.*|microhttpd|yaml-cpp|crypt|protobuf|ncursesw?|tinfo)\.so'
bad=$(grep -E "$static_sonames" <<<"$needed" || true)
[[ -z $bad ]] || fail "linked dynamically though static: $bad"
for a in libbpf.a libelf.a liburing.a libmicrohttpd.a libyaml-cpp.a libprotobuf.a libabsl_base.a; do
  grep -qE "^$a +[a-z0-9.-]+ [^?]" "$r/share/doc/pathwise/NOTICE.static" ||
    fail "NOTICE.static lacks $a with its package"
done
for p in $(awk 'NF == 3 { print $2 }' "$r/share/doc/pathwise/NOTICE.static" | sort -u); do
  [[ -s $r/share/doc/pathwise/static-licenses/$p.copyright ]] || fail "no copyright file for $p"
done
ldd_rel=$(ldd "$bin") ldd_dyn=$(ldd "$dynbin")
n_rel=$(grep -c '=>' <<<"$ldd_rel") n_dyn=$(grep -c '=>' <<<"$ldd_dyn")
! grep -q 'not found' <<<"$ldd_rel" || fail "ldd: $ldd_rel"
((n_rel < n_dyn)) || fail "the release binary loads $n_rel shared libraries, the build tree's $n_dyn"
echo "ldd of the release binary ($n_rel shared libraries; the build tree's loads $n_dyn):"
sed 's/^/    /' <<<"$ldd_rel"
echo "DT_NEEDED: $(paste -sd' ' <<<"$needed")"
ok "static: $(grep -c '\.a ' "$r/share/doc/pathwise/NOTICE.static") archives, none of them in DT_NEEDED"

v=$("$bin" --version) && grep -qF "$version" <<<"$v" || fail "--version: $v"
"$bin" lab --scenario="$r/share/pathwise/scenarios/symmetric.scn" >"$t/lab.txt" 2>&1 ||
  { cat "$t/lab.txt"; fail "lab"; }
grep -q 'round-robin' "$t/lab.txt" || { cat "$t/lab.txt"; fail "lab printed no round-robin row"; }
"$bin" snapshot --duration=0s --bpf=off --path.sysfs="$fix" >"$t/snap.prom" 2>"$t/snap.err" ||
  fail "snapshot: $(cat "$t/snap.err")"
grep -q '^pathwise_path_info{' "$t/snap.prom" || fail "snapshot: no pathwise_path_info"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --web.listen-address="127.0.0.1:$port" --bpf=off --path.sysfs="$fix" >"$t/serve.log" 2>&1 &
agent=$!
# The agent listens before its first collection (a busy port fails fast);
# /healthz answers 200 once a collection has succeeded, and only then does
# /metrics hold the paths (a loaded machine takes a while to get there).
got=1
for _ in $(seq 300); do
  curl -fsS "http://127.0.0.1:$port/healthz" -o /dev/null 2>/dev/null && { got=0; break; }
  kill -0 $agent 2>/dev/null || break
  sleep 0.1
done
((got == 0)) || { cat "$t/serve.log"; fail "serve: no /healthz 200 on :$port within 30 s"; }
curl -fsS "http://127.0.0.1:$port/metrics" -o "$t/metrics.txt" || fail "serve: GET /metrics"
grep -q '^pathwise_path_info{' "$t/metrics.txt" || fail "serve: no pathwise_path_info"
kill -TERM $agent; wait $agent || fail "serve: exit status $? on SIGTERM"
agent=""
ok "the release binary runs: $v; lab on symmetric.scn; snapshot and serve on a captured sysfs"

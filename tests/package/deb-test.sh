#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The .deb as cpack builds it from this build tree (packaging/CMakeLists.txt):
# - control: package pathwise, the project's version, amd64, and Depends
#   from dpkg-shlibdeps: the runtime libraries (libc6, libbpf1,
#   libmicrohttpd12, ...) and no -dev, compiler or test package;
# - contents: exactly the expected files (binary, both units, rules,
#   Alertmanager example, dashboards, web config example, active-mode
#   drop-in, scenarios, docs, licences), all under /usr, nothing from the
#   build tree; the units' ExecStart names /usr/bin/pathwise;
# - maintainer scripts: postinst, prerm, postrm (sh -n clean);
# - unpacked by dpkg -x, its binary runs (--version says the version).
# Leaves OUT_DIR/pathwise.deb for the testbed's install test.
# Args: BUILD_DIR OUT_DIR VERSION
set -euo pipefail
build=$(readlink -f "$1") out=$2 version=$3
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
for t in cpack dpkg-deb dpkg-shlibdeps; do
  command -v $t >/dev/null || fail "$t missing (scripts/setup-deps build)"
done
rm -rf "$out" && mkdir -p "$out"
cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 ||
  { cat "$out/cpack.log"; fail "cpack"; }
mapfile -t debs < <(find "$out" -maxdepth 1 -name '*.deb')
((${#debs[@]} == 1)) || fail "cpack made ${#debs[@]} .deb files: ${debs[*]}"
deb=${debs[0]}
[[ $(basename "$deb") == "pathwise_${version}_amd64.deb" ]] || fail "file name $(basename "$deb")"
ln -sf "$(basename "$deb")" "$out/pathwise.deb"
ok "cpack: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == pathwise ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), want $version"
[[ $(field Architecture) == amd64 ]] || fail "Architecture: $(field Architecture)"
depends=$(field Depends)
echo "Depends: $depends"
names=$(tr ',|' '\n\n' <<<"$depends" | sed -E 's/^ +//; s/ .*//')
for lib in libc6 libstdc++6 libbpf1 libmicrohttpd12 libgnutls30 liburing2 \
           libabsl20220623 libfmt9 libyaml-cpp0.7 libssl3 libcurl4 libprotobuf32; do
  grep -qxF "$lib" <<<"$names" || fail "Depends lacks $lib"
done
bad=$(grep -E -- '-dev$|^(gcc|g\+\+|clang.*|cmake|ninja-build|qemu.*|prometheus|chromium|nodejs|npm|libgtest.*|libgmock.*|libbenchmark.*)$' <<<"$names" || true)
[[ -z $bad ]] || fail "Depends has build or test packages: $bad"
grep -q 'systemd' <<<"$(field Recommends)" || fail "Recommends: $(field Recommends)"
ok "control: pathwise $version amd64, Depends the runtime libraries only ($(tr ',' '\n' <<<"$depends" | wc -l) packages)"

want=(
  ./usr/bin/pathwise
  ./usr/share/man/man1/pathwise.1
  ./usr/lib/systemd/system/pathwise.service
  ./usr/lib/systemd/system/pathwise-datapath.service
  ./usr/share/pathwise/systemd/pathwise.service.d/active.conf
  ./usr/share/pathwise/prometheus/pathwise-rules.yml
  ./usr/share/pathwise/alertmanager/inhibit-example.yml
  ./usr/share/pathwise/web-config.example.yaml
  ./usr/share/pathwise/dashboards/pathwise-fleet.json
  ./usr/share/pathwise/dashboards/pathwise-head.json
  ./usr/share/pathwise/dashboards/pathwise-overview.json
  ./usr/share/pathwise/dashboards/pathwise-path.json
  ./usr/share/pathwise/scenarios/delay30.scn
  ./usr/share/doc/pathwise/README.md
  ./usr/share/doc/pathwise/LICENSE
  ./usr/share/doc/pathwise/NOTICE
  ./usr/share/doc/pathwise/LICENSES/Apache-2.0.txt
  ./usr/share/doc/pathwise/LICENSES/GPL-2.0-only.txt
  ./usr/share/doc/pathwise/LICENSES/BSD-2-Clause.txt
  ./usr/share/doc/pathwise/docs/architecture.md
)
dpkg-deb -c "$deb" >"$out/contents.txt"
files=$(awk '$1 !~ /^d/ {print $6}' "$out/contents.txt")
for f in "${want[@]}"; do
  grep -qxF "$f" <<<"$files" || fail "the .deb lacks $f"
done
stray=$(grep -vE '^\./usr/(bin/pathwise|lib/systemd/system/|share/pathwise/|share/doc/pathwise/|share/man/)' <<<"$files" || true)
[[ -z $stray ]] || fail "files outside the expected places: $stray"
! grep -q "$build" "$out/contents.txt" || fail "build-tree paths in the .deb"
ok "contents: $(wc -l <<<"$files") files, the ${#want[@]} expected ones among them, all under /usr/{bin,lib/systemd,share}"

x=$out/x
dpkg-deb -x "$deb" "$x"
for u in pathwise.service pathwise-datapath.service; do
  grep -q '^ExecStart=/usr/bin/pathwise ' "$x/usr/lib/systemd/system/$u" ||
    fail "$u ExecStart: $(grep ^ExecStart "$x/usr/lib/systemd/system/$u")"
  ! grep -q /usr/local "$x/usr/lib/systemd/system/$u" || fail "$u still names /usr/local"
done
grep -q '^ExecStart=/usr/bin/pathwise ' "$x/usr/share/pathwise/systemd/pathwise.service.d/active.conf" ||
  fail "active.conf ExecStart"
ok "units and drop-in: ExecStart=/usr/bin/pathwise"

ctl=$out/control
dpkg-deb -e "$deb" "$ctl"
for s in postinst prerm postrm; do
  [[ -x $ctl/$s ]] || fail "no executable $s"
  sh -n "$ctl/$s" || fail "$s: sh -n"
done
ok "maintainer scripts postinst, prerm, postrm"

v=$("$x/usr/bin/pathwise" --version 2>&1) || fail "the packaged binary: $v"
grep -qF "$version" <<<"$v" || fail "--version: '$v', want $version in it"
ok "the packaged binary runs: $v"

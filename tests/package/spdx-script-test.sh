#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/spdx on a scratch tree: every kind of file without a header fails
# --check and is named; --fix writes the right header (after a shebang or a
# doctype, the dual licence on the BPF side: the programs and every header
# they include, also through another header) and leaves the rest of each file
# and its mode as they were; then --check passes and a second --fix changes
# nothing. A misplaced header, a wrong licence and a BPF program that does
# not declare "Dual BSD/GPL" fail; excluded paths are never named.
# Args: SPDX_SCRIPT
set -euo pipefail
spdx=$(readlink -f "$1")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }

cd "$t"
git init -q .
mkdir -p bpf agent scripts exporters/web/vendor tests/fixtures deploy/chart/templates
printf 'int main() { return 0; }\n' >agent/main.cc
printf '#pragma once\nint f();\n' >agent/f.h
printf '#!/usr/bin/env bash\necho hi\n' >scripts/run && chmod 755 scripts/run
printf '#!/usr/bin/env python3\nimport sys\n\n# SPDX-License-Identifier: Apache-2.0\n' >scripts/gen.py
printf '#include "shared.h"\n#include "maps.bpf.h"\nchar LICENSE[] SEC("license") = "Dual BSD/GPL";\n' >bpf/prog.bpf.c
printf '#define M 0\n' >bpf/maps.bpf.h
printf '#include "inner.h"\n#define X 1\n' >bpf/shared.h
printf '#define Y 2\n' >bpf/inner.h
printf '// SPDX-License-Identifier: Apache-2.0\nint g;\n' >bpf/user.cc
printf '<!DOCTYPE html>\n<html></html>\n' >exporters/web/index.html
printf 'body { margin: 0; }\n' >exporters/web/live.css
printf 'groups: []\n' >deploy/rules.yml
printf 'add_library(x x.cc)\n' >CMakeLists.txt
printf 'var a;\n' >exporters/web/vendor/lib.min.js
printf '#!/bin/sh\n' >tests/fixtures/data.sh
printf '{}\n' >deploy/x.json
# A Helm chart: its templates take a template comment, the rest as usual.
printf 'apiVersion: v2\nname: c\nversion: 0.1.0\n' >deploy/chart/Chart.yaml
printf 'kind: ConfigMap\n' >deploy/chart/templates/cm.yaml
printf '{{- define "c.name" -}}c{{- end -}}\n' >deploy/chart/templates/_helpers.tpl
printf 'Installed.\n' >deploy/chart/templates/NOTES.txt
printf -- '{{- /* SPDX-License-Identifier: Apache-2.0 */ -}}\nkind: Service\n' >deploy/chart/templates/svc.yaml
git add -A
cp -a . ../orig

want_named="agent/main.cc agent/f.h scripts/run scripts/gen.py bpf/prog.bpf.c
  bpf/maps.bpf.h bpf/shared.h bpf/inner.h exporters/web/index.html
  exporters/web/live.css deploy/rules.yml CMakeLists.txt deploy/chart/Chart.yaml
  deploy/chart/templates/cm.yaml deploy/chart/templates/_helpers.tpl
  deploy/chart/templates/NOTES.txt"
rc=0
out=$("$spdx" --check --root .) || rc=$?
((rc == 1)) || fail "--check on files without headers: exit $rc, want 1: $out"
for f in $want_named; do
  grep -q "^$f: " <<<"$out" || fail "--check did not name $f: $out"
done
for f in exporters/web/vendor/lib.min.js tests/fixtures/data.sh deploy/x.json bpf/user.cc \
    deploy/chart/templates/svc.yaml; do
  ! grep -q "^$f:" <<<"$out" || fail "--check named $f, which it must not: $out"
done
grep -q '^scripts/gen.py: SPDX-License-Identifier on line 4, want line 2' <<<"$out" ||
  fail "misplaced header not reported as such: $out"
ok "--check exit 1 naming the 16 files without a right header, none of the excluded or right ones"

"$spdx" --fix --root . >/dev/null || fail "--fix failed"
"$spdx" --check --root . >/dev/null || fail "--check after --fix: $("$spdx" --check --root .)"
line() { sed -n "${2}p" "$1"; }
expect_line() {
  [[ $(line "$1" "$2") == "$3" ]] || fail "$1 line $2: '$(line "$1" "$2")', want '$3'"
}
expect_line agent/main.cc 1 '// SPDX-License-Identifier: Apache-2.0'
expect_line agent/f.h 1 '// SPDX-License-Identifier: Apache-2.0'
expect_line scripts/run 1 '#!/usr/bin/env bash'
expect_line scripts/run 2 '# SPDX-License-Identifier: Apache-2.0'
expect_line scripts/gen.py 1 '#!/usr/bin/env python3'
expect_line scripts/gen.py 2 '# SPDX-License-Identifier: Apache-2.0'
expect_line bpf/prog.bpf.c 1 '// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause'
expect_line bpf/maps.bpf.h 1 '/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */'
expect_line bpf/shared.h 1 '/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */'
expect_line bpf/inner.h 1 '/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */'
expect_line exporters/web/index.html 1 '<!DOCTYPE html>'
expect_line exporters/web/index.html 2 '<!-- SPDX-License-Identifier: Apache-2.0 -->'
expect_line exporters/web/live.css 1 '/* SPDX-License-Identifier: Apache-2.0 */'
expect_line deploy/rules.yml 1 '# SPDX-License-Identifier: Apache-2.0'
expect_line CMakeLists.txt 1 '# SPDX-License-Identifier: Apache-2.0'
expect_line deploy/chart/Chart.yaml 1 '# SPDX-License-Identifier: Apache-2.0'
for f in cm.yaml _helpers.tpl NOTES.txt; do
  expect_line deploy/chart/templates/$f 1 '{{/* SPDX-License-Identifier: Apache-2.0 */}}'
done
[[ $(stat -c %a scripts/run) == 755 ]] || fail "--fix changed scripts/run's mode"
# Everything but the header line is as it was.
for f in $want_named; do
  if [[ $f == scripts/gen.py ]]; then
    diff <(grep -v SPDX ../orig/$f) <(grep -v SPDX $f) >/dev/null || fail "--fix changed more of $f"
  else
    diff ../orig/$f <(grep -v SPDX $f) >/dev/null || fail "--fix changed more of $f than its header"
  fi
done
cmp exporters/web/vendor/lib.min.js ../orig/exporters/web/vendor/lib.min.js || fail "--fix touched vendored code"
cmp tests/fixtures/data.sh ../orig/tests/fixtures/data.sh || fail "--fix touched a fixture"
ok "--fix: headers in place (after shebang and doctype), BPF side dual, Helm templates a template comment, modes and the rest kept"

git add -A && git -c user.name=t -c user.email=t@t commit -qm fixed
"$spdx" --fix --root . >/dev/null
[[ -z $(git status --porcelain) ]] || fail "a second --fix changed files: $(git status --porcelain)"
ok "a second --fix changes nothing"

# A BPF program with the Apache header, then one declaring "GPL" only.
sed -i '1s/.*/\/\/ SPDX-License-Identifier: Apache-2.0/' bpf/prog.bpf.c
rc=0; out=$("$spdx" --check --root .) || rc=$?
((rc == 1)) && grep -q "^bpf/prog.bpf.c: SPDX-License-Identifier is 'Apache-2.0'" <<<"$out" ||
  fail "a BPF program under Apache-2.0 passed --check: $out"
git checkout -q bpf/prog.bpf.c
sed -i 's/"Dual BSD\/GPL"/"GPL"/' bpf/prog.bpf.c
rc=0; out=$("$spdx" --check --root .) || rc=$?
((rc == 1)) && grep -q '^bpf/prog.bpf.c: license section is "GPL"' <<<"$out" ||
  fail "a BPF program declaring \"GPL\" passed --check: $out"
ok "--check fails a BPF program under Apache-2.0 and one not declaring Dual BSD/GPL"

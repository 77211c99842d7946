# SPDX-License-Identifier: Apache-2.0
# Small assertion helpers for testbed cases (sourced by the guest scripts).
# A failed case also shows the last lines of the logs it wrote (a pathwise
# that died says why there), since CI keeps only the console's digest.
fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "${TB_OUT:-/nonexistent}"/*.log; do
    [[ -s $f && ${f##*/} != case.log && ${f##*/} != reset.log ]] || continue
    echo "----- last lines of ${f##*/} -----" >&2
    tail -n 15 "$f" | cut -c1-300 >&2
  done
  exit 1
}
pass() { echo "ok: $*"; }
expect_eq() { # what actual expected
  [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
  pass "$1 = $3"
}

# prom_samples FILE NAME [LABEL=VALUE ...]: the sample lines of NAME in a
# Prometheus text exposition whose labels include every LABEL=VALUE given
# (label order does not matter).
prom_samples() {
  local file=$1 name=$2
  shift 2
  awk -v name="$name" -v want="$*" '
    BEGIN { n = split(want, w, " ") }
    $0 !~ /^#/ {
      split($0, parts, /[{ ]/)
      if (parts[1] != name) next
      for (i = 1; i <= n; i++) {
        eq = index(w[i], "=")
        pat = substr(w[i], 1, eq - 1) "=\"" substr(w[i], eq + 1) "\""
        if (index($0, "{" pat) == 0 && index($0, "," pat) == 0) next
      }
      print
    }' "$file"
}

# prom_values FILE NAME [LABEL=VALUE ...]: the values of those samples, one
# per line.
prom_values() { prom_samples "$@" | awk '{ print $NF }'; }

# prom_count FILE NAME [LABEL=VALUE ...]: how many samples match.
prom_count() { prom_values "$@" | wc -l; }

# scrape URL FILE: fetches a /metrics page.
scrape() { curl -sf --max-time 5 "$1" -o "$2"; }

# fio_path_reads FIO_ARGS...: runs tb_fio and sets R0 R1 (reads) and T0 T1
# (read milliseconds) on paths 0 and 1 from their /sys/block stat deltas.
fio_path_reads() {
  local r0a t0a r1a t1a r0b t0b r1b t1b
  read -r r0a t0a _ < <(tb_path_stat 0)
  read -r r1a t1a _ < <(tb_path_stat 1)
  tb_fio "$@" || fail "fio"
  read -r r0b t0b _ < <(tb_path_stat 0)
  read -r r1b t1b _ < <(tb_path_stat 1)
  R0=$((r0b - r0a)) R1=$((r1b - r1a)) T0=$((t0b - t0a)) T1=$((t1b - t1a))
  awk -v r0="$R0" -v r1="$R1" -v t0="$T0" -v t1="$T1" 'BEGIN {
    printf "path0: %d reads, %.2f ms mean; path1: %d reads, %.2f ms mean\n",
      r0, r0 ? t0 / r0 : 0, r1, r1 ? t1 / r1 : 0 }'
  ((R0 > 20 && R1 > 20)) || fail "too few reads per path ($R0, $R1)"
}

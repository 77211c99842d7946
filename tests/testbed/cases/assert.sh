# Small assertion helpers for testbed cases (sourced by the guest scripts).
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
pass() { echo "ok: $*"; }
expect_eq() { # what actual expected
  [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
  pass "$1 = $3"
}

# prom_values FILE NAME [LABEL=VALUE ...]: the values of NAME's samples in a
# Prometheus text exposition whose labels include every LABEL=VALUE given
# (label order does not matter), one per line.
prom_values() {
  local file=$1 name=$2
  shift 2
  awk -v name="$name" -v want="$*" '
    BEGIN { n = split(want, w, " ") }
    $0 !~ /^#/ {
      split($0, parts, /[{ ]/)
      if (parts[1] != name) next
      ok = 1
      for (i = 1; i <= n; i++) {
        eq = index(w[i], "=")
        pat = substr(w[i], 1, eq - 1) "=\"" substr(w[i], eq + 1) "\""
        if (index($0, "{" pat) == 0 && index($0, "," pat) == 0) ok = 0
      }
      if (ok) print $NF
    }' "$file"
}

# prom_count FILE NAME [LABEL=VALUE ...]: how many samples match.
prom_count() { prom_values "$@" | wc -l; }

# scrape URL FILE: fetches a /metrics page.
scrape() { curl -sf --max-time 5 "$1" -o "$2"; }

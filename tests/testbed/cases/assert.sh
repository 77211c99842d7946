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

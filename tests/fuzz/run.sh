#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target of a PATHWISE_FUZZ build for a bounded time
# from its committed seed corpus. Usage:
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
# New inputs go to BUILD_DIR/fuzz/corpus/<target> (the committed corpus is
# only read). A crash, leak, timeout, out-of-memory or sanitizer report
# fails the run; the reproducer is kept in BUILD_DIR/fuzz/findings/<target>/
# and the log in BUILD_DIR/fuzz/logs/<target>.log. Exit 1 on any finding.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET...]}
secs=${2:-20}
shift $(( $# >= 2 ? 2 : 1 ))
if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < "$build/fuzz_targets.txt"
fi

# UBSan findings are fatal (-fno-sanitize-recover=all); these make every
# report carry a stack and leaks count as findings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  [[ -n $t ]] || continue
  bin="$build/tests/fuzz/$t"
  corpus="$build/fuzz/corpus/$t"
  findings="$build/fuzz/findings/$t"
  log="$build/fuzz/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  dict=()
  case $t in
    fuzz_http) dict=(-dict="$here/http.dict") ;;
    fuzz_scenario) dict=(-dict="$here/scenario.dict") ;;
    fuzz_cli) dict=(-dict="$here/cli.dict") ;;
  esac
  # -timeout: one input taking longer is a hang (a finding);
  # -rss_limit_mb/-malloc_limit_mb: a runaway allocation is a finding, not
  # the machine's problem.
  "$bin" "${dict[@]}" -max_total_time="$secs" -timeout=20 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$here/corpus/$t" \
    >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  if ((rc != 0)); then
    failed+=("$t")
    echo "fuzz $t: FAILED (exit $rc) after ${runs:-?} runs; log $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5
    echo "  reproducer(s) in $findings/:"
    ls -1 "$findings" | sed 's/^/    /'
  else
    echo "fuzz $t: ok, ${runs:-?} runs, ${speed:-?} exec/s, ${cov:-cov ?}"
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]} (reproducers under $build/fuzz/findings/)"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"

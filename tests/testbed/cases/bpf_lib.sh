# SPDX-License-Identifier: Apache-2.0
# Helpers for the eBPF sampler testbed cases (bpf_*.sh); sourced, not a case.
. "$TB_SCRIPT_DIR/assert.sh"
bpf_url=http://127.0.0.1:9877

# bpf_start_agent PATHWISE_BINARY [FLAGS...]: pathwise serve --bpf=required,
# healthy within 30 s, sampler attached.
bpf_start_agent() {
  local pw=$1
  shift
  "$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=required "$@" \
    >"$TB_OUT/serve.log" 2>&1 &
  bpf_pid=$!
  trap 'kill $bpf_pid 2>/dev/null' EXIT
  if ! tb_wait 30 curl -sf -o /dev/null "$bpf_url/healthz"; then
    cat "$TB_OUT/serve.log" >&2
    fail "pathwise serve --bpf=required: no /healthz 200 within 30 s"
  fi
  grep -q "eBPF sampler attached" "$TB_OUT/serve.log" || fail "no 'eBPF sampler attached' log line"
  pass "agent up: $(grep -o 'eBPF sampler attached.*' "$TB_OUT/serve.log")"
}

# bpf_stop_agent: SIGTERM, exit 0, no pathwise BPF program left.
bpf_stop_agent() {
  kill -TERM "$bpf_pid"
  local rc=0
  wait "$bpf_pid" || rc=$?
  trap - EXIT
  expect_eq "pathwise serve exit status on SIGTERM" "$rc" 0
  sleep 0.5
  expect_eq "pathwise BPF programs left after exit" \
    "$(bpftool prog show 2>/dev/null | grep -c ' name pw_')" 0
}

# bpf_scrape NAME: waits two intervals and a half, scrapes /metrics to
# /tmp/NAME.prom and $TB_OUT/NAME.prom; prints the path.
bpf_scrape() {
  sleep 2.5
  scrape "$bpf_url/metrics" "/tmp/$1.prom" || fail "scrape $1"
  cp "/tmp/$1.prom" "$TB_OUT/$1.prom"
  echo "/tmp/$1.prom"
}

# prom_sum FILE NAME [LABEL=VALUE ...]: the sum of the matching samples (0
# when none).
prom_sum() { prom_values "$@" | awk '{ s += $1 } END { printf "%d\n", s }'; }

# prom_delta BEFORE AFTER NAME [LABEL=VALUE ...]: sum in AFTER - in BEFORE.
prom_delta() {
  local b=$1 a=$2
  shift 2
  echo $(($(prom_sum "$a" "$@") - $(prom_sum "$b" "$@")))
}

# hist_buckets FILE NAME [LABEL=VALUE ...]: "le cumulative" lines of
# NAME_bucket, summed over the matching series.
hist_buckets() {
  local file=$1 name=$2
  shift 2
  prom_samples "$file" "${name}_bucket" "$@" | awk '
    {
      match($0, /le="[^"]*"/)
      le = substr($0, RSTART + 4, RLENGTH - 5)
      sum[le] += $NF
    }
    END { for (le in sum) print le, sum[le] }' | sort -g
}

# hist_quantile Q BEFORE AFTER NAME [LABEL=VALUE ...]: the Q-quantile in
# seconds of the histogram's increase between two scrapes, computed like
# Prometheus' histogram_quantile(); "NaN" when empty.
hist_quantile() {
  local q=$1 b=$2 a=$3
  shift 3
  join -a1 -e 0 -o 0,1.2,2.2 <(hist_buckets "$a" "$@" | sort -k1,1) \
    <(hist_buckets "$b" "$@" | sort -k1,1) | awk '{ print $1, $2 - $3 }' |
    sort -g | awk -v q="$q" '
      { le[NR] = $1; c[NR] = $2 }
      END {
        total = c[NR]
        if (total == 0) { print "NaN"; exit }
        rank = q * total
        for (i = 1; i <= NR; i++) if (c[i] >= rank) break
        if (le[i] == "+Inf") { print le[i - 1]; exit }
        lo = i > 1 ? le[i - 1] : 0
        prev = i > 1 ? c[i - 1] : 0
        printf "%.9f\n", lo + (le[i] - lo) * (rank - prev) / (c[i] - prev)
      }'
}

# fio_total_ios FILE: read + write + trim I/Os fio issued, from its JSON.
fio_total_ios() {
  jq '[.jobs[] | .read.total_ios + .write.total_ios + .trim.total_ios] | add' "$1"
}

# SPDX-License-Identifier: Apache-2.0
# Native and coarse classic histograms, side by side in Debian's Prometheus
# (2.42, --enable-feature=native-histograms), tcp:2 with a 30 ms netem delay
# on path 0 and round-robin reads over both paths:
# - job "native" scrapes /metrics as Prometheus negotiates it: protobuf, one
#   native histogram series per path and op;
# - job "classic" scrapes /metrics?format=text: the coarse buckets (25 `le`);
# - the p50 and p99 of path 0's reads over the same window, from
#   histogram_quantile over each (the dashboards' `or` query, which picks
#   whichever the job stored), are within docs/metrics.md's stated error of the
#   same quantiles over the agent's fine histogram (/api/v1/snapshot), and
#   the native ones at or above the 30 ms delay;
# - `promtool check metrics` on the text exposition is clean;
# - with the shipped rules loaded, the fleet's p99 record for path 0's target
#   port (nqn_address:pathwise_path_io_latency_seconds:p99_rate5m) is at or
#   above the delay and within the coarse bound (a factor 2) of the fine histogram
#   since Prometheus' first scrapes. Prometheus 2.42 cannot join a native
#   histogram to its target port (PromQL drops histograms in a
#   vector-vector `*`), so here the record comes from job classic's
#   buckets; the native record is reported, and checked when present.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
pw=$1
p0=${TB_PATHS[0]}
prom=http://127.0.0.1:9090
t0=$SECONDS
tb_iopolicy round-robin || fail "iopolicy"
tb_path_delay 0 30 || fail "delay"
repo=$(cd "$TB_SCRIPT_DIR/../../.." && pwd)
# Path 0's target port as the fleet rules name it.
addr0=$(sed -E 's/,(src_addr|host_traddr|host_iface)=.*//' "/sys/class/nvme/${TB_CTRLS[0]}/address")
[[ $addr0 == traddr=* ]] || fail "path 0's address: '$addr0'"
d=/tmp/prom
mkdir -p $d/data
cp "$repo/deploy/prometheus/pathwise-rules.yml" $d/rules.yml
cat >$d/prometheus.yml <<CFG
global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files: [$d/rules.yml]
scrape_configs:
  - job_name: native
    static_configs: [{targets: ["127.0.0.1:9877"]}]
  - job_name: classic
    params: {format: [text]}
    static_configs: [{targets: ["127.0.0.1:9877"]}]
CFG
prometheus --config.file=$d/prometheus.yml --storage.tsdb.path=$d/data \
  --enable-feature=native-histograms \
  --web.listen-address=127.0.0.1:9090 >"$TB_OUT/prometheus.log" 2>&1 &
prom_pid=$!
# Coarse classic buckets against native ones, as the bounds below are the
# coarse layout's (the default profile's sparse one is 2 to 4 times wider).
bpf_start_agent "$pw" --histogram-buckets=coarse
trap 'kill $bpf_pid $prom_pid $fio_pid 2>/dev/null' EXIT
tb_fio --runtime=300 --iodepth=8 --rate_iops=200 --output="$TB_OUT/fio.txt" >/dev/null 2>&1 &
fio_pid=$!

curl -sf "$bpf_url/metrics" -o /tmp/text.prom || fail "text scrape"
cp /tmp/text.prom "$TB_OUT/text.prom"
promtool check metrics </tmp/text.prom >"$TB_OUT/promtool.txt" 2>&1 ||
  { cat "$TB_OUT/promtool.txt"; fail "promtool check metrics on the text exposition"; }
pass "promtool check metrics: clean"

# The fine histogram of path 0's reads, from the agent's JSON snapshot, as
# "le cumulative" lines in a text-format file hist_quantile can read.
fine() {
  curl -sf "$bpf_url/api/v1/snapshot" | jq -r --arg p "$p0" '
    .latency_histogram.upper_bounds_seconds as $b
    | .io.paths[$p].ops.read.latency_seconds.counts
    | foreach .[] as $c ({i: 0, s: 0}; {i: (.i + 1), s: (.s + $c)}; .)
    | "x_bucket{le=\"\(if .i <= ($b | length) then $b[.i - 1] else "+Inf" end)\"} \(.s)"' >"$1"
}
q() { curl -sf --max-time 10 "$prom/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}; }
# Both jobs up, and each stored what it should.
tb_wait 120 sh -c "curl -sf '$prom/api/v1/query?query=sum(up)' | grep -q '\"2\"\]'" ||
  { tail -20 "$TB_OUT/prometheus.log"; fail "prometheus: both jobs not up within 120 s"; }
pass "prometheus scraping both jobs (t=$((SECONDS - t0))s)"
fine /tmp/fine_start.prom || fail "snapshot" # where the fleet record's window starts
sel="path=\"$p0\",op=\"read\""
tb_wait 30 sh -c "curl -sf '$prom/api/v1/query' --data-urlencode 'query=pathwise_path_io_latency_seconds{job=\"native\",$sel}' | jq -e '.data.result[0].histogram' >/dev/null" ||
  fail "no native histogram series for $p0 in job native"
n_classic=$(q "count(pathwise_path_io_latency_seconds_bucket{job=\"classic\",$sel})" | jq -r '.data.result[0].value[1]')
n_native_buckets=$(q "count(pathwise_path_io_latency_seconds_bucket{job=\"native\"})" | jq -r '.data.result | length')
expect_eq "classic buckets of $p0 read (job classic)" "$n_classic" 25
expect_eq "classic bucket series in job native" "$n_native_buckets" 0

# The compared window holds one burst of reads with quiet on both sides, so
# Prometheus' samples in it and the two fine snapshots bracket exactly the
# same I/Os. With reads running across the window's edges, the scrapes
# inside it and the snapshots differ by up to a scrape interval of I/Os,
# and the sparse tail moves: a loaded CI run put native p99 at 1.147 x a
# fine p99 taken over a shifted window.
# $fio_pid is the subshell running tb_fio: stop fio itself.
pkill -x fio
tb_wait 10 sh -c '! pgrep -x fio >/dev/null' || fail "fio did not stop"
sleep 5 # in-flight reads done, and the agent's counters settled
fine /tmp/fine0.prom || fail "snapshot"
w0=$(date +%s)
sleep 5 # at least two scrapes of the quiet state inside the window
tb_fio --runtime=12 --iodepth=8 --rate_iops=200 --output="$TB_OUT/fio_window.txt" >/dev/null 2>&1 ||
  fail "fio burst"
sleep 6 # at least two scrapes of the state after the burst inside the window
fine /tmp/fine1.prom || fail "snapshot"
w1=$(date +%s)
cp /tmp/fine0.prom /tmp/fine1.prom "$TB_OUT/"
cmp -s /tmp/fine0.prom /tmp/fine1.prom && fail "no reads of $p0 in the window"
win=$((w1 - w0))s

# within NAME VALUE REF LO HI: REF * LO <= VALUE <= REF * HI.
within() {
  awk -v v="$2" -v r="$3" -v lo="$4" -v hi="$5" 'BEGIN { exit !(v != "" && v >= r * lo && v <= r * hi) }' ||
    fail "$1: $2 s, not within [$4, $5] x the fine histogram's $3 s"
  pass "$1: $2 s (fine: $3 s; bound [$4, $5] x fine)"
}
for qq in 0.5 0.99; do
  ref=$(hist_quantile $qq /tmp/fine0.prom /tmp/fine1.prom x)
  # The dashboards' form: native or classic, whichever the job stored.
  both() {
    echo "histogram_quantile($qq, sum by (path) (rate(pathwise_path_io_latency_seconds{job=\"$1\",$sel}[$win])))
      or histogram_quantile($qq, sum by (path, le) (rate(pathwise_path_io_latency_seconds_bucket{job=\"$1\",$sel}[$win])))"
  }
  native=$(q "$(both native)" "$w1" | jq -r '.data.result[0].value[1] // empty')
  classic=$(q "$(both classic)" "$w1" | jq -r '.data.result[0].value[1] // empty')
  echo "p$qq of $p0 reads over $win: fine $ref s, native $native s, coarse classic $classic s"
  # docs/metrics.md's bounds against the fine histogram of the same I/Os: native
  # 1.0..1.108; coarse within a factor 2 either way (both estimates lie in
  # the same coarse bucket). The narrower ranges measured on log-normal
  # latencies are typical, not bounds: a netem delay is near a point mass
  # (a CI run saw coarse p99 at 0.935 x fine). The native bound is widened
  # by 1 % each way only for float rounding and rate()'s extrapolation.
  within "native p$qq" "$native" "$ref" 0.99 1.12
  within "coarse classic p$qq" "$classic" "$ref" 0.49 2.04
  awk -v v="$native" 'BEGIN { exit !(v >= 0.030) }' || fail "native p$qq $native s < 30 ms"
done

# The fleet's p99 record for path 0's target port (group pathwise.fleet, the
# shipped rules). Its rate5m window holds every scrape since the first, so
# the reference is the fine histogram from then (fine_start, taken when both
# jobs were first up) to now; the bound is the coarse p99's, widened as above.
rec=nqn_address:pathwise_path_io_latency_seconds
tb_wait 10 sh -c "curl -sf '$prom/api/v1/query' --data-urlencode 'query=$rec:p99_rate5m{address=\"$addr0\"}' | jq -e '.data.result[0]' >/dev/null" ||
  fail "no $rec:p99_rate5m for $addr0"
fleet99=$(q "$rec:p99_rate5m{address=\"$addr0\"}" | jq -r '.data.result[0].value[1] // empty')
fine /tmp/fine_end.prom || fail "snapshot"
cp /tmp/fine_start.prom /tmp/fine_end.prom "$TB_OUT/"
ref=$(hist_quantile 0.99 /tmp/fine_start.prom /tmp/fine_end.prom x)
native_rec=$(q "histogram_quantile(0.99, $rec:rate5m{address=\"$addr0\"})" | jq -r '.data.result[0].value[1] // empty')
echo "fleet p99 to $addr0: record $fleet99 s, fine $ref s; native record's p99: ${native_rec:-none}"
awk -v v="$fleet99" 'BEGIN { exit !(v >= 0.030) }' || fail "fleet p99 $fleet99 s < 30 ms"
if [[ -n $native_rec ]]; then
  # A Prometheus that joins native histograms: the record is the native one.
  within "fleet p99 record (native)" "$fleet99" "$ref" 0.98 1.13
else
  within "fleet p99 record (coarse classic)" "$fleet99" "$ref" 0.49 2.04
fi
kill $fio_pid 2>/dev/null
pass "done (t=$((SECONDS - t0))s)"

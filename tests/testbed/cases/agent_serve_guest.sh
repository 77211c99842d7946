# SPDX-License-Identifier: Apache-2.0
# Guest half of agent_serve_test.sh: pathwise serve with the eBPF sampler
# (fine histogram buckets) on :9877 under round-robin fio load (QD8, rate-limited so that the TCG guest,
# which also runs the target, keeps CPU for the agent) with a netem delay on
# path 1, until the host creates $TB_SHARE/done (testbed --share). Once the
# agent answers and the load runs it writes $TB_SHARE/ready: "PATH=ADDRESS"
# of the healthy path 0 and the delayed path 1, the delay in ms and fio's
# rate in IOPS, for the host's browser test of the live page.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
[[ -n $TB_SHARE ]] || fail "needs testbed --share"
delay_ms=100 rate_iops=150
tb_iopolicy round-robin || fail "iopolicy"
"$1" serve --interval=1s --bpf=required --histogram-buckets=fine >"$TB_OUT/serve.log" 2>&1 &
pid=$!
trap 'kill $pid $fio_pid 2>/dev/null' EXIT
if ! tb_wait 60 curl -sf -o /dev/null http://127.0.0.1:9877/healthz; then
  cat "$TB_OUT/serve.log" >&2
  fail "pathwise serve --bpf=required: no /healthz 200 within 60 s"
fi
grep -q "eBPF sampler attached" "$TB_OUT/serve.log" || fail "no 'eBPF sampler attached' log line"
tb_path_delay 1 "$delay_ms" || fail "delay"
tb_fio --runtime=600 --iodepth=8 --rate_iops="$rate_iops" --output="$TB_OUT/fio.txt" &
fio_pid=$!
printf '%s=10.77.0.2:4420 %s=10.77.1.2:4420 %s %s\n' "${TB_PATHS[0]}" "${TB_PATHS[1]}" \
  "$delay_ms" "$rate_iops" >"$TB_SHARE/ready.tmp"
mv "$TB_SHARE/ready.tmp" "$TB_SHARE/ready"
pass "agent up with the eBPF sampler, fio at $rate_iops IOPS, path 1 (${TB_PATHS[1]}) +$delay_ms ms"
tb_wait 300 test -e "$TB_SHARE/done" || fail "the host never signalled done"
kill -0 "$pid" || fail "pathwise serve died"
kill "$fio_pid"
wait "$fio_pid" 2>/dev/null
kill "$pid"
wait "$pid"
trap - EXIT

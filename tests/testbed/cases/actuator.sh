# SPDX-License-Identifier: Apache-2.0
# The iopolicy actuator against the real kernel, tcp:2, path 0 +30 ms under
# iopolicy numa (which sends every I/O down path 0, the first path) and fio
# on the head (see switch() for how it gets there).
#
# 6.12:
#  - --actuate=dry-run: the decision numa -> queue-depth is logged and
#    exported (dry_run), and the iopolicy stays numa; fio's IOPS under numa
#    are the "before";
#  - --actuate=on: the iopolicy becomes queue-depth within hold (3 s) + a
#    few windows; fio's IOPS after it against before are printed;
#  - SIGTERM: numa again, the restore logged.
# 6.1 (no queue-depth), --kernel-queue-depth=true so that the advisor asks
# for it:
#  - a read-only sysfs (a private mount namespace): one failed decision, one
#    warning, no retry, numa kept;
#  - writable: queue-depth is refused once, round-robin applied instead;
#    SIGTERM restores numa.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
pw=$1
sub=$TB_SUBSYS
pol_file=/sys/class/nvme-subsystem/$sub/iopolicy
hold=3
prom=/tmp/actuator.prom

policy() { read -r POLICY <"$pol_file"; }

now_us() { NOW_US=${EPOCHREALTIME/./}; }
# secs_since T_US: seconds since T_US, two decimals.
secs_since() {
  now_us
  local d=$((NOW_US - $1))
  printf '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000))
}

# start NAME FLAGS...: the agent (eBPF sampler) with the actuator's flags;
# its log is $log ($TB_OUT/serve.log; $TB_OUT/NAME.log once stopped).
start() {
  shift
  bpf_start_agent "$pw" --actuate-hold=${hold}s --actuate-min-interval=60s "$@"
  log=$TB_OUT/serve.log
}
# stop NAME: SIGTERM, exit 0; keeps the log.
stop() {
  bpf_stop_agent
  cp "$TB_OUT/serve.log" "$TB_OUT/$1.log"
}

# switch: iopolicy numa and path 0 +30 ms, with fio on the head (in the
# background, $fio_pid). A fresh agent must first measure path 1, which numa
# leaves without I/O (the advisor needs both paths' latency; controller
# probes give it a sample too, but the case does not rely on them), and
# must not see
# another policy wanted meanwhile (round-robin for the seeding would do:
# the advisor asks for queue-depth there already, and on a loaded host the
# hold ran out before numa was set). So path 0 is made ANA inaccessible
# while fio runs for 2 s (all I/O on path 1; one usable path, so the advice
# is to keep numa), then optimized again: numa sends everything to path 0,
# the first path, at +30 ms. The clock T0_US starts when the host reports
# path 0 optimized. The delay is set before any I/O: netem's tc can take
# seconds in the guest.
switch() {
  tb_path_delay 0 30 || fail "delay"
  tb_iopolicy numa || fail "iopolicy numa"
  tb_path_ana 0 inaccessible || fail "ANA inaccessible"
  tb_fio --runtime=60 --output=/dev/null &
  fio_pid=$!
  sleep 2
  tb_path_ana 0 optimized || fail "ANA optimized"
  now_us
  T0_US=$NOW_US
}
stop_fio() { tb_fio_stop "$fio_pid"; }

# fio_iops SECONDS NAME: fio at QD4 for SECONDS, prints and sets IOPS.
# QD4, not tb_fio's 16: at QD16 numa on the +30 ms path allows ~530 IOPS,
# about what the TCG guest's CPU allows over the fast path too, so the
# policies would measure alike (1.00x in one run); at QD4 numa allows ~130.
fio_iops() {
  tb_fio --runtime="$1" --iodepth=4 --output-format=json --output="$TB_OUT/fio-$2.json" ||
    fail "fio ($2)"
  IOPS=$(jq '.jobs[0].read.iops | floor' "$TB_OUT/fio-$2.json")
  echo "fio $2: $IOPS IOPS"
}

# decisions FILTER...: the matching pathwise_actuator_decisions_total values
# summed (0 when none), from a fresh scrape.
decisions() {
  scrape "$bpf_url/metrics" "$prom" || fail "scrape"
  prom_sum "$prom" pathwise_actuator_decisions_total subsystem="$sub" "$@"
}

# until SECONDS CMD...: runs CMD every 0.2 s until it succeeds, at most
# SECONDS of wall time.
until_within() {
  local limit=$1 start
  shift
  now_us
  start=$NOW_US
  while ! "$@"; do
    now_us
    ((NOW_US - start < limit * 1000000)) || return 1
    sleep 0.2
  done
}

# has_decision FILTER...: such a decision is counted in /metrics.
has_decision() { (($(decisions "$@") >= 1)); }
# policy_is P: the subsystem's iopolicy is P.
policy_is() {
  policy
  [[ $POLICY == "$1" ]]
}

last_decision() {
  curl -sf "$bpf_url/api/v1/topology" |
    jq -c --arg s "$sub" '.subsystems[] | select(.name == $s) | .actuator_last_decision'
}

case $TB_KERNEL in
6.12)
  # --- dry-run -----------------------------------------------------------
  start dryrun --actuate=dry-run
  switch
  until_within 12 has_decision result=dry_run || fail "no dry_run decision within 12 s"
  pass "dry_run decision after $(secs_since "$T0_US") s"
  stop_fio
  fio_iops 4 numa-slow-path
  before=$IOPS
  policy
  expect_eq "iopolicy under --actuate=dry-run" "$POLICY" numa
  expect_eq "dry_run numa -> queue-depth decisions" \
    "$(decisions from=numa to=queue-depth result=dry_run)" 1
  expect_eq "decisions other than that one" \
    "$(($(decisions) - 1))" 0
  expect_eq "pathwise_actuator_mode{mode=\"dry-run\"}" \
    "$(prom_values "$prom" pathwise_actuator_mode mode=dry-run)" 1
  d=$(last_decision)
  echo "last decision: $d"
  [[ $(jq -r .result <<<"$d") == dry_run ]] || fail "/api/v1/topology: last decision is not dry_run"
  grep -F 'iopolicy decision: subsystem='"$sub"' from=numa to=queue-depth result=dry_run' "$log" ||
    fail "no dry_run log line"
  promtool check metrics <"$prom" || fail "promtool"
  pass "dry-run: decided, logged, exported; iopolicy still numa"
  stop dryrun

  # --- on ----------------------------------------------------------------
  start on --actuate=on
  switch
  until_within 15 policy_is queue-depth ||
    fail "iopolicy not queue-depth within 15 s (it is $POLICY)"
  took=$(secs_since "$T0_US")
  stop_fio
  pass "iopolicy queue-depth ${took} s after path 0 (+30 ms) took the I/O under numa (hold ${hold} s)"
  grep -F 'iopolicy decision: subsystem='"$sub"' from=numa to=queue-depth result=applied' "$log" ||
    fail "no applied log line"
  fio_iops 4 queue-depth
  after=$IOPS
  awk -v b="$before" -v a="$after" 'BEGIN {
    printf "throughput: numa (path 0 +30 ms) %d IOPS, queue-depth %d IOPS: %.2fx\n", b, a, b ? a / b : 0 }'
  ((after > before)) || fail "queue-depth not faster than numa on the slow path"
  expect_eq "applied numa -> queue-depth decisions" \
    "$(decisions from=numa to=queue-depth result=applied)" 1
  expect_eq "decisions other than that one" "$(($(decisions) - 1))" 0
  stop on
  policy
  expect_eq "iopolicy after SIGTERM" "$POLICY" numa
  grep -F 'from=queue-depth to=numa result=applied reason=\"restore on exit' "$TB_OUT/on.log" ||
    fail "no restore log line"
  pass "SIGTERM restored numa"
  ;;
6.1)
  # --- read-only sysfs ---------------------------------------------------
  # A private mount namespace whose /sys is a read-only bind: the write
  # fails with EROFS, as in a container whose sysfs is mounted read-only.
  cat >/tmp/pathwise-ro <<EOS
#!/bin/bash
exec unshare -m --propagation private bash -c 'mount -o remount,bind,ro /sys && exec "\$0" "\$@"' "$pw" "\$@"
EOS
  chmod +x /tmp/pathwise-ro
  pw_real=$pw
  pw=/tmp/pathwise-ro
  start readonly --actuate=on --kernel-queue-depth=true
  pw=$pw_real
  switch
  until_within 15 has_decision result=failed || fail "no failed decision within 15 s"
  pass "failed decision after $(secs_since "$T0_US") s"
  sleep 3  # a few more windows: the failure must not repeat
  stop_fio
  policy
  expect_eq "iopolicy with a read-only sysfs" "$POLICY" numa
  expect_eq "failed decisions" "$(decisions result=failed)" 1
  expect_eq "decisions other than that one" "$(($(decisions) - 1))" 0
  expect_eq "warnings about it" "$(grep -c 'level=warn msg="iopolicy decision: .*result=failed.*Read-only file system' "$log")" 1
  stop readonly

  # --- writable: queue-depth refused, round-robin instead -----------------
  start refused --actuate=on --kernel-queue-depth=true
  switch
  until_within 15 policy_is round-robin ||
    fail "iopolicy not round-robin within 15 s (it is $POLICY)"
  pass "iopolicy round-robin $(secs_since "$T0_US") s after path 0 (+30 ms) took the I/O under numa"
  sleep 3  # a few more windows: the refusal must not repeat
  stop_fio
  expect_eq "refused numa -> queue-depth decisions" \
    "$(decisions from=numa to=queue-depth result=refused)" 1
  expect_eq "applied numa -> round-robin decisions" \
    "$(decisions from=numa to=round-robin result=applied)" 1
  expect_eq "decisions other than those" "$(($(decisions) - 2))" 0
  expect_eq "refusals logged" "$(grep -c 'iopolicy decision: .*to=queue-depth result=refused' "$log")" 1
  grep 'iopolicy decision' "$log"
  promtool check metrics <"$prom" || fail "promtool"
  stop refused
  policy
  expect_eq "iopolicy after SIGTERM" "$POLICY" numa
  ;;
*) fail "no actuator case for kernel $TB_KERNEL" ;;
esac

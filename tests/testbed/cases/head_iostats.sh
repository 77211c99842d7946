# SPDX-License-Identifier: Apache-2.0
# --head-iostats against the real kernel (any multipath-on topology; run on loop:2):
#  - off: the head's queue/iostats is 0 while the eBPF sampler runs; fio's
#    fixed count of I/Os on the head is every one in pathwise's head series
#    while the kernel's /sys/block/HEAD/stat does not move (its accounting
#    is off, as meant); SIGTERM sets it back to 1, logged and counted;
#  - a head the admin set to 0 before is left alone, and stays 0 on exit;
#  - dry-run: logged and counted, nothing written;
#  - --bpf=off: the sysfs counters read the head's stat, so it is kept.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
pw=$1
head=$(basename "$TB_HEAD")
knob=/sys/block/$head/queue/iostats
knob_is() { [[ $(cat "$knob") == "$1" ]]; }
# stat_ios: reads + writes completed in the kernel's stat of the head.
stat_ios() { awk '{ print $1 + $5 }' "/sys/block/$head/stat"; }

tb_iopolicy round-robin || fail "iopolicy"
expect_eq "$knob before" "$(cat "$knob")" 1

# off
# The head's own I/O counter below: --metrics.profile=full.
bpf_start_agent "$pw" --head-iostats=off --metrics.profile=full
tb_wait 10 knob_is 0 || fail "$knob still $(cat "$knob") 10 s after start"
pass "$knob is 0 while the sampler runs"
before=$(bpf_scrape before)
expect_eq "pathwise_head_iostats_disabled_heads" \
  "$(prom_sum "$before" pathwise_head_iostats_disabled_heads)" 1
expect_eq "changes off/applied" \
  "$(prom_sum "$before" pathwise_head_iostats_changes_total action=off result=applied)" 1
k0=$(stat_ios)
n_ios=2000
fio --eta=never --name=counts --filename="$TB_HEAD" --direct=1 --ioengine=libaio --rw=randrw \
  --rwmixread=70 --bs=4k --iodepth=8 --io_size=$((n_ios * 4096)) --randrepeat=1 \
  --output-format=json --output="$TB_OUT/fio.json" || fail "fio"
after=$(bpf_scrape after)
expect_eq "fio I/Os" "$(fio_total_ios "$TB_OUT/fio.json")" "$n_ios"
expect_eq "pathwise head I/Os (reads + writes)" \
  "$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head")" "$n_ios"
expect_eq "the kernel's /sys/block/$head/stat I/Os (accounting off)" "$(($(stat_ios) - k0))" 0
bpf_stop_agent
expect_eq "$knob after SIGTERM" "$(cat "$knob")" 1
grep -q "head iostats: $head on again (wrote 1 to $knob): pathwise is stopping" \
  "$TB_OUT/serve.log" || fail "no restore log line"
pass "restored on exit, logged"
cp "$TB_OUT/serve.log" "$TB_OUT/off.log"
# With the accounting back, the kernel counts the head's I/O again.
k0=$(stat_ios)
tb_fio --runtime=1 --output=/dev/null || fail "fio"
(($(stat_ios) > k0)) || fail "the head's stat does not move after the restore"
pass "the kernel counts the head's I/O again"

# Someone else's 0 is theirs.
echo 0 >"$knob"
bpf_start_agent "$pw" --head-iostats=off
sleep 2.5
grep -q "head iostats: $head already has iostats 0; left as it is" "$TB_OUT/serve.log" ||
  fail "no 'left as it is' log line"
bpf_stop_agent
expect_eq "$knob after SIGTERM (the admin's 0)" "$(cat "$knob")" 0
echo 1 >"$knob"

# dry-run
bpf_start_agent "$pw" --head-iostats=dry-run
m=$(bpf_scrape dry)
expect_eq "dry-run: $knob" "$(cat "$knob")" 1
expect_eq "dry-run: changes off/dry_run" \
  "$(prom_sum "$m" pathwise_head_iostats_changes_total action=off result=dry_run)" 1
expect_eq "dry-run: changes off/applied" \
  "$(prom_sum "$m" pathwise_head_iostats_changes_total action=off result=applied)" 0
bpf_stop_agent

# --bpf=off: the sysfs fallback reads the head's stat: kept.
"$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=off --head-iostats=off \
  >"$TB_OUT/sysfs.log" 2>&1 &
p=$!
tb_wait 30 curl -sf -o /dev/null "$bpf_url/healthz" || fail "no /healthz with --bpf=off"
sleep 2.5
expect_eq "--bpf=off: $knob" "$(cat "$knob")" 1
grep -q -- "--head-iostats=off: the heads keep their accounting" "$TB_OUT/sysfs.log" ||
  fail "no warning with --bpf=off"
kill -TERM "$p"
wait "$p" || fail "pathwise --bpf=off exit status"
pass "--bpf=off keeps the heads' accounting, with a warning"

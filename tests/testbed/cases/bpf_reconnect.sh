# SPDX-License-Identifier: Apache-2.0
# eBPF sampler, a path disk that reuses a dev_t: with the agent running,
# path 0's controller is disconnected and connected again while its old
# controller instance is held open (so the new controller gets another
# instance number and its path disk another name, nvme0cXn1), and the new
# path disk takes the dev_t the old one freed (checked in pw_disk). Reads on
# the head (round-robin): the new path's series carry its own name and
# count exactly its reads (its sysfs stat); the head counts every read once.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
# The head's own I/O series, against its paths': --metrics.profile=full
# (the default profile leaves them to sum by head).
bpf_start_agent "$1" --metrics.profile=full
head=$(basename "$TB_HEAD")
p0=${TB_PATHS[0]} c0=${TB_CTRLS[0]}

# disk_dev NAME: the dev_t (kernel encoding) pw_disk records for NAME (its
# key is {dev, pad, seq}; a plain dev_t in older layouts).
disk_dev() {
  bpftool -j map dump name pw_disk |
    jq -r --arg n "$1" '.[] | .formatted // . | select((.value.name // "") == $n) |
      .key | if type == "object" then .dev else . end' | head -1
}

dd if="$TB_HEAD" of=/dev/null bs=4k count=64 iflag=direct status=none || fail "dd"
sleep 1.5
old_dev=$(disk_dev "$p0")
[[ -n $old_dev ]] || fail "pw_disk has no entry for $p0: $(bpftool -j map dump name pw_disk)"

# Hold the old controller's char device open: its instance number stays
# taken, so the reconnected controller is named differently.
exec 9<"/dev/$c0" || fail "open /dev/$c0"
tb_ctrl_disconnect 0 || fail "disconnect"
tb_ctrl_reconnect 0 || fail "reconnect"
exec 9<&-
tb_refresh
p0new=${TB_PATHS[0]}
echo "path 0: $p0 ($c0) -> $p0new (${TB_CTRLS[0]})"
[[ -n $p0new && $p0new != "$p0" ]] || fail "the reconnected path disk kept the name $p0"

udevadm settle --timeout=10 2>/dev/null
before=$(bpf_scrape before)
read -r r0a _ < <(tb_path_stat 0)
n=600
dd if="$TB_HEAD" of=/dev/null bs=4k count=$n iflag=direct status=none || fail "dd"
read -r r0b _ < <(tb_path_stat 0)
after=$(bpf_scrape after)
sys=$((r0b - r0a))
got=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p0new" op=read)
h=$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head" op=read)
echo "reads: $p0new sysfs $sys, pathwise $got; head $h of $n"
((sys > 0)) || fail "round-robin sent no read to $p0new"
expect_eq "$p0new reads counted under its own name" "$got" "$sys"
expect_eq "head reads" "$h" "$n"
expect_eq "series of the departed $p0" "$(grep -c "path=\"$p0\"" "$after")" 0
# What makes this case: the new path disk took the old one's dev_t.
new_dev=$(disk_dev "$p0new")
echo "pw_disk: $p0 had dev $old_dev, $p0new has dev $new_dev"
expect_eq "dev_t of $p0new (reused from $p0)" "$new_dev" "$old_dev"
bpf_stop_agent

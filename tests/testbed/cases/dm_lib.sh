# SPDX-License-Identifier: Apache-2.0
# Namespace 1 on a device-mapper device over the null_blk, so that cases
# can switch target-side faults in (dm-flakey, dm-delay). Sourced by
# data_fault.sh and chaos_soak.sh.
TB_DM_SECTORS=0
_tb_ns1=$TB_CFS/subsystems/$TB_NQN/namespaces/1

# _tb_ns_count: namespaces (or paths) the host's controllers show.
_tb_ns_count() { ls -d /sys/class/nvme/nvme*/nvme*n*/wwid 2>/dev/null | wc -l; }

# tb_ns1_device PATH: namespace 1 re-enabled on another backing device,
# back on both paths. The host drops the namespace once the target disables
# it (an AEN and a rescan) and finds it again once enabled, not always
# under the same name: a namespace whose old instance is still referenced
# comes back as nvmeXn2, so any name counts. Each step says what failed.
tb_ns1_device() {
  echo 0 >"$_tb_ns1/enable" || { tb_log "ns1: cannot disable"; return 1; }
  # Waiting for the host to drop the old namespace first: otherwise its
  # still-listed paths would pass for the new ones.
  tb_wait 30 eval '(( $(_tb_ns_count) == 0 ))' ||
    tb_log "ns1: the host still lists $(_tb_ns_count) namespace paths after the disable; going on"
  echo "$1" >"$_tb_ns1/device_path" || { tb_log "ns1: cannot set device_path $1"; return 1; }
  echo 1 >"$_tb_ns1/enable" || { tb_log "ns1: cannot enable on $1"; return 1; }
  tb_wait 30 eval '(( $(_tb_ns_count) >= 2 ))' && return 0
  tb_log "ns1: on $1, the host shows $(_tb_ns_count) namespace paths, want 2:" \
    "$(ls -d /sys/class/nvme/nvme*/nvme*n* 2>/dev/null | tr '\n' ' ')" \
    "controllers: $(for c in /sys/class/nvme/nvme*; do echo -n "${c##*/}=$(cat "$c/state" 2>/dev/null) "; done)"
  return 1
}

# tb_dm_setup: dm device tbdm (linear over /dev/nullb0) under namespace 1.
tb_dm_setup() {
  modprobe -a dm_mod dm_flakey dm_delay || { tb_log "dm: modprobe failed"; return 1; }
  TB_DM_SECTORS=$(blockdev --getsz /dev/nullb0)
  # No udev in the guest: dmsetup makes the node itself (mknodes).
  dmsetup create tbdm --table "0 $TB_DM_SECTORS linear /dev/nullb0 0" &&
    dmsetup mknodes tbdm || { tb_log "dm: dmsetup create tbdm failed"; return 1; }
  tb_ns1_device /dev/mapper/tbdm
}

# tb_dm_table TABLE: tbdm's table replaced (suspend, reload, resume).
tb_dm_table() { dmsetup suspend tbdm && dmsetup reload tbdm --table "$1" && dmsetup resume tbdm; }

# tb_dm_teardown: namespace 1 back on the null_blk, tbdm removed.
tb_dm_teardown() { tb_ns1_device /dev/nullb0; dmsetup remove tbdm; }

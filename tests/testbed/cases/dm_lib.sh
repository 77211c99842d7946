# Namespace 1 on a device-mapper device over the null_blk, so that cases
# can switch target-side faults in (dm-flakey, dm-delay). Sourced by
# data_fault.sh and chaos_soak.sh.
TB_DM_SECTORS=0
_tb_ns1=$TB_CFS/subsystems/$TB_NQN/namespaces/1

# tb_ns1_device PATH: namespace 1 re-enabled on another backing device,
# back on both paths.
tb_ns1_device() {
  echo 0 >"$_tb_ns1/enable" && echo "$1" >"$_tb_ns1/device_path" && echo 1 >"$_tb_ns1/enable" ||
    return 1
  tb_wait 20 eval '(( $(ls /sys/class/nvme/nvme*/nvme*n1/wwid 2>/dev/null | wc -l) >= 2 ))'
}

# tb_dm_setup: dm device tbdm (linear over /dev/nullb0) under namespace 1.
tb_dm_setup() {
  modprobe -a dm_mod dm_flakey dm_delay || return 1
  TB_DM_SECTORS=$(blockdev --getsz /dev/nullb0)
  # No udev in the guest: dmsetup makes the node itself (mknodes).
  dmsetup create tbdm --table "0 $TB_DM_SECTORS linear /dev/nullb0 0" &&
    dmsetup mknodes tbdm && tb_ns1_device /dev/mapper/tbdm
}

# tb_dm_table TABLE: tbdm's table replaced (suspend, reload, resume).
tb_dm_table() { dmsetup suspend tbdm && dmsetup reload tbdm --table "$1" && dmsetup resume tbdm; }

# tb_dm_teardown: namespace 1 back on the null_blk, tbdm removed.
tb_dm_teardown() { tb_ns1_device /dev/nullb0; dmsetup remove tbdm; }

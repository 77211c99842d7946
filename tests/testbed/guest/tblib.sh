# SPDX-License-Identifier: Apache-2.0
# pathwise testbed: helper library, sourced in the guest before the user's
# script runs. See tests/testbed/README.md for the reference.
#
# Paths are addressed by index i = 0..N-1 (the order of --topology).
# Variables (bash arrays where plural):
#   TB_KERNEL  6.12|6.1           TB_TOPOLOGY  tcp:2 pcie:2 loop:2 ...   TB_MULTIPATH on|off
#   TB_NIC     veth|virtio        (tcp: what joins tbh<i> and tbt<i>)
#   TB_TARGET  stored|volatile    (tcp, loop: null_blk memory-backed or not)
#   TB_SUBSYS  nvme-subsys0       TB_NQN       subsystem NQN
#   TB_HEAD    /dev/nvme0n1 (empty with --multipath off)
#   TB_NG      /dev/ng0n1   (the head's generic device; empty with multipath off)
#   TB_PATHS   (nvme0c0n1 nvme0c1n1)  hidden path disks, index order
#              (with --multipath off: the per-controller namespaces nvme0n1 ...)
#   TB_NGS     (/dev/ng0n1 /dev/ng1n1) per-path generic devices, multipath off
#   TB_CTRLS   (nvme0 nvme1)          controllers, index order
#   TB_OUT     /tb/out: files written here are copied to the host's --out
#   TB_SHARE   /share: the host's --share directory, live and read-write
#              (empty without --share)
# An entry of TB_PATHS/TB_CTRLS is empty while its controller is disconnected.

TB_NQN=${TB_NQN:-nqn.2026-11.io.pathwise:testbed}
TB_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5a1e0000-0000-4000-8000-00000000cafe
TB_HOSTID=5a1e0000-0000-4000-8000-00000000cafe
TB_CFS=/sys/kernel/config/nvmet
TB_OUT=/tb/out

tb_log() { echo "tb: $*" >&2; }
tb_die() {
  echo "tb: error: $*" >&2
  return 1
}

# tb_wait SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
tb_wait() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}

tb_kind() { echo "${TB_TOPOLOGY%%:*}"; }
tb_npaths() { echo "${TB_TOPOLOGY##*:}"; }

_tb_check_index() {
  [[ $1 =~ ^[0-9]+$ ]] && (($1 < $(tb_npaths))) ||
    tb_die "path index '$1' out of range 0..$(($(tb_npaths) - 1))"
}
_tb_need_tcp() {
  [[ $(tb_kind) == tcp ]] || tb_die "$1 needs a tcp topology (this is $TB_TOPOLOGY)"
}
# tcp and loop: the target is nvmet in this guest, one port per path.
_tb_nvmet() { [[ ${TB_TOPOLOGY%%:*} == tcp || ${TB_TOPOLOGY%%:*} == loop ]]; }
_tb_need_nvmet() {
  _tb_nvmet || tb_die "$1 needs a tcp or loop topology (this is $TB_TOPOLOGY)"
}

# ---------------------------------------------------------------- topology
# _tb_read VAR FILE: VAR = FILE's first line, with no fork (tb_refresh and
# the polls around it run in loops, and a fork costs up to a second in a
# loaded TCG guest); fails when FILE cannot be read.
_tb_read() {
  local -n _tb_v=$1
  _tb_v=""
  { IFS= read -r _tb_v || [[ -n $_tb_v ]]; } 2>/dev/null <"$2"
}

_tb_ctrl_key() { # CTRL: sets _TB_KEY, the identity: traddr (tcp, loop) or PCI address
  _tb_read _TB_KEY "/sys/class/nvme/$1/address" || return 1
  if _tb_nvmet; then
    _TB_KEY=${_TB_KEY#traddr=}
    _TB_KEY=${_TB_KEY%%,*}
  fi
}

_tb_index_key() { # I: sets _TB_KEY, path I's controller identity
  if [[ ${TB_TOPOLOGY%%:*} == tcp ]]; then
    _TB_KEY=10.77.$1.2
  elif [[ ${TB_TOPOLOGY%%:*} == loop ]]; then
    _TB_KEY=loop$1
  else
    _TB_KEY=${TB_PCI_ADDRS[$1]}
  fi
}

# tb_refresh: recomputes TB_CTRLS, TB_PATHS, TB_HEAD ... from sysfs.
tb_refresh() {
  local n=${TB_TOPOLOGY##*:} i c key d
  TB_CTRLS=() TB_PATHS=() TB_NGS=()
  for ((i = 0; i < n; i++)); do
    TB_CTRLS[i]="" TB_PATHS[i]="" TB_NGS[i]=""
    _tb_index_key "$i"
    key=$_TB_KEY
    for d in /sys/class/nvme/nvme*; do
      [[ -e $d ]] || continue
      c=${d##*/}
      _tb_ctrl_key "$c" && [[ $_TB_KEY == "$key" ]] || continue
      TB_CTRLS[i]=$c
      for d in "/sys/class/nvme/$c"/nvme*n*; do
        [[ -e $d && ${d##*/} =~ ^nvme[0-9]+(c[0-9]+)?n[0-9]+$ ]] || continue
        TB_PATHS[i]=${d##*/}
        if [[ $TB_MULTIPATH == off && -e /sys/class/nvme-generic/ng${TB_PATHS[i]#nvme} ]]; then
          TB_NGS[i]=/dev/ng${TB_PATHS[i]#nvme}
        fi
        break
      done
      break
    done
  done
  TB_SUBSYS="" TB_HEAD="" TB_NG=""
  for c in "${TB_CTRLS[@]}"; do
    [[ -n $c ]] || continue
    for d in /sys/class/nvme-subsystem/*; do
      [[ -e $d/$c ]] && TB_SUBSYS=${d##*/} && break
    done
    [[ -n $TB_SUBSYS ]] && _tb_read TB_NQN "/sys/class/nvme-subsystem/$TB_SUBSYS/subsysnqn"
    break
  done
  if [[ $TB_MULTIPATH == on && -n $TB_SUBSYS ]]; then
    for d in "/sys/class/nvme-subsystem/$TB_SUBSYS"/nvme*n*; do
      [[ -e $d && ${d##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
      TB_HEAD=/dev/${d##*/}
      [[ -e /sys/class/nvme-generic/ng${d##*/nvme} ]] && TB_NG=/dev/ng${d##*/nvme}
      break
    done
  fi
  return 0
}

tb_save_env() {
  {
    declare -p TB_KERNEL TB_TOPOLOGY TB_MULTIPATH TB_NQN TB_SUBSYS TB_HEAD TB_NG
    TB_NIC=${TB_NIC:-veth} && declare -p TB_NIC
    TB_TARGET=${TB_TARGET:-stored} && declare -p TB_TARGET
    declare -p TB_PATHS TB_CTRLS TB_NGS TB_OUT
    declare -p TB_PCI_ADDRS 2>/dev/null
  } | sed 's/^declare -/declare -g -/' >/run/tb.env
}

tb_load_env() {
  # shellcheck source=/dev/null
  . /run/tb.env
  export TB_KERNEL TB_TOPOLOGY TB_MULTIPATH TB_NQN TB_SUBSYS TB_HEAD TB_NG TB_OUT TB_NIC TB_TARGET
}

_tb_ctrl_live() {
  local st
  _tb_read st "/sys/class/nvme/$1/state" && [[ $st == live ]]
}

# _tb_all_ready: every index has a live controller and a path disk (and a
# head with multipath on).
_tb_all_ready() {
  local i n=${TB_TOPOLOGY##*:}
  tb_refresh
  for ((i = 0; i < n; i++)); do
    [[ -n ${TB_CTRLS[i]} && -n ${TB_PATHS[i]} ]] || return 1
    _tb_ctrl_live "${TB_CTRLS[i]}" || return 1
    [[ -b /dev/${TB_PATHS[i]} || $TB_MULTIPATH == on ]] || return 1
  done
  [[ $TB_MULTIPATH == off || -b $TB_HEAD ]]
}

_tb_connect() { # index
  if [[ ${TB_TOPOLOGY%%:*} == loop ]]; then
    # nvme-loop picks the port whose traddr matches; there is no network
    # to lose, so no reconnect options.
    nvme connect -t loop -a "loop$1" -n "$TB_NQN" \
      --hostnqn="$TB_HOSTNQN" --hostid="$TB_HOSTID" >/dev/null
    return
  fi
  nvme connect -t tcp -a "10.77.$1.2" -s 4420 -n "$TB_NQN" \
    --hostnqn="$TB_HOSTNQN" --hostid="$TB_HOSTID" \
    --reconnect-delay=1 --ctrl-loss-tmo=600 >/dev/null
}

# _tb_nic_by_mac MAC: the interface with that address, once the driver has
# registered it.
_tb_nic_by_mac() {
  local d
  for d in /sys/class/net/*; do
    [[ $(cat "$d/address" 2>/dev/null) == "$1" ]] && echo "${d##*/}" && return 0
  done
  return 1
}

# --nic virtio: path i's two virtio-net NICs (the launcher gives them MACs
# 52:54:00:77:0i:01 and :02) renamed tbh<i> and tbt<i>. virtio_net uses
# min(queue pairs, online CPUs) of them and spreads their IRQs and XPS masks
# one CPU per pair.
_tb_virtio_pair() { # i
  local i=$1 end mac dev
  modprobe virtio_net || return 1
  for end in 1 2; do
    mac=52:54:00:77:0$i:0$end
    tb_wait 10 _tb_nic_by_mac "$mac" >/dev/null || tb_die "no NIC with MAC $mac" || return 1
    dev=$(_tb_nic_by_mac "$mac")
    ip link set "$dev" name "tb$([[ $end == 1 ]] && echo h || echo t)$i" || return 1
  done
  return 0
}

# _tb_target_subsys: the target's null_blk and the nvmet subsystem with it
# as namespace 1 (tcp and loop; the ports are the transport's).
_tb_target_subsys() {
  # memory_backed=1 keeps what is written (pages allocated as blocks are
  # first written); without it null_blk completes writes and keeps nothing,
  # and a read returns whatever the target's buffers held (--target
  # volatile, the old testbed, for showing that a data check fails there).
  modprobe null_blk nr_devices=1 gb=4 bs=4096 irqmode=0 \
    $([[ ${TB_TARGET:-stored} == volatile ]] && echo memory_backed=0 || echo memory_backed=1 discard=1) || return 1
  modprobe nvmet || return 1
  mkdir "$TB_CFS/subsystems/$TB_NQN" || return 1
  echo 1 >"$TB_CFS/subsystems/$TB_NQN/attr_allow_any_host"
  echo pathwise-tb >"$TB_CFS/subsystems/$TB_NQN/attr_model" 2>/dev/null
  mkdir "$TB_CFS/subsystems/$TB_NQN/namespaces/1"
  echo /dev/nullb0 >"$TB_CFS/subsystems/$TB_NQN/namespaces/1/device_path"
  echo 1 >"$TB_CFS/subsystems/$TB_NQN/namespaces/1/enable"
}

_tb_setup_tcp() {
  local n i port
  n=$(tb_npaths)
  _tb_target_subsys || return 1
  modprobe nvmet-tcp && modprobe nvme-tcp || return 1
  ip netns add tgt && ip -n tgt link set lo up || return 1
  for ((i = 0; i < n; i++)); do
    if [[ ${TB_NIC:-veth} == virtio ]]; then
      _tb_virtio_pair "$i" || return 1
    else
      # --nic-queues: multi-queue veth pairs (each end N TX and N RX queues).
      ip link add "tbh$i" numtxqueues "${TB_NIC_QUEUES:-1}" \
        numrxqueues "${TB_NIC_QUEUES:-1}" type veth peer name "tbt$i" \
        numtxqueues "${TB_NIC_QUEUES:-1}" numrxqueues "${TB_NIC_QUEUES:-1}" ||
        return 1
    fi
    ip link set "tbt$i" netns tgt
    ip addr add "10.77.$i.1/24" dev "tbh$i"
    ip link set "tbh$i" up
    ip -n tgt addr add "10.77.$i.2/24" dev "tbt$i"
    ip -n tgt link set "tbt$i" up
  done
  for ((i = 0; i < n; i++)); do
    port=$TB_CFS/ports/$((i + 1))
    mkdir "$port"
    echo tcp >"$port/addr_trtype"
    echo ipv4 >"$port/addr_adrfam"
    echo "10.77.$i.2" >"$port/addr_traddr"
    echo 4420 >"$port/addr_trsvcid"
    # The listener must be created from inside the target's netns.
    nsenter --net=/run/netns/tgt \
      ln -s "$TB_CFS/subsystems/$TB_NQN" "$port/subsystems/$TB_NQN" || return 1
  done
  for ((i = 0; i < n; i++)); do
    _tb_connect "$i" || return 1
  done
}

# loop: nvmet's loop transport, one port per path (traddr loop<i>), each
# connected as its own controller of the one subsystem. No network and no
# emulated device under each I/O: the host's and the target's block layers
# and nvmet, nothing else, so the block layer's own costs are the largest
# share of an I/O the testbed can show.
_tb_setup_loop() {
  local n i port
  n=$(tb_npaths)
  _tb_target_subsys || return 1
  modprobe nvme-loop || return 1
  for ((i = 0; i < n; i++)); do
    port=$TB_CFS/ports/$((i + 1))
    mkdir "$port"
    echo loop >"$port/addr_trtype"
    echo "loop$i" >"$port/addr_traddr"
    ln -s "$TB_CFS/subsystems/$TB_NQN" "$port/subsystems/$TB_NQN" || return 1
  done
  for ((i = 0; i < n; i++)); do
    _tb_connect "$i" || return 1
  done
}

_tb_setup_pcie() {
  local d
  modprobe nvme || return 1
  tb_wait 20 eval '(( $(ls -d /sys/class/nvme/nvme* 2>/dev/null | wc -l) >= $(tb_npaths) ))' ||
    return 1
  TB_PCI_ADDRS=()
  for d in /sys/class/nvme/nvme*; do
    TB_PCI_ADDRS+=("$(cat "$d/address")")
  done
  mapfile -t TB_PCI_ADDRS < <(printf '%s\n' "${TB_PCI_ADDRS[@]}" | sort)
}

tb_setup() {
  set -x
  modprobe nvme_core "multipath=$([[ $TB_MULTIPATH == on ]] && echo Y || echo N)" ||
    return 1
  case $(tb_kind) in
    tcp) _tb_setup_tcp || return 1 ;;
    pcie) _tb_setup_pcie || return 1 ;;
    loop) _tb_setup_loop || return 1 ;;
  esac
  set +x
  tb_wait 30 _tb_all_ready || {
    tb_die "topology did not come up: ctrls=(${TB_CTRLS[*]}) paths=(${TB_PATHS[*]}) head=$TB_HEAD"
    return 1
  }
  mkdir -p "$TB_OUT"
  tb_save_env
  _tb_save_baseline
}

# What tb_reset returns to besides the topology: the iopolicy and the
# loaded modules as tb_setup left them.
_tb_save_baseline() {
  local pol="" m rest mods=" "
  [[ -n $TB_SUBSYS ]] && _tb_read pol "/sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy"
  while read -r m rest; do mods+="$m "; done </proc/modules
  printf 'TB_BASE_IOPOLICY=%q\nTB_BASE_MODULES=%q\n' "$pol" "$mods" >/run/tb.baseline
}

# tb_reset: back to what tb_setup left, whatever a script changed: netem
# removed, links up, every port's ANA group optimized, every controller
# connected and live (and reporting optimized again), the iopolicy as after
# setup, modules loaded since then unloaded, no pathwise BPF program left.
# Logs each thing it had to undo; fails when the topology does not come
# back or a pathwise BPF program stays loaded. Builtins where it can: with
# nothing to undo it runs bpftool and one sed, nothing else.
tb_reset() {
  local i n=${TB_TOPOLOGY##*:} st f m rest ana_changed=0 new_mods=()
  # shellcheck source=/dev/null
  . /run/tb.baseline
  while read -r m rest; do
    [[ $TB_BASE_MODULES == *" $m "* ]] || new_mods+=("$m")
  done </proc/modules
  if [[ ${TB_TOPOLOGY%%:*} == tcp ]]; then
    for ((i = 0; i < n; i++)); do
      # No netem qdisc can exist while sch_netem is not loaded.
      if [[ " ${new_mods[*]} " == *" sch_netem "* ]]; then
        st=$(tc qdisc show dev "tbh$i" | grep -w netem)
        if [[ -n $st ]]; then
          tb_log "path $i: netem removed ($st)"
          tc qdisc del dev "tbh$i" root
        fi
        st=$(tc -n tgt qdisc show dev "tbt$i" | grep -w netem)
        if [[ -n $st ]]; then
          tb_log "path $i: target end's netem removed ($st)"
          tc -n tgt qdisc del dev "tbt$i" root
        fi
      fi
      # IFF_UP is bit 0 of flags; carrier needs both veth ends up.
      _tb_read st "/sys/class/net/tbh$i/flags"
      if ((!(st & 1))); then
        tb_log "path $i: link tbh$i set up"
        ip link set "tbh$i" up
      fi
      _tb_read st "/sys/class/net/tbh$i/carrier"
      if [[ $st != 1 ]]; then
        tb_log "path $i: no carrier on tbh$i; target end tbt$i set up"
        ip -n tgt link set "tbt$i" up
      fi
    done
  fi
  if _tb_nvmet; then
    for ((i = 0; i < n; i++)); do
      f=$TB_CFS/ports/$((i + 1))/ana_groups/1/ana_state
      _tb_read st "$f"
      if [[ $st != optimized ]]; then
        tb_log "path $i: ANA $st -> optimized"
        echo optimized >"$f"
        ana_changed=1
      fi
    done
  fi
  tb_refresh
  for ((i = 0; i < n; i++)); do
    [[ -z ${TB_CTRLS[i]} ]] || continue
    tb_log "path $i: no controller; connecting it again"
    if _tb_nvmet; then
      _tb_connect "$i"
    else
      echo 1 >/sys/bus/pci/rescan
    fi
  done
  tb_wait 60 _tb_all_ready ||
    tb_die "reset: the topology did not come back: ctrls=(${TB_CTRLS[*]}) paths=(${TB_PATHS[*]}) head=$TB_HEAD" ||
    return 1
  if ((ana_changed)); then
    for ((i = 0; i < n; i++)); do
      if [[ $TB_MULTIPATH == on ]]; then
        tb_wait 15 eval "_tb_read st /sys/block/${TB_PATHS[i]}/ana_state && [[ \$st == optimized ]]"
      else
        tb_wait 15 _tb_ana_log_says "${TB_CTRLS[i]}" optimized
      fi || tb_die "reset: path $i does not report ANA optimized" || return 1
    done
  fi
  f=/sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy
  if [[ -n $TB_BASE_IOPOLICY ]] && _tb_read st "$f" && [[ $st != "$TB_BASE_IOPOLICY" ]]; then
    tb_log "iopolicy $st -> $TB_BASE_IOPOLICY"
    echo "$TB_BASE_IOPOLICY" >"$f" || return 1
  fi
  for m in "${new_mods[@]}"; do
    if modprobe -r "$m" 2>/dev/null; then
      tb_log "module $m unloaded"
    else
      tb_log "module $m loaded since setup, in use: kept"
    fi
  done
  tb_wait 5 eval '! bpftool prog show 2>/dev/null | grep -q " name pw_"' ||
    tb_die "reset: pathwise BPF programs still loaded: $(bpftool prog show | grep ' name pw_')" ||
    return 1
  tb_save_env
}

# ---------------------------------------------------------------- helpers
tb_path_delay() { # i MS [JITTER]
  _tb_need_tcp tb_path_delay && _tb_check_index "$1" || return 1
  [[ $2 =~ ^[0-9]+$ ]] || tb_die "tb_path_delay: delay '$2' is not a number of ms" || return 1
  tc qdisc replace dev "tbh$1" root netem delay "${2}ms" ${3:+"${3}ms"}
}

tb_path_loss() { # i PCT
  _tb_need_tcp tb_path_loss && _tb_check_index "$1" || return 1
  [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || tb_die "tb_path_loss: '$2' is not a percentage" || return 1
  tc qdisc replace dev "tbh$1" root netem loss "${2}%"
}

# The target-to-host direction (read data, write completions) limited to
# MBIT megabit/s: a capacity-bound path (netem on the target's end, in its
# netns; the host's end keeps its own delay or loss).
tb_path_rate() { # i MBIT
  _tb_need_tcp tb_path_rate && _tb_check_index "$1" || return 1
  [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || tb_die "tb_path_rate: '$2' is not a number of Mbit/s" || return 1
  tc -n tgt qdisc replace dev "tbt$1" root netem rate "${2}mbit"
}

tb_path_clear() { # i: both ends' netem (delay, loss, rate) removed
  _tb_need_tcp tb_path_clear && _tb_check_index "$1" || return 1
  tc qdisc del dev "tbh$1" root 2>/dev/null
  tc -n tgt qdisc del dev "tbt$1" root 2>/dev/null
  return 0
}

tb_path_down() { # i
  _tb_need_tcp tb_path_down && _tb_check_index "$1" || return 1
  ip link set "tbh$1" down
}

tb_path_up() { # i
  _tb_need_tcp tb_path_up && _tb_check_index "$1" || return 1
  ip link set "tbh$1" up
}

# _tb_ana_log_says CTRL STATE: some group in CTRL's ANA log page (nvme-cli,
# whose JSON keys differ between versions) is in STATE.
_tb_ana_log_says() {
  nvme ana-log "/dev/$1" -o json 2>/dev/null |
    jq -e --arg s "$2" '[.. | objects | select(has("grpid")) | (.state // .State)] | index($s) != null' >/dev/null
}

tb_path_ana() { # i optimized|non-optimized|inaccessible
  _tb_need_nvmet tb_path_ana && _tb_check_index "$1" || return 1
  case $2 in
    optimized | non-optimized | inaccessible) ;;
    *) tb_die "tb_path_ana: unknown state '$2' (optimized|non-optimized|inaccessible)" || return 1 ;;
  esac
  echo "$2" >"$TB_CFS/ports/$(($1 + 1))/ana_groups/1/ana_state" || return 1
  tb_refresh
  local p=${TB_PATHS[$1]} c=${TB_CTRLS[$1]}
  [[ -n $p ]] || return 0 # disconnected: the target side is set, nothing to wait for
  if [[ $TB_MULTIPATH == off ]]; then
    # The host reads no ANA log without multipath (no ana_state in sysfs):
    # wait until the controller's own ANA log page, read by nvme-cli, says it.
    tb_wait 15 _tb_ana_log_says "$c" "$2" ||
      tb_die "path $1 ($c) did not report ANA state $2 in its ANA log page"
    return
  fi
  tb_wait 15 eval "[[ \$(cat /sys/block/$p/ana_state 2>/dev/null) == $2 ]]" ||
    tb_die "path $1 ($p) did not report ana_state $2 (now: $(cat "/sys/block/$p/ana_state" 2>&1))"
}

tb_ctrl_disconnect() { # i
  _tb_check_index "$1" || return 1
  tb_refresh
  local c=${TB_CTRLS[$1]}
  [[ -n $c ]] || tb_die "tb_ctrl_disconnect: path $1 has no controller" || return 1
  if _tb_nvmet; then
    nvme disconnect -d "$c" >/dev/null || return 1
  else
    echo 1 >"/sys/class/nvme/$c/device/remove" || return 1
  fi
  tb_wait 20 eval "[[ ! -e /sys/class/nvme/$c ]]" || tb_die "$c did not go away" || return 1
  tb_refresh
  tb_save_env
}

tb_ctrl_reconnect() { # i
  _tb_check_index "$1" || return 1
  if _tb_nvmet; then
    _tb_connect "$1" || return 1
  else
    echo 1 >/sys/bus/pci/rescan || return 1
  fi
  tb_wait 30 _tb_all_ready || tb_die "path $1 did not come back" || return 1
  tb_save_env
}

tb_iopolicy() { # numa|round-robin|queue-depth
  [[ -n $TB_SUBSYS ]] || tb_die "tb_iopolicy: no subsystem" || return 1
  local f=/sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy
  echo "$1" >"$f" 2>/dev/null || tb_die "tb_iopolicy: kernel $(uname -r) rejects '$1'" || return 1
  [[ $(cat "$f") == "$1" ]] || tb_die "tb_iopolicy: iopolicy is $(cat "$f"), not $1"
}

# tb_fio [fio args]: fio on the head device with defaults that later args
# override (direct 4k random reads, QD16, 10 s).
tb_fio() {
  local dev=${TB_HEAD:-}
  if [[ -z $dev ]]; then
    [[ " $* " == *" --filename="* ]] || tb_die "tb_fio: no head device (multipath off): pass --filename=" || return 1
    dev=/dev/null
  fi
  fio --name=tb --filename="$dev" --eta=never --direct=1 --ioengine=libaio --rw=randread \
    --bs=4k --iodepth=16 --time_based --runtime=10 "$@"
}

# tb_fio_stop PID: ends a `tb_fio ... &` before its --runtime and waits for
# it. PID ($!) is the subshell that runs the function, not fio: a signal to
# the subshell alone leaves fio running out its --runtime with the case's
# output open, and the launcher, which reads a case's log to its end, waits
# that long for the case. SIGTERM goes to fio itself (it then writes its
# report); a fio still there after 30 s (I/O stuck on a dead path) is
# killed.
tb_fio_stop() {
  local pid=$1
  pkill -TERM -P "$pid" -x fio
  tb_wait 30 eval '! pgrep -P "$pid" -x fio >/dev/null' || pkill -KILL -P "$pid" -x fio
  wait "$pid" 2>/dev/null
  return 0
}

# tb_require_stored_data DEV [OFFSET_MIB]: fails, with a line saying why,
# unless DEV keeps what is written to it: a data check against a target
# that stores nothing proves nothing. 64 distinct random 4 KiB blocks go to
# OFFSET_MIB (default: the device's last MiB), then 4 MiB of other random
# data to the MiB before it, so that no buffer on the way still holds the
# first write, then the 64 blocks are read back (O_DIRECT both ways) and
# compared. Overwrites those 5 MiB.
tb_require_stored_data() {
  local dev=$1 size off mib tmp rc=0
  [[ -b $dev ]] || tb_die "tb_require_stored_data: '$dev' is not a block device" || return 1
  size=$(blockdev --getsize64 "$dev") || return 1
  mib=${2:-$((size / 1048576 - 1))}
  ((mib >= 4 && (mib + 1) * 1048576 <= size)) ||
    tb_die "tb_require_stored_data: offset ${mib} MiB is outside $dev ($size bytes)" || return 1
  tmp=$(mktemp -d)
  head -c $((256 << 10)) /dev/urandom >"$tmp/a"
  head -c $((4 << 20)) /dev/urandom >"$tmp/b"
  dd if="$tmp/a" of="$dev" bs=4k seek=$((mib * 256)) oflag=direct conv=notrunc status=none &&
    dd if="$tmp/b" of="$dev" bs=1M seek=$((mib - 4)) oflag=direct conv=notrunc status=none &&
    dd if="$dev" of="$tmp/r" bs=4k skip=$((mib * 256)) count=64 iflag=direct status=none || rc=2
  if ((rc == 0)) && ! cmp -s "$tmp/a" "$tmp/r"; then rc=1; fi
  rm -rf "$tmp"
  case $rc in
    0) tb_log "$dev stores data (256 KiB at $mib MiB read back intact after 4 MiB more)" ;;
    1) tb_die "$dev does not store data: 256 KiB written at $mib MiB read back different (target: ${TB_TARGET:-stored}); a data check against it proves nothing" ;;
    *) tb_die "$dev: the stored-data check could not write or read it" ;;
  esac
  return $((rc != 0))
}

# tb_path_stat i: prints "reads read_ticks_ms writes write_ticks_ms" of the path disk.
tb_path_stat() {
  local p=${TB_PATHS[$1]}
  awk '{print $1, $4, $5, $8}' "/sys/block/$p/stat"
}

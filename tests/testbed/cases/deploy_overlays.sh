# SPDX-License-Identifier: Apache-2.0
# The DaemonSet args of every Kubernetes overlay, run in the guest as the
# base's are (deploy_e2e.sh, deploy_image.sh), tcp:2. The manifests were
# rendered on the host by the real kustomize (tests/deploy/render-overlays.sh:
# RENDERED/OVERLAY/CONTAINER.args); this runs each distinct set of args once
# and names the overlays it stands for:
# - multipath on: every `serve` container (base, no-operator, dashboards,
#   active, and the agent of datapath). /healthz answers; /metrics has both
#   paths, with I/O counted under fio; with --actuate the actuator's mode
#   series says so, with --probe-interval other than 0 both controllers have
#   probe latencies; SIGTERM ends it with status 0.
# - multipath off: every `datapath` container (overlay datapath): the device
#   it announces takes I/O, /healthz answers, /metrics has the datapath's
#   series for both paths; SIGTERM ends it with status 0 and removes the device.
# A container whose first arg is neither fails the case.
# Args: PATHWISE_BINARY RENDERED_DIR
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1 rendered=$2
[[ -d $rendered ]] || fail "no rendered manifests at $rendered (run the deploy_kubernetes_render test first)"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
want=serve
[[ $TB_MULTIPATH == off ]] && want=datapath

# Distinct arg sets of the wanted kind -> the overlay/container names using them.
declare -A who
n_files=0
for f in "$rendered"/*/*.args; do
  n_files=$((n_files + 1))
  first=$(head -1 "$f")
  [[ $first == serve || $first == datapath ]] || fail "$f: a container that runs '$first'"
  [[ $first == "$want" ]] || continue
  a=$(paste -sd' ' "$f")
  rel=${f#"$rendered"/}
  who[$a]+="${who[$a]:+, }${rel%.args}"
done
((n_files > 0)) || fail "no DaemonSet containers under $rendered"
((${#who[@]} > 0)) || fail "no overlay runs '$want'"

port_of() { sed -nE 's/.*--web.listen-address=[^ ]*:([0-9]+)( |$).*/\1/p' <<<"$1"; }

run_serve() { # ARGS...
  local port n pid rc m=$TB_OUT/metrics.txt
  port=$(port_of "$*")
  [[ -n $port ]] || fail "no --web.listen-address in: $*"
  tb_iopolicy round-robin || fail "iopolicy"
  "$pw" "$@" >"$TB_OUT/agent.log" 2>&1 &
  pid=$!
  tb_wait 30 sh -c "curl -sf -o /dev/null http://127.0.0.1:$port/healthz || ! kill -0 $pid 2>/dev/null" || true
  curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" ||
    { cat "$TB_OUT/agent.log"; fail "no /healthz on :$port with: $*"; }
  tb_fio --runtime=3 --iodepth=4 --output="$TB_OUT/fio.txt" >/dev/null 2>&1 || fail "fio"
  sleep 2.5 # two --interval=1s windows
  curl -sf "http://127.0.0.1:$port/metrics" -o "$m" || fail "/metrics"
  for p in "$p0" "$p1"; do
    n=$(prom_values "$m" pathwise_path_io_completed_total path="$p" op=read | head -1)
    ((${n:-0} > 0)) || { cat "$TB_OUT/agent.log"; fail "$p: no reads counted (${n:-none}) with: $*"; }
  done
  if [[ " $* " == *" --actuate=on "* ]]; then
    expect_eq "pathwise_actuator_mode{mode=\"on\"}" "$(prom_values "$m" pathwise_actuator_mode mode=on)" 1
  fi
  if [[ " $* " == *" --probe-interval="* && " $* " != *" --probe-interval=0 "* ]]; then
    for c in "${TB_CTRLS[@]}"; do
      n=$(prom_values "$m" pathwise_controller_probe_latency_seconds_count controller="$c" | head -1)
      ((${n:-0} > 0)) || { cat "$TB_OUT/agent.log"; fail "$c: no probes (${n:-none}) with: $*"; }
    done
  fi
  kill -TERM $pid
  rc=0
  wait $pid || rc=$?
  expect_eq "exit status on SIGTERM with: $*" "$rc" 0
}

run_datapath() { # ARGS...
  local port dev pid rc m=$TB_OUT/metrics.txt
  port=$(port_of "$*")
  [[ -n $port ]] || fail "no --web.listen-address in: $*"
  "$pw" "$@" >"$TB_OUT/device.txt" 2>"$TB_OUT/datapath.log" &
  pid=$!
  # Until the device is announced, or the datapath has exited (a refused
  # namespace, say): then at once, with its message.
  tb_wait 30 sh -c "test -s '$TB_OUT/device.txt' || ! kill -0 $pid 2>/dev/null" || true
  [[ -s $TB_OUT/device.txt ]] || { cat "$TB_OUT/datapath.log"; fail "no device announced with: $*"; }
  dev=$(head -1 "$TB_OUT/device.txt")
  [[ $dev == /dev/ublkb* && -b $dev ]] || fail "'$dev' is not a ublk block device"
  tb_wait 30 curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" ||
    { cat "$TB_OUT/datapath.log"; fail "no /healthz on :$port with: $*"; }
  fio --name=dp --filename="$dev" --eta=never --direct=1 --ioengine=libaio --rw=randread --bs=4k \
    --iodepth=8 --io_size=$((400 * 4096)) --output="$TB_OUT/fio.txt" || fail "fio on $dev"
  curl -sf "http://127.0.0.1:$port/metrics" -o "$m" || fail "/metrics"
  [[ $(prom_count "$m" pathwise_datapath_info) -ge 1 ]] || fail "no pathwise_datapath_info"
  [[ $(prom_count "$m" pathwise_datapath_path_selections_total) -ge 2 ]] ||
    fail "pathwise_datapath_path_selections_total: not both paths"
  kill -TERM $pid
  rc=0
  wait $pid || rc=$?
  expect_eq "exit status on SIGTERM with: $*" "$rc" 0
  [[ ! -e $dev ]] || fail "$dev left behind"
}

for a in "${!who[@]}"; do
  read -ra args <<<"$a"
  if [[ $want == serve ]]; then run_serve "${args[@]}"; else run_datapath "${args[@]}"; fi
  pass "${who[$a]}: pathwise $a"
done

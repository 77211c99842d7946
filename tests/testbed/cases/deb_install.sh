# SPDX-License-Identifier: Apache-2.0
# The .deb installed and started as a user gets it, tcp:2. The guest has no
# init system of its own (stage 2 is PID 1), so the host's systemd boots
# as PID 1 of a container in the guest (its own PID and mount namespaces,
# the guest's network, cgroup v2, the guest's writable overlay root). In it:
# - `dpkg -i` of the package (its Depends are met by the host's packages,
#   which the guest's root is); its postinst, seeing systemd, enables and
#   starts pathwise.service;
# - systemd runs the installed unit, /usr/bin/pathwise with the unit's
#   sandbox: the agent's bounding set is the unit's CAP_BPF and CAP_PERFMON,
#   /healthz answers, and after fio on the head /metrics has both paths'
#   reads counted by the eBPF sampler;
# - `dpkg -r` stops and disables it and removes every file it installed.
# What it does not prove: a boot of a real host (the units' ordering
# against network-online.target), or installation with apt resolving the
# Depends from an archive.
# Args: DEB
. "$TB_SCRIPT_DIR/assert.sh"
deb=$(readlink -f "$1")
[[ -s $deb ]] || fail "no .deb at $1 (run the package_deb test first)"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
out=$TB_OUT

mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "cgroup2"
unshare --pid --mount --fork --propagation private bash -c '
  mount -t proc proc /proc && mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /tmp &&
  exec env container=pathwise-testbed /lib/systemd/systemd --system \
    --unit=basic.target --log-target=console --log-level=notice
' >"$out/systemd.log" 2>&1 &
spid=""
for _ in $(seq 100); do
  spid=$(pgrep -x systemd | head -1) && [[ -n $spid ]] && break
  sleep 0.3
done
[[ -n $spid ]] || { cat "$out/systemd.log"; fail "systemd did not start"; }
sd() { nsenter -t "$spid" -m -p -- "$@"; }
finish() {
  sd journalctl --no-pager -u pathwise.service >"$out/journal.txt" 2>&1 || true
  sd systemctl poweroff --no-block >/dev/null 2>&1 || kill -TERM "$spid" 2>/dev/null
}
trap finish EXIT
# Its manager socket first: before it, is-system-running says "offline".
for _ in $(seq 600); do
  [[ -S /proc/$spid/root/run/systemd/private ]] && break
  sleep 0.3
done
state=$(timeout 180 nsenter -t "$spid" -m -p -- systemctl is-system-running --wait 2>&1) || true
[[ $state == running || $state == degraded ]] || { cat "$out/systemd.log"; fail "systemd: $state"; }
pass "systemd up as PID 1 of a container in the guest ($state)"

# man-db's trigger would rebuild the index of every man page of the
# guest's root (the host's, over 9p) after dpkg -i and again after -r: in
# TCG minutes of the run, and none of it the package's. Its documented
# switch, in the container's writable root only; the man page itself is
# checked below in the package's file list.
sd rm -f /var/lib/man-db/auto-update
SECONDS=0
sd dpkg -i "$deb" >"$out/dpkg-i.txt" 2>&1 || { cat "$out/dpkg-i.txt"; fail "dpkg -i $deb"; }
echo "dpkg -i took ${SECONDS}s"
expect_eq "package status" "$(sd dpkg-query -W -f='${Status} ${Version}' pathwise)" \
  "install ok installed $(dpkg-deb -f "$deb" Version)"
[[ -x /proc/$spid/root/usr/bin/pathwise ]] || fail "no /usr/bin/pathwise after dpkg -i"
sd dpkg -L pathwise | grep -qx /usr/share/man/man1/pathwise.1 ||
  fail "no man page (/usr/share/man/man1/pathwise.1) in the installed package"
pass "dpkg -i: $(sd dpkg -L pathwise | wc -l) paths installed, the man page among them"

unit=/usr/lib/systemd/system/pathwise.service
port=$(sed -nE 's/^ExecStart=.*listen[-_.a-z]*=[^ ]*:([0-9]+).*/\1/p' "/proc/$spid/root$unit")
[[ -n $port ]] || fail "no listen port in $unit"
expect_eq "enabled by the postinst" "$(sd systemctl is-enabled pathwise.service)" enabled
ok=1
for _ in $(seq 300); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; then ok=0; break; fi
  sleep 0.2
done
((ok == 0)) || { sd systemctl --no-pager status pathwise.service; fail "the installed agent did not answer /healthz on :$port"; }
expect_eq "pathwise.service" "$(sd systemctl is-active pathwise.service)" active
expect_eq "pathwise-datapath.service (installed, not enabled)" \
  "$(sd systemctl is-enabled pathwise-datapath.service 2>&1)" disabled
mainpid=$(sd systemctl show -P MainPID pathwise.service)
exe=$(sd readlink "/proc/$mainpid/exe")
expect_eq "the unit's process" "$exe" /usr/bin/pathwise
bnd=$(capsh --decode="$(sd awk '/^CapBnd/ { print $2 }' "/proc/$mainpid/status")" |
  sed 's/.*=//' | tr ',' '\n' | sort | paste -sd,)
expect_eq "its bounding set" "$bnd" cap_bpf,cap_perfmon
pass "systemd started the installed unit: /usr/bin/pathwise, /healthz on :$port"

tb_iopolicy round-robin || fail "iopolicy"
fio --name=deb --filename="$TB_HEAD" --eta=never --direct=1 --ioengine=libaio --rw=randread \
  --bs=4k --iodepth=8 --io_size=$((800 * 4096)) --output="$out/fio.txt" || fail "fio"
sleep 2.5 # two --interval=1s windows
curl -fsS "http://127.0.0.1:$port/metrics" -o "$out/metrics.txt" || fail "/metrics"
expect_eq "sampler" "$(prom_values "$out/metrics.txt" pathwise_sampler_info source=bpf)" 1
for p in "$p0" "$p1"; do
  n=$(prom_values "$out/metrics.txt" pathwise_path_io_completed_total path="$p" op=read | head -1)
  ((${n:-0} > 0)) || fail "$p: no reads counted (${n:-none})"
  pass "$p: $n reads counted by the eBPF sampler in the installed agent"
done

SECONDS=0
sd dpkg -r pathwise >"$out/dpkg-r.txt" 2>&1 || { cat "$out/dpkg-r.txt"; fail "dpkg -r"; }
echo "dpkg -r took ${SECONDS}s"
expect_eq "pathwise.service after dpkg -r" "$(sd systemctl is-active pathwise.service)" inactive
! curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null || fail "still answering after dpkg -r"
left=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | while read -r f; do
  [[ -e /proc/$spid/root$f ]] && echo "$f"; done)
[[ -z $left ]] || fail "files left after dpkg -r: $left"
pass "dpkg -r: stopped, nothing of the package left"

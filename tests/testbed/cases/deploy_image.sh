# SPDX-License-Identifier: Apache-2.0
# The container image in the guest, tcp:2: the OCI archive that
# deploy/build-image.sh built (the deploy_image test) is unpacked here, in
# the guest, and its filesystem runs the agent the way the DaemonSet does:
# - its own mount and network namespaces, the root filesystem read-only
#   (readOnlyRootFilesystem), the guest's /sys bound read-only at /sys (the
#   DaemonSet's only volume; a recursive bind, so the BTF under
#   /sys/kernel/btf and the bpffs at /sys/fs/bpf come with it), proc, and an
#   empty /dev;
# - chroot into it with the bounding set cut to the DaemonSet's capabilities
#   (capsh --chroot --drop), the image's entrypoint /usr/bin/pathwise with the
#   DaemonSet's exact args;
# - /healthz answers; after fio on the head, round-robin, /metrics has the
#   per-path series of both paths with I/O counted by the eBPF sampler
#   (sampler source bpf); SIGTERM ends it with status 0.
# Args: OCI_ARCHIVE RENDERED_DIR (the DaemonSet's args and capabilities, as
# kubectl kustomize rendered deploy/kubernetes on the host)
. "$TB_SCRIPT_DIR/assert.sh"
archive=$1 rendered=$2
[[ -s $archive ]] || fail "no image archive at $archive (run the deploy_image test first)"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}

# Unpack: index.json -> manifest -> config and layers, into the guest's tmpfs.
oci=/tmp/image/oci rootfs=/tmp/image/rootfs
mkdir -p $oci $rootfs
tar -xf "$archive" -C $oci || fail "untar $archive"
blob() { echo "$oci/blobs/${1/://}"; }
manifest=$(blob "$(jq -r '.manifests[0].digest' $oci/index.json)")
config=$(blob "$(jq -r '.config.digest' "$manifest")")
nl=0
while read -r layer; do
  tar -xf "$(blob "$layer")" -C $rootfs || fail "layer $layer"
  nl=$((nl + 1))
done < <(jq -r '.layers[].digest' "$manifest")
entry=$(jq -r '.config.Entrypoint | join(" ")' "$config")
expect_eq "image entrypoint" "$entry" /usr/bin/pathwise
[[ ! -e $rootfs/bin/sh && ! -e $rootfs/usr/bin/sh ]] || fail "the image has a shell"
pass "image unpacked in the guest: $nl layer(s), $(find $rootfs -type f | wc -l) files, $(du -sk $rootfs | cut -f1) KiB"

[[ -s $rendered/base/pathwise.args ]] || fail "no rendered DaemonSet args at $rendered (run the deploy_kubernetes_render test first)"
mapfile -t args <"$rendered/base/pathwise.args"
mapfile -t caps <"$rendered/base/pathwise.caps"
[[ ${args[0]} == serve ]] || fail "DaemonSet args: ${args[*]}"
port=$(printf '%s\n' "${args[@]}" | sed -nE 's/^--web.listen-address=.*:([0-9]+)$/\1/p')
# Every capability of the bounding set but the DaemonSet's.
keep=" $(printf 'cap_%s ' "${caps[@],,}")"
drop=$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | while read -r c; do
  [[ $keep == *" $c "* ]] || printf '%s,' "$c"
done)
drop=${drop%,}
[[ -n $drop ]] || fail "capsh: no bounding set"
mountpoint -q /sys/fs/bpf || fail "no bpffs at /sys/fs/bpf in the guest"
tb_iopolicy round-robin || fail "iopolicy"
mkdir -p $rootfs/sys $rootfs/proc $rootfs/dev

# In the pod's namespaces: mount and network (the agent listens on the pod
# IP; here on the namespace's loopback, which curl reaches from inside).
unshare --mount --net --fork -- bash -s -- "$TB_SCRIPT_DIR" "$rootfs" "$port" "$drop" "$p0" "$p1" \
  "$TB_HEAD" "$TB_OUT" "${caps[*]}" "${args[@]}" <<'INNER'
. "$1/assert.sh"
rootfs=$2 port=$3 drop=$4 p0=$5 p1=$6 head=$7 out=$8 caps=$9
shift 9
ip link set lo up
mount --bind "$rootfs" "$rootfs" && mount -o remount,bind,ro "$rootfs" || fail "read-only root"
mount --rbind /sys "$rootfs/sys" && mount -o remount,bind,ro "$rootfs/sys" || fail "bind /sys"
mount -t proc proc "$rootfs/proc" || fail "proc"
mount -t tmpfs -o ro,size=64k tmpfs "$rootfs/dev" || fail "/dev"
mountpoint -q "$rootfs/sys/fs/bpf" || fail "bpffs not under the bound /sys"
[[ -r $rootfs/sys/kernel/btf/nvme_core ]] || fail "no nvme_core BTF under the bound /sys"
touch "$rootfs/x" 2>/dev/null && fail "root filesystem writable"
pass "mounts: / read-only, /sys read-only (rbind: btf, bpffs at /sys/fs/bpf), proc, empty /dev"
capsh --chroot="$rootfs" --drop="$drop" --shell=/usr/bin/pathwise -- "$@" >"$out/agent.log" 2>&1 &
agent=$!
ok=1
for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; then ok=0; break; fi
  kill -0 $agent 2>/dev/null || break
  sleep 0.1
done
((ok == 0)) || { cat "$out/agent.log"; kill $agent 2>/dev/null; fail "the agent from the image did not answer /healthz"; }
pass "agent from the image answers /healthz; capabilities $caps; args: $*"
# Its effective set: exactly the DaemonSet's.
eff=$(capsh --decode="$(awk '/^CapEff/ { print $2 }' /proc/$agent/status)" | sed 's/.*=//' | tr ',' '\n' | sort | paste -sd,)
expect_eq "agent's effective capabilities" "$eff" "$(printf 'cap_%s\n' ${caps,,} | sort | paste -sd,)"
grep -q "eBPF sampler attached" "$out/agent.log" || { cat "$out/agent.log"; fail "no 'eBPF sampler attached' in the agent log"; }
fio --name=img --filename="$head" --eta=never --direct=1 --ioengine=libaio --rw=randread --bs=4k \
  --iodepth=8 --io_size=$((800 * 4096)) --output="$out/fio.txt" || fail "fio"
sleep 2.5 # two --interval=1s windows
curl -fsS "http://127.0.0.1:$port/metrics" -o "$out/metrics.txt" || fail "/metrics"
expect_eq "sampler" "$(prom_samples "$out/metrics.txt" pathwise_sampler_info source=bpf | awk '{ print $NF }')" 1
for p in "$p0" "$p1"; do
  [[ $(prom_count "$out/metrics.txt" pathwise_path_info path="$p") -ge 1 ]] || fail "no pathwise_path_info for $p"
  n=$(prom_values "$out/metrics.txt" pathwise_path_io_completed_total path="$p" op=read | head -1)
  ((${n:-0} > 0)) || fail "$p: no reads counted (${n:-none})"
  [[ $(prom_count "$out/metrics.txt" pathwise_path_io_latency_seconds_bucket path="$p" op=read) -gt 1 ]] ||
    fail "$p: no latency histogram"
  pass "$p: path_info, $n reads counted by the eBPF sampler, latency histogram"
done
kill -TERM $agent
rc=0
wait $agent || rc=$?
expect_eq "agent exit status on SIGTERM" "$rc" 0
INNER
rc=$?
((rc == 0)) || fail "the image's agent in its namespaces (status $rc)"
pass "the image's filesystem runs the agent in the guest as the DaemonSet does"

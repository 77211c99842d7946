#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Container image (label image): builds it with deploy/build-image.sh,
# unpacks the OCI archive, checks that its files are exactly the agent, its
# man page and its ldd closure and that its entrypoint is the agent, then runs the
# unpacked filesystem the way the DaemonSet does: chroot into it, the host's
# /sys bound read-only at /sys, in its own network namespace, with the
# DaemonSet's exact args, and scrapes /healthz and /metrics; then once more
# with --web.config.file (TLS and basic auth), which must work with only the
# image's libraries (no libssl.so from a -dev package).
#   tests/deploy/image-test.sh PATHWISE_BINARY WORKDIR
set -euo pipefail
bin=$(readlink -f "$1")
work=$2
here=$(dirname "$(readlink -f "$0")")
root=$here/../..
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root (buildah, chroot, mounts)"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
archive=$work/pathwise.oci.tar
"$root/deploy/build-image.sh" "$bin" "$archive"

# Unpack: index.json -> manifest -> config and layers.
oci=$work/oci; rootfs=$work/rootfs
mkdir -p "$oci" "$rootfs"
tar -xf "$archive" -C "$oci"
blob() { echo "$oci/blobs/${1/://}"; }
manifest=$(blob "$(jq -r '.manifests[0].digest' "$oci/index.json")")
config=$(blob "$(jq -r '.config.digest' "$manifest")")
while read -r layer; do tar -xf "$(blob "$layer")" -C "$rootfs"; done < <(jq -r '.layers[].digest' "$manifest")

fail=0
want=$(sort "$work/pathwise.oci.files.txt")
have=$(cd "$rootfs" && find . -type f -printf '/%P\n' | sort)
if [[ $want == "$have" ]]; then
  echo "ok   image files are exactly the agent, its man page and its $(($(wc -l <<<"$want") - 2)) libraries"
else
  echo "FAIL image files differ from the agent + ldd closure:"; diff <(echo "$want") <(echo "$have") || true; fail=1
fi
for tool in bin/sh usr/bin/sh usr/bin/gcc usr/bin/cc usr/bin/apt-get usr/bin/dpkg; do
  [[ ! -e $rootfs/$tool ]] || { echo "FAIL image has $tool"; fail=1; }
done
ep=$(jq -c '.config.Entrypoint' "$config")
[[ $ep == '["/usr/bin/pathwise"]' ]] && echo "ok   entrypoint $ep" || { echo "FAIL entrypoint $ep"; fail=1; }
echo "image: archive $(($(stat -c %s "$archive") / 1024)) KiB, unpacked $(du -sk "$rootfs" | cut -f1) KiB"

# A throwaway certificate and a bcrypt hash for the TLS run, in a directory
# added to the filesystem after the file check above.
web=$rootfs/etc/pathwise-test
mkdir -p "$web"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$web/tls.key" -out "$web/tls.crt" 2>/dev/null
printf 'tls_server_config: {cert_file: tls.crt, key_file: tls.key}\nbasic_auth_users: {prom: %s}\n' \
  "'$(htpasswd -nbBC 4 prom s3cret | cut -d: -f2-)'" >"$web/web.yml"

mapfile -t args < <("$here/daemonset-args.sh" --args)
port=$(printf '%s\n' "${args[@]}" | sed -nE 's/^--web.listen-address=.*:([0-9]+)$/\1/p')
mkdir -p "$rootfs/sys" "$rootfs/proc" "$rootfs/dev"
set +e
unshare --mount --net --fork -- bash -s -- "$rootfs" "$port" "${args[@]}" <<'INNER'
set -u
rootfs=$1; port=$2; shift 2
ip link set lo up
mount --rbind /sys "$rootfs/sys" && mount -o remount,bind,ro "$rootfs/sys"
mount -t proc proc "$rootfs/proc"
mount -t tmpfs -o ro,size=64k tmpfs "$rootfs/dev"
unshare --root="$rootfs" -- /usr/bin/pathwise "$@" > "$rootfs/../agent.log" 2>&1 &
agent=$!
ok=1
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then ok=0; break; fi
  kill -0 $agent 2>/dev/null || break
  sleep 0.1
done
if [[ $ok -ne 0 ]]; then echo "FAIL agent from the image did not answer /healthz"; cat "$rootfs/../agent.log"; kill $agent 2>/dev/null; exit 1; fi
echo "ok   agent from the image answers /healthz with the DaemonSet's args: $*"
curl -fsS "http://127.0.0.1:$port/metrics" > "$rootfs/../metrics.txt"
kill -TERM $agent; wait $agent; rc=$?
grep -q '^pathwise_build_info{' "$rootfs/../metrics.txt" || { echo "FAIL no pathwise_build_info in /metrics"; exit 1; }
echo "ok   /metrics: $(grep -c '^pathwise_' "$rootfs/../metrics.txt") pathwise samples; $(grep '^pathwise_sampler_info' "$rootfs/../metrics.txt")"
[[ $rc -eq 0 ]] || { echo "FAIL agent exit status $rc on SIGTERM"; exit 1; }
echo "ok   clean exit on SIGTERM"
unshare --root="$rootfs" -- /usr/bin/pathwise "$@" --web.config.file=/etc/pathwise-test/web.yml \
  > "$rootfs/../agent-tls.log" 2>&1 &
agent=$!
code=000
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$rootfs/etc/pathwise-test/tls.crt" \
    -u prom:s3cret "https://127.0.0.1:$port/metrics")
  [[ $code == 200 ]] && break
  kill -0 $agent 2>/dev/null || break
  sleep 0.1
done
kill -TERM $agent 2>/dev/null; wait $agent
[[ $code == 200 ]] || { echo "FAIL agent from the image over TLS: $code"; cat "$rootfs/../agent-tls.log"; exit 1; }
echo "ok   agent from the image serves https with basic auth (--web.config.file)"
INNER
[[ $? -eq 0 ]] || fail=1
set -e
exit $fail

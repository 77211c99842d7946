#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the pathwise container image with buildah into an OCI archive.
#   [REGISTRY=host/path] deploy/build-image.sh [PATHWISE_BINARY] [OUT.oci.tar] [TAG]
#   deploy/build-image.sh --print-tag     # the tag it would give, and exit
# Defaults: build/pathwise, build/pathwise-image.oci.tar, and the tag
# $REGISTRY/pathwise:<version>, REGISTRY defaulting to localhost: the image
# deploy/kubernetes/base/kustomization.yaml names (`images:`, newName and
# newTag). For your registry, set REGISTRY here and newName there (the
# script prints how).
# The image is FROM scratch: the agent (stripped), its man page and exactly
# the shared libraries `ldd` resolves for it, at the paths the dynamic
# loader uses.
# buildah runs with the vfs storage driver and chroot isolation in private
# storage under a temporary directory, so it needs no daemon, overlayfs or
# user namespaces (it does need root, as the rest of the build does).
# Load the result with: podman load -i OUT, or skopeo copy oci-archive:OUT docker://...
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$here/..
version=$(sed -nE 's/^project\(pathwise VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")
if [[ ${1:-} == --print-tag ]]; then
  echo "${REGISTRY:-localhost}/pathwise:${version:-dev}"
  exit 0
fi
bin=$(readlink -f "${1:-$root/build/pathwise}")
out=${2:-$root/build/pathwise-image.oci.tar}
mkdir -p "$(dirname "$out")"
out=$(readlink -f "$out")
tag=${3:-${REGISTRY:-localhost}/pathwise:${version:-dev}}
[[ -x $bin ]] || { echo "build-image: no agent binary at $bin" >&2; exit 1; }
command -v buildah >/dev/null || { echo "build-image: buildah missing (apt-get install buildah)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pathwise-image.XXXXXX")
cleanup() {
  buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs rmi --all >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ctx=$tmp/context
rootfs=$ctx/rootfs
mkdir -p "$rootfs/usr/bin"
cp "$here/Containerfile" "$ctx/"
strip --strip-unneeded -o "$rootfs/usr/bin/pathwise" "$bin"

# The runtime closure: every "=> /path" of ldd plus the loader (PT_INTERP).
mapfile -t libs < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
((${#libs[@]} > 0)) || { echo "build-image: ldd found no libraries (static binary?)" >&2; exit 1; }
for lib in "${libs[@]}"; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"          # the file, under the name the loader asks for
done
# The man page, written by the binary from its own flag definitions (no
# `man` in the image: `podman cp` it out, or read it with the image's
# `pathwise COMMAND --help`, which says the same).
mkdir -p "$rootfs/usr/share/man/man1"
"$bin" help --man >"$rootfs/usr/share/man/man1/pathwise.1"
printf '%s\n' /usr/bin/pathwise /usr/share/man/man1/pathwise.1 "${libs[@]}" > "$ctx/manifest.txt"

B=(buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs)
"${B[@]}" bud --isolation chroot --quiet --layers=false -f "$ctx/Containerfile" -t "$tag" "$ctx" >/dev/null
rm -f "$out"
"${B[@]}" push --quiet "$tag" "oci-archive:$out:$tag"
cp "$ctx/manifest.txt" "${out%.tar}.files.txt"
size=$(stat -c %s "$out")
echo "build-image: $tag -> $out ($((size / 1024)) KiB, ${#libs[@]} libraries; file list ${out%.tar}.files.txt)"
if [[ $tag != localhost/* ]]; then
  echo "build-image: push it:  skopeo copy oci-archive:$out:$tag docker://$tag"
  echo "build-image: and point deploy/kubernetes at it: in base/kustomization.yaml, images: newName: ${tag%:*}  newTag: ${tag##*:}"
fi

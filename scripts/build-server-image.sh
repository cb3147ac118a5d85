#!/usr/bin/env bash
# Builds the server image (Dockerfile) from the packed package, not from the checkout:
#   scripts/build-server-image.sh [--tag platform-server:local] [--ignore-scripts]
# The build context is a temporary folder with three things (about 55 MB, most of it the cache):
#   platform-<version>.tgz   npm pack of this checkout (prepack builds it; --ignore-scripts packs dist/ as it is)
#   npm-<version>.tgz        npm itself, the version this machine runs, as the registry ships it
#   npm-cache/               npm's cache holding exactly the packages the tarball depends on
# so the image installs with `npm install -g --offline`: nothing inside the build talks to the npm
# registry (whose TLS may be intercepted by a proxy whose CA only this host trusts), and neither
# the host's whole npm cache nor the checkout is sent to the engine. The base image comes from
# scripts/build-base-images.sh server; the compiler stage reaches Debian's mirror (--network host).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=platform-server:local
pack_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --ignore-scripts) pack_flags+=(--ignore-scripts); shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
t0=$(date +%s)
npm pack "${pack_flags[@]}" --silent --pack-destination "$ctx" >/dev/null
(cd "$ctx" && npm pack --silent "npm@$(npm --version)" >/dev/null)
# Resolving the tarball's dependencies into a throwaway prefix fills the context's own cache with
# exactly them (fetched from the registry); no install script runs.
npm install --prefix "$ctx/resolve" --cache "$ctx/npm-cache" --prefer-offline --ignore-scripts --no-audit --no-fund --silent "$ctx"/platform-*.tgz
rm -rf "$ctx/resolve"
t1=$(date +%s)
echo "context: $(du -sh "$ctx" | cut -f1) in $((t1 - t0)) s" >&2
docker build --network host -f Dockerfile -t "$tag" "$ctx" >&2
echo "built $tag in $(($(date +%s) - t1)) s" >&2

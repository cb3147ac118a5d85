#!/usr/bin/env bash
# Builds the local base images the docker driver uses in tests and CI (DESIGN.md: there is no
# registry here). Each is a minimal Debian with one runtime, imported into the local engine:
#   platform-python:local (python3)   platform-node:local (nodejs)
#   platform-go:local (golang-go)      platform-ruby:local (ruby)
#   platform-server-base:local: what the server image (Dockerfile) starts from: Node.js 20 (Debian
#     trixie: bookworm's nodejs is 18, below the package's engines), python3 with venv for Python
#     workloads, bubblewrap for their isolation, tini to reap what workloads leave behind. npm is
#     not in it (its Debian package fails to configure under debootstrap): the Dockerfile's build
#     stage installs it with apt.
# Usage: scripts/build-base-images.sh [python] [node] [go] [ruby] [server]   (default: python)
set -euo pipefail
mirror=$(grep -hoE '^URIs: *\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}')
mirror=${mirror:-$(grep -hoE '^deb +\S+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')}
mirror=${mirror:-http://deb.debian.org/debian}
suite=${PLATFORM_BASE_SUITE:-bookworm}
build() {
  local pkg=$1 tag=$2 suite=${3:-$suite} dir
  if docker image inspect "$tag" >/dev/null 2>&1; then echo "$tag exists"; return 0; fi
  dir=$(mktemp -d)
  debootstrap --variant=minbase --include="$pkg" "$suite" "$dir" "$mirror" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; rm -rf "$dir" "$dir.log"; return 1; }
  tar -C "$dir" -c . | docker import - "$tag" >/dev/null
  rm -rf "$dir" "$dir.log"
  echo "built $tag"
}
# The images are independent and debootstrap mostly waits on downloads and disk: build them at once.
pids=()
for what in "${@:-python}"; do
  case "$what" in
    python) build python3 platform-python:local & ;;
    node) build nodejs platform-node:local & ;;
    go) build golang-go,ca-certificates platform-go:local & ;;
    ruby) build ruby platform-ruby:local & ;;
    server) build nodejs,python3,python3-venv,bubblewrap,tini,ca-certificates platform-server-base:local "${PLATFORM_SERVER_BASE_SUITE:-trixie}" & ;;
    *) echo "unknown base image $what" >&2; exit 2 ;;
  esac
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status

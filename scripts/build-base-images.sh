#!/usr/bin/env bash
# Builds the local base images the docker driver uses in tests and CI (DESIGN.md: there is no
# registry here). Each is a minimal Debian with one runtime, imported into the local engine:
#   platform-python:local (python3)   platform-node:local (nodejs)
#   platform-go:local (golang-go)      platform-ruby:local (ruby)
# Usage: scripts/build-base-images.sh [python] [node] [go] [ruby]   (default: python)
set -euo pipefail
mirror=$(grep -hoE '^URIs: *\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}')
mirror=${mirror:-$(grep -hoE '^deb +\S+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')}
mirror=${mirror:-http://deb.debian.org/debian}
suite=${PLATFORM_BASE_SUITE:-bookworm}
build() {
  local pkg=$1 tag=$2 dir
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
    *) echo "unknown base image $what" >&2; exit 2 ;;
  esac
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status

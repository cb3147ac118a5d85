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
for what in "${@:-python}"; do
  case "$what" in
    python) pkg=python3; tag=platform-python:local ;;
    node) pkg=nodejs; tag=platform-node:local ;;
    go) pkg=golang-go,ca-certificates; tag=platform-go:local ;;
    ruby) pkg=ruby; tag=platform-ruby:local ;;
    *) echo "unknown base image $what" >&2; exit 2 ;;
  esac
  if docker image inspect "$tag" >/dev/null 2>&1; then echo "$tag exists"; continue; fi
  dir=$(mktemp -d)
  debootstrap --variant=minbase --include="$pkg" "$suite" "$dir" "$mirror" >&2
  tar -C "$dir" -c . | docker import - "$tag"
  rm -rf "$dir"
  echo "built $tag"
done

#!/usr/bin/env bash
# Installs, builds, starts the local daemon (signing in automatically as the local admin) and runs
# the main job: deploy the example function and talk to it.
set -euo pipefail
cd "$(dirname "$0")/.."
# A checkout that already has its packages keeps them (npm ci would delete and refetch them all).
if [ ! -d node_modules ]; then
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi
# Workloads run inside a bubblewrap sandbox; the daemon refuses to run them unsandboxed unless told
# to (`daemon start --isolation none`), so install it where we can.
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap) >&2
  else
    echo "bubblewrap (bwrap) is missing: install it (apt-get install bubblewrap), or run 'platform daemon start --isolation none' first" >&2
  fi
fi
npm run build
./bin/run.js daemon start
./bin/run.js whoami
./bin/run.js deploy examples/hello-python          # packs, builds, waits for ready, prints the URL
./bin/run.js invoke hello -m "quickstart"          # talks to it through the daemon
./bin/run.js logs hello --history --limit 5        # what the function printed
./bin/run.js agents list

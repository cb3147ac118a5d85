#!/usr/bin/env bash
# Installs, builds, starts the local daemon, signs in (automatically, as the local admin) and
# runs the main job against it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
npm run build
./bin/run.js daemon start
./bin/run.js whoami
./bin/run.js projects list

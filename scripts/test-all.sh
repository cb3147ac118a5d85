#!/usr/bin/env bash
# Installs everything the tests need on a fresh machine, builds, and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages the tests use (real redis-server, runtimes for function shims, ...).
# Installed only when missing; a part that cannot be installed makes its tests skip loudly.
need=()
for pair in "redis-server:redis-server" "redis-cli:redis-tools" "go:golang-go" "ruby:ruby" "python3:python3" "dockerd:docker.io" "openssl:openssl" "debootstrap:debootstrap" "chattr:e2fsprogs" "pip3:python3-pip" "bwrap:bubblewrap" "chromium:chromium" "tmux:tmux" "zsh:zsh" "fish:fish" "dbus-daemon:dbus-daemon" "gnome-keyring-daemon:gnome-keyring" "secret-tool:libsecret-tools"; do
  bin=${pair%%:*}; pkg=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || need+=("$pkg")
done
# hvac drives the Vault API in test/secrets/vault-api.test.ts; Debian's package serves /usr/bin/python3.
/usr/bin/python3 -c 'import hvac' >/dev/null 2>&1 || need+=("python3-hvac")
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system packages: ${need[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >&2 \
      || echo "WARNING: could not install ${need[*]}; tests that need them will be skipped and say so" >&2
  else
    echo "WARNING: missing ${need[*]} and not root; tests that need them will be skipped and say so" >&2
  fi
fi

# Docker driver tests: an engine with host networking only, and locally built base images.
if command -v dockerd >/dev/null 2>&1 && ! docker info >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (dockerd --bridge=none --iptables=false >/tmp/dockerd.log 2>&1 &)
  for _ in $(seq 1 30); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi
# The images build in the background while npm installs and builds: they wait on downloads and disk.
(
  if docker info >/dev/null 2>&1 && command -v debootstrap >/dev/null 2>&1; then
    bash scripts/build-base-images.sh python node go ruby $([ "${PLATFORM_TEST_SERVER_IMAGE:-}" = 1 ] && echo server) >&2 || echo "WARNING: base images not built; docker driver and server image tests will skip and say so" >&2
  fi
  if docker info >/dev/null 2>&1 && command -v redis-server >/dev/null 2>&1; then
    bash scripts/build-redis-image.sh >&2 || echo "WARNING: platform-redis:local not built; cache docker tests will skip and say so" >&2
  fi
) &
images=$!

if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
npm run build
wait "$images"

mkdir -p .test-results
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results/vitest.json "$@"
status=$?
set -e
# The plain closing line CI reads: "N passed, N failed, N skipped".
node -e '
  const r = JSON.parse(require("fs").readFileSync(".test-results/vitest.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' || true
exit $status

#!/usr/bin/env bash
# Builds the local image the cache area's docker driver runs (default name platform-redis:local).
# There is no registry here: the image holds the machine's own redis-server and the shared
# libraries it links, imported from a directory. Usage: scripts/build-redis-image.sh [IMAGE]
set -euo pipefail
image=${1:-platform-redis:local}
bin=$(command -v redis-server)
version=$("$bin" --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/etc"
cp "$(readlink -f "$bin")" "$root/usr/local/bin/redis-server"
# Every library the binary links, plus the dynamic loader, at their own paths.
for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change "LABEL redis.version=$version" \
  --change 'CMD ["redis-server"]' - "$image" >/dev/null
echo "$image (redis $version)"

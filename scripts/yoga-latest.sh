#!/usr/bin/env bash
# The gateway's tests against the newest graphql-yoga 5.x and Yoga plugins the registry serves, in
# a copy of this checkout: the fast path calls Yoga's own code (src/pipeline/yoga-mirror.ts names
# what it still follows by hand), so an upgrade is a lockfile change and a green run of this.
# Prints the versions tried; exits non-zero when a test fails with them.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What git tracks, and what it would (a local run's uncommitted files).
git ls-files -z -co --exclude-standard | tar --null -cf - -T - | tar -xf - -C "$work"
cd "$work"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
npm install --no-save --no-audit --no-fund --loglevel=error \
  graphql-yoga@5 @graphql-yoga/plugin-defer-stream@3 @graphql-yoga/plugin-persisted-operations@3 \
  @graphql-yoga/plugin-csrf-prevention@3 @graphql-yoga/plugin-apq@3 >/dev/null
node -e 'for (const p of ["graphql-yoga", "@graphql-yoga/plugin-defer-stream", "@graphql-yoga/plugin-persisted-operations", "@graphql-yoga/plugin-csrf-prevention", "@graphql-yoga/plugin-apq"]) console.log(p, require(`${p}/package.json`).version)'
export TMPDIR="$work/tmp" JITI_RESPECT_TMPDIR_ENV=true
mkdir -p "$TMPDIR"
npx vitest run --project gateway --reporter=dot "$@"

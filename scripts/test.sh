#!/usr/bin/env bash
# `npm test`, `npm run test:load` and `npm run test:image`: the type check, codegen's drift check, prettier's check and vitest (its
# arguments passed on), with every temporary file of the run (vitest's, codegen's, tsx's, the
# tests' own) in a folder of its own under the machine's TMPDIR, removed when the run ends.
set -euo pipefail
cd "$(dirname "$0")/.."
run_tmp=$(mktemp -d)
trap 'rm -rf "$run_tmp"' EXIT
export TMPDIR="$run_tmp"
# codegen loads codegen.ts through jiti, which caches in /tmp unless told to take TMPDIR.
export JITI_RESPECT_TMPDIR_ENV=true
if [ "${1:-}" = "--image" ]; then
  shift
  npx vitest run --project image "$@"
elif [ "${1:-}" = "--load" ]; then
  # The files that time answers under load or read the heap, one at a time (CI runs them apart).
  shift
  npx vitest run --project timed "$@"
else
  # The type check runs beside the tests (one core for 20 s, while they mostly wait); either failing fails the run.
  npm run --silent typecheck &
  typecheck=$!
  npm run --silent codegen:check
  # Formatted as prettier writes it: a file's length is its concept's, never packed to meet a count.
  npx prettier --check . --log-level warn
  status=0
  npx vitest run --project gateway "$@" || status=$?
  wait "$typecheck" || status=$?
  exit "$status"
fi

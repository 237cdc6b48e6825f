#!/usr/bin/env bash
# The main job: install/build what is missing (with progress), then run the demo on the local stack.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node24.sh # the demo and its processes run on Node 24
bash scripts/ensure-deps.sh
exec node --import tsx cli/homeostat.ts dev "$@"

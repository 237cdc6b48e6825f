#!/bin/sh
# Ships a new build of the operator's workers the rainbow way (docs/shipping-a-new-version.md):
#   deploy/rainbow/ship.sh <new build-id> <old build-id> [ramp percent]
# 1. apply the new build's Deployment next to the old one and wait for its pods;
# 2. ramp a share of new runs to it (default 10 %), then promote it, waking every object workflow still
#    pinned to the old build so it continues onto the new one now, and wait until Temporal reports the
#    old build Drained (no open workflow pinned to it);
# 3. only then scale the old Deployment to 0 and delete it (its line in kustomization.yaml goes too).
# Any refusal (the compatibility check, no pollers, not drained in time) stops the script with the old
# workers still running. Needs kubectl, homeostat (the operator's CLI) and TEMPORAL_* in the environment.
set -eu
new=${1:-}
old=${2:-}
percent=${3:-10}
ns=${HOMEOSTAT_SYSTEM_NAMESPACE:-homeostat-system}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$new" ] || [ -z "$old" ]; then
  echo "usage: $0 <new build-id> <old build-id> [ramp percent]" >&2
  exit 2
fi
kubectl apply --server-side -k "$here/versions/$new"
kubectl -n "$ns" rollout status "deployment/homeostat-worker-$new" --timeout=10m
# The new build's workers must have polled before Temporal lets it take runs.
tries=0
until homeostat rollout status --json | grep -q "\"buildId\": \"$new\""; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "$0: build $new has not registered with Temporal after 5 minutes: are its workers connected?" >&2
    exit 1
  fi
  sleep 5
done
homeostat rollout ramp "$percent" "$new"
homeostat rollout status
# Watch the ramp here as long as you like (dashboards, `homeostat rollout status`), then:
homeostat rollout promote "$new" --wake --wait-drained 3600
homeostat rollout status
kubectl -n "$ns" scale "deployment/homeostat-worker-$old" --replicas=0
kubectl -n "$ns" delete "deployment/homeostat-worker-$old"
echo "build $old is drained and its workers are gone: remove '  - versions/$old' from $here/kustomization.yaml and the folder versions/$old"

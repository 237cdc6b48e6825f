#!/bin/sh
# Writes the worker overlay of a new build, deploy/rainbow/versions/<build-id>/, and lists it in
# deploy/rainbow/kustomization.yaml, next to the builds already there (docs/shipping-a-new-version.md).
#   deploy/rainbow/new-version.sh <build-id> <image tag> [image name]
# The build ID is the Temporal Worker Deployment build ID the workers run as (HOMEOSTAT_BUILD_ID) and
# the Deployment's name suffix: lowercase letters, digits and "-", at most 40 characters.
set -eu
build=${1:-}
tag=${2:-}
image=${3:-ghcr.io/homeostat-dev/homeostat}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$build" ] || [ -z "$tag" ]; then
  echo "usage: $0 <build-id> <image tag> [image name]" >&2
  exit 2
fi
if ! printf '%s' "$build" | grep -Eq '^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$'; then
  echo "$0: build ID \"$build\": lowercase letters, digits and \"-\", at most 40 characters (it names a Deployment)" >&2
  exit 2
fi
if ! printf '%s' "$tag" | grep -Eq '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$'; then
  echo "$0: image tag \"$tag\" is not an image tag" >&2
  exit 2
fi
dir="$here/versions/$build"
if [ -e "$dir" ]; then
  echo "$0: $dir exists: build $build is listed already" >&2
  exit 1
fi
mkdir -p "$dir"
cat > "$dir/kustomization.yaml" <<YAML
# The workers of build $build (written by deploy/rainbow/new-version.sh $build $tag).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: homeostat-system
nameSuffix: -$build
resources:
  - ../../worker-version
labels:
  - pairs:
      homeostat.dev/build-id: $build
    includeSelectors: true
    includeTemplates: true
  - pairs:
      app.kubernetes.io/part-of: homeostat
    includeSelectors: false
images:
  - name: homeostat
    newName: $image
    newTag: $tag
YAML
# Listed after the last build, so the file keeps one line per build.
if ! grep -q '^  - versions/' "$here/kustomization.yaml"; then
  echo "$0: no build listed in $here/kustomization.yaml: add '  - versions/$build' to its resources" >&2
  exit 1
fi
tmp="$here/kustomization.yaml.tmp"
awk -v line="  - versions/$build" '
  { lines[NR] = $0; if ($0 ~ /^  - versions\//) last = NR }
  END { for (i = 1; i <= NR; i++) { print lines[i]; if (i == last) print line } }
' "$here/kustomization.yaml" > "$tmp"
mv "$tmp" "$here/kustomization.yaml"
echo "wrote $dir/kustomization.yaml and listed it in $here/kustomization.yaml"

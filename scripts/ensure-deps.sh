#!/usr/bin/env bash
# Installs what homeostat needs and is missing, with visible progress, and reuses what is cached:
# Node 24 (scripts/node24.sh), Debian packages (openssl, docker-compose, chromium), npm packages (npm ci
# when the lock file changed), and the Go-built servers of the local stack (cached outside the repo,
# keyed by version).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

# Node 24 (fetched into the cache when the machine's is older) runs everything below, npm ci included.
source scripts/node24.sh
command -v go >/dev/null || { echo "homeostat's local stack is built with Go; install Go 1.26.8+" >&2; exit 1; }

# openssl: the local stack's certificates; docker-compose: the compose file's config check (no
# Docker engine is needed for it); chromium: the Temporal UI browser test (playwright-core drives
# Debian's build; no browser is downloaded).
missing=()
for tool in openssl docker-compose chromium; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  step "installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
fi

stamp=node_modules/.homeostat-lock.sha256
# Keyed by the lock file and by Node's module ABI, so a change of either reinstalls.
want="$(sha256sum package-lock.json | cut -d' ' -f1) abi$(node -p process.versions.modules)"
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  step "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
else
  step "npm packages up to date"
fi

# --cluster: also kube-controller-manager, kube-scheduler and kwok (stacks started with cluster: true),
# built here rather than inside a test's setup hook, where a cold build would outlast its timeout.
step "local stack servers (Go builds are cached; a cold build takes about 15-20 minutes on 2 cores)"
npx tsx devstack/cli.ts build --cluster

# schemathesis: the contract fuzzer of test/integration/api-contract.test.ts, a pinned version from PyPI in
# a venv cached outside the repo, keyed by that version (a new pin installs beside the old one). A venv
# cannot be moved, so it is built in place and marked complete last: an interrupted install is redone.
schemathesis_version=4.32.5
schemathesis_venv=${HOMEOSTAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/homeostat}/schemathesis-$schemathesis_version
if [[ ! -f $schemathesis_venv/.complete ]]; then
  command -v python3 >/dev/null ||
    { echo "the API contract test runs schemathesis: install Python 3.10+ with venv" >&2; exit 1; }
  step "installing schemathesis $schemathesis_version (PyPI) into $schemathesis_venv"
  rm -rf "$schemathesis_venv"
  python3 -m venv "$schemathesis_venv"
  "$schemathesis_venv/bin/pip" install --progress-bar on --disable-pip-version-check \
    "schemathesis==$schemathesis_version"
  "$schemathesis_venv/bin/schemathesis" --version
  touch "$schemathesis_venv/.complete"
else
  step "schemathesis $schemathesis_version cached in $schemathesis_venv"
fi

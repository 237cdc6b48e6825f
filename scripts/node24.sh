# Sourced (not run) by scripts/ensure-deps.sh, scripts/test.sh and scripts/demo.sh: makes Node 24 the
# `node` of the calling shell and of everything it starts (npm and npx included: they run on the first
# `node` on PATH, so `npm ci` checks `engines` against Node 24). A machine whose Node is older
# than 24 gets Node 24 from the npm registry's node-<platform>-<arch>@24 package (the official binary),
# installed once into the homeostat cache outside the repository and put first on PATH.

homeostat_use_node24() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "homeostat needs Node.js and npm to start (any version npm runs on: it then fetches Node 24 itself)" >&2
    return 1
  fi
  local machine
  machine=$(node -v)
  (( $(node -p 'process.versions.node.split(".")[0]') >= 24 )) && return 0
  local cache=${HOMEOSTAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/homeostat}
  local pkg
  pkg=node-$(node -p 'process.platform + "-" + process.arch')
  local bin=$cache/node24/node_modules/$pkg/bin
  if [[ ! -x $bin/node ]]; then
    printf '\n==> installing Node 24 (%s@24 from the npm registry) into %s\n' "$pkg" "$cache/node24" >&2
    mkdir -p "$cache/node24"
    npm install --prefix "$cache/node24" --no-save --no-audit --no-fund --no-package-lock "$pkg@24" >&2
  fi
  export PATH="$bin:$PATH"
  hash -r
  printf '==> running on Node %s from %s (the machine has %s)\n' "$(node -v)" "$bin" "$machine" >&2
}

homeostat_use_node24

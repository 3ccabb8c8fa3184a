#!/usr/bin/env bash
# Builds the example apps (into their dist/) against pkg/, which they link as file:../../pkg.
# examples/use-chat-pages (our useChat pages) is built twice: as written, with @ai-sdk/react's
# useChat (dist/), and with each `import { useChat } from '@ai-sdk/react';` line changed to
# agent-chat-store/react (ours/dist/), agent-chat-store installed from the `npm pack` tarball of
# pkg/ (not a link; reinstalled only when the tarball changed).
set -euo pipefail
cd "$(dirname "$0")/.."
for app in react-chat assistant-ui assistant-ui-stock; do
  (cd "examples/$app" && node node_modules/.bin/vite build --logLevel warn)
done

pages=examples/use-chat-pages
bash scripts/install-js.sh "$pages" "$pages/ours" # (skipped when installed)
(cd "$pages" && node node_modules/.bin/vite build --logLevel warn)
rm -rf "$pages/ours/src"
cp -R "$pages/src" "$pages/ours/src"
cp "$pages/index.html" "$pages/vite.config.js" "$pages/tsconfig.json" "$pages/ours/"
from="import { useChat } from '@ai-sdk/react';"
to="import { useChat } from 'agent-chat-store/react';"
importers=$(grep -rlF "$from" "$pages/src" | sort)
[ -n "$importers" ] || { echo "build-examples: no page of $pages/src imports useChat from @ai-sdk/react" >&2; exit 1; }
for f in $importers; do
  sed -i "s#^import { useChat } from '@ai-sdk/react';\$#$to#" "$pages/ours/${f#"$pages/"}"
done
# Each importing file differs in that one line, and no other file or line differs.
expected=$(for f in $importers; do printf '< %s\n> %s\n' "$from" "$to"; done)
actual=$(diff -r "$pages/src" "$pages/ours/src" | grep '^[<>]' || true)
if [ "$actual" != "${expected%$'\n'}" ] || [ "$(diff -rq "$pages/src" "$pages/ours/src" | sort | sed 's#^Files \([^ ]*\) and .*#\1#')" != "$importers" ]; then
  echo "build-examples: ours/src must differ from src in the useChat import lines only; diff:" >&2
  diff -r "$pages/src" "$pages/ours/src" >&2 || true
  exit 1
fi
mkdir -p target/use-chat-pages
tarball=$(cd target/use-chat-pages && npm pack --silent "$PWD/../../pkg" | tail -1)
sum=$(sha1sum "target/use-chat-pages/$tarball" | cut -d' ' -f1)
stamp="$pages/ours/node_modules/.agent-chat-store-tarball.sha1"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$sum" ]; then
  (cd "$pages/ours" && npm install --no-save --no-audit --no-fund --prefer-offline --loglevel=error "../../../target/use-chat-pages/$tarball")
  echo "$sum" > "$stamp"
fi
(cd "$pages/ours" && node node_modules/.bin/vite build --logLevel warn)

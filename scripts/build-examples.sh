#!/usr/bin/env bash
# Builds the example apps (into their dist/) against pkg/, which they link as file:../../pkg.
# examples/use-chat-docs (the AI SDK docs' useChat page) is built twice: as it is, with
# @ai-sdk/react's useChat (dist/), and with that one import line changed to
# agent-chat-store/react (ours/dist/), agent-chat-store installed from the `npm pack` tarball of
# pkg/ (not a link; reinstalled only when the tarball changed).
set -euo pipefail
cd "$(dirname "$0")/.."
for app in react-chat assistant-ui; do
  (cd "examples/$app" && node node_modules/.bin/vite build --logLevel warn)
done

docs=examples/use-chat-docs
bash scripts/install-js.sh "$docs" "$docs/ours" # (skipped when installed)
(cd "$docs" && node node_modules/.bin/vite build --logLevel warn)
rm -rf "$docs/ours/src"
cp -R "$docs/src" "$docs/ours/src"
cp "$docs/index.html" "$docs/vite.config.js" "$docs/ours/"
from="import { useChat } from '@ai-sdk/react';"
to="import { useChat } from 'agent-chat-store/react';"
grep -rlF "$from" "$docs/ours/src" | while read -r f; do
  sed -i "s#^import { useChat } from '@ai-sdk/react';\$#$to#" "$f"
done
# Exactly one line differs, and it is that one.
expected=$(printf '< %s\n> %s' "$from" "$to")
actual=$(diff -r "$docs/src" "$docs/ours/src" | grep '^[<>]' || true)
if [ "$actual" != "$expected" ]; then
  echo "build-examples: ours/src must differ from src in the useChat import line only; diff:" >&2
  diff -r "$docs/src" "$docs/ours/src" >&2 || true
  exit 1
fi
mkdir -p target/use-chat-docs
tarball=$(cd target/use-chat-docs && npm pack --silent "$PWD/../../pkg" | tail -1)
sum=$(sha1sum "target/use-chat-docs/$tarball" | cut -d' ' -f1)
stamp="$docs/ours/node_modules/.agent-chat-store-tarball.sha1"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$sum" ]; then
  (cd "$docs/ours" && npm install --no-save --no-audit --no-fund --prefer-offline --loglevel=error "../../../target/use-chat-docs/$tarball")
  echo "$sum" > "$stamp"
fi
(cd "$docs/ours" && node node_modules/.bin/vite build --logLevel warn)

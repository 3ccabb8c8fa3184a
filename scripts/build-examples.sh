#!/usr/bin/env bash
# Builds the example apps (into their dist/) against pkg/, which they link as file:../../pkg.
set -euo pipefail
cd "$(dirname "$0")/.."
for app in react-chat assistant-ui; do
  (cd "examples/$app" && node node_modules/.bin/vite build --logLevel warn)
done

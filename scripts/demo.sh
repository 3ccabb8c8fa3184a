#!/usr/bin/env bash
# The demo (README): builds the package and serves an example app (the React one unless
# --app assistant-ui or assistant-ui-stock) against the reference server (a real pi agent with a scripted model) on
# 127.0.0.1, printing the URL. Runs until interrupted, then stops its children.
#   bash scripts/demo.sh [--app react-chat|assistant-ui|assistant-ui-stock] [--port 8787] [--runtime pi|ai-sdk] [--tps 20]
#   (other flags go to the server as they are, e.g. --protocol pi-native: the pi-native routes
#   are served either way, see examples/server/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

bash scripts/setup.sh
bash scripts/install-js.sh .
bash scripts/build-pkg.sh
bash scripts/install-js.sh examples/server examples/react-chat examples/assistant-ui examples/assistant-ui-stock
bash scripts/build-examples.sh

PORT=8787
APP=react-chat
ARGS=()
QUERY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --app)
      case "$2" in
        react-chat|assistant-ui|assistant-ui-stock) APP="$2" ;;
        *) echo "demo: --app is react-chat, assistant-ui or assistant-ui-stock, not '$2'" >&2; exit 2 ;;
      esac
      shift 2 ;;
    # The app speaks the protocol the server presents (examples/shared/config.js reads it).
    --protocol) [ "$2" = pi-native ] && QUERY="?protocol=pi-native"; ARGS+=("$1" "$2"); shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done

node examples/server/server.mjs --port "$PORT" --static "examples/$APP/dist" "${ARGS[@]}" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 100); do
  if node -e "fetch('http://127.0.0.1:$PORT/api/v1/agent/capabilities?sessionId=probe').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then break; fi
  sleep 0.1
done
echo
echo "agent-chat-store demo: http://127.0.0.1:$PORT/$QUERY"
echo "(the $APP example and the reference server with a real pi agent; try: 'think about it', 'list files', 'echo hi'; Ctrl-C stops it)"
echo "(sessions survive a restart: they are kept in the folder of 'sessions in …' above; --data-dir DIR picks another)"
wait $SERVER

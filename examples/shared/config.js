// Where the chat store connects, read from the page URL:
//   ?server=http://127.0.0.1:PORT   the agent server (default: this page's own origin, as when
//                                    the reference server serves the built app at `/`)
//   ?session=ID                      the session to open (default: a fresh random one, written
//                                    back into the URL so a reload reopens the same session)
//   ?pageSize=N                      sessions per page of the session list (default: the
//                                    store's own), e.g. to see "Load more" with a few sessions
//   ?protocol=pi-native              speak the server's pi-native protocol (SPEC §14) instead of
//                                    its SSE routes
//   ?agentType=ID                    the pi-native agent type (default: the store's, `pi`, which
//                                    the reference server serves; the real upstream server's is
//                                    `default`)
//   ?capabilities=native             fixed capabilities, no capabilities request:
//                                    `{nativeFollowUp: true, aiSdkOwnsHistory: false}`, for a
//                                    server without the capabilities route (the real legacy
//                                    upstream server, which behaves so)

function randomId() {
  // crypto.getRandomValues works in insecure contexts too (crypto.randomUUID does not).
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return "chat-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// `?capabilities=native`; without it the store asks the server's capabilities route.
const NATIVE_CAPABILITIES = { nativeFollowUp: true, aiSdkOwnsHistory: false };

export function readConfig() {
  const params = new URLSearchParams(window.location.search);
  const server = params.get("server");
  let sessionId = params.get("session");
  if (!sessionId) {
    sessionId = randomId();
    writeSession(sessionId, { replace: true });
  }
  const pageSize = Number.parseInt(params.get("pageSize") ?? "", 10);
  return {
    baseUrl: server || "/",
    server: server || null,
    sessionId,
    sessionPageSize: pageSize > 0 ? pageSize : undefined,
    protocol: params.get("protocol") === "pi-native" ? "pi-native" : undefined,
    agentType: params.get("agentType") || undefined,
    capabilities: params.get("capabilities") === "native" ? NATIVE_CAPABILITIES : undefined,
  };
}

/** The session id currently in the URL (for back/forward navigation). */
export function sessionFromUrl() {
  return new URLSearchParams(window.location.search).get("session");
}

/**
 * Puts `sessionId` into the URL, keeping every other parameter (e.g. `server`). A URL that
 * already names it is left alone, so a switch made by back/forward pushes no new entry.
 */
export function writeSession(sessionId, { replace = false } = {}) {
  const url = new URL(window.location.href);
  if (url.searchParams.get("session") === sessionId) return;
  url.searchParams.set("session", sessionId);
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
}

// Switching sessions, the same in both example apps: the page URL holds the session (config.js).
import { useCallback, useEffect } from "react";
import { sessionFromUrl, writeSession } from "./config.js";

/**
 * Returns `switchTo(id)`: moves `store` to `id`, tells the app (`setSessionId`, which feeds the
 * store hook's `sessionId` option) and pushes `id` into the URL. Back/forward switch too, without
 * pushing (`fromHistory`).
 */
export function useSessionSwitch(store, setSessionId) {
  const switchTo = useCallback(
    (id, { fromHistory = false } = {}) => {
      id = id.trim();
      if (!id || !store) return;
      // Switch right away; the hook sees the store already on `id` and does nothing more.
      if (store.getSnapshot().sessionId !== id) store.switchSession(id);
      setSessionId(id);
      if (!fromHistory) writeSession(id);
    },
    [store, setSessionId],
  );

  useEffect(() => {
    const onPop = () => {
      const id = sessionFromUrl();
      if (id) switchTo(id, { fromHistory: true });
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [switchTo]);

  return switchTo;
}

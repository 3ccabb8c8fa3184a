// The open session lives in the page URL (config.js), the same in both example apps.
import { useCallback, useEffect, useState } from "react";
import { sessionFromUrl, writeSession } from "./config.js";

/**
 * The open session's id and the store's `onSessionChange` option that keeps it. Every switch
 * the store makes (the session list, a new session, deleting the open one, the header's form,
 * back/forward) lands here, so the URL follows and a reload reopens the same session. The id
 * feeds the store hook's `sessionId` option: a store created again (StrictMode) opens it too.
 */
export function useSessionUrl(initialId) {
  const [sessionId, setSessionId] = useState(initialId);
  const onSessionChange = useCallback((id, change) => {
    // A switch made by back/forward finds its id in the URL already: nothing is pushed. A
    // session the server named (`renamedFrom`, pi-native) is the same one: its entry is
    // replaced, so back does not lead to the id it had before.
    writeSession(id, { replace: !!change?.renamedFrom });
    setSessionId(id);
  }, []);
  return { sessionId, onSessionChange };
}

/**
 * Returns `switchTo(id)` for the header's "switch session by id" form, and makes back/forward
 * switch `store` to the URL's session. The URL and the app's state follow through the store's
 * `onSessionChange` (`useSessionUrl`).
 */
export function useSessionSwitch(store) {
  const switchTo = useCallback(
    (id) => {
      id = id.trim();
      if (id) store.switchSession(id);
    },
    [store],
  );

  useEffect(() => {
    const onPop = () => {
      const id = sessionFromUrl();
      if (id) switchTo(id);
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [switchTo]);

  return switchTo;
}

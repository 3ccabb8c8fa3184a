// The store's waiting follow-ups as assistant-ui's queue (`ExternalThreadQueueAdapter`), shown by
// `ComposerPrimitive.Queue` / `QueueItemPrimitive`. Each item carries the store's state for it
// (`ChatQueueItem`), and the stock buttons reach the store's actions: Steer ("Run Now") is
// `store.runQueuedNow(id)`, Remove `store.removeQueued(id)`. What Run Now does for an item is
// the store's rule (`runNow` on the item), never restated here.
import { createElement, useMemo } from "react";
import type { ReactElement } from "react";
import { useAuiState } from "@assistant-ui/react";
import type { AppendMessage, ExternalStoreAdapter, QueueItemState } from "@assistant-ui/react";
import type { ChatSnapshot, ChatStore, QueuedItem, QueuedState, RunNow } from "../agent_chat_store.js";
import { EMPTY, withFilename } from "./parts.js";

/**
 * An assistant-ui queue item as this binding makes one: assistant-ui's `QueueItemState` (`id`,
 * `prompt`, `parts`) with the store's state for it, which `ComposerPrimitive.Queue`'s
 * `queueItem` and `useAuiState((s) => s.queueItem)` hand back as they are.
 */
export interface ChatQueueItem extends QueueItemState {
  /** Where it is: `posting`, `queued`, `accepted` (the server has it), `failed`, `stalled`, `unsure`. */
  readonly state: QueuedState;
  /** Why it failed, or why the last action on it did nothing. */
  readonly error: QueuedItem["error"];
  /** Retry applies (`store.retryQueued`). */
  readonly canRetry: boolean;
  /** Remove applies (`store.removeQueued`; a refused Remove says why in `error`). */
  readonly canRemove: boolean;
  /** Another client's follow-up in the server's queue (pi-native): shown, never changed here. */
  readonly readOnly: boolean;
  /** Removed by the user, until the server lets it go. */
  readonly removing: boolean;
  /** What Run Now (QueueItemPrimitive.Steer) does for it now. */
  readonly runNow: RunNow;
  /** Run Now does something now (`retry` or `interrupt`); otherwise it runs after the current answer, or nothing applies. */
  readonly canRunNow: boolean;
}

const cache = new WeakMap<QueuedItem, ChatQueueItem>();

/**
 * A snapshot queued item as an assistant-ui queue item: the same id, text and file parts, and the
 * store's fields. One object per frozen snapshot item (kept identical while unchanged), so
 * assistant-ui sees a stable identity.
 */
export function toQueueItem(item: QueuedItem): ChatQueueItem {
  let converted = cache.get(item);
  if (!converted) {
    const parts: QueueItemState["parts"][number][] = [];
    if (item.text) parts.push({ type: "text", text: item.text });
    for (const file of item.files ?? EMPTY) {
      parts.push(withFilename({ type: "file", data: file.url, mimeType: file.mediaType }, file.filename));
    }
    converted = Object.freeze({
      id: item.id,
      prompt: item.text ?? "",
      parts: Object.freeze(parts),
      state: item.state,
      error: item.error ?? null,
      canRetry: item.canRetry,
      canRemove: item.canRemove,
      readOnly: item.readOnly,
      removing: item.removing,
      runNow: item.runNow,
      canRunNow: item.canRunNow,
    });
    cache.set(item, converted);
  }
  return converted;
}

type QueueAdapter = NonNullable<ExternalStoreAdapter["queue"]>;
const noop = () => {};

/**
 * The queue adapter of `useChatStoreRuntime`: the snapshot's follow-ups as items, `send` (the
 * runtime's one door for a new message) for what assistant-ui enqueues or steers. Offered while
 * the session has native follow-ups, and while items remain (e.g. `failed` ones after the server
 * refused follow-ups), so none is hidden (SPEC §6).
 */
export function useQueue(
  store: ChatStore,
  snapshot: ChatSnapshot,
  send: (message: AppendMessage) => void,
): QueueAdapter | undefined {
  const { queued } = snapshot;
  const items = useMemo(() => queued.map(toQueueItem), [queued]);
  const enabled = snapshot.capabilities.nativeFollowUp || queued.length > 0;
  return useMemo(
    (): QueueAdapter | undefined =>
      enabled
        ? {
            items,
            // The server runs follow-ups in arrival order: no second lane to show.
            steerItems: EMPTY,
            enqueue: send,
            // Every send made while running comes here: it joins the FIFO like any follow-up.
            steer: send,
            // An unanchored move to the steer lane is Run Now (QueueItemPrimitive.Steer): the
            // store retries, interrupts, or says it runs after the current answer (`runNow`).
            // A placement (insertAfter / insertBefore) would reorder what the server holds in
            // its own order: not offered.
            move: (id, placement) => {
              if (placement.lane === "steer" && placement.insertAfter == null && placement.insertBefore == null) {
                store.runQueuedNow(id);
              }
            },
            // Re-posting an edit would land it at the tail: remove and send again instead.
            edit: noop,
            // A refused removal (another client's row) says why on the item's `error`.
            remove: (id: string) => {
              store.removeQueued(id);
            },
          }
        : undefined,
    [enabled, items, send, store],
  );
}

/** The queue item being rendered (inside `ComposerPrimitive.Queue`), with the store's fields. */
export function useQueueItemStatus(): ChatQueueItem {
  return useAuiState((s) => s.queueItem) as ChatQueueItem;
}

/** Props of {@link QueueItemStatus}. */
export interface QueueItemStatusProps {
  className?: string;
  /** The words shown per state (and `removing`); the state's name by default. */
  labels?: Partial<Record<QueuedState | "removing", string>>;
}

/**
 * The state and error of the queue item being rendered, for a stock queue item
 * (`<ComposerPrimitive.Queue>{() => <div><QueueItemPrimitive.Text/><QueueItemStatus/>…</div>}`).
 * A `<span data-state data-run-now>` (plus `data-read-only`, `data-removing`) with the state's
 * label, and the error's message in a `<span data-queue-error>`: style or test by attribute.
 */
export function QueueItemStatus(props: QueueItemStatusProps): ReactElement {
  const item = useQueueItemStatus();
  const shown = item.removing ? "removing" : item.state;
  const label = props.labels?.[shown] ?? shown;
  return createElement(
    "span",
    {
      className: props.className,
      "data-state": item.state,
      "data-run-now": item.runNow,
      "data-read-only": item.readOnly ? "" : undefined,
      "data-removing": item.removing ? "" : undefined,
    },
    label,
    item.error ? createElement("span", { "data-queue-error": "" }, " ", item.error.message) : null,
  );
}

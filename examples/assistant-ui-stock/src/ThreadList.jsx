// A `ThreadList` in the shape of assistant-ui's stock one (its registry's thread-list.tsx):
// New, the threads with a running mark, and per thread Archive and Delete; plus what the stock
// list leaves to the app: Load more (assistant-ui's `ThreadListPrimitive.LoadMore`) and the
// archived threads (`ThreadListPrimitive.Items archived`, with Unarchive).
import { AuiIf, ThreadListItemPrimitive, ThreadListPrimitive, useAuiState } from "@assistant-ui/react";

export function ThreadList() {
  return (
    <ThreadListPrimitive.Root className="thread-list" data-testid="thread-list">
      <ThreadListPrimitive.New className="thread-new" data-testid="thread-new">+ New Thread</ThreadListPrimitive.New>
      <div className="thread-items" data-testid="thread-items">
        <ThreadListPrimitive.Items>{() => <ThreadListItem />}</ThreadListPrimitive.Items>
      </div>
      <ThreadListPrimitive.LoadMore className="thread-load-more" data-testid="thread-load-more">Load more</ThreadListPrimitive.LoadMore>
      <AuiIf condition={(s) => s.threads.archivedThreadIds.length > 0}>
        <h3 className="thread-list-heading">Archived</h3>
        <div className="thread-items archived" data-testid="thread-archived">
          <ThreadListPrimitive.Items archived>{() => <ThreadListItem />}</ThreadListPrimitive.Items>
        </div>
      </AuiIf>
    </ThreadListPrimitive.Root>
  );
}

function ThreadListItem() {
  const id = useAuiState((s) => s.threadListItem.id);
  const archived = useAuiState((s) => s.threadListItem.status === "archived");
  const isRunning = useAuiState((s) => s.threadListItem.isRunning);
  return (
    <ThreadListItemPrimitive.Root className="thread-item" data-testid="thread-item" data-id={id} data-running={String(isRunning)}>
      <ThreadListItemPrimitive.Trigger className="thread-trigger">
        {isRunning && <span className="running" data-testid="thread-running" aria-label="Running" />}
        <ThreadListItemPrimitive.Title fallback="New Chat" />
      </ThreadListItemPrimitive.Trigger>
      {archived ? (
        <ThreadListItemPrimitive.Unarchive data-testid="thread-unarchive">Unarchive</ThreadListItemPrimitive.Unarchive>
      ) : (
        <ThreadListItemPrimitive.Archive data-testid="thread-archive">Archive</ThreadListItemPrimitive.Archive>
      )}
      <ThreadListItemPrimitive.Delete data-testid="thread-delete">Delete</ThreadListItemPrimitive.Delete>
    </ThreadListItemPrimitive.Root>
  );
}

// The oracle of the differential test: the `ai` package (pinned in package.json) reducing a
// list of UI message stream chunks, the way `useChat` does over HTTP.
//
// What is compared, and why it is built this way:
//
// 1. Validation. `readUIMessageStream` itself does not validate chunks; `useChat`'s HTTP
//    transport does, before its stream processor sees them (DefaultChatTransport
//    .processResponseStream = `parseJsonEventStream({stream, schema: uiMessageChunkSchema})`
//    and a transform that throws on the first failure). We run exactly that on the chunks as
//    an SSE body, and stop at the first chunk it rejects. The values it outputs (zod's output:
//    `citations` lose unknown keys) are what the processor gets.
//
// 2. Processing. The validated chunks go through `readUIMessageStream` (which runs
//    `processUIMessageStream` with `resetStateOnMessageIdChange: true`). The replay returns
//    the processor's `state.message`, which `readUIMessageStream`'s last yield can lag (a
//    chunk that changes the message without a `write()`, i.e. a trailing `start-step`). So a
//    sentinel chunk, a non-transient data chunk of a type nothing else uses, follows every
//    chunk: it always writes, it cannot touch any other part (it has no id; tool, text and
//    approval lookups ignore data parts; it is no `step-start`), and its parts are removed
//    from the result. The processor is sequential, so when chunk k throws, the sentinel
//    after chunk k-1 has been processed and the last yield is exactly `state.message`.
//
// 3. Errors. A processor throw (UIMessageStreamError, or the TypeError of `mergeObjects` on a
//    primitive metadata) reaches `onError` and stops processing; its message must equal ours.
//    A schema rejection must be an error on our side too (the texts differ: zod's vs ours).
//    An `error` chunk also reaches `onError` as a plain Error but processing goes on: it is
//    not a replay error.
//
// 4. Options. `replayUiMessageStream(chunks, {lastMessage})` ≙ `readUIMessageStream({message:
//    lastMessage})` (for the starts see 5, below); `{messageId}` ≙ `readUIMessageStream({message: {id: messageId, role:
//    'user', parts: []}})` (a non-assistant message only lends its id to the new message).
//    Neither ≙ no message: the id is ''.
//
// `finishReason` is not compared: `readUIMessageStream` does not expose `state.finishReason`.
import {
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  UIMessageStreamError,
} from 'ai';

export const SENTINEL = 'data-differential-sentinel';

const encoder = new TextEncoder();

function sseBody(chunks) {
  return new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
      c.close();
    },
  });
}

/** The chunks `useChat`'s HTTP transport lets through, and the error it stops on. */
async function validate(chunks) {
  const reader = parseJsonEventStream({ stream: sseBody(chunks), schema: uiMessageChunkSchema }).getReader();
  const values = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { values, error: undefined };
    if (!value.success) return { values, error: value.error };
    values.push(value.value);
  }
}

function fromList(list) {
  return new ReadableStream({
    start(c) {
      for (const x of list) c.enqueue(x);
      c.close();
    },
  });
}

/** JSON equality semantics: undefined-valued keys dropped, -0 is 0. */
export const normalise = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/**
 * `{message, error?: {message, kind: 'processor' | 'schema'}}` as the `ai` package gives it for
 * `replayUiMessageStream(chunks, options)`.
 */
/** `readUIMessageStream` over validated chunks: its last yield and the processor's error. */
async function run(values, message) {
  const withSentinels = values.flatMap((c) => [c, { type: SENTINEL, data: null }]);
  const errors = [];
  let last;
  for await (const m of readUIMessageStream({ message: message && structuredClone(message), stream: fromList(withSentinels), onError: (e) => errors.push(e) })) {
    last = m;
  }
  if (last === undefined) {
    // Nothing was written: the state is the one `createStreamingUIMessageState` made.
    last = message?.role === 'assistant' ? structuredClone(message) : { id: message?.id ?? '', role: 'assistant', parts: [] };
  }
  return { last, processorError: errors.find((e) => UIMessageStreamError.isInstance(e) || e instanceof TypeError) };
}

export async function aiReplay(chunks, { messageId, lastMessage, resetOnMessageIdChange = false } = {}) {
  const { values, error: schemaError } = await validate(chunks);
  const message = lastMessage != null ? lastMessage : messageId != null ? { id: messageId, role: 'user', parts: [] } : undefined;
  // 5. A `start` naming another message: the processor's default (`useChat`) renames the
  //    message, `readUIMessageStream` starts it over. In 7.0.173's processUIMessageStream
  //    (case "start") the reset is the only difference, and the id is set before the metadata
  //    is merged; so without `resetOnMessageIdChange` the starts go in without their ids and
  //    the message takes the id of the last start the processor reached (found, when it threw,
  //    as the shortest prefix that throws).
  const ids = values.map((c) => (c.type === 'start' && c.messageId != null ? c.messageId : undefined));
  const renames = !resetOnMessageIdChange && ids.some((x) => x !== undefined);
  const input = renames ? values.map((c, i) => (ids[i] === undefined ? c : { ...c, messageId: undefined })) : values;
  let { last, processorError } = await run(input, message);
  if (renames) {
    let reached = input.length;
    if (processorError) {
      let [lo, hi] = [1, input.length];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((await run(input.slice(0, mid), message)).processorError) hi = mid;
        else lo = mid + 1;
      }
      reached = lo;
    }
    const id = ids.slice(0, reached).findLast((x) => x !== undefined);
    if (id !== undefined) last = { ...last, id };
  }
  const result = { message: normalise({ ...last, parts: last.parts.filter((p) => p.type !== SENTINEL) }) };
  if (processorError) result.error = { message: processorError.message, kind: 'processor' };
  else if (schemaError) result.error = { message: String(schemaError.message), kind: 'schema' };
  return result;
}

// `useChat` with the shape of `@ai-sdk/react` 4.x's, on a `ChatStore`: an app written for
// `useChat` changes its import and keeps its code. Everything a turn does (the request, the
// stream, what is busy, what continues by itself) is the store's; this file only maps the AI
// SDK's options and calls onto the store's, and turns the store's answers into promises.
import { useEffect, useMemo, useReducer, useRef } from "react";
import { useChatStore, useCreateChatStore } from "./react.js";

const EMPTY = Object.freeze([]);
const NO_STORE = Object.freeze({
  status: "ready",
  error: null,
  busy: false,
  queued: EMPTY,
  composer: null,
  pending: Object.freeze({ approvals: EMPTY, questions: EMPTY }),
  sessions: null,
  capabilities: null,
});

function defaultId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

// `await`s an AI SDK `Resolvable`: a value, a promise, or a function giving either.
async function resolve(value) {
  return typeof value === "function" ? await value() : await value;
}

/**
 * The store's options for the hook's: a plain AI SDK server (a `useChat` route handler at
 * `transport.api`, default `/api/chat`) unless one of ours (`baseUrl`, `routes`,
 * `capabilities`) says the server is of this store's family. `latest` holds the options of the
 * last render: the transport is read per request, as `@ai-sdk/react` reads the latest one.
 */
function storeOptions(options, id, latest) {
  const {
    transport,
    messages,
    experimental_throttle,
    throttle,
    resume,
    messageMetadataSchema,
    dataPartSchemas,
    generateId,
    uploadFile,
    onData,
    id: _id,
    ...ours
  } = options;
  const family = ours.baseUrl !== undefined || ours.routes !== undefined || ours.capabilities !== undefined;
  const out = { ...ours, sessionId: id };
  const throttleMs = throttle ?? experimental_throttle;
  if (throttleMs != null) out.throttleMs = throttleMs;
  // `resume: true` asks the stream route once on mount, as `useChat` does.
  if (out.attach === undefined) out.attach = false;
  const hostHook = () => latest.current.transport?.prepareSendMessagesRequest ?? latest.current.prepareSendMessagesRequest;
  if (transport !== undefined || out.headers !== undefined) {
    // The transport's headers, then the hook's own, both resolved per request.
    out.headers = async () => ({
      ...plain(await resolve(latest.current.transport?.headers)),
      ...plain(await resolve(latest.current.headers)),
    });
  }
  if (transport !== undefined || out.fetch !== undefined) {
    out.fetch = (...args) => (latest.current.fetch ?? latest.current.transport?.fetch ?? globalThis.fetch)(...args);
  }
  if (out.credentials === undefined && typeof transport?.credentials === "string") out.credentials = transport.credentials;
  if (family) {
    // This store's servers: the store's body (its own keys, then the `body` option's); a
    // transport's `body` object joins the `body` option when the chat is created.
    if (typeof transport?.body === "object" && transport.body !== null) out.body = { ...transport.body, ...out.body };
    if (hostHook() !== undefined) out.prepareSendMessagesRequest = (req) => hostHook()?.(req);
    return out;
  }
  const api = transport?.api ?? "/api/chat";
  out.routes = { chat: api, stream: `${api}/{sessionId}/stream`, catalog: "", turn: "" };
  // What a route handler written for `useChat` does: it takes the whole history with each
  // POST, keeps none itself, runs no follow-ups, and answers one stream per POST.
  out.capabilities = { nativeFollowUp: false, aiSdkOwnsHistory: true };
  if (out.hydrate === undefined) out.hydrate = false;
  if (out.persist === undefined) out.persist = false;
  if (out.persistSeq === undefined) out.persistSeq = false;
  if (out.aiSdkRequests === undefined) out.aiSdkRequests = true;
  // A lost answer is not resumed (the handler keeps no stream): a disconnect, as `useChat`'s.
  if (out.resumeAttempts === undefined) out.resumeAttempts = 0;
  // Every chat POST is made as `DefaultChatTransport.sendMessages` makes it, from the latest
  // transport: its `api`, `body` and `credentials` resolved now, the host's hook over them,
  // and the body `{...body, id, messages, trigger, messageId}` where the hook gives none.
  out.prepareSendMessagesRequest = async (req) => {
    const t = latest.current.transport ?? {};
    const body = { ...(await resolve(t.body)), ...req.body };
    const credentials = (await resolve(t.credentials)) ?? req.credentials;
    const url = t.api ?? req.api;
    const hook = hostHook();
    const prepared = hook ? await hook({ ...req, api: url, body, credentials }) : undefined;
    const { id: chatId, messages, trigger, messageId } = req;
    return {
      api: prepared?.api ?? url,
      headers: prepared?.headers,
      body: prepared?.body !== undefined ? prepared.body : { ...body, id: chatId, messages, trigger, messageId },
      credentials: prepared?.credentials ?? credentials,
    };
  };
  return out;
}

function plain(headers) {
  if (headers == null) return {};
  if (typeof headers.entries === "function" && typeof headers.get === "function") {
    return Object.fromEntries(headers.entries());
  }
  return headers;
}

function dataPart(d) {
  const part = { type: `data-${d.name}`, data: d.data };
  if (d.id !== undefined) part.id = d.id;
  if (d.transient) part.transient = true;
  return part;
}

/**
 * Checks `value` against a schema as the `ai` package accepts one: a Standard Schema
 * (`~standard`, zod 3.24+, valibot, arktype), an `ai` `Schema` (`validate`), or a zod-like
 * `safeParse` / `parse`. Resolves to the error, or `null` when it passes.
 */
async function invalid(schema, value) {
  try {
    if (schema?.["~standard"]?.validate) {
      const r = await schema["~standard"].validate(value);
      return r.issues ? new TypeError(`Type validation failed: ${JSON.stringify(r.issues)}`) : null;
    }
    if (typeof schema?.validate === "function") {
      const r = await schema.validate(value);
      return r && r.success === false ? r.error ?? new TypeError("Type validation failed") : null;
    }
    if (typeof schema?.safeParse === "function") {
      const r = await schema.safeParse(value);
      return r.success ? null : r.error ?? new TypeError("Type validation failed");
    }
    if (typeof schema?.parse === "function") await schema.parse(value);
    return null;
  } catch (e) {
    return e instanceof Error ? e : new TypeError(String(e));
  }
}

// Reads a `FileList` (or an array of `File`s) as `data:` URL file parts, as `useChat` does.
async function fileParts(files) {
  if (files == null) return [];
  const list = Array.from(files);
  return Promise.all(
    list.map(async (f) => {
      if (f && typeof f === "object" && typeof f.url === "string") return f; // a FileUIPart
      const url = await new Promise((res, rej) => {
        const reader = new FileReader();
        reader.onload = () => res(reader.result);
        reader.onerror = () => rej(reader.error);
        reader.readAsDataURL(f);
      });
      return { type: "file", mediaType: f.type, filename: f.name, url };
    }),
  );
}

function attachment(part) {
  const f = { mediaType: part.mediaType, url: part.url };
  if (part.filename !== undefined) f.filename = part.filename;
  if (part.providerReference !== undefined) f.providerReference = part.providerReference;
  if (part.providerMetadata !== undefined) f.providerMetadata = part.providerMetadata;
  return f;
}

/**
 * `useChat` of `@ai-sdk/react` 4.x on a `ChatStore`. Returns `id, messages, setMessages,
 * sendMessage, regenerate, stop, resumeStream, addToolOutput (addToolResult),
 * addToolApprovalResponse, status, error, clearError`, and the store's own `store, queued,
 * composer, pending, sessions, busy, capabilities`. The callbacks called are always the latest
 * passed. See the package README's migration table for each option.
 */
export function useChat(options = {}) {
  const latest = useRef(options);
  latest.current = options;
  const fallbackId = useRef(null);
  if (options.id == null && fallbackId.current == null) {
    fallbackId.current = (options.generateId ?? defaultId)();
  }
  const id = options.id ?? fallbackId.current;
  const idRef = useRef(id);
  idRef.current = id;

  // Turn ends and failures, for the promises the actions return and the validators.
  const waiters = useRef([]);
  const storeRef = useRef(null);
  const reported = useRef(null);
  const shownError = useRef({ from: null, to: undefined });
  const local = useRef({ error: null, set: null });
  const hooks = useMemo(
    () => ({
      onFinish: (event) => {
        let thrown;
        try {
          latest.current.onFinish?.(event);
        } catch (e) {
          thrown = { error: e };
        }
        // A send's promise settles when its whole chain of requests has: an automatic
        // continuation (sendAutomaticallyWhen) starts right after this finish, and is waited for.
        setTimeout(() => {
          if (!thrown && storeRef.current?.getSnapshot().busy) return;
          const waiting = waiters.current;
          waiters.current = [];
          for (const w of waiting) (thrown ? w.reject(thrown.error) : w.resolve());
        });
      },
      onError: (error) => {
        // `error` is this very object while the store holds the error it stands for.
        reported.current = error;
        latest.current.onError?.(error);
      },
      onToolCall: (event) => latest.current.onToolCall?.(event),
    }),
    [],
  );
  const created = useMemo(() => ({ ...storeOptions(options, id, latest), ...hooks }), [id]);
  if (typeof options.sendAutomaticallyWhen === "function") {
    created.sendAutomaticallyWhen = (...args) => latest.current.sendAutomaticallyWhen?.(...args) ?? false;
  }
  if (options.onData || options.dataPartSchemas) {
    // `onData` hears the data part as the AI SDK gives it: `{type: 'data-NAME', id, data}`.
    created.onData = (d) => {
      const part = dataPart(d);
      const schema = latest.current.dataPartSchemas?.[d.name];
      if (schema) validate(schema, part.data);
      latest.current.onData?.(part);
    };
  }
  const store = useCreateChatStore({ ...created, sessionId: id });
  const snapshot = useChatStore(store) ?? NO_STORE;

  // Actions called before the store exists (the first render) wait for it.
  const ready = useRef(null);
  if (ready.current == null) {
    let open;
    ready.current = { promise: new Promise((r) => (open = r)), open };
  }
  storeRef.current = store;
  useEffect(() => {
    if (!store) return;
    const initial = latest.current.messages;
    if (initial?.length && store.getSnapshot().messages.length === 0 && !store.getSnapshot().busy) {
      store.setMessages(initial);
    }
    ready.current.open(store);
    if (latest.current.resume) store.resumeStream();
  }, [store]);

  function validate(schema, value) {
    invalid(schema, value).then((error) => {
      if (!error || !storeRef.current) return;
      // As the `ai` package: a part that fails its schema ends the turn with that error.
      storeRef.current.stop();
      local.current.error = error;
      local.current.set?.();
      latest.current.onError?.(error);
    });
  }

  // The assistant message's metadata, checked when it changes (`messageMetadataSchema`).
  const lastMeta = useRef(undefined);
  const last = snapshot.messages?.[snapshot.messages.length - 1];
  useEffect(() => {
    const schema = latest.current.messageMetadataSchema;
    if (!schema || !last || last.role !== "assistant" || last.metadata === lastMeta.current) return;
    lastMeta.current = last.metadata;
    if (last.metadata !== undefined) validate(schema, last.metadata);
  }, [last]);

  // A validator's error lives outside the store: setting it re-renders by this.
  const [, rerender] = useReducer((n) => n + 1, 0);
  local.current.set = rerender;

  const actions = useMemo(() => {
    // The store, on the latest `id`: an action right after a render with a new `id` goes to
    // that chat, as `useChat` makes a new one in that render (the switch effect comes later).
    const whenStore = async () => {
      const s = storeRef.current ?? (await ready.current.promise);
      s.switchSession(idRef.current);
      return s;
    };
    const turnEnd = () => new Promise((resolve, reject) => waiters.current.push({ resolve, reject }));
    // A stop cancels the sends still being prepared (their files read, uploaded).
    let stops = 0;
    // Sends go out in the order they were asked, whatever their files take to read.
    let chain = Promise.resolve();
    const request = (o = {}) => ({ body: o.body, headers: o.headers, metadata: o.metadata });
    const newId = () => latest.current.generateId?.();
    const sendMessage = (message, opts) => {
      const asked = stops;
      const run = chain.then(async () => {
        const s = await whenStore();
        clearLocal();
        if (message == null) {
          return s.continueTurn(request(opts)) ? turnEnd() : undefined;
        }
        let text;
        let parts;
        if ("text" in message || "files" in message) {
          text = message.text ?? "";
          parts = await fileParts(message.files);
        } else {
          const all = message.parts ?? [];
          text = all.filter((p) => p.type === "text").map((p) => p.text).join("");
          parts = all.filter((p) => p.type === "file");
        }
        const upload = latest.current.uploadFile;
        if (typeof upload === "function") {
          parts = await Promise.all(parts.map(async (p) => ({ ...p, ...(await upload(p)) })));
        }
        if (stops !== asked) return undefined;
        // As the `ai` package: the user message's id first, then the answer's.
        const id = message.messageId != null ? undefined : message.id ?? newId();
        const r = s.send(text, parts.map(attachment), {
          messageId: message.messageId,
          id,
          responseId: newId(),
          messageMetadata: message.metadata,
          ...request(opts),
        });
        return r.kind === "sent" ? turnEnd() : undefined;
      });
      chain = run.catch(() => {});
      return run.then(() => {});
    };
    const clearLocal = () => {
      if (local.current.error) {
        local.current.error = null;
        local.current.set?.();
      }
    };
    return {
      sendMessage,
      regenerate: async ({ messageId, ...opts } = {}) => {
        const s = await whenStore();
        clearLocal();
        if (s.regenerate({ messageId, responseId: newId(), ...request(opts) })) await turnEnd();
      },
      stop: async () => {
        stops += 1;
        storeRef.current?.stop();
      },
      resumeStream: async () => {
        const s = await whenStore();
        if (s.resumeStream()) await turnEnd();
      },
      addToolOutput: async ({ toolCallId, output, state, errorText, options: o }) => {
        const s = await whenStore();
        const answer = state === "output-error" ? { toolCallId, errorText: errorText ?? "" } : { toolCallId, output };
        if (o !== undefined) answer.options = request(o);
        s.addToolOutput(answer);
      },
      addToolApprovalResponse: async ({ id: approvalId, approved, reason, options: o }) => {
        const s = await whenStore();
        const answer = { id: approvalId, approved };
        if (reason !== undefined) answer.reason = reason;
        if (o !== undefined) answer.options = request(o);
        s.addToolApprovalResponse(answer);
      },
      clearError: () => {
        clearLocal();
        storeRef.current?.clearError();
      },
      setMessages: (next) => {
        const apply = (s) => {
          const messages = typeof next === "function" ? next(s.getSnapshot().messages) : next;
          // The store writes a running turn's stream into its last message: it stops first.
          if (s.getSnapshot().busy) s.stop();
          s.setMessages(messages);
        };
        // Before the store exists (the first render), applied as soon as it does.
        if (storeRef.current) apply(storeRef.current);
        else ready.current.promise.then(apply);
      },
    };
  }, []);

  // The error `onError` was given is the one shown (`error === onErrorArg`, as `useChat`).
  const held = snapshot.error ?? null;
  if (shownError.current.from !== held) {
    const r = reported.current;
    const same = r && held && r.message === held.message && r.code === held.code;
    shownError.current = { from: held, to: held === null ? undefined : same ? r : held };
  }
  const error = local.current.error ?? shownError.current.to;
  return {
    id,
    messages: snapshot.messages ?? latest.current.messages ?? EMPTY,
    status: local.current.error ? "error" : snapshot.status,
    error,
    ...actions,
    addToolResult: actions.addToolOutput,
    store,
    busy: snapshot.busy,
    queued: snapshot.queued,
    composer: snapshot.composer,
    pending: snapshot.pending,
    sessions: snapshot.sessions,
    capabilities: snapshot.capabilities,
  };
}

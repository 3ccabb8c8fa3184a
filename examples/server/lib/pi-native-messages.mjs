// BoringChatMessage (pi-native-protocol.md §8) from the UI messages pi-runtime.mjs already
// builds: the same canonical history, translated part by part, so `/state`, `message-end.final`
// and `GET …/messages` of the other protocol cannot drift apart.

/**
 * @param {{id: string, role: string, parts: object[]}} ui a UIMessage of pi-runtime.mjs
 * @param {{status?: string, createdAt?: number, meta?: MessageMeta}} extra
 */
export function boringMessage(ui, { status = 'done', createdAt, meta } = {}) {
  let parts = ui.parts.map((p, i) => boringPart(p, ui.id, i)).filter(Boolean);
  if (ui.role === 'user' && meta?.displayText !== undefined) {
    // The transcript shows what the client asked to show (`displayContent`), not what the model got.
    parts = [...parts.filter((p) => p.type !== 'text'), { type: 'text', id: `${ui.id}:text:0`, text: meta.displayText }];
  }
  return {
    id: ui.id,
    role: ui.role,
    status,
    parts,
    ...(createdAt ? { createdAt: new Date(createdAt).toISOString() } : {}),
    ...(meta?.clientNonce !== undefined ? { clientNonce: meta.clientNonce } : {}),
    ...(meta?.clientSeq !== undefined ? { clientSeq: meta.clientSeq } : {}),
    ...(meta?.turnId !== undefined ? { turnId: meta.turnId } : {}),
  };
}

/** An assistant's status from pi's stop reason (§8). */
export function assistantStatus(stopReason) {
  if (stopReason === 'aborted') return 'aborted';
  if (stopReason === 'error') return 'error';
  return 'done';
}

function boringPart(p, messageId, i) {
  if (p.type === 'text') return { type: 'text', id: `${messageId}:text:${i}`, text: p.text };
  if (p.type === 'reasoning') return { type: 'reasoning', id: `${messageId}:reasoning:${i}`, text: p.text, state: 'done' };
  if (p.type === 'file') {
    return { type: 'file', id: `${messageId}:file:${i}`, mediaType: p.mediaType, ...(p.filename ? { filename: p.filename } : {}), url: p.url };
  }
  if (p.type.startsWith('tool-')) {
    // The human-in-the-loop states of the other protocol have no slot here: a call still
    // waiting is `input-available` (called, running), a denied one an error.
    const state = { 'output-available': 'output-available', 'output-error': 'output-error', 'output-denied': 'output-error' }[p.state] ?? 'input-available';
    const part = { type: 'tool-call', id: p.toolCallId, toolName: p.toolName, input: p.input, state };
    if (state === 'output-available') part.output = storedOutput(p.output, p.details);
    if (state === 'output-error') part.errorText = p.errorText ?? (p.state === 'output-denied' ? 'denied by the user' : 'tool failed');
    return part;
  }
  return undefined; // (data parts: none in the pi history)
}

/** §8: stored tool output is `{content, details}` when there are details, else the bare content. */
function storedOutput(content, details) {
  return details !== undefined ? { content, details } : content;
}

/**
 * @typedef {object} MessageMeta  what the pi transcript does not keep, by message id (in memory)
 * @property {string} [clientNonce]
 * @property {number} [clientSeq]
 * @property {string} [displayText]
 * @property {string} [turnId]
 */

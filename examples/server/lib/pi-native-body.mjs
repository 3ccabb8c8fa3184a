// Strict input of the pi-native routes (pi-native-protocol.md §2): an unknown field, a missing
// required one or a wrong type is a 400 `AGENT_COMMAND_INVALID_STATE` with `details.field`
// (`body.clientSeq`, `query.cursor`, …). The same code means "wrong state" with a 409: the
// status tells them apart, as on the real server.

export class NativeError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.body = { error: { code, message, ...(details ? { details } : {}) } };
  }
}

export const invalid = (field, message) => new NativeError(400, 'AGENT_COMMAND_INVALID_STATE', message, { field });

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

const str = (min, max) => (v) =>
  typeof v === 'string' && v.length >= min && v.length <= max ? undefined : `must be a string of ${min}–${max} characters`;

/** Field checks: each returns an error message, or undefined when the value is fine. */
export const CHECK = {
  requestId: (v) => (typeof v === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(v.trim()) ? undefined : 'must be 1–128 characters of [A-Za-z0-9._:-]'),
  nonce: str(1, 128),
  content: str(1, 1_000_000),
  title: str(1, 200),
  sessionId: str(1, 128),
  clientSeq: (v) => (Number.isSafeInteger(v) && v >= 0 ? undefined : 'must be a non-negative integer'),
  literalTrue: (v) => (v === true ? undefined : 'must be true'),
  thinkingLevel: (v) => (['off', 'low', 'medium', 'high'].includes(v) ? undefined : 'must be off, low, medium or high'),
};

/** `model: {provider, id}`, strict. Returns `[path, message]` of the first problem. */
function checkModel(v) {
  if (!isObject(v)) return ['', 'must be an object'];
  for (const k of Object.keys(v)) if (k !== 'provider' && k !== 'id') return [`.${k}`, `unknown field ${k}`];
  for (const k of ['provider', 'id']) if (typeof v[k] !== 'string' || v[k] === '') return [`.${k}`, 'must be a non-empty string'];
  return undefined;
}

/** `attachments`: at most 20 strict `{url, filename?, mediaType?, path?}`. */
function checkAttachments(v) {
  if (!Array.isArray(v) || v.length > 20) return ['', 'must be an array of at most 20 items'];
  for (const [i, a] of v.entries()) {
    if (!isObject(a)) return [`.${i}`, 'must be an object'];
    for (const k of Object.keys(a)) if (!['url', 'filename', 'mediaType', 'path'].includes(k)) return [`.${i}.${k}`, `unknown field ${k}`];
    if (typeof a.url !== 'string' || a.url === '') return [`.${i}.url`, 'must be a non-empty string'];
    for (const k of ['filename', 'mediaType', 'path']) if (a[k] !== undefined && typeof a[k] !== 'string') return [`.${i}.${k}`, 'must be a string'];
  }
  return undefined;
}

CHECK.model = checkModel;
CHECK.attachments = checkAttachments;

/**
 * Checks `body` against `spec` (`{field: [check, required]}`); an absent body is `{}` when
 * nothing is required. Returns the body.
 */
export function strictBody(body, spec) {
  if (body === undefined) body = {};
  if (!isObject(body)) throw invalid('body', 'body must be a JSON object');
  for (const k of Object.keys(body)) if (!(k in spec)) throw invalid(`body.${k}`, `Unrecognized key: "${k}"`);
  for (const [k, [check, required]] of Object.entries(spec)) {
    if (body[k] === undefined) {
      if (required) throw invalid(`body.${k}`, `${k} is required`);
      continue;
    }
    const problem = check(body[k]);
    if (problem === undefined) continue;
    const [sub, message] = Array.isArray(problem) ? problem : ['', problem];
    throw invalid(`body.${k}${sub}`, `${k}${sub} ${message}`);
  }
  return body;
}

/** Only these query parameters; returns them as an object. */
export function strictQuery(url, allowed) {
  const out = {};
  for (const [k, v] of url.searchParams) {
    if (!allowed.includes(k)) throw invalid(`query.${k}`, `Unrecognized query parameter: "${k}"`);
    out[k] = v;
  }
  return out;
}

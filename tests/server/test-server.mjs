// A small scripted server for the browser tests of the wasm shell (crates/wasm/src/web_tests.rs). It speaks
// the routes of SPEC §2 with behaviour chosen by the session id, records every request, and
// answers with CORS so the test page (another origin) may call it. 127.0.0.1 only.
//
// Session ids: `pi-…` → capabilities {nativeFollowUp:true, aiSdkOwnsHistory:false};
// `ai-…` → {false, true}; a `slow` in the id delays the capabilities answer by 400 ms;
// a `delay` in the id delays follow-up answers by 600 ms.
import http from 'node:http';

const port = Number(process.env.PORT || process.argv[2] || 18787);
const log = [];           // every request: {t, method, path, session, body}
const histories = new Map();
const streams = new Map(); // session → {res, timer}
let inFlight = new Map(); // session → follow-ups in flight
let maxInFlight = new Map();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cors = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET,POST,PUT,DELETE,OPTIONS',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': 'x-turn-id',
};

function json(res, status, body) {
  res.writeHead(status, { ...cors, 'content-type': 'application/json' });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

async function readBody(req) {
  let data = '';
  for await (const c of req) data += c;
  try { return data ? JSON.parse(data) : undefined; } catch { return data; }
}

function sse(res, chunk) { res.write(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`); }

async function chat(req, res, body) {
  const s = body.sessionId;
  const turnId = 'turn-' + Date.now();
  res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'x-turn-id': turnId, 'x-vercel-ai-ui-message-stream': 'v1' });
  let seq = 0;
  const d = (type, data) => sse(res, { type: 'data-' + type, data: { seq: ++seq, ...data } });
  const words = (body.message.match(/words:(\d+)/) || [])[1] | 0 || 6;
  const pace = (body.message.match(/pace:(\d+)/) || [])[1] | 0 || 60;
  const hist = histories.get(s) || [];
  histories.set(s, hist);
  const stream = { closed: false };
  streams.set(s, stream);
  req.on('close', () => { stream.closed = true; });
  res.on('close', () => { stream.closed = true; });
  sse(res, { type: 'data-pi-mode', data: { enabled: true } });
  sse(res, { type: 'data-turn-start', data: { turnId } });
  const uid = 'u-' + hist.length;
  d('pi-message-start', { messageId: uid, role: 'user', text: body.message });
  d('pi-message-end', { messageId: uid, role: 'user', text: body.message });
  hist.push({ id: uid, role: 'user', parts: [{ type: 'text', text: body.message }] });
  let turn = 0;
  for (;;) {
    const aid = 'a-' + hist.length;
    d('pi-message-start', { messageId: aid, role: 'assistant' });
    d('pi-text-start', { messageId: aid, partId: '0' });
    let text = '';
    for (let i = 0; i < words && !stream.closed; i++) {
      const w = `w${i} `;
      text += w;
      d('pi-text-delta', { messageId: aid, partId: '0', delta: w });
      await sleep(pace);
    }
    if (stream.closed) { hist.push({ id: aid, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] }); res.end(); return; }
    d('pi-text-end', { messageId: aid, partId: '0', text });
    d('pi-message-end', { messageId: aid, role: 'assistant' });
    hist.push({ id: aid, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] });
    // Follow-ups accepted meanwhile run next, in arrival order.
    const q = queues.get(s) || [];
    if (!q.length || ++turn > 10) break;
    const f = q.shift();
    sse(res, { type: 'data-followup-consumed', data: { clientNonce: f.clientNonce, clientSeq: f.clientSeq } });
    const fid = 'u-' + hist.length;
    d('pi-message-start', { messageId: fid, role: 'user', text: f.message, clientNonce: f.clientNonce });
    d('pi-message-end', { messageId: fid, role: 'user' });
    hist.push({ id: fid, role: 'user', parts: [{ type: 'text', text: f.message }] });
  }
  sse(res, '[DONE]');
  res.end();
}

const queues = new Map();

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'OPTIONS') { res.writeHead(204, cors); return res.end(); }
  const body = await readBody(req);
  const m = url.pathname.match(/^\/api\/v1\/agent\/chat\/([^/]+)\/(followup|messages|stream|turn)$/);
  const session = m ? decodeURIComponent(m[1]) : (url.searchParams.get('sessionId') || (body && body.sessionId));
  const entry = { t: Date.now(), method: req.method, path: url.pathname + url.search, session, body };
  if (!url.pathname.startsWith('/test/')) log.push(entry);
  if (url.pathname === '/test/log') return json(res, 200, { log: log.filter((e) => !url.searchParams.get('session') || e.session === url.searchParams.get('session')), maxInFlight: Object.fromEntries(maxInFlight) });
  if (url.pathname === '/api/v1/agent/capabilities') {
    if (session.includes('slow')) await sleep(400);
    if (session.startsWith('pi-')) return json(res, 200, { nativeFollowUp: true, aiSdkOwnsHistory: false });
    return json(res, 200, { nativeFollowUp: false, aiSdkOwnsHistory: true });
  }
  if (url.pathname === '/api/v1/agent/chat' && req.method === 'POST') return chat(req, res, body);
  if (m && m[2] === 'followup' && req.method === 'POST') {
    const n = (inFlight.get(session) || 0) + 1;
    inFlight.set(session, n);
    maxInFlight.set(session, Math.max(n, maxInFlight.get(session) || 0));
    // The client gave up (an abort): the response closes before it was written.
    res.on('close', () => { if (!res.writableEnded) entry.aborted = true; });
    if (session.includes('delay')) await sleep(600);
    inFlight.set(session, (inFlight.get(session) || 1) - 1);
    const q = queues.get(session) || [];
    queues.set(session, q);
    if (!q.some((f) => f.clientNonce === body.clientNonce)) q.push(body);
    return json(res, 202, { queued: true });
  }
  if (m && m[2] === 'followup' && req.method === 'DELETE') return json(res, 204);
  if (m && m[2] === 'messages' && req.method === 'GET') return json(res, 200, { messages: histories.get(session) || [] });
  if (m && m[2] === 'messages' && req.method === 'PUT') { histories.set(session, body.messages); return json(res, 204); }
  if (m && m[2] === 'stream') return json(res, 204);
  if (m && m[2] === 'turn' && req.method === 'DELETE') {
    const st = streams.get(session);
    if (st) st.closed = true;
    return json(res, 204);
  }
  json(res, 404, { error: { code: 'not_found', message: 'no route' } });
});

server.listen(port, '127.0.0.1', () => console.log(`test server on http://127.0.0.1:${port}`));

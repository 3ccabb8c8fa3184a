// End-to-end: examples/assistant-ui-stock, an app on assistant-ui's stock components (a Thread
// and a ThreadList in the shape of its registry's, `makeAssistantToolUI` tool UIs, the queue
// through `ComposerPrimitive.Queue`), with `useChatStoreRuntime` as its runtime, against the
// reference server in both modes (AI SDK: `--runtime ai-sdk`; pi: the SSE routes, and the
// pi-native protocol with `?protocol=pi-native`), in headless Chromium. One scenario per point
// of the issue "assistant-ui's stock components on our runtime":
// 1. branches: after Regenerate and after Edit (AI SDK mode) the picker reads 2 / 2 and goes
//    back; a send continues the chosen branch; a reload keeps the branches. pi: no picker.
// 2. the queue: each item's state through the queue primitives; Run Now runs an item now where
//    the server allows it (pi-native's interrupt) and retries a failed or stalled one; Remove.
// 3. liveness: a server killed mid-answer shows a typed error and Retry within a few seconds,
//    connected directly and behind a proxy that keeps the socket open (heartbeats every 500 ms);
//    a long silent tool run (a question waiting for the user) is not cut.
// 4. an ask-user answer given before the server asks (`--ask-delay`) is held and sent once.
// 5. the thread list: Load more pages to all 41 of 41 sessions, archived threads show, a thread
//    whose turn runs shows the running mark.
// 6. pi: a tool round trip is one assistant bubble, the tool UI gets the tool's output (not pi's
//    `[{type, text}]` content), Reload is not offered.
// Screenshots: target/e2e/stock-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startServer, launch, sessionId, openChat, typeAndEnter, pageMessages, canonicalView, users,
  screenshot, eventually, settled, status, waitStatus,
} from './lib.mjs';

const APP = 'assistant-ui-stock';
const BEAT = ['--heartbeat-ms', '500'];
let browser, aiSdk, pi;

before(async () => {
  [browser, aiSdk, pi] = await Promise.all([
    launch(),
    startServer({ app: APP, runtime: 'ai-sdk', args: ['--tps', '200', '--interactive-tools', ...BEAT] }),
    startServer({ app: APP, runtime: 'pi', args: BEAT }),
  ]);
});

after(async () => {
  await Promise.all([browser?.close(), aiSdk?.stop(), pi?.stop()]);
});

const NATIVE = '&protocol=pi-native';

/** openChat, plus the console's errors; `check()` asserts no page error and no console error. */
async function open(server, session, query = '') {
  const opened = await openChat(browser, server, session, { query });
  const consoleErrors = [];
  opened.page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  const check = () => {
    assert.deepEqual(opened.errors.map((e) => e.stack ?? String(e)), [], 'no page errors');
    assert.deepEqual(consoleErrors, [], 'no console errors');
  };
  return { ...opened, consoleErrors, check };
}

const textOf = (message) => message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const chatPosts = async (server, session) => (await server.log()).filter((e) => e.route === 'chat' && e.sessionId === session);
const answerText = (page) => page.$$eval('[data-role=assistant] [data-testid=part-text]', (els) => els.map((e) => e.textContent).join(' '));

/** Polls `read()` until `ok(value)`; a timeout names `what` and the last value read. */
async function until(read, ok, what, timeout = 20_000) {
  let last;
  try {
    return await eventually(async () => {
      last = await read();
      return ok(last);
    }, { what, timeout });
  } catch (e) {
    throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`);
  }
}

const same = (expected) => (value) => JSON.stringify(value) === JSON.stringify(expected);

/** The thread shows exactly these [role, text] pairs (waits for them). */
async function shows(page, expected, what) {
  await until(async () => (await pageMessages(page)).map((m) => [m.role, m.text]), same(expected), what);
}

/** What a message's branch picker shows: null when hidden, else its text and arrows. */
async function picker(message) {
  const root = message.getByTestId('branch-picker');
  if ((await root.count()) === 0) return null;
  return {
    state: (await root.getByTestId('branch-state').textContent()).replace(/\s+/g, ' ').trim(),
    previous: await root.getByTestId('branch-previous').isEnabled(),
    next: await root.getByTestId('branch-next').isEnabled(),
  };
}

async function pickerReads(message, expected, what) {
  await until(() => picker(message), same(expected), what, 10_000);
}

const queue = (page) => page.$$eval('[data-testid=queued]', (els) => els.map((e) => ({
  text: e.querySelector('[data-testid=queued-text]')?.textContent,
  state: e.dataset.state ?? null,
})));

/** A reload of the page; resolves once the app is back and its history shown. */
async function reload(page) {
  await page.reload();
  await page.getByTestId('composer-input').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=capabilities]')?.dataset.loaded === 'true');
}

// ----- 1. branches ----------------------------------------------------------------------------

test('stock 1 · ai-sdk: after Regenerate the picker reads 2 / 2, Previous shows the old answer, a send continues it, a reload keeps both', async () => {
  await aiSdk.reset();
  const s = sessionId('stock-regen');
  const { page, context, check } = await open(aiSdk, s);
  await typeAndEnter(page, 'Tell me about cats words:3');
  const first = [['user', 'Tell me about cats words:3'], ['assistant', 'Answer Tell me about: w1 w2 w3']];
  await shows(page, first, 'the first answer');
  await settled(page);
  const answer = page.locator('[data-testid=message][data-role=assistant]').first();
  assert.equal(await picker(answer), null, 'one answer: no picker (hideWhenSingleBranch)');

  await answer.getByTestId('reload').click();
  await shows(page, [first[0], ['assistant', 'Answer Tell me about (attempt 2): w1 w2 w3']], 'the regenerated answer');
  await settled(page);
  await pickerReads(answer, { state: '2 / 2', previous: true, next: false }, 'the picker after Regenerate');
  await screenshot(page, 'stock-regenerate');

  await answer.getByTestId('branch-previous').click();
  await shows(page, first, 'Previous shows the old answer');
  await pickerReads(answer, { state: '1 / 2', previous: false, next: true }, 'the picker on the first branch');

  await typeAndEnter(page, 'And then words:2');
  const continued = [...first, ['user', 'And then words:2'], ['assistant', 'Answer And then: w1 w2']];
  await shows(page, continued, 'the send continues the chosen branch');
  await settled(page);
  const sent = (await chatPosts(aiSdk, s)).at(-1).body;
  assert.deepEqual(sent.messages.map(textOf), ['Tell me about cats words:3', 'Answer Tell me about: w1 w2 w3', 'And then words:2'], 'the POST carries the chosen branch');

  await reload(page);
  await shows(page, continued, 'the same path after a reload');
  await pickerReads(page.locator('[data-testid=message][data-role=assistant]').first(), { state: '1 / 2', previous: false, next: true }, 'the branches after a reload');
  await screenshot(page, 'stock-regenerate-reloaded');
  check();
  await context.close();
});

test('stock 1 · ai-sdk: after Edit the picker reads 2 / 2, Previous shows the old message and answer, a send continues it, a reload keeps both', async () => {
  await aiSdk.reset();
  const s = sessionId('stock-edit');
  const { page, context, check } = await open(aiSdk, s);
  await typeAndEnter(page, 'Tell me about cats words:3');
  const first = [['user', 'Tell me about cats words:3'], ['assistant', 'Answer Tell me about: w1 w2 w3']];
  await shows(page, first, 'the first answer');
  await settled(page);

  const user = page.locator('[data-testid=message][data-role=user]').first();
  await user.hover();
  await user.getByTestId('edit').click();
  const input = page.getByTestId('edit-input');
  await input.waitFor();
  assert.equal(await input.inputValue(), 'Tell me about cats words:3');
  await input.fill('Explain dogs instead words:4');
  await page.getByTestId('edit-send').click();
  await shows(page, [['user', 'Explain dogs instead words:4'], ['assistant', 'Answer Explain dogs instead: w1 w2 w3 w4']], 'the edited message and its answer');
  await settled(page);
  await pickerReads(user, { state: '2 / 2', previous: true, next: false }, 'the picker after Edit');
  await screenshot(page, 'stock-edit');

  await user.getByTestId('branch-previous').click();
  await shows(page, first, 'Previous shows the old message and its answer');
  await pickerReads(user, { state: '1 / 2', previous: false, next: true }, 'the picker on the first branch');

  await typeAndEnter(page, 'Go on words:2');
  const continued = [...first, ['user', 'Go on words:2'], ['assistant', 'Answer Go on: w1 w2']];
  await shows(page, continued, 'the send continues the chosen branch');
  await settled(page);
  const sent = (await chatPosts(aiSdk, s)).at(-1).body;
  assert.deepEqual(sent.messages.map(textOf), ['Tell me about cats words:3', 'Answer Tell me about: w1 w2 w3', 'Go on words:2'], 'the POST carries the chosen branch');

  await reload(page);
  await shows(page, continued, 'the same path after a reload');
  await pickerReads(page.locator('[data-testid=message][data-role=user]').first(), { state: '1 / 2', previous: false, next: true }, 'the branches after a reload');
  check();
  await context.close();
});

for (const [mode, query] of [['pi', ''], ['pi-native', NATIVE]]) {
  test(`stock 1 · ${mode}: no branch picker, no usable Edit`, async () => {
    await pi.reset();
    const { page, context, check } = await open(pi, sessionId(`stock-${mode}-nobranch`), query);
    await typeAndEnter(page, 'Hello pi words:2');
    await shows(page, [['user', 'Hello pi words:2'], ['assistant', 'Answer Hello pi: w1 w2']], 'the answer');
    await settled(page);
    await typeAndEnter(page, 'Again words:2');
    await settled(page);
    const pickers = await page.$$eval('[data-testid=branch-picker]', (els) => els.map((e) => `${e.closest('[data-testid=message]')?.dataset.role}: ${e.textContent}`));
    assert.deepEqual(pickers, [], 'no picker');
    const edits = page.getByTestId('edit');
    for (let i = 0; i < (await edits.count()); i++) assert.ok(await edits.nth(i).isDisabled(), 'no usable Edit');
    check();
    await context.close();
  });
}

// ----- 2. the queue ---------------------------------------------------------------------------

for (const [mode, query] of [['pi', ''], ['pi-native', NATIVE]]) {
  test(`stock 2 · ${mode}: Remove removes a queued follow-up; each item shows its state; after Stop one is stalled and Run Now retries it`, async () => {
    await pi.reset();
    const s = sessionId(`stock-${mode}-queue`);
    const { page, context, check } = await open(pi, s, query);
    await typeAndEnter(page, 'Long one words:300');
    await eventually(async () => /\bw3\b/.test(await answerText(page)), { what: 'the answer to start' });
    await typeAndEnter(page, 'Queued then stopped words:2');
    await typeAndEnter(page, 'Removed one words:2');
    await until(() => queue(page), (q) => q.length === 2, 'two queued items');
    await page.locator('[data-testid=queued]').nth(1).getByTestId('queued-remove').click();
    await until(async () => (await queue(page)).map((i) => i.text), same(['Queued then stopped words:2']), 'Remove removes it');

    await until(() => queue(page), (q) => ['posting', 'queued', 'accepted'].includes(q[0]?.state), 'the item\'s delivery state (posting, queued or accepted)', 5_000);
    await screenshot(page, `stock-${mode}-queue`);
    await page.getByTestId('stop').click();
    await until(() => queue(page), same([{ text: 'Queued then stopped words:2', state: 'stalled' }]), 'the item stalled after Stop', 10_000);
    await screenshot(page, `stock-${mode}-stalled`);

    await page.getByTestId('queued-run-now').click();
    await until(async () => [users(canonicalView(await pi.messages(s))), await status(page)], same([['Long one words:300', 'Queued then stopped words:2'], 'ready']), 'Run Now to run the stalled item', 30_000);
    await settled(page);
    assert.deepEqual(users(await pageMessages(page)), ['Long one words:300', 'Queued then stopped words:2'], 'the removed one never ran');
    check();
    await context.close();
  });
}

test('stock 2 · pi: a follow-up the server refuses shows failed; Run Now retries it', async () => {
  await pi.reset();
  const s = sessionId('stock-pi-failed');
  const { page, context } = await open(pi, s);
  await pi.control({ notFound: ['followup'] });
  await typeAndEnter(page, 'Long one words:200');
  await eventually(async () => /\bw3\b/.test(await answerText(page)), { what: 'the answer to start' });
  await typeAndEnter(page, 'Refused first words:2');
  await until(() => queue(page), (q) => q[0]?.state === 'failed', 'the item failed', 25_000);
  await screenshot(page, 'stock-pi-failed');
  await pi.control({ notFound: [] });
  await page.getByTestId('queued-run-now').click();
  await eventually(async () => users(canonicalView(await pi.messages(s))).filter((t) => t === 'Refused first words:2').length === 1 && (await status(page)) === 'ready', { what: 'Run Now to deliver it', timeout: 30_000 });
  await settled(page);
  assert.deepEqual(users(await pageMessages(page)), ['Long one words:200', 'Refused first words:2']);
  await context.close();
});

test('stock 2 · pi-native: Run Now runs a queued follow-up now (the running answer is interrupted)', async () => {
  await pi.reset();
  const s = sessionId('stock-native-run-now');
  const { page, context, check } = await open(pi, s, NATIVE);
  await typeAndEnter(page, 'Long one words:400');
  await eventually(async () => /\bw3\b/.test(await answerText(page)), { what: 'the answer to start' });
  await typeAndEnter(page, 'Run me now words:2');
  await until(() => queue(page), (q) => q.length === 1, 'the item queued');
  await page.getByTestId('queued-run-now').click();
  // 400 words at 20 tokens/s take ~20 s: the follow-up's answer well before that is "now".
  await eventually(async () => (await answerText(page)).includes('Answer Run me now: w1 w2'), { what: 'the follow-up answered now', timeout: 8_000 });
  await settled(page);
  assert.ok(!(await answerText(page)).includes('w400'), 'the long answer was interrupted');
  assert.ok((await pi.log()).some((e) => e.route === 'pi-interrupt'), 'an interrupt was posted');
  assert.deepEqual(users(await pageMessages(page)), ['Long one words:400', 'Run me now words:2']);
  check();
  await context.close();
});

// ----- 3. liveness ----------------------------------------------------------------------------

/**
 * A proxy as a dev server's is: it forwards every request to `target`, and a response the
 * upstream stops sending in the middle (killed) is left open, socket and all. A request that
 * finds no upstream gets 502.
 */
async function startProxy(target) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.on('data', (d) => res.write(d));
      upRes.on('end', () => res.end());
      upRes.on('error', () => {}); // the socket stays open towards the page
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
    });
    req.pipe(up);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

const LIVENESS = [['ai-sdk', 'ai-sdk', ''], ['pi', 'pi', ''], ['pi-native', 'pi', NATIVE]];

for (const [mode, runtime, query] of LIVENESS) {
  for (const proxied of [false, true]) {
    const how = proxied ? 'behind a proxy that keeps the socket open' : 'connected directly';
    test(`stock 3 · ${mode}: a server killed mid-answer shows a typed error and Retry within seconds, ${how}`, async () => {
      const server = await startServer({ app: APP, runtime, args: BEAT });
      const proxy = proxied ? await startProxy(server.url) : null;
      try {
        const { page, context } = await open(proxy ?? server, sessionId(`stock-${mode}-killed`), query);
        await typeAndEnter(page, 'Long answer words:400');
        await eventually(async () => /\bw5\b/.test(await answerText(page)), { what: 'the answer to stream' });
        const t0 = Date.now();
        await server.kill();
        // The store's rule (docs/assistant-ui.md): the beat interval (the server's 500 ms over
        // SSE, pi-native's fixed 25 s) plus heartbeatGraceMs (5 s), then the recovery (a resume;
        // pi-native's reconnects, 1 s and 2 s); a closed socket fails faster.
        const error = page.getByTestId('message-error');
        await error.waitFor({ timeout: mode === 'pi-native' && proxied ? 40_000 : 10_000 });
        const code = await error.getAttribute('data-code');
        const seconds = (Date.now() - t0) / 1000;
        console.log(`# ${mode} ${how}: the error (${code}) after ${seconds.toFixed(1)} s`);
        if (proxied) assert.equal(code, 'StreamStalled', 'a stalled stream is told by its missing beats');
        else assert.ok(code, 'a typed error');
        await eventually(async () => (await page.getByTestId('retry').isEnabled()), { what: 'Retry offered', timeout: 2_000 });
        assert.notEqual(await status(page), 'streaming', 'the turn is over');
        await screenshot(page, `stock-${mode}-killed${proxied ? '-proxy' : ''}`);
        await context.close();
      } finally {
        await proxy?.close();
        await server.stop();
      }
    });
  }
}

// pi-native has no human-in-the-loop (no question, no answer route): the SSE routes only.
for (const [mode, query] of [['pi', '']]) {
  test(`stock 3 · ${mode}: a long silent tool run behind the proxy is not cut (a question waits 8 s)`, async () => {
    const server = await startServer({ app: APP, runtime: 'pi', args: BEAT });
    const proxy = await startProxy(server.url);
    try {
      const { page, context, check } = await open(proxy, sessionId(`stock-${mode}-silent`), query);
      await typeAndEnter(page, 'Please ask which colour');
      const card = page.locator('[data-testid=part-tool][data-tool-name=askUser]');
      await eventually(async () => (await card.getAttribute('data-asked')) === 'true', { what: 'the server to ask' });
      await new Promise((r) => setTimeout(r, 8_000));
      assert.equal(await page.getByTestId('message-error').count(), 0, 'no error while the tool waits');
      assert.equal(await status(page), 'streaming', 'the turn still runs');
      await card.locator('button[data-option=red]').click();
      await eventually(async () => (await answerText(page)).includes('You chose red.'), { what: 'the answer after the wait' });
      await settled(page);
      assert.equal(await page.getByTestId('message-error').count(), 0);
      check();
      await context.close();
    } finally {
      await proxy.close();
      await server.stop();
    }
  });
}

// ----- 4. an early ask-user answer ------------------------------------------------------------

// pi only: the AI SDK runtime has no question the server asks, pi-native no human-in-the-loop.
for (const [mode, query] of [['pi', '']]) {
  test(`stock 4 · ${mode}: an answer given before the server asks is held and sent once`, async () => {
    await pi.reset();
    await pi.control({ askDelayMs: 3_000 });
    const s = sessionId(`stock-${mode}-early`);
    const { page, context, check } = await open(pi, s, query);
    await typeAndEnter(page, 'Please ask which colour');
    const card = page.locator('[data-testid=part-tool][data-tool-name=askUser]');
    await card.locator('button[data-option=red]').waitFor();
    assert.equal(await card.getAttribute('data-asked'), 'false', 'the server has not asked yet');
    await card.locator('button[data-option=red]').click();
    await screenshot(page, `stock-${mode}-early-answer`);
    await eventually(async () => (await answerText(page)).includes('You chose red.'), { what: 'the held answer to be sent', timeout: 20_000 });
    await settled(page);
    const answers = (await pi.log()).filter((e) => e.route === 'tool-output' && e.sessionId === s);
    assert.equal(answers.length, 1, 'the answer was posted once');
    assert.equal(await page.getByTestId('message-error').count(), 0);
    check();
    await context.close();
  });
}

// ----- 5. the thread list ---------------------------------------------------------------------

/** Makes a session with one finished turn, through the chat route (as fast as the server goes). */
async function makeSession(server, id, text) {
  const r = await fetch(`${server.url}/api/v1/agent/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, sessionId: id, message: text, trigger: 'submit-message' }),
  });
  assert.equal(r.status, 200, `chat POST for ${id}`);
  await r.text();
}

const listed = (page, where) => page.$$eval(`[data-testid=${where}] [data-testid=thread-item]`, (els) => els.map((e) => ({ id: e.dataset.id, running: e.dataset.running === 'true' })));
const ids = (items) => items.map((i) => i.id).sort();

/** 43 sessions with one finished turn each, the first two archived: `{regular (41), archived}`. */
async function seedSessions(server, prefix) {
  await server.control({ tps: 0 });
  const all = Array.from({ length: 43 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
  for (const id of all) await makeSession(server, id, `Thread ${id.slice(-2)} words:2`);
  const archived = all.slice(0, 2);
  for (const id of archived) {
    const r = await fetch(`${server.url}/api/v1/agent/sessions/${encodeURIComponent(id)}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ archived: true }) });
    assert.equal(r.status, 200);
  }
  await server.control({ tps: 20 });
  return { regular: all.slice(2), archived };
}

const stopTurn = (server, id) => fetch(`${server.url}/api/v1/agent/chat/${encodeURIComponent(id)}/turn`, { method: 'DELETE' });

for (const [mode, getServer] of [['ai-sdk', () => aiSdk], ['pi', () => pi]]) {
  test(`stock 5 · ${mode}: Load more pages the thread list to all 41 of 41 sessions; the archived threads show`, async () => {
    const server = getServer();
    await server.reset();
    const { regular, archived } = await seedSessions(server, sessionId(`stock-${mode}-list`));
    const { page, context, check } = await open(server, regular.at(-1));
    await until(() => listed(page, 'thread-items'), (l) => l.length >= 20, 'the first page');
    // The archived threads, from their own walk.
    await until(async () => ids(await listed(page, 'thread-archived')), same(archived), 'the archived threads');
    const more = page.getByTestId('thread-load-more');
    for (let i = 0; i < 5 && (await listed(page, 'thread-items')).length < regular.length; i++) {
      const before = (await listed(page, 'thread-items')).length;
      await until(async () => [before, await more.isEnabled()], ([, enabled]) => enabled, 'Load more enabled (listed, enabled)', 5_000);
      await more.click();
      await until(async () => (await listed(page, 'thread-items')).length, (n) => n > before, 'the next page', 10_000);
    }
    await until(async () => ids(await listed(page, 'thread-items')), same([...regular].sort()), `all ${regular.length} of ${regular.length} sessions`);
    await until(() => more.isEnabled(), (enabled) => !enabled, 'Load more disabled at the end', 5_000);
    await screenshot(page, `stock-${mode}-thread-list`);
    check();
    await context.close();
  });

  test(`stock 5 · ${mode}: a thread whose turn runs shows the running mark`, async () => {
    const server = getServer();
    await server.reset();
    const prefix = sessionId(`stock-${mode}-running`);
    await makeSession(server, `${prefix}-open`, 'Open one words:2');
    await server.control({ tps: 20 }); // 400 words then run ~20 s
    // A turn running in another session (the server's list says so) while the page opens.
    const busy = `${prefix}-busy`;
    const busyTurn = makeSession(server, busy, 'Busy words:400');
    const serverList = async () => (await (await fetch(`${server.url}/api/v1/agent/sessions`)).json()).sessions;
    await until(serverList, (l) => l.find((i) => i.id === busy)?.running === true, 'the server to list the busy session as running', 5_000);
    const { page, context, check } = await open(server, `${prefix}-open`);
    try {
      await until(() => listed(page, 'thread-items'), (l) => l.find((i) => i.id === busy)?.running === true, 'the running mark on the busy thread');
      // A turn of our own, left running: its thread shows the mark from the list.
      await typeAndEnter(page, 'Still going words:400');
      await waitStatus(page, 'streaming', 10_000);
      await page.getByTestId('thread-new').click();
      await until(() => listed(page, 'thread-items'), (l) => l.find((i) => i.id === `${prefix}-open`)?.running === true, 'the running mark on the thread left running');
      await screenshot(page, `stock-${mode}-thread-running`);
      check();
    } finally {
      await context.close();
      await Promise.all([stopTurn(server, busy), stopTurn(server, `${prefix}-open`)]);
      await busyTurn;
    }
  });
}

// ----- 6. pi: one bubble per tool round trip, the tool's output, no Reload --------------------

for (const [mode, getServer, query] of [['pi', () => pi, ''], ['pi-native', () => pi, NATIVE], ['ai-sdk', () => aiSdk, '']]) {
  test(`stock 6 · ${mode}: a tool round trip is one assistant bubble and its tool UI gets the tool's output`, async () => {
    const server = getServer();
    await server.reset();
    const s = sessionId(`stock-${mode}-tool`);
    const { page, context, check } = await open(server, s, query);
    await typeAndEnter(page, 'Please list files');
    await eventually(async () => (await answerText(page)).includes('Result for Please list files'), { what: 'the answer after the tool' });
    await settled(page);
    const shown = await pageMessages(page);
    assert.deepEqual(shown.map((m) => m.role), ['user', 'assistant'], 'one assistant bubble for the round trip');
    assert.deepEqual(shown[1].tools, ['ls']);
    const result = JSON.parse(await page.getByTestId('tool-result').first().textContent());
    assert.ok(!(Array.isArray(result) && result.every((p) => p && typeof p === 'object' && 'type' in p)), `the tool's output, not content parts: ${JSON.stringify(result)}`);
    assert.match(JSON.stringify(result), /hello\.txt/, 'the output names the files');
    if (mode !== 'ai-sdk') {
      const reloads = page.getByTestId('reload');
      for (let i = 0; i < (await reloads.count()); i++) assert.ok(await reloads.nth(i).isDisabled(), 'Reload is not offered in pi mode');
    }
    await screenshot(page, `stock-${mode}-tool`);
    check();
    await context.close();
  });
}

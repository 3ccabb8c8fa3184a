// End-to-end over the second transport (SPEC §14): the React example with `?protocol=pi-native`
// (the store speaks the server's pi-native routes: /state, the NDJSON events, prompt, followup,
// stop, queue/clear) against the reference server over its real pi agent, in headless Chromium.
// What the page shows is checked against the session's canonical history, read through the
// server's other protocol: one session, two protocols, the same messages. A follow-up removed
// from its waiting bubble is taken back (`queue/clear` with its selectors) and never runs.
// The assistant-ui example runs the same way (its own server, `app: 'assistant-ui'`; nothing in
// the app is pi-native's): a prompt and follow-ups, stop, reload mid-answer.
// Screenshots: target/e2e/pi-native-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  sessionId, openChat, typeAndEnter, waitStatus, pageMessages, canonicalView, screenshot,
  eventually, launch, startServer, users, settled, status,
} from './lib.mjs';

let browser, pi, aui;
before(async () => {
  [browser, pi, aui] = await Promise.all([
    launch(), startServer({ runtime: 'pi' }), startServer({ runtime: 'pi', app: 'assistant-ui' }),
  ]);
});
after(async () => {
  await browser?.close();
  await Promise.all([pi?.stop(), aui?.stop()]);
});

const QUERY = '&protocol=pi-native';
const open = (s, server = pi) => openChat(browser, server, s, { query: QUERY });
const answerText = (page) => page.$$eval('[data-role=assistant] [data-testid=part-text]', (els) => els.map((e) => e.textContent).join(' '));
const nativeRoutes = (log) => log.filter((e) => e.path?.startsWith('/api/v1/agents/'));

test('pi-native: a prompt and three follow-ups during its answer (two alike) arrive once each, in order', async () => {
  await pi.reset();
  const s = sessionId('native-followups');
  const { page, context, errors } = await open(s);
  await typeAndEnter(page, 'Answer slowly words:80');
  await waitStatus(page, 'streaming', 10_000);
  for (const t of ['same text', 'same text', 'third one']) await typeAndEnter(page, t);
  await page.getByTestId('queued').first().waitFor({ timeout: 5_000 });
  await screenshot(page, 'pi-native-queued');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Answer slowly words:80', 'same text', 'same text', 'third one']);
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  const log = nativeRoutes(await pi.log());
  assert.equal(log.filter((e) => e.path.endsWith('/prompt')).length, 1, 'one prompt');
  assert.equal(log.filter((e) => e.path.endsWith('/followup')).length, 3, 'three follow-ups');
  assert.equal((await pi.log()).filter((e) => e.route === 'chat').length, 0, 'nothing through the SSE routes');
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-followups-done');
  await context.close();
});

test('pi-native: stop ends the answer; the app is usable again', async () => {
  await pi.reset();
  const s = sessionId('native-stop');
  const { page, context, errors } = await open(s);
  await typeAndEnter(page, 'Long answer words:300');
  await eventually(async () => /w5\b/.test(await answerText(page)), { what: 'some of the answer' });
  await page.getByTestId('stop').click();
  await waitStatus(page, 'ready', 10_000);
  const stopped = await answerText(page);
  await typeAndEnter(page, 'Next question words:3');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Long answer words:300', 'Next question words:3']);
  assert.ok(shown[1].text.length > 0 && stopped.length > 0);
  assert.ok((await pi.log()).some((e) => e.path?.endsWith('/stop')), 'the stop was POSTed');
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-stop');
  await context.close();
});

test('pi-native: a reload mid-answer shows it streaming on and then complete, once', async () => {
  await pi.reset();
  const s = sessionId('native-reload');
  const { page, context, errors } = await open(s);
  await typeAndEnter(page, 'Reload me words:120');
  await eventually(async () => /w8\b/.test(await answerText(page)), { what: 'the answer to reach w8' });
  const seen = await answerText(page);
  await page.reload();
  await page.getByTestId('composer-input').waitFor();
  await waitStatus(page, 'streaming', 10_000);
  await eventually(async () => (await answerText(page)).length > seen.length, { what: 'the answer to grow after the reload' });
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Reload me words:120']);
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-reload');
  await context.close();
});

for (const [name, control] of [
  ['a cut events stream is resumed from its cursor', { cutEventsAfter: 12 }],
  ['a seq gap makes the store read the state again', { skipSeq: 1 }],
]) {
  test(`pi-native: ${name}; nothing is lost or doubled`, async () => {
    await pi.reset();
    const s = sessionId('native-fault');
    // Before the page opens: the first events connection of the session meets the fault.
    await pi.control(control);
    const { page, context, errors } = await open(s);
    await typeAndEnter(page, 'Through a fault words:40');
    await settled(page);
    const shown = await pageMessages(page);
    assert.deepEqual(users(shown), ['Through a fault words:40']);
    assert.deepEqual(shown, canonicalView(await pi.messages(s)));
    const reads = nativeRoutes(await pi.log()).filter((e) => e.path.includes('/events') || e.path.endsWith('/state'));
    assert.ok(reads.length >= 3, `the store read again: ${reads.map((e) => e.path).join(', ')}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('pi-native: a queued follow-up removed from its waiting bubble never runs; the other runs once', async () => {
  await pi.reset();
  const s = sessionId('native-remove');
  const { page, context, errors } = await open(s);
  await typeAndEnter(page, 'Answer slowly words:100');
  await waitStatus(page, 'streaming', 10_000);
  await typeAndEnter(page, 'keep this one words:3');
  await typeAndEnter(page, 'remove this one words:3');
  const removed = page.getByTestId('queued').filter({ hasText: 'remove this one' });
  await removed.waitFor({ timeout: 5_000 });
  // On the server's queue already (the store posts a follow-up at once), so Remove takes it back.
  await eventually(async () => (await removed.getAttribute('data-state')) === 'accepted', { what: 'the follow-up accepted by the server', timeout: 5_000 });
  await screenshot(page, 'pi-native-remove-before');
  await removed.getByTestId('queued-remove').click();
  await removed.waitFor({ state: 'detached', timeout: 5_000 });
  assert.equal(await status(page), 'streaming', 'removed while the first answer still runs');
  assert.deepEqual(await page.getByTestId('queued').allTextContents().then((t) => t.map((x) => /keep this one/.test(x))), [true], 'the other still waits');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Answer slowly words:100', 'keep this one words:3']);
  const history = await pi.messages(s);
  assert.deepEqual(shown, canonicalView(history));
  assert.ok(!JSON.stringify(history).includes('remove this one'), 'the removed follow-up is nowhere in the history');
  // Still nothing of it after a while: the server's queue had dropped it, not merely delayed it.
  await new Promise((r) => setTimeout(r, 1_500));
  assert.deepEqual(users(canonicalView(await pi.messages(s))), ['Answer slowly words:100', 'keep this one words:3']);
  assert.equal(await status(page), 'ready');
  const log = nativeRoutes(await pi.log());
  const posted = log.filter((e) => e.path.endsWith('/followup'));
  assert.deepEqual(posted.map((e) => e.body.content), ['keep this one words:3', 'remove this one words:3'], 'both follow-ups were posted');
  const clears = log.filter((e) => e.path.endsWith('/queue/clear'));
  assert.equal(clears.length, 1, 'one take-back');
  assert.deepEqual([clears[0].status, clears[0].body], [202, { clientNonce: posted[1].body.clientNonce, clientSeq: posted[1].body.clientSeq }], 'it names the removed follow-up');
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-remove');
  await context.close();
});

// ----- as the real server (`--upstream-quirks`) ------------------------------------------------
// The reference server as the real upstream one behaves (examples/server/README.md): consumed
// follow-ups and `/state` carry no selectors, a `queue/clear` by selectors clears nothing. The
// store knows follow-ups by their text then, and removes by a clear of the whole queue,
// posting the others again.

test('pi-native as the real server: follow-ups known by their text run once; a removed one never', async () => {
  const quirks = await startServer({ runtime: 'pi', args: ['--upstream-quirks'] });
  try {
    const s = sessionId('native-quirks');
    const { page, context, errors } = await open(s, quirks);
    await typeAndEnter(page, 'Answer slowly words:120');
    await waitStatus(page, 'streaming', 10_000);
    for (const t of ['same text', 'same text', 'drop me words:3', 'last one']) await typeAndEnter(page, t);
    const dropped = page.getByTestId('queued').filter({ hasText: 'drop me' });
    await eventually(async () => (await dropped.getAttribute('data-state')) === 'accepted', { what: 'the follow-up accepted by the server', timeout: 5_000 });
    await dropped.getByTestId('queued-remove').click();
    await dropped.waitFor({ state: 'detached', timeout: 10_000 });
    await settled(page);
    const shown = await pageMessages(page);
    assert.deepEqual(users(shown), ['Answer slowly words:120', 'same text', 'same text', 'last one']);
    const history = await quirks.messages(s);
    assert.deepEqual(shown, canonicalView(history));
    assert.ok(!JSON.stringify(history).includes('drop me'), 'the removed follow-up is nowhere in the history');
    const log = nativeRoutes(await quirks.log());
    const clears = log.filter((e) => e.path.endsWith('/queue/clear'));
    assert.ok(clears.some((e) => e.body && !('clientNonce' in e.body)), 'the whole queue was cleared (selectors clear nothing there)');
    assert.equal(log.filter((e) => e.path.endsWith('/prompt')).length, 1, 'nothing was sent again as a new message');
    assert.deepEqual(errors, []);
    await screenshot(page, 'pi-native-quirks');
    await context.close();
  } finally {
    await quirks.stop();
  }
});

// ----- the assistant-ui example ---------------------------------------------------------------

const auiAnswer = (page) => page.$$eval('[data-testid=message][data-role=assistant] [data-testid=part-text]', (els) => els.map((e) => e.textContent).join(' '));

test('pi-native · assistant-ui: a prompt and three follow-ups during its answer (two alike) arrive once each, in order', async () => {
  await aui.reset();
  const s = sessionId('native-aui-followups');
  const { page, context, errors } = await open(s, aui);
  await typeAndEnter(page, 'Answer slowly words:80');
  await waitStatus(page, 'streaming', 10_000);
  for (const t of ['same text', 'same text', 'third one']) await typeAndEnter(page, t);
  await page.getByTestId('queued').first().waitFor({ timeout: 5_000 });
  await screenshot(page, 'pi-native-aui-queued');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Answer slowly words:80', 'same text', 'same text', 'third one']);
  assert.deepEqual(shown, canonicalView(await aui.messages(s)));
  const log = nativeRoutes(await aui.log());
  assert.equal(log.filter((e) => e.path.endsWith('/prompt')).length, 1, 'one prompt');
  assert.equal(log.filter((e) => e.path.endsWith('/followup')).length, 3, 'three follow-ups');
  assert.equal((await aui.log()).filter((e) => e.route === 'chat').length, 0, 'nothing through the SSE routes');
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-aui-followups-done');
  await context.close();
});

test('pi-native · assistant-ui: stop ends the answer; the app is usable again', async () => {
  await aui.reset();
  const s = sessionId('native-aui-stop');
  const { page, context, errors } = await open(s, aui);
  await typeAndEnter(page, 'Long answer words:300');
  await eventually(async () => /w5\b/.test(await auiAnswer(page)), { what: 'some of the answer' });
  await page.getByTestId('stop').click();
  await waitStatus(page, 'ready', 10_000);
  const stopped = await auiAnswer(page);
  await typeAndEnter(page, 'Next question words:3');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Long answer words:300', 'Next question words:3']);
  assert.ok(stopped.length > 0 && !/w300\b/.test(stopped), 'stopped before its end');
  assert.deepEqual(shown, canonicalView(await aui.messages(s)));
  assert.ok((await aui.log()).some((e) => e.path?.endsWith('/stop')), 'the stop was POSTed');
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-aui-stop');
  await context.close();
});

test('pi-native · assistant-ui: a reload mid-answer keeps the answer, streaming on and then complete, once', async () => {
  await aui.reset();
  const s = sessionId('native-aui-reload');
  const { page, context, errors } = await open(s, aui);
  await typeAndEnter(page, 'Reload me words:120');
  await eventually(async () => /w8\b/.test(await auiAnswer(page)), { what: 'the answer to reach w8' });
  const seen = await auiAnswer(page);
  await page.reload();
  await page.getByTestId('composer-input').waitFor();
  await waitStatus(page, 'streaming', 10_000);
  await eventually(async () => (await auiAnswer(page)).startsWith(seen.trim().slice(0, 20)), { what: 'the answer back after the reload' });
  await eventually(async () => (await auiAnswer(page)).length > seen.length, { what: 'the answer to grow after the reload' });
  await screenshot(page, 'pi-native-aui-reload-streaming');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Reload me words:120']);
  assert.deepEqual(shown.map((m) => m.role), ['user', 'assistant']);
  assert.match(shown[1].text, /w120$/);
  assert.deepEqual(shown, canonicalView(await aui.messages(s)));
  assert.deepEqual(errors, []);
  await screenshot(page, 'pi-native-aui-reload');
  await context.close();
});

// End-to-end: the React example (and the assistant-ui one) against the reference server with a
// real pi agent, in headless Chromium. Each test asserts what the user sees in the page; a
// screenshot of each scenario's final state is kept in target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  sessionId, openChat, typeAndEnter, answered, status, waitStatus, pageMessages,
  canonicalView, queuedCount, screenshot, eventually, startAll, stopAll, users, settled,
} from './lib.mjs';

let browser, pi, aiSdk, aui;

let env;
before(async () => {
  env = await startAll();
  ({ browser, pi, aiSdk, aui } = env);
});
after(() => stopAll(env));


test('pi: three follow-ups while the first answer streams arrive once each, in order', async () => {
  await pi.reset();
  const s = sessionId('pi-order');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Hello there words:40');
  await waitStatus(page, 'streaming');
  // The third has the same text as the second: still two messages, never a merged bubble.
  for (const t of ['First follow words:3', 'Same again words:3', 'Same again words:3']) await typeAndEnter(page, t);
  assert.equal(await queuedCount(page), 3, 'three waiting bubbles');
  assert.match(await page.getByTestId('queued').first().innerText(), /Waiting…/);
  assert.equal(await page.getByTestId('composer-input').inputValue(), '', 'each accepted follow-up cleared the draft');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Hello there words:40', 'First follow words:3', 'Same again words:3', 'Same again words:3']);
  assert.deepEqual(shown, canonicalView(await pi.messages(s)), 'the page shows the server\'s canonical order');
  // pi runs one follow-up at a time here: each user message has its own answer.
  assert.deepEqual(shown.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  assert.match(shown[3].text, /^Answer First follow/);
  await screenshot(page, 'pi-three-follow-ups');
  await context.close();
});

test('pi: a follow-up asking for a tool gets its tool UI under its own answer', async () => {
  await pi.reset();
  const s = sessionId('pi-tool');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Start slowly words:30');
  await waitStatus(page, 'streaming');
  await typeAndEnter(page, 'please list files');
  await settled(page);
  const shown = await pageMessages(page);
  const at = shown.findIndex((m) => m.role === 'user' && m.text === 'please list files');
  assert.ok(at > 0, JSON.stringify(shown));
  assert.deepEqual(shown.slice(0, at).flatMap((m) => m.tools), [], 'nothing of the tool before the follow-up');
  const toolAt = shown.findIndex((m) => m.tools.includes('ls'));
  assert.ok(toolAt > at && shown[toolAt].role === 'assistant', JSON.stringify(shown));
  const tool = page.locator('[data-testid=part-tool][data-tool-name=ls]');
  assert.equal(await tool.count(), 1);
  assert.equal(await tool.getAttribute('data-state'), 'output-available');
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  await screenshot(page, 'pi-tool-follow-up');
  await context.close();
});

test('ai-sdk: while busy, send is disabled, Enter does nothing, the draft stays and no follow-up is posted', async () => {
  await aiSdk.reset();
  const s = sessionId('ai-busy');
  const { page, context, requests } = await openChat(browser, aiSdk, s);
  assert.equal(await page.getByTestId('capabilities').getAttribute('data-native-follow-up'), 'false');
  await typeAndEnter(page, 'Hello words:40');
  await waitStatus(page, 'streaming');
  await typeAndEnter(page, 'more please');
  assert.equal(await page.getByTestId('composer-input').inputValue(), 'more please', 'the draft stays');
  assert.ok(await page.getByTestId('send').isDisabled(), 'send is disabled');
  assert.equal((await page.getByTestId('hint').innerText()).trim(), 'Wait for the current response to finish.');
  assert.equal(await queuedCount(page), 0, 'no waiting bubble');
  await screenshot(page, 'ai-sdk-busy');
  await waitStatus(page, 'ready');
  assert.equal(await page.getByTestId('composer-input').inputValue(), 'more please', 'still there after the turn');
  assert.ok(!(await page.getByTestId('send').isDisabled()), 'send enabled once ready');
  assert.deepEqual(requests.filter((r) => r.url.includes('/followup')), [], 'no request to /followup');
  assert.deepEqual((await aiSdk.log()).filter((e) => e.route === 'followup'), []);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Hello words:40']);
  await context.close();
});

test('reload mid-conversation shows the same history, in the same order, from the canonical route', async () => {
  await pi.reset();
  const s = sessionId('pi-reload');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'One words:3');
  await answered(page, 2);
  await typeAndEnter(page, 'please echo hello there');
  await answered(page, 4);
  await settled(page);
  const before = await pageMessages(page);
  assert.equal(before.length, 4, JSON.stringify(before)); // user, answer, user, the tool round trip as one answer
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=message]').length >= n, before.length);
  const afterReload = await pageMessages(page);
  assert.deepEqual(afterReload, before);
  assert.deepEqual(afterReload, canonicalView(await pi.messages(s)));
  await screenshot(page, 'reload');
  await context.close();
});

test('switching session while a follow-up POST is delayed keeps the sessions apart; switching back drains the queue', async () => {
  await pi.reset();
  await pi.control({ followupDelayMs: 1500 });
  const a = sessionId('pi-a');
  const b = sessionId('pi-b');
  const { page, context } = await openChat(browser, pi, a);
  await typeAndEnter(page, 'Long one words:70');
  await waitStatus(page, 'streaming');
  await typeAndEnter(page, 'Queued in A words:3');
  await eventually(async () => (await pi.log()).some((e) => e.route === 'followup' && e.sessionId === a), { what: 'the POST reached the server' });
  await page.getByTestId('session-input').fill(b);
  await page.getByTestId('switch-session').click();
  await page.waitForFunction((id) => document.querySelector('[data-testid=session-id]')?.textContent.includes(id), b);
  for (let i = 0; i < 10; i++) {
    const shown = await pageMessages(page);
    assert.deepEqual(shown, [], 'nothing of session A in B');
    assert.equal(await queuedCount(page), 0);
    await new Promise((r) => setTimeout(r, 200));
  }
  await screenshot(page, 'switch-b-empty');
  await page.getByTestId('session-input').fill(a);
  await page.getByTestId('switch-session').click();
  await page.waitForFunction((id) => document.querySelector('[data-testid=session-id]')?.textContent.includes(id), a);
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Long one words:70', 'Queued in A words:3']);
  assert.deepEqual(shown, canonicalView(await pi.messages(a)));
  await pi.control({ followupDelayMs: 0 });
  await screenshot(page, 'switch-back-drained');
  await context.close();
});

test('stop mid-turn ends the stream, sends the turn DELETE, and leaves the composer usable', async () => {
  await pi.reset();
  const s = sessionId('pi-stop');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Stop me words:300');
  await page.waitForFunction(() => (document.querySelector('[data-role=assistant] [data-testid=part-text]')?.textContent || '').includes('w3'));
  await page.getByTestId('stop').click();
  await waitStatus(page, 'ready', 5_000);
  // (The server answers the DELETE once the turn wound down.)
  const deletes = await eventually(async () => {
    const d = (await pi.log()).filter((e) => e.route === 'turn' && e.method === 'DELETE');
    return d.length > 0 && d.every((e) => e.status === 204) && d;
  }, { what: 'the turn DELETE answered' });
  assert.equal(deletes.length, 1);
  // The page shows what the server kept (SPEC §7), and nothing streams after that.
  await eventually(async () => JSON.stringify(await pageMessages(page)) === JSON.stringify(canonicalView(await pi.messages(s))), { what: 'the kept history' });
  const kept = await pageMessages(page);
  await new Promise((r) => setTimeout(r, 800));
  assert.deepEqual(await pageMessages(page), kept, 'nothing streams after the stop');
  await typeAndEnter(page, 'After stop words:3');
  await answered(page, kept.length + 2);
  await settled(page);
  assert.deepEqual(users(await pageMessages(page)), ['Stop me words:300', 'After stop words:3']);
  await screenshot(page, 'stop');
  await context.close();
});

test('follow-up POSTs failing twice with 503 still deliver the follow-up exactly once', async () => {
  await pi.reset();
  const s = sessionId('pi-503');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Be patient words:200');
  await waitStatus(page, 'streaming');
  await pi.control({ failFollowups: 2 });
  await typeAndEnter(page, 'Retry me words:3');
  await settled(page);
  const posts = (await pi.log()).filter((e) => e.route === 'followup' && e.method === 'POST');
  assert.deepEqual(posts.map((p) => p.status), [503, 503, 202]);
  assert.equal(new Set(posts.map((p) => p.body.clientNonce)).size, 1, 'one nonce for all tries');
  assert.equal(new Set(posts.map((p) => p.body.clientSeq)).size, 1, 'one seq for all tries');
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Be patient words:200', 'Retry me words:3']);
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  await screenshot(page, 'follow-up-503-twice');
  await context.close();
});

test('assistant-ui: a turn renders and a follow-up waits in the queue, then arrives', async () => {
  await aui.reset();
  const s = sessionId('aui');
  const { page, context } = await openChat(browser, aui, s);
  const input = page.getByTestId('composer-input');
  await typeAndEnter(page, 'Hello assistant-ui words:40');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=message][data-role=assistant]').length === 1);
  await input.fill('Queued via assistant-ui words:3');
  await input.press('Enter');
  await page.getByTestId('queued').first().waitFor({ timeout: 5_000 });
  await screenshot(page, 'assistant-ui-queued');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=message]').length === 4 && !document.querySelector('[data-testid=queued]'), null, { timeout: 45_000 });
  const roles = await page.$$eval('[data-testid=message]', (els) => els.map((e) => e.dataset.role));
  assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant']);
  const texts = await page.$$eval('[data-testid=message][data-role=user]', (els) => els.map((e) => e.textContent));
  assert.ok(texts[1].includes('Queued via assistant-ui'), texts.join(' | '));
  await screenshot(page, 'assistant-ui-done');
  await context.close();
});

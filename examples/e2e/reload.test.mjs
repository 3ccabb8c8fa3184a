// End-to-end, SPEC §12: a reload while an answer streams shows the answer still streaming and
// then complete, once; stop and follow-ups work after the reload. Both example apps, against
// the reference server (a real pi agent; the AI SDK runtime too), in headless Chromium.
// Screenshots of each step are kept in target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  sessionId, openChat, typeAndEnter, status, waitStatus, pageMessages,
  canonicalView, queuedCount, screenshot, eventually, startAll, stopAll, users, settled,
} from './lib.mjs';

let browser, pi, aiSdk, aui;

let env;
before(async () => {
  env = await startAll();
  ({ browser, pi, aiSdk, aui } = env);
});
after(() => stopAll(env));

const answerText = (page) => page.$$eval('[data-role=assistant] [data-testid=part-text]', (els) => els.map((e) => e.textContent).join(' '));

/** Sends `text` and reloads the page once the answer shows `word`; returns the text seen then. */
async function reloadMidAnswer(page, text, word) {
  await typeAndEnter(page, text);
  await eventually(async () => (await answerText(page)).includes(word), { what: `the answer to reach ${word}` });
  const seen = await answerText(page);
  await page.reload();
  await page.getByTestId('composer-input').waitFor();
  return seen;
}

// `pi-legacy`: the reference server as the real one answers its history (no `activeTurn`, the
// running turn left out until an answer ended): the store asks the stream route itself.
const variants = [['pi', () => pi, {}], ['pi-legacy', () => pi, { legacyHistory: true }], ['ai-sdk', () => aiSdk, {}]];
for (const [name, server, control] of variants) {
  test(`${name}: a reload mid-answer shows it streaming on and then complete, once`, async () => {
    await server().reset();
    await server().control(control);
    const s = sessionId(`${name}-reload-live`);
    const { page, context, errors } = await openChat(browser, server(), s);
    const seen = await reloadMidAnswer(page, 'Reload me words:120', 'w8');
    await waitStatus(page, 'streaming', 10_000);
    await screenshot(page, `reload-live-${name}-streaming`);
    // It goes on from where it is: more words than before the reload, while still running.
    await eventually(async () => (await answerText(page)).length > seen.length, { what: 'the answer to grow after the reload' });
    await settled(page);
    const shown = await pageMessages(page);
    assert.equal(shown.length, 2, JSON.stringify(shown));
    assert.deepEqual(users(shown), ['Reload me words:120']);
    assert.ok(shown[1].text.startsWith(seen.trim().slice(0, 20)), `${shown[1].text} / ${seen}`);
    assert.deepEqual(shown, canonicalView(await server().messages(s)));
    assert.deepEqual(errors, []);
    await screenshot(page, `reload-live-${name}-done`);
    await context.close();
  });
}

test('pi: after a reload mid-answer, a follow-up is posted to the running turn and arrives once', async () => {
  await pi.reset();
  const s = sessionId('pi-reload-followup');
  const { page, context } = await openChat(browser, pi, s);
  await reloadMidAnswer(page, 'Long answer words:150', 'w5');
  await waitStatus(page, 'streaming', 10_000);
  await typeAndEnter(page, 'Follow-up after reload words:3');
  await page.getByTestId('queued').first().waitFor({ timeout: 5_000 });
  await screenshot(page, 'reload-followup-queued');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Long answer words:150', 'Follow-up after reload words:3']);
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  const chats = (await pi.log()).filter((e) => e.route === 'chat');
  assert.equal(chats.length, 1, 'the follow-up was not sent as a new turn');
  await screenshot(page, 'reload-followup-done');
  await context.close();
});

test('pi: after a reload mid-answer, stop ends the running turn', async () => {
  await pi.reset();
  const s = sessionId('pi-reload-stop');
  const { page, context } = await openChat(browser, pi, s);
  await reloadMidAnswer(page, 'Stop after reload words:300', 'w5');
  await waitStatus(page, 'streaming', 10_000);
  await page.getByTestId('stop').click();
  await waitStatus(page, 'ready', 5_000);
  // (The server answers the DELETE once the turn wound down.)
  const deletes = await eventually(async () => {
    const d = (await pi.log()).filter((e) => e.route === 'turn' && e.method === 'DELETE');
    return d.length === 1 && d[0].status === 204 && d;
  }, { what: 'the turn DELETE answered' });
  assert.equal(deletes.length, 1);
  // What is shown is what the server kept.
  await eventually(async () => JSON.stringify(await pageMessages(page)) === JSON.stringify(canonicalView(await pi.messages(s))), { what: 'the page to show the kept history' });
  await screenshot(page, 'reload-stop');
  await context.close();
});

test('assistant-ui: a reload mid-answer shows the answer finish once', async () => {
  await aui.reset();
  const s = sessionId('aui-reload');
  const { page, context } = await openChat(browser, aui, s);
  await typeAndEnter(page, 'Reload assistant-ui words:120');
  const assistant = () => page.$$eval('[data-testid=message][data-role=assistant]', (els) => els.map((e) => e.textContent).join(' '));
  await eventually(async () => (await assistant()).includes('w6'), { what: 'the answer to reach w6' });
  const seen = await assistant();
  await page.reload();
  await page.getByTestId('composer-input').waitFor();
  await eventually(async () => (await assistant()).length > seen.length, { what: 'the answer to grow after the reload' });
  await screenshot(page, 'reload-assistant-ui-streaming');
  await eventually(async () => (await assistant()).includes('w120'), { what: 'the answer to finish', timeout: 45_000 });
  const roles = await page.$$eval('[data-testid=message]', (els) => els.map((e) => e.dataset.role));
  assert.deepEqual(roles, ['user', 'assistant']);
  await screenshot(page, 'reload-assistant-ui-done');
  await context.close();
});

test('pi (real server ways): a follow-up sent at the last word runs before a prompt sent after it', async () => {
  await pi.reset();
  // The real server: a follow-up accepted after pi's last queue poll is stranded (a slow
  // agent_end widens that window, as an app persisting its session has; 2.5 s, so a page
  // slowed by a loaded machine still types into it).
  await pi.control({ strandFollowUps: true, agentEndDelayMs: 2500 });
  const s = sessionId('pi-strand');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Short words:3');
  await eventually(async () => (await answerText(page)).includes('w3'), { what: 'the last word' });
  await typeAndEnter(page, 'Last-moment follow-up words:2');
  await eventually(async () => (await pi.log()).some((e) => e.route === 'followup' && e.status === 202), { what: 'the follow-up accepted' });
  // The turn ended without it; the store takes it back. The user's next prompt comes now.
  await eventually(async () => (await pi.log()).some((e) => e.route === 'followup-delete'), { what: 'the take-back DELETE' });
  await typeAndEnter(page, 'Prompt after words:2');
  await settled(page);
  const shown = await pageMessages(page);
  assert.deepEqual(users(shown), ['Short words:3', 'Last-moment follow-up words:2', 'Prompt after words:2']);
  assert.deepEqual(users(canonicalView(await pi.messages(s))), users(shown));
  assert.deepEqual(shown, canonicalView(await pi.messages(s)));
  // It was stranded, taken back and sent again: the DELETE, then a chat POST of its own.
  const log = (await pi.log()).filter((e) => e.sessionId === s || e.path.includes(encodeURIComponent(s)));
  const steps = log.filter((e) => ['chat', 'followup', 'followup-delete'].includes(e.route)).map((e) => e.route);
  // (The prompt after it goes as that turn's follow-up, or as a turn once it ended.)
  assert.deepEqual(steps.slice(0, 4), ['chat', 'followup', 'followup-delete', 'chat'], JSON.stringify(steps));
  assert.equal(steps.length, 5, JSON.stringify(steps));
  await screenshot(page, 'strand-order');
  await context.close();
});

test('pi: stop with an accepted follow-up takes it back; it stays stalled and never runs unasked', async () => {
  await pi.reset();
  const s = sessionId('pi-stop-queued');
  const { page, context } = await openChat(browser, pi, s);
  await typeAndEnter(page, 'Long one words:300');
  await eventually(async () => (await answerText(page)).includes('w3'), { what: 'the answer to start' });
  await typeAndEnter(page, 'Queued then stopped words:2');
  await page.waitForFunction(() => document.querySelector('[data-testid=queued]')?.dataset.state === 'accepted');
  await page.getByTestId('stop').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=queued]')?.dataset.state === 'stalled');
  await eventually(async () => (await pi.log()).some((e) => e.route === 'followup-delete' && e.status === 204), { what: 'the take-back DELETE' });
  await screenshot(page, 'stop-queued-stalled');
  // The next prompt runs alone: pi's queue no longer holds the stopped turn's follow-up.
  await typeAndEnter(page, 'Next prompt words:2');
  await eventually(async () => (await users(canonicalView(await pi.messages(s)))).length === 2 && (await status(page)) === 'ready', { what: 'the next turn to end', timeout: 45_000 });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(users(canonicalView(await pi.messages(s))), ['Long one words:300', 'Next prompt words:2']);
  assert.equal(await page.getByTestId('queued-text').first().textContent(), 'Queued then stopped words:2');
  await screenshot(page, 'stop-queued-next');
  await context.close();
});

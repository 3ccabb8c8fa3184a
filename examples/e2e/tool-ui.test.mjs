// End-to-end: the tool catalog and typed tool UI (issue 8) in the React and assistant-ui
// examples against the reference server, in headless Chromium.
//
// - A follow-up queued while a first answer streams asks `subagent summarize the notes`: the
//   pi runtime's `pi.subagent` tool runs a nested pi agent, and its nested transcript renders,
//   collapsible, under the FOLLOW-UP's answer (the app's `pi-subagent` renderer through
//   `<ToolPart>`), live while it runs, and the same after a reload (details survive hydration).
// - A runtime without the tool (the AI SDK runtime) shows no trace of `pi.subagent`.
// - `snapshot.tools` follows the current session's runtime across session switches; a server
//   without the catalog route (404) is not an error.
// - assistant-ui: the same renderer through `makeToolUIs`.
//
// Assertions that read the store's tool catalog (`snapshot.tools`) or its tool UI metadata
// (`part.ui`, including the live `data-tool-ui` progress) are grouped in `core(...)`, which
// names the feature in the failure message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, launch, sessionId, openChat, typeAndEnter, answered, status, waitStatus, pageMessages,
  canonicalView, queuedCount, screenshot, eventually, toolCatalog, subagentView, settled,
} from './lib.mjs';

/** Runs assertions on the store's tool catalog / tool UI metadata, naming it on failure. */
async function core(what, fn) {
  try {
    await fn();
  } catch (e) {
    e.message = `[the store's ${what}] ${e.message}`;
    throw e;
  }
}

let browser, pi, aiSdk, aui;

before(async () => {
  [browser, pi, aiSdk, aui] = await Promise.all([
    launch(),
    startServer({ runtime: 'pi' }),
    startServer({ runtime: 'ai-sdk' }),
    startServer({ runtime: 'pi', app: 'assistant-ui' }),
  ]);
});

after(async () => {
  await Promise.all([browser?.close(), pi?.stop(), aiSdk?.stop(), aui?.stop()]);
});

const SUBAGENT = '[data-testid=part-tool][data-tool-name="pi.subagent"]';
const PI_TOOLS = ['ls', 'echo', 'pi.subagent', 'deleteFile', 'askUser'];
const AI_SDK_TOOLS = ['ls', 'echo'];

async function catalogIs(page, names, timeout = 5_000) {
  await eventually(async () => JSON.stringify(await toolCatalog(page)) === JSON.stringify(names), { what: `tool list ${names.join(', ')}`, timeout });
}

/** Records every distinct look of the subagent tool UI (renderer | status | part state). */
async function watchSubagent(page) {
  await page.evaluate((sel) => {
    window.__subagentSeen = [];
    const record = () => {
      const el = document.querySelector(sel);
      if (!el) return;
      const st = el.querySelector('[data-testid=subagent-status]')?.dataset.status ?? '';
      const key = `${el.dataset.renderer}|${st}|${el.dataset.state}|${el.querySelectorAll('[data-testid=subagent-entry]').length}`;
      if (window.__subagentSeen.at(-1) !== key) window.__subagentSeen.push(key);
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  }, SUBAGENT);
  return () => page.evaluate(() => window.__subagentSeen);
}

/** The canonical nested transcript of the session's (only) pi.subagent call. */
async function canonicalSubagent(server, session) {
  const part = (await server.messages(session)).flatMap((m) => m.parts).find((p) => p.type.startsWith('tool-') && p.toolName === 'pi.subagent');
  assert.ok(part, 'the canonical history has the pi.subagent call');
  return part.details;
}

test('pi: a follow-up asking for a subagent gets its nested transcript under the follow-up\'s answer', async () => {
  await pi.reset();
  const s = sessionId('pi-subagent');
  const { page, context, errors, requests } = await openChat(browser, pi, s);
  await core('tool catalog (snapshot.tools)', async () => {
    await catalogIs(page, PI_TOOLS);
    assert.equal(await page.locator('[data-testid=tool-catalog] [data-tool="pi.subagent"]').getAttribute('data-renderer'), 'pi-subagent');
    assert.ok(requests.some((r) => r.url.includes('/api/v1/agent/catalog?sessionId=')), 'the page asked for the catalog');
  });

  await typeAndEnter(page, 'Hello first words:40');
  await waitStatus(page, 'streaming');
  const seen = await watchSubagent(page);
  await typeAndEnter(page, 'subagent summarize the notes');
  assert.equal(await queuedCount(page), 1, 'the follow-up waits while the first answer streams');
  await settled(page);

  // Where it rendered: under the follow-up's answer, nothing of it before the follow-up.
  const shown = await pageMessages(page);
  assert.deepEqual(shown.filter((m) => m.role === 'user').map((m) => m.text), ['Hello first words:40', 'subagent summarize the notes']);
  const at = shown.findIndex((m) => m.role === 'user' && m.text === 'subagent summarize the notes');
  assert.deepEqual(shown.slice(0, at).flatMap((m) => m.tools), [], 'no tool before the follow-up');
  const toolAt = shown.findIndex((m) => m.tools.includes('pi.subagent'));
  assert.ok(toolAt > at && shown[toolAt].role === 'assistant', JSON.stringify(shown));
  assert.deepEqual(shown, canonicalView(await pi.messages(s)), 'the page shows the canonical history');
  assert.equal(await page.locator(SUBAGENT).count(), 1);
  const firstAnswer = page.locator('[data-testid=message]').nth(1);
  assert.equal(await firstAnswer.getAttribute('data-role'), 'assistant');
  assert.equal(await firstAnswer.locator(SUBAGENT).count(), 0, 'not under the first answer');
  const sub = page.locator('[data-testid=message]').nth(toolAt).locator(SUBAGENT);
  assert.equal(await sub.count(), 1, 'under the follow-up\'s answer');

  // The rich renderer, collapsed: expand it to see the nested transcript.
  const details = await canonicalSubagent(pi, s);
  let view = await subagentView(sub);
  assert.equal(view.renderer, 'pi-subagent');
  assert.equal(view.state, 'output-available');
  assert.equal(view.status, 'done');
  assert.equal(view.task, 'summarize the notes');
  assert.equal(view.open, false, 'collapsed at first');
  assert.equal(await sub.getByTestId('subagent-transcript').isVisible(), false);
  await sub.getByTestId('subagent-summary').click();
  await sub.getByTestId('subagent-transcript').waitFor({ state: 'visible' });
  view = await subagentView(sub);
  assert.equal(view.open, true);
  assert.deepEqual(view.transcript, details.transcript.map(({ role, text }) => ({ role, text })));
  assert.deepEqual(view.transcript.map((e) => e.role), ['user', 'assistant', 'tool', 'assistant']);
  assert.equal(view.transcript[0].text, 'summarize the notes');
  assert.equal(view.transcript[2].text, 'todo.txt');
  assert.deepEqual(view.steps, ['model:done', 'tool:done', 'model:done']);
  await core('tool UI metadata (part.ui from the result details)', async () => {
    assert.equal(await sub.getAttribute('data-ui-renderer-id'), 'pi-subagent');
  });
  await screenshot(page, 'subagent-follow-up');

  // While it ran, the nested transcript was already there (data-tool-ui progress), growing.
  const looks = await seen();
  assert.equal(looks.at(-1), 'pi-subagent|done|output-available|4', looks.join(' → '));
  await core('live tool UI progress (data-tool-ui → part.ui.details)', async () => {
    const running = looks.filter((k) => k.startsWith('pi-subagent|running|input-available|'));
    assert.ok(running.length >= 2, `the rich renderer while running: ${looks.join(' → ')}`);
    const counts = running.map((k) => Number(k.split('|')[3]));
    assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'the transcript grows');
  });

  // A reload hydrates the same UI from the canonical history.
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=message]').length >= n, shown.length);
  assert.deepEqual(await pageMessages(page), shown);
  const again = page.locator('[data-testid=message]').nth(toolAt).locator(SUBAGENT);
  await again.getByTestId('subagent-summary').click();
  view = await subagentView(again);
  assert.equal(view.renderer, 'pi-subagent');
  assert.equal(view.status, 'done');
  assert.deepEqual(view.transcript, details.transcript.map(({ role, text }) => ({ role, text })));
  await core('tool catalog after a reload', () => catalogIs(page, PI_TOOLS));
  assert.deepEqual(errors, []);
  await context.close();
});

test('ai-sdk: a runtime without pi.subagent shows no trace of it', async () => {
  await aiSdk.reset();
  const s = sessionId('ai-no-subagent');
  const { page, context, errors } = await openChat(browser, aiSdk, s);
  await core('tool catalog (snapshot.tools)', () => catalogIs(page, AI_SDK_TOOLS));
  await typeAndEnter(page, 'subagent summarize the notes');
  await waitStatus(page, 'streaming');
  await waitStatus(page, 'ready');
  const shown = await pageMessages(page);
  assert.equal(shown.length, 2, JSON.stringify(shown));
  assert.deepEqual(shown.flatMap((m) => m.tools), [], 'no tool call at all');
  assert.match(shown[1].text, /^Answer subagent summarize the: w1/);
  assert.equal(await page.locator(SUBAGENT).count(), 0);
  assert.ok(!(await toolCatalog(page)).some((t) => /subagent/.test(t)), 'not in the tool list');
  assert.ok(!(await page.content()).includes('pi.subagent'), 'nowhere in the page');
  await screenshot(page, 'ai-sdk-no-subagent');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the tool list follows the current session\'s runtime across switches', async () => {
  await pi.reset();
  const a = sessionId('pi-tools-a');
  const b = sessionId('ai-tools-b');
  const { page, context } = await openChat(browser, pi, a);
  await typeAndEnter(page, 'Make A a pi session words:3');
  await answered(page, 2);
  await core('tool catalog (snapshot.tools)', () => catalogIs(page, PI_TOOLS));
  // Sessions created from now on run the AI SDK runtime: B has no pi.subagent.
  await pi.control({ runtime: 'ai-sdk' });
  try {
    await page.getByTestId('session-input').fill(b);
    await page.getByTestId('switch-session').click();
    await page.waitForFunction((id) => document.querySelector('[data-testid=session-id]')?.textContent.includes(id), b);
    await page.waitForFunction(() => document.querySelector('[data-testid=capabilities]')?.dataset.nativeFollowUp === 'false');
    await core('tool catalog per session (switchSession refetches)', async () => {
      await catalogIs(page, AI_SDK_TOOLS);
      assert.ok(!(await page.content()).includes('pi.subagent'), 'nothing of A\'s tools in B');
    });
    await screenshot(page, 'tools-session-b');
    await page.getByTestId('session-input').fill(a);
    await page.getByTestId('switch-session').click();
    await page.waitForFunction((id) => document.querySelector('[data-testid=session-id]')?.textContent.includes(id), a);
    await core('tool catalog per session (switching back)', () => catalogIs(page, PI_TOOLS));
  } finally {
    await pi.control({ runtime: 'pi' });
  }
  await context.close();
});

test('no catalog route (404): an empty tool list, no error; renderers still work by tool name', async () => {
  await pi.reset();
  await pi.control({ notFound: ['catalog'] });
  try {
    const s = sessionId('pi-no-catalog');
    const { page, context, errors } = await openChat(browser, pi, s);
    await typeAndEnter(page, 'subagent summarize the notes');
    await waitStatus(page, 'streaming');
    await settled(page);
    assert.deepEqual(await toolCatalog(page), []);
    assert.equal(await page.getByTestId('error').count(), 0, 'a missing catalog is not an error');
    await core('catalog route requested (404 answered)', async () => {
      assert.ok((await pi.log()).some((e) => e.route === 'catalog' && e.status === 404 && e.sessionId === s));
    });
    // The result's details still pick the rich renderer (rendererId from details.uiKind, or
    // the `subagent` alias of the app's registry).
    const view = await subagentView(page.locator(SUBAGENT));
    assert.equal(view.renderer, 'pi-subagent');
    assert.equal(view.status, 'done');
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await pi.control({ notFound: [] });
  }
});

test('assistant-ui: the same subagent renderer through makeToolUIs', async () => {
  await aui.reset();
  const s = sessionId('aui-subagent');
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${aui.url}/?session=${encodeURIComponent(s)}`);
  const input = page.getByTestId('composer-input');
  await input.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=capabilities]')?.dataset.loaded === 'true');
  await core('tool catalog (snapshot.tools)', () => catalogIs(page, PI_TOOLS));
  await input.fill('Hello assistant-ui words:30');
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=message][data-role=assistant]').length === 1);
  await input.fill('subagent summarize the notes');
  await input.press('Enter');
  await page.getByTestId('queued').first().waitFor({ timeout: 5_000 });
  const sub = page.locator(SUBAGENT);
  await page.waitForFunction(
    (sel) => document.querySelector(sel)?.querySelector('[data-testid=subagent-status]')?.dataset.status === 'done' && !document.querySelector('[data-testid=queued]'),
    SUBAGENT,
    { timeout: 45_000 },
  );
  // Under the follow-up's answer: the message right after the follow-up's user message.
  const roles = await page.$$eval('[data-testid=message]', (els) => els.map((e) => e.dataset.role));
  const owner = await sub.evaluate((el) => {
    const msgs = Array.from(document.querySelectorAll('[data-testid=message]'));
    return msgs.indexOf(el.closest('[data-testid=message]'));
  });
  assert.equal(roles[owner], 'assistant');
  assert.ok(owner > 2 && roles[owner - 1] === 'user', `${owner} in ${roles.join(',')}`);
  const followUpText = await page.locator('[data-testid=message]').nth(owner - 1).textContent();
  assert.ok(followUpText.includes('subagent summarize the notes'), followUpText);
  await sub.getByTestId('subagent-summary').click();
  await sub.getByTestId('subagent-transcript').waitFor({ state: 'visible' });
  const view = await subagentView(sub);
  assert.equal(view.renderer, 'pi-subagent');
  assert.equal(view.state, 'output-available');
  assert.equal(view.task, 'summarize the notes');
  const details = await canonicalSubagent(aui, s);
  assert.deepEqual(view.transcript, details.transcript.map(({ role, text }) => ({ role, text })));
  await core('tool UI metadata through convertUIMessage (tool-call `ui`)', async () => {
    assert.equal(await sub.getAttribute('data-ui-renderer-id'), 'pi-subagent');
  });
  await screenshot(page, 'assistant-ui-subagent');
  assert.deepEqual(errors, []);
  await context.close();
});

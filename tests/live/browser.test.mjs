// The React example (examples/react-chat/dist, the shipped package in it) in Debian's headless
// Chromium against the real upstream servers, each behind a same-origin proxy (lib.mjs): the
// page's URL gives what a user of the app gives it (`?protocol=pi-native&agentType=default`,
// resp. `?capabilities=native`). Follow-ups typed during an answer, and two tabs on one session
// where one types follow-ups; each checked against the server's own history, and the pages'
// requests counted. Screenshots: target/e2e/live-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openChat, typeAndEnter, waitStatus, pageMessages, users, screenshot, status, queuedCount,
} from '../../examples/e2e/lib.mjs';
import { startUpstream, startProxy, exchanges, eventually, routeOf, byRoute, ROUTES } from './lib.mjs';

const KINDS = ['pi-native', 'legacy'];
let browser;
const env = {};
before(async () => {
  const started = await Promise.all([launch(), ...KINDS.map((k) => startUpstream(k, { tps: 40 }))]);
  browser = started[0];
  for (const [i, kind] of KINDS.entries()) env[kind] = { server: started[i + 1], proxy: await startProxy(started[i + 1].url) };
});
after(async () => {
  await browser?.close();
  await Promise.all(Object.values(env).map(async ({ server, proxy }) => { await proxy.close(); await server.stop(); }));
});

const answerOf = (rows) => rows.filter((m) => m.role === 'assistant').map((m) => m.text).join(' ');
const names = (rows) => rows.map((m) => ({ ...m, tools: m.tools.map((t) => t.name) }));

/** A page of the example on `sessionId`; its API requests are `tab.api()` (by route). */
async function openTab(kind, sessionId) {
  const { server, proxy } = env[kind];
  const tab = await openChat(browser, { url: proxy.url }, sessionId, { query: server.pageQuery });
  tab.api = () => tab.requests.filter((r) => new URL(r.url).pathname.startsWith('/api/')).map((r) => routeOf(r.method, r.url, sessionId));
  return tab;
}

async function ask(page, text) {
  await typeAndEnter(page, text);
  await waitStatus(page, 'streaming', 20_000);
  await eventually(async () => /\bw2\b/.test(answerOf(await pageMessages(page))), { what: `the answer to "${text}" to stream`, timeout: 20_000 });
}

/** Types `texts` while the answer streams; each shows as a waiting bubble. */
async function typeDuring(page, texts) {
  for (const text of texts) {
    const before = await page.getByTestId('queued').filter({ hasText: text }).count();
    await typeAndEnter(page, text);
    await eventually(async () => (await page.getByTestId('queued').filter({ hasText: text }).count()) > before, { what: `"${text}", typed while the answer streams, to show as a waiting bubble`, timeout: 5_000 });
  }
}

/**
 * Waits for every page to be ready with no waiting bubble and the server idle, watches 1.5 s
 * more, then checks: the server ran `typed` exactly, in order; nothing ran later; each page
 * shows what the server holds, no error; no API requests at rest.
 */
async function checkEnd(kind, sessionId, tabs, typed) {
  const { server } = env[kind];
  let why = null;
  try {
    await eventually(async () => {
      for (const t of tabs) if ((await status(t.page)) !== 'ready' || (await queuedCount(t.page)) !== 0) return false;
      return server.idle(sessionId);
    }, { what: 'the pages and the server to settle', timeout: 40_000 });
  } catch {
    why = (await Promise.all(tabs.map(async (t, i) => `page ${i}: status ${await status(t.page)}, ${await queuedCount(t.page)} waiting`))).join('; ');
  }
  const seen = tabs.map((t) => t.api().length);
  const before = await server.history(sessionId);
  await new Promise((r) => setTimeout(r, 1_500));
  const history = await server.history(sessionId);
  const requests = tabs.map((t, i) => `page ${i}: ${JSON.stringify(byRoute(t.api().map((route) => ({ route }))))}`).join('; ');
  assert.deepEqual(users(history), typed, `the server ran each message the user typed exactly once, in the order typed (requests ${requests})`);
  assert.deepEqual(history, before, 'nothing runs on the server after the chat came to rest');
  assert.equal(why, null, `every page comes to rest (ready, no waiting bubble) while the server is idle: ${why}`);
  for (const [i, t] of tabs.entries()) {
    assert.deepEqual(exchanges(await pageMessages(t.page)), exchanges(names(history)), `page ${i} shows the conversation the server holds`);
    assert.equal(await t.page.getByTestId('error').count(), 0, `page ${i} shows no error`);
    assert.deepEqual(t.errors, [], `page ${i} threw nothing`);
    const quiet = t.api().slice(seen[i]);
    assert.ok(quiet.length <= 1 && !quiet.some((r) => ROUTES.send.test(r) || ROUTES.followUp.test(r)), `page ${i} makes no API requests at rest (made ${JSON.stringify(quiet)})`);
  }
}

for (const kind of KINDS) {
  test(`${kind} · React: three follow-ups typed during an answer (two alike) run once each, in order`, { timeout: 120_000 }, async () => {
    const s = await env[kind].server.createSession();
    const a = await openTab(kind, s);
    try {
      await ask(a.page, 'Answer slowly words:150');
      await typeDuring(a.page, ['same text words:3', 'same text words:3', 'third one words:3']);
      await screenshot(a.page, `live-${kind}-queued`);
      await checkEnd(kind, s, [a], ['Answer slowly words:150', 'same text words:3', 'same text words:3', 'third one words:3']);
      await screenshot(a.page, `live-${kind}-followups`);
    } finally {
      await a.context.close();
    }
  });

  test(`${kind} · React: two tabs on one session, one typing follow-ups: both converge, each runs once, no request loop`, { timeout: 120_000 }, async () => {
    const s = await env[kind].server.createSession();
    const tabs = [await openTab(kind, s)];
    try {
      const [a] = tabs;
      // Over pi-native a page at rest follows the session live; a legacy page only learns of a
      // turn when it opens, so there the second page opens once the answer runs.
      if (kind === 'pi-native') tabs.push(await openTab(kind, s));
      await ask(a.page, 'Two tabs words:150');
      if (kind === 'legacy') tabs.push(await openTab(kind, s));
      const b = tabs[1];
      await waitStatus(b.page, 'streaming', 15_000);
      await typeDuring(b.page, ['from tab B words:3', 'from tab B words:3', 'tab B again words:3']);
      await checkEnd(kind, s, tabs, ['Two tabs words:150', 'from tab B words:3', 'from tab B words:3', 'tab B again words:3']);
      const count = (t, pattern) => t.api().filter((r) => pattern.test(r)).length;
      const counts = tabs.map((t, i) => `page ${i}: ${JSON.stringify(byRoute(t.api().map((route) => ({ route }))))}`).join('; ');
      assert.equal(count(a, ROUTES.send), 1, `page A sent its prompt once (${counts})`);
      assert.equal(count(b, ROUTES.send), 0, `page B sent no prompt (${counts})`);
      assert.equal(count(a, ROUTES.followUp) + count(a, ROUTES.takeBack), 0, `page A never posts or takes back page B's follow-ups (${counts})`);
      assert.ok(count(b, ROUTES.followUp) <= 6, `page B posted each follow-up about once (${counts})`);
      assert.ok(a.api().length <= 20 && b.api().length <= 20, `neither page loops on requests (${counts})`);
      await screenshot(b.page, `live-${kind}-two-tabs`);
    } finally {
      for (const t of tabs) await t.context.close();
    }
  });
}

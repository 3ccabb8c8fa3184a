// End-to-end, SPEC §11: the session list beside the chat, in both example apps (the React one
// over `useSessions`, the assistant-ui one over assistant-ui's ThreadList primitives), against
// the reference server with a real pi agent (and the React one against the AI SDK runtime),
// in headless Chromium. Every step is done as a user does it, by clicking in the sidebar:
//
// - a new session: the New button opens an empty session, listed first as local "New chat";
//   after its first message it is titled by that message's first line and is on the server;
// - switching: each session shows its own messages, `?session=` follows, back/forward too;
// - running: a session left mid-answer shows running in the list, then idle once it ended;
// - rename: the title shows at once, and after a reload (the server kept it);
// - archive, then unarchive: the session moves to the Archived section and back;
// - delete: gone from the list (and after a reload); deleting the open one opens a new one;
// - pages: with `?pageSize=3`, more sessions than a page: "Load more" shows them all;
// - a restart: a second server on the first one's data folder lists the same sessions, with
//   the same titles in the same order, and the same histories.
//
// Both apps also run over the pi-native protocol (SPEC §14) against a server as strict as the
// real one (`--native-sessions strict`: a session exists once created): the list, rename and
// delete are that protocol's routes, a new session is created by its first message and then
// has the server's id (the URL follows), and there is no archive (no Archived section).
//
// A screenshot of each scenario's end is kept in target/e2e/ (`sessions-*`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startServer, launch, sessionId, typeAndEnter, pageMessages, canonicalView, screenshot,
  eventually, users, settled, status,
} from './lib.mjs';

// The scripted model answers fast: these tests are about the list, not the stream.
const FAST = ['--tps', '200'];

const NATIVE = [...FAST, '--protocol', 'pi-native', '--native-sessions', 'strict'];

let browser, reactPi, reactAiSdk, auiPi, reactNative, auiNative;

before(async () => {
  [browser, reactPi, reactAiSdk, auiPi, reactNative, auiNative] = await Promise.all([
    launch(),
    startServer({ runtime: 'pi', args: FAST }),
    startServer({ runtime: 'ai-sdk', args: FAST }),
    startServer({ runtime: 'pi', app: 'assistant-ui', args: FAST }),
    startServer({ runtime: 'pi', args: NATIVE }),
    startServer({ runtime: 'pi', app: 'assistant-ui', args: NATIVE }),
  ]);
  for (const s of [reactNative, auiNative]) s.native = true;
});

after(async () => {
  await Promise.all([browser, reactPi, reactAiSdk, auiPi, reactNative, auiNative].map((x) => x?.[x === browser ? 'close' : 'stop']()));
});

// ----- the page ---------------------------------------------------------------------------------

/** Opens the app at `server` on `session` (plus `params`, e.g. `pageSize`), its list loaded. */
async function openSessions(server, session, params = {}) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await goTo(page, server, session, params);
  return { page, context, errors };
}

async function goTo(page, server, session, params = {}) {
  const query = new URLSearchParams({ session, ...(server.native && { protocol: 'pi-native' }), ...params });
  await page.goto(`${server.url}/?${query}`);
  await listLoaded(page);
}

/** The sidebar is there and its first page came (the open session listed, nothing loading). */
async function listLoaded(page) {
  await page.getByTestId('composer-input').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=session-list]')?.dataset.loading === 'false');
}

/** The sidebar's sessions as shown, in page order. */
function listed(page) {
  return page.$$eval('[data-testid=session-list] [data-testid=session-item]', (els) => els.map((el) => ({
    id: el.dataset.sessionId,
    title: el.querySelector('[data-testid=session-title]')?.textContent.trim(),
    current: el.dataset.current === 'true',
    local: el.dataset.local === 'true',
    running: el.dataset.running === 'true',
    archived: el.dataset.archived === 'true',
  })));
}

const itemOf = (page, id) => page.locator(`[data-testid=session-list] [data-testid=session-item][data-session-id="${id}"]`);
const urlSession = (page) => new URL(page.url()).searchParams.get('session');
const openSession = (page) => page.getByTestId('session-id').locator('code').innerText();
const titles = async (page) => (await listed(page)).map((i) => i.title);

/** Waits until the listed sessions satisfy `check(list)`; returns the list. */
function listWhere(page, check, what) {
  return eventually(async () => {
    const list = await listed(page);
    return check(list) && list;
  }, { what, timeout: 15_000 });
}

/** Waits until `id` is the open session: header, URL and the list's mark agree. */
async function waitOpen(page, id) {
  await eventually(async () => (await openSession(page)) === id && urlSession(page) === id
    && (await itemOf(page, id).getAttribute('data-current')) === 'true', { what: `session ${id} open` });
}

/**
 * New button, then a first message; resolves once its turn is over. Returns the session's id
 * then: over pi-native the server names the session its first message creates.
 */
async function newSessionWith(page, text) {
  const before = await openSession(page);
  await page.getByTestId('session-new').click();
  const id = await eventually(async () => {
    const open = await openSession(page);
    return open !== before && open;
  }, { what: 'a new session open' });
  await waitOpen(page, id);
  await typeAndEnter(page, text);
  await settled(page);
  return namedAfterSend(page, id);
}

/**
 * The id of the open session `id` once its first message was sent: the same, or over
 * pi-native the one the server gave it (header and URL agree).
 */
async function namedAfterSend(page, id) {
  const named = await eventually(async () => {
    const open = await openSession(page);
    return urlSession(page) === open && (open !== id || !nativePage(page)) && open;
  }, { what: 'the session named by the server' });
  await waitOpen(page, named);
  return named;
}

const nativePage = (page) => new URL(page.url()).searchParams.get('protocol') === 'pi-native';

/** Clicks a session in the list and waits until it is open with its history shown. */
async function clickSession(page, id, userTexts) {
  await itemOf(page, id).locator('.session-trigger').click();
  await waitOpen(page, id);
  await eventually(async () => JSON.stringify(users(await pageMessages(page))) === JSON.stringify(userTexts), { what: `the history of ${id}` });
}

async function rename(page, id, title) {
  await itemOf(page, id).getByTestId('session-rename').click();
  const input = itemOf(page, id).getByTestId('session-rename-input');
  await input.fill(title);
  await input.press('Enter');
}

/** What the server lists (one big page): `{id, title, archived}` of each, most recent first. */
async function serverList(server, archived = false) {
  if (server.native) {
    const r = await fetch(`${server.url}/api/v1/agents/pi/sessions?limit=100`);
    return (await r.json()).sessions.map(({ ref, title }) => ({ id: ref.sessionId, title, archived: false }));
  }
  const r = await fetch(`${server.url}/api/v1/agent/sessions?limit=100&archived=${archived}`);
  return (await r.json()).sessions.map(({ id, title, archived }) => ({ id, title, archived: !!archived }));
}

// ----- the scenarios, each for an app on a server -------------------------------------------

const apps = [
  { name: 'react-pi', server: () => reactPi },
  { name: 'aui-pi', server: () => auiPi },
  { name: 'react-ai-sdk', server: () => reactAiSdk },
  { name: 'react-native', server: () => reactNative },
  { name: 'aui-native', server: () => auiNative },
];

for (const { name, server } of apps) {
  test(`${name}: a new session is listed first as "New chat", then titled by its first message's first line`, async () => {
    await server().reset();
    const first = sessionId(`${name}-first`);
    const { page, context, errors } = await openSessions(server(), first);
    assert.deepEqual(await listed(page), [{ id: first, title: 'New chat', current: true, local: true, running: false, archived: false }]);

    await page.getByTestId('session-new').click();
    const id = await eventually(async () => {
      const open = await openSession(page);
      return open !== first && open;
    }, { what: 'the new session open' });
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a v4 UUID');
    await waitOpen(page, id);
    assert.equal((await pageMessages(page)).length, 0, 'an empty thread');
    const fresh = (await listed(page)).find((i) => i.id === id);
    assert.deepEqual(fresh, { id, title: 'New chat', current: true, local: true, running: false, archived: false });
    assert.equal((await listed(page))[0].id, id, 'listed first');

    await typeAndEnter(page, 'Plan a trip to Lisbon\nwith two more lines\nwords:300');
    const named = await namedAfterSend(page, id);
    await eventually(async () => (await itemOf(page, named).getAttribute('data-running')) === 'true', { what: 'the session marked running' });
    await screenshot(page, `sessions-${name}-running`);
    await settled(page);
    const list = await listWhere(page, (l) => l.some((i) => i.id === named && !i.local), 'the session on the server\'s list');
    assert.deepEqual(list.find((i) => i.id === named), { id: named, title: 'Plan a trip to Lisbon', current: true, local: false, running: false, archived: false });
    assert.deepEqual((await serverList(server())).map((s) => s.id), [named], 'the server lists it');
    if (server().native) assert.ok(!list.some((i) => i.id === id), 'the id it had before is gone');
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-new`);
    await context.close();
  });

  test(`${name}: clicking a session switches to it, the URL follows, back/forward too`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-switch`));
    const a = await newSessionWith(page, 'Alpha question words:4');
    const b = await newSessionWith(page, 'Beta question words:4');
    await listWhere(page, (l) => [a, b].every((id) => l.some((i) => i.id === id && !i.local)), 'both on the list');
    assert.deepEqual((await listed(page)).filter((i) => !i.local).map((i) => i.title), ['Beta question words:4', 'Alpha question words:4'], 'most recent first');

    await clickSession(page, a, ['Alpha question words:4']);
    assert.deepEqual(await pageMessages(page), canonicalView(await server().messages(a)));
    await clickSession(page, b, ['Beta question words:4']);
    assert.deepEqual(await pageMessages(page), canonicalView(await server().messages(b)));

    await page.goBack();
    await waitOpen(page, a);
    await eventually(async () => users(await pageMessages(page))[0] === 'Alpha question words:4', { what: 'A again after back' });
    await page.goForward();
    await waitOpen(page, b);
    await eventually(async () => users(await pageMessages(page))[0] === 'Beta question words:4', { what: 'B again after forward' });
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-switch`);
    await context.close();
  });

  test(`${name}: a session left mid-answer shows running in the list until its turn ends`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-running`));
    const idle = await newSessionWith(page, 'A short one words:3');
    // A slow answer (about 8 s), left while it streams.
    await page.getByTestId('session-new').click();
    const fresh = await eventually(async () => {
      const open = await openSession(page);
      return open !== idle && open;
    }, { what: 'a new session open' });
    await waitOpen(page, fresh);
    await typeAndEnter(page, 'A long one words:160 tps:20');
    await eventually(async () => (await status(page)) === 'streaming', { what: 'the answer streaming' });
    const slow = await namedAfterSend(page, fresh);
    await listWhere(page, (l) => l.find((i) => i.id === slow)?.running === true, 'the open session running');

    await clickSession(page, idle, ['A short one words:3']);
    await listWhere(page, (l) => l.find((i) => i.id === slow)?.running === true && !l.find((i) => i.id === idle)?.running,
      'the left session running in the background, the open one not');
    // The store asks the list again every 5 s while it shows a background turn.
    await eventually(async () => (await listed(page)).find((i) => i.id === slow)?.running === false,
      { what: 'the background turn ended', timeout: 30_000 });
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-running`);
    await context.close();
  });

  test(`${name}: rename shows at once and after a reload`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-rename`));
    const a = await newSessionWith(page, 'Original title words:3');
    await listWhere(page, (l) => l.some((i) => i.id === a && !i.local), 'on the list');
    await rename(page, a, 'My renamed chat');
    // At once: the next renders, not the server's answer (a loaded machine may need a few).
    await listWhere(page, (l) => l.find((i) => i.id === a)?.title === 'My renamed chat', 'the new title at once');
    await eventually(async () => (await serverList(server())).find((s) => s.id === a)?.title === 'My renamed chat', { what: 'the server has the title' });

    // Escape keeps the title as it was.
    await itemOf(page, a).getByTestId('session-rename').click();
    await itemOf(page, a).getByTestId('session-rename-input').fill('Not this');
    await itemOf(page, a).getByTestId('session-rename-input').press('Escape');
    assert.equal((await listed(page)).find((i) => i.id === a).title, 'My renamed chat');

    await page.reload();
    await listLoaded(page);
    const list = await listWhere(page, (l) => l.some((i) => i.id === a && !i.local), 'the list after the reload');
    assert.equal(list.find((i) => i.id === a).title, 'My renamed chat');
    assert.equal(await page.getByTestId('sessions-error').count(), 0);
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-rename`);
    await context.close();
  });

  test(`${name}: archive moves a session to the Archived section, unarchive brings it back`, async () => {
    await server().reset();
    if (server().native) return noArchive(server(), name);
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-archive`));
    const a = await newSessionWith(page, 'Keep me for later words:3');
    const b = await newSessionWith(page, 'The open one words:3');
    await listWhere(page, (l) => [a, b].every((id) => l.some((i) => i.id === id && !i.local)), 'both on the list');

    await itemOf(page, a).getByTestId('session-archive').click();
    await listWhere(page, (l) => !l.some((i) => i.id === a), 'A out of the list');
    await page.getByTestId('session-archived-toggle').click();
    const archived = await listWhere(page, (l) => l.some((i) => i.id === a), 'A in the Archived section');
    assert.deepEqual(archived.find((i) => i.id === a), { id: a, title: 'Keep me for later words:3', current: false, local: false, running: false, archived: true });
    assert.equal(await page.getByTestId('session-archived').locator(`[data-session-id="${a}"]`).count(), 1);
    await eventually(async () => (await serverList(server(), true)).some((s) => s.id === a), { what: 'the server archived it' });
    await screenshot(page, `sessions-${name}-archived`);

    await itemOf(page, a).getByTestId('session-archive').click();
    const back = await listWhere(page, (l) => l.some((i) => i.id === a && !i.archived), 'A back in the list');
    assert.equal(await page.getByTestId('session-archived').locator(`[data-session-id="${a}"]`).count(), 0);
    assert.ok(back.findIndex((i) => i.id === a) >= 0);
    await eventually(async () => (await serverList(server())).some((s) => s.id === a), { what: 'the server unarchived it' });
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-unarchived`);
    await context.close();
  });

  test(`${name}: delete removes a session; deleting the open one opens a new, empty one`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-delete`));
    const a = await newSessionWith(page, 'Delete me later words:3');
    const b = await newSessionWith(page, 'Delete me now words:3');
    await listWhere(page, (l) => [a, b].every((id) => l.some((i) => i.id === id && !i.local)), 'both on the list');

    await itemOf(page, a).getByTestId('session-delete').click();
    await listWhere(page, (l) => !l.some((i) => i.id === a), 'A gone');
    assert.equal(await openSession(page), b, 'B stays open');

    await itemOf(page, b).getByTestId('session-delete').click();
    const fresh = await eventually(async () => {
      const open = await openSession(page);
      return open !== b && open;
    }, { what: 'a new session open' });
    await waitOpen(page, fresh);
    const list = await listWhere(page, (l) => !l.some((i) => i.id === b), 'B gone');
    assert.deepEqual(list.find((i) => i.id === fresh), { id: fresh, title: 'New chat', current: true, local: true, running: false, archived: false });
    assert.equal((await pageMessages(page)).length, 0, 'the new session is empty');
    await eventually(async () => (await serverList(server())).length === 0, { what: 'the server deleted both' });

    await page.reload();
    await listLoaded(page);
    assert.deepEqual((await listed(page)).map((i) => i.id), [fresh], 'only the open one after a reload');
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-delete`);
    await context.close();
  });
}

/** pi-native has no archive: no Archived section and no archive button, the rest works. */
async function noArchive(server, name) {
  const { page, context, errors } = await openSessions(server, sessionId(`${name}-no-archive`));
  const a = await newSessionWith(page, 'Nothing to archive words:3');
  await listWhere(page, (l) => l.some((i) => i.id === a && !i.local), 'on the list');
  assert.equal(await page.getByTestId('session-archive').count(), 0, 'no archive button');
  assert.equal(await page.getByTestId('session-archived-toggle').count(), 0, 'no Archived section');
  assert.deepEqual(errors, []);
  await screenshot(page, `sessions-${name}-no-archive`);
  await context.close();
}

for (const { name, server } of apps.slice(0, 2)) {
  test(`${name}: a refused rename is undone with an error line; a server without the list hides it`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-refused`));
    const a = await newSessionWith(page, 'Keep this title words:2');
    await listWhere(page, (l) => l.some((i) => i.id === a && !i.local), 'on the list');
    await server().control({ notFound: ['session-patch'] });
    await rename(page, a, 'Refused title');
    const error = page.getByTestId('sessions-error');
    await error.waitFor();
    assert.match(await error.innerText(), /404/);
    await listWhere(page, (l) => l.find((i) => i.id === a)?.title === 'Keep this title words:2', 'the old title back');
    await screenshot(page, `sessions-${name}-refused`);

    await server().control({ notFound: ['sessions'] });
    await page.reload();
    await page.getByTestId('composer-input').waitFor();
    await eventually(async () => (await page.getByTestId('capabilities').getAttribute('data-loaded')) === 'true', { what: 'capabilities' });
    // The sidebar shows until the list's 404 came: the store cannot know before.
    await eventually(async () => (await server().log()).some((e) => e.route === 'sessions' && e.status === 404), { what: 'the list answered 404' });
    await eventually(async () => (await page.getByTestId('session-list').count()) === 0, { what: 'no sidebar' });
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-no-list`);
    await context.close();
    await server().control({ notFound: [] });
  });

  test(`${name}: more sessions than a page: Load more shows them all`, async () => {
    await server().reset();
    const { page, context, errors } = await openSessions(server(), sessionId(`${name}-pages`), { pageSize: 3 });
    const made = [];
    for (let i = 1; i <= 5; i++) made.push(await newSessionWith(page, `Paged chat ${i} words:2`));
    await eventually(async () => (await serverList(server())).length === 5, { what: 'five sessions on the server' });

    // A reload starts the list again from its first page.
    await page.reload();
    await listLoaded(page);
    const firstPage = await listed(page);
    assert.deepEqual(firstPage.map((i) => i.title), ['Paged chat 5 words:2', 'Paged chat 4 words:2', 'Paged chat 3 words:2'], 'one page, most recent first');
    assert.equal(await page.getByTestId('session-more').count(), 1, 'Load more is offered');

    await page.getByTestId('session-more').click();
    await listWhere(page, (l) => l.length === 5, 'the second page');
    assert.deepEqual(await titles(page), [5, 4, 3, 2, 1].map((n) => `Paged chat ${n} words:2`), 'all, in order');
    await eventually(async () => (await page.getByTestId('session-more').count()) === 0, { what: 'no more pages' });

    await clickSession(page, made[0], ['Paged chat 1 words:2']);
    assert.deepEqual(errors, []);
    await screenshot(page, `sessions-${name}-pages`);
    await context.close();
  });

  test(`${name}: a restarted server on the same data folder shows the same sessions and histories`, async () => {
    const app = server() === auiPi ? 'assistant-ui' : 'react-chat';
    const dataDir = mkdtempSync(join(tmpdir(), 'acs-e2e-sessions-'));
    let first = await startServer({ app, runtime: 'pi', args: FAST, dataDir });
    let second;
    try {
      const { page, context, errors } = await openSessions(first, sessionId(`${name}-restart`));
      const a = await newSessionWith(page, 'Before the restart words:3');
      await typeAndEnter(page, 'A second message words:3');
      await settled(page);
      const b = await newSessionWith(page, 'Another session words:3');
      await listWhere(page, (l) => [a, b].every((id) => l.some((i) => i.id === id && !i.local)), 'both on the list');
      await rename(page, a, 'Survives restarts');
      await eventually(async () => (await serverList(first)).find((s) => s.id === a)?.title === 'Survives restarts', { what: 'the server has the title' });
      // The page shows it too (assistant-ui's thread list renders after the store's change).
      await listWhere(page, (l) => l.find((i) => i.id === a)?.title === 'Survives restarts', 'the page shows the title');
      const listedBefore = (await listed(page)).filter((i) => !i.local).map(({ id, title }) => ({ id, title }));
      const historyA = canonicalView(await first.messages(a));
      const historyB = canonicalView(await first.messages(b));
      assert.equal(historyA.length, 4, JSON.stringify(historyA));

      await first.stop();
      first = null;
      second = await startServer({ app, runtime: 'pi', args: FAST, dataDir });
      await goTo(page, second, b);
      const listedAfter = await listWhere(page, (l) => l.length >= 2, 'the list from the new server');
      assert.deepEqual(listedAfter.map(({ id, title }) => ({ id, title })), listedBefore, 'same sessions, titles and order');
      await eventually(async () => JSON.stringify(await pageMessages(page)) === JSON.stringify(historyB), { what: 'B\'s history' });
      await clickSession(page, a, ['Before the restart words:3', 'A second message words:3']);
      assert.deepEqual(await pageMessages(page), historyA, 'A\'s history, as before the restart');
      assert.deepEqual(errors, []);
      await screenshot(page, `sessions-${name}-restart`);
      await context.close();
    } finally {
      await Promise.all([first?.stop(), second?.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

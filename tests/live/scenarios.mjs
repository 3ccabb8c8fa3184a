// The live scenarios (the acceptance), written once and run against each real upstream
// server by pi-native.test.mjs and legacy.test.mjs: the installed package in Node, real fetch,
// one server per file, a fresh session per scenario. Each one is checked against the server's
// own record of the session (`history`), then each store against that.
//
// Timing: the scripted model streams `--tps 40` (about 25 words a second); a prompt the user
// types into is `words:150` or more (6 s and up), and the test only acts on states it waited
// for (the store streaming, a follow-up accepted), so nothing hangs on a race. The follow-ups'
// own answers are `words:3`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { installedPackage } from '../js/installed.mjs';
import {
  startUpstream, openStore, settle, exchanges, userTexts, answerText, eventually, byRoute, ROUTES,
} from './lib.mjs';

const LONG = 'words:150';

/** Registers the scenarios against a server of `kind` (started once for the file). */
export function defineScenarios(kind) {
  let pkg, server;
  const tabs = [];
  before(async () => {
    [pkg, server] = await Promise.all([installedPackage(`live-${kind}`), startUpstream(kind, { tps: 40 })]);
  });
  after(async () => {
    await server?.stop();
  });

  /** A store on `sessionId`, disposed after the scenario; resolves once it has read the session. */
  async function open(sessionId) {
    const tab = openStore(pkg, server, sessionId);
    tabs.push(tab);
    await eventually(() => tab.snap().hydrated, { what: 'the store to read the session', timeout: 15_000 });
    return tab;
  }
  const scenario = (name, fn) => test(`${kind}: ${name}`, { timeout: 150_000 }, async () => {
    try {
      await fn();
    } finally {
      for (const t of tabs.splice(0)) t.dispose();
    }
  });

  /** Sends `text` on an idle tab and waits until its answer streams (its first words show). */
  async function ask(tab, text) {
    const r = tab.store.send(text);
    assert.equal(r.kind, 'sent', `the message "${text}" was sent (not ${JSON.stringify(r)})`);
    await eventually(() => tab.snap().status === 'streaming' && /\bw2\b/.test(answerText(tab.rows())), { what: `the answer to "${text}" to stream`, timeout: 20_000 });
  }

  /** Types `texts` while the answer streams: each must wait as a follow-up. */
  function typeDuring(tab, texts) {
    for (const text of texts) {
      const r = tab.store.send(text);
      assert.equal(r.kind, 'queued', `"${text}", typed while the answer streams, shows as a waiting follow-up (send gave ${JSON.stringify(r)})`);
    }
  }

  const item = (tab, text) => tab.snap().queued.find((q) => q.text === text);

  /**
   * The checks every scenario ends with: the server ran exactly `typed`, in order; nothing ran
   * after the chat came to rest; each tab shows what the server holds, with an empty queue
   * (or only `stalled` bubbles), no error, and no requests while at rest.
   */
  async function checkEnd(sessionId, typed, { stalledOk = false } = {}) {
    const end = await settle(server, sessionId, tabs, { stalledOk, timeout: 40_000 });
    const ran = userTexts(end.history);
    const requests = tabs.map((t, i) => `tab ${i}: ${JSON.stringify(byRoute(t.net.requests))}`).join('; ');
    assert.deepEqual(ran, typed, `the server ran each message the user typed exactly once, in the order typed (it ran ${JSON.stringify(ran)}; requests ${requests})`);
    assert.ok(!end.grewWhileQuiet, 'nothing runs on the server after the chat came to rest');
    assert.ok(end.settled, `every tab comes to rest (ready, no waiting bubble) while the server is idle: ${end.why}`);
    tabs.forEach((tab, i) => {
      assert.deepEqual(exchanges(tab.rows()), exchanges(end.history), `tab ${i} shows the conversation the server holds`);
      const left = tab.snap().queued.filter((q) => !(stalledOk && q.state === 'stalled'));
      assert.deepEqual(left.map((q) => [q.text, q.state]), [], `tab ${i} shows no waiting bubble at the end`);
      assert.equal(tab.snap().error, null, `tab ${i} shows no error`);
      assert.deepEqual(tab.errors, [], `tab ${i}'s onError told nothing`);
      const quiet = end.quietRequests[i];
      assert.ok(quiet.length <= 1 && !quiet.some((r) => ROUTES.send.test(r) || ROUTES.followUp.test(r)), `tab ${i} makes no requests at rest (made ${JSON.stringify(quiet)})`);
    });
    return end;
  }

  // 1.
  scenario('a prompt is answered, once', async () => {
    const s = await server.createSession();
    const a = await open(s);
    assert.equal(a.store.send('hello words:5').kind, 'sent');
    const end = await checkEnd(s, ['hello words:5']);
    assert.match(answerText(end.history), /^Answer to <hello words:5>: w0 w1 w2 w3 w4\.$/, 'the answer is complete');
  });

  // 2.
  scenario('three follow-ups typed during an answer (two alike) run once each, in order', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, `Answer slowly ${LONG}`);
    typeDuring(a, ['same text words:3', 'same text words:3', 'third one words:3']);
    await checkEnd(s, [`Answer slowly ${LONG}`, 'same text words:3', 'same text words:3', 'third one words:3']);
    assert.ok(a.count(ROUTES.followUp) <= 6, `each follow-up was posted about once (${JSON.stringify(byRoute(a.net.requests))})`);
  });

  // 3.
  scenario('a single follow-up runs once', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, `First ${LONG}`);
    typeDuring(a, ['only one words:3']);
    await checkEnd(s, [`First ${LONG}`, 'only one words:3']);
  });

  // 4.
  scenario('stop with two follow-ups queued: neither runs later, unasked', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, 'Long answer words:300');
    typeDuring(a, ['queued one words:3', 'queued two words:3']);
    // Both on the server's queue before the stop: the case where the server might keep them.
    await eventually(() => item(a, 'queued two words:3')?.state === 'accepted' && item(a, 'queued one words:3')?.state === 'accepted', { what: 'both follow-ups accepted by the server', timeout: 10_000 });
    assert.equal(a.snap().status, 'streaming', 'stopped while the answer still streams');
    a.store.stop();
    await eventually(() => a.snap().status === 'ready', { what: 'the stop to end the answer', timeout: 15_000 });
    // What the stop left: the follow-ups "not delivered", or the store still taking them back.
    await eventually(() => a.snap().queued.every((q) => q.state === 'stalled'), { what: 'the follow-ups to show as not delivered', timeout: 15_000 }).catch(() => {});
    const afterStop = a.snap().queued.map((q) => [q.text, q.state]);
    const r = a.store.send('after the stop words:3');
    assert.equal(r.kind, 'sent', `after the stop, a new message is sent at once (send gave ${JSON.stringify(r)})`);
    await checkEnd(s, ['Long answer words:300', 'after the stop words:3'], { stalledOk: true });
    assert.deepEqual(afterStop, [['queued one words:3', 'stalled'], ['queued two words:3', 'stalled']], 'after the stop, both follow-ups show as not delivered (retry or remove), none lost silently');
    for (const q of a.snap().queued) a.store.removeQueued(q.id);
    await eventually(() => a.snap().queued.length === 0, { what: 'the removed bubbles to go', timeout: 5_000 });
    await checkEnd(s, ['Long answer words:300', 'after the stop words:3']);
  });

  // 5.
  scenario('a reload mid-answer, then a send: the answer goes on once, the send runs once', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, 'Reload me words:200');
    await eventually(() => /\bw8\b/.test(answerText(a.rows())), { what: 'the answer to reach w8', timeout: 15_000 });
    const seen = answerText(a.rows());
    a.dispose();
    tabs.splice(tabs.indexOf(a), 1);
    const b = await open(s);
    await eventually(() => b.snap().status === 'streaming', { what: 'the reloaded page to show the answer running', timeout: 15_000 });
    await eventually(() => answerText(b.rows()).length > seen.length, { what: 'the answer to grow after the reload', timeout: 15_000 });
    typeDuring(b, ['after the reload words:3']);
    await checkEnd(s, ['Reload me words:200', 'after the reload words:3']);
    assert.match(exchanges(b.rows())[0].answer, / w199\.$/, 'the answer shows to its end');
  });

  // 6.
  scenario('two tabs on one session, one typing follow-ups: both converge, each runs once, no request loop', async () => {
    const s = await server.createSession();
    const a = await open(s);
    // Over pi-native a second tab follows the session live; the legacy server has nothing a
    // tab at rest listens to, so there the second tab opens once the answer runs.
    let b = kind === 'pi-native' ? await open(s) : null;
    await ask(a, `Two tabs ${LONG}`);
    b ??= await open(s);
    await eventually(() => b.snap().status === 'streaming', { what: 'the second tab to show the answer running', timeout: 15_000 });
    typeDuring(b, ['from tab B words:3', 'from tab B words:3', 'tab B again words:3']);
    await checkEnd(s, [`Two tabs ${LONG}`, 'from tab B words:3', 'from tab B words:3', 'tab B again words:3']);
    const counts = `tab A: ${JSON.stringify(byRoute(a.net.requests))}; tab B: ${JSON.stringify(byRoute(b.net.requests))}`;
    assert.equal(a.count(ROUTES.send), 1, `tab A sent its prompt once (${counts})`);
    assert.equal(b.count(ROUTES.send), 0, `tab B sent no prompt (${counts})`);
    assert.equal(a.count(ROUTES.followUp) + a.count(ROUTES.takeBack), 0, `tab A never posts or takes back tab B's follow-ups (${counts})`);
    assert.ok(b.count(ROUTES.followUp) <= 6, `tab B posted each follow-up about once (${counts})`);
    assert.ok(a.net.requests.length <= 20 && b.net.requests.length <= 20, `neither tab loops on requests (${counts})`);
  });

  // 7.
  scenario('a removed follow-up never runs; the other runs once', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, `Answer slowly ${LONG}`);
    typeDuring(a, ['keep this one words:3', 'remove this one words:3']);
    await eventually(() => item(a, 'remove this one words:3')?.state === 'accepted', { what: 'the follow-up accepted by the server', timeout: 10_000 });
    assert.equal(a.snap().status, 'streaming', 'removed while the answer still streams');
    assert.ok(a.store.removeQueued(item(a, 'remove this one words:3').id), 'Remove is offered for the waiting bubble');
    await checkEnd(s, [`Answer slowly ${LONG}`, 'keep this one words:3']);
    // A server that kept it would run it with the next message.
    assert.equal(a.store.send('later words:2').kind, 'sent');
    const end = await checkEnd(s, [`Answer slowly ${LONG}`, 'keep this one words:3', 'later words:2']);
    assert.ok(!JSON.stringify(end.history).includes('remove this one'), 'the removed follow-up is nowhere in the server history');
  });

  // 8.
  scenario("a tool call's part shows its input and output", async () => {
    const s = await server.createSession();
    const a = await open(s);
    assert.equal(a.store.send('please list files').kind, 'sent');
    const end = await checkEnd(s, ['please list files']);
    const [onServer] = exchanges(end.history);
    assert.deepEqual(onServer.tools.map((t) => [t.name, t.state, t.input]), [['ls', 'output-available', { path: '.' }]], 'the server holds the ls call');
    assert.match(JSON.stringify(onServer.tools[0].output), /notes\.txt/, "the server holds the ls call's output");
    const [shown] = exchanges(a.rows());
    assert.deepEqual(shown.tools, onServer.tools, "the tool part shows the call's input and output as the server holds them");
    assert.match(shown.answer, /^Listing\. Tool ls returned: .*notes\.txt/, 'the answer around the tool call shows');
  });

  // 9.
  scenario('the stream cut mid-answer, then a follow-up: the answer completes once, the follow-up runs once', async () => {
    const s = await server.createSession();
    const a = await open(s);
    await ask(a, 'Cut me words:200');
    const readsBefore = a.count(ROUTES.read);
    // pi-native: the session's events stream; legacy: the chat POST's SSE.
    a.net.cut(kind === 'pi-native' ? ROUTES.events : ROUTES.chatStream, 400);
    await eventually(() => a.net.cuts.length === 1, { what: 'the stream to be cut', timeout: 10_000 });
    assert.equal(a.snap().status, 'streaming', 'the cut came mid-answer');
    typeDuring(a, ['after the cut words:3']);
    await checkEnd(s, ['Cut me words:200', 'after the cut words:3']);
    assert.ok(a.count(ROUTES.read) > readsBefore, `the store read the session again after the cut (${JSON.stringify(byRoute(a.net.requests))})`);
    assert.match(exchanges(a.rows())[0].answer, / w199\.$/, 'the answer shows to its end');
  });
}

// The drop-in `useChat`: the AI SDK docs' page (examples/use-chat-docs, its src as the docs'
// "Chatbot" and "Chatbot Tool Usage" pages write it) in Chromium against the reference server's
// `POST /api/chat` (the docs' route handler over the scripted model), in two builds that differ
// in one line: `import { useChat } from '@ai-sdk/react'` (original, dist/) and `from
// 'agent-chat-store/react'` (ours, ours/dist/, agent-chat-store installed from the `npm pack`
// tarball). Both must behave the same as a user sees them: a streamed answer, the status-driven
// form (Submit disabled while busy, Stop while streaming), Stop keeping the partial answer, the
// client tools (getLocation by onToolCall + addToolOutput, askForConfirmation by the user's
// click, both continued by sendAutomaticallyWhen) and a server tool, and a failed POST showing
// "An error occurred." with Retry (regenerate). No console errors, no page errors.
// Run after scripts/build-examples.sh. Screenshots: target/e2e/use-chat-<variant>-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventually, launch, root, screenshot, startServer } from './lib.mjs';

const VARIANTS = [
  { name: 'original', app: 'use-chat-docs' },
  { name: 'ours', app: 'use-chat-docs/ours' },
];

/**
 * What each test's page POSTed to `/api/chat`, per test and variant (`normalBody`), so the last
 * test can hold ours to what `@ai-sdk/react` sends.
 * @type {Map<string, Record<string, object[]>>}
 */
const traces = new Map();

const RANDOM = /\b(New York|Los Angeles|Chicago|San Francisco|sunny|cloudy|rainy|snowy|windy)\b/g;
const mask = (v) => (typeof v === 'string' ? v.replace(RANDOM, '<random>') : v);

/**
 * A part with its ids left out, the random tool outputs masked, and the text of a stopped one
 * (`state: 'streaming'`, its length a matter of timing) cut to its first three words.
 */
function normalPart(p) {
  const out = {};
  for (const [k, v] of Object.entries(p)) {
    if (k === 'toolCallId' || k === 'id') continue;
    out[k] = typeof v === 'string' ? mask(v) : v;
  }
  if (p.type === 'text' && p.state === 'streaming') out.text = `${p.text.split(' ').slice(0, 3).join(' ')} …`;
  return out;
}

/** A `POST /api/chat` body as the comparison sees it: keys, trigger, messageId's place, messages. */
function normalBody(b) {
  const at = b.messageId === undefined ? undefined : b.messages.findIndex((m) => m.id === b.messageId);
  return {
    keys: Object.keys(b).sort(),
    trigger: b.trigger,
    messageId: at === undefined ? 'absent' : at < 0 ? 'not in messages' : `messages[${at}]`,
    messages: b.messages.map((m) => ({ role: m.role, parts: m.parts.map(normalPart), ...(m.metadata === undefined ? {} : { metadata: m.metadata }) })),
  };
}

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** The messages as the page shows them: `role: text` (the docs render `<strong>{role}: </strong>`). */
async function shown(page) {
  return page.$$eval('#root > div', (els) => els
    .filter((el) => /^(user|assistant|system): $/.test(el.querySelector(':scope > strong')?.textContent ?? ''))
    .map((el) => ({
      role: el.querySelector(':scope > strong').textContent.replace(/: $/, ''),
      text: el.textContent.slice(el.querySelector(':scope > strong').textContent.length).trim(),
    })));
}

const lastText = async (page) => (await shown(page)).at(-1)?.text ?? '';

for (const variant of VARIANTS) {
  describe(`useChat docs app: ${variant.name}`, () => {
    let server;
    const dist = resolve(root, `examples/${variant.app}/dist/index.html`);

    before(async () => {
      assert.ok(existsSync(dist), `${dist} missing: run scripts/build-examples.sh`);
      server = await startServer({ app: variant.app, runtime: 'ai-sdk' });
    });
    after(async () => {
      await server?.stop();
    });

    /** A fresh page of the app; `problems` gathers console errors and page errors. */
    async function open() {
      const mark = (await server.log()).at(-1)?.id ?? 0;
      const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
      const page = await context.newPage();
      const apiRequests = [];
      page.on('request', (r) => {
        const u = new URL(r.url());
        if (u.pathname.startsWith('/api/')) apiRequests.push(`${r.method()} ${u.pathname}`);
      });
      const problems = [];
      const allowed = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.stack ?? e}`));
      const failures = []; // responses >= 400, to name what a "Failed to load resource" was
      page.on('response', (r) => {
        if (r.status() >= 400) failures.push(`${r.status()} ${r.request().method()} ${r.url()}`);
      });
      await page.goto(`${server.url}/`);
      const input = page.getByPlaceholder('Say something...');
      const submit = page.getByRole('button', { name: 'Submit' });
      const stop = page.getByRole('button', { name: 'Stop' });
      await input.waitFor();
      const send = async (text) => {
        await eventually(() => input.isEnabled(), { what: 'the input enabled' });
        await input.fill(text);
        await submit.click();
      };
      /** Fails on any problem not matched by an `allow`ed pattern (each allowed at most once). */
      const checkProblems = () => {
        const left = problems.filter((p) => {
          const i = allowed.findIndex((re) => re.test(p));
          if (i < 0) return true;
          allowed.splice(i, 1);
          return false;
        });
        assert.deepEqual(left, [], `no console errors or page errors (responses >= 400: ${JSON.stringify(failures)})`);
      };
      /** The end of a test: no problems, only `POST /api/chat` requests; its trace kept. */
      const finish = async (name) => {
        checkProblems();
        const posts = (await server.log()).filter((e) => e.id > mark && e.route === 'docs-chat');
        const byName = traces.get(name) ?? {};
        byName[variant.name] = posts.map((e) => normalBody(e.body));
        traces.set(name, byName);
        assert.deepEqual([...new Set(apiRequests)], apiRequests.length ? ['POST /api/chat'] : [],
          `the page talks to POST /api/chat only (as @ai-sdk/react does): ${JSON.stringify(apiRequests)}`);
      };
      return { context, page, input, submit, stop, send, problems, allow: (re) => allowed.push(re), finish };
    }

    const shot = (page, name) => screenshot(page, `use-chat-${variant.name}-${name}`);

    test('a message: the answer streams in; Submit is disabled while busy, Stop shows', async () => {
      const t = await open();
      try {
        await server.control({ docsChatDelayMs: 400 });
        await t.send('hello there friend words:12');
        // submitted: the docs' Spinner and Stop; the form disabled
        await t.page.getByText('Loading...').waitFor({ timeout: 5_000 });
        assert.equal(await t.stop.isVisible(), true);
        assert.equal(await t.submit.isDisabled(), true);
        assert.equal(await t.input.isDisabled(), true);
        await shot(t.page, 'submitted');
        // streaming: Stop without the spinner, the answer growing, the form still disabled
        const growing = [];
        await eventually(async () => {
          const text = await lastText(t.page);
          if (/^Answer hello there friend: w1/.test(text) && !(await t.page.getByText('Loading...').isVisible())) growing.push(text);
          return growing.length >= 1;
        }, { what: 'the answer streaming', interval: 20 });
        assert.equal(await t.stop.isVisible(), true, 'Stop shows while streaming');
        assert.equal(await t.submit.isDisabled(), true, 'Submit disabled while streaming');
        await shot(t.page, 'streaming');
        await eventually(async () => (await lastText(t.page)).endsWith('w12'), { what: 'the whole answer', timeout: 15_000 });
        assert.ok(!growing[0].endsWith('w12'), `seen before its end: ${growing[0]}`);
        await eventually(async () => !(await t.stop.isVisible()) && (await t.input.isEnabled()), { what: 'ready again' });
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'hello there friend words:12' },
          { role: 'assistant', text: 'Answer hello there friend: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12' },
        ]);
        assert.equal(await t.input.inputValue(), '', 'the docs clear the input');
        await t.input.fill('x');
        assert.equal(await t.submit.isEnabled(), true);
        await shot(t.page, 'answered');
        const posts = (await server.log()).filter((e) => e.route === 'docs-chat');
        const body = posts.at(-1).body;
        assert.equal(body.trigger, 'submit-message');
        assert.equal(typeof body.id, 'string');
        assert.deepEqual(body.messages.map((m) => m.role), ['user']);
        await t.finish('message');
      } finally {
        await server.control({ docsChatDelayMs: 0 });
        await t.context.close();
      }
    });

    test('Stop mid-answer keeps the partial answer; the app is usable again', async () => {
      const t = await open();
      try {
        await t.send('stop me soon words:80');
        await eventually(async () => /w4\b/.test(await lastText(t.page)), { what: 'some of the answer' });
        await t.stop.click();
        await eventually(async () => !(await t.stop.isVisible()) && (await t.input.isEnabled()), { what: 'ready after Stop' });
        const partial = await lastText(t.page);
        assert.match(partial, /^Answer stop me soon: w1 w2 w3 w4/);
        assert.ok(!partial.endsWith('w80'), `stopped before the end: ${partial}`);
        await new Promise((r) => setTimeout(r, 600));
        assert.equal(await lastText(t.page), partial, 'nothing more arrives after Stop');
        assert.equal(await t.page.getByText('An error occurred.').count(), 0, 'a stop is no error');
        await shot(t.page, 'stopped');
        const stopped = (await server.log()).filter((e) => e.route === 'docs-chat').at(-1);
        assert.equal(stopped.aborted, true, 'the POST was aborted');

        await t.send('and again words:2');
        await eventually(async () => (await lastText(t.page)) === 'Answer and again: w1 w2', { what: 'the next answer' });
        const view = await shown(t.page);
        assert.deepEqual(view.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
        assert.equal(view[1].text, partial, 'the partial answer stays');
        const next = (await server.log()).filter((e) => e.route === 'docs-chat').at(-1).body;
        assert.deepEqual(next.messages.map((m) => m.role), ['user', 'assistant', 'user'], 'the partial answer is sent along');
        await shot(t.page, 'after-stop');
        await t.finish('stop');
      } finally {
        await t.context.close();
      }
    });

    test('client tool getLocation: onToolCall + addToolOutput, then the automatic follow-up answer', async () => {
      const t = await open();
      try {
        await t.send('where am I');
        const answer = await eventually(async () => {
          const m = /Location: (New York|Los Angeles|Chicago|San Francisco)You are in (.+)\.$/.exec(await lastText(t.page));
          return m && !(await t.stop.isVisible()) && m;
        }, { what: 'the location and the answer to it', timeout: 15_000 });
        assert.equal(answer[2], answer[1], 'the model answers with the tool output');
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'where am I' },
          { role: 'assistant', text: `Answer where am I: calling getLocation.Location: ${answer[1]}You are in ${answer[1]}.` },
        ]);
        const posts = (await server.log()).filter((e) => e.route === 'docs-chat');
        const [call, cont] = posts.slice(-2).map((e) => e.body);
        assert.deepEqual(call.messages.map((m) => m.role), ['user']);
        assert.deepEqual(cont.messages.map((m) => m.role), ['user', 'assistant'], 'the continuation sends the answered call');
        const part = cont.messages[1].parts.find((p) => p.type === 'tool-getLocation');
        assert.equal(part?.state, 'output-available');
        assert.equal(part.output, answer[1]);
        await shot(t.page, 'get-location');
        await t.finish('getLocation');
      } finally {
        await t.context.close();
      }
    });

    test('client tool askForConfirmation: the user clicks Yes; the answer continues', async () => {
      const t = await open();
      try {
        await t.send('please confirm the move');
        await t.page.getByText('Confirm the move?').waitFor({ timeout: 15_000 });
        const yes = t.page.getByRole('button', { name: 'Yes' });
        await yes.waitFor();
        await eventually(async () => t.input.isEnabled(), { what: 'ready while the question waits' });
        await shot(t.page, 'confirm-asked');
        await yes.click();
        await eventually(async () => /Confirmation result: Yes, confirmed\.You answered: Yes, confirmed\.$/.test(await lastText(t.page)),
          { what: 'the confirmation and the answer to it', timeout: 15_000 });
        assert.equal(await t.page.getByRole('button', { name: 'Yes' }).count(), 0);
        await shot(t.page, 'confirm-answered');
        // A second one in the same chat, answered No (the first round goes along as history).
        await t.send('now confirm the jump');
        await t.page.getByText('Confirm the jump?').waitFor({ timeout: 15_000 });
        await t.page.getByRole('button', { name: 'No' }).click();
        await eventually(async () => /Confirmation result: No, deniedYou answered: No, denied\.$/.test(await lastText(t.page)),
          { what: 'the denial and the answer to it', timeout: 15_000 });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
        await t.finish('confirm');
      } finally {
        await t.context.close();
      }
    });

    test('server tool getWeatherInformation: its result shows, the automatic follow-up answers', async () => {
      const t = await open();
      try {
        await t.send('what is the weather in Paris');
        const m = await eventually(async () => /Weather in Paris: (\w+)The weather in Paris is (\w+)\.$/.exec(await lastText(t.page)),
          { what: 'the weather and the answer to it', timeout: 15_000 });
        assert.equal(m[2], m[1]);
        await shot(t.page, 'weather');
        await t.finish('weather');
      } finally {
        await t.context.close();
      }
    });

    test('a failed POST (500) shows the error UI; Retry (regenerate) answers', async () => {
      const t = await open();
      try {
        await server.control({ failDocsChats: 1 });
        // Chromium logs the failed request itself.
        t.allow(/Failed to load resource: the server responded with a status of 500/);
        await t.send('fails first words:2');
        await t.page.getByText('An error occurred.').waitFor({ timeout: 15_000 });
        const retry = t.page.getByRole('button', { name: 'Retry' });
        assert.equal(await retry.isVisible(), true);
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'fails first words:2' }]);
        assert.equal(await t.stop.isVisible(), false);
        assert.equal(await t.submit.isDisabled(), true, "status 'error' is not 'ready'");
        await shot(t.page, 'error');
        const failed = (await server.log()).filter((e) => e.route === 'docs-chat').at(-1);
        assert.equal(failed.status, 500);

        await retry.click();
        await eventually(async () => (await lastText(t.page)) === 'Answer fails first (attempt 2): w1 w2' && (await t.input.isEnabled()),
          { what: 'the regenerated answer', timeout: 15_000 });
        assert.equal(await t.page.getByText('An error occurred.').count(), 0, 'the error UI is gone');
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'fails first words:2' },
          { role: 'assistant', text: 'Answer fails first (attempt 2): w1 w2' },
        ]);
        const again = (await server.log()).filter((e) => e.route === 'docs-chat').at(-1).body;
        assert.equal(again.trigger, 'regenerate-message');
        assert.deepEqual(again.messages.map((m) => m.role), ['user']);
        await shot(t.page, 'retried');

        // And the app goes on.
        await t.send('after that words:1');
        await eventually(async () => (await lastText(t.page)) === 'Answer after that: w1', { what: 'the next answer' });
        await t.finish('error-500');
      } finally {
        await t.context.close();
      }
    });

    test('Stop while submitted (before the answer starts): the user message stays, no answer, usable again', async () => {
      const t = await open();
      try {
        await server.control({ docsChatDelayMs: 1500 });
        await t.send('never mind words:3');
        await t.page.getByText('Loading...').waitFor({ timeout: 5_000 });
        await t.stop.click();
        await eventually(async () => !(await t.stop.isVisible()) && (await t.input.isEnabled()), { what: 'ready after Stop', timeout: 5_000 });
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'never mind words:3' }]);
        assert.equal(await t.page.getByText('An error occurred.').count(), 0, 'a stop is no error');
        await new Promise((r) => setTimeout(r, 1800)); // the held answer would have come by now
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'never mind words:3' }], 'nothing arrives after Stop');
        await shot(t.page, 'stopped-submitted');
        await server.control({ docsChatDelayMs: 0 });
        await t.send('go on words:1');
        await eventually(async () => (await lastText(t.page)) === 'Answer go on: w1', { what: 'the next answer' });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'user', 'assistant']);
        await t.finish('stop-submitted');
      } finally {
        await server.control({ docsChatDelayMs: 0 });
        await t.context.close();
      }
    });

    test('an error chunk in the stream (the provider failed): the error UI; Retry asks again', async () => {
      const t = await open();
      try {
        await t.send('fail provider please');
        await t.page.getByText('An error occurred.').waitFor({ timeout: 15_000 });
        assert.equal(await t.submit.isDisabled(), true);
        await shot(t.page, 'provider-error');
        await t.page.getByRole('button', { name: 'Retry' }).click();
        // The scripted provider fails again: the error UI comes back, after a second POST.
        await eventually(async () => (await server.log()).filter((e) => e.route === 'docs-chat' && e.body?.trigger === 'regenerate-message').length > 0
          && (await t.page.getByText('An error occurred.').isVisible()), { what: 'the second failure', timeout: 15_000 });
        assert.equal((await shown(t.page))[0].text, 'fail provider please');
        await t.finish('provider-error');
      } finally {
        await t.context.close();
      }
    });

    test('the connection lost mid-answer: the partial answer and the error UI; Retry answers again', async () => {
      const t = await open();
      try {
        await server.control({ cutDocsChatAfter: 8 });
        t.allow(/net::ERR_INCOMPLETE_CHUNKED_ENCODING/); // Chromium reports the cut
        await t.send('cut short words:30');
        await t.page.getByText('An error occurred.').waitFor({ timeout: 8_000 });
        const view = await shown(t.page);
        assert.equal(view[0].text, 'cut short words:30');
        assert.equal(view.length, 2, `the partial answer stays: ${JSON.stringify(view)}`);
        assert.match(view[1].text, /^Answ/);
        assert.ok(!view[1].text.endsWith('w30'));
        assert.equal(await t.stop.isVisible(), false);
        await shot(t.page, 'cut');
        await t.page.getByRole('button', { name: 'Retry' }).click();
        const full = `Answer cut short (attempt 2): ${Array.from({ length: 30 }, (_, i) => `w${i + 1}`).join(' ')}`;
        await eventually(async () => (await lastText(t.page)) === full && (await t.input.isEnabled()), { what: 'the regenerated answer', timeout: 15_000 });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'assistant'], 'the partial answer was replaced');
        assert.equal(await t.page.getByText('An error occurred.').count(), 0);
        await shot(t.page, 'cut-retried');
        await t.finish('cut');
      } finally {
        await t.context.close();
      }
    });
  });
}

test('ours POSTs what @ai-sdk/react POSTs (its keys at least, the same messages and triggers)', (t) => {
  const ids = [];
  const diffs = [];
  for (const [name, byVariant] of traces) {
    const { original, ours } = byVariant;
    if (!original || !ours) {
      t.diagnostic(`${name}: no trace of ${original ? 'ours' : 'original'}`);
      continue;
    }
    if (original.length !== ours.length) {
      diffs.push({ test: name, what: 'number of POSTs', original: original.length, ours: ours.length });
      continue;
    }
    original.forEach((o, i) => {
      const u = ours[i];
      const missing = o.keys.filter((k) => !u.keys.includes(k));
      if (missing.length) diffs.push({ test: name, post: i, what: 'body keys missing', missing, extra: u.keys.filter((k) => !o.keys.includes(k)) });
      if (o.trigger !== u.trigger) diffs.push({ test: name, post: i, what: 'trigger', original: o.trigger, ours: u.trigger });
      if (o.messageId !== u.messageId) ids.push({ test: name, post: i, original: o.messageId, ours: u.messageId });
      try {
        assert.deepEqual(u.messages, o.messages);
      } catch (e) {
        diffs.push({ test: name, post: i, what: 'messages', original: o.messages, ours: u.messages });
      }
    });
  }
  assert.deepEqual(diffs, [], JSON.stringify(diffs, null, 1));
  messageIdDiffs = ids;
});

let messageIdDiffs;
test('ours sends `messageId` where @ai-sdk/react does (absent for a new message)', () => {
  assert.ok(messageIdDiffs, 'the comparison ran');
  assert.deepEqual(messageIdDiffs, [], JSON.stringify(messageIdDiffs));
});

// The drop-in `useChat`: our two `useChat` pages (examples/use-chat-pages: a chat at `/`, tools
// at `/tools`) in Chromium against the reference server's `POST /api/chat` (a plain AI SDK
// route over the scripted model), in two builds that differ only in their `useChat` import
// lines: `from '@ai-sdk/react'` (original, dist/) and `from 'agent-chat-store/react'` (ours,
// ours/dist/, agent-chat-store installed from the `npm pack` tarball). Both must behave the same
// as a user sees them:
// - the chat page: a streamed answer; the form disabled unless `status` is ready; Stop while
//   submitted or streaming, keeping the partial answer; a failed POST, an error chunk and a
//   lost connection each showing the error (its message) with Try again (`regenerate`) and
//   Dismiss (`clearError`); `onFinish` saying how the last reply ended;
// - the tools page: `getLocation` answered by `onToolCall` + `addToolOutput`,
//   `askForConfirmation` by the user's click, the server tool `getWeatherInformation`, and
//   `deleteFile` allowed and denied (`addToolApprovalResponse`), each continued by
//   `sendAutomaticallyWhen`.
// No console errors, no page errors; the last tests hold ours' POST bodies, error messages and
// `onFinish` outcomes to the original's. Run after scripts/build-examples.sh. Screenshots:
// target/e2e/use-chat-<variant>-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventually, launch, root, screenshot, startServer } from './lib.mjs';

const VARIANTS = [
  { name: 'original', app: 'use-chat-pages' },
  { name: 'ours', app: 'use-chat-pages/ours' },
];

/**
 * What each test's page POSTed to `/api/chat` (`normalBody`) and showed (`seen`: error texts,
 * `onFinish` outcomes), per test and variant, so the last tests can hold ours to the original.
 * @type {Map<string, Record<string, {posts: object[], seen: string[]}>>}
 */
const traces = new Map();

const WEATHER = /\b(sunny|cloudy|rainy|snowy|windy)\b/g;
const mask = (v) => (typeof v === 'string' ? v.replace(WEATHER, '<weather>') : v);

/**
 * A part with its ids left out, the random weather masked, and the text of a stopped one
 * (`state: 'streaming'`, its length a matter of timing) cut to its first three words.
 */
function normalPart(p) {
  const out = {};
  for (const [k, v] of Object.entries(p)) {
    if (k === 'toolCallId' || k === 'id') continue;
    if (k === 'approval' && v && typeof v === 'object') {
      out.approval = { ...v, id: typeof v.id === 'string' ? '<id>' : v.id };
      continue;
    }
    out[k] = mask(v);
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

/** The messages as the pages show them: `{role, text}`, a tools-page message's parts joined by ` | `. */
async function shown(page) {
  return page.$$eval('ol.messages > li', (els) => els.map((el) => ({
    role: el.dataset.role,
    text: [...el.querySelectorAll(':scope > .text, :scope > .part')].map((p) => p.textContent.trim()).join(' | '),
  })));
}

const lastText = async (page) => (await shown(page)).at(-1)?.text ?? '';

for (const variant of VARIANTS) {
  describe(`useChat pages: ${variant.name}`, () => {
    let server;
    const dist = resolve(root, `examples/${variant.app}/dist/index.html`);

    before(async () => {
      assert.ok(existsSync(dist), `${dist} missing: run scripts/build-examples.sh`);
      server = await startServer({ app: variant.app, runtime: 'ai-sdk' });
    });
    after(async () => {
      await server?.stop();
    });

    /** A fresh tab on `path`; `problems` gathers console errors and page errors. */
    async function open(path = '/') {
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
      await page.goto(`${server.url}${path}`);
      const input = page.getByPlaceholder('Type a message');
      const send = page.getByRole('button', { name: 'Send' });
      const stop = page.getByRole('button', { name: 'Stop' });
      const alert = page.getByRole('alert');
      await input.waitFor();
      const seen = [];
      const say = async (text) => {
        await eventually(() => input.isEnabled(), { what: 'the input enabled' });
        await input.fill(text);
        await send.click();
      };
      const posts = async () => (await server.log()).filter((e) => e.id > mark && e.route === 'docs-chat');
      /** `Last reply: …` (the chat page's `onFinish`), kept for the comparison. */
      const lastEnd = async () => {
        const v = (await page.locator('.last-end').textContent()).replace(/^Last reply: /, '');
        seen.push(`onFinish: ${v}`);
        return v;
      };
      /** The error text shown, kept for the comparison. */
      const errorText = async () => {
        const v = (await alert.locator('p').textContent()).trim();
        seen.push(`error: ${v}`);
        return v;
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
        const byName = traces.get(name) ?? {};
        byName[variant.name] = { posts: (await posts()).map((e) => normalBody(e.body)), seen };
        traces.set(name, byName);
        assert.deepEqual([...new Set(apiRequests)], apiRequests.length ? ['POST /api/chat'] : [],
          `the page talks to POST /api/chat only (as @ai-sdk/react does): ${JSON.stringify(apiRequests)}`);
      };
      const ready = (what = 'ready') => eventually(async () => !(await stop.isVisible()) && (await input.isEnabled()), { what, timeout: 15_000 });
      return { context, page, input, send, stop, alert, say, posts, lastEnd, errorText, ready, allow: (re) => allowed.push(re), finish };
    }

    const shot = (page, name) => screenshot(page, `use-chat-${variant.name}-${name}`);

    // ----- the chat page ------------------------------------------------------------------------

    test('chat: the answer streams in; the form is disabled while busy; Stop shows', async () => {
      const t = await open('/');
      try {
        assert.equal(await t.page.getByRole('heading', { name: 'Chat' }).isVisible(), true);
        assert.equal(await t.lastEnd(), 'none yet');
        await server.control({ docsChatDelayMs: 400 });
        await t.say('hello there friend words:12');
        // submitted: the waiting line and Stop; the form disabled
        await t.page.getByText('Waiting for a reply…').waitFor({ timeout: 5_000 });
        assert.equal(await t.stop.isVisible(), true);
        assert.equal(await t.send.isDisabled(), true);
        assert.equal(await t.input.isDisabled(), true);
        await shot(t.page, 'submitted');
        // streaming: Stop, the answer growing, the form still disabled
        const growing = [];
        await eventually(async () => {
          const text = await lastText(t.page);
          if (/^Answer hello there friend: w1/.test(text) && (await t.page.getByText('Replying…').isVisible())) growing.push(text);
          return growing.length >= 1;
        }, { what: 'the answer streaming', interval: 20 });
        assert.equal(await t.stop.isVisible(), true, 'Stop shows while streaming');
        assert.equal(await t.send.isDisabled(), true, 'Send disabled while streaming');
        await shot(t.page, 'streaming');
        await eventually(async () => (await lastText(t.page)).endsWith('w12'), { what: 'the whole answer', timeout: 15_000 });
        assert.ok(!growing[0].endsWith('w12'), `seen before its end: ${growing[0]}`);
        await t.ready();
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'hello there friend words:12' },
          { role: 'assistant', text: 'Answer hello there friend: w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12' },
        ]);
        assert.equal(await t.input.inputValue(), '', 'the page clears the input');
        assert.equal(await t.lastEnd(), 'complete');
        await t.input.fill('x');
        assert.equal(await t.send.isEnabled(), true);
        await shot(t.page, 'answered');
        const body = (await t.posts()).at(-1).body;
        assert.equal(body.trigger, 'submit-message');
        assert.equal(typeof body.id, 'string');
        assert.deepEqual(body.messages.map((m) => m.role), ['user']);
        await t.finish('chat: message');
      } finally {
        await server.control({ docsChatDelayMs: 0 });
        await t.context.close();
      }
    });

    test('chat: Stop mid-answer keeps the partial answer; the page is usable again', async () => {
      const t = await open('/');
      try {
        await t.say('stop me soon words:80');
        await eventually(async () => /w4\b/.test(await lastText(t.page)), { what: 'some of the answer' });
        await t.stop.click();
        await t.ready('ready after Stop');
        const partial = await lastText(t.page);
        assert.match(partial, /^Answer stop me soon: w1 w2 w3 w4/);
        assert.ok(!partial.endsWith('w80'), `stopped before the end: ${partial}`);
        await new Promise((r) => setTimeout(r, 600));
        assert.equal(await lastText(t.page), partial, 'nothing more arrives after Stop');
        assert.equal(await t.alert.count(), 0, 'a stop is no error');
        assert.equal(await t.lastEnd(), 'stopped');
        await shot(t.page, 'stopped');
        assert.equal((await t.posts()).at(-1).aborted, true, 'the POST was aborted');

        await t.say('and again words:2');
        await eventually(async () => (await lastText(t.page)) === 'Answer and again: w1 w2', { what: 'the next answer' });
        const view = await shown(t.page);
        assert.deepEqual(view.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
        assert.equal(view[1].text, partial, 'the partial answer stays');
        const next = (await t.posts()).at(-1).body;
        assert.deepEqual(next.messages.map((m) => m.role), ['user', 'assistant', 'user'], 'the partial answer is sent along');
        await t.ready();
        assert.equal(await t.lastEnd(), 'complete');
        await shot(t.page, 'after-stop');
        await t.finish('chat: stop');
      } finally {
        await t.context.close();
      }
    });

    test('chat: Stop while submitted keeps the user message, no answer; usable again', async () => {
      const t = await open('/');
      try {
        await server.control({ docsChatDelayMs: 1500 });
        await t.say('never mind words:3');
        await t.page.getByText('Waiting for a reply…').waitFor({ timeout: 5_000 });
        await t.stop.click();
        await t.ready('ready after Stop');
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'never mind words:3' }]);
        assert.equal(await t.alert.count(), 0, 'a stop is no error');
        await new Promise((r) => setTimeout(r, 1800)); // the held answer would have come by now
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'never mind words:3' }], 'nothing arrives after Stop');
        assert.equal(await t.lastEnd(), 'stopped');
        await shot(t.page, 'stopped-submitted');
        await server.control({ docsChatDelayMs: 0 });
        await t.say('go on words:1');
        await eventually(async () => (await lastText(t.page)) === 'Answer go on: w1', { what: 'the next answer' });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'user', 'assistant']);
        await t.finish('chat: stop while submitted');
      } finally {
        await server.control({ docsChatDelayMs: 0 });
        await t.context.close();
      }
    });

    test('chat: a failed POST (500) shows its error; Try again (regenerate) answers', async () => {
      const t = await open('/');
      try {
        await server.control({ failDocsChats: 1 });
        // Chromium logs the failed request itself.
        t.allow(/Failed to load resource: the server responded with a status of 500/);
        await t.say('fails first words:2');
        await t.alert.waitFor({ timeout: 15_000 });
        // The error's message is the response body, as DefaultChatTransport words it.
        assert.match(await t.errorText(), /^Something went wrong: \{"error":\{"code":"internal","message":"scripted failure \(failDocsChats\)"\}\}$/);
        assert.deepEqual(await shown(t.page), [{ role: 'user', text: 'fails first words:2' }]);
        assert.equal(await t.stop.isVisible(), false);
        assert.equal(await t.send.isDisabled(), true, "status 'error' is not 'ready'");
        assert.equal(await t.input.isDisabled(), true);
        assert.equal(await t.lastEnd(), 'failed');
        await shot(t.page, 'error');
        assert.equal((await t.posts()).at(-1).status, 500);

        await t.page.getByRole('button', { name: 'Try again' }).click();
        await eventually(async () => (await lastText(t.page)) === 'Answer fails first (attempt 2): w1 w2' && (await t.input.isEnabled()),
          { what: 'the regenerated answer', timeout: 15_000 });
        assert.equal(await t.alert.count(), 0, 'the error is gone');
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'fails first words:2' },
          { role: 'assistant', text: 'Answer fails first (attempt 2): w1 w2' },
        ]);
        const again = (await t.posts()).at(-1).body;
        assert.equal(again.trigger, 'regenerate-message');
        assert.deepEqual(again.messages.map((m) => m.role), ['user']);
        assert.equal(await t.lastEnd(), 'complete');
        await shot(t.page, 'retried');

        await t.say('after that words:1');
        await eventually(async () => (await lastText(t.page)) === 'Answer after that: w1', { what: 'the next answer' });
        await t.finish('chat: error 500');
      } finally {
        await t.context.close();
      }
    });

    test('chat: an error chunk (the provider failed) shows its error; Try again asks again; Dismiss clears it', async () => {
      const t = await open('/');
      try {
        await t.say('fail provider please');
        await t.alert.waitFor({ timeout: 15_000 });
        // The route masks the provider's error, as a plain AI SDK route does.
        assert.equal(await t.errorText(), 'Something went wrong: An error occurred.');
        assert.equal(await t.send.isDisabled(), true);
        assert.equal(await t.lastEnd(), 'failed');
        await shot(t.page, 'provider-error');
        await t.page.getByRole('button', { name: 'Try again' }).click();
        // The scripted provider fails again: the error comes back, after a second POST.
        await eventually(async () => (await t.posts()).some((e) => e.body?.trigger === 'regenerate-message')
          && (await t.alert.isVisible()) && (await t.input.isDisabled()) && !(await t.stop.isVisible()), { what: 'the second failure', timeout: 15_000 });
        assert.equal((await shown(t.page))[0].text, 'fail provider please');

        await t.page.getByRole('button', { name: 'Dismiss' }).click();
        await eventually(async () => (await t.alert.count()) === 0 && (await t.input.isEnabled()), { what: 'the error dismissed' });
        await shot(t.page, 'dismissed');
        await t.say('something else words:2');
        await eventually(async () => (await lastText(t.page)) === 'Answer something else: w1 w2', { what: 'the next answer' });
        await t.ready();
        assert.equal(await t.lastEnd(), 'complete');
        await t.finish('chat: provider error');
      } finally {
        await t.context.close();
      }
    });

    test('chat: the connection lost mid-answer keeps the partial answer and shows the error; Try again answers', async () => {
      const t = await open('/');
      try {
        await server.control({ cutDocsChatAfter: 8 });
        t.allow(/net::ERR_INCOMPLETE_CHUNKED_ENCODING/); // Chromium reports the cut
        await t.say('cut short words:30');
        await t.alert.waitFor({ timeout: 8_000 });
        // (the message is the browser's fetch error: compared with the original's at the end)
        assert.match(await t.errorText(), /^Something went wrong: ./);
        const view = await shown(t.page);
        assert.equal(view[0].text, 'cut short words:30');
        assert.equal(view.length, 2, `the partial answer stays: ${JSON.stringify(view)}`);
        assert.match(view[1].text, /^Answ/);
        assert.ok(!view[1].text.endsWith('w30'));
        assert.equal(await t.stop.isVisible(), false);
        assert.equal(await t.lastEnd(), 'disconnected');
        await shot(t.page, 'cut');
        await t.page.getByRole('button', { name: 'Try again' }).click();
        const full = `Answer cut short (attempt 2): ${Array.from({ length: 30 }, (_, i) => `w${i + 1}`).join(' ')}`;
        await eventually(async () => (await lastText(t.page)) === full && (await t.input.isEnabled()), { what: 'the regenerated answer', timeout: 15_000 });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'assistant'], 'the partial answer was replaced');
        assert.equal(await t.alert.count(), 0);
        await shot(t.page, 'cut-retried');
        await t.finish('chat: connection lost');
      } finally {
        await t.context.close();
      }
    });

    // ----- the tools page -----------------------------------------------------------------------

    test('tools: getLocation is answered by onToolCall + addToolOutput; the follow-up is sent by itself', async () => {
      const t = await open('/tools');
      try {
        assert.equal(await t.page.getByRole('heading', { name: 'Tools' }).isVisible(), true);
        await t.say('where am I');
        await eventually(async () => (await lastText(t.page)).endsWith('You are in Lisbon.') && !(await t.stop.isVisible()),
          { what: 'the location and the answer to it', timeout: 15_000 });
        assert.deepEqual(await shown(t.page), [
          { role: 'user', text: 'where am I' },
          { role: 'assistant', text: 'Answer where am I: calling getLocation. | Location: Lisbon | You are in Lisbon.' },
        ]);
        const [call, cont] = (await t.posts()).map((e) => e.body);
        assert.deepEqual(call.messages.map((m) => m.role), ['user']);
        assert.deepEqual(cont.messages.map((m) => m.role), ['user', 'assistant'], 'the continuation sends the answered call');
        const part = cont.messages[1].parts.find((p) => p.type === 'tool-getLocation');
        assert.equal(part?.state, 'output-available');
        assert.deepEqual(part.output, { city: 'Lisbon' });
        await shot(t.page, 'get-location');
        await t.finish('tools: getLocation');
      } finally {
        await t.context.close();
      }
    });

    test('tools: askForConfirmation waits for the user; Yes, then No in a second round', async () => {
      const t = await open('/tools');
      try {
        await t.say('please confirm the move');
        await t.page.getByText('Confirm the move?').waitFor({ timeout: 15_000 });
        const yes = t.page.getByRole('button', { name: 'Yes' });
        await yes.waitFor();
        await eventually(async () => t.input.isEnabled(), { what: 'ready while the question waits' });
        assert.equal((await t.posts()).length, 1, 'nothing is sent before the user answers');
        await shot(t.page, 'confirm-asked');
        await yes.click();
        await eventually(async () => (await lastText(t.page)).endsWith('Confirm the move? You said yes. | You answered: yes.'),
          { what: 'the confirmation and the answer to it', timeout: 15_000 });
        assert.equal(await t.page.getByRole('button', { name: 'Yes' }).count(), 0);
        await shot(t.page, 'confirm-answered');
        // A second one in the same chat, answered No (the first round goes along as history).
        await t.say('now confirm the jump');
        await t.page.getByText('Confirm the jump?').waitFor({ timeout: 15_000 });
        await t.page.getByRole('button', { name: 'No' }).click();
        await eventually(async () => (await lastText(t.page)).endsWith('Confirm the jump? You said no. | You answered: no.'),
          { what: 'the denial and the answer to it', timeout: 15_000 });
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
        await t.ready();
        await t.finish('tools: askForConfirmation');
      } finally {
        await t.context.close();
      }
    });

    test('tools: getWeatherInformation runs on the server; the follow-up answers with its result', async () => {
      const t = await open('/tools');
      try {
        await t.say('what is the weather in Paris');
        const m = await eventually(async () => /Weather in Paris: (\w+) \| The weather in Paris is (\w+)\.$/.exec(await lastText(t.page)),
          { what: 'the weather and the answer to it', timeout: 15_000 });
        assert.equal(m[2], m[1]);
        await t.ready();
        assert.equal((await t.posts()).length, 2, 'the call, then the automatic follow-up');
        await shot(t.page, 'weather');
        await t.finish('tools: weather');
      } finally {
        await t.context.close();
      }
    });

    test('tools: deleteFile waits for approval; Allow runs it, Deny (with a reason) does not', async () => {
      const t = await open('/tools');
      try {
        await t.say('please delete notes.txt');
        await t.page.getByText('Delete notes.txt?').waitFor({ timeout: 15_000 });
        await t.ready('ready while the approval waits');
        assert.equal((await t.posts()).length, 1, 'nothing is sent before the user decides');
        await shot(t.page, 'approval-asked');
        await t.page.getByRole('button', { name: 'Allow' }).click();
        await eventually(async () => (await lastText(t.page)).endsWith('Done: deleted notes.txt | Deleted notes.txt.'),
          { what: 'the deletion and the answer to it', timeout: 15_000 });
        assert.equal(await t.page.getByRole('button', { name: 'Allow' }).count(), 0);
        await shot(t.page, 'approval-allowed');
        const allowed = (await t.posts()).at(-1).body;
        const sent = allowed.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
        assert.equal(sent.state, 'approval-responded');
        assert.equal(sent.approval.approved, true);

        await t.say('now delete old.log');
        await t.page.getByText('Delete old.log?').waitFor({ timeout: 15_000 });
        await t.page.getByRole('button', { name: 'Deny' }).click();
        await eventually(async () => (await lastText(t.page)).endsWith('Not deleted (The user said no) | Kept old.log.'),
          { what: 'the denial and the answer to it', timeout: 15_000 });
        await t.ready();
        assert.deepEqual((await shown(t.page)).map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
        assert.equal((await t.posts()).length, 4, 'each decision sent once');
        await shot(t.page, 'approval-denied');
        await t.finish('tools: deleteFile approval');
      } finally {
        await t.context.close();
      }
    });
  });
}

let messageIdDiffs;
test('ours POSTs what @ai-sdk/react POSTs (its keys at least, the same messages and triggers)', (t) => {
  const ids = [];
  const diffs = [];
  for (const [name, byVariant] of traces) {
    const { original, ours } = byVariant;
    if (!original || !ours) {
      t.diagnostic(`${name}: no trace of ${original ? 'ours' : 'original'}`);
      continue;
    }
    if (original.posts.length !== ours.posts.length) {
      diffs.push({ test: name, what: 'number of POSTs', original: original.posts.length, ours: ours.posts.length });
      continue;
    }
    original.posts.forEach((o, i) => {
      const u = ours.posts[i];
      const missing = o.keys.filter((k) => !u.keys.includes(k));
      if (missing.length) diffs.push({ test: name, post: i, what: 'body keys missing', missing, extra: u.keys.filter((k) => !o.keys.includes(k)) });
      if (o.trigger !== u.trigger) diffs.push({ test: name, post: i, what: 'trigger', original: o.trigger, ours: u.trigger });
      if (o.messageId !== u.messageId) ids.push({ test: name, post: i, original: o.messageId, ours: u.messageId });
      try {
        assert.deepEqual(u.messages, o.messages);
      } catch {
        diffs.push({ test: name, post: i, what: 'messages', original: o.messages, ours: u.messages });
      }
    });
  }
  assert.deepEqual(diffs, [], JSON.stringify(diffs, null, 1));
  messageIdDiffs = ids;
});

test('ours sends `messageId` where @ai-sdk/react does (absent for a new message)', () => {
  assert.ok(messageIdDiffs, 'the comparison ran');
  assert.deepEqual(messageIdDiffs, [], JSON.stringify(messageIdDiffs));
});

test("ours shows the original's error messages and onFinish outcomes", () => {
  const diffs = [];
  for (const [name, { original, ours }] of traces) {
    if (original && ours && JSON.stringify(original.seen) !== JSON.stringify(ours.seen)) diffs.push({ test: name, original: original.seen, ours: ours.seen });
  }
  assert.deepEqual(diffs, [], JSON.stringify(diffs, null, 1));
});

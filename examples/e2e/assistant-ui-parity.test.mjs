// End-to-end: the assistant-ui example's use of what the adapter now wires (onEdit, onReload on
// a failed turn, a sub-agent's nested messages, the default attachment adapter), against the
// reference server (`--tps 200`, the nested run at the default pace so it is seen streaming),
// in headless Chromium.
//
// - Edit (AI SDK runtime): assistant-ui's `ActionBarPrimitive.Edit` opens the edit composer
//   (`ComposerPrimitive` inside the user message) with the message's text; Cancel leaves all as
//   it was and posts nothing; Send makes the edit a new user message (a new id) beside the old
//   one, which stays with its answer as a branch (as assistant-ui's own AI SDK runtime does), and
//   the chat POST carries the new path (`submit-message`, `messageId` = the new message).
//   pi runtime: no Edit (nor Regenerate / Retry) is offered.
// - Retry (AI SDK runtime): a turn whose chat POST fails (`notFound: ['chat']`, a 404 before
//   any assistant part) shows its error in the thread (assistant-ui's ErrorPrimitive on the
//   adapter's `:error` stand-in, no banner beside it) with assistant-ui's Reload as Retry; once
//   the route is back, Retry runs the turn again (`regenerate-message`): the answer shows, the
//   error goes. A provider failure (`fail provider`) shows on the answer itself; Retry asks
//   again (the scripted model fails again: one error, not two), and an edit then fixes it.
//   pi runtime: the provider failure's error shows the same way, without Retry.
// - Nested sub-agent (pi runtime): `subagent summarize the notes`: the tool call's nested
//   transcript is rendered by assistant-ui's `MessagePartPrimitive.Messages` (the nested
//   thread's own `MessagePrimitive.Root`s inside `nested-messages`), live while it runs and
//   equal to the canonical transcript at the end.
// - Attachments (AI SDK runtime): `ComposerPrimitive.AddAttachment` picks a file, it shows in
//   the composer, and is sent as a data: URL file part; the user message shows it.
// Every test collects the console's errors and warnings (none may say "does not support") and
// the page errors (none).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, launch, sessionId, openChat, typeAndEnter, status, pageMessages, canonicalView,
  screenshot, eventually, settled,
} from './lib.mjs';

const FAST = ['--tps', '200'];
let browser, aiAui, piAui;

before(async () => {
  [browser, aiAui, piAui] = await Promise.all([
    launch(),
    startServer({ runtime: 'ai-sdk', app: 'assistant-ui', args: FAST }),
    startServer({ runtime: 'pi', app: 'assistant-ui' }),
  ]);
});

after(async () => {
  await Promise.all([browser?.close(), aiAui?.stop(), piAui?.stop()]);
});

/** openChat, plus the console's errors and warnings; `check()` asserts the page stayed clean. */
async function open(server, session) {
  const opened = await openChat(browser, server, session);
  const consoleLines = [];
  opened.page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') consoleLines.push(`${m.type()}: ${m.text()}`);
  });
  const check = () => {
    assert.deepEqual(consoleLines.filter((l) => /does not support/i.test(l)), [], consoleLines.join('\n'));
    assert.deepEqual(opened.errors.map((e) => e.stack ?? String(e)), [], 'no page errors');
  };
  return { ...opened, consoleLines, check };
}

const chatPosts = async (server, session) => (await server.log()).filter((e) => e.route === 'chat' && e.sessionId === session);
const ids = (page) => page.$$eval('[data-testid=message]', (els) => els.map((e) => e.dataset.id));
const textOf = (message) => message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

/** The thread shows exactly these [role, text] pairs (waits for them). */
async function shows(page, expected, what) {
  await eventually(async () => JSON.stringify((await pageMessages(page)).map((m) => [m.role, m.text])) === JSON.stringify(expected), { what, timeout: 20_000 });
}

// ----- edit ---------------------------------------------------------------------------------

test('assistant-ui · ai-sdk: Edit makes a new user message and answer in their place; pi offers no Edit', async () => {
  await aiAui.reset();
  const s = sessionId('aui-edit');
  const { page, context, check } = await open(aiAui, s);
  await typeAndEnter(page, 'Tell me about cats words:3');
  await shows(page, [['user', 'Tell me about cats words:3'], ['assistant', 'Answer Tell me about: w1 w2 w3']], 'the first answer');
  await settled(page);
  const [userId, firstAnswerId] = await ids(page);

  // assistant-ui's Edit opens its edit composer with the message's text; Cancel changes nothing.
  const user = page.locator('[data-testid=message][data-role=user]');
  await user.getByTestId('edit').click();
  const editInput = user.getByTestId('edit-input');
  await editInput.waitFor();
  assert.equal(await editInput.inputValue(), 'Tell me about cats words:3', 'the edit starts from the message');
  await editInput.fill('Never mind');
  await user.getByTestId('edit-cancel').click();
  await user.getByTestId('edit-input').waitFor({ state: 'detached' });
  await shows(page, [['user', 'Tell me about cats words:3'], ['assistant', 'Answer Tell me about: w1 w2 w3']], 'nothing changed after Cancel');
  assert.equal((await chatPosts(aiAui, s)).length, 1, 'Cancel posts nothing');

  // Edit and send: a new message (a new id) and a new answer in the old ones' place.
  await user.getByTestId('edit').click();
  await editInput.fill('Explain dogs instead words:4');
  await screenshot(page, 'aui-editing');
  await user.getByTestId('edit-send').click();
  await shows(page, [['user', 'Explain dogs instead words:4'], ['assistant', 'Answer Explain dogs instead: w1 w2 w3 w4']], 'the edited message and its answer');
  await settled(page);
  const [editedId, newAnswerId] = await ids(page);
  assert.notEqual(editedId, userId, 'the edit is a new message; the old one is a branch');
  assert.notEqual(newAnswerId, firstAnswerId, 'the old answer is gone');
  assert.equal(await page.getByText('Answer Tell me about').count(), 0, 'the old answer is not shown');

  // What the server got: the edit as AI SDK sends it, the edited text in the history.
  const posts = await chatPosts(aiAui, s);
  assert.equal(posts.length, 2, 'one POST for the edit');
  const edit = posts[1].body;
  assert.equal(edit.trigger, 'submit-message');
  assert.equal(edit.messageId, editedId, 'it names the new message');
  assert.deepEqual(edit.messages.map((m) => [m.role, m.id, textOf(m)]), [['user', editedId, 'Explain dogs instead words:4']], 'the path ends with the new message, the old branch left out');
  await eventually(async () => JSON.stringify(canonicalView(await aiAui.messages(s))) === JSON.stringify(await pageMessages(page)), { what: 'the stored history is the page\'s' });
  await screenshot(page, 'aui-edit');
  check();
  await context.close();

  // pi: the server owns the history, so neither Edit nor Regenerate is offered.
  await piAui.reset();
  const p = await open(piAui, sessionId('aui-pi-edit'));
  await typeAndEnter(p.page, 'Hello pi words:2');
  await shows(p.page, [['user', 'Hello pi words:2'], ['assistant', 'Answer Hello pi: w1 w2']], 'the pi answer');
  await settled(p.page);
  const editButtons = p.page.getByTestId('edit');
  assert.ok((await editButtons.count()) === 0 || (await editButtons.first().isDisabled()), 'no usable Edit in pi mode');
  assert.equal(await p.page.getByTestId('regenerate').count(), 0, 'no Regenerate in pi mode');
  assert.equal(await p.page.getByTestId('edit-composer').count(), 0);
  await screenshot(p.page, 'aui-pi-no-edit');
  p.check();
  await p.context.close();
});

// ----- retry --------------------------------------------------------------------------------

test('assistant-ui · ai-sdk: a failed turn shows its error in the thread, and Retry runs it again', async () => {
  await aiAui.reset();
  const s = sessionId('aui-retry');
  const { page, context, check } = await open(aiAui, s);

  // The chat POST answers 404: the turn fails before any assistant part.
  await aiAui.control({ notFound: ['chat'] });
  try {
    await typeAndEnter(page, 'Retry me please words:3');
    await eventually(async () => (await status(page)) === 'error', { what: 'the failed turn' });
  } finally {
    await aiAui.control({ notFound: [] });
  }
  const [userId] = await ids(page);
  const standIn = page.locator('[data-testid=message][data-role=assistant]');
  await standIn.getByTestId('message-error').waitFor();
  assert.equal(await standIn.count(), 1);
  assert.equal(await standIn.getAttribute('data-id'), `${userId}:error`, 'the adapter\'s stand-in after the user message');
  assert.match(await standIn.getByTestId('message-error').textContent(), /404|notFound/, 'the store\'s error, by ErrorPrimitive');
  assert.equal(await page.getByTestId('error').count(), 0, 'no banner repeating it');
  await screenshot(page, 'aui-retry-error');

  await standIn.getByTestId('retry').click();
  await eventually(async () => {
    const shown = await pageMessages(page);
    return shown.length === 2 && /^Answer Retry me please( \(attempt \d+\))?: w1 w2 w3$/.test(shown[1].text);
  }, { what: 'the answer after Retry' });
  await settled(page);
  assert.equal(await page.getByTestId('message-error').count(), 0, 'the error is gone');
  assert.equal(await page.getByTestId('error').count(), 0);
  assert.ok(!(await ids(page)).some((id) => id.endsWith(':error')), 'the stand-in is gone');
  let posts = await chatPosts(aiAui, s);
  assert.deepEqual(posts.map((e) => [e.status, e.body.trigger]), [[404, 'submit-message'], [200, 'regenerate-message']]);
  assert.deepEqual(posts[1].body.messages.map((m) => [m.role, m.id]), [['user', userId]], 'Retry asks the same user message again');
  await screenshot(page, 'aui-retry');

  // The provider fails mid-turn: the error is on that answer; Retry asks again (and the
  // scripted model fails again); an edit of the question then gets an answer.
  await typeAndEnter(page, 'Now fail provider please');
  await eventually(async () => (await status(page)) === 'error', { what: 'the provider failure' });
  const failed = page.locator('[data-testid=message][data-failed=true]');
  await failed.getByTestId('message-error').waitFor();
  assert.match(await failed.getByTestId('message-error').textContent(), /scripted provider error/);
  assert.equal(await page.getByTestId('error').count(), 0, 'no banner repeating it');
  const before = await ids(page);
  await failed.getByTestId('retry').click();
  await eventually(async () => (await chatPosts(aiAui, s)).length === 4, { what: 'the second try' });
  await eventually(async () => (await status(page)) === 'error', { what: 'the second failure' });
  await failed.getByTestId('message-error').waitFor();
  assert.equal(await page.getByTestId('message-error').count(), 1, 'one error, not two');
  assert.equal((await ids(page)).length, before.length, 'the failed answer replaced, not added to');
  posts = await chatPosts(aiAui, s);
  assert.equal(posts[3].body.trigger, 'regenerate-message');
  assert.equal(textOf(posts[3].body.messages.at(-1)), 'Now fail provider please');

  const second = page.locator('[data-testid=message][data-role=user]').nth(1);
  await second.getByTestId('edit').click();
  await second.getByTestId('edit-input').fill('Now succeed please words:2');
  await second.getByTestId('edit-input').press('Enter');
  await shows(page, [
    ['user', 'Retry me please words:3'], ['assistant', (await pageMessages(page))[1].text],
    ['user', 'Now succeed please words:2'], ['assistant', 'Answer Now succeed please: w1 w2'],
  ], 'the edited question answered');
  await settled(page);
  assert.equal(await page.getByTestId('message-error').count(), 0);
  check();
  await context.close();

  // pi: the provider failure shows the same way; its Retry is the store's (`retry()`): the
  // server's answer ended in its error (it ran the message and failed), so the message is sent
  // again, once (a lost connection would attach to the server's turn instead).
  await piAui.reset();
  const piSession = sessionId('aui-pi-fail');
  const p = await open(piAui, piSession);
  await typeAndEnter(p.page, 'Please fail provider now');
  await eventually(async () => (await status(p.page)) === 'error', { what: 'the pi provider failure' });
  const piFailed = p.page.locator('[data-testid=message][data-failed=true]');
  await piFailed.getByTestId('message-error').waitFor();
  assert.match(await piFailed.getByTestId('message-error').textContent(), /scripted provider error/);
  assert.equal(await p.page.getByTestId('error').count(), 0, 'no banner repeating it');
  await screenshot(p.page, 'aui-pi-error');
  const piRetry = p.page.getByTestId('retry');
  assert.ok(await piRetry.isEnabled(), 'Retry offered in pi mode too');
  await piRetry.click();
  await eventually(async () => (await chatPosts(piAui, piSession)).length === 2, { what: 'Retry to send the message again' });
  await eventually(async () => (await status(p.page)) !== 'streaming', { what: 'the retried turn to end' });
  assert.equal((await chatPosts(piAui, piSession)).length, 2, 'sent again once, not more');
  p.check();
  await p.context.close();
});

// ----- nested sub-agent ---------------------------------------------------------------------

test('assistant-ui · pi: a sub-agent\'s transcript renders through MessagePartPrimitive.Messages', async () => {
  await piAui.reset();
  const s = sessionId('aui-nested');
  const { page, context, check } = await open(piAui, s);
  const SUB = '[data-testid=part-tool][data-tool-name="pi.subagent"]';
  // Every distinct look of the nested thread: its messages as role:status:texts.
  await page.evaluate((sel) => {
    window.__nested = [];
    const record = () => {
      const root = document.querySelector(sel)?.querySelector('[data-testid=nested-messages]');
      if (!root) return;
      const look = Array.from(root.querySelectorAll('[data-testid=nested-message]')).map((m) => ({
        role: m.dataset.role,
        status: m.dataset.status,
        texts: Array.from(m.querySelectorAll('.subagent-text')).map((t) => t.textContent.trim()),
      }));
      const key = JSON.stringify(look);
      if (window.__nested.at(-1)?.key !== key) window.__nested.push({ key, look });
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  }, SUB);

  await typeAndEnter(page, 'subagent summarize the notes');
  await page.locator(SUB).locator('[data-testid=nested-messages] [data-testid=nested-message]').first().waitFor({ state: 'attached', timeout: 20_000 });
  await settled(page);

  const sub = page.locator(SUB);
  assert.equal(await sub.count(), 1);
  await sub.getByTestId('subagent-summary').click();
  const nested = sub.getByTestId('nested-messages');
  await nested.waitFor({ state: 'visible' });
  const details = (await piAui.messages(s)).flatMap((m) => m.parts).find((p) => p.toolName === 'pi.subagent').details;
  assert.equal(details.status, 'done');
  const looks = await page.evaluate(() => window.__nested.map((n) => n.look));
  const final = looks.at(-1);
  assert.deepEqual(final.map((m) => [m.role, m.status]), [['user', 'complete'], ['assistant', 'complete'], ['assistant', 'complete']], JSON.stringify(final));
  assert.deepEqual(final.flatMap((m) => m.texts), details.transcript.map((e) => e.text), 'the nested messages say what the canonical transcript says');
  assert.deepEqual(final.flatMap((m) => m.texts), ['summarize the notes', 'Answer summarize the notes: calling ls.', 'todo.txt', 'Result for summarize the notes: ls → todo.txt.']);
  const text = await nested.innerText();
  for (const e of details.transcript) assert.ok(text.includes(e.text), `${e.text} inside nested-messages`);
  // Nested messages are not thread messages (the outer thread is the user's message and one
  // answer: the tool round trip's steps are one row).
  assert.deepEqual((await pageMessages(page)).map((m) => m.role), ['user', 'assistant']);

  // While it ran: the nested thread was there already, its last message running, growing.
  const running = looks.filter((l) => l.at(-1)?.status === 'running');
  assert.ok(running.length >= 1, `seen while running: ${JSON.stringify(looks)}`);
  assert.equal(running[0][0].texts[0], 'summarize the notes', 'the task first');
  const counts = looks.map((l) => l.flatMap((m) => m.texts).length);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), `the transcript only grows: ${counts}`);
  await screenshot(page, 'aui-nested');
  check();
  await context.close();
});

// ----- attachments --------------------------------------------------------------------------

test('assistant-ui · ai-sdk: AddAttachment sends a file as a data: URL part', async () => {
  await aiAui.reset();
  const s = sessionId('aui-attach');
  const { page, context, check } = await open(aiAui, s);
  const chooser = page.waitForEvent('filechooser');
  await page.getByTestId('attach').click();
  await (await chooser).setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('buy milk\n') });
  await page.getByTestId('composer-attachment').waitFor();
  assert.equal((await page.getByTestId('composer-attachment').textContent()).replace('×', '').trim(), 'notes.txt');
  await typeAndEnter(page, 'Read the attached note words:2');
  await shows(page, [['user', 'Read the attached note words:2'], ['assistant', 'Answer Read the attached: w1 w2']], 'the answer');
  await settled(page);
  assert.equal(await page.getByTestId('composer-attachment').count(), 0, 'the composer is empty again');
  assert.deepEqual(await page.locator('[data-testid=message][data-role=user] [data-testid=message-attachment]').allTextContents(), ['notes.txt']);
  const [post] = await chatPosts(aiAui, s);
  const file = post.body.messages.at(-1).parts.find((p) => p.type === 'file');
  assert.ok(file, JSON.stringify(post.body.messages.at(-1)));
  assert.equal(file.mediaType, 'text/plain');
  assert.equal(file.filename, 'notes.txt');
  assert.equal(file.url, `data:text/plain;base64,${Buffer.from('buy milk\n').toString('base64')}`);
  await screenshot(page, 'aui-attachment');
  check();
  await context.close();
});

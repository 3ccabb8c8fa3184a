// End-to-end: the React example in AI SDK mode (`--runtime ai-sdk --interactive-tools`: the
// client owns the history) against the reference server's `streamText`, in headless Chromium.
// The `useChat` actions, each as the user does it:
//
// - regenerate: the Regenerate button replaces the last answer with a new attempt
//   (`(attempt 2)`), same message count, the request's trigger `regenerate-message`;
// - edit: Edit on the first user message, new text, Save: everything after it is replaced by
//   one answer to the edited text;
// - a tool approval round-trip: `delete notes.txt` asks; Approve runs it (`Deleted notes.txt.`),
//   Deny does not (`Kept notes.txt.`, the part `output-denied`);
// - a client tool output: `where am I` asks the browser; Share (`Paris`) answers it
//   (`You are in Paris.`) in the same assistant message.
//
// Each ends with a reload: the history the store PUT after the turn is what `GET …/messages`
// serves, and the page shows it the same. A screenshot of each final state is kept in
// target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, launch, sessionId, openChat, typeAndEnter, status, waitStatus, pageMessages,
  canonicalView, screenshot, eventually,
} from './lib.mjs';

let browser, server;

before(async () => {
  [browser, server] = await Promise.all([
    launch(),
    startServer({ runtime: 'ai-sdk', args: ['--interactive-tools', '--tps', '100'] }),
  ]);
});

after(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

/** Ready, with `n` messages on the page. */
async function settledWith(page, n) {
  await eventually(
    async () => (await status(page)) === 'ready' && (await page.getByTestId('message').count()) === n,
    { what: `ready with ${n} messages`, timeout: 45_000 },
  );
}

/** Tool parts as the page shows them: `name:state`, per message. */
async function pageTools(page) {
  return page.$$eval('[data-testid=message]', (els) => els.map((el) =>
    Array.from(el.querySelectorAll('[data-testid=part-tool]')).map((p) => `${p.dataset.toolName}:${p.dataset.state}`)));
}

function canonicalTools(messages) {
  return messages.map((m) => m.parts
    .filter((p) => p.type === 'dynamic-tool' || p.type.startsWith('tool-'))
    .map((p) => `${p.toolName ?? p.type.slice(5)}:${p.state}`));
}

const ids = (page) => page.$$eval('[data-testid=message]', (els) => els.map((e) => e.dataset.id));
const chats = async (session) => (await server.log()).filter((e) => e.route === 'chat' && e.sessionId === session);

/**
 * The store PUT the history the page shows (after the last turn), `GET …/messages` serves it,
 * and a reload shows the same messages, tools and ids.
 */
async function reloadShowsTheSame(page, session) {
  const shown = await pageMessages(page);
  const tools = await pageTools(page);
  const shownIds = await ids(page);
  await eventually(async () => {
    const puts = (await server.log()).filter((e) => e.route === 'messages-put' && e.sessionId === session && e.status === 204);
    const last = puts.at(-1)?.body?.messages;
    return last && JSON.stringify(canonicalView(last)) === JSON.stringify(shown) && JSON.stringify(canonicalTools(last)) === JSON.stringify(tools);
  }, { what: 'a PUT of the history the page shows' });
  const stored = await server.messages(session);
  assert.deepEqual(canonicalView(stored), shown, 'GET messages serves what the page shows');
  assert.deepEqual(canonicalTools(stored), tools);
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=message]').length >= n, shown.length);
  await waitStatus(page, 'ready');
  assert.deepEqual(await pageMessages(page), shown, 'the same history after a reload');
  assert.deepEqual(await pageTools(page), tools);
  assert.deepEqual(await ids(page), shownIds);
}

test('ai-sdk: regenerate replaces the last answer with a new attempt', async () => {
  const s = sessionId('ai-regen');
  const { page, context, errors } = await openChat(browser, server, s);
  assert.equal(await page.getByTestId('capabilities').getAttribute('data-ai-sdk-owns-history'), 'true');
  await typeAndEnter(page, 'Tell me something words:3');
  await settledWith(page, 2);
  const before = await pageMessages(page);
  assert.equal(before[1].text, 'Answer Tell me something: w1 w2 w3');
  const [userId, firstAnswerId] = await ids(page);

  await page.getByTestId('regenerate').click();
  await eventually(async () => (await status(page)) === 'ready' && (await pageMessages(page))[1]?.text.includes('(attempt 2)'), { what: 'the second attempt' });
  const shown = await pageMessages(page);
  assert.deepEqual(shown.map((m) => [m.role, m.text]), [
    ['user', 'Tell me something words:3'],
    ['assistant', 'Answer Tell me something (attempt 2): w1 w2 w3'],
  ], 'the answer replaced, the message count unchanged');
  const [userIdAfter, answerId] = await ids(page);
  assert.equal(userIdAfter, userId);
  assert.notEqual(answerId, firstAnswerId, 'a new assistant message');
  const regen = (await chats(s)).filter((e) => e.body.trigger === 'regenerate-message');
  assert.equal(regen.length, 1, 'one regenerate request');
  assert.equal(regen[0].body.messageId, firstAnswerId, 'it names the answer to regenerate');
  assert.deepEqual(regen[0].body.messages.map((m) => m.id), [userId], 'the history up to the user message');

  await page.getByTestId('regenerate').click();
  await eventually(async () => (await status(page)) === 'ready' && (await pageMessages(page))[1]?.text.includes('(attempt 3)'), { what: 'the third attempt' });
  assert.equal((await pageMessages(page)).length, 2);
  await reloadShowsTheSame(page, s);
  await screenshot(page, 'ai-sdk-regenerate');
  assert.deepEqual(errors, []);
  await context.close();
});

test('ai-sdk: editing the first user message replaces everything after it with one answer', async () => {
  const s = sessionId('ai-edit');
  const { page, context, errors } = await openChat(browser, server, s);
  await typeAndEnter(page, 'First question words:2');
  await settledWith(page, 2);
  await typeAndEnter(page, 'Second question words:2');
  await settledWith(page, 4);
  const [firstId] = await ids(page);

  const first = page.locator('[data-testid=message][data-role=user]').first();
  await first.getByTestId('edit-message').click();
  const input = first.getByTestId('edit-input');
  assert.equal(await input.inputValue(), 'First question words:2', 'the editor starts with the text');
  await input.fill('Edited question words:3');
  await screenshot(page, 'ai-sdk-edit-open');
  await first.getByTestId('edit-save').click();
  await eventually(async () => (await status(page)) === 'ready' && (await pageMessages(page)).length === 2 && (await pageMessages(page))[1].text !== '', { what: 'the answer to the edit', timeout: 45_000 });
  const shown = await pageMessages(page);
  assert.deepEqual(shown.map((m) => [m.role, m.text]), [
    ['user', 'Edited question words:3'],
    ['assistant', 'Answer Edited question: w1 w2 w3'],
  ]);
  assert.equal((await ids(page))[0], firstId, 'the edited message keeps its id');
  assert.equal(await page.getByTestId('edit-form').count(), 0, 'the editor closed');
  const last = (await chats(s)).at(-1);
  assert.equal(last.body.trigger, 'submit-message');
  assert.equal(last.body.messageId, firstId);
  assert.deepEqual(last.body.messages.map((m) => m.id), [firstId], 'nothing after the edited message was sent');
  await reloadShowsTheSame(page, s);
  await screenshot(page, 'ai-sdk-edit');
  assert.deepEqual(errors, []);
  await context.close();
});

/** Asks `delete notes.txt`; resolves once the approval buttons show. */
async function askToDelete(page) {
  await typeAndEnter(page, 'please delete notes.txt');
  await page.getByTestId('tool-approve').waitFor({ timeout: 30_000 });
  await waitStatus(page, 'ready');
  const tool = page.locator('[data-testid=part-tool][data-tool-name=deleteFile]');
  assert.equal(await tool.getAttribute('data-state'), 'approval-requested');
  assert.equal(await page.getByTestId('message').count(), 2);
  return tool;
}

test('ai-sdk: a tool approval round-trip: approve runs the tool, deny keeps the file', async () => {
  // Approve.
  const s = sessionId('ai-approve');
  const { page, context, errors } = await openChat(browser, server, s);
  const tool = await askToDelete(page);
  await screenshot(page, 'ai-sdk-approval-asked');
  const chatsBefore = (await chats(s)).length;
  await page.getByTestId('tool-approve').click();
  await eventually(async () => (await status(page)) === 'ready' && (await pageMessages(page))[1]?.text.endsWith('Deleted notes.txt.'), { what: 'Deleted notes.txt.' });
  const shown = await pageMessages(page);
  assert.deepEqual(shown.map((m) => [m.role, m.text]), [
    ['user', 'please delete notes.txt'],
    ['assistant', 'Answer please delete notes.txt: calling deleteFile. Deleted notes.txt.'],
  ], 'one assistant message, continued');
  assert.equal(await tool.getAttribute('data-state'), 'output-available');
  assert.equal(await page.getByTestId('tool-approve').count(), 0, 'the buttons are gone');
  const after = await chats(s);
  assert.equal(after.length, chatsBefore + 1, 'one continuation request');
  const cont = after.at(-1).body;
  assert.equal(cont.trigger, 'submit-message');
  assert.equal(cont.message, '');
  const part = cont.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
  assert.equal(part.state, 'approval-responded');
  assert.equal(part.approval.approved, true);
  await reloadShowsTheSame(page, s);
  await screenshot(page, 'ai-sdk-approval-approved');
  assert.deepEqual(errors, []);
  await context.close();

  // Deny, in a second run.
  const s2 = sessionId('ai-deny');
  const second = await openChat(browser, server, s2);
  const tool2 = await askToDelete(second.page);
  await second.page.getByTestId('tool-deny').click();
  await eventually(async () => (await status(second.page)) === 'ready' && (await pageMessages(second.page))[1]?.text.endsWith('Kept notes.txt.'), { what: 'Kept notes.txt.' });
  assert.deepEqual((await pageMessages(second.page)).map((m) => [m.role, m.text]), [
    ['user', 'please delete notes.txt'],
    ['assistant', 'Answer please delete notes.txt: calling deleteFile. Kept notes.txt.'],
  ]);
  assert.equal(await tool2.getAttribute('data-state'), 'output-denied');
  assert.ok(await second.page.getByTestId('tool-denied').isVisible(), 'the denied state is shown');
  const denied = (await chats(s2)).at(-1).body.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
  assert.equal(denied.approval.approved, false);
  await reloadShowsTheSame(second.page, s2);
  assert.ok(await second.page.getByTestId('tool-denied').isVisible(), 'still shown after the reload');
  await screenshot(second.page, 'ai-sdk-approval-denied');
  assert.deepEqual(second.errors, []);
  await second.context.close();
});

test('ai-sdk: a client tool answered in the browser continues the same assistant message', async () => {
  const s = sessionId('ai-client-tool');
  const { page, context, errors } = await openChat(browser, server, s);
  await typeAndEnter(page, 'where am I');
  const input = page.getByTestId('tool-output-input');
  await input.waitFor({ timeout: 30_000 });
  await waitStatus(page, 'ready');
  assert.equal(await input.inputValue(), 'Paris', 'prefilled');
  const tool = page.locator('[data-testid=part-tool][data-tool-name=getLocation]');
  assert.equal(await tool.getAttribute('data-state'), 'input-available');
  const [, answerId] = await ids(page);
  await screenshot(page, 'ai-sdk-client-tool-asked');
  await page.getByTestId('tool-output-submit').click();
  await eventually(async () => (await status(page)) === 'ready' && (await pageMessages(page))[1]?.text.endsWith('You are in Paris.'), { what: 'You are in Paris.' });
  const shown = await pageMessages(page);
  assert.deepEqual(shown.map((m) => [m.role, m.text, m.tools]), [
    ['user', 'where am I', []],
    ['assistant', 'Answer where am I: calling getLocation. You are in Paris.', ['getLocation']],
  ], 'no extra bubble');
  assert.equal((await ids(page))[1], answerId, 'the same assistant message');
  assert.equal(await tool.getAttribute('data-state'), 'output-available');
  assert.equal(await page.getByTestId('tool-output-form').count(), 0, 'the form is gone');
  const requests = await chats(s);
  assert.equal(requests.length, 2, 'the question, then one continuation');
  const cont = requests.at(-1).body;
  assert.equal(cont.trigger, 'submit-message');
  assert.equal(cont.message, '');
  assert.equal(cont.messageId, answerId);
  assert.deepEqual(cont.messages.at(-1).parts.find((p) => p.type === 'tool-getLocation').output, { city: 'Paris' });
  await reloadShowsTheSame(page, s);
  await screenshot(page, 'ai-sdk-client-tool');
  assert.deepEqual(errors, []);
  await context.close();
});

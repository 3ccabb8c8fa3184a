// End-to-end: human in the loop (SPEC §13) in both example apps, in headless Chromium, against
// the reference server (`--tps 200`):
//
// - React · pi: `delete notes.txt` makes pi's `deleteFile` wait for approval (its
//   `beforeToolCall` hook holds the call open): the approval bar above the composer
//   (`snapshot.pending.approvals`) allows it (`Deleted notes.txt.`), or denies it with a reason
//   (`Kept notes.txt.`, the part `output-denied`); `ask which colour` makes `askUser` wait: the
//   ask-user card (`pending.questions`) answers `green` (`You chose green.`). A reload while
//   each waits shows it still waiting, and the per-part buttons answer it. An answer POST that
//   fails (`--fail-answers 1`: 503) is retried by the store with the very same body; a refused
//   one (404) shows its error on the bar and answering again works.
// - React · ai-sdk (`--interactive-tools`): the same approval bar drives AI SDK's
//   `tool-approval-request` (ai-sdk.test.mjs covers the per-part buttons and `getLocation`).
// - assistant-ui · pi and · ai-sdk: tool UIs registered through `makeToolUIs` answer with
//   assistant-ui's own `respondToApproval` / `resume` / `addResult` props (the adapter's
//   `onRespondToToolApproval` / `onResumeToolCall` / `onAddToolResult`), the thread-level bar
//   with the adapter's `usePending`; the console never says "does not support".
//
// Screenshots: target/e2e/hitl-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, launch, sessionId, typeAndEnter, status, pageMessages, canonicalView, screenshot,
  eventually,
} from './lib.mjs';

const FAST = ['--tps', '200'];
let browser, pi, aiReact, piAui, aiAui;

before(async () => {
  [browser, pi, aiReact, piAui, aiAui] = await Promise.all([
    launch(),
    startServer({ runtime: 'pi', args: FAST }),
    startServer({ runtime: 'ai-sdk', args: [...FAST, '--interactive-tools'] }),
    startServer({ runtime: 'pi', app: 'assistant-ui', args: FAST }),
    startServer({ runtime: 'ai-sdk', app: 'assistant-ui', args: [...FAST, '--interactive-tools'] }),
  ]);
});

after(async () => {
  await Promise.all([browser?.close(), pi?.stop(), aiReact?.stop(), piAui?.stop(), aiAui?.stop()]);
});

const ANSWER_ROUTE = /\/api\/v1\/agent\/chat\/[^/?]+\/(approval|tool-output)(\?|$)/;

/**
 * Opens an example app on `session`. Records, from the first script on: every console message
 * and page error, and (through request interception) the body of every answer POST the page
 * makes, retries included.
 */
async function open(server, session) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const consoleLines = [];
  const errors = [];
  const answers = [];
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(e));
  await page.route(ANSWER_ROUTE, async (route) => {
    const req = route.request();
    if (req.method() === 'POST') answers.push({ route: req.url().match(ANSWER_ROUTE)[1], body: req.postData() });
    await route.continue();
  });
  await page.goto(`${server.url}/?session=${encodeURIComponent(session)}`);
  await ready(page);
  const clean = () => {
    const unsupported = [...consoleLines, ...errors.map((e) => String(e.stack ?? e))].filter((l) => /does not support/i.test(l));
    assert.deepEqual(unsupported, [], 'no "does not support" in the console');
    assert.deepEqual(errors.map(String), [], 'no page errors');
  };
  return { page, context, consoleLines, errors, answers, clean };
}

async function ready(page) {
  await page.getByTestId('composer-input').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=capabilities]')?.dataset.loaded === 'true');
}

/** Ready, nothing waiting, and the last message's text ends with `suffix`. */
async function answered(page, suffix, timeout = 30_000) {
  await eventually(async () => {
    const last = (await pageMessages(page)).at(-1);
    return (await status(page)) === 'ready' && last?.role === 'assistant' && last.text.endsWith(suffix) && (await page.getByTestId('queued').count()) === 0;
  }, { what: `an answer ending "${suffix}"`, timeout });
}

/** The (last) tool part of `toolName` as the page shows it. */
function toolPart(page, toolName) {
  return page.locator(`[data-testid=part-tool][data-tool-name="${toolName}"]`).last();
}

async function toolView(page, toolName) {
  return toolPart(page, toolName).evaluate((el) => ({
    state: el.dataset.state,
    toolCallId: el.dataset.toolCallId,
    approvalState: el.querySelector('[data-testid=tool-approval-state]')?.dataset.approvalState ?? null,
    approvalId: el.querySelector('[data-testid=tool-approval]')?.dataset.approvalId ?? null,
    denied: el.querySelector('[data-testid=tool-denied]')?.textContent.trim() ?? null,
  }));
}

/** The approval bar's entries. */
async function approvals(page) {
  return page.$$eval('[data-testid=approval-bar] [data-testid=approval]', (els) => els.map((el) => ({
    approvalId: el.dataset.approvalId,
    toolName: el.dataset.toolName,
    input: el.querySelector('[data-testid=approval-input]')?.textContent.trim(),
    error: el.querySelector('[data-testid=pending-error]')?.textContent.trim() ?? null,
  })));
}

/** The ask-user cards. */
async function questions(page) {
  return page.$$eval('[data-testid=question]', (els) => els.map((el) => ({
    toolCallId: el.dataset.toolCallId,
    question: el.querySelector('[data-testid=question-text]')?.textContent.trim(),
    options: Array.from(el.querySelectorAll('[data-testid=answer]')).map((b) => b.dataset.option),
    error: el.querySelector('[data-testid=pending-error]')?.textContent.trim() ?? null,
  })));
}

/** The server's log of the answer POSTs of `session`: `[route, status, body]`. */
async function answerLog(server, session) {
  return (await server.log())
    .filter((e) => (e.route === 'approval' || e.route === 'tool-output') && e.sessionId === session)
    .map((e) => [e.route, e.status, e.body]);
}

/** The canonical tool part of `toolName` (the last one). */
async function canonicalPart(server, session, toolName) {
  return (await server.messages(session)).flatMap((m) => m.parts).filter((p) => p.type === `tool-${toolName}`).at(-1);
}

/** Asks `delete notes.txt` and waits until it waits for approval (bar and part). */
async function askToDelete(page) {
  await typeAndEnter(page, 'please delete notes.txt');
  await page.getByTestId('approval').first().waitFor({ timeout: 30_000 });
  await eventually(async () => (await toolView(page, 'deleteFile')).state === 'approval-requested', { what: 'deleteFile waiting' });
}

async function askColour(page) {
  await typeAndEnter(page, 'ask which colour');
  await page.getByTestId('question').first().waitFor({ timeout: 30_000 });
}

// ----- React · pi ------------------------------------------------------------------------------

test('react · pi: the approval bar allows a waiting deleteFile call', async () => {
  const s = sessionId('hitl-allow');
  const { page, context, answers, clean } = await open(pi, s);
  await askToDelete(page);
  const canonical = await canonicalPart(pi, s, 'deleteFile');
  assert.equal(canonical.state, 'approval-requested', 'the history stores the waiting state');
  const approvalId = canonical.approval.id;
  assert.deepEqual(await approvals(page), [{ approvalId, toolName: 'deleteFile', input: 'path: notes.txt', error: null }]);
  const part = await toolView(page, 'deleteFile');
  assert.deepEqual([part.state, part.approvalState, part.approvalId], ['approval-requested', 'waiting', approvalId], 'the part waits too, with its own buttons');
  assert.equal(await status(page), 'streaming', 'pi holds the turn open while the call waits');
  assert.equal(await page.getByTestId('question').count(), 0);
  await screenshot(page, 'hitl-react-pi-approval-asked');

  await page.getByTestId('approval-bar').getByTestId('approve').click();
  await answered(page, 'Deleted notes.txt.');
  assert.equal(await page.getByTestId('approval-bar').count(), 0, 'the bar is gone');
  const after = await toolView(page, 'deleteFile');
  assert.deepEqual([after.state, after.approvalState, after.approvalId], ['output-available', 'allowed', null]);
  assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [{ approvalId, approved: true }], 'one answer POST');
  assert.deepEqual(await answerLog(pi, s), [['approval', 202, { approvalId, approved: true }]]);
  assert.deepEqual(await pageMessages(page), canonicalView(await pi.messages(s)), 'the page shows the canonical history');
  assert.equal((await canonicalPart(pi, s, 'deleteFile')).state, 'output-available');
  await screenshot(page, 'hitl-react-pi-approved');
  clean();
  await context.close();
});

test('react · pi: the approval bar denies with a reason', async () => {
  const s = sessionId('hitl-deny');
  const { page, context, answers, clean } = await open(pi, s);
  await askToDelete(page);
  const [{ approvalId }] = await approvals(page);
  const bar = page.getByTestId('approval-bar');
  await bar.getByTestId('deny-reason').fill('not today');
  await bar.getByTestId('deny').click();
  await answered(page, 'Kept notes.txt.');
  const part = await toolView(page, 'deleteFile');
  assert.deepEqual([part.state, part.approvalState], ['output-denied', 'denied']);
  assert.match(part.denied, /denied it \(not today\)/);
  assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [{ approvalId, approved: false, reason: 'not today' }]);
  const canonical = await canonicalPart(pi, s, 'deleteFile');
  assert.equal(canonical.state, 'output-denied');
  assert.deepEqual([canonical.approval.approved, canonical.approval.reason], [false, 'not today']);
  assert.deepEqual(await pageMessages(page), canonicalView(await pi.messages(s)));
  await screenshot(page, 'hitl-react-pi-denied');
  clean();
  await context.close();
});

test('react · pi: the ask-user card answers a question', async () => {
  const s = sessionId('hitl-ask');
  const { page, context, answers, clean } = await open(pi, s);
  await askColour(page);
  const part = await toolView(page, 'askUser');
  assert.equal(part.state, 'input-available');
  assert.deepEqual(await questions(page), [{ toolCallId: part.toolCallId, question: 'which colour', options: ['red', 'green', 'blue'], error: null }]);
  assert.equal(await toolPart(page, 'askUser').getByTestId('tool-answer').count(), 3, 'the part has the options too');
  assert.equal(await page.getByTestId('approval-bar').count(), 0);
  await screenshot(page, 'hitl-react-pi-question');

  await page.getByTestId('question').locator('[data-testid=answer][data-option=green]').click();
  await answered(page, 'You chose green.');
  assert.equal(await page.getByTestId('question').count(), 0, 'the card is gone');
  assert.equal((await toolView(page, 'askUser')).state, 'output-available');
  assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [{ toolCallId: part.toolCallId, output: 'green' }]);
  assert.deepEqual(await answerLog(pi, s), [['tool-output', 202, { toolCallId: part.toolCallId, output: 'green' }]]);
  assert.deepEqual(await pageMessages(page), canonicalView(await pi.messages(s)));
  await screenshot(page, 'hitl-react-pi-answered');
  clean();
  await context.close();
});

test('react · pi: a reload while a call waits shows it waiting, and the answer still works', async () => {
  const s = sessionId('hitl-reload');
  const { page, context, answers, clean } = await open(pi, s);
  await askToDelete(page);
  const [before] = await approvals(page);
  await page.reload();
  await ready(page);
  await page.getByTestId('approval').first().waitFor();
  assert.deepEqual(await approvals(page), [before], 'the same approval waits after the reload');
  const part = await toolView(page, 'deleteFile');
  assert.deepEqual([part.state, part.approvalState, part.approvalId], ['approval-requested', 'waiting', before.approvalId]);
  await screenshot(page, 'hitl-react-pi-reload-waiting');
  // Answered from the part's own buttons this time.
  await toolPart(page, 'deleteFile').getByTestId('tool-approve').click();
  await answered(page, 'Deleted notes.txt.');
  assert.equal((await toolView(page, 'deleteFile')).state, 'output-available');

  await askColour(page);
  const [question] = await questions(page);
  await page.reload();
  await ready(page);
  await page.getByTestId('question').first().waitFor();
  assert.deepEqual(await questions(page), [question], 'the same question waits after the reload');
  assert.equal((await toolView(page, 'askUser')).state, 'input-available');
  await toolPart(page, 'askUser').locator('[data-testid=tool-answer][data-option=blue]').click();
  await answered(page, 'You chose blue.');
  assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [
    { approvalId: before.approvalId, approved: true },
    { toolCallId: question.toolCallId, output: 'blue' },
  ]);
  assert.deepEqual(await pageMessages(page), canonicalView(await pi.messages(s)));
  await screenshot(page, 'hitl-react-pi-reload-answered');
  clean();
  await context.close();
});

test('react · pi: a failed answer POST is retried with the same body; a refused one shows its error', async () => {
  const flaky = await startServer({ runtime: 'pi', args: [...FAST, '--fail-answers', '1'] });
  try {
    const s = sessionId('hitl-retry');
    const { page, context, answers, clean } = await open(flaky, s);
    // The question's answer: the first POST gets 503, the store retries it by itself.
    await askColour(page);
    const [question] = await questions(page);
    await page.getByTestId('question').locator('[data-testid=answer][data-option=green]').click();
    await answered(page, 'You chose green.');
    assert.equal(answers.length, 2, JSON.stringify(answers));
    assert.equal(answers[0].body, answers[1].body, 'the retry carries the very same body');
    assert.deepEqual(JSON.parse(answers[0].body), { toolCallId: question.toolCallId, output: 'green' });
    assert.deepEqual((await answerLog(flaky, s)).map(([route, st]) => [route, st]), [['tool-output', 503], ['tool-output', 202]]);

    // The same for an approval.
    await flaky.control({ failAnswers: 1 });
    await askToDelete(page);
    const [approval] = await approvals(page);
    await page.getByTestId('approval-bar').getByTestId('approve').click();
    await answered(page, 'Deleted notes.txt.');
    const approvalPosts = answers.filter((a) => a.route === 'approval');
    assert.equal(approvalPosts.length, 2);
    assert.equal(approvalPosts[0].body, approvalPosts[1].body);
    assert.deepEqual(JSON.parse(approvalPosts[0].body), { approvalId: approval.approvalId, approved: true });
    assert.deepEqual((await answerLog(flaky, s)).filter(([r]) => r === 'approval').map(([, st]) => st), [503, 202]);
    await screenshot(page, 'hitl-react-pi-answer-retried');

    // A refusal (404) is not retried: the call waits again, the bar shows why; answering again
    // (the route back) gets through.
    await flaky.control({ notFound: ['approval'] });
    await askToDelete(page);
    const [second] = await approvals(page);
    await page.getByTestId('approval-bar').getByTestId('approve').click();
    await page.getByTestId('approval-bar').getByTestId('pending-error').waitFor({ timeout: 15_000 });
    const [failed] = await approvals(page);
    assert.equal(failed.approvalId, second.approvalId, 'the same call waits again');
    assert.match(failed.error, /404/);
    assert.equal((await toolView(page, 'deleteFile')).state, 'approval-requested', 'the part is back waiting');
    await screenshot(page, 'hitl-react-pi-answer-error');
    await flaky.control({ notFound: [] });
    await page.getByTestId('approval-bar').getByTestId('approve').click();
    await answered(page, 'Deleted notes.txt.');
    assert.equal(await page.getByTestId('approval-bar').count(), 0);
    assert.deepEqual((await answerLog(flaky, s)).filter(([r]) => r === 'approval').map(([, st]) => st), [503, 202, 404, 202]);
    assert.deepEqual(await pageMessages(page), canonicalView(await flaky.messages(s)));
    clean();
    await context.close();
  } finally {
    await flaky.stop();
  }
});

// ----- React · ai-sdk --------------------------------------------------------------------------

test('react · ai-sdk: the approval bar answers AI SDK tool-approval-request too', async () => {
  const s = sessionId('hitl-ai-bar');
  const { page, context, answers, clean } = await open(aiReact, s);
  await askToDelete(page);
  await eventually(async () => (await status(page)) === 'ready', { what: 'the turn ended at the approval request' });
  const [approval] = await approvals(page);
  assert.equal(approval.toolName, 'deleteFile');
  assert.equal(approval.input, 'path: notes.txt');
  assert.equal((await toolView(page, 'deleteFile')).approvalId, approval.approvalId, 'the same id as the part');
  const bar = page.getByTestId('approval-bar');
  await bar.getByTestId('deny-reason').fill('keep it');
  await bar.getByTestId('deny').click();
  await answered(page, 'Kept notes.txt.');
  const part = await toolView(page, 'deleteFile');
  assert.deepEqual([part.state, part.approvalState], ['output-denied', 'denied']);
  assert.match(part.denied, /\(keep it\)/);
  assert.deepEqual(answers, [], 'no answer route in AI SDK mode');
  const chats = (await aiReact.log()).filter((e) => e.route === 'chat' && e.sessionId === s);
  assert.equal(chats.length, 2, 'the question, then one continuation');
  const sent = chats.at(-1).body.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
  assert.deepEqual([sent.state, sent.approval.id, sent.approval.approved, sent.approval.reason], ['approval-responded', approval.approvalId, false, 'keep it']);
  await screenshot(page, 'hitl-react-ai-sdk-bar');

  // A client tool is not a question: its form is on the part, nothing in the pending cards.
  await typeAndEnter(page, 'where am I');
  await page.getByTestId('tool-output-form').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('question').count(), 0);
  clean();
  await context.close();
});

// ----- assistant-ui · pi -----------------------------------------------------------------------

test('assistant-ui · pi: tool UIs answer through respondToApproval and resume', async () => {
  const s = sessionId('hitl-aui-pi');
  const { page, context, answers, clean } = await open(piAui, s);

  // Allow, from the tool UI (assistant-ui's respondToApproval).
  await askToDelete(page);
  const first = await toolView(page, 'deleteFile');
  assert.deepEqual([first.state, first.approvalState], ['approval-requested', 'waiting']);
  assert.deepEqual((await approvals(page)).map((a) => a.approvalId), [first.approvalId], 'the usePending bar lists it');
  await screenshot(page, 'hitl-aui-pi-approval-asked');
  await toolPart(page, 'deleteFile').getByTestId('tool-approve').click();
  await answered(page, 'Deleted notes.txt.');
  const allowed = await toolView(page, 'deleteFile');
  assert.deepEqual([allowed.state, allowed.approvalState], ['output-available', 'allowed']);

  // Deny with a reason, from the tool UI.
  await askToDelete(page);
  const second = await toolView(page, 'deleteFile');
  await toolPart(page, 'deleteFile').getByTestId('tool-deny-reason').fill('not this one');
  await toolPart(page, 'deleteFile').getByTestId('tool-deny').click();
  await answered(page, 'Kept notes.txt.');
  const denied = await toolView(page, 'deleteFile');
  assert.deepEqual([denied.state, denied.approvalState], ['output-denied', 'denied']);
  assert.match(denied.denied, /\(not this one\)/);
  await screenshot(page, 'hitl-aui-pi-denied');

  // A question, answered from the tool UI (assistant-ui's resume).
  await askColour(page);
  const q = await toolView(page, 'askUser');
  assert.equal(q.state, 'input-available');
  assert.deepEqual(await toolPart(page, 'askUser').locator('[data-testid=tool-answer]').evaluateAll((els) => els.map((e) => e.dataset.option)), ['red', 'green', 'blue']);
  assert.deepEqual((await questions(page)).map((x) => x.toolCallId), [q.toolCallId], 'the usePending card lists it');
  await screenshot(page, 'hitl-aui-pi-question');
  await toolPart(page, 'askUser').locator('[data-testid=tool-answer][data-option=green]').click();
  await answered(page, 'You chose green.');
  assert.equal((await toolView(page, 'askUser')).state, 'output-available');

  // A reload while one waits; then answered from the thread-level card (usePending).
  await askColour(page);
  const again = await toolView(page, 'askUser');
  await page.reload();
  await ready(page);
  await page.getByTestId('question').first().waitFor();
  assert.equal((await toolView(page, 'askUser')).state, 'input-available', 'still waiting after the reload');
  assert.equal(await toolPart(page, 'askUser').getByTestId('tool-answer').count(), 3);
  await screenshot(page, 'hitl-aui-pi-reload-waiting');
  await page.getByTestId('question').locator('[data-testid=answer][data-option=red]').click();
  await answered(page, 'You chose red.');

  assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [
    { approvalId: first.approvalId, approved: true },
    { approvalId: second.approvalId, approved: false, reason: 'not this one' },
    { toolCallId: q.toolCallId, output: 'green' },
    { toolCallId: again.toolCallId, output: 'red' },
  ]);
  assert.deepEqual((await answerLog(piAui, s)).map(([, st]) => st), [202, 202, 202, 202]);
  await screenshot(page, 'hitl-aui-pi-answered');
  clean();
  await context.close();
});

// ----- assistant-ui · ai-sdk -------------------------------------------------------------------

test('assistant-ui · ai-sdk: respondToApproval and addResult continue the conversation', async () => {
  const s = sessionId('hitl-aui-ai');
  const { page, context, answers, clean } = await open(aiAui, s);
  const chats = async () => (await aiAui.log()).filter((e) => e.route === 'chat' && e.sessionId === s);

  await askToDelete(page);
  await eventually(async () => (await status(page)) === 'ready', { what: 'the turn ended at the approval request' });
  const asked = await toolView(page, 'deleteFile');
  await screenshot(page, 'hitl-aui-ai-sdk-approval-asked');
  await toolPart(page, 'deleteFile').getByTestId('tool-approve').click();
  await answered(page, 'Deleted notes.txt.');
  const shown = await pageMessages(page);
  assert.deepEqual(shown.map((m) => [m.role, m.text]), [
    ['user', 'please delete notes.txt'],
    ['assistant', 'Answer please delete notes.txt: calling deleteFile. Deleted notes.txt.'],
  ], 'one assistant message, continued');
  assert.equal((await toolView(page, 'deleteFile')).state, 'output-available');
  let sent = (await chats()).at(-1).body.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
  assert.deepEqual([sent.state, sent.approval.id, sent.approval.approved], ['approval-responded', asked.approvalId, true]);
  await screenshot(page, 'hitl-aui-ai-sdk-approved');

  // Denied with a reason.
  await askToDelete(page);
  await eventually(async () => (await status(page)) === 'ready', { what: 'the turn ended at the approval request' });
  await toolPart(page, 'deleteFile').getByTestId('tool-deny-reason').fill('keep it');
  await toolPart(page, 'deleteFile').getByTestId('tool-deny').click();
  await answered(page, 'Kept notes.txt.');
  assert.equal((await toolView(page, 'deleteFile')).state, 'output-denied');
  sent = (await chats()).at(-1).body.messages.at(-1).parts.find((p) => p.type === 'tool-deleteFile');
  assert.deepEqual([sent.approval.approved, sent.approval.reason], [false, 'keep it']);

  // A client tool, answered with assistant-ui's addResult.
  await typeAndEnter(page, 'where am I');
  await page.getByTestId('tool-output-submit').waitFor({ timeout: 30_000 });
  await page.getByTestId('tool-output-input').fill('Lyon');
  await page.getByTestId('tool-output-submit').click();
  await answered(page, 'You are in Lyon.');
  assert.equal((await toolView(page, 'getLocation')).state, 'output-available');
  sent = (await chats()).at(-1).body.messages.at(-1).parts.find((p) => p.type === 'tool-getLocation');
  assert.deepEqual(sent.output, { city: 'Lyon' });
  assert.equal((await chats()).length, 6, 'three questions, three continuations');
  assert.deepEqual(answers, [], 'no answer route in AI SDK mode');
  await screenshot(page, 'hitl-aui-ai-sdk-client-tool');
  clean();
  await context.close();
});

// Differential test: the same chunk streams through the `ai` package (pinned in package.json)
// and through this package's `replayUiMessageStream`; the messages must be deeply equal (a key
// that is absent equals undefined) and both must stop at the same chunk. What exactly the
// oracle runs is described in ./differential/oracle.mjs.
//
// Runs after scripts/build-pkg.sh (it imports ../../pkg/agent_chat_store.js). A failing random stream
// prints its seed and the stream; rerun one seed with DIFF_SEED=<seed> DIFF_STREAMS=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayUiMessageStream } from '../../pkg/agent_chat_store.js';
import { aiReplay, normalise } from './differential/oracle.mjs';
import { cases } from './differential/cases.mjs';
import { cases as scenarios } from './differential/scenarios.mjs';
import { variants } from './differential/variants.mjs';
import { generateStream, prng } from './differential/generate.mjs';

const SEED = Number(process.env.DIFF_SEED ?? 0x5eed);
const STREAMS = Number(process.env.DIFF_STREAMS ?? 1500);

/** Our result, shaped like the oracle's (`finishReason` is not observable there). */
function ours(chunks, options) {
  const r = replayUiMessageStream(chunks, options);
  return { message: normalise(r.message), error: r.error };
}

/**
 * `mergeObjects` on a primitive metadata throws on the first own key of the patch in
 * JavaScript's key order (insertion order); a `serde_json` map is sorted, so the key named
 * may differ. Everything else in the text must be equal.
 */
const keyless = (m) => m?.replace(/^(Cannot use 'in' operator to search for ')[^]*?(' in )/, '$1…$2');

/** Compares one stream: `{diff, expected}`, `diff` describing a difference if any. */
async function differ(chunks, options) {
  const expected = await aiReplay(chunks, options);
  const actual = ours(chunks, options);
  try {
    assert.deepStrictEqual(actual.message, expected.message);
    if (expected.error === undefined) assert.equal(actual.error, undefined, 'an error where the ai package has none');
    else if (expected.error.kind === 'processor') assert.equal(keyless(actual.error?.message), keyless(expected.error.message));
    else assert.ok(actual.error, `no error where the ai package's chunk schema rejects a chunk: ${expected.error.message.split('\n')[0]}`);
  } catch (e) {
    const show = (v) => JSON.stringify(v, null, 1);
    const ai = { ...expected, error: expected.error && { ...expected.error, message: expected.error.message.slice(0, 300) } };
    const diff = `${e.message}\n--- chunks\n${show(chunks)}\n--- options\n${show(options)}\n--- ai\n${show(ai)}\n--- ours\n${show(actual)}`;
    return { diff, expected };
  }
  return { diff: undefined, expected };
}

/** The message the `ai` package builds from `chunks`, to continue. */
async function built(chunks) {
  const { message, error } = await aiReplay(chunks);
  assert.equal(error, undefined, 'the lastMessage of a case must build without error');
  return message;
}

test('every hand-written case gives what the ai package gives, renaming and resetting', async () => {
  const failures = [];
  for (const c of cases) {
    // The processor's default (a `start` with another id renames the message, as `useChat`
    // does), and `readUIMessageStream`'s reset.
    for (const reset of [false, true]) {
      const options = { ...(c.options ?? {}), ...(reset ? { resetOnMessageIdChange: true } : {}) };
      if (c.lastFrom) options.lastMessage = await built(c.lastFrom);
      const { diff: d } = await differ(c.chunks, options);
      if (d) failures.push(`case "${c.name}"${reset ? ' (resetOnMessageIdChange)' : ''}: ${d}`);
    }
  }
  assert.equal(failures.length, 0, failures.join('\n\n'));
});

// Hand-written scenarios of the chunk families (scenarios.mjs, grouped by `topic`), and variants
// that walk the branches of the `ai` package's 7.0.173 source (lone surrogates split over
// deltas among them).
test('the hand-written scenarios and their variants give what the ai package gives', async () => {
  const failures = [];
  for (const c of [...scenarios, ...variants]) {
    const options = { ...(c.options ?? {}) };
    if (c.lastFrom) options.lastMessage = await built(c.lastFrom);
    const { diff: d } = await differ(c.chunks, options);
    if (d) failures.push(`${c.topic}: "${c.name}": ${d}`);
  }
  assert.equal(failures.length, 0, failures.join('\n\n'));
});

test(`${STREAMS} seeded random streams (seed ${SEED}) give what the ai package gives`, async () => {
  const r = prng(SEED);
  let withError = 0;
  let continued = 0;
  for (let i = 0; i < STREAMS; i++) {
    const { chunks, options } = generateStream(r);
    if (r.chance(0.25)) options.resetOnMessageIdChange = true;
    if (r.chance(0.2)) {
      // Continue a message the `ai` package built from another random stream.
      const prefix = generateStream(r).chunks;
      const { message, error } = await aiReplay(prefix);
      if (!error && message.parts.length > 0) {
        options.lastMessage = message;
        continued++;
      }
    }
    const { diff, expected } = await differ(chunks, options);
    if (diff) assert.fail(`random stream ${i} of seed ${SEED} (DIFF_SEED=${SEED} DIFF_STREAMS=${i + 1}):\n${diff}`);
    if (expected.error) withError++;
  }
  // The generator must keep exercising both paths.
  assert.ok(withError > STREAMS / 20 && withError < STREAMS * 0.8, `${withError} of ${STREAMS} streams stopped on an error`);
  assert.ok(continued > STREAMS / 20, `${continued} streams continued a message`);
});

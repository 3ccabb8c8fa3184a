import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readChunks, sid, startServer } from './helpers.mjs';

let pi;
let aiSdk;
before(async () => {
  [pi, aiSdk] = await Promise.all([startServer(['--tps', '0']), startServer(['--runtime', 'ai-sdk', '--tps', '0'])]);
});
after(async () => {
  await Promise.all([pi?.stop(), aiSdk?.stop()]);
});

const caps = (s, id) => fetch(`${s.api}/capabilities?sessionId=${encodeURIComponent(id)}`);

test('pi runtime: native follow-up, the server owns history', async () => {
  const res = await caps(pi, sid('caps'));
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.nativeFollowUp, true);
  assert.equal(body.aiSdkOwnsHistory, false);
  assert.equal(body.runtime, 'pi');
});

test('ai-sdk runtime: no native follow-up, the AI SDK owns history', async () => {
  const res = await caps(aiSdk, sid('caps'));
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.nativeFollowUp, false);
  assert.equal(body.aiSdkOwnsHistory, true);
  assert.equal(body.runtime, 'ai-sdk');
});

test('a session keeps the runtime it was created with', async () => {
  const id = sid('keep');
  const { chunks } = await readChunks(await pi.chat({ sessionId: id, message: 'hello words:2' }));
  assert.equal(chunks[0].type, 'data-pi-mode');
  await pi.control({ runtime: 'ai-sdk' });
  try {
    assert.equal((await (await caps(pi, id)).json()).nativeFollowUp, true, 'existing pi session');
    assert.equal((await (await caps(pi, sid('new'))).json()).nativeFollowUp, false, 'new sessions follow the switch');
  } finally {
    await pi.control({ runtime: 'pi' });
  }
});

test('the notFound fault answers a route with 404, CORS headers included', async () => {
  await pi.control({ notFound: ['capabilities'] });
  try {
    const res = await fetch(`${pi.api}/capabilities?sessionId=x`, { headers: { origin: 'http://localhost:5173' } });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    assert.equal((await res.json()).error.code, 'not_found');
  } finally {
    await pi.control({ notFound: [] });
  }
  assert.equal((await caps(pi, 'x')).status, 200);
});

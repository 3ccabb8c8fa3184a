// The root entry's decoder of the module bytes it carries (pkg/inflate.js): base64 and raw
// DEFLATE, checked against Node's zlib on every block kind, and refusing corrupt input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { fromBase64, inflateRaw } from '../../pkg/inflate.js';

const root = resolve(import.meta.dirname, '../..');

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

/** Inputs zlib encodes with stored, fixed-Huffman and dynamic-Huffman blocks, and long matches. */
function inputs() {
  const r = rng(7);
  const out = [new Uint8Array(0), Uint8Array.of(42), new TextEncoder().encode('abc'.repeat(1000))];
  const noise = new Uint8Array(100_000).map(() => (r() * 256) | 0);
  out.push(noise);
  const text = new TextEncoder().encode(Array.from({ length: 20_000 }, () => ['chat', 'store', 'wasm', 'delta', ' ', '\n'][(r() * 6) | 0]).join(''));
  out.push(text);
  const mixed = new Uint8Array(300_000);
  for (let i = 0; i < mixed.length; i++) mixed[i] = r() < 0.3 ? (r() * 256) | 0 : mixed[Math.max(0, i - 1 - ((r() * 300) | 0))];
  out.push(mixed);
  return out;
}

test('inflateRaw gives back what zlib deflated, at every level (stored, fixed and dynamic blocks)', () => {
  for (const input of inputs()) {
    for (const level of [0, 1, 6, 9]) {
      for (const strategy of [0, 2 /* Z_HUFFMAN_ONLY */, 3 /* Z_RLE */, 4 /* Z_FIXED */]) {
        const packed = deflateRawSync(input, { level, strategy });
        const got = inflateRaw(packed, input.length);
        assert.ok(Buffer.from(got).equals(Buffer.from(input)), `level ${level} strategy ${strategy}, ${input.length} bytes`);
      }
    }
  }
});

test('the package carries the same module bytes as its web build', async () => {
  const { default: text, size } = await import('../../pkg/agent_chat_store_wasm.js');
  const wasm = readFileSync(resolve(root, 'pkg/web/agent_chat_store_bg.wasm'));
  assert.equal(size, wasm.length);
  assert.ok(Buffer.from(inflateRaw(fromBase64(text), size)).equals(wasm));
});

test('fromBase64 decodes every padding, also without the native decoder', () => {
  const native = Uint8Array.fromBase64;
  const buffer = globalThis.Buffer;
  try {
    for (const fallback of [false, true]) {
      if (fallback) { delete Uint8Array.fromBase64; globalThis.Buffer = undefined; }
      for (let n = 0; n < 40; n++) {
        const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 97 + n) & 255);
        const text = buffer.from(bytes).toString('base64');
        assert.deepEqual(fromBase64(text), bytes, `${n} bytes, fallback ${fallback}`);
        assert.deepEqual(fromBase64(text.replace(/=+$/, '')), bytes, `${n} bytes unpadded`);
      }
    }
  } finally {
    if (native) Uint8Array.fromBase64 = native;
    globalThis.Buffer = buffer;
  }
});

test('corrupt or cut deflate data throws instead of producing a wrong module', () => {
  const input = inputs()[5];
  const packed = deflateRawSync(input, { level: 9 });
  assert.throws(() => inflateRaw(packed.subarray(0, packed.length >> 1), input.length), /inflate/);
  assert.throws(() => inflateRaw(packed, input.length - 1), /inflate/);
  assert.throws(() => inflateRaw(packed, input.length + 1), /inflate/);
  assert.throws(() => inflateRaw(Uint8Array.of(0xff, 0xff, 0xff), 10), /inflate/); // block type 3
  // A flipped bit may still decode to the right length (DEFLATE has no checksum; WebAssembly's
  // validation refuses such a module), but it must never end in anything but our Error.
  const r = rng(3);
  for (let k = 0; k < 200; k++) {
    const bad = Uint8Array.from(packed);
    bad[(r() * bad.length) | 0] ^= 1 << ((r() * 8) | 0);
    try {
      assert.equal(inflateRaw(bad, input.length).length, input.length);
    } catch (e) {
      assert.ok(e instanceof Error && /^inflate: /.test(e.message), String(e));
    }
  }
});

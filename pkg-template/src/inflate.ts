// Base64 and raw DEFLATE (RFC 1951) decoding, for the module bytes the package carries in its
// JS (agent_chat_store_wasm.js). Carrying the bytes in JS is what lets every bundler, dev server
// and runtime load the package with no WebAssembly support of its own; deflating them first
// keeps the gzip transfer size of the base64 text at that of the .wasm (base64 alone would be
// +29 %). Synchronous on purpose: `import { ChatStore } from "agent-chat-store"` needs no await.

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Decodes standard base64 (with or without padding). */
export function fromBase64(text: string): Uint8Array {
  // ES2026's Uint8Array.fromBase64, where the runtime has it (not in TypeScript's ES2022 lib).
  type WithFromBase64 = { fromBase64?: (text: string) => Uint8Array };
  if (typeof (Uint8Array as WithFromBase64).fromBase64 === "function") return (Uint8Array as WithFromBase64).fromBase64!(text);
  // Node before 25. Through globalThis: a bare `Buffer` makes webpack setups that provide it
  // (Next.js's client build) bundle a Buffer polyfill into every page.
  type NodeBufferClass = ((...args: never[]) => unknown) & { from?: (text: string, encoding: string) => Uint8Array };
  const NodeBuffer = (globalThis as { Buffer?: NodeBufferClass }).Buffer;
  if (typeof NodeBuffer === "function" && typeof NodeBuffer.from === "function") {
    const b = NodeBuffer.from(text, "base64");
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  }
  const value = new Uint8Array(128);
  for (let i = 0; i < 64; i++) value[B64.charCodeAt(i)] = i;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61) end--; // '='
  const out = new Uint8Array((end * 3) >> 2);
  let o = 0;
  let i = 0;
  for (; i + 4 <= end; i += 4) {
    const n = (value[text.charCodeAt(i)] << 18) | (value[text.charCodeAt(i + 1)] << 12)
      | (value[text.charCodeAt(i + 2)] << 6) | value[text.charCodeAt(i + 3)];
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  if (end - i >= 2) {
    const n = (value[text.charCodeAt(i)] << 18) | (value[text.charCodeAt(i + 1)] << 12)
      | (end - i === 3 ? value[text.charCodeAt(i + 2)] << 6 : 0);
    out[o++] = n >> 16;
    if (end - i === 3) out[o++] = (n >> 8) & 255;
  }
  return out;
}

const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

// A canonical Huffman code as one lookup table indexed by the next `bits` input bits (DEFLATE
// sends codes most significant bit first, so each code is entered bit-reversed). An entry is
// `symbol << 4 | length`; 0 marks a bit pattern no code starts with.
interface Code {
  table: Uint16Array;
  bits: number;
}

function huffman(lengths: Uint8Array): Code {
  let bits = 0;
  const count = new Uint16Array(16);
  for (const l of lengths) { count[l]++; if (l > bits) bits = l; }
  count[0] = 0;
  const next = new Uint16Array(16);
  for (let l = 1, code = 0; l < 16; l++) next[l] = code = (code + count[l - 1]) << 1;
  const table = new Uint16Array(1 << bits);
  for (let symbol = 0; symbol < lengths.length; symbol++) {
    const l = lengths[symbol];
    if (!l) continue;
    let code = next[l]++;
    let reversed = 0;
    for (let k = 0; k < l; k++, code >>= 1) reversed = (reversed << 1) | (code & 1);
    for (let j = reversed; j < table.length; j += 1 << l) table[j] = (symbol << 4) | l;
  }
  return { table, bits };
}

let fixed: [Code, Code] | undefined;
function fixedCodes(): [Code, Code] {
  if (!fixed) {
    const lit = new Uint8Array(288).fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280);
    fixed = [huffman(lit), huffman(new Uint8Array(30).fill(5))];
  }
  return fixed;
}

// The decoder's state. Module variables rather than one big function's locals: V8 tiers a
// function up by how much of its own bytecode ran, so the hot loop is a small function of its
// own (`codes`), optimised after a few blocks, where one large function stayed interpreted for
// most of the only run a page load makes.
// Set for one `inflateRaw` run (the functions below run only inside one).
let src: Uint8Array;
let end = 0;
let pos = 0;
let buf = 0; // bits not yet used, least significant first
let cnt = 0; // how many
let out: Uint8Array;
let o = 0;

// Reading past the end gives zero bits; a stream that needs more than a few of them is corrupt.
function fill(n: number): void {
  while (cnt < n) {
    if (pos > end + 4) throw new Error("inflate: input ends early");
    buf |= (src[pos++] | 0) << cnt;
    cnt += 8;
  }
}

function take(n: number): number {
  fill(n);
  const v = buf & ((1 << n) - 1);
  buf >>>= n;
  cnt -= n;
  return v;
}

function decode(code: Code): number {
  fill(code.bits);
  const e = code.table[buf & ((1 << code.bits) - 1)];
  const l = e & 15;
  if (!l) throw new Error("inflate: invalid code");
  buf >>>= l;
  cnt -= l;
  return e >> 4;
}

// One block's literals and matches, up to its end code. The literal/length decode is written
// out here: a call per symbol is most of the time of a run that is not optimised yet.
function codes(lit: Code, dist: Code): void {
  const size = out.length;
  const table = lit.table;
  const bits = lit.bits;
  const mask = (1 << bits) - 1;
  for (;;) {
    while (cnt < bits) { buf |= (src[pos++] | 0) << cnt; cnt += 8; }
    const e = table[buf & mask];
    const l = e & 15;
    if (!l || pos > end + 4) throw new Error("inflate: invalid code");
    buf >>>= l;
    cnt -= l;
    let s = e >> 4;
    if (s < 256) {
      if (o >= size) throw new Error("inflate: output too long");
      out[o++] = s;
      continue;
    }
    if (s === 256) return;
    s -= 257;
    if (s >= 29) throw new Error("inflate: bad length");
    const len = LEN_BASE[s] + take(LEN_EXTRA[s]);
    const d = decode(dist);
    if (d >= 30) throw new Error("inflate: bad distance");
    const back = DIST_BASE[d] + take(DIST_EXTRA[d]);
    if (back > o || o + len > size) throw new Error("inflate: bad match");
    if (back >= len) out.copyWithin(o, o - back, o - back + len);
    else for (let i = 0; i < len; i++) out[o + i] = out[o + i - back];
    o += len;
  }
}

function dynamicCodes(): [Code, Code] {
  const nlit = take(5) + 257;
  const ndist = take(5) + 1;
  const nlen = take(4) + 4;
  const cl = new Uint8Array(19);
  for (let i = 0; i < nlen; i++) cl[CODE_LENGTH_ORDER[i]] = take(3);
  const clCode = huffman(cl);
  const lengths = new Uint8Array(nlit + ndist);
  for (let i = 0; i < lengths.length;) {
    const s = decode(clCode);
    if (s < 16) { lengths[i++] = s; continue; }
    const repeat = s === 16 ? 3 + take(2) : s === 17 ? 3 + take(3) : 11 + take(7);
    if (i + repeat > lengths.length || (s === 16 && i === 0)) throw new Error("inflate: bad lengths");
    lengths.fill(s === 16 ? lengths[i - 1] : 0, i, i + repeat);
    i += repeat;
  }
  return [huffman(lengths.subarray(0, nlit)), huffman(lengths.subarray(nlit))];
}

/** Inflates raw DEFLATE data whose inflated length is `size`. Throws on corrupt input. */
export function inflateRaw(data: Uint8Array, size: number): Uint8Array {
  src = data;
  end = data.length;
  pos = buf = cnt = o = 0;
  out = new Uint8Array(size);
  try {
    let last = 0;
    do {
      last = take(1);
      const type = take(2);
      if (type === 0) {
        take(cnt & 7); // to the byte boundary
        const len = take(16);
        take(16); // its complement
        if (o + len > size) throw new Error("inflate: output too long");
        for (let i = 0; i < len; i++) out[o++] = take(8);
      } else if (type === 1) codes(...fixedCodes());
      else if (type === 2) codes(...dynamicCodes());
      else throw new Error("inflate: bad block type");
    } while (!last);
    if (o !== size) throw new Error("inflate: output too short");
    return out;
  } finally {
    // Neither the input nor the output is held once returned.
    src = out = undefined as unknown as Uint8Array;
  }
}

// The replay helpers, a wasm module of their own (scripts/build-pkg.sh builds it without the
// store). The root and `./web` entries re-export them; a page that uses none of them loads
// none of their code. The module is compiled on the first call, not on import: nothing happens
// when this file is evaluated, so a bundler may drop it, or take the functions from it
// directly, as package.json's `sideEffects` allows.
import * as glue from "./agent_chat_store_bg.js";
import { fromBase64, inflateRaw } from "../inflate.js";
import wasm, { size } from "./agent_chat_store_wasm.js";

let ready = false;
function init() {
  if (!ready) {
    glue.initSync({ module: inflateRaw(fromBase64(wasm), size) });
    ready = true;
  }
}

export function replayUiMessageStream(chunks, options) {
  init();
  return glue.replayUiMessageStream(chunks, options);
}

export function replayPiStream(chunks) {
  init();
  return glue.replayPiStream(chunks);
}

export function replayPiNativeEvents(frames, options) {
  init();
  return glue.replayPiNativeEvents(frames, options);
}

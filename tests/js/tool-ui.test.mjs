// The framework-free tool renderer registry of the built package (`agent-chat-store/tool-ui`,
// pkg/tool-ui.js): which renderer a tool part gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  isToolPart, matchToolRenderer, resolveToolRenderer, toolAlias, toolDetailsOf, toolNameOf,
} from '../../pkg/tool-ui.js';

const root = resolve(import.meta.dirname, '../..');

// Renderers are opaque to the registry: plain tokens are enough.
const Subagent = { name: 'Subagent' };
const PiSubagent = { name: 'PiSubagent' };
const Ls = { name: 'Ls' };
const Fallback = { name: 'Fallback' };

const dyn = (toolName, extra = {}) => ({ type: 'dynamic-tool', toolName, toolCallId: 'c1', state: 'input-available', input: {}, ...extra });
const typed = (name, extra = {}) => ({ type: `tool-${name}`, toolCallId: 'c2', state: 'input-available', input: {}, ...extra });

test('namespaced: the exact namespaced name wins over its alias', () => {
  const r = { 'pi.subagent': PiSubagent, subagent: Subagent };
  assert.equal(resolveToolRenderer(dyn('pi.subagent'), r), PiSubagent);
  assert.equal(resolveToolRenderer(typed('pi.subagent'), r), PiSubagent);
  assert.deepEqual(matchToolRenderer(dyn('pi.subagent'), r), { key: 'pi.subagent', via: 'name', renderer: PiSubagent });
});

test('alias: pi.subagent finds a `subagent` entry (the segment after the last dot)', () => {
  const r = { subagent: Subagent, fallback: Fallback };
  assert.equal(resolveToolRenderer(dyn('pi.subagent'), r), Subagent);
  assert.equal(resolveToolRenderer(typed('pi.subagent'), r), Subagent);
  assert.equal(resolveToolRenderer(dyn('harness.pi.subagent'), r), Subagent);
  assert.deepEqual(matchToolRenderer(dyn('pi.subagent'), r), { key: 'subagent', via: 'alias', renderer: Subagent });
  // Only the last segment: `pi` is not an alias of `pi.subagent`.
  assert.equal(resolveToolRenderer(dyn('pi.subagent'), { pi: Ls }), undefined);
});

test('rendererId wins over the exact name, the alias and the fallback', () => {
  const r = { 'pi-subagent': PiSubagent, 'pi.subagent': Subagent, subagent: Subagent, ls: Ls, fallback: Fallback };
  assert.equal(resolveToolRenderer(dyn('pi.subagent', { ui: { rendererId: 'pi-subagent' } }), r), PiSubagent);
  // Any tool can ask for a renderer by id, whatever its name.
  assert.equal(resolveToolRenderer(typed('ls', { ui: { rendererId: 'pi-subagent', details: {} } }), r), PiSubagent);
  assert.deepEqual(matchToolRenderer(dyn('x', { ui: { rendererId: 'pi-subagent' } }), r).via, 'rendererId');
  // An id nobody registered falls through to the name.
  assert.equal(resolveToolRenderer(typed('ls', { ui: { rendererId: 'unknown-kind' } }), r), Ls);
  // ui without rendererId (catalog hints only) changes nothing.
  assert.equal(resolveToolRenderer(typed('ls', { ui: { displayGroup: 'workspace', icon: 'folder' } }), r), Ls);
});

test('exact name: tool-NAME and dynamic-tool parts', () => {
  const r = { ls: Ls, fallback: Fallback };
  assert.equal(resolveToolRenderer(typed('ls'), r), Ls);
  assert.equal(resolveToolRenderer(dyn('ls'), r), Ls);
  assert.equal(toolNameOf(typed('pi.subagent')), 'pi.subagent');
  assert.equal(toolNameOf(dyn('echo')), 'echo');
  assert.deepEqual(matchToolRenderer(typed('ls'), r), { key: 'ls', via: 'name', renderer: Ls });
});

test('fallback: used when nothing else matches', () => {
  const r = { ls: Ls, fallback: Fallback };
  assert.equal(resolveToolRenderer(dyn('echo'), r), Fallback);
  assert.equal(resolveToolRenderer(dyn('pi.subagent'), r), Fallback);
  assert.equal(resolveToolRenderer(dyn('pi.subagent', { ui: { rendererId: 'pi-subagent' } }), r), Fallback);
  assert.deepEqual(matchToolRenderer(dyn('echo'), r), { key: 'fallback', via: 'fallback', renderer: Fallback });
});

test('no fallback: undefined', () => {
  assert.equal(resolveToolRenderer(dyn('echo'), { ls: Ls }), undefined);
  assert.equal(resolveToolRenderer(dyn('echo'), {}), undefined);
  assert.equal(resolveToolRenderer(dyn('echo'), undefined), undefined);
  assert.equal(resolveToolRenderer(dyn('echo'), null), undefined);
  assert.equal(matchToolRenderer(dyn('echo'), { ls: Ls }), undefined);
});

test('only tool parts resolve; null entries are skipped; Maps work; prototype keys never match', () => {
  const r = { fallback: Fallback, ls: null, echo: undefined };
  assert.equal(resolveToolRenderer({ type: 'text', text: 'hi' }, r), undefined);
  assert.equal(resolveToolRenderer({ type: 'data-tool-ui', data: {} }, r), undefined);
  assert.equal(resolveToolRenderer(null, r), undefined);
  assert.equal(isToolPart({ type: 'text' }), false);
  assert.equal(isToolPart(dyn('ls')), true);
  assert.equal(resolveToolRenderer(dyn('ls'), r), Fallback, 'a null entry is no entry');
  assert.equal(resolveToolRenderer(dyn('echo'), r), Fallback);
  const map = new Map([['pi-subagent', PiSubagent], ['subagent', Subagent]]);
  assert.equal(resolveToolRenderer(dyn('pi.subagent'), map), Subagent);
  assert.equal(resolveToolRenderer(dyn('ls', { ui: { rendererId: 'pi-subagent' } }), map), PiSubagent);
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'x.constructor']) {
    assert.equal(resolveToolRenderer(dyn(name), { ls: Ls }), undefined, name);
    assert.equal(resolveToolRenderer(dyn('ls', { ui: { rendererId: name } }), { ls: Ls }), Ls, name);
  }
});

test('toolAlias and toolDetailsOf', () => {
  assert.equal(toolAlias('pi.subagent'), 'subagent');
  assert.equal(toolAlias('a.b.c'), 'c');
  assert.equal(toolAlias('ls'), undefined);
  assert.equal(toolAlias('trailing.'), undefined);
  assert.equal(toolAlias(undefined), undefined);
  const progress = { uiKind: 'pi-subagent', status: 'running' };
  const done = { uiKind: 'pi-subagent', status: 'done' };
  assert.equal(toolDetailsOf(dyn('pi.subagent', { ui: { details: progress } })), progress);
  assert.equal(toolDetailsOf(dyn('pi.subagent', { details: done, ui: { details: done } })), done);
  assert.equal(toolDetailsOf(dyn('pi.subagent', { details: done })), done, 'without ui: the part\'s own details');
  assert.equal(toolDetailsOf(dyn('ls', { ui: { icon: 'folder' } })), undefined);
});

test('the package exports ./tool-ui (types and code) and ships the files', () => {
  const pkg = JSON.parse(readFileSync(resolve(root, 'pkg/package.json'), 'utf8'));
  assert.deepEqual(pkg.exports['./tool-ui'], { types: './tool-ui.d.ts', default: './tool-ui.js' });
  for (const f of ['tool-ui.js', 'tool-ui.d.ts']) {
    assert.ok(pkg.files.includes(f), f);
    assert.ok(existsSync(resolve(root, 'pkg', f)), f);
  }
  // react.js re-exports the registry (one import for React apps).
  assert.match(readFileSync(resolve(root, 'pkg/react.js'), 'utf8'), /export \* from "\.\/tool-ui\.js"/);
});

// `pi.subagent`: the pi runtime's harness-only tool. It hands a task to a nested pi agent (a
// second real `Agent`, driven by the same scripted faux model, with `ls` and `echo` but not
// `pi.subagent` itself) and returns the nested agent's last answer as the tool's text.
//
// The structured UI data travels as typed metadata, never as text to parse:
// - progress, while the nested run goes on: `onUpdate({content, details})` (pi's own tool
//   update callback) with `details.status: 'running'`; the projection (pi-runtime.mjs) turns
//   every such update into a `data-tool-ui` chunk keyed by the tool call;
// - the result: `details` of the tool result (`data-pi-tool-result.details`, and the tool part's
//   `details` in the canonical history), `status: 'done'` or `'error'`.
//
// details = {
//   uiKind: 'pi-subagent',
//   task: string,
//   status: 'running' | 'done' | 'error',
//   steps: [{id, kind: 'model' | 'tool', label, status: 'running' | 'done' | 'error', toolName?}],
//   transcript: [{role: 'user' | 'assistant' | 'tool', text, toolName?, isError?}],
//   error?: string,                       (status 'error')
// }
import { SUBAGENT_TOOL } from './script.mjs';
import { TOOL_DESCRIPTIONS, subagentParameters } from './tools.mjs';

export const SUBAGENT_UI_KIND = 'pi-subagent';

function textOf(content) {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
}

function clip(text, max = 80) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Runs `task` on a fresh nested agent from `createAgent()`.
 * `onProgress(details)` gets a copy of the details after every step (status `running`).
 * Resolves with `{summary, details, isError}`.
 * @param {{task: string, createAgent: () => import('@earendil-works/pi-agent-core').Agent,
 *   signal?: AbortSignal, onProgress?: (details: object) => void}} opts
 */
export async function runSubagent({ task, createAgent, signal, onProgress }) {
  const details = { uiKind: SUBAGENT_UI_KIND, task, status: 'running', steps: [], transcript: [] };
  // One report per change (a tool's end and its result message change the same thing once).
  let last = '';
  const report = () => {
    const json = JSON.stringify(details);
    if (json === last) return;
    last = json;
    onProgress?.(JSON.parse(json));
  };
  const agent = createAgent();
  const toolSteps = new Map();
  let modelSteps = 0;
  agent.subscribe((e) => {
    switch (e.type) {
      case 'message_end': {
        const m = e.message;
        if (m.role === 'user') {
          details.transcript.push({ role: 'user', text: textOf(m.content) });
        } else if (m.role === 'assistant') {
          const text = textOf(m.content);
          const calls = m.content.filter((b) => b.type === 'toolCall').map((b) => b.name);
          const failed = m.stopReason === 'error' || m.stopReason === 'aborted';
          details.transcript.push({ role: 'assistant', text });
          details.steps.push({
            id: `model-${++modelSteps}`,
            kind: 'model',
            label: failed ? `model ${m.stopReason}` : calls.length ? `plan: call ${calls.join(', ')}` : `answer: ${clip(text)}`,
            status: failed ? 'error' : 'done',
          });
        } else if (m.role === 'toolResult') {
          details.transcript.push({ role: 'tool', toolName: m.toolName, text: textOf(m.content), ...(m.isError ? { isError: true } : {}) });
        }
        report();
        break;
      }
      case 'tool_execution_start': {
        const step = { id: e.toolCallId, kind: 'tool', toolName: e.toolName, label: `${e.toolName} ${JSON.stringify(e.args ?? {})}`, status: 'running' };
        toolSteps.set(e.toolCallId, step);
        details.steps.push(step);
        report();
        break;
      }
      case 'tool_execution_end': {
        const step = toolSteps.get(e.toolCallId);
        if (step) step.status = e.isError ? 'error' : 'done';
        report();
        break;
      }
      default:
        break;
    }
  });
  const abort = () => agent.abort();
  signal?.addEventListener('abort', abort, { once: true });
  report(); // started: nothing done yet
  let thrown;
  try {
    if (signal?.aborted) throw new Error('aborted before the subagent started');
    await agent.prompt({ role: 'user', content: [{ type: 'text', text: task }], timestamp: Date.now() });
  } catch (e) {
    thrown = e instanceof Error ? e.message : String(e);
  } finally {
    signal?.removeEventListener('abort', abort);
  }
  const answer = agent.state.messages.filter((m) => m.role === 'assistant').at(-1);
  const error =
    thrown ??
    (signal?.aborted || answer?.stopReason === 'aborted'
      ? 'the subagent was stopped'
      : answer?.stopReason === 'error'
        ? answer.errorMessage ?? 'the subagent\'s model failed'
        : answer
          ? undefined
          : 'the subagent gave no answer');
  details.status = error === undefined ? 'done' : 'error';
  if (error !== undefined) details.error = error;
  const summary = error === undefined ? textOf(answer.content) : `subagent failed: ${error}`;
  return { summary, details: structuredClone(details), isError: error !== undefined };
}

/**
 * The `pi.subagent` AgentTool. `createAgent()` makes the nested agent (the caller gives it the
 * same scripted model and the tools a subagent has).
 */
export function subagentTool(createAgent) {
  return {
    name: SUBAGENT_TOOL,
    label: 'subagent',
    description: TOOL_DESCRIPTIONS[SUBAGENT_TOOL],
    parameters: subagentParameters,
    execute: async (_toolCallId, params, signal, onUpdate) => {
      const task = typeof params?.task === 'string' ? params.task : '';
      const r = await runSubagent({
        task,
        createAgent,
        signal,
        onProgress: (details) => onUpdate?.({ content: [{ type: 'text', text: `subagent ${details.status}: ${details.steps.length} steps` }], details }),
      });
      return { content: [{ type: 'text', text: r.summary }], details: r.details, ...(r.isError ? { isError: true } : {}) };
    },
  };
}

import { childWorkflowId } from '../../src/contracts/workflow-ids';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeChildren } from '../../src/activities/orchestration-activities';
import { httpTransport } from '../../src/cli/api-transport';
import type { CliContext } from '../../src/cli/cli-context';
import { resultCommand } from '../../src/cli/delegation-commands';
import { inlineTextLimit } from '../../src/contracts/limits/workflow';
import type { ModelRequest } from '../../src/contracts/model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { toolResults } from '../support/conversation-scripts';
import { eventually, json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * A child's whole output stays out of its parent's history (SEMANTICS §4): a session's foreground child
 * answers with more than the inline limit; the parent's history holds a preview and a reference only,
 * while the parent's model, `load` of the finished task, the API and the CLI still get the whole text.
 * A structured result's JSON comes back whole through the API, `structured` included.
 */

/** Every line different, so a preview and the whole text tell apart. */
const longAnswer = Array.from({ length: 40 }, (_, line) => `Line ${line + 1} of the child's long answer.`).join('\n');
const lastLine = "Line 40 of the child's long answer.";
/** A structured result whose JSON is longer than the inline limit. */
const longStructured = { lines: Array.from({ length: 30 }, (_, line) => `Structured line ${line + 1} of the answer.`) };

function firstUser(request: ModelRequest): string {
  return request.messages.find((message) => message.role === 'user')?.content ?? '';
}

/** The session delegates, loads the finished task, peeks at it, then answers; the child answers at length. */
function answer(request: ModelRequest): ScriptStep {
  const task = firstUser(request);
  if (task.includes('[long-child]')) return { text: longAnswer };
  if (task.includes('[structured-child]')) return { toolCalls: [{ id: 'out-1', name: 'final_output', arguments: longStructured }] };
  const done = toolResults(request).length;
  if (task.includes('structured please')) {
    if (done === 0) return { toolCalls: [{ id: 'delegate-structured', name: 'delegate', arguments: { instructions: 'list the lines [structured-child]', description: 'structured', output_schema: { type: 'object', properties: { lines: { type: 'array', items: { type: 'string' } } }, required: ['lines'] } } }] };
    return { text: 'got the lines' };
  }
  if (done === 0) return { toolCalls: [{ id: 'delegate-long', name: 'delegate', arguments: { instructions: 'write it all down [long-child]', description: 'long answer' } }] };
  if (done === 1) return { toolCalls: [{ id: 'load-long', name: 'load', arguments: { source: 'task-1' } }] };
  if (done === 2) return { toolCalls: [{ id: 'peek-long', name: 'load', arguments: { source: 'task-1', peek: true } }] };
  return { text: 'it is all written down' };
}

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ answer });
});
afterAll(async () => {
  await stack?.stop();
});

/** Every payload of a workflow's history (all its runs' events), decoded as text. */
async function historyTexts(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) {
      texts.push(Buffer.from(value).toString('utf8'));
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const inner of Array.isArray(value) ? value : Object.values(value)) walk(inner);
  };
  walk(history.events);
  return texts;
}

function sessionRequests(message: string): ModelRequest[] {
  return stack.model.requests.filter((request) => firstUser(request) === message);
}

async function startSession(message: string): Promise<string> {
  const started = await stack.request('/v1/sessions', postJson({ label: 'long child', message }));
  expect(started.status).toBe(201);
  const { id } = (await json(started)) as { id: string };
  return id;
}

async function replied(id: string, expected: string): Promise<void> {
  await eventually(async () => {
    const body = await json(await stack.request(`/v1/sessions/${encodeURIComponent(id)}`));
    const entries = (body.transcript as { entries: { role: string; text: string }[] }).entries;
    return entries.some((entry) => entry.role === 'assistant' && entry.text === expected) ? true : undefined;
  }, 30_000);
}

describe("a child's output longer than the inline limit", () => {
  const message = 'have it written down';
  let id = '';
  beforeAll(async () => {
    expect(longAnswer.length).toBeGreaterThan(inlineTextLimit);
    id = await startSession(message);
    await replied(id, 'it is all written down');
  });

  it("the parent's history holds no copy of the whole text, only a preview and a reference", async () => {
    const texts = await historyTexts(stack.client.workflow.getHandle(id));
    expect(texts.some((text) => text.includes("Line 1 of the child's long answer."))).toBe(true);
    expect(texts.filter((text) => text.includes(lastLine))).toEqual([]);
    // Nor does the child's own: it no longer reads its answer back to return it.
    const child = await historyTexts(stack.client.workflow.getHandle(childWorkflowId(id, 'task-1')));
    expect(child.filter((text) => text.includes(lastLine))).toEqual([]);
    const result = (await stack.client.workflow.getHandle(childWorkflowId(id, 'task-1')).result()) as { status: string; output: string; outputCut?: boolean; outputRef?: unknown };
    expect(result).toMatchObject({ status: 'completed', outputCut: true });
    expect(result.outputRef).toBeDefined();
    expect(result.output.length).toBeLessThanOrEqual(inlineTextLimit);
  });

  it("the parent's model gets the whole text as the delegate result and from load; peek shows how it ended", async () => {
    const requests = sessionRequests(message);
    expect(requests).toHaveLength(4);
    const [delegated, loaded, peeked] = toolResults(requests[3]).map((result) => result.content);
    expect(delegated).toBe(`<task-output task="task-1">\n${longAnswer}\n</task-output>`);
    expect(loaded).toContain(`Status: completed\n`);
    expect(loaded).toContain(`<task-output task="task-1">\n${longAnswer}\n</task-output>`);
    expect(peeked).toContain('State: completed');
    expect(peeked).toContain('Turns: 1 of');
    expect(peeked).not.toContain(lastLine);
  });

  it('probeChildren (the check on children a run does not watch) reports the finished child slim too', async () => {
    const [closed] = await probeChildren(stack.client, { workflowIds: [childWorkflowId(id, 'task-1')] });
    expect(closed).toMatchObject({ temporalStatus: 'COMPLETED', result: { status: 'completed', outputCut: true } });
    expect(JSON.stringify(closed)).not.toContain(lastLine);
  });

  it('the API and the CLI read the whole text of the finished child', async () => {
    const child = childWorkflowId(id, 'task-1');
    const body = await json(await stack.request(`/v1/delegations/${encodeURIComponent(child)}/result`));
    expect(body).toMatchObject({ done: true, result: { status: 'completed', output: longAnswer } });
    expect((body.result as Record<string, unknown>).outputCut).toBeUndefined();
    const stdout: string[] = [];
    const context: CliContext = { io: { stdout: (text: string) => void stdout.push(text), stderr: () => undefined, interactive: false }, env: {}, cwd: stack.workDir, transport: () => httpTransport(stack.url, keys.acme), close: () => Promise.resolve() };
    expect(await resultCommand([child], context)).toBe(0);
    expect(stdout.join('')).toBe(`${longAnswer}\n`);
  });
});

describe("a child's structured result longer than the inline limit", () => {
  it('stays out of the parent history, and the API gives it back whole, structured included', async () => {
    const message = 'structured please';
    const id = await startSession(message);
    await replied(id, 'got the lines');
    const json40 = JSON.stringify(longStructured, null, 2);
    expect(json40.length).toBeGreaterThan(inlineTextLimit);
    const texts = await historyTexts(stack.client.workflow.getHandle(id));
    expect(texts.filter((text) => text.includes('Structured line 30 of the answer.'))).toEqual([]);
    const [delegated] = toolResults(sessionRequests(message)[1]).map((result) => result.content);
    expect(delegated).toBe(`<task-output task="task-1">\n${json40}\n</task-output>`);
    const body = await json(await stack.request(`/v1/delegations/${encodeURIComponent(childWorkflowId(id, 'task-1'))}/result`));
    expect(body).toMatchObject({ done: true, result: { status: 'completed', output: json40, structured: longStructured } });
    expect((body.result as Record<string, unknown>).structuredCut).toBeUndefined();
  });
});

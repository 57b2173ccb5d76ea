import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatMessage } from '../../src/contracts/model';
import { cancelSignal, peekQuery } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { createScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The subagent workflow against the real dev server: the agent loop, tools, turn limit, cancellation,
 * retries and failure classification. The model is scripted (in process, or over HTTP so the real
 * OpenAI-compatible adapter runs).
 */

let server: ScriptedOpenAIServer;
/** Steps for the in-process model, keyed by the workflow id found in the request's system prompt. */
const scripts = new Map<string, ScriptStep[]>();
// One in-process model for the file; each test's script is found by a marker in its task prompt.
const model = createScriptedModel((request) => {
  const user = request.messages.find((message) => message.role === 'user');
  const marker = user?.role === 'user' ? /\[script:([a-z0-9-]+)\]/.exec(user.content)?.[1] : undefined;
  const steps = marker ? scripts.get(marker) : undefined;
  return steps?.shift();
});

function systemText(messages: ChatMessage[]): string {
  const first = messages[0];
  return first?.role === 'system' ? first.content : '';
}

beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});

const stack = useWorkerStack(() => ({
  label: 'subagent',
  scripted: { scripted: { model } },
  providers: [{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }],
}));
beforeAll(() => {
  writeFileSync(join(stack.workingDir, 'notes.txt'), 'the answer is 42\n');
  mkdirSync(join(stack.workingDir, 'docs'));
  writeFileSync(join(stack.workingDir, 'docs', 'readme.md'), '# docs\n');
  const outside = mkdtempSync(join(tmpdir(), 'errand-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'do not read');
  symlinkSync(join(outside, 'secret.txt'), join(stack.workingDir, 'escape.txt'));
});

function script(name: string, steps: ScriptStep[]): string {
  scripts.set(name, steps);
  return `[script:${name}]`;
}

/** Temporal's TaskQueueKind.TASK_QUEUE_KIND_NORMAL (2 is a worker's sticky queue). */
const taskQueueKindSticky = 2;

async function run(workflowId: string, prompt: string, overrides: Partial<Parameters<typeof subagentInput>[0]> = {}): Promise<SubagentResult> {
  return stack.client.workflow.execute('subagentWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [subagentInput({ prompt, workingDir: stack.workingDir, ...overrides })],
  });
}

function requestsOf(marker: string): ChatMessage[][] {
  return model.calls
    .filter((call) => call.request.messages.some((message) => message.role === 'user' && message.content.includes(marker)))
    .map((call) => call.request.messages);
}

describe('subagent workflow', () => {
  test('completes with the final text', async () => {
    const marker = script('plain', [{ text: 'All done: the summary.' }]);
    const result = await run(`errand-plain-${Date.now()}`, `Summarise things ${marker}`);
    expect(result.status).toBe('completed');
    expect(result.output).toBe('All done: the summary.');
    expect(result.turns).toBe(1);
    expect(result.toolCalls).toBe(0);
    const requests = requestsOf(marker);
    expect(requests).toHaveLength(1);
    expect(systemText(requests[0] ?? [])).toContain('You are a subagent');
  });

  test('runs two tool calls in parallel and returns their results in the next model call', async () => {
    const marker = script('tools', [
      {
        toolCalls: [
          { id: 'call-a', name: 'developer__read_file', arguments: { path: 'notes.txt' } },
          { id: 'call-b', name: 'developer__list_directory', arguments: { path: 'docs' } },
        ],
      },
      { text: 'The notes say 42 and docs has a readme.' },
    ]);
    const result = await run(`errand-tools-${Date.now()}`, `Look around ${marker}`);
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toBe(2);
    expect(result.turns).toBe(2);
    const requests = requestsOf(marker);
    expect(requests).toHaveLength(2);
    const second = requests[1] ?? [];
    const toolMessages = second.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
    expect(toolMessages.map((message) => message.toolCallId)).toEqual(['call-a', 'call-b']);
    expect(toolMessages[0]?.content).toContain('the answer is 42');
    expect(toolMessages[1]?.content).toContain('readme.md');
    expect(toolMessages.every((message) => !message.isError)).toBe(true);
  });

  test('a run that ends while the views hold a change back cancels their timer: no timer left running, no failed workflow task', async () => {
    // Fast turns: the second change of the search attributes comes within the 1 s interval, so a timer is
    // started to write it. A timer still running at the end could fire during the last workflow task, and the
    // server would refuse the completion (UnhandledCommand: a failed task and a replay).
    const marker = script('views-timer', [
      { toolCalls: [{ id: 'call-1', name: 'developer__list_directory', arguments: { path: 'docs' } }] },
      { toolCalls: [{ id: 'call-2', name: 'developer__read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'Looked twice.' },
    ]);
    const workflowId = `errand-views-timer-${Date.now()}`;
    const result = await run(workflowId, `Look twice ${marker}`);
    expect(result.status).toBe('completed');
    const events = (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const count = (attribute: string) => events.filter((event) => (event as Record<string, unknown>)[attribute] != null).length;
    expect(count('timerStartedEventAttributes')).toBeGreaterThanOrEqual(1);
    expect(count('timerFiredEventAttributes') + count('timerCanceledEventAttributes')).toBe(count('timerStartedEventAttributes'));
    expect(count('workflowTaskFailedEventAttributes')).toBe(0);
    expect(count('upsertWorkflowSearchAttributesEventAttributes')).toBeGreaterThanOrEqual(2);
  });

  test('refuses paths outside the working directory and keeps running', async () => {
    const marker = script('escape', [
      {
        toolCalls: [
          { id: 'up', name: 'developer__read_file', arguments: { path: '../outside' } },
          { id: 'link', name: 'developer__read_file', arguments: { path: 'escape.txt' } },
        ],
      },
      { text: 'I could not read those.' },
    ]);
    const result = await run(`errand-escape-${Date.now()}`, `Read outside ${marker}`);
    expect(result.status).toBe('completed');
    const second = requestsOf(marker)[1] ?? [];
    const toolMessages = second.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
    expect(toolMessages).toHaveLength(2);
    for (const message of toolMessages) {
      expect(message.isError).toBe(true);
      expect(message.content).toMatch(/outside the working directory/);
      expect(message.content).not.toContain('do not read');
    }
  });

  test('reaching max_turns ends with status max_turns and the partial output, never completed', async () => {
    const loop: ScriptStep = { text: 'Still looking...', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
    const marker = script('limit', [loop, loop, loop]);
    const result = await run(`errand-limit-${Date.now()}`, `Never finish ${marker}`, { maxTurns: 3 });
    expect(result.status).toBe('max_turns');
    expect(result.output).toBe('');
    expect(result.partialOutput).toBe('Still looking...');
    expect(result.diagnostic).toMatch(/turn limit \(3 turns\)/);
    expect(result.turns).toBe(3);
    const requests = requestsOf(marker);
    expect(requests).toHaveLength(3);
    // Past half of the budget the subagent is told how much it has used.
    expect(JSON.stringify(requests[2])).toContain('this is your last turn (3 of 3)');
    expect(JSON.stringify(requests[0])).not.toContain('Turn budget');
  });

  test('cancel during a slow model call aborts the HTTP request; peek shows turns and the last tool call', async () => {
    server.reset();
    server.enqueue(
      { toolCalls: [{ id: 'ls', name: 'developer__list_directory', arguments: { path: 'docs' } }] },
      { text: 'too late', delayMs: 30_000 },
    );
    const workflowId = `errand-cancel-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [subagentInput({ prompt: 'Take your time', workingDir: stack.workingDir, route: { provider: 'http', model: 'gpt-test' } })],
    });
    await server.waitForRequests(2, 20_000);
    const peek: SubagentPeek = await handle.query(peekQuery);
    expect(peek.state).toBe('running');
    expect(peek.turns).toBe(2);
    expect(peek.toolCalls).toBe(1);
    expect(peek.lastToolCall?.name).toBe('developer__list_directory');
    expect(peek.lastToolCall?.argumentsPreview).toContain('docs');
    await handle.signal(cancelSignal, { reason: 'the user changed their mind' });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.diagnostic).toBe('the user changed their mind');
    await server.waitFor((requests) => requests[1]?.aborted === true, 5_000, 'the slow request to be aborted');
    expect(server.requests).toHaveLength(2);
  });

  test('Temporal cancellation also ends the run as cancelled', async () => {
    server.reset();
    server.enqueue({ text: 'never', delayMs: 30_000 });
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-tcancel-${Date.now()}`,
      args: [subagentInput({ prompt: 'Slow one', workingDir: stack.workingDir, route: { provider: 'http', model: 'gpt-test' } })],
    });
    await server.waitForRequests(1, 20_000);
    await handle.cancel();
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
    await server.waitFor((requests) => requests[0]?.aborted === true, 5_000, 'the request to be aborted');
  });

  test('a 429 is retried after retry-after and then completes', async () => {
    server.reset();
    server.enqueue({ error: { status: 429, message: 'slow down', retryAfterSeconds: 1 } }, { text: 'fine now' });
    const result = await run(`errand-429-${Date.now()}`, 'Try again', { route: { provider: 'http', model: 'gpt-test' } });
    expect(result.status).toBe('completed');
    expect(result.output).toBe('fine now');
    expect(server.requests).toHaveLength(2);
    const gap = (server.requests[1]?.receivedAt ?? 0) - (server.requests[0]?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(900);
  });

  test('a model call retried after a 503 keeps its workflow on the sticky queue: the worker that had it is alive (review N15)', async () => {
    server.reset();
    server.enqueue({ error: { status: 503, message: 'overloaded' } }, { text: 'back again' });
    const workflowId = `errand-503-${Date.now()}`;
    const result = await run(workflowId, 'Retry me', { route: { provider: 'http', model: 'gpt-test' } });
    expect(result.output).toBe('back again');
    const events = (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const retried = events.find((event) => (event.activityTaskStartedEventAttributes?.attempt ?? 0) === 2);
    expect(retried).toBeDefined();
    const scheduledId = Number(retried?.activityTaskStartedEventAttributes?.scheduledEventId);
    const completedAt = events.findIndex((event) => Number(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1) === scheduledId);
    expect(completedAt).toBeGreaterThan(-1);
    // The previous attempt failed, it did not time out: no reset (src/activities/sticky-reset.ts), so the next
    // workflow task goes to the live worker's sticky queue and no replay is forced. A timed-out attempt does
    // reset it (test/activities/sticky-reset.test.ts).
    const next = events.slice(completedAt).find((event) => event.workflowTaskScheduledEventAttributes);
    expect(next?.workflowTaskScheduledEventAttributes?.taskQueue?.kind).toBe(taskQueueKindSticky);
  });

  test('a 400 fails fast with the provider message as diagnostic', async () => {
    server.reset();
    // Not a context overflow (that one is ModelContextOverflow, which the workflow answers by compacting).
    server.enqueue({ error: { status: 400, message: "Invalid 'tools[0].function.name': gpt-test rejects this tool name" } });
    const result = await run(`errand-400-${Date.now()}`, 'Bad request', { route: { provider: 'http', model: 'gpt-test' } });
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toContain('ModelRequestRejected');
    expect(result.diagnostic).toContain("Invalid 'tools[0].function.name': gpt-test rejects this tool name");
    expect(server.requests).toHaveLength(1);
  });
});

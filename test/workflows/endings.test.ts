import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { beforeAll, describe, expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import { peekQuery, sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { estimateTokens } from '../../src/domain/token-estimate';
import { compactionMaxCalls } from '../../src/contracts/limits/workflow';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { sessionInput, subagentInput, testActivitySettings } from '../support/temporal';
import { until } from '../support/polling';
import { useWorkerStack } from '../support/worker-stack';

/**
 * How runs end under real provider rules (SEMANTICS §5 "How a run ends", "Context window"), against the
 * strict in-process stand-in: malformed tool calls become tool errors, a cut-off answer is `truncated`,
 * and a long conversation is compacted so no prompt ever exceeds the model's context window — also when
 * errand's idea of the window is wrong and the provider says the prompt is too long.
 */

/** The stand-in's context window: small, so a few hundred turns need several compactions. */
const window = 4_000;
const scripts = new ConversationScripts({ contextWindow: window });
const stack = useWorkerStack({
  label: 'endings',
  scripted: {
    scripted: {
      model: scripts.model,
      models: [
        // What errand is told: the stand-in's own window (compaction keeps every prompt inside it) …
        { id: 'scripted-model', contextWindow: window, maxOutputTokens: 200 },
        // … and a model whose entry claims more than the stand-in takes (the provider's overflow error decides).
        { id: 'optimistic-model', contextWindow: window * 4, maxOutputTokens: 200 },
        // … and a model whose entry sets no output limit: the configured default (8192) would not fit its window.
        { id: 'small-model', contextWindow: window },
      ],
    },
  },
});
beforeAll(() => writeFileSync(join(stack.workingDir, 'notes.txt'), 'some notes'));

/** A summarising call of a compaction (its system prompt says so). */
function isSummary(request: ModelRequest): boolean {
  return request.messages[0]?.content.startsWith('You compress the history') ?? false;
}

describe('malformed tool calls', () => {
  test('arguments that are not JSON and an unknown tool get tool errors that say so; the run continues', async () => {
    const marker = scripts.add('malformed', [
      { toolCalls: [{ name: 'developer__list_directory', arguments: '{"path": ' }, { name: 'developer__no_such_tool', arguments: {} }] },
      { text: 'recovered' },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('malformed'), args: [subagentInput({ prompt: `look ${marker}`, workingDir: stack.workingDir })] });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output).toBe('recovered');
    const [invalid, unknown] = toolResults(scripts.of('malformed')[1]);
    expect(invalid).toMatchObject({ isError: true, content: 'The call of developer__list_directory was not run: its arguments are not a JSON object (got {"path": ). Call developer__list_directory again with a JSON object that matches its input schema.' });
    expect(unknown?.isError).toBe(true);
    expect(unknown?.content).toMatch(/^Unknown tool "developer__no_such_tool"\. Available tools: .*developer__read_file/);
    expect(scripts.model.rejectedCalls).toEqual([]);
  });
});

describe('a toolset this worker does not have', () => {
  test('fails the run at once as ToolsetUnavailable, not as a model error retried six times', async () => {
    const marker = scripts.add('no-toolset', [{ text: 'never asked' }]);
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('no-toolset'), args: [subagentInput({ prompt: `look ${marker}`, workingDir: stack.workingDir, toolsets: ['developer', 'removed-server'] })] });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toMatch(/^ToolsetUnavailable: unknown toolset "removed-server"/);
    expect(scripts.of('no-toolset')).toEqual([]);
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? []).filter((event) => event.activityTaskStartedEventAttributes).map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 1);
    expect(Math.max(...attempts)).toBe(1);
  });
});

describe('an answer cut off at the output-token limit', () => {
  test('ends truncated, and the delegating model reads why on the first line', async () => {
    const child = scripts.add('cut-child', [{ text: `A long answer ${'that goes on and on '.repeat(40)}` }]);
    const session = scripts.add('cut', [{ toolCalls: [{ name: 'delegate', arguments: { instructions: `write a lot ${child}`, max_output_tokens: 12 } }] }, { text: 'noted' }]);
    const handle: WorkflowHandle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('cut'), args: [sessionInput({ workingDir: stack.workingDir })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `go ${session}` }] });
    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    await until(() => childHandle.describe().then(() => true, () => false), Boolean, 'the child to start');
    const childResult: SubagentResult = await childHandle.result();
    expect(childResult.status).toBe('truncated');
    expect(childResult.diagnostic).toBe('its answer was cut off at the output token limit (12 tokens)');
    expect(childResult.partialOutput.startsWith('A long answer')).toBe(true);
    await until(() => Promise.resolve(scripts.of('cut').length), (count) => count === 2, 'the session reading the result');
    const [delegated] = toolResults(scripts.of('cut')[1]);
    expect(delegated?.isError).toBe(true);
    expect(delegated?.content.split('\n')[0]).toBe('The subagent did not finish: its answer was cut off at the output token limit (12 tokens).');
    expect(scripts.of('cut-child')[0]?.maxOutputTokens).toBe(12);
    await handle.cancel();
  });
});

describe('the output limit of a small model', () => {
  test('a model entry without maxOutputTokens is called with half its context window, so prompt and answer fit it', async () => {
    const marker = scripts.add('small', [{ toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] }, { text: 'small and done' }]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: stack.nextId('small'),
      args: [subagentInput({ prompt: `list ${marker}`, workingDir: stack.workingDir, route: { provider: 'scripted', model: 'small-model' } })],
    });
    const result: SubagentResult = await handle.result();
    expect(result).toMatchObject({ status: 'completed', output: 'small and done' });
    // The stand-in refuses a request whose prompt and max_tokens exceed its window, as OpenAI does: none was refused.
    expect(scripts.of('small').map((request) => request.maxOutputTokens)).toEqual([window / 2, window / 2]);
    expect(scripts.model.rejectedCalls).toEqual([]);
  });
});

describe('the context window', () => {
  test('a 300-turn continuable conversation keeps working, never sends an over-long prompt, and shows its compactions', async () => {
    const marker = scripts.add('long', (request, call): ScriptStep => {
      if (isSummary(request)) return { text: `Summary ${call}: the user has been sending numbered notes; the agent acknowledged each one.` };
      const last = request.messages.at(-1);
      return { text: `Noted: ${last?.role === 'user' ? last.content.slice(0, 40) : 'the task'}` };
    });
    const workflowId = stack.nextId('long');
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Keep notes ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    const peekAt = (turns: number) => until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.turns >= turns && peek.state === 'waiting', `turn ${turns}`);
    await peekAt(1);
    for (let turn = 2; turn <= 300; turn += 1) {
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `note ${turn}: ${'the weather was fine and the work went on. '.repeat(3)}` }] });
      await peekAt(turn);
    }
    const peek: SubagentPeek = await handle.query(peekQuery);
    expect(peek.turns).toBe(300);
    expect(peek.compactions ?? 0).toBeGreaterThanOrEqual(3);
    // Every request the stand-in got fitted its window: none was refused, and each estimate (with the output limit) is inside it.
    expect(scripts.model.rejectedCalls).toEqual([]);
    const requests = scripts.of('long');
    for (const request of requests) expect(estimateTokens(request.messages, request.tools) + (request.maxOutputTokens ?? 0)).toBeLessThanOrEqual(window);
    // The system prompt and the task stay verbatim; the last turns are there; the summary stands for the rest.
    const last = requests.filter((request) => !isSummary(request)).at(-1);
    expect(last?.messages[0]?.role).toBe('system');
    expect(last?.messages[1]?.content.startsWith(`Keep notes ${marker}`)).toBe(true);
    expect(last?.messages[1]?.content).toContain('[Summary of the earlier conversation');
    expect(last?.messages.at(-1)?.content.startsWith('note 300:')).toBe(true);
    const transcript: TranscriptView = await handle.query(transcriptQuery);
    expect(transcript.entries.some((entry) => entry.role === 'event' && /^\[compaction \d+\] \d+ older messages summarised/.test(entry.text))).toBe(true);
    await handle.cancel();
  }, 240_000);

  test("a provider's overflow error leads to one compaction and one retry", async () => {
    const marker = scripts.add('overflow', (request, call): ScriptStep => {
      if (isSummary(request)) return { text: `Summary ${call}: a long exchange of numbered notes.` };
      return { text: `ok ${call}` };
    });
    // errand believes the model takes four times what the stand-in takes: only the stand-in's 400 stops it.
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: stack.nextId('overflow'),
      args: [subagentInput({ prompt: `Notes ${marker}`, workingDir: stack.workingDir, continuable: true, route: { provider: 'scripted', model: 'optimistic-model' } })],
    });
    const peekAt = (turns: number) => until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.turns >= turns && peek.state === 'waiting', `turn ${turns}`);
    await peekAt(1);
    let turn = 1;
    while (scripts.model.rejectedCalls.length === 0 && turn < 200) {
      turn += 1;
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `note ${turn}: ${'a fairly long line of notes to fill the window. '.repeat(4)}` }] });
      await peekAt(turn);
    }
    expect(scripts.model.rejectedCalls.length).toBe(1);
    expect(scripts.model.rejectedCalls[0]?.rejected).toMatch(/maximum context length is 4000 tokens/);
    const peek: SubagentPeek = await handle.query(peekQuery);
    expect(peek.turns).toBe(turn);
    expect(peek.compactions).toBe(1);
    const transcript: TranscriptView = await handle.query(transcriptQuery);
    expect(transcript.entries.at(-1)).toMatchObject({ role: 'assistant', text: expect.stringMatching(/^ok \d+$/) });
    // A compaction may make several summarising calls: its time limit is that many model calls', not one's
    // (one call's limit made a slow model's compaction time out and start over, again and again).
    const history = await handle.fetchHistory();
    const compactions = (history.events ?? []).map((event) => event.activityTaskScheduledEventAttributes).filter((scheduled) => scheduled?.activityType?.name === 'compactConversation');
    expect(compactions).toHaveLength(1);
    expect(Number(compactions[0]?.startToCloseTimeout?.seconds)).toBe((testActivitySettings.modelCallTimeoutMs / 1000) * compactionMaxCalls);
    await handle.cancel();
  }, 240_000);
});

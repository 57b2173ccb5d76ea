import { childWorkflowId } from '../src/contracts/workflow-ids';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childProbeIntervalMs } from '../src/contracts/limits/workflow';
import type { SessionInput } from '../src/contracts/session';
import { approvalUpdate, cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery } from '../src/contracts/subagent-messages';
import { ackNoticesSignal, callToolUpdate, pendingNoticesQuery } from '../src/contracts/mcp-session-messages';
import type { SubagentInput } from '../src/contracts/subagent';
import type { ScriptStep } from '../src/llm/scripted-step';
import { sendUpdateAcrossRunChange } from '../src/temporal/temporal-update-retry';
import { workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult } from '../src/contracts/workflow-run';

/**
 * The long-haul scenarios of the recording script (record-histories.ts): approvals, compaction, `load(peek)`
 * on both sides of its patch, the probe loop of a session that continued as new while its child runs a
 * turn, a continuable ended by its idle alarm, a child's answer longer than the inline limit (slim result),
 * and a foreground child of quick turns whose progress signals are throttled (or, before that patch, one per
 * turn), a subagent whose Stop hook runs (and blocks in vain) on its last turn, and a priced session that
 * delegates three capped children in one turn (two fit what it has left). Each records its histories through the context and throws when the run did not do what the
 * scenario is about (so a fixture never claims a path it did not take).
 */

/** A step the scripted model answers once something happened (a held model call). */
export type HeldStep = () => Promise<ScriptStep>;

/** What a scenario needs from the recording script. */
export interface RecordingContext {
  client: Client;
  /** The queue of the worker that runs the current code. */
  taskQueue: string;
  /** The queue of the worker whose bundle withholds the patches under test (bundleWithPatchesWithheld). */
  withheldTaskQueue: string;
  stamp: number;
  workingDir: string;
  subagent(prompt: string, overrides?: Partial<SubagentInput>): SubagentInput;
  sessionInput: SessionInput;
  /** Registers a script and returns its marker. */
  script(name: string, steps: Array<ScriptStep | HeldStep>): string;
  /** The steps left of a script. */
  stepsOf(name: string): Array<ScriptStep | HeldStep>;
  waitUntil(what: string, predicate: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** Records the history of a workflow's run (its latest without `runId`) as `<name>.json`. */
  record(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** The scenario names `--only` takes. */
/**
 * The id of a recorded parent's first task: `<parent>~task-1` from the current code, `<parent>/task-1` from the
 * worker that withholds the patches (its `child-ids-without-slash` too).
 */
export function firstTaskId(context: Pick<RecordingContext, 'withheldTaskQueue'>, parentId: string, taskQueue: string): string {
  return taskQueue === context.withheldTaskQueue ? `${parentId}/task-1` : childWorkflowId(parentId, 'task-1');
}

export const moreScenarios = ['approvals', 'compaction', 'load-peek', 'load-peek-before-patch', 'probe-loop', 'idle-timeout', 'agent-hooks', 'agent-hooks-before-patch', 'orchestration-hooks', 'orchestration-hooks-before-patch', 'cost', 'cost-before-patch', 'long-child', 'long-child-before-patch', 'progress-throttle', 'progress-throttle-before-patch', 'stop-hook-last-turn', 'stop-hook-last-turn-before-patch', 'long-answer', 'long-answer-before-patch', 'spend-adds-up', 'spend-adds-up-before-patch', 'mcp-notices', 'mcp-notices-before-patch', 'workflow-run'] as const;

/** A gate a held model call waits on. */
function gate(): { release: () => void; step: (answer: ScriptStep) => HeldStep } {
  let release: () => void = () => undefined;
  const opened = new Promise<void>((resolveOpened) => {
    release = resolveOpened;
  });
  return { release: () => release(), step: (answer) => async () => { await opened; return answer; } };
}

async function activityTypes(handle: WorkflowHandle, runId?: string): Promise<string[]> {
  const history = await (runId ? handle.client.getHandle(handle.workflowId, runId) : handle).fetchHistory();
  return (history.events ?? []).flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
}

function expectActivity(types: string[], name: string, scenario: string): void {
  if (!types.includes(name)) throw new Error(`${scenario}: the run scheduled no ${name} (scheduled: ${[...new Set(types)].join(', ')})`);
}

/** A tool call under `ask` waits for a person's decision (the approval update), then runs. */
export async function recordApprovals(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp } = context;
  const workflowId = `errand-record-approvals-${stamp}`;
  const marker = context.script('approvals', [
    { toolCalls: [{ id: 'write-approved', name: 'developer__write_file', arguments: { path: 'approved.txt', content: 'approved\n' } }] },
    { text: 'Wrote approved.txt.' },
  ]);
  const handle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [context.subagent(`Write a file ${marker}`, { toolPolicy: [{ rules: { developer__write_file: 'ask' } }] })] });
  let approvalId = '';
  await context.waitUntil('the pending approval', async () => {
    const peek = await handle.query(peekQuery);
    approvalId = peek.pendingApprovals?.[0]?.id ?? '';
    return peek.state === 'waiting_approval' && approvalId !== '';
  });
  await handle.executeUpdate(approvalUpdate, { args: [{ approvalId, decision: 'approve', by: 'recording' }] });
  await handle.result();
  await context.record('subagent-approvals', workflowId);
}

/** A conversation that outgrows its model's context window is compacted (summarising calls), then goes on. */
export async function recordCompaction(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp, workingDir } = context;
  const files = [1, 2, 3, 4, 5, 6, 7, 8];
  for (const n of files) writeFileSync(join(workingDir, `long-notes-${n}.txt`), `${`Note ${n}: a line of notes that fills the window. `.repeat(40)}\n`);
  const workflowId = `errand-record-compaction-${stamp}`;
  const marker = context.script('compaction', [
    ...files.map((n): ScriptStep => ({ toolCalls: [{ id: `read-${n}`, name: 'developer__read_file', arguments: { path: `long-notes-${n}.txt` } }] })),
    { text: 'Read every note.' },
  ]);
  const handle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [context.subagent(`Read the notes ${marker}`, { route: { provider: 'scripted', model: 'small-window-model' }, maxTurns: 20 })] });
  await handle.result();
  expectActivity(await activityTypes(handle), 'compactConversation', 'compaction');
  await context.record('subagent-compaction', workflowId);
}

/** A session peeks at a running task with `load(task_id, peek: true)` (the live-text activity, or, before its patch, none). */
async function recordLoadPeek(context: RecordingContext, name: string, taskQueue: string, livePeek: boolean): Promise<void> {
  const { client, stamp } = context;
  const held = gate();
  const childMarker = context.script(`${name}-child`, [held.step({ text: 'The worker finished.' })]);
  const steps: ScriptStep[] = [
    { toolCalls: [{ id: 'delegate-worker', name: 'delegate', arguments: { instructions: `Work on it ${childMarker}`, async: true, description: 'worker' } }] },
    { toolCalls: [{ id: 'peek-worker', name: 'load', arguments: { source: 'task-1', peek: true } }] },
    { text: 'The worker is on it.' },
    { text: 'The worker is done.' },
  ];
  const marker = context.script(name, steps);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: `recorded ${name}` }] });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Start a worker and peek at it ${marker}` }] });
  await context.waitUntil('the peek turn', async () => context.stepsOf(name).length === 1 && (await handle.query(transcriptQuery)).state === 'waiting');
  held.release();
  await context.waitUntil('the notice turn', async () => context.stepsOf(name).length === 0 && (await handle.query(transcriptQuery)).state === 'waiting');
  await handle.signal(cancelSignal, { reason: 'recording done' });
  await handle.result();
  const types = await activityTypes(handle);
  if (livePeek) expectActivity(types, 'readLiveText', name);
  else if (types.includes('readLiveText')) throw new Error(`${name}: the run read live text although its patch was withheld`);
  await context.record(`session-${name}`, workflowId);
  await context.record(`session-${name}-child`, firstTaskId(context, workflowId, taskQueue));
}

/** `load(peek)` with the current code (the `load-peek-live-text` patch's marker and activity). */
export function recordLoadPeekPatched(context: RecordingContext): Promise<void> {
  return recordLoadPeek(context, 'load-peek', context.taskQueue, true);
}

/** `load(peek)` as code from before the `load-peek-live-text` patch runs it (no marker, no activity). */
export function recordLoadPeekBeforePatch(context: RecordingContext): Promise<void> {
  return recordLoadPeek(context, 'load-peek-before-live-peek-patch', context.withheldTaskQueue, false);
}

/**
 * The probe loop: a session continues as new while its background task runs a turn (a held model call), so
 * its second run does not watch the task and checks it after the probe interval (probeChildren); then the
 * task answers and the session hears of it.
 */
export async function recordProbeLoop(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp } = context;
  const held = gate();
  const childMarker = context.script('probe-child', [held.step({ text: 'The slow task finished.' })]);
  const steps: ScriptStep[] = [
    { toolCalls: [{ id: 'delegate-slow', name: 'delegate', arguments: { instructions: `Take your time ${childMarker}`, async: true, description: 'slow task' } }] },
    { text: 'Started the slow task.' },
  ];
  const marker = context.script('probe', steps);
  const workflowId = `errand-record-probe-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: 'recorded probe loop' }] });
  const firstRunId = handle.firstExecutionRunId;
  const sessionDone = async () => steps.length === 0 && (await handle.query(transcriptQuery)).state === 'waiting';
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Start a slow task ${marker}` }] });
  await context.waitUntil('the session reply', sessionDone);
  for (let reply = 1; (await handle.describe()).runId === firstRunId; reply += 1) {
    if (reply > 30) throw new Error('probe-loop: the session did not continue as new');
    steps.push({ text: `Reply ${reply}.` });
    await sendUpdateAcrossRunChange(() => handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Message ${reply}` }], updateId: `${workflowId}-message-${reply}` }));
    await context.waitUntil('a reply', async () => (await handle.describe()).runId !== firstRunId || (await sessionDone()));
  }
  await context.waitUntil('the reply in the second run', sessionDone);
  const secondRunId = (await handle.describe()).runId;
  await context.waitUntil('a probe of the running task', async () => (await activityTypes(handle, secondRunId)).includes('probeChildren'), childProbeIntervalMs * 3);
  steps.push({ text: 'The slow task is done.' });
  held.release();
  await context.waitUntil('the notice turn', sessionDone);
  await handle.signal(cancelSignal, { reason: 'recording done' });
  await handle.result();
  await context.record('session-probe-loop-run-1', workflowId, firstRunId);
  await context.record('session-probe-loop-run-2', workflowId, secondRunId);
  await context.record('session-probe-loop-child', firstTaskId(context, workflowId, taskQueue));
}

/** The idle alarm: a continuable answers, waits, takes one message, and ends when its idle timeout passes. */
export async function recordIdleTimeout(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp } = context;
  const steps: ScriptStep[] = [{ text: 'Ready when you are.' }, { text: 'Got your message.' }];
  const marker = context.script('idle-timeout', steps);
  const workflowId = `errand-record-idle-timeout-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [context.subagent(`Stay a little ${marker}`, { continuable: true, idleTimeoutMs: 3_000 })] });
  await context.waitUntil('the first answer', async () => steps.length === 1 && (await handle.query(peekQuery)).state === 'waiting');
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'One more thing' }] });
  const result = (await handle.result()) as { diagnostic?: string };
  if (!result.diagnostic?.includes('without a message')) throw new Error(`idle-timeout: the run did not end by its idle alarm (${result.diagnostic ?? 'no diagnostic'})`);
  await context.record('subagent-idle-timeout', workflowId);
}

/** An agent file's hooks (SubagentStart, PreToolUse, Stop) around a tool call; before their patch, none run. */
async function recordAgentHooks(context: RecordingContext, name: string, taskQueue: string, hooksRun: boolean): Promise<void> {
  const { client, stamp } = context;
  const marker = context.script(name, [
    { toolCalls: [{ id: 'read-notes', name: 'developer__read_file', arguments: { path: 'notes.txt' } }] },
    { text: 'The notes say 42.' },
  ]);
  const hook = (command: string) => [{ hooks: [{ command, timeoutSeconds: 10 }] }];
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [context.subagent(`Read the notes ${marker}`, {
      hooks: { agentName: 'recorded-agent', file: 'recorded: agents/recorded-agent.md', start: hook('echo "the notes are in notes.txt"'), preToolUse: hook('true'), stop: hook('true') },
    })],
  });
  await handle.result();
  const types = await activityTypes(handle);
  if (hooksRun) expectActivity(types, 'runAgentHook', name);
  else if (types.includes('runAgentHook')) throw new Error(`${name}: hooks ran although their patch was withheld`);
  await context.record(`subagent-${name}`, workflowId);
}

/** Agent-file hooks with the current code (the `agent-file-hooks` patch's markers and hook activities). */
export function recordAgentHooksPatched(context: RecordingContext): Promise<void> {
  return recordAgentHooks(context, 'agent-hooks', context.taskQueue, true);
}

/** The same subagent as code from before the `agent-file-hooks` patch runs it. */
export function recordAgentHooksBeforePatch(context: RecordingContext): Promise<void> {
  return recordAgentHooks(context, 'agent-hooks-before-hooks-patch', context.withheldTaskQueue, false);
}

/** An agent file's PreToolUse and PostToolUse hooks around an orchestration tool the workflow runs itself; before their patch, none run. */
async function recordOrchestrationHooks(context: RecordingContext, name: string, taskQueue: string, hooksRun: boolean): Promise<void> {
  const { client, stamp } = context;
  const marker = context.script(name, [
    { toolCalls: [{ id: 'list-models', name: 'list_subagent_models', arguments: {} }] },
    { text: 'One provider, scripted.' },
  ]);
  const hook = (command: string) => [{ matcher: 'list_subagent_models', hooks: [{ command, timeoutSeconds: 10 }] }];
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [context.subagent(`List the models ${marker}`, {
      maxDepth: 2,
      hooks: {
        agentName: 'recorded-agent',
        file: 'recorded: agents/recorded-agent.md',
        preToolUse: hook('true'),
        postToolUse: hook('echo "pick the default model" >&2; exit 2'),
        orchestrationTools: { preToolUse: ['list_subagent_models'], postToolUse: ['list_subagent_models'] },
      },
    })],
  });
  await handle.result();
  const types = await activityTypes(handle);
  if (hooksRun && types.filter((type) => type === 'runAgentHook').length !== 2) throw new Error(`${name}: expected the PreToolUse and PostToolUse hook activities (scheduled: ${types.join(', ')})`);
  if (!hooksRun && types.includes('runAgentHook')) throw new Error(`${name}: hooks ran although their patch was withheld`);
  await context.record(`subagent-${name}`, workflowId);
}

/** Hooks around an orchestration tool with the current code (the `orchestration-tool-hooks` patch's marker and hook activities). */
export function recordOrchestrationHooksPatched(context: RecordingContext): Promise<void> {
  return recordOrchestrationHooks(context, 'orchestration-hooks', context.taskQueue, true);
}

/** The same subagent as code from before the `orchestration-tool-hooks` patch runs it. */
export function recordOrchestrationHooksBeforePatch(context: RecordingContext): Promise<void> {
  return recordOrchestrationHooks(context, 'orchestration-hooks-before-patch', context.withheldTaskQueue, false);
}

/** A subagent on a priced model: its cost grows with each answer and shows in the Web UI's search attribute. */
async function recordCost(context: RecordingContext, name: string, taskQueue: string, patchedRun: boolean): Promise<void> {
  const { client, stamp } = context;
  const marker = context.script(name, [
    { toolCalls: [{ id: 'read-notes', name: 'developer__read_file', arguments: { path: 'notes.txt' } }], usage: { inputTokens: 1_000, outputTokens: 100 } },
    { text: 'The notes say 42.', usage: { inputTokens: 1_200, outputTokens: 50 } },
  ]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [context.subagent(`Read the notes ${marker}`, { route: { provider: 'scripted', model: 'priced-model' } })],
  });
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const upserts = events.filter((event) => event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ErrandCostUsd !== undefined).length;
  if (patchedRun && upserts === 0) throw new Error(`${name}: the run never set ErrandCostUsd`);
  if (!patchedRun && upserts > 0) throw new Error(`${name}: ErrandCostUsd was set although the patch was withheld`);
  await context.record(`subagent-${name}`, workflowId);
}

/** A priced subagent with the current code (the `cost-search-attribute` patch's marker and upserts). */
export function recordCostPatched(context: RecordingContext): Promise<void> {
  return recordCost(context, 'cost', context.taskQueue, true);
}

/** The same subagent as code from before the `cost-search-attribute` patch runs it. */
export function recordCostBeforePatch(context: RecordingContext): Promise<void> {
  return recordCost(context, 'cost-before-cost-patch', context.withheldTaskQueue, false);
}

/** An answer longer than the inline limit (src/contracts/limits.ts), every line of it different. */
function longAnswer(): string {
  return Array.from({ length: 40 }, (_, line) => `Line ${line + 1} of the child's long answer.`).join('\n');
}

/**
 * A session delegates in the foreground to a child whose answer is longer than the inline limit: with the
 * `slim-child-result` patch the child returns a preview and a reference (its last answer is not read back);
 * before it, the child reads the whole answer back and returns it.
 */
async function recordLongChild(context: RecordingContext, name: string, taskQueue: string, slim: boolean): Promise<void> {
  const { client, stamp } = context;
  const answer = longAnswer();
  const childMarker = context.script(`${name}-child`, [{ text: answer }]);
  const marker = context.script(name, [
    { toolCalls: [{ id: 'delegate-long', name: 'delegate', arguments: { instructions: `Write it all down ${childMarker}`, description: 'long answer' } }] },
    { text: 'The child wrote it all down.' },
  ]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: `recorded ${name}` }] });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Have it written down ${marker}` }] });
  await context.waitUntil('the session reply', async () => context.stepsOf(name).length === 0 && (await handle.query(transcriptQuery)).state === 'waiting');
  await handle.signal(cancelSignal, { reason: 'recording done' });
  await handle.result();
  const childResult = JSON.stringify(await client.workflow.getHandle(firstTaskId(context, workflowId, taskQueue)).result());
  const whole = childResult.includes(JSON.stringify(answer).slice(1, -1));
  if (slim && whole) throw new Error(`${name}: the child returned its whole answer although it has a parent`);
  if (!slim && !whole) throw new Error(`${name}: the child returned no whole answer although the patch was withheld`);
  await context.record(`session-${name}`, workflowId);
  await context.record(`session-${name}-child`, firstTaskId(context, workflowId, taskQueue));
}

/**
 * A session delegates in the foreground to a child of several quick turns: with the `progress-throttle` patch
 * the child sends fewer progress signals than turns (and records the marker), before it one per turn.
 */
async function recordProgressThrottle(context: RecordingContext, name: string, taskQueue: string, throttled: boolean): Promise<void> {
  const { client, stamp } = context;
  // Few enough that the child, signalling every turn before the patch, stays under the recording server's
  // continue-as-new threshold: the fixture is the child's one run.
  const turns = 5;
  const childMarker = context.script(`${name}-child`, [
    ...Array.from({ length: turns - 1 }, (_, index): ScriptStep => ({ toolCalls: [{ id: `list-${index}`, name: 'developer__list_directory', arguments: { path: '.' } }] })),
    { text: 'Listed it four times.' },
  ]);
  const steps: ScriptStep[] = [
    { toolCalls: [{ id: 'delegate-lister', name: 'delegate', arguments: { instructions: `List the folder four times ${childMarker}`, description: 'lister' } }] },
    { text: 'The lister is done.' },
  ];
  const marker = context.script(name, steps);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: `recorded ${name}` }] });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Delegate the listing ${marker}` }] });
  await context.waitUntil('the session reply', async () => steps.length === 0 && (await handle.query(transcriptQuery)).state === 'waiting');
  await handle.signal(cancelSignal, { reason: 'recording done' });
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const signals = events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'childProgress').length;
  if (throttled && signals >= turns) throw new Error(`${name}: ${signals} progress signals for ${turns} turns although the throttle's patch was applied`);
  if (!throttled && signals !== turns) throw new Error(`${name}: ${signals} progress signals for ${turns} turns, expected one per turn with the patch withheld`);
  const childStart = (await client.workflow.getHandle(firstTaskId(context, workflowId, taskQueue)).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  if (childStart?.continuedExecutionRunId) throw new Error(`${name}: the child continued as new; its recorded run would not hold its turns`);
  await context.record(`session-${name}`, workflowId);
  await context.record(`session-${name}-child`, firstTaskId(context, workflowId, taskQueue));
}

/**
 * A top-level delegation and a session answer longer than the inline limit: with the
 * `long-texts-by-reference` patch each reads its answer back only up to the result's inline maximum (the
 * answer here is under it, so the delegation's result still carries it whole); before it, each reads the
 * whole answer back.
 */
async function recordLongAnswer(context: RecordingContext, name: string, taskQueue: string): Promise<void> {
  const { client, stamp } = context;
  const answer = longAnswer();
  const marker = context.script(name, [{ text: answer }]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [context.subagent(`Write it all down ${marker}`)] });
  const result = await handle.result();
  if (result.output !== answer) throw new Error(`${name}: the delegation's result does not carry its whole answer (${result.output.length} of ${answer.length} characters)`);
  const sessionMarker = context.script(`${name}-session`, [{ text: answer }]);
  const sessionId = `errand-record-${name}-session-${stamp}`;
  const session = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: sessionId, args: [{ ...context.sessionInput, label: `recorded ${name}` }] });
  await session.executeUpdate(sendMessageUpdate, { args: [{ message: `Write it all down ${sessionMarker}` }] });
  await context.waitUntil('the session reply', async () => context.stepsOf(`${name}-session`).length === 0 && (await session.query(transcriptQuery)).state === 'waiting');
  await session.signal(cancelSignal, { reason: 'recording done' });
  await session.result();
  await context.record(`subagent-${name}`, workflowId);
  await context.record(`session-${name}`, sessionId);
}

/** Long answers with the current code (the `long-texts-by-reference` patch's markers). */
export function recordLongAnswerPatched(context: RecordingContext): Promise<void> {
  return recordLongAnswer(context, 'long-answer', context.taskQueue);
}

/** The same delegation and session as code from before the `long-texts-by-reference` patch runs them. */
export function recordLongAnswerBeforePatch(context: RecordingContext): Promise<void> {
  return recordLongAnswer(context, 'long-answer-before-patch', context.withheldTaskQueue);
}

/** A child's long answer with the current code (the `slim-child-result` patch's marker, a slim result). */
export function recordLongChildPatched(context: RecordingContext): Promise<void> {
  return recordLongChild(context, 'long-child', context.taskQueue, true);
}

/** The same session and child as code from before the `slim-child-result` patch runs them. */
export function recordLongChildBeforePatch(context: RecordingContext): Promise<void> {
  return recordLongChild(context, 'long-child-before-slim-patch', context.withheldTaskQueue, false);
}

/** Throttled progress with the current code (the `progress-throttle` patch's marker in the child). */
export function recordProgressThrottlePatched(context: RecordingContext): Promise<void> {
  return recordProgressThrottle(context, 'progress-throttle', context.taskQueue, true);
}

/** The same delegation as code from before the `progress-throttle` patch runs it: a signal per turn. */
export function recordProgressThrottleBeforePatch(context: RecordingContext): Promise<void> {
  return recordProgressThrottle(context, 'progress-throttle-before-patch', context.withheldTaskQueue, false);
}

/**
 * A subagent with a Stop hook answers on its last turn: with the `stop-hook-every-stop` patch the hook runs
 * (and its block, exit 2, is only noted: there is no turn left); before it, no hook runs at the last turn.
 */
async function recordStopHookLastTurn(context: RecordingContext, name: string, taskQueue: string, hookRuns: boolean): Promise<void> {
  const { client, stamp } = context;
  const marker = context.script(name, [{ text: 'The notes say 42.' }]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [context.subagent(`Read the notes ${marker}`, {
      maxTurns: 1,
      hooks: { agentName: 'recorded-agent', file: 'recorded: agents/recorded-agent.md', stop: [{ hooks: [{ command: 'echo "summarise the notes first" >&2; exit 2', timeoutSeconds: 10 }] }] },
    })],
  });
  const result = (await handle.result()) as { status: string };
  if (result.status !== 'completed') throw new Error(`${name}: the run ended ${result.status}, expected completed`);
  const scheduled = (await activityTypes(handle)).filter((type) => type === 'runAgentHook').length;
  if (hookRuns && scheduled !== 1) throw new Error(`${name}: expected the Stop hook activity once at the last turn, got ${scheduled}`);
  if (!hookRuns && scheduled !== 0) throw new Error(`${name}: hooks ran although their patch was withheld`);
  await context.record(`subagent-${name}`, workflowId);
}

/** The Stop hook at the last turn with the current code (the `stop-hook-every-stop` patch's marker and hook activity). */
export function recordStopHookLastTurnPatched(context: RecordingContext): Promise<void> {
  return recordStopHookLastTurn(context, 'stop-hook-last-turn', context.taskQueue, true);
}

/** The same subagent as code from before the `stop-hook-every-stop` patch runs it. */
export function recordStopHookLastTurnBeforePatch(context: RecordingContext): Promise<void> {
  return recordStopHookLastTurn(context, 'stop-hook-last-turn-before-patch', context.withheldTaskQueue, false);
}

/**
 * A priced session with a cost cap asks for three $0.008 children in one turn with $0.016 left: with the
 * `spend-adds-up` patch the two that fit are started and reserve it all, the third is refused; before it,
 * each child was given the whole remainder and all three started.
 */
async function recordSpendAddsUp(context: RecordingContext, name: string, taskQueue: string, adds: boolean): Promise<void> {
  const { client, stamp } = context;
  const children = [1, 2, 3].map((n) => context.script(`${name}-child-${n}`, [{ text: `child ${n} done`, usage: { inputTokens: 100, outputTokens: 0 } }]));
  const marker = context.script(name, [
    // 1,000 × 2 = 2,000 of the session's 18,000 micro-dollars: 16,000 are left for the children.
    { toolCalls: children.map((child, index) => ({ id: `delegate-${index + 1}`, name: 'delegate', arguments: { instructions: `Count ${child}`, description: `count ${index + 1}`, model: 'priced-model', cost_budget_usd: 0.008 } })), usage: { inputTokens: 1_000, outputTokens: 0 } },
    { text: 'Counted.', usage: { inputTokens: 100, outputTokens: 0 } },
  ]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', {
    taskQueue,
    workflowId,
    args: [{ ...context.sessionInput, label: `recorded ${name}`, route: { provider: 'scripted', model: 'priced-model' }, costBudgetMicroUsd: 18_000 }],
  });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Count three times ${marker}` }] });
  await context.waitUntil(`${name}: the answer`, async () => (await handle.query(transcriptQuery)).entries.some((entry) => entry.role === 'assistant' && entry.text === 'Counted.'));
  await handle.cancel();
  await handle.result().catch(() => undefined);
  // The recording server suggests a continue-as-new early: the fan-out is in the first run.
  const firstRunId = handle.firstExecutionRunId;
  const events = (await client.workflow.getHandle(workflowId, firstRunId).fetchHistory()).events ?? [];
  const started = events.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes).length;
  if (started !== (adds ? 2 : 3)) throw new Error(`${name}: ${started} children started, expected ${adds ? 2 : 3}`);
  await context.record(`session-${name}`, workflowId, firstRunId);
}

/** The fan-out with the current code (the `spend-adds-up` patch's marker; the third child refused). */
export function recordSpendAddsUpPatched(context: RecordingContext): Promise<void> {
  return recordSpendAddsUp(context, 'spend-adds-up', context.taskQueue, true);
}

/** The same fan-out as code from before the `spend-adds-up` patch runs it (all three children start). */
export function recordSpendAddsUpBeforePatch(context: RecordingContext): Promise<void> {
  return recordSpendAddsUp(context, 'spend-adds-up-before-patch', context.withheldTaskQueue, false);
}

/**
 * An MCP session starts a background task and, once it settled, its client's next call carries the notice:
 * with the `mcp-notices-kept-until-acknowledged` patch the notice is numbered and kept until the caller's
 * acknowledgement (a signal); before it, the call takes it.
 */
async function recordMcpNotices(context: RecordingContext, name: string, taskQueue: string, kept: boolean): Promise<void> {
  const { client, stamp } = context;
  const childMarker = context.script(`${name}-child`, [{ text: 'Noted.' }]);
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: `recorded ${name}`, mcp: true }] });
  await handle.executeUpdate(callToolUpdate, { args: [{ name: 'delegate', arguments: { instructions: `Note it ${childMarker}`, description: 'noter', async: true } }] });
  await context.waitUntil('the task\'s notice', async () => (await handle.query(pendingNoticesQuery)).length > 0);
  const result = await handle.executeUpdate(callToolUpdate, { args: [{ name: 'list_subagent_models', arguments: {} }] });
  if (result.notices.length !== 1) throw new Error(`${name}: the call carried ${result.notices.length} notices, expected 1`);
  if (kept && result.noticesUpTo !== 1) throw new Error(`${name}: the notice was not numbered although its patch was applied`);
  if (!kept && result.noticesUpTo !== undefined) throw new Error(`${name}: the notice was numbered although its patch was withheld`);
  if (kept) await handle.signal(ackNoticesSignal, { upTo: result.noticesUpTo ?? 0 });
  await context.waitUntil('no notice left', async () => (await handle.query(pendingNoticesQuery)).length === 0);
  await handle.signal(cancelSignal, { reason: 'recording done' });
  await handle.result();
  await context.record(`session-${name}`, workflowId);
}

/** Notices kept until acknowledged, with the current code (the patch's marker in the MCP session). */
export function recordMcpNoticesPatched(context: RecordingContext): Promise<void> {
  return recordMcpNotices(context, 'mcp-notices', context.taskQueue, true);
}

/** The same MCP session as code from before the patch runs it: the call takes the notice. */
export function recordMcpNoticesBeforePatch(context: RecordingContext): Promise<void> {
  return recordMcpNotices(context, 'mcp-notices-before-patch', context.withheldTaskQueue, false);
}

/**
 * A workflow run (SEMANTICS §7): a script fans out eight agents, then asks a ninth with their answers; the
 * recording server's low continue-as-new threshold makes the run continue as new between rounds (once no
 * agent runs), carrying the journal's reference. Records the first and the last run.
 */
export async function recordWorkflowRun(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp } = context;
  // Eight parts at two at once: enough events that the recording server suggests continue-as-new while parts remain.
  const markers = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => context.script(`workflow-run-agent-${n}`, [{ text: `part ${n}` }]));
  const last = context.script('workflow-run-sum', [{ text: 'all eight parts' }]);
  const script = [
    'const parts = await parallel(args.markers.map((marker, index) => () => agent(`Write part ${index + 1} ${marker}`, { label: "part" })));',
    'return { parts, sum: await agent(`Sum ${parts.join(", ")} ${args.last}`, { label: "sum", phase: "sum" }) };',
  ].join('\n');
  const workflowId = `errand-record-workflow-run-${stamp}`;
  const input: WorkflowRunInput = { script, scriptName: 'recorded.js', args: { markers, last }, workingDir: context.workingDir, caps: {}, concurrency: 2, maxAgents: 10, startedBy: 'recording' };
  const handle = await client.workflow.start(workflowRunWorkflowType, { taskQueue, workflowId, args: [input] });
  const result = (await handle.result()) as WorkflowRunResult;
  if (result.status !== 'completed' || JSON.stringify(result.result) !== JSON.stringify({ parts: ['part 1', 'part 2', 'part 3', 'part 4', 'part 5', 'part 6', 'part 7', 'part 8'], sum: 'all eight parts' })) {
    throw new Error(`workflow-run: the run ended ${result.status} with ${JSON.stringify(result.result ?? result.diagnostic)}`);
  }
  const firstRunId = handle.firstExecutionRunId;
  const latest = await client.workflow.getHandle(workflowId).describe();
  if (latest.runId === firstRunId) throw new Error('workflow-run: the run did not continue as new (the recording server suggests it after a few events)');
  await context.record('workflow-run-run-1', workflowId, firstRunId);
  await context.record('workflow-run-last-run', workflowId);
}

import { childWorkflowId } from '../../src/contracts/workflow-ids';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ModelRequest } from '../../src/contracts/model';
import type { SessionInput } from '../../src/contracts/session';
import { sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import { defaultTaskLimits } from '../../src/domain/task-limits';
import { createScriptedModel, type ScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { sessionStartOptions } from '../../src/observability/start-options';
import { testActivitySettings } from '../support/temporal';

/**
 * A session whose model delegates two tasks in one turn (foreground, run in parallel), then answers
 * from their results. Shared by the observability tests: the search-attribute test reads it back through
 * the client, the browser test looks at it in the Web UI.
 */

/** The first user message of a request (the session's message, or a child's task). */
function firstUserText(request: ModelRequest): string {
  const user = request.messages.find((message) => message.role === 'user');
  return user?.role === 'user' ? user.content : '';
}

/**
 * One scripted model for every session of a test file. It answers from the markers in the request, not
 * from a queue, so parallel children and retried calls get the same answers:
 * - a session message with `[session]`: first two `delegate` calls, then a final answer;
 * - a child task with `[child:1]`: lists the working directory once (a real tool activity), then answers;
 * - a child task with `[child:2]`: answers at once.
 */
export function createSessionModel(): ScriptedModel {
  return createScriptedModel((request): ScriptStep | undefined => {
    const task = firstUserText(request);
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    const child = /\[child:(\d)\]/.exec(task)?.[1];
    if (child === '1') {
      return turn === 0
        ? { toolCalls: [{ id: 'ls-1', name: 'developer__list_directory', arguments: { path: '.' } }] }
        : { text: 'Child one: the folder holds notes.txt.' };
    }
    if (child === '2') return { text: 'Child two: nothing to report.' };
    if (task.includes('[session]')) {
      if (turn > 0) return { text: 'Both tasks are done: notes.txt exists and there is nothing else to report.' };
      return {
        text: 'I will ask two subagents.',
        toolCalls: [
          { id: 'delegate-1', name: 'delegate', arguments: { instructions: 'List the working folder and report what is there [child:1]', description: 'survey the working folder' } },
          { id: 'delegate-2', name: 'delegate', arguments: { instructions: 'Say whether anything needs attention [child:2]', description: 'check for open issues' } },
        ],
      };
    }
    return undefined;
  });
}

/** A working folder with one file in it. */
export function sessionWorkingDir(): string {
  const workingDir = mkdtempSync(join(tmpdir(), 'errand-observability-work-'));
  writeFileSync(join(workingDir, 'notes.txt'), 'observability notes\n');
  return workingDir;
}

/** The session input the scenario starts. */
export function sessionInput(workingDir: string, tenant: string): SessionInput {
  return {
    label: 'release check',
    route: { provider: 'scripted', model: 'scripted-model' },
    toolsets: ['developer'],
    workingDir,
    system: { instructions: 'You coordinate release checks by delegating them to subagents.' },
    maxTurnsPerMessage: 5,
    maxDepth: 1,
    tenant,
    tasks: defaultTaskLimits,
    activity: testActivitySettings,
  };
}

/** What the scenario started. */
export interface SessionRun {
  handle: WorkflowHandle;
  sessionId: string;
  childIds: [string, string];
  input: SessionInput;
}

/** The session's message (it carries the `[session]` marker the scripted model looks for). */
export const sessionMessage = 'Check the release: survey the folder and look for open issues. [session]';

/**
 * Starts a session the way the API will (top-level start options), sends it the message, and waits until
 * the session has answered (its transcript holds an assistant entry).
 */
export async function runSessionWithTwoChildren(client: Client, options: { taskQueue: string; workflowId: string; workingDir: string; tenant: string }): Promise<SessionRun> {
  const input = sessionInput(options.workingDir, options.tenant);
  const handle = await client.workflow.start('sessionWorkflow', {
    taskQueue: options.taskQueue,
    workflowId: options.workflowId,
    args: [input],
    ...sessionStartOptions(input, { workflowId: options.workflowId, tenant: options.tenant, startedBy: 'test' }),
  });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: sessionMessage }] });
  await pollUntil(
    async () => {
      const view: TranscriptView = await handle.query(transcriptQuery);
      return view.state === 'waiting' && view.entries.some((entry) => entry.role === 'assistant');
    },
    { timeoutMs: 45_000, what: `session ${options.workflowId} to answer` },
  );
  return { handle, sessionId: options.workflowId, childIds: [childWorkflowId(options.workflowId, 'task-1'), childWorkflowId(options.workflowId, 'task-2')], input };
}

/**
 * Polls `check` every `intervalMs` until it returns true or the time is up (visibility is eventually
 * consistent, so reads right after a change may be stale). The last error, if any, is in the message.
 */
export async function pollUntil(check: () => Promise<boolean>, options: { timeoutMs: number; what: string; intervalMs?: number }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, options.intervalMs ?? 250));
  }
  throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}

/** One scheduled activity of a workflow's history, with the summary the Web UI shows for it. */
export interface ScheduledActivity {
  activityType: string;
  summary: string | undefined;
  /** Run as a local activity (recorded as a marker). */
  local?: true;
}

/** The activities a workflow scheduled, read from its history, with their user-metadata summaries decoded. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<ScheduledActivity[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const payload = event.userMetadata?.summary;
    const summary = payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined;
    if (event.activityTaskScheduledEventAttributes) {
      return [{ activityType: event.activityTaskScheduledEventAttributes.activityType?.name ?? '', summary }];
    }
    // A local activity is recorded as a marker whose data names its type.
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0] : undefined;
    if (!data) return [];
    const recorded = defaultPayloadConverter.fromPayload<{ activity_type?: string }>(data);
    return [{ activityType: recorded.activity_type ?? '', summary, local: true as const }];
  });
}

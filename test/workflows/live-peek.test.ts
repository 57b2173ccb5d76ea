import { Client, Connection as ClientConnection } from '@temporalio/client';
import { afterAll, describe, expect, test } from 'vitest';
import type { OrchestrationDependencies } from '../../src/activities/orchestration-activities';
import { readLiveText } from '../../src/observability/live-text-reader';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { freshFolder, until } from '../support/run-harness';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';

/**
 * The parent's `load(task_id, peek: true)` shows what a background task's model is writing now, read by
 * an orchestration activity from the child's pending model call (a workflow cannot see another's pending
 * activities), marked as partial; when that activity fails, the peek still answers, without partial text.
 * Real dev server and worker; the model is the in-process scripted model, streaming slowly.
 */

const scripts = new ConversationScripts();
const workingDir = freshFolder('errand-live-peek-');

/** A child text long enough to be caught writing: about 50 streamed pieces of 16 characters. */
const childText = Array.from({ length: 120 }, (_, index) => `word${index + 1}`).join(' ');

const healthy = useWorkerStack({ label: 'live-peek', scripted: { scripted: { model: scripts.model } } });
// A worker whose orchestration activities talk to an unreachable Temporal: reading a child's text fails.
const unreachable = ClientConnection.lazy({ address: '127.0.0.1:1' });
afterAll(async () => {
  await unreachable.close().catch(() => undefined);
});
const broken = useWorkerStack({
  label: 'live-peek-broken',
  scripted: { scripted: { model: scripts.model } },
  adjust: (dependencies): WorkerDependencies & Pick<OrchestrationDependencies, 'client'> => ({ ...dependencies, client: () => new Client({ connection: unreachable }) }),
});

/** Starts a session that delegates a slow child in the background, waits until the child writes, then peeks. */
async function peekWhileWriting(name: string, taskQueue: string, chunkDelayMs: number): Promise<{ peek: string; sessionId: string }> {
  const child = scripts.add(`${name}-child`, [{ text: childText, chunkDelayMs }]);
  const sessionId = `errand-${name}-${Date.now()}`;
  const marker = scripts.add(name, async (_request, call) => {
    if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `Write a long list ${child}`, async: true } }] };
    if (call === 1) {
      // Peek only once the child's model call is writing (its heartbeat details are there).
      await until(() => readLiveText(healthy.client, `${sessionId}~task-1`), (live) => (live?.chars ?? 0) > 0, 'the child to write', 20_000);
      return { toolCalls: [{ name: 'load', arguments: { source: 'task-1', peek: true } }] };
    }
    return { text: 'Peeked.' };
  });
  const handle = await healthy.client.workflow.start('sessionWorkflow', { taskQueue, workflowId: sessionId, args: [sessionInput({ workingDir })] });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Delegate and peek ${marker}` }] });
  await until(async () => scripts.of(name).length, (count) => count >= 3, 'the peek result to reach the model', 30_000);
  const peek = toolResults(scripts.of(name)[2]).at(-1)?.content ?? '';
  await handle.cancel();
  return { peek, sessionId };
}

describe('load(task_id, peek: true)', () => {
  test('shows what the task is writing now, marked partial, with its turn', async () => {
    const { peek } = await peekWhileWriting('livepeek', healthy.taskQueue, 100);

    expect(peek).toContain('Task: task-1');
    expect(peek).toContain('State: running');
    const written = /^Writing now \(partial, turn 1\): (.+)$/m.exec(peek)?.[1] ?? '';
    expect(written.length).toBeGreaterThan(0);
    expect(childText.startsWith(written)).toBe(true);
    expect(written.length).toBeLessThan(childText.length);
    expect(scripts.model.rejectedCalls).toEqual([]);
  });

  test('still answers, without partial text, when reading the text fails', async () => {
    // The failing read may take its whole time limit (5 s): the child writes for longer (its pieces 250 ms apart).
    const { peek, sessionId } = await peekWhileWriting('brokenpeek', broken.taskQueue, 250);

    expect(peek).toContain('Task: task-1');
    expect(peek).toContain('State: running');
    expect(peek).not.toContain('Writing now');
    const history = await healthy.client.workflow.getHandle(sessionId).fetchHistory();
    const scheduled = (history.events ?? []).find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'readLiveText');
    const ended = (history.events ?? []).find((event) =>
      [event.activityTaskFailedEventAttributes, event.activityTaskTimedOutEventAttributes].some((attributes) => attributes && String(attributes.scheduledEventId) === String(scheduled?.eventId)));
    expect(scheduled).toBeDefined();
    expect(ended).toBeDefined();
  });
});

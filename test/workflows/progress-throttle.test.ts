import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, test } from 'vitest';
import { childProgressIntervalMs } from '../../src/contracts/limits/workflow';
import { peekQuery, sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { until } from '../support/polling';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A child's progress signals are throttled (decision in limits.ts, `childProgressIntervalMs`): a child of
 * many quick turns adds far fewer signals than turns to its parent's history, while the parent still hears
 * at once that the child waits, runs again or has settled, and `load(peek)` shows its turns. Real dev server
 * and worker; the model is the in-process scripted model.
 */

const scripts = new ConversationScripts();

/** Quick turns of the child: each lists the folder (a tool call), then the child answers. */
const quickTurns = 12;
const listing = (index: number): ScriptStep => ({ toolCalls: [{ id: `list-${index}`, name: 'developer__list_directory', arguments: { path: '.' } }] });

const stack = useWorkerStack({ label: 'progress-throttle', scripted: { scripted: { model: scripts.model } } });

/** The childProgress signals a workflow received. */
async function progressSignals(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'childProgress').length;
}

/** Workflow time from a run's first to its last event, ms (the span its turns fell in). */
async function spanMs(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  const ms = (event: (typeof events)[number] | undefined) => Number(event?.eventTime?.seconds ?? 0) * 1_000 + Math.floor((event?.eventTime?.nanos ?? 0) / 1e6);
  return ms(events.at(-1)) - ms(events[0]);
}

/** Each signal after the first comes at least one interval after the one before, unless the state changed. */
function boundFor(span: number, stateChanges: number): number {
  return 1 + Math.floor(span / childProgressIntervalMs) + stateChanges;
}

describe('progress signals of a child', () => {
  test('a foreground child of many quick turns sends far fewer progress signals than turns, and its settlement', async () => {
    const child = scripts.add('fg-child', [...Array.from({ length: quickTurns }, (_, index) => listing(index)), { text: 'Listed it twelve times.' }]);
    const parentName = 'fg-parent';
    const marker = scripts.add(parentName, [
      { toolCalls: [{ id: 'delegate-fg', name: 'delegate', arguments: { instructions: `List the folder twelve times ${child}`, description: 'lister' } }] },
      { text: 'The lister is done.' },
    ]);
    const handle = await stack.startSession({}, 'progress-fg');
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Delegate the listing ${marker}` }] });
    await until(async () => (await handle.query(transcriptQuery)), (view) => view.state === 'waiting' && view.entries.some((entry) => entry.role === 'assistant'), 'the session reply', 60_000);

    // The settlement reached the parent: the delegate call answered with the child's words, and its record says completed.
    const delegateResult = toolResults(scripts.of(parentName)[1]).at(-1)?.content ?? '';
    expect(delegateResult).toContain('Listed it twelve times.');
    const task = (await handle.query(peekQuery)).tasks?.find((entry) => entry.taskId === 'task-1');
    expect(task).toMatchObject({ state: 'completed', turns: quickTurns + 1 });

    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    const signals = await progressSignals(handle);
    expect(signals).toBeGreaterThanOrEqual(1);
    expect(signals).toBeLessThanOrEqual(boundFor(await spanMs(childHandle), 0));
    // The child's history holds as many progress sends as the parent received (none were lost, none were extra).
    const childEvents = (await childHandle.fetchHistory()).events ?? [];
    expect(childEvents.filter((event) => event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'childProgress')).toHaveLength(signals);
    await handle.cancel();
  });

  test('a continuable child: the parent hears at once that it waits and that it runs again, and load(peek) shows its turns', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const childSteps: ScriptStep[] = [...Array.from({ length: quickTurns }, (_, index) => listing(index)), { text: 'Ready after twelve listings.' }];
    const child = scripts.add('bg-child', async (_request, call) => {
      if (call < childSteps.length) return childSteps[call];
      await released;
      return { text: 'Second answer.' };
    });
    const parentName = 'bg-parent';
    const handle = await stack.startSession({}, 'progress-bg');
    const marker = scripts.add(parentName, async (_request, call) => {
      if (call === 0) return { toolCalls: [{ id: 'delegate-bg', name: 'delegate', arguments: { instructions: `List, then wait ${child}`, continuable: true, description: 'lister' } }] };
      if (call === 1) {
        // Peek once the parent's record says the child waits (its settlement arrived).
        await until(async () => (await handle.query(peekQuery)).tasks?.[0]?.state, (state) => state === 'waiting', 'the child to wait', 60_000);
        return { toolCalls: [{ id: 'peek-bg', name: 'load', arguments: { source: 'task-1', peek: true } }] };
      }
      return { text: `Noted (${call}).` };
    });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Delegate a lister ${marker}` }] });
    await until(async () => scripts.of(parentName).length, (count) => count >= 3, 'the peek result to reach the model', 60_000);

    const peekText = toolResults(scripts.of(parentName)[2]).at(-1)?.content ?? '';
    expect(peekText).toContain('State: waiting');
    expect(peekText).toContain(`Turns: ${quickTurns + 1} of`);

    // A new activation: its first turn is reported at once although the last report was within the interval.
    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    await childHandle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Once more' }] });
    await until(async () => (await handle.query(peekQuery)).tasks?.[0], (task) => task?.state === 'running' && task.turns === quickTurns + 2, 'the parent to hear that the child runs again', 30_000);
    release();
    await until(async () => (await handle.query(peekQuery)).tasks?.[0]?.state, (state) => state === 'waiting', 'the child to wait again', 30_000);

    // The first activation's quick turns: far fewer signals than turns (one more for the second activation).
    const signals = await progressSignals(handle);
    expect(signals).toBeLessThanOrEqual(boundFor(await spanMs(childHandle), 1));
    await handle.cancel();
  });
});

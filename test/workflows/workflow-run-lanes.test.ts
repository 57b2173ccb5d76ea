import { expect, test } from 'vitest';
import type { FinishedWorkflowAgent } from '../../src/contracts/workflow-run-activities';
import { journalNow, restartAgent, roundWanted, type Lanes } from '../../src/workflows/workflow-run-lanes';
import type { AgentSlot } from '../../src/workflows/workflow-run-view';

/** How a workflow run decides to journal ends and to run a round while its lanes stay full (decision 0038). */

const lanes = (overrides: Partial<Lanes>): Lanes => ({ running: 4, finished: 1, queued: 10, concurrency: 4, dueToContinue: false, ...overrides });

test('ends are journaled in batches: a lane set of them, a low queue, or idle lanes', () => {
  expect(journalNow(lanes({ finished: 0, running: 0 }))).toBe(false);
  expect(journalNow(lanes({ finished: 1 }))).toBe(false);
  expect(journalNow(lanes({ finished: 4 }))).toBe(true);
  expect(journalNow(lanes({ finished: 1, queued: 3 }))).toBe(true);
  expect(journalNow(lanes({ finished: 1, running: 0 }))).toBe(true);
  // Due to continue as new: no round follows, so a low queue alone waits for the batch or the drain.
  expect(journalNow(lanes({ finished: 1, queued: 0, dueToContinue: true }))).toBe(false);
  expect(journalNow(lanes({ finished: 1, running: 0, dueToContinue: true }))).toBe(true);
});

test('a round follows new results only when the queue runs low or nothing runs, and never when due to continue as new', () => {
  expect(roundWanted(lanes({ queued: 4 }))).toBe(false);
  expect(roundWanted(lanes({ queued: 3 }))).toBe(true);
  expect(roundWanted(lanes({ queued: 10, running: 0 }))).toBe(true);
  expect(roundWanted(lanes({ queued: 0, running: 0, dueToContinue: true }))).toBe(false);
});

function slot(key: string, state: AgentSlot['state']): AgentSlot {
  return { key, n: 1, label: null, phase: null, workflowId: `run~agent-${key}`, state, started: true, tokens: 0, costMicroUsd: 0, startedAt: 0, endedAt: null, failure: null };
}

test('a restart refuses a running agent and drops a finished one with its end still waiting for the journal', () => {
  const slots = new Map([['a', slot('a', 'running')], ['b', slot('b', 'done')], ['c', slot('c', 'done')]]);
  const removals: string[] = [];
  const finished: FinishedWorkflowAgent[] = [{ key: 'b', workflowId: 'run~agent-b' }, { key: 'c', workflowId: 'run~agent-c' }];
  expect(restartAgent('a', slots, removals, finished)).toMatchObject({ restarted: false, message: expect.stringMatching(/agent a is running/) });
  expect(restartAgent('b', slots, removals, finished)).toMatchObject({ restarted: true });
  expect(removals).toEqual(['b']);
  expect([...slots.keys()]).toEqual(['a', 'c']);
  // Journaled after its removal, b's old end would stay in the journal: it is dropped from the batch.
  expect(finished).toEqual([{ key: 'c', workflowId: 'run~agent-c' }]);
  // A key the run no longer tracks (journaled long ago, its slot dropped) is restarted too.
  expect(restartAgent('d', slots, removals, finished)).toMatchObject({ restarted: true });
  expect(removals).toEqual(['b', 'd']);
});

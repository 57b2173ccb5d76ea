import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { AgentState, CarriedAgentInput } from '../../src/contracts/agent-state';
import { carriedTranscriptEntries, previewLength } from '../../src/contracts/limits';
import { zeroUsage } from '../../src/contracts/model';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import {
  agentStateOf,
  blockStop,
  carriedAgentState,
  expectFinalOutput,
  newAgentState,
  rejectFinalOutputs,
  remember,
  remindFinalOutput,
  startAttempt,
  startRun,
} from '../../src/domain/agent-state';
import { addTask } from '../../src/domain/task-registry';

/** The carried input of the first event of a recorded history (a run that continued as new before decision 0040). */
function recordedCarriedInput(file: string): CarriedAgentInput {
  const history = JSON.parse(readFileSync(resolve(__dirname, '..', 'fixtures', 'histories', file), 'utf8')) as {
    events: Array<{ workflowExecutionStartedEventAttributes?: { input?: { payloads?: Array<{ data?: string }> } } }>;
  };
  const data = history.events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  if (!data) throw new Error(`${file} has no workflow input`);
  const input = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { carried?: CarriedAgentInput };
  if (!input.carried) throw new Error(`${file}'s input carries no state`);
  return input.carried;
}

describe('the agent state as one value', () => {
  test('an input carried by an earlier build (fields written only when set) becomes a whole state', () => {
    const old = recordedCarriedInput('session-continuables-run-2.json');
    // The recorded shape lacks the fields that build wrote only when they differed from their start.
    expect(old).not.toHaveProperty('retiredUsage');
    expect(old).not.toHaveProperty('stopHookBlocked');
    expect(old).not.toHaveProperty('attempt');
    const state = agentStateOf(old, 1);
    expect(Object.keys(state).sort()).toEqual(expect.arrayContaining(Object.keys(newAgentState(1))));
    expect(state.retiredUsage).toEqual(zeroUsage);
    expect(state.stopHookBlocked).toBe(false);
    expect(state.attempt).toEqual({ number: 1, messageBase: 0 });
    expect(state.lastNoticeNumber).toBe(0);
    // Everything it did carry is kept as it was.
    const { phase: _phase, ...fields } = old;
    for (const [key, value] of Object.entries(fields)) expect(state[key as keyof AgentState]).toEqual(value);
    expect(state.startedAt).toBe(old.startedAt);
  });

  test('an old input\'s Stop-hook flag (written as `true` or absent) and notice numbers survive', () => {
    const old: CarriedAgentInput = { ...recordedCarriedInput('session-probe-loop-run-2.json'), stopHookBlocked: true, pendingNotices: [{ text: 'n', number: 7 }] };
    const state = agentStateOf(old, 1);
    expect(state.stopHookBlocked).toBe(true);
    // A notice offered before the counter was carried keeps its number: the next one is 8.
    expect(state.lastNoticeNumber).toBe(7);
  });

  test('what is carried is the whole state (a new field travels with no other change), with previews for long parts', () => {
    let state = newAgentState(1_000);
    state = blockStop(expectFinalOutput(state, 'schema-key'));
    for (let index = 0; index < carriedTranscriptEntries + 5; index += 1) state = remember(state, 'user', `message ${index}`, 2_000 + index);
    const added = addTask(state, { parentWorkflowId: 'p', mode: 'background', description: 'd', now: 3_000 });
    const long = 'x'.repeat(previewLength * 3);
    const task = { ...added.task, result: { output: long, partialOutput: '', outputRef: { conversationId: 'c', seq: 4 } } as SubagentResult };
    state = { ...state, ...added.registry, tasks: [task] };
    const carried = carriedAgentState(state, 'waiting');
    expect(carried.phase).toBe('waiting');
    expect(Object.keys(carried).filter((key) => key !== 'phase').sort()).toEqual(Object.keys(state).sort());
    expect(carried.stopHookBlocked).toBe(true);
    expect(carried.finalOutput).toEqual({ schemaKey: 'schema-key', invalidCalls: 0, reminded: false });
    expect(carried.transcript).toHaveLength(carriedTranscriptEntries);
    expect(carried.transcript[0]?.text).toBe('message 5');
    expect(carried.tasks[0]?.result?.output.length).toBe(previewLength);
    // The agent's own record is not cut: only the carried copy is.
    expect(state.tasks[0]?.result?.output).toBe(long);
    // And the next run reads it back as it was.
    expect(agentStateOf(carried, 9_999)).toEqual({ ...state, tasks: carried.tasks, transcript: carried.transcript });
  });

  test('a new run resets its turns, its final_output calls and the Stop-hook flag; the workflow\'s counters stay', () => {
    let state: AgentState = { ...expectFinalOutput(newAgentState(0), 'k'), turns: 5, runTurns: 3 };
    state = rejectFinalOutputs(remindFinalOutput(blockStop(state)), 2, ['bad']);
    expect(state.finalOutput).toEqual({ schemaKey: 'k', invalidCalls: 2, reminded: true, lastErrors: ['bad'] });
    const before = state;
    const next = startRun(state);
    expect(next).toMatchObject({ turns: 5, runTurns: 0, stopHookBlocked: false, finalOutput: { schemaKey: 'k', invalidCalls: 0, reminded: false } });
    expect(before.runTurns).toBe(3);
  });

  test('a retry attempt starts an empty conversation of its own after the earlier attempts\' messages', () => {
    const state: AgentState = { ...newAgentState(0), length: 12, context: { compactions: 1 } as AgentState['context'], lastText: { seq: 11, text: 't', truncated: false } };
    const next = startAttempt(startAttempt(state));
    expect(next.attempt).toEqual({ number: 3, messageBase: 12 });
    expect(next.length).toBe(0);
    expect(next).not.toHaveProperty('context');
    expect(next).not.toHaveProperty('lastText');
  });
});

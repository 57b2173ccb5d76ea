import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, test } from 'vitest';
import { createAgentLoopActivities } from '../../src/activities/agent-loop-activities';
import type { ModelTurnInput, ModelTurnOutput } from '../../src/contracts/activities';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { testDependencies } from '../support/temporal';

/**
 * Stored outcomes, first writer wins (SEMANTICS §5, review M6): an attempt of a model call that timed out
 * may still be running when its retry runs. Both call the model; whichever stores its answer first is the
 * turn's answer, and the other reads it and continues with it — the same answer, the same conversation
 * entry, no conflict error.
 */
describe('two concurrent attempts of one model turn', () => {
  test('both return the answer stored first, and the conversation holds it once', async () => {
    let calls = 0;
    // The first attempt is slow and answers "late"; the second is quick and answers "early".
    const model = createScriptedModel(() => {
      calls += 1;
      return calls === 1 ? { text: 'late answer', delayMs: 400 } : { text: 'early answer', delayMs: 20 };
    });
    const { dependencies } = testDependencies({ scripted: { scripted: { model } } });
    const activities = createAgentLoopActivities(dependencies);
    const conversationId = `fww-${Date.now()}`;
    await dependencies.conversations.append(conversationId, 0, { role: 'system', content: 'You answer.' });
    await dependencies.conversations.append(conversationId, 1, { role: 'user', content: 'Say something.' });
    const input: ModelTurnInput = {
      workflowId: conversationId,
      conversationId,
      length: 2,
      route: { provider: 'scripted', model: 'scripted-model' },
      toolsets: [],
      turn: 1,
      maxTurns: 5,
    };
    const attempt = (): Promise<ModelTurnOutput> => new MockActivityEnvironment().run(activities.modelTurn, input);
    const first = attempt();
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    const second = attempt();
    const [late, early] = await Promise.all([first, second]);
    expect(calls).toBe(2);
    expect(early.text).toBe('early answer');
    expect(late.text).toBe('early answer');
    const stored = await dependencies.conversations.read(conversationId, 3);
    expect(stored[2]).toEqual({ role: 'assistant', content: 'early answer' });
    // A third attempt (a later retry) calls nothing and returns the same.
    const again: ModelTurnOutput = await new MockActivityEnvironment({ attempt: 3 }).run(activities.modelTurn, input);
    expect(again.text).toBe('early answer');
    expect(calls).toBe(2);
  });
});

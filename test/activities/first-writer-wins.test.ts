import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, test } from 'vitest';
import { createAgentLoopActivities } from '../../src/activities/agent-loop-activities';
import type { ModelTurnInput, ModelTurnOutput } from '../../src/contracts/activities';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { testDependencies } from '../support/temporal';
import { TenantSpendGuard } from '../../src/activities/tenant-spend-guard';
import type { SpendRecord } from '../../src/contracts/tenant-spend';

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

/**
 * The losing attempt's call was billed too (review N17, zombie tokens): its cost reaches the tenant's day under
 * a key of its own, and the attempt that returns the winner's answer returns both calls' usage for the run's caps.
 */
describe('the losing attempt of a model turn', () => {
  test("counts in the tenant's day and in the usage it returns", async () => {
    let calls = 0;
    const usage = { inputTokens: 1_000, outputTokens: 100 };
    const model = createScriptedModel(() => {
      calls += 1;
      return calls === 1 ? { text: 'first stored', delayMs: 20, usage } : { text: 'stored second', delayMs: 400, usage };
    });
    const { dependencies } = testDependencies({ scripted: { scripted: { model, models: [{ id: 'scripted-model', prices: { input: 2, output: 8 } }] } } });
    const reports: SpendRecord[] = [];
    const tenantSpend = new TenantSpendGuard({ read: () => Promise.resolve(0), record: (_tenant, record) => Promise.resolve(void reports.push(record)) }, 10_000_000);
    const activities = createAgentLoopActivities({ ...dependencies, tenantSpend });
    const conversationId = `fww-lost-${Date.now()}`;
    await dependencies.conversations.append(conversationId, 0, { role: 'system', content: 'You answer.' });
    await dependencies.conversations.append(conversationId, 1, { role: 'user', content: 'Say something.' });
    const input: ModelTurnInput = { workflowId: conversationId, conversationId, length: 2, route: { provider: 'scripted', model: 'scripted-model' }, toolsets: [], turn: 1, maxTurns: 5, tenant: 'acme' };
    const winner: Promise<ModelTurnOutput> = new MockActivityEnvironment().run(activities.modelTurn, input);
    await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    const loser: Promise<ModelTurnOutput> = new MockActivityEnvironment().run(activities.modelTurn, input);
    const [won, lost] = await Promise.all([winner, loser]);
    expect(calls).toBe(2);
    expect(lost.text).toBe('first stored');
    // 1,000 × $2 + 100 × $8 per million tokens = 2,800 micro-dollars a call.
    expect(won.usage).toMatchObject({ inputTokens: 1_000, outputTokens: 100, costMicroUsd: 2_800 });
    expect(lost.usage).toMatchObject({ inputTokens: 2_000, outputTokens: 200, costMicroUsd: 5_600 });
    const keyed = reports.map((record) => [record.key.replace(/#lost-.*/, '#lost'), record.costMicroUsd]);
    expect(keyed.sort()).toEqual([[`${conversationId}#2`, 2_800], [`${conversationId}#2`, 2_800], [`${conversationId}#2#lost`, 2_800]].sort());
  });
});

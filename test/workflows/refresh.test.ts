import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, test } from 'vitest';
import type { ChatMessage } from '../../src/contracts/model';
import { peekQuery, refreshSignal, sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { ConversationScripts } from '../support/conversation-scripts';
import { until } from '../support/polling';
import { sessionInput, subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The refresh signal (docs/deploy.md, upgrades): a waiting session or continuable continues as new at once,
 * with its conversation and state, so a run that started before a once-per-run behaviour (decision 0021)
 * moves to the current code. A one-shot subagent's run is never moved by it.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'refresh', scripted: { scripted: { model: scripts.model } } });

function userTexts(messages: ChatMessage[]): string[] {
  return messages.filter((message) => message.role === 'user').map((message) => message.content);
}

async function runIdOf(handle: WorkflowHandle): Promise<string> {
  return (await handle.describe()).runId;
}

describe('the refresh signal', () => {
  test('a waiting session continues as new at once and goes on with its conversation', async () => {
    const marker = scripts.add('session', [{ text: 'first reply' }, { text: 'second reply' }]);
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-refresh-session-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `hello ${marker}` }] });
    await until(async () => (await handle.query(transcriptQuery)).state === 'waiting' && scripts.of('session').length === 1, Boolean, 'the first reply');
    const firstRun = await runIdOf(handle);

    await handle.signal(refreshSignal);
    await until(async () => (await runIdOf(handle)) !== firstRun, Boolean, 'a new run after the refresh');
    const newRun = await handle.describe();
    expect(newRun.status.name).toBe('RUNNING');

    await stack.client.workflow.getHandle(handle.workflowId).executeUpdate(sendMessageUpdate, { args: [{ message: 'and again' }] });
    await until(async () => scripts.of('session').length === 2 && (await handle.query(transcriptQuery)).state === 'waiting', Boolean, 'the second reply');
    expect(userTexts(scripts.of('session')[1]?.messages ?? [])).toEqual([`hello ${marker}`, 'and again']);
    await handle.terminate('test over');
  });

  test('a waiting continuable continues as new and answers the next message with the whole conversation; a running one-shot is not moved', async () => {
    const marker = scripts.add('continuable', [{ text: 'first answer' }, { text: 'second answer' }]);
    const workflowId = `errand-refresh-continuable-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Begin ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    await until(async () => ((await handle.query(peekQuery)) as SubagentPeek).state === 'waiting', Boolean, 'the continuable waits');
    const firstRun = await runIdOf(handle);
    await handle.signal(refreshSignal);
    await until(async () => (await runIdOf(handle)) !== firstRun, Boolean, 'a new run after the refresh');
    await stack.client.workflow.getHandle(workflowId).executeUpdate(sendMessageUpdate, { args: [{ message: 'more' }] });
    await until(async () => scripts.of('continuable').length === 2, Boolean, 'the second answer');
    expect(userTexts(scripts.of('continuable')[1]?.messages ?? [])).toEqual([`Begin ${marker}`, 'more']);
    await handle.terminate('test over');

    const slow = scripts.add('one-shot', [{ text: 'done', delayMs: 1_500 }]);
    const oneShot = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-refresh-one-shot-${Date.now()}`, args: [subagentInput({ prompt: `Work ${slow}`, workingDir: stack.workingDir })] });
    const oneShotRun = await runIdOf(oneShot);
    await oneShot.signal(refreshSignal);
    const result = await oneShot.result();
    expect(result.status).toBe('completed');
    expect(await runIdOf(oneShot)).toBe(oneShotRun);
  });
});

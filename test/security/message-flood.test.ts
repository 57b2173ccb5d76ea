import { describe, expect } from 'vitest';
import { sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { attack } from './attack-stack';

/**
 * The attack suite, part 5: a bounded message queue (review N12). A prompt-injected session model starts a
 * continuable task and, while the task is still in its first turn, floods it with `send_message`. The queue
 * is carried across continue-as-new, so an unbounded one could push that input past Temporal's payload limit
 * and leave the workflow failing its tasks for ever. Past `ERRAND_MAX_QUEUED_MESSAGES` each message is
 * refused with a tool error naming the limit, and the worker goes on serving another session.
 */

const scripts = new ConversationScripts();
const cap = 3;
const flood = 6;
const stack = useWorkerStack({ label: 'message-flood', scripted: { scripted: { model: scripts.model } }, env: { ERRAND_MAX_QUEUED_MESSAGES: String(cap) } });

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

describe('message queue', () => {
  attack('flooding a continuable task with send_message during its first turn: refused past ERRAND_MAX_QUEUED_MESSAGES, another session still answers', async () => {
    const child = scripts.add('flood-child', (_request, call) => ({ text: `child answer ${call}`, ...(call === 0 ? { delayMs: 6_000 } : {}) }));
    const marker = scripts.add('flood-parent', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `Stay around ${child}`, continuable: true } }] };
      if (call === 1) return { toolCalls: Array.from({ length: flood }, (_, index) => ({ name: 'send_message', arguments: { task_id: 'task-1', message: `flood ${index}` } })) };
      return { text: toolResults(request).length > 0 ? 'flood sent' : 'noted' };
    });
    const bystander = scripts.add('flood-bystander', () => ({ text: 'still here' }));

    const session = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-flood-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
    await session.executeUpdate(sendMessageUpdate, { args: [{ message: `Flood it ${marker}` }] });
    const floodResults = await until(async () => {
      const third = scripts.of('flood-parent')[2];
      return third ? toolResults(third).filter((result) => result.toolName === 'send_message') : undefined;
    }, 'the flood to be answered');
    expect(floodResults).toHaveLength(flood);
    const delivered = floodResults.filter((result) => !result.isError);
    const refused = floodResults.filter((result) => result.isError);
    expect(delivered).toHaveLength(cap);
    expect(refused).toHaveLength(flood - cap);
    for (const result of refused) expect(result.content).toContain(`${cap} messages are already queued; the limit is ${cap} (ERRAND_MAX_QUEUED_MESSAGES)`);

    // The worker still serves others: another session answers while the flooded task works through its queue.
    const other = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-flood-bystander-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
    await other.executeUpdate(sendMessageUpdate, { args: [{ message: `Hello ${bystander}` }] });
    await until(async () => ((await other.query(transcriptQuery)).entries.some((entry) => entry.role === 'assistant' && entry.text === 'still here') ? true : undefined), 'the other session to answer');
    // The accepted messages run one by one: the task answers each (its first answer and three more).
    await until(async () => (scripts.of('flood-child').length === 1 + cap ? true : undefined), 'the task to answer the queued messages');
    expect(scripts.model.rejectedCalls).toEqual([]);
    await session.cancel();
    await other.cancel();
  }, 120_000);
});

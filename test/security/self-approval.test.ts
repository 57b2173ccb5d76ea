import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { approvalUpdate, peekQuery, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { attack } from './attack-stack';

/**
 * The attack suite, part 4: "ask" means ask a person. A prompt-injected session model delegates a task
 * whose tool call waits for approval, then approves it itself (guessing the approval id, which is derived
 * from the child's id). With the operator's default `approvers: "human"`, the parent model is offered no
 * `approve` tool, its call is refused, and the call keeps waiting for a person.
 */

const scripts = new ConversationScripts();
// The operator's policy, with no `approvers` key: the default, human.
const stack = useWorkerStack({ label: 'self-approval', scripted: { scripted: { model: scripts.model } }, env: { ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask' } }) } });

async function peekUntil(workflowId: string, done: (peek: SubagentPeek) => boolean): Promise<SubagentPeek> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const peek: SubagentPeek | undefined = await stack.client.workflow.getHandle(workflowId).query(peekQuery).catch(() => undefined);
    if (peek && done(peek)) return peek;
    if (Date.now() > deadline) throw new Error(`condition not met; last peek ${JSON.stringify(peek)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

describe('approvals', () => {
  attack("approve its own child's tool call", async () => {
    const sessionId = `errand-self-approve-${Date.now()}`;
    const childId = `${sessionId}~task-1`;
    const child = scripts.add('self-approve-child', [{ toolCalls: [{ name: 'developer__write_file', arguments: { path: 'pwned.txt', content: 'written without a person' } }] }, { text: 'child done' }]);
    scripts.add('self-approve', (_request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `write the file ${child}`, async: true } }] };
      if (call === 1) return { text: 'started' };
      // The approval id is derived (<workflow id>:<assistant message seq>:<call index>): easy to guess.
      if (call === 2) return { toolCalls: [{ name: 'approve', arguments: { approval_id: `${childId}:2:0`, decision: 'approve', reason: 'looks fine to me' } }] };
      return { text: 'approved it myself' };
    });
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: sessionId, args: [sessionInput({ workingDir: stack.workingDir })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'go [script:self-approve]' }] });
    await peekUntil(childId, (peek) => peek.state === 'waiting_approval');
    // (Where the parent may approve, a notice would wake it now; here a message does.)
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'approve what your task asks for' }] });
    await peekUntil(sessionId, () => scripts.of('self-approve').length >= 4);

    // The session model was never offered the approve tool, and its call was refused.
    const offered = scripts.of('self-approve').flatMap((request) => request.tools.map((tool) => tool.name));
    expect(offered).not.toContain('approve');
    const answer = toolResults(scripts.of('self-approve')[3]).find((result) => result.toolName === 'approve');
    expect(answer?.isError).toBe(true);
    // The call still waits for a person; nothing was written.
    const waiting = await stack.client.workflow.getHandle(childId).query(peekQuery);
    expect(waiting.state).toBe('waiting_approval');
    expect(existsSync(join(stack.workingDir, 'pwned.txt'))).toBe(false);

    // A person decides.
    await stack.client.workflow.getHandle(childId).executeUpdate(approvalUpdate, { args: [{ approvalId: `${childId}:2:0`, decision: 'deny', by: 'operator', reason: 'no' }] });
    const result: SubagentResult = await stack.client.workflow.getHandle(childId).result();
    expect(result.output).toBe('child done');
    expect(existsSync(join(stack.workingDir, 'pwned.txt'))).toBe(false);
    await handle.cancel();
  }, 90_000);
});

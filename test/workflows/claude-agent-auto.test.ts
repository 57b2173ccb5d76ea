import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { approvalUpdate, peekQuery, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts, notices, toolResults } from '../support/conversation-scripts';
import { until } from '../support/polling';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { writeFiles } from '../sources/source-files';

/**
 * An agent file's `permissionMode: auto` run end to end (SEMANTICS §6): errand has no classifier, so what
 * the operator's policy asks is decided by a person, even where the operator lets the delegating model
 * decide its tasks' approvals. The agent sits in a subfolder of the project's `.claude/agents`.
 */

// The operator lets a delegating model decide (human-or-parent); the agent file takes that away for its runs.
const policy = JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask' }, approvers: 'human-or-parent' });
const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'claude-auto', scripted: { scripted: { model: scripts.model } }, env: { ERRAND_TOOL_POLICY: policy } });
beforeAll(() => {
  writeFiles(join(stack.workingDir, '.claude', 'agents'), {
    'team/auto-writer.md': ['---', 'name: auto-writer', 'description: Writes files it is asked to write.', 'tools: Write', 'permissionMode: auto', '---', 'You write the files you are asked to write.', ''].join('\n'),
  });
});

describe('permissionMode: auto', () => {
  test('the session model gets no approval notice and its approve is refused; a person decides', async () => {
    const child = scripts.add('auto-child', [{ toolCalls: [{ name: 'developer__write_file', arguments: { path: 'auto.txt', content: 'approved by a person' } }] }, { text: 'child wrote it' }]);
    const session = scripts.add('auto-session', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { source: 'auto-writer', instructions: `write auto.txt ${child}`, async: true } }] };
      const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
      const id = lastUser?.role === 'user' ? /approve (\S+)/.exec(lastUser.content)?.[1] : undefined;
      if (id && request.messages.at(-1)?.role === 'user') return { toolCalls: [{ name: 'approve', arguments: { approval_id: id, decision: 'approve' } }] };
      return { text: `turn ${call}` };
    });
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-claude-auto-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir, approvers: 'human-or-parent' })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `go ${session}` }] });
    const childId = `${handle.workflowId}~task-1`;
    const childHandle = stack.client.workflow.getHandle(childId);
    const childPeek = await until(() => childHandle.query(peekQuery), (peek: SubagentPeek) => (peek.pendingApprovals?.length ?? 0) > 0, 'the approval the child waits for', 30_000);
    const pending = childPeek.pendingApprovals?.[0];
    expect(pending?.tool).toBe('developer__write_file');
    // The session knows its task waits (its approve tool checks that), so a refusal below is the agent file's doing.
    await until(() => handle.query(peekQuery), (peek: SubagentPeek) => peek.tasks?.some((task) => task.taskId === 'task-1' && task.state === 'waiting_approval') === true, 'the session to see task-1 waiting', 30_000);

    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `approve ${pending?.id ?? ''}` }] });
    const refused = await until(async () => scripts.of('auto-session').flatMap((request) => toolResults(request)).find((result) => result.toolName === 'approve'), Boolean, 'the approve result', 30_000);
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toMatch(/was not applied: .*decided by a person \(toolPolicy\.approvers is "human", or its agent file says permissionMode: auto\), not by the delegating agent/);
    expect(existsSync(join(stack.workingDir, 'auto.txt'))).toBe(false);

    // A person decides through the approval update (what the API and CLI use).
    await childHandle.executeUpdate(approvalUpdate, { args: [{ approvalId: pending?.id ?? '', decision: 'approve', by: 'api:test' }] });
    const result: SubagentResult = await childHandle.result();
    expect(result.output).toBe('child wrote it');
    expect(readFileSync(join(stack.workingDir, 'auto.txt'), 'utf8')).toBe('approved by a person');

    // The settlement notice reaches the session; no notice ever invited its model to decide the approval.
    const all = await until(async () => scripts.of('auto-session').flatMap((request) => notices(request)), (texts) => texts.some((text) => text.includes('task-1')), 'the settlement notice', 30_000);
    expect(all.filter((text) => text.includes('waits for approval'))).toEqual([]);
    expect(scripts.of('auto-session').every((request) => request.tools.some((tool) => tool.name === 'approve'))).toBe(true);
    await handle.cancel();
  });
});

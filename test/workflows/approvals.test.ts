import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { approvalUpdate, peekQuery, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { ConversationScripts, notices, toolResults } from '../support/conversation-scripts';
import { sessionInput, subagentInput, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { until } from '../support/polling';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Tool policies and approvals inside subagents: a call under `ask` pauses the subagent (peek shows the
 * tool and its arguments) until a decision arrives by update; approve runs the tool, deny tells the model,
 * no decision in time is a denial, and the wait survives a worker SIGKILL.
 */

// `human-or-parent`: the parent-model test below needs the operator's consent for a model to decide.
const policy = JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask', developer__run_command: 'deny' }, approvers: 'human-or-parent' });
const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'approvals', scripted: { scripted: { model: scripts.model } }, env: { ERRAND_TOOL_POLICY: policy } });

async function waitForApproval(workflowId: string, timeoutMs = 20_000): Promise<SubagentPeek> {
  const handle = stack.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A child started by a session may not exist yet.
    const peek: SubagentPeek | undefined = await handle.query(peekQuery).catch((error: unknown) => {
      if (Date.now() > deadline) throw error;
      return undefined;
    });
    if (!peek) {
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      continue;
    }
    if (peek.state === 'waiting_approval' && (peek.pendingApprovals?.length ?? 0) > 0) return peek;
    if (Date.now() > deadline) throw new Error(`no pending approval; last peek ${JSON.stringify(peek)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

function writeCall(file: string) {
  return { toolCalls: [{ name: 'developer__write_file', arguments: { path: file, content: 'approved content' } }] };
}

describe('tool policies and approvals', () => {
  test('deny tools are not offered; ask pauses with the tool and its arguments; approve runs the tool', async () => {
    const marker = scripts.add('approve', [writeCall('approved.txt'), { text: 'written' }]);
    const workflowId = `errand-approve-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Write ${marker}`, workingDir: stack.workingDir })] });
    const peek = await waitForApproval(workflowId);
    const pending = peek.pendingApprovals?.[0];
    expect(pending?.tool).toBe('developer__write_file');
    expect(pending?.argumentsPreview).toContain('approved.txt');
    expect(pending?.id).toBe(`${workflowId}:2:0`);
    expect(existsSync(join(stack.workingDir, 'approved.txt'))).toBe(false);
    const offered = scripts.of('approve')[0]?.tools.map((tool) => tool.name) ?? [];
    expect(offered).toContain('developer__write_file');
    expect(offered).not.toContain('developer__run_command');
    await expect(handle.executeUpdate(approvalUpdate, { args: [{ approvalId: 'nope', decision: 'approve' }] })).rejects.toThrow();
    await handle.executeUpdate(approvalUpdate, { args: [{ approvalId: pending?.id ?? '', decision: 'approve', by: 'test' }] });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(readFileSync(join(stack.workingDir, 'approved.txt'), 'utf8')).toBe('approved content');
  });

  test('deny: the model gets the denial with the reason and continues', async () => {
    const marker = scripts.add('deny', [writeCall('denied.txt'), { text: 'ok, I will not write it' }]);
    const workflowId = `errand-deny-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Write ${marker}`, workingDir: stack.workingDir })] });
    const peek = await waitForApproval(workflowId);
    await handle.executeUpdate(approvalUpdate, { args: [{ approvalId: peek.pendingApprovals?.[0]?.id ?? '', decision: 'deny', reason: 'not on a Friday', by: 'alice' }] });
    const result: SubagentResult = await handle.result();
    expect(result.output).toBe('ok, I will not write it');
    const denial = toolResults(scripts.of('deny')[1])[0];
    expect(denial?.isError).toBe(true);
    expect(denial?.content).toMatch(/was denied by alice: not on a Friday/);
    expect(existsSync(join(stack.workingDir, 'denied.txt'))).toBe(false);
  });

  test('no decision within the approval timeout counts as a denial', async () => {
    const marker = scripts.add('timeout', [writeCall('late.txt'), { text: 'gave up' }]);
    const result: SubagentResult = await stack.client.workflow.execute('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-approval-timeout-${Date.now()}`,
      args: [subagentInput({ prompt: `Write ${marker}`, workingDir: stack.workingDir, approvalTimeoutMs: 1_000 })],
    });
    expect(result.output).toBe('gave up');
    expect(toolResults(scripts.of('timeout')[1])[0]?.content).toMatch(/denied by timeout: no decision within 1 s/);
  });
});

describe('approvals from the parent model', () => {
  test('a background task waiting for approval sends one notice; the session model approves it with the approve tool', async () => {
    const child = scripts.add('parent-approve-child', [writeCall('by-parent.txt'), { text: 'child wrote it' }]);
    const session = scripts.add('parent-approve', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `write it ${child}`, async: true } }] };
      if (call === 1) return { text: 'started' };
      const notice = notices(request).at(-1) ?? '';
      const id = /approval_id: "([^"]+)"/.exec(notice)?.[1];
      if (id && !request.messages.some((message) => message.role === 'tool' && message.toolName === 'approve')) {
        return { toolCalls: [{ name: 'approve', arguments: { approval_id: id, decision: 'approve', reason: 'fine by me' } }] };
      }
      return { text: `seen: ${notice.split('\n')[0] ?? ''}` };
    });
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-parent-approve-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir, approvers: 'human-or-parent' })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `go ${session}` }] });
    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !(await childHandle.describe().then(() => true, () => false))) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    const childResult: SubagentResult = await childHandle.result();
    expect(childResult.output).toBe('child wrote it');
    expect(readFileSync(join(stack.workingDir, 'by-parent.txt'), 'utf8')).toBe('approved content');
    const approvalNotices = scripts.of('parent-approve').flatMap((request) => notices(request)).filter((text) => text.includes('waits for approval'));
    expect(new Set(approvalNotices).size).toBe(1);
    expect(approvalNotices[0]).toMatch(/Task task-1 waits for approval to call developer__write_file with .*by-parent\.txt/);
    // The session's next model call carries the approve tool's result; the child may finish before that call is made.
    const approved = await until(async () => scripts.of('parent-approve').flatMap((request) => toolResults(request)).find((result) => result.toolName === 'approve'), Boolean, 'the approve result', 20_000);
    expect(approved?.content).toMatch(/^Approved .* for task-1\.$/);
    await handle.cancel();
  });

  test('by default only a person decides: the parent gets no approval notice, no approve tool, and its approve call is refused', async () => {
    const child = scripts.add('human-only-child', [writeCall('by-person.txt'), { text: 'child wrote it' }]);
    const session = scripts.add('human-only', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `write it ${child}`, async: true } }] };
      if (call === 1) return { toolCalls: [{ name: 'approve', arguments: { approval_id: 'made-up', decision: 'approve' } }] };
      return { text: `turn ${call}` };
    });
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-human-only-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `go ${session}` }] });
    const childId = `${handle.workflowId}~task-1`;
    const peek = await waitForApproval(childId, 30_000);
    const pending = peek.pendingApprovals?.[0];
    expect(pending?.tool).toBe('developer__write_file');
    // A person decides through the approval update (what the API and CLI use).
    await stack.client.workflow.getHandle(childId).executeUpdate(approvalUpdate, { args: [{ approvalId: pending?.id ?? '', decision: 'approve', by: 'api:test' }] });
    const childResult: SubagentResult = await stack.client.workflow.getHandle(childId).result();
    expect(childResult.output).toBe('child wrote it');
    const requests = scripts.of('human-only');
    expect(requests.every((request) => !request.tools.some((tool) => tool.name === 'approve'))).toBe(true);
    expect(requests.flatMap((request) => notices(request)).some((text) => text.includes('waits for approval'))).toBe(false);
    const refused = requests.flatMap((request) => toolResults(request)).find((result) => result.toolName === 'approve');
    expect(refused?.content).toMatch(/decided by a person/);
    await handle.cancel();
  });
});

describe('approvals survive a worker SIGKILL', () => {
  let server: ScriptedOpenAIServer;
  const processes: WorkerProcess[] = [];
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    for (const process of processes) await process.kill();
    await server?.close();
  });

  test('the worker dies while a call waits for approval; the approval works after a new worker starts', async () => {
    server.enqueue(writeCall('after-restart.txt'), { text: 'written after the restart' });
    const queue = uniqueTaskQueue('approvals-kill');
    const env = {
      ERRAND_TASK_QUEUE: queue,
      ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-approvals-kill-')),
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
      ERRAND_TOOL_POLICY: policy,
    };
    const first = startWorkerProcess('approvals-first', env);
    processes.push(first);
    await first.ready;
    const workflowId = `errand-approval-kill-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: queue,
      workflowId,
      args: [subagentInput({ prompt: 'Write after restart', workingDir: stack.workingDir, route: { provider: 'http', model: 'gpt-test' } })],
    });
    const peek = await waitForApproval(workflowId, 30_000);
    await first.kill();
    const second = startWorkerProcess('approvals-second', env);
    processes.push(second);
    await second.ready;
    await handle.executeUpdate(approvalUpdate, { args: [{ approvalId: peek.pendingApprovals?.[0]?.id ?? '', decision: 'approve', by: 'test' }] });
    const result: SubagentResult = await handle.result();
    expect(result.output).toBe('written after the restart');
    expect(readFileSync(join(stack.workingDir, 'after-restart.txt'), 'utf8')).toBe('approved content');
  }, 120_000);
});

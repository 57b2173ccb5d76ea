import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { approvalUpdate, peekQuery } from '../../src/contracts/subagent-messages';
import type { RetryPolicy } from '../../src/contracts/subagent';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { scheduledActivities } from '../observability/session-scenario';
import { freshFolder, toolResult, until, useRunHarness, type RunHarness } from '../support/run-harness';

/**
 * A recipe's goose `retry` (SEMANTICS §5) against the real dev server, real shell commands and a scripted
 * model: checks run after the subagent answers, each an activity of its own; a failure runs `on_failure`
 * and starts the subagent again in a fresh conversation; the last failure ends the run `failed` with the
 * check's output; under an `ask` policy a check waits for an approval like a `run_command` call.
 */

const harness = useRunHarness('retry');
const asking = useRunHarness('retry-ask', { ERRAND_TOOL_POLICY: JSON.stringify({ rules: { developer__run_command: 'ask' } }) });

const peekOf = (run: RunHarness, id: string) => run.client.workflow.getHandle(id).query(peekQuery) as Promise<SubagentPeek>;

function retry(overrides: Partial<RetryPolicy> & Pick<RetryPolicy, 'checks'>): RetryPolicy {
  return { maxRetries: 2, timeoutSeconds: 60, onFailureTimeoutSeconds: 60, ...overrides };
}

describe('recipe checks (goose retry)', () => {
  test('a failed check runs on_failure and starts the subagent again in a fresh conversation; passing checks complete it', async () => {
    const workingDir = freshFolder('errand-retry-pass-');
    const check = 'while [ ! -e gate ]; do sleep 0.1; done; test -f done.txt';
    const marker = harness.scripts.add('retry-pass', [
      { text: 'Done (but I did not write the file).' },
      { toolCalls: [{ name: 'developer__write_file', arguments: { path: 'done.txt', content: 'done\n' } }] },
      { text: 'Done: done.txt is there.' },
    ]);
    const prompt = `Create done.txt ${marker}`;
    const id = harness.nextId('retry-pass');
    const handle = await harness.startSubagent(id, { prompt, workingDir, retry: retry({ checks: [{ type: 'shell', command: check }], onFailure: 'echo cleanup >> cleanup.log' }) });

    // The first attempt's check waits on the gate: peek shows it.
    const during = await until(() => peekOf(harness, id), (peek) => peek.retry?.state === 'running check 1 of 1', 'the first check running');
    expect(during.retry).toEqual({ attempt: 1, attempts: 3, state: 'running check 1 of 1' });
    writeFileSync(join(workingDir, 'gate'), '');

    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Done: done.txt is there.');
    expect(result.checks).toEqual({ attempts: 2, passed: true });
    expect(result.turns).toBe(3);
    expect(readFileSync(join(workingDir, 'cleanup.log'), 'utf8')).toBe('cleanup\n');

    // Attempt 2 started from the recipe's instructions: a conversation of its own with the system prompt and the task only.
    const requests = harness.scripts.of('retry-pass');
    expect(requests).toHaveLength(3);
    expect(requests[1]?.messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(requests[1]?.messages[1]?.content).toBe(prompt);
    expect(requests[1]?.messages[0]?.content).toBe(requests[0]?.messages[0]?.content);

    expect((await peekOf(harness, id)).retry).toEqual({ attempt: 2, attempts: 3, state: 'checks passed' });
    const summaries = (await scheduledActivities(handle)).map((activity) => activity.summary);
    expect(summaries.filter((summary) => summary === `check 1: ${check}`)).toHaveLength(2);
    expect(summaries.filter((summary) => summary === 'on_failure: echo cleanup >> cleanup.log')).toHaveLength(1);
  });

  test('checks that still fail on the last attempt fail the run with the output; the parent reads the whole output', async () => {
    const workingDir = freshFolder('errand-retry-fail-');
    const check = 'i=0; while [ $i -lt 300 ]; do echo "line $i of the failing test output"; i=$((i+1)); done; exit 3';
    writeFileSync(join(workingDir, 'always-fails.yaml'), [
      'version: 1.0.0',
      'title: Always fails',
      'description: Its check never passes',
      'instructions: Try to make the tests pass.',
      'prompt: Make the tests pass.',
      'retry:',
      '  max_retries: 1',
      '  checks:',
      '    - type: shell',
      `      command: ${JSON.stringify(check)}`,
      '',
    ].join('\n'));
    const child = harness.scripts.add('retry-fail-child', (): ScriptStep => ({ text: 'I tried.' }));
    const session = harness.scripts.add('retry-fail', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'always-fails', instructions: child } }] },
      { text: 'It failed.' },
    ]);
    const handle = await harness.startSession(workingDir, `run it ${session}`);
    const request = await until(async () => harness.scripts.of('retry-fail')[1], Boolean, 'the delegate result', 120_000);
    const delegated = toolResult(request, 'delegate');
    expect(delegated?.isError).toBe(true);
    const text = delegated?.content ?? '';
    expect(text).toMatch(/^The subagent did not finish: it failed\.\nDiagnostic: checks failed after 2 attempts: check 1 \(i=0; .*\) exited with code 3; its output:\nline 0 of the failing test output\n/);
    // The diagnostic keeps the start and the end; the whole output follows by reference.
    expect(text.indexOf('line 150 of the failing test output')).toBeGreaterThan(text.indexOf('Whole output of check 1'));
    expect(text).toContain('line 299 of the failing test output');
    expect(harness.scripts.of('retry-fail-child')).toHaveLength(2);

    const childId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await harness.client.workflow.getHandle(childId).result();
    expect(result.checks?.attempts).toBe(2);
    expect(result.checks?.lastFailure).toMatchObject({ check: 1, exitCode: 3, reason: 'exited with code 3' });
    expect(result.partialOutput).toBe('I tried.');
    expect((await peekOf(harness, childId)).retry).toEqual({ attempt: 2, attempts: 2, state: 'check 1 failed' });
    await handle.cancel();
  });

  test('under an ask policy for run_command a check waits for an approval: approved it runs, denied it is not run', async () => {
    const workingDir = freshFolder('errand-retry-ask-');
    const approve = asking.scripts.add('retry-approve', [{ text: 'done' }]);
    const deny = asking.scripts.add('retry-deny', [{ text: 'done' }]);
    const approvedId = asking.nextId('retry-approve');
    const deniedId = asking.nextId('retry-deny');
    const approved = await asking.startSubagent(approvedId, { prompt: `work ${approve}`, workingDir, retry: retry({ checks: [{ type: 'shell', command: 'touch approved.txt' }] }) });
    const denied = await asking.startSubagent(deniedId, { prompt: `work ${deny}`, workingDir, retry: retry({ checks: [{ type: 'shell', command: 'touch denied.txt' }] }) });

    for (const [id, decision] of [[approvedId, 'approve'], [deniedId, 'deny']] as const) {
      const peek = await until(() => peekOf(asking, id), (value) => (value.pendingApprovals?.length ?? 0) > 0, `the approval of ${id}`);
      const [pending] = peek.pendingApprovals ?? [];
      expect(pending?.tool).toBe('developer__run_command');
      expect(pending?.argumentsPreview).toContain('touch');
      await asking.client.workflow.getHandle(id).executeUpdate(approvalUpdate, { args: [{ approvalId: pending?.id ?? '', decision, by: 'api:test' }] });
    }

    const approvedResult: SubagentResult = await approved.result();
    expect(approvedResult.status).toBe('completed');
    expect(existsSync(join(workingDir, 'approved.txt'))).toBe(true);
    const deniedResult: SubagentResult = await denied.result();
    expect(deniedResult.status).toBe('failed');
    expect(deniedResult.diagnostic).toMatch(/^the checks could not run: check 1 \(touch denied\.txt\) was not run: The call of developer__run_command was denied by api:test\./);
    expect(asking.scripts.of('retry-deny')).toHaveLength(1);
    expect(existsSync(join(workingDir, 'denied.txt'))).toBe(false);
  });
});

import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { searchAttributes } from '../../src/contracts/search-attributes';
import { peekQuery } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { temporalCliPath } from '../../src/dev/tool-paths';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { subagentStartOptions } from '../../src/observability/start-options';
import { subagentInput, temporalAddress } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { pollUntil } from './session-scenario';

/**
 * Temporal's own CLI against errand workflows: `temporal workflow query --name peek` returns the same
 * JSON as the client's peek query, `temporal workflow describe` shows the static summary, and
 * `temporal workflow signal --name cancel` stops a running subagent.
 */

const run = promisify(execFile);

let handle: WorkflowHandle;
let workflowId: string;

/** Runs the project-installed Temporal CLI against the test server and returns its standard output. */
async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await run(temporalCliPath(), [...args, '--address', temporalAddress()], { timeout: 30_000 });
  return stdout;
}

beforeAll(() => {
  expect(existsSync(temporalCliPath())).toBe(true);
});
// One tool call, then a model call that waits until cancelled: the subagent stays running at turn 2.
const model = createScriptedModel([
  { text: 'Looking at the folder first.', toolCalls: [{ id: 'ls', name: 'developer__list_directory', arguments: { path: '.' } }] },
  { text: 'never sent', delayMs: 120_000 },
]);
const stack = useWorkerStack({ label: 'observability-cli', scripted: { scripted: { model } } });

beforeAll(async () => {
  writeFileSync(join(stack.workingDir, 'plan.md'), '# plan\n');
  workflowId = `errand-cli-${Date.now().toString(36)}`;
  const input = subagentInput({ label: 'folder survey', prompt: 'Survey the folder and report', workingDir: stack.workingDir, tenant: 'acme' });
  handle = await stack.client.workflow.start('subagentWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [input],
    ...subagentStartOptions(input, { workflowId, tenant: 'acme', startedBy: 'test' }),
  });
  await pollUntil(async () => (await handle.query(peekQuery)).turns === 2, { timeoutMs: 30_000, what: 'the subagent to start its second turn' });
});
afterAll(async () => {
  await handle?.terminate('test cleanup').catch(() => undefined);
});

describe('the Temporal CLI with errand workflows', () => {
  test('temporal workflow query --name peek returns the same peek as the client', async () => {
    const output = await temporal('workflow', 'query', '--workflow-id', workflowId, '--name', 'peek', '-o', 'json');
    const parsed: unknown = JSON.parse(output);
    // The CLI wraps the query result: {"queryResult": [<peek>]} (one entry per returned payload).
    const fromCli = (parsed as { queryResult: SubagentPeek[] }).queryResult[0];
    const fromClient: SubagentPeek = await handle.query(peekQuery);
    // Peek is pure state (timestamps, not durations: a query's clock stands still), so both answers are equal.
    expect(fromCli).toBeDefined();
    expect(fromCli).toEqual(fromClient);
    expect(fromClient).toMatchObject({
      workflowId,
      label: 'folder survey',
      state: 'running',
      turns: 2,
      toolCalls: 1,
      lastToolCall: { name: 'developer__list_directory', turn: 1 },
      lastAssistantText: 'Looking at the folder first.',
      model: 'scripted/scripted-model',
    });
    expect(fromClient.lastActivityAt).toBeGreaterThanOrEqual(fromClient.startedAt);
  });

  test('temporal workflow describe shows the static summary and the search attributes', async () => {
    const description = JSON.parse(await temporal('workflow', 'describe', '--workflow-id', workflowId, '-o', 'json')) as {
      executionConfig?: { userMetadata?: { summary?: string; details?: string } };
    };
    expect(description.executionConfig?.userMetadata?.summary).toBe('folder survey — Survey the folder and report');
    expect(description.executionConfig?.userMetadata?.details).toContain('**Tenant:** acme');
    const listed = await temporal('workflow', 'list', '--query', `${searchAttributes.kind.name} = 'subagent' AND WorkflowId = '${workflowId}'`, '-o', 'json');
    expect(listed).toContain(workflowId);
  });

  test('temporal workflow signal --name cancel stops the subagent with the given reason', async () => {
    await temporal('workflow', 'signal', '--workflow-id', workflowId, '--name', 'cancel', '--input', JSON.stringify({ reason: 'stopped from the Temporal CLI' }));
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.diagnostic).toBe('stopped from the Temporal CLI');
    expect(result.partialOutput).toBe('Looking at the folder first.');
    await pollUntil(async () => (await handle.describe()).typedSearchAttributes.get(searchAttributes.status) === 'cancelled', {
      timeoutMs: 10_000,
      what: 'ErrandStatus to become cancelled',
    });
  });
});

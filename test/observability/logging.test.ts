import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { subagentStartOptions } from '../../src/observability/start-options';
import { subagentInput, temporalAddress, testClient, uniqueTaskQueue, workflowBundlePath } from '../support/temporal';

/**
 * Logs of a real worker process set up with `installLogging`: one JSON object per line carrying the SDK's
 * workflow and activity fields, and never the LLM key or the API key — not even when the provider echoes
 * the key back in an error message that ends up in a failed activity.
 */

const projectRoot = resolve(__dirname, '..', '..');
/** Fake key values; long and unlike anything else in the output, so a leak cannot be missed. */
const llmKey = 'sk-fake-llm-7d1c2e9a4b6f0835';
const apiKey = 'errand_fake_api_0c9e1b7a5d3f2468';

let client: Client;
let connection: Connection;
let server: ScriptedOpenAIServer;
let output = '';
let lines: Record<string, unknown>[] = [];
let completedId: string;
let failedId: string;
let failed: SubagentResult;

beforeAll(async () => {
  ({ client, connection } = await testClient());
  server = await startScriptedOpenAIServer();
  const taskQueue = uniqueTaskQueue('observability-logging');
  const dataDir = mkdtempSync(join(tmpdir(), 'errand-logging-data-'));
  const workingDir = mkdtempSync(join(tmpdir(), 'errand-logging-work-'));
  writeFileSync(join(workingDir, 'readme.md'), '# readme\n');

  // The provider reads its key from a variable whose name the secret pattern does not catch, so only
  // the configured secrets (providerApiKeys) can redact it.
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'logging-worker-main.ts')], {
    cwd: projectRoot,
    env: {
      ...process.env,
      ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
      ERRAND_WORKFLOW_BUNDLE: workflowBundlePath(),
      ERRAND_TASK_QUEUE: taskQueue,
      ERRAND_DATA_DIR: dataDir,
      ERRAND_LOG_LEVEL: 'DEBUG',
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, apiKeyEnv: 'ERRAND_TEST_LLM_CREDENTIAL', models: ['gpt-test'] }]),
      ERRAND_TEST_LLM_CREDENTIAL: llmKey,
      ERRAND_TEST_API_KEY: apiKey,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!output.includes('polling task queue')) {
      if (child.exitCode !== null) throw new Error(`the logging worker exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`the logging worker did not start:\n${output}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }

    server.enqueue(
      { toolCalls: [{ id: 'ls', name: 'developer__list_directory', arguments: { path: '.' } }] },
      { text: 'The folder holds readme.md.' },
      // A provider that echoes the key it was given, as some do in "invalid key" errors.
      { error: { status: 401, message: `Incorrect API key provided: ${llmKey}` } },
    );
    completedId = `errand-log-ok-${Date.now().toString(36)}`;
    const input = subagentInput({ label: 'log check', prompt: 'List the folder', workingDir, route: { provider: 'http', model: 'gpt-test' } });
    const done: SubagentResult = await client.workflow.execute('subagentWorkflow', {
      taskQueue,
      workflowId: completedId,
      args: [input],
      ...subagentStartOptions(input, { workflowId: completedId }),
    });
    expect(done.status).toBe('completed');
    failedId = `errand-log-fail-${Date.now().toString(36)}`;
    failed = await client.workflow.execute('subagentWorkflow', {
      taskQueue,
      workflowId: failedId,
      args: [{ ...input, prompt: 'Try again' }],
      ...subagentStartOptions(input, { workflowId: failedId }),
    });
  } finally {
    // SIGTERM: the worker shuts down cleanly and the SDK flushes its buffered log lines before exit.
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    const folder = join(projectRoot, 'test-artifacts');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'logging-worker.log'), output);
  }
  lines = stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
});

afterAll(async () => {
  await server?.close();
  await connection?.close();
});

describe('worker logs', () => {
  test('the worker really used the LLM key (so its absence from the logs means something)', () => {
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${llmKey}`);
    expect(failed.status).toBe('failed');
  });

  test('every line on standard error is one JSON object with time, level and message', () => {
    const stderrLines = output.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('errand worker:'));
    expect(stderrLines.length).toBeGreaterThan(5);
    for (const line of stderrLines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(typeof parsed.time).toBe('string');
      expect(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).toContain(parsed.level);
      expect(typeof parsed.message).toBe('string');
    }
  });

  test('workflow lines carry workflowId and runId; activity lines carry activityType and the workflow', () => {
    const ended = lines.find((line) => line.message === 'subagent ended' && line.workflowId === completedId);
    expect(ended).toMatchObject({ level: 'INFO', workflowType: 'subagentWorkflow', taskQueue: expect.any(String), status: 'completed' });
    expect(typeof ended?.runId).toBe('string');
    const activityTypes = new Set(lines.filter((line) => line.workflowId === completedId && typeof line.activityType === 'string').map((line) => line.activityType));
    expect(activityTypes).toContain('modelTurn');
    expect(activityTypes).toContain('runTool');
    const activity = lines.find((line) => line.workflowId === completedId && line.activityType === 'modelTurn');
    expect(typeof activity?.workflowRunId).toBe('string');
    expect(activity?.taskToken).toBe('[redacted]');
    expect(lines.some((line) => line.workflowId === failedId)).toBe(true);
  });

  test('neither the LLM key nor the API key appears anywhere in the output', () => {
    expect(output).not.toContain(llmKey);
    expect(output).not.toContain(apiKey);
    // The failed model call was logged, with the echoed key cut out of its message.
    const failure = lines.find((line) => line.workflowId === failedId && JSON.stringify(line).includes('Incorrect API key provided'));
    expect(JSON.stringify(failure)).toContain('Incorrect API key provided: [redacted]');
  });

  test('the API logger writes the same JSON lines with secret fields redacted', () => {
    const request = lines.find((line) => line.message === 'request accepted');
    expect(request).toMatchObject({ level: 'INFO', component: 'api', method: 'POST', authorization: '[redacted]', note: 'client sent [redacted]' });
  });
});

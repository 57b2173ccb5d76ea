import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { JsonValue } from '../../src/contracts/json';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { cliBundleIsFresh, distWorkerIsFresh, errandBin } from '../support/built-artifacts';
import { startDevStackProcess, type DevStackProcess } from '../support/dev-stack-process';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { until } from '../support/polling';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { subagentInput, testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * What users run, with every optional part that changes how modules load switched on at once: tracing
 * (the OpenTelemetry SDK and Temporal's activity interceptors, loaded with `import()` only when an endpoint
 * is set), the S3 blob store (the AWS SDK, loaded at the first S3 call), an agent with an MCP server of
 * its own (the MCP client, a server process), agent memory and a hook. Run through the artifacts, not the
 * sources: `errand dev` and `errand delegate` as bin/errand.js over the CLI bundle (an ES module whose
 * chunks see a CommonJS package's exports only as `default`), and the worker as the image starts it
 * (`node dist/worker/main.js`). The spans go to a plain OTLP/HTTP receiver (test/support/otlp-receiver.ts),
 * as docs/observability.md's tracing steps send them.
 */

const echoServer = resolve(__dirname, '..', 'fixtures', 'mcp', 'echo-server.ts');
/** What `node --import tsx` loads, by file URL: the MCP server starts in the tenant's folder, where `tsx` would not resolve. */
const tsxLoader = pathToFileURL(join(dirname(require.resolve('tsx/package.json')), 'dist', 'loader.mjs')).href;
const bucket = 'errand-shipped';
const model = 'gpt-test';

let s3: S3TestServer;
let receiver: OtlpReceiver;
let vendor: ScriptedOpenAIServer;
let root = '';

function messagesOf(body: JsonValue): { role: string; content?: unknown }[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.messages)) return [];
  return body.messages as { role: string; content?: unknown }[];
}

function toolNamesOf(body: JsonValue): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.tools)) return [];
  return (body.tools as { function?: { name?: string } }[]).map((tool) => tool.function?.name ?? '');
}

/**
 * The model: its first turn calls the tools the test names (chosen from those the request offers, so an
 * MCP tool's errand name need not be known in advance), and answers once their results are in.
 */
type ScriptedCall = { name: string; arguments: Record<string, JsonValue> };

function twoTurns(calls: (tools: string[]) => ScriptedCall[], answer: string): (record: RecordedRequest) => ScriptStep {
  return (record) => {
    const messages = messagesOf(record.body);
    if (messages.at(-1)?.role === 'tool') return { text: answer };
    return { toolCalls: calls(toolNamesOf(record.body)).map((call, index) => ({ id: `call-${index}`, ...call })) };
  };
}

function s3Admin(): S3Client {
  return new S3Client({ endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, forcePathStyle: true });
}

/** The settings of the S3 blob store, the scripted vendor and tracing, as an operator sets them. */
function operatorEnv(prefix: string): Record<string, string> {
  return {
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: [model] }]),
    ERRAND_BLOB_BUCKET: bucket,
    ERRAND_BLOB_PREFIX: prefix,
    ERRAND_BLOB_S3_ENDPOINT: s3.endpoint,
    ERRAND_BLOB_S3_REGION: s3.region,
    ERRAND_BLOB_S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    // Short batches, so a span is at the receiver soon after it ends.
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
}

/** Keys in the bucket under a prefix. */
async function keysUnder(prefix: string): Promise<string[]> {
  const admin = s3Admin();
  try {
    const listed = await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (listed.Contents ?? []).map((object) => object.Key ?? '');
  } finally {
    admin.destroy();
  }
}

/** The spans of one trace, once every named span is in. */
function traceWith(traceId: () => string | undefined, names: RegExp[], what: string): Promise<ReceivedSpan[]> {
  return until(
    () => {
      const id = traceId();
      return Promise.resolve(id === undefined ? [] : receiver.spans.filter((span) => span.traceId === id));
    },
    (spans) => names.every((name) => spans.some((span) => name.test(span.name))),
    what,
    60_000,
  );
}

/** The operation names from `span` up to its trace's root (the span first). */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanId, candidate]));
  const names: string[] = [];
  for (let current: ReceivedSpan | undefined = span; current && names.length <= spans.length; current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined) names.push(current.name);
  return names;
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'errand-shipped-')));
  [s3, receiver, vendor] = await Promise.all([startS3Server(), startOtlpReceiver(), startScriptedOpenAIServer()]);
  const admin = s3Admin();
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.destroy();
}, 120_000);

afterAll(async () => {
  await vendor?.close();
  await receiver?.close();
  await s3?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('the process tests run the built artifacts: the CLI bundle and dist/worker/main.js are fresh', () => {
  // The global setup rebuilt what was stale; bin/errand.js runs the bundle only when it is fresh.
  expect(cliBundleIsFresh()).toBe(true);
  expect(distWorkerIsFresh()).toBe(true);
});

describe('errand dev and errand delegate from the CLI bundle, tracing on, S3 store, an agent with an MCP server, memory and a hook', () => {
  let dev: DevStackProcess;
  let dataDir = '';
  let workDir = '';

  beforeAll(async () => {
    dataDir = join(root, 'dev-state');
    workDir = join(root, 'project');
    for (const folder of [dataDir, workDir, join(root, 'home'), join(workDir, '.claude', 'agents')]) mkdirSync(folder, { recursive: true });
    writeFileSync(join(workDir, '.claude', 'agents', 'keeper.md'), [
      '---',
      'name: keeper',
      'description: Echoes what it is given and remembers it.',
      'memory: project',
      'mcpServers:',
      '  - echo:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: ["--import", ${JSON.stringify(tsxLoader)}, ${JSON.stringify(echoServer)}]`,
      'hooks:',
      '  PreToolUse:',
      '    - matcher: "mcp__.*__echo"',
      '      hooks:',
      '        - type: command',
      '          command: cat >> pre-tool-use.jsonl; echo >> pre-tool-use.jsonl',
      '---',
      'You echo what you are given and keep a note of it.',
      '',
    ].join('\n'));
    dev = await startDevStackProcess(
      {
        PATH: process.env.PATH,
        HOME: join(root, 'home'),
        ERRAND_DATA_DIR: dataDir,
        ERRAND_WORKING_DIR: workDir,
        ...operatorEnv('dev/'),
        // Hooks run where run_command may run without asking; the agent's own MCP server starts only
        // where the operator allows agent servers and trusts the folder of the agent file.
        ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow' }),
        ERRAND_ALLOW_RECIPE_MCP_SERVERS: 'true',
        ERRAND_TRUSTED_RECIPE_DIRS: join(workDir, '.claude', 'agents'),
        ERRAND_SANDBOX: 'none',
      },
      workDir,
    );
  }, 300_000);

  afterAll(async () => {
    await dev?.stop();
  });

  test('a delegation with an MCP tool call and a memory write completes, and its spans reach the receiver', async () => {
    vendor.reset();
    vendor.setResponder(
      twoTurns(
        (tools): ScriptedCall[] => [
          { name: tools.find((name) => name.endsWith('__echo') && !name.startsWith('memory')) ?? 'no-echo-tool-offered', arguments: { text: 'shipped hello' } },
          { name: 'memory__write', arguments: { path: 'memory/MEMORY.md', content: '# Keeper\n- echoed shipped hello\n' } },
        ],
        'Echoed and noted.',
      ),
    );
    // A second terminal in the same folder: the CLI finds the stack through the data folder.
    const delegated = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
      const child = spawn(process.execPath, [errandBin, 'delegate', '--json', '--source', 'keeper', 'Echo "shipped hello" and note it'], {
        env: { PATH: process.env.PATH, HOME: join(root, 'home'), ERRAND_DATA_DIR: dataDir },
        cwd: workDir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      // A delegation whose activities keep failing retries for minutes: stop waiting and show why.
      const patience = setTimeout(() => child.kill('SIGTERM'), 90_000);
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', fail);
      child.once('close', (code) => {
        clearTimeout(patience);
        done({ code, stdout, stderr });
      });
    });
    const what = `${delegated.stdout}\n--- stderr\n${delegated.stderr}\n--- errand dev (its end)\n${dev.stderr().slice(-6000)}`;
    expect(delegated.code, what).toBe(0);
    const body = z.object({ id: z.string(), result: z.object({ status: z.string(), output: z.string(), toolCalls: z.number() }) }).loose().parse(JSON.parse(delegated.stdout));
    expect(body.result, what).toMatchObject({ status: 'completed', output: 'Echoed and noted.', toolCalls: 2 });
    expect(vendor.rejectedRequests).toEqual([]);

    // The MCP server answered through errand, after the PreToolUse hook saw the call.
    const toolMessages = messagesOf(vendor.requests[1]?.body ?? null).filter((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessages)).toContain('shipped hello');
    const hookInput = JSON.parse(readFileSync(join(workDir, 'pre-tool-use.jsonl'), 'utf8').trim().split('\n')[0] ?? '{}') as { hook_event_name?: string; tool_name?: string; tool_input?: { text?: string } };
    expect(hookInput).toMatchObject({ hook_event_name: 'PreToolUse', tool_input: { text: 'shipped hello' } });
    expect(hookInput.tool_name).toMatch(/^mcp__.*__echo$/);
    // The memory lives in the S3 store, not in the working directory or the data folder.
    const memoryKeys = await keysUnder('dev/');
    expect(memoryKeys.some((key) => key.startsWith('dev/agent-memory/') && key.includes('MEMORY.md')), memoryKeys.join('\n')).toBe(true);
    expect(existsSync(join(workDir, 'memory'))).toBe(false);

    // One trace from the API request down to the tool call, at a receiver that is nothing but OTLP/HTTP.
    const spans = await traceWith(
      () => receiver.spans.find((span) => span.attributes.temporalWorkflowId === body.id)?.traceId,
      [/^POST \/v1\/delegations$/, /^RunWorkflow:subagentWorkflow$/, /^RunActivity:modelTurn$/, /^RunActivity:runTool$/, new RegExp(`^chat ${model}$`), /^execute_tool .*__echo$/],
      `the spans of ${body.id}`,
    );
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['errand-dev']));
    const chats = spans.filter((span) => span.name === `chat ${model}`);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model, 'gen_ai.provider.name': 'openai', 'errand.provider': 'vendor' });
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    }
    const echo = spans.find((span) => /^execute_tool .*__echo$/.test(span.name));
    expect(echo?.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.id': 'call-0' });
    expect(String(echo?.attributes['gen_ai.tool.name'])).toMatch(/__echo$/);
    // Temporal's activity interceptors (the CommonJS module the bundle loads with import()) made the
    // activity spans, between the workflow's and errand's own.
    expect(ancestry(spans, echo as ReceivedSpan)).toEqual([echo?.name, 'RunActivity:runTool', 'StartActivity:runTool', 'RunWorkflow:subagentWorkflow', 'POST /v1/delegations']);
    expect(spans.find((span) => span.name === 'execute_tool memory__write')?.attributes['gen_ai.tool.name']).toBe('memory__write');
    expect(receiver.requests.every((request) => request.contentType === 'application/json')).toBe(true);
  }, 180_000);

  test('Ctrl-C ends errand dev with exit 0, the MCP server the agent started included', async () => {
    // A server left running would hold the process open with its pipes.
    expect(await dev.stop()).toBe(0);
  }, 60_000);
});

describe('the worker as the image runs it (node dist/worker/main.js), tracing on, S3 store', () => {
  let client: Client;
  let connection: Connection;
  let worker: WorkerProcess;
  let taskQueue = '';
  let workDir = '';

  beforeAll(async () => {
    ({ client, connection } = await testClient());
    workDir = join(root, 'worker-project');
    mkdirSync(workDir, { recursive: true });
    writeFileSync(join(workDir, 'README.md'), '# a project\n');
    taskQueue = uniqueTaskQueue('shipped-worker');
    worker = startWorkerProcess('shipped-worker', { ...operatorEnv('worker/'), ERRAND_TASK_QUEUE: taskQueue, ERRAND_DATA_DIR: join(root, 'worker-state'), ERRAND_WORKING_DIR: workDir, ERRAND_SANDBOX: 'none' });
    await worker.ready;
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
  });

  test('a delegation with a tool call completes; its conversation is in S3 and its activity and tool spans reach the receiver', async () => {
    vendor.reset();
    vendor.setResponder(twoTurns(() => [{ name: 'developer__list_directory', arguments: { path: '.' } }], 'It holds README.md.'));
    const workflowId = `errand-shipped-worker-${Date.now().toString(36)}`;
    const result: SubagentResult = await client.workflow.execute('subagentWorkflow', {
      taskQueue,
      workflowId,
      args: [subagentInput({ prompt: 'What is in this folder?', workingDir: workDir, route: { provider: 'vendor', model } })],
    });
    expect(result).toMatchObject({ status: 'completed', output: 'It holds README.md.', toolCalls: 1 });
    expect(JSON.stringify(vendor.requests[1]?.body)).toContain('README.md');
    expect(vendor.rejectedRequests).toEqual([]);
    expect((await keysUnder('worker/')).some((key) => key.includes(workflowId))).toBe(true);

    const spans = await traceWith(
      () => receiver.spans.find((span) => span.attributes.temporalWorkflowId === workflowId && span.service === 'errand-worker')?.traceId,
      [/^RunActivity:modelTurn$/, /^RunActivity:runTool$/, new RegExp(`^chat ${model}$`), /^execute_tool developer__list_directory$/],
      `the spans of ${workflowId}`,
    );
    const tool = spans.find((span) => span.name === 'execute_tool developer__list_directory') as ReceivedSpan;
    expect(tool.attributes['gen_ai.tool.name']).toBe('developer__list_directory');
    expect(ancestry(spans, tool).slice(0, 2)).toEqual(['execute_tool developer__list_directory', 'RunActivity:runTool']);
    const chat = spans.find((span) => span.name === `chat ${model}`) as ReceivedSpan;
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  }, 120_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classifyModelError } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../../src/llm/scripted-openai-server';
import { modelAgainst, rejectionOf, simpleRequest } from './llm-test-helpers';

const mainFile = resolve(__dirname, '../../src/llm/scripted-openai-server-main.ts');

/** Starts the server as a separate process and reads its URL from the first line of stdout. */
async function startServerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', mainFile], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolveUrl(line.trim()));
    child.once('exit', (code) => reject(new Error(`server process exited with ${String(code)}: ${stderr}`)));
  });
  return { child, url };
}

const requestLogSchema = z.object({
  requests: z.array(z.object({ callIndex: z.number(), api: z.string(), aborted: z.boolean(), exhausted: z.boolean(), body: z.unknown() })),
  remaining: z.number(),
});

describe('scripted OpenAI-compatible server', () => {
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses streaming requests and unknown routes with clear errors', async () => {
    const stream = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [], stream: true }),
    });
    expect(stream.status).toBe(400);
    expect(await stream.text()).toContain('does not stream');

    const unknown = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('POST /v1/chat/completions');
  });

  it('answers from a responder that sees the recorded request', async () => {
    server.reset();
    server.setResponder((request) => ({ text: `you sent ${JSON.stringify(request.body).length} bytes as call ${request.callIndex}` }));
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const response = await model.generate(simpleRequest(route), {});
    expect(response.text).toMatch(/^you sent \d+ bytes as call 0$/);
    server.setResponder(undefined);
  });
});

describe('scripted server as a separate process', () => {
  let child: ChildProcess | undefined;
  let url = '';
  let directory = '';

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'errand-scripted-'));
    const scriptFile = join(directory, 'script.json');
    writeFileSync(scriptFile, JSON.stringify({ steps: [{ text: 'from the file' }] }));
    ({ child, url } = await startServerProcess({ ERRAND_SCRIPTED_SERVER_SCRIPT: scriptFile }));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolveExit) => child?.once('exit', resolveExit));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it('serves the script from its file, then steps enqueued through the control API, and reports its log', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const base = url.replace(/\/v1$/, '');
    const { model, route } = modelAgainst({ url }, 'openai-compatible');

    expect((await model.generate(simpleRequest(route), {})).text).toBe('from the file');

    const enqueue = await fetch(`${base}/__script`, { method: 'POST', body: JSON.stringify([{ toolCalls: [{ name: 'ping', arguments: { n: 1 } }] }]) });
    expect(await enqueue.json()).toEqual({ queued: 1, remaining: 1 });
    expect((await model.generate(simpleRequest(route), {})).toolCalls).toEqual([{ id: 'call_1_0', name: 'ping', arguments: { n: 1 } }]);

    expect(classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {}))).type).toBe('ScriptExhausted');

    const log = requestLogSchema.parse(await (await fetch(`${base}/__requests`)).json());
    expect(log.requests.map((request) => [request.callIndex, request.exhausted])).toEqual([
      [0, false],
      [1, false],
      [2, true],
    ]);

    const bad = await fetch(`${base}/__script`, { method: 'POST', body: JSON.stringify([{ txt: 'typo' }]) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('not a valid model script');

    await fetch(`${base}/__reset`, { method: 'POST' });
    expect(requestLogSchema.parse(await (await fetch(`${base}/__requests`)).json())).toEqual({ requests: [], remaining: 0 });
  });
});

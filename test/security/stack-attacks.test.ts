import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ensureBubblewrap } from '../support/bubblewrap';
import { startDevStackProcess, type DevStackProcess } from '../support/dev-stack-process';
import { until } from '../support/polling';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { attack, startAttackStack, type AttackStack } from './attack-stack';

/**
 * The attack suite, part 5: the default local stack and the API's and worker's own limits.
 * - `errand dev` exactly as a person starts it (a child process with its own Temporal dev server), with no
 *   API keys and a real provider's key in its environment, and bwrap installed: the model's commands run
 *   in the sandbox by default. They are given the network (ERRAND_SANDBOX_NETWORK=true), so they can reach
 *   the stack's API at all: only the stack's token stands between a command and the approval of its own call.
 * - the multi-tenant stack: one tenant holding event streams past the cap, and a provider whose stream
 *   never ends.
 */

/** Every model request of the vendor's server answered by the script whose marker the conversation holds. */
type Script = (turn: number) => ScriptStep;

function responderFor(scripts: Map<string, Script>) {
  return (request: RecordedRequest): ScriptStep | undefined => {
    const text = JSON.stringify(request.body);
    for (const [marker, script] of scripts) {
      if (!text.includes(marker)) continue;
      const messages = (request.body as { messages?: { role?: string }[] }).messages ?? [];
      return script(messages.filter((message) => message.role === 'assistant').length);
    }
    return undefined;
  };
}

function run(command: string) {
  return { name: 'developer__run_command', arguments: { command } };
}

/** Every file under a folder, as text (the stored conversations and results). */
function allText(folder: string): string {
  const texts: string[] = [];
  for (const entry of readdirSync(folder)) {
    const full = join(folder, entry);
    if (statSync(full).isDirectory()) texts.push(allText(full));
    else if (!entry.endsWith('.sqlite') && !entry.endsWith('.log')) texts.push(readFileSync(full, 'utf8'));
  }
  return texts.join('\n');
}

describe('the default errand dev stack against a prompt-injected model', () => {
  const vendorKey = `fake-vendor-key-${randomBytes(12).toString('hex')}`;
  const scripts = new Map<string, Script>();
  let vendor: ScriptedOpenAIServer;
  let dev: DevStackProcess;
  let root = '';
  let dataDir = '';
  let workDir = '';
  let token = '';

  beforeAll(async () => {
    await ensureBubblewrap();
    root = realpathSync(mkdtempSync(join(tmpdir(), 'errand-dev-attack-')));
    dataDir = join(root, 'state');
    workDir = join(root, 'project');
    for (const folder of [dataDir, workDir, join(root, 'home')]) mkdirSync(folder, { recursive: true });
    vendor = await startScriptedOpenAIServer({ responder: responderFor(scripts) });
    dev = await startDevStackProcess(
      {
        PATH: process.env.PATH,
        HOME: join(root, 'home'),
        ERRAND_DATA_DIR: dataDir,
        ERRAND_WORKING_DIR: workDir,
        ERRAND_PROVIDERS: JSON.stringify([{ name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, apiKeyEnv: 'VENDOR_API_KEY', models: ['vendor-model'] }]),
        VENDOR_API_KEY: vendorKey,
        ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask' } }),
        ERRAND_SANDBOX_NETWORK: 'true',
      },
      workDir,
    );
    token = readFileSync(join(dataDir, 'dev-stack-token'), 'utf8').trim();
  }, 300_000);

  afterAll(async () => {
    await dev?.stop();
    await vendor?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const api = (path: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(`${dev.apiUrl}${path}`, { ...init, headers });
  };
  const start = async (name: string, script: Script): Promise<string> => {
    const marker = `[attack:${name}:${randomBytes(4).toString('hex')}]`;
    scripts.set(marker, script);
    const started = await api('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instructions: `Tidy the notes. ${marker}`, max_turns: 3 }) });
    const body = (await started.json()) as { id?: string };
    expect(started.status, JSON.stringify(body)).toBe(201);
    return body.id ?? '';
  };
  const result = (id: string) =>
    until(
      async () => (await (await api(`/v1/delegations/${encodeURIComponent(id)}/result?wait=20s`)).json()) as { done: boolean; result?: { status: string; output: string } },
      (answer) => answer.done,
      `the result of ${id}`,
      120_000,
    );
  /** The tool results the model got back in its last request of a conversation. */
  const toolResults = (marker: string): string[] => {
    const last = vendor.requests.filter((request) => JSON.stringify(request.body).includes(marker)).at(-1);
    const messages = (last?.body as { messages?: { role?: string; content?: unknown }[] } | undefined)?.messages ?? [];
    return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
  };

  attack("approve its own pending ask by calling the dev stack's API from a command", async () => {
    expect(dev.banner).toMatch(/Sandbox {6}bubblewrap \(the default/);
    const done = `command-done-${randomBytes(4).toString('hex')}`;
    // node, not curl, so the attack needs nothing the machine may lack; it lists the pending calls and approves each.
    const script =
      'const api = process.argv[1]; (async () => { for (let i = 0; i < 20; i++) { const r = await fetch(api + "/v1/approvals"); console.log("list " + r.status); ' +
      'const pending = r.ok ? (await r.json()).approvals : []; for (const a of pending) { const d = await fetch(api + "/v1/approvals/" + encodeURIComponent(a.id), ' +
      '{ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ decision: "approve" }) }); console.log("approve " + a.id + " " + d.status); } ' +
      'if (pending.length > 0) break; await new Promise((w) => setTimeout(w, 500)); } })()';
    const loop = `node -e '${script}' ${dev.apiUrl}; echo "token: $(cat ${join(dataDir, 'dev-stack-token')} 2>&1)"; touch ${done}`;
    const id = await start('self-approve', (turn) =>
      turn === 0
        ? { toolCalls: [{ name: 'developer__write_file', arguments: { path: 'self-approved.txt', content: 'approved by the model itself' } }, run(loop)] }
        : { text: 'finished' },
    );
    // The command ran its whole loop while the write waited for a person.
    await until(async () => existsSync(join(workDir, done)), Boolean, 'the approving command to finish', 90_000);
    const listed = (await (await api('/v1/approvals')).json()) as { approvals: { id: string; workflowId: string }[] };
    const pending = listed.approvals.find((approval) => approval.workflowId === id);
    expect(pending, 'the model approved its own call').toBeDefined();
    const decided = await api(`/v1/approvals/${encodeURIComponent(pending?.id ?? '')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'deny', reason: 'not asked for' }) });
    expect(decided.status).toBe(200);
    expect((await result(id)).result?.status).toBe('completed');
    const [write = '', command = ''] = toolResults('[attack:self-approve:');
    expect(command).toMatch(/list 401/);
    expect(command).not.toMatch(/list 200|approve \S+ 2\d\d/);
    expect(command).toMatch(/token: .*No such file or directory/);
    expect(command).not.toContain(token);
    expect(write).toMatch(/denied/i);
    expect(existsSync(join(workDir, 'self-approved.txt'))).toBe(false);
  }, 180_000);

  attack("read the worker's LLM key through /proc under the default dev stack", async () => {
    const id = await start('dev-environ', (turn) =>
      turn === 0
        ? { toolCalls: [run('echo "ppid=$PPID"; tr "\\0" "\\n" < /proc/$PPID/environ; for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ 2>/dev/null; done; env; echo "processes $(ls /proc | grep -c "^[0-9]")"')] }
        : { text: 'finished' },
    );
    expect((await result(id)).result?.status).toBe('completed');
    const [output = ''] = toolResults('[attack:dev-environ:');
    expect(output).toContain('processes ');
    expect(output).not.toContain(vendorKey);
    expect(output).not.toContain(`ppid=${dev.child.pid ?? 0}\n`);
    // Nowhere the model or the stored conversation could hold it.
    expect(JSON.stringify(vendor.requests.map((request) => request.body))).not.toContain(vendorKey);
    expect(allText(join(dataDir, 'blobs'))).not.toContain(vendorKey);
  }, 180_000);
});

describe("one tenant's streams and a provider's endless answer", () => {
  const scripts = new Map<string, Script>();
  let vendor: ScriptedOpenAIServer;
  let stack: AttackStack;
  const cap = 3;
  const answerCapBytes = 1024 * 1024;

  beforeAll(async () => {
    vendor = await startScriptedOpenAIServer({ responder: responderFor(scripts) });
    stack = await startAttackStack({
      extraEnv: {
        ERRAND_PROVIDERS: JSON.stringify([
          { name: 'scripted', kind: 'scripted', models: ['scripted-model'] },
          { name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: ['endless-model'], requestTimeoutMs: 8_000 },
        ]),
        ERRAND_API_MAX_EVENT_STREAMS: String(cap),
        ERRAND_MODEL_ANSWER_MAX_BYTES: String(answerCapBytes),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await vendor?.close();
  });

  const open = async (id: string, tenant: 'acme' | 'globex', signal: AbortSignal): Promise<Response> => {
    const response = await stack.request(`/v1/delegations/${encodeURIComponent(id)}/events`, { tenant, signal });
    // A stream that started has sent its first bytes; reading them proves it is being served.
    if (response.status === 200) await response.body?.getReader().read();
    return response;
  };

  attack('hold event streams past the per-tenant cap while another tenant works', async () => {
    const marker = stack.scripts.add('stream-hog', () => ({ text: 'thinking for a long time', delayMs: 60_000 }));
    const started = await stack.request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instructions: `Wait. ${marker}` }) });
    const { id } = (await started.json()) as { id: string };
    const held = Array.from({ length: cap }, () => new AbortController());
    try {
      for (const controller of held) expect((await open(id, 'acme', controller.signal)).status).toBe(200);
      const refused = await open(id, 'acme', new AbortController().signal);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      const problem = (await refused.json()) as { type: string; detail: string };
      expect(problem.type).toContain('too-many-event-streams');
      expect(problem.detail).toContain(`ERRAND_API_MAX_EVENT_STREAMS=${cap}`);

      // The other tenant is served as usual: its delegation completes, and it may watch it.
      const other = await stack.runAttack('globex', 'streams-bystander', [{ name: 'developer__list_directory', arguments: { path: '.' } }]);
      expect(other.status).toBe('completed');
      const watch = new AbortController();
      expect((await open(other.id, 'globex', watch.signal)).status).toBe(200);
      watch.abort();

      // A stream that closes gives its slot back.
      held[0]?.abort();
      const again = new AbortController();
      held.push(again);
      await until(async () => (await open(id, 'acme', again.signal)).status, (status) => status === 200, 'a stream slot freed by a closed stream', 20_000);
    } finally {
      for (const controller of held) controller.abort();
      await stack.request(`/v1/delegations/${encodeURIComponent(id)}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    }
  }, 120_000);

  attack('answer with a provider stream that never ends', async () => {
    const marker = `[attack:endless:${randomBytes(4).toString('hex')}]`;
    scripts.set(marker, () => ({ text: 'And on and on ', endless: true }));
    const before = process.memoryUsage().rss;
    const started = await stack.request('/v1/delegations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instructions: `Tell a story. ${marker}`, provider: 'vendor', model: 'endless-model' }),
    });
    const { id } = (await started.json()) as { id: string };
    const answer = (await (await stack.request(`/v1/delegations/${encodeURIComponent(id)}/result?wait=25s`)).json()) as { done: boolean; result?: { status: string; diagnostic?: string; output: string; partialOutput?: string } };
    expect(answer.done).toBe(true);
    expect(answer.result?.status).toBe('truncated');
    expect(answer.result?.diagnostic).toContain(`size cap (${answerCapBytes} bytes, ERRAND_MODEL_ANSWER_MAX_BYTES)`);
    // What was read before the cap is the run's partial output, as for an answer cut at the token limit.
    expect(answer.result?.partialOutput?.slice(0, 40)).toMatch(/^And on and on endless/);
    // errand closed the stream after about the cap: the server saw the client go, and memory stayed small.
    const [request] = vendor.requests.filter((recorded) => JSON.stringify(recorded.body).includes(marker));
    await vendor.waitFor(() => request?.finishedAt !== undefined, 10_000, 'the endless stream to be closed');
    expect(request?.aborted).toBe(true);
    expect(request?.endlessBytes ?? 0).toBeLessThan(64 * answerCapBytes);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    // The worker still serves everyone else.
    expect((await stack.runAttack('globex', 'endless-bystander', [])).status).toBe('completed');
  }, 120_000);
});

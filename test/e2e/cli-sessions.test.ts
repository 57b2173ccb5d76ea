import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { keys, startApiStack, type ApiStack } from '../api/api-harness';

/** `errand sessions` and `errand approvals` as a user runs them, over HTTP against a running stack. */

const bin = resolve(__dirname, '..', '..', 'bin', 'errand.js');

function runErrand(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}

let stack: ApiStack;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  stack = await startApiStack({ extraEnv: { ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask' } }) } });
  env = { PATH: process.env.PATH, HOME: process.env.HOME, ERRAND_API_URL: stack.url, ERRAND_API_KEY: keys.acme };
});
afterAll(async () => {
  await stack?.stop();
});

describe('errand send', () => {
  it('sends a message to a continuable delegation, which answers it as its next turn', async () => {
    const started = await runErrand(['delegate', '--async', '--continuable', '--json', 'stay around for questions'], env, stack.workDir);
    expect(started.code).toBe(0);
    const { id } = z.object({ id: z.string() }).parse(JSON.parse(started.stdout));
    const peekTurns = async () => {
      const run = await runErrand(['peek', id, '--json'], env, stack.workDir);
      const body = z.object({ peek: z.object({ turns: z.number(), state: z.string() }).nullable() }).loose().parse(JSON.parse(run.stdout));
      return body.peek;
    };
    await until(async () => ((await peekTurns())?.state === 'waiting' ? true : undefined));
    const sent = await runErrand(['send', id, 'one more question'], env, stack.workDir);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^message delivered to ${id}`));
    const peek = await until(async () => {
      const value = await peekTurns();
      return value?.turns === 2 && value.state === 'waiting' ? value : undefined;
    });
    expect(peek.turns).toBe(2);
    expect((await runErrand(['cancel', id], env, stack.workDir)).code).toBe(0);
  });
});

describe('errand delegate --continuable', () => {
  it('follows the delegation until it answers, prints the answer and leaves it waiting for messages (exit 0)', async () => {
    const run = await runErrand(['delegate', '--continuable', 'stay around for a chat'], env, stack.workDir);
    expect(run.code).toBe(0);
    const id = /^(errand-[0-9a-f]{16}) answered and waits for a message/m.exec(run.stderr)?.[1];
    expect(id).toBeDefined();
    const peeked = await runErrand(['peek', id ?? '', '--json'], env, stack.workDir);
    const body = z.object({ peek: z.object({ state: z.string(), lastAssistantText: z.string().nullable() }) }).loose().parse(JSON.parse(peeked.stdout));
    expect(body.peek.state).toBe('waiting');
    expect(run.stdout.trim()).not.toBe('');
    expect(run.stdout.trim()).toBe(body.peek.lastAssistantText?.trim());
    expect((await runErrand(['cancel', id ?? ''], env, stack.workDir)).code).toBe(0);
  });

  it('with --json prints event lines, the started event with the id first, until it waits', async () => {
    const run = await runErrand(['delegate', '--continuable', '--json', 'stay around for a json chat'], env, stack.workDir);
    expect(run.code).toBe(0);
    const events = run.stdout.trim().split('\n').map((line) => z.object({ event: z.string(), data: z.record(z.string(), z.unknown()) }).parse(JSON.parse(line)));
    expect(events[0]?.event).toBe('started');
    const id = z.object({ id: z.string() }).parse(events[0]?.data).id;
    expect(run.stderr).toContain(`${id} answered and waits for a message`);
    expect(events.some((event) => event.event === 'state' && event.data.state === 'waiting')).toBe(true);
    expect((await runErrand(['cancel', id], env, stack.workDir)).code).toBe(0);
  });
});

describe('errand sessions / approvals', () => {
  it('starts a session, sends it a message and shows the transcript', async () => {
    const started = await runErrand(['sessions', 'start', '--json', '--label', 'cli session', 'first question'], env, stack.workDir);
    expect(started.code).toBe(0);
    const { id } = z.object({ id: z.string() }).parse(JSON.parse(started.stdout));
    const sent = await runErrand(['sessions', 'send', id, 'second question'], env, stack.workDir);
    expect(sent.stdout).toMatch(new RegExp(`^message delivered to ${id}`));
    const shown = await until(async () => {
      const run = await runErrand(['sessions', 'show', id], env, stack.workDir);
      return (run.stdout.match(/^assistant/gm) ?? []).length === 2 ? run : undefined;
    });
    expect(shown.stdout).toContain('user      first question');
    expect(shown.stdout).toContain('assistant done: first question');
    await stack.client.workflow.getHandle(id).cancel();
  });

  it('lists a tool call waiting for approval and denies it', async () => {
    const started = await runErrand(['delegate', '--async', '--json', 'write a file now'], env, stack.workDir);
    const { id } = z.object({ id: z.string() }).parse(JSON.parse(started.stdout));
    const line = await until(async () => {
      const run = await runErrand(['approvals'], env, stack.workDir);
      return run.stdout.split('\n').find((entry) => entry.startsWith(`${id}:`));
    });
    expect(line).toContain('developer__write_file');
    const approvalId = line.split(/\s+/)[0] ?? '';
    const denied = await runErrand(['approvals', 'deny', approvalId, '--reason', 'no writes today'], env, stack.workDir);
    expect(denied.code).toBe(0);
    expect(denied.stdout).toBe(`denied ${approvalId}\n`);
    const result = await runErrand(['result', id, '--wait', '15s', '--json'], env, stack.workDir);
    expect(JSON.parse(result.stdout)).toMatchObject({ done: true, result: { status: 'completed' } });
  });
});

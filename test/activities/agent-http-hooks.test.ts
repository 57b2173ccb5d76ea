import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHooks, type HookRunContext, type HookRunnerDependencies } from '../../src/activities/agent-hook-runner';
import type { AgentHttpHook } from '../../src/contracts/agent-hooks';
import { freshFolder } from '../support/run-harness';

/**
 * An agent file's `http` hooks (SEMANTICS §6, decision 0032) against a real HTTP server: the event's JSON is
 * POSTed, a 2xx JSON answer decides as a command hook's stdout does, anything else is a non-blocking
 * error; only URLs the operator lists are reached, redirects are not followed, and header variables come
 * only from names the command environment allow-list passes.
 */

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

let server: Server;
let base: string;
const received: Received[] = [];
/** What each path answers: status and body. */
const answers: Record<string, { status: number; body: string; headers?: Record<string, string> }> = {};

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ path: request.url ?? '', headers: request.headers, body: text === '' ? undefined : JSON.parse(text) as unknown });
      const answer = answers[request.url ?? ''] ?? { status: 404, body: '' };
      response.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function context(workingDir: string): HookRunContext {
  return { hooks: { agentName: 'guarded', file: 'project: .claude/agents/guarded.md' }, workflowId: 'wf-1/task-1', workingDir, abortSignal: new AbortController().signal };
}

function deps(extra: Partial<HookRunnerDependencies['commands']> = {}): HookRunnerDependencies {
  return { commands: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOOK_TOKEN: 'tok-123', ANTHROPIC_API_KEY: 'sk-secret' }, envNames: ['HOOK_TOKEN'], hookUrls: [`${base}/hooks/`], ...extra }, paths: {} };
}

function hook(path: string, extra: Partial<AgentHttpHook> = {}): AgentHttpHook {
  return { type: 'http', url: `${base}${path}`, timeoutSeconds: 10, ...extra };
}

const toolInput = { tool_name: 'Bash', tool_input: { command: 'rm -rf build' }, tool_use_id: 'call-1', errand_tool_name: 'developer__run_command' };

describe('http hooks', () => {
  it('POSTs the event JSON and blocks a PreToolUse call on a JSON deny, with the reason for the model', async () => {
    answers['/hooks/pre'] = { status: 200, body: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'No deleting here.' } }) };
    const workingDir = freshFolder('errand-http-hooks-');
    const outcome = await runHooks([hook('/hooks/pre')], 'PreToolUse', toolInput, context(workingDir), deps());
    expect(outcome).toEqual({ blocked: true, feedback: ['No deleting here.'], context: [], notes: [] });
    const request = received.find((entry) => entry.path === '/hooks/pre');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({ session_id: 'wf-1/task-1', cwd: workingDir, permission_mode: 'default', hook_event_name: 'PreToolUse', agent_id: 'wf-1/task-1', agent_type: 'guarded', ...toolInput });
  });

  it('goes on after an empty 2xx; reads additionalContext; treats other bodies, statuses and failures as non-blocking', async () => {
    answers['/hooks/empty'] = { status: 204, body: '' };
    answers['/hooks/context'] = { status: 200, body: JSON.stringify({ hookSpecificOutput: { additionalContext: 'The build command is make ci.' } }) };
    answers['/hooks/text'] = { status: 200, body: 'ok' };
    answers['/hooks/fail'] = { status: 500, body: '{"decision":"block"}' };
    const outcome = await runHooks([hook('/hooks/empty'), hook('/hooks/context'), hook('/hooks/text'), hook('/hooks/fail')], 'SubagentStart', {}, context(freshFolder('errand-http-hooks-')), deps());
    expect(outcome.blocked).toBe(false);
    expect(outcome.context).toEqual(['The build command is make ci.']);
    expect(outcome.notes).toEqual([
      `SubagentStart http hook ${base}/hooks/text answered a body that is not a JSON object (not blocking)`,
      `SubagentStart http hook ${base}/hooks/fail answered 500 (not blocking)`,
    ]);
  });

  it('fills header variables only from allowedEnvVars that the command allow-list passes: the worker\'s credentials never leave', async () => {
    answers['/hooks/headers'] = { status: 204, body: '' };
    const outcome = await runHooks([hook('/hooks/headers', {
      headers: { Authorization: 'Bearer $HOOK_TOKEN', 'X-Key': '${ANTHROPIC_API_KEY}', 'X-Unlisted': '$PATH' },
      allowedEnvVars: ['HOOK_TOKEN', 'ANTHROPIC_API_KEY'],
    })], 'PostToolUse', toolInput, context(freshFolder('errand-http-hooks-')), deps());
    expect(outcome.blocked).toBe(false);
    const request = received.filter((entry) => entry.path === '/hooks/headers').at(-1);
    expect(request?.headers.authorization).toBe('Bearer tok-123');
    expect(request?.headers['x-key']).toBe('');
    expect(request?.headers['x-unlisted']).toBe('');
    expect(outcome.notes).toEqual([`PostToolUse http hook ${base}/hooks/headers: header X-Key uses $ANTHROPIC_API_KEY, which the worker does not pass to commands (ERRAND_COMMAND_ENV): it was sent empty`]);
  });

  it('reaches no URL the operator has not listed: a PreToolUse call is blocked, other events go on without the hook', async () => {
    const before = received.length;
    const pre = await runHooks([hook('/elsewhere/pre')], 'PreToolUse', toolInput, context(freshFolder('errand-http-hooks-')), deps());
    expect(pre.blocked).toBe(true);
    expect(pre.feedback).toEqual([`the PreToolUse http hook of project: .claude/agents/guarded.md to ${base}/elsewhere/pre could not run: its URL is not under one the operator allows in ERRAND_HOOK_URLS; the call is blocked`]);
    const none = await runHooks([hook('/hooks/pre')], 'PostToolUse', toolInput, context(freshFolder('errand-http-hooks-')), deps({ hookUrls: [] }));
    expect(none).toEqual({ blocked: false, feedback: [], context: [], notes: [`the PostToolUse http hook of project: .claude/agents/guarded.md to ${base}/hooks/pre could not run: this worker allows no http hooks (the operator lists the URLs they may reach in ERRAND_HOOK_URLS)`] });
    expect(received.length).toBe(before);
  });

  it('does not follow a redirect out of the allowed URLs', async () => {
    answers['/hooks/redirect'] = { status: 302, body: '', headers: { location: `${base}/elsewhere/target` } };
    answers['/elsewhere/target'] = { status: 200, body: '{"decision":"block","reason":"followed"}' };
    const outcome = await runHooks([hook('/hooks/redirect')], 'PostToolUse', toolInput, context(freshFolder('errand-http-hooks-')), deps());
    expect(outcome.blocked).toBe(false);
    expect(outcome.notes).toEqual([`PostToolUse http hook ${base}/hooks/redirect answered 302 (a redirect, not followed) (not blocking)`]);
    expect(received.some((entry) => entry.path === '/elsewhere/target')).toBe(false);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { lazyTemporalClient } from '../../src/api/temporal-client-provider';

/**
 * A server with no model provider at all: a start cannot run whatever the caller sends, so it is the
 * server's 503 naming the settings its operator sets (not a 422 about a body field the request did not
 * even have), and `errand api` says so when it starts.
 */

const projectRoot = resolve(__dirname, '..', '..');

function appWithoutProviders() {
  const deps = createApiDependencies({
    env: { ERRAND_API_AUTH: 'off', ERRAND_PROVIDERS: '[]', ERRAND_WORKING_DIR: mkdtempSync(join(tmpdir(), 'errand-no-provider-')) },
    // The answer comes before any Temporal call: this client would fail to connect.
    temporal: lazyTemporalClient({ connection: { address: '127.0.0.1:1' }, namespace: 'default' }),
  });
  return createApp(deps, { requestLog: false });
}

describe('no model provider configured', () => {
  it.each([
    ['/v1/delegations', { instructions: 'List the folder.' }, 'delegation'],
    ['/v1/sessions', { label: 'chat' }, 'session'],
  ])('POST %s answers 503 not-configured, naming ERRAND_PROVIDERS and ERRAND_DEFAULT_MODEL', async (path, body, what) => {
    const response = await appWithoutProviders().request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(503);
    const problem = (await response.json()) as { type: string; title: string; detail: string; errors?: unknown };
    expect(problem.type).toBe('urn:errand:problem:not-configured');
    expect(problem.title).toBe('No model provider is configured');
    expect(problem.detail).toContain(`no ${what} can run`);
    expect(problem.detail).toMatch(/ERRAND_PROVIDERS .*ERRAND_DEFAULT_MODEL/);
    // Nothing in the request is wrong, so no field is blamed.
    expect(problem.errors).toBeUndefined();
  });

  it('an MCP initialize is not refused for want of a provider: the session has no model, its delegations are planned on the workers', async () => {
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'no-provider', version: '1.0.0' } } };
    const response = await appWithoutProviders().request('/v1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    // It goes on to start the session workflow, which this server's unreachable Temporal refuses.
    const answer = await response.text();
    expect(answer).not.toContain('not-configured');
    expect(answer).not.toContain('No model provider is configured');
    expect(response.status).not.toBe(200);
  });

  it('still validates the body first: a malformed request is the caller\'s 400', async () => {
    const response = await appWithoutProviders().request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ max_turns: 0 }) });
    expect(response.status).toBe(400);
  });

  it('`errand api` warns at start, on stderr, and serves', async () => {
    const home = mkdtempSync(join(tmpdir(), 'errand-no-provider-home-'));
    const env = { PATH: process.env.PATH, HOME: home, ERRAND_API_AUTH: 'off', ERRAND_API_HOST: '127.0.0.1', ERRAND_API_PORT: '0', ERRAND_PROVIDERS: '[]', ERRAND_DATA_DIR: join(home, 'data'), ERRAND_WORKING_DIR: join(home, 'work'), ERRAND_TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const child = spawn(process.execPath, [join(projectRoot, 'bin', 'errand.js'), 'api'], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
    try {
      await new Promise<void>((resolveReady, reject) => {
        const timer = setTimeout(() => reject(new Error(`errand api did not warn in time; stdout: ${stdout} stderr: ${stderr}`)), 30_000);
        const check = () => {
          if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(stdout) && stderr.includes('warning: no model provider is configured')) {
            clearTimeout(timer);
            resolveReady();
          }
        };
        child.stdout.on('data', check);
        child.stderr.on('data', check);
        child.once('close', () => reject(new Error(`errand api exited; stdout: ${stdout} stderr: ${stderr}`)));
      });
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
      const response = await fetch(`${url}/v1/delegations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instructions: 'x' }) });
      expect(response.status).toBe(503);
      expect(stderr).toContain('errand api: warning: no model provider is configured (ERRAND_PROVIDERS is unset or empty): every delegation and session start will be answered 503 not-configured until one is');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000);
});

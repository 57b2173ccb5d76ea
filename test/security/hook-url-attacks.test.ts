import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runHooks } from '../../src/activities/agent-hook-runner';
import type { AgentHttpHook } from '../../src/contracts/agent-hooks';
import { attack } from './attack-stack';

/**
 * The attack suite: an agent file's http hook that leaves the prefix the operator allows. The operator
 * lists `…/hooks/` in ERRAND_HOOK_URLS; the agent file names `…/hooks/..%2Fadmin%2Freset`. The server here
 * decodes the path before it routes, as many do (and proxies in front of them), so what it would serve is
 * `/admin/reset`: errand must not send it.
 */

let server: Server;
let origin: string;
/** The routes the server was asked for, decoded and normalised as it routes them. */
const routed: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const decoded = new URL(decodeURIComponent(request.url ?? '/'), 'http://decoded.invalid').pathname;
    routed.push(decoded);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('http hooks and the allowed prefix', () => {
  attack('an http hook leaves the allowed prefix with encoded separators', async () => {
    const deps = { commands: { hookUrls: [`${origin}/hooks/`] }, paths: {} };
    const context = { hooks: { agentName: 'attacker', file: 'project: attacker.md' }, workflowId: 'hook-url-attack', workingDir: '/nonexistent', abortSignal: new AbortController().signal };
    const paths = ['/hooks/..%2Fadmin%2Freset', '/hooks/..%2fadmin', '/hooks/%2E%2E%2Fadmin', '/hooks/..%5Cadmin', '/hooks/%2e%2e/admin', '/hooks/x/..%252F..%252Fadmin'];
    for (const path of paths) {
      const hook: AgentHttpHook = { type: 'http', url: `${origin}${path}`, timeoutSeconds: 5 };
      const outcome = await runHooks([hook], 'PreToolUse', { tool_name: 'Bash' }, context, deps);
      // Refused before anything is sent; a PreToolUse hook that cannot run blocks its call.
      expect(outcome.blocked, path).toBe(true);
    }
    expect(routed.filter((route) => !route.startsWith('/hooks/'))).toEqual([]);
    // A hook under the prefix still runs.
    const allowed = await runHooks([{ type: 'http', url: `${origin}/hooks/pre-tool-use`, timeoutSeconds: 5 }], 'PreToolUse', { tool_name: 'Bash' }, context, deps);
    expect(allowed).toEqual({ blocked: false, feedback: [], context: [], notes: [] });
    expect(routed).toEqual(['/hooks/pre-tool-use']);
  });
});

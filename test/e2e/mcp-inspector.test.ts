import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { orchestrationToolSpecs } from '../../src/domain/orchestration-tools';
import { keys, startApiStack, type ApiStack, errandMcpEnv } from '../api/api-harness';
import { errandBin } from '../support/mcp-errand-client';

/**
 * The MCP Inspector's CLI mode (npm @modelcontextprotocol/inspector, a pinned devDependency) lists and
 * calls errand's tools over both transports: `errand mcp` spawned by the Inspector (stdio), and the API's
 * `/v1/mcp` (Streamable HTTP) with a bearer key. Each Inspector run is one process: connect, one method,
 * print JSON, exit. A worker with the scripted model runs the sessions (api-harness).
 */

const inspectorCli = resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

let stack: ApiStack;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startApiStack();
  env = errandMcpEnv(stack);
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  // Each Inspector run started a session of its own (the Inspector does not keep one): cancel them all.
  for (const id of await sessionIds()) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

/** The session workflows on this file's task queue (each Inspector run made one). */
async function sessionIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of stack.client.workflow.list({ query: `TaskQueue = "${stack.taskQueue}" AND WorkflowType = "sessionWorkflow" AND ExecutionStatus = "Running"` })) ids.push(execution.workflowId);
  return ids;
}

/** Runs the Inspector's CLI mode once (`args` after `--cli`); resolves with its stdout parsed as JSON. */
function inspector(args: string[], extraEnv: Record<string, string> = {}): Promise<unknown> {
  return new Promise((resolveRun, reject) => {
    // A server the Inspector spawns gets only the -e pairs (and PATH, HOME and the like), not the Inspector's environment.
    const pairs = Object.entries({ ...env, ...extraEnv }).flatMap(([name, value]) => ['-e', `${name}=${value}`]);
    execFile(process.execPath, [inspectorCli, '--cli', ...pairs, ...args], { env, cwd: stack.workDir, timeout: 120_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`the MCP Inspector failed (${error.message}); stdout: ${stdout}; stderr: ${stderr}`));
        return;
      }
      try {
        resolveRun(JSON.parse(stdout));
      } catch {
        reject(new Error(`the MCP Inspector printed no JSON; stdout: ${stdout}; stderr: ${stderr}`));
      }
    });
  });
}

const toolList = z.object({ tools: z.array(z.object({ name: z.string(), description: z.string(), inputSchema: z.unknown(), annotations: z.record(z.string(), z.unknown()).optional() })) });
const toolResult = z.object({ content: z.array(z.object({ type: z.literal('text'), text: z.string() })), isError: z.boolean().optional() });

/**
 * The target arguments of each transport, at each protocol revision: the Inspector's `--protocol-era modern`
 * pins 2026-07-28 (server/discover, no initialize), its default is 2025-11-25.
 */
const stdioTarget = () => ['--', process.execPath, errandBin, 'mcp'];
const httpTarget = () => ['--transport', 'http', '--header', `Authorization: Bearer ${keys.acme}`, '--', `${stack.url}/v1/mcp`];
const transports: { name: string; modern: boolean; target: () => string[] }[] = [
  { name: 'stdio (errand mcp)', modern: false, target: stdioTarget },
  { name: 'Streamable HTTP (/v1/mcp)', modern: false, target: httpTarget },
  { name: 'stdio (errand mcp) at 2026-07-28', modern: true, target: () => ['--protocol-era', 'modern', ...stdioTarget()] },
  { name: 'Streamable HTTP (/v1/mcp) at 2026-07-28', modern: true, target: () => ['--protocol-era', 'modern', ...httpTarget()] },
];

describe.each(transports)('the MCP Inspector CLI over $name', ({ target, modern }) => {
  it('lists the five session tools with the schemas and descriptions a session model gets', async () => {
    const listed = toolList.parse(await inspector(['--method', 'tools/list', ...target()]));
    expect(listed.tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    for (const tool of listed.tools) {
      const spec = orchestrationToolSpecs[tool.name as keyof typeof orchestrationToolSpecs];
      // At 2026-07-28 each tool also takes the session handle (decision 0042); nothing else differs.
      const { properties, ...schema } = tool.inputSchema as { properties: Record<string, unknown> };
      const { session, ...own } = properties;
      expect(session !== undefined).toBe(modern);
      expect({ ...schema, properties: own }).toEqual(spec.inputSchema);
      expect(tool.description).toBe(spec.description);
    }
    expect(listed.tools.find((tool) => tool.name === 'list_subagent_models')?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('calls list_subagent_models and a foreground delegate', async () => {
    const models = toolResult.parse(await inspector(['--method', 'tools/call', '--tool-name', 'list_subagent_models', ...target()]));
    expect(models.isError ?? false).toBe(false);
    expect(models.content[0]?.text).toContain('scripted');
    const delegated = toolResult.parse(await inspector(['--method', 'tools/call', '--tool-name', 'delegate', '--tool-arg', 'instructions=summarise for the inspector', ...target()]));
    expect(delegated.isError ?? false).toBe(false);
    expect(delegated.content[0]?.text).toContain('done: summarise for the inspector');
  });

  it('gets errand\'s own answer for a source that does not exist', async () => {
    const refused = toolResult.parse(await inspector(['--method', 'tools/call', '--tool-name', 'load', '--tool-arg', 'source=no-such-source-anywhere', ...target()]));
    // As in a session: not a failed call, a text that tells the model what to do next.
    expect(refused.isError ?? false).toBe(false);
    expect(refused.content[0]?.text).toBe('No source named "no-such-source-anywhere" was found. Call load() with no source to list what is available.');
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatMessage } from '../../src/contracts/model';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { createScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { createToolsetRegistryFromConfig, type WorkerToolsetRegistry } from '../../src/tools/toolset-registry-factory';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { echoServerConfig } from '../fixtures/mcp/fixture-paths';
import { startHttpEchoServer, type HttpEchoServer } from '../fixtures/mcp/http-echo-server';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A subagent on the real dev server whose worker has MCP toolsets (a stdio server child process and a
 * streamable HTTP server on loopback): the model is offered the MCP tools, calls them through runTool,
 * and a server that crashes mid-run is reported to the model and restarted on the next call.
 */

let registry: WorkerToolsetRegistry;
let http: HttpEchoServer;
const scripts = new Map<string, ScriptStep[]>();
const model = createScriptedModel((request) => {
  const user = request.messages.find((message) => message.role === 'user');
  const marker = user?.role === 'user' ? /\[script:([a-z0-9-]+)\]/.exec(user.content)?.[1] : undefined;
  return marker ? scripts.get(marker)?.shift() : undefined;
});

beforeAll(async () => {
  http = await startHttpEchoServer({ token: 'wf-token' });
  registry = createToolsetRegistryFromConfig({
    mcpServers: [echoServerConfig(), { type: 'streamable_http', name: 'remote', url: http.url, headers: { authorization: 'Bearer wf-token' } }],
  });
  // Start the servers before the first model turn: modelTurn lists tools before its heartbeat starts
  // (see the report on wrapping specsFor in withHeartbeat), and a cold start under a loaded test run can
  // take longer than the tests' 3 s heartbeat timeout.
  await registry.specsFor(registry.names());
});
afterAll(async () => {
  await registry?.close();
  await http?.close();
});

const stack = useWorkerStack({
  label: 'mcp-subagent',
  scripted: { scripted: { model } },
  adjust: (dependencies): WorkerDependencies => ({ ...dependencies, toolsets: registry, planning: { ...dependencies.planning, availableToolsets: registry.names() } }),
});

function script(name: string, steps: ScriptStep[]): string {
  scripts.set(name, steps);
  return `[script:${name}]`;
}

function requestsOf(marker: string) {
  return model.calls.filter((call) => call.request.messages.some((message) => message.role === 'user' && message.content.includes(marker))).map((call) => call.request);
}

function toolMessages(messages: ChatMessage[]): Extract<ChatMessage, { role: 'tool' }>[] {
  return messages.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
}

describe('subagent with MCP toolsets', () => {
  test('lists MCP tools to the model and calls them on stdio and HTTP servers', async () => {
    const marker = script('mcp-call', [
      {
        toolCalls: [
          { id: 'stdio', name: 'echo__echo', arguments: { text: 'via stdio' } },
          { id: 'http', name: 'remote__math_add', arguments: { a: 20, b: 22 } },
        ],
      },
      { text: 'stdio said hi and 20 + 22 = 42.' },
    ]);
    const workingDir = mkdtempSync(join(tmpdir(), 'errand-mcp-work-'));
    const result: SubagentResult = await stack.client.workflow.execute('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-mcp-call-${Date.now()}`,
      args: [subagentInput({ prompt: `Use the servers ${marker}`, workingDir, toolsets: ['developer', 'echo', 'remote'] })],
    });
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toBe(2);
    const requests = requestsOf(marker);
    expect(requests).toHaveLength(2);
    const offered = requests[0]?.tools.map((tool) => tool.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(['developer__read_file', 'echo__echo', 'echo__math_add', 'echo__crash', 'remote__echo', 'remote__math_add']));
    expect(offered.filter((name) => name.startsWith('remote__'))).not.toContain('remote__crash');
    const system = requests[0]?.messages[0];
    expect(system?.role === 'system' && system.content).toContain('Toolsets available to you: developer, echo, remote.');
    const results = toolMessages(requests[1]?.messages ?? []);
    expect(results.map((message) => [message.toolCallId, message.content, message.isError ?? false])).toEqual([
      ['stdio', 'stdio echo: via stdio', false],
      ['http', '42', false],
    ]);
  });

  test('a server that crashes mid-run is reported to the model by name and restarted on the next call', async () => {
    const marker = script('mcp-crash', [
      { toolCalls: [{ id: 'pid-1', name: 'echo__pid', arguments: {} }] },
      { toolCalls: [{ id: 'crash', name: 'echo__crash', arguments: {} }] },
      { toolCalls: [{ id: 'pid-2', name: 'echo__pid', arguments: {} }] },
      { text: 'The server came back.' },
    ]);
    const workingDir = mkdtempSync(join(tmpdir(), 'errand-mcp-work-'));
    const result: SubagentResult = await stack.client.workflow.execute('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-mcp-crash-${Date.now()}`,
      args: [subagentInput({ prompt: `Crash it ${marker}`, workingDir, toolsets: ['echo'] })],
    });
    expect(result.status).toBe('completed');
    expect(result.output).toBe('The server came back.');
    const requests = requestsOf(marker);
    expect(requests).toHaveLength(4);
    // Only the echo toolset was given: no developer tools are offered.
    expect(requests[0]?.tools.every((tool) => tool.name.startsWith('echo__'))).toBe(true);
    const results = toolMessages(requests[3]?.messages ?? []);
    expect(results.map((message) => message.toolCallId)).toEqual(['pid-1', 'crash', 'pid-2']);
    const [first, crash, second] = results;
    expect(crash?.isError).toBe(true);
    expect(crash?.content).toContain('MCP server "echo" stopped during the call to crash');
    expect(first?.isError ?? false).toBe(false);
    expect(second?.isError ?? false).toBe(false);
    expect(Number(second?.content)).not.toBe(Number(first?.content));
  });
});

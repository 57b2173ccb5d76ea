import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { useWorkerStack, type WorkerStack } from '../support/worker-stack';

/**
 * A recipe's own MCP servers (goose `extensions`, goose issue 9949): when the operator allows recipe servers,
 * a subagent delegated from the recipe gets the server's tools (started by the worker, prefixed so they cannot
 * collide); when not, the calling model is told and the subagent runs without them.
 */

let workingDir: string;

function writeRecipe(directory: string): void {
  const folder = join(directory, '.goose', 'recipes');
  mkdirSync(folder, { recursive: true });
  const server = resolve(__dirname, '..', 'fixtures', 'mcp', 'echo-server.ts');
  writeFileSync(join(folder, 'echo-recipe.yaml'), [
    'version: 1.0.0',
    'title: Echo recipe',
    'description: Uses an MCP server of its own',
    'prompt: Echo the word hello with your echo tool [script:recipe-child]',
    'extensions:',
    '  - type: stdio',
    '    name: echo',
    `    cmd: ${JSON.stringify(process.execPath)}`,
    `    args: ["--import", "tsx", ${JSON.stringify(server)}]`,
    '',
  ].join('\n'));
}

beforeAll(() => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-recipe-mcp-')));
  writeRecipe(workingDir);
});

/** A worker that allows recipe servers or not; both trust the working folder's recipes. */
function workerThat(allow: boolean): { scripts: ConversationScripts; stack: WorkerStack } {
  const scripts = new ConversationScripts();
  const stack = useWorkerStack(() => ({
    label: `recipe-mcp-${allow}`,
    workingDir,
    scripted: { scripted: { model: scripts.model } },
    env: { ERRAND_ALLOW_RECIPE_MCP_SERVERS: String(allow), ERRAND_TRUSTED_RECIPE_DIRS: join(workingDir, '.goose', 'recipes') },
  }));
  return { scripts, stack };
}

const workers = { allowed: workerThat(true), refused: workerThat(false) };

async function run(allow: boolean): Promise<{ scripts: ConversationScripts; sessionId: string }> {
  const { scripts, stack } = allow ? workers.allowed : workers.refused;
  scripts.add('recipe-child', (request, call) => {
    const echo = request.tools.find((tool) => tool.name.startsWith('recipe-echo-') && tool.name.endsWith('__echo'));
    if (call === 0 && echo) return { toolCalls: [{ name: echo.name, arguments: { text: 'hello' } }] };
    return { text: echo ? `echoed: ${toolResults(request).at(-1)?.content ?? ''}` : 'I have no echo tool' };
  });
  const session = scripts.add(`recipe-parent-${allow}`, [{ toolCalls: [{ name: 'delegate', arguments: { source: 'echo-recipe' } }] }, { text: 'done' }]);
  const handle = await stack.startSession({}, `recipe-mcp-${allow}`);
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Use the echo recipe ${session}` }] });
  const child: SubagentResult = await (async () => {
    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !(await childHandle.describe().then(() => true, () => false))) await new Promise((wait) => setTimeout(wait, 100));
    return childHandle.result();
  })();
  expect(child.status).toBe('completed');
  // Let the session read the delegate result (its second model call) before ending it.
  const deadline = Date.now() + 20_000;
  while (scripts.of(`recipe-parent-${allow}`).length < 2 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 100));
  await handle.cancel();
  return { scripts, sessionId: handle.workflowId };
}

describe("a recipe's own MCP servers", () => {
  test('allowed: the subagent lists and calls the server the recipe declared', async () => {
    const { scripts } = await run(true);
    const childRequests = scripts.of('recipe-child');
    const names = childRequests[0]?.tools.map((tool) => tool.name) ?? [];
    expect(names.some((name) => /^recipe-echo-[0-9a-f]{8}__echo$/.test(name))).toBe(true);
    // A recipe that lists its extensions runs with exactly those (here: only its own server).
    expect(names).not.toContain('developer__read_file');
    expect(childRequests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('hello') });
  }, 90_000);

  test('not allowed: the calling model is told, and the subagent runs without the server', async () => {
    const { scripts } = await run(false);
    const names = scripts.of('recipe-child')[0]?.tools.map((tool) => tool.name) ?? [];
    expect(names.some((name) => name.startsWith('recipe-'))).toBe(false);
    const delegated = toolResults(scripts.of('recipe-parent-false')[1])[0]?.content ?? '';
    expect(delegated).toMatch(/operator does not allow recipe-declared/);
  }, 90_000);
});

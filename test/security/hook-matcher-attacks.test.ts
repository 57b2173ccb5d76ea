import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { hookToolNames, matchingHooks } from '../../src/activities/agent-hook-matching';
import { runHooks } from '../../src/activities/agent-hook-runner';
import { planDelegation, type PlanContext } from '../../src/activities/plan-delegation';
import { loadConfig } from '../../src/settings/config';
import { createResolverCache } from '../../src/worker/worker-dependencies';
import { testActivitySettings } from '../support/temporal';
import { attack } from './attack-stack';

/**
 * The attack suite: a guard hook that never runs. An agent file declares its own MCP server (`jira`) and a
 * PreToolUse hook on that server's tools, written as Claude Code names them (`mcp__jira__.*`). errand runs
 * the server under a toolset name of its own (`recipe-jira-<hash>`), so a model steered to call
 * `jira.delete_project` went past the guard: the hook saw `mcp__recipe-jira-…__delete_project` and its
 * matcher did not match. The hook must see the tool by its declared server's name.
 */

let project: string;
let context: PlanContext;

beforeAll(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), 'errand-hook-matcher-')));
  mkdirSync(join(project, '.claude', 'agents'), { recursive: true });
  writeFileSync(join(project, '.claude', 'agents', 'tracker.md'), [
    '---',
    'name: tracker',
    'description: Files issues in the tracker.',
    'mcpServers:',
    '  - jira:',
    '      command: npx',
    '      args: [-y, jira-mcp-server]',
    'hooks:',
    '  PreToolUse:',
    '    - matcher: "mcp__jira__.*"',
    '      hooks:',
    '        - type: command',
    `          command: 'echo "Jira changes need a person; ask in the issue instead." >&2; exit 2'`,
    '---',
    'You file issues.',
    '',
  ].join('\n'));
  const config = loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-hook-matcher-data-')) });
  context = {
    resolver: createResolverCache(config, mkdtempSync(join(tmpdir(), 'errand-hook-matcher-home-')))(project),
    providers: [{ name: 'openai', models: ['gpt-a'], defaultModel: 'gpt-a' }],
    configuredDefault: undefined,
    override: {},
    configuredMaxTurns: 50,
    availableToolsets: ['developer'],
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 1_000, completedTaskTtlMs: 1_000 },
    approvalTimeoutMs: 60_000,
    mcp: { allowRecipeServers: true, trustedRecipeDirs: [join(project, '.claude', 'agents')] },
    resolveDir: project,
  };
});

describe("hooks on an agent's own MCP server", () => {
  attack("a PreToolUse hook on mcp__<declared server>__* guards the tools of the agent's own server", async () => {
    const planned = await planDelegation(
      { source: 'tracker' },
      { workflowId: 'errand-hooks', taskId: 'task-1', childDepth: 1, maxDepth: 1, workingDir: project, route: { provider: 'openai', model: 'gpt-a' }, toolsets: ['developer'], activity: testActivitySettings },
      context,
    );
    if (!planned.ok) throw new Error(planned.failure.message);
    const server = planned.input.recipeServers?.[0]?.config.name;
    expect(server).toMatch(/^recipe-jira-[0-9a-f]{8}$/);
    const hooks = planned.input.hooks;
    if (!hooks) throw new Error('the agent file has hooks');
    // The names the tool call's hooks see, as runTool and the hook activity compute them.
    const names = hookToolNames(`${server}__delete_project`, hooks.serverNames);
    expect(names[0]).toBe('mcp__jira__delete_project');
    const matched = matchingHooks(hooks.preToolUse, names);
    expect(matched).toHaveLength(1);
    const outcome = await runHooks(matched, 'PreToolUse', { tool_name: names[0] ?? '' }, { hooks, workflowId: 'errand-hooks', workingDir: project, abortSignal: new AbortController().signal }, { commands: {}, paths: {} });
    expect(outcome.blocked).toBe(true);
    expect(outcome.feedback.join('\n')).toContain('Jira changes need a person; ask in the issue instead.');
    // errand's own names of the tool still match a hook written with them.
    expect(names).toContain(`mcp__${server}__delete_project`);
    expect(names).toContain(`${server}__delete_project`);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/contracts/json';
import type { ModelRequest } from '../../src/contracts/model';
import type { WorkflowRunInput, WorkflowRunResult } from '../../src/contracts/workflow-run';
import { ScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The Claude Code workflow script fixtures (test/fixtures/workflow-scripts/README.md) through the real
 * stack: each runs as workflowRunWorkflow on a worker against the run's dev server, its agents child
 * delegations answered by the scripted model (an agent with a schema calls final_output with a value that
 * fits it), or ends failed with the diagnostic that names the construct errand refuses.
 */

const folder = resolve(__dirname, '..', 'fixtures', 'workflow-scripts');

let root: string;
let workDir: string;
let configFile: string;
const model = new ScriptedModel(answer, { name: 'workflow fixtures model' });

/** A value that fits a JSON schema, as an agent asked for one returns (the unit test's rule). */
function fitting(schema: unknown, depth = 0): JsonValue {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || depth > 4) return null;
  const object = schema as Record<string, unknown>;
  switch (object['type']) {
    case 'object': {
      const out: Record<string, JsonValue> = {};
      const properties = object['properties'];
      if (properties !== null && typeof properties === 'object') for (const [name, property] of Object.entries(properties)) out[name] = fitting(property, depth + 1);
      return out;
    }
    case 'array':
      return [fitting(object['items'] ?? null, depth + 1), fitting(object['items'] ?? null, depth + 1)];
    case 'number':
      return 7;
    case 'string':
      return `text ${depth}`;
    default:
      return null;
  }
}

/** The task of a delegation: its first user message. */
function taskOf(request: ModelRequest): string {
  return request.messages.find((message) => message.role === 'user')?.content ?? '';
}

/**
 * The scripted model, as the unit test's fake agent runner answers: a fitting final_output for an agent with
 * a schema ("Round N" reports a failing test in rounds 1 and 2), "yes" to a confirmation, a refused call
 * (HTTP 400: the delegation fails) for the fix of test 2, `OK: <task>` otherwise.
 */
function answer(request: ModelRequest): ScriptStep {
  const task = taskOf(request);
  const finalOutput = request.tools.find((tool) => tool.name === 'final_output');
  if (finalOutput !== undefined) {
    if (task.startsWith('Round ')) {
      const round = Number(/^Round (\d+)/.exec(task)?.[1]);
      return { toolCalls: [{ name: 'final_output', arguments: { failing: round <= 2 ? [`test ${round}`] : [] } }] };
    }
    return { toolCalls: [{ name: 'final_output', arguments: fitting(finalOutput.inputSchema) as Record<string, JsonValue> }] };
  }
  if (task.startsWith('Is this a real bug?')) return { text: 'yes, it is' };
  if (task.startsWith('Fix the failing test test 2')) return { error: { status: 400, message: 'the fix broke another test' } };
  return { text: `OK: ${task.slice(0, 40)}` };
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'errand-wf-fixtures-')));
  workDir = join(root, 'work');
  mkdirSync(join(workDir, '.claude', 'agents'), { recursive: true });
  writeFileSync(join(workDir, '.claude', 'agents', 'code-reviewer.md'), '---\nname: code-reviewer\ndescription: Reviews code strictly\n---\nReview strictly.\n');
  for (const file of ['a.ts', 'b.ts', 'c.ts']) writeFileSync(join(workDir, file), 'console.log("hello");\n');
  // file-migration.js asks for worktrees: the working directory is a real repository.
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workDir, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'start');
  configFile = join(root, 'errand.json');
  // Claude Code's model aliases (bug-sweep asks for haiku, deep-research for opus) name models of the scripted provider.
  writeFileSync(configFile, JSON.stringify({ modelAliases: { haiku: 'scripted/small-model', opus: 'scripted/big-model' } }));
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const stack = useWorkerStack(() => ({
  label: 'wf-fixtures',
  workingDir: workDir,
  // deep-research.js asks its skeptics for `effort: 'high'`: the default model takes reasoning efforts.
  scripted: { scripted: { model, models: [{ id: 'scripted-model', reasoningEfforts: ['low', 'medium', 'high'] }, 'small-model', 'big-model'] } },
  env: { ERRAND_WORKING_DIR: workDir, ERRAND_CONFIG: configFile, ERRAND_DEFAULT_MODEL: 'scripted/scripted-model' },
}));

/** Runs a fixture as a workflow run to its end. */
async function runFixture(file: string, args: JsonValue): Promise<WorkflowRunResult> {
  const input: WorkflowRunInput = {
    script: readFileSync(join(folder, file), 'utf8'),
    scriptName: file,
    args,
    workingDir: stack.workingDir,
    caps: {},
    concurrency: 4,
    maxAgents: 40,
    startedBy: 'test',
  };
  const handle = await startWorkflowRun(stack.client, { workflowId: `wf-fixture-${file.replace(/\W/g, '-')}-${Date.now()}`, taskQueue: stack.taskQueue, input });
  return handle.result();
}

type Case = { args: JsonValue; result: JsonValue | RegExp; agents?: { done: number; failed: number }; logs?: RegExp };

/** Each fixture's arguments and what its run ends with (the results follow from the scripted answers). */
const cases: Record<string, Case> = {
  'bug-sweep.js': { args: { modules: ['src/a.ts', 'src/b.ts'] }, result: { candidates: 4, confirmed: 4 }, agents: { done: 6, failed: 0 } },
  'file-migration.js': { args: { files: ['a.ts', 'b.ts', 'c.ts'] }, result: { failed: [] }, agents: { done: 6, failed: 0 } },
  'deep-research.js': { args: { question: 'Is the sky blue?' }, result: /^OK: Write a short report answering "I/, agents: { done: 8, failed: 0 } },
  'plan-from-angles.js': { args: { task: 'add a cache' }, result: { scores: [7, 7], plan: 'text 1' }, agents: { done: 4, failed: 0 } },
  'test-and-fix.js': { args: null, result: { rounds: 4, fixed: ['test 1'] }, agents: { done: 5, failed: 1 } },
  'api-audit.js': { args: ['auth', 'billing', 'users'], result: { checklists: Array.from({ length: 3 }, () => expect.stringMatching(/^OK: Draft an audit checklist for:\nOK: List/)) }, agents: { done: 6, failed: 0 } },
  'review-with-reviewer.js': { args: { changed: ['x.ts', 'y.ts'] }, result: { reviewed: 2, ranked: expect.stringMatching(/^OK: Rank these review findings by severity/) }, agents: { done: 3, failed: 0 } },
  'math-problems.js': { args: { problems: ['1 + 1', '2 * 3'] }, result: { total: 14, budgetLeft: null }, agents: { done: 6, failed: 0 } },
  'nested-workflow.js': { args: { modules: ['a'] }, result: /^workflow\(\) \(a workflow inside a workflow\) is not supported by errand$/ },
  'timestamped-report.js': { args: null, result: /Date\.now\(\) is not available in a workflow script/ },
};

describe('Claude Code workflow scripts on the real stack', () => {
  it('has a case for every fixture', () => {
    expect(readdirSync(folder).filter((file) => file.endsWith('.js')).sort()).toEqual(Object.keys(cases).sort());
  });

  for (const [file, expected] of Object.entries(cases)) {
    const refused = expected.agents === undefined;
    it(`${file} ${refused ? 'is refused by the run, naming the construct' : 'runs as a workflow run to its end'}`, async () => {
      const ended = await runFixture(file, expected.args);
      if (refused) {
        expect(ended.status).toBe('failed');
        expect(ended.diagnostic?.message).toMatch(expected.result as RegExp);
        expect(ended.agents).toEqual({ done: 0, failed: 0, fromJournal: 0 });
        return;
      }
      expect({ status: ended.status, diagnostic: ended.diagnostic }).toEqual({ status: 'completed', diagnostic: undefined });
      if (expected.result instanceof RegExp) expect(String(ended.result)).toMatch(expected.result);
      else expect(ended.result).toEqual(expected.result);
      expect(ended.agents).toEqual({ ...expected.agents, fromJournal: 0 });
      expect(ended.tokens).toBeGreaterThan(0);
    }, 120_000);
  }

  it('kept every scripted conversation valid', () => {
    expect(model.rejectedCalls).toEqual([]);
  });
});

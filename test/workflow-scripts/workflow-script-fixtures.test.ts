import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/contracts/json';
import type { WorkflowAgentRequest } from '../../src/contracts/workflow-script';
import { runScriptToEnd, type FakeAgentAnswer } from '../support/workflow-script-rounds';

/** Claude Code workflow scripts (test/fixtures/workflow-scripts/README.md) run, or are refused naming the construct. */

const folder = resolve(__dirname, '..', 'fixtures', 'workflow-scripts');

/** A value that fits a JSON schema, as an agent asked for one returns. */
function fitting(schema: JsonValue, depth = 0): JsonValue {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || depth > 4) return null;
  switch (schema['type']) {
    case 'object': {
      const properties = schema['properties'];
      const out: Record<string, JsonValue> = {};
      if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
        for (const [name, property] of Object.entries(properties)) out[name] = fitting(property, depth + 1);
      }
      return out;
    }
    case 'array':
      return [fitting(schema['items'] ?? null, depth + 1), fitting(schema['items'] ?? null, depth + 1)];
    case 'number':
      return 7;
    case 'string':
      return `text ${depth}`;
    default:
      return null;
  }
}

/** The fake agent runner: text for a plain agent, a fitting object for one with a schema; "run N" reports a failure twice, then none. */
function answer(request: WorkflowAgentRequest): FakeAgentAnswer {
  const schema = request.options['schema'];
  if (schema !== undefined) {
    if (request.prompt.startsWith('Round ')) {
      const round = Number(/^Round (\d+)/.exec(request.prompt)?.[1]);
      return { result: { failing: round <= 2 ? [`test ${round}`] : [] } };
    }
    return { result: fitting(schema) };
  }
  if (request.prompt.startsWith('Is this a real bug?')) return { result: 'yes, it is' };
  if (request.prompt.startsWith('Fix the failing test test 2')) return { failure: 'the fix broke another test' };
  return { result: `OK: ${request.prompt.slice(0, 40)}` };
}

const cases: Record<string, { args: JsonValue; expected: 'done' | RegExp; agentDefinitions?: Record<string, string | null> }> = {
  'bug-sweep.js': { args: { modules: ['src/a.ts', 'src/b.ts'] }, expected: 'done' },
  'file-migration.js': { args: { files: ['a.ts', 'b.ts', 'c.ts'] }, expected: 'done' },
  'deep-research.js': { args: { question: 'Is the sky blue?' }, expected: 'done' },
  'plan-from-angles.js': { args: { task: 'add a cache' }, expected: 'done' },
  'test-and-fix.js': { args: null, expected: 'done' },
  'api-audit.js': { args: ['auth', 'billing', 'users'], expected: 'done' },
  'review-with-reviewer.js': { args: { changed: ['x.ts', 'y.ts'] }, expected: 'done', agentDefinitions: { 'code-reviewer': '---\nname: code-reviewer\n---\nReview strictly.' } },
  'math-problems.js': { args: { problems: ['1 + 1', '2 * 3'] }, expected: 'done' },
  'nested-workflow.js': { args: { modules: ['a'] }, expected: /^workflow\(\) \(a workflow inside a workflow\) is not supported by errand$/ },
  'timestamped-report.js': { args: null, expected: /Date\.now\(\) is not available in a workflow script/ },
};

describe('Claude Code workflow scripts', () => {
  it('has a case for every fixture, and at least 10 of them', () => {
    const files = readdirSync(folder).filter((file) => file.endsWith('.js')).sort();
    expect(files).toEqual(Object.keys(cases).sort());
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  for (const [file, { args, expected, agentDefinitions }] of Object.entries(cases)) {
    it(`${file} ${expected === 'done' ? 'runs to its end' : 'is refused, naming the construct'}`, async () => {
      const script = readFileSync(join(folder, file), 'utf8');
      const end = await runScriptToEnd(script, answer, { args, agentDefinitions });
      if (expected === 'done') {
        expect(end.output.status).toBe('done');
        expect(end.ran.length).toBeGreaterThan(0);
        // Run again against the journal it built: the same result, and no agent runs twice.
        const again = await runScriptToEnd(script, answer, { args, agentDefinitions, journal: end.journal });
        expect(again.ran).toEqual([]);
        expect(again.output).toEqual(end.output);
      } else {
        expect(end.output).toMatchObject({ status: 'failed' });
        expect(end.output.status === 'failed' ? end.output.diagnostic.message : '').toMatch(expected);
      }
    });
  }

  it('gives the results the scripts compute from their agents', async () => {
    const read = (file: string) => readFileSync(join(folder, file), 'utf8');
    const sweep = await runScriptToEnd(read('bug-sweep.js'), answer, { args: cases['bug-sweep.js']!.args });
    expect(sweep.output).toMatchObject({ status: 'done', result: { candidates: 4, confirmed: 4 } });
    const fix = await runScriptToEnd(read('test-and-fix.js'), answer);
    expect(fix.output).toMatchObject({ status: 'done', result: { rounds: 4, fixed: ['test 1'] }, logs: ['could not fix test 2: the fix broke another test'] });
    const math = await runScriptToEnd(read('math-problems.js'), answer, { args: cases['math-problems.js']!.args });
    expect(math.output).toMatchObject({ status: 'done', result: { total: 14, budgetLeft: null } });
  });
});

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEstimate, placeholderResult, projectionRefusal, type ProjectionModel } from '../../src/domain/workflow-projection';
import { createAgentCallKeys } from '../../src/domain/workflow-journal';
import { projectWorkflowRun } from '../../src/workflow-scripts/project-workflow-run';

/** A run's projection (decision 0039): the script runs with placeholder agents; each agent counts one full window. */

const small: ProjectionModel = { name: 'p/small', contextWindow: 10_000, maxOutputTokens: 2_000, prices: { input: 1, output: 4 } };
const haiku: ProjectionModel = { name: 'p/haiku', contextWindow: 5_000, maxOutputTokens: 1_000, prices: { input: 0.5, output: 2 } };
const modelFor = (requested: string | undefined): ProjectionModel => (requested === 'haiku' ? haiku : requested === undefined ? small : { ...small, substitutedFor: requested });

describe('agentEstimate', () => {
  it('counts a prompt of the window less the output limit and an answer of the output limit, at the model prices', () => {
    // 8,000 input × $1/M + 2,000 output × $4/M = 8,000 + 8,000 micro-dollars.
    expect(agentEstimate(small)).toEqual({ tokens: 10_000, inputTokens: 8_000, outputTokens: 2_000, costMicroUsd: 16_000 });
    expect(agentEstimate({ ...small, prices: undefined }).costMicroUsd).toBeNull();
  });
});

describe('placeholderResult', () => {
  it('gives the smallest value a schema allows, and a string without one', () => {
    expect(placeholderResult(undefined)).toBe('(projected result)');
    expect(placeholderResult({ type: 'object', properties: { bugs: { type: 'array' }, score: { type: 'number' }, ok: { type: 'boolean' }, kind: { enum: ['a', 'b'] } } })).toEqual({ bugs: [], score: 0, ok: false, kind: 'a' });
    expect(placeholderResult({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('');
  });
});

describe('projectWorkflowRun', () => {
  it('counts every agent() call of a fixed fan-out and a pipeline, per model', async () => {
    const script = [
      "const parts = await parallel(args.files.map((file) => () => agent(`read ${file}`, { label: 'read' })));",
      "const checked = await pipeline(parts, (part) => agent(`check ${part}`, { model: 'haiku' }), (out) => agent(`sum ${out}`));",
      'return checked.length;',
    ].join('\n');
    const projection = await projectWorkflowRun({ script, args: { files: ['a', 'b', 'c'] }, maxAgents: 100, modelFor });
    expect(projection.complete).toBe(true);
    expect(projection.diagnostic).toBeUndefined();
    expect(projection.agents).toBe(9);
    expect(projection.models).toEqual([
      { model: 'p/small', agents: 6, tokensPerAgent: 10_000, costMicroUsdPerAgent: 16_000 },
      { model: 'p/haiku', agents: 3, tokensPerAgent: 5_000, costMicroUsdPerAgent: 4_000 },
    ]);
    expect(projection.tokens).toBe(6 * 10_000 + 3 * 5_000);
    expect(projection.costMicroUsd).toBe(6 * 16_000 + 3 * 4_000);
    expect(projection.costUsd).toBe(0.108);
  });

  it('runs a Claude Code fixture whose second fan-out depends on found items, and says those are not counted', async () => {
    const script = readFileSync(resolve(__dirname, '..', 'fixtures', 'workflow-scripts', 'bug-sweep.js'), 'utf8');
    const projection = await projectWorkflowRun({ script, args: { modules: ['src/a.ts', 'src/b.ts'] }, maxAgents: 100, modelFor });
    // Two finders; their placeholder answers list no bugs, so no confirmer is projected.
    expect(projection).toMatchObject({ agents: 2, complete: true, tokens: 20_000, costMicroUsd: 32_000 });
    expect(projection.notes.join(' ')).toContain('not counted');
  });

  it('stops counting at maxAgents and says the figures are a floor', async () => {
    const script = 'for (let i = 0; ; i++) { await agent(`step ${i}`); }';
    const projection = await projectWorkflowRun({ script, args: null, maxAgents: 5, modelFor });
    expect(projection).toMatchObject({ agents: 5, complete: false });
    expect(projection.notes.join(' ')).toContain('reached maxAgents (5)');
  });

  it('bounds tokens and cost by tokenBudget, and reports a model it did not know', async () => {
    const projection = await projectWorkflowRun({ script: "await parallel([1, 2, 3, 4].map((n) => () => agent(`n ${n}`, { model: 'mystery' })));", args: null, maxAgents: 100, tokenBudget: 20_000, modelFor });
    expect(projection).toMatchObject({ agents: 4, tokens: 20_000, costMicroUsd: 32_000 });
    expect(projection.notes.join(' ')).toContain('mystery (counted as p/small)');
  });

  it('leaves out the agents a resumed run journal answers, and counts a failed one again', async () => {
    const keyOf = createAgentCallKeys();
    const journal = {
      [keyOf({ prompt: 'one', options: {}, agentDefinition: null })]: { outcome: 'done' as const, result: 'first', tokens: 10 },
      [keyOf({ prompt: 'two', options: {}, agentDefinition: null })]: { outcome: 'failed' as const, failure: { type: 'ModelError', message: 'down' } },
    };
    const projection = await projectWorkflowRun({ script: "const a = await agent('one');\nconst b = await agent('two');\nreturn [a, b, await agent('three')];", args: null, maxAgents: 10, modelFor, journal });
    expect(projection).toMatchObject({ agents: 2, complete: true });
    expect(projection.notes.join(' ')).toContain('resumes from a journal of 1 finished agent:');
  });

  it('reports a script that fails, naming its line', async () => {
    const projection = await projectWorkflowRun({ script: 'const x = 1;\nreturn x +;', args: null, maxAgents: 10, modelFor });
    expect(projection.diagnostic).toMatchObject({ kind: 'syntax', line: 2 });
    expect(projection.agents).toBe(0);
  });
});

describe('projectionRefusal', () => {
  it('refuses a projection over the money cap, naming agents, tokens and cost', async () => {
    const projection = await projectWorkflowRun({ script: "await parallel([1, 2, 3].map((n) => () => agent(`n ${n}`)));", args: null, maxAgents: 100, modelFor });
    expect(projectionRefusal(projection, undefined)).toBeUndefined();
    expect(projectionRefusal(projection, 48_000)).toBeUndefined();
    expect(projectionRefusal(projection, 47_999)).toBe(
      'the run is projected at 3 agents and 30000 tokens, $0.048, more than its costBudgetUsd of $0.047999; raise costBudgetUsd, lower maxAgents or tokenBudget, or run fewer agents (dryRun shows the projection).',
    );
  });

  it('refuses a money cap when an agent model has no prices', async () => {
    const projection = await projectWorkflowRun({ script: "await agent('x');", args: null, maxAgents: 100, modelFor: () => ({ ...small, prices: undefined }) });
    expect(projection.costMicroUsd).toBeNull();
    expect(projectionRefusal(projection, 1_000_000)).toContain('p/small, which has no prices in the provider configuration');
  });
});

import { describe, expect, it } from 'vitest';
import type { WorkflowScriptRoundInput } from '../../src/contracts/workflow-script';
import { runWorkflowScriptRound } from '../../src/workflow-scripts/run-script-round';
import { runScriptToEnd, testScriptLimits } from '../support/workflow-script-rounds';

const round = (script: string, extra: Partial<WorkflowScriptRoundInput> = {}) =>
  runWorkflowScriptRound({ script, args: null, journal: {}, agentDefinitions: {}, budgetTokens: null, limits: testScriptLimits, ...extra });
const echo = (request: { prompt: string }) => ({ result: `<${request.prompt}>` });

describe('the workflow script API', () => {
  it('runs a script with a meta header, top-level await, return and args', async () => {
    const script = `export const meta = { name: 'greet', description: 'say hello to each' };
const names = args.names;
const hello = await agent('Say hello to ' + names[0], { label: 'hello' });
return { hello, count: names.length };`;
    const end = await runScriptToEnd(script, echo, { args: { names: ['Ada', 'Alan'] } });
    expect(end.output).toEqual({ status: 'done', result: { hello: '<Say hello to Ada>', count: 2 }, logs: [] });
    expect(end.rounds).toBe(2);
  });

  it('returns every agent a round waits on, with its options and phase, in call order', async () => {
    const output = await round(`agent('not awaited', { phase: 'Other' });
phase('Review');
await parallel(['a', 'b'].map((file) => () => agent('Review ' + file, { label: file, model: 'sonnet', schema: { type: 'object' } })));
await agent('not reached');`);
    expect(output).toMatchObject({
      status: 'waiting',
      definitionsNeeded: [],
      requests: [
        { prompt: 'not awaited', options: { phase: 'Other' }, phase: 'Other' },
        { prompt: 'Review a', options: { label: 'a', model: 'sonnet', schema: { type: 'object' } }, phase: 'Review' },
        { prompt: 'Review b', options: { label: 'b', model: 'sonnet', schema: { type: 'object' } }, phase: 'Review' },
      ],
    });
  });

  it('parallel is a barrier that turns a failed agent into null; pipeline drops a failed item and skips its later stages', async () => {
    const script = `
const all = await parallel([() => agent('ok 1'), () => agent('fail'), agent('ok 2')]);
const piped = await pipeline(['x', 'fail', 'y'], (item) => agent(item === 'fail' ? 'fail' : 'first ' + item), (prev, item, i) => agent(prev + ' then ' + item + ' #' + i));
log('done', { all: all.length });
return { all, piped };`;
    const end = await runScriptToEnd(script, (request) => (request.prompt === 'fail' ? { failure: 'no' } : echo(request)));
    expect(end.output).toEqual({
      status: 'done',
      result: { all: ['<ok 1>', null, '<ok 2>'], piped: ['<<first x> then x #0>', null, '<<first y> then y #2>'] },
      logs: ['done {"all":3}'],
    });
    // The second 'fail' has the same content as the first: it is its second occurrence, a key of its own.
    expect(end.ran.filter((request) => request.prompt === 'fail')).toHaveLength(2);
  });

  it('makes a failed agent a rejection the script can catch, naming the failure', async () => {
    const end = await runScriptToEnd(`try { await agent('x'); } catch (error) { return [error.name, error.type, error.message]; }`, () => ({ failure: 'budget spent' }));
    expect(end.output).toMatchObject({ status: 'done', result: ['AgentFailed', 'AgentFailed', 'budget spent'] });
  });

  it('keys an agent by the content of the agent definition it names, and asks for a definition it does not have', async () => {
    const script = `return await agent('check', { agent: 'reviewer' });`;
    expect(await round(script)).toMatchObject({ status: 'waiting', requests: [], definitionsNeeded: ['reviewer'] });
    const strict = await round(script, { agentDefinitions: { reviewer: 'Be strict.' } });
    const kind = await round(script, { agentDefinitions: { reviewer: 'Be kind.' } });
    expect(strict.status === 'waiting' && kind.status === 'waiting' && strict.requests[0]!.key !== kind.requests[0]!.key).toBe(true);
    expect(await round(`try { await agent('check', { agentType: 'ghost' }); } catch (error) { return error.message; }`, { agentDefinitions: { ghost: null } })).toMatchObject({
      status: 'done',
      result: "no agent definition is named 'ghost'",
    });
  });

  it('budget shows the run target and the tokens of the agents finished so far', async () => {
    const end = await runScriptToEnd(`await agent('a'); await agent('b'); return [budget.total, budget.spent(), budget.remaining()];`, (request) => ({ result: request.prompt, tokens: 30 }));
    expect(end.output).toMatchObject({ status: 'done', result: [null, 60, null] });
  });

  it('refuses more items than parallel and pipeline take, and more agents than a run may make', async () => {
    const limits = { ...testScriptLimits, items: 3, agents: 2 };
    expect(await round(`await parallel([1, 2, 3, 4]);`, { limits })).toMatchObject({ status: 'failed', diagnostic: { kind: 'error', message: 'RangeError: parallel() takes at most 3 items, got 4', line: 1 } });
    expect(await round(`await pipeline([1, 2, 3, 4], (x) => x);`, { limits })).toMatchObject({ status: 'failed', diagnostic: { message: 'RangeError: pipeline() takes at most 3 items, got 4' } });
    expect(await round(`agent('1'); agent('2');\nawait agent('3');`, { limits })).toMatchObject({ status: 'failed', diagnostic: { message: 'Error: a workflow run may make at most 2 agent() calls' } });
  });

  it('names the construct it does not support, even when the script catches it', async () => {
    expect(await round(`\ntry { await agent('x', { isolation: 'worktree', retries: 3 }); } catch {}\nreturn 1;`)).toMatchObject({
      status: 'failed',
      diagnostic: { kind: 'unsupported', message: "agent() option 'retries' is not supported by errand (it takes label, phase, schema, model, effort, agentType, agent, isolation)", line: 2 },
    });
    expect(await round(`return await parallel([() => workflow('other')]);`)).toMatchObject({
      status: 'failed',
      diagnostic: { kind: 'unsupported', message: 'workflow() (a workflow inside a workflow) is not supported by errand' },
    });
    expect(await round(`const a = 1;\nimport fs from 'node:fs';`)).toMatchObject({ status: 'failed', diagnostic: { kind: 'unsupported', line: 2 } });
    expect(await round(`export function helper() {}`)).toMatchObject({ status: 'failed', diagnostic: { kind: 'unsupported', line: 1 } });
  });

  it('reports a syntax error, a throw and a script that waits on nothing with the line', async () => {
    expect(await round(`const a = 1;\nconst b = [1, 2;`)).toMatchObject({ status: 'failed', diagnostic: { kind: 'syntax', line: 2 } });
    expect(await round(`const a = 1;\n\nthrow new TypeError('bad input');`)).toEqual({ status: 'failed', diagnostic: { kind: 'error', message: 'TypeError: bad input', line: 3 }, logs: [] });
    expect(await round(`await new Promise(() => {});`)).toMatchObject({ status: 'failed', diagnostic: { kind: 'stalled' } });
    expect(await round(`return () => 1;`)).toMatchObject({ status: 'done', result: null });
  });

  it('has no clock or randomness, but dates from a value work', async () => {
    for (const [script, what] of [['Date.now()', 'Date.now()'], ['Math.random()', 'Math.random()'], ['new Date()', 'new Date() without an argument'], ['Date()', 'Date()']] as const) {
      expect(await round(`return ${script};`)).toMatchObject({ status: 'failed', diagnostic: { message: `Error: ${what} is not available in a workflow script: it would not give the same value when the script runs again`, line: 1 } });
    }
    expect(await round(`return [new Date(86400000).toISOString(), Date.UTC(2020, 0, 1), new Date(0) instanceof Date];`)).toMatchObject({
      status: 'done',
      result: ['1970-01-02T00:00:00.000Z', 1577836800000, true],
    });
  });

  it('gives the same requests each time it runs the same script against the same journal', async () => {
    const script = `const r = await parallel(args.map((x) => () => agent('n ' + x))); return r;`;
    const first = await round(script, { args: [3, 1, 2, 1] });
    const second = await round(script, { args: [3, 1, 2, 1] });
    expect(first).toEqual(second);
    expect(first.status === 'waiting' && new Set(first.requests.map((request) => request.key)).size).toBe(4);
  });
});

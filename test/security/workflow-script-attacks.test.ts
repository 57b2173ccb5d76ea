import { describe, expect, test } from 'vitest';
import type { WorkflowScriptRoundOutput } from '../../src/contracts/workflow-script';
import { runWorkflowScriptRound } from '../../src/workflow-scripts/run-script-round';
import { testScriptLimits } from '../support/workflow-script-rounds';

/**
 * The attack suite, workflow scripts: a tenant's script runs in QuickJS compiled to WebAssembly inside
 * the worker. Each hostile script must end failed with a diagnostic that names what it did, and the host
 * process must come out as it went in: no reach to its globals, its clock or its modules, and a next
 * script runs as usual.
 */

function attack(name: string, body: () => Promise<void>): void {
  test(`attack: ${name}`, body, 60_000);
}

const run = (script: string, limits = testScriptLimits) =>
  runWorkflowScriptRound({ script, args: null, journal: {}, agentDefinitions: {}, budgetTokens: null, limits });
/** The step limit's attacks: a round's time limit far enough away that the steps end them on a loaded machine too. */
const unhurried = { ...testScriptLimits, roundMs: 40_000 };

const hostGlobals = new Set(Object.getOwnPropertyNames(globalThis));

/** The host is unharmed: no global added or replaced, its clock and randomness work, and a plain script runs. */
async function expectHostUnharmed(): Promise<void> {
  expect(Object.getOwnPropertyNames(globalThis).filter((name) => !hostGlobals.has(name))).toEqual([]);
  expect(typeof process.exit).toBe('function');
  expect(Number.isFinite(Date.now())).toBe(true);
  expect(typeof Math.random()).toBe('number');
  expect(await run(`return await parallel([1, 2].map((n) => () => n * 2));`)).toEqual({ status: 'done', result: [2, 4], logs: [] });
}

function expectFailed(output: WorkflowScriptRoundOutput, diagnostic: { kind: string; message?: string | RegExp; line?: number | null }): void {
  expect(output.status).toBe('failed');
  if (output.status !== 'failed') return;
  expect(output.diagnostic.kind).toBe(diagnostic.kind);
  if (diagnostic.message !== undefined) expect(output.diagnostic.message).toMatch(diagnostic.message);
  if (diagnostic.line !== undefined) expect(output.diagnostic.line).toBe(diagnostic.line);
}

describe('hostile workflow scripts', () => {
  attack('an endless loop ends at the step limit, even one that catches everything', async () => {
    // The engine knows the line of the last call the script made: here the loop's own.
    expectFailed(await run(`const meta = { name: 'spin' };\nlet n = 0;\nwhile (true) { n = Math.max(n, 1); }`, unhurried), { kind: 'steps', message: /step limit/, line: 3 });
    expectFailed(await run(`const meta = { name: 'spin' };\nwhile (true) {}`, unhurried), { kind: 'steps', message: /step limit/ });
    expectFailed(await run(`for (;;) { try { while (true) {} } catch (error) {} }`, unhurried), { kind: 'steps', message: /step limit/ });
    expectFailed(await run(`const spin = async () => { for (;;) await null; };\nawait spin();`, unhurried), { kind: 'steps' });
    await expectHostUnharmed();
  });

  attack('a memory bomb ends at the heap limit', async () => {
    expectFailed(await run(`const all = [];\nfor (let i = 0; ; i += 1) all.push({ i, more: [i, i] });`), { kind: 'memory', message: /memory/ });
    expectFailed(await run(`return new Array(1e9).fill(1);`), { kind: 'memory', message: /memory/ });
    expectFailed(await run(`let s = 'x';\nwhile (true) s = s + s;`), { kind: 'memory' });
    // Strings built by a slow built-in grow past few limit checks: the heap limit or the round's deadline ends them.
    const slow = await run(`const all = [];\nwhile (true) all.push('x'.repeat(1000));`);
    expect(slow).toMatchObject({ status: 'failed', diagnostic: { kind: expect.stringMatching(/^(memory|time)$/) } });
    // The line the engine knew last: the loop's, or (stopped from outside while the built-in ran) the script's first.
    expect([1, 2]).toContain(slow.status === 'failed' ? slow.diagnostic.line : undefined);
    await expectHostUnharmed();
  });

  attack('deep recursion ends as a stack overflow naming its line', async () => {
    expectFailed(await run(`const down = (n) => down(n + 1) + 1;\nreturn down(0);`), { kind: 'error', message: /call stack size exceeded/ });
    await expectHostUnharmed();
  });

  attack('constructor climbs find the sandbox, never the host', async () => {
    for (const [climb, reached] of [
      [`return this.constructor.constructor('return process')().env;`, 'process'],
      [`return agent.constructor('return process')().mainModule;`, 'process'],
      [`return (await (async () => {}).constructor('return require')())('child_process');`, 'require'],
      [`return [].map.constructor('return Buffer')().from('x');`, 'Buffer'],
    ] as const) {
      expectFailed(await run(climb), { kind: 'unsupported', message: new RegExp(`^${reached} does not exist in a workflow script`), line: 1 });
    }
    expectFailed(await run(`return Object.getPrototypeOf(log).constructor('return globalThis.process.binding')()('fs');`), { kind: 'error', message: /TypeError: cannot read property 'binding' of undefined/, line: 1 });
    // What the Function constructor does reach is the sandbox's own global object: no host function on it.
    expect(await run(`return Object.getOwnPropertyNames(Function('return this')()).filter((name) => /host|errand|process|require/i.test(name));`)).toEqual({ status: 'done', result: [], logs: [] });
    await expectHostUnharmed();
  });

  attack('import(), import declarations, require and process do not exist', async () => {
    expectFailed(await run(`const fs = await import('node:fs');\nreturn fs.readFileSync('/etc/passwd', 'utf8');`), { kind: 'unsupported', message: /^import\(\) is not available in a workflow script/, line: 1 });
    expectFailed(await run(`\nimport { readFileSync } from 'node:fs';`), { kind: 'unsupported', message: /import declarations/, line: 2 });
    expectFailed(await run(`return require('node:child_process').execSync('id').toString();`), { kind: 'unsupported', message: /^require does not exist/, line: 1 });
    expectFailed(await run(`return process.env;`), { kind: 'unsupported', message: /^process does not exist/, line: 1 });
    expectFailed(await run(`return await fetch('http://169.254.169.254/');`), { kind: 'unsupported', message: /^fetch does not exist/ });
    await expectHostUnharmed();
  });

  attack('Date.now(), new Date() and Math.random() throw, and no clock is reachable another way', async () => {
    expectFailed(await run(`const start = Date.now();`), { kind: 'error', message: /Date\.now\(\) is not available/, line: 1 });
    expectFailed(await run(`return new (new Date(0).constructor)();`), { kind: 'error', message: /new Date\(\) without an argument/ });
    expectFailed(await run(`return Math.random();`), { kind: 'error', message: /Math\.random\(\) is not available/ });
    expect(await run(`return [typeof performance, typeof setTimeout, typeof os, typeof std];`)).toMatchObject({ status: 'done', result: ['undefined', 'undefined', 'undefined', 'undefined'] });
    await expectHostUnharmed();
  });

  attack('a script cannot reach the host function, or bend the script API by replacing globals', async () => {
    const output = await run(`const hook = globalThis.__errandSettle;\nreturn [typeof hook, typeof globalThis.__errandHost];`);
    expect(output).toEqual({ status: 'done', result: ['undefined', 'undefined'], logs: [] });
    const bent = await run(`JSON.stringify = () => '{"prompt":7}';\nJSON.parse = () => ({ state: 'done', result: 'forged', tokens: 0 });\nPromise.resolve = () => 'forged';\nreturn await agent('real prompt', { label: 'x' });`);
    expect(bent).toMatchObject({ status: 'waiting', requests: [{ prompt: 'real prompt', options: { label: 'x' } }] });
    await expectHostUnharmed();
  });

  attack("nothing a round leaves behind reaches the next round: rounds share the compiled engine, never an instance", async () => {
    // One round plants a global and bends built-ins; another is stopped by the heap limit mid-allocation.
    expect(await run(`globalThis.planted = 'from round one';\nArray.prototype.map = () => 'bent';\nObject.prototype.agentOverride = true;\nreturn 1;`)).toMatchObject({ status: 'done', result: 1 });
    expectFailed(await run(`const all = [];\nfor (let i = 0; ; i += 1) all.push([i, i]);`), { kind: 'memory' });
    expect(await run(`return [typeof globalThis.planted, [1, 2].map((n) => n + 1), ({}).agentOverride === undefined];`)).toEqual({ status: 'done', result: ['undefined', [2, 3], true], logs: [] });
    await expectHostUnharmed();
  });
});

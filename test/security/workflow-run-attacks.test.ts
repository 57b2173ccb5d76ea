import type { WorkflowHandle } from '@temporalio/client';
import { expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { WorkflowRunInput, WorkflowRunResult } from '../../src/contracts/workflow-run';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { freshFolder } from '../support/run-harness';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The attack suite, workflow runs on the real worker: a tenant's hostile script ends its run `failed`
 * with a diagnostic that names what it did, and while hostile rounds run (in threads of their own, off the
 * worker's event loop) another tenant's delegation and another run go on and finish.
 */

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

const model = createScriptedModel((request) => ({ text: `answer:${promptOf(request)}` }));
const stack = useWorkerStack({ label: 'wf-attacks', scripted: { scripted: { model } } });

function attack(name: string, body: () => Promise<void>): void {
  test(`attack: ${name}`, body, 180_000);
}

let counter = 0;
function startRun(script: string, tenant: string): Promise<WorkflowHandle<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>> {
  counter += 1;
  return startWorkflowRun(stack.client, {
    workflowId: `errand-wf-attack-${Date.now()}-${counter}`,
    taskQueue: stack.taskQueue,
    input: { script, scriptName: `hostile-${counter}.js`, args: null, workingDir: freshFolder('errand-wf-attack-'), tenant, caps: {}, concurrency: 4, maxAgents: 10, startedBy: 'test' },
  });
}

// An endless loop meets the step limit first on a machine at ease, the round's time limit first on one
// under load (seven hostile rounds at once on two cores): either ends it, and says which.
const hostile: Array<[string, string, { kind: RegExp; message: RegExp; line?: number }]> = [
  ['endless loop', `await agent('warm up', { label: 'warm' });\nwhile (true) {}`, { kind: /^(steps|time)$/, message: /step limit|time one round may take/ }],
  ['memory bomb', `const all = [];\nfor (let i = 0; ; i += 1) all.push({ i, more: [i, i, i] });`, { kind: /^memory$/, message: /memory/, line: 2 }],
  ['constructor climb', `const F = (async () => {}).constructor;\nreturn await F('return process')();`, { kind: /^unsupported$/, message: /process does not exist in a workflow script/, line: 2 }],
  ['import()', `const fs = await import('node:fs');\nreturn fs.readFileSync('/etc/passwd', 'utf8');`, { kind: /^unsupported$/, message: /import\(\) is not available/, line: 1 }],
  ['require', `const { execSync } = require('child_process');\nreturn String(execSync('id'));`, { kind: /^unsupported$/, message: /require does not exist/, line: 1 }],
  ['process', `process.exit(1);`, { kind: /^unsupported$/, message: /process does not exist/, line: 1 }],
  ['Date.now()', `const started = Date.now();\nreturn started;`, { kind: /^error$/, message: /Date\.now\(\) is not available/, line: 1 }],
];

attack('hostile workflow scripts each end their run failed, naming what they did and its line', async () => {
  const before = model.requests.length;
  const runs = await Promise.all(hostile.map(([, script]) => startRun(script, 'mallory')));
  const results = await Promise.all(runs.map((run) => run.result()));
  for (const [index, [name, , expected]] of hostile.entries()) {
    const result = results[index]!;
    expect(result.status, name).toBe('failed');
    expect(result.diagnostic?.kind, name).toMatch(expected.kind);
    expect(result.diagnostic?.message, name).toMatch(expected.message);
    if (expected.line !== undefined) expect(result.diagnostic?.line, name).toBe(expected.line);
  }
  // Only the endless loop's warm-up agent reached the model.
  expect(model.requests.slice(before).map(promptOf)).toEqual(['warm up']);
});

attack('while hostile rounds spin, another tenant\'s delegation and another run finish', async () => {
  // Three endless loops hold three round threads for seconds each (a round's step limit); the worker's
  // event loop stays free, so a delegation and a plain run of another tenant finish while they spin.
  const loops = await Promise.all([1, 2, 3].map(() => startRun(`while (true) {}`, 'mallory')));
  const delegation = await stack.client.workflow.start('subagentWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId: `errand-wf-attack-neighbour-${Date.now()}`,
    args: [subagentInput({ prompt: 'neighbour task', workingDir: freshFolder('errand-wf-neighbour-'), tenant: 'other' })],
  });
  const plain = await startRun(`return await agent('plain run', { label: 'plain' });`, 'other');
  const delegated: SubagentResult = await delegation.result();
  const plainEnd = await plain.result();
  const loopsStillRunning = await Promise.all(loops.map(async (loop) => (await loop.describe()).status.name));
  expect(delegated.status).toBe('completed');
  expect(delegated.output).toBe('answer:neighbour task');
  expect(plainEnd).toMatchObject({ status: 'completed', result: 'answer:plain run' });
  // They finished while the hostile rounds were still spinning.
  expect(loopsStillRunning).toContain('RUNNING');
  // Each ends at its step limit, or at the round's time limit when the three share few cores.
  for (const loop of loops) expect(await loop.result()).toMatchObject({ status: 'failed', diagnostic: { kind: expect.stringMatching(/^(steps|time)$/) } });
});

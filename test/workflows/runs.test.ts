import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { JsonObject } from '../../src/contracts/json';
import type { ChatMessage } from '../../src/contracts/model';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { notices, toolResults } from '../support/conversation-scripts';
import { freshFolder, toolResult, until, useRunHarness } from '../support/run-harness';

/**
 * How a delegation runs when its definition says so (SEMANTICS §5), against the real dev server with a
 * scripted model: an agent with `background: true` always runs in the background (its slot checked again
 * after planning), and an output schema makes the subagent deliver through a validated `final_output`.
 */

const harness = useRunHarness('runs');
let workingDir: string;

const countSchema: JsonObject = {
  type: 'object',
  properties: { count: { type: 'integer', minimum: 0 }, files: { type: 'array', items: { type: 'string' } } },
  required: ['count'],
  additionalProperties: false,
};

beforeAll(() => {
  workingDir = freshFolder('errand-runs-work-');
  mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
  writeFileSync(join(workingDir, '.claude', 'agents', 'watcher.md'), [
    '---',
    'name: watcher',
    'description: Watches a folder for a while',
    'background: true',
    '---',
    'You watch the folder you are given and report what you saw.',
    '',
  ].join('\n'));
});

function finalOutput(args: JsonObject): ScriptStep {
  return { toolCalls: [{ name: 'final_output', arguments: args }] };
}

describe('agent background: true', () => {
  test('a foreground call runs the agent in the background, and the model is told why; its notice arrives later', async () => {
    const child = harness.scripts.add('bg-child', [{ text: 'Nothing changed in the folder.' }]);
    const session = harness.scripts.add('bg', (request, call): ScriptStep => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { source: 'watcher', instructions: `watch it ${child}` } }] };
      return { text: notices(request).length > 0 ? 'the watcher reported' : 'started the watcher' };
    });
    const handle = await harness.startSession(workingDir, `go ${session}`);
    const withNotice = await until(async () => harness.scripts.of('bg').find((request) => notices(request).length > 0), Boolean, 'the notice');
    const started = toolResult(harness.scripts.of('bg')[1], 'delegate');
    expect(started?.isError).toBeUndefined();
    expect(started?.content).toMatch(
      /^Started task-1 in the background: the agent "watcher" always runs in the background \(background: true in its agent file\), so this call does not wait for it\. You will get a notice when it ends;/,
    );
    expect(notices(withNotice)[0]).toMatch(/^\[task notice\] Background task task-1 completed\.\nFinal message \(the task's own words\):\n<task-output task="task-1">\nNothing changed in the folder\.\n<\/task-output>$/);
    await handle.cancel();
  });

  test('the slot is checked again after planning: with one slot, the second of two parallel calls is refused', async () => {
    // The first child waits on a file, so it holds its slot while the second call is planned and checked.
    const gate = join(freshFolder('errand-runs-gate-'), 'open');
    const child = harness.scripts.add('slot-child', [
      { toolCalls: [{ name: 'developer__run_command', arguments: { command: `while [ ! -e ${gate} ]; do sleep 0.1; done; echo released` } }] },
      { text: 'released' },
    ]);
    const call = { name: 'delegate', arguments: { source: 'watcher', instructions: `hold the slot ${child}` } };
    const session = harness.scripts.add('slot', (_request, index): ScriptStep => (index === 0 ? { toolCalls: [call, call] } : { text: `turn ${index}` }));
    const handle = await harness.startSession(workingDir, `two at once ${session}`, { tasks: { maxBackgroundTasks: 1, waitTimeoutMs: 30_000, completedTaskTtlMs: 600_000 } });
    const request = await until(async () => harness.scripts.of('slot')[1], Boolean, 'the tool results');
    const results = toolResults(request).map((result) => result.content);
    const startedOne = results.filter((text) => /^Started task-\d in the background: the agent "watcher"/.test(text));
    const refused = results.filter((text) => text.startsWith('delegate was not started: the agent "watcher" always runs in the background (background: true in its agent file), and 1 background tasks are running and the limit is 1.'));
    expect(startedOne).toHaveLength(1);
    expect(refused).toHaveLength(1);
    writeFileSync(gate, '');
    await until(async () => harness.scripts.of('slot').find((entry) => notices(entry).length > 0), Boolean, 'the notice of the started task');
    await handle.cancel();
  });
});

describe('structured output', () => {
  test('an invalid final_output call gets the validation errors; a valid one completes the run with result.structured', async () => {
    const marker = harness.scripts.add('structured-ok', [
      finalOutput({ count: 'three' }),
      finalOutput({ count: 3, files: ['a.txt', 'b.txt', 'c.txt'] }),
    ]);
    const handle = await harness.startSubagent(harness.nextId('structured'), { prompt: `Count the files ${marker}`, workingDir, outputSchema: countSchema });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.structured).toEqual({ count: 3, files: ['a.txt', 'b.txt', 'c.txt'] });
    expect(JSON.parse(result.output)).toEqual(result.structured);

    const [first, second] = harness.scripts.of('structured-ok');
    const offered = first?.tools.find((tool) => tool.name === 'final_output');
    expect(offered?.inputSchema).toEqual(countSchema);
    expect(first?.messages[0]?.content).toContain('call the `final_output` tool once with the result as its arguments');
    const rejected = toolResult(second, 'final_output');
    expect(rejected?.isError).toBe(true);
    expect(rejected?.content).toMatch(/^final_output was not accepted: its arguments do not match the input schema\.\n- count: must be integer\n/);
  });

  test('a plain answer gets one reminder; a second one fails the run: "did not call final_output"', async () => {
    const marker = harness.scripts.add('structured-plain', [{ text: 'There are 3 files.' }, { text: 'As I said: 3 files.' }]);
    const handle = await harness.startSubagent(harness.nextId('structured-plain'), { prompt: `Count ${marker}`, workingDir, outputSchema: countSchema });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toBe('did not call final_output: it answered in plain text again after being reminded');
    expect(result.partialOutput).toBe('As I said: 3 files.');
    expect(result.structured).toBeUndefined();
    const requests = harness.scripts.of('structured-plain');
    expect(requests).toHaveLength(2);
    const reminder = requests[1]?.messages.at(-1);
    expect(reminder?.role).toBe('user');
    expect(reminder?.content).toMatch(/^\[errand\] You answered in plain text, but your result must be delivered by calling the `final_output` tool/);
  });

  test('three invalid calls end the run failed with the last errors; the conversation stays valid', async () => {
    const marker = harness.scripts.add('structured-bad', [finalOutput({ count: -1 }), finalOutput({ total: 3 }), finalOutput({ count: 'x', extra: true })]);
    const handle = await harness.startSubagent(harness.nextId('structured-bad'), { prompt: `Count ${marker}`, workingDir, outputSchema: countSchema });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toMatch(/^final_output was called 3 times with arguments that do not match its schema; the last errors: /);
    expect(result.diagnostic).toContain('count: must be integer');
    expect(harness.scripts.of('structured-bad')).toHaveLength(3);
    // Each rejected call got exactly one tool result before the next model call.
    const last = harness.scripts.of('structured-bad')[2]?.messages ?? [];
    const pairs = last.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
    expect(pairs.map((message) => message.toolName)).toEqual(['final_output', 'final_output']);
  });

  test('on its last turn a structured-output run may still deliver: final_output runs, other calls are not run', async () => {
    const list = { name: 'developer__list_directory', arguments: { path: '.' } };
    const marker = harness.scripts.add('structured-last', [
      { toolCalls: [list] },
      { toolCalls: [list] },
      { toolCalls: [list, { name: 'final_output', arguments: { count: 1 } }] },
    ]);
    const handle = await harness.startSubagent(harness.nextId('structured-last'), { prompt: `Count ${marker}`, workingDir, outputSchema: countSchema, maxTurns: 3 });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.structured).toEqual({ count: 1 });
    expect(harness.scripts.of('structured-last')[2]?.messages.at(-1)?.content).toContain('[errand] Turn budget: this is your last turn (3 of 3). Call final_output with your result now; other tool calls will not be run.');
  });

  test('delegate with output_schema: the parent model reads the JSON; the child result carries structured', async () => {
    const child = harness.scripts.add('structured-child', [finalOutput({ count: 2 })]);
    const session = harness.scripts.add('structured-parent', [
      { toolCalls: [{ name: 'delegate', arguments: { instructions: `count ${child}`, output_schema: countSchema } }] },
      { text: 'two' },
    ]);
    const handle = await harness.startSession(workingDir, `structured ${session}`);
    const request = await until(async () => harness.scripts.of('structured-parent')[1], Boolean, 'the delegate result');
    expect(toolResult(request, 'delegate')?.content).toBe('<task-output task="task-1">\n{\n  "count": 2\n}\n</task-output>');
    const delegateSpec = harness.scripts.of('structured-parent')[0]?.tools.find((tool) => tool.name === 'delegate');
    expect(Object.keys(Object(delegateSpec?.inputSchema.properties))).toEqual(expect.arrayContaining(['output_schema', 'isolation']));
    const childResult: SubagentResult = await harness.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(childResult.structured).toEqual({ count: 2 });
    await handle.cancel();
  });
});

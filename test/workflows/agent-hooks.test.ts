import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { scheduledActivities } from '../observability/session-scenario';
import { freshFolder, toolResult, until, useRunHarness } from '../support/run-harness';

/**
 * An agent file's Claude Code `hooks` (SEMANTICS §6, decision 0032) against the real dev server, real
 * hook scripts run as shell commands and a scripted model: SubagentStart output joins the system prompt,
 * a PreToolUse hook that exits 2 blocks a call with its stderr, a PostToolUse hook's feedback follows the
 * tool result, a Stop hook that exits 2 sends the subagent back to work once, and still runs (but cannot send
 * it back) on the last turn and where a structured-output run ends. Under a policy that denies
 * run_command, a PreToolUse hook cannot run and the call it guards is blocked.
 */

/** A real policy service an agent file's http hook POSTs to (allowed by ERRAND_HOOK_URLS on the third worker). */
let policyServer: Server;
let policyUrl: string;
const policyRequests: Record<string, unknown>[] = [];

beforeAll(async () => {
  policyServer = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      policyRequests.push(event);
      const input = event.tool_input as { command?: string } | undefined;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(input?.command?.includes('rm -rf') ? JSON.stringify({ decision: 'block', reason: 'The policy service refuses deletions.' }) : '');
    });
  });
  await new Promise<void>((resolve) => policyServer.listen(0, '127.0.0.1', resolve));
  policyUrl = `http://127.0.0.1:${(policyServer.address() as AddressInfo).port}/policy/`;
});

// Registered before the workers, so the policy service closes after they have stopped.
afterAll(async () => {
  await new Promise<void>((resolve) => policyServer.close(() => resolve()));
});

const harness = useRunHarness('hooks');
const denying = useRunHarness('hooks-deny', { ERRAND_TOOL_POLICY: JSON.stringify({ rules: { developer__run_command: 'deny' } }) });
const httpHooks = useRunHarness('hooks-http', () => ({ ERRAND_HOOK_URLS: policyUrl }));

afterAll(() => {
  expect(harness.scripts.model.rejectedCalls).toHaveLength(0);
});

/** A real-shaped agent file with hooks for each event errand runs, and its hook scripts. */
function writeGuardedAgent(workingDir: string): void {
  mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
  mkdirSync(join(workingDir, '.claude', 'hooks'), { recursive: true });
  writeFileSync(join(workingDir, '.claude', 'hooks', 'guard.sh'), [
    '#!/bin/sh',
    'input=$(cat)',
    'printf "%s\\n" "$input" >> hook-inputs.jsonl',
    'if printf "%s" "$input" | grep -q "rm -rf"; then',
    '  echo "Deleting folders is not allowed here; move them to trash/ instead." >&2',
    '  exit 2',
    'fi',
    'exit 0',
    '',
  ].join('\n'));
  writeFileSync(join(workingDir, '.claude', 'hooks', 'stop.sh'), [
    '#!/bin/sh',
    'cat >> stop-inputs.jsonl',
    'echo >> stop-inputs.jsonl',
    'if [ ! -e stopped-once ]; then',
    '  touch stopped-once',
    '  echo "Run the tests before you finish." >&2',
    '  exit 2',
    'fi',
    '',
  ].join('\n'));
  writeFileSync(join(workingDir, '.claude', 'agents', 'guarded.md'), [
    '---',
    'name: guarded',
    'description: Works under hooks',
    'tools: Bash, Write, Read',
    'hooks:',
    '  SubagentStart:',
    '    - hooks:',
    '        - type: command',
    '          command: echo "The build command is make ci."',
    '  PreToolUse:',
    '    - matcher: Bash',
    '      hooks:',
    '        - type: command',
    '          command: sh .claude/hooks/guard.sh',
    '          timeout: 30',
    '  PostToolUse:',
    '    - matcher: "Write|Edit"',
    '      hooks:',
    '        - type: command',
    '          command: echo "Remember to run the linter on what you wrote." >&2; exit 2',
    '  Stop:',
    '    - hooks:',
    '        - type: command',
    '          command: sh .claude/hooks/stop.sh',
    '---',
    'You work carefully.',
    '',
  ].join('\n'));
}

/**
 * A real-shaped agent file for a lead that delegates: a PreToolUse hook on Claude Code's names of the
 * subagent tool (`Task|Agent`) refuses delegating deployments, and a PostToolUse hook on errand's name
 * (`delegate`) reminds the lead to check a helper's work. Both keep the JSON they were given.
 */
function writeDelegatingAgent(workingDir: string): void {
  mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
  mkdirSync(join(workingDir, '.claude', 'hooks'), { recursive: true });
  writeFileSync(join(workingDir, '.claude', 'hooks', 'no-delegated-deploys.sh'), [
    '#!/bin/sh',
    'input=$(cat)',
    'printf "%s\\n" "$input" >> delegate-inputs.jsonl',
    'if printf "%s" "$input" | grep -qi "deploy"; then',
    '  echo "Deployments are not delegated: run the deploy yourself, step by step." >&2',
    '  exit 2',
    'fi',
    'exit 0',
    '',
  ].join('\n'));
  writeFileSync(join(workingDir, '.claude', 'agents', 'lead.md'), [
    '---',
    'name: lead',
    'description: Leads the work and hands parts of it to helpers',
    'hooks:',
    '  PreToolUse:',
    '    - matcher: "Task|Agent"',
    '      hooks:',
    '        - type: command',
    '          command: sh .claude/hooks/no-delegated-deploys.sh',
    '          timeout: 30',
    '  PostToolUse:',
    '    - matcher: delegate',
    '      hooks:',
    '        - type: command',
    '          command: cat > delegate-result.json; echo "Check the helper\'s work before you rely on it." >&2; exit 2',
    '---',
    'You lead the work.',
    '',
  ].join('\n'));
}

/**
 * A real-shaped agent file whose Stop hook logs each stop (one JSON line in stops.jsonl) and, with `block`,
 * exits 2 asking for more work, as a reviewing hook would.
 */
function writeLoggingAgent(workingDir: string, frontmatter: string[], block: boolean): void {
  mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
  mkdirSync(join(workingDir, '.claude', 'hooks'), { recursive: true });
  writeFileSync(join(workingDir, '.claude', 'hooks', 'log-stop.sh'), [
    '#!/bin/sh',
    'tr -d "\\n" >> stops.jsonl',
    'echo >> stops.jsonl',
    ...(block ? ['echo "Add a summary of what you changed." >&2', 'exit 2'] : ['exit 0']),
    '',
  ].join('\n'));
  writeFileSync(join(workingDir, '.claude', 'agents', 'logged.md'), [
    '---',
    'name: logged',
    'description: Works with its stops logged',
    ...frontmatter,
    'hooks:',
    '  Stop:',
    '    - hooks:',
    '        - type: command',
    '          command: sh .claude/hooks/log-stop.sh',
    '---',
    'You work carefully.',
    '',
  ].join('\n'));
}

/** The JSON lines a hook script appended to a file of the working directory. */
function jsonLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('agent-file hooks', () => {
  test('SubagentStart adds context, PreToolUse blocks with feedback, PostToolUse feedback follows the result, Stop sends the subagent back once', async () => {
    const workingDir = freshFolder('errand-hooks-');
    writeGuardedAgent(workingDir);
    mkdirSync(join(workingDir, 'build'));
    const child = harness.scripts.add('hooks-child', [
      { toolCalls: [{ name: 'developer__run_command', arguments: { command: 'rm -rf build' } }] },
      { toolCalls: [{ name: 'developer__write_file', arguments: { path: 'notes.txt', content: 'notes\n' } }] },
      { text: 'Done.' },
      { text: 'Done, and the tests pass.' },
    ]);
    const session = harness.scripts.add('hooks-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'guarded', instructions: `tidy up ${child}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await harness.startSession(workingDir, `go ${session}`);
    const childId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await until(() => harness.client.workflow.getHandle(childId).result() as Promise<SubagentResult>, Boolean, 'the child result', 120_000);
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Done, and the tests pass.');

    const requests = harness.scripts.of('hooks-child');
    expect(requests).toHaveLength(4);
    const system = requests[0]?.messages[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toContain("# Context from the agent's SubagentStart hooks\n\nThe build command is make ci.");

    // PreToolUse: exit code 2 blocked the call; the folder is still there; the model read the hook's stderr.
    const blocked = toolResult(requests[1], 'developer__run_command');
    expect(blocked?.isError).toBe(true);
    expect(blocked?.content).toBe('The call of developer__run_command was blocked by a PreToolUse hook of agent guarded: Deleting folders is not allowed here; move them to trash/ instead.');
    expect(existsSync(join(workingDir, 'build'))).toBe(true);
    const [preInput] = readFileSync(join(workingDir, 'hook-inputs.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(preInput).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf build' }, errand_tool_name: 'developer__run_command', agent_type: 'guarded', cwd: workingDir, session_id: childId });

    // PostToolUse: the write happened; the hook's feedback follows its result.
    const written = toolResult(requests[2], 'developer__write_file');
    expect(written?.isError ?? false).toBe(false);
    expect(written?.content).toMatch(/\n\n\[PostToolUse hook\] Remember to run the linter on what you wrote\.$/);
    expect(readFileSync(join(workingDir, 'notes.txt'), 'utf8')).toBe('notes\n');

    // Stop: the first answer was sent back with the hook's reason; the second one ended the run.
    const last = requests[3]?.messages[requests[3].messages.length - 1];
    expect(last).toMatchObject({ role: 'user', content: '[Stop hook] You are not done yet:\nRun the tests before you finish.' });
    const stops = readFileSync(join(workingDir, 'stop-inputs.jsonl'), 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(stops.map((stop) => [stop.hook_event_name, stop.stop_hook_active, stop.last_assistant_message])).toEqual([
      ['SubagentStop', false, 'Done.'],
      ['SubagentStop', true, 'Done, and the tests pass.'],
    ]);

    // The hooks that ran outside a tool call are activities of the child's history.
    const summaries = (await scheduledActivities(harness.client.workflow.getHandle(childId))).map((activity) => activity.summary);
    expect(summaries.filter((summary) => summary === 'SubagentStart hooks of guarded')).toHaveLength(1);
    expect(summaries.filter((summary) => summary === 'Stop hooks of guarded')).toHaveLength(2);
    await handle.cancel();
  });

  test('a Stop hook runs when the subagent answers on its last turn; its block (exit 2) cannot send it back: the run completes and the block is noted', async () => {
    const workingDir = freshFolder('errand-hooks-last-turn-');
    writeLoggingAgent(workingDir, ['maxTurns: 1'], true);
    const child = harness.scripts.add('hooks-last-turn-child', [{ text: 'Renamed the files.' }]);
    const session = harness.scripts.add('hooks-last-turn-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'logged', instructions: `rename ${child}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await harness.startSession(workingDir, `go ${session}`);
    const childId = `${handle.workflowId}~task-1`;
    const childHandle = harness.client.workflow.getHandle(childId);
    const result: SubagentResult = await until(() => childHandle.result() as Promise<SubagentResult>, Boolean, 'the child result', 120_000);
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Renamed the files.');
    // One model call: the block did not send the subagent back for a turn it does not have.
    expect(harness.scripts.of('hooks-last-turn-child')).toHaveLength(1);

    // The hook ran once, with Claude Code's SubagentStop input.
    expect(jsonLines(join(workingDir, 'stops.jsonl'))).toEqual([expect.objectContaining({
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      last_assistant_message: 'Renamed the files.',
      agent_type: 'logged',
      session_id: childId,
    })]);
    const summaries = (await scheduledActivities(childHandle)).map((activity) => activity.summary);
    expect(summaries.filter((summary) => summary === 'Stop hooks of logged')).toHaveLength(1);
    // Its feedback is noted in the subagent's history, where the hooks' other non-blocking outcomes go.
    const view: TranscriptView = await childHandle.query(transcriptQuery);
    expect(view.entries.filter((entry) => entry.role === 'event' && entry.text.startsWith('[hook]')).map((entry) => entry.text)).toEqual([
      '[hook] a Stop hook of agent logged blocked, but it was the last turn, so the run ends as it would have: Add a summary of what you changed.',
    ]);
    await handle.cancel();
  });

  test('a Stop hook runs when a structured-output run ends through final_output; the result is delivered', async () => {
    const workingDir = freshFolder('errand-hooks-structured-');
    writeLoggingAgent(workingDir, [], false);
    const countSchema = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'], additionalProperties: false };
    const child = harness.scripts.add('hooks-structured-child', [{ toolCalls: [{ name: 'final_output', arguments: { count: 2 } }] }]);
    const session = harness.scripts.add('hooks-structured-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'logged', instructions: `count ${child}`, output_schema: countSchema } }] },
      { text: 'Finished.' },
    ]);
    const handle = await harness.startSession(workingDir, `go ${session}`);
    const childId = `${handle.workflowId}~task-1`;
    const childHandle = harness.client.workflow.getHandle(childId);
    const result: SubagentResult = await until(() => childHandle.result() as Promise<SubagentResult>, Boolean, 'the child result', 120_000);
    expect(result.status).toBe('completed');
    expect(result.structured).toEqual({ count: 2 });
    expect(jsonLines(join(workingDir, 'stops.jsonl'))).toEqual([expect.objectContaining({
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      agent_type: 'logged',
      session_id: childId,
    })]);
    expect(JSON.parse(String(jsonLines(join(workingDir, 'stops.jsonl'))[0]?.last_assistant_message))).toEqual({ count: 2 });
    const summaries = (await scheduledActivities(childHandle)).map((activity) => activity.summary);
    expect(summaries.filter((summary) => summary === 'Stop hooks of logged')).toHaveLength(1);
    await handle.cancel();
  });

  test('where the policy denies run_command, a PreToolUse hook cannot run and the call it guards is blocked', async () => {
    const workingDir = freshFolder('errand-hooks-deny-');
    writeGuardedAgent(workingDir);
    const child = denying.scripts.add('hooks-deny-child', [
      { toolCalls: [{ name: 'developer__write_file', arguments: { path: 'a.txt', content: 'a\n' } }] },
      { text: 'Done.' },
    ]);
    // Bash is not offered under this policy, so the guarded call is the write: give Write a PreToolUse hook here.
    writeFileSync(join(workingDir, '.claude', 'agents', 'guarded.md'), readFileSync(join(workingDir, '.claude', 'agents', 'guarded.md'), 'utf8').replace('    - matcher: Bash\n', '    - matcher: Write\n'));
    const session = denying.scripts.add('hooks-deny-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'guarded', instructions: `write ${child}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await denying.startSession(workingDir, `go ${session}`);
    const childId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await until(() => denying.client.workflow.getHandle(childId).result() as Promise<SubagentResult>, Boolean, 'the child result', 120_000);
    expect(result.status).toBe('completed');
    const blocked = toolResult(denying.scripts.of('hooks-deny-child')[1], 'developer__write_file');
    expect(blocked?.isError).toBe(true);
    expect(blocked?.content).toContain('was blocked by a PreToolUse hook of agent guarded: the PreToolUse hooks of');
    expect(blocked?.content).toContain('could not run: The tool developer__run_command is not allowed by policy.');
    expect(existsSync(join(workingDir, 'a.txt'))).toBe(false);
    await handle.cancel();
  });

  test('an http PreToolUse hook to a URL the operator allows decides on the call; its event JSON reaches the service', async () => {
    const workingDir = freshFolder('errand-hooks-http-');
    mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
    mkdirSync(join(workingDir, 'build'));
    writeFileSync(join(workingDir, '.claude', 'agents', 'checked.md'), [
      '---',
      'name: checked',
      'description: Works under a policy service',
      'tools: Bash',
      'hooks:',
      '  PreToolUse:',
      '    - matcher: Bash',
      '      hooks:',
      '        - type: http',
      `          url: ${policyUrl}pre-tool-use`,
      '          timeout: 10',
      '---',
      'You work carefully.',
      '',
    ].join('\n'));
    const child = httpHooks.scripts.add('hooks-http-child', [
      { toolCalls: [{ name: 'developer__run_command', arguments: { command: 'rm -rf build' } }] },
      { toolCalls: [{ name: 'developer__run_command', arguments: { command: 'echo kept > kept.txt' } }] },
      { text: 'Done.' },
    ]);
    const session = httpHooks.scripts.add('hooks-http-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'checked', instructions: `tidy up ${child}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await httpHooks.startSession(workingDir, `go ${session}`);
    const childId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await until(() => httpHooks.client.workflow.getHandle(childId).result() as Promise<SubagentResult>, Boolean, 'the child result', 120_000);
    expect(result.status).toBe('completed');
    const requests = httpHooks.scripts.of('hooks-http-child');
    const blocked = toolResult(requests[1], 'developer__run_command');
    expect(blocked?.isError).toBe(true);
    expect(blocked?.content).toBe('The call of developer__run_command was blocked by a PreToolUse hook of agent checked: The policy service refuses deletions.');
    expect(existsSync(join(workingDir, 'build'))).toBe(true);
    expect(readFileSync(join(workingDir, 'kept.txt'), 'utf8')).toBe('kept\n');
    expect(policyRequests.map((event) => [event.hook_event_name, event.tool_name, (event.tool_input as { command: string }).command, event.agent_type, event.session_id])).toEqual([
      ['PreToolUse', 'Bash', 'rm -rf build', 'checked', childId],
      ['PreToolUse', 'Bash', 'echo kept > kept.txt', 'checked', childId],
    ]);
    expect(httpHooks.scripts.model.rejectedCalls).toHaveLength(0);
    await handle.cancel();
  });
  test('a PreToolUse hook matching Task|Agent blocks a delegate call with exit code 2: no child starts and the model reads the hook\'s stderr', async () => {
    const workingDir = freshFolder('errand-hooks-delegate-block-');
    writeDelegatingAgent(workingDir);
    const lead = harness.scripts.add('hooks-delegate-block-lead', [
      { toolCalls: [{ id: 'delegate-deploy', name: 'delegate', arguments: { instructions: 'Deploy the release to production.', description: 'deploy' } }] },
      { text: 'I will run the deploy myself.' },
    ]);
    const session = harness.scripts.add('hooks-delegate-block-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'lead', instructions: `ship it ${lead}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await harness.startSession(workingDir, `go ${session}`, { maxDepth: 2 });
    const leadId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await until(() => harness.client.workflow.getHandle(leadId).result() as Promise<SubagentResult>, Boolean, 'the lead result', 120_000);
    expect(result.status).toBe('completed');
    expect(result.output).toBe('I will run the deploy myself.');

    const requests = harness.scripts.of('hooks-delegate-block-lead');
    expect(requests).toHaveLength(2);
    const blocked = toolResult(requests[1], 'delegate');
    expect(blocked?.isError).toBe(true);
    expect(blocked?.content).toBe('The call of delegate was blocked by a PreToolUse hook of agent lead: Deployments are not delegated: run the deploy yourself, step by step.');

    // The hook read the event as Claude Code gives it, with errand's arguments as tool_input.
    expect(jsonLines(join(workingDir, 'delegate-inputs.jsonl'))).toEqual([expect.objectContaining({
      hook_event_name: 'PreToolUse',
      tool_name: 'Agent',
      tool_input: { instructions: 'Deploy the release to production.', description: 'deploy' },
      tool_use_id: 'delegate-deploy',
      errand_tool_name: 'delegate',
      agent_type: 'lead',
      cwd: workingDir,
      session_id: leadId,
    })]);
    // No child was started, and no PostToolUse hook ran for the call that was not made.
    await expect(harness.client.workflow.getHandle(`${leadId}~task-1`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(existsSync(join(workingDir, 'delegate-result.json'))).toBe(false);
    const summaries = (await scheduledActivities(harness.client.workflow.getHandle(leadId))).map((activity) => activity.summary);
    expect(summaries.filter((summary) => summary?.startsWith('PreToolUse hooks of lead'))).toEqual(['PreToolUse hooks of lead · delegate']);
    expect(summaries.filter((summary) => summary?.startsWith('PostToolUse hooks of lead'))).toEqual([]);
    await handle.cancel();
  });

  test('a delegate call its PreToolUse hook lets pass starts the child; the PostToolUse hook\'s stderr follows the child\'s result', async () => {
    const workingDir = freshFolder('errand-hooks-delegate-pass-');
    writeDelegatingAgent(workingDir);
    const helper = harness.scripts.add('hooks-delegate-pass-helper', [{ text: 'There are 3 files in the folder.' }]);
    const lead = harness.scripts.add('hooks-delegate-pass-lead', [
      { toolCalls: [{ id: 'delegate-count', name: 'delegate', arguments: { instructions: `Count the files ${helper}`, description: 'count' } }] },
      { text: 'The folder has 3 files.' },
    ]);
    const session = harness.scripts.add('hooks-delegate-pass-session', [
      { toolCalls: [{ name: 'delegate', arguments: { source: 'lead', instructions: `count ${lead}` } }] },
      { text: 'Finished.' },
    ]);
    const handle = await harness.startSession(workingDir, `go ${session}`, { maxDepth: 2 });
    const leadId = `${handle.workflowId}~task-1`;
    const result: SubagentResult = await until(() => harness.client.workflow.getHandle(leadId).result() as Promise<SubagentResult>, Boolean, 'the lead result', 120_000);
    expect(result.status).toBe('completed');

    // The child ran and answered; the lead read its result, then the PostToolUse hook's feedback.
    const child = (await harness.client.workflow.getHandle(`${leadId}~task-1`).result()) as SubagentResult;
    expect(child.output).toBe('There are 3 files in the folder.');
    const requests = harness.scripts.of('hooks-delegate-pass-lead');
    expect(requests).toHaveLength(2);
    const delegated = toolResult(requests[1], 'delegate');
    expect(delegated?.isError ?? false).toBe(false);
    expect(delegated?.content).toContain('There are 3 files in the folder.');
    expect(delegated?.content).toMatch(/There are 3 files in the folder\.[\s\S]*\n\n\[PostToolUse hook\] Check the helper's work before you rely on it\.$/);

    // The PreToolUse hook saw the call and let it pass; the PostToolUse hook got the result as tool_response.
    expect(jsonLines(join(workingDir, 'delegate-inputs.jsonl'))).toEqual([expect.objectContaining({ hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_use_id: 'delegate-count' })]);
    const post = JSON.parse(readFileSync(join(workingDir, 'delegate-result.json'), 'utf8')) as Record<string, unknown>;
    expect(post).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'Agent', tool_input: { instructions: `Count the files ${helper}`, description: 'count' }, tool_use_id: 'delegate-count', errand_tool_name: 'delegate', session_id: leadId });
    expect(post.tool_response).toContain('There are 3 files in the folder.');
    expect(harness.scripts.model.rejectedCalls).toHaveLength(0);
    await handle.cancel();
  });
});

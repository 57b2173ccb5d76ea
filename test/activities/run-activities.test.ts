import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { beforeAll, describe, expect, test } from 'vitest';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { createRunActivities, type RunActivityDependencies } from '../../src/activities/run-activities';
import { ConversationStore, conversationSegment } from '../../src/activities/conversation-store';
import { hookProgress } from '../../src/activities/hook-progress';
import type { AgentHooksWire } from '../../src/contracts/agent-hooks';
import type { RunAgentHookInput, RunAgentHookOutput, RunCheckInput, RunCheckOutput } from '../../src/contracts/run-activities';
import { ensureBubblewrap } from '../support/bubblewrap';

/**
 * The run activities with real parts (a local blob store, real shell commands, the bubblewrap sandbox,
 * real git repositories): checks run under `run_command`'s rules and never twice; worktrees go where the
 * rules allow, without running anything the repository's configuration names, and are tidied at the end.
 */

const fresh = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));
const identity = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const git = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...identity } });

function activities(overrides: Partial<RunActivityDependencies> = {}) {
  return createRunActivities({ blobs: new LocalBlobStore(fresh('errand-run-blobs-')), commands: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ERRAND_TEST_SECRET: 'hunter2' } }, paths: {}, ...overrides });
}

function check(workingDir: string, command: string, step = 'check-1'): RunCheckInput {
  return { workflowId: 'wf', conversationId: `wf@${step}-${Math.random()}`, step, command, workingDir, timeoutSeconds: 30 };
}

function repository(folder: string): string {
  mkdirSync(folder, { recursive: true });
  git(folder, ['init', '--quiet', '--initial-branch=main']);
  writeFileSync(join(folder, 'a.txt'), 'a\n');
  git(folder, ['add', '--all']);
  git(folder, ['commit', '--quiet', '-m', 'initial']);
  return folder;
}

beforeAll(async () => {
  await ensureBubblewrap();
}, 600_000);

describe('runCheck', () => {
  const environment = new MockActivityEnvironment();

  test('runs in the working directory with the allow-listed environment only; the outcome is stored and never run twice', async () => {
    const run = activities();
    const workingDir = fresh('errand-check-');
    const input = check(workingDir, 'echo run >> runs.log; test -z "$ERRAND_TEST_SECRET" && test -f runs.log');
    const first = await environment.run(() => run.runCheck(input));
    const again = await environment.run(() => run.runCheck(input));
    expect(first).toEqual({ ran: true, passed: true, exitCode: 0, reason: 'exited with code 0', outputPreview: '' });
    expect(again).toEqual(first);
    expect(readFileSync(join(workingDir, 'runs.log'), 'utf8')).toBe('run\n');
  });

  test('a long failing output is cut to its start and end; the whole of it is stored by key', async () => {
    const run = activities();
    const workingDir = fresh('errand-check-');
    const output: RunCheckOutput = await environment.run(() => run.runCheck(check(workingDir, 'seq 1 2000; exit 4')));
    expect(output).toMatchObject({ ran: true, passed: false, exitCode: 4, reason: 'exited with code 4' });
    if (!output.ran) throw new Error('the check did not run');
    expect(output.outputPreview).toMatch(/^1\n2\n[\s\S]*\n\[… \d+ characters cut …\]\n[\s\S]*\n2000\n$/);
    expect(output.outputKey).toMatch(/^outcomes\/checks\/.+\/check-1\.output\.txt$/);
  });

  test('a check that outlives its time limit is killed and fails', async () => {
    const run = activities();
    const output = await environment.run(() => run.runCheck({ ...check(fresh('errand-check-'), 'sleep 30'), timeoutSeconds: 1 }));
    expect(output).toMatchObject({ ran: true, passed: false, exitCode: null, reason: 'timed out after 1 s and was killed' });
  });

  test('with the bubblewrap sandbox a check sees only its working directory', async () => {
    const outside = fresh('errand-check-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const command = `cat ${join(outside, 'secret.txt')}`;
    const plain = await environment.run(() => activities().runCheck(check(fresh('errand-check-'), command)));
    const sandboxed = await environment.run(() =>
      activities({ commands: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, sandbox: { kind: 'bwrap', network: false, readOnlyPaths: [] } } }).runCheck(check(fresh('errand-check-'), command)),
    );
    expect(plain).toMatchObject({ ran: true, passed: true });
    expect(sandboxed).toMatchObject({ ran: true, passed: false, exitCode: 1 });
  });

  test('the policy of run_command applies: deny refuses it, ask waits for an approval', async () => {
    const denying = activities({ toolPolicy: { default: 'allow', rules: { developer__run_command: 'deny' }, approvers: 'human' } });
    const asking = activities({ toolPolicy: { default: 'allow', rules: { developer: 'ask' }, approvers: 'human' } });
    const workingDir = fresh('errand-check-');
    const refused = await environment.run(() => denying.runCheck(check(workingDir, 'touch ran.txt')));
    expect(refused).toEqual({ ran: false, refused: 'The tool developer__run_command is not allowed by policy. Recipe checks are shell commands and run only where developer__run_command may.' });
    expect(await environment.run(() => asking.runCheck(check(workingDir, 'touch ran.txt')))).toEqual({ ran: false, needsApproval: true });
    expect(existsSync(join(workingDir, 'ran.txt'))).toBe(false);
  });
});

describe('runAgentHook around an orchestration tool', () => {
  const environment = new MockActivityEnvironment();
  const hooks: AgentHooksWire = {
    agentName: 'lead',
    file: 'project: .claude/agents/lead.md',
    preToolUse: [{ matcher: 'Task', hooks: [{ command: 'cat >> pre-inputs.jsonl; echo "Not this one." >&2; exit 2', timeoutSeconds: 30 }] }],
    postToolUse: [{ matcher: 'delegate', hooks: [{ command: 'cat > post-input.json; echo "Check it." >&2; exit 2', timeoutSeconds: 30 }] }],
    orchestrationTools: { preToolUse: ['delegate'], postToolUse: ['delegate'] },
  };
  const input = (workingDir: string, step: string, event: 'PreToolUse' | 'PostToolUse', extra: Partial<RunAgentHookInput> = {}): RunAgentHookInput => ({
    workflowId: 'wf/task-1', conversationId: `wf/task-1@${step}-${Math.random()}`, step, event, hooks, workingDir,
    eventInput: { tool_input: { instructions: 'Deploy it.' }, tool_use_id: 'call-1' }, toolName: 'delegate', ...extra,
  });

  test('a PreToolUse hook gets the tool event as around runTool\'s tools (Claude Code\'s name first); its block is stored and never run twice', async () => {
    const run = activities();
    const workingDir = fresh('errand-tool-hook-');
    const pre = input(workingDir, 'pre-tool-3-0', 'PreToolUse');
    const first = await environment.run(() => run.runAgentHook(pre));
    const again = await environment.run(() => run.runAgentHook(pre));
    expect(first).toEqual({ blocked: true, feedback: ['Not this one.'], context: [], notes: [] });
    expect(again).toEqual(first);
    const lines = readFileSync(join(workingDir, 'pre-inputs.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_input: { instructions: 'Deploy it.' }, tool_use_id: 'call-1', errand_tool_name: 'delegate', agent_type: 'lead', session_id: 'wf/task-1', cwd: workingDir });
  });

  test('a PostToolUse hook reads the result as tool_response, its long texts taken from the conversation store', async () => {
    const blobs = new LocalBlobStore(fresh('errand-run-blobs-'));
    const conversations = new ConversationStore(blobs);
    await conversations.append('wf/task-1/task-1@1', 0, { role: 'assistant', content: 'The helper\'s long answer.' });
    const run = activities({ blobs, conversations });
    const workingDir = fresh('errand-tool-hook-');
    const outcome = await environment.run(() => run.runAgentHook(input(workingDir, 'post-tool-3-0', 'PostToolUse', { toolResponse: ['Result: ', { ref: { conversationId: 'wf/task-1/task-1@1', seq: 0 } }] })));
    expect(outcome).toEqual({ blocked: true, feedback: ['Check it.'], context: [], notes: [] });
    const event = JSON.parse(readFileSync(join(workingDir, 'post-input.json'), 'utf8')) as Record<string, unknown>;
    expect(event).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'Agent', errand_tool_name: 'delegate', tool_response: "Result: The helper's long answer." });
  });

  test('a retried attempt resumes after the hooks that finished: each hook runs once per call', async () => {
    const blobs = new LocalBlobStore(fresh('errand-run-blobs-'));
    const run = activities({ blobs });
    const workingDir = fresh('errand-tool-hook-');
    const stopHooks: AgentHooksWire = {
      agentName: 'lead',
      file: 'project: .claude/agents/lead.md',
      stop: [{ hooks: ['one', 'two', 'three'].map((word) => ({ command: `echo ${word} >> runs.log; echo "${word} says" >&2; exit 1`, timeoutSeconds: 30 })) }],
    };
    const stop: RunAgentHookInput = { workflowId: 'wf', conversationId: `wf@stop-${Math.random()}`, step: 'stop-4', event: 'SubagentStop', hooks: stopHooks, workingDir, eventInput: { stop_hook_active: false } };
    // The first attempt ran two hooks (their outcome stored after each) and was lost before the third.
    const first: RunAgentHookOutput = await environment.run(() => run.runAgentHook({ ...stop, hooks: { ...stopHooks, stop: [{ hooks: stopHooks.stop?.[0]?.hooks.slice(0, 2) ?? [] }] }, step: 'scratch' }));
    expect(first.notes).toHaveLength(2);
    const progress = await hookProgress(blobs, `outcomes/hooks/${conversationSegment(stop.conversationId)}/${stop.step}`, 3, false);
    await progress.save(2, first);
    const retried: RunAgentHookOutput = await new MockActivityEnvironment({ attempt: 2 }).run(() => run.runAgentHook(stop));
    expect(readFileSync(join(workingDir, 'runs.log'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(retried.notes).toHaveLength(3);
    expect(retried.notes.slice(0, 2)).toEqual(first.notes);
    expect(retried.notes[2]).toMatch(/^SubagentStop hook "echo three .*" exited with code 1 \(not blocking\): three says$/);
  });
});

describe('prepareWorktree and finishWorktree', () => {
  const input = (workingDir: string, name = 'task-1') => ({ workflowId: `session/${name}`, conversationId: `session/${name}@run-${Math.random()}`, workingDir, name });

  test('nothing the repository configures runs: no hook, no filter driver, no fsmonitor', async () => {
    const repo = repository(fresh('errand-wt-hooks-'));
    const marks = fresh('errand-wt-marks-');
    writeFileSync(join(repo, '.gitattributes'), '* filter=evil\n');
    git(repo, ['add', '.gitattributes']);
    git(repo, ['commit', '--quiet', '-m', 'attributes']);
    git(repo, ['config', 'filter.evil.smudge', `touch ${join(marks, 'smudge')}; cat`]);
    git(repo, ['config', 'filter.evil.process', `touch ${join(marks, 'process')}`]);
    git(repo, ['config', 'core.fsmonitor', `touch ${join(marks, 'fsmonitor')}; false`]);
    mkdirSync(join(repo, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(repo, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${join(marks, 'hook')}\n`);
    chmodSync(join(repo, '.git', 'hooks', 'post-checkout'), 0o755);
    const run = activities();
    const prepared = await run.prepareWorktree(input(repo));
    expect(readFileSync(join(prepared.workingDir, 'a.txt'), 'utf8')).toBe('a\n');
    const finished = await run.finishWorktree({ conversationId: 'done', worktree: prepared });
    expect(finished).toEqual({ branch: 'errand/task-1', path: prepared.relativePath, changed: false });
    expect(['smudge', 'process', 'fsmonitor', 'hook'].filter((mark) => existsSync(join(marks, mark)))).toEqual([]);
  });

  test('idempotent: a stored outcome is returned; without it, the worktree git already has is taken again', async () => {
    const repo = repository(fresh('errand-wt-again-'));
    const run = activities();
    const request = input(repo);
    const prepared = await run.prepareWorktree(request);
    expect(await run.prepareWorktree(request)).toEqual(prepared);
    // Another worker without the stored outcome (it was lost with the first): the same folder and branch.
    expect(await activities().prepareWorktree(request)).toEqual(prepared);
    expect(git(repo, ['branch', '--list', '--format=%(refname:short)', 'errand/*']).trim()).toBe('errand/task-1');
  });

  test('changes keep the worktree and its branch; ERRAND_WORKTREE_DIR may put worktrees beside the repository', async () => {
    const parent = fresh('errand-wt-sibling-');
    const repo = repository(join(parent, 'project'));
    const run = activities({ worktreeDir: '../.errand-worktrees' });
    const prepared = await run.prepareWorktree(input(repo));
    expect(prepared.path.startsWith(join(parent, '.errand-worktrees'))).toBe(true);
    writeFileSync(join(prepared.workingDir, 'a.txt'), 'changed\n');
    expect(await run.finishWorktree({ conversationId: 'done', worktree: prepared })).toEqual({ branch: 'errand/task-1', path: prepared.relativePath, changed: true });
    expect(readFileSync(join(prepared.workingDir, 'a.txt'), 'utf8')).toBe('changed\n');
    expect(git(repo, ['branch', '--list', '--format=%(refname:short)', 'errand/task-1']).trim()).toBe('errand/task-1');
  });

  test('worktrees never go into the work tree, into errand\'s data, or out of the tenant\'s folder', async () => {
    const root = fresh('errand-wt-root-');
    const tenantRepo = repository(join(root, 'acme'));
    const data = join(root, 'data');
    const refusal = async (deps: Partial<RunActivityDependencies>, workingDir: string): Promise<string> => {
      const error: unknown = await activities(deps).prepareWorktree(input(workingDir)).then(() => undefined, (caught: unknown) => caught);
      if (!(error instanceof ApplicationFailure)) throw new Error(`expected a refusal, got ${String(error)}`);
      expect(error.type).toBe('WorktreeUnavailable');
      return error.message;
    };
    expect(await refusal({ worktreeDir: 'worktrees' }, tenantRepo)).toBe(
      'ERRAND_WORKTREE_DIR ("worktrees") is inside the repository\'s work tree, where the worktrees would show up as untracked files; use a folder outside it (e.g. ../.errand-worktrees)',
    );
    expect(await refusal({ worktreeDir: data, paths: { denied: [data] } }, tenantRepo)).toMatch(/^ERRAND_WORKTREE_DIR \(".+"\) is inside errand's own data/);
    expect(await refusal({ worktreeDir: '../shared', paths: { workingRoot: root } }, tenantRepo)).toMatch(/would put the worktree outside the folder of this delegation's tenant/);
    // The default, inside the repository's git directory, stays in the tenant's folder.
    const prepared = await activities({ paths: { workingRoot: root } }).prepareWorktree(input(tenantRepo));
    expect(prepared.path.startsWith(join(tenantRepo, '.git', 'errand-worktrees'))).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { toolResults } from '../support/conversation-scripts';
import { childResult, freshFolder, until, useRunHarness } from '../support/run-harness';

/**
 * `isolation: worktree` (SEMANTICS §5) against the real dev server and real git repositories: each
 * isolated subagent works in a new worktree on a branch `errand/<task id>`; a worktree with changes stays
 * with its branch and the result names both; one without changes is removed with its branch; the main
 * checkout is never touched.
 */

const harness = useRunHarness('worktree');

const identity = { GIT_AUTHOR_NAME: 'errand test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'errand test', GIT_COMMITTER_EMAIL: 'test@example.invalid' };

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...identity } });
}

/** A repository with one commit: `shared.txt` says "original". */
function repository(prefix: string): string {
  const folder = freshFolder(prefix);
  git(folder, ['init', '--quiet', '--initial-branch=main']);
  writeFileSync(join(folder, 'shared.txt'), 'original\n');
  mkdirSync(join(folder, 'pkg'));
  writeFileSync(join(folder, 'pkg', 'index.txt'), 'package\n');
  git(folder, ['add', '--all']);
  git(folder, ['commit', '--quiet', '-m', 'initial']);
  return folder;
}

/** A child that writes shared.txt and commits it in its worktree (its command runs where it works). */
function editor(name: string, content: string): string {
  return harness.scripts.add(name, [
    { toolCalls: [{ name: 'developer__write_file', arguments: { path: 'shared.txt', content } }] },
    { toolCalls: [{ name: 'developer__run_command', arguments: { command: `git add shared.txt && git -c user.name=t -c user.email=t@example.invalid commit --quiet -m ${name}` } }] },
    { text: `${name} edited shared.txt` },
  ]);
}

describe('isolation: worktree', () => {
  test('parallel delegations edit the same file in their own worktrees; one without changes is removed; the main checkout is untouched', async () => {
    const repo = repository('errand-worktree-repo-');
    const first = editor('wt-first', 'from the first\n');
    const second = editor('wt-second', 'from the second\n');
    const idle = harness.scripts.add('wt-idle', [{ text: 'Nothing needed changing.' }]);
    const delegate = (instructions: string) => ({ name: 'delegate', arguments: { instructions, isolation: 'worktree' } });
    const session = harness.scripts.add('wt', (_request, call): ScriptStep =>
      call === 0 ? { toolCalls: [delegate(`edit ${first}`), delegate(`edit ${second}`), delegate(`look ${idle}`)] } : { text: 'all three are done' });
    const handle = await harness.startSession(repo, `three at once ${session}`);
    const request = await until(async () => harness.scripts.of('wt')[1], Boolean, 'the three results', 120_000);
    const [one, two, three] = toolResults(request).map((result) => result.content);

    expect(one).toMatch(/^<task-output task="task-1">\nwt-first edited shared\.txt\n<\/task-output>\nWorktree: the changes are on branch errand\/task-1, in \.git\/errand-worktrees\/[^ ]+ \(relative to the working directory\); merge or remove them when done\.$/);
    expect(two).toMatch(/^<task-output task="task-2">\nwt-second edited shared\.txt\n<\/task-output>\nWorktree: the changes are on branch errand\/task-2, in \.git\/errand-worktrees\/[^ ]+ \(relative/);
    expect(three).toBe('<task-output task="task-3">\nNothing needed changing.\n</task-output>\nWorktree: it changed nothing, so its worktree and branch errand/task-3 were removed.');

    // Both branches exist, each with its own content; the main checkout is as it was.
    expect(git(repo, ['show', 'errand/task-1:shared.txt'])).toBe('from the first\n');
    expect(git(repo, ['show', 'errand/task-2:shared.txt'])).toBe('from the second\n');
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toBe('original\n');
    expect(git(repo, ['status', '--porcelain'])).toBe('');
    expect(git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe('main');
    expect(git(repo, ['branch', '--list', 'errand/task-3'])).toBe('');

    const results: SubagentResult[] = await Promise.all(['task-1', 'task-2', 'task-3'].map((task) => childResult(harness.client, handle.workflowId, task)));
    expect(results.map((result) => [result.worktree?.branch, result.worktree?.changed])).toEqual([['errand/task-1', true], ['errand/task-2', true], ['errand/task-3', false]]);
    const kept = results[0]?.worktree?.path ?? '';
    expect(readFileSync(join(repo, kept, 'shared.txt'), 'utf8')).toBe('from the first\n');
    expect(existsSync(join(repo, results[2]?.worktree?.path ?? 'missing'))).toBe(false);
    expect(git(repo, ['worktree', 'list', '--porcelain'])).not.toContain(results[2]?.worktree?.path ?? 'missing');
    // The subagent was told where it works.
    expect(harness.scripts.of('wt-first')[0]?.messages[0]?.content).toContain('on branch errand/task-1');
    expect(harness.scripts.of('wt-first')[0]?.messages[0]?.content).toContain(`Your working directory is ${join(repo, kept)}.`);
    await handle.cancel();
  });

  test('a branch name another delegation holds is not taken: errand/task-1-2', async () => {
    const repo = repository('errand-worktree-taken-');
    git(repo, ['branch', 'errand/task-1']);
    const child = harness.scripts.add('wt-taken-child', [{ toolCalls: [{ name: 'developer__write_file', arguments: { path: 'note.txt', content: 'x\n' } }] }, { text: 'wrote a note' }]);
    const session = harness.scripts.add('wt-taken', [{ toolCalls: [{ name: 'delegate', arguments: { instructions: `note ${child}`, isolation: 'worktree' } }] }, { text: 'ok' }]);
    const handle = await harness.startSession(repo, `taken ${session}`);
    await until(async () => harness.scripts.of('wt-taken')[1], Boolean, 'the delegate result');
    const result = await childResult(harness.client, handle.workflowId, 'task-1');
    expect(result.worktree).toMatchObject({ branch: 'errand/task-1-2', changed: true });
    // Uncommitted changes count: the worktree and its branch stay.
    expect(readFileSync(join(repo, result.worktree?.path ?? 'missing', 'note.txt'), 'utf8')).toBe('x\n');
    expect(git(repo, ['rev-parse', 'errand/task-1'])).toBe(git(repo, ['rev-parse', 'main']));
    await handle.cancel();
  });

  test('a delegation the API starts works in a subfolder of its worktree, on a branch named after its workflow id', async () => {
    const repo = repository('errand-worktree-api-');
    const marker = harness.scripts.add('wt-api', [{ toolCalls: [{ name: 'developer__write_file', arguments: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'noted' }]);
    const id = harness.nextId('wt-api');
    const handle = await harness.startSubagent(id, { prompt: `take notes ${marker}`, workingDir: join(repo, 'pkg'), isolation: 'worktree' });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.worktree?.branch).toBe(`errand/${id}`);
    expect(result.worktree?.path).toMatch(/^\.\.\/\.git\/errand-worktrees\/[^/]+\/pkg$/);
    expect(readFileSync(join(repo, 'pkg', result.worktree?.path ?? 'missing', 'notes.txt'), 'utf8')).toBe('notes\n');
    expect(existsSync(join(repo, 'pkg', 'notes.txt'))).toBe(false);
  });

  test('a repository without a commit cannot give a worktree: the run fails and says why', async () => {
    const repo = freshFolder('errand-worktree-empty-');
    git(repo, ['init', '--quiet', '--initial-branch=main']);
    const marker = harness.scripts.add('wt-empty', [{ text: 'never asked' }]);
    const handle = await harness.startSubagent(harness.nextId('wt-empty'), { prompt: `work ${marker}`, workingDir: repo, isolation: 'worktree' });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toBe('WorktreeUnavailable: the repository has no commit yet, and a worktree starts from the current commit; commit something first');
    expect(harness.scripts.of('wt-empty')).toHaveLength(0);
  });
});

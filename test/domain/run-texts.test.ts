import { describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { checksFailedDiagnostic, checkSummary } from '../../src/domain/check-texts';
import { formatForegroundResult, formatSettlementNotice } from '../../src/domain/delegation-texts';
import { slimResult } from '../../src/domain/task-registry';
import { gitSafeName, worktreeBranch } from '../../src/domain/worktree-names';

/** Pure parts of how delegations run: git-safe names, check texts, what the parent reads, carried results. */

const base: SubagentResult = {
  workflowId: 'wf',
  status: 'completed',
  output: 'done',
  partialOutput: '',
  turns: 1,
  toolCalls: 0,
  usage: { inputTokens: 0, outputTokens: 0, costMicroUsd: 0, costUsd: 0 },
  durationMs: 10,
};

describe('worktree names', () => {
  test('names become valid single ref components and folder names', () => {
    expect(gitSafeName('task-1')).toBe('task-1');
    expect(gitSafeName('errand-session-1/task-3')).toBe('errand-session-1-task-3');
    expect(gitSafeName('..hidden..name.lock')).toBe('hidden.name');
    expect(gitSafeName('a b~c^d:e?f*g[h\\i@{j')).toBe('a-b-c-d-e-f-g-h-i-j');
    expect(gitSafeName('---')).toBe('task');
    expect(gitSafeName('x'.repeat(300))).toHaveLength(100);
  });

  test('branches: errand/<name>, then errand/<name>-<n>', () => {
    expect(worktreeBranch('task-1')).toBe('errand/task-1');
    expect(worktreeBranch('task-1', 2)).toBe('errand/task-1-2');
    expect(worktreeBranch('errand-0123456789abcdef')).toBe('errand/errand-0123456789abcdef');
  });
});

describe('what the parent reads', () => {
  test('a completed worktree delegation ends with the worktree line; a notice carries it before the output', () => {
    const result: SubagentResult = { ...base, worktree: { branch: 'errand/task-1', path: '.git/errand-worktrees/x', changed: true } };
    expect(formatForegroundResult(result, 'task-1').parts).toEqual([
      '<task-output task="task-1">\ndone\n</task-output>',
      '\nWorktree: the changes are on branch errand/task-1, in .git/errand-worktrees/x (relative to the working directory); merge or remove them when done.',
    ]);
    expect(formatSettlementNotice('task-1', result, true).text).toBe(
      '[task notice] Background task task-1 completed.\nWorktree: the changes are on branch errand/task-1, in .git/errand-worktrees/x (relative to the working directory); merge or remove them when done.\nFinal message (the task\'s own words):\n<task-output task="task-1">\ndone\n</task-output>',
    );
  });

  test('failed checks: the diagnostic names the check and holds the preview; the whole output follows by key', () => {
    const failure = { check: 2, command: 'npm   test\n -- --ci', exitCode: 1, reason: 'exited with code 1', outputPreview: 'start\n[… 10 characters cut …]\nend', outputKey: 'outcomes/checks/x/check-2.output.txt' };
    const diagnostic = checksFailedDiagnostic(3, failure);
    expect(diagnostic).toBe('checks failed after 3 attempts: check 2 (npm test -- --ci) exited with code 1; its output:\nstart\n[… 10 characters cut …]\nend');
    expect(checkSummary(2, failure.command)).toBe('check 2: npm test -- --ci');
    expect(checkSummary(0, 'git stash')).toBe('on_failure: git stash');
    const result: SubagentResult = { ...base, status: 'failed', output: '', partialOutput: 'tried', diagnostic, checks: { attempts: 3, passed: false, lastFailure: failure } };
    expect(formatForegroundResult(result)).toEqual({
      parts: [
        `The subagent did not finish: it failed.\nDiagnostic: ${diagnostic}\nPartial output:\n`,
        '<task-output>\ntried\n</task-output>',
        '\nWhole output of check 2 (npm test -- --ci):\n<task-output>\n',
        { blobKey: failure.outputKey, childWords: true },
        '\n</task-output>',
      ],
      isError: true,
    });
  });

  test('a carried result keeps its structured copy only while its output is short', () => {
    const short: SubagentResult = { ...base, output: '{"n": 1}', structured: { n: 1 }, outputRef: { conversationId: 'c', seq: 3 } };
    expect(slimResult(short, 400).structured).toEqual({ n: 1 });
    const long: SubagentResult = { ...short, output: 'x'.repeat(1000) };
    const slim = slimResult(long, 400);
    expect(slim.structured).toBeUndefined();
    expect(slim.outputCut).toBe(true);
  });
});

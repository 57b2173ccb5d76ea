import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { PreparedWorktree, WorktreeOutcome } from '../contracts/agent-wire';
import { FailureType } from '../contracts/failures';
import { defaultWorktreeFolderName, maxWorktreeBranchSuffix } from '../contracts/limits';
import type { FinishWorktreeInput, PrepareWorktreeInput } from '../contracts/run-activities';
import { gitSafeName, worktreeBranch } from '../domain/worktree-names';
import { isInside, type PathRules } from '../tools/confine-path';
import type { BlobStore } from './blob-store';
import { conversationSegment } from './conversation-store';
import type { SafeGit } from './safe-git';
import { storedOutcome, storeOutcome } from './stored-outcomes';

/** What the worktree activities need. */
export interface WorktreeDependencies {
  blobs: BlobStore;
  git: SafeGit;
  /** The worker's path rules: worktrees stay inside the tenant's folder and out of errand's own folders. */
  paths: PathRules;
  /**
   * Where worktrees go (`ERRAND_WORKTREE_DIR`): relative to the repository's top folder, or absolute.
   * Absent: `<git directory>/errand-worktrees`, outside the work tree and inside the tenant's folder.
   */
  worktreeDir?: string;
}

function unavailable(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.worktreeUnavailable, message, nonRetryable: true });
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(() => true, () => false);
}

/** Where worktrees of this repository go, checked against the rules; throws a WorktreeUnavailable naming the setting. */
async function worktreeBase(repository: string, gitDir: string, workingDir: string, deps: WorktreeDependencies): Promise<string> {
  const setting = deps.worktreeDir;
  const base = setting === undefined ? path.join(gitDir, defaultWorktreeFolderName) : path.resolve(repository, setting);
  const named = setting === undefined ? 'the worktree folder' : `ERRAND_WORKTREE_DIR (${JSON.stringify(setting)})`;
  if (isInside(repository, base) && !isInside(gitDir, base)) {
    throw unavailable(`${named} is inside the repository's work tree, where the worktrees would show up as untracked files; use a folder outside it (e.g. ../.errand-worktrees)`);
  }
  for (const denied of deps.paths.denied ?? []) {
    const real = await realpath(denied).catch(() => path.resolve(denied));
    if (isInside(real, base)) throw unavailable(`${named} is inside errand's own data, which tools may not touch; use another folder`);
  }
  const root = deps.paths.workingRoot === undefined ? undefined : await realpath(deps.paths.workingRoot).catch(() => path.resolve(deps.paths.workingRoot ?? '.'));
  if (root !== undefined && isInside(root, workingDir) && workingDir !== root) {
    const [tenant = ''] = path.relative(root, workingDir).split(path.sep);
    const tenantFolder = path.join(root, tenant);
    if (!isInside(tenantFolder, base)) {
      throw unavailable(`${named} would put the worktree outside the folder of this delegation's tenant; leave ERRAND_WORKTREE_DIR unset or choose a folder inside it`);
    }
  }
  return base;
}

/** The branch checked out in the worktree at `folder`, if git knows such a worktree. */
async function branchOfWorktree(git: SafeGit, repository: string, folder: string): Promise<string | undefined> {
  const listing = await git.run(repository, ['worktree', 'list', '--porcelain']);
  let current: string | undefined;
  for (const line of listing.split('\n')) {
    if (line.startsWith('worktree ')) current = line.slice('worktree '.length);
    else if (line.startsWith('branch refs/heads/') && current !== undefined && path.resolve(current) === folder) return line.slice('branch refs/heads/'.length);
  }
  return undefined;
}

/**
 * Makes the worktree of a subagent with `isolation: worktree`: a new branch `errand/<name>` (or
 * `errand/<name>-<n>` when another delegation has that name) from HEAD of the working directory's
 * checkout, in a folder named after the workflow. Idempotent: the outcome is stored by key, and a retry
 * after a lost worker finds the worktree git already has at that folder and takes it.
 */
export async function prepareWorktree(input: PrepareWorktreeInput, deps: WorktreeDependencies): Promise<PreparedWorktree> {
  const key = `outcomes/worktrees/${conversationSegment(input.conversationId)}/prepared.json`;
  const stored = await storedOutcome<PreparedWorktree>(deps.blobs, key);
  if (stored) return stored;
  const workingDir = await realpath(input.workingDir).catch(() => {
    throw unavailable('the working directory does not exist, so there is no repository to make a worktree of');
  });
  const inRepository = await deps.git.probe(workingDir, ['rev-parse', '--show-toplevel']);
  if (inRepository === undefined) throw unavailable('isolation "worktree" needs a git repository, and the working directory is not inside one');
  const repository = await realpath(inRepository.trim());
  const gitDir = await realpath((await deps.git.run(workingDir, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim());
  const head = (await deps.git.probe(workingDir, ['rev-parse', '--verify', 'HEAD^{commit}']))?.trim();
  if (!head) throw unavailable('the repository has no commit yet, and a worktree starts from the current commit; commit something first');

  const base = await worktreeBase(repository, gitDir, workingDir, deps);
  const folder = path.join(base, `${gitSafeName(input.workflowId).slice(0, 60)}-${createHash('sha256').update(input.conversationId).digest('hex').slice(0, 8)}`);
  let branch = (await exists(folder)) ? await branchOfWorktree(deps.git, repository, folder) : undefined;
  if (branch === undefined) {
    if (await exists(folder)) throw unavailable(`the worktree folder of this delegation exists but is not a worktree of this repository; remove ${path.relative(repository, folder)} and start again`);
    for (let attempt = 1; attempt <= maxWorktreeBranchSuffix && branch === undefined; attempt += 1) {
      const candidate = worktreeBranch(input.name, attempt);
      if ((await deps.git.probe(repository, ['show-ref', '--verify', '--quiet', `refs/heads/${candidate}`])) === undefined) branch = candidate;
    }
    if (branch === undefined) throw unavailable(`branches ${worktreeBranch(input.name)} to ${worktreeBranch(input.name, maxWorktreeBranchSuffix)} all exist; delete old errand branches`);
    await mkdir(base, { recursive: true });
    await deps.git.run(repository, ['worktree', 'add', '--quiet', '-b', branch, folder, head]).catch((error: unknown) => {
      throw unavailable(`git could not make the worktree: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
  const subagentDir = path.join(folder, path.relative(repository, workingDir));
  const prepared: PreparedWorktree = {
    path: folder,
    branch,
    base: head,
    workingDir: subagentDir,
    originalWorkingDir: workingDir,
    repository,
    relativePath: path.relative(workingDir, subagentDir) || '.',
  };
  return storeOutcome(deps.blobs, key, prepared);
}

/**
 * At the end of a subagent with a worktree: with no changes (no diff, no untracked files, no new commit,
 * the branch where it started) the worktree and its branch are removed (ignored files, build output, go
 * with it); otherwise both stay. Idempotent like {@link prepareWorktree}.
 */
export async function finishWorktree(input: FinishWorktreeInput, deps: WorktreeDependencies): Promise<WorktreeOutcome> {
  const key = `outcomes/worktrees/${conversationSegment(input.conversationId)}/finished.json`;
  const stored = await storedOutcome<WorktreeOutcome>(deps.blobs, key);
  if (stored) return stored;
  const worktree = input.worktree;
  const tip = (await deps.git.probe(worktree.repository, ['rev-parse', '--verify', '--quiet', `refs/heads/${worktree.branch}`]))?.trim();
  let changed = tip !== undefined && tip !== worktree.base;
  if (await exists(worktree.path)) {
    const status = await deps.git.run(worktree.path, ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=all']);
    const head = (await deps.git.run(worktree.path, ['rev-parse', 'HEAD'])).trim();
    changed = changed || status.trim().length > 0 || head !== worktree.base;
    if (!changed) await deps.git.run(worktree.repository, ['worktree', 'remove', '--force', worktree.path]);
  }
  if (!changed && tip !== undefined) await deps.git.run(worktree.repository, ['branch', '--quiet', '-D', worktree.branch]);
  return storeOutcome(deps.blobs, key, { branch: worktree.branch, path: worktree.relativePath, changed });
}

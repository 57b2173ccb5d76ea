import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { PreparedWorktree, WorktreeOutcome } from '../contracts/agent-wire';
import { FailureType } from '../contracts/failures';
import { defaultWorktreeFolderName, maxWorktreeBranchSuffix } from '../contracts/limits/sources';
import type { FinishWorktreeInput, PrepareWorktreeInput } from '../contracts/run-activities';
import { gitSafeName, worktreeBranch } from '../domain/worktree-names';
import { isInside, type PathRules } from '../tools/confine-path';
import { isConfinedWalkError, refusalText, walkStart, withConfinedDir } from '../tools/confined-dir';
import type { BlobStore } from './blob-store';
import { conversationSegment } from './conversation-store';
import { findWorkTreeTop, proveRepository, RepositoryRefusedError, tenantFolderOf, type ProvenRepository } from './git-confinement';
import type { GitScope, SafeGit } from './safe-git';
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
async function branchOfWorktree(git: SafeGit, repository: string, folder: string, scope: GitScope): Promise<string | undefined> {
  const listing = await git.run(repository, ['worktree', 'list', '--porcelain'], scope);
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
  const { repository, gitDir, scope } = await repositoryOf(workingDir, deps);
  const head = (await deps.git.probe(workingDir, ['rev-parse', '--verify', 'HEAD^{commit}'], scope))?.trim();
  if (!head) throw unavailable('the repository has no commit yet, and a worktree starts from the current commit; commit something first');

  const base = await worktreeBase(repository, gitDir, workingDir, deps);
  const folder = path.join(base, `${gitSafeName(input.workflowId).slice(0, 60)}-${createHash('sha256').update(input.conversationId).digest('hex').slice(0, 8)}`);
  if ((await lstat(folder).catch(() => undefined))?.isSymbolicLink()) throw unavailable(`the worktree folder of this delegation is a symbolic link; remove ${path.relative(repository, folder)} and start again`);
  let branch = (await exists(folder)) ? await branchOfWorktree(deps.git, repository, folder, scope) : undefined;
  if (branch === undefined) {
    if (await exists(folder)) throw unavailable(`the worktree folder of this delegation exists but is not a worktree of this repository; remove ${path.relative(repository, folder)} and start again`);
    for (let attempt = 1; attempt <= maxWorktreeBranchSuffix && branch === undefined; attempt += 1) {
      const candidate = worktreeBranch(input.name, attempt);
      if ((await deps.git.probe(repository, ['show-ref', '--verify', '--quiet', `refs/heads/${candidate}`], scope)) === undefined) branch = candidate;
    }
    if (branch === undefined) throw unavailable(`branches ${worktreeBranch(input.name)} to ${worktreeBranch(input.name, maxWorktreeBranchSuffix)} all exist; delete old errand branches`);
    await makeFolder(base, deps);
    await deps.git.run(repository, ['worktree', 'add', '--quiet', '-b', branch, folder, head], scope).catch((error: unknown) => {
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
  const { scope } = await repositoryOf(worktree.repository, deps);
  const tip = (await deps.git.probe(worktree.repository, ['rev-parse', '--verify', '--quiet', `refs/heads/${worktree.branch}`], scope))?.trim();
  let changed = tip !== undefined && tip !== worktree.base;
  if (await exists(worktree.path)) {
    // The worktree's own .git file is in the model's folder too: it is proven like the repository.
    const own = await worktreeScope(worktree.path, worktree.repository, deps);
    const status = await deps.git.run(worktree.path, ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=all'], own);
    const head = (await deps.git.run(worktree.path, ['rev-parse', 'HEAD'], own)).trim();
    changed = changed || status.trim().length > 0 || head !== worktree.base;
    if (!changed) await deps.git.run(worktree.repository, ['worktree', 'remove', '--force', worktree.path], scope);
  }
  if (!changed && tip !== undefined) await deps.git.run(worktree.repository, ['branch', '--quiet', '-D', worktree.branch], scope);
  return storeOutcome(deps.blobs, key, { branch: worktree.branch, path: worktree.relativePath, changed });
}

/**
 * The repository of `workingDir` and how git may run in it (decision 0020): in the sandbox, with the
 * tenant's folder the only one it sees; without, only once the repository is proven to live inside that
 * folder, with GIT_DIR and GIT_WORK_TREE pinned. Throws a WorktreeUnavailable saying why it was refused.
 */
async function repositoryOf(workingDir: string, deps: WorktreeDependencies): Promise<{ repository: string; gitDir: string; scope: GitScope }> {
  const tenantFolder = await tenantFolderOf(workingDir, deps.paths.workingRoot);
  if (deps.git.sandboxed) {
    const top = await findWorkTreeTop(workingDir, tenantFolder, deps.paths.workingRoot).catch(refused);
    if (top === undefined) throw unavailable('isolation "worktree" needs a git repository, and the working directory is not inside one');
    const scope: GitScope = { folder: tenantFolder ?? top };
    const inRepository = await deps.git.probe(workingDir, ['rev-parse', '--show-toplevel'], scope);
    if (inRepository === undefined) throw unavailable('isolation "worktree" needs a git repository git can use inside the sandbox, and the working directory is not inside one');
    const repository = await realpath(inRepository.trim());
    const gitDir = await realpath((await deps.git.run(workingDir, ['rev-parse', '--path-format=absolute', '--git-common-dir'], scope)).trim());
    return { repository, gitDir, scope: { folder: tenantFolder ?? repository } };
  }
  const proven: ProvenRepository = await proveRepository(workingDir, tenantFolder, deps.paths.workingRoot).catch(refused);
  return { repository: proven.top, gitDir: proven.commonDir, scope: { folder: proven.folder, gitDir: proven.gitDir, workTree: proven.top } };
}

/** How git may run in a worktree errand made (its .git file proven like a repository's). */
async function worktreeScope(worktreePath: string, repository: string, deps: WorktreeDependencies): Promise<GitScope> {
  const tenantFolder = await tenantFolderOf(repository, deps.paths.workingRoot);
  // Without tenants, the worktree and its repository's git directory may be side by side: confine to both.
  const both = (top: string) => commonAncestor(top, repository);
  if (deps.git.sandboxed) return { folder: tenantFolder ?? both(worktreePath) };
  const proven = await proveRepository(worktreePath, tenantFolder, deps.paths.workingRoot, both).catch(refused);
  return { folder: proven.folder, gitDir: proven.gitDir, workTree: proven.top };
}

function commonAncestor(first: string, second: string): string {
  let current = first;
  while (!isInside(current, second)) current = path.dirname(current);
  return current;
}

/** Makes the worktrees' folder; inside a tenant's folder, each step without following a link (confined-dir.ts). */
async function makeFolder(folder: string, deps: WorktreeDependencies): Promise<void> {
  const tenantFolder = await tenantFolderOf(folder, deps.paths.workingRoot);
  if (tenantFolder === undefined) {
    await mkdir(folder, { recursive: true });
    return;
  }
  const start = await walkStart(folder, tenantFolder, deps.paths.workingRoot);
  await withConfinedDir(start.root, start.relative, () => Promise.resolve(), { create: true }).catch((error: unknown) => {
    if (isConfinedWalkError(error)) throw unavailable(`the worktree folder ${path.relative(tenantFolder, folder)} ${refusalText(error.reason)}; git was not run`);
    throw error;
  });
}

function refused(error: unknown): never {
  if (error instanceof RepositoryRefusedError) throw unavailable(error.message);
  throw error;
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A real git repository made by a test: a bare "remote" and a working clone that pushes to it. */
export interface TestGitRepository {
  /** Temp folder holding everything. */
  folder: string;
  /** Path of the bare repository. */
  barePath: string;
  /** `file://` URL of the bare repository. */
  url: string;
  /** Writes files into the working clone, commits and pushes to `main`; returns the new commit SHA. */
  commitAndPush(files: Record<string, string>, message: string): string;
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'errand test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'errand test', GIT_COMMITTER_EMAIL: 'test@example.invalid', GIT_TERMINAL_PROMPT: '0' },
  });
}

/** Creates a bare repository and a working clone in a fresh temp folder, with `files` as the first commit. */
export function createGitRepository(files: Record<string, string>): TestGitRepository {
  const folder = mkdtempSync(join(tmpdir(), 'errand-git-'));
  const barePath = join(folder, 'remote.git');
  const workPath = join(folder, 'work');
  git(folder, ['init', '--quiet', '--bare', '--initial-branch=main', barePath]);
  git(folder, ['init', '--quiet', '--initial-branch=main', workPath]);
  git(workPath, ['remote', 'add', 'origin', barePath]);
  const commitAndPush = (changes: Record<string, string>, message: string): string => {
    for (const [path, content] of Object.entries(changes)) {
      const full = join(workPath, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
    git(workPath, ['add', '--all']);
    git(workPath, ['commit', '--quiet', '-m', message]);
    git(workPath, ['push', '--quiet', 'origin', 'main']);
    return git(workPath, ['rev-parse', 'HEAD']).trim();
  };
  commitAndPush(files, 'initial sources');
  return { folder, barePath, url: pathToFileURL(barePath).href, commitAndPush };
}

/**
 * Names of the git worktrees `isolation: worktree` makes (SEMANTICS §5): branch `errand/<task id>` for a
 * delegated task, `errand/<workflow id>` for one the API or CLI started. Pure; git's rules for ref names
 * (`git check-ref-format`) are applied here so every name we hand to git is valid.
 */

/** Longest name part (before a suffix) we put into a branch or folder name. */
const maxNameChars = 100;

/**
 * `name` made safe as one component of a git ref and as a folder name: characters other than letters,
 * digits, `.`, `_` and `-` become `-`; no `..`, no leading or trailing `.` or `-`, no `.lock` ending; at
 * most {@link maxNameChars} characters; never empty.
 */
export function gitSafeName(name: string): string {
  let safe = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/-{2,}/g, '-')
    .slice(0, maxNameChars)
    .replace(/^[.-]+/, '')
    .replace(/[.-]+$/, '');
  while (safe.endsWith('.lock')) safe = safe.slice(0, -'.lock'.length).replace(/[.-]+$/, '');
  return safe.length > 0 ? safe : 'task';
}

/** The branch of a worktree: `errand/<name>`, or `errand/<name>-<n>` (n ≥ 2) when that one is taken. */
export function worktreeBranch(name: string, attempt = 1): string {
  const safe = gitSafeName(name);
  return attempt <= 1 ? `errand/${safe}` : `errand/${safe}-${attempt}`;
}

/** The line of a result the delegating model reads about a subagent's worktree. */
export function worktreeLine(worktree: { branch: string; path: string; changed: boolean }): string {
  return worktree.changed
    ? `Worktree: the changes are on branch ${worktree.branch}, in ${worktree.path} (relative to the working directory); merge or remove them when done.`
    : `Worktree: it changed nothing, so its worktree and branch ${worktree.branch} were removed.`;
}

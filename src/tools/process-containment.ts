import { spawnSync } from 'node:child_process';
import { containmentProbeTimeoutMs } from '../contracts/limits/tools';

/**
 * How the worker makes sure a process it starts for a tenant (a `run_command` command, a recipe check, a
 * recipe's stdio MCP server) ends as a whole, with everything it started.
 *
 * Killing the process group is not enough: `setsid` or a double fork leaves the group, and such a daemon
 * would outlive its command and its delegation. So, where the system allows it, each process runs as
 * PID 1 of a PID namespace of its own (`unshare --pid --fork --kill-child`): when it ends, or is killed,
 * the kernel kills every process of that namespace, `setsid` ones included. As root that needs nothing
 * more; otherwise a user namespace that maps the worker's own user (`--user --map-current-user`). Where
 * neither works (no `unshare`, or a container that forbids namespaces) commands fall back to their process
 * group, and docs/security.md says what that leaves open. The bubblewrap sandbox unshares PIDs itself.
 */
export type ProcessContainment =
  | { kind: 'pid-namespace'; /** The program and arguments that come before the command. */ prefix: readonly string[]; description: string }
  | { kind: 'process-group'; description: string };

/** The ways tried, best first: as root no user namespace is needed. */
const candidates: readonly { prefix: readonly string[]; description: string }[] = [
  { prefix: ['unshare', '--pid', '--fork', '--kill-child'], description: 'its own PID namespace (unshare --pid)' },
  {
    prefix: ['unshare', '--user', '--map-current-user', '--pid', '--fork', '--kill-child'],
    description: 'its own PID namespace inside a user namespace of the worker\'s user (unshare --user --pid)',
  },
];

let probed: ProcessContainment | undefined;

/**
 * Finds out once per worker process which containment works here, by running `true` under each candidate
 * (synchronously: it runs at start, before the first command, and takes a few milliseconds).
 */
export function probeProcessContainment(): ProcessContainment {
  if (probed) return probed;
  const failures: string[] = [];
  for (const candidate of candidates) {
    const [file = 'unshare', ...args] = candidate.prefix;
    const outcome = spawnSync(file, [...args, 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: containmentProbeTimeoutMs, encoding: 'utf8' });
    if (outcome.status === 0) {
      probed = { kind: 'pid-namespace', prefix: candidate.prefix, description: candidate.description };
      return probed;
    }
    failures.push(outcome.error ? outcome.error.message : (outcome.stderr || `exit code ${outcome.status ?? 'none'}`).trim());
  }
  probed = {
    kind: 'process-group',
    description: `its process group only: no PID namespace could be made here (${[...new Set(failures)].join('; ')}), so a process that leaves its group (setsid, a double fork) can outlive its command; see docs/security.md`,
  };
  return probed;
}

/** The program and arguments that run `file args` under the containment. */
export function containedInvocation(containment: ProcessContainment | undefined, file: string, args: readonly string[]): { file: string; args: string[] } {
  if (containment?.kind !== 'pid-namespace') return { file, args: [...args] };
  const [prefixFile = 'unshare', ...prefixArgs] = containment.prefix;
  return { file: prefixFile, args: [...prefixArgs, '--', file, ...args] };
}

/** What the start-up log says about how commands run on this worker. */
export function processContainmentSummary(options: { sandbox?: unknown; containment?: ProcessContainment }): string {
  if (options.sandbox) return 'commands, checks and recipe servers run in the bubblewrap sandbox, each in its own PID namespace (ended as a whole)';
  const containment = options.containment ?? probeProcessContainment();
  return `no sandbox; commands, checks and recipe servers each run in ${containment.description}`;
}

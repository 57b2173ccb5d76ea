import { z } from 'zod';
import { readConfigFile } from '../settings/client-config';
import { checkSandbox } from '../tools/command-environment';

/**
 * `errand dev` runs model commands in the bubblewrap sandbox by default, wherever bwrap is installed and
 * can build its sandbox (probed at start): a prompt-injected model's command then cannot read the
 * worker's environment through `/proc` (its own PID namespace), errand's data directory (the stack's API
 * token, the stored conversations) or anything outside the working directory but the system folders, and
 * has no network unless `ERRAND_SANDBOX_NETWORK=true`. An explicit `ERRAND_SANDBOX` (or `commands.sandbox`
 * in the configuration file) wins: `ERRAND_SANDBOX=none` turns the default off.
 */

/** How `errand dev` chose its sandbox. */
export type DevSandboxChoice =
  | { kind: 'explicit'; value: string; where: 'ERRAND_SANDBOX' | 'commands.sandbox in ERRAND_CONFIG' }
  | { kind: 'default' }
  | { kind: 'unavailable'; reason: string };

const sandboxInFile = z.object({ commands: z.object({ sandbox: z.string().optional() }).loose().optional() }).loose();

/**
 * Chooses the sandbox of `errand dev`, and sets `ERRAND_SANDBOX=bwrap` in `env` when the default applies
 * and the probe found bwrap working.
 */
export async function chooseDevSandbox(env: NodeJS.ProcessEnv, cwd: string): Promise<DevSandboxChoice> {
  const setting = env.ERRAND_SANDBOX;
  if (setting !== undefined && setting !== '') return { kind: 'explicit', value: setting, where: 'ERRAND_SANDBOX' };
  const fromFile = readConfigFile(env, cwd, sandboxInFile).commands?.sandbox;
  if (fromFile !== undefined) return { kind: 'explicit', value: fromFile, where: 'commands.sandbox in ERRAND_CONFIG' };
  try {
    // The same check a worker with ERRAND_SANDBOX=bwrap makes at start: a sandbox is built and runs `exit 0`.
    await checkSandbox({ kind: 'bwrap', network: false, readOnlyPaths: [] }, { env });
  } catch (error) {
    return { kind: 'unavailable', reason: (error instanceof Error ? error.message : String(error)).replace(/^ERRAND_SANDBOX=bwrap, but /, '') };
  }
  env.ERRAND_SANDBOX = 'bwrap';
  return { kind: 'default' };
}

/** The banner's lines about the sandbox: what it is, and plainly what is not guaranteed without it. */
export function devSandboxBanner(choice: DevSandboxChoice, env: NodeJS.ProcessEnv): string[] {
  const network = env.ERRAND_SANDBOX_NETWORK === 'true' ? 'with the network (ERRAND_SANDBOX_NETWORK=true)' : 'no network (ERRAND_SANDBOX_NETWORK=true gives it)';
  const unguarded =
    "model commands run as you, unsandboxed: a prompt-injected model's command can read your files, errand's data (this stack's API token included) " +
    "and this process's environment through /proc (your LLM provider's key included), and reach the network";
  switch (choice.kind) {
    case 'default':
      return [`bubblewrap (the default where bwrap works): model commands see only the working directory and the system folders, their own processes, ${network}; ERRAND_SANDBOX=none turns it off`];
    case 'explicit':
      if (choice.value === 'bwrap') return [`bubblewrap (${choice.where}=bwrap): model commands see only the working directory and the system folders, their own processes, ${network}`];
      return [`none (${choice.where}=${choice.value}): ${unguarded}`];
    case 'unavailable':
      return [`NONE — bubblewrap is not usable here (${choice.reason}).`, `             So ${unguarded}. Install bubblewrap (apt-get install bubblewrap) where user namespaces are allowed.`];
  }
}

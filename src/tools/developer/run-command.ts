import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { z } from 'zod';
import { runCommandDefaultTimeoutMs, runCommandKillGraceMs, runCommandMaxTimeoutMs, toolOutputMaxChars } from '../../contracts/limits/tools';
import { bwrapInvocation, commandEnvironment, type CommandOptions, type Invocation } from '../command-environment';
import { confinePath, type PathRules } from '../confine-path';
import { containedInvocation } from '../process-containment';
import { defineTool } from '../define-tool';
import { HeadTailBuffer } from '../output-cap';
import { toolError, type Tool, type ToolResult } from '../tool';

const schema = z
  .object({
    command: z.string().min(1).describe('Shell command, run by /bin/sh -c in the working directory.'),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(runCommandMaxTimeoutMs)
      .optional()
      .describe(`Timeout in milliseconds (default ${runCommandDefaultTimeoutMs}, at most ${runCommandMaxTimeoutMs}).`),
  })
  .strict();

/** How long to wait for the output pipes to close once the process group is gone. */
const pipeDrainMs = 1_000;

/**
 * `run_command`: runs a shell command in the working directory. stdout and stderr are interleaved into
 * one capped output (keeping its start and end); the exit code is reported. The shell runs as the leader
 * of its own process group so that a timeout, a cancellation, or the end of the shell stops everything it
 * started — killing only the shell would leave `sleep 1000 &`-style children holding the pipes open.
 *
 * The command gets an allow-listed environment, never the worker's (see command-environment.ts), and with
 * a bwrap sandbox it runs in its own namespaces where only the working directory is writable. Without a
 * sandbox it can still read whatever the worker's user can read: see docs/security.md.
 */
export function createRunCommandTool(options: CommandOptions = {}, paths: PathRules = {}): Tool {
  return defineTool({
    name: 'run_command',
    description:
      `Run a shell command (/bin/sh -c) in the working directory. Returns the exit code and the combined stdout and stderr ` +
      `(capped at ${toolOutputMaxChars} characters, keeping the start and the end). Stopped after timeout_ms ` +
      `(default ${runCommandDefaultTimeoutMs}). Processes left running in the background are stopped when the command ends.` +
      (options.sandbox ? ` It runs in a sandbox: only the working directory is writable${options.sandbox.network ? '' : ', and there is no network'}.` : ''),
    schema,
    async run(args, context) {
      if (context.abortSignal.aborted) return toolError('run_command was cancelled before it started');
      const outcome = await runShellCommand(args.command, { workingDir: context.workingDir, timeoutMs: args.timeout_ms ?? runCommandDefaultTimeoutMs, abortSignal: context.abortSignal }, options, paths);
      return commandResult(outcome);
    },
  });
}

/** How a shell command ended. */
export interface CommandOutcome {
  /** Why it could not run at all (the working directory was refused, the sandbox did not start). */
  refused?: string;
  /** Its exit code; null when it was killed or did not start. */
  exitCode: number | null;
  /** The signal that killed it, when one did. */
  signal: string | null;
  /** Set when errand stopped it: its time limit passed, or the call was cancelled. */
  stoppedBy?: 'timeout' | 'cancel';
  /** stdout and stderr interleaved, capped (start and end kept). */
  output: string;
  /** stdout alone, capped the same way (a hook's JSON answer). */
  stdout: string;
  /** stderr alone, capped the same way (a hook's feedback). */
  stderr: string;
  timeoutMs: number;
}

/** Where and how long a command runs. */
export interface CommandRun {
  /** The working directory; confined like every tool path. */
  workingDir: string;
  timeoutMs: number;
  abortSignal: AbortSignal;
  /** Text written to its stdin, which is then closed (a hook's JSON input); absent: no stdin. */
  input?: string;
}

/**
 * Runs `/bin/sh -c command` exactly as `run_command` does: in the confined working directory, with the
 * allow-listed environment, in the bubblewrap sandbox when one is configured, as the leader of its own
 * process group (stopped whole at its time limit or on cancellation). Used by `run_command` and by a
 * recipe's checks (goose `retry`), so both run under the same rules.
 */
export async function runShellCommand(command: string, run: CommandRun, options: CommandOptions = {}, paths: PathRules = {}): Promise<CommandOutcome> {
  const confined = await confinePath(run.workingDir, '.', paths);
  if (!confined.ok) return { refused: confined.message, exitCode: null, signal: null, output: '', stdout: '', stderr: '', timeoutMs: run.timeoutMs };
  const env = commandEnvironment(options);
  const invocation: Invocation = options.sandbox
    ? bwrapInvocation(options.sandbox, confined.absolutePath, command, env)
    : containedInvocation(options.containment, '/bin/sh', ['-c', command]);
  return runInProcessGroup(invocation, env, confined.absolutePath, run.timeoutMs, run.abortSignal, run.input);
}

/** The tool result `run_command` gives for an outcome. */
function commandResult(outcome: CommandOutcome): ToolResult {
  if (outcome.refused !== undefined) return toolError(outcome.refused);
  const body = outcome.output.length > 0 ? `\n${outcome.output}` : '\n(no output)';
  if (outcome.stoppedBy === 'timeout') return toolError(`Command timed out after ${outcome.timeoutMs} ms and was killed (with its process group).${body}`);
  if (outcome.stoppedBy === 'cancel') return toolError(`Command was cancelled and killed (with its process group).${body}`);
  if (outcome.exitCode === 0) return { content: `Exit code: 0${body}`, isError: false };
  if (outcome.exitCode !== null) return toolError(`Exit code: ${outcome.exitCode}${body}`);
  return toolError(`Command was killed by signal ${outcome.signal ?? 'unknown'}.${body}`);
}

/** `run_command` with the allow-listed environment and no sandbox (tests, the plain registry). */
export const runCommandTool: Tool = createRunCommandTool();

function runInProcessGroup(invocation: Invocation, env: Record<string, string>, cwd: string, timeoutMs: number, abortSignal: AbortSignal, input: string | undefined): Promise<CommandOutcome> {
  return new Promise<CommandOutcome>((resolve) => {
    const output = new HeadTailBuffer(toolOutputMaxChars);
    const stdoutOnly = new HeadTailBuffer(toolOutputMaxChars);
    const stderrOnly = new HeadTailBuffer(toolOutputMaxChars);
    const child = spawn(invocation.file, invocation.args, { cwd, env, detached: true, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
    if (input !== undefined && child.stdin) {
      // A command that exits without reading its input closes the pipe: that is not an error of the command.
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
    }
    let stoppedBy: 'timeout' | 'cancel' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let escalation: NodeJS.Timeout | undefined;
    let drain: NodeJS.Timeout | undefined;
    let settled = false;

    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const stop = (reason: 'timeout' | 'cancel'): void => {
      if (stoppedBy !== undefined || exit !== undefined) return;
      stoppedBy = reason;
      killGroup('SIGTERM');
      escalation = setTimeout(() => killGroup('SIGKILL'), runCommandKillGraceMs);
    };
    const onAbort = (): void => stop('cancel');
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    abortSignal.addEventListener('abort', onAbort, { once: true });

    const finish = (result: CommandOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(escalation);
      clearTimeout(drain);
      abortSignal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const report = (): void => {
      finish({
        exitCode: stoppedBy === undefined ? exit?.code ?? null : null,
        signal: exit?.signal ?? null,
        ...(stoppedBy !== undefined ? { stoppedBy } : {}),
        output: output.toString(),
        stdout: stdoutOnly.toString(),
        stderr: stderrOnly.toString(),
        timeoutMs,
      });
    };

    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output.append(chunk);
      stdoutOnly.append(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output.append(chunk);
      stderrOnly.append(chunk);
    });
    child.on('error', (error) => finish({ refused: `Could not start ${invocation.file === 'bwrap' ? 'the sandbox (bwrap)' : invocation.file === '/bin/sh' ? '/bin/sh' : `/bin/sh under ${invocation.file}`}: ${error.message}`, exitCode: null, signal: null, output: '', stdout: '', stderr: '', timeoutMs }));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background processes the command left behind would keep the pipes (and this call) open: stop them.
      killGroup('SIGKILL');
      drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        report();
      }, pipeDrainMs);
    });
    child.on('close', report);
  });
}

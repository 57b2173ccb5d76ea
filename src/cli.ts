import { recipesCheckCommand } from './sources/recipes-check-command';
import { ApiRequestError, describeApiError } from './cli/api-transport';
import { apiKeyCommand, modelsCommand, sourcesCommand } from './cli/catalog-commands';
import { createCliContext, type CliContext } from './cli/cli-context';
import { processIo, UsageError, type CliIo } from './cli/cli-io';
import { cancelCommand, delegateCommand, listCommand, peekCommand, resultCommand, sendCommand } from './cli/delegation-commands';
import { apiCommand, devCommand, workerCommand } from './cli/stack-commands';
import { approvalsCommand, sessionsCommand } from './cli/session-commands';

/**
 * `errand`: the command line. Client commands talk to the HTTP API when `ERRAND_API_URL` is set (with
 * `ERRAND_API_KEY`), otherwise straight to Temporal through the same API code in process. Every command
 * takes `--json`. Exit codes: 0 ok, 1 failed (or the delegation did not complete), 2 usage error,
 * 3 still running (`result`).
 */

type Command = (argv: string[], context: CliContext) => Promise<number>;

const commands: Record<string, { run: Command; summary: string }> = {
  dev: { run: devCommand, summary: 'run the whole local stack: Temporal dev server + Web UI, worker, API (demo model without a provider)' },
  worker: { run: workerCommand, summary: 'run a worker on the configured task queue [--demo]' },
  api: { run: apiCommand, summary: 'run the HTTP API server (ERRAND_API_KEYS, or ERRAND_API_AUTH=off for local use)' },
  delegate: { run: delegateCommand, summary: 'start a subagent and wait with live progress: errand delegate "task" [--source s] [-p k=v] [--async] …' },
  peek: { run: peekCommand, summary: 'show a delegation\'s state and progress without waiting' },
  result: { run: resultCommand, summary: 'print a delegation\'s result [--wait 30s] (exit 3 while it runs)' },
  cancel: { run: cancelCommand, summary: 'cancel a delegation [--reason text]' },
  send: { run: sendCommand, summary: 'send a message to a continuable delegation' },
  list: { run: listCommand, summary: 'list delegations [--status s] [--source s] [--parent id]' },
  sources: { run: sourcesCommand, summary: 'list recipes and agents, or show one: errand sources [name]' },
  models: { run: modelsCommand, summary: 'list the models a delegation may use' },
  recipes: { run: recipesCommand, summary: 'recipes check <file or folder>…: validate recipe and agent files' },
  sessions: { run: sessionsCommand, summary: 'parent sessions: sessions start [message] | send <id> <message> | show <id> | cancel <id>' },
  approvals: { run: approvalsCommand, summary: 'tool calls waiting for approval: approvals [list] | approve <id> | deny <id> [--reason r]' },
  'api-key': { run: apiKeyCommand, summary: 'make an API key for a tenant and print its configuration entry' },
};

async function recipesCommand(argv: string[], context: CliContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check') throw new UsageError('usage: errand recipes check <file or folder>... [--json]');
  return recipesCheckCommand(rest, { stdout: context.io.stdout, stderr: context.io.stderr });
}

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'usage: errand <command> [arguments] [--json]',
    '',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'Client commands use ERRAND_API_URL (+ ERRAND_API_KEY) when set, otherwise Temporal directly (ERRAND_TEMPORAL_ADDRESS, ERRAND_TASK_QUEUE).',
  ].join('\n');
}

/** Runs one command line; returns the exit code. */
export async function runCli(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`errand: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  const context = createCliContext(io, env, cwd);
  try {
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr(`errand ${name}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ApiRequestError) {
      if (rest.includes('--json') && error.problem) io.stdout(`${JSON.stringify(error.problem, null, 2)}\n`);
      io.stderr(`errand ${name}: ${describeApiError(error)}\n`);
      return 1;
    }
    io.stderr(`errand ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await context.close().catch(() => undefined);
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`errand: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

import type { CliContext } from './cli/cli-context';
import { processIo, type CliIo } from './cli/cli-io';

/**
 * `errand`: the command line. Client commands talk to the HTTP API when `ERRAND_API_URL` is set (with
 * `ERRAND_API_KEY`), otherwise straight to Temporal through the same API code in process. Every command
 * takes `--json`. Exit codes: 0 ok, 1 failed (or the delegation did not complete), 2 usage error,
 * 3 still running (`result`).
 *
 * Start-up time matters (a person types `errand peek` and waits; an agent calls it in a loop): this file
 * imports nothing heavy. Each command's module is loaded only when that command runs, so `errand --help`
 * loads no SDK and `errand peek` no worker, web server or model SDK (bench figure `cli-*`).
 */

type Command = (argv: string[], context: CliContext) => Promise<number>;

/** One command: its line in the usage, and how to load it (a dynamic import, so only the one run is loaded). */
interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
}

// One line per command; a new command is one more line here and a function in its module under src/cli/.
const commands: Record<string, CommandEntry> = {
  dev: { summary: 'run the whole local stack: Temporal dev server + Web UI, worker, API (demo model without a provider)', load: async () => (await import('./cli/stack-commands.js')).devCommand },
  worker: { summary: 'run a worker on the configured task queue [--demo]', load: async () => (await import('./cli/stack-commands.js')).workerCommand },
  api: { summary: 'run the HTTP API server (ERRAND_API_KEYS, or ERRAND_API_AUTH=off for local use)', load: async () => (await import('./cli/api-command.js')).apiCommand },
  delegate: { summary: 'start a subagent and wait with live progress: errand delegate "task" [--source s] [-p k=v] [--async] …', load: async () => (await import('./cli/delegation-commands.js')).delegateCommand },
  peek: { summary: 'show a delegation\'s state and progress without waiting; --follow watches it write until it ends', load: async () => (await import('./cli/delegation-commands.js')).peekCommand },
  result: { summary: 'print a delegation\'s result [--wait 30s] (exit 3 while it runs)', load: async () => (await import('./cli/delegation-commands.js')).resultCommand },
  cancel: { summary: 'cancel a delegation [--reason text]', load: async () => (await import('./cli/delegation-commands.js')).cancelCommand },
  send: { summary: 'send a message to a continuable delegation', load: async () => (await import('./cli/delegation-commands.js')).sendCommand },
  usage: { summary: 'tokens and cost of a delegation or session and every descendant, with turns and state', load: async () => (await import('./cli/usage-command.js')).usageCommand },
  list: { summary: 'list delegations [--status s] [--source s] [--parent id]', load: async () => (await import('./cli/delegation-commands.js')).listCommand },
  workflow: { summary: 'workflow runs: workflow run <file|name> [--args JSON] [--dry-run] [--async] | show <id> | pause | resume [--script f] | cancel | restart <id> <key>', load: async () => (await import('./cli/workflow-commands.js')).workflowCommand },
  sources: { summary: 'list recipes and agents, or show one: errand sources [name]', load: async () => (await import('./cli/catalog-commands.js')).sourcesCommand },
  models: { summary: 'list the models a delegation may use', load: async () => (await import('./cli/catalog-commands.js')).modelsCommand },
  recipes: { summary: 'recipes check <file or folder>…: validate recipe and agent files', load: async () => (await import('./cli/recipes-command.js')).recipesCommand },
  sessions: { summary: 'parent sessions: sessions start [message] | send <id> <message> | show <id> | cancel <id>', load: async () => (await import('./cli/session-commands.js')).sessionsCommand },
  approvals: { summary: 'tool calls waiting for approval: approvals [list] | approve <id> | deny <id> [--reason r]', load: async () => (await import('./cli/session-commands.js')).approvalsCommand },
  mcp: { summary: 'serve errand\'s orchestration tools to an MCP client over stdio [--session id] (reconnects to a session)', load: async () => (await import('./cli/mcp-command.js')).mcpCommand },
  'api-key': { summary: 'make an API key for a tenant and print its configuration entry', load: async () => (await import('./cli/catalog-commands.js')).apiKeyCommand },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'usage: errand <command> [arguments] [--json]',
    '',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'errand <command> --help shows a command\'s options.',
    'Client commands use ERRAND_API_URL (+ ERRAND_API_KEY) when set, otherwise Temporal directly (ERRAND_TEMPORAL_ADDRESS, ERRAND_TASK_QUEUE).',
  ].join('\n');
}

/** Recognises our errors by their marker (DESIGN.md convention 5), so this file need not load their modules. */
function markerOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'errandError' in error ? error.errandError : undefined;
}

function isUsageError(error: unknown): error is Error {
  if (markerOf(error) === 'UsageError') return true;
  return error instanceof TypeError && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS');
}

/** Runs one command line; returns the exit code. */
export async function runCli(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.stderr(`errand: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    const { commandHelp } = await import('./cli/command-help.js');
    io.stdout(`${commandHelp[name] ?? `usage: errand ${name}`}\n`);
    return 0;
  }
  const [run, { createCliContext }] = await Promise.all([command.load(), import('./cli/cli-context.js')]);
  const context = createCliContext(io, env, cwd);
  try {
    return await run(rest, context);
  } catch (error) {
    if (isUsageError(error)) {
      io.stderr(`errand ${name}: ${error.message}\n`);
      return 2;
    }
    if (markerOf(error) === 'ApiRequestError') {
      const { describeApiError, isApiRequestError } = await import('./cli/api-transport.js');
      if (isApiRequestError(error)) {
        if (rest.includes('--json') && error.problem) io.stdout(`${JSON.stringify(error.problem, null, 2)}\n`);
        io.stderr(`errand ${name}: ${describeApiError(error)}\n`);
        return 1;
      }
    }
    io.stderr(`errand ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await context.close().catch(() => undefined);
  }
}

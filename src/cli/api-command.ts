import { parseArgs } from 'node:util';
import { runApiServer } from '../api/server';
import type { CliContext } from './cli-context';

/**
 * `errand api`: the API server from configuration. A module of its own, apart from `errand dev` and
 * `errand worker` (stack-commands.ts): the API never runs workflow code, so it does not load the worker
 * package and its native bridge (about half a second of every start, measured with a CPU profile).
 */
export async function apiCommand(argv: string[], context: CliContext): Promise<number> {
  parseArgs({ args: argv, options: {}, allowPositionals: false, strict: true });
  await runApiServer(context.env);
  return 0;
}

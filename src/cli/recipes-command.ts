import { recipesCheckCommand } from '../sources/recipes-check-command';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';

/** `errand recipes check <file or folder>...`: validates recipe and agent files (no Temporal needed). */
export async function recipesCommand(argv: string[], context: CliContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check') throw new UsageError('usage: errand recipes check <file or folder>... [--json]');
  return recipesCheckCommand(rest, { stdout: context.io.stdout, stderr: context.io.stderr });
}

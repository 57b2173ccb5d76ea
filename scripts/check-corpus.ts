/**
 * `npm run check:corpus -- <folder>`: every recipe and agent file of a goose corpus that goose itself
 * accepts must load in errand (see src/sources/corpus-check.ts). Prints each problem and a summary;
 * exit code 0 when all is as expected, 1 otherwise, 2 for usage errors.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkCorpus, formatCorpusResult } from '../src/sources/corpus-check';

/** Files of the goose corpus that goose itself refuses, with goose's reason. */
const refusedByGoose: Record<string, string> = {
  'recipes/documentation/src/pages/recipes/data/recipes/pull-request-generator.yaml': 'goose: "Optional parameters missing default values in the recipe: push_pr"',
  'recipes/historical/documentation/src/pages/recipes/data/recipes/joke-of-the-day.json':
    'old website catalogue entry: `extensions` is a list of strings and `author` a string; goose cannot deserialize it',
  'recipes/historical/documentation/src/pages/recipes/data/recipes/pull-request-generator.json':
    'old website catalogue entry: `extensions` is a list of strings and `author` a string; goose cannot deserialize it',
};

async function main(): Promise<number> {
  const [folder, ...rest] = process.argv.slice(2);
  if (folder === undefined || rest.length > 0) {
    process.stderr.write('usage: npm run check:corpus -- <folder>\n');
    return 2;
  }
  const root = resolve(folder);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    process.stderr.write(`check:corpus: ${root} is not a folder\nusage: npm run check:corpus -- <folder>\n`);
    return 2;
  }
  const result = await checkCorpus(root, refusedByGoose);
  process.stdout.write(formatCorpusResult(root, result));
  return result.ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`check:corpus: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

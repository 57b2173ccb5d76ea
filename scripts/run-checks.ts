import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * `npm test`'s static checks — lint (`npm run lint`) and types (`npm run typecheck`) — run at the same
 * time rather than one after the other: each is one single-threaded process, so on two or more cores the
 * pair takes as long as the slower one. Output is held until each finishes, so the two never interleave;
 * the exit code is 1 when either fails, after both have finished (a failing lint still shows type errors).
 *
 * Usage: `tsx scripts/run-checks.ts`
 */

const root = resolve(__dirname, '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

const checks = [
  { name: 'lint', command: bin('eslint'), args: ['.'] },
  { name: 'typecheck', command: bin('tsc'), args: ['--noEmit', '-p', 'tsconfig.json'] },
];

interface Outcome {
  name: string;
  code: number | null;
  output: string;
  seconds: number;
}

function run(check: (typeof checks)[number]): Promise<Outcome> {
  return new Promise((resolveRun) => {
    const started = Date.now();
    const child = spawn(check.command, check.args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', (error) => resolveRun({ name: check.name, code: 1, output: `${output}${error.message}\n`, seconds: (Date.now() - started) / 1000 }));
    child.once('close', (code) => resolveRun({ name: check.name, code, output, seconds: (Date.now() - started) / 1000 }));
  });
}

async function main(): Promise<void> {
  const outcomes = await Promise.all(checks.map(run));
  for (const outcome of outcomes) {
    const verdict = outcome.code === 0 ? 'ok' : `failed (exit ${String(outcome.code)})`;
    process.stdout.write(`\n> ${outcome.name}: ${verdict} in ${outcome.seconds.toFixed(1)} s\n${outcome.output}`);
  }
  if (outcomes.some((outcome) => outcome.code !== 0)) process.exitCode = 1;
}

void main();

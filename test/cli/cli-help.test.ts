import { describe, expect, test } from 'vitest';
import { runCli } from '../../src/cli';
import { commandHelp } from '../../src/cli/command-help';
import { delegateOptions } from '../../src/cli/delegation-commands';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = { stdout: (text: string) => void (out += text), stderr: (text: string) => void (err += text), interactive: false };
  const code = await runCli(argv, io, { PATH: process.env.PATH ?? '' }, process.cwd());
  return { code, out, err };
}

describe('errand <command> --help', () => {
  test('every command in the usage has its own help, printed with exit 0 and nothing run', async () => {
    const { out: usage } = await run(['--help']);
    const names = [...usage.matchAll(/^ {2}(\S+) {2,}/gm)].map((match) => match[1]);
    expect(names).toContain('delegate');
    expect(names.sort()).toEqual(Object.keys(commandHelp).sort());
    for (const name of names) {
      for (const flag of ['--help', '-h']) {
        const { code, out, err } = await run([name ?? '', flag]);
        expect({ name, code, err }).toEqual({ name, code: 0, err: '' });
        expect(out.startsWith(`usage: errand ${name}`)).toBe(true);
      }
    }
  });

  test("delegate's help lists every option it accepts, with its short form", () => {
    const help = commandHelp.delegate ?? '';
    for (const [name, option] of Object.entries(delegateOptions)) {
      expect(help).toContain(`--${name}`);
      if ('short' in option) expect(help).toContain(`-${option.short}, --${name}`);
    }
  });

  test('--help after -- is an argument, not a request for help', async () => {
    const { code, err } = await run(['models', '--', '--help', 'extra']);
    expect(code).toBe(2);
    expect(err).toMatch(/usage: errand models/);
  });
});

describe('the errand command', () => {
  test('stops quietly (exit 0, no stack trace) when the reader of its output has closed the pipe', async () => {
    const { spawn } = await import('node:child_process');
    const { join } = await import('node:path');
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bin', 'errand.js'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Like `errand … | head -1` once head has exited: the next write finds the pipe closed (EPIPE).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolveExit) => child.once('close', (exitCode) => resolveExit(exitCode)));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 30_000);
});

import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/contracts/json';
import { listDirectoryMaxEntries, toolOutputMaxChars } from '../../src/contracts/limits/tools';
import { createDeveloperToolset } from '../../src/tools/developer-toolset';
import { createSearchTextTool } from '../../src/tools/developer/search-text';
import type { Tool, ToolResult } from '../../src/tools/tool';
import { createSandbox, type Sandbox } from './fixtures';

let sandbox: Sandbox;
let tools: Map<string, Tool>;

beforeEach(async () => {
  sandbox = await createSandbox();
  tools = new Map((await createDeveloperToolset().tools()).map((tool) => [tool.spec.name, tool]));
});
afterEach(() => sandbox.cleanup());

function call(name: string, args: JsonObject, signal?: AbortSignal): Promise<ToolResult> {
  const tool = tools.get(name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool.run(args, sandbox.context(signal));
}

/**
 * Whether a process is still running. A killed process whose parent died is re-parented to PID 1, which
 * in a container may never reap it: a zombie counts as not running.
 */
async function processAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return true; // no procfs (macOS): signal 0 succeeded, so it runs
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

describe('developer toolset', () => {
  it('offers the five tools with JSON Schemas', async () => {
    expect([...tools.keys()]).toEqual(['read_file', 'write_file', 'list_directory', 'search_text', 'run_command']);
    const readFileSpec = tools.get('read_file')?.spec;
    expect(readFileSpec?.inputSchema).toMatchObject({ type: 'object', required: ['path'], additionalProperties: false });
    expect(readFileSpec?.inputSchema).not.toHaveProperty('$schema');
  });

  describe('read_file', () => {
    it('reads a whole file and a line range', async () => {
      await writeFile(path.join(sandbox.workingDir, 'a.txt'), 'one\ntwo\nthree\nfour\n');
      expect(await call('read_file', { path: 'a.txt' })).toEqual({ content: 'one\ntwo\nthree\nfour\n', isError: false });
      const range = await call('read_file', { path: 'a.txt', start_line: 2, end_line: 3 });
      expect(range).toEqual({ content: 'a.txt: lines 2-3 of 4\n2: two\n3: three', isError: false });
      expect(await call('read_file', { path: 'a.txt', start_line: 9 })).toMatchObject({ isError: true, content: expect.stringContaining('has 4 lines') });
    });

    it('caps output and reports errors for missing, directory and binary files', async () => {
      await writeFile(path.join(sandbox.workingDir, 'big.txt'), 'x'.repeat(toolOutputMaxChars + 10));
      const big = await call('read_file', { path: 'big.txt' });
      expect(big.isError).toBe(false);
      expect(big.content).toContain('[output truncated: 10 more characters');
      expect(await call('read_file', { path: 'missing.txt' })).toEqual({ content: 'file "missing.txt" does not exist', isError: true });
      expect(await call('read_file', { path: '.' })).toMatchObject({ isError: true, content: expect.stringContaining('is a directory') });
      await writeFile(path.join(sandbox.workingDir, 'bin'), Buffer.from([1, 0, 2]));
      expect(await call('read_file', { path: 'bin' })).toMatchObject({ isError: true, content: expect.stringContaining('looks binary') });
    });

    it('refuses paths outside the working directory', async () => {
      await writeFile(path.join(sandbox.outside, 'secret.txt'), 'secret');
      await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workingDir, 'link'));
      for (const requested of ['../outside/secret.txt', '/etc/passwd', 'link']) {
        const result = await call('read_file', { path: requested });
        expect(result.isError, requested).toBe(true);
        expect(result.content).toContain(`path "${requested}" is outside the working directory`);
      }
    });
  });

  describe('write_file', () => {
    it('creates parent directories and overwrites', async () => {
      expect(await call('write_file', { path: 'deep/er/f.txt', content: 'héllo' })).toEqual({
        content: `Created ${path.join('deep', 'er', 'f.txt')} (6 bytes)`,
        isError: false,
      });
      expect(await readFile(path.join(sandbox.workingDir, 'deep/er/f.txt'), 'utf8')).toBe('héllo');
      expect(await call('write_file', { path: 'deep/er/f.txt', content: 'bye' })).toMatchObject({ isError: false, content: expect.stringContaining('Overwrote') });
    });

    it('refuses writes outside, including through an outward symlinked directory', async () => {
      await symlink(sandbox.outside, path.join(sandbox.workingDir, 'escape'));
      for (const requested of ['../outside/x.txt', path.join(sandbox.outside, 'x.txt'), 'escape/x.txt', 'escape/sub/x.txt']) {
        const result = await call('write_file', { path: requested, content: 'pwned' });
        expect(result, requested).toMatchObject({ isError: true, content: expect.stringContaining('outside the working directory') });
      }
      await expect(stat(path.join(sandbox.outside, 'x.txt'))).rejects.toThrow();
      await expect(stat(path.join(sandbox.outside, 'sub'))).rejects.toThrow();
    });

    it('writes through an inward symlinked directory', async () => {
      await mkdir(path.join(sandbox.workingDir, 'real'));
      await symlink(path.join(sandbox.workingDir, 'real'), path.join(sandbox.workingDir, 'alias'));
      expect(await call('write_file', { path: 'alias/f.txt', content: 'ok' })).toMatchObject({ isError: false });
      expect(await readFile(path.join(sandbox.workingDir, 'real/f.txt'), 'utf8')).toBe('ok');
    });
  });

  describe('list_directory', () => {
    it('lists entries with type and size', async () => {
      await writeFile(path.join(sandbox.workingDir, 'b.txt'), '12345');
      await mkdir(path.join(sandbox.workingDir, 'a-dir'));
      await symlink('b.txt', path.join(sandbox.workingDir, 'c-link'));
      const result = await call('list_directory', {});
      expect(result).toEqual({
        content: '.: 3 entries\ndir      a-dir/\nfile     b.txt (5 bytes)\nsymlink  c-link -> b.txt',
        isError: false,
      });
    });

    it('bounds the number of entries', async () => {
      await mkdir(path.join(sandbox.workingDir, 'many'));
      await Promise.all(
        Array.from({ length: listDirectoryMaxEntries + 3 }, (_, index) => writeFile(path.join(sandbox.workingDir, 'many', `f${index}`), '')),
      );
      const result = await call('list_directory', { path: 'many' });
      expect(result.content.split('\n')).toHaveLength(listDirectoryMaxEntries + 2);
      expect(result.content).toContain('[3 more entries not shown]');
    });

    it('refuses an outward symlinked directory and reports a missing one', async () => {
      await symlink(sandbox.outside, path.join(sandbox.workingDir, 'escape'));
      expect(await call('list_directory', { path: 'escape' })).toMatchObject({ isError: true, content: expect.stringContaining('outside') });
      expect(await call('list_directory', { path: 'nope' })).toEqual({ content: 'directory "nope" does not exist', isError: true });
    });
  });

  describe('search_text', () => {
    beforeEach(async () => {
      await mkdir(path.join(sandbox.workingDir, 'src/nested'), { recursive: true });
      await mkdir(path.join(sandbox.workingDir, 'node_modules/pkg'), { recursive: true });
      await writeFile(path.join(sandbox.workingDir, 'src/a.ts'), 'const a = 1;\nfunction foo() {}\n');
      await writeFile(path.join(sandbox.workingDir, 'src/nested/b.ts'), 'foo(a.b);\nFOO\n');
      await writeFile(path.join(sandbox.workingDir, 'node_modules/pkg/index.js'), 'foo');
      await writeFile(path.join(sandbox.workingDir, 'src/blob.bin'), Buffer.from('foo\0bar'));
    });

    it('finds literal text, skipping binary files and node_modules', async () => {
      const result = await call('search_text', { pattern: 'foo' });
      expect(result).toEqual({
        content: 'src/a.ts:2: function foo() {}\nsrc/nested/b.ts:1: foo(a.b);\n[1 binary file(s) skipped]',
        isError: false,
      });
      // A literal pattern's regex characters are literal.
      expect((await call('search_text', { pattern: 'a.b', path: 'src/nested' })).content).toBe('src/nested/b.ts:1: foo(a.b);');
    });

    it('supports regex, case-insensitivity, a sub-path and max_matches', async () => {
      expect((await call('search_text', { pattern: '^fo+$', regex: true, case_insensitive: true, path: 'src/nested' })).content).toBe('src/nested/b.ts:2: FOO');
      expect((await call('search_text', { pattern: 'foo', path: 'src/nested' })).content).toBe('src/nested/b.ts:1: foo(a.b);');
      const limited = await call('search_text', { pattern: 'foo', max_matches: 1 });
      expect(limited.content).toContain('src/a.ts:2: function foo() {}\n');
      expect(limited.content).toContain('stopped at 1 matches');
      expect((await call('search_text', { pattern: 'nothing-here' })).content).toMatch(/^No matches for "nothing-here" in \./);
    });

    it('reports an invalid regex and refuses paths outside', async () => {
      expect(await call('search_text', { pattern: '(', regex: true })).toMatchObject({
        isError: true,
        content: expect.stringContaining('argument "pattern" is not a valid regular expression'),
      });
      expect(await call('search_text', { pattern: 'x', path: '..' })).toMatchObject({ isError: true, content: expect.stringContaining('outside') });
    });

    it('does not follow symlinks out of the working directory', async () => {
      await writeFile(path.join(sandbox.outside, 'secret.txt'), 'foo secret');
      await symlink(sandbox.outside, path.join(sandbox.workingDir, 'escape'));
      expect((await call('search_text', { pattern: 'secret' })).content).toMatch(/^No matches/);
    });
  });

  describe('run_command', () => {
    it('runs in the working directory and reports the exit code', async () => {
      await writeFile(path.join(sandbox.workingDir, 'here.txt'), '');
      expect(await call('run_command', { command: 'ls; echo err >&2' })).toEqual({ content: 'Exit code: 0\nhere.txt\nerr\n', isError: false });
      expect(await call('run_command', { command: 'echo failing; exit 3' })).toEqual({ content: 'Exit code: 3\nfailing\n', isError: true });
      expect(await call('run_command', { command: 'true' })).toEqual({ content: 'Exit code: 0\n(no output)', isError: false });
    });

    it('kills the whole process group on timeout', async () => {
      const pidFile = path.join(sandbox.workingDir, 'pid');
      const started = Date.now();
      const result = await call('run_command', { command: `sleep 30 & echo $! > ${pidFile}; echo started; wait`, timeout_ms: 500 });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(result.isError).toBe(true);
      expect(result.content).toBe('Command timed out after 500 ms and was killed (with its process group).\nstarted\n');
      const sleeperPid = Number((await readFile(pidFile, 'utf8')).trim());
      expect(await processAlive(sleeperPid)).toBe(false);
    });

    it('kills a running command when aborted', async () => {
      const controller = new AbortController();
      const pidFile = path.join(sandbox.workingDir, 'pid');
      const running = call('run_command', { command: `echo $$ > ${pidFile}; sleep 30`, timeout_ms: 60_000 }, controller.signal);
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const written = await readFile(pidFile, 'utf8').catch(() => '');
        if (written.trim().length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      controller.abort();
      const result = await running;
      expect(result).toEqual({ content: 'Command was cancelled and killed (with its process group).\n(no output)', isError: true });
      expect(await processAlive(Number((await readFile(pidFile, 'utf8')).trim()))).toBe(false);
    });

    it('stops background processes left behind when the command ends', async () => {
      const pidFile = path.join(sandbox.workingDir, 'pid');
      const result = await call('run_command', { command: `sleep 30 > /dev/null 2>&1 & echo $! > ${pidFile}; echo done` });
      expect(result).toEqual({ content: 'Exit code: 0\ndone\n', isError: false });
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await processAlive(pid)).toBe(false);
    });

    it('caps output keeping its start and end', async () => {
      const result = await call('run_command', { command: `echo START; head -c ${toolOutputMaxChars * 2} /dev/zero | tr '\\0' x; echo; echo END` });
      expect(result.isError).toBe(false);
      expect(result.content.startsWith('Exit code: 0\nSTART\n')).toBe(true);
      expect(result.content.endsWith('END\n')).toBe(true);
      expect(result.content).toMatch(/\[\.\.\. \d+ characters of output omitted \.\.\.\]/);
      expect(result.content.length).toBeLessThan(toolOutputMaxChars + 200);
    });
  });

  describe('argument validation', () => {
    it('names the argument and what is valid, never throwing', async () => {
      const missing = await call('read_file', {});
      expect(missing.isError).toBe(true);
      expect(missing.content).toContain('Invalid arguments for read_file: missing required argument "path" (string).');
      expect(missing.content).toContain('Valid arguments: path (string, required)');
      expect(missing.content).toContain('start_line (integer >= 1, optional)');

      const wrongType = await call('write_file', { path: 'x', content: 5 });
      expect(wrongType.content).toContain('argument "content": Invalid input: expected string, received number');

      const unknown = await call('read_file', { file_path: 'x', path: 'x' });
      expect(unknown.content).toContain('unknown argument "file_path"');

      const tooLong = await call('run_command', { command: 'true', timeout_ms: 10_000_000 });
      expect(tooLong).toMatchObject({ isError: true, content: expect.stringContaining('argument "timeout_ms"') });
      expect(tooLong.content).toContain('timeout_ms (integer >= 1 <= 600000, optional)');

      const badRange = await call('read_file', { path: 'x', start_line: 5, end_line: 2 });
      expect(badRange).toMatchObject({ isError: true, content: expect.stringContaining('end_line (2) is before start_line (5)') });
    });
  });

  describe('search_text safety', () => {
    it('refuses patterns RE2 cannot match in linear time, naming the syntax', async () => {
      const result = await call('search_text', { pattern: '(a)\\1', regex: true });
      expect(result).toMatchObject({ isError: true, content: expect.stringContaining('is not a valid regular expression (RE2 syntax)') });
    });

    it('stops matching at the deadline, in a thread, and says what to do', async () => {
      // 10 ms: on a fast CPU the 12 MB below can be matched within 100 ms, and the test then saw no deadline.
      const tool = createSearchTextTool({}, 10);
      const text = 'abcdefghij'.repeat(100_000);
      for (let file = 0; file < 12; file += 1) await writeFile(path.join(sandbox.workingDir, `part-${file}.txt`), `${text}\n`);
      let ticks = 0;
      const ticker = setInterval(() => (ticks += 1), 1);
      const result = await tool.run({ pattern: '(?:[a-e]|[c-h]|[a-j]{2}){300}!', regex: true }, sandbox.context());
      clearInterval(ticker);
      expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^search_text stopped: matching the regular expression took longer than 10 ms/) });
      // The event loop kept turning while the thread matched.
      expect(ticks).toBeGreaterThan(0);
    });
  });
});

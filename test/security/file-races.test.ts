import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import { readFileMaxBytes } from '../../src/contracts/limits/tools';
import { confinePath, type ConfinedPath } from '../../src/tools/confine-path';
import { createDeveloperToolset } from '../../src/tools/developer-toolset';
import { readConfined, writeConfined } from '../../src/tools/open-confined';
import { createSandbox, type Sandbox } from '../tools/fixtures';
import { attack } from './attack-stack';

/**
 * The attack suite, part 3: a symlink swapped in between the path check and the open — the race a
 * command running in parallel with a file tool can try (one model turn's tool calls run at once). The
 * window is forced here by swapping right after `confinePath` returned, then opening as the tools do.
 */

let sandbox: Sandbox;
const secret = 'OUTSIDE-SECRET-CONTENT';

beforeEach(async () => {
  sandbox = await createSandbox();
  await writeFile(path.join(sandbox.outside, 'secret.txt'), secret);
});
afterEach(() => sandbox.cleanup());

async function confined(requested: string): Promise<ConfinedPath> {
  const result = await confinePath(sandbox.workingDir, requested);
  if (!result.ok) throw new Error(`expected ${requested} to pass the check: ${result.message}`);
  return result;
}

describe('symlinks swapped in after the check', () => {
  attack('read through a file swapped for a symlink after the check', async () => {
    await writeFile(path.join(sandbox.workingDir, 'notes.txt'), 'harmless');
    const checked = await confined('notes.txt');
    await rm(path.join(sandbox.workingDir, 'notes.txt'));
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workingDir, 'notes.txt'));
    const read = await readConfined(checked, readFileMaxBytes);
    expect(read).toEqual({ ok: false, reason: 'moved' });
  });

  attack('write through a symlink created after the check', async () => {
    const checked = await confined('report.txt');
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workingDir, 'report.txt'));
    expect(await writeConfined(checked, 'overwritten')).toEqual({ ok: false, reason: 'moved' });
    expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe(secret);
    // A dangling one (a file that does not exist yet outside) is not created either.
    const fresh = await confined('fresh.txt');
    await symlink(path.join(sandbox.outside, 'created-by-attack.txt'), path.join(sandbox.workingDir, 'fresh.txt'));
    expect(await writeConfined(fresh, 'x')).toEqual({ ok: false, reason: 'moved' });
    expect(existsSync(path.join(sandbox.outside, 'created-by-attack.txt'))).toBe(false);
  });

  attack('swap a directory on the way for a symlink after the check', async () => {
    await mkdir(path.join(sandbox.workingDir, 'docs'));
    await writeFile(path.join(sandbox.workingDir, 'docs', 'secret.txt'), 'inside');
    const forRead = await confined('docs/secret.txt');
    const forWrite = await confined('docs/secret.txt');
    const forCreate = await confined('docs/new.txt');
    await rename(path.join(sandbox.workingDir, 'docs'), path.join(sandbox.workingDir, 'docs-old'));
    await symlink(sandbox.outside, path.join(sandbox.workingDir, 'docs'));
    expect(await readConfined(forRead, readFileMaxBytes)).toEqual({ ok: false, reason: 'moved' });
    expect(await writeConfined(forWrite, 'overwritten')).toEqual({ ok: false, reason: 'moved' });
    expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe(secret);
    // A new file: the create went through the swapped directory, was found to be outside, and taken back.
    expect(await writeConfined(forCreate, 'planted')).toEqual({ ok: false, reason: 'moved' });
    expect(existsSync(path.join(sandbox.outside, 'new.txt'))).toBe(false);
  });

  attack('make folders through a link swapped in for a missing folder after the check', async () => {
    // write_file makes missing folders: a command running beside it swaps a link in where the first one
    // will be. No folder may appear where the link points, and nothing is written.
    const checked = await confined('drop/deeper/planted.txt');
    await symlink(sandbox.outside, path.join(sandbox.workingDir, 'drop'));
    expect(await writeConfined(checked, 'planted')).toEqual({ ok: false, reason: 'moved' });
    expect(existsSync(path.join(sandbox.outside, 'deeper'))).toBe(false);
    // The same one level down: the first folder is made, the second is a link by then.
    await rm(path.join(sandbox.workingDir, 'drop'));
    await mkdir(path.join(sandbox.workingDir, 'made'));
    const lower = await confined('made/link/deeper/planted.txt');
    await symlink(sandbox.outside, path.join(sandbox.workingDir, 'made', 'link'));
    expect(await writeConfined(lower, 'planted')).toEqual({ ok: false, reason: 'moved' });
    expect(existsSync(path.join(sandbox.outside, 'deeper'))).toBe(false);
    // Without a swap the folders are made inside, and the file written there.
    expect(await writeConfined(await confined('fresh/a/b.txt'), 'kept')).toEqual({ ok: true, created: true });
    expect(await readFile(path.join(sandbox.workingDir, 'fresh', 'a', 'b.txt'), 'utf8')).toBe('kept');
  });

  attack('hang read_file on a FIFO, and read past the size limit', async () => {
    execFileSync('mkfifo', [path.join(sandbox.workingDir, 'pipe')]);
    const tools = new Map((await createDeveloperToolset().tools()).map((tool) => [tool.spec.name, tool]));
    const read = await tools.get('read_file')?.run({ path: 'pipe' }, sandbox.context());
    expect(read).toEqual({ isError: true, content: '"pipe" is not a regular file' });
    const write = await tools.get('write_file')?.run({ path: 'pipe', content: 'x' }, sandbox.context());
    expect(write).toEqual({ isError: true, content: '"pipe" is not a regular file' });
    // A file over the limit is refused by its size: at most limit + 1 bytes are ever read.
    await writeFile(path.join(sandbox.workingDir, 'big.bin'), Buffer.alloc(readFileMaxBytes + 10, 65));
    expect(await readConfined(await confined('big.bin'), readFileMaxBytes)).toEqual({ ok: false, reason: 'too-large', size: readFileMaxBytes + 10 });
  });
});

import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confinePath } from '../../src/tools/confine-path';
import { createSandbox, type Sandbox } from './fixtures';

describe('confinePath', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await createSandbox();
    await writeFile(path.join(sandbox.outside, 'secret.txt'), 'secret');
    await writeFile(path.join(sandbox.workingDir, 'inside.txt'), 'inside');
  });
  afterEach(() => sandbox.cleanup());

  it('allows relative, dot and absolute-inside paths', async () => {
    expect(await confinePath(sandbox.workingDir, 'inside.txt')).toMatchObject({ ok: true, displayPath: 'inside.txt' });
    expect(await confinePath(sandbox.workingDir, '.')).toMatchObject({ ok: true, displayPath: '.' });
    expect(await confinePath(sandbox.workingDir, '')).toMatchObject({ ok: true, displayPath: '.' });
    expect(await confinePath(sandbox.workingDir, path.join(sandbox.workingDir, 'inside.txt'))).toMatchObject({ ok: true, displayPath: 'inside.txt' });
    expect(await confinePath(sandbox.workingDir, 'a/../inside.txt')).toMatchObject({ ok: true, displayPath: 'inside.txt' });
    expect(await confinePath(sandbox.workingDir, 'new/dir/file.txt')).toMatchObject({ ok: true, displayPath: path.join('new', 'dir', 'file.txt') });
  });

  it('refuses .. escapes and absolute paths outside', async () => {
    const escape = await confinePath(sandbox.workingDir, '../outside/secret.txt');
    expect(escape).toEqual({ ok: false, message: expect.stringContaining('path "../outside/secret.txt" is outside the working directory') });
    const absolute = await confinePath(sandbox.workingDir, '/etc/passwd');
    expect(absolute).toEqual({ ok: false, message: expect.stringContaining('path "/etc/passwd" is outside the working directory') });
    expect(await confinePath(sandbox.workingDir, '..')).toMatchObject({ ok: false });
  });

  it('refuses outward symlinks to files and directories, and new files below them', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workingDir, 'file-link'));
    await symlink(sandbox.outside, path.join(sandbox.workingDir, 'dir-link'));
    for (const requested of ['file-link', 'dir-link', 'dir-link/secret.txt', 'dir-link/new/file.txt']) {
      const result = await confinePath(sandbox.workingDir, requested);
      expect(result, requested).toEqual({ ok: false, message: expect.stringContaining('symbolic link') });
    }
  });

  it('refuses a dangling symlink that points outside', async () => {
    await symlink(path.join(sandbox.outside, 'not-yet.txt'), path.join(sandbox.workingDir, 'dangling'));
    expect(await confinePath(sandbox.workingDir, 'dangling')).toMatchObject({ ok: false });
  });

  it('allows inward symlinks and resolves them', async () => {
    await mkdir(path.join(sandbox.workingDir, 'real'));
    await symlink(path.join(sandbox.workingDir, 'real'), path.join(sandbox.workingDir, 'alias'));
    const result = await confinePath(sandbox.workingDir, 'alias/file.txt');
    expect(result).toMatchObject({ ok: true, absolutePath: path.join(sandbox.workingDir, 'real', 'file.txt') });
  });

  it('accepts a working directory that is itself reached through a symlink', async () => {
    const linkedRoot = path.join(sandbox.parent, 'linked-root');
    await symlink(sandbox.workingDir, linkedRoot);
    expect(await confinePath(linkedRoot, 'inside.txt')).toMatchObject({ ok: true, displayPath: 'inside.txt' });
    expect(await confinePath(linkedRoot, path.join(sandbox.workingDir, 'inside.txt'))).toMatchObject({ ok: true });
    expect(await confinePath(linkedRoot, '../outside/secret.txt')).toMatchObject({ ok: false });
  });
});

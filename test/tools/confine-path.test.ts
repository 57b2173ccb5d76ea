import { existsSync } from 'node:fs';
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

  it("refuses errand's own data folders inside the working directory, and skips them in searches", async () => {
    const data = path.join(sandbox.workingDir, '.data');
    await mkdir(path.join(data, 'blobs'), { recursive: true });
    await writeFile(path.join(data, 'blobs', 'stored.json'), 'stored conversation');
    const rules = { denied: [data] };
    for (const requested of ['.data', '.data/blobs/stored.json', '.data/new.txt', path.join(data, 'blobs')]) {
      expect(await confinePath(sandbox.workingDir, requested, rules), requested).toEqual({ ok: false, message: `path "${requested}" is errand's own data, which tools may not read, write or list` });
    }
    // Through an inward symlink too.
    await symlink(data, path.join(sandbox.workingDir, 'alias'));
    expect(await confinePath(sandbox.workingDir, 'alias/blobs/stored.json', rules)).toMatchObject({ ok: false });
    const allowed = await confinePath(sandbox.workingDir, 'inside.txt', rules);
    expect(allowed).toMatchObject({ ok: true, denied: [data] });
    // A working directory inside the data folder is refused as a whole.
    expect(await confinePath(path.join(data, 'blobs'), '.', rules)).toMatchObject({ ok: false, message: expect.stringContaining("inside errand's own data") });
  });

  it('makes a missing tenant folder under the working root, and refuses one that leads into another', async () => {
    const root = path.join(sandbox.parent, 'root');
    await mkdir(path.join(root, 'globex'), { recursive: true });
    const acme = path.join(root, 'acme');
    const made = await confinePath(path.join(acme, 'project', 'src'), 'file.txt', { workingRoot: root });
    expect(made).toMatchObject({ ok: true, displayPath: 'file.txt', realRoot: path.join(acme, 'project', 'src') });
    await symlink(path.join(root, 'globex'), path.join(acme, 'bridge'));
    const bridged = await confinePath(path.join(acme, 'bridge'), 'notes.txt', { workingRoot: root });
    expect(bridged).toEqual({ ok: false, message: 'the working directory of this delegation leads out of its folder through a symbolic link; no tool may use it' });
    // A missing folder below a bridge is not made on the other side.
    expect(await confinePath(path.join(acme, 'bridge', 'new'), '.', { workingRoot: root })).toMatchObject({ ok: false });
    expect(existsSync(path.join(root, 'globex', 'new'))).toBe(false);
  });

  it('names no server path in its refusals', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workingDir, 'link'));
    for (const requested of ['../outside/secret.txt', 'link']) {
      const result = await confinePath(sandbox.workingDir, requested);
      expect(result.ok).toBe(false);
      expect(result.ok ? '' : result.message).not.toContain(sandbox.parent);
    }
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfinedDir, isConfinedWalkError, withConfinedDir } from '../../src/tools/confined-dir';

/**
 * The confined walk (src/tools/confined-dir.ts, decision 0020): every step is opened relative to the
 * handle of the step before and no link is followed, also while another process swaps a folder for a
 * link as fast as it can — the race that a path-based check-then-open loses.
 */

let root: string;
const loops: ChildProcess[] = [];

function setup(): { inside: string; outside: string } {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'errand-confined-dir-')));
  const inside = join(root, 'tenant');
  const outside = join(root, 'other');
  mkdirSync(join(inside, 'docs', 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(inside, 'docs', 'sub', 'own.txt'), 'own');
  writeFileSync(join(outside, 'own.txt'), 'OUTSIDE');
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE');
  return { inside, outside };
}

afterEach(() => {
  for (const loop of loops.splice(0)) if (loop.exitCode === null) loop.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'opened';
  } catch (error) {
    if (isConfinedWalkError(error)) return error.reason;
    throw error;
  }
}

describe('ConfinedDir', () => {
  it('refuses a link at any step, for folders and files, and never makes a folder through one', async () => {
    const { inside, outside } = setup();
    symlinkSync(outside, join(inside, 'docs', 'link'));
    symlinkSync(join(outside, 'secret.txt'), join(inside, 'docs', 'secret.txt'));
    expect(await reason(withConfinedDir(inside, 'docs/link', () => Promise.resolve()))).toBe('link');
    expect(await reason(withConfinedDir(inside, 'docs/link/deeper', () => Promise.resolve(), { create: true }))).toBe('link');
    expect(readdirSync(outside).sort()).toEqual(['own.txt', 'secret.txt']);
    expect(await reason(withConfinedDir(inside, 'docs', (folder) => folder.readFile('secret.txt', 100)))).toBe('link');
    expect(await reason(withConfinedDir(inside, 'docs/missing', () => Promise.resolve()))).toBe('missing');
    await expect(withConfinedDir(inside, '../other', () => Promise.resolve())).rejects.toThrow(/no "\.\."/);
    const entries = await withConfinedDir(inside, 'docs', (folder) => folder.entries());
    expect(entries).toEqual([
      { name: 'link', kind: 'link' },
      { name: 'secret.txt', kind: 'link' },
      { name: 'sub', kind: 'directory' },
    ]);
    // A folder made on the way is made where the walk is, relative to its parent's handle.
    await withConfinedDir(inside, 'made/here', () => Promise.resolve(), { create: true });
    expect(readdirSync(join(inside, 'made'))).toEqual(['here']);
  });

  it('keeps walking the folder it opened when that folder is moved and a link put in its place', async () => {
    const { inside, outside } = setup();
    const base = await ConfinedDir.openRoot(inside);
    try {
      const docs = await base.openPath('docs');
      renameSync(join(inside, 'docs'), join(inside, 'docs-moved'));
      symlinkSync(outside, join(inside, 'docs'));
      try {
        const sub = await docs.openChild('sub');
        const read = await sub.readFile('own.txt', 100);
        await sub.close();
        expect('content' in read && read.content.toString()).toBe('own');
      } finally {
        await docs.close();
      }
      expect(await reason(base.openPath('docs'))).toBe('link');
    } finally {
      await base.close();
    }
  });

  it('never reads outside while another process swaps a folder on the way for a link, in a loop', async () => {
    const { inside, outside } = setup();
    const loop = spawn('/bin/sh', ['-c', `while :; do mv sub sub.real; ln -s ${JSON.stringify(outside)} sub; rm sub; mv sub.real sub; done`], { cwd: join(inside, 'docs'), stdio: 'ignore' });
    loops.push(loop);
    const outcomes = new Map<string, number>();
    for (let attempt = 0; attempt < 2_000; attempt += 1) {
      const outcome = await withConfinedDir(inside, 'docs/sub', (folder) => folder.readFile('own.txt', 100))
        .then((read) => ('content' in read ? read.content.toString() : 'too large'))
        .catch((error: unknown) => (isConfinedWalkError(error) ? error.reason : 'error'));
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    loop.kill('SIGKILL');
    // The race was real (the folder was seen as a link or missing), and the outside file was never read.
    expect(outcomes.get('own') ?? 0).toBeGreaterThan(0);
    expect((outcomes.get('link') ?? 0) + (outcomes.get('missing') ?? 0)).toBeGreaterThan(0);
    expect(outcomes.has('OUTSIDE')).toBe(false);
    expect([...outcomes.keys()].filter((key) => !['own', 'link', 'missing'].includes(key)), JSON.stringify([...outcomes])).toEqual([]);
  });
});

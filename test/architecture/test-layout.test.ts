import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * Where tests live (AGENTS.md, Tests): beside the room they test, or in a kind folder for what crosses
 * rooms. A test folder is a room of src/ or one of those kinds, and no test file name is in two folders.
 */

const root = join(__dirname, '..', '..');
/** Folders of test/ that are no room of src/: what crosses rooms, the helpers and the fixtures. */
const kindFolders = ['architecture', 'deploy', 'docs', 'e2e', 'fixtures', 'security', 'support'];

function testFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

describe('the test layout', () => {
  test('every folder of test/ is a room of src/ or a kind folder', () => {
    const rooms = readdirSync(join(root, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    const folders = readdirSync(join(root, 'test'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.filter((folder) => !rooms.includes(folder) && !kindFolders.includes(folder))).toEqual([]);
  });

  test('no test file name is in two folders', () => {
    const byName = new Map<string, string[]>();
    for (const file of testFiles(join(root, 'test'))) {
      const name = file.split('/').pop() ?? file;
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
  });
});

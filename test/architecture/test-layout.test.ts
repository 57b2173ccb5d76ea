import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * Where tests live (AGENTS.md, Tests): beside the room they test, or in a kind folder for what crosses
 * rooms. A test folder is a room of src/ or one of those kinds, and no test file name is in two folders.
 * A test file's in-process worker comes from useWorkerStack, or the file is in decision 0046's list of files
 * with their own worker, with the reason.
 */

const root = join(__dirname, '..', '..');
/** Folders of test/ that are no room of src/: what crosses rooms, the helpers and the fixtures. */
const kindFolders = ['architecture', 'deploy', 'docs', 'e2e', 'fixtures', 'security', 'support'];
/** The decision whose list names the files that build their worker (or its dependencies) themselves. */
const workerDecision = join(root, 'docs', 'decisions', '0046-tests-beside-their-rooms.md');
/** What building a worker by hand calls (useWorkerStack calls them in test/support/). */
const handBuilt = /\b(startTestWorker|createErrandWorker|testDependencies)\(/;

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

  test("every file that builds its own worker is in decision 0046's list, and the list names no other", () => {
    const text = readFileSync(workerDecision, 'utf8');
    const list = text.slice(text.indexOf('**Files with their own worker, and why.**'));
    const listed = [...list.matchAll(/^- (test\/\S+\.test\.ts):/gm)].map((match) => match[1]).sort();
    const building = testFiles(join(root, 'test')).filter((file) => handBuilt.test(readFileSync(join(root, file), 'utf8'))).sort();
    expect(listed.length).toBeGreaterThan(0);
    expect(building).toEqual(listed);
  });
});

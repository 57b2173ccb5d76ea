import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allDocBlocks, blocksOf, docBlockProblems, projectRoot, shellCommands, type DocBlock } from '../support/doc-blocks';

/**
 * The docs are tests: every command and configuration block of README.md and docs/*.md is run by a test
 * that reads it from the doc, or says why it cannot run here. A new block with neither fails here, and so
 * does a marker that names a test which does not read its block.
 */

function readTestFile(path: string): string | undefined {
  const file = join(projectRoot, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

describe('the docs’ blocks', () => {
  it('are each run by the test their marker names, or say why they cannot run', () => {
    const blocks = allDocBlocks();
    expect(blocks.length).toBeGreaterThan(30);
    expect(docBlockProblems(blocks, readTestFile)).toEqual([]);
  });

  it('finds a copied block with no marker, a marker naming a missing test and one naming a test that does not read it', () => {
    const block = (line: number, marker?: DocBlock['marker']): DocBlock => ({ file: 'docs/x.md', line, language: 'sh', text: 'errand list\n', ...(marker ? { marker } : {}) });
    const tests: Record<string, string> = { 'test/a.test.ts': "docBlock('listed')", 'test/b.test.ts': "docBlock('other'); const copy = 'errand list';" };
    const problems = docBlockProblems(
      [
        block(1),
        { ...block(2), language: 'text' },
        block(3, { kind: 'not-run', reason: 'deploys to AWS' }),
        block(4, { kind: 'runs', id: 'listed', testFile: 'test/a.test.ts', says: 'runs it' }),
        block(5, { kind: 'runs', id: 'copied', testFile: 'test/b.test.ts', says: 'runs it' }),
        block(6, { kind: 'runs', id: 'gone', testFile: 'test/c.test.ts', says: 'runs it' }),
        block(7, { kind: 'runs', id: 'listed', testFile: 'test/a.test.ts', says: 'runs it' }),
      ],
      (path) => tests[path],
    );
    expect(problems).toEqual([
      expect.stringMatching(/^docs\/x\.md:1: a `sh` block with no marker/),
      "docs/x.md:5: test/b.test.ts does not read this block (no docBlock('copied') in it)",
      'docs/x.md:6: the marker names test/c.test.ts, which does not exist',
      'docs/x.md:7: the id "listed" is already used at docs/x.md:4',
    ]);
  });

  it('reads a block with its line and the marker right above it', () => {
    const [quickStart] = blocksOf('README.md').filter((block) => block.marker?.kind === 'runs' && block.marker.id === 'quick-start');
    expect(quickStart).toMatchObject({ file: 'README.md', language: 'sh', marker: { testFile: 'test/e2e/cli.test.ts' } });
    const lines = readFileSync(join(projectRoot, 'README.md'), 'utf8').split('\n');
    expect(lines[(quickStart?.line ?? 0) - 1]).toBe('```sh');
    expect(lines[(quickStart?.line ?? 0) - 2]).toMatch(/^<!-- quick-start: /);
  });

  it('splits a shell block into commands, continuation lines joined and comment lines dropped', () => {
    expect(shellCommands('# a comment\nnpx a --b \\\n  --c d   # why\n\nerrand list\n')).toEqual(['npx a --b --c d   # why', 'errand list']);
  });
});

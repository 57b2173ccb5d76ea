import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolSuccess, type Toolset } from '../../src/tools/tool';
import { createToolsetRegistry, matchesPattern } from '../../src/tools/toolset-registry';
import { createSandbox, type Sandbox } from './fixtures';

const echoToolset: Toolset = {
  name: 'echo',
  description: 'test toolset',
  tools: () =>
    Promise.resolve([
      {
        spec: { name: 'say', description: 'echo', inputSchema: { type: 'object' } },
        run: (args) => Promise.resolve(toolSuccess(JSON.stringify(args))),
      },
    ]),
};

describe('ToolsetRegistry', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await createSandbox();
  });
  afterEach(() => sandbox.cleanup());

  it('qualifies names and filters by allow and deny', async () => {
    const registry = createToolsetRegistry();
    registry.register(echoToolset);
    expect(registry.names()).toEqual(['developer', 'echo']);
    const all = await registry.specsFor(['developer', 'echo']);
    expect(all.map((spec) => spec.name)).toEqual([
      'developer__read_file',
      'developer__write_file',
      'developer__list_directory',
      'developer__search_text',
      'developer__run_command',
      'echo__say',
    ]);
    const readOnly = await registry.specsFor(['developer', 'echo'], { allow: ['developer__*_file', 'developer__search_text'], deny: ['developer__write_file'] });
    expect(readOnly.map((spec) => spec.name)).toEqual(['developer__read_file', 'developer__search_text']);
    const noShell = await registry.specsFor(['developer', 'echo'], { deny: ['developer__run_command', 'echo'] });
    expect(noShell.map((spec) => spec.name)).toHaveLength(4);
    expect((await registry.specsFor(['echo'], { allow: ['echo'] })).map((spec) => spec.name)).toEqual(['echo__say']);
  });

  it('throws a clear error for an unknown toolset and for duplicate registration', async () => {
    const registry = createToolsetRegistry();
    await expect(registry.specsFor(['nope'])).rejects.toThrow('unknown toolset "nope"; registered toolsets: developer');
    expect(() => registry.register({ ...echoToolset, name: 'developer' })).toThrow('toolset "developer" is already registered');
    expect(() => registry.register({ ...echoToolset, name: 'bad__name' })).toThrow('toolset name "bad__name" is invalid');
  });

  it('calls tools by qualified name and answers unknown names with the available tools', async () => {
    const registry = createToolsetRegistry();
    registry.register(echoToolset);
    await writeFile(path.join(sandbox.workingDir, 'f.txt'), 'content');
    expect(await registry.call('developer__read_file', { path: 'f.txt' }, sandbox.context())).toEqual({ content: 'content', isError: false });
    expect(await registry.call('echo__say', { a: 1 }, sandbox.context())).toEqual({ content: '{"a":1}', isError: false });

    const unknown = await registry.call('read_file', {}, sandbox.context());
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toBe(
      'Unknown tool "read_file". Available tools: developer__read_file, developer__write_file, developer__list_directory, developer__search_text, developer__run_command, echo__say.',
    );
    const outOfScope = await registry.call('developer__run_command', { command: 'true' }, sandbox.context(), {
      toolsetNames: ['developer'],
      filter: { deny: ['developer__run_command'] },
    });
    expect(outOfScope).toMatchObject({ isError: true, content: expect.stringMatching(/^Unknown tool "developer__run_command"\. Available tools: developer__read_file,/) });
  });

  it('matches wildcard patterns over whole names', () => {
    expect(matchesPattern('developer__*', 'developer__read_file')).toBe(true);
    expect(matchesPattern('*file', 'developer__read_file')).toBe(true);
    expect(matchesPattern('developer__read', 'developer__read_file')).toBe(false);
    expect(matchesPattern('dev.loper__*', 'developer__x')).toBe(false);
  });
});

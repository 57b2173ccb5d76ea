import { describe, expect, it } from 'vitest';
import { isValidToolsetName, qualifyToolName, splitToolName } from '../../src/tools/tool-name';

describe('qualified tool names', () => {
  it('joins and splits at the first separator', () => {
    expect(qualifyToolName('developer', 'read_file')).toBe('developer__read_file');
    expect(splitToolName('developer__read_file')).toEqual({ toolsetName: 'developer', toolName: 'read_file' });
    expect(splitToolName('github__list__issues')).toEqual({ toolsetName: 'github', toolName: 'list__issues' });
  });

  it('rejects names that are not qualified or toolset names with the separator', () => {
    expect(splitToolName('read_file')).toBeUndefined();
    expect(splitToolName('__read_file')).toBeUndefined();
    expect(splitToolName('developer__')).toBeUndefined();
    expect(isValidToolsetName('my_tools')).toBe(true);
    expect(isValidToolsetName('my__tools')).toBe(false);
    expect(isValidToolsetName('Dev')).toBe(false);
    expect(() => qualifyToolName('a__b', 'x')).toThrow(/toolset name "a__b" is invalid/);
  });
});

import { describe, expect, it } from 'vitest';
import { editDistance, suggestNames } from '../../src/domain/name-suggestions';

describe('suggestNames', () => {
  const names = ['deploy', 'deploy-staging', 'code-review', 'release-notes', 'Docs-Writer'];

  it('finds deploy for the transposition dpeloy (goose finds nothing)', () => {
    expect(suggestNames('dpeloy', names)).toContain('deploy');
  });

  it('matches substrings case-insensitively, best first, at most three', () => {
    expect(suggestNames('DOCS', names)).toEqual(['Docs-Writer']);
    expect(suggestNames('deploy-stage', names)).toEqual(['deploy', 'deploy-staging']);
    expect(suggestNames('e', names).length).toBeLessThanOrEqual(3);
  });

  it('offers nothing for unrelated names', () => {
    expect(suggestNames('zzzzzz', names)).toEqual([]);
  });

  it('counts an adjacent transposition as one edit', () => {
    expect(editDistance('dpeloy', 'deploy')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

import { describe, expect, it } from 'vitest';
import { redactServerPaths } from '../../src/domain/redact-paths';

describe('redactServerPaths', () => {
  it('replaces absolute paths in file system and git messages', () => {
    expect(redactServerPaths("ENOENT: no such file or directory, open '/srv/errand/tenants/acme/.goose/recipes/x.yaml'")).toBe("ENOENT: no such file or directory, open '<server path>'");
    expect(redactServerPaths('refused: symlink leaves the store (points to /etc/hostname); only links inside /var/lib/errand/recipes are followed')).toBe(
      'refused: symlink leaves the store (points to <server path>); only links inside <server path> are followed',
    );
    expect(redactServerPaths('fatal: cannot chdir to C:\\errand\\cache: no such folder')).toBe('fatal: cannot chdir to <server path> no such folder');
  });

  it('replaces file:// URLs and the credentials of any URL, and keeps the rest of a URL', () => {
    expect(redactServerPaths('git file:///srv/repos/recipes.git @ main: git fetch failed')).toBe('git file://<server path> @ main: git fetch failed');
    expect(redactServerPaths('git https://bot:ghp_secret@github.com/acme/recipes.git @ main')).toBe('git https://<credentials>@github.com/acme/recipes.git @ main');
    expect(redactServerPaths('S3 s3://acme-recipes/team/: listing failed at http://127.0.0.1:8333/acme-recipes')).toBe('S3 s3://acme-recipes/team/: listing failed at http://127.0.0.1:8333/acme-recipes');
  });

  it('leaves relative paths, labels and ordinary text alone', () => {
    const text = 'project .goose/recipes: sub/deploy.yaml ("deploy") is hidden by user ~/.goose/recipes: deploy.yaml — and/or 3/4 of it';
    expect(redactServerPaths(text)).toBe(text);
  });
});

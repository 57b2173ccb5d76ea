import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxSourceFileBytes } from '../../src/contracts/limits';
import { SharedSources } from '../../src/sources/shared-sources';
import { findWorkflowScript, workflowNameProblem } from '../../src/sources/workflow-sources';
import { createGitRepository } from '../support/git-repo';
import { startS3Server, type S3TestServer } from '../support/s3-server';

/** Workflow scripts as sources (SEMANTICS §7): `.claude/workflows/<name>.js` in the operator's stores, the project, the user's home. */

let s3: S3TestServer;

beforeAll(async () => {
  s3 = await startS3Server();
}, 60_000);

afterAll(async () => {
  await s3?.stop();
});

function write(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

function folders(): { root: string; home: string; work: string; operator: string } {
  const base = mkdtempSync(join(tmpdir(), 'errand-wf-sources-'));
  const root = join(base, 'root');
  const work = join(root, 'tenant-a');
  const home = join(base, 'home');
  const operator = join(base, 'operator');
  for (const folder of [root, work, home, operator]) mkdirSync(folder, { recursive: true });
  return { root, home, work, operator };
}

describe('workflow scripts as sources', () => {
  it('searches the operator store, then the project, then the user home; the operator wins a shared name', async () => {
    const { root, home, work, operator } = folders();
    write(operator, { '.claude/workflows/sweep.js': '// operator sweep\nreturn 1;' });
    write(work, { '.claude/workflows/sweep.js': '// project sweep\nreturn 2;', '.claude/workflows/migrate.mjs': '// project migrate\nreturn 3;' });
    write(home, { '.claude/workflows/research.js': '// user research\nreturn 4;' });
    const sources = new SharedSources({ workingRoot: root, homeDirectory: home, aliases: {}, configured: [{ type: 'directory', path: operator }] });
    const places = sources.workflowPlacesFor(work);
    expect(places.map((place) => place.label)).toEqual(['configured store 1 (directory operator) .claude/workflows', 'project .claude/workflows', 'user ~/.claude/workflows']);
    const sweep = await findWorkflowScript('sweep', places);
    expect(sweep.ok && sweep.script).toMatchObject({ name: 'sweep', content: '// operator sweep\nreturn 1;', from: 'configured store 1 (directory operator) .claude/workflows', file: 'sweep.js' });
    expect(sweep.ok && sweep.script.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const migrate = await findWorkflowScript('migrate', places);
    expect(migrate.ok && migrate.script).toMatchObject({ from: 'project .claude/workflows', file: 'migrate.mjs' });
    const research = await findWorkflowScript('research', places);
    expect(research.ok && research.script.from).toBe('user ~/.claude/workflows');
  });

  it('names the name, the places searched and the workflows found when a name is unknown or invalid', async () => {
    const { root, home, work } = folders();
    write(work, { '.claude/workflows/sweep.js': 'return 1;', '.claude/workflows/notes.txt': 'not a script' });
    const places = new SharedSources({ workingRoot: root, homeDirectory: home, aliases: {} }).workflowPlacesFor(work);
    const missing = await findWorkflowScript('swep', places);
    expect(missing).toEqual({
      ok: false,
      known: ['sweep'],
      message: 'no workflow named "swep" (a workflow is a file .claude/workflows/<name>.js; searched: project .claude/workflows, user ~/.claude/workflows); workflows found: sweep',
    });
    expect(workflowNameProblem('../escape')).toContain('"../escape" is not a workflow name');
    const invalid = await findWorkflowScript('../escape', places);
    expect(invalid.ok).toBe(false);
    expect(!invalid.ok && invalid.message).toContain('is not a workflow name');
  });

  it('refuses a link in the project folder and a file over the size limit, naming them', async () => {
    const { root, home, work } = folders();
    const outside = mkdtempSync(join(tmpdir(), 'errand-wf-outside-'));
    write(outside, { 'secret.js': 'return "secret";' });
    mkdirSync(join(work, '.claude', 'workflows'), { recursive: true });
    symlinkSync(join(outside, 'secret.js'), join(work, '.claude', 'workflows', 'linked.js'));
    write(work, { '.claude/workflows/huge.js': `// ${'x'.repeat(maxSourceFileBytes)}` });
    const places = new SharedSources({ workingRoot: root, homeDirectory: home, aliases: {} }).workflowPlacesFor(work);
    const linked = await findWorkflowScript('linked', places);
    expect(!linked.ok && linked.message).toBe('workflow "linked" cannot be read: project .claude/workflows: refused: linked.js is a symbolic link (or changed into one), which is not followed here');
    const huge = await findWorkflowScript('huge', places);
    expect(!huge.ok && huge.message).toMatch(/^workflow "huge" cannot be read: project \.claude\/workflows: huge\.js: refused: file is 1\.0 MiB, over the 1\.0 MiB limit for sources$/);
    // A linked workflow folder is refused as a whole.
    const { root: root2, home: home2, work: work2 } = folders();
    mkdirSync(join(work2, '.claude'), { recursive: true });
    mkdirSync(join(outside, 'workflows'));
    symlinkSync(join(outside, 'workflows'), join(work2, '.claude', 'workflows'));
    const folderLink = await findWorkflowScript('secret', new SharedSources({ workingRoot: root2, homeDirectory: home2, aliases: {} }).workflowPlacesFor(work2));
    expect(!folderLink.ok && folderLink.message).toContain('refused: the workflow folder is a symbolic link');
  });

  it('reads a git-synced store and an S3 prefix by name', async () => {
    const { root, home, work } = folders();
    const repository = createGitRepository({ 'recipes/.claude/workflows/from-git.js': '// from git\nreturn "git";' });
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await client.send(new CreateBucketCommand({ Bucket: 'errand-workflows' }));
    await client.send(new PutObjectCommand({ Bucket: 'errand-workflows', Key: 'team/.claude/workflows/from-s3.js', Body: '// from s3\nreturn "s3";' }));
    client.destroy();
    const sources = new SharedSources({
      workingRoot: root,
      homeDirectory: home,
      aliases: {},
      gitCacheDirectory: mkdtempSync(join(tmpdir(), 'errand-wf-git-cache-')),
      configured: [
        { type: 'git', url: repository.url, ref: 'main', subfolder: 'recipes' },
        { type: 's3', bucket: 'errand-workflows', prefix: 'team', endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } },
      ],
    });
    const places = sources.workflowPlacesFor(work);
    // A git store checks out at its first listing; the workflow place reads through the store.
    const fromGit = await findWorkflowScript('from-git', places);
    expect(fromGit.ok && fromGit.script).toMatchObject({ content: '// from git\nreturn "git";', file: 'from-git.js' });
    const fromS3 = await findWorkflowScript('from-s3', places);
    expect(fromS3.ok && fromS3.script).toMatchObject({ content: '// from s3\nreturn "s3";', from: 'S3 s3://errand-workflows/team/ .claude/workflows' });
  });
});

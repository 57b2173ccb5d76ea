import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentMemory, excerpt, isAgentMemoryConflict, memoryFolderKey, memoryLocationFor, memoryPath } from '../../src/activities/agent-memory';
import { LocalBlobStore, type BlobStore } from '../../src/activities/blob-store';
import { agentMemoryPromptMaxBytes, agentMemoryPromptMaxLines, agentMemoryWriteAttempts } from '../../src/contracts/limits/memory';
import { memoryToolSpecs, runMemoryTool } from '../../src/activities/memory-tools';
import { memorySettingsFromEnv } from '../../src/settings/memory-settings';
import { findSkills, FolderSkillPlace, projectSkillPlace } from '../../src/sources/skill-sources';
import { SharedSources } from '../../src/sources/shared-sources';

/**
 * An agent's memory folder on a real blob store folder, and skill lookup on real folders (decision 0031):
 * keys built only from plain segments, revisions that never lose a racing write, MEMORY.md's start within
 * 200 lines and 25 KB, memory tools that reach nothing but the folder, and skills found in search order
 * with links refused and unknown names reported with what exists.
 */

let root: string;
let blobs: LocalBlobStore;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'errand-agent-memory-'));
  blobs = new LocalBlobStore(join(root, 'blobs'));
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const signal = new AbortController().signal;

describe('memory locations', () => {
  it('user memory is per tenant and agent; project and local add a hash of the working directory below the working root', () => {
    const user = memoryLocationFor({ tenant: 'acme', scope: 'user', agent: 'reviewer', workingDir: '/srv/tenants/acme/api', workingRoot: '/srv/tenants', file: 'a.md' });
    expect(user).toEqual({ tenant: 'acme', scope: 'user', agent: 'reviewer' });
    expect(memoryFolderKey(user)).toBe('agent-memory/acme/user/reviewer');
    const project = memoryLocationFor({ tenant: 'acme', scope: 'project', agent: 'reviewer', workingDir: '/srv/tenants/acme/api', workingRoot: '/srv/tenants', file: 'a.md' });
    // The same working directory on another mount of the working root is the same project.
    const elsewhere = memoryLocationFor({ tenant: 'acme', scope: 'project', agent: 'reviewer', workingDir: '/mnt/w/acme/api/', workingRoot: '/mnt/w', file: 'a.md' });
    expect(elsewhere.project).toBe(project.project);
    const other = memoryLocationFor({ tenant: 'acme', scope: 'project', agent: 'reviewer', workingDir: '/srv/tenants/acme/web', workingRoot: '/srv/tenants', file: 'a.md' });
    expect(other.project).not.toBe(project.project);
    const local = memoryLocationFor({ tenant: 'acme', scope: 'local', agent: 'reviewer', workingDir: '/srv/tenants/acme/api', workingRoot: '/srv/tenants', file: 'a.md' });
    expect(memoryFolderKey(local)).toBe(`agent-memory/acme/local/${project.project ?? ''}/reviewer`);
    expect(memoryFolderKey({ scope: 'user', agent: 'reviewer' })).toBe('agent-memory/_none/user/reviewer');
  });

  it('refuses an agent name, tenant or project that is not one plain segment, naming the file and field', () => {
    for (const agent of ['../globex/user/reviewer', 'a/b', '.hidden', 'two words', '', 'x'.repeat(65)]) {
      expect(() => memoryLocationFor({ tenant: 'acme', scope: 'user', agent, workingDir: '/w', file: 'agents/x.md' })).toThrow(/^agents\/x\.md: memory: the agent name .* cannot name a memory folder/);
    }
    // A location from a forged workflow input is checked again where the key is built.
    expect(() => memoryFolderKey({ tenant: '../globex', scope: 'user', agent: 'reviewer' })).toThrow(/tenant "\.\.\/globex" cannot name a memory folder/);
    expect(() => memoryFolderKey({ tenant: 'acme', scope: 'project', project: '../../globex', agent: 'reviewer' })).toThrow(/not a project key/);
    expect(() => memoryFolderKey({ tenant: 'acme', scope: 'user', agent: 'a/../../globex' })).toThrow(/cannot name a memory folder/);
  });

  it('takes paths under memory/ (or without it) and refuses anything that climbs, is absolute or hidden', () => {
    expect(memoryPath('memory/MEMORY.md')).toBe('MEMORY.md');
    expect(memoryPath('MEMORY.md')).toBe('MEMORY.md');
    expect(memoryPath('./memory/topics/api.md')).toBe('topics/api.md');
    for (const bad of ['memory/../x.md', '../x', '/etc/passwd', 'memory/.env', 'memory/a//b', 'memory/', 'a/@0000000001', 'a b.md', 'memory\\..\\x']) {
      expect(() => memoryPath(bad)).toThrow(/memory folder/);
    }
  });
});

describe('memory folders on the blob store', () => {
  it('writes, reads, edits and lists; a rewrite is a new revision, the same content none; racing writes all land', async () => {
    const memory = new AgentMemory(blobs, { tenant: 'acme', scope: 'user', agent: 'writer' });
    expect(await memory.read('memory/MEMORY.md')).toBeUndefined();
    expect(await memory.list()).toEqual([]);
    await memory.write('memory/MEMORY.md', 'one');
    await memory.write('memory/MEMORY.md', 'two');
    await memory.write('memory/MEMORY.md', 'two');
    await memory.write('memory/topics/api.md', 'plural nouns');
    expect(await memory.read('MEMORY.md')).toBe('two');
    expect(await memory.list()).toEqual(['MEMORY.md', 'topics/api.md']);
    expect(await blobs.list('agent-memory/acme/user/writer/f/MEMORY.md/')).toEqual(['agent-memory/acme/user/writer/f/MEMORY.md/@0000000001', 'agent-memory/acme/user/writer/f/MEMORY.md/@0000000002']);
    // Five writers at once: each gets a revision of its own (the store refuses a second body under one key).
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((text) => new AgentMemory(blobs, { tenant: 'acme', scope: 'user', agent: 'writer' }).write('race.md', text)));
    expect(await blobs.list('agent-memory/acme/user/writer/f/race.md/')).toHaveLength(5);
  });

  it('parallel edits of one file all land: each writes the revision after the one it read, and reads again when another took it', async () => {
    const location = { tenant: 'acme', scope: 'user' as const, agent: 'editors' };
    // As many editors as an edit has attempts (agentMemoryWriteAttempts): each round one of them lands, so the last
    // one lands at its last attempt at worst. More at once may be told to read again and retry.
    const lines = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].slice(0, agentMemoryWriteAttempts);
    expect((await runMemoryTool(blobs, location, 'memory__write', { path: 'memory/MEMORY.md', content: lines.join('\n') }, signal)).isError).toBe(false);
    const edits = await Promise.all(lines.map((line) => runMemoryTool(blobs, location, 'memory__edit', { path: 'memory/MEMORY.md', old_text: line, new_text: line.toUpperCase() }, signal)));
    expect(edits.map((edit) => edit.isError)).toEqual(lines.map(() => false));
    expect(await new AgentMemory(blobs, location).read('MEMORY.md')).toBe(lines.map((line) => line.toUpperCase()).join('\n'));
  });

  it('a write based on a revision that another write already followed is a conflict, not a silent overwrite', async () => {
    const memory = new AgentMemory(blobs, { tenant: 'acme', scope: 'user', agent: 'swapper' });
    await memory.write('notes.md', 'first', { basedOn: 0 });
    await memory.write('notes.md', 'second', { basedOn: 1 });
    await expect(memory.write('notes.md', 'lost update', { basedOn: 1 })).rejects.toSatisfy(isAgentMemoryConflict);
    await memory.write('notes.md', 'second', { basedOn: 1 });
    expect(await memory.readRevision('notes.md')).toEqual({ revision: 2, content: 'second' });
  });

  it('a write keeps the last ERRAND_MEMORY_REVISIONS_KEPT revisions of the file (10 unless set); a write that lands behind a later revision takes it back and writes again', async () => {
    const location = { tenant: 'acme', scope: 'user' as const, agent: 'keeper' };
    const folder = 'agent-memory/acme/user/keeper/f/log.md/';
    for (let revision = 1; revision <= 12; revision += 1) await new AgentMemory(blobs, location).write('log.md', `entry ${revision}`);
    expect((await blobs.list(folder)).map((key) => Number(key.slice(folder.length + 1)))).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(memorySettingsFromEnv({}).revisionsKept).toBe(10);
    expect(memorySettingsFromEnv({ ERRAND_MEMORY_REVISIONS_KEPT: '2' }).revisionsKept).toBe(2);
    for (const value of ['0', '1001', 'ten']) {
      expect(() => memorySettingsFromEnv({ ERRAND_MEMORY_REVISIONS_KEPT: value })).toThrow(new RegExp(`ERRAND_MEMORY_REVISIONS_KEPT="${value}" is not valid: use a whole number from 1 to 1000`));
    }
    // A writer reads revision 12 and puts 13; before its put lands, others have gone on to revision 20 (and
    // pruned what 13 was): its revision 13 would lie behind the latest, so it takes it back and writes 21.
    const ahead: BlobStore = {
      get: (key) => blobs.get(key),
      list: (prefix) => blobs.list(prefix),
      delete: (key) => blobs.delete(key),
      put: async (key, body) => {
        if (key === `${folder}@0000000013`) await blobs.put(`${folder}@0000000020`, 'written meanwhile');
        return blobs.put(key, body);
      },
    };
    await new AgentMemory(ahead, location, { revisionsKept: 2 }).write('log.md', 'after the others');
    expect(await new AgentMemory(blobs, location).readRevision('log.md')).toEqual({ revision: 21, content: 'after the others' });
    expect((await blobs.list(folder)).map((key) => Number(key.slice(folder.length + 1)))).toEqual([20, 21]);
  });

  it('puts the first 200 lines, at most 25 KB, of MEMORY.md into the prompt and says when there is more', async () => {
    const lines = Array.from({ length: 250 }, (_, index) => `line ${index + 1}`);
    const cut = excerpt(lines.join('\n'));
    expect(cut.text.split('\n')).toHaveLength(agentMemoryPromptMaxLines);
    expect(cut.truncated).toBe(true);
    const wide = excerpt(Array.from({ length: 100 }, () => 'x'.repeat(1000)).join('\n'));
    expect(Buffer.byteLength(wide.text, 'utf8')).toBeLessThanOrEqual(agentMemoryPromptMaxBytes);
    expect(wide.truncated).toBe(true);
    expect(excerpt('short\n')).toEqual({ text: 'short', truncated: false });
  });

  it('memory tools reach the folder and nothing else: bad paths are error results that say what is valid', async () => {
    const location = { tenant: 'acme', scope: 'user' as const, agent: 'tooler' };
    expect(memoryToolSpecs.map((spec) => spec.name)).toEqual(['memory__read', 'memory__write', 'memory__edit', 'memory__list']);
    expect((await runMemoryTool(blobs, location, 'memory__write', { path: 'memory/MEMORY.md', content: 'use tabs\nuse tabs' }, signal)).isError).toBe(false);
    const twice = await runMemoryTool(blobs, location, 'memory__edit', { path: 'memory/MEMORY.md', old_text: 'use tabs', new_text: 'use spaces' }, signal);
    expect(twice).toEqual({ isError: true, content: 'old_text occurs more than once in memory/MEMORY.md; include more of the surrounding text so it is unique' });
    expect((await runMemoryTool(blobs, location, 'memory__edit', { path: 'MEMORY.md', old_text: 'use tabs\nuse tabs', new_text: 'use spaces' }, signal)).isError).toBe(false);
    expect(await runMemoryTool(blobs, location, 'memory__read', { path: 'memory/MEMORY.md' }, signal)).toEqual({ isError: false, content: 'use spaces' });
    expect(await runMemoryTool(blobs, location, 'memory__list', {}, signal)).toEqual({ isError: false, content: 'memory/MEMORY.md' });
    const climb = await runMemoryTool(blobs, location, 'memory__read', { path: 'memory/../../writer/f/MEMORY.md/@0000000002' }, signal);
    expect(climb.isError).toBe(true);
    expect(climb.content).toMatch(/is not a path inside the memory folder; use a relative path such as memory\/MEMORY\.md/);
    const missing = await runMemoryTool(blobs, location, 'memory__read', { path: 'memory/notes.md' }, signal);
    expect(missing).toEqual({ isError: true, content: 'memory/notes.md does not exist; list your memory folder with memory__list' });
  });
});

describe('skills', () => {
  it('finds each skill in search order, reports unknown names with the skills found, and refuses a linked skill folder', async () => {
    const work = join(root, 'work', 'acme', 'api');
    const operator = join(root, 'operator-skills');
    for (const [folder, name, text] of [[join(work, '.claude', 'skills'), 'api-conventions', 'project version'], [join(work, '.claude', 'skills'), 'testing', 'project testing'], [operator, 'api-conventions', 'operator version']] as const) {
      mkdirSync(join(folder, name), { recursive: true });
      writeFileSync(join(folder, name, 'SKILL.md'), text);
    }
    const places = [new FolderSkillPlace(operator, 'operator skills'), projectSkillPlace(work, join(root, 'work'))];
    const found = await findSkills(['api-conventions', 'testing'], places, 'agents/x.md');
    expect(found).toEqual({ ok: true, skills: [{ name: 'api-conventions', from: 'operator skills', content: 'operator version' }, { name: 'testing', from: 'project .claude/skills', content: 'project testing' }] });
    const unknown = await findSkills(['deploy'], places, 'agents/x.md');
    expect(unknown).toEqual({
      ok: false,
      message: 'agents/x.md: skills: no skill named "deploy" (a skill is a folder .claude/skills/<name>/ with a SKILL.md; searched: operator skills, project .claude/skills); skills found: api-conventions, testing',
    });
    // A skill folder that is a link (to another tenant's folder, say) is refused, not followed.
    const elsewhere = join(root, 'work', 'globex', 'secret-skill');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'SKILL.md'), 'GLOBEX SECRET');
    symlinkSync(elsewhere, join(work, '.claude', 'skills', 'borrowed'));
    const linked = await findSkills(['borrowed'], [projectSkillPlace(work, join(root, 'work'))], 'agents/x.md');
    expect(linked.ok).toBe(false);
    expect(!linked.ok && linked.message).toMatch(/^agents\/x\.md: skills: skill "borrowed" cannot be read: project \.claude\/skills: refused: borrowed is a symbolic link/);
    expect(JSON.stringify(linked)).not.toContain('GLOBEX SECRET');
    expect(readdirSync(join(work, '.claude', 'skills')).sort()).toEqual(['api-conventions', 'borrowed', 'testing']);
  });

  it("a worker's resolver looks in the operator's configured stores, then the project, then the user's folder", async () => {
    const workRoot = join(root, 'shared-work');
    const project = join(workRoot, 'acme');
    const operator = join(root, 'operator-store');
    const home = join(root, 'home');
    const skill = (folder: string, name: string, text: string) => {
      mkdirSync(join(folder, '.claude', 'skills', name), { recursive: true });
      writeFileSync(join(folder, '.claude', 'skills', name, 'SKILL.md'), text);
    };
    skill(operator, 'style', 'operator style');
    skill(project, 'style', 'project style');
    skill(project, 'layout', 'project layout');
    skill(home, 'style', 'user style');
    skill(home, 'habits', 'user habits');
    const sources = new SharedSources({ configured: [{ type: 'directory', path: operator }], workingRoot: workRoot, homeDirectory: home, aliases: {} });
    const places = sources.resolverFor(project).skillPlaces;
    expect(places.map((place) => place.label)).toEqual(['configured store 1 (directory operator-store) .claude/skills', 'project .claude/skills', 'user ~/.claude/skills']);
    const found = await findSkills(['style', 'layout', 'habits'], places, 'agents/x.md');
    expect(found.ok && found.skills.map((entry) => `${entry.name}: ${entry.content} (${entry.from})`)).toEqual([
      'style: operator style (configured store 1 (directory operator-store) .claude/skills)',
      'layout: project layout (project .claude/skills)',
      'habits: user habits (user ~/.claude/skills)',
    ]);
  });
});

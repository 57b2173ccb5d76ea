import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { AgentMemory } from '../../src/activities/agent-memory';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { attack, startAttackStack, type AttackStack } from './attack-stack';

/**
 * Attacks on agent memory and skills (decision 0031). Tenant globex's `reviewer` agent has a memory folder
 * in errand's data store holding a confidential note; tenant acme writes agent files of its own (its
 * repository is its to write) and prompts its model, trying to read or overwrite globex's memory: by an
 * agent name that climbs out of its folder, by memory-tool paths that climb, and by a skill folder that is
 * a link into globex's working folder. And the memory tools must not reach the working directory.
 */

let stack: AttackStack;
const globexSecret = `GLOBEX-MEMORY-${randomBytes(8).toString('hex')}`;
const globexSkill = `GLOBEX-SKILL-${randomBytes(8).toString('hex')}`;
let blobs: LocalBlobStore;
const globexMemory = { tenant: 'globex', scope: 'user' as const, agent: 'reviewer' };

function agent(name: string, extra: string[]): string {
  return ['---', `name: ${JSON.stringify(name)}`, 'description: Reviews.', ...extra, '---', 'You review.', ''].join('\n');
}

beforeAll(async () => {
  stack = await startAttackStack();
  blobs = new LocalBlobStore(join(stack.dataDir, 'blobs'));
  await new AgentMemory(blobs, globexMemory).write('memory/MEMORY.md', `${globexSecret}\n`);
  const acmeAgents = join(stack.tenantDir('acme'), '.claude', 'agents');
  mkdirSync(acmeAgents, { recursive: true });
  writeFileSync(join(acmeAgents, 'climber.md'), agent('../../globex/user/reviewer', ['memory: user']));
  writeFileSync(join(acmeAgents, 'reviewer.md'), agent('reviewer', ['memory: user']));
  writeFileSync(join(acmeAgents, 'borrower.md'), agent('borrower', ['skills: [borrowed]']));
  // globex's working folder holds a skill of its own; acme links its skill folder to it.
  const globexSkills = join(stack.tenantDir('globex'), '.claude', 'skills', 'internal');
  mkdirSync(globexSkills, { recursive: true });
  writeFileSync(join(globexSkills, 'SKILL.md'), `${globexSkill}\n`);
  mkdirSync(join(stack.tenantDir('acme'), '.claude', 'skills'), { recursive: true });
  symlinkSync(globexSkills, join(stack.tenantDir('acme'), '.claude', 'skills', 'borrowed'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function start(source: string): Promise<{ status: number; text: string }> {
  const response = await stack.request('/v1/delegations', { tenant: 'acme', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source, instructions: 'Review.' }) });
  return { status: response.status, text: await response.text() };
}

describe("another tenant's agent memory", () => {
  attack("an agent name that climbs out of the tenant's memory folders is refused", async () => {
    const answer = await start('../../globex/user/reviewer');
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('memory: the agent name \\"../../globex/user/reviewer\\" cannot name a memory folder');
    expect(answer.text).not.toContain(globexSecret);
    expect(await new AgentMemory(blobs, globexMemory).read('MEMORY.md')).toBe(`${globexSecret}\n`);
  });

  attack('memory tool paths that climb, or are absolute, reach nothing outside its own memory folder', async () => {
    const outcome = await stack.runAttack('acme', 'memory-climb', [
      { name: 'memory__read', arguments: { path: 'memory/../../../globex/user/reviewer/f/MEMORY.md/@0000000001' } },
      { name: 'memory__read', arguments: { path: '../globex/user/reviewer/f/MEMORY.md' } },
      { name: 'memory__read', arguments: { path: join(stack.dataDir, 'blobs', 'agent-memory', 'globex', 'user', 'reviewer', 'f', 'MEMORY.md', '@0000000001') } },
      { name: 'memory__write', arguments: { path: 'memory/../../../../globex/user/reviewer/f/MEMORY.md/@0000000002', content: 'overwritten by acme' } },
      { name: 'memory__list', arguments: {} },
    ], { source: 'reviewer' });
    expect(outcome.status).toBe('completed');
    const [climb, relative, absolute, write, list] = outcome.results;
    for (const refused of [climb, relative, absolute, write]) {
      expect(refused?.isError).toBe(true);
      expect(refused?.content).toMatch(/is not a path inside the memory folder/);
    }
    // (the last result carries the turn-budget note after it)
    expect(list?.content).toMatch(/^Your memory folder is empty\./);
    expect(JSON.stringify(outcome.requests)).not.toContain(globexSecret);
    // globex's memory is as it was: one revision, its own text.
    expect(await blobs.list('agent-memory/globex/')).toEqual(['agent-memory/globex/user/reviewer/f/MEMORY.md/@0000000001']);
    expect(await new AgentMemory(blobs, globexMemory).read('MEMORY.md')).toBe(`${globexSecret}\n`);
  });

  attack('memory tools do not reach the working directory, and what they write is not put there', async () => {
    writeFileSync(join(stack.tenantDir('acme'), 'MEMORY.md'), 'a file of the working directory');
    const outcome = await stack.runAttack('acme', 'memory-workdir', [
      { name: 'memory__read', arguments: { path: 'memory/MEMORY.md' } },
      { name: 'memory__write', arguments: { path: 'memory/notes.md', content: 'kept in the data store' } },
    ], { source: 'reviewer' });
    const [read, write] = outcome.results;
    expect(read?.isError).toBe(true);
    expect(read?.content).toBe('memory/MEMORY.md does not exist; list your memory folder with memory__list');
    expect(write?.isError ?? false).toBe(false);
    expect(write?.content).toMatch(/^Wrote memory\/notes\.md \(22 bytes\)/);
    expect(existsSync(join(stack.tenantDir('acme'), 'memory'))).toBe(false);
    expect(readdirSync(stack.tenantDir('acme')).filter((name) => name.includes('notes'))).toEqual([]);
    expect(await new AgentMemory(blobs, { tenant: 'acme', scope: 'user', agent: 'reviewer' }).read('notes.md')).toBe('kept in the data store');
  });
});

describe("another tenant's skills", () => {
  attack("a skill folder linked into another tenant's folder is refused, not followed", async () => {
    const answer = await start('borrower');
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('skills: skill \\"borrowed\\" cannot be read: project .claude/skills: refused: borrowed is a symbolic link');
    expect(answer.text).not.toContain(globexSkill);
    expect(answer.text).not.toContain(stack.root);
  });
});

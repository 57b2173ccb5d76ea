import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attack, startAttackStack, type AttackStack, type Tenant } from './attack-stack';

/**
 * Attacks on where sources come from. The operator configures a store holding `find-todos`; a tenant's
 * model (or a repository it cloned) writes a recipe of the same name into the tenant's own
 * `.goose/recipes`, which needs no approval, hoping its file runs in place of the operator's. And the
 * source listings a tenant reads must not tell it where the server keeps anything.
 */

let stack: AttackStack;
/** The operator's store: a folder outside every tenant's. */
let operatorDir: string;

function recipe(description: string, script: string): string {
  return ['version: 1.0.0', `title: ${description}`, `description: ${description}`, `instructions: You are the ${description} recipe.`, `prompt: "Find the TODO comments. [script:${script}]"`, ''].join('\n');
}

beforeAll(async () => {
  operatorDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-operator-recipes-')));
  writeFileSync(join(operatorDir, 'find-todos.yaml'), recipe('OPERATOR find-todos', 'operator-find-todos'));
  // A link out of the store: refused, and the refusal must not name the server's folders.
  symlinkSync('/etc/hostname', join(operatorDir, 'outside.yaml'));
  stack = await startAttackStack({ extraEnv: { ERRAND_STORES: JSON.stringify([{ type: 'directory', path: operatorDir }]), ERRAND_MAX_DEPTH: '2' } });
  stack.scripts.add('operator-find-todos', () => ({ text: 'the operator recipe ran' }));
  stack.scripts.add('tenant-find-todos', () => ({ text: 'the tenant recipe ran' }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (operatorDir) rmSync(operatorDir, { recursive: true, force: true });
});

async function sources(tenant: Tenant, path = '/v1/sources?refresh=true'): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const response = await stack.request(path, { tenant });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

/** Fails when a text names a folder of the server. */
function expectNoServerPath(text: string, what: string): void {
  for (const folder of [stack.root, operatorDir, tmpdir(), '/etc/hostname']) expect(text.includes(folder), `${what} names ${folder}`).toBe(false);
}

describe('source shadowing', () => {
  attack("a tenant's repository recipe named like the operator's cannot replace it", async () => {
    const outcome = await stack.runAttack('acme', 'shadow-operator-recipe', [
      { name: 'developer__write_file', arguments: { path: '.goose/recipes/find-todos.yaml', content: recipe('TENANT find-todos', 'tenant-find-todos') } },
      { name: 'load', arguments: {} },
      { name: 'load', arguments: { source: 'find-todos' } },
      { name: 'delegate', arguments: { source: 'find-todos', description: 'find the TODOs' } },
    ]);
    expect(outcome.status).toBe('completed');
    const [written, listing, loaded, delegated] = outcome.results.map((result) => result.content);
    // The file was written: the attempt was real.
    expect(outcome.results[0]?.isError).toBeFalsy();
    expect(written).not.toMatch(/refused|denied/i);
    // The model sees the operator's recipe, and is told that the project's file is hidden.
    expect(loaded).toContain('OPERATOR find-todos');
    expect(loaded).not.toContain('TENANT find-todos');
    expect(loaded).toMatch(/Note: project \.goose\/recipes: find-todos\.yaml \("find-todos"\) is hidden by configured store 1 .*the operator's stores win over project folders/);
    expect(listing).toContain('Hidden by a source of the same name:');
    expect(listing).toContain("project .goose/recipes: find-todos.yaml (\"find-todos\") is hidden by configured store 1");
    // The delegation runs the operator's recipe; the tenant's file never reached a model.
    expect(delegated).toContain('the operator recipe ran');
    expect(stack.scripts.of('tenant-find-todos')).toEqual([]);
    expect(stack.scripts.of('operator-find-todos').length).toBeGreaterThan(0);
    // The API says the same to acme, and globex (whose folder has no such file) is not told about it.
    const acme = await sources('acme');
    expect(acme.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'find-todos', description: 'OPERATOR find-todos' })]));
    expect(acme.body.shadowed).toEqual([expect.stringMatching(/^project \.goose\/recipes: find-todos\.yaml .* the operator's stores win over project folders$/)]);
    const started = await stack.request('/v1/delegations?wait=20s', { tenant: 'acme', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'find-todos' }) });
    const body = (await started.json()) as { result?: { output?: string } };
    expect(started.status).toBe(201);
    expect(body.result?.output).toBe('the operator recipe ran');
    // The worker still serves another tenant.
    const globex = await stack.runAttack('globex', 'after-shadowing', [{ name: 'load', arguments: { source: 'find-todos' } }]);
    expect(globex.status).toBe('completed');
    expect(globex.results[0]?.content).toContain('OPERATOR find-todos');
    expect(globex.results[0]?.content).not.toContain('Note:');
    expect((await sources('globex')).body.shadowed).toEqual([]);
  }, 60_000);
});

describe('server paths', () => {
  attack('the source listings and lookups leak no server path', async () => {
    mkdirSync(join(stack.tenantDir('acme'), '.claude', 'agents'), { recursive: true });
    // A link the tenant made out of its own folder: refused, with a message about the link only.
    symlinkSync('/etc/hostname', join(stack.tenantDir('acme'), '.claude', 'agents', 'stolen.md'));
    const answers = [
      await sources('acme'),
      await sources('acme', '/v1/sources/find-todos'),
      await sources('acme', '/v1/sources/find-todo'),
      await sources('globex'),
    ];
    const model = await stack.runAttack('acme', 'listing-paths', [{ name: 'load', arguments: {} }, { name: 'load', arguments: { source: 'find-todos' } }]);
    for (const [index, answer] of answers.entries()) expectNoServerPath(answer.text, `answer ${index + 1}`);
    for (const result of model.results) expectNoServerPath(result.content, 'a load result');
    const [listing, found, unknown] = answers;
    expect(listing?.status).toBe(200);
    expect(found?.status).toBe(200);
    expect(unknown?.status).toBe(404);
    // The refusals are reported (the attempt was real), worded with store labels.
    expect(listing?.body.problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^configured store 1 \(directory errand-operator-recipes-\w+\): outside\.yaml: refused/),
      expect.stringMatching(/^project \.claude\/agents: stolen\.md: skipped: a symbolic link/),
    ]));
    expect(listing?.body.searched).toEqual(expect.arrayContaining([expect.stringMatching(/^configured store 1 /), 'working directory', 'project .goose/recipes']));
    expect(found?.body.store).toEqual({ id: expect.stringMatching(/^dir:configured store 1 /), description: expect.stringMatching(/^configured store 1 /) });
  }, 60_000);
});

describe('one source lookup', () => {
  it("the API and a delegation's load() find the same sources in a tenant's folder", async () => {
    mkdirSync(join(stack.tenantDir('globex'), '.goose', 'recipes'), { recursive: true });
    writeFileSync(join(stack.tenantDir('globex'), '.goose', 'recipes', 'globex-own.yaml'), recipe('globex own', 'globex-own'));
    stack.scripts.add('globex-own', () => ({ text: 'globex own recipe ran' }));
    const listed = (await sources('globex')).body.items as { name: string; kind: string }[];
    expect(listed.map((item) => item.name).sort()).toEqual(['find-todos', 'globex-own']);
    const outcome = await stack.runAttack('globex', 'same-sources', [{ name: 'load', arguments: {} }]);
    const listing = outcome.results[0]?.content ?? '';
    const seen = [...listing.matchAll(/^- ([\w.-]+) \[(recipe|agent|subrecipe)\]/gm)].map((match) => match[1]).sort();
    expect(seen).toEqual(listed.map((item) => item.name).sort());
    // A tenant's own recipe starts through the API as it does from a session.
    const started = await stack.request('/v1/delegations?wait=20s', { tenant: 'globex', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'globex-own' }) });
    expect(started.status).toBe(201);
    expect(((await started.json()) as { result?: { output?: string } }).result?.output).toBe('globex own recipe ran');
    // Another tenant's folder is not searched.
    const elsewhere = await stack.request('/v1/delegations', { tenant: 'acme', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'globex-own' }) });
    expect(elsewhere.status).toBe(422);
    expect(await elsewhere.json()).toMatchObject({ type: 'urn:errand:problem:source-not-found', errors: [{ field: 'source' }] });
  }, 60_000);
});

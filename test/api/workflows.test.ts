import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, keys, postJson, startApiStack, type ApiStack } from './api-harness';
import { temporalHttpUrl } from '../support/temporal';
import { docBlock } from '../support/doc-blocks';

/**
 * `/v1/workflows` before any worker runs the workflow (SEMANTICS §7): the projection and its refusal, dry
 * runs, sources by name, bad scripts, and starts that Temporal records, over the SDK and Temporal's HTTP API.
 */

const providers = JSON.stringify([{ name: 'scripted', kind: 'scripted', models: [{ id: 'scripted-model', contextWindow: 10_000, maxOutputTokens: 2_000, prices: { input: 1, output: 4 } }, 'other-model'] }]);
const fanOut = "const found = await parallel(args.files.map((file) => () => agent(`read ${file}`, { label: 'read' })));\nreturn found.length;";

const stacks: Record<'sdk' | 'http', ApiStack | undefined> = { sdk: undefined, http: undefined };

beforeAll(async () => {
  stacks.sdk = await startApiStack({ withoutWorker: true, extraEnv: { ERRAND_PROVIDERS: providers, ERRAND_DEFAULT_MODEL: 'scripted/scripted-model' } });
  stacks.http = await startApiStack({ withoutWorker: true, extraEnv: { ERRAND_PROVIDERS: providers, ERRAND_DEFAULT_MODEL: 'scripted/scripted-model', ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() } });
  const folder = join(stacks.sdk.workDir, 'acme', '.claude', 'workflows');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'sweep.js'), fanOut);
}, 60_000);

afterAll(async () => {
  await stacks.sdk?.stop();
  await stacks.http?.stop();
});

function stack(which: 'sdk' | 'http' = 'sdk'): ApiStack {
  const found = stacks[which];
  if (!found) throw new Error('the stack did not start');
  return found;
}

describe('POST /v1/workflows projects the run before it starts', () => {
  it('answers a dry run with the agents, tokens and cost it projects, per model', async () => {
    const response = await stack().request('/v1/workflows', postJson({ script: fanOut, args: { files: ['a', 'b', 'c'] }, dryRun: true }));
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      dryRun: true,
      scriptName: 'inline script',
      projection: { agents: 3, complete: true, tokens: 30_000, costMicroUsd: 48_000, costUsd: 0.048, unpricedAgents: 0, models: [{ model: 'scripted/scripted-model', agents: 3, tokensPerAgent: 10_000, costMicroUsdPerAgent: 16_000 }] },
    });
    // An inline script may carry a name for the run's view and messages (the CLI sends its file's name).
    const named = await stack().request('/v1/workflows', postJson({ script: fanOut, scriptName: 'fan-out.js', args: { files: ['a'] }, dryRun: true }));
    expect([named.status, (await json(named)).scriptName]).toEqual([200, 'fan-out.js']);
  });

  it('answers the dry run of docs/workflows.md, over its money cap, with the projection', async () => {
    const body: unknown = JSON.parse(docBlock('workflows-api-dry-run').text);
    const response = await stack().request('/v1/workflows', postJson(body));
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ dryRun: true, projection: { agents: 3, costMicroUsd: 48_000 } });
  });

  it('refuses a start whose projection passes costBudgetUsd, naming the projection; a dry run still answers it', async () => {
    const response = await stack().request('/v1/workflows', postJson({ script: fanOut, args: { files: ['a', 'b', 'c'] }, costBudgetUsd: 0.04 }));
    expect(response.status).toBe(422);
    const problem = await json(response);
    expect(problem.detail).toBe(
      'costBudgetUsd: the run is projected at 3 agents and 30000 tokens, $0.048, more than its costBudgetUsd of $0.04; raise costBudgetUsd, lower maxAgents or tokenBudget, or run fewer agents (dryRun shows the projection).',
    );
    expect(problem.errors).toEqual([expect.objectContaining({ in: 'body', field: 'costBudgetUsd' })]);
    const dry = await stack().request('/v1/workflows', postJson({ script: fanOut, args: { files: ['a', 'b', 'c'] }, costBudgetUsd: 0.04, dryRun: true }));
    expect(dry.status).toBe(200);
  });

  it('finds a workflow source by name in the tenant project, and names where it looked for an unknown one', async () => {
    const found = await stack().request('/v1/workflows', postJson({ name: 'sweep', args: { files: ['x'] }, dryRun: true }));
    expect(found.status).toBe(200);
    expect(await json(found)).toMatchObject({ scriptName: 'sweep', projection: { agents: 1 } });
    const missing = await stack().request('/v1/workflows', postJson({ name: 'swep', dryRun: true }));
    expect(missing.status).toBe(422);
    const problem = await json(missing);
    expect(problem.detail).toMatch(/^name: no workflow named "swep" \(a workflow is a file \.claude\/workflows\/<name>\.js; searched: project \.claude\/workflows, user ~\/\.claude\/workflows\); workflows found: sweep$/);
    expect(problem.suggestions).toEqual(['sweep']);
    // Another tenant's folder holds no such workflow.
    const other = await stack().request('/v1/workflows', postJson({ name: 'sweep', dryRun: true }, { key: keys.globex }));
    expect(other.status).toBe(422);
  });

  it('refuses a script that does not parse, naming its line, and a body with both or neither of script and name', async () => {
    const bad = await stack().request('/v1/workflows', postJson({ script: 'const a = 1;\nreturn a +;' }));
    expect(bad.status).toBe(422);
    expect((await json(bad)).errors).toEqual([expect.objectContaining({ field: 'script', message: expect.stringContaining('(line 2)') })]);
    const both = await stack().request('/v1/workflows', postJson({ script: 'return 1;', name: 'sweep' }));
    expect(both.status).toBe(400);
    const neither = await stack().request('/v1/workflows', postJson({ args: {} }));
    expect(neither.status).toBe(400);
    expect(JSON.stringify(await json(neither))).toContain('give exactly one of script (the text) or name (a workflow source)');
  });

  it("refuses concurrency and maxAgents over the operator's limits, naming the settings", async () => {
    const { request } = stack();
    const response = await request('/v1/workflows', postJson({ script: 'return 1;', concurrency: 17, maxAgents: 1_001 }));
    expect(response.status).toBe(422);
    expect((await json(response)).errors).toEqual([
      { in: 'body', field: 'concurrency', message: "17 is over this deployment's limit of 16 agents at once (ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS); ask for at most 16" },
      { in: 'body', field: 'maxAgents', message: "1001 is over this deployment's limit of 1000 agent() calls per run (ERRAND_WORKFLOW_MAX_AGENTS); ask for at most 1000" },
    ]);
  });
});

describe.each(['sdk', 'http'] as const)('a started run over %s', (which) => {
  it('starts, is visible only to its tenant, takes pause and cancel, and an Idempotency-Key repeats it', async () => {
    const api = stack(which);
    const started = await api.request('/v1/workflows', postJson({ script: fanOut, args: { files: ['a'] }, costBudgetUsd: 1 }));
    expect(started.status).toBe(201);
    const body = await json(started);
    expect(body).toMatchObject({ created: true, scriptName: 'inline script', projection: { agents: 1 } });
    const id = String(body.id);
    expect(id).toMatch(/^errand-wf-[0-9a-f]{16}$/);
    expect(started.headers.get('location')).toBe(`/v1/workflows/${id}`);
    const description = await api.client.workflow.getHandle(id).describe();
    expect(description.type).toBe('workflowRunWorkflow');
    expect(description.searchAttributes?.ErrandKind).toEqual(['workflow']);
    expect(description.searchAttributes?.ErrandTenant).toEqual(['acme']);

    expect((await api.request(`/v1/workflows/${id}`, { key: keys.globex })).status).toBe(404);
    const shown = await api.request(`/v1/workflows/${id}`);
    expect(shown.status).toBe(200);
    expect(await json(shown)).toMatchObject({ id, temporalStatus: 'RUNNING', closedAt: null, links: { self: `/v1/workflows/${id}`, events: `/v1/workflows/${id}/events` } });

    const paused = await api.request(`/v1/workflows/${id}/pause`, { method: 'POST' });
    expect(paused.status).toBe(202);
    expect(await json(paused)).toEqual({ id, requested: true, temporalStatus: 'RUNNING' });
    const withScript = await api.request(`/v1/workflows/${id}/resume`, postJson({ script: 'return 2;' }));
    expect(withScript.status).toBe(409);
    const cancelled = await api.request(`/v1/workflows/${id}/cancel`, postJson({ reason: 'test over' }));
    expect(await json(cancelled)).toEqual({ id, requested: true, temporalStatus: 'RUNNING' });
    // The signals are in the run's history, in order, with their inputs.
    const history = await api.client.workflow.getHandle(id).fetchHistory();
    const signals = (history.events ?? []).flatMap((event) => (event.workflowExecutionSignaledEventAttributes?.signalName ? [event.workflowExecutionSignaledEventAttributes.signalName] : []));
    expect(signals).toEqual(['workflowPause', 'cancel']);
    await api.client.workflow.getHandle(id).terminate('test over');

    const once = { script: 'await agent("one");', costBudgetUsd: 1 };
    const first = await api.request('/v1/workflows', postJson(once, { headers: { 'Idempotency-Key': `wf-key-${which}` } }));
    const again = await api.request('/v1/workflows', postJson(once, { headers: { 'Idempotency-Key': `wf-key-${which}` } }));
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    const [a, b] = [await json(first), await json(again)];
    expect(b).toMatchObject({ id: a.id, created: false });
    const reused = await api.request('/v1/workflows', postJson({ ...once, script: 'await agent("two");' }, { headers: { 'Idempotency-Key': `wf-key-${which}` } }));
    expect(reused.status).toBe(422);
    await api.client.workflow.getHandle(String(a.id)).terminate('test over');
  });
});

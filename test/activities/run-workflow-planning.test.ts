import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBlobStore } from '../../src/activities/blob-store-factory';
import type { PlanWorkflowRunInput } from '../../src/contracts/activities';
import { loadConfig } from '../../src/settings/config';
import { createSharedSources } from '../../src/sources/shared-sources';
import { planRunWorkflowCall } from '../../src/worker/workflow-run-planner';

/**
 * Planning a `run_workflow` call (decision 0045) with a real configuration, real workflow sources in a
 * project folder and the real script sandbox: bad arguments are refused naming the argument; caps are
 * lowered to what the caller has left; the input is stored by content for a resume of the ended run.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'errand-runwf-plan-data-'));
const workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-runwf-plan-work-')));
mkdirSync(join(workingDir, '.claude', 'workflows'), { recursive: true });
writeFileSync(join(workingDir, '.claude', 'workflows', 'sweep.js'), "return await agent('sweep ' + args.dir);\n");
const config = loadConfig({
  ERRAND_DATA_DIR: dataDir,
  ERRAND_WORKING_DIR: workingDir,
  ERRAND_PROVIDERS: JSON.stringify([{ name: 'priced', kind: 'scripted', models: [{ id: 'm', contextWindow: 10_000, maxOutputTokens: 1_000, prices: { input: 1, output: 2 } }] }]),
});
const sources = createSharedSources(config, mkdtempSync(join(tmpdir(), 'errand-runwf-plan-home-')));
const blobs = createBlobStore(config);
const plan = (request: PlanWorkflowRunInput['request'], left: Partial<PlanWorkflowRunInput> = {}) =>
  planRunWorkflowCall({ config, placesFor: (dir) => sources.workflowPlacesFor(dir), blobs }, { request, workingDir, tenant: 'acme', startedBy: 'errand-0123456789abcdef', ...left });

describe('run_workflow planning', () => {
  it('refuses bad arguments naming them', async () => {
    expect(await plan({ name: 'sweep', script: 'return 1;' })).toEqual({ ok: false, message: '(arguments): give exactly one of `name` (a workflow source, .claude/workflows/<name>.js) or `script` (the script inline)' });
    expect(await plan({})).toMatchObject({ ok: false, message: expect.stringContaining('give exactly one of `name`') });
    expect(await plan({ script: 'return 1;', tokens: 5 })).toMatchObject({ ok: false, message: expect.stringMatching(/^\(arguments\): Unrecognized key: "tokens"/) });
    expect(await plan({ script: 'return 1;', max_agents: 0 })).toMatchObject({ ok: false, message: expect.stringMatching(/^max_agents: /) });
    expect(await plan({ script: 'return 1;', max_agents: 5_000 })).toMatchObject({ ok: false, message: expect.stringMatching(/^max_agents: 5000 is over this deployment's limit of 1000 agent\(\) calls per run \(ERRAND_WORKFLOW_MAX_AGENTS\)/) });
    expect(await plan({ script: 'return (;' })).toMatchObject({ ok: false, message: expect.stringMatching(/^script: .*line 1/) });
  });

  it('names an unknown workflow and the ones found', async () => {
    const refused = await plan({ name: 'swep' });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.message).toMatch(/^name: .*swep/);
    expect(refused.message).toContain('Workflows found: sweep.');
  });

  it("lowers the caps to what the caller has left and refuses a projection over the money left, naming the caller's remainder", async () => {
    const planned = await plan({ name: 'sweep', args: { dir: 'src' }, token_budget: 50_000, time_budget: 3_600, cost_budget_usd: 5 }, { remainingBudget: 40_000, remainingTimeMs: 120_500, remainingCostMicroUsd: 1_000_000 });
    expect(planned.ok).toBe(true);
    if (!planned.ok) return;
    expect(planned.input).toMatchObject({ scriptName: 'sweep', args: { dir: 'src' }, tenant: 'acme', workingDir, caps: { tokenBudget: 40_000, timeBudgetMs: 120_000, costBudgetMicroUsd: 1_000_000 } });
    expect(planned.projectionText).toMatch(/^1 agent, 10000 tokens, \$0\.011/);
    // Stored by content, without the tenant (a resume adds the resuming caller's).
    const stored = JSON.parse((await blobs.get(planned.inputKey)) ?? 'null') as { tenant?: string; scriptName: string };
    expect(stored.scriptName).toBe('sweep');
    expect(stored.tenant).toBeUndefined();

    const refused = await plan({ name: 'sweep', args: { dir: 'src' } }, { remainingCostMicroUsd: 5_000 });
    expect(refused).toMatchObject({ ok: false, message: expect.stringMatching(/^cost_budget_usd: the run is projected at 1 agent and 10000 tokens, \$0\.011, more than its cost_budget_usd of \$0\.005; raise cost_budget_usd, lower max_agents or token_budget, or run fewer agents \(the run's cost_budget_usd is what is left of yours: \$0\.005\)\.$/) });
  });
});

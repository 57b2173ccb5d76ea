import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { readTenantSpend, recordTenantSpend } from '../../src/activities/tenant-spend-book';
import { hashApiKey } from '../../src/api/auth-config';
import { isJsonObject } from '../../src/llm/json-value';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { eventually, json, postJson, startApiStack, type ApiStack } from '../api/api-harness';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalHttpUrl } from '../support/temporal';
import { attack } from './attack-stack';

/**
 * Attacks on the operator's daily cost cap per tenant (ERRAND_TENANT_DAILY_COST_USD, decision 0027): a
 * tenant at its cap starts nothing over Temporal's HTTP API (the dev stack's and the Lambda's way, where the
 * day's spend workflow used to be unreachable and read as $0); starts sent together cannot pass the cap
 * together (each holds part of it first); and a session started under the cap stops spending at it (the
 * worker checks before each model call). Every call of the priced vendor costs 1,000 × 2 + 100 × 8 = 2,800
 * micro-dollars. Tenants are this run's own: a day's spend outlives a test on the shared dev server.
 */

const callUsage: ScriptStep['usage'] = { inputTokens: 1_000, outputTokens: 100 };
const suffix = randomBytes(4).toString('hex');

function messagesOf(request: RecordedRequest): Record<string, unknown>[] {
  const body = isJsonObject(request.body) ? request.body : {};
  return Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
}

/** `[spender]` lists the folder again and again (ten calls in all); everything else answers at once. */
function answer(request: RecordedRequest): ScriptStep {
  const messages = messagesOf(request);
  const task = messages.filter((message) => message.role === 'user').map((message) => String(message.content)).join('\n');
  const toolResults = messages.filter((message) => message.role === 'tool').length;
  if (task.includes('[spender]') && toolResults < 9) {
    return { toolCalls: [{ id: `call_list_${toolResults}`, name: 'developer__list_directory', arguments: { path: '.' } }], usage: callUsage };
  }
  return { text: 'done', usage: callUsage };
}

interface Tenant {
  tenant: string;
  key: string;
}

let vendor: ScriptedOpenAIServer;
beforeAll(async () => {
  vendor = await startScriptedOpenAIServer({ responder: answer });
});
afterAll(async () => {
  await vendor?.close();
});

/** A stack with a priced vendor, a daily cap and tenants of its own; over Temporal's HTTP API when `http`. */
async function cappedStack(capUsd: string, tenants: Tenant[], http: boolean): Promise<ApiStack> {
  return startApiStack({
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([
        { name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: [{ id: 'priced-model', prices: { input: 2, output: 8 } }], defaultModel: 'priced-model' },
      ]),
      ERRAND_API_KEYS: JSON.stringify(tenants.map(({ tenant, key }) => ({ tenant, sha256: hashApiKey(key) }))),
      ERRAND_TENANT_DAILY_COST_USD: capUsd,
      ...(http ? { ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() } : {}),
    },
  });
}

function tenantNamed(name: string): Tenant {
  return { tenant: `${name}-${suffix}`, key: `test-key-${name}-${suffix}-0123456789` };
}

/** Counts `microUsd` of spend on the tenant's day, as a worker's report does, and waits until the day shows it. */
async function spendAlready(stack: ApiStack, tenant: string, microUsd: number): Promise<void> {
  await recordTenantSpend(stack.client, stack.taskQueue, tenant, { key: `earlier-${randomBytes(4).toString('hex')}`, costMicroUsd: microUsd }, Date.now());
  await eventually(async () => ((await readTenantSpend(stack.client, tenant, Date.now())) >= microUsd ? true : undefined));
}

describe('the daily cost cap', () => {
  const overHttp = tenantNamed('over-http');
  const togetherHttp = tenantNamed('together-http');
  const togetherSdk = tenantNamed('together-sdk');
  const spender = tenantNamed('spender');
  let http: ApiStack;
  let sdk: ApiStack;
  let small: ApiStack;
  beforeAll(async () => {
    [http, sdk, small] = await Promise.all([
      cappedStack('0.25', [overHttp, togetherHttp], true),
      cappedStack('0.25', [togetherSdk], false),
      cappedStack('0.005', [spender], true),
    ]);
  });
  afterAll(async () => {
    await Promise.all([http?.stop(), sdk?.stop(), small?.stop()]);
  });

  attack('a tenant past its $0.25 cap starts nothing through the API over Temporal\'s HTTP API (5 starts)', async () => {
    await spendAlready(http, overHttp.tenant, 300_000);
    const statuses: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const started = await http.request('/v1/delegations', { ...postJson({ instructions: `job ${index}` }), key: overHttp.key });
      statuses.push(started.status);
      if (started.status === 429) expect(await json(started)).toMatchObject({ detail: expect.stringContaining('the daily cost cap per tenant is $0.25') });
    }
    expect(statuses).toEqual([429, 429, 429, 429, 429]);
  });

  attack('8 starts sent together just under the cap: only what the cap holds pass (both ways to Temporal)', async () => {
    // $0.20 of $0.25 spent; a start with no cost budget holds a tenth of the cap, $0.025: two starts fit.
    for (const [stack, tenant] of [[http, togetherHttp], [sdk, togetherSdk]] as const) {
      await spendAlready(stack, tenant.tenant, 200_000);
      const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => stack.request('/v1/delegations', { ...postJson({ instructions: `together ${index}` }), key: tenant.key })));
      const statuses = answers.map((answered) => answered.status);
      expect(statuses.filter((status) => status === 201).length).toBeLessThanOrEqual(2);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(6);
      expect(statuses.every((status) => status === 201 || status === 429)).toBe(true);
    }
  });

  attack('a session started under the cap stops spending at it: its next model call is refused and it ends budget', async () => {
    // Only this session's requests (the delegations of the attacks before may still be answering).
    const spenderCalls = () => vendor.requests.filter((request) => messagesOf(request).some((message) => String(message.content).includes('[spender]'))).length;
    const started = await small.request('/v1/sessions', { ...postJson({ message: 'keep listing the folder [spender]' }), key: spender.key });
    expect(started.status).toBe(201);
    const id = String((await json(started)).id);
    const ended = await eventually(async () => {
      const description = await small.client.workflow.getHandle(id).describe();
      return description.status.name === 'RUNNING' ? undefined : description;
    }, 30_000);
    expect(ended.status.name).toBe('COMPLETED');
    const result = (await small.client.workflow.getHandle(id).result()) as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'budget' });
    expect(JSON.stringify(result)).toContain('the daily cost cap per tenant is $0.005 (ERRAND_TENANT_DAILY_COST_USD); no model call runs until 00:00 UTC');
    // $0.005 is reached after two calls ($0.0056): the third is never made.
    expect(spenderCalls()).toBe(2);
    expect(await readTenantSpend(small.client, spender.tenant, Date.now())).toBe(5_600);
    expect(vendor.rejectedRequests).toEqual([]);
  }, 60_000);
});

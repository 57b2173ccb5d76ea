import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { readTenantSpend } from '../../src/activities/tenant-spend-book';
import { utcDay } from '../../src/contracts/tenant-spend';
import { isJsonObject } from '../../src/llm/json-value';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { eventually, json, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * Caps through the API (decision 0027). The operator's ceilings (ERRAND_MAX_TIME_BUDGET_SECS 3600,
 * ERRAND_MAX_COST_BUDGET_USD 1): a request may ask for less, never more (422), and one that asks for nothing
 * runs under them. The operator's daily cost cap per tenant (ERRAND_TENANT_DAILY_COST_USD, decision 0027) through the API and
 * the delegate tool, against the real dev server and the scripted vendor over the OpenAI wire. Every call
 * reports 1,000 prompt and 100 answer tokens: 1,000 × 2 + 100 × 8 = 2,800 micro-dollars at the entry's prices.
 * The cap is $0.005: two calls reach it. The day's spend lives in the tenant's day workflow, which the API
 * reads before a start and the workers report every priced call to.
 */

const callUsage: ScriptStep['usage'] = { inputTokens: 1_000, outputTokens: 100 };
// Tenants of this run only: the day's spend outlives a test on the shared dev server.
const suffix = randomBytes(4).toString('hex');
const capped = { tenant: `capped-${suffix}`, key: `test-key-capped-${suffix}-0123456789` };
const other = { tenant: `other-${suffix}`, key: `test-key-other-${suffix}-0123456789` };
// For the ceilings: a tenant of its own, whose day the other tests do not spend.
const third = { tenant: `third-${suffix}`, key: `test-key-third-${suffix}-0123456789` };

function messagesOf(request: RecordedRequest): Record<string, unknown>[] {
  const body = isJsonObject(request.body) ? request.body : {};
  return Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
}

/** A session marked `[session]` delegates once, then answers; everything else answers at once. */
function answer(request: RecordedRequest): ScriptStep {
  const messages = messagesOf(request);
  const task = messages.filter((message) => message.role === 'user').map((message) => String(message.content)).join('\n');
  if (task.includes('[session]') && !messages.some((message) => message.role === 'tool')) {
    return { toolCalls: [{ id: 'call_delegate_1', name: 'delegate', arguments: { instructions: 'one more job' } }], usage: callUsage };
  }
  return { text: 'done', usage: callUsage };
}

let vendor: ScriptedOpenAIServer;
let stack: ApiStack;
beforeAll(async () => {
  vendor = await startScriptedOpenAIServer({ responder: answer });
  stack = await startApiStack({
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([
        { name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: [{ id: 'priced-model', prices: { input: 2, output: 8 } }], defaultModel: 'priced-model' },
      ]),
      ERRAND_API_KEYS: JSON.stringify([
        { tenant: capped.tenant, sha256: hashApiKey(capped.key) },
        { tenant: other.tenant, sha256: hashApiKey(other.key) },
        { tenant: third.tenant, sha256: hashApiKey(third.key) },
      ]),
      ERRAND_TENANT_DAILY_COST_USD: '0.005',
      ERRAND_MAX_TIME_BUDGET_SECS: '3600',
      ERRAND_MAX_COST_BUDGET_USD: '1',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await vendor?.close();
});

async function delegate(key: string): Promise<Response> {
  return stack.request('/v1/delegations?wait=20s', { ...postJson({ instructions: 'a small job' }), key });
}

describe('daily cost cap per tenant', () => {
  let sessionId = '';
  let refusal = '';

  beforeAll(async () => {
    // A session started while the tenant still had money left: its later delegate is checked too.
    const session = await stack.request('/v1/sessions', { ...postJson({}), key: capped.key });
    expect(session.status).toBe(201);
    sessionId = String((await json(session)).id);
    for (let index = 0; index < 2; index += 1) {
      const started = await delegate(capped.key);
      expect(started.status).toBe(201);
      expect(await json(started)).toMatchObject({ state: 'completed', result: { status: 'completed', usage: { costMicroUsd: 2_800 } } });
    }
    // Each priced call was reported to the tenant's day before its activity returned.
    const spent = await eventually(async () => {
      const value = await readTenantSpend(stack.client, capped.tenant, Date.now());
      return value >= 5_600 ? value : undefined;
    });
    expect(spent).toBe(5_600);
    refusal = `tenant ${capped.tenant} has spent $0.0056 on model calls today (${utcDay(Date.now())}, UTC), and the daily cost cap per tenant is $0.005 (ERRAND_TENANT_DAILY_COST_USD); nothing new starts until 00:00 UTC`;
  });

  it('POST /v1/delegations answers 429 naming the cap and the figures, with Retry-After until midnight UTC', async () => {
    const refused = await delegate(capped.key);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(await json(refused)).toMatchObject({ status: 429, title: "The tenant's daily cost cap is reached", detail: refusal });
  });

  it('POST /v1/sessions answers the same 429', async () => {
    const refused = await stack.request('/v1/sessions', { ...postJson({ message: 'hello' }), key: capped.key });
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ status: 429, detail: refusal });
  });

  it('another tenant still starts', async () => {
    const started = await delegate(other.key);
    expect(started.status).toBe(201);
    expect(await json(started)).toMatchObject({ state: 'completed', result: { status: 'completed' } });
  });

  it("a running session's message is refused with the same words, and no model call is made", async () => {
    const before = vendor.requests.length;
    const sent = await stack.request(`/v1/sessions/${encodeURIComponent(sessionId)}/messages`, { ...postJson({ message: 'delegate something [session]' }), key: capped.key });
    expect(sent.status).toBe(429);
    expect(await json(sent)).toMatchObject({ status: 429, title: "The tenant's daily cost cap is reached", detail: refusal });
    expect(vendor.requests.length).toBe(before);
    await stack.request(`/v1/sessions/${encodeURIComponent(sessionId)}/cancel`, { ...postJson({}), key: capped.key });
  });
});

describe("the operator's ceilings", () => {
  async function startedInput(id: string): Promise<Record<string, unknown>> {
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    return JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as Record<string, unknown>;
  }

  it('a delegation that asks for nothing runs under them; one that asks for less gets what it asked for', async () => {
    const plain = await json(await delegate(third.key));
    expect(await startedInput(String(plain.id))).toMatchObject({ timeBudgetMs: 3_600_000, costBudgetMicroUsd: 1_000_000 });
    const lower = await stack.request('/v1/delegations', { ...postJson({ instructions: 'a small job', time_budget: 60, cost_budget_usd: 0.25 }), key: third.key });
    expect(lower.status).toBe(201);
    expect(await startedInput(String((await json(lower)).id))).toMatchObject({ timeBudgetMs: 60_000, costBudgetMicroUsd: 250_000 });
  });

  it('a delegation that asks for more is refused with 422 naming the field, the limit and its setting', async () => {
    const refused = await stack.request('/v1/delegations', { ...postJson({ instructions: 'a long job', time_budget: 7_200, cost_budget_usd: 5 }), key: third.key });
    expect(refused.status).toBe(422);
    const body = await json(refused);
    expect(body.errors).toEqual([
      { in: 'body', field: 'time_budget', message: "7200 is over this deployment's limit of 3600 (ERRAND_MAX_TIME_BUDGET_SECS); a request may lower the operator's limits, never raise them: ask for at most 3600" },
      { in: 'body', field: 'cost_budget_usd', message: "5 is over this deployment's limit of 1 (ERRAND_MAX_COST_BUDGET_USD); a request may lower the operator's limits, never raise them: ask for at most 1" },
    ]);
    // Less than one micro-dollar (the unit costs are counted in) would be no budget at all: refused, not rounded to 0.
    const tiny = await stack.request('/v1/delegations', { ...postJson({ instructions: 'a job', cost_budget_usd: 0.0000001 }), key: third.key });
    expect(tiny.status).toBe(400);
    expect(JSON.stringify(await json(tiny))).toContain('cost_budget_usd must be at least 0.000001 (one micro-dollar, the unit costs are counted in)');
  });

  it('a session takes timeBudget, costBudgetUsd and tokenBudget; over the ceiling it is 422', async () => {
    const started = await stack.request('/v1/sessions', { ...postJson({ timeBudget: 120, costBudgetUsd: 0.5, tokenBudget: 10_000 }), key: third.key });
    expect(started.status).toBe(201);
    const id = String((await json(started)).id);
    expect(await startedInput(id)).toMatchObject({ timeBudgetMs: 120_000, costBudgetMicroUsd: 500_000, tokenBudget: 10_000 });
    await stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, { ...postJson({}), key: third.key });
    const refused = await stack.request('/v1/sessions', { ...postJson({ costBudgetUsd: 2 }), key: third.key });
    expect(refused.status).toBe(422);
    expect(await json(refused)).toMatchObject({ errors: [{ field: 'costBudgetUsd' }] });
  });
});

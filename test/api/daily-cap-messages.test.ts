import { describe, expect, it } from 'vitest';
import type { DailyCostCap } from '../../src/api/daily-cost-cap';
import { DelegationService } from '../../src/api/delegation-service';
import { ApiProblem, ProblemKind } from '../../src/api/problem';
import { SessionService } from '../../src/api/session-service';
import type { TemporalGateway, WorkflowFacts } from '../../src/api/temporal-gateway';
import type { ErrandConfig } from '../../src/settings/config';

/**
 * Messages to a running conversation make model calls, so the daily cost cap refuses them at the API too
 * (docs/security.md, "The daily cost cap"): a continuable's message (`POST /v1/delegations/{id}/messages`)
 * and an MCP client's `send_message`, before anything reaches the workflow. (A session's message is tested
 * end to end in caps.test.ts.) The gateway here answers describes only; an update would fail the test.
 */

const refusal = new ApiProblem(429, ProblemKind.dailyCostCap, "The tenant's daily cost cap is reached", { detail: 'tenant acme has spent $0.25 …' });
const atCap: DailyCostCap = { hold: () => Promise.reject(refusal), check: () => Promise.reject(refusal) };

function gatewayOf(kind: 'subagent' | 'session', updates: string[]): TemporalGateway {
  const facts = { workflowId: 'errand-1~task-1', runId: 'run-1', statusName: 'RUNNING', attributes: { tenant: 'acme', kind }, memo: {}, summary: undefined, liveText: undefined } as unknown as WorkflowFacts;
  return {
    describe: () => Promise.resolve(facts),
    update: (_id: string, name: string) => {
      updates.push(name);
      return Promise.reject(new Error('no update may be sent at the cap'));
    },
  } as unknown as TemporalGateway;
}

describe('messages at the daily cost cap', () => {
  it("a continuable task's message is refused with 429 and never sent", async () => {
    const updates: string[] = [];
    const delegations = new DelegationService({ gateway: gatewayOf('subagent', updates), taskQueue: 'unused', startedBy: 'test', dailyCap: atCap });
    await expect(delegations.sendMessage('acme', 'errand-1~task-1', 'one more thing', undefined)).rejects.toBe(refusal);
    expect(updates).toEqual([]);
  });

  it("an MCP session's send_message is refused with 429; its other tools are not", async () => {
    const updates: string[] = [];
    const sessions = new SessionService(gatewayOf('session', updates), {} as ErrandConfig, () => '/unused', undefined, atCap);
    await expect(sessions.callTool('acme', 'errand-1', { name: 'send_message', arguments: { task_id: 'task-1', message: 'more' } })).rejects.toBe(refusal);
    expect(updates).toEqual([]);
    await expect(sessions.callTool('acme', 'errand-1', { name: 'load', arguments: { source: 'task-1' } })).rejects.toThrow('no update may be sent at the cap');
    expect(updates).toEqual(['callTool']);
  });
});

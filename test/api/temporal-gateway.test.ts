import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import type { TemporalGateway, WorkflowStart } from '../../src/api/temporal-gateway';
import { TemporalHttpGateway } from '../../src/api/temporal-http-gateway';
import { TemporalSdkGateway } from '../../src/api/temporal-sdk-gateway';
import { messageNames } from '../../src/contracts/wire-names';
import { subagentStartOptions } from '../../src/observability/start-options';
import { eventually, startApiStack, type ApiStack } from './api-harness';
import { subagentInput, temporalHttpUrl } from '../support/temporal';

/**
 * The API's two ways to Temporal (decision 0026) against the run's real dev server and a real worker:
 * Temporal's HTTP API (what the Lambda bundle carries) and the SDK's gRPC client (`errand api` without
 * ERRAND_TEMPORAL_HTTP_URL). For the same workflows, every operation the API uses answers the same values
 * through either, and a workflow started, signalled or updated one way is indistinguishable from one
 * handled the other way.
 */

let stack: ApiStack;
let http: TemporalGateway;
let sdk: TemporalGateway;
const tenant = `parity-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  stack = await startApiStack();
  http = new TemporalHttpGateway({ baseUrl: temporalHttpUrl(), namespace: 'default', headers: {} });
  sdk = new TemporalSdkGateway(fixedTemporalClient(stack.client), 'default');
});
afterAll(async () => {
  await stack?.stop();
});

function startOf(workflowId: string, prompt: string, idempotent?: WorkflowStart['idempotent']): WorkflowStart {
  const input = { ...subagentInput({ prompt, workingDir: stack.workDir }), tenant };
  return {
    workflowType: 'subagentWorkflow',
    workflowId,
    taskQueue: stack.taskQueue,
    args: [input],
    visible: subagentStartOptions(input, { workflowId, tenant, startedBy: 'gateway parity test' }),
    ...(idempotent ? { idempotent } : {}),
  };
}

describe('the HTTP and SDK gateways', () => {
  it('start, describe, query, list, signal and await the end of the same workflows with equal answers', async () => {
    const overHttp = `gateway-http-${randomUUID()}`;
    const overSdk = `gateway-sdk-${randomUUID()}`;
    const memo = { errandRequest: { fingerprint: 'f1', nonce: 'n1' } };
    // The model call waits (`slow`), so the workflows stay running while they are read.
    const httpRun = await http.start(startOf(overHttp, 'slow work over http', { memo }));
    const sdkRun = await sdk.start(startOf(overSdk, 'slow work over sdk', { memo }));
    // An Idempotency-Key start of a running id lands on the same run, either way.
    expect(await http.start(startOf(overHttp, 'slow work over http', { memo }))).toEqual(httpRun);
    expect(await sdk.start(startOf(overSdk, 'slow work over sdk', { memo }))).toEqual(sdkRun);
    // A plain start of a taken id is ALREADY_EXISTS, either way.
    await expect(http.start(startOf(overSdk, 'again'))).rejects.toMatchObject({ code: 6 });
    await expect(sdk.start(startOf(overHttp, 'again'))).rejects.toMatchObject({ code: 6 });

    for (const id of [overHttp, overSdk]) {
      // The peek is answered once the worker has run the first workflow task.
      const peekOverHttp = await eventually(async () => (await http.query(id, messageNames.peekQuery, [], 5_000).catch(() => undefined)) ?? undefined);
      expect(await sdk.query(id, messageNames.peekQuery, [], 5_000)).toEqual(peekOverHttp);
      const described = await http.describe(id);
      expect(await sdk.describe(id)).toEqual(described);
      expect(described).toMatchObject({ workflowId: id, statusName: 'RUNNING', memo, attributes: { tenant, kind: 'subagent', status: 'running' } });
      expect(described.summary).toContain('slow work over');
    }

    const query = `ErrandTenant = '${tenant}'`;
    const listed = await eventually(async () => {
      const page = await http.list(query, 10);
      return page.executions.length === 2 ? page : undefined;
    });
    expect(await sdk.list(query, 10)).toEqual(listed);
    expect(listed.executions.map((execution) => execution.workflowId).sort()).toEqual([overHttp, overSdk].sort());

    // Not continuable: the update is refused with the workflow's own words, the same either way.
    const refusedOverHttp = await http.update(overHttp, messageNames.sendMessageUpdate, { text: 'more' }, { updateId: randomUUID(), waitFor: 'completed' });
    const refusedOverSdk = await sdk.update(overHttp, messageNames.sendMessageUpdate, { text: 'more' }, { updateId: randomUUID(), waitFor: 'completed' });
    expect(refusedOverHttp.stage).toBe('failed');
    expect(refusedOverSdk).toEqual(refusedOverHttp);

    // Cancel each one way; both end the same, read either way.
    await http.signal(overHttp, messageNames.cancelSignal, { reason: 'parity test' });
    await sdk.signal(overSdk, messageNames.cancelSignal, { reason: 'parity test' });
    for (const id of [overHttp, overSdk]) {
      const { runId } = await http.describe(id);
      const endOverHttp = await http.awaitEnd(id, runId, 20_000);
      expect(endOverHttp).toMatchObject({ kind: 'completed', value: { workflowId: id, status: 'cancelled' } });
      expect(await sdk.awaitEnd(id, runId, 20_000)).toEqual(endOverHttp);
      expect(await sdk.describe(id)).toEqual(await http.describe(id));
    }
    const endsOf = (id: string) => Promise.all([http, sdk].map(async (gateway) => (await gateway.awaitEnd(id, (await gateway.describe(id)).runId, 5_000)) as { value: Record<string, unknown> }));
    const [[httpEnd], [sdkEnd]] = await Promise.all([endsOf(overHttp), endsOf(overSdk)]);
    // Apart from the ids and times, the two runs ended alike: the workflow could not tell how it was reached.
    const comparable = (end: { value: Record<string, unknown> } | undefined) => ({ ...end?.value, workflowId: undefined, durationMs: undefined });
    expect(comparable(httpEnd)).toEqual(comparable(sdkEnd));
  });

  it('report a missing workflow, a signal to an ended one, a wait that runs out and a terminated run alike', async () => {
    const missing = `gateway-missing-${randomUUID()}`;
    await expect(http.describe(missing)).rejects.toMatchObject({ code: 5 });
    await expect(sdk.describe(missing)).rejects.toMatchObject({ code: 5 });

    const id = `gateway-ends-${randomUUID()}`;
    const { runId } = await http.start(startOf(id, 'slow, then terminated'));
    expect(await http.awaitEnd(id, runId, 300)).toBeUndefined();
    expect(await sdk.awaitEnd(id, runId, 300)).toBeUndefined();
    await stack.client.workflow.getHandle(id).terminate('ended from outside');
    const ended = await http.awaitEnd(id, runId, 10_000);
    expect(ended).toEqual({ kind: 'failed', cancelled: false, message: 'ended from outside' });
    expect(await sdk.awaitEnd(id, runId, 10_000)).toEqual(ended);
    await expect(http.signal(id, messageNames.cancelSignal, {})).rejects.toMatchObject({ code: 5 });
    await expect(sdk.signal(id, messageNames.cancelSignal, {})).rejects.toMatchObject({ code: 5 });
    expect(await sdk.describe(id)).toEqual(await http.describe(id));
  });
});

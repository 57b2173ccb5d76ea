import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionService } from '../../src/api/session-service';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import { TemporalSdkGateway } from '../../src/api/temporal-sdk-gateway';
import { json, postJson, startApiStack, type ApiStack } from './api-harness';
import { temporalAddress } from '../support/temporal';

/**
 * Regression: `POST /v1/sessions/{id}/cancel` answered 500 when the session ended between the API's
 * describe (still running) and its cancel signal (Temporal: NOT_FOUND "workflow execution already
 * completed") — a cancel already on its way, the idle alarm, a terminate. Schemathesis's stateful run hit it
 * by chance; here the session is made to end at exactly that moment, by a client interceptor that
 * terminates it once the describe has answered.
 */

let stack: ApiStack;
let connection: Connection;
let endAfterDescribe: string | undefined;
beforeAll(async () => {
  connection = await Connection.connect({ address: temporalAddress() });
  const plain = new Client({ connection, namespace: 'default' });
  const racing = new Client({
    connection,
    namespace: 'default',
    interceptors: {
      workflow: [
        {
          async describe(input, next) {
            const answer = await next(input);
            const id = input.workflowExecution.workflowId;
            if (id === endAfterDescribe) await plain.workflow.getHandle(id).terminate('ended between the describe and the signal');
            return answer;
          },
        },
      ],
    },
  });
  stack = await startApiStack({
    adjust: (deps) => ({ ...deps, sessions: new SessionService(new TemporalSdkGateway(fixedTemporalClient(racing), 'default'), deps.config, () => stack.workDir) }),
  });
});
afterAll(async () => {
  await stack?.stop();
  await connection?.close();
});

it('answers 409 "the session has ended" when the session ends between the check and the cancel signal', async () => {
  const started = await stack.request('/v1/sessions', postJson({ label: 'ends at the wrong moment' }));
  expect(started.status).toBe(201);
  const { id } = (await json(started)) as { id: string };
  endAfterDescribe = id;
  const cancelled = await stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, postJson({ reason: 'too late' }));
  expect(await json(cancelled)).toMatchObject({ status: 409, type: 'urn:errand:problem:conflict', title: 'The session has ended' });
  expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe('TERMINATED');
  // The API still serves: the session reads as ended.
  endAfterDescribe = undefined;
  expect((await stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, postJson({}))).status).toBe(409);
});

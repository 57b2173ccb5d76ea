import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { TemporalClientProvider } from '../../src/api/temporal-client-provider';
import { TemporalSdkGateway } from '../../src/api/temporal-sdk-gateway';
import { GrpcCode, grpcStatusOf } from '../../src/temporal/grpc-status';

/**
 * Under load, gRPC reports a query's own deadline as CANCELLED (seen against the dev server with the CPU
 * busy: 5 of 200 queries to a workflow nobody runs), which the API answered as a 500. The SDK gateway
 * gives it the one code every caller decides by: DEADLINE_EXCEEDED (a 503 "did not answer").
 */

function clientWhoseQuery(fails: (deadline: number) => Promise<never>): TemporalClientProvider {
  let deadline = 0;
  const client = {
    withDeadline: <T>(at: number, call: () => Promise<T>) => {
      deadline = at;
      return call();
    },
    workflow: { getHandle: () => ({ query: () => fails(deadline) }) },
  } as unknown as Client;
  return { get: () => Promise.resolve(client), close: () => Promise.resolve() };
}

function serviceError(code: number): Error {
  return Object.assign(new Error('Failed to query Workflow'), { name: 'ServiceError', cause: Object.assign(new Error(`${code} status`), { code }) });
}

describe('a query through the SDK gateway', () => {
  it('that ends CANCELLED once its deadline has passed is DEADLINE_EXCEEDED, naming the query and the wait', async () => {
    const gateway = new TemporalSdkGateway(
      clientWhoseQuery(async (deadline) => {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())));
        throw serviceError(GrpcCode.cancelled);
      }),
      'default',
    );
    const failure = await gateway.query('errand-s1', 'peek', [], 30).catch((error: unknown) => error);
    expect(grpcStatusOf(failure)?.code).toBe(GrpcCode.deadlineExceeded);
    expect(String(failure)).toMatch(/peek on errand-s1 within 30 ms/);
  });

  it('that is CANCELLED well before its deadline stays CANCELLED (someone else cancelled it)', async () => {
    const gateway = new TemporalSdkGateway(clientWhoseQuery(() => Promise.reject(serviceError(GrpcCode.cancelled))), 'default');
    const failure = await gateway.query('errand-s1', 'peek', [], 10_000).catch((error: unknown) => error);
    expect(grpcStatusOf(failure)?.code).toBe(GrpcCode.cancelled);
  });
});

import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { isTemporalRateLimited, isTemporalUnavailable } from '../../src/api/app';
import { unreachable } from '../../src/api/temporal-sdk-connect';
import { TemporalHttpStartError } from '../../src/api/temporal-http-start';
import { GrpcCode, grpcStatusOf, isGrpcStatus } from '../../src/temporal/grpc-status';

/**
 * One walker down an error's causes finds the gRPC status, however the error came: the SDK's ServiceError
 * with the gRPC error as its cause (the gRPC start path), the HTTP start's own error, a Node system error
 * (whose string code is not a status).
 */

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}

describe('grpcStatusOf', () => {
  it('finds the status under the SDK\'s ServiceError, with its details', () => {
    const error = new ServiceError('Failed to start Workflow', { cause: grpcError(GrpcCode.resourceExhausted, 'namespace rate limit exceeded') });
    expect(grpcStatusOf(error)).toEqual({ code: 8, text: 'namespace rate limit exceeded 8 namespace rate limit exceeded' });
    expect(isGrpcStatus(error, GrpcCode.resourceExhausted)).toBe(true);
  });

  it('reads the HTTP start\'s error, and passes over string codes', () => {
    expect(grpcStatusOf(new TemporalHttpStartError('refused', GrpcCode.unavailable))?.code).toBe(14);
    expect(grpcStatusOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBeUndefined();
    expect(grpcStatusOf('not an error')).toBeUndefined();
  });
});

describe('the API\'s mapping of Temporal failures', () => {
  it('is a rate limit (429) for RESOURCE_EXHAUSTED on either start path, and unavailable (503) for UNAVAILABLE and DEADLINE_EXCEEDED', () => {
    const overGrpc = new ServiceError('Failed to start Workflow', { cause: grpcError(GrpcCode.resourceExhausted, 'namespace rate limit exceeded') });
    const overHttp = new TemporalHttpStartError('refused: namespace rate limit exceeded', GrpcCode.resourceExhausted);
    expect([isTemporalRateLimited(overGrpc), isTemporalRateLimited(overHttp), isTemporalUnavailable(overGrpc)]).toEqual([true, true, false]);
    expect(isTemporalUnavailable(new ServiceError('x', { cause: grpcError(GrpcCode.deadlineExceeded, 'deadline') }))).toBe(true);
    expect(isTemporalUnavailable(new TemporalHttpStartError('down', GrpcCode.unavailable))).toBe(true);
    expect(isTemporalRateLimited(new Error('something else'))).toBe(false);
  });

  it('is unavailable (503) for a connect that nothing answered, however the SDK build threw it, and not for a server that refused', () => {
    const bundled = unreachable(new Error('Failed to connect before the deadline'), '127.0.0.1:7999');
    expect(bundled?.message).toBe('Temporal at 127.0.0.1:7999 cannot be reached (Failed to connect before the deadline): start it, or set the address (ERRAND_TEMPORAL_ADDRESS, TEMPORAL_ADDRESS or the Temporal config profile)');
    expect(isTemporalUnavailable(bundled)).toBe(true);
    expect(isTemporalUnavailable(new Error('Failed to connect before the deadline'))).toBe(false);
    expect(unreachable(new ServiceError('x', { cause: grpcError(GrpcCode.unavailable, 'down') }), 'h:1')).toBeDefined();
    expect(unreachable(new ServiceError('refused', { cause: grpcError(16, 'bad api key') }), 'h:1')).toBeUndefined();
  });
});

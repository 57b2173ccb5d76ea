import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLambdaHandler, type ApiGatewayV2Event, type ApiGatewayV2Handler } from '../../src/api/lambda';
import { gatewayEvent, recordedEvent } from '../support/api-gateway-events';
import { json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * The Lambda entry point, invoked with API Gateway HTTP API (payload 2.0) events built from recorded
 * shapes in test/fixtures/api-gateway, answers exactly as the Node server does.
 */

let stack: ApiStack;
let handler: ApiGatewayV2Handler;
beforeAll(async () => {
  stack = await startApiStack();
  handler = createLambdaHandler(stack.app);
});
afterAll(async () => {
  await stack?.stop();
});

/** An event for a request, in the recorded shape (tenant acme's key unless `key` says otherwise). */
function event(method: string, pathAndQuery: string, options: { key?: string | null; body?: string; base64?: boolean; headers?: Record<string, string> } = {}): ApiGatewayV2Event {
  return gatewayEvent(method, pathAndQuery, { ...options, key: options.key === undefined ? keys.acme : options.key });
}

async function both(method: string, pathAndQuery: string, options: { key?: string | null; body?: string } = {}) {
  const lambda = await handler(event(method, pathAndQuery, options));
  const init: RequestInit & { key?: string | null } = { method, key: options.key === undefined ? keys.acme : options.key };
  const node = await stack.request(pathAndQuery, options.body === undefined ? init : { ...init, headers: { 'content-type': 'application/json' }, body: options.body });
  const lambdaHeaders = 'headers' in lambda && lambda.headers ? lambda.headers : {};
  return {
    lambda: { status: lambda.statusCode, contentType: String(lambdaHeaders['content-type'] ?? ''), body: lambda.isBase64Encoded ? Buffer.from(lambda.body, 'base64').toString('utf8') : lambda.body },
    node: { status: node.status, contentType: node.headers.get('content-type') ?? '', body: await node.text() },
  };
}

describe('Lambda handler (API Gateway HTTP API, payload 2.0)', () => {
  it('runs the recorded POST event (base64 body, ?wait=) and returns the result', async () => {
    const answer = await handler(recordedEvent('http-api-v2-post.json'));
    // The recorded event has no key: 401, as on the Node server.
    expect(answer.statusCode).toBe(401);
    const withKey = recordedEvent('http-api-v2-post.json');
    withKey.headers.authorization = `Bearer ${keys.acme}`;
    const started = await handler(withKey);
    expect(started.statusCode).toBe(201);
    expect(JSON.parse(started.body)).toMatchObject({ created: true, state: 'completed', result: { output: 'done: from lambda' } });
  });

  const sameAnswers: [string, string, { key?: string | null; body?: string }?][] = [
    ['GET', '/healthz'],
    ['GET', '/openapi.json'],
    ['GET', '/v1/models'],
    ['GET', '/v1/sources'],
    ['GET', '/v1/sources/deploy'],
    ['GET', '/v1/sources/dpeloy'],
    ['GET', '/v1/delegations/errand-0123456789abcdef'],
    ['GET', '/v1/delegations?status=bogus'],
    ['GET', '/v1/models', { key: null }],
    ['GET', '/v1/models', { key: 'wrong' }],
    ['POST', '/v1/delegations', { body: '{"instructions": ' }],
    ['POST', '/v1/delegations', { body: '{"instructions":"x","bogus":true}' }],
    ['POST', '/v1/delegations', { body: '{"instructions":"x","model":"gpt-9"}' }],
    ['POST', '/v1/delegations/errand-0123456789abcdef/cancel', { body: '{}' }],
  ];
  for (const [method, path, options] of sameAnswers) {
    it(`${method} ${path}${options?.key !== undefined ? ` (key ${String(options.key)})` : ''}: same answer as the Node server`, async () => {
      const { lambda, node } = await both(method, path, options);
      expect(lambda.status).toBe(node.status);
      expect(lambda.contentType.split(';')[0]).toBe(node.contentType.split(';')[0]);
      expect(JSON.parse(lambda.body)).toEqual(JSON.parse(node.body));
    });
  }

  it('answers the event stream route with 501 and says to poll peek (API Gateway buffers responses)', async () => {
    const started = await handler(event('POST', '/v1/delegations', { body: JSON.stringify({ instructions: 'answer via lambda' }) }));
    const id = z.object({ id: z.string() }).parse(JSON.parse(started.body)).id;
    const streamed = await handler(event('GET', `/v1/delegations/${id}/events`));
    const anonymous = await handler(event('GET', `/v1/delegations/${id}/events`, { key: null }));

    expect(streamed.statusCode).toBe(501);
    expect(String(('headers' in streamed && streamed.headers?.['content-type']) || '')).toMatch(/^application\/problem\+json/);
    const problem = z.object({ type: z.string(), detail: z.string() }).parse(JSON.parse(streamed.body));
    expect(problem.type).toBe('urn:errand:problem:not-available-here');
    expect(problem.detail).toContain(`poll GET /v1/delegations/${id}`);
    expect(problem.detail).toContain('`partial`');
    expect(anonymous.statusCode).toBe(401);
  });

  it('starts, peeks, waits for and cancels a delegation through Lambda events', async () => {
    const started = await handler(event('POST', '/v1/delegations', { body: JSON.stringify({ instructions: 'slow work via lambda' }) }));
    expect(started.statusCode).toBe(201);
    const id = z.object({ id: z.string() }).parse(JSON.parse(started.body)).id;
    const pending = await handler(event('GET', `/v1/delegations/${id}/result?wait=200ms`));
    expect(pending.statusCode).toBe(202);
    const cancelled = await handler(event('POST', `/v1/delegations/${id}/cancel`, { body: '{"reason":"via lambda"}', base64: true }));
    expect(cancelled.statusCode).toBe(202);
    const result = await handler(event('GET', `/v1/delegations/${id}/result?wait=15s`));
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ done: true, result: { status: 'cancelled', diagnostic: 'via lambda' } });
    // And the Node server sees the same delegation.
    expect(await json(await stack.request(`/v1/delegations/${id}`))).toMatchObject({ id, state: 'cancelled' });
    expect((await stack.request(`/v1/delegations/${id}/messages`, postJson({ message: 'x' }))).status).toBe(409);
  });
});

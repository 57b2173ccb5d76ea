import { APICallError, JSONParseError, LoadAPIKeyError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { maxModelRetryAfterMs } from '../../src/contracts/limits';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { parseRetryAfterMs } from '../../src/llm/retry-after';

function apiError(statusCode: number | undefined, responseBody?: string, responseHeaders: Record<string, string> = {}): APICallError {
  return new APICallError({ message: 'sdk message', url: 'http://x/v1/chat/completions', requestBodyValues: {}, statusCode, responseBody, responseHeaders });
}

describe('retry-after parsing', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads seconds, HTTP dates and retry-after-ms, case-insensitively', () => {
    expect(parseRetryAfterMs({ 'retry-after': '12' }, now)).toBe(12_000);
    expect(parseRetryAfterMs({ 'Retry-After': '1.5' }, now)).toBe(1_500);
    expect(parseRetryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now)).toBe(30_000);
    expect(parseRetryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
  });

  it('ignores garbage, clamps past dates to 0 and caps very long hints', () => {
    expect(parseRetryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(parseRetryAfterMs({}, now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now)).toBe(0);
    expect(parseRetryAfterMs({ 'retry-after': '86400' }, now)).toBe(maxModelRetryAfterMs);
  });
});

describe('classifyModelError', () => {
  it('reads provider messages from the usual error body shapes', () => {
    expect(classifyModelError(apiError(400, '{"error":{"message":"OpenAI says no","type":"invalid_request_error"}}')).message).toBe('OpenAI says no');
    expect(classifyModelError(apiError(404, '{"error":"model \'llama9\' not found"}')).message).toBe("model 'llama9' not found");
    expect(classifyModelError(apiError(400, '{"object":"error","message":"vLLM says no"}')).message).toBe('vLLM says no');
    expect(classifyModelError(apiError(422, '{"detail":"FastAPI says no"}')).message).toBe('FastAPI says no');
    expect(classifyModelError(apiError(401, 'Unauthorized')).message).toBe('Unauthorized');
    expect(classifyModelError(apiError(401, '')).message).toBe('sdk message');
  });

  it('maps statuses: 408/5xx unavailable, other 4xx rejected, 503 keeps its retry-after', () => {
    expect(classifyModelError(apiError(408))).toMatchObject({ type: 'ModelUnavailable', retryable: true });
    expect(classifyModelError(apiError(503, undefined, { 'retry-after': '4' }))).toMatchObject({ type: 'ModelUnavailable', retryAfterMs: 4000 });
    expect(classifyModelError(apiError(401))).toMatchObject({ type: 'ModelRequestRejected', retryable: false, status: 401 });
    expect(classifyModelError(apiError(409))).toMatchObject({ type: 'ModelRequestRejected', retryable: false });
    expect(classifyModelError(apiError(undefined))).toMatchObject({ type: 'ModelUnavailable', retryable: true });
  });

  it('recognises aborts and timeouts', () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyModelError(controller.signal.reason)).toMatchObject({ type: modelCallAborted, retryable: false });
    expect(classifyModelError(new DOMException('timed out', 'TimeoutError'))).toMatchObject({ type: 'ModelUnavailable', retryable: true });
  });

  it('keeps the type of ApplicationFailures and maps SDK errors', () => {
    expect(classifyModelError(ApplicationFailure.nonRetryable('no such blob', 'BlobMissing'))).toEqual({ type: 'BlobMissing', message: 'no such blob', retryable: false });
    expect(classifyModelError(ApplicationFailure.retryable('later', 'ModelUnavailable'))).toEqual({ type: 'ModelUnavailable', message: 'later', retryable: true });
    expect(classifyModelError(new JSONParseError({ text: '{', cause: new Error('eof') }))).toMatchObject({ type: 'ModelBadResponse', retryable: false });
    expect(classifyModelError(new LoadAPIKeyError({ message: 'key missing' }))).toMatchObject({ type: 'ModelNotConfigured', retryable: false });
  });

  it('treats network error codes and unknown errors as unavailable', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(classifyModelError(refused)).toMatchObject({ type: 'ModelUnavailable', retryable: true });
    expect(classifyModelError(new TypeError('fetch failed', { cause: refused }))).toMatchObject({ type: 'ModelUnavailable', retryable: true });
    expect(classifyModelError('weird')).toMatchObject({ type: 'ModelUnavailable', message: 'model call failed: weird' });
  });
});

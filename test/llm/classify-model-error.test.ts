import { APICallError, JSONParseError, LoadAPIKeyError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { maxModelRetryAfterMs } from '../../src/contracts/limits/llm';
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

  it('recognises a prompt over the context window from each vendor as ModelContextOverflow, not retryable', () => {
    const openai = '{"error":{"message":"This model\'s maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}';
    const anthropic = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}';
    const anthropicWithOutput = '{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198981 + 21333 > 200000, decrease input length or `max_tokens` and try again"}}';
    const llamaCpp = '{"error":{"code":400,"message":"request (809 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":809,"n_ctx":512}}';
    const vllm = '{"object":"error","message":"This model\'s maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}';
    for (const body of [openai, anthropic, anthropicWithOutput, llamaCpp, vllm]) {
      expect(classifyModelError(apiError(400, body))).toMatchObject({ type: 'ModelContextOverflow', retryable: false, status: 400 });
    }
    expect(classifyModelError(apiError(400, anthropic)).message).toBe('prompt is too long: 208310 tokens > 200000 maximum');
    expect(classifyModelError(apiError(400, '{"error":{"message":"tools: too many","type":"invalid_request_error"}}')).type).toBe('ModelRequestRejected');
  });

  it('treats a connection that broke off after the answer began (a 200) as retryable', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const broken = new APICallError({
      message: 'Failed to process successful response',
      url: 'http://x/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 200,
      cause: new TypeError('terminated', { cause: socket }),
    });
    expect(classifyModelError(broken)).toMatchObject({ type: 'ModelUnavailable', retryable: true, status: 200 });
    expect(classifyModelError(apiError(200, '<html>'))).toMatchObject({ type: 'ModelBadResponse', retryable: false });
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

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonObject, JsonValue } from '../contracts/json';
import type { FinishReason } from '../contracts/model';
import { scriptedServerMaxBodyBytes } from '../contracts/limits';
import { deepCopy, isJsonObject, tryParseJson } from './json-value';
import {
  parseScript,
  rawArguments,
  scriptExhaustedErrorCode,
  stepFinishReason,
  stepUsage,
  type ScriptResponder,
  type ScriptStep,
} from './scripted-step';

/**
 * A scripted model vendor over real HTTP, so tests exercise the real provider adapters (DESIGN.md,
 * Tests). It serves the OpenAI Chat Completions API (`POST /v1/chat/completions`, non-streaming — the
 * adapters never stream) and the Anthropic Messages API (`POST /v1/messages`) from one script, and
 * records every request. Scripted errors are real HTTP error statuses with the vendor's error body and
 * `retry-after` header; a delayed step holds the response open and notices a client disconnect.
 * An unscripted request is answered 400 with error type `script_exhausted` (non-retryable, classified as
 * ScriptExhausted) and recorded, so a test can assert that none happened.
 *
 * A control API lets another process drive it: `POST /__script` (a list of steps, or `{steps}`) enqueues,
 * `GET /__requests` returns the log, `POST /__reset` clears queue and log.
 */

/** Which vendor API a request used. */
export type ScriptedApi = 'chat-completions' | 'messages';

/** One model API request the server received. */
export interface RecordedRequest {
  /** 0-based index among model API requests since start (or the last reset). */
  callIndex: number;
  api: ScriptedApi;
  method: string;
  path: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: JsonValue;
  /** When the request arrived (ms since the epoch). */
  receivedAt: number;
  /** When the response was finished or the client went away (ms since the epoch). */
  finishedAt?: number;
  /** HTTP status of the answer (also set for an aborted request: the status it would have had). */
  status?: number;
  /** True when the client disconnected before the response was complete. */
  aborted: boolean;
  /** True when the script had no step for this request. */
  exhausted: boolean;
}

/** Options of the scripted server. */
export interface ScriptedServerOptions {
  /** Initial queue of steps. */
  steps?: ScriptStep[];
  /** A responder instead of (or after setting, in place of) the queue. */
  responder?: ScriptResponder<RecordedRequest>;
  /** Interface to listen on; loopback by default. */
  host?: string;
  /** Port; a free random port by default. */
  port?: number;
}

/** A running scripted server. */
export interface ScriptedOpenAIServer {
  /** Base URL including `/v1`, for `baseUrl` of an openai-compatible or anthropic provider. */
  url: string;
  port: number;
  /** Adds steps to the queue. */
  enqueue(...steps: ScriptStep[]): void;
  /** Answers with a responder instead of the queue; `undefined` goes back to the queue. */
  setResponder(responder: ScriptResponder<RecordedRequest> | undefined): void;
  /** Every model API request, in arrival order (live array). */
  readonly requests: RecordedRequest[];
  /** Requests that found the script exhausted; a test asserts this is empty. */
  readonly exhaustedRequests: RecordedRequest[];
  /** Steps left in the queue. */
  readonly remainingSteps: number;
  /** Resolves when at least `count` requests have arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves when `predicate` holds for the request log; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Clears queue, responder and log. */
  reset(): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const defaultWaitMs = 10_000;

/** Starts a scripted OpenAI-compatible (and Anthropic Messages) server on loopback. */
export async function startScriptedOpenAIServer(options: ScriptedServerOptions = {}): Promise<ScriptedOpenAIServer> {
  const queue: ScriptStep[] = [...(options.steps ?? [])];
  let responder = options.responder;
  let scriptedCount = queue.length;
  const requests: RecordedRequest[] = [];
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };

  const nextStep = async (record: RecordedRequest): Promise<ScriptStep | undefined> =>
    responder ? responder(deepCopy(record), record.callIndex) : queue.shift();

  const handleModelRequest = async (api: ScriptedApi, request: IncomingMessage, response: ServerResponse, body: JsonValue): Promise<void> => {
    const record: RecordedRequest = {
      callIndex: requests.length,
      api,
      method: request.method ?? 'POST',
      path: request.url ?? '',
      headers: headerRecord(request),
      body,
      receivedAt: Date.now(),
      aborted: false,
      exhausted: false,
    };
    requests.push(record);
    let clientGone = false;
    let wake: (() => void) | undefined;
    response.on('close', () => {
      if (!response.writableFinished) {
        clientGone = true;
        record.aborted = true;
        wake?.();
      }
      record.finishedAt = Date.now();
      notify();
    });
    notify();

    if (isJsonObject(body) && body.stream === true) {
      record.status = 400;
      sendError(response, api, 400, 'the scripted server does not stream: send "stream": false', 'invalid_request_error');
      return;
    }
    const step = await nextStep(record);
    if (step === undefined) {
      record.exhausted = true;
      record.status = 400;
      const message = responder
        ? `scripted server: the responder gave no step for request #${record.callIndex + 1} (script exhausted)`
        : `scripted server: script exhausted — ${scriptedCount} step(s) were scripted and request #${record.callIndex + 1} (${record.method} ${record.path}) has none`;
      sendError(response, api, 400, message, scriptExhaustedErrorCode);
      return;
    }
    if (step.delayMs !== undefined && step.delayMs > 0 && !clientGone) {
      // Hold the response open; a client disconnect ends the wait early (that is what aborts look like).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, step.delayMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const status = step.error?.status ?? 200;
    record.status = status;
    if (clientGone) return;
    if (step.error !== undefined) {
      const headers: Record<string, string> = {};
      if (step.error.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.error.retryAfterSeconds);
      sendError(response, api, step.error.status, step.error.message, errorTypeFor(api, step.error.status), headers);
      return;
    }
    sendJson(response, 200, api === 'chat-completions' ? chatCompletion(step, record, body) : anthropicMessage(step, record, body));
  };

  const handleControl = (path: string, request: IncomingMessage, response: ServerResponse, body: JsonValue | undefined): void => {
    if (path === '/__script' && request.method === 'POST') {
      let steps: ScriptStep[];
      try {
        steps = parseScript(body, 'POST /__script');
      } catch (error) {
        sendJson(response, 400, { error: { message: error instanceof Error ? error.message : String(error) } });
        return;
      }
      queue.push(...steps);
      scriptedCount += steps.length;
      sendJson(response, 200, { queued: steps.length, remaining: queue.length });
    } else if (path === '/__requests' && request.method === 'GET') {
      sendJson(response, 200, { requests: requests.map(recordToJson), remaining: queue.length });
    } else if (path === '/__reset' && request.method === 'POST') {
      reset();
      sendJson(response, 200, { reset: true });
    } else {
      notFound(request, response);
    }
  };

  const reset = (): void => {
    queue.length = 0;
    requests.length = 0;
    scriptedCount = 0;
    responder = undefined;
    notify();
  };

  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    readBody(request)
      .then(async (text) => {
        const body = text === '' ? undefined : tryParseJson(text);
        if (text !== '' && body === undefined) {
          sendJson(response, 400, { error: { message: 'scripted server: the request body is not valid JSON', type: 'invalid_request_error' } });
          return;
        }
        const api: ScriptedApi | undefined =
          request.method === 'POST' && path === '/v1/chat/completions' ? 'chat-completions' : request.method === 'POST' && path === '/v1/messages' ? 'messages' : undefined;
        if (api !== undefined) {
          if (body === undefined) {
            sendError(response, api, 400, 'scripted server: the request has no JSON body', 'invalid_request_error');
            return;
          }
          await handleModelRequest(api, request, response, body);
        } else if (path.startsWith('/__')) {
          handleControl(path, request, response, body);
        } else {
          notFound(request, response);
        }
      })
      .catch((error: unknown) => {
        const tooLarge = error instanceof BodyTooLargeError;
        if (!response.headersSent) {
          sendJson(response, tooLarge ? 413 : 500, { error: { message: `scripted server: ${error instanceof Error ? error.message : String(error)}` } });
        } else {
          response.destroy();
        }
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('scripted server: could not read its listening address');
  const port = (address satisfies AddressInfo).port;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const waitFor = (predicate: (log: RecordedRequest[]) => boolean, timeoutMs = defaultWaitMs, what = 'condition'): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (predicate(requests)) {
        resolve();
        return;
      }
      const listener = (): void => {
        if (!predicate(requests)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`scripted server: timed out after ${timeoutMs} ms waiting for ${what} (${requests.length} request(s) so far)`));
      }, timeoutMs);
      listeners.add(listener);
    });

  return {
    url: `http://${host}:${port}/v1`,
    port,
    enqueue(...steps: ScriptStep[]): void {
      queue.push(...deepCopy(steps));
      scriptedCount += steps.length;
    },
    setResponder(next: ScriptResponder<RecordedRequest> | undefined): void {
      responder = next;
    },
    requests,
    get exhaustedRequests(): RecordedRequest[] {
      return requests.filter((record) => record.exhausted);
    },
    get remainingSteps(): number {
      return queue.length;
    },
    async waitForRequests(count: number, timeoutMs = defaultWaitMs): Promise<RecordedRequest[]> {
      await waitFor((log) => log.length >= count, timeoutMs, `${count} request(s)`);
      return requests.slice(0, count);
    },
    waitFor,
    reset,
    close(): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Held-open (delayed) responses would keep close() waiting for their timers.
        server.closeAllConnections();
      });
    },
  };
}

// ---- HTTP helpers -----------------------------------------------------------------------------------

class BodyTooLargeError extends Error {}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > scriptedServerMaxBodyBytes) {
        reject(new BodyTooLargeError(`request body over ${scriptedServerMaxBodyBytes} bytes`));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function headerRecord(request: IncomingMessage): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

function sendJson(response: ServerResponse, status: number, body: JsonValue, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

function notFound(request: IncomingMessage, response: ServerResponse): void {
  sendJson(response, 404, {
    error: {
      message: `scripted server: no route ${request.method ?? ''} ${request.url ?? ''}; it serves POST /v1/chat/completions, POST /v1/messages, POST /__script, GET /__requests, POST /__reset`,
      type: 'not_found_error',
    },
  });
}

/** An error in the vendor's own format: OpenAI `{error: {message, type, code}}`, Anthropic `{type: 'error', error: {type, message}}`. */
function sendError(response: ServerResponse, api: ScriptedApi, status: number, message: string, type: string, headers: Record<string, string> = {}): void {
  const body: JsonObject =
    api === 'messages' ? { type: 'error', error: { type, message } } : { error: { message, type, code: type, param: null } };
  sendJson(response, status, body, headers);
}

function errorTypeFor(api: ScriptedApi, status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return api === 'messages' ? 'rate_limit_error' : 'rate_limit_exceeded';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return api === 'messages' ? 'api_error' : 'server_error';
  return 'invalid_request_error';
}

function modelOf(body: JsonValue): string {
  return isJsonObject(body) && typeof body.model === 'string' ? body.model : 'scripted';
}

function recordToJson(record: RecordedRequest): JsonObject {
  const { finishedAt, status, ...rest } = record;
  return { ...rest, ...(finishedAt === undefined ? {} : { finishedAt }), ...(status === undefined ? {} : { status }) };
}

// ---- answers ------------------------------------------------------------------------------------------

const openAIFinishReasons: Record<FinishReason, string> = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
  error: 'error',
  other: 'other',
};

function chatCompletion(step: ScriptStep, record: RecordedRequest, body: JsonValue): JsonObject {
  const usage = stepUsage(step, body);
  const toolCalls = (step.toolCalls ?? []).map((call, index): JsonObject => ({
    id: call.id ?? `call_${record.callIndex}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: rawArguments(call) },
  }));
  return {
    id: `chatcmpl-scripted-${record.callIndex}`,
    object: 'chat.completion',
    created: Math.floor(record.receivedAt / 1000),
    model: modelOf(body),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: step.text ?? (toolCalls.length > 0 ? null : ''),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: openAIFinishReasons[stepFinishReason(step)],
      },
    ],
    usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens },
  };
}

const anthropicStopReasons: Record<FinishReason, string> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'refusal',
  error: 'end_turn',
  other: 'end_turn',
};

function anthropicMessage(step: ScriptStep, record: RecordedRequest, body: JsonValue): JsonObject {
  const usage = stepUsage(step, body);
  const content: JsonObject[] = [];
  if (step.text !== undefined && step.text !== '') content.push({ type: 'text', text: step.text });
  (step.toolCalls ?? []).forEach((call, index) => {
    // The Messages API carries input as an object; raw (string) arguments are parsed when they can be,
    // and otherwise sent as a string, which the adapter must reject as a bad response.
    const parsed = typeof call.arguments === 'string' ? tryParseJson(call.arguments) : call.arguments;
    content.push({ type: 'tool_use', id: call.id ?? `toolu_${record.callIndex}_${index}`, name: call.name, input: parsed ?? rawArguments(call) });
  });
  if (content.length === 0) content.push({ type: 'text', text: '' });
  return {
    id: `msg_scripted_${record.callIndex}`,
    type: 'message',
    role: 'assistant',
    model: modelOf(body),
    content,
    stop_reason: anthropicStopReasons[stepFinishReason(step)],
    stop_sequence: null,
    usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
  };
}

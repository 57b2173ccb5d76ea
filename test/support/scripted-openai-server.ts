import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonObject, JsonValue } from '../../src/contracts/json';
import { defaultContextWindow, scriptedServerMaxBodyBytes } from '../../src/contracts/limits/llm';
import { estimateTextTokens } from '../../src/domain/token-estimate';
import { deepCopy, isJsonObject, tryParseJson } from '../../src/llm/json-value';
import { parseScript, scriptedAnswer, scriptExhaustedErrorCode, type ScriptResponder, type ScriptStep } from '../../src/llm/scripted-step';
import { streamEndlessly } from './endless-stream';
import { answerBody, answerEvents, type StreamEvent } from './vendor-answers';
import { checkVendorRequest, type ScriptedApi, type VendorRejection } from './vendor-rules';

export type { ScriptedApi } from './vendor-rules';

/**
 * A scripted model vendor over real HTTP, so tests exercise the real provider adapters (DESIGN.md,
 * Tests). A test double: it lives under test/ and never ships. It serves the OpenAI Chat Completions API
 * (`POST /v1/chat/completions`) and the Anthropic Messages API (`POST /v1/messages`) from one script,
 * streamed (server-sent events in each vendor's format) or not, and records every request.
 *
 * It is as strict as the strictest real provider (`vendor-rules.ts`): a request the vendor would refuse —
 * an unanswered tool call, a tool result for no call, Anthropic's role order and empty text, a missing
 * `max_tokens`, a prompt over the context window — gets the vendor's 400 and error body, uses no script
 * step, and is recorded with its `rejection`. An answer longer than the request's output-token limit is
 * cut there and ends with `finish_reason: "length"` / `stop_reason: "max_tokens"`.
 *
 * Scripted errors are real HTTP error statuses with the vendor's error body and `retry-after` header; a
 * delayed step holds the response open and notices a client disconnect; `breakAfterChars` drops the
 * connection mid-answer. An unscripted request is answered 400 with error type `script_exhausted`
 * (non-retryable, classified as ScriptExhausted) and recorded, so a test can assert that none happened.
 *
 * A control API lets another process drive it: `POST /__script` (a list of steps, or `{steps}`) enqueues,
 * `GET /__requests` returns the log, `POST /__reset` clears queue and log.
 */

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
  /** True when the request streamed (`stream: true`). */
  streamed: boolean;
  /** Why the vendor would have refused the request, when it would have (no script step was used). */
  rejection?: { type: string; message: string };
  /** True when the server dropped the connection on purpose (`breakAfterChars`). */
  broken: boolean;
  /** For an `endless` step: bytes of the stream written before the client closed it. */
  endlessBytes?: number;
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
  /** Context window the server enforces, in tokens estimated with `estimateTokens` (default `defaultContextWindow`). */
  contextWindow?: number;
  /** Characters of answer per streamed event (default 8). */
  streamChunkChars?: number;
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
  /** Changes the context window enforced from the next request on (`reset` restores the initial one). */
  setContextWindow(tokens: number): void;
  /** Every model API request, in arrival order (live array). */
  readonly requests: RecordedRequest[];
  /** Requests that found the script exhausted; a test asserts this is empty. */
  readonly exhaustedRequests: RecordedRequest[];
  /** Requests the vendor would have refused; a test of a valid conversation asserts this is empty. */
  readonly rejectedRequests: RecordedRequest[];
  /** Steps left in the queue. */
  readonly remainingSteps: number;
  /** Resolves when at least `count` requests have arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves when `predicate` holds for the request log; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Clears queue, responder and log, and restores the initial context window. */
  reset(): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const defaultWaitMs = 10_000;
const defaultStreamChunkChars = 8;

/** Starts a scripted OpenAI-compatible (and Anthropic Messages) server on loopback. */
export async function startScriptedOpenAIServer(options: ScriptedServerOptions = {}): Promise<ScriptedOpenAIServer> {
  const queue: ScriptStep[] = [...(options.steps ?? [])];
  let responder = options.responder;
  let scriptedCount = queue.length;
  const initialContextWindow = options.contextWindow ?? defaultContextWindow;
  let contextWindow = initialContextWindow;
  const chunkChars = Math.max(1, options.streamChunkChars ?? defaultStreamChunkChars);
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
      streamed: isJsonObject(body) && body.stream === true,
      broken: false,
    };
    requests.push(record);
    let clientGone = false;
    let wake: (() => void) | undefined;
    response.on('close', () => {
      if (!response.writableFinished) {
        clientGone = true;
        record.aborted = !record.broken;
        wake?.();
      }
      record.finishedAt = Date.now();
      notify();
    });
    notify();
    const hold = async (ms: number): Promise<void> => {
      if (ms <= 0 || clientGone) return;
      // A client disconnect ends the wait early (that is what aborts look like).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    };

    const betas = (record.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).filter((beta) => beta !== '');
    const check = checkVendorRequest(api, body, contextWindow, betas);
    if (!check.ok) {
      record.status = check.rejection.status;
      record.rejection = { type: check.rejection.type, message: check.rejection.message };
      sendRejection(response, api, check.rejection);
      return;
    }
    const step = await nextStep(record);
    if (step === undefined) {
      record.exhausted = true;
      record.status = 400;
      const message = responder
        ? `scripted server: the responder gave no step for request #${record.callIndex + 1} (script exhausted)`
        : `scripted server: script exhausted — ${scriptedCount} step(s) were scripted and request #${record.callIndex + 1} (${record.method} ${record.path}) has none`;
      sendRejection(response, api, { status: 400, type: scriptExhaustedErrorCode, message, code: scriptExhaustedErrorCode, param: null });
      return;
    }
    await hold(step.delayMs ?? 0);
    const status = step.error?.status ?? 200;
    record.status = status;
    if (clientGone) return;
    if (step.error !== undefined) {
      const headers: Record<string, string> = {};
      if (step.error.retryAfterSeconds !== undefined) headers['retry-after'] = String(step.error.retryAfterSeconds);
      sendRejection(response, api, { status: step.error.status, type: errorTypeFor(api, step.error.status), message: step.error.message, code: null, param: null }, headers);
      return;
    }
    const { request: wanted } = check;
    const answer = scriptedAnswer(
      step,
      (index) => (api === 'messages' ? `toolu_${record.callIndex}_${index}` : `call_${record.callIndex}_${index}`),
      wanted.promptTokens,
      // Thinking counts against Anthropic's max_tokens too: what it used is not left for the answer.
      wanted.thinking && step.reasoning !== undefined ? Math.max(0, wanted.maxOutputTokens - estimateTextTokens(step.reasoning)) : wanted.maxOutputTokens,
    );
    const context = { callIndex: record.callIndex, model: modelOf(body), created: Math.floor(record.receivedAt / 1000), thinking: wanted.thinking };
    if (!wanted.stream) {
      if (step.breakAfterChars !== undefined) {
        // A connection that drops before the answer: the client sees no response at all.
        record.broken = true;
        response.destroy();
        return;
      }
      sendJson(response, 200, answerBody(api, answer, context));
      return;
    }
    if (step.contextRunOutAfterChars !== undefined && api !== 'chat-completions') {
      sendRejection(response, api, { status: 400, type: 'invalid_request_error', message: 'scripted server: contextRunOutAfterChars is llama.cpp\'s stream error: it needs a streamed chat completions request', code: null, param: null });
      return;
    }
    if (step.endless === true) {
      if (!wanted.stream || api !== 'chat-completions') {
        sendRejection(response, api, { status: 400, type: 'invalid_request_error', message: 'scripted server: an endless step needs a streamed chat completions request', code: null, param: null });
        return;
      }
      await streamEndlessly(response, answerEvents(api, answer, context, { includeUsage: false, chunkChars })[0]?.wire ?? '', answer.text, context, () => clientGone, (bytes) => (record.endlessBytes = bytes));
      return;
    }
    const events = answerEvents(api, answer, context, { includeUsage: wanted.includeUsage, chunkChars });
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    await streamEvents(response, events, step, hold, () => clientGone, () => {
      record.broken = true;
    });
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
    contextWindow = initialContextWindow;
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
            sendRejection(response, api, { status: 400, type: 'invalid_request_error', message: 'scripted server: the request has no JSON body', code: null, param: null });
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
    setContextWindow(tokens: number): void {
      contextWindow = tokens;
    },
    requests,
    get exhaustedRequests(): RecordedRequest[] {
      return requests.filter((record) => record.exhausted);
    },
    get rejectedRequests(): RecordedRequest[] {
      return requests.filter((record) => record.rejection !== undefined);
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

/**
 * Writes a streamed answer's events, waiting `chunkDelayMs` between events that carry answer text, and
 * drops the connection once `breakAfterChars` answer characters have gone out (after they reached the
 * socket, so the client sees the text before the break).
 */
async function streamEvents(
  response: ServerResponse,
  events: StreamEvent[],
  step: ScriptStep,
  hold: (ms: number) => Promise<void>,
  clientGone: () => boolean,
  markBroken: () => void,
): Promise<void> {
  const total = events.reduce((sum, event) => sum + event.answerChars, 0);
  if (step.contextRunOutAfterChars !== undefined) {
    await streamUntilContextRunsOut(response, events, step, step.contextRunOutAfterChars, hold, clientGone);
    return;
  }
  const cut = step.breakAfterChars === undefined ? undefined : Math.min(step.breakAfterChars, total);
  const breakAfter = (wire: string): void => {
    markBroken();
    response.write(wire, () => response.destroy());
  };
  if (cut === 0) {
    // Nothing of the answer goes out: only the stream's opening event, then the drop.
    breakAfter(events[0]?.wire ?? '');
    return;
  }
  let sent = 0;
  let carriedText = false;
  for (const event of events) {
    if (clientGone()) return;
    if (event.answerChars > 0) {
      if (carriedText) await hold(step.chunkDelayMs ?? 0);
      if (clientGone()) return;
      carriedText = true;
      if (cut !== undefined && sent + event.answerChars >= cut) {
        const take = cut - sent;
        breakAfter(take === event.answerChars || event.partial === undefined ? event.wire : event.partial(take));
        return;
      }
    }
    sent += event.answerChars;
    response.write(event.wire);
  }
  response.end();
}

/** llama.cpp's server's stream event when its KV cache is full (seen from llama-server with parallel requests). */
const llamaContextRunOutEvent = `data: ${JSON.stringify({ error: { code: 500, message: 'Context size has been exceeded.', type: 'server_error' } })}\n\n`;

/**
 * Streams the answer's text up to `afterChars` characters, then llama.cpp's "Context size has been exceeded."
 * error event, and ends the stream (no finish event, no [DONE]), as llama-server does.
 */
async function streamUntilContextRunsOut(
  response: ServerResponse,
  events: StreamEvent[],
  step: ScriptStep,
  afterChars: number,
  hold: (ms: number) => Promise<void>,
  clientGone: () => boolean,
): Promise<void> {
  let sent = 0;
  let carriedText = false;
  for (const event of events) {
    if (clientGone()) return;
    if (event.answerChars > 0) {
      if (sent >= afterChars) break;
      if (carriedText) await hold(step.chunkDelayMs ?? 0);
      carriedText = true;
      if (sent + event.answerChars > afterChars) {
        response.write(event.partial === undefined ? event.wire : event.partial(afterChars - sent));
        sent = afterChars;
        break;
      }
      sent += event.answerChars;
    } else if (sent > 0) {
      // Past the text: the finish event and [DONE] never come.
      break;
    }
    response.write(event.wire);
  }
  response.end(llamaContextRunOutEvent);
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

/**
 * An error in the vendor's own format: OpenAI `{error: {message, type, param, code}}`, Anthropic
 * `{type: 'error', error: {type, message}, request_id}`.
 */
function sendRejection(response: ServerResponse, api: ScriptedApi, rejection: VendorRejection, headers: Record<string, string> = {}): void {
  const body: JsonObject =
    api === 'messages'
      ? { type: 'error', error: { type: rejection.type, message: rejection.message }, request_id: 'req_scripted' }
      : { error: { message: rejection.message, type: rejection.type, param: rejection.param ?? null, code: rejection.code ?? null } };
  sendJson(response, rejection.status, body, headers);
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
  const { finishedAt, status, rejection, ...rest } = record;
  return {
    ...rest,
    ...(finishedAt === undefined ? {} : { finishedAt }),
    ...(status === undefined ? {} : { status }),
    ...(rejection === undefined ? {} : { rejection }),
  };
}

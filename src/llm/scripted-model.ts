import { APICallError } from '@ai-sdk/provider';
import { defaultContextWindow, defaultMaxOutputTokens } from '../contracts/limits/llm';
import type { ModelRequest, ModelResponse, ToolCall } from '../contracts/model';
import { estimateTokens } from '../domain/token-estimate';
import { abortableDelay, abortErrorFor } from './abort-error';
import { findConversationViolation } from './conversation-rules';
import { deepCopy } from './json-value';
import { scriptExhaustedFailure } from './model-failures';
import type { ChatModel, GenerateOptions } from './model-port';
import { parseToolArguments } from './sdk-mapping';
import { scriptedAnswer, scriptedSignature, type ScriptResponder, type ScriptStep } from './scripted-step';

/** A request a scripted model received. */
export interface RecordedModelCall {
  /** 0-based index of the call on this model. */
  callIndex: number;
  /** A deep copy of the request, as it was when the call was made. */
  request: ModelRequest;
  /** True when the script had no step for this call (the call failed with ScriptExhausted). */
  exhausted: boolean;
  /**
   * Why the call was rejected as a real provider would reject it (a broken conversation rule, a prompt
   * over the context window), when it was. A rejected call uses no script step.
   */
  rejected?: string;
}

/** Options of a scripted model. */
export interface ScriptedModelOptions {
  /** Name used in messages, e.g. the provider name it stands in for. */
  name?: string;
  /** Record requests (default true). The long-running demo turns this off so memory stays flat. */
  record?: boolean;
  /**
   * Context window the model enforces, in tokens (estimated with the shared `estimateTokens`): a request
   * whose prompt plus `maxOutputTokens` exceeds it is rejected with OpenAI's `context_length_exceeded`.
   * Default `defaultContextWindow`.
   */
  contextWindow?: number;
  /** Characters per `onText` piece when the answer is streamed (default 16). */
  streamChunkChars?: number;
}

const defaultStreamChunkChars = 16;

/**
 * An in-process ChatModel that answers from a script: a queue of steps or a responder function. It is
 * the only stand-in for a model vendor in tests (DESIGN.md, Tests), so it records every request, fails
 * loudly — with a non-retryable ScriptExhausted failure — when a call was not scripted, and is as strict
 * as the strictest real provider: it rejects a conversation a provider would reject
 * (`findConversationViolation`) and a prompt over its context window with the same 400s, cuts an answer
 * at the request's `maxOutputTokens` (finish reason `length`), and streams the text through `onText`.
 */
export class ScriptedModel implements ChatModel {
  /** Every call, in order, including those that found the script exhausted or were rejected. */
  readonly calls: RecordedModelCall[] = [];
  private readonly queue: ScriptStep[] = [];
  private readonly responder: ScriptResponder<ModelRequest> | undefined;
  private scriptedCount = 0;
  private readonly name: string;
  private readonly record: boolean;
  private readonly streamChunkChars: number;
  private callCount = 0;
  /** Context window enforced now, in tokens; a test may change it between calls. */
  contextWindow: number;

  constructor(script: ScriptStep[] | ScriptResponder<ModelRequest>, options: ScriptedModelOptions = {}) {
    this.name = options.name ?? 'scripted model';
    this.record = options.record ?? true;
    this.contextWindow = options.contextWindow ?? defaultContextWindow;
    this.streamChunkChars = Math.max(1, options.streamChunkChars ?? defaultStreamChunkChars);
    if (typeof script === 'function') this.responder = script;
    else this.enqueue(...script);
  }

  /** Adds steps to the end of the queue (queue mode). */
  enqueue(...steps: ScriptStep[]): void {
    this.queue.push(...deepCopy(steps));
    this.scriptedCount += steps.length;
  }

  /** The recorded requests, in call order. */
  get requests(): ModelRequest[] {
    return this.calls.map((call) => call.request);
  }

  /** Steps not used yet (queue mode). */
  get remainingSteps(): number {
    return this.queue.length;
  }

  /** Number of calls made so far (also when not recording). */
  get totalCalls(): number {
    return this.callCount;
  }

  /** Calls that found the script exhausted; a test asserts this is 0. */
  get exhaustedCalls(): number {
    return this.calls.filter((call) => call.exhausted).length;
  }

  /** Calls rejected as a real provider would have rejected them; a test of a valid loop asserts there are none. */
  get rejectedCalls(): RecordedModelCall[] {
    return this.calls.filter((call) => call.rejected !== undefined);
  }

  async generate(request: ModelRequest, options: GenerateOptions): Promise<ModelResponse> {
    const callIndex = this.callCount;
    this.callCount += 1;
    const record: RecordedModelCall = {
      callIndex,
      request: this.record ? deepCopy(request) : { route: request.route, messages: [], tools: [] },
      exhausted: false,
    };
    if (this.record) this.calls.push(record);
    if (options.abortSignal?.aborted) throw abortErrorFor(options.abortSignal);

    // What a provider checks before it generates anything; a rejected request uses no script step.
    const violation = findConversationViolation(request.messages);
    if (violation !== undefined) {
      record.rejected = violation.message;
      throw rejection(this.name, violation.message, violation.param, null);
    }
    const maxOutputTokens = request.maxOutputTokens ?? defaultMaxOutputTokens;
    const promptTokens = estimateTokens(request.messages, request.tools);
    if (promptTokens + maxOutputTokens > this.contextWindow) {
      const message =
        `This model's maximum context length is ${this.contextWindow} tokens. However, you requested ${promptTokens + maxOutputTokens} tokens ` +
        `(${promptTokens} in the messages, ${maxOutputTokens} in the completion). Please reduce the length of the messages or completion.`;
      record.rejected = message;
      throw rejection(this.name, message, 'messages', 'context_length_exceeded');
    }

    // The copy keeps a recorded request as it was sent; without recording there is nothing to protect.
    const step = this.responder ? await this.responder(this.record ? deepCopy(request) : request, callIndex) : this.queue.shift();
    if (step === undefined) {
      record.exhausted = true;
      throw scriptExhaustedFailure(
        this.responder
          ? `${this.name}: the responder gave no step for call #${callIndex + 1} (script exhausted)`
          : `${this.name}: script exhausted — ${this.scriptedCount} call(s) were scripted, and call #${callIndex + 1} has no step; ` +
              `last message: ${describeLastMessage(request)}`,
      );
    }
    if (step.delayMs !== undefined && step.delayMs > 0) await abortableDelay(step.delayMs, options.abortSignal);
    if (step.error !== undefined) throw scriptedApiError(step.error, this.name);
    if (step.endless === true) throw new Error(`${this.name}: step "endless" is for the scripted HTTP server only (errand caps an answer where it reads a provider's stream)`);
    if (step.contextRunOutAfterChars !== undefined) throw new Error(`${this.name}: step "contextRunOutAfterChars" is for the scripted HTTP server only (errand reads the error event where it reads a provider's stream)`);

    const answer = scriptedAnswer(step, (index) => `call_${callIndex}_${index}`, promptTokens, maxOutputTokens);
    await this.stream(answer.text, step, options);
    // A call the output-token limit cut short cannot be parsed; like the adapters, drop it (the answer is truncated).
    const toolCalls: ToolCall[] = answer.toolCalls
      .filter((call) => call.complete)
      .map((call) => ({
        id: call.id,
        name: call.name,
        ...(typeof call.arguments === 'string' ? parseToolArguments(call.arguments) : { arguments: deepCopy(call.arguments) }),
      }));
    return {
      text: answer.text,
      toolCalls,
      finishReason: answer.finishReason,
      usage: answer.usage,
      ...(answer.reasoning === undefined ? {} : { reasoning: [{ text: answer.reasoning, signature: scriptedSignature(callIndex) }] }),
    };
  }

  /** Streams the text through `onText` in pieces, and breaks off like a dropped connection when the step says so. */
  private async stream(text: string, step: ScriptStep, options: GenerateOptions): Promise<void> {
    const breakAt = step.breakAfterChars;
    const end = breakAt === undefined ? text.length : Math.min(breakAt, text.length);
    for (let sent = 0; sent < end; ) {
      if (sent > 0 && step.chunkDelayMs !== undefined && step.chunkDelayMs > 0) await abortableDelay(step.chunkDelayMs, options.abortSignal);
      sent = Math.min(end, sent + this.streamChunkChars);
      options.onText?.(text.slice(0, sent));
    }
    if (breakAt !== undefined) throw droppedConnection(this.name);
  }
}

/** Builds a scripted model (same as `new ScriptedModel(...)`). */
export function createScriptedModel(script: ScriptStep[] | ScriptResponder<ModelRequest>, options: ScriptedModelOptions = {}): ScriptedModel {
  return new ScriptedModel(script, options);
}

/**
 * A scripted error as the SDK's APICallError, the same error an adapter raises for that HTTP answer,
 * so classification (rate limit, retry-after, rejection) behaves exactly as with a real provider.
 */
function scriptedApiError(error: NonNullable<ScriptStep['error']>, name: string): APICallError {
  const responseBody = JSON.stringify({ error: { message: error.message, type: 'scripted_error', code: null, param: null } });
  return new APICallError({
    message: error.message,
    url: `scripted://${name}`,
    requestBodyValues: {},
    statusCode: error.status,
    responseHeaders: error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) },
    responseBody,
  });
}

/** A request a real provider would refuse: its 400 with OpenAI's error body. */
function rejection(name: string, message: string, param: string, code: string | null): APICallError {
  return new APICallError({
    message,
    url: `scripted://${name}`,
    requestBodyValues: {},
    statusCode: 400,
    responseHeaders: {},
    responseBody: JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } }),
  });
}

/** What fetch rejects with when the server drops the connection mid-answer (undici's "terminated"). */
function droppedConnection(name: string): Error {
  const socketError = Object.assign(new Error(`${name}: other side closed (scripted breakAfterChars)`), { code: 'UND_ERR_SOCKET' });
  return new TypeError('terminated', { cause: socketError });
}

function describeLastMessage(request: ModelRequest): string {
  const last = request.messages[request.messages.length - 1];
  if (last === undefined) return '(none)';
  const text = last.content.length > 120 ? `${last.content.slice(0, 120)}…` : last.content;
  return `${last.role}: ${JSON.stringify(text)}`;
}

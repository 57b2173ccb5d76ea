import { APICallError } from '@ai-sdk/provider';
import type { ModelRequest, ModelResponse, ToolCall } from '../contracts/model';
import { abortableDelay, abortErrorFor } from './abort-error';
import { deepCopy } from './json-value';
import { scriptExhaustedFailure } from './model-failures';
import type { ChatModel, GenerateOptions } from './model-port';
import { parseToolArguments } from './sdk-mapping';
import { stepFinishReason, stepUsage, type ScriptResponder, type ScriptStep } from './scripted-step';

/** A request a scripted model received. */
export interface RecordedModelCall {
  /** 0-based index of the call on this model. */
  callIndex: number;
  /** A deep copy of the request, as it was when the call was made. */
  request: ModelRequest;
  /** True when the script had no step for this call (the call failed with ScriptExhausted). */
  exhausted: boolean;
}

/** Options of a scripted model. */
export interface ScriptedModelOptions {
  /** Name used in messages, e.g. the provider name it stands in for. */
  name?: string;
  /** Record requests (default true). The long-running demo turns this off so memory stays flat. */
  record?: boolean;
}

/**
 * An in-process ChatModel that answers from a script: a queue of steps or a responder function. It is
 * the only stand-in for a model vendor in tests (DESIGN.md, Tests), so it records every request and
 * fails loudly — with a non-retryable ScriptExhausted failure — when a call was not scripted.
 */
export class ScriptedModel implements ChatModel {
  /** Every call, in order, including those that found the script exhausted. */
  readonly calls: RecordedModelCall[] = [];
  private readonly queue: ScriptStep[] = [];
  private readonly responder: ScriptResponder<ModelRequest> | undefined;
  private scriptedCount = 0;
  private readonly name: string;
  private readonly record: boolean;
  private callCount = 0;

  constructor(script: ScriptStep[] | ScriptResponder<ModelRequest>, options: ScriptedModelOptions = {}) {
    this.name = options.name ?? 'scripted model';
    this.record = options.record ?? true;
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

  async generate(request: ModelRequest, options: GenerateOptions): Promise<ModelResponse> {
    const callIndex = this.callCount;
    this.callCount += 1;
    const record: RecordedModelCall = { callIndex, request: this.record ? deepCopy(request) : { route: request.route, messages: [], tools: [] }, exhausted: false };
    if (this.record) this.calls.push(record);
    if (options.abortSignal?.aborted) throw abortErrorFor(options.abortSignal);

    const step = this.responder ? await this.responder(deepCopy(request), callIndex) : this.queue.shift();
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

    const toolCalls: ToolCall[] = (step.toolCalls ?? []).map((call, index) => {
      const id = call.id ?? `call_${callIndex}_${index}`;
      return {
        id,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? parseToolArguments(call.arguments, call.name, id) : deepCopy(call.arguments),
      };
    });
    return { text: step.text ?? '', toolCalls, finishReason: stepFinishReason(step), usage: stepUsage(step, request) };
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

function describeLastMessage(request: ModelRequest): string {
  const last = request.messages[request.messages.length - 1];
  if (last === undefined) return '(none)';
  const text = last.content.length > 120 ? `${last.content.slice(0, 120)}…` : last.content;
  return `${last.role}: ${JSON.stringify(text)}`;
}

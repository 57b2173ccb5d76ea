import { z } from 'zod';
import type { JsonObject } from '../contracts/json';
import type { FinishReason, TokenUsage } from '../contracts/model';
import { estimateTextTokens, estimateToolCallTokens, truncateToTokens } from '../domain/token-estimate';
import { isJsonValue, tryParseJson } from './json-value';

/**
 * One step of a model script: what a scripted model (in process or over HTTP) answers to one call.
 * Both scripted models read the same steps, so a test can move between them without rewriting its script.
 */
export interface ScriptStep {
  /** The assistant text. */
  text?: string;
  /**
   * Tool calls to make. `arguments` is normally an object; a string is sent verbatim as the raw JSON
   * arguments, which lets a test script malformed JSON.
   */
  toolCalls?: ScriptedToolCall[];
  /** Wait this long before answering (the abort signal / a client disconnect ends the wait). */
  delayMs?: number;
  /** Fail the call with this HTTP status and message instead of answering. */
  error?: ScriptedError;
  /**
   * Token usage to report; a rough deterministic estimate (characters / 4) when omitted. Cached and
   * cache-write tokens are parts of `inputTokens`, reported as each vendor reports them.
   */
  usage?: Partial<Pick<TokenUsage, 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'cacheWriteInputTokens'>>;
  /** Finish reason; `tool-calls` when there are tool calls, otherwise `stop`, when omitted. */
  finishReason?: FinishReason;
  /**
   * Break the answer off, as a dropped connection does: once this many characters of the answer (its text,
   * then its tool-call arguments) have been streamed, the connection is destroyed. A request that does not
   * stream gets no answer at all. The in-process model fails the same way (a retryable network error).
   */
  breakAfterChars?: number;
  /** Wait this long between the streamed pieces of the answer (an abort / a disconnect ends the wait). */
  chunkDelayMs?: number;
  /**
   * Extended thinking before the answer. Anthropic-style: it comes back as a signed thinking block, over
   * HTTP only when the request enabled thinking.
   */
  reasoning?: string;
  /**
   * Never finish: over HTTP (chat completions, streamed), after the text, keep streaming more text until
   * the client closes the connection — a provider stream that does not end. The in-process model refuses
   * it: errand's caps on an answer sit where a provider's stream is read.
   */
  endless?: boolean;
  /**
   * Run out of context space after this many characters of the answer's text, as llama.cpp's server does when
   * its KV cache fills up (its parallel requests share it): over HTTP (chat completions, streamed) the stream
   * then carries llama.cpp's error event, `{"error":{"code":500,"message":"Context size has been exceeded.",
   * "type":"server_error"}}`, and ends. The in-process model refuses it, as it refuses `endless`.
   */
  contextRunOutAfterChars?: number;
}

/** A scripted tool call. */
export interface ScriptedToolCall {
  name: string;
  arguments: JsonObject | string;
  id?: string;
}

/** A scripted provider error. */
export interface ScriptedError {
  /** HTTP status, e.g. 429, 400, 503. */
  status: number;
  message: string;
  /** Sent as the `retry-after` header (seconds). */
  retryAfterSeconds?: number;
}

/** Chooses the step for a call; `undefined` means the script is exhausted. */
export type ScriptResponder<Request> = (request: Request, callIndex: number) => ScriptStep | undefined | Promise<ScriptStep | undefined>;

/**
 * Error type/code the scripted server puts in the body of its "script exhausted" answer, so
 * `classifyModelError` reports ScriptExhausted rather than an ordinary rejected request.
 */
export const scriptExhaustedErrorCode = 'script_exhausted';

const jsonObjectSchema = z.record(z.string(), z.unknown()).refine(isJsonValue, 'must be plain JSON');
const jsonObjectOrRaw = z.union([z.string(), jsonObjectSchema]);

/** A step's usage: what the vendor reports, cached prompt tokens included (parts of inputTokens). */
const scriptedUsageSchema = z
  .object({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    cachedInputTokens: z.number().int().nonnegative(),
    cacheWriteInputTokens: z.number().int().nonnegative(),
  })
  .partial()
  .strict()
  .superRefine((usage, context) => {
    const cached = (usage.cachedInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0);
    if (cached === 0) return;
    // Cached tokens are part of the prompt, as every vendor counts them: the prompt's size must be scripted too.
    if (usage.inputTokens === undefined) context.addIssue({ code: 'custom', path: ['inputTokens'], message: 'usage.inputTokens must be scripted with cachedInputTokens or cacheWriteInputTokens (they are part of it)' });
    else if (cached > usage.inputTokens) context.addIssue({ code: 'custom', path: ['cachedInputTokens'], message: `usage.cachedInputTokens + cacheWriteInputTokens (${cached}) must not exceed inputTokens (${usage.inputTokens})` });
  });

/** Strict schema of a script step, for scripts read from JSON files or the control API. */
export const scriptStepSchema = z
  .object({
    text: z.string().optional(),
    toolCalls: z
      .array(z.object({ name: z.string().min(1), arguments: jsonObjectOrRaw, id: z.string().min(1).optional() }).strict())
      .optional(),
    delayMs: z.number().int().nonnegative().optional(),
    error: z
      .object({
        status: z.number().int().min(400).max(599),
        message: z.string(),
        retryAfterSeconds: z.number().nonnegative().optional(),
      })
      .strict()
      .optional(),
    usage: scriptedUsageSchema.optional(),
    finishReason: z.enum(['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other']).optional(),
    breakAfterChars: z.number().int().nonnegative().optional(),
    chunkDelayMs: z.number().int().nonnegative().optional(),
    reasoning: z.string().optional(),
    endless: z.boolean().optional(),
    contextRunOutAfterChars: z.number().int().nonnegative().optional(),
  })
  .strict();

/** A list of steps, or `{steps: [...]}`. */
export const scriptSchema = z.union([z.array(scriptStepSchema), z.object({ steps: z.array(scriptStepSchema) }).strict()]);

/** Parses a script from untrusted JSON; the error names the failing step and field. */
export function parseScript(value: unknown, where: string): ScriptStep[] {
  const parsed = scriptSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new Error(`${where}: not a valid model script (a list of steps {text?, toolCalls?, delayMs?, error?, usage?, finishReason?, breakAfterChars?, chunkDelayMs?, reasoning?, endless?, contextRunOutAfterChars?}, or {steps: [...]}): ${problems}`);
  }
  const steps = Array.isArray(parsed.data) ? parsed.data : parsed.data.steps;
  return steps.map((step) => toScriptStep(step));
}

function toScriptStep(step: z.infer<typeof scriptStepSchema>): ScriptStep {
  const toolCalls = step.toolCalls?.map((call): ScriptedToolCall => {
    const args: JsonObject | string = typeof call.arguments === 'string' ? call.arguments : toJsonObject(call.arguments);
    return call.id === undefined ? { name: call.name, arguments: args } : { name: call.name, arguments: args, id: call.id };
  });
  const { toolCalls: _parsedToolCalls, ...rest } = step;
  return toolCalls === undefined ? rest : { ...rest, toolCalls };
}

function toJsonObject(record: Record<string, unknown>): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(record)) {
    if (isJsonValue(value)) result[key] = value;
  }
  return result;
}

/** The raw JSON text of a scripted call's arguments. */
export function rawArguments(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** Finish reason of a step. */
export function stepFinishReason(step: ScriptStep): FinishReason {
  return step.finishReason ?? ((step.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop');
}

/** A scripted tool call with its id, and whether the output-token limit cut it short. */
export interface AnsweredToolCall {
  id: string;
  name: string;
  arguments: JsonObject | string;
  /** False when the output-token limit cut the call's arguments short (they are then a raw, partial string). */
  complete: boolean;
}

/** What a scripted model answers to one call, after the output-token limit is applied. */
export interface ScriptedAnswer {
  /** The step's thinking, when it scripts some (not counted against the output-token limit). */
  reasoning?: string;
  text: string;
  toolCalls: AnsweredToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
}

function callTokens(call: { id: string; name: string; arguments: JsonObject | string }): number {
  // Raw arguments count as the JSON text they are; an object as the JSON text it is written as.
  const args = typeof call.arguments === 'string' ? (tryParseJson(call.arguments) ?? call.arguments) : call.arguments;
  return estimateToolCallTokens({ id: call.id, name: call.name, arguments: args });
}

/**
 * The answer to a step, as a provider with an output-token limit gives it: when the scripted text and tool
 * calls (estimated with the shared token estimate) exceed `maxOutputTokens`, the answer is cut there —
 * the text to its longest prefix within the limit, then whole tool calls while they fit, then the raw
 * arguments of one more call cut short (`complete: false`) — and it ends with finish reason `length` and
 * usage reporting the limit. Otherwise the step's finish reason and usage (scripted, or estimated).
 *
 * @param callId the id of the call at an index, for calls the step gives no id
 * @param promptTokens the estimated prompt tokens, reported as input usage unless the step scripts it
 */
export function scriptedAnswer(step: ScriptStep, callId: (index: number) => string, promptTokens: number, maxOutputTokens: number): ScriptedAnswer {
  const text = step.text ?? '';
  const calls = (step.toolCalls ?? []).map((call, index) => ({ id: call.id ?? callId(index), name: call.name, arguments: call.arguments }));
  const inputTokens = step.usage?.inputTokens ?? promptTokens;
  // Reported as the vendors report them: parts of inputTokens, left out when none.
  const cache = {
    ...(step.usage?.cachedInputTokens ? { cachedInputTokens: step.usage.cachedInputTokens } : {}),
    ...(step.usage?.cacheWriteInputTokens ? { cacheWriteInputTokens: step.usage.cacheWriteInputTokens } : {}),
  };
  const textTokens = estimateTextTokens(text);
  const fullTokens = calls.reduce((sum, call) => sum + callTokens(call), textTokens);
  const reasoning = step.reasoning === undefined || step.reasoning === '' ? {} : { reasoning: step.reasoning };
  if (fullTokens <= maxOutputTokens) {
    return {
      ...reasoning,
      text,
      toolCalls: calls.map((call) => ({ ...call, complete: true })),
      finishReason: stepFinishReason(step),
      usage: { inputTokens, outputTokens: step.usage?.outputTokens ?? fullTokens, ...cache },
    };
  }
  const cut: ScriptedAnswer = { ...reasoning, text: truncateToTokens(text, maxOutputTokens), toolCalls: [], finishReason: 'length', usage: { inputTokens, outputTokens: maxOutputTokens, ...cache } };
  let remaining = maxOutputTokens - textTokens;
  for (const call of calls) {
    if (remaining <= 0) break;
    const cost = callTokens(call);
    if (cost <= remaining) {
      cut.toolCalls.push({ ...call, complete: true });
      remaining -= cost;
      continue;
    }
    const framing = callTokens({ ...call, arguments: '' });
    cut.toolCalls.push({ ...call, arguments: truncateToTokens(rawArguments(call), Math.max(0, remaining - framing)), complete: false });
    break;
  }
  return cut;
}

/** The signature a scripted thinking block carries (opaque, like a real one). */
export function scriptedSignature(callIndex: number): string {
  return `scripted-signature-${callIndex}`;
}

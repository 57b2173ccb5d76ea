import { z } from 'zod';
import type { JsonObject, JsonValue } from '../contracts/json';
import type { FinishReason, ModelRequest, TokenUsage } from '../contracts/model';
import { isJsonValue } from './json-value';

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
  /** Token usage to report; a rough deterministic estimate (characters / 4) when omitted. */
  usage?: Partial<TokenUsage>;
  /** Finish reason; `tool-calls` when there are tool calls, otherwise `stop`, when omitted. */
  finishReason?: FinishReason;
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
    usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }).partial().strict().optional(),
    finishReason: z.enum(['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other']).optional(),
  })
  .strict();

/** A list of steps, or `{steps: [...]}`. */
export const scriptSchema = z.union([z.array(scriptStepSchema), z.object({ steps: z.array(scriptStepSchema) }).strict()]);

/** Parses a script from untrusted JSON; the error names the failing step and field. */
export function parseScript(value: unknown, where: string): ScriptStep[] {
  const parsed = scriptSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new Error(`${where}: not a valid model script (a list of steps {text?, toolCalls?, delayMs?, error?, usage?, finishReason?}, or {steps: [...]}): ${problems}`);
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

/** Usage of a step: scripted values, or about one token per four characters of input and output. */
export function stepUsage(step: ScriptStep, input: JsonValue | ModelRequest): TokenUsage {
  const outputChars = (step.text?.length ?? 0) + (step.toolCalls ?? []).reduce((sum, call) => sum + call.name.length + rawArguments(call).length, 0);
  return {
    inputTokens: step.usage?.inputTokens ?? Math.ceil(JSON.stringify(input).length / 4),
    outputTokens: step.usage?.outputTokens ?? Math.ceil(outputChars / 4),
  };
}

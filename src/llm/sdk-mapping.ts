import type {
  JSONSchema7,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { ChatMessage, FinishReason, ModelResponse, ReasoningBlock, ToolCall, ToolSpec } from '../contracts/model';
import { isJsonObject, tryParseJson } from './json-value';

/**
 * Mapping between our provider-neutral wire types and the AI SDK's provider-level (V3) types.
 * Pure functions: the adapters do the I/O.
 */

/** How a provider accepts system messages that come after the conversation has started. */
export type LateSystemMessages = 'keep' | 'as-user';

/** Provider-specific choices of the mapping. */
export interface SdkPromptOptions {
  /**
   * `as-user` turns system messages that follow a user/assistant/tool message into user messages marked
   * `[system]`, for providers that take system text only at the start (Anthropic). Default `keep`.
   */
  lateSystemMessages?: LateSystemMessages;
  /**
   * Send stored thinking back (Anthropic, whose thinking blocks carry signatures). Off for OpenAI-compatible
   * providers: some (DeepSeek) reject `reasoning_content` in the input.
   */
  sendReasoning?: boolean;
}

/** Our messages as an AI SDK V3 prompt. */
export function toSdkPrompt(messages: ChatMessage[], options: SdkPromptOptions = {}): LanguageModelV3Prompt {
  const lateSystemMessages = options.lateSystemMessages ?? 'keep';
  const prompt: LanguageModelV3Prompt = [];
  let conversationStarted = false;
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (conversationStarted && lateSystemMessages === 'as-user') {
          prompt.push({ role: 'user', content: [{ type: 'text', text: `[system] ${message.content}` }] });
        } else {
          prompt.push({ role: 'system', content: message.content });
        }
        break;
      case 'user':
        conversationStarted = true;
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
        break;
      case 'assistant': {
        conversationStarted = true;
        const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
        // Thinking goes first: Anthropic wants the turn to start with its thinking blocks.
        if (options.sendReasoning === true) {
          for (const block of message.reasoning ?? []) {
            if (block.signature !== undefined) content.push({ type: 'reasoning', text: block.text, providerOptions: { anthropic: { signature: block.signature } } });
            else if (block.redactedData !== undefined) content.push({ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: block.redactedData } } });
          }
        }
        // Anthropic rejects text blocks that are empty or only whitespace ("text content blocks must be
        // non-empty"); such text carries nothing for any provider, so it is left out.
        if (message.content.trim() !== '') content.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) {
          content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
        }
        // An assistant turn that said nothing and called nothing is left out: an empty text block would be
        // rejected, and the turns around it stay in order (consecutive user turns are merged or accepted).
        if (content.some((part) => part.type !== 'reasoning')) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        conversationStarted = true;
        const part: LanguageModelV3ToolResultPart = {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output: message.isError === true ? { type: 'error-text', value: message.content } : { type: 'text', value: message.content },
        };
        // Results of one assistant turn's parallel calls belong in one tool message.
        const previous = prompt[prompt.length - 1];
        if (previous?.role === 'tool') previous.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/** Our tool specs as AI SDK function tools. */
export function toSdkTools(tools: ToolSpec[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    // A JsonObject is structurally a JSON Schema document here; the SDK only forwards it to the provider.
    inputSchema: toJsonSchema7(tool.inputSchema),
  }));
}

function toJsonSchema7(schema: ToolSpec['inputSchema']): JSONSchema7 {
  // JSONSchema7 is a wide structural type of optional fields; copying keeps the object as the user wrote it.
  const result: JSONSchema7 = {};
  Object.assign(result, schema);
  return result;
}

/**
 * Parses a tool call's raw JSON arguments. Arguments that are not a JSON object do not fail the answer:
 * the call keeps `{}` and the raw text as `invalidArguments`, and is answered with a tool error that says
 * so (SEMANTICS §5), so the model can call again.
 */
export function parseToolArguments(raw: string): Pick<ToolCall, 'arguments' | 'invalidArguments'> {
  // Some servers send "" for a call without arguments.
  if (raw.trim() === '') return { arguments: {} };
  const parsed = tryParseJson(raw);
  if (parsed === undefined || !isJsonObject(parsed)) return { arguments: {}, invalidArguments: raw.length > 500 ? `${raw.slice(0, 500)}…` : raw };
  return { arguments: parsed };
}

/** What a model call produced, collected from the AI SDK stream parts. */
export interface SdkAnswer {
  /** The answer text, in order. */
  text: string;
  /** Tool calls with their raw JSON arguments, in order. */
  toolCalls: Array<{ toolCallId: string; toolName: string; input: string }>;
  finishReason: FinishReason;
  usage: { inputTokens: number | undefined; outputTokens: number | undefined; cachedInputTokens: number | undefined; cacheWriteInputTokens: number | undefined };
  /** Thinking blocks, in order. */
  reasoning: ReasoningBlock[];
}

/**
 * A collected answer as our ModelResponse. Tool-call arguments that are not a JSON object make the answer a
 * bad response (ModelBadResponse) — unless the answer was cut off at the output-token limit (`length`):
 * then an unfinished call is what the cut left behind, and it is dropped; the caller sees a truncated
 * answer, not a malformed one.
 */
export function toModelResponse(answer: SdkAnswer): ModelResponse {
  const toolCalls: ToolCall[] = [];
  for (const call of answer.toolCalls) {
    if (answer.finishReason === 'length') {
      // Under the limit even empty arguments are a cut, not a call without arguments (that would be "{}").
      const parsed = tryParseJson(call.input);
      if (parsed === undefined || !isJsonObject(parsed)) continue;
    }
    toolCalls.push({ id: call.toolCallId, name: call.toolName, ...parseToolArguments(call.input) });
  }
  const reasoning = answer.reasoning.filter((block) => block.text !== '' || block.signature !== undefined || block.redactedData !== undefined);
  return {
    text: answer.text,
    toolCalls,
    finishReason: answer.finishReason,
    usage: {
      inputTokens: answer.usage.inputTokens ?? 0,
      outputTokens: answer.usage.outputTokens ?? 0,
      ...(answer.usage.cachedInputTokens ? { cachedInputTokens: answer.usage.cachedInputTokens } : {}),
      ...(answer.usage.cacheWriteInputTokens ? { cacheWriteInputTokens: answer.usage.cacheWriteInputTokens } : {}),
    },
    ...(reasoning.length > 0 ? { reasoning } : {}),
  };
}

import type { JsonObject } from '../../src/contracts/json';
import type { FinishReason } from '../../src/contracts/model';
import { tryParseJson } from '../../src/llm/json-value';
import { rawArguments, scriptedSignature, type ScriptedAnswer } from '../../src/llm/scripted-step';
import type { ScriptedApi } from './vendor-rules';

/**
 * A scripted answer in each vendor's wire format: the complete JSON body, or the server-sent events of a
 * streamed answer (OpenAI `chat.completion.chunk`s ending in `[DONE]`; Anthropic `message_start` …
 * `message_stop`). Each event says how many characters of the answer (text or tool-call arguments) it
 * carries, so the server can break a stream off after a given number of them.
 */


/** One server-sent event, and the answer characters it carries. */
export interface StreamEvent {
  /** The event as written on the wire, including the blank line that ends it. */
  wire: string;
  answerChars: number;
  /** Writes only the first `chars` answer characters of this event (for a break-off inside it). */
  partial?: (chars: number) => string;
}

const openAIFinishReasons: Record<FinishReason, string> = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
  error: 'error',
  other: 'other',
};

const anthropicStopReasons: Record<FinishReason, string> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'refusal',
  error: 'end_turn',
  other: 'end_turn',
};

/** The complete (non-streamed) answer body of `api`. */
export function answerBody(api: ScriptedApi, answer: ScriptedAnswer, context: AnswerContext): JsonObject {
  return api === 'chat-completions' ? chatCompletion(answer, context) : anthropicMessage(answer, context);
}

/** The streamed answer of `api`, as its events in order. */
export function answerEvents(api: ScriptedApi, answer: ScriptedAnswer, context: AnswerContext, options: { includeUsage: boolean; chunkChars: number }): StreamEvent[] {
  return api === 'chat-completions' ? chatCompletionChunks(answer, context, options) : anthropicEvents(answer, context, options.chunkChars);
}

/** Identity of one answer, and whether the request enabled thinking (only then does a thinking block come back). */
export interface AnswerContext {
  callIndex: number;
  model: string;
  /** Seconds since the epoch. */
  created: number;
  thinking: boolean;
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let at = 0; at < text.length; at += size) result.push(text.slice(at, at + size));
  return result;
}

// ---- OpenAI -----------------------------------------------------------------------------------------

function chatCompletion(answer: ScriptedAnswer, context: AnswerContext): JsonObject {
  const toolCalls = answer.toolCalls.map((call): JsonObject => ({ id: call.id, type: 'function', function: { name: call.name, arguments: rawArguments(call) } }));
  return {
    id: `chatcmpl-scripted-${context.callIndex}`,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text === '' && toolCalls.length > 0 ? null : answer.text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: openAIFinishReasons[answer.finishReason],
      },
    ],
    usage: openAIUsage(answer),
  };
}

function openAIUsage(answer: ScriptedAnswer): JsonObject {
  // OpenAI counts cached tokens inside prompt_tokens and names them in prompt_tokens_details; it has no cache writes.
  const { inputTokens, outputTokens, cachedInputTokens } = answer.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    ...(cachedInputTokens ? { prompt_tokens_details: { cached_tokens: cachedInputTokens } } : {}),
  };
}

/** Anthropic's input usage: `input_tokens` excludes what was read from or written to the cache, reported beside it. */
function anthropicInputUsage(answer: ScriptedAnswer): JsonObject {
  const cached = answer.usage.cachedInputTokens ?? 0;
  const written = answer.usage.cacheWriteInputTokens ?? 0;
  return { input_tokens: answer.usage.inputTokens - cached - written, cache_creation_input_tokens: written, cache_read_input_tokens: cached };
}

function chatCompletionChunks(answer: ScriptedAnswer, context: AnswerContext, options: { includeUsage: boolean; chunkChars: number }): StreamEvent[] {
  const chunk = (choices: JsonObject[], extra: JsonObject = {}): string =>
    `data: ${JSON.stringify({ id: `chatcmpl-scripted-${context.callIndex}`, object: 'chat.completion.chunk', created: context.created, model: context.model, choices, ...extra })}\n\n`;
  const delta = (value: JsonObject, finishReason: string | null = null): JsonObject => ({ index: 0, delta: value, logprobs: null, finish_reason: finishReason });

  const events: StreamEvent[] = [{ wire: chunk([delta({ role: 'assistant', content: '', refusal: null })]), answerChars: 0 }];
  for (const piece of pieces(answer.text, options.chunkChars)) {
    events.push({ wire: chunk([delta({ content: piece })]), answerChars: piece.length, partial: (chars) => chunk([delta({ content: piece.slice(0, chars) })]) });
  }
  answer.toolCalls.forEach((call, index) => {
    events.push({ wire: chunk([delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })]), answerChars: 0 });
    for (const piece of pieces(rawArguments(call), options.chunkChars)) {
      const argumentsChunk = (text: string): string => chunk([delta({ tool_calls: [{ index, function: { arguments: text } }] })]);
      events.push({ wire: argumentsChunk(piece), answerChars: piece.length, partial: (chars) => argumentsChunk(piece.slice(0, chars)) });
    }
  });
  events.push({ wire: chunk([delta({}, openAIFinishReasons[answer.finishReason])]), answerChars: 0 });
  if (options.includeUsage) events.push({ wire: chunk([], { usage: openAIUsage(answer) }), answerChars: 0 });
  events.push({ wire: 'data: [DONE]\n\n', answerChars: 0 });
  return events;
}

// ---- Anthropic --------------------------------------------------------------------------------------

/** A tool call's input as the Messages API carries it: an object (raw arguments parsed when they can be). */
function anthropicInput(call: ScriptedAnswer['toolCalls'][number]): JsonObject | string {
  if (typeof call.arguments !== 'string') return call.arguments;
  const parsed = tryParseJson(call.arguments);
  // Unparsable raw arguments go out as a string, which the adapter must reject as a bad response.
  return parsed !== undefined && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : call.arguments;
}

function anthropicMessage(answer: ScriptedAnswer, context: AnswerContext): JsonObject {
  const content: JsonObject[] = [];
  if (context.thinking && answer.reasoning !== undefined) content.push({ type: 'thinking', thinking: answer.reasoning, signature: scriptedSignature(context.callIndex) });
  if (answer.text !== '') content.push({ type: 'text', text: answer.text });
  // Anthropic cannot return half a tool call: a call the output-token limit cut short is not in the answer.
  for (const call of answer.toolCalls) if (call.complete) content.push({ type: 'tool_use', id: call.id, name: call.name, input: anthropicInput(call) });
  return {
    id: `msg_scripted_${context.callIndex}`,
    type: 'message',
    role: 'assistant',
    model: context.model,
    content,
    stop_reason: anthropicStopReasons[answer.finishReason],
    stop_sequence: null,
    usage: { ...anthropicInputUsage(answer), output_tokens: answer.usage.outputTokens },
  };
}

function anthropicEvents(answer: ScriptedAnswer, context: AnswerContext, chunkChars: number): StreamEvent[] {
  const event = (type: string, data: JsonObject): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events: StreamEvent[] = [
    {
      wire: event('message_start', {
        message: {
          id: `msg_scripted_${context.callIndex}`,
          type: 'message',
          role: 'assistant',
          model: context.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...anthropicInputUsage(answer), output_tokens: 1 },
        },
      }),
      answerChars: 0,
    },
    { wire: event('ping', {}), answerChars: 0 },
  ];
  let index = 0;
  if (context.thinking && answer.reasoning !== undefined) {
    const blockIndex = index;
    events.push({ wire: event('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } }), answerChars: 0 });
    for (const piece of pieces(answer.reasoning, chunkChars)) {
      events.push({ wire: event('content_block_delta', { index: blockIndex, delta: { type: 'thinking_delta', thinking: piece } }), answerChars: 0 });
    }
    events.push({ wire: event('content_block_delta', { index: blockIndex, delta: { type: 'signature_delta', signature: scriptedSignature(context.callIndex) } }), answerChars: 0 });
    events.push({ wire: event('content_block_stop', { index }), answerChars: 0 });
    index += 1;
  }
  if (answer.text !== '') {
    events.push({ wire: event('content_block_start', { index, content_block: { type: 'text', text: '' } }), answerChars: 0 });
    const blockIndex = index;
    for (const piece of pieces(answer.text, chunkChars)) {
      const textDelta = (text: string): string => event('content_block_delta', { index: blockIndex, delta: { type: 'text_delta', text } });
      events.push({ wire: textDelta(piece), answerChars: piece.length, partial: (chars) => textDelta(piece.slice(0, chars)) });
    }
    events.push({ wire: event('content_block_stop', { index }), answerChars: 0 });
    index += 1;
  }
  for (const call of answer.toolCalls) {
    if (!call.complete) continue;
    const blockIndex = index;
    events.push({ wire: event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }), answerChars: 0 });
    const input = anthropicInput(call);
    for (const piece of pieces(typeof input === 'string' ? input : JSON.stringify(input), chunkChars)) {
      const jsonDelta = (partialJson: string): string => event('content_block_delta', { index: blockIndex, delta: { type: 'input_json_delta', partial_json: partialJson } });
      events.push({ wire: jsonDelta(piece), answerChars: piece.length, partial: (chars) => jsonDelta(piece.slice(0, chars)) });
    }
    events.push({ wire: event('content_block_stop', { index }), answerChars: 0 });
    index += 1;
  }
  events.push({
    wire: event('message_delta', { delta: { stop_reason: anthropicStopReasons[answer.finishReason], stop_sequence: null }, usage: { output_tokens: answer.usage.outputTokens } }),
    answerChars: 0,
  });
  events.push({ wire: event('message_stop', {}), answerChars: 0 });
  return events;
}

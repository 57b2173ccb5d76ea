import type { JsonObject, JsonValue } from '../../src/contracts/json';
import type { ChatMessage, ToolSpec } from '../../src/contracts/model';
import { estimateTokens } from '../../src/domain/token-estimate';
import { isJsonObject, tryParseJson } from '../../src/llm/json-value';

/**
 * What the OpenAI Chat Completions and Anthropic Messages APIs check before they generate anything, checked
 * on the request bodies the scripted server receives, with the vendors' own status codes, error types and
 * wording. The rules are the ones errand's conversations meet in practice: tool-call/tool-result pairing,
 * Anthropic's roles and non-empty text, its thinking blocks when thinking is on, the output-token parameter
 * and thinking budget, and the context window (prompt tokens
 * estimated with errand's shared `estimateTokens`, from the messages rebuilt out of the body). Anthropic's
 * betas that Claude Code's requests use are accepted only when the request's `anthropic-beta` header names
 * them, as Anthropic does: `role: "system"` messages between the turns (`per-turn-control-2026-07-01`), and
 * deferred tools (`defer_loading`) with the `tool_reference` blocks that load them
 * (`advanced-tool-use-2025-11-20`), a reference naming a tool of the request.
 */

/** The Anthropic beta that allows `role: "system"` messages in `messages`. */
export const perTurnControlBeta = 'per-turn-control-2026-07-01';
/** The Anthropic beta of deferred tools (`defer_loading`) and `tool_reference` blocks (tool search). */
export const advancedToolUseBeta = 'advanced-tool-use-2025-11-20';

/** Which vendor API a request used. */
export type ScriptedApi = 'chat-completions' | 'messages';

/** A request the vendor would refuse: HTTP status, error type (and OpenAI code and param) and message. */
export interface VendorRejection {
  status: number;
  type: string;
  message: string;
  code?: string | null;
  param?: string | null;
}

/** What a valid request asks for, as the server needs it to answer. */
export interface VendorRequest {
  /** The conversation in errand's neutral shape (for the token estimate). */
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** Estimated prompt tokens (`estimateTokens`). */
  promptTokens: number;
  /** The output-token limit of the answer: the request's, or what is left of the context window. */
  maxOutputTokens: number;
  stream: boolean;
  /** OpenAI `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Anthropic extended thinking is enabled (`thinking.type: enabled`). */
  thinking: boolean;
}

/** The outcome of checking a body: a rejection, or what the request asks for. */
export type VendorCheck = { ok: false; rejection: VendorRejection } | { ok: true; request: VendorRequest };

/**
 * Checks a request body of `api` against the vendor's rules and a context window of `contextWindow` tokens;
 * `betas` are the Anthropic betas the request's `anthropic-beta` header names.
 */
export function checkVendorRequest(api: ScriptedApi, body: JsonValue, contextWindow: number, betas: readonly string[] = []): VendorCheck {
  if (!isJsonObject(body)) return reject(api, 'the request body must be a JSON object');
  return api === 'chat-completions' ? checkChatCompletions(body, contextWindow) : checkMessages(body, contextWindow, betas);
}

function reject(api: ScriptedApi, message: string, extra: { code?: string | null; param?: string | null } = {}): VendorCheck {
  const rejection: VendorRejection =
    api === 'messages' ? { status: 400, type: 'invalid_request_error', message } : { status: 400, type: 'invalid_request_error', message, code: extra.code ?? null, param: extra.param ?? null };
  return { ok: false, rejection };
}

function textOf(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (isJsonObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

function positiveInteger(value: JsonValue | undefined): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

// ---- OpenAI Chat Completions ------------------------------------------------------------------------

const openAIRoles = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

function checkChatCompletions(body: JsonObject, contextWindow: number): VendorCheck {
  const api: ScriptedApi = 'chat-completions';
  if (typeof body.model !== 'string' || body.model === '') return reject(api, 'you must provide a model parameter');
  const rawMessages = body.messages;
  if (!Array.isArray(rawMessages)) return reject(api, "Missing required parameter: 'messages'.", { code: 'missing_required_parameter', param: 'messages' });
  if (rawMessages.length === 0) return reject(api, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", { code: 'empty_array', param: 'messages' });
  const stream = body.stream === true;
  if (body.stream_options !== undefined && body.stream_options !== null && !stream) {
    return reject(api, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", { param: 'stream_options' });
  }
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && !positiveInteger(value)) {
      return reject(api, `Invalid '${field}': integer below minimum value. Expected a value >= 1, but got ${JSON.stringify(value)} instead.`, { code: 'integer_below_min_value', param: field });
    }
  }

  const messages: ChatMessage[] = [];
  let pending: string[] = [];
  let pendingFrom = -1;
  for (const [index, raw] of rawMessages.entries()) {
    if (!isJsonObject(raw) || typeof raw.role !== 'string' || !openAIRoles.includes(raw.role)) {
      const role = isJsonObject(raw) ? JSON.stringify(raw.role) : '(none)';
      return reject(api, `Invalid value: ${role}. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, { code: 'invalid_value', param: `messages.[${index}].role` });
    }
    if (pending.length > 0 && raw.role !== 'tool') return unansweredOpenAI(pendingFrom, pending);
    switch (raw.role) {
      case 'system':
      case 'developer':
        messages.push({ role: 'system', content: textOf(raw.content) });
        break;
      case 'user':
        messages.push({ role: 'user', content: textOf(raw.content) });
        break;
      case 'assistant': {
        const calls = Array.isArray(raw.tool_calls) ? raw.tool_calls.filter(isJsonObject) : [];
        const toolCalls = calls.map((call) => {
          const fn = isJsonObject(call.function) ? call.function : {};
          const args = typeof fn.arguments === 'string' ? fn.arguments : '';
          const parsed = tryParseJson(args);
          return { id: typeof call.id === 'string' ? call.id : '', name: typeof fn.name === 'string' ? fn.name : '', arguments: isJsonObject(parsed) ? parsed : {} };
        });
        messages.push({ role: 'assistant', content: textOf(raw.content), ...(toolCalls.length > 0 ? { toolCalls } : {}) });
        pending = toolCalls.map((call) => call.id);
        pendingFrom = index;
        break;
      }
      case 'tool':
      case 'function': {
        const id = typeof raw.tool_call_id === 'string' ? raw.tool_call_id : '';
        const at = pending.indexOf(id);
        if (at < 0) {
          return reject(api, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", { param: `messages.[${index}].role` });
        }
        pending.splice(at, 1);
        messages.push({ role: 'tool', toolCallId: id, toolName: '', content: textOf(raw.content) });
        break;
      }
    }
  }
  if (pending.length > 0) return unansweredOpenAI(pendingFrom, pending);

  const tools: ToolSpec[] = (Array.isArray(body.tools) ? body.tools.filter(isJsonObject) : []).map((tool) => {
    const fn = isJsonObject(tool.function) ? tool.function : {};
    return {
      name: typeof fn.name === 'string' ? fn.name : '',
      description: typeof fn.description === 'string' ? fn.description : '',
      inputSchema: isJsonObject(fn.parameters) ? fn.parameters : {},
    };
  });
  const promptTokens = estimateTokens(messages, tools);
  const requested = positiveInteger(body.max_completion_tokens) ? body.max_completion_tokens : positiveInteger(body.max_tokens) ? body.max_tokens : undefined;
  if (requested !== undefined ? promptTokens + requested > contextWindow : promptTokens > contextWindow) {
    const message =
      requested !== undefined
        ? `This model's maximum context length is ${contextWindow} tokens. However, you requested ${promptTokens + requested} tokens (${promptTokens} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`
        : `This model's maximum context length is ${contextWindow} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`;
    return reject(api, message, { code: 'context_length_exceeded', param: 'messages' });
  }
  const includeUsage = isJsonObject(body.stream_options) && body.stream_options.include_usage === true;
  return { ok: true, request: { messages, tools, promptTokens, maxOutputTokens: requested ?? contextWindow - promptTokens, stream, includeUsage, thinking: false } };
}

function unansweredOpenAI(index: number, ids: string[]): VendorCheck {
  return reject(
    'chat-completions',
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    { param: `messages.[${index}].role` },
  );
}

// ---- Anthropic Messages -----------------------------------------------------------------------------

function blocksOf(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isJsonObject) : [];
}

/** Anthropic's rule for text: not empty, not only whitespace. */
function emptyTextRule(where: string, blocks: JsonObject[]): string | undefined {
  for (const block of blocks) {
    if (block.type !== 'text') continue;
    const text = typeof block.text === 'string' ? block.text : '';
    if (text === '') return `${where}: text content blocks must be non-empty`;
    if (text.trim() === '') return `${where}: text content blocks must contain non-whitespace text`;
  }
  return undefined;
}

function checkMessages(body: JsonObject, contextWindow: number, betas: readonly string[]): VendorCheck {
  const api: ScriptedApi = 'messages';
  const rawTools = Array.isArray(body.tools) ? body.tools.filter(isJsonObject) : [];
  const deferredAt = rawTools.findIndex((tool) => tool.defer_loading !== undefined);
  if (deferredAt >= 0 && !betas.includes(advancedToolUseBeta)) return reject(api, `tools.${deferredAt}.custom.defer_loading: Extra inputs are not permitted`);
  const toolNames = new Set(rawTools.map((tool) => tool.name));
  if (typeof body.model !== 'string' || body.model === '') return reject(api, 'model: Field required');
  if (body.max_tokens === undefined || body.max_tokens === null) return reject(api, 'max_tokens: Field required');
  if (!positiveInteger(body.max_tokens)) return reject(api, 'max_tokens: Input should be greater than or equal to 1');
  const maxTokens = body.max_tokens;
  const thinking = isJsonObject(body.thinking) && body.thinking.type === 'enabled';
  if (isJsonObject(body.thinking) && body.thinking.type === 'enabled') {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== 'number' || budget < 1024) return reject(api, 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (maxTokens <= budget) return reject(api, '`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  const rawMessages = body.messages;
  if (!Array.isArray(rawMessages)) return reject(api, 'messages: Field required');
  if (rawMessages.length === 0) return reject(api, 'messages: at least one message is required');

  const messages: ChatMessage[] = [];
  const systemBlocks = blocksOf(body.system);
  const systemProblem = emptyTextRule('system', systemBlocks);
  if (body.system !== undefined && systemProblem !== undefined) return reject(api, systemProblem);
  for (const block of systemBlocks) messages.push({ role: 'system', content: typeof block.text === 'string' ? block.text : '' });

  let previousRole: string | undefined;
  let previousToolUses: string[] = [];
  let lastAssistant: { index: number; blocks: JsonObject[] } | undefined;
  for (const [index, raw] of rawMessages.entries()) {
    if (isJsonObject(raw) && raw.role === 'system' && index > 0 && betas.includes(perTurnControlBeta)) {
      // Instructions between the turns: text only, and not between a tool call and its result.
      if (previousToolUses.length > 0) return unansweredAnthropic(index - 1, previousToolUses);
      const blocks = blocksOf(raw.content);
      const other = blocks.findIndex((block) => block.type !== 'text');
      if (other >= 0) return reject(api, `messages.${index}.content.${other}.type: Input should be 'text'`);
      if (blocks.length === 0) return reject(api, `messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
      const textProblem = emptyTextRule('messages', blocks);
      if (textProblem !== undefined) return reject(api, textProblem);
      for (const block of blocks) messages.push({ role: 'system', content: typeof block.text === 'string' ? block.text : '' });
      continue;
    }
    if (!isJsonObject(raw) || (raw.role !== 'user' && raw.role !== 'assistant')) {
      return reject(api, `messages.${index}.role: Input should be 'user' or 'assistant'`);
    }
    if (index === 0 && raw.role !== 'user') return reject(api, 'messages: first message must use the "user" role');
    if (raw.role === previousRole) return reject(api, `messages: roles must alternate between "user" and "assistant", but found multiple "${raw.role}" roles in a row`);
    const blocks = blocksOf(raw.content);
    if (blocks.length === 0) return reject(api, `messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
    const textProblem = emptyTextRule('messages', blocks);
    if (textProblem !== undefined) return reject(api, textProblem);

    if (raw.role === 'user') {
      const answered = new Set<string>();
      for (const [blockIndex, block] of blocks.entries()) {
        if (block.type === 'tool_result') {
          const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
          if (!previousToolUses.includes(id)) {
            return reject(
              api,
              `messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
            );
          }
          answered.add(id);
          const references = blocksOf(block.content).filter((item) => item.type === 'tool_reference');
          if (references.length > 0 && !betas.includes(advancedToolUseBeta)) return reject(api, `messages.${index}.content.${blockIndex}.content.0.type: Input tag 'tool_reference' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'`);
          const unknown = references.find((item) => !toolNames.has(item.tool_name));
          if (unknown !== undefined) return reject(api, `messages.${index}.content.${blockIndex}: tool_reference names tool '${String(unknown.tool_name)}', which is not in \`tools\``);
          messages.push({ role: 'tool', toolCallId: id, toolName: '', content: textOf(block.content) });
        } else if (block.type === 'text') {
          messages.push({ role: 'user', content: typeof block.text === 'string' ? block.text : '' });
        }
      }
      const unanswered = previousToolUses.filter((id) => !answered.has(id));
      if (unanswered.length > 0) return unansweredAnthropic(index - 1, unanswered);
      previousToolUses = [];
    } else {
      if (previousToolUses.length > 0) return unansweredAnthropic(index - 1, previousToolUses);
      const toolUses = blocks.filter((block) => block.type === 'tool_use');
      previousToolUses = toolUses.map((block) => (typeof block.id === 'string' ? block.id : ''));
      const toolCalls = toolUses.map((block) => ({
        id: typeof block.id === 'string' ? block.id : '',
        name: typeof block.name === 'string' ? block.name : '',
        arguments: isJsonObject(block.input) ? block.input : {},
      }));
      const text = blocks.filter((block) => block.type === 'text').map((block) => (typeof block.text === 'string' ? block.text : '')).join('');
      const reasoning = blocks
        .filter((block) => block.type === 'thinking' || block.type === 'redacted_thinking')
        .map((block) => ({ text: typeof block.thinking === 'string' ? block.thinking : '' }));
      messages.push({ role: 'assistant', content: text, ...(toolCalls.length > 0 ? { toolCalls } : {}), ...(reasoning.length > 0 ? { reasoning } : {}) });
      lastAssistant = { index, blocks };
    }
    previousRole = raw.role;
  }
  if (previousToolUses.length > 0) return unansweredAnthropic(rawMessages.length - 1, previousToolUses);
  if (thinking && lastAssistant !== undefined && lastAssistant.blocks.some((block) => block.type === 'tool_use')) {
    const first = lastAssistant.blocks[0]?.type;
    if (first !== 'thinking' && first !== 'redacted_thinking') {
      return reject(
        api,
        `messages.${lastAssistant.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`,
      );
    }
  }

  const tools: ToolSpec[] = rawTools.map((tool) => ({
    name: typeof tool.name === 'string' ? tool.name : '',
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema: isJsonObject(tool.input_schema) ? tool.input_schema : {},
  }));
  const promptTokens = estimateTokens(messages, tools);
  if (promptTokens > contextWindow) return reject(api, `prompt is too long: ${promptTokens} tokens > ${contextWindow} maximum`);
  if (promptTokens + maxTokens > contextWindow) {
    return reject(api, `input length and \`max_tokens\` exceed context limit: ${promptTokens} + ${maxTokens} > ${contextWindow}, decrease input length or \`max_tokens\` and try again`);
  }
  return { ok: true, request: { messages, tools, promptTokens, maxOutputTokens: maxTokens, stream: body.stream === true, includeUsage: true, thinking } };
}

function unansweredAnthropic(index: number, ids: string[]): VendorCheck {
  return reject(
    'messages',
    `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  );
}

import type { ScriptStep } from '../src/llm/scripted-step';

/**
 * How the bench's scripted models answer. Each delegation carries a marker in its task prompt, such as
 * `[bench turns=50]`, and the answer depends only on that marker and the conversation so far, so one
 * stateless responder serves every concurrent delegation and a retried call gets the same answer.
 */

/** The marker to put in a task prompt; `spec` is space-separated `key=value` pairs. */
export function benchMarker(spec: Record<string, string | number>): string {
  return `[bench ${Object.entries(spec).map(([key, value]) => `${key}=${value}`).join(' ')}]`;
}

/** A conversation message as both the model port and the OpenAI wire format have it. */
export interface LooseMessage {
  role: string;
  content: unknown;
}

/** Parses the marker of the first user message that has one. */
export function markerOf(messages: readonly LooseMessage[]): Record<string, string> | undefined {
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content !== 'string') continue;
    const match = /\[bench ([^\]]*)\]/.exec(message.content);
    if (!match) continue;
    const spec: Record<string, string> = {};
    for (const pair of (match[1] ?? '').split(' ')) {
      const [key, value] = pair.split('=');
      if (key && value !== undefined) spec[key] = value;
    }
    return spec;
  }
  return undefined;
}

/** Text of exactly `size` characters (deterministic, so answers of a retried call are identical). */
export function filler(size: number, seed = 0): string {
  const unit = `bench text ${seed} lorem ipsum dolor sit amet consectetur `;
  return unit.repeat(Math.ceil(size / unit.length) + 1).slice(0, size);
}

/**
 * The step for a call. Markers:
 * - `turns=N`: one `developer__list_directory` call per turn until the N-th model call, which answers.
 * - `answer=B`: answer with B characters of text and no tool calls (continuable conversations).
 * - `delay=ms`: hold every answer this long (in-flight work for cancel and recovery figures).
 * - `load=a,b`: one `load` call per turn for each named source, in order, then answers.
 * - `continuables=N`: first N `delegate` calls of continuable subagents (each answers and waits), then `ok`.
 */
export function benchStep(messages: readonly LooseMessage[]): ScriptStep | undefined {
  const spec = markerOf(messages);
  if (!spec) return undefined;
  const delayMs = spec.delay === undefined ? undefined : Number(spec.delay);
  const withDelay = (step: ScriptStep): ScriptStep => (delayMs !== undefined && delayMs > 0 ? { ...step, delayMs } : step);
  const answered = messages.filter((message) => message.role === 'assistant').length;
  if (spec.turns !== undefined) {
    const turns = Number(spec.turns);
    if (answered + 1 >= turns) return withDelay({ text: `finished after ${turns} turns` });
    return withDelay({ toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] });
  }
  if (spec.load !== undefined) {
    const names = spec.load.split(',');
    const name = names[answered];
    return withDelay(name === undefined ? { text: `loaded ${names.length} sources` } : { toolCalls: [{ name: 'load', arguments: { source: name } }] });
  }
  if (spec.continuables !== undefined && answered === 0) {
    const delegate = { name: 'delegate', arguments: { instructions: `${benchMarker({ answer: 10 })} Stay available for messages.`, continuable: true } };
    return withDelay({ toolCalls: Array.from({ length: Number(spec.continuables) }, () => delegate) });
  }
  if (spec.answer !== undefined) return withDelay({ text: filler(Number(spec.answer), answered) });
  return withDelay({ text: 'ok' });
}

/** Messages of an OpenAI chat-completions request body, loosely typed. */
export function openAIMessages(body: unknown): LooseMessage[] {
  if (typeof body !== 'object' || body === null || !('messages' in body) || !Array.isArray(body.messages)) return [];
  const messages: LooseMessage[] = [];
  for (const entry of body.messages as unknown[]) {
    if (typeof entry === 'object' && entry !== null && 'role' in entry && typeof entry.role === 'string') {
      messages.push({ role: entry.role, content: 'content' in entry ? entry.content : undefined });
    }
  }
  return messages;
}

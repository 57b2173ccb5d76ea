import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import { createScriptedModel, type ScriptedModel, type ScriptedModelOptions } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';

/**
 * A conversation's script: a queue of steps, or a function of the request (undefined = exhausted); the
 * function may wait for something to happen elsewhere before it answers (the model call then takes that long).
 */
export type ConversationScript = ScriptStep[] | ((request: ModelRequest, call: number) => ScriptStep | undefined | Promise<ScriptStep | undefined>);

/**
 * One in-process scripted model that serves many conversations at once (a session and its children):
 * each conversation carries a marker `[script:<name>]` in its first user message, and gets the steps
 * registered under that name. Every request is recorded per conversation.
 */
export class ConversationScripts {
  readonly model: ScriptedModel;
  private readonly scripts = new Map<string, ConversationScript>();
  private readonly calls = new Map<string, number>();
  /** Requests per conversation name, in order. */
  readonly requests = new Map<string, ModelRequest[]>();

  constructor(options: ScriptedModelOptions = {}) {
    this.model = createScriptedModel((request) => {
      const name = markerOf(request.messages);
      if (!name) return undefined;
      const script = this.scripts.get(name);
      const call = this.calls.get(name) ?? 0;
      this.calls.set(name, call + 1);
      const list = this.requests.get(name) ?? [];
      list.push(request);
      this.requests.set(name, list);
      if (!script) return undefined;
      return typeof script === 'function' ? script(request, call) : script.shift();
    }, options);
  }

  /** Registers a script and returns the marker to put into the conversation's first message. */
  add(name: string, script: ConversationScript): string {
    this.scripts.set(name, script);
    return `[script:${name}]`;
  }

  /** The requests a conversation made. */
  of(name: string): ModelRequest[] {
    return this.requests.get(name) ?? [];
  }
}

/**
 * The marker of a conversation: in its first user message — except for a fork, whose first user message
 * is its parent's: a fork names its script with `[fork-script:<name>]` in its task (the last one wins,
 * so a fork of a fork is told apart from its parent).
 */
export function markerOf(messages: ChatMessage[]): string | undefined {
  const forks = messages.flatMap((message) => (message.role === 'user' ? [...message.content.matchAll(/\[fork-script:([A-Za-z0-9_-]+)\]/g)].map((match) => match[1]) : []));
  const fork = forks[forks.length - 1];
  if (fork !== undefined) return fork;
  const first = messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? /\[script:([A-Za-z0-9_-]+)\]/.exec(first.content)?.[1] : undefined;
}

/** Tool results of a request, in order. */
export function toolResults(request: ModelRequest | undefined): Array<Extract<ChatMessage, { role: 'tool' }>> {
  return (request?.messages ?? []).filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
}

/** The user-role messages of a request that are task notices. */
export function notices(request: ModelRequest | undefined): string[] {
  return (request?.messages ?? []).filter((message) => message.role === 'user' && message.content.startsWith('[task notice]')).map((message) => message.content);
}

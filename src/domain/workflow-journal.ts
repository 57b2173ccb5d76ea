/**
 * The journal of a workflow run, keyed by content (SEMANTICS §7). An `agent()` call's key is the hash of
 * its prompt, its options, the content of the agent definition it names, and the how-manieth call with
 * that same content it is. The key does not depend on start order, so an edited script finds every
 * unchanged call's result again, and a crash or a deploy never runs a finished agent twice.
 */
import type { JsonObject, JsonValue } from '../contracts/json.js';
import type { WorkflowJournal, WorkflowJournalEntry } from '../contracts/workflow-script.js';
import { sha256Hex } from './content-hash.js';

/** What an `agent()` call is made of, as far as its key goes. */
export interface WorkflowAgentCallContent {
  prompt: string;
  options: JsonObject;
  /** The text of the agent definition the call names, `null` when it names none. */
  agentDefinition: string | null;
}

/** JSON text with object keys sorted, so the same value always gives the same text. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`).join(',')}}`;
}

function contentHash(call: WorkflowAgentCallContent): string {
  return sha256Hex(canonicalJson({ prompt: call.prompt, options: call.options, agentDefinition: call.agentDefinition }));
}

/** The key of the `occurrence`-th call (0 for the first) with this content. */
export function agentCallKey(call: WorkflowAgentCallContent, occurrence: number): string {
  return sha256Hex(`${contentHash(call)}#${occurrence}`);
}

/**
 * Keys for the calls of one run of a script, in the order it makes them: two calls with the same content
 * get different keys (the first and the second), so a script that asks the same question twice gets two
 * answers, each found again on the next run.
 */
export function createAgentCallKeys(): (call: WorkflowAgentCallContent) => string {
  const seen = new Map<string, number>();
  return (call) => {
    const content = contentHash(call);
    const occurrence = seen.get(content) ?? 0;
    seen.set(content, occurrence + 1);
    return sha256Hex(`${content}#${occurrence}`);
  };
}

/** The journal with one finished agent recorded; the first result recorded under a key stays (a retry reuses it). */
export function journalWith(journal: WorkflowJournal, key: string, entry: WorkflowJournalEntry): WorkflowJournal {
  if (Object.hasOwn(journal, key)) return journal;
  return { ...journal, [key]: entry };
}

/** The journal without one key: restarting an agent makes its call run again. */
export function journalWithout(journal: WorkflowJournal, key: string): WorkflowJournal {
  if (!Object.hasOwn(journal, key)) return journal;
  const { [key]: _dropped, ...rest } = journal;
  return rest;
}

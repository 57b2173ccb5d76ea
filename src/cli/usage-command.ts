import { parseArgs } from 'node:util';
import { z } from 'zod';
import { delegationStatusSchema, peekSchema, type PeekView } from '../contracts/delegation-api';
import { usageTreeMaxNodes } from '../contracts/limits/api';
import { legacyChildSeparator, lastIdPart } from '../contracts/workflow-ids';
import { usageText } from '../domain/model-cost';
import { ApiRequestError, call, isApiRequestError, type ApiTransport } from './api-transport';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';

/**
 * `errand usage <id>`: a delegation or session and every descendant, each with its state, turns, tokens
 * and cost (SEMANTICS §6 "Spend"). The tree is walked through the API: each peek lists its tasks with
 * their delegation ids (a peek from an older worker build has none: its children are `<parent id>/<task id>`).
 * A task that cannot be read (its record expired, no worker answered) is shown with what its parent knows of it.
 */

type Usage = PeekView['usage'];

/** One node of the tree. */
export interface UsageNode {
  id: string;
  /** The task's description (the root has none). */
  description?: string;
  state: string;
  turns: number;
  /** Its own model calls. */
  usage: Usage;
  /** With its descendants'. */
  totalUsage: Usage;
  /** Why its own figures could not be read (then `usage` is the parent's record of its total). */
  unavailable?: string;
  tasks: UsageNode[];
}

const usageHelp = 'usage: errand usage <delegation or session id> [--json]';
const sessionPeekSchema = z.object({ peek: peekSchema.loose() });

/** `errand usage <id>`. */
export async function usageCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (!id || positionals.length > 1) throw new UsageError(usageHelp);
  const transport = context.transport();
  const budget = { nodes: usageTreeMaxNodes };
  const root = await readRoot(transport, id);
  const tree = await nodeOf(transport, id, root, undefined, budget);
  if (values.json) context.io.stdout(`${JSON.stringify(tree, null, 2)}\n`);
  else context.io.stdout(`${formatTree(tree).join('\n')}\n${budget.nodes <= 0 ? `(stopped after ${usageTreeMaxNodes} tasks)\n` : ''}`);
  return 0;
}

/** The root's peek: a delegation's, or, when no delegation has that id, a session's. */
async function readRoot(transport: ApiTransport, id: string): Promise<{ state: string; peek: PeekView | null; peekError?: string }> {
  try {
    const { body } = await call(transport, 'GET', `/v1/delegations/${encodeURIComponent(id)}`, delegationStatusSchema);
    return { state: body.state, peek: body.peek, ...(body.peekError ? { peekError: body.peekError } : {}) };
  } catch (error) {
    if (!isApiRequestError(error) || error.status !== 404) throw error;
  }
  try {
    const { body } = await call(transport, 'GET', `/v1/sessions/${encodeURIComponent(id)}`, sessionPeekSchema);
    return { state: body.peek.state, peek: body.peek };
  } catch (error) {
    if (!isApiRequestError(error) || error.status !== 404) throw error;
    throw new ApiRequestError(404, undefined, `no delegation or session has the id ${id} (for this API key)`);
  }
}

type TaskEntry = NonNullable<PeekView['tasks']>[number];

async function nodeOf(transport: ApiTransport, id: string, read: { state: string; peek: PeekView | null; peekError?: string }, task: TaskEntry | undefined, budget: { nodes: number }): Promise<UsageNode> {
  const { peek } = read;
  const empty: Usage = { inputTokens: 0, outputTokens: 0, costMicroUsd: 0, costUsd: 0 };
  if (peek === null) {
    // What the parent recorded of the task: its total, its turns.
    const known = task?.usage ?? empty;
    return { id, ...(task ? { description: task.description } : {}), state: task?.state ?? read.state, turns: task?.turns ?? 0, usage: known, totalUsage: known, unavailable: read.peekError ?? 'no peek', tasks: [] };
  }
  const children: UsageNode[] = [];
  for (const child of peek.tasks ?? []) {
    if (budget.nodes <= 0) break;
    budget.nodes -= 1;
    const childId = child.workflowId ?? `${peek.workflowId}${legacyChildSeparator}${child.taskId}`;
    children.push(await nodeOf(transport, childId, await readChild(transport, childId), child, budget));
  }
  return {
    id,
    ...(task ? { description: task.description } : {}),
    state: read.state,
    turns: peek.turns,
    usage: peek.usage,
    totalUsage: peek.totalUsage ?? peek.usage,
    tasks: children,
  };
}

async function readChild(transport: ApiTransport, id: string): Promise<{ state: string; peek: PeekView | null; peekError?: string }> {
  try {
    const { body } = await call(transport, 'GET', `/v1/delegations/${encodeURIComponent(id)}`, delegationStatusSchema);
    return { state: body.state, peek: body.peek, ...(body.peekError ? { peekError: body.peekError } : {}) };
  } catch (error) {
    if (!isApiRequestError(error)) throw error;
    return { state: 'unknown', peek: null, peekError: `the API answered ${error.status}` };
  }
}

/** The tree as indented lines: each node's own figures, and its total when it has tasks. */
export function formatTree(node: UsageNode, depth = 0): string[] {
  const indent = '  '.repeat(depth);
  const name = node.description === undefined ? node.id : `${lastIdPart(node.id)} "${node.description}"`;
  const lines = [
    `${indent}${name} · ${node.state} · ${node.turns} turn${node.turns === 1 ? '' : 's'} · ${node.unavailable ? `total ${usageText(node.totalUsage)} (${node.unavailable})` : usageText(node.usage)}`,
  ];
  if (node.tasks.length > 0) lines.push(`${indent}  with its tasks: ${usageText(node.totalUsage)}`);
  for (const child of node.tasks) lines.push(...formatTree(child, depth + 1));
  return lines;
}

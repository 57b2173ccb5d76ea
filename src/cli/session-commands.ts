import { parseArgs } from 'node:util';
import { z } from 'zod';
import { tokenUsageSchema } from '../contracts/usage-api';
import { usageText } from '../domain/model-cost';
import { call } from './api-transport';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';

/** `errand sessions ...` and `errand approvals ...`: parent sessions and pending approvals through the API. */

const sessionPath = (id: string, suffix = '') => `/v1/sessions/${encodeURIComponent(id)}${suffix}`;
const startedSchema = z.object({ id: z.string(), runId: z.string() }).loose();
const acceptedSchema = z.object({ id: z.string(), accepted: z.literal(true), queuedTurns: z.number() }).loose();
const sessionSchema = z.object({
  id: z.string(),
  running: z.boolean(),
  transcript: z.object({ state: z.string(), entries: z.array(z.object({ role: z.string(), text: z.string(), at: z.number() })), queuedMessages: z.number() }),
  peek: z.object({ totalUsage: tokenUsageSchema.optional() }).loose(),
}).loose();
const approvalsSchema = z.object({ approvals: z.array(z.object({ id: z.string(), workflowId: z.string(), tool: z.string(), argumentsPreview: z.string(), requestedAt: z.number(), expiresAt: z.number() })) });
const decidedSchema = z.object({ id: z.string(), decision: z.enum(['approve', 'deny']) });

function print(context: CliContext, asJson: boolean | undefined, value: unknown, text: string): void {
  context.io.stdout(asJson ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

const sessionsUsage = 'usage: errand sessions start [message...] [--label l] [--instructions text] | send <id> <message...> | show <id> | cancel <id> [--reason r] [--json]';
const cancellingSchema = z.object({ id: z.string(), cancelling: z.literal(true) });

/** `errand sessions start|send|show`. */
export async function sessionsCommand(argv: string[], context: CliContext): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { json: { type: 'boolean' }, label: { type: 'string' }, instructions: { type: 'string' }, 'max-depth': { type: 'string' }, reason: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (sub === 'start') {
    const message = positionals.join(' ').trim();
    const maxDepth = values['max-depth'] === undefined ? undefined : Number(values['max-depth']);
    if (maxDepth !== undefined && (!Number.isInteger(maxDepth) || maxDepth < 1)) throw new UsageError(`--max-depth "${values['max-depth']}" is not a whole number ≥ 1`);
    const { body } = await call(context.transport(), 'POST', '/v1/sessions', startedSchema, {
      body: {
        ...(message ? { message } : {}),
        ...(values.label ? { label: values.label } : {}),
        ...(values.instructions ? { instructions: values.instructions } : {}),
        ...(maxDepth !== undefined ? { maxDepth } : {}),
      },
    });
    print(context, values.json, body, `session ${body.id} started`);
    return 0;
  }
  if (sub === 'send') {
    const [id, ...words] = positionals;
    const message = words.join(' ').trim();
    if (!id || !message) throw new UsageError(sessionsUsage);
    const { body } = await call(context.transport(), 'POST', sessionPath(id, '/messages'), acceptedSchema, { body: { message } });
    print(context, values.json, body, `message delivered to ${id}${body.queuedTurns > 1 ? ` (${body.queuedTurns} queued)` : ''}`);
    return 0;
  }
  if (sub === 'show') {
    const [id] = positionals;
    if (!id) throw new UsageError(sessionsUsage);
    const { body } = await call(context.transport(), 'GET', sessionPath(id), sessionSchema);
    const lines = [`${id} · ${body.running ? body.transcript.state : 'ended'}${body.transcript.queuedMessages > 0 ? ` · ${body.transcript.queuedMessages} queued` : ''}`];
    for (const entry of body.transcript.entries) lines.push(`${entry.role.padEnd(9)} ${entry.text.replace(/\n/g, '\n          ')}`);
    const usage = body.peek.totalUsage;
    if (usage) lines.push(`Tokens (with its subagents): ${usageText(usage)} · errand usage ${id} shows each task`);
    print(context, values.json, body, lines.join('\n'));
    return 0;
  }
  if (sub === 'cancel') {
    const [id] = positionals;
    if (!id) throw new UsageError(sessionsUsage);
    const { body } = await call(context.transport(), 'POST', sessionPath(id, '/cancel'), cancellingSchema, { body: values.reason ? { reason: values.reason } : {} });
    print(context, values.json, body, `session ${id} is cancelling (its tasks are cancelled too)`);
    return 0;
  }
  throw new UsageError(sessionsUsage);
}

const approvalsUsage = 'usage: errand approvals [list] | approve <approval id> [--reason r] | deny <approval id> [--reason r] [--json]';

/** `errand approvals [list]|approve|deny`. */
export async function approvalsCommand(argv: string[], context: CliContext): Promise<number> {
  const [sub = 'list', ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean' }, reason: { type: 'string' } }, allowPositionals: true, strict: true });
  if (sub === 'list') {
    const { body } = await call(context.transport(), 'GET', '/v1/approvals', approvalsSchema);
    const lines = body.approvals.length === 0 ? ['no tool calls are waiting for approval'] : body.approvals.map((approval) => `${approval.id}  ${approval.tool} ${approval.argumentsPreview}`);
    print(context, values.json, body, lines.join('\n'));
    return 0;
  }
  if (sub === 'approve' || sub === 'deny') {
    const [id] = positionals;
    if (!id) throw new UsageError(approvalsUsage);
    const { body } = await call(context.transport(), 'POST', `/v1/approvals/${encodeURIComponent(id)}`, decidedSchema, {
      body: { decision: sub, ...(values.reason ? { reason: values.reason } : {}) },
    });
    print(context, values.json, body, `${sub === 'approve' ? 'approved' : 'denied'} ${id}`);
    return 0;
  }
  throw new UsageError(approvalsUsage);
}

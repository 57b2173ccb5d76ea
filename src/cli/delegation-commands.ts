import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  cancelResponseSchema,
  delegationStatusSchema,
  listDelegationsResponseSchema,
  resultResponseSchema,
  sendMessageResponseSchema,
  startDelegationResponseSchema,
  type DelegationStatus,
  type SubagentResultView,
} from '../contracts/delegation-api';
import { cliProgressPollMs } from '../contracts/limits/api';
import type { JsonObject } from '../contracts/json';
import { endedLine } from '../domain/delegation-texts';
import { liveEvents, type LiveCursor } from '../domain/live-events';
import { usageText } from '../domain/model-cost';
import { worktreeLine } from '../domain/worktree-names';
import { call } from './api-transport';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';
import { LiveView, printable } from './live-view';

/** `errand delegate|peek|result|cancel|send|list`: delegations through the API. */

/** Exit code of a delegation that ended without completing (cancelled, failed, turn limit, budget). */
export const exitNotCompleted = 1;
/** Exit code of `errand result` when the delegation is still running. */
export const exitStillRunning = 3;

const idPath = (id: string, suffix = '') => `/v1/delegations/${encodeURIComponent(id)}${suffix}`;

function json(context: CliContext, value: unknown): void {
  context.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** `unit`: what the number counts, named in the error with an example (`seconds`, `US dollars`). */
function number(flag: string, value: string | undefined, integer: boolean, unit?: { name: string; example: string }): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || (integer && !Number.isInteger(parsed))) {
    const expected = integer ? 'a whole number' : 'a number';
    throw new UsageError(`--${flag} "${value}" is not ${expected}${unit ? ` of ${unit.name} (e.g. --${flag} ${unit.example})` : ''}`);
  }
  return parsed;
}

/**
 * Prints a finished result: the output on stdout (a structured result as its JSON); for a run that did
 * not complete, why on stderr first; where its worktree is, on stderr.
 */
function printResult(context: CliContext, id: string, result: SubagentResultView): number {
  if (result.worktree) context.io.stderr(`errand: ${id}: ${worktreeLine(result.worktree)}\n`);
  if (result.status === 'completed') {
    const output = result.structured ? JSON.stringify(result.structured, null, 2) : result.output;
    context.io.stdout(output.endsWith('\n') ? output : `${output}\n`);
    return 0;
  }
  context.io.stderr(`errand: ${id}: ${endedLine(result)}${result.diagnostic ? `\n${result.diagnostic}` : ''}\n`);
  if (result.partialOutput) context.io.stdout(result.partialOutput.endsWith('\n') ? result.partialOutput : `${result.partialOutput}\n`);
  return exitNotCompleted;
}

export const delegateOptions = {
  source: { type: 'string', short: 's' },
  param: { type: 'string', short: 'p', multiple: true },
  extension: { type: 'string', short: 'e', multiple: true },
  'no-extensions': { type: 'boolean' },
  provider: { type: 'string' },
  model: { type: 'string', short: 'm' },
  temperature: { type: 'string' },
  'reasoning-effort': { type: 'string' },
  persona: { type: 'string' },
  'max-turns': { type: 'string' },
  'max-output-tokens': { type: 'string' },
  context: { type: 'string' },
  'context-file': { type: 'string' },
  'working-dir': { type: 'string', short: 'C' },
  async: { type: 'boolean' },
  continuable: { type: 'boolean' },
  description: { type: 'string', short: 'd' },
  'token-budget': { type: 'string' },
  'time-budget': { type: 'string' },
  'cost-budget-usd': { type: 'string' },
  'output-schema': { type: 'string' },
  isolation: { type: 'string' },
  'idempotency-key': { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * Reads `--output-schema <file>`: a JSON Schema (type object) in a JSON file; problems name the file. The
 * schema checker (ajv) is loaded here, not with the module: peek, status and the other commands here never
 * need it.
 */
async function readOutputSchema(file: string): Promise<JsonObject> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--output-schema ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--output-schema ${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { checkOutputSchema } = await import('../tools/output-schema.js');
  const checked = checkOutputSchema(value, 'output_schema');
  if (!checked.ok) throw new UsageError(`--output-schema ${file}: ${checked.errors.join('; ')}`);
  return checked.schema;
}

/** `errand delegate [instructions...] [flags]`. */
export async function delegateCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: delegateOptions, allowPositionals: true, strict: true });
  const instructions = positionals.join(' ').trim();
  const parameters: Record<string, string> = {};
  for (const pair of values.param ?? []) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`--param "${pair}" must be key=value`);
    parameters[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  if (values['no-extensions'] && values.extension) throw new UsageError('use --extension or --no-extensions, not both');
  if (values.context !== undefined && values['context-file'] !== undefined) throw new UsageError('use --context or --context-file, not both');
  let contextText = values.context;
  if (values['context-file'] !== undefined) {
    const file = resolve(context.cwd, values['context-file']);
    try {
      contextText = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--context-file ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const outputSchema = values['output-schema'] === undefined ? undefined : await readOutputSchema(resolve(context.cwd, values['output-schema']));
  if (values.isolation !== undefined && values.isolation !== 'worktree') throw new UsageError(`--isolation "${values.isolation}" is not valid: the only isolation is worktree`);
  const temperature = number('temperature', values.temperature, false);
  const maxTurns = number('max-turns', values['max-turns'], true);
  const tokenBudget = number('token-budget', values['token-budget'], true);
  const timeBudget = number('time-budget', values['time-budget'], true, { name: 'seconds', example: '600' });
  const costBudgetUsd = number('cost-budget-usd', values['cost-budget-usd'], false, { name: 'US dollars', example: '0.50' });
  const maxOutputTokens = number('max-output-tokens', values['max-output-tokens'], true);
  const body = {
    ...(instructions ? { instructions } : {}),
    ...(values.source ? { source: values.source } : {}),
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    ...(values['no-extensions'] ? { extensions: [] } : values.extension ? { extensions: values.extension.flatMap((item) => item.split(',')).filter((item) => item !== '') } : {}),
    ...(values.provider ? { provider: values.provider } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(temperature === undefined ? {} : { temperature }),
    ...(values['reasoning-effort'] ? { reasoning_effort: values['reasoning-effort'] } : {}),
    ...(values.persona ? { persona: values.persona } : {}),
    ...(maxTurns === undefined ? {} : { max_turns: maxTurns }),
    ...(contextText === undefined ? {} : { context: contextText }),
    ...(values['working-dir'] ? { working_dir: values['working-dir'] } : {}),
    ...(values.continuable ? { continuable: true } : {}),
    ...(values.description ? { description: values.description } : {}),
    ...(tokenBudget === undefined ? {} : { token_budget: tokenBudget }),
    ...(timeBudget === undefined ? {} : { time_budget: timeBudget }),
    ...(costBudgetUsd === undefined ? {} : { cost_budget_usd: costBudgetUsd }),
    ...(maxOutputTokens === undefined ? {} : { max_output_tokens: maxOutputTokens }),
    ...(outputSchema === undefined ? {} : { output_schema: outputSchema }),
    ...(values.isolation === 'worktree' ? { isolation: 'worktree' } : {}),
  };
  if (!body.instructions && !body.source) throw new UsageError('give instructions (as arguments) or --source, or both');

  const transport = context.transport();
  const started = await call(transport, 'POST', '/v1/delegations', startDelegationResponseSchema, {
    body,
    ...(values['idempotency-key'] ? { headers: { 'Idempotency-Key': values['idempotency-key'] } } : {}),
  });
  const id = started.body.id;
  // A continuable delegation is followed until it answers (it then waits for messages, running on).
  if (values.continuable && !values.async) {
    // With --json the id comes first, as a `started` event (the start's answer): scripts need it to send messages.
    if (values.json) context.io.stdout(`${JSON.stringify({ event: 'started', data: started.body })}\n`);
    return follow(id, context, values.json === true, true);
  }
  if (values.async) {
    if (values.json) json(context, started.body);
    else context.io.stdout(`${id}\n`);
    if (!values.json) context.io.stderr(`started ${id}${started.body.created ? '' : ' (an earlier request with this idempotency key)'}; "errand peek ${id}" shows progress, "errand result ${id}" waits for it\n`);
    return 0;
  }

  // Wait with the live view (progress and the text being written); Ctrl-C cancels the delegation (once) and keeps waiting for what it produced.
  const progress = new LiveView(context.io);
  let cancelling = false;
  const onInterrupt = () => {
    if (cancelling) process.exit(130);
    cancelling = true;
    progress.finish();
    context.io.stderr(`cancelling ${id} (Ctrl-C again to stop waiting)\n`);
    void call(transport, 'POST', idPath(id, '/cancel'), cancelResponseSchema, { body: { reason: 'cancelled from the errand CLI' } }).catch(() => undefined);
  };
  process.on('SIGINT', onInterrupt);
  try {
    for (;;) {
      const answer = await call(transport, 'GET', idPath(id, `/result?wait=${cliProgressPollMs}ms`), resultResponseSchema);
      const outcome = answer.body;
      if (outcome.done) {
        progress.finish();
        if (values.json) {
          json(context, outcome);
          return outcome.result.status === 'completed' ? 0 : exitNotCompleted;
        }
        return printResult(context, id, outcome.result);
      }
      progress.update(id, outcome.state, outcome.peek);
    }
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

function formatStatus(status: DelegationStatus): string {
  const lines = [
    `Delegation: ${status.id}`,
    ...(status.summary ? [`Summary: ${status.summary}`] : []),
    `State: ${status.state} (Temporal: ${status.temporalStatus})`,
    `Source: ${status.source ?? '(none)'} · Model: ${status.model ?? '(unknown)'}`,
    `Started: ${status.startedAt}${status.closedAt ? ` · Ended: ${status.closedAt}` : ''}`,
  ];
  const peek = status.peek;
  if (peek) {
    const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
    // The answerer's durations (an ended delegation's stop at its end); computed here only if it sent none.
    const elapsed = peek.elapsedMs ?? Date.now() - peek.startedAt;
    const idle = peek.idleMs ?? Date.now() - peek.lastActivityAt;
    lines.push(
      `${status.closedAt ? `Ran: ${seconds(elapsed)}` : `Elapsed: ${seconds(elapsed)} · Idle: ${seconds(idle)}`}${peek.compactions ? ` · Compactions: ${peek.compactions}` : ''}`,
      `Turns: ${peek.turns} of ${peek.maxTurns} · Tool calls: ${peek.toolCalls} · Tokens: ${usageText(peek.usage)}`,
      ...(peek.totalUsage && peek.tasks?.length ? [`With subagents: ${usageText(peek.totalUsage)} (errand usage ${status.id} shows each)`] : []),
      `Last tool call: ${peek.lastToolCall ? `${peek.lastToolCall.name} ${peek.lastToolCall.argumentsPreview} (turn ${peek.lastToolCall.turn})` : '(none)'}`,
      `Last assistant text: ${peek.lastAssistantText ?? '(none)'}`,
    );
    // The text a model call is writing now (partial: replaced by the turn's answer when it is complete).
    if (peek.partial) {
      const shown = peek.partial.text.length < peek.partial.chars ? `…${peek.partial.text}` : peek.partial.text;
      lines.push(`Writing (turn ${peek.partial.turn}, partial, ${peek.partial.chars} characters so far): ${printable(shown)}`);
    }
    if (peek.queuedMessages) lines.push(`Queued messages: ${peek.queuedMessages}`);
    if (peek.retry) lines.push(`Checks: attempt ${peek.retry.attempt} of ${peek.retry.attempts}, ${peek.retry.state}`);
    for (const pending of peek.pendingApprovals ?? []) lines.push(`Waiting for approval: ${pending.tool} ${pending.argumentsPreview} (approval id ${pending.id})`);
  }
  else lines.push(`Peek: ${status.peekError ?? 'not available'}`);
  return lines.join('\n');
}

/** `errand peek <id> [--follow]`: state and progress, never waits; with `--follow`, watches it until it ends. */
export async function peekCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, follow: { type: 'boolean', short: 'f' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (!id || positionals.length > 1) throw new UsageError('usage: errand peek <delegation id> [--follow] [--json]');
  if (values.follow) return follow(id, context, values.json === true);
  const { body } = await call(context.transport(), 'GET', idPath(id), delegationStatusSchema);
  if (values.json) json(context, body);
  else context.io.stdout(`${formatStatus(body)}\n`);
  return 0;
}

/**
 * `errand peek <id> --follow`: the live view (progress, and the text as the model writes it) until the
 * delegation settles, then its result as `errand result` prints it (exit 0, or 1 when it did not complete).
 * It stops with exit 3 (still running) when a continuable delegation answered and waits for a message
 * (`delegate --continuable`, which follows the delegation it started: its answer on stdout, exit 0), or
 * at Ctrl-C, which only stops watching (`errand cancel` stops the delegation). With `--json` it prints the
 * event stream's events as JSON lines instead (`{"event": "text", "data": {…}}`), `settled` last.
 */
async function follow(id: string, context: CliContext, asJson: boolean, started = false): Promise<number> {
  const transport = context.transport();
  const view = new LiveView(context.io);
  let told: LiveCursor | undefined;
  let stopped = false;
  const onInterrupt = () => {
    if (stopped) process.exit(130);
    stopped = true;
  };
  process.on('SIGINT', onInterrupt);
  try {
    while (!stopped) {
      const { body: outcome } = await call(transport, 'GET', idPath(id, `/result?wait=${cliProgressPollMs}ms`), resultResponseSchema);
      if (outcome.done) {
        view.finish();
        if (!asJson) return printResult(context, id, outcome.result);
        context.io.stdout(`${JSON.stringify({ event: 'settled', data: outcome.result })}\n`);
        return outcome.result.status === 'completed' ? 0 : exitNotCompleted;
      }
      if (asJson) {
        const look = liveEvents(told, { state: outcome.state, peek: outcome.peek });
        told = look.cursor;
        for (const event of look.events) context.io.stdout(`${JSON.stringify(event)}\n`);
      } else {
        view.update(id, outcome.state, outcome.peek);
      }
      if (outcome.state === 'waiting') {
        view.finish();
        // Just started by `delegate --continuable`: its answer is the command's output, and that is success.
        if (started && !asJson) context.io.stdout(`${outcome.peek?.lastAssistantText ?? ''}\n`);
        context.io.stderr(`${id} answered and waits for a message (continuable): "errand send ${id} <message>" continues it\n`);
        return started ? 0 : exitStillRunning;
      }
    }
    view.finish();
    context.io.stderr(`stopped following ${id}; it keeps running ("errand cancel ${id}" stops it)\n`);
    return exitStillRunning;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/** `errand result <id> [--wait 30s]`: the result, or exit 3 while it still runs. */
export async function resultCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { wait: { type: 'string', short: 'w' }, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (!id || positionals.length > 1) throw new UsageError('usage: errand result <delegation id> [--wait 30s] [--json]');
  const { body } = await call(context.transport(), 'GET', idPath(id, values.wait ? `/result?wait=${encodeURIComponent(values.wait)}` : '/result'), resultResponseSchema);
  if (values.json) {
    json(context, body);
    return body.done ? (body.result.status === 'completed' ? 0 : exitNotCompleted) : exitStillRunning;
  }
  if (!body.done) {
    context.io.stderr(`${id} is still ${body.state}${body.peek ? ` (turn ${body.peek.turns}/${body.peek.maxTurns})` : ''}; wait longer with --wait, or "errand peek ${id}"\n`);
    return exitStillRunning;
  }
  return printResult(context, id, body.result);
}

/** `errand cancel <id> [--reason text]`. */
export async function cancelCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { reason: { type: 'string', short: 'r' }, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (!id || positionals.length > 1) throw new UsageError('usage: errand cancel <delegation id> [--reason text] [--json]');
  const { body } = await call(context.transport(), 'POST', idPath(id, '/cancel'), cancelResponseSchema, { body: values.reason ? { reason: values.reason } : {} });
  if (values.json) json(context, body);
  else context.io.stdout(body.cancelRequested ? `cancel requested for ${id}\n` : `${id} had already ended (${body.state}); nothing to cancel\n`);
  return 0;
}

/** `errand send <id> <message...>`: a message for a continuable delegation. */
export async function sendCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, 'idempotency-key': { type: 'string' } }, allowPositionals: true, strict: true });
  const [id, ...words] = positionals;
  const message = words.join(' ').trim();
  if (!id || !message) throw new UsageError('usage: errand send <delegation id> <message...> [--json]');
  const { body } = await call(context.transport(), 'POST', idPath(id, '/messages'), sendMessageResponseSchema, {
    body: { message },
    ...(values['idempotency-key'] ? { headers: { 'Idempotency-Key': values['idempotency-key'] } } : {}),
  });
  if (values.json) json(context, body);
  else context.io.stdout(`message delivered to ${id}${body.queuedTurns ? ` (${body.queuedTurns} queued)` : ''}\n`);
  return 0;
}

/** `errand list [--status s] [--source s] [--parent id] [--page-size n] [--page-token t]`. */
export async function listCommand(argv: string[], context: CliContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { status: { type: 'string' }, source: { type: 'string' }, parent: { type: 'string' }, 'page-size': { type: 'string' }, 'page-token': { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: false,
    strict: true,
  });
  const query = new URLSearchParams();
  if (values.status) query.set('status', values.status);
  if (values.source) query.set('source', values.source);
  if (values.parent) query.set('parent', values.parent);
  if (values['page-size']) query.set('pageSize', values['page-size']);
  if (values['page-token']) query.set('pageToken', values['page-token']);
  const { body } = await call(context.transport(), 'GET', `/v1/delegations${query.size > 0 ? `?${query.toString()}` : ''}`, listDelegationsResponseSchema);
  if (values.json) {
    json(context, body);
    return 0;
  }
  if (body.items.length === 0) context.io.stdout('no delegations\n');
  for (const item of body.items) context.io.stdout(`${item.id}  ${item.state.padEnd(9)}  turns ${String(item.turns).padStart(3)}  ${item.source ?? '-'}  ${item.model ?? '-'}  ${item.startedAt}\n`);
  if (body.nextPageToken) context.io.stderr(`more: errand list --page-token ${body.nextPageToken}${values['page-size'] ? ` --page-size ${values['page-size']}` : ''}\n`);
  return 0;
}

import { readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cliProgressPollMs } from '../contracts/limits';
import {
  restartAgentResponseSchema,
  resumeWorkflowResponseSchema,
  startWorkflowResponseSchema,
  workflowControlResponseSchema,
  workflowDryRunResponseSchema,
  workflowStatusSchema,
  type WorkflowProjection,
} from '../contracts/workflow-api';
import type { WorkflowRunView } from '../contracts/workflow-run';
import { formatUsd } from '../domain/model-cost';
import { call } from './api-transport';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';

/**
 * `errand workflow run|show|pause|resume|cancel|restart`: workflow runs (SEMANTICS §7) through the API, like
 * the delegation commands (over HTTP with ERRAND_API_URL, in process otherwise).
 */

/** Exit code of a run that ended without completing (failed, cancelled, budget). */
const exitNotCompleted = 1;

const idPath = (id: string, suffix = '') => `/v1/workflows/${encodeURIComponent(id)}${suffix}`;

/** Options of `errand workflow run`. */
export const workflowRunOptions = {
  args: { type: 'string', short: 'a' },
  async: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'token-budget': { type: 'string' },
  'time-budget': { type: 'string' },
  'cost-budget-usd': { type: 'string' },
  concurrency: { type: 'string' },
  'max-agents': { type: 'string' },
  'idempotency-key': { type: 'string' },
  json: { type: 'boolean' },
} as const;

function print(context: CliContext, value: unknown): void {
  context.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

function number(flag: string, value: string | undefined, integer: boolean, example: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || (integer && !Number.isInteger(parsed))) throw new UsageError(`--${flag} "${value}" is not ${integer ? 'a whole number' : 'a number'} (e.g. --${flag} ${example})`);
  return parsed;
}

/** A script from a file (a path that exists, or ends in .js/.mjs), or a workflow source's name. */
function scriptOrName(context: CliContext, target: string): { script: string; scriptName: string } | { name: string } {
  const path = resolve(context.cwd, target);
  const isFile = (() => {
    try {
      return statSync(path).isFile();
    } catch {
      return false;
    }
  })();
  if (!isFile && !/\.m?js$/.test(target) && !target.includes('/')) return { name: target };
  try {
    // The run's view and messages name the script by its file, not as an inline script.
    return { script: readFileSync(path, 'utf8'), scriptName: basename(path).slice(0, 128) };
  } catch (error) {
    throw new UsageError(`${target} cannot be read: ${error instanceof Error ? error.message : String(error)} (give a script file, or the name of a workflow in .claude/workflows/)`);
  }
}

/** The projection for people. */
export function projectionText(projection: WorkflowProjection): string {
  const lines = [
    `Projected: ${projection.agents}${projection.complete ? '' : '+'} agents · ${projection.tokens} tokens · ${projection.costMicroUsd === null ? `cost unknown (${projection.unpricedAgents} agents on unpriced models)` : formatUsd(projection.costMicroUsd)}`,
    ...projection.models.map((model) => `  ${model.model}: ${model.agents} × ${model.tokensPerAgent} tokens${model.costMicroUsdPerAgent === null ? ' (no prices)' : ` × ${formatUsd(model.costMicroUsdPerAgent)}`}`),
    ...(projection.diagnostic ? [`Script stopped under the projection: ${projection.diagnostic.message}${projection.diagnostic.line === null ? '' : ` (line ${projection.diagnostic.line})`}`] : []),
    ...projection.notes.map((note) => `  note: ${note}`),
  ];
  return lines.join('\n');
}

/** The view as a table by label (like `errand peek` for a delegation). */
export function viewText(view: WorkflowRunView): string {
  const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
  const width = Math.max(5, ...view.labels.map((label) => label.label.length));
  const lines = [
    `Workflow: ${view.id} (${view.scriptName}) · ${view.status}${view.phase ? ` · phase ${view.phase}` : ''}`,
    `Tokens: ${view.tokens} · Cost: ${formatUsd(view.costMicroUsd)} · Elapsed: ${seconds(view.elapsedMs)}`,
    `${'label'.padEnd(width)}  waiting  running  done  failed  tokens  cost`,
    ...view.labels.map((label) => `${label.label.padEnd(width)}  ${String(label.waiting).padStart(7)}  ${String(label.running).padStart(7)}  ${String(label.done).padStart(4)}  ${String(label.failed).padStart(6)}  ${String(label.tokens).padStart(6)}  ${formatUsd(label.costMicroUsd)}`),
    ...view.agents.filter((agent) => agent.failure !== null).map((agent) => `failed: ${agent.label ?? agent.key}: ${agent.failure?.type}: ${agent.failure?.message} (errand workflow restart ${view.id} ${agent.key})`),
    ...(view.diagnostic ? [`Diagnostic: ${view.diagnostic.kind}: ${view.diagnostic.message}${view.diagnostic.line === null ? '' : ` (line ${view.diagnostic.line})`}`] : []),
  ];
  return lines.join('\n');
}

/** `errand workflow <subcommand> ...`. */
export async function workflowCommand(argv: string[], context: CliContext): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'run':
      return runCommand(rest, context);
    case 'show':
      return showCommand(rest, context);
    case 'pause':
    case 'cancel':
      return controlCommand(sub, rest, context);
    case 'resume':
      return resumeCommand(rest, context);
    case 'restart':
      return restartCommand(rest, context);
    default:
      throw new UsageError(`${sub === undefined ? 'a subcommand is needed' : `unknown subcommand "${sub}"`}: errand workflow run|show|pause|resume|cancel|restart (errand workflow --help)`);
  }
}

async function runCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: workflowRunOptions, allowPositionals: true, strict: true });
  const [target] = positionals;
  if (target === undefined || positionals.length > 1) throw new UsageError('usage: errand workflow run <file|name> [--args JSON] [--async] [--dry-run] [caps]');
  let args: unknown;
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args);
    } catch (error) {
      throw new UsageError(`--args is not valid JSON: ${error instanceof Error ? error.message : String(error)} (e.g. --args '{"files": ["a.ts"]}')`);
    }
  }
  const tokenBudget = number('token-budget', values['token-budget'], true, '200000');
  const timeBudget = number('time-budget', values['time-budget'], true, '600');
  const costBudgetUsd = number('cost-budget-usd', values['cost-budget-usd'], false, '2.50');
  const concurrency = number('concurrency', values.concurrency, true, '4');
  const maxAgents = number('max-agents', values['max-agents'], true, '100');
  const body = {
    ...scriptOrName(context, target),
    ...(args === undefined ? {} : { args }),
    ...(tokenBudget === undefined ? {} : { tokenBudget }),
    ...(timeBudget === undefined ? {} : { timeBudget }),
    ...(costBudgetUsd === undefined ? {} : { costBudgetUsd }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(maxAgents === undefined ? {} : { maxAgents }),
    ...(values['dry-run'] ? { dryRun: true } : {}),
  };
  const transport = context.transport();
  if (values['dry-run']) {
    const { body: dry } = await call(transport, 'POST', '/v1/workflows', workflowDryRunResponseSchema, { body });
    if (values.json) print(context, dry);
    else context.io.stdout(`${projectionText(dry.projection)}\n`);
    return 0;
  }
  const { body: started } = await call(transport, 'POST', '/v1/workflows', startWorkflowResponseSchema, { body, ...(values['idempotency-key'] ? { headers: { 'Idempotency-Key': values['idempotency-key'] } } : {}) });
  if (values.async) {
    if (values.json) print(context, started);
    else {
      context.io.stdout(`${started.id}\n`);
      context.io.stderr(`started ${started.id}${started.created ? '' : ' (an earlier request with this idempotency key)'}; "errand workflow show ${started.id}" shows it\n`);
    }
    return 0;
  }
  if (!values.json && started.projection) context.io.stderr(`${projectionText(started.projection)}\n`);
  return follow(context, started.id, values.json === true);
}

/** Watches a run until it ends: the view on stderr as it changes, the result on stdout. */
async function follow(context: CliContext, id: string, asJson: boolean): Promise<number> {
  const transport = context.transport();
  let shown = '';
  for (;;) {
    const { body } = await call(transport, 'GET', idPath(id), workflowStatusSchema);
    const view = body.view;
    if (view !== null && !asJson) {
      const text = viewText(view);
      if (text !== shown) context.io.stderr(`${text}\n`);
      shown = text;
    }
    if (body.temporalStatus !== 'RUNNING') {
      if (asJson) print(context, body);
      else if (view?.result !== undefined) context.io.stdout(`${typeof view.result === 'string' ? view.result : JSON.stringify(view.result, null, 2)}\n`);
      return view?.status === 'completed' ? 0 : exitNotCompleted;
    }
    await new Promise((resolvePause) => setTimeout(resolvePause, cliProgressPollMs * 2));
  }
}

async function showCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, follow: { type: 'boolean', short: 'f' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (id === undefined || positionals.length > 1) throw new UsageError('usage: errand workflow show <id> [--follow] [--json]');
  if (values.follow) return follow(context, id, values.json === true);
  const { body } = await call(context.transport(), 'GET', idPath(id), workflowStatusSchema);
  if (values.json) print(context, body);
  else context.io.stdout(`${body.view ? viewText(body.view) : `Workflow: ${id} · Temporal: ${body.temporalStatus} · view: ${body.viewError ?? 'not available'}`}\n`);
  return 0;
}

async function controlCommand(which: 'pause' | 'cancel', argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, reason: { type: 'string', short: 'r' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (id === undefined || positionals.length > 1) throw new UsageError(`usage: errand workflow ${which} <id>${which === 'cancel' ? ' [--reason text]' : ''} [--json]`);
  if (which === 'pause' && values.reason !== undefined) throw new UsageError('--reason goes with cancel, not pause');
  const { body } = await call(context.transport(), 'POST', idPath(id, `/${which}`), workflowControlResponseSchema, which === 'cancel' ? { body: values.reason ? { reason: values.reason } : {} } : {});
  if (values.json) print(context, body);
  else context.io.stdout(body.requested ? `${which} requested for ${id}\n` : `${id} has already ended (${body.temporalStatus.toLowerCase()}); nothing to ${which}\n`);
  return 0;
}

async function resumeCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, script: { type: 'string' } }, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (id === undefined || positionals.length > 1) throw new UsageError('usage: errand workflow resume <id> [--script file] [--json]');
  let script: string | undefined;
  if (values.script !== undefined) {
    try {
      script = readFileSync(resolve(context.cwd, values.script), 'utf8');
    } catch (error) {
      throw new UsageError(`--script ${values.script} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const { body } = await call(context.transport(), 'POST', idPath(id, '/resume'), resumeWorkflowResponseSchema, { body: script === undefined ? {} : { script } });
  if (values.json) print(context, body);
  else if (body.action === 'signalled') context.io.stdout(`${id} resumed: agents start again\n`);
  else context.io.stdout(`${body.started?.id ?? ''}\n`);
  if (!values.json && body.action === 'started') context.io.stderr(`${id} had ended; ${body.started?.id ?? ''} starts from its journal ("errand workflow show ${body.started?.id ?? ''}")\n`);
  return 0;
}

async function restartCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [id, key] = positionals;
  if (id === undefined || key === undefined || positionals.length > 2) throw new UsageError('usage: errand workflow restart <id> <agent key> [--json]');
  const { body } = await call(context.transport(), 'POST', idPath(id, `/agents/${encodeURIComponent(key)}/restart`), restartAgentResponseSchema);
  if (values.json) print(context, body);
  else context.io.stdout(`agent ${key} of ${id} will run again\n`);
  return 0;
}

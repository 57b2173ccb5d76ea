import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { peekQueryTimeoutMs, staticSummaryMaxChars, workflowTaskTimeoutMs } from '../contracts/limits';
import { searchAttributes } from '../contracts/search-attributes';
import type { JsonValue } from '../contracts/json';
import { workflowResultSchema, workflowViewSchema } from '../contracts/workflow-api';
import { errandWorkflowId } from '../contracts/workflow-ids';
import type { WorkflowRestartAgentOutput } from '../contracts/workflow-run-messages';
import { workflowRunMemoKey, workflowRunMessageNames, workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult, type WorkflowRunView } from '../contracts/workflow-run';
import { formatUsd } from '../domain/model-cost';
import { GrpcCode, isGrpcStatus } from '../temporal/grpc-status';
import type { TopLevelStartOptions } from '../observability/start-options';
import type { BlobStore } from '../activities/blob-store';
import { sendUpdateAcrossRunChange } from '../temporal/temporal-update-retry';
import type { DailyCostCap } from './daily-cost-cap';
import { ApiProblem, ProblemKind } from './problem';
import type { TemporalGateway, WorkflowFacts } from './temporal-gateway';

/**
 * What the API does with workflow runs (SEMANTICS §7): start one, describe it with its view, pause, resume,
 * cancel, restart an agent, and resume an ended run from its journal — always within one tenant (a run of
 * another tenant is answered exactly like one that does not exist). Temporal is reached only through the
 * {@link TemporalGateway}, so the SDK and Temporal's HTTP API behave alike (decision 0026).
 *
 * The run's input (its script, args, caps) is written to the blob store under its content hash before the
 * start, and the key is kept in the run's memo: a resume of an ended run reads it back from there, since
 * neither the gateway nor the run's result carries the input (decision 0039).
 */

/** Memo key of a run's start facts. */
const memoKey = workflowRunMemoKey;
/** What the memo holds (a JSON string: start memos are strings). */
const runMemoSchema = z.object({ inputKey: z.string(), resumedFrom: z.string().optional(), fingerprint: z.string().optional(), nonce: z.string().optional() });
type RunMemo = z.infer<typeof runMemoSchema>;

/** A new workflow run id: `errand-wf-<16 hex>`. */
export function newWorkflowRunId(): string {
  return errandWorkflowId(`wf-${randomUUID().replace(/-/g, '').slice(0, 16)}`);
}

/** The run id an Idempotency-Key maps to, per tenant (never the id of a delegation with the same key). */
export function idempotentWorkflowRunId(tenant: string, key: string): string {
  return errandWorkflowId(`wf-${createHash('sha256').update(`workflow\n${tenant}\n${key}`, 'utf8').digest('hex').slice(0, 16)}`);
}

/** The input a run starts with, without what only a resume or a continue-as-new sets. */
export type WorkflowRunStartInput = Omit<WorkflowRunInput, 'journalRef' | 'carried'>;

/** Settings of a {@link WorkflowRunService}. */
export interface WorkflowRunServiceOptions {
  gateway: TemporalGateway;
  taskQueue: string;
  /** Who starts runs, for the static details (e.g. "errand HTTP API"). */
  startedBy: string;
  /** Where run inputs are kept for a resume of an ended run (the workers' blob store). */
  blobs: BlobStore;
  dailyCap?: DailyCostCap;
  peekTimeoutMs?: number;
}

/** A run of the asking tenant, as described. */
export interface OwnedRun {
  description: WorkflowFacts;
  memo: RunMemo | undefined;
}

function notFound(id: string): ApiProblem {
  return new ApiProblem(404, ProblemKind.notFound, 'No such workflow run', { detail: `no workflow run with id "${id}" is visible to this API key` });
}

function ended(id: string, status: string, what: string): ApiProblem {
  return new ApiProblem(409, ProblemKind.conflict, `The workflow run cannot ${what}`, { detail: `workflow run ${id} has ended (${status.toLowerCase()}); ${what} needs a running run` });
}

/** Temporal operations on workflow runs, tenant-scoped. */
export class WorkflowRunService {
  constructor(private readonly options: WorkflowRunServiceOptions) {}

  /** Where run inputs and journals are kept (the workers' blob store). */
  get blobs(): BlobStore {
    return this.options.blobs;
  }

  /** Starts a run (its input stored by content first). With an Idempotency-Key a retry answers the same run. */
  async start(args: { tenant: string; input: WorkflowRunStartInput; journalRef?: string; resumedFrom?: string; idempotency?: { key: string; requestFingerprint: string } }): Promise<{ id: string; runId: string; created: boolean }> {
    const { tenant, input, idempotency } = args;
    const { gateway, blobs } = this.options;
    const stored = JSON.stringify(input);
    const inputKey = `workflow-runs/inputs/${createHash('sha256').update(stored, 'utf8').digest('hex')}`;
    await blobs.put(inputKey, stored);
    const workflowId = idempotency === undefined ? newWorkflowRunId() : idempotentWorkflowRunId(tenant, idempotency.key);
    await this.options.dailyCap?.hold(tenant, workflowId, input.caps.costBudgetMicroUsd);
    const nonce = randomUUID();
    const memo: RunMemo = { inputKey, ...(args.resumedFrom ? { resumedFrom: args.resumedFrom } : {}), ...(idempotency ? { fingerprint: idempotency.requestFingerprint, nonce } : {}) };
    const runInput: WorkflowRunInput = { ...input, tenant, ...(args.journalRef ? { journalRef: args.journalRef } : {}) };
    const visible = workflowRunStartOptions(runInput, { workflowId, tenant, startedBy: this.options.startedBy, memo: JSON.stringify(memo), ...(args.resumedFrom ? { resumedFrom: args.resumedFrom } : {}) });
    const start = { workflowType: workflowRunWorkflowType, workflowId, taskQueue: this.options.taskQueue, args: [runInput], visible };
    if (idempotency === undefined) {
      const { runId } = await gateway.start(start);
      return { id: workflowId, runId, created: true };
    }
    try {
      await gateway.start({ ...start, idempotent: { memo: {} } });
    } catch (error) {
      if (!isGrpcStatus(error, GrpcCode.alreadyExists)) throw error;
    }
    const description = await gateway.describe(workflowId);
    const found = memoOf(description);
    if (description.attributes.tenant !== tenant || description.attributes.kind !== 'workflow') {
      throw new ApiProblem(409, ProblemKind.conflict, 'Idempotency-Key conflict', { detail: 'this Idempotency-Key cannot be used; choose another' });
    }
    if (found?.fingerprint !== undefined && found.fingerprint !== idempotency.requestFingerprint) {
      throw new ApiProblem(422, ProblemKind.idempotencyKeyReused, 'Idempotency-Key reused for a different request', {
        detail: `workflow run ${workflowId} was started with this Idempotency-Key and a different body; use a new key for a new request`,
        errors: [{ in: 'header', field: 'Idempotency-Key', message: 'already used for a different request' }],
      });
    }
    return { id: workflowId, runId: description.runId, created: found?.nonce === nonce };
  }

  /** Describes a run and checks it is a workflow run of this tenant; anything else is 404. */
  async describeOwned(tenant: string, id: string): Promise<OwnedRun> {
    let description: WorkflowFacts;
    try {
      description = await this.options.gateway.describe(id);
    } catch (error) {
      if (isGrpcStatus(error, GrpcCode.notFound)) throw notFound(id);
      throw error;
    }
    if (description.attributes.tenant !== tenant || description.attributes.kind !== 'workflow') throw notFound(id);
    return { description, memo: memoOf(description) };
  }

  /** The run's view, from its query (answered by a worker, also for an ended run). */
  async view(id: string): Promise<{ view: WorkflowRunView | null; viewError?: string }> {
    try {
      const answer: unknown = await this.options.gateway.query(id, workflowRunMessageNames.viewQuery, [], this.options.peekTimeoutMs ?? peekQueryTimeoutMs);
      const parsed = workflowViewSchema.safeParse(answer);
      if (!parsed.success) return { view: null, viewError: `the view has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}` };
      return { view: parsed.data };
    } catch (error) {
      return { view: null, viewError: `no view: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Waits up to `waitMs` for the run to end; its result, or undefined when it has not ended by then (or ended without one). */
  async result(description: WorkflowFacts, waitMs: number): Promise<WorkflowRunResult | undefined> {
    const end = await this.options.gateway.awaitEnd(description.workflowId, description.runId, waitMs);
    if (end?.kind !== 'completed') return undefined;
    const parsed = workflowResultSchema.safeParse(end.value);
    if (!parsed.success) throw new Error(`workflow run ${description.workflowId} returned a result of an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`);
    // A result too large for the run's history is in errand's store: the answer carries it whole.
    if (parsed.data.result === undefined && parsed.data.resultRef !== undefined) {
      const body = await this.options.blobs.get(parsed.data.resultRef);
      if (body !== undefined) return { ...parsed.data, result: JSON.parse(body) as JsonValue };
    }
    return parsed.data;
  }

  /** Sends a signal to a running run of this tenant; false when it has ended. */
  async signal(tenant: string, id: string, name: string, arg: unknown): Promise<{ requested: boolean; temporalStatus: string }> {
    const { description } = await this.describeOwned(tenant, id);
    if (description.statusName !== 'RUNNING') return { requested: false, temporalStatus: description.statusName };
    try {
      await this.options.gateway.signal(id, name, arg);
    } catch (error) {
      if (isGrpcStatus(error, GrpcCode.notFound)) return { requested: false, temporalStatus: (await this.describeOwned(tenant, id)).description.statusName };
      throw error;
    }
    return { requested: true, temporalStatus: description.statusName };
  }

  /** Drops one agent's key from a running run's journal (the restart update); 409 when refused or ended. */
  async restartAgent(tenant: string, id: string, key: string): Promise<void> {
    const { description } = await this.describeOwned(tenant, id);
    if (description.statusName !== 'RUNNING') throw ended(id, description.statusName, 'restart an agent');
    // One id for every attempt: an update refused while the run continued as new is sent again, never twice.
    const updateId = `restart-${randomUUID()}`;
    const outcome = await sendUpdateAcrossRunChange(() =>
      this.options.gateway.update(id, workflowRunMessageNames.restartAgentUpdate, { key }, { updateId, waitFor: 'completed', timeoutMs: this.options.peekTimeoutMs ?? peekQueryTimeoutMs }),
    );
    if (outcome.stage === 'failed') throw new ApiProblem(409, ProblemKind.conflict, 'The workflow run refused the restart', { detail: outcome.message });
    const answer = outcome.stage === 'completed' ? (outcome.value as Partial<WorkflowRestartAgentOutput> | null) : null;
    if (answer?.restarted === false) throw new ApiProblem(409, ProblemKind.conflict, 'The agent cannot be restarted', { detail: answer.message ?? `agent ${key} of workflow run ${id} cannot be restarted` });
  }

  /** The input an ended run started with (from the blob store, by its memo's key). */
  async inputOf(run: OwnedRun): Promise<WorkflowRunStartInput> {
    const id = run.description.workflowId;
    const body = run.memo === undefined ? undefined : await this.options.blobs.get(run.memo.inputKey);
    if (body === undefined) throw new ApiProblem(409, ProblemKind.conflict, 'The workflow run cannot be resumed', { detail: `the input of workflow run ${id} is not in errand's store; start a new run instead` });
    return JSON.parse(body) as WorkflowRunStartInput;
  }
}

function memoOf(description: WorkflowFacts): RunMemo | undefined {
  const raw = description.memo[memoKey];
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed = runMemoSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What the Web UI shows for a run: summary, details and the search attributes the API finds it by (`ErrandKind` `workflow`). */
export function workflowRunStartOptions(input: WorkflowRunInput, ids: { workflowId: string; tenant: string; startedBy: string; memo: string; resumedFrom?: string }): TopLevelStartOptions {
  const caps = [
    ...(input.caps.tokenBudget !== undefined ? [`token budget ${input.caps.tokenBudget}`] : []),
    ...(input.caps.timeBudgetMs !== undefined ? [`time budget ${Math.floor(input.caps.timeBudgetMs / 1_000)} s`] : []),
    ...(input.caps.costBudgetMicroUsd !== undefined ? [`cost budget ${formatUsd(input.caps.costBudgetMicroUsd)}`] : []),
    `${input.concurrency} agents at once`,
    `${input.maxAgents} agents in all`,
  ];
  const details = [
    `**Workflow script:** ${input.scriptName}`,
    `**Limits:** ${caps.join(' · ')}`,
    `**Working directory:** \`${input.workingDir}\``,
    ...(ids.resumedFrom ? [`**Resumed from:** ${ids.resumedFrom} (its journal)`] : []),
    `**Workflow:** ${ids.workflowId}`,
    `**Tenant:** ${ids.tenant}`,
    `**Started by:** ${ids.startedBy}`,
  ];
  return {
    workflowTaskTimeout: workflowTaskTimeoutMs,
    staticSummary: `workflow · ${input.scriptName}${ids.resumedFrom ? ` (resumed from ${ids.resumedFrom})` : ''}`.slice(0, staticSummaryMaxChars),
    staticDetails: details.join('  \n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'workflow' },
      { key: searchAttributes.source, value: input.scriptName },
      { key: searchAttributes.status, value: 'running' },
      { key: searchAttributes.tenant, value: ids.tenant },
    ],
    memo: { [memoKey]: ids.memo },
  };
}

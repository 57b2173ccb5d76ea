import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type {
  ClosedChild,
  DeliverToChildInput,
  DeliverToChildOutput,
  LoadListingInput,
  LoadSourceInput,
  OrchestrationActivities,
  PlanDelegationInput,
  PlanDelegationOutput,
  PlannedDelegation,
  PlanWorkflowRunInput,
  PlanWorkflowRunOutput,
  ProbeChildrenInput,
  ReadLiveTextInput,
} from '../contracts/activities';
import { defaultMaxOutputTokens as limitsDefaultMaxOutputTokens } from '../contracts/limits/llm';
import { orchestrationHeartbeatIntervalMs } from '../contracts/limits/workflow';
import type { LiveText } from '../contracts/live-text';
import { approvalUpdate, sendMessageUpdate } from '../contracts/subagent-messages';
import type { SubagentResult } from '../contracts/subagent-result';
import type { BlobStore } from './blob-store';
import { inboundMessage } from './inbound-message';
import { delegateRequestSchema } from '../contracts/delegation';
import { formatSourceContent } from '../domain/load-texts';
import { slimChildResult } from '../domain/child-result';
import { formatRunPeek, isWorkflowRunResult, runResultAsTaskResult } from '../domain/workflow-run-task';
import { workflowViewQuery } from '../contracts/workflow-run-messages';
import { readLiveText } from '../observability/live-text-reader';
import { formatRouteDiscovery, type CatalogProvider } from '../domain/route-discovery';
import type { ModelRegistry } from '../llm/model-port';
import type { SourceResolver } from '../sources/source-resolver';
import { planDelegation, type PlanContext } from './plan-delegation';
import { readTenantSpend } from './tenant-spend-book';
import { dailyCapRefusal } from '../domain/run-caps';
import { utcDay } from '../contracts/tenant-spend';
import { sendUpdateAcrossRunChange } from '../temporal/temporal-update-retry';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';

/**
 * The planning activity's result: a plan as it is, a refusal as the calling model reads it (`message`, what
 * the `delegate` tool answers) with the typed failure beside it. The planner writes each message whole for
 * its reader, its field and "did you mean" names included, so the model's rendering is the message.
 */
export function planOutput(outcome: PlannedDelegation | PlanningRefusal): PlanDelegationOutput {
  return outcome.ok ? outcome : { ok: false, message: outcome.failure.message, failure: outcome.failure };
}

/** What the orchestration activities need. */
export interface OrchestrationDependencies {
  models: ModelRegistry;
  /** The source resolver for a working directory (cached per directory, so listing caches work). */
  resolverFor(workingDir: string): SourceResolver;
  /** Planning settings from configuration (everything but the resolver). */
  planning: Omit<PlanContext, 'resolver'>;
  /** A Temporal client for talking to children; by default the worker's own (the activity context's). */
  client?: () => Client;
  /** Where long messages to children are stored so only their key passes through history. */
  blobs?: BlobStore;
  /** `ERRAND_MAX_OUTPUT_TOKENS`, shown for models whose entry sets no output limit. */
  defaultMaxOutputTokens?: number;
  /** The operator's daily cost cap per tenant (`ERRAND_TENANT_DAILY_COST_USD`), micro-dollars: checked before planning. */
  tenantDailyCostMicroUsd?: number;
  /** Plans `run_workflow` calls (the worker's, over the configuration and the workflow sources); absent: the tool is refused. */
  planWorkflowRun?: (input: PlanWorkflowRunInput) => Promise<PlanWorkflowRunOutput>;
}

/** The route catalog of a model registry: its providers and each allowed model's settings, defaults applied. */
export function registryCatalog(models: ModelRegistry): CatalogProvider[] {
  return models.providers().map((provider) => ({
    name: provider.name,
    kind: provider.kind,
    ...(provider.defaultModel === undefined ? {} : { defaultModel: provider.defaultModel }),
    models: provider.models.map((model) => {
      const { provider: _provider, model: id, kind: _kind, ...settings } = models.modelInfo({ provider: provider.name, model });
      return { id, ...settings };
    }),
  }));
}

/** Formats the `list_subagent_models` answer: providers, a provider's models, or a model's efforts (SEMANTICS §5). */
export function formatModelList(models: ModelRegistry, defaultRoute: { provider: string; model: string } | undefined, filter: { provider?: string; model?: string }, defaultMaxOutputTokens: number = limitsDefaultMaxOutputTokens): string {
  return formatRouteDiscovery(registryCatalog(models), { ...(defaultRoute ? { defaultRoute } : {}), defaultMaxOutputTokens }, filter);
}

/** Builds the activities behind `load`, `delegate` planning and `list_subagent_models`. */
export function createOrchestrationActivities(deps: OrchestrationDependencies): OrchestrationActivities {
  const activities: OrchestrationActivities = {
    async planDelegation(input: PlanDelegationInput): Promise<PlanDelegationOutput> {
      const parsed = delegateRequestSchema.safeParse(input.request);
      if (!parsed.success) {
        const message = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
        return planOutput(refuse('arguments-invalid', parsed.error.issues[0]?.path.join('.') || '(arguments)', message));
      }
      const tenant = input.parent.tenant;
      if (deps.tenantDailyCostMicroUsd !== undefined && tenant !== undefined) {
        // A tenant whose spend today reached the operator's daily cap starts nothing new (decision 0027).
        const now = Date.now();
        const spent = await readTenantSpend(deps.client?.() ?? Context.current().client, tenant, now);
        const refused = dailyCapRefusal(tenant, utcDay(now), spent, deps.tenantDailyCostMicroUsd);
        if (refused) return planOutput(refuse('daily-cost-cap', 'ERRAND_TENANT_DAILY_COST_USD', refused));
      }
      return planOutput(await planDelegation(parsed.data, input.parent, { ...deps.planning, resolver: deps.resolverFor(input.parent.workingDir), resolveDir: input.parent.workingDir }));
    },
    async loadListing(input: LoadListingInput): Promise<string> {
      return deps.resolverFor(input.workingDir).listingText({
        ...(input.recipe ? { sessionRecipe: input.recipe.snapshot, sessionValues: input.recipe.values } : {}),
        tasks: input.tasks,
      });
    },
    async loadSource(input: LoadSourceInput): Promise<string> {
      const resolved = await deps.resolverFor(input.workingDir).resolve(input.name, {
        ...(input.recipe ? { sessionRecipe: input.recipe.snapshot, sessionValues: input.recipe.values } : {}),
      });
      if (!resolved.ok) return resolved.message;
      // The model learns when the name it loaded hides another source (a repository's recipe named like the operator's).
      return resolved.shadowing ? `${formatSourceContent(resolved.snapshot)}\n\nNote: ${resolved.shadowing}` : formatSourceContent(resolved.snapshot);
    },
    async listSubagentModels(filter: { provider?: string; model?: string }): Promise<string> {
      return formatModelList(deps.models, deps.planning.configuredDefault, filter, deps.defaultMaxOutputTokens);
    },
    async deliverToChild(input: DeliverToChildInput): Promise<DeliverToChildOutput> {
      return deliverToChild(deps.client?.() ?? Context.current().client, input, deps.blobs);
    },
    async probeChildren(input: ProbeChildrenInput): Promise<ClosedChild[]> {
      return probeChildren(deps.client?.() ?? Context.current().client, input);
    },
    async readLiveText(input: ReadLiveTextInput): Promise<LiveText | null> {
      return (await readLiveText(deps.client?.() ?? Context.current().client, input.workflowId)) ?? null;
    },
    async planWorkflowRun(input: PlanWorkflowRunInput): Promise<PlanWorkflowRunOutput> {
      if (!deps.planWorkflowRun) return { ok: false, message: 'this worker was built without workflow runs; ask the operator' };
      if (deps.tenantDailyCostMicroUsd !== undefined && input.tenant !== undefined) {
        // As for delegate: a tenant whose spend today reached the operator's daily cap starts nothing new.
        const now = Date.now();
        const spent = await readTenantSpend(deps.client?.() ?? Context.current().client, input.tenant, now);
        const refused = dailyCapRefusal(input.tenant, utcDay(now), spent, deps.tenantDailyCostMicroUsd);
        if (refused) return { ok: false, message: refused };
      }
      return deps.planWorkflowRun(input);
    },
    async peekWorkflowRun(input: { workflowId: string }): Promise<string> {
      const view = await (deps.client?.() ?? Context.current().client).workflow.getHandle(input.workflowId).query(workflowViewQuery);
      return formatRunPeek(view);
    },
  };
  // Planning may clone a git-synced store and listing may sync one (several git commands): every
  // orchestration activity heartbeats, so a lost worker is noticed within the heartbeat timeout while a
  // slow but live one is not cut off.
  const beating = <A, R>(work: (input: A) => Promise<R>) => async (input: A): Promise<R> => {
    const context = Context.current();
    const timer = setInterval(() => context.heartbeat(), orchestrationHeartbeatIntervalMs);
    try {
      return await work(input);
    } finally {
      clearInterval(timer);
    }
  };
  return {
    planDelegation: beating(activities.planDelegation),
    loadListing: beating(activities.loadListing),
    loadSource: beating(activities.loadSource),
    listSubagentModels: beating(activities.listSubagentModels),
    deliverToChild: beating(activities.deliverToChild),
    probeChildren: beating(activities.probeChildren),
    readLiveText: beating(activities.readLiveText),
    planWorkflowRun: beating(activities.planWorkflowRun),
    peekWorkflowRun: beating(activities.peekWorkflowRun),
  };
}

/**
 * Delivers a message or an approval decision to a child by update, so the parent learns whether the
 * child accepted it. The update id makes a retried activity deliver once; a refusal by the child's
 * validator (not continuable, ended, nothing pending) or a closed workflow is an answer, not an error.
 */
export async function deliverToChild(client: Client, input: DeliverToChildInput, blobs?: BlobStore): Promise<DeliverToChildOutput> {
  const handle = client.workflow.getHandle(input.workflowId);
  try {
    if (input.kind === 'message') {
      // A long message goes by key: the child's history never holds its body.
      const message = await inboundMessage(blobs, input.message, { messageId: input.messageId, from: input.from });
      const result = await sendUpdateAcrossRunChange(() => handle.executeUpdate(sendMessageUpdate, { args: [message], updateId: input.messageId }));
      return { accepted: true, queuedTurns: result.queuedTurns };
    }
    await sendUpdateAcrossRunChange(() =>
      handle.executeUpdate(approvalUpdate, {
        args: [{ approvalId: input.approvalId, decision: input.decision, by: input.by, ...(input.reason !== undefined ? { reason: input.reason } : {}) }],
        updateId: input.updateId,
      }),
    );
    return { accepted: true };
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) return { accepted: false, reason: error.cause?.message ?? error.message };
    if (error instanceof WorkflowNotFoundError) return { accepted: false, reason: 'its workflow has ended' };
    throw error;
  }
}

/** Which of the given workflows have closed, with their results (or what Temporal says about their end). */
export async function probeChildren(client: Client, input: ProbeChildrenInput): Promise<ClosedChild[]> {
  const closed: ClosedChild[] = [];
  for (const workflowId of input.workflowIds) {
    const handle = client.workflow.getHandle(workflowId);
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        closed.push({ workflowId, temporalStatus: 'NOT_FOUND', diagnostic: 'its workflow no longer exists (retention ended or it was deleted)' });
        continue;
      }
      throw error;
    }
    if (status === 'RUNNING') continue;
    try {
      const ended: unknown = await handle.result();
      if (isWorkflowRunResult(ended)) {
        // A run (`run_workflow`) is read as a task's result: its script's result stays its own, whole.
        const { startTime, closeTime } = await handle.describe();
        closed.push({ workflowId, temporalStatus: status, result: runResultAsTaskResult(workflowId, ended, (closeTime ?? new Date()).getTime() - startTime.getTime()) });
        continue;
      }
      // The parent's history keeps a preview and a reference, as the child's own settlement signal does (SEMANTICS §4).
      closed.push({ workflowId, temporalStatus: status, result: slimChildResult(ended as SubagentResult) });
    } catch (error) {
      const diagnostic = error instanceof WorkflowFailedError ? `${status.toLowerCase()}: ${error.cause?.message ?? error.message}` : `${status.toLowerCase()}: ${error instanceof Error ? error.message : String(error)}`;
      closed.push({ workflowId, temporalStatus: status, diagnostic });
    }
  }
  return closed;
}
